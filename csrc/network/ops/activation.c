/* activation.c -- IActivationLayer: y = f(x; alpha, beta), TensorRT's formulas (kernels/epilogue.c). */
#include "network/op_table.h"
#include "core/status.h"

const trtl_attr_desc trtl_attrs_activation[] = {
    TRTL_A_ENUM("type", act.type, "ActivationType", TRTL_ACT_COUNT),
    TRTL_A("alpha", TRTL_ATTR_FLOAT, act.alpha),
    TRTL_A("beta", TRTL_ATTR_FLOAT, act.beta),
};
TRTL_NATTRS(activation);

void trtl_init_activation(trtl_params *p)
{
    p->act.type = TRTL_ACT_RELU;
    p->act.alpha = 0.0f;
    p->act.beta = 0.0f;
}

trtl_status trtl_lower_activation(trtl_params *p, const trtl_lower_ctx *c)
{
    if (p->act.type < 0 || p->act.type >= TRTL_ACT_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown activation type %d", c->layer_name,
                          (int)p->act.type);
    return TRTL_OK;
}

trtl_status trtl_infer_activation(const trtl_infer_ctx *c)
{
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': activation needs a FLOAT input", c->layer_name);
    if (c->p->act.type == TRTL_ACT_QGRID && !trtl_act_qgrid_scale_ok(c->p->act.alpha)) /* (internal: plans only) */
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': fake-quantize scale %g outside [2^-100, 2^100]",
                          c->layer_name, (double)c->p->act.alpha);
    c->out[0] = c->in[0];
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
