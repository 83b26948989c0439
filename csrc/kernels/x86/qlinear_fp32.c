/* qlinear_fp32.c -- "qlinear.fp32.<conv kernel>": an int8 convolution (QLINEAR, conv mode) whose
 * quantized math runs on one of the fp32 convolution kernels, so that kernel selection can time it
 * against the int8 kernels (qlinear.int8 / qlinear.amx_int8) and keep the faster: on CPUs without
 * VNNI the int8 library's vpmaddwd kernels do no more multiply-adds an instruction than an fp32 FMA,
 * and the fp32 kernels (Winograd, the depthwise ones) are the better tuned.
 *
 * The same integer math, in fp32 arithmetic:
 *   x -> (q - in_zero) as floats (the input's codes, or QuantizeLinear of a float input): exact
 *   acc = conv(x, w) with the int8 weights as floats: an integer sum, exact while |acc| < 2^24
 *         (every partial sum of these layers is far below that except on outliers; then it is the
 *         fp32 rounding of the exact sum, a relative 2^-24, under one output step)
 *   y = acc * (in_scale * w_scale[k]) + bias[k], then mid quantization, residual (float or codes),
 *       activation and output quantization (fake-quantized floats or codes) as kernels/qconv.h defines
 * so the codes are the int8 kernels' (a rounding tie of y / out_scale may move one by one step).
 * One wrapper per fp32 convolution kernel (the list: TRTL_QLINEAR_FP32_TACTICS in kernels/qlinear_fp32.h), each a candidate the builder times like
 * any other kernel; the reformats (codes -> floats in, the requantization out) are inside run(), so
 * the timing includes them.  cpu_features repeat the inner kernel's (tests check they match).
 * builder/select.c admits these candidates only for the nodes the int8_tactics pass marked. */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "kernels/kernel.h"
#include "kernels/qconv_internal.h"
#include "kernels/qlinear_fp32.h"
#include "core/alloc.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QF_X86 1
#endif

extern const trtl_kernel trtl_kernel_dequantize_simd; /* x86/qdq_simd.c: codes in */

typedef struct qf_state {
    const trtl_kernel *inner;
    trtl_node node;   /* the inner CONVOLUTION node: float weights; bias and epilogue where fused (qf_fused) */
    int32_t io[3];
    int32_t fused;    /* qf_fused: the inner kernel's epilogue requantizes, run() has no pass of its own after it */
    int32_t cfold;    /* qf_codes_fold: codes out through qf_codes_avx2 (cmul, cadd, clo, chi) */
    float clo, chi;   /* the code bounds (code - zero) */
    float *cmul;      /* [2K]: scale[k] / out_scale, then bias[k] / out_scale */
    float *w;         /* the int8 weights as floats (times the channel's scale where fused) */
    void *istate;     /* the inner kernel's prepared state */
    trtl_qconv_state *qs; /* the int8 library's state of the node: its checks, scales, bias and epilogue */
    /* depthwise convolutions on a depthwise kernel run in blocks of QF_DW_BLOCK channels (nblk > 0): each block's
     * input, accumulators and outputs stay in cache between the conversion, the kernel and the epilogue */
    int32_t nblk;
    trtl_node *bnode; /* [nblk]: the blocks' inner nodes (weights inside w) */
    void **bstate;    /* [nblk] */
} qf_state;

#define QF_DW_BLOCK 8

static int qf_geometry(const trtl_node *n, const trtl_dims *in)
{
    const trtl_qlinear_params *q = &n->p.qlin;
    return q->mode == TRTL_QL_CONV && q->conv.kernel_size.nb_dims == 2 && in[0].nb_dims == 4 &&
           q->conv.padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_DOWN && q->conv.kernel.type == TRTL_INT8 &&
           q->w_scale.count == q->conv.num_output_maps && q->conv.num_output_maps > 0;
}

/* The code bounds [L, H] (code - zero) of q's output quantization (out_quant 1 or 2) with the ReLU / Clip before it
 * folded in (quantization is monotone: quantizing the clamped value is clamping the code to the bounds' codes) and a
 * mid quantization equal to the output's, without a residual, folded too (quantize_static's Conv -> Q/DQ -> Clip ->
 * Q/DQ, the Clip sharing its input's parameters: MobileNetV2): fq(act(fq(v))) = fq(act(v)), as the inner fq keeps
 * the code and act is monotone.  0 where that does not hold: residual codes, a mid quantization other than the
 * output's, other activations, a ReLU / Clip whose bound would catch a NaN residual that the reference quantizes
 * to the lowest code. */
static int qf_fold_bounds(const trtl_qlinear_params *q, float *L, float *H)
{
    if (q->mode != TRTL_QL_CONV || (q->has_residual && q->res_quant) || q->out_quant == 0)
        return 0;
    if (q->mid_quant && (q->has_residual || q->mid_scale != q->out_scale || q->mid_zero_point != q->out_zero_point ||
                         q->mid_type != q->out_type))
        return 0;
    const float s = q->out_scale;
    if (!(s > 0.0f) || !isfinite(s))
        return 0;
    const int32_t sg = q->out_type == TRTL_INT8, z = q->out_zero_point;
    const float lo = (float)((sg ? -128 : 0) - z), hi = (float)((sg ? 127 : 255) - z);
    *L = lo;
    *H = hi;
    if (q->act == TRTL_ACT_RELU) {
        *L = lo > 0.0f ? lo : 0.0f;
    } else if (q->act == TRTL_ACT_CLIP) {
        if (!(q->alpha <= q->beta))
            return 0;
        float a = rintf(q->alpha / s), b = rintf(q->beta / s); /* the bounds' codes, then in the code range */
        *L = a < lo ? lo : a > hi ? hi : a;
        *H = b < lo ? lo : b > hi ? hi : b;
    } else if (q->act != TRTL_ACT_NONE) {
        return 0;
    }
    return !(q->has_residual && *L != lo);
}

