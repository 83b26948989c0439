/* fold_scale.c -- folds a per-channel or uniform scale (batch norm) into the convolution,
 * deconvolution or fully-connected layer before it:
 *     y = (W*x + b) * s + t   ==>   W' = W * s (per output channel),  b' = b * s + t
 * Applies only when the scale has no power, the producer's result feeds nothing else, and the
 * producer has no fused epilogue yet. */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/dims.h"

static int64_t out_channels(const trtl_node *p)
{
    return p->op == TRTL_OP_FULLY_CONNECTED ? p->p.fc.num_output_channels : p->p.conv.num_output_maps;
}

static int scale_ok(const trtl_node *s, int64_t K)
{
    const trtl_scale_params *sp = &s->p.scale;
    if (sp->power.count) {
        for (int64_t i = 0; i < sp->power.count; i++)
            if (((const float *)sp->power.values)[i] != 1.0f)
                return 0;
    }
    int64_t want = sp->mode == TRTL_SCALE_UNIFORM ? 1 : sp->mode == TRTL_SCALE_CHANNEL ? K : -1;
    if (want < 0 || (sp->mode == TRTL_SCALE_CHANNEL && sp->channel_axis != 1))
        return 0;
    return (sp->scale.count == 0 || sp->scale.count == want) && (sp->shift.count == 0 || sp->shift.count == want);
}

int trtl_scale_foldable(const trtl_node *s, int64_t K) { return scale_ok(s, K); }

static float at(const trtl_weights *w, int64_t k, float dflt)
{
    if (w->count == 0)
        return dflt;
    return ((const float *)w->values)[w->count == 1 ? 0 : k];
}

float trtl_scale_value(const trtl_weights *w, int64_t k, float dflt) { return at(w, k, dflt); }

static int fold(trtl_bgraph *g, trtl_node *p, const trtl_node *s)
{
    const trtl_scale_params *sp = &s->p.scale;
    int64_t K = out_channels(p);
    trtl_weights *w = p->op == TRTL_OP_FULLY_CONNECTED ? &p->p.fc.kernel : &p->p.conv.kernel;
    trtl_weights *bias = p->op == TRTL_OP_FULLY_CONNECTED ? &p->p.fc.bias : &p->p.conv.bias;
    float *wv = (float *)w->values;
    if (!wv || K <= 0)
        return 0;
    if (bias->count == 0) {
        float *nb = trtl_aligned_alloc((size_t)K * sizeof(float));
        if (!nb || !trtl_bg_own(g, nb))
            return 0;
        memset(nb, 0, (size_t)K * sizeof(float));
        bias->values = nb;
        bias->count = K;
        bias->type = TRTL_FLOAT;
    }
    float *bv = (float *)bias->values;
    if (p->op == TRTL_OP_DECONVOLUTION) {
        /* kernel [C, K/g, k...]: output channel of (c, kk) is group(c)*Kg + kk */
        int64_t G = p->p.conv.num_groups, Kg = K / G;
        int64_t kvol = trtl_volume(&p->p.conv.kernel_size);
        int64_t C = w->count / (Kg * kvol), Cg = C / G;
        for (int64_t c = 0; c < C; c++)
            for (int64_t kk = 0; kk < Kg; kk++) {
                float sc = at(&sp->scale, (c / Cg) * Kg + kk, 1.0f);
                float *row = wv + (c * Kg + kk) * kvol;
                for (int64_t i = 0; i < kvol; i++)
                    row[i] *= sc;
            }
    } else {
        int64_t per = w->count / K;
        for (int64_t k = 0; k < K; k++) {
            float sc = at(&sp->scale, k, 1.0f);
            for (int64_t i = 0; i < per; i++)
                wv[k * per + i] *= sc;
        }
    }
    for (int64_t k = 0; k < K; k++)
        bv[k] = bv[k] * at(&sp->scale, k, 1.0f) + at(&sp->shift, k, 0.0f);
    return 1;
}

trtl_status trtl_pass_fold_scale(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "scale folding");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *sb = &g->n[i];
        if (sb->dead || sb->n.op != TRTL_OP_SCALE)
            continue;
        int32_t x = sb->n.in[0], prod = g->t[x].producer;
        if (prod < 0 || g->n[prod].dead || trtl_bg_is_output(g, x) || trtl_bg_consumers(g, x, NULL) != 1)
            continue;
        trtl_node *p = &g->n[prod].n;
        if ((p->op != TRTL_OP_CONVOLUTION && p->op != TRTL_OP_DECONVOLUTION && p->op != TRTL_OP_FULLY_CONNECTED) ||
            p->epi.act != TRTL_ACT_NONE || p->epi.has_residual || !scale_ok(&sb->n, out_channels(p)))
            continue;
        if (!fold(g, p, &sb->n))
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory folding '%s'", sb->n.name);
        char *nm = trtl_bg_join_names(p->name, sb->n.name);
        if (!nm)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        trtl_pass_log_add(&log, "folded scale '%s' into the weights of '%s'", sb->n.name, p->name);
        free(p->name);
        p->name = nm;
        p->out[0] = sb->n.out[0];
        g->t[p->out[0]].producer = prod;
        sb->dead = 1;
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
