/*
 * attention.c -- "attention.tiled": the internal ATTENTION op (core/params.h), y = softmax(Q K^T *
 * scale [+ mask]) V over the last axis, one tile of query rows at a time.
 *
 * Work items are (batch, query block): for a block of up to QB query rows the scores against all
 * Sk keys go to a [QB, Sk] tile of the slot's scratch (no [Sq, Sk] matrix is ever materialized),
 * each row is scaled, masked and exponentiated in place (two-pass softmax: maximum, then exp and
 * sum), the unnormalized tile times V is written straight into the output rows, and each output
 * row is finally multiplied by 1 / its sum.  When K comes as [Sk, D] a slot packs K^T [D, Sk] once
 * per batch it visits (slots get contiguous runs of items, so consecutive query blocks of one
 * batch share it); K^T inputs are read in place.  Both products run one register-blocked loop
 * (rows x 2 vectors of accumulators, broadcast A, vector B rows, masked column tails): AVX-512
 * (8 rows x 32 columns) and AVX2+FMA (6 rows x 16 columns) picked at run time, plain C otherwise.
 * exp is vmath's (x86/vmath.h), dispatched the same way.
 *
 * NaN/Inf as the unfused layers: the row maximum skips NaN (max_ps(x, m) keeps m for a NaN x, as
 * the reference's `x > m`), a NaN score then makes the row sum, and so the whole output row, NaN;
 * a +Inf score gives Inf - Inf = NaN; a row masked entirely with -Inf gives exp(-Inf - -Inf) = NaN;
 * NaN/Inf in V reach the output through the product (0 * Inf = NaN as in the matrix multiply).
 * Scores are computed as the dot product, times scale, plus the mask (no FMA), as the layers do.
 *
 * Network layers (IAttention) add: causality (key j allowed for query i where j < lim(i), attention_geometry.h):
 * a query block computes scores only for the keys its last row may see, so the tiles above the diagonal are
 * neither multiplied nor exponentiated, and the second product runs over those keys only -- unless V holds a
 * NaN or Inf (checked once per batch a slot visits), when it runs over all keys with weight 0 for the skipped
 * ones, as 0 * Inf = NaN in the reference; a BOOL mask (ruled-out keys -inf before the maximum); norm_op NONE
 * (weights are the masked scores, ruled-out keys 0, no 1 / sum); empty_rows_zero (a row whose scores are all
 * -inf, none NaN, weighs every key 0).  Weights
 * below FLT_MIN are flushed to 0, as the softmax kernel's exp does (denormals would slow the second product).
 */
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/attention_geometry.h"
#include "kernels/x86/transpose_2d.h"
#include "kernels/x86/vmath.h"
#include "core/threadpool.h"
#include "kernels/blas/blas_common.h"
#include "core/cpu.h"
#include "core/status.h"

#define QB 32          /* query rows per tile (at most) */
#define MAX_SLOTS 64
#define MIN_ITEM_FLOPS 65536.0

enum { ISA_C = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };

/* ---- C = A[M, K] x B[K, N] with B packed in column panels, C overwritten ---------------------- */

/* B comes as panels of NR columns (16 on AVX2 and in C, 32 on AVX-512): panel p holds B[k, p * NR + c] at
 * Bp + p * pstride + k * NR + c, its columns past N zero.  Rows of a panel are contiguous and 64-byte aligned, so the
 * loop streams it without masked loads and without the cache-set conflicts that K^T's and V's power-of-two row
 * strides (512 and 256 bytes at BERT's shapes) caused when they were read in place. */
#define NR_AVX2 16
#define NR_AVX512 32
#define NR_MAX 32

static int panel_width(int isa) { return isa == ISA_AVX512 ? NR_AVX512 : NR_AVX2; }

/* Rows of the next tile of `left` rows with tiles of at most mr rows: never leaves a tail of fewer than 4 rows
 * after a full tile (32 rows on AVX2 go as 6, 6, 6, 6, 4, 4, not 6 x 5 + 2): a tile of r rows keeps 2r chains of
 * FMAs in flight, and fewer than 8 wait on the FMA latency. */
