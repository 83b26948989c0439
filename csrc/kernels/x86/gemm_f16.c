/*
 * gemm_f16.c -- microkernels and block driver of the fp16-storage GEMM (layouts in gemm_f16.h).
 *
 * The microkernel is gemm_packed.c's AVX-512 12 x 32 tile with each B vector widened from fp16
 * on load: per depth step 2 `vcvtph2ps` (32 columns) feed up to 24 FMAs.  One-row products use a
 * GEMV with four accumulator sets.  Stores through gemm_store512.h (the same epilogue).
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/x86/gemm_f16.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/gemm_store512.h"
#include "core/cpu.h"

#define MR TRTL_F16_MR
#define NR TRTL_F16_NR
#define TGT __attribute__((target("avx512f,avx512bw,f16c")))

int trtl_f16_available(void) { return trtl_cpu_has(TRTL_F16_CPU); }

TGT static inline __m512 ld16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

TGT __attribute__((always_inline)) static inline void ukr(const bk_args *u, const int R, const int NV)
{
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    const float *a = (const float *)u->a;
    const uint16_t *b = (const uint16_t *)u->b;
    for (int64_t k = u->k2; k > 0; k--) {
        __m512 b0 = ld16(b), b1 = NV > 1 ? ld16(b + 16) : b0;
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            __m512 ar = _mm512_set1_ps(a[r]);
            acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
            if (NV > 1)
                acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
        }
        a += MR;
        b += NR;
    }
    trtl_s512_store(u, acc, R, NV);
}

#define FK_FN(R, V)                                                                                               \
    TGT static void ukr_##R##_##V(const bk_args *u) { ukr(u, R, V); }
#define FK_ROWS(X, V) X(1, V) X(2, V) X(3, V) X(4, V) X(5, V) X(6, V) X(7, V) X(8, V) X(9, V) X(10, V) X(11, V) X(12, V)
FK_ROWS(FK_FN, 1)
FK_ROWS(FK_FN, 2)
#define FK_PAIR(R, V) {ukr_##R##_1, ukr_##R##_2},
static const bk_fn tab[MR][2] = {FK_ROWS(FK_PAIR, 0)};

TGT __attribute__((always_inline)) static inline void gemv(const bk_args *u, const int NV)
{
    __m512 s[4][2], acc[MR][2];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        s[i][0] = s[i][1] = _mm512_setzero_ps();
    const float *a = (const float *)u->a;
    const uint16_t *b = (const uint16_t *)u->b;
    int64_t k = u->k2;
    for (; k >= 4; k -= 4, a += 4, b += 4 * NR)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m512 x = _mm512_set1_ps(a[i]);
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                s[i][v] = _mm512_fmadd_ps(x, ld16(b + i * NR + 16 * v), s[i][v]);
        }
    for (; k > 0; k--, a++, b += NR) {
        __m512 x = _mm512_set1_ps(a[0]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            s[0][v] = _mm512_fmadd_ps(x, ld16(b + 16 * v), s[0][v]);
    }
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
        acc[0][v] = _mm512_add_ps(_mm512_add_ps(s[0][v], s[1][v]), _mm512_add_ps(s[2][v], s[3][v]));
    trtl_s512_store(u, acc, 1, NV);
}

TGT static void gemv_1(const bk_args *u) { gemv(u, 1); }
TGT static void gemv_2(const bk_args *u) { gemv(u, 2); }

TGT void trtl_f16_pack_b(const float *src, int64_t rs, int64_t cs, int64_t kc, int64_t N, uint16_t *dst,
                         int64_t tile_stride)
{
    for (int64_t t = 0; t * NR < N; t++)
        for (int64_t d = 0; d < kc; d++) {
            float row[NR];
            for (int64_t j = 0; j < NR; j++) {
                const int64_t n = t * NR + j;
                row[j] = n < N ? src[d * rs + n * cs] : 0.0f;
            }
            uint16_t *o = dst + t * tile_stride + d * NR;
            _mm256_storeu_si256((__m256i *)o, _mm512_cvtps_ph(_mm512_loadu_ps(row), _MM_FROUND_TO_NEAREST_INT));
            _mm256_storeu_si256((__m256i *)(o + 16),
                                _mm512_cvtps_ph(_mm512_loadu_ps(row + 16), _MM_FROUND_TO_NEAREST_INT));
        }
}

static void at_tile(bk_args *u, const trtl_gemm_epi *e, int64_t i, int64_t j, float *c, int64_t ldc)
{
    u->c = c + i * ldc + j;
    u->row_bias = e && e->row_bias ? e->row_bias + i : NULL;
    u->col_bias = e && e->col_bias ? e->col_bias + j : NULL;
    u->res = e && e->res ? e->res + i * e->ldr + j : NULL;
}

void trtl_f16_block(int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride, const uint16_t *b,
                    int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags)
{
    const int last = (flags & TRTL_GEMM_LAST) && e;
    const int slow_act = last && !trtl_act_is_fast(e->act);
    bk_args u;
    memset(&u, 0, sizeof u);
    u.k2 = kc;
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
        for (int64_t j = 0; j < N; j += NR) {
            u.cols = N - j < NR ? (int)(N - j) : NR;
            u.b = b + (j / NR) * b_stride;
            at_tile(&u, ee, 0, j, c, ldc);
            (u.cols > 16 ? gemv_2 : gemv_1)(&u);
        }
    } else {
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
