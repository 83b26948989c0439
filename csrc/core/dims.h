/* dims.h -- small helpers on trtl_dims and element types. */
#ifndef TRTL_CORE_DIMS_H
#define TRTL_CORE_DIMS_H

#include <stddef.h>
#include "trtlite/types.h"

static inline trtl_dims trtl_dims_make(int32_t nb, const int64_t *d)
{
    trtl_dims r = {0};
    r.nb_dims = nb;
    for (int32_t i = 0; i < nb && i < TRTL_MAX_DIMS; i++)
        r.d[i] = d[i];
    return r;
}
/* Product of dims; -1 if any dim is negative (unknown) or the product overflows int64. */
int64_t trtl_volume(const trtl_dims *d);
/* Largest element count of one tensor (2^40: 4 TiB of float32), enforced by the network, the
 * builder and the plan reader alike. */
#define TRTL_MAX_ELEMENTS ((int64_t)1 << 40)
/* Does the known part of d hold more than TRTL_MAX_ELEMENTS elements (or overflow)? */
int trtl_volume_too_large(const trtl_dims *d);
/* Product of d[from..to) (no unknown dims expected). */
int64_t trtl_volume_range(const trtl_dims *d, int from, int to);
int trtl_dims_equal(const trtl_dims *a, const trtl_dims *b);
/* Any dim < 0? */
int trtl_dims_dynamic(const trtl_dims *d);
/* "(1, 3, 224, 224)" into buf; returns buf. */
const char *trtl_dims_str(const trtl_dims *d, char *buf, size_t n);
#define TRTL_DIMS_STR_MAX 160
/* Prepend (to make the full shape of an implicit-batch tensor) / drop the leading dim. */
trtl_dims trtl_dims_prepend(const trtl_dims *d, int64_t v);
trtl_dims trtl_dims_drop_front(const trtl_dims *d);

size_t trtl_dtype_size(trtl_dtype t);
const char *trtl_dtype_name(trtl_dtype t);
int trtl_dtype_valid(int t);
/* 1 for the low-bit storage types (FP8, INT4, FP4, E8M0 and trtlite's extensions): moved and
 * converted, never computed on. */
int trtl_dtype_is_storage(int t);

/* IEEE half <-> float (software; used off the hot path and as the reference). */
float trtl_half_to_float(uint16_t h);
uint16_t trtl_float_to_half(float f);
/* bfloat16 <-> float: widening is exact; narrowing rounds to nearest even, NaN stays a (quiet) NaN. */
float trtl_bf16_to_float(uint16_t h);
uint16_t trtl_float_to_bf16(float f);

#endif
