/* quantize.c -- IQuantizeLayer: y = saturate(round_half_even(x / scale) + zero_point), INT8 or
 * UINT8 (ONNX QuantizeLinear), or a storage type (INT4, FP8, FP4 and the extensions: rules in
 * kernels/ref/quantize.c).  The scale may also have the input's rank with the axis dim dividing the
 * input's: blocked quantization, blocks of input dim / scale dim along the axis (TensorRT 10).  Input 1 the scale (FLOAT: one value, or one per channel of
 * `axis`), input 2 the optional zero point (set_input(2, zp); the output type, scale's shape).
 * Also the inference shared with the Dequantize layer (trtl_qdq_infer, network/qdq.h). */
#include "network/qdq.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_quantize[] = {
    TRTL_A("axis", TRTL_ATTR_INT, quant.axis),
    TRTL_A("to_type", TRTL_ATTR_DTYPE, quant.to_type),
};
TRTL_NATTRS(quantize);

void trtl_init_quantize(trtl_params *p)
{
    p->quant.axis = -1;
    p->quant.to_type = TRTL_INT8;
}

/* Quantized types: INT8, UINT8 and the storage types but E8M0 (a scale type). */
static int is_int8ish(int32_t t)
{
    return t == TRTL_INT8 || t == TRTL_UINT8 || (trtl_dtype_is_storage(t) && t != TRTL_E8M0);
}

#define QTYPES "INT8 or UINT8 (or a storage type: INT4, FP8, FP4, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ, UINT4, INT2, UINT2)"

trtl_status trtl_lower_quantize(trtl_params *p, const trtl_lower_ctx *c)
{
    if (!is_int8ish(p->quant.to_type))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': to_type must be " QTYPES ", got %s", c->layer_name,
                          trtl_dtype_valid(p->quant.to_type) ? trtl_dtype_name((trtl_dtype)p->quant.to_type) : "?");
    if (c->implicit_batch && p->quant.axis >= 0)
        p->quant.axis += 1;
    return TRTL_OK;
}

trtl_status trtl_qdq_infer(const trtl_infer_ctx *c, int is_q)
{
    const char *ln = c->layer_name;
    const trtl_quantize_params *q = &c->p->quant;
    const trtl_dims *x = &c->in[0], *s = &c->in[1];
    char b1[TRTL_DIMS_STR_MAX], b2[TRTL_DIMS_STR_MAX];
    if (c->n_in < 2 || c->n_in > 3)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': takes 2 or 3 inputs (data, scale, zero point), got %d",
                          ln, (int)c->n_in);
    if (is_q ? c->in_type[0] != TRTL_FLOAT : !is_int8ish(c->in_type[0]))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input must be %s, got %s", ln, is_q ? "FLOAT" : QTYPES,
                          trtl_dtype_name(c->in_type[0]));
    if (is_q ? !is_int8ish(q->to_type) : q->to_type != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': to_type must be %s", ln, is_q ? QTYPES : "FLOAT");
    if (c->in_type[1] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': scale (input 1) must be FLOAT, got %s", ln,
                          trtl_dtype_name(c->in_type[1]));
    int32_t int_type = is_q ? q->to_type : (int32_t)c->in_type[0];
    if (c->n_in == 3 && (int32_t)c->in_type[2] != int_type)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': zero point (input 2) is %s but the %s is %s", ln,
                          trtl_dtype_name(c->in_type[2]), is_q ? "output type (to_type)" : "input",
                          trtl_dtype_name((trtl_dtype)int_type));
    int64_t ns = trtl_volume(s);
    int vector = 1;
    for (int32_t i = 0; i + 1 < s->nb_dims; i++)
        vector &= s->d[i] == 1;
    if (ns < 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scale %s must have a known, non-zero number of values", ln,
                          trtl_dims_str(s, b1, sizeof b1));
    if (c->n_in == 3 && trtl_volume(&c->in[2]) != ns)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': zero point %s must have the scale's %lld values", ln,
                          trtl_dims_str(&c->in[2], b1, sizeof b1), (long long)ns);
    int32_t ba = trtl_qdq_axis(q->axis, x->nb_dims);
    if (ns > 1 && s->nb_dims == x->nb_dims && ba >= 0 && ba < x->nb_dims && (!vector || s->d[ba] != x->d[ba])) {
        /* blocked: the data's dims but along the axis, whose dim the scale's divides (blocks of equal size) */
        int ok = s->d[ba] > 0 && x->d[ba] >= 0 && x->d[ba] % s->d[ba] == 0;
        for (int32_t i = 0; ok && i < x->nb_dims; i++)
            ok = i == ba || s->d[i] == x->d[i];
        if (!ok)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scale %s does not block input %s along axis %d (blocked "
                              "quantization: the input's dims but along the axis, whose dim the scale's must divide)",
                              ln, trtl_dims_str(s, b1, sizeof b1), trtl_dims_str(x, b2, sizeof b2), (int)q->axis);
        c->out[0] = *x;
        c->out_type[0] = (trtl_dtype)q->to_type;
        return TRTL_OK;
    }
    if (!vector)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scale %s must be a scalar, a 1-D vector or of the input's rank "
                          "(blocked)", ln, trtl_dims_str(s, b1, sizeof b1));
    if (ns > 1) { /* per channel */
        int32_t a = trtl_qdq_axis(q->axis, x->nb_dims);
        if (a < 0 || a >= x->nb_dims)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for an input of %d dims "
                              "(per-channel scale of %lld values)", ln, (int)q->axis, (int)x->nb_dims, (long long)ns);
        if (x->d[a] >= 0 && x->d[a] != ns)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scale has %lld values but axis %d of the input %s has %lld "
                              "channels", ln, (long long)ns, (int)q->axis, trtl_dims_str(x, b2, sizeof b2),
                              (long long)x->d[a]);
    }
    c->out[0] = *x;
    c->out_type[0] = (trtl_dtype)q->to_type;
    return TRTL_OK;
}

trtl_status trtl_infer_quantize(const trtl_infer_ctx *c) { return trtl_qdq_infer(c, 1); }
