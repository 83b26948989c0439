/* nchwc.c -- the blocked channel layout (NCHWc, B = 8) across runs of convolutions.
 *
 * Candidates are live fp32 CONVOLUTION nodes that the blocked kernels run (kernels/nchwc.h:
 * trtl_nchwc_conv_supported: pointwise 1x1 or depthwise up to 7x7 (dilation up to 2), at the opt shapes, or dense of
 * <= 16 input channels: a stem, or grouped with multiples of 8 channels a group (RegNetY), only where
 * TRTLITE_NCHWC_GROUPED=1: GROUPED_ENV, or dense with multiples of 8 channels, a window past 1x1, at stride 2 and at most DENSE_MAX_DEPTH
 * products an output: the YOLO-style detector's first downsample) on input maps of at least MIN_PIXELS pixels.  A dense candidate's input is never blocked (its
 * path reads NCHW), so it can only start a region: its output is blocked where its readers are candidates.  A
 * tensor is kept blocked when its producer and every reader are candidates, each reader taking it as its input or
 * its fused residual, and it is no network output; a candidate's residual must then have its output's layout (both are
 * made plain until that holds).  Squeeze-and-excitation first (se_fold): where a candidate depthwise (or grouped)
 * convolution's output is read only by a global average pool (REDUCE mean over H, W) and by a channel multiply
 * whose product only a candidate pointwise convolution reads, the depthwise node computes the pool as its second
 * output and the pointwise one takes the multiplier as its second input (the scale folded into its weights per
 * image), so the block between them stays blocked.  Every candidate with a blocked input or output becomes NCHWC_CONV with
 * in_block / out_block 8 or 0: the reorders happen inside the convolutions at a region's edges (a plain input is
 * blocked into scratch, a plain output is unblocked with its epilogue), never as separate steps, and blocked
 * tensors are never seen by other layers.  Skipped without AVX2 + FMA (runtime detection, TRTL_CPU_MASK); on
 * AVX-512 hosts too since session 16 (the pointwise layers there time nchwc_conv.avx512's 16-lane tiles against the
 * 8-lane ones; blocked was faster than the AVX-512 NCHW kernels on 3 of 4 mobile nets measured), for
 * refittable engines (refit finds a convolution's weights on CONVOLUTION layers), under the INT8 flag, and under
 * BF16 where the CPU has AVX512_BF16 (the blocked kernels are fp32 only; a bf16 convolution kernel must stay a timed
 * candidate).  FP16 and BF16 on other CPUs keep the pass: no reduced-precision convolution kernel could run there,
 * and the flags' builds are the fp32 build (a BF16 MobileNetV2 ran 13% slower than fp32 without the pass).  On by default: docs/ARCHITECTURE.md, "Blocked channel layout",
 * has the measurements that decide it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "kernels/nchwc.h"
#include "kernels/qlinear_fp32.h"
#include "core/alloc.h"
#include "core/cpu.h"
#include "core/status.h"
#include "core/dims.h"

#define BLOCK 8
/* Maps of fewer pixels (at the opt shape) stay NCHW: squeeze-and-excitation's 1x1 maps run on convolution.gemv,
 * several times faster than a blocked tile of one pixel. */
#define MIN_PIXELS 16
/* Dense convolutions the pass takes as region producers: stems of 1-4 input channels (gray, RGB, RGBA). */
#define STEM_MAX_CHANNELS 4
/* Grouped convolutions (kernels/nchwc.h: trtl_nchwc_conv_grouped, RegNetY's 3x3 layers) are candidates only with
 * this variable set to 1 at the build: on the AVX2 VM the blocked grouped path ran RegNetY's grouped layers 11-16%
 * slower than convolution.grouped_direct, and the region it forms puts RegNetY's 1x1 layers on the blocked pointwise
 * tiles, 6-7% slower there than convolution.packed_gemm (docs/ARCHITECTURE.md, "Blocked channel layout"). */
#define GROUPED_ENV "TRTLITE_NCHWC_GROUPED"

