/*
 * gemm_packed.c -- packing, microkernels and the block driver of trtlite's SGEMM (see
 * gemm_packed.h for the layouts).
 *
 * Microkernels: an R x (NV vectors) accumulator tile lives in registers for the whole depth block
 * (AVX2: up to 6 x 2 ymm = 12 accumulators + 2 B vectors + 1 broadcast; AVX-512: up to 12 x 2
 * zmm = 24 + 2 + 1).  Each depth step loads NV vectors of B and broadcasts R values of A.  The
 * tile bodies are always_inline functions whose R and NV are constants at every call site, so
 * GCC unrolls them fully and keeps the accumulators in registers (no spills: check with
 * `objdump -d` for vfmadd231ps and the absence of stack traffic in the loop).  Smaller R / NV
 * variants serve the bottom and right edges of C without wasted work beyond the last vector.
 *
 * The store of a tile: (+ C for a later depth block), then on the last block + row or column
 * bias, + residual, activation (RELU / CLIP / LEAKY_RELU in registers), one store.  A partial
 * last vector goes through masks (AVX-512) or a small buffer (AVX2: AMD cores run AVX2 masked
 * stores slowly).  Other activations are applied by the block driver over the block right after
 * its tiles are stored, while it is still in cache.
 */
#include <math.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/x86/gemm_packed.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/tr8_avx2.h"
#include "core/cpu.h"

#define AVX2_MR 6
#define AVX2_NV 2
#define AVX2_NR (8 * AVX2_NV)
#define AVX2_COLK_MAX 5 /* the AVX2 column-tail kernel's most columns (fewer than the 6 rows of a panel) */
#ifndef AVX512_MR
#define AVX512_MR 12 /* 8, 12 or 14 build (12 measured fastest) */
#endif
#define AVX512_NV 2
#define AVX512_NR (16 * AVX512_NV)
#ifndef PK_AHEAD_TILES
#define PK_AHEAD_TILES 2 /* packing tiles: source rows prefetched this many tiles ahead */
#endif
#ifndef PK_HINT
#define PK_HINT _MM_HINT_T1
#endif

/* Everything a microkernel call needs (one struct: the tiles are called through a table). */
typedef struct ukr_args {
    int64_t kc;
    const float *a, *b; /* packed A panel / B tile at the depth block */
    float *c;
    int64_t ldc;
    const float *row_bias, *col_bias, *res; /* at the tile; used on the last block only */
    int64_t ldr;
    int cols; /* valid columns, 1..NV*width */
    int rows; /* valid rows (the column-tail kernels only; the others have them as a constant) */
    int flags;
    int32_t act; /* fast activation or TRTL_ACT_NONE */
    float alpha, beta;
    /* row tiles: pf_lines cache lines to prefetch into L2, one a depth step, from line pf_col of the stream row at
     * pf; a stream row has pf_rl lines, rows are pf_rs bytes apart (pf_stream) */
    const char *pf;
    int64_t pf_col, pf_lines, pf_rl, pf_rs;
    /* packing tiles (trtl_gemm_block_pack's first row panel): B rows read from src (rows src_rs apart, at the
     * tile's first column) and stored into the tile at bw (== b) as they are used */
    const float *src;
    int64_t src_rs;
    float *bw;
    /* packing tiles with an input transform (trtl_gemm_block_pack_pre): each source row d is stored and used as
     * min(pre_hi, max(pre_lo, src * pre_s[d] + pre_t[d])) */
    const float *pre_s, *pre_t;
    float pre_lo, pre_hi;
} ukr_args;

typedef void (*ukr_fn)(const ukr_args *u);

/* A prefetch stream: `rows` rows of rl cache lines each from the 64-byte aligned `base`, rows rs bytes apart (a
 * contiguous block is one row). */
typedef struct pf_stream {
    const char *base;
    int64_t lines, rl, rs;
} pf_stream;

static pf_stream pf_stream_make(const void *p, int64_t rows, int64_t row_bytes, int64_t stride)
{
    pf_stream s = {NULL, 0, 1, 0};
    if (!p || rows < 1 || row_bytes < 1)
        return s;
    const uintptr_t a = (uintptr_t)p & ~(uintptr_t)63;
    s.base = (const char *)a;
    s.rl = ((int64_t)((uintptr_t)p - a) + row_bytes + 63) / 64;
    s.lines = rows * s.rl;
    s.rs = stride;
    return s;
}

/* Points u at lines [l0, l1) of stream s (none: s.base NULL). */
static void pf_share(ukr_args *u, const pf_stream *s, int64_t l0, int64_t l1)
{
    /* one-row streams (the common case) take no division: this runs for every tile call */
    const int64_t row = l0 < s->rl ? 0 : l0 / s->rl;
    u->pf = s->base ? s->base + row * s->rs : NULL;
    u->pf_col = l0 - row * s->rl;
    u->pf_lines = s->base ? l1 - l0 : 0;
    u->pf_rl = s->rl;
    u->pf_rs = s->rs;
}

/* One line of u's stream into L2; (row, col) moves to the next line. */
static inline __attribute__((always_inline)) void pf_line(const ukr_args *u, const char **row, int64_t *col)
{
    _mm_prefetch(*row + 64 * *col, _MM_HINT_T1);
    if (++*col == u->pf_rl) {
        *col = 0;
        *row += u->pf_rs;
    }
}

trtl_gemm_isa trtl_gemm_isa_best(void)
{
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA))
        return TRTL_GEMM_AVX512;
    if (trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA))
        return TRTL_GEMM_AVX2;
    return TRTL_GEMM_NONE;
}

int trtl_gemm_mr(trtl_gemm_isa isa) { return isa == TRTL_GEMM_AVX512 ? AVX512_MR : AVX2_MR; }
int trtl_gemm_nr(trtl_gemm_isa isa) { return isa == TRTL_GEMM_AVX512 ? AVX512_NR : AVX2_NR; }

/* Row r of the C tile (`bytes` of it from its first column) and, with `res`, of the residual into L1: the row
 * tiles issue one row a depth step over their first R steps.  C rows are ldc apart, so the hardware prefetcher
 * does not see them, and a tile over a map larger than L2 would otherwise wait on a miss per row at its store
 * (AVX2 and AVX-512 row tiles alike). */
static inline __attribute__((always_inline)) void pf_tile_row(const ukr_args *u, int r, const int bytes, int res)
{
    const char *cp = (const char *)(u->c + r * u->ldc);
    _mm_prefetch(cp, _MM_HINT_T0);
    _mm_prefetch(cp + bytes - 4, _MM_HINT_T0);
    if (bytes > 64)
        _mm_prefetch(cp + 64, _MM_HINT_T0);
    if (res) {
        const char *rp = (const char *)(u->res + r * u->ldr);
        _mm_prefetch(rp, _MM_HINT_T0);
        _mm_prefetch(rp + bytes - 4, _MM_HINT_T0);
        if (bytes > 64)
            _mm_prefetch(rp + 64, _MM_HINT_T0);
    }
}

/* ---- AVX2 ------------------------------------------------------------------------------------ */

