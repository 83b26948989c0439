/*
 * ref_index.h -- index arithmetic shared by the reference kernels (private to kernels/ref).
 *
 * Reference kernels walk tensors through flat row-major indices; these helpers turn a flat index
 * over some dims into a buffer offset under arbitrary strides (0 for a broadcast dim).  They are
 * slow (one division per dim per element) and obviously correct, which is what a reference wants.
 */
#ifndef TRTL_KERNELS_REF_INDEX_H
#define TRTL_KERNELS_REF_INDEX_H

#include <stdint.h>
#include "trtlite/types.h"

/* Row-major strides of d[0..n) (element units). */
static inline void ref_strides(const int64_t *d, int n, int64_t *st)
{
    int64_t s = 1;
    for (int i = n - 1; i >= 0; i--) {
        st[i] = s;
        s *= d[i];
    }
}

/* Row-major strides of `src` (rank n) read as broadcast to a same-rank shape: a dim of size 1
 * gets stride 0. */
static inline void ref_bcast_strides(const trtl_dims *src, int64_t *st)
{
    ref_strides(src->d, src->nb_dims, st);
    for (int i = 0; i < src->nb_dims; i++)
        if (src->d[i] == 1)
            st[i] = 0;
}

/* Offset of the element with row-major flat index `flat` over dims d[0..n), under strides st. */
static inline int64_t ref_offset(int64_t flat, const int64_t *d, const int64_t *st, int n)
{
    int64_t off = 0;
    for (int i = n - 1; i >= 0; i--) {
        int64_t q = flat / d[i];
        off += (flat - q * d[i]) * st[i];
        flat = q;
    }
    return off;
}

/* Element i of an INT32 (is64 0) or INT64 (is64 1) buffer, as int64. */
static inline int64_t ref_int_at(const void *p, int is64, int64_t i)
{
    return is64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

#endif
