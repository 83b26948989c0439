/*
 * lowbit.h -- codes of the low-bit storage types (types.h: FP8, INT4, FP4, E8M0 and trtlite's
 * extensions FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ, UINT4, INT2, UINT2) to and from numbers, the one
 * definition that the cast, identity, constant, quantize and dequantize reference kernels use.
 *
 * Storage: one element a byte.  Floats keep their bit pattern (FP4: sign bit 3, in the low nibble);
 * INT4 / UINT4 / INT2 / UINT2 keep their two's-complement code in the low 4 / 2 bits, the upper bits
 * zero -- the bytes of onnx.numpy_helper's ml_dtypes arrays (`arr.view(np.uint8)`).  Decoding reads
 * only the low bits, so sign-extended bytes (an int8 view of INT4 values) decode the same.
 *
 * Encoding a number x (ONNX Cast / QuantizeLinear semantics):
 *   - float formats round to nearest, ties to even, on the target's grid (subnormals included);
 *     a result above the largest finite value, +-Inf included, is +-max with `saturate`, else
 *     Inf where the format has one (FP8E5M2) and NaN otherwise.  NaN stays NaN (its sign kept where
 *     the format has a negative NaN).  FNUZ formats have no -0: -0 and values rounding to -0 give +0.
 *   - FP4 (e2m1) has no Inf or NaN: it always saturates, and NaN gives code 0x8 (-0), as onnx's
 *     reference (ml_dtypes) gives.
 *   - E8M0 (2^(c-127), unsigned, no zero): the exponent of x as a float32, rounded up when x is not
 *     a power of two (ONNX's default round_mode "up"); with `saturate` the rounding stops at 2^127
 *     (code 254); NaN, +-Inf and values above 2^127 give NaN (255); 0 and float32 subnormals that
 *     do not round up give code 0 (2^-127).  The sign is ignored (ONNX leaves negatives undefined).
 *   - integer formats take an integer value (callers truncate floats first) and keep its low bits.
 */
#ifndef TRTL_KERNELS_REF_LOWBIT_H
#define TRTL_KERNELS_REF_LOWBIT_H

#include <stdint.h>
#include "trtlite/types.h"

/* 1 for the four float8 formats, FP4 and E8M0; 0 for the integer storage types and the others. */
int trtl_lowbit_is_float(trtl_dtype t);

/* The value of `code` (exact in a double; NaN / +-Inf where the code is one). */
double trtl_lowbit_decode(trtl_dtype t, uint8_t code);

/* The code of float format `t` nearest to x (rules above). */
uint8_t trtl_lowbit_encode_float(trtl_dtype t, double x, int saturate);

/* The code of integer format `t` holding the low bits of v. */
uint8_t trtl_lowbit_encode_int(trtl_dtype t, int64_t v);

/* Range of the integer storage types and of INT8 / UINT8 (quantization's saturation bounds). */
int32_t trtl_lowbit_int_min(trtl_dtype t);
int32_t trtl_lowbit_int_max(trtl_dtype t);

#endif
