/*
 * nchwc.h -- the blocked channel layout of the NCHWC_CONV op (core/params.h: trtl_nchwc_conv_params) as the
 * kernels and the builder pass (passes/nchwc.c) see it.
 *
 * A blocked tensor of C channels with block B is [N, ceil(C/B), H, W, B]: channel c of pixel (h, w) of image n at
 * [n, c/B, h, w, c%B].  Lanes c >= C are finite (the kernels write bias 0 times zero weights there, then the
 * epilogue): readers never mix them into real channels.
 */
#ifndef TRTL_KERNELS_NCHWC_H
#define TRTL_KERNELS_NCHWC_H

#include <stdint.h>
#include "kernels/kernel.h"

static inline int64_t trtl_nchwc_blocks(int64_t C, int64_t B)
{
    return (C + B - 1) / B;
}

/* Offset of element (n, c, h, w) of a tensor of C channels and H x W pixels, plain (B == 0) or blocked. */
static inline int64_t trtl_nchwc_at(int64_t B, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t h,
                                    int64_t w)
{
    if (!B)
        return ((n * C + c) * H + h) * W + w;
    return (((n * trtl_nchwc_blocks(C, B) + c / B) * H + h) * W + w) * B + c % B;
}

/* Squeeze-and-excitation in the blocked layout (passes/nchwc.c): an NCHWC_CONV node with a second input (before
 * the residual) multiplies input channel c of image n by scale[n, c] ([N, C, 1, 1], plain) before the convolution
 * (pointwise only); one with a second output writes there the mean over the pixels of each finished output channel
 * (after the epilogue), [N, K, 1, 1] plain (depthwise only): the global average pool that reads the block. */
static inline int trtl_nchwc_in_scaled(const trtl_node *nd)
{
    return nd->n_in - (nd->epi.has_residual ? 1 : 0) == 2;
}

static inline int trtl_nchwc_out_pooled(const trtl_node *nd)
{
    return nd->n_out == 2;
}

/* Plain NCHW dims of a node's input (blocked or not): the channels from the weights. */
trtl_dims trtl_nchwc_plain_in(const trtl_node *nd, const trtl_dims *xd);
/* Plain NCHW dims of its output. */
trtl_dims trtl_nchwc_plain_out(const trtl_node *nd, const trtl_dims *yd);

/* The convolutions the AVX2 blocked kernels run (x86/nchwc_conv.c), for kernel applies() and the pass:
 * pointwise (1x1, stride 1, no padding, groups 1) or depthwise (groups == C == K, kernel up to 7x7, strides 1/2,
 * dilation 1 or 2, any padding), any layouts, grouped (trtl_nchwc_conv_grouped) likewise, or dense
 * (trtl_nchwc_conv_dense) from a plain input to a blocked output
 * only, 2-D, FLOAT weights.  `nd` is an NCHWC_CONV node or a CONVOLUTION node to be made one (its p.conv is read),
 * xd its plain input dims. */
int trtl_nchwc_conv_supported(const trtl_node *nd, const trtl_dims *xd);
/* Whether an NCHWC_CONV node has a mid activation (before its residual: an int8 layer's mid quantization) and it is
 * one the blocked kernels run: TRTL_ACT_QGRID with a residual on the pointwise path into a blocked output, without
 * squeeze-and-excitation.  1: none (nothing to check); 0: a mid activation they do not run (the reference does). */
int trtl_nchwc_mid_ok(const trtl_node *nd);
/* Whether the convolution takes the blocked kernels' pointwise path (1x1, stride 1, no padding, groups 1), else
 * their depthwise one. */
int trtl_nchwc_conv_pointwise(const trtl_conv_params *p);
/* Whether the convolution of C input channels takes their dense path (x86/nchwc_dense.c: groups 1, C 1..16,
 * kernel up to 7x7, strides 1..4, dilation 1, any padding, not pointwise nor depthwise, not C and K both multiples of
 * 8: those take the grouped path with one group): the stem of MobileNet-style nets.  It reads a plain input only
 * (the pass never blocks its input) and writes a blocked output only. */
int trtl_nchwc_conv_dense(const trtl_conv_params *p, int64_t C);
/* Whether the convolution of C input channels takes their grouped path (x86/nchwc_grouped.c: groups of Cg input
 * and Kg output channels, both multiples of 8, kernel up to 7x7, strides 1..4, any dilation and padding, not
 * pointwise): RegNetY's 3x3 layers, and with one group (session 20) dense layers such as the YOLO-style detector's
 * 3x3 downsamples.  Any layouts; the output channels' means, not the input scale. */
int trtl_nchwc_conv_grouped(const trtl_conv_params *p, int64_t C);

#endif
