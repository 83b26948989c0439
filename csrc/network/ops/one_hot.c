/* one_hot.c -- IOneHotLayer: inputs indices (INT32, rank r), values ([2]: off, on; any type, the
 * output's) and depth (INT32 scalar, a build-time constant: its value is the attribute `depth`,
 * which the bindings read from the constant and the kernel checks again at run time).  The output
 * is indices' shape with a dim of `depth` inserted at `axis` (-r-1..r, negative from the end):
 *   y[.., i_axis = d, ..] = on if d == wrap(indices[..]) else off,
 * where an index in -depth..-1 wraps once and any other out-of-range index gives all off (ONNX). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_one_hot[] = {
    TRTL_A("axis", TRTL_ATTR_INT, one_hot.axis),
    TRTL_A("depth", TRTL_ATTR_INT, one_hot.depth),
};
TRTL_NATTRS(one_hot);

void trtl_init_one_hot(trtl_params *p)
{
    p->one_hot.axis = -1;
    p->one_hot.depth = -1;
}

trtl_status trtl_lower_one_hot(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': IOneHotLayer needs an explicit-batch network", c->layer_name);
    if (c->n_in > 0 && c->in) {
        int32_t r = c->in[0].nb_dims, axis = p->one_hot.axis;
        if (axis < -r - 1 || axis > r)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for indices of %d dims "
                              "(valid %d..%d)", c->layer_name, (int)axis, (int)r, (int)(-r - 1), (int)r);
        p->one_hot.axis = axis < 0 ? axis + r + 1 : axis;
    }
    return TRTL_OK;
}

trtl_status trtl_infer_one_hot(const trtl_infer_ctx *c)
{
    const trtl_one_hot_params *o = &c->p->one_hot;
    const char *L = c->layer_name;
    char s[TRTL_DIMS_STR_MAX];
    const trtl_dims *I = &c->in[0];
    int32_t r = I->nb_dims;
    if (c->in_type[0] != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': indices must be INT32, got %s", L, trtl_dtype_name(c->in_type[0]));
    if (c->in_type[2] != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': depth must be INT32, got %s", L, trtl_dtype_name(c->in_type[2]));
    if (trtl_volume(&c->in[1]) != 2 || c->in[1].nb_dims != 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': values must have shape (2,) (off, on), got %s", L,
                          trtl_dims_str(&c->in[1], s, sizeof s));
    if (trtl_volume(&c->in[2]) != 1 || c->in[2].nb_dims > 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': depth must be a scalar, got %s", L,
                          trtl_dims_str(&c->in[2], s, sizeof s));
    if (o->depth < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': depth must be a build-time constant >= 1 (the output "
                          "of an IConstantLayer; attribute depth), got %d", L, (int)o->depth);
    if (r + 1 > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': indices %s leave no room for the depth dim (max %d dims)", L,
                          trtl_dims_str(I, s, sizeof s), TRTL_MAX_DIMS);
    if (o->axis < 0 || o->axis > r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis %d is out of range for indices %s", L, (int)o->axis,
                          trtl_dims_str(I, s, sizeof s));
    trtl_dims out = {0};
    out.nb_dims = r + 1;
    for (int32_t i = 0, j = 0; i <= r; i++)
        out.d[i] = i == o->axis ? o->depth : I->d[j++];
    c->out[0] = out;
    c->out_type[0] = c->in_type[1];
    return TRTL_OK;
}