/* Can the inner fp32 kernel's own tile epilogue finish the layer (session 13)?  Then its weights are the int8
 * weights times the channel's scale in_scale * w_scale[k] (divided by in_scale again for an in_grid input), its bias
 * the layer's, its residual the layer's float one, and its activation the layer's (float output), or, for a
 * fake-quantized output (out_quant 1, the tensors int8_regions keeps FLOAT), TRTL_ACT_QGRID: the output
 * quantization with the ReLU / Clip before it folded into the code bounds (both are monotone, so quantizing the
 * clamped value is clamping the code to the bounds' codes).  The output is then written once, by the tile that
 * computes it, instead of a second pass over it.  The sums are no longer integer sums: they are the integer sums
 * times the scale to float rounding (as on the Winograd tactics), so a code may move one step, on a tie.
 * Not fused: codes out (out_quant 2: qf_codes_fold below), and where qf_fold_bounds does not hold. */
static int qf_fused(const trtl_qlinear_params *q, trtl_epilogue *e)
{
    *e = (trtl_epilogue){q->act, q->alpha, q->beta, q->has_residual};
    if (q->mode != TRTL_QL_CONV || (q->has_residual && q->res_quant) || q->out_quant == 2)
        return 0;
    if (q->out_quant == 0)
        return !q->mid_quant;
    float L, H;
    if (!qf_fold_bounds(q, &L, &H) || !trtl_act_qgrid_scale_ok(q->out_scale))
        return 0;
    *e = (trtl_epilogue){TRTL_ACT_QGRID, q->out_scale, trtl_act_qgrid_beta((int32_t)L, (int32_t)H), q->has_residual};
    return 1;
}

/* Codes out (out_quant 2) without a residual, where qf_fold_bounds holds (MobileNetV2's depthwise layers before an
 * int8 projection): each code is clamp(rne(acc * cmul[k] + cadd[k]), L, H) + zero, cmul = scale[k] / out_scale and
 * cadd = bias[k] / out_scale (one rounding each): 5 vector operations for 8 codes on the accumulators while they are
 * in cache instead of the general epilogue's dequantize, mid fake quantization, activation and quantize.  Clamping
 * before the rounding is the same (integer bounds); a NaN cannot come (no residual: integer sums of finite codes).
 * The same float-rounding difference as qf_fused: a code may move one step on a tie. */
static int qf_codes_fold(const trtl_qlinear_params *q, float *L, float *H)
{
    return q->out_quant == 2 && !q->has_residual && qf_fold_bounds(q, L, H);
}

/* The inner node of n: p.conv with the weights w (floats); with bias (may be NULL while only shapes matter) and
 * n's epilogue where fused, else no bias and no epilogue.  io: 3 ids (input, residual, output). */
static void qf_inner_node(const trtl_node *n, const trtl_kernel *inner, const float *w, const float *bias,
                          int32_t *io, trtl_node *o)
{
    memset(o, 0, sizeof *o);
    o->op = TRTL_OP_CONVOLUTION;
    o->name = n->name;
    o->p.conv = n->p.qlin.conv;
    o->p.conv.kernel = (trtl_weights){TRTL_FLOAT, w, n->p.qlin.conv.kernel.count};
    o->p.conv.bias = (trtl_weights){TRTL_FLOAT, NULL, 0};
    o->epi.act = TRTL_ACT_NONE;
    o->n_in = o->n_out = 1;
    trtl_epilogue e;
    if (qf_fused(&n->p.qlin, &e)) {
        o->epi = e;
        o->p.conv.bias = (trtl_weights){TRTL_FLOAT, bias, n->p.qlin.conv.num_output_maps};
        o->n_in += o->epi.has_residual;
    }
    o->in = io;
    o->out = io + 2;
    o->kernel = inner;
}

/* Depthwise with channel multiplier 1 (groups = C = K) on a depthwise kernel, more than one block of channels. */
static int qf_dw_split(const trtl_kernel *inner, const trtl_node *n)
{
    const trtl_conv_params *c = &n->p.qlin.conv;
    int64_t K = c->num_output_maps, RS = c->kernel_size.d[0] * c->kernel_size.d[1];
    return strncmp(inner->name, "convolution.depthwise", 21) == 0 && c->num_groups == K && K > QF_DW_BLOCK &&
           RS > 0 && c->kernel.count == K * RS;
}

/* Run in blocks: where there is an input conversion to keep in cache.  A FLOAT input on its grid (in_grid) is read
 * in place; with a fused output (written by the inner kernel) or folded codes (qf_codes_fold: one cheap pass over
 * the accumulators in scratch) the inner kernel runs the whole layer in one call, as in the fp32 model (MobileNetV2's
 * depthwise layers: blocks of 8 channels cost up to 1.5x, the channel-interleaved kernel's 7 x 7 layers 2x). */
static int qf_blocked(const trtl_kernel *inner, const trtl_node *n)
{
    trtl_epilogue e;
    float L, H;
    const trtl_qlinear_params *q = &n->p.qlin;
    return qf_dw_split(inner, n) && !(q->in_grid && (qf_fused(q, &e) || qf_codes_fold(q, &L, &H)));
}

/* The inner node of channels [c0, c0 + cbk) of a blocked depthwise convolution. */
static void qf_block_node(const trtl_node *n, const trtl_kernel *inner, const float *w, const float *bias,
                          int64_t c0, int64_t cbk, int32_t *io, trtl_node *o)
{
    int64_t RS = n->p.qlin.conv.kernel_size.d[0] * n->p.qlin.conv.kernel_size.d[1];
    qf_inner_node(n, inner, w ? w + c0 * RS : NULL, bias ? bias + c0 : NULL, io, o);
    o->p.conv.num_output_maps = (int32_t)cbk;
    o->p.conv.num_groups = (int32_t)cbk;
    o->p.conv.kernel.count = cbk * RS;
    if (o->p.conv.bias.count)
        o->p.conv.bias.count = cbk;
}

