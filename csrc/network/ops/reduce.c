/* reduce.c -- IReduceLayer: SUM / PROD / MAX / MIN / AVG over the dims in `axes`; reduced dims become
 * 1 (keep_dims) or disappear (a rank-0 output is allowed).  FLOAT, and INT32 / INT64 except for AVG.
 * Run-time axes (trtlite's extension; TensorRT takes axes only as a build-time bitmask): an optional
 * input 1, a 0-D or 1-D INT32 shape tensor of k axis values (negative counts from the end; an empty
 * tensor reduces every dim, as ONNX's Reduce* without noop_with_empty_axes), replaces `axes`.  Its
 * values are resolved with the shapes (network/shape_values.h): out-of-range or repeated axes fail
 * there, naming the layer; the output rank is fixed by keep_dims and k alone. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/axes_values.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_reduce[] = {
    TRTL_A_ENUM("op", reduce.op, "ReduceOperation", TRTL_RED_COUNT),
    TRTL_A("axes", TRTL_ATTR_AXES, reduce.axes),
    TRTL_A("keep_dims", TRTL_ATTR_BOOL, reduce.keep_dims),
};
TRTL_NATTRS(reduce);

void trtl_init_reduce(trtl_params *p)
{
    p->reduce.op = TRTL_RED_SUM;
    p->reduce.axes = 0;
    p->reduce.keep_dims = 0;
}

static trtl_status check_reduce(const trtl_reduce_params *p, int32_t rank, const char *layer)
{
    if (p->op < TRTL_RED_SUM || p->op > TRTL_RED_AVG)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown reduce op %d", layer, (int)p->op);
    if (rank >= 0 && rank < 32 && (p->axes >> rank))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': axes 0x%x name a dimension beyond the input's %d (batch included)", layer,
                          (unsigned)p->axes, (int)rank);
    return TRTL_OK;
}

trtl_status trtl_lower_reduce(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch) {
        if (p->reduce.axes & 0x80000000u)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x out of range", c->layer_name,
                              (unsigned)p->reduce.axes);
        p->reduce.axes <<= 1;
    }
    if (c->implicit_batch && c->n_in > 1)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': reduce axes from a tensor (input 1) need an "
                          "explicit-batch network", c->layer_name);
    p->reduce.keep_dims = p->reduce.keep_dims ? 1 : 0;
    return check_reduce(&p->reduce, c->n_in > 0 && c->in ? c->in[0].nb_dims : -1, c->layer_name);
}

/* The axes of input 1 as a mask (*known 0: some value is not known before run time). */
static trtl_status runtime_axes(const trtl_infer_ctx *c, uint32_t *mask, int *known)
{
    const trtl_dims *a = &c->in[1];
    int32_t r = c->in[0].nb_dims;
    char b[TRTL_DIMS_STR_MAX];
    *known = 0;
    if (c->in_type[1] != TRTL_INT32 || a->nb_dims > 1 || (a->nb_dims == 1 && (a->d[0] < 0 || a->d[0] > r)))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the reduce axes (input 1) must be a 0-D or 1-D INT32 shape "
                          "tensor of at most %d values (the input's rank), got %s %s", c->layer_name, (int)r,
                          trtl_dtype_name(c->in_type[1]), trtl_dims_str(a, b, sizeof b));
    int64_t k = a->nb_dims == 0 ? 1 : a->d[0];
    const int64_t *v = c->in_values ? c->in_values[1] : NULL;
    for (int64_t i = 0; v && i < k; i++)
        if (v[i] == TRTL_SV_UNKNOWN)
            v = NULL;
    if (!v) {
        if (c->need_values)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the reduce axes (input 1) are not known before execution: "
                              "a shape tensor must be computed from input shapes (shape layers), constants and "
                              "shape-tensor network inputs only", c->layer_name);
        return TRTL_OK;
    }
    if (k == 0) {
        *mask = r >= 32 ? 0xffffffffu : (1u << r) - 1u;
    } else {
        TRTL_TRY(trtl_axes_values_mask(c->layer_name, "the reduce axes (input 1)", v, k, r, mask));
    }
    *known = 1;
    return TRTL_OK;
}

trtl_status trtl_infer_reduce(const trtl_infer_ctx *c)
{
    const trtl_reduce_params *p = &c->p->reduce;
    const trtl_dims *x = &c->in[0];
    TRTL_TRY(check_reduce(p, x->nb_dims, c->layer_name));
    trtl_dtype t = c->in_type[0];
    if (!(t == TRTL_FLOAT || ((t == TRTL_INT32 || t == TRTL_INT64) && p->op != TRTL_RED_AVG)))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': reduce needs a FLOAT input (or INT32 / INT64 for SUM/PROD/MAX/MIN), "
                          "got %s%s", c->layer_name, trtl_dtype_name(t),
                          t == TRTL_INT32 || t == TRTL_INT64 ? " with AVG" : "");
    uint32_t axes = p->axes;
    if (c->n_in > 1) {
        int known;
        TRTL_TRY(runtime_axes(c, &axes, &known));
        if (!known) { /* values known at run time only: the rank is known, the dims are not */
            int64_t k = c->in[1].nb_dims == 0 ? 1 : c->in[1].d[0];
            trtl_dims o = {0};
            o.nb_dims = p->keep_dims ? x->nb_dims : k == 0 ? 0 : x->nb_dims - (int32_t)k;
            for (int32_t i = 0; i < o.nb_dims; i++)
                o.d[i] = -1;
            c->out[0] = o;
            c->out_type[0] = t;
            return TRTL_OK;
        }
    }
    trtl_dims o = {0};
    for (int32_t i = 0; i < x->nb_dims; i++) {
        if (!(axes & (1u << i)))
            o.d[o.nb_dims++] = x->d[i];
        else if (p->keep_dims)
            o.d[o.nb_dims++] = 1;
    }
    c->out[0] = o;
    c->out_type[0] = t;
    return TRTL_OK;
}
