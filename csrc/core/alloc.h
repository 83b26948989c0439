/*
 * alloc.h -- 64-byte aligned allocation for weights, constants, arenas and scratch.
 *
 * Every buffer that a kernel reads as weights or activations comes from here, so SIMD loads may
 * assume cache-line alignment of a buffer's start.  Thread-safe (plain posix_memalign/free).
 */
#ifndef TRTL_CORE_ALLOC_H
#define TRTL_CORE_ALLOC_H

#include <stddef.h>

/* At least `bytes` (rounded up to a multiple of 64; 0 gives 64) aligned to 64 bytes, or NULL when
 * out of memory or when the rounding would overflow size_t.  Free with trtl_aligned_free. */
void *trtl_aligned_alloc(size_t bytes);
/* NULL is allowed. */
void trtl_aligned_free(void *p);

#endif
