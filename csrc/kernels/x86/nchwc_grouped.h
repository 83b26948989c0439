/*
 * nchwc_grouped.h -- the grouped path of "nchwc_conv.avx2" (x86/nchwc_grouped.c): a grouped convolution whose
 * groups have a multiple of 8 input and output channels (RegNetY's 3x3 layers: 8 channels a group), blocked
 * (B = 8) input and output, so each output block reads only its group's input blocks.  Called from
 * x86/nchwc_conv.c, which owns the kernel, the edges' reorders and the weights' state.
 */
#ifndef TRTL_KERNELS_X86_NCHWC_GROUPED_H
#define TRTL_KERNELS_X86_NCHWC_GROUPED_H

#include <stdint.h>
#include "kernels/kernel.h"
#include "core/threadpool.h"

/* One pass over N images: input blocked [N, C/8, H, W, 8], output (and residual) blocked [N, K/8, OH, OW, 8]. */
typedef struct trtl_nchwc_grouped {
    int64_t N, C, K, G, H, W, OH, OW, R, S, sh, sw, dh, dw, pt, pl;
    const float *w, *b; /* weights packed by trtl_nchwc_grouped_pack, bias [K] */
    const float *x, *res;
    float *y;
    const trtl_epilogue *e; /* NULL: bias only (a plain output gets its epilogue after the reorder) */
    float *mean;            /* the output channels' means [N, K] after the epilogue, or NULL */
    int finite;             /* every weight finite (trtl_nchwc_grouped_finite): padded copies allowed */
} trtl_nchwc_grouped;

/* dst (K * Cg * R * S floats) = src [K][Cg][R][S] (G groups) as the register tiles read them;
 * trtl_nchwc_grouped_unpack gives src back exactly. */
void trtl_nchwc_grouped_pack(const float *src, int64_t K, int64_t G, int64_t Cg, int64_t RS, float *dst);
void trtl_nchwc_grouped_unpack(const float *packed, int64_t K, int64_t G, int64_t Cg, int64_t RS, float *dst);
/* Whether the n weights are all finite: a padded copy's zero times a NaN / infinite weight would be NaN where the
 * reference skips the tap, so such layers read their input in place. */
int trtl_nchwc_grouped_finite(const float *w, int64_t n);
void trtl_nchwc_grouped_run(const trtl_nchwc_grouped *d, trtl_threadpool *pool);

#endif
