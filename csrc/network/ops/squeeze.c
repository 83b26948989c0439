/* squeeze.c -- ISqueezeLayer and IUnsqueezeLayer: reshapes that remove size-1 dims at `axes`
 * (squeeze; negative axes count from the input's end) or insert them (unsqueeze; axes index the
 * output, negative from its end).  Input 1 is the axes, an INT32 vector: a shape tensor
 * (network/shape_values.h) whose values, once known -- a constant's while the network is built, a
 * run-time value's when the shapes are resolved -- decide the output; the bindings also copy a
 * constant's values into the attribute `axes`, which stands in only where the values are not known.
 * Values unknown at network level give the output rank (the input's minus / plus the axes' count)
 * with unknown dims.  Run-time axes are trtlite's extension (TensorRT needs build-time constants).
 * Any dtype; the data is copied unchanged. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/axes_values.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_squeeze[] = {
    TRTL_A("axes", TRTL_ATTR_DIMS, squeeze.axes),
};
TRTL_NATTRS(squeeze);
const trtl_attr_desc trtl_attrs_unsqueeze[] = {
    TRTL_A("axes", TRTL_ATTR_DIMS, squeeze.axes),
};
TRTL_NATTRS(unsqueeze);

void trtl_init_squeeze(trtl_params *p) { p->squeeze.axes.nb_dims = 0; }
void trtl_init_unsqueeze(trtl_params *p) { p->squeeze.axes.nb_dims = 0; }

/* Axes wrapped into 0..rank-1, each once; rank: the input's (squeeze) or the output's (unsqueeze). */
static trtl_status norm_axes(trtl_params *p, const trtl_lower_ctx *c, int32_t rank)
{
    trtl_dims *ax = &p->squeeze.axes;
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': squeeze/unsqueeze layers need an explicit-batch network",
                          c->layer_name);
    uint32_t seen = 0;
    for (int32_t i = 0; i < ax->nb_dims; i++) {
        int64_t a = ax->d[i];
        if (a < -rank || a >= rank)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %lld is out of range for %d dims",
                              c->layer_name, (long long)a, (int)rank);
        if (a < 0)
            a += rank;
        if (seen & (1u << a))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %lld is given twice", c->layer_name,
                              (long long)ax->d[i]);
        seen |= 1u << a;
        ax->d[i] = a;
    }
    return TRTL_OK;
}

trtl_status trtl_lower_squeeze(trtl_params *p, const trtl_lower_ctx *c)
{
    return norm_axes(p, c, c->n_in > 0 && c->in ? c->in[0].nb_dims : TRTL_MAX_DIMS);
}

trtl_status trtl_lower_unsqueeze(trtl_params *p, const trtl_lower_ctx *c)
{
    int32_t r = (c->n_in > 0 && c->in ? c->in[0].nb_dims : 0) + p->squeeze.axes.nb_dims;
    if (r > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the output would have %d dims (max %d)", c->layer_name, (int)r,
                          TRTL_MAX_DIMS);
    return norm_axes(p, c, r);
}

static trtl_status check(const trtl_infer_ctx *c, int32_t rank, uint32_t *mask);

/* The axes' count: input 1's length (an INT32 vector of at most TRTL_MAX_DIMS values). */
static trtl_status axes_count(const trtl_infer_ctx *c, int32_t *k)
{
    char s[TRTL_DIMS_STR_MAX];
    if (c->in_type[1] != TRTL_INT32 || c->in[1].nb_dims != 1 || c->in[1].d[0] < 0 || c->in[1].d[0] > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axes (input 1) must be a 1-D INT32 tensor of at most %d values, "
                          "got %s %s", c->layer_name, TRTL_MAX_DIMS, trtl_dtype_name(c->in_type[1]),
                          trtl_dims_str(&c->in[1], s, sizeof s));
    *k = (int32_t)c->in[1].d[0];
    return TRTL_OK;
}