static int64_t qf_nblk(const trtl_node *n)
{
    return (n->p.qlin.conv.num_output_maps + QF_DW_BLOCK - 1) / QF_DW_BLOCK;
}

/* The int8 weights as floats, times scale[k] (the channel's in_scale * w_scale[k]) where not NULL (fused); divided
 * by in_scale where a FLOAT input comes on its grid (in_grid, passes/int8_regions.c): (q - zero) * in_scale times
 * w / in_scale sums to the integer sum (to float rounding).  One rounding to float each. */
static float *qf_weights(const trtl_node *n, const float *scale)
{
    const trtl_weights *k = &n->p.qlin.conv.kernel;
    const int64_t K = n->p.qlin.conv.num_output_maps, per = K > 0 ? k->count / K : 0;
    const double div = n->p.qlin.in_grid ? n->p.qlin.in_scale : 1.0;
    float *w = trtl_aligned_alloc((size_t)(k->count > 0 ? k->count : 1) * sizeof(float));
    if (w)
        for (int64_t i = 0; i < k->count; i++)
            w[i] = (float)((double)((const int8_t *)k->values)[i] * (scale && per ? scale[i / per] : 1.0) / div);
    return w;
}

static int qf_applies(const trtl_kernel *inner, const trtl_node *n, const trtl_dims *in)
{
    if (!qf_geometry(n, in) || (inner->cpu_features & ~trtl_cpu_features()))
        return 0;
    if (!inner->applies)
        return 1;
    int32_t io[3] = {0, 1, 2};
    trtl_node o;
    if (qf_dw_split(inner, n)) { /* the full block and the last one; then the whole (in_grid comes after selection) */
        int64_t K = n->p.qlin.conv.num_output_maps, last = K - (qf_nblk(n) - 1) * QF_DW_BLOCK;
        for (int i = 0; i < 2; i++) {
            trtl_dims d = in[0];
            d.d[0] = 1;
            d.d[1] = i ? last : QF_DW_BLOCK;
            qf_block_node(n, inner, NULL, NULL, 0, d.d[1], io, &o);
            if (!inner->applies(&o, &d))
                return 0;
        }
    }
    qf_inner_node(n, inner, NULL, NULL, io, &o); /* applies() reads the geometry and the epilogue only */
    return inner->applies(&o, in);
}

static void qf_release(void *state)
{
    qf_state *s = state;
    if (!s)
        return;
    if (s->istate && s->inner->release)
        s->inner->release(s->istate);
    for (int32_t b = 0; s->bstate && b < s->nblk; b++)
        if (s->bstate[b] && s->inner->release)
            s->inner->release(s->bstate[b]);
    free(s->bstate);
    free(s->bnode);
    free(s->cmul);
    trtl_aligned_free(s->w);
    trtl_qconv_release(s->qs);
    free(s);
}

static trtl_status qf_prepare(const trtl_kernel *inner, const trtl_node *n, void **state)
{
    *state = NULL;
    const trtl_qlinear_params *q = &n->p.qlin;
    uint32_t missing = inner->cpu_features & ~trtl_cpu_features();
    if (missing)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': kernel qlinear.fp32 over %s needs CPU features 0x%x "
                          "this CPU lacks", n->name, inner->name, (unsigned)missing);
    if (q->mode != TRTL_QL_CONV || q->conv.kernel.type != TRTL_INT8 || q->w_scale.count != q->conv.num_output_maps)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': qlinear.fp32 runs int8 convolutions with per-channel "
                          "weight scales only", n->name);
    qf_state *s = calloc(1, sizeof *s);
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", n->name);
    s->inner = inner;
    s->io[0] = 0;
    s->io[1] = 1;
    s->io[2] = 2;
    trtl_qconv_desc d;
    trtl_qlinear_make_desc(q, &d);
    if (trtl_qconv_prepare_amx(&d, q->conv.kernel.values, q->w_scale.values, 1,
                               q->conv.bias.count ? q->conv.bias.values : NULL, TRTL_QCONV_AMX_NEVER,
                               &s->qs) != TRTL_OK) {
        qf_release(s);
        return trtl_error_prefix("layer '%s'", n->name);
    }
    trtl_epilogue e;
    s->fused = qf_fused(q, &e);
    s->cfold = qf_codes_fold(q, &s->clo, &s->chi);
    if (s->cfold) {
        const int64_t K = q->conv.num_output_maps;
        s->cmul = malloc((size_t)(2 * K) * sizeof(float));
        if (!s->cmul) {
            qf_release(s);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", n->name);
        }
        for (int64_t k = 0; k < K; k++) {
            s->cmul[k] = (float)((double)s->qs->scale[k] / q->out_scale);
            s->cmul[K + k] = (float)((double)s->qs->bias[k] / q->out_scale);
        }
    }
    s->w = qf_weights(n, s->fused ? s->qs->scale : NULL);
    if (!s->w) {
        qf_release(s);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", n->name);
    }
    qf_inner_node(n, inner, s->w, s->qs->bias, s->io, &s->node);
    if (qf_blocked(inner, n)) {
        int64_t nb = qf_nblk(n), K = q->conv.num_output_maps;
        s->bnode = calloc((size_t)nb, sizeof *s->bnode);
        s->bstate = calloc((size_t)nb, sizeof *s->bstate);
        if (!s->bnode || !s->bstate) {
            qf_release(s);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", n->name);
        }
        s->nblk = (int32_t)nb;
        for (int64_t b = 0; b < nb; b++) {
            int64_t c0 = b * QF_DW_BLOCK, cbk = K - c0 < QF_DW_BLOCK ? K - c0 : QF_DW_BLOCK;
            qf_block_node(n, inner, s->w, s->qs->bias, c0, cbk, s->io, &s->bnode[b]);
            if (inner->prepare && inner->prepare(&s->bnode[b], &s->bstate[b]) != TRTL_OK) {
                qf_release(s);
                return trtl_error_prefix("layer '%s': preparing %s", n->name, inner->name);
            }
        }
    } else if (inner->prepare && inner->prepare(&s->node, &s->istate) != TRTL_OK) {
        qf_release(s);
        return trtl_error_prefix("layer '%s': preparing %s", n->name, inner->name);
    }
    *state = s;
    return TRTL_OK;
}

