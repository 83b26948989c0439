/*
 * nchwc_dw512.h -- the AVX-512 interior rows of nchwc_conv's depthwise path ("nchwc_conv.avx512",
 * x86/nchwc_dw512.c): stride 1 along the row, two neighbouring pixels of one 8-channel block a vector.  Called from
 * x86/nchwc_conv.c, which owns the kernel, its items, the row edges and the rows in padding.
 */
#ifndef TRTL_KERNELS_X86_NCHWC_DW512_H
#define TRTL_KERNELS_X86_NCHWC_DW512_H

#include <stdint.h>

/* The interior columns of one output row of one channel block. */
typedef struct trtl_nchwc_dw512_row {
    const float *x;      /* the input channel block [H][W][8] */
    const float *w;      /* its packed weights [R][S][8] */
    const float *bias;   /* its bias [8] */
    int64_t W, S, pl;    /* input width, taps a row (1, 3, 5 or 7), left padding */
    int64_t ih0, r0, r1; /* the input row of tap row 0 (may be < 0); tap rows [r0, r1) lie inside the input */
    int64_t lo, hi;      /* output columns [lo, hi): every tap of each inside the input row */
    float *y;            /* the output row [OW][8] */
    const float *res;    /* the residual row likewise, or NULL */
    int act;             /* a fast activation (trtl_act_is_fast) applied in registers, else TRTL_ACT_NONE */
    float alpha, beta;
    uintptr_t pf0, pf1;  /* input rows the next output row adds (0: none), prefetched tile by tile */
} trtl_nchwc_dw512_row;

/* y[lo, hi) = act(bias + sum of taps (+ res)): tiles of 16, 8, 4, 2 pixels and a last single pixel (half a vector). */
void trtl_nchwc_dw512_row_run(const trtl_nchwc_dw512_row *a);

#endif
