/* Reference Quantize and the per-channel walk shared with Dequantize (qdq_math.h has the
 * arithmetic).  Scale (input 1) FLOAT with 1 or C values; zero point (input 2) of the output type. */
#include "kernels/ref/ref.h"
#include "kernels/ref/qdq_math.h"
#include "kernels/ref/qdq_walk.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_qdq_channels(const trtl_kernel_args *a, int64_t *n, int64_t *inner, int64_t *nch)
{
    const trtl_dims *x = &a->in[0].dims;
    int64_t ns = trtl_volume(&a->in[1].dims);
    *n = trtl_volume(x);
    *inner = 1;
    *nch = 1;
    if (ns > 1) {
        int32_t ax = a->node->p.quant.axis < 0 ? a->node->p.quant.axis + x->nb_dims : a->node->p.quant.axis;
        if (ax < 0 || ax >= x->nb_dims || x->d[ax] != ns)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld scales do not match axis %d of the input",
                              a->node->name, (long long)ns, (int)a->node->p.quant.axis);
        *inner = trtl_volume_range(x, ax + 1, x->nb_dims);
        *nch = ns;
    }
    return TRTL_OK;
}

int32_t trtl_qdq_zero_point(const trtl_kernel_args *a, int64_t ch)
{
    if (a->node->n_in < 3)
        return 0;
    return a->in[2].dtype == TRTL_UINT8 ? ((const uint8_t *)a->in[2].data)[ch] : ((const int8_t *)a->in[2].data)[ch];
}

trtl_status trtl_ref_quantize(const trtl_kernel_args *a)
{
    int64_t n, inner, nch;
    TRTL_TRY(trtl_qdq_channels(a, &n, &inner, &nch));
    const float *x = a->in[0].data, *s = a->in[1].data;
    int32_t type = a->out[0].dtype;
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = nch > 1 ? (i / inner) % nch : 0;
        int32_t q = trtl_q_value(x[i], s[ch], trtl_qdq_zero_point(a, ch), type);
        if (type == TRTL_UINT8)
            ((uint8_t *)a->out[0].data)[i] = (uint8_t)q;
        else
            ((int8_t *)a->out[0].data)[i] = (int8_t)q;
    }
    return TRTL_OK;
}
