/* qdq_walk.h -- the layout of a Quantize/Dequantize node's scale and zero point (kernels/ref/quantize.c). */
#ifndef TRTL_KERNELS_REF_QDQ_WALK_H
#define TRTL_KERNELS_REF_QDQ_WALK_H

#include "kernels/kernel.h"

/* Which scale each element uses: one for all (nblk == 1, !blocked), one per index along the axis
 * (per channel: the scale a vector of dim values), or one per block of dim / nblk indices along
 * the axis, the scale having the data's rank and dims elsewhere (blocked quantization). */
typedef struct trtl_qdq_walk {
    int64_t n, inner, dim, nblk;
    int blocked;
} trtl_qdq_walk;

/* Fails naming the node when the scale does not fit the data. */
trtl_status trtl_qdq_walk_init(const trtl_kernel_args *a, trtl_qdq_walk *w);

static inline int64_t trtl_qdq_index(const trtl_qdq_walk *w, int64_t i)
{
    if (w->nblk == 1 && !w->blocked)
        return 0;
    int64_t ax = (i / w->inner) % w->dim;
    if (!w->blocked)
        return ax;
    int64_t outer = i / (w->inner * w->dim);
    return (outer * w->nblk + ax / (w->dim / w->nblk)) * w->inner + i % w->inner;
}

/* Integer zero point k (0 without input 2 or for a float type). */
int32_t trtl_qdq_zero_point(const trtl_kernel_args *a, int64_t k);

#endif
