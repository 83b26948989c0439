/*
 * winograd_avx2.c -- AVX2+FMA transforms and GEMM microkernels of the Winograd convolution
 * (contracts in winograd.h).
 *
 * Transforms work on 8 tiles at once, one per vector lane, so they are plain vector arithmetic;
 * the only shuffling is at the edges: the input rows of 8 tiles are loaded 4 columns at a time
 * (tile l and tile l + 4 in the two 128-bit halves) and transposed in-lane to columns, and the
 * output rows go back the same way, so every load and store is one tile row.
 */
#include <immintrin.h>

#include "kernels/x86/winograd.h"
#include "kernels/x86/fused_epilogue.h"

const double trtl_wg_G23[4][3] = {{1.0, 0.0, 0.0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0.0, 0.0, 1.0}};
const double trtl_wg_G43[6][3] = {
    {1.0 / 4, 0.0, 0.0},           {1.0 / 6, 1.0 / 6, 1.0 / 6},   {1.0 / 6, -1.0 / 6, 1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0.0, 0.0, 1.0}};

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

#define FULL43 (4 | 4 << 8)
#define FULL23 (2 | 2 << 8)

/* [p | q]: 4 floats from each. */
AVX2_INLINE __m256 load2x4(const float *p, const float *q)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), _mm_loadu_ps(q), 1);
}

/* 2 floats from each of p, q, r, s: [p0 p1 q0 q1 | r0 r1 s0 s1]. */
AVX2_INLINE __m256 load4x2(const float *p, const float *q, const float *r, const float *s)
{
    __m128 lo = _mm_loadh_pi(_mm_castsi128_ps(_mm_loadu_si64(p)), (const __m64 *)q);
    __m128 hi = _mm_loadh_pi(_mm_castsi128_ps(_mm_loadu_si64(r)), (const __m64 *)s);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

/* In-lane 4x4 transpose of z0..z3 (tile l | tile l + 4 each) into columns c0..c3 over 8 tiles;
 * the same function maps columns back to tile rows. */
AVX2_INLINE void transpose4(__m256 z0, __m256 z1, __m256 z2, __m256 z3, __m256 *c0, __m256 *c1, __m256 *c2,
                            __m256 *c3)
{
    __m256 a0 = _mm256_unpacklo_ps(z0, z1), a1 = _mm256_unpackhi_ps(z0, z1);
    __m256 a2 = _mm256_unpacklo_ps(z2, z3), a3 = _mm256_unpackhi_ps(z2, z3);
    *c0 = _mm256_shuffle_ps(a0, a2, 0x44);
    *c1 = _mm256_shuffle_ps(a0, a2, 0xEE);
    *c2 = _mm256_shuffle_ps(a1, a3, 0x44);
    *c3 = _mm256_shuffle_ps(a1, a3, 0xEE);
}

/* An exponent field of all ones is +-Inf or NaN: x & 0x7f800000 == 0x7f800000, 32 floats a step. */
AVX2 int trtl_wg_all_finite(const float *x, int64_t n)
{
    const __m256i ex = _mm256_set1_epi32(0x7f800000);
    __m256i bad = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            __m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i + 8 * q)), ex);
            bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(b, ex));
        }
    for (; i + 8 <= n; i += 8) {
        __m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), ex);
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(b, ex));
    }
    int any = !_mm256_testz_si256(bad, bad);
    const uint32_t *u = (const uint32_t *)(const void *)x;
    for (; i < n; i++)
        any |= (u[i] & 0x7f800000u) == 0x7f800000u;
    return !any;
}

AVX2 void trtl_wg_pad_row(float *d, const float *src, int64_t wp, int64_t pl, int64_t W)
{
    int64_t z0 = pl < wp ? pl : wp, z1 = pl + W < wp ? pl + W : wp, j = 0;
    if (!src || z1 < z0)
        z1 = z0 = wp;
    const __m256 zero = _mm256_setzero_ps();
    for (; j + 8 <= z0; j += 8)
        _mm256_storeu_ps(d + j, zero);
    for (; j < z0; j++)
        d[j] = 0.0f;
    for (; j + 8 <= z1; j += 8)
        _mm256_storeu_ps(d + j, _mm256_loadu_ps(src + (j - pl)));
    for (; j < z1; j++)
        d[j] = src[j - pl];
    for (; j + 8 <= wp; j += 8)
        _mm256_storeu_ps(d + j, zero);
    for (; j < wp; j++)
        d[j] = 0.0f;
}

