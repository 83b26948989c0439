/*
 * winograd_avx512.c -- AVX-512 GEMM microkernels of the Winograd convolution kernels
 * (convolution_winograd.c; interface in winograd.h).  Call only when
 * trtl_cpu_has(TRTL_CPU_AVX512F).
 *
 * The transform-domain GEMMs are most of a Winograd convolution's time.  Their AVX2 6 x 16 tile
 * issues 8-float FMAs, half of what an AVX-512 core's two FMA ports take per cycle; these tiles
 * hold 16 tiles in one zmm: 6 x 32 (two V panels side by side, 12 accumulators: enough
 * independent chains for the FMA latency on two ports) and 6 x 16 (the odd last panel).  The
 * layouts are the AVX2 kernels' (U [c][6], V panels [c][16]), so the transforms are shared.
 */
#include <immintrin.h>

#include "kernels/x86/winograd.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* m[r * ldm + t] = sum_c u[c * 6 + r] * v0[c * 16 + t] (t < 16), v1 likewise for t in [16, 32). */
AVX512 void trtl_wg_gemm_6x32_avx512(int64_t C, const float *u, const float *v0, const float *v1, float *m,
                                     int64_t ldm)
{
    __m512 acc[6][2];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int64_t c = 0; c < C; c++) {
        const __m512 b0 = _mm512_loadu_ps(v0 + 16 * c), b1 = _mm512_loadu_ps(v1 + 16 * c);
#pragma GCC unroll 6
        for (int r = 0; r < 6; r++) {
            const __m512 a = _mm512_set1_ps(u[6 * c + r]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        _mm512_storeu_ps(m + r * ldm, acc[r][0]);
        _mm512_storeu_ps(m + r * ldm + 16, acc[r][1]);
    }
}

/* One panel of 16 tiles: 6 accumulators, the channel loop split in two halves summed at the end
 * so that 12 FMA chains are in flight. */
AVX512 void trtl_wg_gemm_6x16_avx512(int64_t C, const float *u, const float *v, float *m, int64_t ldm)
{
    __m512 acc[2][6];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)
        acc[0][r] = acc[1][r] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 2 <= C; c += 2) {
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m512 b = _mm512_loadu_ps(v + 16 * (c + h));
#pragma GCC unroll 6
            for (int r = 0; r < 6; r++)
                acc[h][r] = _mm512_fmadd_ps(_mm512_set1_ps(u[6 * (c + h) + r]), b, acc[h][r]);
        }
    }
    if (c < C) {
        const __m512 b = _mm512_loadu_ps(v + 16 * c);
#pragma GCC unroll 6
        for (int r = 0; r < 6; r++)
            acc[0][r] = _mm512_fmadd_ps(_mm512_set1_ps(u[6 * c + r]), b, acc[0][r]);
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)
        _mm512_storeu_ps(m + r * ldm, _mm512_add_ps(acc[0][r], acc[1][r]));
}

/* A group's last panel of 8 tiles (tile counts 8 mod 16: 49 tiles of a 28x28 map are 56) run on
 * its own re-reads all of u for 8 lanes on 6 FMA chains; these two run it together with the
 * panels before it, so u is read once and the 8-wide part rides on the other chains:
 * 6x24 = one 16-tile panel v0 + the 8-tile panel v8, 6x40 = panels v0, v1 + v8. */
AVX512 void trtl_wg_gemm_6x24_avx512(int64_t C, const float *u, const float *v0, const float *v8, float *m,
                                     int64_t ldm)
{
    __m512 acc[6];
    __m256 acc8[6];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        acc[r] = _mm512_setzero_ps();
        acc8[r] = _mm256_setzero_ps();
    }
#pragma GCC unroll 2
    for (int64_t c = 0; c < C; c++) {
        const __m512 b0 = _mm512_loadu_ps(v0 + 16 * c);
        const __m256 b8 = _mm256_loadu_ps(v8 + 8 * c);
#pragma GCC unroll 6
        for (int r = 0; r < 6; r++) {
            const __m512 a = _mm512_set1_ps(u[6 * c + r]);
            acc[r] = _mm512_fmadd_ps(a, b0, acc[r]);
            acc8[r] = _mm256_fmadd_ps(_mm512_castps512_ps256(a), b8, acc8[r]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        _mm512_storeu_ps(m + r * ldm, acc[r]);
        _mm256_storeu_ps(m + r * ldm + 16, acc8[r]);
    }
}

AVX512 void trtl_wg_gemm_6x40_avx512(int64_t C, const float *u, const float *v0, const float *v1, const float *v8,
                                     float *m, int64_t ldm)
{
    __m512 acc[6][2];
    __m256 acc8[6];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
        acc8[r] = _mm256_setzero_ps();
    }
#pragma GCC unroll 2
    for (int64_t c = 0; c < C; c++) {
        const __m512 b0 = _mm512_loadu_ps(v0 + 16 * c), b1 = _mm512_loadu_ps(v1 + 16 * c);
        const __m256 b8 = _mm256_loadu_ps(v8 + 8 * c);
#pragma GCC unroll 6
        for (int r = 0; r < 6; r++) {
            const __m512 a = _mm512_set1_ps(u[6 * c + r]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
            acc8[r] = _mm256_fmadd_ps(_mm512_castps512_ps256(a), b8, acc8[r]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        _mm512_storeu_ps(m + r * ldm, acc[r][0]);
        _mm512_storeu_ps(m + r * ldm + 16, acc[r][1]);
        _mm256_storeu_ps(m + r * ldm + 32, acc8[r]);
    }
}
