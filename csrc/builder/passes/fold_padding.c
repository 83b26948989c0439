/* fold_padding.c -- a zero padding of the spatial dims folded into the convolution it feeds:
 *
 *     y = conv(pad(x; a, b); pre p, post q)  ==>  y = conv(x; pre p + a, post q + b)
 *
 * (ONNX Pad -> Conv, as TensorFlow / Keras exports write asymmetric "same" padding.)  Exact: the
 * convolution reads zeros outside its input either way, and with an explicit padding mode its
 * output size depends on the input size plus the paddings only.
 * Preconditions: the padding layer is live, has one input and no epilogue, pads (never crops) only
 * the convolution's spatial dims (entries before them zero), and its FLOAT result feeds only this
 * convolution and is no network output; the convolution has one input and an explicit padding mode
 * (EXPLICIT_ROUND_DOWN / _UP; SAME modes derive the padding from the input size).  The padding
 * layer is marked dead.  Pooling is left alone: max pooling pads with -inf, and average pooling
 * that excludes padding would not count the zeros. */
#include <stdlib.h>

#include "builder/passes/passes.h"
#include "core/status.h"

static int foldable(const trtl_bgraph *g, const trtl_node *c, int32_t *pad_node)
{
    if (c->op != TRTL_OP_CONVOLUTION || c->n_in != 1 ||
        (c->p.conv.padding_mode != TRTL_PADMODE_EXPLICIT_ROUND_DOWN &&
         c->p.conv.padding_mode != TRTL_PADMODE_EXPLICIT_ROUND_UP))
        return 0;
    int32_t x = c->in[0], pi = g->t[x].producer;
    if (pi < 0 || g->n[pi].dead || trtl_bg_is_output(g, x) || trtl_bg_consumers(g, x, NULL) != 1 ||
        g->t[x].dtype != TRTL_FLOAT)
        return 0;
    const trtl_node *p = &g->n[pi].n;
    if (p->op != TRTL_OP_PADDING || p->n_in != 1 || p->n_out != 1 || p->epi.act != TRTL_ACT_NONE ||
        p->epi.has_residual)
        return 0;
    const trtl_padding_params *pp = &p->p.pad;
    int32_t nsp = c->p.conv.pre_padding.nb_dims, nb = pp->pre_padding.nb_dims, lead = nb - nsp;
    if (nsp < 1 || pp->post_padding.nb_dims != nb || lead < 0 || nb > g->t[x].dmax.nb_dims)
        return 0;
    for (int32_t i = 0; i < nb; i++) {
        int64_t a = pp->pre_padding.d[i], b = pp->post_padding.d[i];
        if (a < 0 || b < 0 || (i < lead && (a || b)))
            return 0;
    }
    *pad_node = pi;
    return 1;
}

trtl_status trtl_pass_fold_padding(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "padding folding");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *c = &g->n[i].n;
        int32_t pi;
        if (g->n[i].dead || !foldable(g, c, &pi))
            continue;
        const trtl_node *p = &g->n[pi].n;
        const trtl_padding_params *pp = &p->p.pad;
        int32_t nsp = c->p.conv.pre_padding.nb_dims, lead = pp->pre_padding.nb_dims - nsp;
        char *nm = trtl_bg_join_names(p->name, c->name);
        if (!nm)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        trtl_pass_log_add(&log, "folded padding '%s' into convolution '%s'", p->name, c->name);
        for (int32_t k = 0; k < nsp; k++) {
            c->p.conv.pre_padding.d[k] += pp->pre_padding.d[lead + k];
            c->p.conv.post_padding.d[k] += pp->post_padding.d[lead + k];
        }
        c->in[0] = p->in[0];
        free(c->name);
        c->name = nm;
        g->n[pi].dead = 1;
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
