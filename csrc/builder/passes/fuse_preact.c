/* fuse_preact.c -- a per-channel scale (batch norm) and its fused activation, read only by 1x1 stride-1 unpadded
 * convolutions, becomes those convolutions' input transform (PREACT_CONV, core/params.h):
 *     y = conv(act(x * s[c] + t[c]))   ==>   one PREACT_CONV node reading x
 * DenseNet's dense layers are BN -> ReLU -> 1x1 conv on the concatenation of all earlier features: the batch norm
 * follows a concatenation, so fold_scale cannot fold it into a producer, and it ran as a scale step writing the whole
 * concatenation once more.  The convolution's kernel (preact_conv.packed_gemm) maps each activation row while it
 * packs it (kernels/x86/convolution_gemm_pack.c), so the mapped tensor never exists.
 * Applies where the scale has no power (or powers of 1), a uniform value or one per channel of axis 1, no residual,
 * a FLOAT input, its result is no network output and every reader is such a convolution (input 0, FLOAT weights,
 * no kernel fixed by a pass or precision asked for); the scale's epilogue activation becomes the transform's.
 * Skipped for refittable engines (refit finds the batch norm's weights on its scale layer) and under the FP16 /
 * BF16 / INT8 flags (the preact kernel is fp32). */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "core/cpu.h"
#include "core/status.h"
#include "core/dims.h"

/* Whether node ci, reading tensor x, can take the transform: a 1x1 stride-1 unpadded convolution of x. */
static int reader_ok(const trtl_bgraph *g, int32_t ci, int32_t x)
{
    const trtl_bg_node *b = &g->n[ci];
    const trtl_node *n = &b->n;
    const trtl_conv_params *p = &n->p.conv;
    if (n->op != TRTL_OP_CONVOLUTION || b->want_set || b->fixed_kernel || n->in[0] != x || n->n_out != 1 ||
        p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT) ||
        g->t[n->out[0]].dtype != TRTL_FLOAT)
        return 0;
    for (int32_t k = 1; k < n->n_in; k++)
        if (n->in[k] == x)
            return 0; /* also its residual */
    const int nsp = p->kernel_size.nb_dims;
    const trtl_dims *d = &g->t[x].dopt;
    if (nsp < 1 || nsp > 3 || d->nb_dims != nsp + 2)
        return 0;
    for (int i = 0; i < nsp; i++)
        if (p->kernel_size.d[i] != 1 || p->stride.d[i] != 1 || p->pre_padding.d[i] != 0 ||
            p->post_padding.d[i] != 0 || p->dilation.nb_dims != nsp)
            return 0;
    /* SAME_* modes pad nothing for a 1x1 stride-1 window; the explicit paddings are 0 */
    return 1;
}

/* The scale's C values of w (uniform expanded, dflt where absent: the kernel's packing tiles take both arrays) into
 * a graph-owned buffer. */
static int expand(trtl_bgraph *g, const trtl_weights *w, int64_t C, float dflt, trtl_weights *out)
{
    memset(out, 0, sizeof *out);
    out->type = TRTL_FLOAT;
    float *v = trtl_aligned_alloc((size_t)C * sizeof(float));
    if (!v || !trtl_bg_own(g, v))
        return 0;
    for (int64_t c = 0; c < C; c++)
        v[c] = trtl_scale_value(w, c, dflt);
    out->values = v;
    out->count = C;
    return 1;
}

trtl_status trtl_pass_fuse_preact(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "pre-activation fusion");
    const uint32_t fl = g->cfg->flags;
    if ((fl >> TRTL_FLAG_REFIT) & 1u || (fl >> TRTL_FLAG_FP16) & 1u || (fl >> TRTL_FLAG_BF16) & 1u ||
        (fl >> TRTL_FLAG_INT8) & 1u) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'fuse_preact' skipped: REFIT / FP16 / BF16 / INT8 builds keep the scale");
        return TRTL_OK;
    }
    if (!trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA)) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'fuse_preact' skipped: its kernel needs AVX2 + FMA");
        return TRTL_OK;
    }
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *sb = &g->n[i];
        trtl_node *s = &sb->n;
        if (sb->dead || s->op != TRTL_OP_SCALE || s->n_in != 1 || s->n_out != 1 || s->epi.has_residual ||
            s->epi.act < TRTL_ACT_NONE || s->epi.act >= TRTL_ACT_COUNT || sb->want_set || sb->fixed_kernel)
            continue;
        const int32_t x = s->in[0], y = s->out[0];
        const trtl_dims *d = &g->t[x].dopt;
        if (g->t[x].dtype != TRTL_FLOAT || g->t[y].dtype != TRTL_FLOAT || d->nb_dims < 3 || d->d[1] < 1 ||
            trtl_bg_is_output(g, y) || !trtl_scale_foldable(s, d->d[1]))
            continue;
        const int64_t C = d->d[1];
        int32_t readers = 0, ok = 1;
        for (int32_t c = 0; c < g->nn && ok; c++) {
            if (g->n[c].dead)
                continue;
            for (int32_t k = 0; k < g->n[c].n.n_in; k++)
                if (g->n[c].n.in[k] == y) {
                    ok = reader_ok(g, c, y);
                    readers++;
                    break;
                }
        }
        if (!ok || readers == 0)
            continue;
        for (int32_t c = 0; c < g->nn; c++) {
            trtl_node *n = &g->n[c].n;
            if (g->n[c].dead || n->n_in < 1 || n->in[0] != y)
                continue;
            trtl_preact_conv_params *p = &n->p.preact; /* p->conv aliases n->p.conv */
            if (!expand(g, &s->p.scale.scale, C, 1.0f, &p->in_scale) ||
                !expand(g, &s->p.scale.shift, C, 0.0f, &p->in_shift))
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory fusing '%s'", s->name);
            p->in_act = s->epi.act;
            p->in_alpha = s->epi.alpha;
            p->in_beta = s->epi.beta;
            char *nm = trtl_bg_join_names(s->name, n->name);
            if (!nm)
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            trtl_pass_log_add(&log, "scale '%s' became the input transform of convolution '%s'", s->name, n->name);
            free(n->name);
            n->name = nm;
            n->op = TRTL_OP_PREACT_CONV;
            n->in[0] = x;
        }
        sb->dead = 1;
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
