/* nchwc_pw512.c -- the AVX-512 register tiles of nchwc_conv's pointwise path ("nchwc_conv.avx512").
 *
 * The blocked layout keeps 8 channels a block; a zmm vector holds two neighbouring blocks of one pixel (16 output
 * channels), so the weights are packed per group of 4 blocks as [C][32] (nchwc_conv.c's prepare) and one
 * broadcast input value feeds 16 lanes instead of 8.  Register tile: 6 pixels x 2 vectors (12 accumulators; per
 * input channel 6 broadcasts, 2 weight loads, 12 FMAs), as the AVX2 tile's 6 x 2 blocks with twice the lanes.  The
 * halves are stored to their blocks at the end (two 256-bit stores a vector); halves past the group's real blocks
 * are computed on zero weights and not stored.  Bias, residual and ReLU / clip / leaky in registers; other
 * activations are the caller's (over the finished chunk).  Past the caller's depth-block threshold the input
 * channels go in depth blocks of span.kc over the whole span (as the AVX2 tiles: the block's weights, kc x 32
 * floats, stay in L1 for every tile), the partial sums through the output. */
#include <immintrin.h>

#include "kernels/x86/nchwc_pw512.h"
#include "kernels/x86/fused_epilogue.h"

#define NB 8
#define PF_TILES 2 /* the input is prefetched this many 6-pixel tiles ahead */

__attribute__((target("avx512f"), always_inline)) static inline __m512 load_pair(const float *lo, const float *hi,
                                                                                 int has_hi)
{
    const __m512d v = _mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(lo)));
    const __m256d h = has_hi ? _mm256_castps_pd(_mm256_loadu_ps(hi)) : _mm256_setzero_pd();
    return _mm512_castpd_ps(_mm512_insertf64x4(v, h, 1));
}

__attribute__((target("avx512f"), always_inline)) static inline void store_pair(float *lo, float *hi, int has_hi,
                                                                                __m512 v)
{
    _mm256_storeu_ps(lo, _mm512_castps512_ps256(v));
    if (has_hi)
        _mm256_storeu_ps(hi, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* np pixels x nv vectors over input channels [c0, c0 + cn) (a depth block); x / y / res at the tile's first pixel.
 * first: the sums start from the bias, else from the partial sums the depth block before stored in y; last: the
 * epilogue, else the partial sums are stored (halves past the group's real blocks are not: their weights and bias
 * are zero, so they start from zero again). */
__attribute__((target("avx512f"), always_inline)) static inline void tile(const trtl_nchwc_pw512_span *s,
                                                                          const float *x, float *y, const float *res,
                                                                          int64_t c0, int64_t cn, int first, int last,
                                                                          const int pf, const int np, const int nv)
{
    const int64_t xs = s->xs;
    const float *w = s->w + c0 * TRTL_NCHWC_PW512_GROUP;
    __m512 acc[2][6];
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
        const int hi = 2 * v + 1 < s->nblk;
        const float *y0 = y + 2 * v * xs;
#pragma GCC unroll 8
        for (int j = 0; j < np; j++)
            acc[v][j] = first ? _mm512_loadu_ps(s->bias + v * 16) : load_pair(y0 + j * NB, y0 + xs + j * NB, hi);
    }
    x += (c0 / NB) * xs;
    for (int64_t cb = 0; cb < cn; cb += NB) {
        const float *xc = x + (cb / NB) * xs;
        const int64_t nl = cn - cb < NB ? cn - cb : NB;
        if (pf)
            for (int q = 0; q < 3; q++)
                _mm_prefetch((const char *)(xc + PF_TILES * 6 * NB + q * 16), _MM_HINT_T0);
        for (int64_t l = 0; l < nl; l++) {
            const float *wc = w + (cb + l) * TRTL_NCHWC_PW512_GROUP;
            const __m512 w0 = _mm512_loadu_ps(wc);
            __m512 w1 = w0;
            if (nv > 1)
                w1 = _mm512_loadu_ps(wc + 16);
#pragma GCC unroll 8
            for (int j = 0; j < np; j++) {
                const __m512 xv = _mm512_set1_ps(xc[j * NB + l]);
                acc[0][j] = _mm512_fmadd_ps(xv, w0, acc[0][j]);
                if (nv > 1)
                    acc[1][j] = _mm512_fmadd_ps(xv, w1, acc[1][j]);
            }
        }
    }
    const __m512 va = _mm512_set1_ps(s->alpha), vb = _mm512_set1_ps(s->beta);
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
        const int hi = 2 * v + 1 < s->nblk;
        float *y0 = y + 2 * v * xs, *y1 = y0 + xs;
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) {
            __m512 a = acc[v][j];
            if (last && res)
                a = _mm512_add_ps(a, load_pair(res + 2 * v * xs + j * NB, res + (2 * v + 1) * xs + j * NB, hi));
            store_pair(y0 + j * NB, y1 + j * NB, hi, last ? trtl_act16(a, s->act, va, vb) : a);
        }
    }
}

#define TILE_FN(NP, NV)                                                                                               \
    __attribute__((target("avx512f"), noinline)) static void tile_##NP##_##NV(                                       \
        const trtl_nchwc_pw512_span *s, const float *x, float *y, const float *res, int64_t c0, int64_t cn,          \
        int first, int last, int pf)                                                                                  \
    {                                                                                                                 \
        if (pf)                                                                                                       \
            tile(s, x, y, res, c0, cn, first, last, 1, NP, NV);                                                       \
        else                                                                                                          \
            tile(s, x, y, res, c0, cn, first, last, 0, NP, NV);                                                       \
    }
#define TILES(X) X(6, 2) X(5, 2) X(4, 2) X(3, 2) X(2, 2) X(1, 2) X(6, 1) X(5, 1) X(4, 1) X(3, 1) X(2, 1) X(1, 1)
TILES(TILE_FN)

typedef void (*tile_fn)(const trtl_nchwc_pw512_span *, const float *, float *, const float *, int64_t, int64_t, int,
                        int, int);
#define ENTRY(NP, NV) [NV - 1][NP - 1] = tile_##NP##_##NV,
static const tile_fn tiles[2][6] = {TILES(ENTRY)};

void trtl_nchwc_pw512_run_span(const trtl_nchwc_pw512_span *s)
{
    const int nv = s->nblk > 2 ? 2 : 1;
    const int64_t kc = s->kc > 0 && s->kc < s->C ? s->kc : s->C;
    for (int64_t c0 = 0; c0 < s->C; c0 += kc) { /* depth blocks over the whole span: their weights stay in L1 */
        const int64_t cn = s->C - c0 < kc ? s->C - c0 : kc;
        for (int64_t p = 0; p < s->np; p += 6) {
            const int np = s->np - p < 6 ? (int)(s->np - p) : 6;
            tiles[nv - 1][np - 1](s, s->x + p * NB, s->y + p * NB, s->res ? s->res + p * NB : NULL, c0, cn, c0 == 0,
                                  c0 + cn == s->C, s->prefetch);
        }
    }
}
