/* preact_conv.c -- the internal PREACT_CONV op: a convolution (convolution's params, `preact.conv`) of its input
 * mapped per channel first, x' = act(x * in_scale[c] + in_shift[c]) (a batch norm and its activation before the
 * convolution: DenseNet's BN -> ReLU -> 1x1 conv on a concatenation).  Only the builder makes it
 * (passes/fuse_preact.c); networks cannot add it (trtl_network_add_layer refuses), so lowering never runs.  Shape
 * inference checks what a plan could get wrong, as the plan reader re-runs it: the transform's weight counts against
 * the input channels, its activation, then the convolution's own checks. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_preact_conv[] = {
    TRTL_CONV_ATTRS(preact.conv),
    TRTL_A("in_scale", TRTL_ATTR_WEIGHTS, preact.in_scale),
    TRTL_A("in_shift", TRTL_ATTR_WEIGHTS, preact.in_shift),
    TRTL_A("in_act", TRTL_ATTR_INT, preact.in_act),
    TRTL_A("in_alpha", TRTL_ATTR_FLOAT, preact.in_alpha),
    TRTL_A("in_beta", TRTL_ATTR_FLOAT, preact.in_beta),
};
TRTL_NATTRS(preact_conv);

void trtl_init_preact_conv(trtl_params *p)
{
    trtl_init_convolution(p);
    p->preact.in_scale = (trtl_weights){0};
    p->preact.in_shift = (trtl_weights){0};
    p->preact.in_scale.type = p->preact.in_shift.type = TRTL_FLOAT;
    p->preact.in_act = TRTL_ACT_NONE;
    p->preact.in_alpha = p->preact.in_beta = 0.0f;
}

trtl_status trtl_lower_preact_conv(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': preact_conv is an internal layer kind of the builder",
                      c->layer_name);
}

static trtl_status check_weights(const trtl_weights *w, const char *what, int64_t C, const char *layer)
{
    if (w->count == 0 || (w->type == TRTL_FLOAT && w->values && (C < 0 || w->count == C)))
        return TRTL_OK;
    return trtl_error(TRTL_ERR_SHAPE, "layer '%s': preact_conv's %s has %lld FLOAT values for %lld input channels",
                      layer, what, (long long)w->count, (long long)C);
}

trtl_status trtl_infer_preact_conv(const trtl_infer_ctx *c)
{
    const trtl_preact_conv_params *p = &c->p->preact;
    if (c->n_in != 1 || c->n_out != 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': preact_conv has %d inputs / %d outputs (1 / 1)",
                          c->layer_name, (int)c->n_in, (int)c->n_out);
    if (p->in_act < TRTL_ACT_NONE || p->in_act >= TRTL_ACT_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': preact_conv's in_act %d is no activation type",
                          c->layer_name, (int)p->in_act);
    const int64_t C = c->in[0].nb_dims >= 2 ? c->in[0].d[1] : -1;
    TRTL_TRY(check_weights(&p->in_scale, "in_scale", C, c->layer_name));
    TRTL_TRY(check_weights(&p->in_shift, "in_shift", C, c->layer_name));
    return trtl_infer_convolution(c);
}
