/*
 * convert.h -- element type conversion shared by the identity and cast reference kernels.
 *
 * Semantics (defined for every input value, no UB):
 *   - to FLOAT/HALF: nearest representable value (round half to even; HALF overflows to +-inf);
 *   - FLOAT/HALF to INT32/INT8/UINT8: truncate toward zero, then saturate to the target's range;
 *     NaN gives 0 (+inf gives the maximum, -inf the minimum), as TensorRT's cast does;
 *   - integer to a narrower integer: keep the low bits (two's complement wrap, as numpy's astype);
 *   - anything to BOOL: x != 0 (NaN is true); BOOL (any nonzero byte is true) to a number: 0 or 1.
 *   - INT64 as the other integers (floats saturate to its range; narrowing keeps the low bits);
 *   - the storage types (FP8, FP4, E8M0, INT4 and the extensions) by kernels/ref/lowbit.h: to a
 *     float format round to nearest even, overflow saturating or not (`saturate`); to INT4 / UINT4 /
 *     INT2 / UINT2 floats truncate toward zero (NaN 0) and then, as integers do, keep the low bits;
 *     from them, their exact values under the rules above.
 */
#ifndef TRTL_KERNELS_REF_CONVERT_H
#define TRTL_KERNELS_REF_CONVERT_H

#include "trtlite/types.h"

/* Converts n elements of type st at src into type dt at dst (dense; buffers must not overlap
 * unless st == dt and dst == src).  TRTL_ERR_DTYPE for an unknown type. */
trtl_status trtl_ref_convert(void *dst, trtl_dtype dt, const void *src, trtl_dtype st, int64_t n);

/* The same with ONNX Cast's `saturate` for float8 / E8M0 targets (trtl_ref_convert saturates). */
trtl_status trtl_ref_convert_sat(void *dst, trtl_dtype dt, const void *src, trtl_dtype st, int64_t n, int saturate);

#endif