static int tile_rows(int64_t left, int mr)
{
    if (left <= mr)
        return (int)left;
    if (left < mr + 4)
        return (int)left - 4;
    return mr;
}

static void gemm_c(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp, int64_t pstride,
                   float *C, int64_t ldc, const float *rs)
{
    for (int64_t n0 = 0; n0 < N; n0 += NR_AVX2) {
        const float *P = Bp + (n0 / NR_AVX2) * pstride;
        int64_t nc = N - n0 < NR_AVX2 ? N - n0 : NR_AVX2;
        for (int64_t m = 0; m < M; m++) {
            float acc[NR_AVX2] = {0};
            for (int64_t k = 0; k < K; k++) {
                float a = A[m * lda + k];
                for (int c = 0; c < NR_AVX2; c++)
                    acc[c] += a * P[k * NR_AVX2 + c];
            }
            for (int c = 0; rs && c < NR_AVX2; c++)
                acc[c] *= rs[m];
            memcpy(C + m * ldc + n0, acc, sizeof(float) * (size_t)nc);
        }
    }
}

#define DEF_TILE_AVX2(MR)                                                                                      \
    __attribute__((target("avx2,fma"))) static void tile_avx2_##MR(int64_t K, const float *A, int64_t lda,    \
                                                                   const float *P, float *C, int64_t ldc,     \
                                                                   const float *rs, int full, __m256i k0,     \
                                                                   __m256i k1)                                \
    {                                                                                                          \
        __m256 acc[MR][2];                                                                                     \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                                   \
            acc[r][0] = acc[r][1] = _mm256_setzero_ps();                                                       \
        for (int64_t k = 0; k < K; k++) {                                                                      \
            __m256 b0 = _mm256_load_ps(P + k * NR_AVX2), b1 = _mm256_load_ps(P + k * NR_AVX2 + 8);             \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                             \
                __m256 a = _mm256_broadcast_ss(A + r * lda + k);                                               \
                acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);                                                 \
                acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);                                                 \
            }                                                                                                  \
        }                                                                                                      \
        if (rs)                                                                                                \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                             \
                __m256 s = _mm256_broadcast_ss(rs + r);                                                        \
                acc[r][0] = _mm256_mul_ps(acc[r][0], s);                                                       \
                acc[r][1] = _mm256_mul_ps(acc[r][1], s);                                                       \
            }                                                                                                  \
        if (full) {                                                                                            \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                             \
                _mm256_storeu_ps(C + r * ldc, acc[r][0]);                                                      \
                _mm256_storeu_ps(C + r * ldc + 8, acc[r][1]);                                                  \
            }                                                                                                  \
        } else {                                                                                               \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                             \
                _mm256_maskstore_ps(C + r * ldc, k0, acc[r][0]);                                               \
                _mm256_maskstore_ps(C + r * ldc + 8, k1, acc[r][1]);                                           \
            }                                                                                                  \
        }                                                                                                      \
    }
DEF_TILE_AVX2(6)
DEF_TILE_AVX2(5)
DEF_TILE_AVX2(4)
DEF_TILE_AVX2(3)
DEF_TILE_AVX2(2)
DEF_TILE_AVX2(1)

__attribute__((target("avx2,fma"))) static __m256i mask8(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 0 ? 0 : n > 8 ? 8 : n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2,fma"))) static void gemm_avx2(int64_t M, int64_t N, int64_t K, const float *A,
                                                          int64_t lda, const float *Bp, int64_t pstride, float *C,
                                                          int64_t ldc, const float *rs)
{
    for (int64_t n0 = 0; n0 < N; n0 += NR_AVX2) {
        const float *P = Bp + (n0 / NR_AVX2) * pstride;
        int full = N - n0 >= NR_AVX2;
        __m256i k0 = mask8(N - n0), k1 = mask8(N - n0 - 8);
        for (int64_t m = 0; m < M;) {
            int r = tile_rows(M - m, 6);
            const float *a = A + m * lda;
            float *c = C + m * ldc + n0;
            const float *s = rs ? rs + m : NULL;
            switch (r) {
            case 6: tile_avx2_6(K, a, lda, P, c, ldc, s, full, k0, k1); break;
            case 5: tile_avx2_5(K, a, lda, P, c, ldc, s, full, k0, k1); break;
            case 4: tile_avx2_4(K, a, lda, P, c, ldc, s, full, k0, k1); break;
            case 3: tile_avx2_3(K, a, lda, P, c, ldc, s, full, k0, k1); break;
            case 2: tile_avx2_2(K, a, lda, P, c, ldc, s, full, k0, k1); break;
            default: tile_avx2_1(K, a, lda, P, c, ldc, s, full, k0, k1); break;
            }
            m += r;
        }
    }
}

