/*
 * softmax.c -- "softmax.simd": y = exp(x - max) / sum exp(x - max) along any one axis, float32.
 *
 * The tensor is [outer, D, inner] around the softmax axis.  inner == 1 (the last axis): each row
 * of D contiguous floats takes three passes (max; exp stored into y and summed; scale by 1/sum).
 * inner > 1: blocks of up to BLOCK contiguous columns walk the D rows at stride `inner` with the
 * column maxima and sums in registers, so every load is a contiguous vector even though the axis
 * is strided.  Rows / column blocks are split over the pool.
 *
 * exp is a Cody-Waite reduction x = n*ln2 + r (|r| <= ln2/2) and a degree-7 Taylor polynomial of
 * exp(r) (relative error ~1e-8 before rounding) scaled by 2^n built in the exponent bits; below
 * ln(FLT_MIN) it gives 0.  AVX-512 and AVX2+FMA variants are picked at run time; the portable
 * path uses expf.
 *
 * NaN/Inf behave as in the reference kernel: the maximum skips NaNs (max_ps(x, m) keeps m when x
 * is NaN, as `x > m` does), any NaN then makes the row's sum and every output NaN, a +Inf makes
 * Inf - Inf = NaN and so NaN outputs, and a row of -Inf gives NaN (exp(-Inf - -Inf)).
 */
#include <immintrin.h>
#include <math.h>

#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/shape.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define BLOCK 64 /* columns per block in the strided case */

enum { ISA_C = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };

typedef struct sm_job {
    const float *x;
    float *y;
    int64_t D, inner, nblk; /* nblk: column blocks per outer index */
    int isa;
} sm_job;

/* ---- portable ---------------------------------------------------------------------------- */

static void row_c(const float *x, float *y, int64_t D)
{
    float m = -INFINITY, s = 0.0f;
    for (int64_t d = 0; d < D; d++)
        m = x[d] > m ? x[d] : m;
    for (int64_t d = 0; d < D; d++)
        s += (y[d] = expf(x[d] - m));
    float inv = 1.0f / s;
    for (int64_t d = 0; d < D; d++)
        y[d] *= inv;
}

static void cols_c(const float *x, float *y, int64_t D, int64_t st, int64_t w)
{
    float m[BLOCK], s[BLOCK];
    for (int64_t c = 0; c < w; c++) {
        m[c] = -INFINITY;
        s[c] = 0.0f;
    }
    for (int64_t d = 0; d < D; d++)
        for (int64_t c = 0; c < w; c++)
            m[c] = x[d * st + c] > m[c] ? x[d * st + c] : m[c];
    for (int64_t d = 0; d < D; d++)
        for (int64_t c = 0; c < w; c++)
            s[c] += (y[d * st + c] = expf(x[d * st + c] - m[c]));
    for (int64_t c = 0; c < w; c++)
        s[c] = 1.0f / s[c];
    for (int64_t d = 0; d < D; d++)
        for (int64_t c = 0; c < w; c++)
            y[d * st + c] *= s[c];
}

/* ---- AVX2 + FMA ---------------------------------------------------------------------------- */

__attribute__((target("avx2,fma"), always_inline)) static inline __m256 exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.72283f);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ); /* false for NaN */
    x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));     /* the second operand (x) wins on NaN */
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187e-06f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

__attribute__((target("avx2,fma"), always_inline)) static inline __m256i tail_mask8(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2,fma"), always_inline)) static inline float hmax8(__m256 v)
{
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

__attribute__((target("avx2,fma"), always_inline)) static inline float hsum8(__m256 v)
{
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    a = _mm_add_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

__attribute__((target("avx2,fma"))) static void row_avx2(const float *x, float *y, int64_t D)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 m0 = ninf, m1 = ninf;
    int64_t d = 0, t = D & 7;
    __m256i k = tail_mask8(t);
    for (; d + 16 <= D; d += 16) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + d), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + d + 8), m1);
    }
    for (; d + 8 <= D; d += 8)
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + d), m0);
    if (t)
        m1 = _mm256_max_ps(_mm256_blendv_ps(ninf, _mm256_maskload_ps(x + d, k), _mm256_castsi256_ps(k)), m1);
    __m256 mv = _mm256_set1_ps(hmax8(_mm256_max_ps(m0, m1)));
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    for (d = 0; d + 8 <= D; d += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + d), mv));
        _mm256_storeu_ps(y + d, e);
        if (d & 8)
            s1 = _mm256_add_ps(s1, e);
        else
            s0 = _mm256_add_ps(s0, e);
    }
    if (t) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_maskload_ps(x + d, k), mv));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(k));
        _mm256_maskstore_ps(y + d, k, e);
        s1 = _mm256_add_ps(s1, e);
    }
    __m256 inv = _mm256_set1_ps(1.0f / hsum8(_mm256_add_ps(s0, s1)));
    for (d = 0; d + 8 <= D; d += 8)
        _mm256_storeu_ps(y + d, _mm256_mul_ps(_mm256_loadu_ps(y + d), inv));
    if (t)
        _mm256_maskstore_ps(y + d, k, _mm256_mul_ps(_mm256_maskload_ps(y + d, k), inv));
}