/* Dense convolutions of multiples of 8 input and output channels (kernels/nchwc.h: trtl_nchwc_conv_grouped with
 * one group, x86/nchwc_grouped.c) are candidates at stride 2 with at most DENSE_MAX_DEPTH products an output (C * R *
 * S): the YOLO-style detector's 32 -> 64 downsample at 160 x 160 ran 2.95 ms blocked against 3.53 on
 * convolution.packed_gemm (its im2col columns only 288 deep), 64 -> 128 level, the deeper ones 8-13% slower; at
 * stride 1 Winograd is ~2x faster than the direct tiles (docs/ARCHITECTURE.md, "Dense 3x3 in the blocked layout").
 * DENSE_ENV=0 at the build keeps them out (the A/B of benchmarks/nchwc_env_ab.py).  Not on AVX-512 hosts (the
 * grouped path's tiles are AVX2 only; convolution.packed_gemm's 16-lane tiles win there): on the lent Xeon, one core,
 * the 32 -> 64 downsample ran 3.67 ms blocked against 2.27 on packed_gemm at batch 1 (29.8 / 19.8 at batch 8), the
 * YOLO model 4% / 3% slower end to end. */
#define DENSE_MAX_DEPTH 288
#define DENSE_ENV "TRTLITE_NCHWC_DENSE"

/* The optional candidates this build takes, decided once a pass (the environment, the host): grouped convolutions
 * (GROUPED_ENV=1), dense ones on the grouped path (not DENSE_ENV=0, no AVX-512). */
typedef struct opt_kinds {
    int grouped, dense8;
} opt_kinds;

static opt_kinds optional_kinds(void)
{
    const char *ge = getenv(GROUPED_ENV), *de = getenv(DENSE_ENV);
    return (opt_kinds){ge && !strcmp(ge, "1"), !(de && !strcmp(de, "0")) && !trtl_cpu_has(TRTL_CPU_AVX512F)};
}

/* A dense convolution of C input channels the grouped path is wanted for (with opt_kinds.dense8): a window larger
 * than 1x1 (session 21: the 1x1 stride-2 projections of RegNetY and ResNet-50 -- C <= 288, so they qualified -- made
 * each stage's block input blocked, which put the next blocks' first 1x1 layers on the blocked tiles with a plain
 * output, 8-30% slower than convolution.packed_gemm on a plain input; at batch 8, one thread, RegNetY-400MF ran 3%
 * and ResNet-50 6% slower end to end with them: docs/ARCHITECTURE.md, "The small mobile networks at batch 8"). */
static int dense8_shape(const trtl_conv_params *p, int64_t C)
{
    return p->stride.d[0] == 2 && p->stride.d[1] == 2 && p->kernel_size.d[0] * p->kernel_size.d[1] > 1 &&
           C * p->kernel_size.d[0] * p->kernel_size.d[1] <= DENSE_MAX_DEPTH;
}

/* The geometry the blocked kernels take, for convolution node n (CONVOLUTION, or an int8 one's fp32 form) over x;
 * grouped and dense-on-the-grouped-path convolutions as `k` allows. */
static int blocked_geometry(const trtl_node *n, const trtl_bg_tensor *x, const opt_kinds *k)
{
    if (x->dopt.nb_dims != 4 || x->corner_unknown || x->dopt.d[2] * x->dopt.d[3] < MIN_PIXELS)
        return 0;
    /* the dense path is measured on stems (3 input channels) only: a 16 -> 16 3x3 layer inside a network keeps its
     * timed kernel (Winograd and the others) instead of being taken by this pass untimed */
    if (trtl_nchwc_conv_dense(&n->p.conv, x->dopt.d[1]) && x->dopt.d[1] > STEM_MAX_CHANNELS)
        return 0;
    if (trtl_nchwc_conv_grouped(&n->p.conv, x->dopt.d[1]) &&
        (n->p.conv.num_groups > 1 ? !k->grouped : !(k->dense8 && dense8_shape(&n->p.conv, x->dopt.d[1]))))
        return 0;
    return trtl_nchwc_conv_supported(n, &x->dopt);
}

