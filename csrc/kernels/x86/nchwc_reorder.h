/*
 * nchwc_reorder.h -- NCHW <-> blocked (B = 8) reorders of one channel block, AVX2 (x86/nchwc_reorder.c): the edge
 * work of the NCHWC_CONV kernels (x86/nchwc_conv.c) where a region of blocked convolutions meets plain tensors.
 */
#ifndef TRTL_KERNELS_X86_NCHWC_REORDER_H
#define TRTL_KERNELS_X86_NCHWC_REORDER_H

#include <stdint.h>

/* dst[p][l] = src[l * P + p] for the nc <= 8 planes of P pixels at src (lanes l >= nc get 0). */
void trtl_nchwc8_from_planes(const float *src, int64_t nc, int64_t P, float *dst);
/* dst[l * P + p] = src[p][l] (+ res[l * P + p] when res) for the nc <= 8 planes of P pixels at dst. */
void trtl_nchwc8_to_planes(const float *src, int64_t nc, int64_t P, const float *res, float *dst);

#endif
