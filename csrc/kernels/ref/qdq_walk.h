/* qdq_walk.h -- the channel layout of a Quantize/Dequantize node's scale (kernels/ref/quantize.c). */
#ifndef TRTL_KERNELS_REF_QDQ_WALK_H
#define TRTL_KERNELS_REF_QDQ_WALK_H

#include "kernels/kernel.h"

/* n elements; element i uses scale (i / inner) % nch.  Fails naming the node on a mismatch. */
trtl_status trtl_qdq_channels(const trtl_kernel_args *a, int64_t *n, int64_t *inner, int64_t *nch);
/* Zero point of channel ch (0 without input 2). */
int32_t trtl_qdq_zero_point(const trtl_kernel_args *a, int64_t ch);

#endif