#define DEF_TILE_AVX512(MR)                                                                                    \
    __attribute__((target("avx512f"))) static void tile_avx512_##MR(int64_t K, const float *A, int64_t lda,   \
                                                                    const float *P, float *C, int64_t ldc,    \
                                                                    const float *rs, __mmask16 k0,            \
                                                                    __mmask16 k1)                             \
    {                                                                                                          \
        __m512 acc[MR][2];                                                                                     \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                                   \
            acc[r][0] = acc[r][1] = _mm512_setzero_ps();                                                       \
        for (int64_t k = 0; k < K; k++) {                                                                      \
            __m512 b0 = _mm512_load_ps(P + k * NR_AVX512), b1 = _mm512_load_ps(P + k * NR_AVX512 + 16);       \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                             \
                __m512 a = _mm512_set1_ps(A[r * lda + k]);                                                     \
                acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);                                                 \
                acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);                                                 \
            }                                                                                                  \
        }                                                                                                      \
        if (rs)                                                                                                \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                             \
                __m512 s = _mm512_set1_ps(rs[r]);                                                              \
                acc[r][0] = _mm512_mul_ps(acc[r][0], s);                                                       \
                acc[r][1] = _mm512_mul_ps(acc[r][1], s);                                                       \
            }                                                                                                  \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                                 \
            _mm512_mask_storeu_ps(C + r * ldc, k0, acc[r][0]);                                                 \
            _mm512_mask_storeu_ps(C + r * ldc + 16, k1, acc[r][1]);                                            \
        }                                                                                                      \
    }
DEF_TILE_AVX512(8)
DEF_TILE_AVX512(7)
DEF_TILE_AVX512(6)
DEF_TILE_AVX512(5)
DEF_TILE_AVX512(4)
DEF_TILE_AVX512(3)
DEF_TILE_AVX512(2)
DEF_TILE_AVX512(1)

static __mmask16 mask16(int64_t n)
{
    return n <= 0 ? 0 : n >= 16 ? (__mmask16)0xffffu : (__mmask16)((1u << n) - 1u);
}

__attribute__((target("avx512f"))) static void gemm_avx512(int64_t M, int64_t N, int64_t K, const float *A,
                                                           int64_t lda, const float *Bp, int64_t pstride, float *C,
                                                           int64_t ldc, const float *rs)
{
    for (int64_t n0 = 0; n0 < N; n0 += NR_AVX512) {
        const float *P = Bp + (n0 / NR_AVX512) * pstride;
        __mmask16 k0 = mask16(N - n0), k1 = mask16(N - n0 - 16);
        for (int64_t m = 0; m < M;) {
            int r = tile_rows(M - m, 8);
            const float *a = A + m * lda;
            float *c = C + m * ldc + n0;
            const float *s = rs ? rs + m : NULL;
            switch (r) {
            case 8: tile_avx512_8(K, a, lda, P, c, ldc, s, k0, k1); break;
            case 7: tile_avx512_7(K, a, lda, P, c, ldc, s, k0, k1); break;
            case 6: tile_avx512_6(K, a, lda, P, c, ldc, s, k0, k1); break;
            case 5: tile_avx512_5(K, a, lda, P, c, ldc, s, k0, k1); break;
            case 4: tile_avx512_4(K, a, lda, P, c, ldc, s, k0, k1); break;
            case 3: tile_avx512_3(K, a, lda, P, c, ldc, s, k0, k1); break;
            case 2: tile_avx512_2(K, a, lda, P, c, ldc, s, k0, k1); break;
            default: tile_avx512_1(K, a, lda, P, c, ldc, s, k0, k1); break;
            }
            m += r;
        }
    }
}

