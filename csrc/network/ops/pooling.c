/* pooling.c -- IPoolingLayer: MAX / AVERAGE / MAX_AVERAGE_BLEND over 1-3 spatial dims.
 * The last nsp (= window rank) dims are spatial; every leading dim indexes independent planes.
 * Output spatial size: trtl_spatial_out(..., is_pooling = 1).
 * MAX_AVERAGE_BLEND = (1 - blend_factor) * max + blend_factor * avg, as TensorRT's NvInfer.h defines it
 * (default blend_factor 0: plain max). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_pooling[] = {
    TRTL_A_ENUM("type", pool.type, "PoolingType", TRTL_POOL_COUNT),
    TRTL_A("window_size_nd", TRTL_ATTR_DIMS, pool.window_size),
    TRTL_A_FLAGS("window_size", TRTL_ATTR_DIMS, pool.window_size, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A("stride_nd", TRTL_ATTR_DIMS, pool.stride),
    TRTL_A_FLAGS("stride", TRTL_ATTR_DIMS, pool.stride, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A_SYM("padding_nd", pool.pre_padding, pool.post_padding, TRTL_ATTRF_ALIAS),
    TRTL_A_SYM("padding", pool.pre_padding, pool.post_padding, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A("pre_padding", TRTL_ATTR_DIMS, pool.pre_padding),
    TRTL_A("post_padding", TRTL_ATTR_DIMS, pool.post_padding),
    TRTL_A_ENUM("padding_mode", pool.padding_mode, "PaddingMode", TRTL_PADMODE_COUNT),
    TRTL_A("blend_factor", TRTL_ATTR_FLOAT, pool.blend_factor),
    TRTL_A("average_count_excludes_padding", TRTL_ATTR_BOOL, pool.average_count_excludes_padding),
};
TRTL_NATTRS(pooling);

static trtl_dims filled(int32_t nb, int64_t v)
{
    trtl_dims d = {0};
    d.nb_dims = nb;
    for (int32_t i = 0; i < nb; i++)
        d.d[i] = v;
    return d;
}

void trtl_init_pooling(trtl_params *p)
{
    trtl_pooling_params *q = &p->pool;
    q->type = TRTL_POOL_MAX;
    q->window_size = filled(2, 1);
    q->stride = filled(2, 1);
    q->pre_padding = filled(2, 0);
    q->post_padding = filled(2, 0);
    q->padding_mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
    q->blend_factor = 0.0f;
    q->average_count_excludes_padding = 1;
}

/* TensorRT's defaults ("stride (1, ..., 1)", "padding (0, ..., 0)") follow the window's rank.  A
 * field still holding a default of another rank (e.g. the 2-D default left in place when a 3-D
 * window is set) is resized to the window's rank; anything else must match exactly. */
static void fit_default(trtl_dims *d, int32_t nsp, int64_t v)
{
    if (d->nb_dims == nsp || d->nb_dims < 0 || d->nb_dims > TRTL_MAX_DIMS)
        return;
    for (int32_t i = 0; i < d->nb_dims; i++)
        if (d->d[i] != v)
            return;
    *d = filled(nsp, v);
}

static trtl_status check_pooling(const trtl_pooling_params *q, const char *layer)
{
    int32_t nsp = q->window_size.nb_dims;
    if (q->type < TRTL_POOL_MAX || q->type > TRTL_POOL_MAX_AVERAGE_BLEND)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown pooling type %d", layer, (int)q->type);
    if (nsp < 1 || nsp > 3)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': window_size must have 1 to 3 dims, has %d",
                          layer, (int)nsp);
    const struct { const char *name; const trtl_dims *d; int64_t min; } f[] = {
        {"window_size", &q->window_size, 1}, {"stride", &q->stride, 1},
        {"pre_padding", &q->pre_padding, 0}, {"post_padding", &q->post_padding, 0}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].d->nb_dims != nsp)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s has %d dims but the window has %d",
                              layer, f[i].name, (int)f[i].d->nb_dims, (int)nsp);
        for (int32_t k = 0; k < nsp; k++)
            if (f[i].d->d[k] < f[i].min)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s[%d] = %lld must be >= %lld", layer,
                                  f[i].name, (int)k, (long long)f[i].d->d[k], (long long)f[i].min);
    }
    if (q->padding_mode < TRTL_PADMODE_EXPLICIT_ROUND_DOWN || q->padding_mode > TRTL_PADMODE_CAFFE_ROUND_UP)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown padding_mode %d", layer,
                          (int)q->padding_mode);
    if (!(q->blend_factor >= 0.0f && q->blend_factor <= 1.0f))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': blend_factor %g must be in [0, 1]", layer,
                          (double)q->blend_factor);
    return TRTL_OK;
}

trtl_status trtl_lower_pooling(trtl_params *p, const trtl_lower_ctx *c)
{
    trtl_pooling_params *q = &p->pool;
    int32_t nsp = q->window_size.nb_dims;
    if (nsp >= 1 && nsp <= 3) {
        fit_default(&q->stride, nsp, 1);
        fit_default(&q->pre_padding, nsp, 0);
        fit_default(&q->post_padding, nsp, 0);
    }
    q->average_count_excludes_padding = q->average_count_excludes_padding ? 1 : 0;
    return check_pooling(q, c->layer_name);
}

trtl_status trtl_infer_pooling(const trtl_infer_ctx *c)
{
    const trtl_pooling_params *q = &c->p->pool;
    const trtl_dims *x = &c->in[0];
    int32_t nsp = q->window_size.nb_dims;
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_pooling(q, c->layer_name));
    /* INT8 / UINT8 codes: max pooling (the max of the codes; int8 tensors between int8 layers,
     * passes/qdq_int8_io.c), on the reference kernel */
    const int codes = c->in_type[0] == TRTL_INT8 || c->in_type[0] == TRTL_UINT8;
    if (c->in_type[0] != TRTL_FLOAT && !(codes && q->type == TRTL_POOL_MAX))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': pooling needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    if (x->nb_dims < nsp + 1)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': input %s has %d dims; a %dD pooling needs at least %d (planes, spatial)",
                          c->layer_name, trtl_dims_str(x, s, sizeof s), (int)x->nb_dims, (int)nsp, (int)nsp + 1);
    trtl_dims o = *x;
    int32_t first = x->nb_dims - nsp;
    for (int32_t i = 0; i < nsp; i++) {
        int64_t pre, post;
        trtl_status st = trtl_spatial_out(x->d[first + i], q->window_size.d[i], q->stride.d[i], q->pre_padding.d[i],
                                          q->post_padding.d[i], q->padding_mode, 1, &o.d[first + i], &pre, &post);
        if (st != TRTL_OK)
            return trtl_error_prefix("layer '%s': input %s, spatial dim %d", c->layer_name,
                                     trtl_dims_str(x, s, sizeof s), (int)i);
    }
    c->out[0] = o;
    c->out_type[0] = codes ? c->in_type[0] : TRTL_FLOAT;
    return TRTL_OK;
}
