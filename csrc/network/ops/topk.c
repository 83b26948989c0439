/* topk.c -- ITopKLayer: the k largest (MAX) or smallest (MIN) elements along one axis.
 * Outputs: values (the input's dtype) and int32 indices along the axis; order: best first, ties by
 * the lower index.
 * K from a tensor (TensorRT 10's set_input(1, k)): a 0-D or one-element 1-D INT32 shape tensor replaces
 * the `k` attribute; its value, 0..the axis size, is resolved with the shapes (network/shape_values.h)
 * and the kernel takes K from the output's dims. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_topk[] = {
    TRTL_A_ENUM("op", topk.op, "TopKOperation", TRTL_TOPK_COUNT),
    TRTL_A("k", TRTL_ATTR_INT, topk.k),
    TRTL_A("axes", TRTL_ATTR_AXES, topk.axes),
};
TRTL_NATTRS(topk);

void trtl_init_topk(trtl_params *p)
{
    p->topk.op = TRTL_TOPK_MAX;
    p->topk.k = 1;
    p->topk.axes = 1u;
}

static trtl_status check_topk(const trtl_topk_params *p, int32_t rank, const char *layer)
{
    if (p->op != TRTL_TOPK_MAX && p->op != TRTL_TOPK_MIN)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown TopK op %d", layer, (int)p->op);
    if (p->k < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': k = %d must be >= 1", layer, (int)p->k);
    int ax = trtl_single_axis(p->axes);
    if (ax < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x must have exactly one bit set", layer,
                          (unsigned)p->axes);
    if (rank >= 0 && ax >= rank)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': TopK axis %d is out of range for an input of %d dims (batch included)", layer,
                          ax, (int)rank);
    return TRTL_OK;
}

trtl_status trtl_lower_topk(trtl_params *p, const trtl_lower_ctx *c)
{
    if (trtl_single_axis(p->topk.axes) < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x must have exactly one bit set",
                          c->layer_name, (unsigned)p->topk.axes);
    if (c->implicit_batch && c->n_in > 1)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': a TopK K from a tensor (input 1) needs an "
                          "explicit-batch network", c->layer_name);
    if (c->implicit_batch) {
        if (p->topk.axes & 0x80000000u)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x out of range", c->layer_name,
                              (unsigned)p->topk.axes);
        p->topk.axes <<= 1;
    }
    return check_topk(&p->topk, c->n_in > 0 && c->in ? c->in[0].nb_dims : -1, c->layer_name);
}

trtl_status trtl_infer_topk(const trtl_infer_ctx *c)
{
    const trtl_topk_params *p = &c->p->topk;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_topk(p, x->nb_dims, c->layer_name));
    trtl_dtype t = c->in_type[0];
    if (t != TRTL_FLOAT && t != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': TopK needs a FLOAT or INT32 input, got %s", c->layer_name,
                          trtl_dtype_name(t));
    int ax = trtl_single_axis(p->axes);
    int64_t k = p->k;
    if (c->n_in > 1) {
        const trtl_dims *kd = &c->in[1];
        if (c->in_type[1] != TRTL_INT32 || kd->nb_dims > 1 || (kd->nb_dims == 1 && kd->d[0] != 1))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': K (input 1) must be a 0-D or one-element 1-D INT32 shape "
                              "tensor, got %s %s", c->layer_name, trtl_dtype_name(c->in_type[1]),
                              trtl_dims_str(kd, s, sizeof s));
        k = c->in_values && c->in_values[1] ? c->in_values[1][0] : TRTL_SV_UNKNOWN;
        if (k == TRTL_SV_UNKNOWN && c->need_values)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': K (input 1) is not known before execution: a shape tensor "
                              "must be computed from input shapes (shape layers), constants and shape-tensor network "
                              "inputs only", c->layer_name);
        if (k != TRTL_SV_UNKNOWN && k < 0)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': K (input 1) = %lld is negative", c->layer_name,
                              (long long)k);
        if (k == TRTL_SV_UNKNOWN)
            k = -1;
    }
    if (x->d[ax] >= 0 && k > x->d[ax])
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': k = %lld exceeds the size %lld of axis %d of input %s",
                          c->layer_name, (long long)k, (long long)x->d[ax], ax, trtl_dims_str(x, s, sizeof s));
    trtl_dims o = *x;
    o.d[ax] = k;
    c->out[0] = o;
    c->out_type[0] = t;
    c->out[1] = o;
    c->out_type[1] = TRTL_INT32;
    return TRTL_OK;
}
