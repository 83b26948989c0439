/* nchwc_dw512.c -- the AVX-512 interior rows of nchwc_conv's depthwise path ("nchwc_conv.avx512").
 *
 * The blocked layout keeps 8 channels a block, so a zmm vector holds two neighbouring pixels of one block.  Along a
 * row of stride 1, output pixels ow and ow + 1 read input columns ow + t - pl and ow + 1 + t - pl for tap t: 16
 * contiguous floats, one unaligned load; the tap's 8 weights are broadcast to both halves (vbroadcastf64x4 from
 * memory, no shuffle).  Register tile: up to 8 vectors (16 pixels), every tap one load and one FMA a vector, as the
 * AVX2 tile (8 pixels of 8 lanes) with twice the lanes.  Bias, residual and ReLU / clip / leaky in registers (other
 * activations: the caller, over the finished row).  A last odd pixel is half a vector (masked loads and store).
 * Stride 2 along the row would need two loads and a permute a vector: those rows stay on the AVX2 tiles. */
#include <immintrin.h>

#include "kernels/x86/nchwc_dw512.h"
#include "kernels/x86/fused_epilogue.h"

#define NB 8

/* The 8 floats at p in both halves. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 dup8(const float *p)
{
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(p))));
}

/* nv vectors (2 * nv pixels; half: one pixel in one half vector) from column ow; S constant. */
__attribute__((target("avx512f"), always_inline)) static inline void tile(const trtl_nchwc_dw512_row *a, int64_t ow,
                                                                          const int nv, const int half, const int S)
{
    const __mmask16 m = half ? (__mmask16)0x00FF : (__mmask16)0xFFFF;
    const __m512 bias = dup8(a->bias);
    __m512 acc[8];
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++)
        acc[j] = bias;
    for (int64_t r = a->r0; r < a->r1; r++) {
        const float *xr = a->x + ((a->ih0 + r) * a->W + ow - a->pl) * NB;
        const float *wr = a->w + r * S * NB;
#pragma GCC unroll 7
        for (int t = 0; t < S; t++) {
            const __m512 wv = dup8(wr + t * NB);
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++) {
                const float *p = xr + (2 * j + t) * NB;
                acc[j] = _mm512_fmadd_ps(half ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p), wv, acc[j]);
            }
        }
    }
    const __m512 va = _mm512_set1_ps(a->alpha), vb = _mm512_set1_ps(a->beta);
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) {
        __m512 v = acc[j];
        const int64_t o = (ow + 2 * j) * NB;
        if (a->res)
            v = _mm512_add_ps(v, half ? _mm512_maskz_loadu_ps(m, a->res + o) : _mm512_loadu_ps(a->res + o));
        v = trtl_act16(v, a->act, va, vb);
        if (half)
            _mm512_mask_storeu_ps(a->y + o, m, v);
        else
            _mm512_storeu_ps(a->y + o, v);
    }
}

#define ROW_FN(S)                                                                                                     \
    __attribute__((target("avx512f"), noinline)) static void row_##S(const trtl_nchwc_dw512_row *a)                 \
    {                                                                                                                 \
        int64_t ow = a->lo;                                                                                           \
        for (; ow + 16 <= a->hi; ow += 16) {                                                                          \
            const uintptr_t off = (uintptr_t)((ow - a->pl) * NB) * sizeof(float);                                    \
            for (uintptr_t q = 0; q < 16 * NB * sizeof(float); q += 64) {                                             \
                if (a->pf0)                                                                                           \
                    _mm_prefetch((const char *)(a->pf0 + off + q), _MM_HINT_T0);                                      \
                if (a->pf1)                                                                                           \
                    _mm_prefetch((const char *)(a->pf1 + off + q), _MM_HINT_T0);                                      \
            }                                                                                                         \
            tile(a, ow, 8, 0, S);                                                                                     \
        }                                                                                                             \
        if (ow + 8 <= a->hi) {                                                                                        \
            tile(a, ow, 4, 0, S);                                                                                     \
            ow += 8;                                                                                                  \
        }                                                                                                             \
        if (ow + 4 <= a->hi) {                                                                                        \
            tile(a, ow, 2, 0, S);                                                                                     \
            ow += 4;                                                                                                  \
        }                                                                                                             \
        if (ow + 2 <= a->hi) {                                                                                        \
            tile(a, ow, 1, 0, S);                                                                                     \
            ow += 2;                                                                                                  \
        }                                                                                                             \
        if (ow < a->hi)                                                                                               \
            tile(a, ow, 1, 1, S);                                                                                     \
    }
ROW_FN(1)
ROW_FN(3)
ROW_FN(5)
ROW_FN(7)

void trtl_nchwc_dw512_row_run(const trtl_nchwc_dw512_row *a)
{
    switch (a->S) {
    case 1: row_1(a); break;
    case 3: row_3(a); break;
    case 5: row_5(a); break;
    case 7: row_7(a); break;
    default: break; /* the caller sends only these (nc_applies_wide) */
    }
}