/* The tile epilogue of one float (partial vectors): + C, + row bias, + column bias, + residual, activation. */
static inline float epi1(const ukr_args *u, float x, const float *cp, int r, int j)
{
    if (u->flags & TRTL_GEMM_ACC)
        x += *cp;
    if (u->flags & TRTL_GEMM_LAST) {
        if (u->row_bias)
            x += u->row_bias[r];
        if (u->col_bias)
            x += u->col_bias[j];
        if (u->res)
            x += u->res[r * u->ldr + j];
        if (u->act != TRTL_ACT_NONE)
            x = trtl_activation_eval(u->act, u->alpha, u->beta, x);
    }
    return x;
}

/* One fast activation over the whole R x NV tile (a constant act: trtl_act8's switch folds away). */
#define ACT_TILE8(A)                                                                                              \
    do {                                                                                                          \
        _Pragma("GCC unroll 12") for (int r = 0; r < R; r++) _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) \
            acc[r][v] = trtl_act8(acc[r][v], A, va, vb);                                                          \
    } while (0)

/* The epilogue over a whole tile of full vectors, each operand's test made once a tile rather than once a vector,
 * the epilogue's pointers read into locals first (the C stores may alias *u, so the compiler reloaded them for each
 * vector), the column bias loaded once for all rows.  The same additions in the same order as epi1 (+ C, + row
 * bias, + column bias, + residual, then the activation), so a partial tile's floats get the same results. */
__attribute__((target("avx2,fma"), always_inline)) static inline void epi_tile8(const ukr_args *u,
                                                                                  __m256 (*acc)[AVX2_NV],
                                                                                  const int R, const int NV)
{
    const int flags = u->flags;
    const float *c = u->c;
    const int64_t ldc = u->ldc;
    if (flags & TRTL_GEMM_ACC)
#pragma GCC unroll 12
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                acc[r][v] = _mm256_add_ps(acc[r][v], _mm256_loadu_ps(c + r * ldc + 8 * v));
    if (!(flags & TRTL_GEMM_LAST))
        return;
    const float *rb = u->row_bias, *cb = u->col_bias, *res = u->res;
    const int64_t ldr = u->ldr;
    const int32_t act = u->act;
    if (rb)
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            const __m256 x = _mm256_broadcast_ss(rb + r);
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                acc[r][v] = _mm256_add_ps(acc[r][v], x);
        }
    if (cb) {
        __m256 bv[AVX2_NV];
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            bv[v] = _mm256_loadu_ps(cb + 8 * v);
#pragma GCC unroll 12
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                acc[r][v] = _mm256_add_ps(acc[r][v], bv[v]);
    }
    if (res)
#pragma GCC unroll 12
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                acc[r][v] = _mm256_add_ps(acc[r][v], _mm256_loadu_ps(res + r * ldr + 8 * v));
    if (act == TRTL_ACT_NONE)
        return;
    const __m256 va = _mm256_set1_ps(u->alpha), vb = _mm256_set1_ps(u->beta);
    switch (act) {
    case TRTL_ACT_RELU: ACT_TILE8(TRTL_ACT_RELU); break;
    case TRTL_ACT_LEAKY_RELU: ACT_TILE8(TRTL_ACT_LEAKY_RELU); break;
    case TRTL_ACT_CLIP: ACT_TILE8(TRTL_ACT_CLIP); break;
    default: ACT_TILE8(act); break;
    }
}
#undef ACT_TILE8

/* The store of an R x NV ymm tile (a partial last vector through a buffer). */
__attribute__((target("avx2,fma"), always_inline)) static inline void store256(const ukr_args *u,
                                                                              __m256 (*acc)[AVX2_NV], const int R,
                                                                              const int NV)
{
    float *c = u->c;
    const int64_t ldc = u->ldc;
    if (u->cols == 8 * NV) {
        epi_tile8(u, acc, R, NV);
#pragma GCC unroll 12
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
        return;
    }
    /* partial last vector: through a buffer */
    float t[AVX512_MR][AVX2_NR];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            _mm256_storeu_ps(&t[r][8 * v], acc[r][v]);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < u->cols; j++)
            c[r * ldc + j] = epi1(u, t[r][j], c + r * ldc + j, r, j);
}

/* R x NV ymm tile; A panels have AS rows, B tiles BS columns (the AVX2 layout, or the AVX-512
 * layout for the 8-column right edge of a tile). */
__attribute__((target("avx2,fma"), always_inline)) static inline void ukr_avx2(const ukr_args *u, const int R,
                                                                                const int NV, const int AS,
                                                                                const int BS, const int PK)
{
    __m256 acc[AVX512_MR][AVX2_NV];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[r][v] = _mm256_setzero_ps();
    const float *a = u->a, *b = u->b, *sp = u->src, *ps = u->pre_s, *pt = u->pre_t;
    float *bw = u->bw;
    const int64_t srs = u->src_rs;
    const __m256 plo = _mm256_set1_ps(u->pre_lo), phi = _mm256_set1_ps(u->pre_hi);
    (void)ps, (void)pt, (void)plo, (void)phi;
#define UKR256_STEP                                                                                               \
    do {                                                                                                          \
        __m256 b0, b1;                                                                                            \
        if (PK) { /* the source row's 16 floats, into the tile too; the row PK_AHEAD_TILES tiles on into L2 */   \
            b0 = _mm256_loadu_ps(sp);                                                                             \
            b1 = _mm256_loadu_ps(sp + 8);                                                                         \
            if (PK == 2) { /* the input transform (min / max keep NaN: theirs is the 2nd operand) */             \
                const __m256 s_ = _mm256_broadcast_ss(ps++), t_ = _mm256_broadcast_ss(pt++);                      \
                b0 = _mm256_min_ps(phi, _mm256_max_ps(plo, _mm256_fmadd_ps(b0, s_, t_)));                         \
                b1 = _mm256_min_ps(phi, _mm256_max_ps(plo, _mm256_fmadd_ps(b1, s_, t_)));                         \
            }                                                                                                     \
            _mm256_storeu_ps(bw, b0);                                                                             \
            _mm256_storeu_ps(bw + 8, b1);                                                                         \
            _mm_prefetch((const char *)(sp + PK_AHEAD_TILES * BS), PK_HINT);                                        \
            sp += srs;                                                                                            \
            bw += BS;                                                                                             \
        } else {                                                                                                  \
            b0 = _mm256_loadu_ps(b);                                                                              \
            b1 = NV > 1 ? _mm256_loadu_ps(b + 8) : b0;                                                            \
        }                                                                                                         \
        _Pragma("GCC unroll 12") for (int r = 0; r < R; r++)                                                      \
        {                                                                                                         \
            __m256 ar = _mm256_broadcast_ss(a + r);                                                               \
            acc[r][0] = _mm256_fmadd_ps(ar, b0, acc[r][0]);                                                       \
            if (NV > 1)                                                                                           \
                acc[r][1] = _mm256_fmadd_ps(ar, b1, acc[r][1]);                                                   \
        }                                                                                                         \
        a += AS;                                                                                                  \
        b += BS;                                                                                                  \
    } while (0)
    int64_t k = u->kc;
    /* the C tile's rows (and the residual's on the last block) first, then the caller's prefetch stream, one line a
     * depth step (as the AVX-512 tiles) */
    const int pre_res = (u->flags & TRTL_GEMM_LAST) && u->res;
    if (k >= R) {
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            pf_tile_row(u, r, 32 * NV, pre_res);
            UKR256_STEP;
        }
        k -= R;
    }
    const char *pf = u->pf;
    int64_t pf_col = u->pf_col;
    for (int64_t pf_n = u->pf_lines; k > 0 && pf_n > 0; k--, pf_n--) {
        pf_line(u, &pf, &pf_col);
        UKR256_STEP;
    }
    for (; k >= 4; k -= 4) {
        UKR256_STEP;
        UKR256_STEP;
        UKR256_STEP;
        UKR256_STEP;
    }
    for (; k > 0; k--)
        UKR256_STEP;