static int candidate(const trtl_bgraph *g, int32_t i, const opt_kinds *k)
{
    const trtl_bg_node *b = &g->n[i];
    const trtl_node *n = &b->n;
    if (b->dead || n->op != TRTL_OP_CONVOLUTION || b->want_set || b->fixed_kernel || n->n_out != 1 ||
        n->n_in != 1 + (n->epi.has_residual ? 1 : 0))
        return 0;
    const trtl_bg_tensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]];
    if (x->dtype != TRTL_FLOAT || y->dtype != TRTL_FLOAT)
        return 0;
    if (n->epi.has_residual && g->t[n->in[1]].dtype != TRTL_FLOAT)
        return 0;
    return blocked_geometry(n, x, k);
}

/* Is tensor t, read by an int8 layer quantizing it with (s, z, type), on that grid: written by a live QLINEAR
 * (output 0, its only one) that fake-quantizes it (out_quant 1) or writes its codes (out_quant 2, and may write them
 * as FLOAT: trtl_int8_codes_may_float) with those parameters? */
static int on_grid(trtl_bgraph *g, int32_t t, float s, int32_t z, int32_t type)
{
    const int32_t p = g->t[t].producer;
    if (p < 0 || g->n[p].dead || g->n[p].n.op != TRTL_OP_QLINEAR || g->n[p].n.n_out != 1 || g->n[p].n.out[0] != t)
        return 0;
    const trtl_qlinear_params *a = &g->n[p].n.p.qlin;
    if (a->out_scale != s || a->out_zero_point != z || a->out_type != type)
        return 0;
    return a->out_quant == 1 || (a->out_quant == 2 && trtl_int8_codes_may_float(g, p));
}

/* An int8 convolution the int8_nchwc pass marked, as an fp32 convolution (trtl_qlinear_fp32_epilogue: epilogue *e,
 * mid quantization *mid; weights not yet made) that the blocked kernels take: its input on its grid, a residual of
 * codes on theirs (it becomes their FLOAT values), its output codes only where they may become FLOAT (every reader
 * an int8 layer); a mid quantization (before a residual) on the pointwise path only.  1: so; 2: a stem (dense, <=
 * STEM_MAX_CHANNELS input channels) whose FLOAT input is not on its grid (the network's input, quantized by the layer
 * itself): it gets a fake quantization of its input before it (stem_input, a pass over a few channels); 0: it stays
 * QLINEAR. */
static int int8_candidate(trtl_bgraph *g, int32_t i, trtl_epilogue *e, trtl_activation_params *mid,
                          const opt_kinds *k)
{
    const trtl_bg_node *b = &g->n[i];
    const trtl_node *n = &b->n;
    if (b->dead || n->op != TRTL_OP_QLINEAR || !b->int8_blocked || n->n_out != 1)
        return 0;
    const trtl_qlinear_params *q = &n->p.qlin;
    if (q->mode != TRTL_QL_CONV || q->conv.kernel.type != TRTL_INT8 || n->n_in != 1 + (q->has_residual ? 1 : 0) ||
        !trtl_qlinear_fp32_epilogue(q, e, mid))
        return 0;
    trtl_node v = *n; /* the fp32 convolution's geometry and epilogue */
    v.op = TRTL_OP_CONVOLUTION;
    v.p.conv = q->conv;
    v.p.conv.kernel.type = TRTL_FLOAT;
    v.p.conv.bias.type = TRTL_FLOAT;
    v.epi = *e;
    if (!blocked_geometry(&v, &g->t[n->in[0]], k) || (mid->type != TRTL_ACT_NONE && !trtl_nchwc_conv_pointwise(&q->conv)))
        return 0;
    int r = 1;
    if (!on_grid(g, n->in[0], q->in_scale, q->in_zero_point, q->in_type)) {
        if (g->t[n->in[0]].dtype != TRTL_FLOAT || !trtl_nchwc_conv_dense(&v.p.conv, g->t[n->in[0]].dopt.d[1]) ||
            !trtl_act_qgrid_scale_ok(q->in_scale))
            return 0;
        r = 2;
    }
    if (q->has_residual && (q->res_quant ? !on_grid(g, n->in[1], q->res_scale, q->res_zero_point, q->res_type)
                                         : g->t[n->in[1]].dtype != TRTL_FLOAT))
        return 0;
    return q->out_quant != 2 || trtl_int8_codes_may_float(g, i) ? r : 0;
}