/* Input 1's values as a mask over `rank` dims when known (*known 1); else the attribute if it has the
 * input's count (*known 1), else *known 0 (an error where values are needed). */
static trtl_status value_axes(const trtl_infer_ctx *c, int32_t rank, uint32_t *mask, int *known)
{
    int32_t k;
    TRTL_TRY(axes_count(c, &k));
    const int64_t *v = c->in_values ? c->in_values[1] : NULL;
    for (int32_t i = 0; v && i < k; i++)
        if (v[i] == TRTL_SV_UNKNOWN)
            v = NULL;
    *known = 1;
    if (v) {
        if (rank > TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the output would have %d dims (max %d)", c->layer_name,
                              (int)rank, TRTL_MAX_DIMS);
        return trtl_axes_values_mask(c->layer_name, "axes (input 1)", v, k, rank, mask);
    }
    if (c->p->squeeze.axes.nb_dims == k && k > 0 && !c->need_values)
        return check(c, rank, mask);
    if (c->need_values)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axes (input 1) are not known before execution: a shape tensor "
                          "must be computed from input shapes (shape layers), constants and shape-tensor network "
                          "inputs only", c->layer_name);
    *known = 0;
    return TRTL_OK;
}

/* Output of `rank` unknown dims (axes not known yet). */
static trtl_status unknown_out(const trtl_infer_ctx *c, int32_t rank)
{
    if (rank < 0 || rank > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the output would have %d dims (0..%d)", c->layer_name,
                          (int)rank, TRTL_MAX_DIMS);
    trtl_dims o = {0};
    o.nb_dims = rank;
    for (int32_t i = 0; i < rank; i++)
        o.d[i] = -1;
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}

/* Checks the attribute axes (each in 0..rank-1, at most once); returns them as a bitmask. */
static trtl_status check(const trtl_infer_ctx *c, int32_t rank, uint32_t *mask)
{
    const trtl_dims *ax = &c->p->squeeze.axes;
    if (rank > TRTL_MAX_DIMS || ax->nb_dims < 0 || ax->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': too many dims", c->layer_name);
    *mask = 0;
    for (int32_t i = 0; i < ax->nb_dims; i++) {
        if (ax->d[i] < 0 || ax->d[i] >= rank || (*mask & (1u << ax->d[i])))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %lld is out of range for %d dims or repeated",
                              c->layer_name, (long long)ax->d[i], (int)rank);
        *mask |= 1u << ax->d[i];
    }
    return TRTL_OK;
}

trtl_status trtl_infer_squeeze(const trtl_infer_ctx *c)
{
    const trtl_dims *X = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    uint32_t m;
    int known;
    TRTL_TRY(value_axes(c, X->nb_dims, &m, &known));
    if (!known)
        return unknown_out(c, X->nb_dims - (int32_t)c->in[1].d[0]);
    trtl_dims o = {0};
    for (int32_t i = 0; i < X->nb_dims; i++) {
        if (!(m & (1u << i))) {
            o.d[o.nb_dims++] = X->d[i];
        } else if (X->d[i] != 1 && X->d[i] != -1) {
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': cannot squeeze dimension %d of input %s (size %lld, not 1)",
                              c->layer_name, (int)i, trtl_dims_str(X, s, sizeof s), (long long)X->d[i]);
        }
    }
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}

trtl_status trtl_infer_unsqueeze(const trtl_infer_ctx *c)
{
    const trtl_dims *X = &c->in[0];
    int32_t k;
    TRTL_TRY(axes_count(c, &k));
    int32_t r = X->nb_dims + k;
    uint32_t m;
    int known;
    TRTL_TRY(value_axes(c, r, &m, &known));
    if (!known)
        return unknown_out(c, r);
    trtl_dims o = {0};
    o.nb_dims = r;
    for (int32_t i = 0, j = 0; i < r; i++)
        o.d[i] = (m & (1u << i)) ? 1 : X->d[j++];
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