/* C = A B, row m of C times rs[m] where rs is given (the rounding of a product and then a multiply, as separate
 * layers give). */
static void gemm(int isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp,
                 int64_t pstride, float *C, int64_t ldc, const float *rs)
{
    if (isa == ISA_AVX512)
        gemm_avx512(M, N, K, A, lda, Bp, pstride, C, ldc, rs);
    else if (isa == ISA_AVX2)
        gemm_avx2(M, N, K, A, lda, Bp, pstride, C, ldc, rs);
    else
        gemm_c(M, N, K, A, lda, Bp, pstride, C, ldc, rs);
}

/* ---- softmax numerator of one score row -------------------------------------------------------- */

/* x = x * scale + mask (mask step mcol: 0 one value, 1 a row; NULL none); returns the maximum,
 * NaNs skipped (-Inf when every value is NaN or -Inf). */
static float scale_mask_max_c(float *x, int64_t n, float scale, const float *m, int64_t mcol)
{
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
        float s = x[j] * scale;
        if (m)
            s += m[j * mcol];
        x[j] = s;
        mx = s > mx ? s : mx;
    }
    return mx;
}

__attribute__((target("avx2,fma"))) static float scale_mask_max_avx2(float *x, int64_t n, float scale,
                                                                     const float *m, int64_t mcol)
{
    const __m256 sc = _mm256_set1_ps(scale), ninf = _mm256_set1_ps(-INFINITY);
    __m256 mv = ninf, mb = _mm256_set1_ps(m && !mcol ? m[0] : 0.0f);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 s = _mm256_mul_ps(_mm256_loadu_ps(x + j), sc);
        if (m)
            s = _mm256_add_ps(s, mcol ? _mm256_loadu_ps(m + j) : mb);
        _mm256_storeu_ps(x + j, s);
        mv = _mm256_max_ps(s, mv); /* a NaN s keeps mv */
    }
    float buf[8];
    _mm256_storeu_ps(buf, mv);
    float mx = scale_mask_max_c(x + j, n - j, scale, m ? m + j * mcol : NULL, mcol);
    for (int i = 0; i < 8; i++)
        mx = buf[i] > mx ? buf[i] : mx;
    return mx;
}

__attribute__((target("avx512f"))) static float scale_mask_max_avx512(float *x, int64_t n, float scale,
                                                                      const float *m, int64_t mcol)
{
    const __m512 sc = _mm512_set1_ps(scale), ninf = _mm512_set1_ps(-INFINITY);
    __m512 mv = ninf, mb = _mm512_set1_ps(m && !mcol ? m[0] : 0.0f);
    for (int64_t j = 0; j < n; j += 16) {
        __mmask16 k = mask16(n - j);
        __m512 s = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + j), sc);
        if (m)
            s = _mm512_add_ps(s, mcol ? _mm512_maskz_loadu_ps(k, m + j) : mb);
        _mm512_mask_storeu_ps(x + j, k, s);
        mv = _mm512_mask_max_ps(mv, k, s, mv);
    }
    /* mv holds no NaN (a NaN s keeps mv), so the reduction is the loop's maximum.  In registers: a local float[16]
     * took an aligned 64-byte store from gcc 13, which faults under ASan when the frame is on its fake stack
     * (use-after-return detection, on by default there; fake frames are not 64-byte aligned). */
    return _mm512_reduce_max_ps(mv);
}

/* x = exp(x - mx) in place, returns the sum (NaN propagates).  Values below FLT_MIN become 0 (a NaN stays): exp of
 * scores far below the row's maximum (Swin's -100 window mask) would otherwise be denormals, which make the second
 * product ~10x slower on x86; the unfused softmax kernel flushes them the same way. */
static float exp_sum(int isa, float *x, int64_t n, float mx)
{
    return isa == ISA_AVX512 ? trtl_vm_exp_sum_avx512(x, n, mx)
           : isa == ISA_AVX2 ? trtl_vm_exp_sum_avx2(x, n, mx)
                             : trtl_vm_exp_sum(x, n, mx);
}

/* ---- driver ------------------------------------------------------------------------------------- */

