/*
 * strided.h -- index arithmetic shared by the reference data-movement kernels (shuffle, slice,
 * padding, gather).  Everything works on element sizes (trtl_dtype_size), never on values, so one
 * code path serves every dtype.  No allocation; no state.
 */
#ifndef TRTL_KERNELS_REF_STRIDED_H
#define TRTL_KERNELS_REF_STRIDED_H

#include <string.h>
#include "kernels/kernel.h"

/* Row-major element strides of d (s[nb-1] = 1). */
void trtl_ref_strides(const trtl_dims *d, int64_t *s);

/* Copies one element of `es` bytes (1, 2, 4 or anything else). */
static inline void trtl_ref_copy_elem(void *dst, const void *src, size_t es)
{
    switch (es) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, es); break;
    }
}

/* TRTL_ERR_DTYPE naming `node` unless the output type `got` is `want` (the type this op produces;
 * a per-layer output type override must have been turned into a conversion before this node). */
trtl_status trtl_ref_check_out_type(const char *node, trtl_dtype got, trtl_dtype want);

/* Writes prod(dims[0..rank)) elements densely (row-major over dims) into dst, reading element
 * src[base + sum_k i_k * strides[k]] for multi-index i.  rank 0 copies one element. */
void trtl_ref_gather_strided(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
                             const int64_t *strides, int64_t base);

/* Resampling copy used by slice and padding: for every output multi-index o,
 *   y[o] = x[map_k(start[k] + o_k * step[k])]  per dim k,
 * where map follows `mode` (trtl_slice_mode): DEFAULT requires every index in range (error naming
 * `node` otherwise), WRAP takes it modulo the dim, CLAMP clamps, REFLECT mirrors about the edge
 * elements (period 2*(n-1)), FILL writes `fill` (one element of y's type; NULL: zero bytes) for any
 * out-of-range index.  x and y have the same rank and type (TRTL_ERR_SHAPE / TRTL_ERR_DTYPE
 * otherwise). */
trtl_status trtl_ref_sample(const char *node, const trtl_tensor_view *x, trtl_tensor_view *y,
                            const int64_t *start, const int64_t *step, int32_t mode, const void *fill);

#endif
