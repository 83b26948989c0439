/* Reference slice kernel: the resampling copy of strided.h with the layer's start/stride/mode. */
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "core/dims.h"
#include "kernels/ref/strided.h"

/* The FILL value as one element of type t in *buf.  Shape inference rejects a value an integer type cannot
 * hold exactly; the kernel checks again (a plan's parameters reach it too) instead of converting
 * out of range, which C leaves undefined. */
static trtl_status fill_elem(const char *node, float f, trtl_dtype t, void *buf)
{
    double d = (double)f, lo = 0.0, hi = 0.0;
    switch (t) {
    case TRTL_FLOAT: memcpy(buf, &f, sizeof f); return TRTL_OK;
    case TRTL_HALF: { uint16_t h = trtl_float_to_half(f); memcpy(buf, &h, sizeof h); return TRTL_OK; }
    case TRTL_BF16: { uint16_t h = trtl_float_to_bf16(f); memcpy(buf, &h, sizeof h); return TRTL_OK; }
    case TRTL_INT32: lo = -2147483648.0; hi = 2147483648.0; break;
    case TRTL_INT8: lo = -128.0; hi = 128.0; break;
    case TRTL_UINT8: lo = 0.0; hi = 256.0; break;
    case TRTL_BOOL: lo = 0.0; hi = 2.0; break;
    default: return trtl_error(TRTL_ERR_DTYPE, "layer '%s': no FILL value for type %d", node, (int)t);
    }
    if (!(d >= lo && d < hi) || d != (double)(int64_t)d)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': FILL value %g is not exactly representable in "
                          "type %s", node, d, trtl_dtype_name(t));
    int64_t v = (int64_t)d;
    if (t == TRTL_INT32) {
        int32_t i = (int32_t)v;
        memcpy(buf, &i, sizeof i);
    } else if (t == TRTL_INT8) {
        int8_t i = (int8_t)v;
        memcpy(buf, &i, sizeof i);
    } else {
        uint8_t u = (uint8_t)v;
        memcpy(buf, &u, sizeof u);
    }
    return TRTL_OK;
}

trtl_status trtl_ref_slice(const trtl_kernel_args *a)
{
    trtl_slice_params dp = a->node->p.slice; /* start / stride from shape-tensor inputs 1 / 3 when given */
    const trtl_slice_params *p = &dp;
    int32_t r = a->in[0].dims.nb_dims;
    for (int32_t j = 1; j < a->node->n_in && j < 4; j += 2) {
        trtl_dims *f = j == 1 ? &dp.start : &dp.stride;
        if (a->in[j].dtype != TRTL_INT32 || a->in[j].dims.nb_dims != 1 || a->in[j].dims.d[0] != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': slice input %d must be INT32 [%d]", a->node->name, (int)j,
                              (int)r);
        f->nb_dims = r;
        for (int32_t i = 0; i < r; i++)
            f->d[i] = ((const int32_t *)a->in[j].data)[i];
    }
    if (p->start.nb_dims != r || p->stride.nb_dims != r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': slice start/stride have %d/%d dims, the input has %d",
                          a->node->name, (int)p->start.nb_dims, (int)p->stride.nb_dims, (int)r);
    /* FILL value (TensorRT's optional input 4, captured as a constant when it was set). */
    uint8_t fill[8] = {0};
    if (p->mode == TRTL_SLICE_FILL && a->node->n_in > 4) { /* a run-time fill value: one element of the type */
        size_t es = trtl_dtype_size(a->out[0].dtype);
        if (a->in[4].dtype != a->out[0].dtype || es > sizeof fill || trtl_volume(&a->in[4].dims) != 1)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the fill value (input 4) must be one element of the "
                              "input's type", a->node->name);
        memcpy(fill, a->in[4].data, es);
    } else if (p->mode == TRTL_SLICE_FILL) {
        TRTL_TRY(fill_elem(a->node->name, p->fill_value, a->out[0].dtype, fill));
    }
    return trtl_ref_sample(a->node->name, &a->in[0], &a->out[0], p->start.d, p->stride.d, p->mode, fill);
}
