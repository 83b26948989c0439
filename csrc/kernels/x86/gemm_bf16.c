/*
 * gemm_bf16.c -- packing, microkernels and block driver of the bf16 GEMM (layouts in gemm_bf16.h).
 *
 * Microkernel: an R x (NV zmm) fp32 accumulator tile (R <= 12, NV <= 2: up to 24 accumulators,
 * 2 B vectors and 1 broadcast in registers).  Each step covers one depth pair: NV loads of B
 * (16 columns x 2 depths each), R 32-bit broadcasts of A pairs and R*NV `vdpbf16ps`, i.e. twice
 * the multiply-adds of gemm_packed.c's fp32 step per instruction.  R and NV are constants at
 * every call site (always_inline bodies instantiated per size), as in gemm_packed.c.
 * One-row products (batch-1 fully connected layers) use a GEMV that splits the depth over four
 * accumulator sets so that the instruction latency does not bound it.
 *
 * The store applies the epilogue exactly as gemm_packed.c's AVX-512 store does (ACC, row/column
 * bias, residual, RELU/CLIP/LEAKY_RELU in registers, other activations over the block after it).
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/x86/gemm_bf16.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/gemm_store512.h"
#include "core/cpu.h"

#define MR TRTL_BF16_MR
#define NR TRTL_BF16_NR
#define TGT __attribute__((target("avx512f,avx512bw,avx512bf16")))

int trtl_bf16_available(void) { return trtl_cpu_has(TRTL_BF16_CPU); }

uint16_t trtl_bf16_from_float(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN, sign and payload top kept */
    if ((u & 0x7f800000u) == 0)
        u &= 0x80000000u; /* denormal input: signed zero */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline int32_t ld32(const uint16_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ---- microkernels ---------------------------------------------------------------------------- */

TGT __attribute__((always_inline)) static inline void ukr(const bk_args *u, const int R, const int NV)
{
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    const uint16_t *a = (const uint16_t *)u->a, *b = (const uint16_t *)u->b;
    const int64_t as = u->as;
    for (int64_t k = u->k2; k > 0; k--) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
        __m512bh b1 = NV > 1 ? (__m512bh)_mm512_loadu_si512(b + 32) : b0;
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            __m512bh ar = (__m512bh)_mm512_set1_epi32(ld32(a + 2 * r));
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], ar, b0);
            if (NV > 1)
                acc[r][1] = _mm512_dpbf16_ps(acc[r][1], ar, b1);
        }
        a += as;
        b += 2 * NR;
    }
    trtl_s512_store(u, acc, R, NV);
}

#define BK_FN(R, V)                                                                                               \
    TGT static void ukr_##R##_##V(const bk_args *u) { ukr(u, R, V); }
#define BK_ROWS(X, V) X(1, V) X(2, V) X(3, V) X(4, V) X(5, V) X(6, V) X(7, V) X(8, V) X(9, V) X(10, V) X(11, V) X(12, V)
BK_ROWS(BK_FN, 1)
BK_ROWS(BK_FN, 2)
#define BK_PAIR(R, V) {ukr_##R##_1, ukr_##R##_2},
static const bk_fn tab[MR][2] = {BK_ROWS(BK_PAIR, 0)};

/* One row of A times NV vectors of a tile, the depth pairs spread over 4 accumulator sets. */
TGT __attribute__((always_inline)) static inline void gemv(const bk_args *u, const int NV)
{
    __m512 s[4][2], acc[MR][2];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        s[i][0] = s[i][1] = _mm512_setzero_ps();
    const uint16_t *a = (const uint16_t *)u->a, *b = (const uint16_t *)u->b;
    int64_t k = u->k2;
    for (; k >= 4; k -= 4, a += 8, b += 8 * NR)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m512bh x = (__m512bh)_mm512_set1_epi32(ld32(a + 2 * i));
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                s[i][v] = _mm512_dpbf16_ps(s[i][v], x, (__m512bh)_mm512_loadu_si512(b + i * 2 * NR + 32 * v));
        }
    for (; k > 0; k--, a += 2, b += 2 * NR) {
        __m512bh x = (__m512bh)_mm512_set1_epi32(ld32(a));
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            s[0][v] = _mm512_dpbf16_ps(s[0][v], x, (__m512bh)_mm512_loadu_si512(b + 32 * v));
    }
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
        acc[0][v] = _mm512_add_ps(_mm512_add_ps(s[0][v], s[1][v]), _mm512_add_ps(s[2][v], s[3][v]));
    trtl_s512_store(u, acc, 1, NV);
}

TGT static void gemv_1(const bk_args *u) { gemv(u, 1); }
TGT static void gemv_2(const bk_args *u) { gemv(u, 2); }

/* ---- packing --------------------------------------------------------------------------------- */

