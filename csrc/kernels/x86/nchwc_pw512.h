/*
 * nchwc_pw512.h -- the AVX-512 register tiles of nchwc_conv's pointwise path ("nchwc_conv.avx512",
 * x86/nchwc_pw512.c): 16 output channels (two 8-channel blocks of the blocked layout) a vector.  Called from
 * x86/nchwc_conv.c, which owns the kernel, its items and its edges.
 */
#ifndef TRTL_KERNELS_X86_NCHWC_PW512_H
#define TRTL_KERNELS_X86_NCHWC_PW512_H

#include <stdint.h>

/* Output channels of one group of the wide packing: 4 blocks, two vectors. */
#define TRTL_NCHWC_PW512_GROUP 32

/* One span of pixels of one image and one group of up to 4 output blocks. */
typedef struct trtl_nchwc_pw512_span {
    const float *x;    /* the blocked input at the span's first pixel, channel block 0; block stride xs floats */
    int64_t xs, C;     /* xs = P * 8 */
    const float *w;    /* the group's packed weights [C][32] (zero past K) */
    const float *bias; /* the group's bias [32] (zero past K) */
    float *y;          /* the blocked output at the span's first pixel, the group's first block; block stride xs */
    const float *res;  /* the residual likewise, or NULL */
    int64_t np;        /* pixels */
    int nblk;          /* real blocks in the group, 1..4: the vectors and halves past them are not stored */
    int act;           /* a fast activation (trtl_act_is_fast) applied in registers, else TRTL_ACT_NONE */
    float alpha, beta;
    int prefetch;      /* prefetch the input 2 tiles ahead (the first pass over these pixels) */
    int64_t kc;        /* input channels a depth block (a multiple of 8), or 0 / >= C: all in one */
} trtl_nchwc_pw512_span;

/* y = act(bias + W x (+ res)) over the span: 6-pixel x 2-vector register tiles (12 zmm accumulators), in depth
 * blocks of kc input channels (partial sums through y). */
void trtl_nchwc_pw512_run_span(const trtl_nchwc_pw512_span *s);

#endif