/* B^T v for F(4,3) (6 values). */
AVX2_INLINE void bt43(__m256 d0, __m256 d1, __m256 d2, __m256 d3, __m256 d4, __m256 d5, __m256 *o)
{
    const __m256 c2 = _mm256_set1_ps(2.0f), c4 = _mm256_set1_ps(4.0f), c5 = _mm256_set1_ps(5.0f);
    __m256 s12 = _mm256_add_ps(d1, d2), s34 = _mm256_add_ps(d3, d4);
    __m256 t21 = _mm256_sub_ps(d2, d1), t34 = _mm256_sub_ps(d3, d4);
    __m256 t31 = _mm256_sub_ps(d3, d1), t42 = _mm256_sub_ps(d4, d2);
    o[0] = _mm256_fmadd_ps(c4, d0, _mm256_fnmadd_ps(c5, d2, d4)); /* 4 d0 - 5 d2 + d4 */
    o[1] = _mm256_fmsub_ps(c4, s12, s34);                          /* 4 (d1 + d2) - (d3 + d4) */
    o[2] = _mm256_fmadd_ps(c4, t21, t34);                          /* 4 (d2 - d1) + (d3 - d4) */
    o[3] = _mm256_fmadd_ps(c2, t31, t42);                          /* 2 (d3 - d1) + (d4 - d2) */
    o[4] = _mm256_fnmadd_ps(c2, t31, t42);                         /* -2 (d3 - d1) + (d4 - d2) */
    o[5] = _mm256_fmadd_ps(c4, d1, _mm256_fnmadd_ps(c5, d3, d5)); /* 4 d1 - 5 d3 + d5 */
}

AVX2 void trtl_wg_input8_f43(const float *S, const int64_t *off, int64_t wp, float *dst, int64_t xs)
{
    const float *p[8];
#pragma GCC unroll 8
    for (int l = 0; l < 8; l++)
        p[l] = S + off[l];
    __m256 t[6][6]; /* t[r][j]: row r of the tiles after the transform along W */
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
        const int64_t o = r * wp;
        __m256 d0, d1, d2, d3;
        transpose4(load2x4(p[0] + o, p[4] + o), load2x4(p[1] + o, p[5] + o), load2x4(p[2] + o, p[6] + o),
                   load2x4(p[3] + o, p[7] + o), &d0, &d1, &d2, &d3);
        /* columns 4, 5: [a4 a5 b4 b5 | e4 e5 f4 f5] and [c.. d.. | g.. h..] */
        __m256 e0 = load4x2(p[0] + o + 4, p[1] + o + 4, p[4] + o + 4, p[5] + o + 4);
        __m256 e1 = load4x2(p[2] + o + 4, p[3] + o + 4, p[6] + o + 4, p[7] + o + 4);
        __m256 d4 = _mm256_shuffle_ps(e0, e1, 0x88), d5 = _mm256_shuffle_ps(e0, e1, 0xDD);
        bt43(d0, d1, d2, d3, d4, d5, t[r]);
    }
#pragma GCC unroll 6
    for (int j = 0; j < 6; j++) {
        __m256 v[6];
        bt43(t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j], v);
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++)
            _mm256_storeu_ps(dst + (i * 6 + j) * xs, v[i]);
    }
}

AVX2 void trtl_wg_input8_f23(const float *S, const int64_t *off, int64_t wp, float *dst, int64_t xs)
{
    const float *p[8];
#pragma GCC unroll 8
    for (int l = 0; l < 8; l++)
        p[l] = S + off[l];
    __m256 t[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        const int64_t o = r * wp;
        __m256 d0, d1, d2, d3;
        transpose4(load2x4(p[0] + o, p[4] + o), load2x4(p[1] + o, p[5] + o), load2x4(p[2] + o, p[6] + o),
                   load2x4(p[3] + o, p[7] + o), &d0, &d1, &d2, &d3);
        t[r][0] = _mm256_sub_ps(d0, d2);
        t[r][1] = _mm256_add_ps(d1, d2);
        t[r][2] = _mm256_sub_ps(d2, d1);
        t[r][3] = _mm256_sub_ps(d3, d1);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(dst + (0 * 4 + j) * xs, _mm256_sub_ps(t[0][j], t[2][j]));
        _mm256_storeu_ps(dst + (1 * 4 + j) * xs, _mm256_add_ps(t[1][j], t[2][j]));
        _mm256_storeu_ps(dst + (2 * 4 + j) * xs, _mm256_sub_ps(t[2][j], t[1][j]));
        _mm256_storeu_ps(dst + (3 * 4 + j) * xs, _mm256_sub_ps(t[3][j], t[1][j]));
    }
}