/* What a slot remembers between its items: the K and V it packed, the V it scanned for NaN / Inf. */
typedef struct at_slot {
    int64_t packed_k, packed_v, scanned_v;
    int v_nonfinite;
} at_slot;

typedef struct at_job {
    trtl_attn_geom g;
    const float *Q, *K, *V;
    const void *M;
    float *Y, *scratch;
    int64_t slot_floats, qb, nqb, nitems, nslots;
    int isa, nr;
    at_slot slot[MAX_SLOTS]; /* items_stealing: slot i's memory, touched only by pool thread i */
} at_job;

/* Floats of the panels (nr columns each, a multiple of 16 floats: 64-byte aligned) of n columns and `depth` rows. */
static int64_t panels_floats(int64_t n, int64_t depth, int64_t nr)
{
    return (n + nr - 1) / nr * depth * nr;
}

/* rows rows of nc floats (src rows ss apart) into a panel of nr columns, the columns past nc zero. */
static void panel_rows(float *dst, int64_t nr, const float *src, int64_t ss, int64_t rows, int64_t nc)
{
    for (int64_t r = 0; r < rows; r++) {
        memcpy(dst + r * nr, src + r * ss, sizeof(float) * (size_t)nc);
        if (nc < nr)
            memset(dst + r * nr + nc, 0, sizeof(float) * (size_t)(nr - nc));
    }
}

/* K of one batch (at k) -> panels of K^T [D, Sk] (gemm's B of the first product): from [Sk, D] through 8 x 8
 * register-transposed tiles on AVX2 (the scalar loop took about a sixth of BERT's attention step), from K^T by
 * rows.  Columns past Sk are zero. */
static void pack_k(const at_job *j, const float *k, float *kp)
{
    const trtl_attn_geom *g = &j->g;
    const int64_t nr = j->nr;
    for (int64_t p0 = 0; p0 < g->Sk; p0 += nr) {
        int64_t nc = g->Sk - p0 < nr ? g->Sk - p0 : nr;
        float *dst = kp + (p0 / nr) * g->D * nr;
        if (g->k_col != 1) { /* K^T [D, Sk] */
            panel_rows(dst, nr, k + p0, g->k_col, g->D, nc);
            continue;
        }
        trtl_transpose_2d(k + p0 * g->k_row, g->k_row, dst, nr, g->D, nc, j->isa != ISA_C); /* K [Sk, D] */
        if (nc < nr)
            for (int64_t d = 0; d < g->D; d++)
                memset(dst + d * nr + nc, 0, sizeof(float) * (size_t)(nr - nc));
    }
}

/* V [Sk, Dv] of one batch -> panels of nr columns (gemm's B of the second product), columns past Dv zero. */
static void pack_v(const at_job *j, const float *v, float *vp)
{
    const trtl_attn_geom *g = &j->g;
    const int64_t nr = j->nr;
    for (int64_t p0 = 0; p0 < g->Dv; p0 += nr) {
        int64_t nc = g->Dv - p0 < nr ? g->Dv - p0 : nr;
        panel_rows(vp + (p0 / nr) * g->Sk * nr, nr, v + p0, g->Dv, g->Sk, nc);
    }
}

static int any_nonfinite(const float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 1;
    return 0;
}

/* One score row x[0..nk) of query i (its first `valid` keys allowed by causality): scaled, masked, ruled-out
 * keys -inf (softmax) or 0 (NONE); returns the maximum (NaN skipped) and sets *nan when a NaN is left. */
static float row_scores(const at_job *j, float *x, int64_t valid, int64_t nk, const void *mrow, int *nan)
{
    const trtl_attn_geom *g = &j->g;
    const float *mf = g->mask_bool ? NULL : mrow;
    /* the first product applied the scale */
    float mx = j->isa == ISA_AVX512 ? scale_mask_max_avx512(x, valid, 1.0f, mf, g->m_col)
               : j->isa == ISA_AVX2 ? scale_mask_max_avx2(x, valid, 1.0f, mf, g->m_col)
                                    : scale_mask_max_c(x, valid, 1.0f, mf, g->m_col);
    float out = g->norm_none ? 0.0f : -INFINITY;
    if (g->mask_bool && mrow) {
        const unsigned char *mb = mrow;
        mx = -INFINITY;
        for (int64_t c = 0; c < valid; c++) {
            if (!mb[c * g->m_col])
                x[c] = out;
            else
                mx = x[c] > mx ? x[c] : mx;
        }
    }
    for (int64_t c = valid; c < nk; c++)
        x[c] = out;
    *nan = 0;
    if (mx == -INFINITY && g->empty_zero)
        for (int64_t c = 0; c < valid && !*nan; c++)
            *nan = x[c] != x[c];
    return mx;
}