#undef UKR256_STEP
    store256(u, acc, R, NV);
}

#define AVX2_FN(R, V)                                                                                             \
    __attribute__((target("avx2,fma"))) static void ukr_avx2_##R##_##V(const ukr_args *u)                          \
    {                                                                                                             \
        ukr_avx2(u, R, V, AVX2_MR, AVX2_NR, 0);                                                                   \
    }
/* the packing tiles of the first row panel (whole tiles) */
#define AVX2_PK_FN(R, V)                                                                                          \
    __attribute__((target("avx2,fma"))) static void ukr_avx2_pk_##R(const ukr_args *u)                            \
    {                                                                                                             \
        ukr_avx2(u, R, 2, AVX2_MR, AVX2_NR, 1);                                                                   \
    }
#define AVX2_ROWS(X, V) X(1, V) X(2, V) X(3, V) X(4, V) X(5, V) X(6, V)
AVX2_ROWS(AVX2_FN, 1)
AVX2_ROWS(AVX2_FN, 2)
#define AVX2_PAIR(R, V) {ukr_avx2_##R##_1, ukr_avx2_##R##_2},
static const ukr_fn avx2_tab[AVX2_MR][AVX2_NV] = {AVX2_ROWS(AVX2_PAIR, 0)};
AVX2_ROWS(AVX2_PK_FN, 0)
#define AVX2_PK_ENTRY(R, V) ukr_avx2_pk_##R,
static const ukr_fn avx2_pk_tab[AVX2_MR] = {AVX2_ROWS(AVX2_PK_ENTRY, 0)};
/* the packing tiles with the input transform (trtl_gemm_block_pack_pre) */
#define AVX2_PKT_FN(R, V)                                                                                         \
    __attribute__((target("avx2,fma"))) static void ukr_avx2_pkt_##R(const ukr_args *u)                           \
    {                                                                                                             \
        ukr_avx2(u, R, 2, AVX2_MR, AVX2_NR, 2);                                                                   \
    }
AVX2_ROWS(AVX2_PKT_FN, 0)
#define AVX2_PKT_ENTRY(R, V) ukr_avx2_pkt_##R,
static const ukr_fn avx2_pkt_tab[AVX2_MR] = {AVX2_ROWS(AVX2_PKT_ENTRY, 0)};

/* gemv512's AVX2 twin. */
__attribute__((target("avx2,fma"), always_inline)) static inline void gemv256(const ukr_args *u, const int NV)
{
    __m256 s[4][2], acc[AVX512_MR][AVX2_NV];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        s[i][0] = s[i][1] = _mm256_setzero_ps();
    const float *a = u->a, *b = u->b;
    int64_t k = u->kc;
    for (; k >= 4; k -= 4, a += 4, b += 4 * AVX2_NR)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m256 x = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                s[i][v] = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + i * AVX2_NR + 8 * v), s[i][v]);
        }
    for (; k > 0; k--, a++, b += AVX2_NR) {
        __m256 x = _mm256_broadcast_ss(a);
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            s[0][v] = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + 8 * v), s[0][v]);
    }
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
        acc[0][v] = _mm256_add_ps(_mm256_add_ps(s[0][v], s[1][v]), _mm256_add_ps(s[2][v], s[3][v]));
    store256(u, acc, 1, NV);
}

__attribute__((target("avx2,fma"))) static void gemv256_1(const ukr_args *u) { gemv256(u, 1); }
__attribute__((target("avx2,fma"))) static void gemv256_2(const ukr_args *u) { gemv256(u, 2); }

/* ---- AVX-512 --------------------------------------------------------------------------------- */

#define ACT_TILE16(A)                                                                                             \
    do {                                                                                                          \
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) \
            acc[r][v] = trtl_act16(acc[r][v], A, va, vb);                                                         \
    } while (0)

/* The store of an R x NV zmm tile (vectors masked to the valid columns), its epilogue as epi_tile8's: each operand
 * tested once a tile, the pointers in locals, the column bias loaded once, the same additions in the same order
 * (+ C, + row bias, + column bias, + residual, activation). */
__attribute__((target("avx512f"), always_inline)) static inline void store512(const ukr_args *u,
                                                                             __m512 (*acc)[AVX512_NV], const int R,
                                                                             const int NV)
{
    float *c = u->c;
    const int64_t ldc = u->ldc;
    const int flags = u->flags;
    __mmask16 mv[AVX512_NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
        const int n = u->cols - 16 * v; /* columns in vector v */
        mv[v] = (__mmask16)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1u);
    }
    if (flags & TRTL_GEMM_ACC)
#pragma GCC unroll 16
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_maskz_loadu_ps(mv[v], c + r * ldc + 16 * v));
    if (flags & TRTL_GEMM_LAST) {
        const float *rb = u->row_bias, *cb = u->col_bias, *res = u->res;
        const int64_t ldr = u->ldr;
        const int32_t act = u->act;
        if (rb)
#pragma GCC unroll 16
            for (int r = 0; r < R; r++) {
                const __m512 x = _mm512_set1_ps(rb[r]);
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++)
                    acc[r][v] = _mm512_add_ps(acc[r][v], x);
            }
        if (cb) {
            __m512 bv[AVX512_NV];
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                bv[v] = _mm512_maskz_loadu_ps(mv[v], cb + 16 * v);
#pragma GCC unroll 16
            for (int r = 0; r < R; r++)
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++)
                    acc[r][v] = _mm512_add_ps(acc[r][v], bv[v]);
        }
        if (res)
#pragma GCC unroll 16
            for (int r = 0; r < R; r++)
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++)
                    acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_maskz_loadu_ps(mv[v], res + r * ldr + 16 * v));
        if (act != TRTL_ACT_NONE) {
            const __m512 va = _mm512_set1_ps(u->alpha), vb = _mm512_set1_ps(u->beta);
            switch (act) {
            case TRTL_ACT_RELU: ACT_TILE16(TRTL_ACT_RELU); break;
            case TRTL_ACT_LEAKY_RELU: ACT_TILE16(TRTL_ACT_LEAKY_RELU); break;
            case TRTL_ACT_CLIP: ACT_TILE16(TRTL_ACT_CLIP); break;
            default: ACT_TILE16(act); break;
            }
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mv[v], acc[r][v]);
}
#undef ACT_TILE16

