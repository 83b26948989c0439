/* squeeze.c -- ISqueezeLayer and IUnsqueezeLayer: reshapes that remove size-1 dims at `axes`
 * (squeeze; negative axes count from the input's end) or insert them (unsqueeze; axes index the
 * output, negative from its end).  Input 1 is the axes, an INT32 vector that must be a build-time
 * constant: its values are the attribute `axes` (the bindings read them from the constant).
 * Any dtype; the data is copied unchanged. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

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

/* Checks input 1 and the axes (each in 0..rank-1, at most once); returns the axes as a bitmask. */
static trtl_status check(const trtl_infer_ctx *c, int32_t rank, uint32_t *mask)
{
    const trtl_dims *ax = &c->p->squeeze.axes;
    char s[TRTL_DIMS_STR_MAX];
    if (c->in_type[1] != TRTL_INT32 || c->in[1].nb_dims != 1 || c->in[1].d[0] != ax->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axes must be an INT32 vector of the %d axes (the attribute axes), "
                          "got %s %s", c->layer_name, (int)ax->nb_dims, trtl_dtype_name(c->in_type[1]),
                          trtl_dims_str(&c->in[1], s, sizeof s));
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
    TRTL_TRY(check(c, X->nb_dims, &m));
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
    int32_t r = X->nb_dims + c->p->squeeze.axes.nb_dims;
    uint32_t m;
    TRTL_TRY(check(c, r, &m));
    trtl_dims o = {0};
    o.nb_dims = r;
    for (int32_t i = 0, j = 0; i < r; i++)
        o.d[i] = (m & (1u << i)) ? 1 : X->d[j++];
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