/* ---- scratch: [x as floats][acc, when the output is codes][the inner kernel's] ---- */

static size_t al64(size_t b) { return (b + 63) & ~(size_t)63; }

static void qf_views(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out,
                     trtl_tensor_view *vi, trtl_tensor_view *vo)
{
    *vi = (trtl_tensor_view){NULL, in[0].dims, TRTL_FLOAT};
    *vo = (trtl_tensor_view){NULL, out[0].dims, TRTL_FLOAT};
    (void)n;
}

static size_t qf_acc_bytes(const trtl_node *n, const trtl_tensor_view *out)
{
    return n->p.qlin.out_quant == 2 ? al64((size_t)trtl_volume(&out[0].dims) * sizeof(float)) : 0;
}

/* Blocked depthwise: one slot a thread, each [a block's input floats][its accumulators][the inner scratch]. */
static size_t qf_block_bytes(const trtl_dims *x, const trtl_dims *y)
{
    return al64((size_t)(QF_DW_BLOCK * x->d[2] * x->d[3]) * sizeof(float)) +
           al64((size_t)(QF_DW_BLOCK * y->d[2] * y->d[3]) * sizeof(float));
}

static size_t qf_scratch(const trtl_kernel *inner, const trtl_node *n, const trtl_tensor_view *in,
                         const trtl_tensor_view *out)
{
    const int blocked = qf_blocked(inner, n);
    size_t head = blocked ? qf_block_bytes(&in[0].dims, &out[0].dims)
                          : al64((size_t)trtl_volume(&in[0].dims) * sizeof(float)) + qf_acc_bytes(n, out);
    size_t r = head;
    float *w = inner->scratch ? qf_weights(n, NULL) : NULL; /* off the run path: the inner kernel sizes it from a node */
    if (w) {
        int32_t io[3] = {0, 1, 2};
        trtl_node o;
        trtl_tensor_view vi, vo;
        qf_views(n, in, out, &vi, &vo);
        if (blocked) { /* the full block's scratch (the last block is no larger) */
            vi.dims.d[0] = vo.dims.d[0] = 1;
            vi.dims.d[1] = vo.dims.d[1] = QF_DW_BLOCK;
            qf_block_node(n, inner, w, NULL, 0, QF_DW_BLOCK, io, &o);
        } else {
            qf_inner_node(n, inner, w, NULL, io, &o);
        }
        trtl_tensor_view iv[2] = {vi, vo}; /* input, and the residual (the output's shape) where fused */
        r += al64(inner->scratch(&o, iv, &vo));
        trtl_aligned_free(w);
    }
    return blocked ? r * (size_t)trtl_available_cpus() : r;
}

/* ---- the reformats ---- */

typedef struct qf_job {
    const qf_state *s;
    const trtl_qlinear_params *q;
    const void *x;      /* input: floats or codes */
    int32_t x_codes;
    float *xf;          /* input as (q - zero) floats */
    const float *acc;   /* [N][K][P] accumulators */
    void *y;            /* output: floats or codes */
    const void *res;    /* residual: floats or codes (q->res_quant), or NULL */
    int64_t K, P;       /* output channels, pixels a plane */
    int64_t n_in;       /* input elements */
} qf_job;

#define QF_CHUNK 8192

/* One value of a float input as the int8 kernels see it: its code - zero. */
static float qf_in_scalar(const trtl_qlinear_params *q, const float *x, int64_t i)
{
    return (float)(trtl_q8_quantize(x[i], q->in_scale, q->in_zero_point, q->in_type == TRTL_INT8) - q->in_zero_point);
}

#if QF_X86
/* A quantizer in registers: rne(x / scale) + zero clamped to the codes' range, as trtl_q8_quantize.  The
 * quotient is the reciprocal product with one FMA correction (the correctly rounded float32 quotient, as the int8
 * library's quantizer), after x is clamped to +-512 scale (so +-Inf saturate and the product cannot overflow;
 * NaN becomes -lim: the lowest code). */
typedef struct qf_vq {
    __m256 scale, rcp, lim, nlim, zero, lo, hi;
} qf_vq;

__attribute__((target("avx2,fma"))) static void qf_vq_init(qf_vq *v, float scale, int32_t zero, int32_t sg)
{
    v->scale = _mm256_set1_ps(scale);
    v->rcp = _mm256_set1_ps(1.0f / scale);
    v->lim = _mm256_set1_ps(512.0f * scale);
    v->nlim = _mm256_set1_ps(-512.0f * scale);
    v->zero = _mm256_set1_ps((float)zero);
    v->lo = _mm256_set1_ps(sg ? -128.0f : 0.0f);
    v->hi = _mm256_set1_ps(sg ? 127.0f : 255.0f);
}