__attribute__((target("avx512f"), always_inline)) static inline void ukr_avx512(const ukr_args *u, const int R,
                                                                                 const int NV, const int PK)
{
    __m512 acc[AVX512_MR][AVX512_NV];
#pragma GCC unroll 16
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    const float *a = u->a, *b = u->b, *sp = u->src, *ps = u->pre_s, *pt = u->pre_t;
    float *bw = u->bw;
    const int64_t srs = u->src_rs;
    const __m512 plo = _mm512_set1_ps(u->pre_lo), phi = _mm512_set1_ps(u->pre_hi);
    (void)ps, (void)pt, (void)plo, (void)phi;
    int64_t k = u->kc;
#define UKR512_STEP                                                                                               \
    do {                                                                                                          \
        __m512 bv[AVX512_NV];                                                                                     \
        if (PK) { /* as ukr_avx2's packing step */                                                               \
            __m512 s_ = plo, t_ = plo;                                                                            \
            if (PK == 2) {                                                                                        \
                s_ = _mm512_set1_ps(*ps++);                                                                       \
                t_ = _mm512_set1_ps(*pt++);                                                                       \
            }                                                                                                     \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                                \
                bv[v] = _mm512_loadu_ps(sp + 16 * v);                                                             \
                if (PK == 2)                                                                                      \
                    bv[v] = _mm512_min_ps(phi, _mm512_max_ps(plo, _mm512_fmadd_ps(bv[v], s_, t_)));               \
                _mm512_storeu_ps(bw + 16 * v, bv[v]);                                                             \
                _mm_prefetch((const char *)(sp + PK_AHEAD_TILES * AVX512_NR + 16 * v), PK_HINT);                  \
            }                                                                                                     \
            sp += srs;                                                                                            \
            bw += AVX512_NR;                                                                                      \
        } else {                                                                                                  \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(b + 16 * v);             \
        }                                                                                                         \
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++)                                                      \
        {                                                                                                         \
            __m512 ar = _mm512_set1_ps(a[r]);                                                                     \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]); \
        }                                                                                                         \
        a += AVX512_MR;                                                                                           \
        b += AVX512_NR;                                                                                           \
    } while (0)
    /* the first R depth steps prefetch the C tile's rows (pf_tile_row) */
    const int pre_res = (u->flags & TRTL_GEMM_LAST) && u->res;
    if (k >= R) {
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
            pf_tile_row(u, r, 64 * NV, pre_res);
            UKR512_STEP;
        }
        k -= R;
    }
    /* the caller's prefetch stream (the operand block it reads next), one line a depth step */
    const char *pf = u->pf;
    int64_t pf_n = u->pf_lines, pf_col = u->pf_col;
    for (; k > 0 && pf_n > 0; k--, pf_n--) {
        pf_line(u, &pf, &pf_col);
        UKR512_STEP;
    }
    for (; k > 0; k--)
        UKR512_STEP;
#undef UKR512_STEP
    store512(u, acc, R, NV);
}

#define AVX512_FN(R, V)                                                                                           \
    __attribute__((target("avx512f"))) static void ukr_avx512_##R##_##V(const ukr_args *u) { ukr_avx512(u, R, V, 0); }
#define AVX512_PK_FN(R, V)                                                                                        \
    __attribute__((target("avx512f"))) static void ukr_avx512_pk_##R(const ukr_args *u) { ukr_avx512(u, R, 2, 1); }
/* the right edge of at most 8 columns: one ymm per row on the AVX-512 layout */
#define AVX512_HALF_FN(R, V)                                                                                      \
    __attribute__((target("avx2,fma"))) static void ukr_avx512_##R##_0(const ukr_args *u)                         \
    {                                                                                                             \
        ukr_avx2(u, R, 1, AVX512_MR, AVX512_NR, 0);                                                               \
    }
#define AVX512_ROWS8(X, V) X(1, V) X(2, V) X(3, V) X(4, V) X(5, V) X(6, V) X(7, V) X(8, V)
#if AVX512_MR == 8
#define AVX512_ROWS(X, V) AVX512_ROWS8(X, V)
#elif AVX512_MR == 12
#define AVX512_ROWS(X, V) AVX512_ROWS8(X, V) X(9, V) X(10, V) X(11, V) X(12, V)
#elif AVX512_MR == 14
#define AVX512_ROWS(X, V) AVX512_ROWS8(X, V) X(9, V) X(10, V) X(11, V) X(12, V) X(13, V) X(14, V)
#else
#error "AVX512_MR must be 8, 12 or 14"
#endif
AVX512_ROWS(AVX512_HALF_FN, 0)
AVX512_ROWS(AVX512_FN, 1)
AVX512_ROWS(AVX512_FN, 2)
#define AVX512_TRIPLE(R, V) {ukr_avx512_##R##_0, ukr_avx512_##R##_1, ukr_avx512_##R##_2},
/* [rows - 1][0: <= 8 columns, 1: <= 16, 2: <= 32] */
static const ukr_fn avx512_tab[AVX512_MR][AVX512_NV + 1] = {AVX512_ROWS(AVX512_TRIPLE, 0)};
AVX512_ROWS(AVX512_PK_FN, 0)
#define AVX512_PK_ENTRY(R, V) ukr_avx512_pk_##R,
static const ukr_fn avx512_pk_tab[AVX512_MR] = {AVX512_ROWS(AVX512_PK_ENTRY, 0)};
#define AVX512_PKT_FN(R, V)                                                                                       \
    __attribute__((target("avx512f"))) static void ukr_avx512_pkt_##R(const ukr_args *u) { ukr_avx512(u, R, 2, 2); }
AVX512_ROWS(AVX512_PKT_FN, 0)
#define AVX512_PKT_ENTRY(R, V) ukr_avx512_pkt_##R,
static const ukr_fn avx512_pkt_tab[AVX512_MR] = {AVX512_ROWS(AVX512_PKT_ENTRY, 0)};

/* One plain row of A (stride 1) times NV vectors of a tile: the depth is split over 4
 * accumulator sets so the FMA latency does not bound this memory-bound product. */
__attribute__((target("avx512f"), always_inline)) static inline void gemv512(const ukr_args *u, const int NV)
{
    __m512 s[4][2], acc[AVX512_MR][AVX512_NV];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        s[i][0] = s[i][1] = _mm512_setzero_ps();
    const float *a = u->a, *b = u->b;
    int64_t k = u->kc;
    for (; k >= 4; k -= 4, a += 4, b += 4 * AVX512_NR)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m512 x = _mm512_set1_ps(a[i]);
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++)
                s[i][v] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + i * AVX512_NR + 16 * v), s[i][v]);
        }
    for (; k > 0; k--, a++, b += AVX512_NR) {
        __m512 x = _mm512_set1_ps(a[0]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            s[0][v] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + 16 * v), s[0][v]);
    }
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
        acc[0][v] = _mm512_add_ps(_mm512_add_ps(s[0][v], s[1][v]), _mm512_add_ps(s[2][v], s[3][v]));
    store512(u, acc, 1, NV);
}

__attribute__((target("avx512f"))) static void gemv512_1(const ukr_args *u) { gemv512(u, 1); }
__attribute__((target("avx512f"))) static void gemv512_2(const ukr_args *u) { gemv512(u, 2); }

/* The last T (< 16) columns of a tile, rows in the vector: acc[c] holds rows 0..rows-1 of column c
 * (one masked load of the A panel's mr floats and T broadcast B values per depth step).  A row
 * tile would spend mr FMAs per step on these columns however few they are (a 7x7 map has 49 =
 * 3 x 16 + 1 pixels: its last column cost as much as 8 or 16); this costs T.  Few columns give
 * few independent accumulators, which FMA latency bounds: up to 4 row panels' tails are run
 * together (block_tiles queues them) rather than splitting the depth over several accumulator
 * sets, as until session 16 (the split sums rounded those columns differently).
 * The results are stored one float at a time through epi1 (a transposed tile; the columns are
 * few and the store happens once per depth block). */
