/*
 * pw_tile.h -- the register tiles of the pointwise (1x1) convolution kernels that read NCHW activation rows as the
 * vector operand and broadcast packed weights: convolution.1x1_direct (convolution_1x1.c, rows read in place) and
 * convolution.1x1_block (convolution_1x1_block.c, rows of a cache block, gathered for strides).  See
 * convolution_1x1.c for the tile shapes.  The weights are packed once into panels of PW_MR output channels
 * ([ceil(K/8)][C][8], zero-padded; trtl_pw_prepare).  A tile reads its input rows xs floats apart and writes (and
 * reads the residual) ys floats apart.
 */
#ifndef TRTL_KERNELS_X86_PW_TILE_H
#define TRTL_KERNELS_X86_PW_TILE_H

#include <stdint.h>
#include <immintrin.h>

#include "kernels/kernel.h"
#include "kernels/x86/fused_epilogue.h"

#define PW_MR 8      /* output channels per packed panel */
#define PW_MAX_NV 3  /* pixel vectors per tile */
#define PW_MAX_EXTRA 4

typedef struct pw_state {
    int64_t K, C;
    float *wp;           /* [ceil(K/8)][C][8] */
    size_t packed_bytes; /* of wp (trtl_kernel.state_bytes) */
} pw_state;

/* The packed weights of a 1x1, one-group FLOAT convolution (convolution_1x1.c); the state is a pw_state. */
trtl_status trtl_pw_prepare(const trtl_node *nd, void **state);
void trtl_pw_release(void *state);
/* The plain weights [K][C] back from the panels (trtl_kernel.unpack: the engine keeps only the packed copy). */
void trtl_pw_unpack(const trtl_node *nd, const void *state, void *dst);
/* The state's bytes, packed weights included (trtl_kernel.state_bytes: the engine's packed_weight_bytes). */
size_t trtl_pw_state_bytes(const void *state);

/* ---- AVX-512 tiles ------------------------------------------------------------------------- */

#define PW_T512 __attribute__((target("avx512f,avx512vl,fma,avx2")))

/* One tile: rows k0 .. k0+kr-1 (kr <= 8) of the output, pixels p0 + [0, nv*16 - masked lanes) as vectors
 * and ne <= 4 extra pixels after them.  wp: the panel [C][8]; x, y, res already at (row 0 / k0, p0). */
PW_T512 static inline __attribute__((always_inline)) void pw_tile512(const float *wp, const float *x, int64_t xs,
                                                                     int64_t ys, int64_t C, const int nv,
                                                                     __mmask16 mlast, const int ne, const float *bias,
                                                                     const float *res, float *y, int kr,
                                                                     const trtl_epilogue *e)
{
    __m512 acc[PW_MR][PW_MAX_NV];
    __m256 ex[PW_MAX_EXTRA];
    _Pragma("GCC unroll 8")
    for (int i = 0; i < PW_MR; i++)
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm512_setzero_ps();
    _Pragma("GCC unroll 8")
    for (int j = 0; j < ne; j++)
        ex[j] = _mm256_setzero_ps();
    const float *xr = x;
    for (int64_t c = 0; c < C; c++, xr += xs, wp += PW_MR) {
        __m512 xv[PW_MAX_NV];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            xv[v] = v == nv - 1 ? _mm512_maskz_loadu_ps(mlast, xr + 16 * v) : _mm512_loadu_ps(xr + 16 * v);
        _Pragma("GCC unroll 8")
        for (int i = 0; i < PW_MR; i++) {
            __m512 w = _mm512_set1_ps(wp[i]);
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm512_fmadd_ps(w, xv[v], acc[i][v]);
        }
        if (ne) {
            __m256 wv = _mm256_loadu_ps(wp);
            _Pragma("GCC unroll 8")
            for (int j = 0; j < ne; j++)
                ex[j] = _mm256_fmadd_ps(wv, _mm256_set1_ps(xr[16 * nv + j]), ex[j]);
        }
    }
    const int fast = trtl_act_is_fast(e->act);
    const __m512 alpha = _mm512_set1_ps(e->alpha), beta = _mm512_set1_ps(e->beta);
    _Pragma("GCC unroll 8")
    for (int i = 0; i < kr; i++) {
        __m512 b = _mm512_set1_ps(bias ? bias[i] : 0.0f);
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            __mmask16 m = v == nv - 1 ? mlast : (__mmask16)0xFFFF;
            __m512 t = _mm512_add_ps(acc[i][v], b);
            if (res)
                t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, res + i * ys + 16 * v));
            if (fast)
                t = trtl_act16(t, e->act, alpha, beta);
            _mm512_mask_storeu_ps(y + i * ys + 16 * v, m, t);
        }
    }
    if (ne) {
        /* extra pixel j of the 8 channels: lanes i*ys apart in the output (7 * ys fits an int: see pw_chunk_at) */
        const int64_t off = 16 * (nv - 1) + __builtin_popcount(mlast);
        const __mmask8 km = (__mmask8)((1u << kr) - 1u);
        const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)ys));
        const __m256 bv = bias ? _mm256_maskz_loadu_ps(km, bias) : _mm256_setzero_ps();
        const __m256 a8 = _mm256_set1_ps(e->alpha), b8 = _mm256_set1_ps(e->beta);
        _Pragma("GCC unroll 4")
        for (int j = 0; j < ne; j++) {
            __m256 t = _mm256_add_ps(ex[j], bv);
            if (res)
                t = _mm256_add_ps(t, _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), km, idx, res + off + j, 4));
            if (fast)
                t = trtl_act8(t, e->act, a8, b8);
            _mm256_mask_i32scatter_ps(y + off + j, km, idx, t, 4);
        }
    }
}