/* The code (as an exact float integer). */
__attribute__((target("avx2,fma"))) static inline __m256 qf_vq_code(__m256 x, const qf_vq *v)
{
    x = _mm256_min_ps(_mm256_max_ps(x, v->nlim), v->lim); /* max first: NaN -> -lim */
    __m256 q = _mm256_mul_ps(x, v->rcp);
    q = _mm256_fmadd_ps(_mm256_fnmadd_ps(q, v->scale, x), v->rcp, q);
    q = _mm256_add_ps(_mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), v->zero);
    return _mm256_min_ps(_mm256_max_ps(q, v->lo), v->hi);
}

/* 8 codes (int32 in the type's range) as bytes, in the low 8 of the result. */
__attribute__((target("avx2"))) static inline __m128i qf_pack8(__m256i c, int32_t sg)
{
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
    return sg ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
}

/* The fake-quantized value (code - zero) * scale. */
__attribute__((target("avx2,fma"))) static inline __m256 qf_vq_fake(__m256 x, const qf_vq *v)
{
    return _mm256_mul_ps(_mm256_sub_ps(qf_vq_code(x, v), v->zero), v->scale);
}

__attribute__((target("avx2,fma"))) static int64_t qf_in_avx2(const trtl_qlinear_params *q, const float *x,
                                                              float *xf, int64_t n)
{
    qf_vq vq;
    qf_vq_init(&vq, q->in_scale, q->in_zero_point, q->in_type == TRTL_INT8);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(xf + i, _mm256_sub_ps(qf_vq_code(_mm256_loadu_ps(x + i), &vq), vq.zero));
    return i;
}
#endif

/* n float inputs -> (code - zero) floats. */
static void qf_in_floats(const trtl_qlinear_params *q, const float *x, float *xf, int64_t n)
{
    int64_t i = 0;
#if QF_X86
    if (trtl_cpu_has(TRTL_CPU_AVX2) && trtl_cpu_has(TRTL_CPU_FMA))
        i = qf_in_avx2(q, x, xf, n);
#endif
    for (; i < n; i++)
        xf[i] = qf_in_scalar(q, x, i);
}

static void qf_in_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const qf_job *j = ctx;
    (void)thread;
    b *= QF_CHUNK;
    e = e * QF_CHUNK < j->n_in ? e * QF_CHUNK : j->n_in;
    qf_in_floats(j->q, (const float *)j->x + b, j->xf + b, e - b);
}

#if QF_X86
/* n codes (int8 where sg, else uint8) -> (q - zero) floats, exact: a block's input inside its task (the
 * dequantize kernel's call per block of 8 channels cost more than the conversion on 7 x 7 / 14 x 14 maps). */
__attribute__((target("avx2"))) static void qf_codes_floats_avx2(const void *src, int32_t sg, int32_t zero, float *dst,
                                                                 int64_t n)
{
    const __m256 z = _mm256_set1_ps((float)zero);
    const int8_t *c = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i c8 = _mm_loadl_epi64((const __m128i *)(c + i));
        __m256i v = sg ? _mm256_cvtepi8_epi32(c8) : _mm256_cvtepu8_epi32(c8);
        _mm256_storeu_ps(dst + i, _mm256_sub_ps(_mm256_cvtepi32_ps(v), z));
    }
    for (; i < n; i++)
        dst[i] = (float)((sg ? (int32_t)c[i] : (int32_t)(uint8_t)c[i]) - zero);
}
#endif

/* Input codes -> (q - zero) floats: DequantizeLinear with scale 1, on its kernel (dequantize.simd). */
static trtl_status qf_codes_in(const trtl_node *node, const trtl_tensor_view *x, float *xf, struct trtl_threadpool *pool)
{ /* node: the QLINEAR node (its input quantization) */
    const trtl_qlinear_params *q = &node->p.qlin;
    const float one = 1.0f;
    const int8_t zs = (int8_t)q->in_zero_point;
    const uint8_t zu = (uint8_t)q->in_zero_point;
    const trtl_dims scalar = {0, {0}};
    int32_t io[4] = {0, 1, 2, 3};
    trtl_node dq = {.op = TRTL_OP_DEQUANTIZE, .name = node->name, .n_in = 3, .n_out = 1, .in = io, .out = io + 3};
    trtl_tensor_view in[3] = {*x, {(void *)&one, scalar, TRTL_FLOAT},
                              {x->dtype == TRTL_INT8 ? (void *)&zs : (void *)&zu, scalar, x->dtype}};
    trtl_tensor_view out = {xf, x->dims, TRTL_FLOAT};
    trtl_kernel_args da = {&dq, in, &out, NULL, 0, NULL, pool, NULL};
    return trtl_kernel_dequantize_simd.run(&da);
}

/* The output of channel k's pixels [b, e): vector where the activation is none, ReLU or an upright clip (returns
 * where it stopped), else nothing; trtl_qconv_epilogue_one does the rest.  Every parameter is read into a register
 * first (stores of code bytes may alias anything). */