__attribute__((target("avx2,fma"))) static void cols_avx2(const float *x, float *y, int64_t D, int64_t st, int64_t w)
{
    enum { NV = BLOCK / 8 };
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 m[NV], s[NV];
    int nv = (int)((w + 7) / 8);
    __m256i k = tail_mask8(w - (int64_t)(nv - 1) * 8);
    __m256 kf = _mm256_castsi256_ps(k);
    for (int v = 0; v < nv; v++) {
        m[v] = ninf;
        s[v] = _mm256_setzero_ps();
    }
    for (int64_t d = 0; d < D; d++) {
        const float *r = x + d * st;
        for (int v = 0; v < nv - 1; v++)
            m[v] = _mm256_max_ps(_mm256_loadu_ps(r + 8 * v), m[v]);
        m[nv - 1] = _mm256_max_ps(_mm256_blendv_ps(ninf, _mm256_maskload_ps(r + 8 * (nv - 1), k), kf), m[nv - 1]);
    }
    for (int64_t d = 0; d < D; d++) {
        const float *r = x + d * st;
        float *o = y + d * st;
        for (int v = 0; v < nv - 1; v++) {
            __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(r + 8 * v), m[v]));
            _mm256_storeu_ps(o + 8 * v, e);
            s[v] = _mm256_add_ps(s[v], e);
        }
        __m256 e = exp8(_mm256_sub_ps(_mm256_maskload_ps(r + 8 * (nv - 1), k), m[nv - 1]));
        _mm256_maskstore_ps(o + 8 * (nv - 1), k, e);
        s[nv - 1] = _mm256_add_ps(s[nv - 1], _mm256_and_ps(e, kf));
    }
    for (int v = 0; v < nv; v++)
        s[v] = _mm256_div_ps(_mm256_set1_ps(1.0f), s[v]);
    for (int64_t d = 0; d < D; d++) {
        float *o = y + d * st;
        for (int v = 0; v < nv - 1; v++)
            _mm256_storeu_ps(o + 8 * v, _mm256_mul_ps(_mm256_loadu_ps(o + 8 * v), s[v]));
        _mm256_maskstore_ps(o + 8 * (nv - 1), k, _mm256_mul_ps(_mm256_maskload_ps(o + 8 * (nv - 1), k), s[nv - 1]));
    }
}

/* ---- AVX-512 ------------------------------------------------------------------------------- */

__attribute__((target("avx512f"), always_inline)) static inline __m512 exp16(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(-87.33654f), hi = _mm512_set1_ps(88.72283f);
    __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mov_ps((__mmask16)~under, _mm512_mul_ps(p, _mm512_castsi512_ps(e)));
}

__attribute__((target("avx512f"))) static void row_avx512(const float *x, float *y, int64_t D)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 m0 = ninf, m1 = ninf;
    int64_t d = 0, t = D & 15;
    __mmask16 k = (__mmask16)((1u << t) - 1);
    for (; d + 32 <= D; d += 32) {
        m0 = _mm512_max_ps(_mm512_loadu_ps(x + d), m0);
        m1 = _mm512_max_ps(_mm512_loadu_ps(x + d + 16), m1);
    }
    for (; d + 16 <= D; d += 16)
        m0 = _mm512_max_ps(_mm512_loadu_ps(x + d), m0);
    if (t)
        m1 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, k, x + d), m1);
    __m512 mv = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_max_ps(m0, m1)));
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    for (d = 0; d + 16 <= D; d += 16) {
        __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + d), mv));
        _mm512_storeu_ps(y + d, e);
        if (d & 16)
            s1 = _mm512_add_ps(s1, e);
        else
            s0 = _mm512_add_ps(s0, e);
    }
    if (t) {
        __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + d), mv));
        _mm512_mask_storeu_ps(y + d, k, e);
        s1 = _mm512_mask_add_ps(s1, k, s1, e);
    }
    __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
    for (d = 0; d + 16 <= D; d += 16)
        _mm512_storeu_ps(y + d, _mm512_mul_ps(_mm512_loadu_ps(y + d), inv));
    if (t)
        _mm512_mask_storeu_ps(y + d, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + d), inv));
}

