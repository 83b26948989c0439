/*
 * qdq_math.h -- the quantization arithmetic of ONNX QuantizeLinear / DequantizeLinear, shared by
 * the reference kernels of QUANTIZE, DEQUANTIZE and QLINEAR (and the builder's tests of them).
 *
 *   quantize:   q = saturate(round_half_even(x / scale) + zero_point)
 *               x / scale is the float32 quotient (correctly rounded, as onnxruntime and the int8
 *               library kernels/qconv.h compute it); NaN gives the lowest code, +-Inf saturate.
 *   dequantize: y = (float)((q - zero_point) * scale)   (one rounding, as float32 arithmetic)
 * The integer ranges are INT8 / UINT8's and, for the storage types, INT4 / UINT4 / INT2 / UINT2's;
 * the float storage types (FP8 and the other float8 formats, FP4) round x / scale to their grid
 * instead (kernels/ref/quantize.c).
 */
#ifndef TRTL_KERNELS_REF_QDQ_MATH_H
#define TRTL_KERNELS_REF_QDQ_MATH_H

#include <math.h>
#include <stdint.h>
#include "trtlite/types.h"

static inline int32_t trtl_q_min(int32_t type)
{
    switch (type) {
    case TRTL_UINT8:
    case TRTL_UINT4:
    case TRTL_UINT2: return 0;
    case TRTL_INT4: return -8;
    case TRTL_INT2: return -2;
    default: return -128;
    }
}
static inline int32_t trtl_q_max(int32_t type)
{
    switch (type) {
    case TRTL_UINT8: return 255;
    case TRTL_UINT4: return 15;
    case TRTL_UINT2: return 3;
    case TRTL_INT4: return 7;
    case TRTL_INT2: return 1;
    default: return 127;
    }
}

/* Needs the default rounding mode (round to nearest even), which trtlite never changes. */
static inline int32_t trtl_q_value(float x, float scale, int32_t zp, int32_t type)
{
    float r = x / scale;
    if (r != r)
        return trtl_q_min(type);
    double v = (double)nearbyintf(r) + zp;
    if (v < trtl_q_min(type))
        return trtl_q_min(type);
    if (v > trtl_q_max(type))
        return trtl_q_max(type);
    return (int32_t)v;
}

static inline float trtl_dq_value(int32_t q, int32_t zp, float scale)
{
    return (float)((double)(q - zp) * (double)scale);
}

/* x -> DQ(Q(x)) (fake quantization). */
static inline float trtl_fake_quant(float x, float scale, int32_t zp, int32_t type)
{
    return trtl_dq_value(trtl_q_value(x, scale, zp, type), zp, scale);
}

#endif