#if QF_X86
__attribute__((target("avx2,fma"))) static int64_t qf_out_avx2(const qf_job *j, const trtl_qconv_state *qs,
                                                               int64_t k, const float *acc, int64_t o0, int64_t e)
{
    const trtl_qconv_desc *d = &qs->d;
    const int32_t act = d->act;
    if (!(act == TRTL_ACT_NONE || act == TRTL_ACT_RELU || (act == TRTL_ACT_CLIP && d->alpha <= d->beta)))
        return 0;
    const int32_t mid = d->mid_quant, outq = d->out_quant, osg = d->out_signed, rsg = d->res_signed;
    const int32_t rcodes = j->res && d->res_codes, rfloat = j->res && !d->res_codes;
    qf_vq vm, vo;
    qf_vq_init(&vm, mid ? d->mid_scale : 1.0f, d->mid_zero, d->mid_signed);
    qf_vq_init(&vo, outq ? d->out_scale : 1.0f, d->out_zero, osg);
    const __m256 sc = _mm256_set1_ps(qs->scale[k]), bi = _mm256_set1_ps(qs->bias[k]);
    const __m256 al = _mm256_set1_ps(act == TRTL_ACT_CLIP ? d->alpha : 0.0f), be = _mm256_set1_ps(d->beta);
    const __m256 rs = _mm256_set1_ps(d->res_scale);
    const __m256i rz = _mm256_set1_epi32(d->res_zero);
    const void *res = j->res ? (const char *)j->res + o0 * (rcodes ? 1 : 4) : NULL;
    void *y = (char *)j->y + o0 * (outq == 2 ? 1 : 4);
    int64_t i = 0;
    for (; i + 8 <= e; i += 8) {
        __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(acc + i), sc), bi);
        if (mid)
            v = qf_vq_fake(v, &vm);
        if (rcodes) {
            __m128i c8 = _mm_loadl_epi64((const __m128i *)((const int8_t *)res + i));
            __m256i r = rsg ? _mm256_cvtepi8_epi32(c8) : _mm256_cvtepu8_epi32(c8);
            v = _mm256_add_ps(v, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(r, rz)), rs));
        } else if (rfloat) {
            v = _mm256_add_ps(v, _mm256_loadu_ps((const float *)res + i));
        }
        if (act != TRTL_ACT_NONE) /* max(alpha, v): NaN stays NaN, as trtl_activation_eval */
            v = _mm256_max_ps(al, v);
        if (act == TRTL_ACT_CLIP)
            v = _mm256_min_ps(be, v);
        if (outq == 2) {
            _mm_storel_epi64((__m128i *)((int8_t *)y + i), qf_pack8(_mm256_cvtps_epi32(qf_vq_code(v, &vo)), osg));
            continue;
        }
        if (outq)
            v = qf_vq_fake(v, &vo);
        _mm256_storeu_ps((float *)y + i, v);
    }
    return i;
}

/* Folded codes out (qf_codes_fold) of channel k's pixels [0, n), the last < 8 by a masked load. */
__attribute__((target("avx2,fma"))) static void qf_codes_avx2(const qf_state *s, int64_t k, const float *acc,
                                                              void *y, int64_t n)
{
    const int32_t sg = s->qs->d.out_signed;
    const __m256 m = _mm256_set1_ps(s->cmul[k]), b = _mm256_set1_ps(s->cmul[s->qs->d.K + k]);
    const __m256 lo = _mm256_set1_ps(s->clo), hi = _mm256_set1_ps(s->chi);
    const __m256i z = _mm256_set1_epi32(s->qs->d.out_zero);
    int8_t *yc = y;
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t r = n - i < 8 ? n - i : 8;
        __m256 v;
        if (r == 8) {
            v = _mm256_loadu_ps(acc + i);
        } else {
            const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            v = _mm256_maskload_ps(acc + i, _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)r), idx));
        }
        v = _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(v, m, b), lo), hi);
        /* round to nearest even (MXCSR default) */
        __m128i w = qf_pack8(_mm256_add_epi32(_mm256_cvtps_epi32(v), z), sg);
        if (r == 8) {
            _mm_storel_epi64((__m128i *)(yc + i), w);
        } else {
            int8_t t[16];
            _mm_storeu_si128((__m128i *)t, w);
            memcpy(yc + i, t, (size_t)r);
        }
    }
}
#endif

/* The epilogue of output plane (image, channel k) at element o0 of the output, from its accumulators acc[P]. */
static void qf_out_plane(const qf_job *j, int64_t k, const float *acc, int64_t o0)
{
    const trtl_qconv_state *qs = j->s->qs;
    int64_t i = 0;
#if QF_X86
    if (trtl_cpu_has(TRTL_CPU_AVX2) && trtl_cpu_has(TRTL_CPU_FMA)) {
        if (j->s->cfold) {
            qf_codes_avx2(j->s, k, acc, (int8_t *)j->y + o0, j->P);
            return;
        }
        i = qf_out_avx2(j, qs, k, acc, o0, j->P);
    }
#endif
    const float *res = j->res && !qs->d.res_codes ? j->res : NULL;
    const int8_t *resq = j->res && qs->d.res_codes ? j->res : NULL;
    for (; i < j->P; i++) {
        float a = rintf(acc[i]); /* an integer (Winograd: to float rounding): the int32 accumulator, saturated */
        int32_t v = a >= 2147483520.0f ? INT32_MAX : a <= -2147483648.0f ? INT32_MIN : (int32_t)a;
        trtl_qconv_epilogue_one(qs, k, v, res, resq, j->y, o0 + i);
    }
}

static void qf_out_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const qf_job *j = ctx;
    (void)thread;
    for (int64_t plane = b; plane < e; plane++)
        qf_out_plane(j, plane % j->K, j->acc + plane * j->P, plane * j->P);
}

/* Blocked depthwise: items (image, block of channels), each converted, convolved and requantized in its thread's
 * scratch slot. */
typedef struct qf_bjob {
    const qf_job *j;
    const trtl_node *node; /* the QLINEAR node */
    const trtl_tensor_view *x;
    trtl_dims xd, yd;
    char *scratch;
    size_t slot;
    trtl_status *st; /* [threads] */
} qf_bjob;