__attribute__((target("avx512f"))) static void cols_avx512(const float *x, float *y, int64_t D, int64_t st,
                                                          int64_t w)
{
    enum { NV = BLOCK / 16 };
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 m[NV], s[NV];
    int nv = (int)((w + 15) / 16);
    int64_t t = w - (int64_t)(nv - 1) * 16;
    __mmask16 k = (__mmask16)(t == 16 ? 0xffffu : (1u << t) - 1);
    for (int v = 0; v < nv; v++) {
        m[v] = ninf;
        s[v] = _mm512_setzero_ps();
    }
    for (int64_t d = 0; d < D; d++) {
        const float *r = x + d * st;
        for (int v = 0; v < nv - 1; v++)
            m[v] = _mm512_max_ps(_mm512_loadu_ps(r + 16 * v), m[v]);
        m[nv - 1] = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, k, r + 16 * (nv - 1)), m[nv - 1]);
    }
    for (int64_t d = 0; d < D; d++) {
        const float *r = x + d * st;
        float *o = y + d * st;
        for (int v = 0; v < nv - 1; v++) {
            __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(r + 16 * v), m[v]));
            _mm512_storeu_ps(o + 16 * v, e);
            s[v] = _mm512_add_ps(s[v], e);
        }
        __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, r + 16 * (nv - 1)), m[nv - 1]));
        _mm512_mask_storeu_ps(o + 16 * (nv - 1), k, e);
        s[nv - 1] = _mm512_mask_add_ps(s[nv - 1], k, s[nv - 1], e);
    }
    for (int v = 0; v < nv; v++)
        s[v] = _mm512_div_ps(_mm512_set1_ps(1.0f), s[v]);
    for (int64_t d = 0; d < D; d++) {
        float *o = y + d * st;
        for (int v = 0; v < nv - 1; v++)
            _mm512_storeu_ps(o + 16 * v, _mm512_mul_ps(_mm512_loadu_ps(o + 16 * v), s[v]));
        _mm512_mask_storeu_ps(o + 16 * (nv - 1), k,
                              _mm512_mul_ps(_mm512_maskz_loadu_ps(k, o + 16 * (nv - 1)), s[nv - 1]));
    }
}

/* ---- driver -------------------------------------------------------------------------------- */

static void rows_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sm_job *j = ctx;
    for (int64_t o = begin; o < end; o++) {
        const float *x = j->x + o * j->D;
        float *y = j->y + o * j->D;
        if (j->isa == ISA_AVX512)
            row_avx512(x, y, j->D);
        else if (j->isa == ISA_AVX2)
            row_avx2(x, y, j->D);
        else
            row_c(x, y, j->D);
    }
}

static void blocks_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sm_job *j = ctx;
    for (int64_t b = begin; b < end; b++) {
        int64_t o = b / j->nblk, c0 = (b % j->nblk) * BLOCK;
        int64_t w = j->inner - c0 < BLOCK ? j->inner - c0 : BLOCK;
        int64_t off = o * j->D * j->inner + c0;
        if (j->isa == ISA_AVX512)
            cols_avx512(j->x + off, j->y + off, j->D, j->inner, w);
        else if (j->isa == ISA_AVX2)
            cols_avx2(j->x + off, j->y + off, j->D, j->inner, w);
        else
            cols_c(j->x + off, j->y + off, j->D, j->inner, w);
    }
}

static int softmax_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    int ax = trtl_single_axis(n->p.softmax.axes);
    return ax >= 0 && ax < in_dims[0].nb_dims;
}

static trtl_status softmax_run(const trtl_kernel_args *a)
{
    const trtl_dims *xd = &a->in[0].dims;
    int ax = trtl_single_axis(a->node->p.softmax.axes);
    if (ax < 0 || ax >= xd->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': softmax axis out of range", a->node->name);
    sm_job j = {a->in[0].data, a->out[0].data, xd->d[ax], trtl_volume_range(xd, ax + 1, xd->nb_dims), 0, ISA_C};
    int64_t outer = trtl_volume_range(xd, 0, ax);
    if (outer == 0 || j.D == 0 || j.inner == 0)
        return TRTL_OK;
    j.isa = trtl_cpu_has(TRTL_CPU_AVX512F) ? ISA_AVX512 : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? ISA_AVX2 : ISA_C;
    if (j.inner == 1) {
        trtl_parallel_for(a->pool, outer, j.D >= 16384 ? 1 : 16384 / j.D, rows_task, &j);
    } else {
        j.nblk = (j.inner + BLOCK - 1) / BLOCK;
        int64_t work = j.D * (j.inner < BLOCK ? j.inner : BLOCK);
        trtl_parallel_for(a->pool, outer * j.nblk, work >= 16384 ? 1 : 16384 / work, blocks_task, &j);
    }
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_softmax_simd = {
    .name = "softmax.simd",
    .op = TRTL_OP_SOFTMAX,
    .applies = softmax_applies,
    .run = softmax_run,
};
