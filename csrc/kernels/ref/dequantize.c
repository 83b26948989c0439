/* Reference Dequantize: y = (q - zero_point) * scale (qdq_math.h), per tensor or per channel. */
#include "kernels/ref/ref.h"
#include "kernels/ref/qdq_math.h"
#include "kernels/ref/qdq_walk.h"
#include "core/status.h"

trtl_status trtl_ref_dequantize(const trtl_kernel_args *a)
{
    int64_t n, inner, nch;
    TRTL_TRY(trtl_qdq_channels(a, &n, &inner, &nch));
    const float *s = a->in[1].data;
    float *y = a->out[0].data;
    int is_u8 = a->in[0].dtype == TRTL_UINT8;
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = nch > 1 ? (i / inner) % nch : 0;
        int32_t q = is_u8 ? ((const uint8_t *)a->in[0].data)[i] : ((const int8_t *)a->in[0].data)[i];
        y[i] = trtl_dq_value(q, trtl_qdq_zero_point(a, ch), s[ch]);
    }
    return TRTL_OK;
}