/* A^T v for F(4,3) (6 values in, 4 out). */
AVX2_INLINE void at43(__m256 m0, __m256 m1, __m256 m2, __m256 m3, __m256 m4, __m256 m5, __m256 *o)
{
    const __m256 c2 = _mm256_set1_ps(2.0f), c4 = _mm256_set1_ps(4.0f), c8 = _mm256_set1_ps(8.0f);
    __m256 s12 = _mm256_add_ps(m1, m2), d12 = _mm256_sub_ps(m1, m2);
    __m256 s34 = _mm256_add_ps(m3, m4), d34 = _mm256_sub_ps(m3, m4);
    o[0] = _mm256_add_ps(_mm256_add_ps(m0, s12), s34);
    o[1] = _mm256_fmadd_ps(c2, d34, d12);
    o[2] = _mm256_fmadd_ps(c4, s34, s12);
    o[3] = _mm256_add_ps(_mm256_fmadd_ps(c8, d34, d12), m5);
}

/* Store of one tile's values (rows `stride` floats apart in tv) clipped to its valid extent
 * (partial edge tiles): a row is one masked 4-lane load of the residual and one masked store (a
 * 14x14 map in F(4,3) has 7 of its 16 tiles on a partial edge: a scalar loop there was ~7% of the
 * layer).  The activation is a trtl_act8 one (trtl_wg_out). */
AVX2 static void store_tile(const trtl_wg_out *o, int64_t t, const float *tv, int64_t stride)
{
    int32_t v = o->valid[t];
    int vr = v & 255, vc = v >> 8;
    const trtl_epilogue *e = o->epi;
    const __m256 va = _mm256_set1_ps(e->alpha), vb = _mm256_set1_ps(e->beta);
    if (vc <= 4) {
        const __m128i mask = _mm_cmpgt_epi32(_mm_set1_epi32(vc), _mm_setr_epi32(0, 1, 2, 3));
        for (int r = 0; r < vr; r++) {
            int64_t i = o->y_off[t] + r * o->ow;
            __m128 s = _mm_maskload_ps(tv + r * stride, mask); /* F23 rows hold 2 values */
            if (o->res)
                s = _mm_add_ps(s, _mm_maskload_ps(o->res + i, mask));
            s = _mm256_castps256_ps128(trtl_act8(_mm256_castps128_ps256(s), e->act, va, vb));
            _mm_maskstore_ps(o->y + i, mask, s);
        }
        return;
    }
    for (int r = 0; r < vr; r++) {
        float b[8] = {0};
        int64_t i = o->y_off[t] + r * o->ow;
        for (int c = 0; c < vc; c++)
            b[c] = tv[r * stride + c] + (o->res ? o->res[i + c] : 0.0f);
        _mm256_storeu_ps(b, trtl_act8(_mm256_loadu_ps(b), e->act, va, vb));
        for (int c = 0; c < vc; c++)
            o->y[i + c] = b[c];
    }
}

AVX2 void trtl_wg_output8_f43(const float *mk, int64_t xs, const trtl_wg_out *o, int64_t t)
{
    __m256 q[4][6];
#pragma GCC unroll 6
    for (int j = 0; j < 6; j++) {
        __m256 m1 = _mm256_loadu_ps(mk + (6 + j) * xs);
        if (j == 1) /* position (1, 1) reaches every output with weight 1 */
            m1 = _mm256_add_ps(m1, _mm256_set1_ps(o->bias));
        __m256 c[4];
        at43(_mm256_loadu_ps(mk + j * xs), m1, _mm256_loadu_ps(mk + (12 + j) * xs), _mm256_loadu_ps(mk + (18 + j) * xs),
             _mm256_loadu_ps(mk + (24 + j) * xs), _mm256_loadu_ps(mk + (30 + j) * xs), c);
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++)
            q[i][j] = c[i];
    }
    const int32_t act = o->epi->act;
    const __m256 va = _mm256_set1_ps(o->epi->alpha), vb = _mm256_set1_ps(o->epi->beta);
    const int32_t *vl = o->valid + t;
    const int64_t *yo = o->y_off + t;
    int full[4], slow = 0;
