/*
 * convolution_unpacked.h -- the reference fallback of the convolution kernels that hold their
 * weights only packed (kernel->unpack; engine/weights.c frees the plain copy after prepare()).
 *
 * convolution.pixel_gemm, .tapwise and .grouped_direct compute the reference where the input
 * shape at run time does not fit their packed path (dynamic shapes).  The reference reads plain
 * weights, which the engine may have freed: they are then rebuilt from the packed state into the
 * scratch buffer (no allocation in run()), so such a kernel's scratch() reserves
 * trtl_conv_unpacked_bytes() for the shapes it does not take.
 */
#ifndef TRTL_KERNELS_X86_CONVOLUTION_UNPACKED_H
#define TRTL_KERNELS_X86_CONVOLUTION_UNPACKED_H

#include <stddef.h>

#include "kernels/kernel.h"

/* Scratch bytes the fallback needs to rebuild node nd's plain weights (64-byte alignment included). */
size_t trtl_conv_unpacked_bytes(const trtl_node *nd);

/* The reference convolution of a->node (rebuilding its plain weights into a->scratch with the
 * calling kernel's `unpack` from a->state when the engine dropped them), then the node's epilogue
 * over the output (res: the residual or NULL).  An error naming the layer when the scratch is too
 * small. */
trtl_status trtl_conv_reference_fallback(const trtl_kernel_args *a, const float *res,
                                         void (*unpack)(const trtl_node *n, const void *state, void *dst));

#endif