/* Panels a column-tail call takes together for T columns: enough independent accumulators (panels x T) to cover
 * the FMA latency while each output still sums its depth in order. */
#define COLK_PANELS(T) ((T) >= 8 ? 1 : (T) >= 4 ? 2 : 4)

__attribute__((target("avx512f"), always_inline)) static inline void colk512(const ukr_args *us, const int np,
                                                                            const int T)
{
    /* one accumulator a (panel, column), the depth in order: every output sums its products in the order the row
     * tiles do (a split of the depth over several accumulator sets, as until session 16, made these columns round
     * differently from their neighbours: tests/test_position_invariance.py); the np panels (same B tile, their own
     * A panels and C rows) give the independent chains instead */
    enum { P_MAX = 4 };
    __m512 acc[P_MAX][11];
#pragma GCC unroll 4
    for (int q = 0; q < np; q++)
#pragma GCC unroll 11
        for (int c = 0; c < T; c++)
            acc[q][c] = _mm512_setzero_ps();
    const float *b = us[0].b;
    for (int64_t k = 0, off = 0; k < us[0].kc; k++, b += AVX512_NR, off += AVX512_MR) {
        __m512 bc[11];
#pragma GCC unroll 11
        for (int c = 0; c < T; c++)
            bc[c] = _mm512_set1_ps(b[c]);
#pragma GCC unroll 4
        for (int q = 0; q < np; q++) {
            const __m512 av = _mm512_maskz_loadu_ps((__mmask16)((1u << us[q].rows) - 1u), us[q].a + off);
#pragma GCC unroll 11
            for (int c = 0; c < T; c++)
                acc[q][c] = _mm512_fmadd_ps(av, bc[c], acc[q][c]);
        }
    }
    float t[16];
    for (int q = 0; q < np; q++)
#pragma GCC unroll 11
        for (int c = 0; c < T; c++) {
            _mm512_storeu_ps(t, acc[q][c]);
            for (int r = 0; r < us[q].rows; r++) {
                float *cp = us[q].c + r * us[q].ldc + c;
                *cp = epi1(&us[q], t[r], cp, r, c);
            }
        }
}

typedef void (*colk_fn)(const ukr_args *us, int np);
#define COLK_FN(T)                                                                                                \
    __attribute__((target("avx512f"))) static void colk512_##T(const ukr_args *us, int np)                        \
    {                                                                                                             \
        if (np == COLK_PANELS(T)) /* the whole group: np a constant */                                            \
            colk512(us, COLK_PANELS(T), T);                                                                       \
        else                                                                                                      \
            colk512(us, np, T);                                                                                   \
    }
COLK_FN(1) COLK_FN(2) COLK_FN(3) COLK_FN(4) COLK_FN(5) COLK_FN(6) COLK_FN(7) COLK_FN(8) COLK_FN(9) COLK_FN(10)
COLK_FN(11)
/* [columns - 1] */
static const colk_fn colk512_tab[] = {colk512_1, colk512_2, colk512_3, colk512_4,  colk512_5, colk512_6,
                                      colk512_7, colk512_8, colk512_9, colk512_10, colk512_11};
#define COLK_MAX ((int)(sizeof colk512_tab / sizeof colk512_tab[0]))

/* The same on AVX2 (session 17): tiles of fewer columns than rows (17 x 17 maps have 289 = 18 x 16 + 1 pixels), which
 * the 6 x 8 row tile ran at the cost of 8 columns (3 cycles a depth step for 1 column: 4.5% of a 7x1 17x17 layer's
 * time); here the np panels' T columns take np * T FMAs a step.  The A panel's 6 floats a step by a masked load (an
 * unmasked one would read past the last panel's end). */
static const int32_t colk_lanes8[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
__attribute__((target("avx2,fma"), always_inline)) static inline void colk256(const ukr_args *us, const int np,
                                                                               const int T)
{
    enum { P_MAX = 4 };
    __m256 acc[P_MAX][AVX2_COLK_MAX];
    __m256i m[P_MAX] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256()};
#pragma GCC unroll 4
    for (int q = 0; q < np; q++) {
        m[q] = _mm256_loadu_si256((const __m256i *)(colk_lanes8 + 8 - us[q].rows));
#pragma GCC unroll 5
        for (int c = 0; c < T; c++)
            acc[q][c] = _mm256_setzero_ps();
    }
    const float *b = us[0].b;
    for (int64_t k = 0, off = 0; k < us[0].kc; k++, b += AVX2_NR, off += AVX2_MR) {
        __m256 bc[AVX2_COLK_MAX];
#pragma GCC unroll 5
        for (int c = 0; c < T; c++)
            bc[c] = _mm256_broadcast_ss(b + c);
#pragma GCC unroll 4
        for (int q = 0; q < np; q++) {
            const __m256 av = _mm256_maskload_ps(us[q].a + off, m[q]);
#pragma GCC unroll 5
            for (int c = 0; c < T; c++)
                acc[q][c] = _mm256_fmadd_ps(av, bc[c], acc[q][c]);
        }
    }
    float t[8];
    for (int q = 0; q < np; q++)
#pragma GCC unroll 5
        for (int c = 0; c < T; c++) {
            _mm256_storeu_ps(t, acc[q][c]);
            for (int r = 0; r < us[q].rows; r++) {
                float *cp = us[q].c + r * us[q].ldc + c;
                *cp = epi1(&us[q], t[r], cp, r, c);
            }
        }
}

#define COLK256_FN(T)                                                                                             \
    __attribute__((target("avx2,fma"))) static void colk256_##T(const ukr_args *us, int np)                       \
    {                                                                                                             \
        if (np == COLK_PANELS(T))                                                                                 \
            colk256(us, COLK_PANELS(T), T);                                                                       \
        else                                                                                                      \
            colk256(us, np, T);                                                                                   \
    }
COLK256_FN(1) COLK256_FN(2) COLK256_FN(3) COLK256_FN(4) COLK256_FN(5)
static const colk_fn colk256_tab[AVX2_COLK_MAX] = {colk256_1, colk256_2, colk256_3, colk256_4, colk256_5};

/* The column tails of consecutive row panels, run together (colk512 / colk256) once COLK_PANELS of them wait, or at
 * the end of the block. */
typedef struct colk_queue {
    ukr_args u[4];
    int n, avx2;
} colk_queue;

static void colk_flush(colk_queue *q)
{
    if (q->n && q->avx2)
        colk256_tab[q->u[0].cols - 1](q->u, q->n);
    else if (q->n) /* (two calls: UBSan's object-size check took `(avx2 ? colk256_tab : colk512_tab)[i]` for a
                    * read of the 5-entry table and reported colk512_tab's entries 6..11) */
        colk512_tab[q->u[0].cols - 1](q->u, q->n);
    q->n = 0;
}

static void colk_push(colk_queue *q, const ukr_args *u, int avx2)
{
    if (q->n && (q->u[0].cols != u->cols || q->avx2 != avx2))
        colk_flush(q);
    q->avx2 = avx2;
    q->u[q->n++] = *u;
    if (q->n == COLK_PANELS(u->cols))
        colk_flush(q);
}

/* ---- packing --------------------------------------------------------------------------------- */

int64_t trtl_gemm_packed_a_size(trtl_gemm_isa isa, int64_t M, int64_t D)
{
    int64_t mr = trtl_gemm_mr(isa);
    return (M + mr - 1) / mr * mr * D;
}