static void item(const at_job *j, int64_t it, float *slot, at_slot *st)
{
    const trtl_attn_geom *g = &j->g;
    int64_t b = it / j->nqb, i0 = (it % j->nqb) * j->qb;
    int64_t m = g->Sq - i0 < j->qb ? g->Sq - i0 : j->qb;
    int64_t qo, ko, vo, mo;
    trtl_attn_offsets(g, b, &qo, &ko, &vo, &mo);
    float *S = slot, *kp = slot + ((QB * g->Sk + 15) & ~(int64_t)15), *vp = kp + panels_floats(g->Sk, g->D, j->nr);
    float *Y = j->Y + (b * g->Sq + i0) * g->Dv;
    /* keys the block's last row may see: the columns computed (all keys without causality) */
    int64_t nk = trtl_attn_limit(g, i0 + m - 1);
    /* K and V packed once per batch a slot visits (a broadcast K or V packs once) */
    if (nk > 0 && st->packed_k != ko) {
        pack_k(j, j->K + ko, kp);
        st->packed_k = ko;
    }
    int64_t n2 = nk; /* keys of the second product */
    if (g->causal && nk < g->Sk) {
        if (st->scanned_v != vo) {
            st->v_nonfinite = any_nonfinite(j->V + vo, g->Sk * g->Dv);
            st->scanned_v = vo;
        }
        if (st->v_nonfinite)
            n2 = g->Sk;
    }
    float inv[QB];
    for (int64_t r = 0; r < m; r++)
        inv[r] = g->scale;
    if (nk > 0) /* scores times scale */
        gemm(j->isa, m, nk, g->D, j->Q + qo + i0 * g->D, g->D, kp, g->D * j->nr, S, g->Sk, inv);
    size_t msz = g->mask_bool ? 1 : sizeof(float);
    for (int64_t r = 0; r < m; r++) {
        float *x = S + r * g->Sk;
        const void *mrow = j->M ? (const char *)j->M + (size_t)(mo + (i0 + r) * g->m_row) * msz : NULL;
        int nan;
        float mx = row_scores(j, x, trtl_attn_limit(g, i0 + r), nk, mrow, &nan);
        for (int64_t c = nk; c < n2; c++)
            x[c] = 0.0f;
        if (g->norm_none) {
            inv[r] = 1.0f;
        } else if (mx == -INFINITY && g->empty_zero && !nan) { /* no attendable key: weights 0 */
            for (int64_t c = 0; c < nk; c++)
                x[c] = 0.0f;
            inv[r] = 1.0f;
        } else {
            inv[r] = 1.0f / exp_sum(j->isa, x, nk, mx);
        }
    }
    if (n2 == 0) { /* no keys: empty sums */
        for (int64_t r = 0; r < m; r++)
            memset(Y + r * g->Dv, 0, sizeof(float) * (size_t)g->Dv);
        return;
    }
    if (st->packed_v != vo) {
        pack_v(j, j->V + vo, vp);
        st->packed_v = vo;
    }
    gemm(j->isa, m, g->Dv, n2, S, g->Sk, vp, g->Sk * j->nr, Y, g->Dv, inv); /* each row times 1 / its sum */
}

static void slots_task(void *ctx, int64_t sb, int64_t se, int thread)
{
    const at_job *j = ctx;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        float *slot = j->scratch + s * j->slot_floats;
        at_slot st = {-1, -1, -1, 0};
        int64_t b = s * j->nitems / j->nslots, e = (s + 1) * j->nitems / j->nslots;
        for (int64_t it = b; it < e; it++)
            item(j, it, slot, &st);
    }
}