#pragma GCC unroll 4
    for (int l = 0; l < 4; l++) {
        full[l] = vl[l] == FULL43 && vl[l + 4] == FULL43;
        slow |= !full[l];
    }
    float tmp[4][4][8]; /* [pair l][row][tile l | tile l + 4] for the scalar path */
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        __m256 c[4], z[4];
        at43(q[r][0], q[r][1], q[r][2], q[r][3], q[r][4], q[r][5], c);
        transpose4(c[0], c[1], c[2], c[3], &z[0], &z[1], &z[2], &z[3]);
#pragma GCC unroll 4
        for (int l = 0; l < 4; l++) {
            if (!full[l]) {
                _mm256_storeu_ps(tmp[l][r], z[l]);
                continue;
            }
            int64_t a = yo[l] + r * o->ow, b = yo[l + 4] + r * o->ow;
            __m256 s = z[l];
            if (o->res)
                s = _mm256_add_ps(s, load2x4(o->res + a, o->res + b));
            s = trtl_act8(s, act, va, vb);
            _mm_storeu_ps(o->y + a, _mm256_castps256_ps128(s));
            _mm_storeu_ps(o->y + b, _mm256_extractf128_ps(s, 1));
        }
    }
    if (slow)
#pragma GCC unroll 4
        for (int l = 0; l < 4; l++)
            if (!full[l])
#pragma GCC unroll 2
                for (int h = 0; h < 2; h++)
                    if (vl[l + 4 * h])
                        store_tile(o, t + l + 4 * h, &tmp[l][0][4 * h], 8);
}

AVX2 void trtl_wg_output8_f23(const float *mk, int64_t xs, const trtl_wg_out *o, int64_t t)
{
    __m256 q[2][4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        __m256 m0 = _mm256_loadu_ps(mk + j * xs), m1 = _mm256_loadu_ps(mk + (4 + j) * xs);
        __m256 m2 = _mm256_loadu_ps(mk + (8 + j) * xs), m3 = _mm256_loadu_ps(mk + (12 + j) * xs);
        if (j == 1)
            m1 = _mm256_add_ps(m1, _mm256_set1_ps(o->bias));
        q[0][j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        q[1][j] = _mm256_add_ps(_mm256_sub_ps(m1, m2), m3);
    }
    const int32_t act = o->epi->act;
    const __m256 va = _mm256_set1_ps(o->epi->alpha), vb = _mm256_set1_ps(o->epi->beta);
    const int32_t *vl = o->valid + t;
    const int64_t *yo = o->y_off + t;
    /* quad 0: tiles 0, 1, 4, 5; quad 1: tiles 2, 3, 6, 7 (the unpack order) */
    static const int quad[2][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}};
    int full[2], slow = 0;
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        full[h] = 1;
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++)
            full[h] &= vl[quad[h][i]] == FULL23;
        slow |= !full[h];
    }
    float tmp[2][2][8]; /* [quad][row][2 values of each of its 4 tiles] */
#pragma GCC unroll 2
    for (int r = 0; r < 2; r++) {
        __m256 o0 = _mm256_add_ps(_mm256_add_ps(q[r][0], q[r][1]), q[r][2]);
        __m256 o1 = _mm256_add_ps(_mm256_sub_ps(q[r][1], q[r][2]), q[r][3]);
        __m256 z[2] = {_mm256_unpacklo_ps(o0, o1), _mm256_unpackhi_ps(o0, o1)};
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            if (!full[h]) {
                _mm256_storeu_ps(tmp[h][r], z[h]);
                continue;
            }
            int64_t a0 = yo[quad[h][0]] + r * o->ow, a1 = yo[quad[h][1]] + r * o->ow;
            int64_t a2 = yo[quad[h][2]] + r * o->ow, a3 = yo[quad[h][3]] + r * o->ow;
            __m256 s = z[h];
            if (o->res)
                s = _mm256_add_ps(s, load4x2(o->res + a0, o->res + a1, o->res + a2, o->res + a3));
            s = trtl_act8(s, act, va, vb);
            __m128 lo = _mm256_castps256_ps128(s), hi = _mm256_extractf128_ps(s, 1);
            _mm_storeu_si64(o->y + a0, _mm_castps_si128(lo));
            _mm_storeh_pi((__m64 *)(o->y + a1), lo);
            _mm_storeu_si64(o->y + a2, _mm_castps_si128(hi));
            _mm_storeh_pi((__m64 *)(o->y + a3), hi);
        }
    }
    if (slow)
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++)
            if (!full[h])