/* Rows [r0, r0 + 4) of a panel of mr rows from rows of contiguous depth (cs == 1): 4 x 4 blocks
 * transposed in SSE registers (a row of the block becomes one depth step's 4 values).  Packing is
 * on every call for the row GEMMs (fully connected), a scalar loop cost as much as one 32-column tile's
 * multiply; this is about 3x faster. */
static void pack_a_rows4(const float *src, int64_t rs, int64_t D, int64_t mr, float *panel)
{
    int64_t d = 0;
    for (; d + 4 <= D; d += 4) {
        __m128 r0 = _mm_loadu_ps(src + d), r1 = _mm_loadu_ps(src + rs + d), r2 = _mm_loadu_ps(src + 2 * rs + d),
               r3 = _mm_loadu_ps(src + 3 * rs + d);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(panel + d * mr, r0);
        _mm_storeu_ps(panel + (d + 1) * mr, r1);
        _mm_storeu_ps(panel + (d + 2) * mr, r2);
        _mm_storeu_ps(panel + (d + 3) * mr, r3);
    }
    for (; d < D; d++)
        for (int64_t r = 0; r < 4; r++)
            panel[d * mr + r] = src[r * rs + d];
}

/* Two rows (the rest of an AVX2 6-row panel after pack_a_rows4): pairs interleaved 4 depths at a time, each pair
 * one 8-byte store (the scalar loop it replaces stored a float at a time, a third of the rows of every panel). */
static void pack_a_rows2(const float *src, int64_t rs, int64_t D, int64_t mr, float *panel)
{
    int64_t d = 0;
    for (; d + 4 <= D; d += 4) {
        const __m128 r0 = _mm_loadu_ps(src + d), r1 = _mm_loadu_ps(src + rs + d);
        const __m128 lo = _mm_unpacklo_ps(r0, r1), hi = _mm_unpackhi_ps(r0, r1);
        _mm_storel_pi((__m64 *)(panel + d * mr), lo);
        _mm_storeh_pi((__m64 *)(panel + (d + 1) * mr), lo);
        _mm_storel_pi((__m64 *)(panel + (d + 2) * mr), hi);
        _mm_storeh_pi((__m64 *)(panel + (d + 3) * mr), hi);
    }
    for (; d < D; d++) {
        panel[d * mr] = src[d];
        panel[d * mr + 1] = src[rs + d];
    }
}

/* Whether M rows take the split-tail layout (trtl_gemm_pack_a_split): AVX2 only (the AVX-512 12-row tiles were
 * not measured with it), more than one panel, a last panel of 1..3 rows. */
static int split_tail(trtl_gemm_isa isa, int64_t M)
{
    return isa == TRTL_GEMM_AVX2 && M > AVX2_MR && M % AVX2_MR != 0 && M % AVX2_MR <= 3;
}

/* Panel p of the P = ceil(M / mr) panels of M rows: its first row and rows; split: the last two panels share the
 * last mr + M % mr rows (the first one the larger half). */
static void panel_span(int64_t mr, int64_t M, int64_t P, int split, int64_t p, int64_t *r0, int *rows)
{
    if (split && p >= P - 2) {
        const int64_t base = (P - 2) * mr, left = M - base, h1 = (left + 1) / 2;
        *r0 = p == P - 2 ? base : base + h1;
        *rows = (int)(p == P - 2 ? h1 : left - h1);
        return;
    }
    *r0 = p * mr;
    *rows = (int)(M - *r0 < mr ? M - *r0 : mr);
}

/* Rows of contiguous depth into panels of mr floats a depth step (split: panel_span's split tail). */
static void pack_a_contig(int64_t mr, const float *src, int64_t rs, int64_t M, int64_t D, int split, float *dst)
{
    const int64_t P = (M + mr - 1) / mr;
    for (int64_t p = 0; p < P; p++) {
        float *panel = dst + p * mr * D;
        int64_t r0;
        int rows;
        panel_span(mr, M, P, split, p, &r0, &rows);
        int r = 0;
        for (; r + 4 <= rows; r += 4)
            pack_a_rows4(src + (r0 + r) * rs, rs, D, mr, panel + r);
        for (; r + 2 <= rows; r += 2)
            pack_a_rows2(src + (r0 + r) * rs, rs, D, mr, panel + r);
        for (; r < rows; r++) {
            const float *row = src + (r0 + r) * rs;
            for (int64_t d = 0; d < D; d++)
                panel[d * mr + r] = row[d];
        }
    }
}

void trtl_gemm_pack_a_split(trtl_gemm_isa isa, const float *src, int64_t rs, int64_t M, int64_t D, float *dst)
{
    pack_a_contig(trtl_gemm_mr(isa), src, rs, M, D, split_tail(isa, M), dst);
}

void trtl_gemm_pack_a(trtl_gemm_isa isa, const float *src, int64_t rs, int64_t cs, int64_t M, int64_t D, float *dst)
{
    const int64_t mr = trtl_gemm_mr(isa);
    if (cs == 1) {
        pack_a_contig(mr, src, rs, M, D, 0, dst);
        return;
    }
    if (rs == 1) { /* stored transposed ([D][M], e.g. matrix_multiply's TRANSPOSE A): a panel's depth row is
                    * contiguous; the source is read row after row (sequentially) */
        for (int64_t d = 0; d < D; d++) {
            const float *row = src + d * cs;
            for (int64_t p = 0; p * mr < M; p++) {
                const int64_t rows = M - p * mr < mr ? M - p * mr : mr;
                float *o = dst + p * mr * D + d * mr;
                if (rows == AVX2_MR && mr == AVX2_MR) /* constant sizes: inlined vector copies */
                    memcpy(o, row + p * mr, AVX2_MR * sizeof(float));
                else if (rows == AVX512_MR && mr == AVX512_MR)
                    memcpy(o, row + p * mr, AVX512_MR * sizeof(float));
                else
                    for (int64_t r = 0; r < rows; r++)
                        o[r] = row[p * mr + r];
            }
        }
        return;
    }
    for (int64_t p = 0; p * mr < M; p++) {
        float *panel = dst + p * mr * D;
        for (int64_t r = 0; r < mr && p * mr + r < M; r++) {
            const float *row = src + (p * mr + r) * rs;
            for (int64_t d = 0; d < D; d++)
                panel[d * mr + r] = row[d * cs];
        }
    }
}

__attribute__((target("avx2,fma"))) void trtl_gemm_pack_b_row(trtl_gemm_isa isa, const float *row, int64_t N,
                                                               float *dst, int64_t tile_stride)
{
    const int64_t nr = trtl_gemm_nr(isa);
    int64_t j = 0;
    for (; j + nr <= N; j += nr, dst += tile_stride)
        for (int64_t i = 0; i < nr; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_loadu_ps(row + j + i));
    if (j < N) {
        int64_t i = 0;
        for (; j + i + 8 <= N; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_loadu_ps(row + j + i));
        for (; j + i < N; i++)
            dst[i] = row[j + i];
        for (; i < nr; i++)
            dst[i] = 0.0f;
    }
}

/* trtl_gemm_pack_b of a B stored transposed (rs == 1: column n is the contiguous row src + n*cs, e.g.
 * matrix_multiply's TRANSPOSE B): 8 columns x 8 depths at a time through the 8x8 register transpose, the depth
 * tail and the last partial group of columns scalar (columns past N zero). */