/* Items [b, e) on the calling thread's slot: the whole pool claims the items with stealing (threadpool.c: a
 * contiguous run a thread first, so consecutive query blocks of a batch share the packed K), and a thread that
 * starts late or is preempted leaves its items to the others instead of holding the step. */
static void items_stealing(void *ctx, int64_t b, int64_t e, int thread)
{
    at_job *j = ctx;
    for (int64_t it = b; it < e; it++)
        item(j, it, j->scratch + thread * j->slot_floats, &j->slot[thread]);
}

/* A slot: the [QB, Sk] score tile, K^T's and V's panels (sized for the widest panels, NR_MAX). */
static int64_t slot_floats(const trtl_attn_geom *g)
{
    int64_t f = ((QB * g->Sk + 15) & ~(int64_t)15) + panels_floats(g->Sk, g->D, NR_MAX) +
                panels_floats(g->Dv, g->Sk, NR_MAX);
    return ((f + 15) & ~(int64_t)15) + 16; /* slots 64-byte aligned, never empty */
}

static int64_t max_slots(void) { return trtl_scratch_slots_all(MAX_SLOTS); }

static size_t attn_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_attn_geom g;
    if (trtl_attn_geom_init(n, in, &out[0].dims, &g) != TRTL_OK)
        return 0;
    return (size_t)(slot_floats(&g) * max_slots()) * sizeof(float) + 64;
}

static trtl_status attn_run(const trtl_kernel_args *a)
{
    at_job j;
    memset(&j, 0, sizeof j);
    TRTL_TRY(trtl_attn_geom_init(a->node, a->in, &a->out[0].dims, &j.g));
    const trtl_attn_geom *g = &j.g;
    if (g->nb == 0 || g->Sq == 0 || g->Dv == 0)
        return TRTL_OK;
    if (g->Sk == 0) { /* empty sums: zeros, as the unfused products give */
        memset(a->out[0].data, 0, sizeof(float) * (size_t)(g->nb * g->Sq * g->Dv));
        return TRTL_OK;
    }
    j.Q = a->in[0].data;
    j.K = a->in[1].data;
    j.V = a->in[2].data;
    j.M = g->has_mask ? a->in[3].data : NULL;
    j.Y = a->out[0].data;
    j.isa = trtl_cpu_has(TRTL_CPU_AVX512F)             ? ISA_AVX512
            : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? ISA_AVX2
                                                       : ISA_C;
    j.nr = panel_width(j.isa);
    j.slot_floats = slot_floats(g);
    int64_t have = (int64_t)((a->scratch_size > 64 ? a->scratch_size - 64 : 0) / sizeof(float)) / j.slot_floats;
    if (!a->scratch || have < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': attention.tiled got %zu bytes of scratch", a->node->name,
                          a->scratch_size);
    j.scratch = (float *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    /* smaller query blocks while there are fewer items than threads */
    int threads = trtl_threadpool_size(a->pool);
    j.qb = QB;
    while (j.qb > 8 && g->nb * ((g->Sq + j.qb - 1) / j.qb) < 2 * threads)
        j.qb /= 2;
    j.nqb = (g->Sq + j.qb - 1) / j.qb;
    j.nitems = g->nb * j.nqb;
    double flops = 2.0 * (double)g->Sq * (double)g->Sk * (double)(g->D + g->Dv) * (double)g->nb;
    int64_t want = (int64_t)(flops / MIN_ITEM_FLOPS);
    j.nslots = threads < have ? threads : have;
    if (j.nslots > j.nitems)
        j.nslots = j.nitems;
    if (j.nslots > want)
        j.nslots = want < 1 ? 1 : want;
    if (j.nslots > 1 && j.nslots == threads && threads <= MAX_SLOTS) {
        for (int s = 0; s < threads; s++)
            j.slot[s] = (at_slot){-1, -1, -1, 0};
        trtl_parallel_for(a->pool, j.nitems, 1, items_stealing, &j);
        return TRTL_OK;
    }
    trtl_parallel_for(a->pool, j.nslots, 1, slots_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_attention_tiled = {
    .name = "attention.tiled",
    .op = TRTL_OP_ATTENTION,
    .scratch = attn_scratch,
    .run = attn_run,
};