/* 32 floats (n valid, the rest zero) -> 32 bf16 in order. */
TGT static inline __m512i cvt32(const float *src, int64_t n)
{
    __mmask16 m0 = (__mmask16)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1u);
    __mmask16 m1 = (__mmask16)(n >= 32 ? 0xffff : n <= 16 ? 0 : (1u << (n - 16)) - 1u);
    __m512 lo = _mm512_maskz_loadu_ps(m0, src), hi = _mm512_maskz_loadu_ps(m1, src + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

int64_t trtl_bf16_packed_a_size(int64_t M, int64_t D) { return (M + MR - 1) / MR * MR * ((D + 1) / 2) * 2; }

TGT void trtl_bf16_pack_row(const float *src, int64_t D, uint16_t *dst)
{
    int64_t d = 0;
    for (; d + 32 <= D; d += 32)
        _mm512_storeu_si512(dst + d, cvt32(src + d, 32));
    if (d < D) {
        uint16_t t[32];
        _mm512_storeu_si512(t, cvt32(src + d, D - d));
        memcpy(dst + d, t, (size_t)((D - d + 1) / 2 * 2) * sizeof(uint16_t));
    }
}

TGT void trtl_bf16_pack_a(const float *src, int64_t rs, int64_t M, int64_t D, uint16_t *dst)
{
    const int64_t D2 = (D + 1) / 2;
    for (int64_t p = 0; p * MR < M; p++) {
        uint32_t *panel = (uint32_t *)(void *)(dst + p * D2 * 2 * MR);
        for (int64_t r = 0; r < MR; r++) {
            const int64_t m = p * MR + r;
            if (m >= M) {
                for (int64_t k = 0; k < D2; k++)
                    panel[k * MR + r] = 0;
                continue;
            }
            for (int64_t d = 0; d < D; d += 32) {
                uint32_t t[16];
                _mm512_storeu_si512(t, cvt32(src + m * rs + d, D - d));
                for (int64_t k = 0; k < 16 && d / 2 + k < D2; k++)
                    panel[(d / 2 + k) * MR + r] = t[k];
            }
        }
    }
}

void trtl_bf16_pack_b(const float *src, int64_t rs, int64_t cs, int64_t kc, int64_t N, uint16_t *dst,
                      int64_t tile_stride)
{
    const int64_t k2 = (kc + 1) / 2;
    for (int64_t t = 0; t * NR < N; t++) {
        uint16_t *tile = dst + t * tile_stride;
        for (int64_t k = 0; k < k2; k++)
            for (int64_t j = 0; j < NR; j++) {
                const int64_t n = t * NR + j, d = 2 * k;
                uint16_t lo = 0, hi = 0;
                if (n < N) {
                    lo = trtl_bf16_from_float(src[d * rs + n * cs]);
                    if (d + 1 < kc)
                        hi = trtl_bf16_from_float(src[(d + 1) * rs + n * cs]);
                }
                tile[k * 2 * NR + 2 * j] = lo;
                tile[k * 2 * NR + 2 * j + 1] = hi;
            }
    }
}

TGT void trtl_bf16_tiles_from_f32(const float *src, int64_t src_stride, int64_t kc, int64_t ntiles, uint16_t *dst,
                                  int64_t dst_stride)
{
    /* cvtne2ps gives [r0 columns 0..15 | r1 columns 0..15]; interleave them into pairs */
    static const uint16_t perm[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    const __m512i idx = _mm512_loadu_si512(perm);
    const int64_t k2 = (kc + 1) / 2;
    for (int64_t t = 0; t < ntiles; t++) {
        const float *s = src + t * src_stride;
        uint16_t *o = dst + t * dst_stride;
        for (int64_t k = 0; k < k2; k++) {
            const float *r0 = s + 2 * k * NR, *r1 = r0 + NR;
            const int odd = 2 * k + 1 >= kc;
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                __m512 lo = _mm512_loadu_ps(r0 + 16 * h);
                __m512 hi = odd ? _mm512_setzero_ps() : _mm512_loadu_ps(r1 + 16 * h);
                __m512i both = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
                _mm512_storeu_si512(o + k * 2 * NR + 32 * h, _mm512_permutexvar_epi16(idx, both));
            }
        }
    }
}

/* ---- block driver ---------------------------------------------------------------------------- */

static void at_tile(bk_args *u, const trtl_gemm_epi *e, int64_t i, int64_t j, float *c, int64_t ldc)
{
    u->c = c + i * ldc + j;
    u->row_bias = e && e->row_bias ? e->row_bias + i : NULL;
    u->col_bias = e && e->col_bias ? e->col_bias + j : NULL;
    u->res = e && e->res ? e->res + i * e->ldr + j : NULL;
}

void trtl_bf16_block(int64_t M, int64_t N, int64_t kc, const uint16_t *a, int64_t a_stride, const uint16_t *b,
                     int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags)
{
    const int last = (flags & TRTL_GEMM_LAST) && e;
    const int slow_act = last && !trtl_act_is_fast(e->act);
    bk_args u;
    memset(&u, 0, sizeof u);
    u.k2 = (kc + 1) / 2;
    u.ldc = ldc;
    u.flags = flags & (last ? (TRTL_GEMM_ACC | TRTL_GEMM_LAST) : TRTL_GEMM_ACC);
    u.act = last && !slow_act ? e->act : TRTL_ACT_NONE;
    if (last) {
        u.ldr = e->ldr;
        u.alpha = e->alpha;
        u.beta = e->beta;
    }
    const trtl_gemm_epi *ee = last ? e : NULL;
    if ((flags & TRTL_GEMM_A_ROW) && M == 1) {
        u.a = a;
        u.as = 2;
        for (int64_t j = 0; j < N; j += NR) {
            u.cols = N - j < NR ? (int)(N - j) : NR;
            u.b = b + (j / NR) * b_stride;
            at_tile(&u, ee, 0, j, c, ldc);
            (u.cols > 16 ? gemv_2 : gemv_1)(&u);
        }
    } else {
        u.as = 2 * MR;
        for (int64_t i = 0; i < M; i += MR) {
            const int rows = M - i < MR ? (int)(M - i) : MR;
            u.a = a + (i / MR) * a_stride;
            for (int64_t j = 0; j < N; j += NR) {
                u.cols = N - j < NR ? (int)(N - j) : NR;
                u.b = b + (j / NR) * b_stride;
                at_tile(&u, ee, i, j, c, ldc);
                tab[rows - 1][u.cols > 16](&u);
            }
        }
    }
    if (slow_act) {
        const trtl_epilogue act = {e->act, e->alpha, e->beta, 0};
        for (int64_t i = 0; i < M; i++)
            trtl_epi_act(&act, c + i * ldc, N);
    }
}