/* The chunk's vector count and extra pixels are run-time values; each combination is its own
 * specialization of pw_tile512 so that the accumulators stay in registers. */
PW_T512 static inline void pw_tile512_any(const float *wp, const float *x, int64_t xs, int64_t ys, int64_t C, int nv,
                                          __mmask16 mlast, int ne, const float *bias, const float *res, float *y,
                                          int kr, const trtl_epilogue *e)
{
#define PW_CASE(NV, NE)                                                                                        \
    case (NV) * 8 + (NE): pw_tile512(wp, x, xs, ys, C, NV, mlast, NE, bias, res, y, kr, e); break;
    switch (nv * 8 + ne) {
        PW_CASE(1, 0) PW_CASE(1, 1) PW_CASE(1, 2) PW_CASE(1, 3) PW_CASE(1, 4)
        PW_CASE(2, 0) PW_CASE(2, 1) PW_CASE(2, 2) PW_CASE(2, 3) PW_CASE(2, 4)
        PW_CASE(3, 0) PW_CASE(3, 1) PW_CASE(3, 2) PW_CASE(3, 3) PW_CASE(3, 4)
    default: break;
    }
#undef PW_CASE
}

/* ---- AVX2 tiles ---------------------------------------------------------------------------- */

#define PW_T256 __attribute__((target("avx2,fma")))

static const int32_t pw_lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* Rows k0 .. k0+kr-1 (kr <= 4, the panel half at wp), nv ymm pixel vectors, the last one of nlast lanes (a masked
 * load / store only where `part`: vmaskmovps is several micro-ops a load on AMD Zen, in the loop over C). */
PW_T256 static inline __attribute__((always_inline)) void pw_tile256(const float *wp, const float *x, int64_t xs,
                                                                     int64_t ys, int64_t C, const int nv,
                                                                     const int part, int nlast, const float *bias,
                                                                     const float *res, float *y, int kr,
                                                                     const trtl_epilogue *e)
{
    __m256 acc[4][PW_MAX_NV];
    const __m256i ml = _mm256_loadu_si256((const __m256i *)(pw_lane_mask + 8 - nlast));
    _Pragma("GCC unroll 8")
    for (int i = 0; i < 4; i++)
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm256_setzero_ps();
    const float *xr = x;
    for (int64_t c = 0; c < C; c++, xr += xs, wp += PW_MR) {
        __m256 xv[PW_MAX_NV];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            xv[v] = part && v == nv - 1 ? _mm256_maskload_ps(xr + 8 * v, ml) : _mm256_loadu_ps(xr + 8 * v);
        _Pragma("GCC unroll 8")
        for (int i = 0; i < 4; i++) {
            __m256 w = _mm256_broadcast_ss(wp + i);
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm256_fmadd_ps(w, xv[v], acc[i][v]);
        }
    }
    const int fast = trtl_act_is_fast(e->act);
    const __m256 alpha = _mm256_set1_ps(e->alpha), beta = _mm256_set1_ps(e->beta);
    _Pragma("GCC unroll 8")
    for (int i = 0; i < kr; i++) {
        __m256 b = _mm256_set1_ps(bias ? bias[i] : 0.0f);
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            __m256 t = _mm256_add_ps(acc[i][v], b);
            if (part && v == nv - 1) {
                if (res)
                    t = _mm256_add_ps(t, _mm256_maskload_ps(res + i * ys + 8 * v, ml));
                if (fast)
                    t = trtl_act8(t, e->act, alpha, beta);
                _mm256_maskstore_ps(y + i * ys + 8 * v, ml, t);
            } else {
                if (res)
                    t = _mm256_add_ps(t, _mm256_loadu_ps(res + i * ys + 8 * v));
                if (fast)
                    t = trtl_act8(t, e->act, alpha, beta);
                _mm256_storeu_ps(y + i * ys + 8 * v, t);
            }
        }
    }
}