__attribute__((target("avx2"))) static void pack_b_cols(trtl_gemm_isa isa, const float *src, int64_t cs, int64_t kc,
                                                         int64_t N, float *dst, int64_t tile_stride)
{
    const int64_t nr = trtl_gemm_nr(isa);
    for (int64_t t = 0; t * nr < N; t++)
        for (int64_t i0 = 0; i0 < nr; i0 += 8) {
            float *o = dst + t * tile_stride + i0;
            const int64_t n = t * nr + i0;
            int64_t d = 0;
            if (n + 8 <= N)
                for (; d + 8 <= kc; d += 8) {
                    __m256 r[8];
                    for (int q = 0; q < 8; q++)
                        r[q] = _mm256_loadu_ps(src + (n + q) * cs + d);
                    trtl_tr8_avx2(r);
                    for (int q = 0; q < 8; q++)
                        _mm256_storeu_ps(o + (d + q) * nr, r[q]);
                }
            for (; d < kc; d++)
                for (int64_t q = 0; q < 8; q++)
                    o[d * nr + q] = n + q < N ? src[(n + q) * cs + d] : 0.0f;
        }
}

void trtl_gemm_pack_b(trtl_gemm_isa isa, const float *src, int64_t rs, int64_t cs, int64_t kc, int64_t N, float *dst,
                      int64_t tile_stride)
{
    const int64_t nr = trtl_gemm_nr(isa);
    if (cs == 1) {
        for (int64_t d = 0; d < kc; d++)
            trtl_gemm_pack_b_row(isa, src + d * rs, N, dst + d * nr, tile_stride);
        return;
    }
    if (rs == 1) {
        pack_b_cols(isa, src, cs, kc, N, dst, tile_stride);
        return;
    }
    /* column by column (a transposed source is then read along its rows) */
    for (int64_t t = 0; t * nr < N; t++)
        for (int64_t i = 0; i < nr; i++) {
            float *o = dst + t * tile_stride + i;
            const int64_t n = t * nr + i;
            for (int64_t d = 0; d < kc; d++)
                o[d * nr] = n < N ? src[d * rs + n * cs] : 0.0f;
        }
}

/* ---- block driver ---------------------------------------------------------------------------- */

/* Pointers of the tile at row i, column j (u's other fields are set by the caller). */
static void at_tile(ukr_args *u, const trtl_gemm_epi *e, int64_t i, int64_t j, float *c, int64_t ldc)
{
    u->c = c + i * ldc + j;
    u->row_bias = e && e->row_bias ? e->row_bias + i : NULL;
    u->col_bias = e && e->col_bias ? e->col_bias + j : NULL;
    u->res = e && e->res ? e->res + i * e->ldr + j : NULL;
}

/* Moves u to column n of its tile (the remainder of an AVX-512 tile). */
static void skip_cols(ukr_args *u, int n)
{
    u->b += n;
    u->c += n;
    u->col_bias = u->col_bias ? u->col_bias + n : NULL;
    u->res = u->res ? u->res + n : NULL;
}

/* Every tile of the block: row panels outside (the A micro-panel stays in L1), B tiles inside. */
static void block_tiles(trtl_gemm_isa isa, ukr_args *u, int64_t M, int64_t N, const float *a, int64_t a_stride,
                        const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e,
                        const pf_stream *next, int spread, const float *src, int64_t src_rs)
{
    const int mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa);
    const int64_t ntiles = (N + nr - 1) / nr, npanels = (M + mr - 1) / mr;
    const int split = (u->flags & TRTL_GEMM_SPLIT_TAIL) && split_tail(isa, M);
    colk_queue cq;
    cq.n = cq.avx2 = 0;
    int64_t spread_l = 0; /* spread: the first line of this panel's share */
    for (int64_t p = 0; p < npanels; p++) {
        int64_t i;
        int rows;
        panel_span(mr, M, npanels, split, p, &i, &rows);
        u->a = a + p * a_stride;
        /* While this row panel runs, its tiles prefetch the next panel's A block (weights that
         * would otherwise come from L3 in a burst at the next panel's first tile), or on the last
         * panel the caller's stream; the lines are spread evenly over the tiles.  spread: the
         * caller's stream is spread over every panel instead (A is already in cache). */
        pf_stream an = pf_stream_make(u->a + a_stride, 1, u->kc * mr * (int64_t)sizeof(float), 0);
        const pf_stream *pf = p + 1 < npanels ? &an : next;
        int64_t pl0 = 0, pl1 = pf->lines; /* this panel's share of pf */
        if (spread) {
            pf = next;
            pl0 = spread_l; /* next->lines * p / npanels */
            pl1 = spread_l = next->lines * (p + 1) / npanels;
        }
        /* tile t's share of pf: lines [pl0 + span t / ntiles, pl0 + span (t + 1) / ntiles) (its end is the next
         * tile's start: one division a tile, none for one tile) */
        const int64_t span = pl1 - pl0;
        int64_t l0 = pl0;
        for (int64_t j = 0, t = 0; j < N; j += nr, t++) {
            const int cols = N - j < nr ? (int)(N - j) : nr;
            const int64_t l1 = ntiles == 1 ? pl1 : pl0 + span * (t + 1) / ntiles;
            pf_share(u, pf, l0, l1);
            l0 = l1;
            u->b = b + t * b_stride;
            u->cols = cols;
            at_tile(u, e, i, j, c, ldc);
            const int rem = cols % 16;
            if (src && i == 0 && cols == nr) { /* the first row panel packs the whole tiles as it reads them */
                u->src = src + j;
                u->src_rs = src_rs;
                u->bw = (float *)u->b;
                if (isa == TRTL_GEMM_AVX512) /* with the input transform: the PK = 2 tiles */
                    (u->pre_s ? avx512_pkt_tab[rows - 1] : avx512_pk_tab[rows - 1])(u);
                else
                    (u->pre_s ? avx2_pkt_tab[rows - 1] : avx2_pk_tab[rows - 1])(u);
            } else if (isa != TRTL_GEMM_AVX512 && cols < rows && cols <= AVX2_COLK_MAX) {
                u->rows = rows; /* the whole tile by columns (colk256) */
                colk_push(&cq, u, 1);
            } else if (isa != TRTL_GEMM_AVX512) {
                avx2_tab[rows - 1][cols > 8](u);
            } else if (rem && rem < rows && rem <= COLK_MAX) {
                /* whole vectors by rows, the few remaining columns by columns (colk512) */
                if (cols > 16) {
                    u->cols = cols - rem;
                    avx512_tab[rows - 1][u->cols / 16](u);
                    skip_cols(u, u->cols);
                }
                u->cols = rem;
                u->rows = rows;
                colk_push(&cq, u, 0);
            } else if (cols <= 8 || cols > 24) {
                avx512_tab[rows - 1][cols <= 8 ? 0 : 2](u);
            } else {
                /* 9..24 columns: 16 (one zmm), then the rest with one ymm at column 16 */
                u->cols = cols < 16 ? cols : 16;
                avx512_tab[rows - 1][1](u);
                if (cols > 16) {
                    u->cols = cols - 16;
                    skip_cols(u, 16);
                    avx512_tab[rows - 1][0](u);
                }
            }
        }
    }
    colk_flush(&cq);
}