static void qf_block_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const qf_bjob *bj = ctx;
    const qf_job *j = bj->j;
    const qf_state *s = j->s;
    const int64_t HW = bj->xd.d[2] * bj->xd.d[3], C = bj->xd.d[1];
    float *xf = (float *)(bj->scratch + (size_t)thread * bj->slot);
    float *acc = (float *)((char *)xf + al64((size_t)(QF_DW_BLOCK * HW) * sizeof(float)));
    char *iscratch = (char *)xf + qf_block_bytes(&bj->xd, &bj->yd);
    size_t isize = bj->slot - qf_block_bytes(&bj->xd, &bj->yd);
    for (int64_t item = b; item < e && bj->st[thread] == TRTL_OK; item++) {
        const int64_t n = item / s->nblk, blk = item % s->nblk, c0 = blk * QF_DW_BLOCK;
        const int64_t cbk = j->K - c0 < QF_DW_BLOCK ? j->K - c0 : QF_DW_BLOCK, off = (n * C + c0) * HW;
        const int64_t yoff = (n * j->K + c0) * j->P;
        trtl_tensor_view vi[2] = {{xf, bj->xd, TRTL_FLOAT}}, vo = {acc, bj->yd, TRTL_FLOAT};
        vi[0].dims.d[0] = vo.dims.d[0] = 1;
        vi[0].dims.d[1] = vo.dims.d[1] = cbk;
        if (s->fused) { /* the kernel's epilogue writes the block's outputs (residual: the same block of it) */
            vo.data = (float *)j->y + yoff;
            vi[1] = (trtl_tensor_view){j->res ? (float *)j->res + yoff : NULL, vo.dims, TRTL_FLOAT};
        }
        if (j->x_codes) {
            trtl_tensor_view xc = {(char *)bj->x->data + off, vi[0].dims, bj->x->dtype};
#if QF_X86
            if (trtl_cpu_has(TRTL_CPU_AVX2))
                qf_codes_floats_avx2(xc.data, xc.dtype == TRTL_INT8, j->q->in_zero_point, xf, cbk * HW);
            else
#endif
                bj->st[thread] = qf_codes_in(bj->node, &xc, xf, NULL);
        } else if (j->q->in_grid) { /* on the grid already: the kernel reads it */
            vi[0].data = (float *)bj->x->data + off;
        } else {
            qf_in_floats(j->q, (const float *)j->x + off, xf, cbk * HW);
        }
        trtl_kernel_args ia = {&s->bnode[blk], vi, &vo, iscratch, isize, s->bstate[blk], NULL, NULL};
        if (bj->st[thread] == TRTL_OK)
            bj->st[thread] = s->inner->run(&ia);
        for (int64_t kk = 0; !s->fused && kk < cbk && bj->st[thread] == TRTL_OK; kk++)
            qf_out_plane(j, c0 + kk, acc + kk * j->P, yoff + kk * j->P);
    }
}

static trtl_status qf_run_blocked(const trtl_kernel_args *a, const qf_job *j)
{
    struct trtl_threadpool *pool = a->pool;
    int nt = pool ? trtl_threadpool_size(pool) : 1;
    size_t slot = a->scratch_size / (size_t)trtl_available_cpus();
    slot &= ~(size_t)63;
    if (nt > trtl_available_cpus() || slot * (size_t)nt > a->scratch_size) {
        pool = NULL; /* a larger pool than the scratch was sized for runs on the calling thread */
        nt = 1;
    }
    trtl_status st[64];
    for (int t = 0; t < 64; t++)
        st[t] = TRTL_OK;
    if (nt > 64) {
        pool = NULL;
        nt = 1;
    }
    qf_bjob bj = {j, a->node, &a->in[0], a->in[0].dims, a->out[0].dims, a->scratch, slot, st};
    trtl_parallel_for(pool, a->in[0].dims.d[0] * j->s->nblk, 1, qf_block_task, &bj);
    for (int t = 0; t < nt; t++)
        if (st[t] != TRTL_OK)
            return st[t];
    return TRTL_OK;
}

static trtl_status qf_run(const trtl_kernel_args *a)
{
    const trtl_node *n = a->node;
    const qf_state *s = a->state;
    const trtl_qlinear_params *q = &n->p.qlin;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    size_t xbytes = al64((size_t)trtl_volume(xd) * sizeof(float)), abytes = qf_acc_bytes(n, a->out);
    qf_job j = {s, q, a->in[0].data, a->in[0].dtype != TRTL_FLOAT, a->scratch, NULL, a->out[0].data,
                q->has_residual ? a->in[1].data : NULL, yd->d[1], yd->d[2] * yd->d[3], trtl_volume(xd)};
    if (s->nblk) {
        size_t need = qf_block_bytes(xd, yd);
        if (a->scratch_size / (size_t)trtl_available_cpus() < need)
            return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': qlinear.fp32 scratch too small", n->name);
        return qf_run_blocked(a, &j);
    }
    if (a->scratch_size < xbytes + abytes)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': qlinear.fp32 scratch too small", n->name);
    float *acc = abytes ? (float *)((char *)a->scratch + xbytes) : (float *)a->out[0].data;
    j.acc = acc;
    const float *xin = j.xf;
    if (j.x_codes) {
        trtl_status cs = qf_codes_in(n, &a->in[0], j.xf, a->pool);
        if (cs != TRTL_OK)
            return cs;
    } else if (q->in_grid) { /* on the grid already (passes/int8_regions.c): the kernel reads it */
        xin = a->in[0].data;
    } else {
        trtl_parallel_for(a->pool, (j.n_in + QF_CHUNK - 1) / QF_CHUNK, 1, qf_in_task, &j);
    }
    /* fused: acc is the output (out_quant is not 2) and the kernel's epilogue finishes it, residual included */
    trtl_tensor_view vi[2] = {{(void *)xin, *xd, TRTL_FLOAT}, {(void *)j.res, *yd, TRTL_FLOAT}};
    trtl_tensor_view vo = {acc, *yd, TRTL_FLOAT};
    trtl_kernel_args ia = {&s->node, vi, &vo, (char *)a->scratch + xbytes + abytes,
                           a->scratch_size - xbytes - abytes, s->istate, a->pool, NULL};
    trtl_status st = s->inner->run(&ia);
    if (st != TRTL_OK || s->fused)
        return st;
    trtl_parallel_for(a->pool, yd->d[0] * j.K, 1, qf_out_task, &j);
    return TRTL_OK;
}

