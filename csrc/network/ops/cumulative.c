/* cumulative.c -- ICumulativeLayer (ONNX CumSum, CumProd): running SUM (or trtlite's PROD) of input
 * (FLOAT, INT32 or INT64) along an axis.  Input 1 is the axis, an INT32 scalar.  The kernel reads it at run time (negative counts from
 * the end; out of range fails naming the layer), so unlike TensorRT it may be fed at run time; when
 * it is a constant the bindings also copy it into the attribute `axis` (checked at build).
 * exclusive: y[i] sums x[0..i) instead of x[0..i] (PROD: the empty product is 1); reverse: from the end. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_cumulative[] = {
    TRTL_A_ENUM("op", cum.op, "CumulativeOperation", TRTL_CUM_COUNT),
    TRTL_A("exclusive", TRTL_ATTR_BOOL, cum.exclusive),
    TRTL_A("reverse", TRTL_ATTR_BOOL, cum.reverse),
    TRTL_A("axis", TRTL_ATTR_INT, cum.axis),
};
TRTL_NATTRS(cumulative);

void trtl_init_cumulative(trtl_params *p)
{
    p->cum.op = TRTL_CUM_SUM;
    p->cum.axis = 0;
    p->cum.exclusive = 0;
    p->cum.reverse = 0;
}

trtl_status trtl_lower_cumulative(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': ICumulativeLayer needs an explicit-batch network",
                          c->layer_name);
    if (c->n_in > 0 && c->in) {
        int32_t r = c->in[0].nb_dims, axis = p->cum.axis;
        if (axis < -r || axis >= r)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for an input of %d dims",
                              c->layer_name, (int)axis, (int)r);
        p->cum.axis = axis < 0 ? axis + r : axis;
    }
    return TRTL_OK;
}

trtl_status trtl_infer_cumulative(const trtl_infer_ctx *c)
{
    const trtl_cumulative_params *q = &c->p->cum;
    const char *L = c->layer_name;
    char s[TRTL_DIMS_STR_MAX];
    if (q->op != TRTL_CUM_SUM && q->op != TRTL_CUM_PROD)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown CumulativeOperation %d (op)", L, (int)q->op);
    if (c->in_type[0] != TRTL_FLOAT && c->in_type[0] != TRTL_INT32 && c->in_type[0] != TRTL_INT64)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input must be FLOAT, INT32 or INT64, got %s", L,
                          trtl_dtype_name(c->in_type[0]));
    if (c->in_type[1] != TRTL_INT32 || trtl_volume(&c->in[1]) != 1 || c->in[1].nb_dims > 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis must be an INT32 scalar, got %s %s", L,
                          trtl_dtype_name(c->in_type[1]), trtl_dims_str(&c->in[1], s, sizeof s));
    if (q->axis < 0 || q->axis >= c->in[0].nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis %d is out of range for input %s", L, (int)q->axis,
                          trtl_dims_str(&c->in[0], s, sizeof s));
    c->out[0] = c->in[0];
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
