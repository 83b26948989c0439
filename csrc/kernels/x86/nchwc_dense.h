/*
 * nchwc_dense.h -- the dense path of "nchwc_conv.avx2" (x86/nchwc_dense.c): a convolution of few input channels
 * (the stem of MobileNet-style nets) reading its plain NCHW input and writing the blocked (B = 8) output, so the
 * first depthwise of a blocked region reads blocks.  Called from x86/nchwc_conv.c, which owns the kernel.
 */
#ifndef TRTL_KERNELS_X86_NCHWC_DENSE_H
#define TRTL_KERNELS_X86_NCHWC_DENSE_H

#include <stdint.h>
#include "kernels/kernel.h"
#include "core/threadpool.h"

/* One pass over N images: input plain [N, C, H, W], output (and residual) blocked [N, ceil(K/8), OH, OW, 8]. */
typedef struct trtl_nchwc_dense {
    int64_t N, C, K, H, W, OH, OW, R, S, sh, sw, pt, pl;
    const float *w, *b; /* weights packed by trtl_nchwc_dense_pack, bias [ceil(K/8) * 8] (zero past K) */
    const float *x, *res;
    float *y;
    const trtl_epilogue *e;
} trtl_nchwc_dense;

/* dst (ceil(K/8) * 8 * T floats, zeroed by the caller) = src [K][T] (T = C * R * S taps) as the register tiles
 * read them; trtl_nchwc_dense_unpack gives src back exactly. */
void trtl_nchwc_dense_pack(const float *src, int64_t K, int64_t T, float *dst);
void trtl_nchwc_dense_unpack(const float *packed, int64_t K, int64_t T, float *dst);
void trtl_nchwc_dense_run(const trtl_nchwc_dense *d, trtl_threadpool *pool);

/* The output columns [*lo, *hi) of a row whose every column tap lies inside the W input columns (kernel width S,
 * stride sw, left padding pl, OW output columns): the register tiles' part of the row, the rest per pixel. */
static inline void trtl_nchwc_interior(int64_t W, int64_t S, int64_t sw, int64_t pl, int64_t OW, int64_t *lo,
                                       int64_t *hi)
{
    int64_t l = (pl + sw - 1) / sw, h = W - S + pl >= 0 ? (W - S + pl) / sw + 1 : 0;
    h = h > OW ? OW : h;
    *lo = l > h ? h : l;
    *hi = h;
}

/* Runs to cut `items` equal items into for `threads` threads (x86/nchwc_conv.c); returns the largest run's ratio
 * to the mean x 1000. */
int64_t trtl_nchwc_even_runs(int64_t items, int64_t threads, int64_t *runs);

#endif
