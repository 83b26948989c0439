/* Reference Quantize and the scale walk shared with Dequantize (qdq_math.h has the arithmetic).
 * Scale (input 1) FLOAT: one value, one per channel of `axis`, or blocked (qdq_walk.h); zero point
 * (input 2) of the output type, the scale's shape.  Outputs INT8 / UINT8 and the storage types
 * (kernels/ref/lowbit.h): integer ones saturate to their range; float8 ones are x / scale rounded to
 * their grid, saturating (ONNX: their zero point must be 0 and is not added); FP4 adds its zero
 * point's value to x / scale (as onnx's reference) and saturates. */
#include "kernels/ref/ref.h"
#include "kernels/ref/lowbit.h"
#include "kernels/ref/qdq_math.h"
#include "kernels/ref/qdq_walk.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_qdq_walk_init(const trtl_kernel_args *a, trtl_qdq_walk *w)
{
    const trtl_dims *x = &a->in[0].dims, *s = &a->in[1].dims;
    int64_t ns = trtl_volume(s);
    w->n = trtl_volume(x);
    w->inner = 1;
    w->dim = 1;
    w->nblk = 1;
    w->blocked = 0;
    if (ns == 1)
        return TRTL_OK;
    int32_t ax = a->node->p.quant.axis < 0 ? a->node->p.quant.axis + x->nb_dims : a->node->p.quant.axis;
    if (ax < 0 || ax >= x->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis %d is out of range for the input", a->node->name,
                          (int)a->node->p.quant.axis);
    w->inner = trtl_volume_range(x, ax + 1, x->nb_dims);
    w->dim = x->d[ax];
    int vector = 1;
    for (int32_t i = 0; i + 1 < s->nb_dims; i++)
        vector &= s->d[i] == 1;
    if (vector && ns == x->d[ax]) {
        w->nblk = ns;
        return TRTL_OK;
    }
    int ok = s->nb_dims == x->nb_dims && s->d[ax] > 0 && x->d[ax] % s->d[ax] == 0;
    for (int32_t i = 0; ok && i < x->nb_dims; i++)
        ok = i == ax || s->d[i] == x->d[i];
    if (!ok)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld scales fit neither axis %d of the input nor blocks along it",
                          a->node->name, (long long)ns, (int)a->node->p.quant.axis);
    w->nblk = s->d[ax];
    w->blocked = 1;
    return TRTL_OK;
}

int32_t trtl_qdq_zero_point(const trtl_kernel_args *a, int64_t k)
{
    if (a->node->n_in < 3)
        return 0;
    trtl_dtype t = a->in[2].dtype;
    uint8_t c = ((const uint8_t *)a->in[2].data)[k];
    if (t == TRTL_UINT8)
        return c;
    if (t == TRTL_INT8)
        return (int8_t)c;
    return trtl_lowbit_is_float(t) ? 0 : (int32_t)trtl_lowbit_decode(t, c);
}

trtl_status trtl_ref_quantize(const trtl_kernel_args *a)
{
    trtl_qdq_walk w;
    TRTL_TRY(trtl_qdq_walk_init(a, &w));
    const float *x = a->in[0].data, *s = a->in[1].data;
    trtl_dtype type = a->out[0].dtype;
    uint8_t *y = a->out[0].data;
    if (trtl_lowbit_is_float(type)) {
        for (int64_t i = 0; i < w.n; i++) {
            int64_t k = trtl_qdq_index(&w, i);
            float r = x[i] / s[k];
            if (type == TRTL_FP4 && a->node->n_in == 3)
                r += (float)trtl_lowbit_decode(type, ((const uint8_t *)a->in[2].data)[k]);
            y[i] = trtl_lowbit_encode_float(type, r, 1);
        }
        return TRTL_OK;
    }
    int narrow = type != TRTL_INT8 && type != TRTL_UINT8;
    for (int64_t i = 0; i < w.n; i++) {
        int64_t k = trtl_qdq_index(&w, i);
        int32_t q = trtl_q_value(x[i], s[k], trtl_qdq_zero_point(a, k), type);
        y[i] = narrow ? trtl_lowbit_encode_int(type, q) : (uint8_t)q;
    }
    return TRTL_OK;
}
