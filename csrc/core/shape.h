/*
 * shape.h -- shape arithmetic shared by the network's shape inference and the kernels.
 *
 * Every size is computed with overflow checks (user values go up to 2^63-1); failures return a
 * status with the message set (trtl_error), which callers prefix with the layer's name.
 */
#ifndef TRTL_CORE_SHAPE_H
#define TRTL_CORE_SHAPE_H

#include <stdint.h>
#include "trtlite/ops.h"

/* k_eff = dilation*(k-1)+1, or an error if it overflows int64. */
trtl_status trtl_dilated_kernel(int64_t k, int64_t dilation, int64_t *k_eff);
/* Output size and effective paddings of one spatial dim of convolution/pooling (errors, never a
 * wrapped-around size, when the arithmetic overflows int64).
 * k_eff = dilation*(k-1)+1.  in may be -1 (then out = -1, pads from explicit values). */
trtl_status trtl_spatial_out(int64_t in, int64_t k_eff, int64_t stride, int64_t pre, int64_t post,
                             int32_t padding_mode, int is_pooling, int64_t *out, int64_t *pre_eff,
                             int64_t *post_eff);
/* Same for deconvolution (output larger than input). */
trtl_status trtl_deconv_out(int64_t in, int64_t k_eff, int64_t stride, int64_t pre, int64_t post,
                            int32_t padding_mode, int64_t *out, int64_t *pre_eff, int64_t *post_eff);

/* Broadcast two dims (same rank, each pair equal or one of them 1; -1 unknown); errors name `layer`. */
trtl_status trtl_broadcast_dims(const char *layer, const trtl_dims *a, const trtl_dims *b, trtl_dims *out);

/* Index of the single set bit of an axes mask (-1 if not exactly one). */
int trtl_single_axis(uint32_t axes);

#endif
