/* softmax.c -- ISoftMaxLayer: softmax along the one axis set in `axes`. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_softmax[] = {
    TRTL_A("axes", TRTL_ATTR_AXES, softmax.axes),
};
TRTL_NATTRS(softmax);

/* The network replaces this with TensorRT's input-dependent default axis. */
void trtl_init_softmax(trtl_params *p)
{
    p->softmax.axes = 1u;
}

static trtl_status check_axes(uint32_t axes, int32_t rank, const char *layer)
{
    int ax = trtl_single_axis(axes);
    if (ax < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x must have exactly one bit set", layer,
                          (unsigned)axes);
    if (rank >= 0 && ax >= rank)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': softmax axis %d is out of range for an input of %d dims (batch included)",
                          layer, ax, (int)rank);
    return TRTL_OK;
}

trtl_status trtl_lower_softmax(trtl_params *p, const trtl_lower_ctx *c)
{
    if (trtl_single_axis(p->softmax.axes) < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x must have exactly one bit set",
                          c->layer_name, (unsigned)p->softmax.axes);
    if (c->implicit_batch) {
        if (p->softmax.axes & 0x80000000u)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x out of range", c->layer_name,
                              (unsigned)p->softmax.axes);
        p->softmax.axes <<= 1;
    }
    return check_axes(p->softmax.axes, c->n_in > 0 && c->in ? c->in[0].nb_dims : -1, c->layer_name);
}

trtl_status trtl_infer_softmax(const trtl_infer_ctx *c)
{
    TRTL_TRY(check_axes(c->p->softmax.axes, c->in[0].nb_dims, c->layer_name));
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': softmax needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    c->out[0] = c->in[0];
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
