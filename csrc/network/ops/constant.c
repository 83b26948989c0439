/* constant.c -- IConstantLayer: no inputs; the output holds `weights` with dims `shape`.
 * Output type from the weights: FLOAT for FLOAT or HALF weights (the builder converts HALF to
 * FLOAT), INT32, BOOL, INT8, UINT8 (quantized weights, zero points); other weight types are rejected.  count must equal volume(shape).
 * Lowered form (implicit batch): shape gets a leading 1 (constants broadcast over the batch). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_constant[] = {
    TRTL_A("shape", TRTL_ATTR_DIMS, constant.shape),
    TRTL_A("weights", TRTL_ATTR_WEIGHTS, constant.weights),
};
TRTL_NATTRS(constant);

void trtl_init_constant(trtl_params *p)
{
    p->constant.shape.nb_dims = 0;
    p->constant.weights.type = TRTL_FLOAT;
    p->constant.weights.values = NULL;
    p->constant.weights.count = 0;
}

static trtl_status check_shape(const char *layer, const trtl_dims *s)
{
    char b[TRTL_DIMS_STR_MAX];
    if (s->nb_dims < 0 || s->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape has %d dims", layer, (int)s->nb_dims);
    for (int32_t i = 0; i < s->nb_dims; i++)
        if (s->d[i] < 0)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape %s has a negative dimension", layer,
                              trtl_dims_str(s, b, sizeof b));
    /* Before the weight count is compared with the volume: an overflowing volume reads as -1. */
    if (trtl_volume(s) < 0)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the volume of shape %s overflows 64 bits", layer,
                          trtl_dims_str(s, b, sizeof b));
    if (trtl_volume_too_large(s))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': shape %s has more than 2^40 elements", layer,
                          trtl_dims_str(s, b, sizeof b));
    return TRTL_OK;
}

trtl_status trtl_lower_constant(trtl_params *p, const trtl_lower_ctx *c)
{
    TRTL_TRY(check_shape(c->layer_name, &p->constant.shape));
    if (c->implicit_batch) {
        if (p->constant.shape.nb_dims >= TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape has %d dims; with the implicit batch at most %d",
                              c->layer_name, (int)p->constant.shape.nb_dims, TRTL_MAX_DIMS - 1);
        p->constant.shape = trtl_dims_prepend(&p->constant.shape, 1);
    }
    return TRTL_OK;
}

trtl_status trtl_infer_constant(const trtl_infer_ctx *c)
{
    const trtl_constant_params *p = &c->p->constant;
    char b[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_shape(c->layer_name, &p->shape));
    trtl_dtype t;
    switch (p->weights.type) {
    case TRTL_FLOAT:
    case TRTL_HALF:
    case TRTL_BF16: t = TRTL_FLOAT; break;
    case TRTL_INT32: t = TRTL_INT32; break;
    case TRTL_BOOL: t = TRTL_BOOL; break;
    case TRTL_INT8: t = TRTL_INT8; break;   /* quantized weights and zero points (Dequantize inputs) */
    case TRTL_UINT8: t = TRTL_UINT8; break;
    case TRTL_INT64: t = TRTL_INT64; break;
    default:
        if (trtl_dtype_is_storage(p->weights.type)) { /* codes: zero points, storage-type data */
            t = p->weights.type;
            break;
        }
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': weights of type %s are not supported (FLOAT, HALF, BF16, INT32, BOOL, "
                          "INT8 or UINT8)",
                          c->layer_name, trtl_dtype_name(p->weights.type));
    }
    int64_t vol = trtl_volume(&p->shape);
    if (p->weights.count != vol)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': weights have %lld values but shape %s has volume %lld",
                          c->layer_name, (long long)p->weights.count, trtl_dims_str(&p->shape, b, sizeof b),
                          (long long)vol);
    if (vol > 0 && !p->weights.values)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': weights have no values", c->layer_name);
    c->out[0] = p->shape;
    c->out_type[0] = t;
    return TRTL_OK;
}