/* ---- one kernel per fp32 convolution kernel (the list: kernels/qlinear_fp32.h) ---- */
#define QF_DECLARE(id, inner, feat) extern const trtl_kernel inner;
TRTL_QLINEAR_FP32_TACTICS(QF_DECLARE)
#undef QF_DECLARE

#define QF_WRAP(id, inner, feat)                                                                                       \
    static int qf_applies_##id(const trtl_node *n, const trtl_dims *in) { return qf_applies(&inner, n, in); }          \
    static trtl_status qf_prepare_##id(const trtl_node *n, void **st) { return qf_prepare(&inner, n, st); }           \
    static size_t qf_scratch_##id(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)         \
    {                                                                                                                  \
        return qf_scratch(&inner, n, in, out);                                                                         \
    }                                                                                                                  \
    const trtl_kernel trtl_kernel_qlinear_fp32_##id = {                                                                \
        .name = "qlinear.fp32." #id,                                                                                   \
        .op = TRTL_OP_QLINEAR,                                                                                         \
        .cpu_features = feat,                                                                                          \
        .applies_epilogue = 1,                                                                                         \
        .applies = qf_applies_##id,                                                                                    \
        .prepare = qf_prepare_##id,                                                                                    \
        .release = qf_release,                                                                                         \
        .scratch = qf_scratch_##id,                                                                                    \
        .run = qf_run,                                                                                                 \
        .precision = TRTL_FLOAT,                                                                                       \
    };
TRTL_QLINEAR_FP32_TACTICS(QF_WRAP)
#undef QF_WRAP

const trtl_kernel *trtl_qlinear_fp32_inner(const trtl_kernel *k)
{
#define QF_MATCH(id, inner, feat)                                                                                      \
    if (k == &trtl_kernel_qlinear_fp32_##id)                                                                           \
        return &inner;
    TRTL_QLINEAR_FP32_TACTICS(QF_MATCH)
#undef QF_MATCH
    return NULL;
}

/* ---- the same math for the blocked layout (builder/passes/nchwc.c) ---- */

int trtl_qlinear_fp32_epilogue(const trtl_qlinear_params *q, trtl_epilogue *e, trtl_activation_params *mid)
{
    trtl_qlinear_params r = *q; /* as it runs in a region: input on its grid, residual and output FLOAT */
    r.in_grid = 1;
    r.res_quant = 0;
    r.out_quant = q->out_quant ? 1 : 0;
    *mid = (trtl_activation_params){TRTL_ACT_NONE, 0.0f, 0.0f};
    /* a mid quantization before the residual (quantize_static's Conv -> Q/DQ -> Add -> Q/DQ: the residual layers of
     * MobileNetV2 / ResNet): fq_mid is TRTL_ACT_QGRID of its own bounds (the type's codes - zero), then the residual,
     * then the rest as fused without it */
    if (r.mid_quant && r.has_residual) {
        if (!trtl_act_qgrid_scale_ok(r.mid_scale))
            return 0;
        *mid = (trtl_activation_params){TRTL_ACT_QGRID, r.mid_scale,
                                        trtl_act_qgrid_codes_beta(r.mid_type == TRTL_INT8, r.mid_zero_point)};
        r.mid_quant = 0;
    }
    /* a residual of codes (the values (q - z) * s once FLOAT) and the integer sums of codes make no NaN, so a ReLU /
     * Clip after the residual folds into the output bounds (qf_fold_bounds refuses it for a float residual, whose NaN
     * the reference quantizes to the lowest code: ResNet's add -> ReLU -> Q/DQ) */
    const int finite_res = q->has_residual && q->res_quant;
    if (finite_res)
        r.has_residual = 0;
    const int ok = qf_fused(&r, e);
    e->has_residual = q->has_residual;
    if (!ok)
        *mid = (trtl_activation_params){TRTL_ACT_NONE, 0.0f, 0.0f};
    return ok;
}

trtl_status trtl_qlinear_fp32_weights(const trtl_node *n, float **w, float **bias)
{
    *w = *bias = NULL;
    const trtl_qlinear_params *q = &n->p.qlin;
    if (n->op != TRTL_OP_QLINEAR || q->mode != TRTL_QL_CONV || q->conv.kernel.type != TRTL_INT8 ||
        q->w_scale.count != q->conv.num_output_maps || q->conv.num_output_maps <= 0)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': an fp32 form needs an int8 convolution with per-channel "
                          "weight scales", n->name);
    trtl_qconv_desc d;
    trtl_qconv_state *qs = NULL;
    trtl_qlinear_make_desc(q, &d);
    if (trtl_qconv_prepare_amx(&d, q->conv.kernel.values, q->w_scale.values, 1,
                               q->conv.bias.count ? q->conv.bias.values : NULL, TRTL_QCONV_AMX_NEVER, &qs) != TRTL_OK)
        return trtl_error_prefix("layer '%s'", n->name);
    trtl_node g = *n; /* the weights of an in_grid input: int8 x scale[k] / in_scale */
    g.p.qlin.in_grid = 1;
    const int64_t K = q->conv.num_output_maps;
    *w = qf_weights(&g, qs->scale);
    *bias = trtl_aligned_alloc((size_t)K * sizeof(float));
    if (*bias)
        memcpy(*bias, qs->bias, (size_t)K * sizeof(float));
    trtl_qconv_release(qs);
    if (!*w || !*bias) {
        trtl_aligned_free(*w);
        trtl_aligned_free(*bias);
        *w = *bias = NULL;
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", n->name);
    }
    return TRTL_OK;
}