/* Stem i (int8_candidate 2) reads its input x fake-quantized with its input's parameters: a new ACTIVATION node
 * TRTL_ACT_QGRID (alpha * clamp(rint(x / alpha), lo - z, hi - z): DequantizeLinear(QuantizeLinear(x)), NaN the lowest
 * code) writes x' and i reads x'.  Appended: the graph is sorted after. */
static trtl_status stem_input(trtl_bgraph *g, int32_t i, float scale, int32_t zero, int32_t type)
{
    char *name = trtl_bg_join_names(g->n[i].n.name, "input quantization");
    if (!name)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    const int32_t x = g->n[i].n.in[0], y = trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_ACTIVATION);
    const trtl_activation_params qg = {TRTL_ACT_QGRID, scale, trtl_act_qgrid_codes_beta(type == TRTL_INT8, zero)};
    const int32_t a = y < 0 ? -1 : trtl_bg_add_activation(g, name, x, y, &qg);
    free(name);
    if (a < 0)
        return trtl_error_prefix("builder");
    g->n[i].n.in[0] = y;
    return TRTL_OK;
}

/* Int8 candidate i becomes NCHWC_CONV: the codes around it FLOAT first (its input's and residual's producers, its own
 * output), then its fp32 form (weights trtl_qlinear_fp32_weights, owned by the graph). */
static trtl_status int8_to_blocked(trtl_bgraph *g, int32_t i, const trtl_epilogue *e, const trtl_activation_params *mid,
                                   int stem)
{
    trtl_node *n = &g->n[i].n;
    const trtl_qlinear_params q = n->p.qlin;
    for (int32_t k = stem; k < n->n_in; k++) /* (a stem's input is FLOAT, not on its grid) */
        if (g->t[n->in[k]].dtype != TRTL_FLOAT)
            trtl_int8_codes_to_float(g, g->t[n->in[k]].producer);
    if (q.out_quant == 2)
        trtl_int8_codes_to_float(g, i);
    float *w = NULL, *b = NULL;
    TRTL_TRY(trtl_qlinear_fp32_weights(n, &w, &b));
    if (!trtl_bg_own(g, w)) { /* (trtl_bg_own frees what it cannot take) */
        trtl_aligned_free(b);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    if (!trtl_bg_own(g, b))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    trtl_conv_params c = q.conv;
    c.kernel = (trtl_weights){TRTL_FLOAT, w, q.conv.kernel.count};
    c.bias = (trtl_weights){TRTL_FLOAT, b, q.conv.num_output_maps};
    memset(&n->p, 0, sizeof n->p);
    n->op = TRTL_OP_NCHWC_CONV;
    n->p.nchwc.conv = c;
    n->p.nchwc.mid_qgrid = mid->type == TRTL_ACT_QGRID;
    n->p.nchwc.mid_alpha = mid->alpha;
    n->p.nchwc.mid_beta = mid->beta;
    n->epi = *e;
    g->t[n->out[0]].dtype = TRTL_FLOAT;
    g->n[i].float_region = 0;
    trtl_bg_release_weights(g, q.conv.kernel.values);
    trtl_bg_release_weights(g, q.w_scale.values);
    if (q.conv.bias.count)
        trtl_bg_release_weights(g, q.conv.bias.values);
    return stem ? stem_input(g, i, q.in_scale, q.in_zero_point, q.in_type) : TRTL_OK; /* (n is stale after it) */
}

/* Whether node n has a residual (its last input): a convolution's fused one, or an int8 layer's. */
static int residual_of(const trtl_node *n)
{
    return n->op == TRTL_OP_QLINEAR ? n->p.qlin.has_residual != 0 : n->epi.has_residual != 0;
}

/* Whether tensor t stays blocked: its producer and every reader are candidates, each reading it as its input or its
 * residual (always true for candidates: the only inputs), except a dense reader's input (the dense path reads a
 * plain input only: kernels/nchwc.h, trtl_nchwc_conv_dense). */
static int keep_blocked(const trtl_bgraph *g, const char *cand, int32_t t)
{
    int32_t p = g->t[t].producer;
    if (p < 0 || !cand[p] || trtl_bg_is_output(g, t) || g->t[t].kind != TRTL_TK_ACTIVATION)
        return 0;
    int32_t readers = 0;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        for (int32_t k = 0; k < g->n[i].n.n_in; k++)
            if (g->n[i].n.in[k] == t) {
                if (!cand[i] || (k == 1 && g->n[i].n.n_in - residual_of(&g->n[i].n) == 2))
                    return 0; /* not a candidate, or its squeeze-and-excitation scale (plain [N, C, 1, 1]) */
                trtl_conv_params c = g->n[i].n.p.conv; /* (an int8 layer's weights: as its fp32 form's) */
                c.kernel.type = c.bias.type = TRTL_FLOAT;
                if (k == 0 && trtl_nchwc_conv_dense(&c, g->t[t].dopt.d[1]))
                    return 0; /* a dense node's input */
                readers++;
            }
    }
    return readers > 0;
}

