/*
 * tap_tile.h -- the register-tile accumulation that the first-layer convolution (x86/convolution_stem.c) and the
 * grouped direct convolution (x86/convolution_grouped.c) share: a few output channels x V vectors of neighbouring
 * positions, started from the bias and summed over taps read at offsets off[t] from x, the weights of tap t at
 * w + t * ws (one per channel, broadcast).  Each kernel keeps its own stores and epilogue.
 */
#ifndef TRTL_KERNELS_X86_TAP_TILE_H
#define TRTL_KERNELS_X86_TAP_TILE_H

#include <immintrin.h>
#include <stdint.h>

/* AVX-512: 8 channels x V (1..3) vectors of 16 positions. */
__attribute__((target("avx512f"), always_inline)) static inline void
trtl_tap_tile16(const float *x, const int32_t *off, int64_t ntaps, const float *w, int64_t ws, const float *b8,
                const int V, __m512 acc[8][3])
{
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++)
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            acc[k][v] = _mm512_set1_ps(b8[k]);
    for (int64_t t = 0; t < ntaps; t++, w += ws) {
        const float *p = x + off[t];
        __m512 xv[3];
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            xv[v] = _mm512_loadu_ps(p + 16 * v);
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512 wk = _mm512_set1_ps(w[k]);
#pragma GCC unroll 3
            for (int v = 0; v < V; v++)
                acc[k][v] = _mm512_fmadd_ps(xv[v], wk, acc[k][v]);
        }
    }
}

/* AVX2: 4 channels x V (1..3) vectors of 8 positions (12 accumulators, 3 inputs and a weight: 16 registers). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
trtl_tap_tile8(const float *x, const int32_t *off, int64_t ntaps, const float *w, int64_t ws, const float *b4,
               const int V, __m256 acc[4][3])
{
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            acc[k][v] = _mm256_set1_ps(b4[k]);
    for (int64_t t = 0; t < ntaps; t++, w += ws) {
        const float *p = x + off[t];
        __m256 xv[3];
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            xv[v] = _mm256_loadu_ps(p + 8 * v);
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const __m256 wk = _mm256_broadcast_ss(w + k);
#pragma GCC unroll 3
            for (int v = 0; v < V; v++)
                acc[k][v] = _mm256_fmadd_ps(xv[v], wk, acc[k][v]);
        }
    }
}

#endif