#pragma GCC unroll 4
                for (int i = 0; i < 4; i++)
                    if (vl[quad[h][i]])
                        store_tile(o, t + quad[h][i], &tmp[h][0][2 * i], 8);
}

/* 6 x 16 register tile: 12 accumulators, per channel 2 loads of v and 6 broadcasts of u. */
AVX2 void trtl_wg_gemm_6x16(int64_t C, const float *u, const float *v, float *m, int64_t ldm)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
#pragma GCC unroll 2
    for (int64_t c = 0; c < C; c++) {
        __m256 b0 = _mm256_loadu_ps(v + 16 * c), b1 = _mm256_loadu_ps(v + 16 * c + 8), a;
        a = _mm256_broadcast_ss(u + 6 * c);
        c00 = _mm256_fmadd_ps(a, b0, c00);
        c01 = _mm256_fmadd_ps(a, b1, c01);
        a = _mm256_broadcast_ss(u + 6 * c + 1);
        c10 = _mm256_fmadd_ps(a, b0, c10);
        c11 = _mm256_fmadd_ps(a, b1, c11);
        a = _mm256_broadcast_ss(u + 6 * c + 2);
        c20 = _mm256_fmadd_ps(a, b0, c20);
        c21 = _mm256_fmadd_ps(a, b1, c21);
        a = _mm256_broadcast_ss(u + 6 * c + 3);
        c30 = _mm256_fmadd_ps(a, b0, c30);
        c31 = _mm256_fmadd_ps(a, b1, c31);
        a = _mm256_broadcast_ss(u + 6 * c + 4);
        c40 = _mm256_fmadd_ps(a, b0, c40);
        c41 = _mm256_fmadd_ps(a, b1, c41);
        a = _mm256_broadcast_ss(u + 6 * c + 5);
        c50 = _mm256_fmadd_ps(a, b0, c50);
        c51 = _mm256_fmadd_ps(a, b1, c51);
    }
    _mm256_storeu_ps(m, c00);
    _mm256_storeu_ps(m + 8, c01);
    _mm256_storeu_ps(m + ldm, c10);
    _mm256_storeu_ps(m + ldm + 8, c11);
    _mm256_storeu_ps(m + 2 * ldm, c20);
    _mm256_storeu_ps(m + 2 * ldm + 8, c21);
    _mm256_storeu_ps(m + 3 * ldm, c30);
    _mm256_storeu_ps(m + 3 * ldm + 8, c31);
    _mm256_storeu_ps(m + 4 * ldm, c40);
    _mm256_storeu_ps(m + 4 * ldm + 8, c41);
    _mm256_storeu_ps(m + 5 * ldm, c50);
    _mm256_storeu_ps(m + 5 * ldm + 8, c51);
}

/* 6 x 8 tail (the last panel of a group whose tile count is 8 mod 16): the channel loop in two
 * halves (even and odd channels) summed at the end, so that 12 FMA chains are in flight rather
 * than 6 (one chain's FMA latency would otherwise bound it). */
AVX2 void trtl_wg_gemm_6x8(int64_t C, const float *u, const float *v, float *m, int64_t ldm)
{
    __m256 acc[2][6];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)
        acc[0][r] = acc[1][r] = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 2 <= C; c += 2) {
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256 b = _mm256_loadu_ps(v + 8 * (c + h));
#pragma GCC unroll 6
            for (int r = 0; r < 6; r++)
                acc[h][r] = _mm256_fmadd_ps(_mm256_broadcast_ss(u + 6 * (c + h) + r), b, acc[h][r]);
        }
    }
    if (c < C) {
        const __m256 b = _mm256_loadu_ps(v + 8 * c);
#pragma GCC unroll 6
        for (int r = 0; r < 6; r++)
            acc[0][r] = _mm256_fmadd_ps(_mm256_broadcast_ss(u + 6 * c + r), b, acc[0][r]);
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++)
        _mm256_storeu_ps(m + r * ldm, _mm256_add_ps(acc[0][r], acc[1][r]));
}