static int plain_node(const trtl_node *n)
{
    return n->n_out == 1 && n->epi.act == TRTL_ACT_NONE && !n->epi.has_residual;
}

/* Renames node n "<n> + <absorbed>". */
static trtl_status absorb_name(trtl_node *n, const char *absorbed)
{
    char *nm = trtl_bg_join_names(n->name, absorbed);
    if (!nm)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    free(n->name);
    n->name = nm;
    return TRTL_OK;
}

/* Squeeze-and-excitation around candidate depthwise (or grouped: RegNetY) node d (see the head comment); se[] marks both nodes of a
 * fold.  Nothing where the pattern does not hold. */
static trtl_status se_fold(trtl_bgraph *g, const char *cand, char *se, int32_t d, trtl_pass_log *log)
{
    trtl_node *dn = &g->n[d].n;
    if (!cand[d] || dn->op != TRTL_OP_CONVOLUTION || trtl_nchwc_conv_pointwise(&dn->p.conv) || dn->epi.has_residual || dn->n_out != 1 ||
        trtl_nchwc_conv_dense(&dn->p.conv, g->t[dn->in[0]].dopt.d[1]))
        return TRTL_OK;
    const int32_t D = dn->out[0];
    if (trtl_bg_is_output(g, D))
        return TRTL_OK;
    /* D's readers: one REDUCE and one ELEMENTWISE PROD (in either order of discovery) */
    int32_t ri = -1, mi = -1, n_readers = 0;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        const trtl_node *n = &g->n[i].n;
        int reads = 0;
        for (int32_t k = 0; k < n->n_in; k++)
            reads += n->in[k] == D;
        if (!reads)
            continue;
        if (++n_readers > 2 || reads != 1)
            return TRTL_OK;
        if (n->op == TRTL_OP_REDUCE)
            ri = i;
        else if (n->op == TRTL_OP_ELEMENTWISE)
            mi = i;
    }
    if (n_readers != 2 || ri < 0 || mi < 0)
        return TRTL_OK;
    const trtl_node *rn = &g->n[ri].n, *mn = &g->n[mi].n;
    const trtl_bg_tensor *dt = &g->t[D];
    if (rn->n_in != 1 || !plain_node(rn) || rn->p.reduce.op != TRTL_RED_AVG || rn->p.reduce.axes != 0xCu ||
        !rn->p.reduce.keep_dims || dt->dopt.nb_dims != 4 || g->t[rn->out[0]].dtype != TRTL_FLOAT ||
        trtl_bg_is_output(g, rn->out[0]))
        return TRTL_OK;
    if (mn->n_in != 2 || !plain_node(mn) || mn->p.ew.op != TRTL_EW_PROD)
        return TRTL_OK;
    const int32_t S = mn->in[0] == D ? mn->in[1] : mn->in[0], Y = mn->out[0];
    const trtl_bg_tensor *st = &g->t[S], *pt = &g->t[rn->out[0]];
    /* the multiplier has the pool's shape [N, C, 1, 1] at every profile point */
    if (st->dtype != TRTL_FLOAT || st->corner_unknown || !trtl_dims_equal(&st->dmin, &pt->dmin) ||
        !trtl_dims_equal(&st->dopt, &pt->dopt) || !trtl_dims_equal(&st->dmax, &pt->dmax) ||
        g->t[Y].dtype != TRTL_FLOAT || !trtl_dims_equal(&g->t[Y].dopt, &dt->dopt) || trtl_bg_is_output(g, Y))
        return TRTL_OK;
    int32_t pi = -1;
    if (trtl_bg_consumers(g, Y, &pi) != 1 || !cand[pi] || g->n[pi].n.op != TRTL_OP_CONVOLUTION)
        return TRTL_OK; /* (int8 layers: no squeeze-and-excitation fold) */
    trtl_node *pn = &g->n[pi].n;
    if (!trtl_nchwc_conv_pointwise(&pn->p.conv) || pn->in[0] != Y || (pn->epi.has_residual && pn->in[1] == Y))
        return TRTL_OK;
    int32_t *out = (int32_t *)realloc(dn->out, 2 * sizeof(int32_t));
    if (!out)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    dn->out = out;
    int32_t *in = (int32_t *)realloc(pn->in, 3 * sizeof(int32_t));
    if (!in)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    pn->in = in;
    trtl_pass_log_add(log, "'%s' also computes '%s'; '%s' applies '%s' to its input", dn->name, rn->name, pn->name,
                      mn->name);
    TRTL_TRY(absorb_name(dn, rn->name));
    TRTL_TRY(absorb_name(pn, mn->name));
    dn->out[1] = rn->out[0];
    dn->n_out = 2;
    g->t[rn->out[0]].producer = d;
    if (pn->epi.has_residual)
        pn->in[2] = pn->in[1];
    pn->in[0] = D;
    pn->in[1] = S;
    pn->n_in++;
    g->t[Y].producer = -1;
    g->n[ri].dead = g->n[mi].dead = 1;
    se[d] = se[pi] = 1;
    return TRTL_OK;
}