void trtl_gemm_block(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                     const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags)
{
    trtl_gemm_block_pf(isa, M, N, kc, a, a_stride, b, b_stride, c, ldc, e, flags, NULL, 0);
}

/* Rows [0, kc) of B from src (rows src_rs apart), columns [j0, N), through the input transform pre (NULL: none)
 * into their tiles, lanes past N zero; the packing tiles' transform with the same instructions (masked loads). */
__attribute__((target("avx2,fma"))) static void pack_b_rows(trtl_gemm_isa isa, const float *src, int64_t src_rs,
                                                             int64_t kc, int64_t j0, int64_t N, float *b,
                                                             int64_t b_stride, const trtl_gemm_pre *pre)
{
    const int64_t nr = trtl_gemm_nr(isa);
    if (!pre) {
        for (int64_t d = 0; d < kc; d++)
            trtl_gemm_pack_b_row(isa, src + d * src_rs + j0, N - j0, b + (j0 / nr) * b_stride + d * nr, b_stride);
        return;
    }
    const __m256 lo = _mm256_set1_ps(pre->lo), hi = _mm256_set1_ps(pre->hi);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t d = 0; d < kc; d++) {
        const float *row = src + d * src_rs;
        const __m256 sc = _mm256_broadcast_ss(pre->scale + d), sh = _mm256_broadcast_ss(pre->shift + d);
        for (int64_t j = j0; j < N; j += nr) {
            float *dst = b + (j / nr) * b_stride + d * nr;
            for (int64_t v = 0; v < nr; v += 8) {
                const int64_t left = N - j - v;
                __m256 y;
                if (left >= 8) {
                    y = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_fmadd_ps(_mm256_loadu_ps(row + j + v), sc, sh)));
                } else {
                    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left > 0 ? left : 0)), lane);
                    y = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_fmadd_ps(_mm256_maskload_ps(row + j + v, m), sc, sh)));
                    y = _mm256_and_ps(y, _mm256_castsi256_ps(m));
                }
                _mm256_storeu_ps(dst + v, y);
            }
        }
    }
}

void trtl_gemm_pack_b_pre(trtl_gemm_isa isa, const float *src, int64_t src_rs, int64_t kc, int64_t N, float *dst,
                          int64_t tile_stride, const trtl_gemm_pre *pre)
{
    pack_b_rows(isa, src, src_rs, kc, 0, N, dst, tile_stride, pre);
}

static void block_run(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                      const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags,
                      const pf_stream *pf, int spread, const float *src, int64_t src_rs, const trtl_gemm_pre *pre)
{
    const int nr = trtl_gemm_nr(isa);
    const int last = (flags & TRTL_GEMM_LAST) && e;
    const int slow_act = last && !trtl_act_is_fast(e->act);
    ukr_args u;
    memset(&u, 0, sizeof u);
    u.kc = kc;
    u.ldc = ldc;
    u.flags = flags & (TRTL_GEMM_ACC | TRTL_GEMM_SPLIT_TAIL | (last ? TRTL_GEMM_LAST : 0));
    u.act = last && !slow_act ? e->act : TRTL_ACT_NONE;
    if (last) {
        u.ldr = e->ldr;
        u.alpha = e->alpha;
        u.beta = e->beta;
    }
    if (src && pre) {
        u.pre_s = pre->scale;
        u.pre_t = pre->shift;
        u.pre_lo = pre->lo;
        u.pre_hi = pre->hi;
    }
    if ((flags & TRTL_GEMM_A_ROW) && M == 1) {
        u.a = a;
        for (int64_t j = 0; j < N; j += nr) {
            u.cols = N - j < nr ? (int)(N - j) : nr;
            u.b = b + (j / nr) * b_stride;
            at_tile(&u, last ? e : NULL, 0, j, c, ldc);
            if (isa == TRTL_GEMM_AVX512)
                (u.cols > 16 ? gemv512_2 : gemv512_1)(&u);
            else
                (u.cols > 8 ? gemv256_2 : gemv256_1)(&u);
        }
    } else {
        if (src && N % nr) /* the partial last tile is packed first (the packing tiles are whole ones) */
            pack_b_rows(isa, src, src_rs, kc, N / nr * nr, N, (float *)b, b_stride, pre);
        block_tiles(isa, &u, M, N, a, a_stride, b, b_stride, c, ldc, last ? e : NULL, pf, spread, src, src_rs);
    }
    if (slow_act) {
        const trtl_epilogue act = {e->act, e->alpha, e->beta, 0};
        for (int64_t i = 0; i < M; i++)
            trtl_epi_act(&act, c + i * ldc, N);
    }
}

void trtl_gemm_block_pf(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                        const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags,
                        const void *pf, int64_t pf_bytes)
{
    const pf_stream s = pf_stream_make(pf, 1, pf_bytes, 0);
    block_run(isa, M, N, kc, a, a_stride, b, b_stride, c, ldc, e, flags, &s, 0, NULL, 0, NULL);
}

void trtl_gemm_block_pf_spread(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a,
                               int64_t a_stride, const float *b, int64_t b_stride, float *c, int64_t ldc,
                               const trtl_gemm_epi *e, int flags, const void *pf, int64_t pf_bytes)
{
    const pf_stream s = pf_stream_make(pf, 1, pf_bytes, 0);
    block_run(isa, M, N, kc, a, a_stride, b, b_stride, c, ldc, e, flags, &s, 1, NULL, 0, NULL);
}

void trtl_gemm_block_pf_rows(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                             const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e,
                             int flags, const void *pf, int64_t pf_rows, int64_t pf_row_bytes,
                             int64_t pf_row_stride)
{
    const pf_stream s = pf_stream_make(pf, pf_rows, pf_row_bytes, pf_row_stride);
    block_run(isa, M, N, kc, a, a_stride, b, b_stride, c, ldc, e, flags, &s, 1, NULL, 0, NULL);
}

void trtl_gemm_block_pack_pre(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                              const float *src, int64_t src_rs, float *b, int64_t b_stride, float *c, int64_t ldc,
                              const trtl_gemm_epi *e, int flags, const void *pf, int64_t pf_rows,
                              int64_t pf_row_bytes, int64_t pf_row_stride, const trtl_gemm_pre *pre)
{
    const pf_stream s = pf_stream_make(pf, pf_rows, pf_row_bytes, pf_row_stride);
    if ((flags & TRTL_GEMM_A_ROW) && M == 1) { /* the row product reads B once: pack it first */
        pack_b_rows(isa, src, src_rs, kc, 0, N, b, b_stride, pre);
        src = NULL;
    }
    block_run(isa, M, N, kc, a, a_stride, b, b_stride, c, ldc, e, flags, &s, pf ? 1 : 0, src, src_rs, pre);
}

void trtl_gemm_block_pack(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                          const float *src, int64_t src_rs, float *b, int64_t b_stride, float *c, int64_t ldc,
                          const trtl_gemm_epi *e, int flags, const void *pf, int64_t pf_rows, int64_t pf_row_bytes,
                          int64_t pf_row_stride)
{
    trtl_gemm_block_pack_pre(isa, M, N, kc, a, a_stride, src, src_rs, b, b_stride, c, ldc, e, flags, pf, pf_rows,
                             pf_row_bytes, pf_row_stride, NULL);
}