PW_T256 static inline void pw_tile256_any(const float *wp, const float *x, int64_t xs, int64_t ys, int64_t C, int nv,
                                          int nlast, const float *bias, const float *res, float *y, int kr,
                                          const trtl_epilogue *e)
{
    switch (nv * 2 + (nlast < 8)) {
    case 2: pw_tile256(wp, x, xs, ys, C, 1, 0, nlast, bias, res, y, kr, e); break;
    case 3: pw_tile256(wp, x, xs, ys, C, 1, 1, nlast, bias, res, y, kr, e); break;
    case 4: pw_tile256(wp, x, xs, ys, C, 2, 0, nlast, bias, res, y, kr, e); break;
    case 5: pw_tile256(wp, x, xs, ys, C, 2, 1, nlast, bias, res, y, kr, e); break;
    case 6: pw_tile256(wp, x, xs, ys, C, 3, 0, nlast, bias, res, y, kr, e); break;
    case 7: pw_tile256(wp, x, xs, ys, C, 3, 1, nlast, bias, res, y, kr, e); break;
    default: break;
    }
}

/* ---- chunks -------------------------------------------------------------------------------- */

/* Pixel chunk q of a row of P pixels, vectors of vl lanes, at most 3 vectors a chunk; with AVX-512
 * (extra allowed) a remainder of <= 4 pixels past whole vectors rides on the last chunk as extras
 * (ys: the output row stride, which the extras' scatter indexes as an int). */
typedef struct pw_chunk {
    int64_t p0, npx;
    int nv, nlast, ne;
} pw_chunk;

static inline int pw_use_extra(int64_t P, int vl, int extra, int64_t ys)
{
    int64_t whole = P / vl, r = P % vl;
    return extra && r && r <= PW_MAX_EXTRA && whole > 0 && ys <= INT32_MAX / PW_MR;
}

static inline int64_t pw_nchunks(int64_t P, int vl, int extra, int64_t ys)
{
    int64_t nvec = P / vl + (P % vl && !pw_use_extra(P, vl, extra, ys));
    return (nvec + PW_MAX_NV - 1) / PW_MAX_NV;
}

static inline pw_chunk pw_chunk_at(int64_t P, int vl, int extra, int64_t ys, int64_t q)
{
    int64_t whole = P / vl, r = P % vl;
    int use_extra = pw_use_extra(P, vl, extra, ys);
    int64_t nvec = whole + (r && !use_extra), nch = (nvec + PW_MAX_NV - 1) / PW_MAX_NV;
    pw_chunk c;
    c.p0 = q * PW_MAX_NV * vl;
    c.nv = (int)(q == nch - 1 ? nvec - q * PW_MAX_NV : PW_MAX_NV);
    c.nlast = vl;
    c.ne = 0;
    if (q == nch - 1) {
        if (use_extra)
            c.ne = (int)r;
        else if (r)
            c.nlast = (int)r;
    }
    c.npx = (int64_t)(c.nv - 1) * vl + c.nlast + c.ne;
    return c;
}

/* Output channel groups [g0, g1) (of 8 channels with AVX-512 `wide`, else 4) of chunk ch: x, y and res (or NULL)
 * at the chunk's first pixel of input row 0 / output row 0; bias (or NULL) at output channel 0. */
static inline void pw_chunk_groups(const pw_state *st, int wide, const pw_chunk *ch, int64_t g0, int64_t g1,
                                   const float *x, int64_t xs, const float *bias, const float *res, float *y,
                                   int64_t ys, const trtl_epilogue *e)
{
    const int64_t C = st->C, K = st->K;
    const int gr = wide ? PW_MR : 4;
    for (int64_t g = g0; g < g1; g++) {
        int64_t k0 = g * gr;
        int kr = (int)(K - k0 < gr ? K - k0 : gr);
        const float *wp = st->wp + (k0 / PW_MR) * C * PW_MR + k0 % PW_MR;
        const float *b = bias ? bias + k0 : NULL, *r = res ? res + k0 * ys : NULL;
        float *yk = y + k0 * ys;
        if (wide)
            pw_tile512_any(wp, x, xs, ys, C, ch->nv, (__mmask16)((1u << ch->nlast) - 1u), ch->ne, b, r, yk, kr, e);
        else
            pw_tile256_any(wp, x, xs, ys, C, ch->nv, ch->nlast, b, r, yk, kr, e);
        if (!trtl_act_is_fast(e->act))
            for (int i = 0; i < kr; i++)
                trtl_epi_act(e, yk + i * ys, ch->npx);
    }
}

#endif
