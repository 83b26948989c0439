/*
 * qpool.h -- the arithmetic of average pooling on int8 / uint8 codes (the internal QLINEAR op in
 * mode TRTL_QL_POOL, core/params.h), shared by the reference kernel (ref/qlinear.c) and the int8
 * kernel (x86/qpool_int8.c) so that both give the same bits:
 *
 *   y = (float)((double)sum * in_scale / count)     sum = sum over the window of (q - in_zero), exact
 *
 * the one rounding of the average of the dequantized values (DQ -> AveragePool -> Q computes the
 * same real number, rounded at each float32 step).  Padding taps are the value 0.0 (q = in_zero):
 * they add nothing, and count them or not as the pooling says.
 */
#ifndef TRTL_KERNELS_QPOOL_H
#define TRTL_KERNELS_QPOOL_H

#include <stdint.h>

static inline float trtl_qpool_value(int64_t sum, int64_t count, float in_scale)
{
    return count > 0 ? (float)((double)sum * (double)in_scale / (double)count) : 0.0f;
}

#endif
