/* Reference Dequantize: y = (q - zero_point) * scale (qdq_math.h), per tensor, per channel or
 * blocked (qdq_walk.h).  The float storage types (float8 formats, FP4) give value(q) * scale: ONNX
 * gives them no zero point (onnx's reference ignores FP4's). */
#include "kernels/ref/ref.h"
#include "kernels/ref/lowbit.h"
#include "kernels/ref/qdq_math.h"
#include "kernels/ref/qdq_walk.h"
#include "core/status.h"

trtl_status trtl_ref_dequantize(const trtl_kernel_args *a)
{
    trtl_qdq_walk w;
    TRTL_TRY(trtl_qdq_walk_init(a, &w));
    const float *s = a->in[1].data;
    const uint8_t *q = a->in[0].data;
    float *y = a->out[0].data;
    trtl_dtype t = a->in[0].dtype;
    if (trtl_lowbit_is_float(t)) {
        for (int64_t i = 0; i < w.n; i++)
            y[i] = (float)(trtl_lowbit_decode(t, q[i]) * (double)s[trtl_qdq_index(&w, i)]);
        return TRTL_OK;
    }
    for (int64_t i = 0; i < w.n; i++) {
        int64_t k = trtl_qdq_index(&w, i);
        int32_t v = t == TRTL_UINT8 ? q[i] : t == TRTL_INT8 ? (int8_t)q[i] : (int32_t)trtl_lowbit_decode(t, q[i]);
        y[i] = trtl_dq_value(v, trtl_qdq_zero_point(a, k), s[k]);
    }
    return TRTL_OK;
}