trtl_status trtl_pass_nchwc(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "blocked channel layout");
    const uint32_t fl = g->cfg->flags;
    if (!trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA)) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'nchwc' skipped: the blocked kernels need AVX2 + FMA");
        return TRTL_OK;
    }
    /* BF16 only where a bf16 convolution kernel could run (AVX512_BF16: convolution.bf16_gemm / amx_bf16), as the
     * blocked kernels are fp32 and would take its candidates away untimed; FP16 never (no convolution has a HALF
     * kernel: a convolution under FP16 runs fp32 either way) */
    const int bf16_convs = (fl >> TRTL_FLAG_BF16) & 1u && trtl_cpu_has(TRTL_CPU_AVX512BF16);
    if ((fl >> TRTL_FLAG_REFIT) & 1u || bf16_convs) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'nchwc' skipped: REFIT builds and BF16 builds on an AVX512_BF16 CPU "
                 "keep NCHW");
        return TRTL_OK;
    }
    /* under INT8 the fp32 convolutions keep NCHW (implicit INT8's layers without a range: their kernels stay timed);
     * the int8 layers the int8_nchwc pass marked are candidates either way */
    const int fp32_ok = !((fl >> TRTL_FLAG_INT8) & 1u);
    char *cand = (char *)calloc((size_t)g->nn + 1, 1), *blk = (char *)calloc((size_t)g->nt + 1, 1);
    char *se = (char *)calloc((size_t)g->nn + 1, 1);
    trtl_epilogue *qe = (trtl_epilogue *)calloc((size_t)g->nn + 1, sizeof *qe);
    trtl_activation_params *qm = (trtl_activation_params *)calloc((size_t)g->nn + 1, sizeof *qm);
    trtl_status st = TRTL_OK;
    if (!cand || !blk || !se || !qe || !qm) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        goto done;
    }
    const opt_kinds kinds = optional_kinds();
    for (int32_t i = 0; i < g->nn; i++) {
        cand[i] = (char)(fp32_ok && candidate(g, i, &kinds));
        if (!cand[i])
            cand[i] = (char)(2 * int8_candidate(g, i, &qe[i], &qm[i], &kinds)); /* an int8 layer: 2, 4 for a stem */
    }
    for (int32_t i = 0; i < g->nn && st == TRTL_OK; i++)
        st = se_fold(g, cand, se, i, &log);
    if (st != TRTL_OK)
        goto done;
    for (int again = 1; again;) {
        again = 0;
        for (int32_t t = 0; t < g->nt; t++)
            blk[t] = (char)keep_blocked(g, cand, t);
        for (int changed = 1; changed;) { /* a residual has its output's layout */
            changed = 0;
            for (int32_t i = 0; i < g->nn; i++) {
                const trtl_node *n = &g->n[i].n;
                if (!cand[i] || !residual_of(n) || n->n_in < 1) /* (a node with no inputs: no in[n_in - 1]) */
                    continue;
                const int32_t r = n->in[n->n_in - 1];
                if (blk[r] == blk[n->out[0]])
                    continue;
                blk[r] = blk[n->out[0]] = 0;
                changed = 1;
            }
        }
        /* an int8 layer's mid quantization (before its residual) runs on a blocked output only
         * (trtl_nchwc_mid_ok): else the layer stays QLINEAR, and the layouts are decided again without it */
        for (int32_t i = 0; i < g->nn; i++)
            if (cand[i] >= 2 && qm[i].type != TRTL_ACT_NONE && !blk[g->n[i].n.out[0]]) {
                cand[i] = 0;
                again = 1;
            }
    }
    const int32_t nn = g->nn; /* a stem's input quantization is appended (stem_input) */
    for (int32_t i = 0; i < nn && st == TRTL_OK; i++) {
        trtl_node *n = &g->n[i].n;
        if (!cand[i] || (!blk[n->in[0]] && !blk[n->out[0]] && !se[i]))
            continue;
        const int32_t ib = blk[n->in[0]] ? BLOCK : 0, ob = blk[n->out[0]] ? BLOCK : 0;
        if (cand[i] >= 2) {
            st = int8_to_blocked(g, i, &qe[i], &qm[i], cand[i] == 4);
            n = &g->n[i].n; /* (g->n may have moved) */
        } else {
            trtl_conv_params c = n->p.conv;
            n->op = TRTL_OP_NCHWC_CONV;
            n->p.nchwc.conv = c;
            n->p.nchwc.mid_qgrid = 0;
            n->p.nchwc.mid_alpha = n->p.nchwc.mid_beta = 0.0f;
        }
        n->p.nchwc.in_block = ib;
        n->p.nchwc.out_block = ob;
        trtl_pass_log_add(&log, "'%s'%s (%s -> %s)", n->name, cand[i] >= 2 ? " int8" : "", ib ? "blocked" : "NCHW",
                          ob ? "blocked" : "NCHW");
    }
    if (st == TRTL_OK && g->nn > nn)
        st = trtl_bg_sort(g);
done:
    free(cand);
    free(blk);
    free(se);
    free(qe);
    free(qm);
    trtl_pass_log_done(&log);
    return st != TRTL_OK ? st : log.count ? trtl_bg_infer(g) : TRTL_OK;
}
