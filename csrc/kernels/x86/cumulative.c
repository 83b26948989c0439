/*
 * cumulative.c -- "cumulative.scan": ICumulativeLayer (ONNX CumSum: position ids from attention masks, cumulative
 * box / token counts; CumProd) along any axis, inclusive or exclusive, forward or reverse, FLOAT (accumulated in
 * double, as the reference), INT32 and INT64 (wrapping), the reference's bits (kernels/ref/cumulative.c).
 *
 * Each output element's running value is the reference's sequence of the same operations, so the work is only
 * rearranged: an axis with a trailing block (inner > 1) runs LANES columns of the block at once -- per axis step
 * one vector add (or multiply) per 4 doubles / 8 int32 / 4 int64 lanes (AVX2) into accumulators kept in a small
 * array -- and the last axis runs each row's scan in a scalar loop (one per type and form: position ids' [B, S]
 * rows); (outer, column block) items go over the pool.
 * The portable path is the same loops per lane.  Integer products have no AVX2 multiply for 64-bit lanes: scalar.
 */
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#define LANES 256 /* columns of the trailing block per work item */

typedef struct cum_job {
    const char *x;
    char *y;
    trtl_dtype t;
    int prod, excl, rev, avx2;
    int64_t n, inner, blocks; /* axis length, trailing block, column blocks per outer index */
} cum_job;

/* Columns [c0, c0 + w) of outer index o: the scan along the axis, acc per column. */
static void scan_cols_portable(const cum_job *j, int64_t o, int64_t c0, int64_t w)
{
    const int64_t n = j->n, inner = j->inner;
    if (j->t == TRTL_FLOAT) {
        double acc[LANES];
        for (int64_t c = 0; c < w; c++)
            acc[c] = j->prod ? 1.0 : 0.0;
        for (int64_t t = 0; t < n; t++) {
            int64_t k = j->rev ? n - 1 - t : t, e = (o * n + k) * inner + c0;
            const float *x = (const float *)j->x + e;
            float *y = (float *)j->y + e;
            for (int64_t c = 0; c < w; c++) {
                double v = (double)x[c];
                if (j->excl) {
                    y[c] = (float)acc[c];
                    acc[c] = j->prod ? acc[c] * v : acc[c] + v;
                } else {
                    acc[c] = j->prod ? acc[c] * v : acc[c] + v;
                    y[c] = (float)acc[c];
                }
            }
        }
        return;
    }
    uint64_t acc[LANES];
    const int w64 = j->t == TRTL_INT64;
    for (int64_t c = 0; c < w; c++)
        acc[c] = j->prod ? 1 : 0;
    for (int64_t t = 0; t < n; t++) {
        int64_t k = j->rev ? n - 1 - t : t, e = (o * n + k) * inner + c0;
        for (int64_t c = 0; c < w; c++) {
            uint64_t v = w64 ? (uint64_t)((const int64_t *)j->x)[e + c] : (uint64_t)(int64_t)((const int32_t *)j->x)[e + c];
            uint64_t before = acc[c];
            acc[c] = j->prod ? acc[c] * v : acc[c] + v;
            uint64_t out = j->excl ? before : acc[c];
            if (w64)
                ((int64_t *)j->y)[e + c] = (int64_t)out;
            else
                ((int32_t *)j->y)[e + c] = (int32_t)(uint32_t)out;
        }
    }
}

/* The last axis (inner == 1): one row's scan, a loop per type and form. */
#define SCAN_ROW(T, ACC, STEP, OUT)                                                                         \
    do {                                                                                                    \
        const T *x = (const T *)j->x + o * n;                                                               \
        T *y = (T *)j->y + o * n;                                                                           \
        ACC acc = j->prod ? (ACC)1 : (ACC)0;                                                                \
        int64_t k = j->rev ? n - 1 : 0, dk = j->rev ? -1 : 1;                                               \
        if (j->excl)                                                                                        \
            for (int64_t t = 0; t < n; t++, k += dk) {                                                      \
                y[k] = OUT(acc);                                                                            \
                acc = STEP(acc, x[k]);                                                                      \
            }                                                                                               \
        else                                                                                                \
            for (int64_t t = 0; t < n; t++, k += dk) {                                                      \
                acc = STEP(acc, x[k]);                                                                      \
                y[k] = OUT(acc);                                                                            \
            }                                                                                               \
    } while (0)
#define F_ADD(a, v) ((a) + (double)(v))
#define F_MUL(a, v) ((a) * (double)(v))
#define U_ADD(a, v) ((a) + (uint64_t)(int64_t)(v))
#define U_MUL(a, v) ((a) * (uint64_t)(int64_t)(v))
#define TO_F(a) ((float)(a))
#define TO_I32(a) ((int32_t)(uint32_t)(a))
#define TO_I64(a) ((int64_t)(a))

static void scan_row(const cum_job *j, int64_t o)
{
    const int64_t n = j->n;
    if (j->t == TRTL_FLOAT) {
        if (j->prod)
            SCAN_ROW(float, double, F_MUL, TO_F);
        else
            SCAN_ROW(float, double, F_ADD, TO_F);
    } else if (j->t == TRTL_INT32) {
        if (j->prod)
            SCAN_ROW(int32_t, uint64_t, U_MUL, TO_I32);
        else
            SCAN_ROW(int32_t, uint64_t, U_ADD, TO_I32);
    } else {
        if (j->prod)
            SCAN_ROW(int64_t, uint64_t, U_MUL, TO_I64);
        else
            SCAN_ROW(int64_t, uint64_t, U_ADD, TO_I64);
    }
}

#if defined(__x86_64__) || defined(__i386__)
/* FLOAT: 4 double accumulators a vector; INT32 SUM: 8 lanes; INT64 SUM: 4 lanes (w a multiple of the lanes). */
__attribute__((target("avx2"))) static void scan_cols_avx2(const cum_job *j, int64_t o, int64_t c0, int64_t w)
{
    const int64_t n = j->n, inner = j->inner;
    if (j->t == TRTL_FLOAT) {
        __m256d acc[LANES / 4];
        for (int64_t v = 0; v < w / 4; v++)
            acc[v] = _mm256_set1_pd(j->prod ? 1.0 : 0.0);
        for (int64_t t = 0; t < n; t++) {
            int64_t k = j->rev ? n - 1 - t : t, e = (o * n + k) * inner + c0;
            const float *x = (const float *)j->x + e;
            float *y = (float *)j->y + e;
            for (int64_t v = 0; v < w / 4; v++) {
                __m256d xv = _mm256_cvtps_pd(_mm_loadu_ps(x + 4 * v));
                __m256d before = acc[v];
                acc[v] = j->prod ? _mm256_mul_pd(acc[v], xv) : _mm256_add_pd(acc[v], xv);
                _mm_storeu_ps(y + 4 * v, _mm256_cvtpd_ps(j->excl ? before : acc[v]));
            }
        }
        return;
    }
    const int lanes = j->t == TRTL_INT32 ? 8 : 4;
    __m256i acc[LANES / 4];
    for (int64_t v = 0; v < w / lanes; v++)
        acc[v] = _mm256_setzero_si256();
    for (int64_t t = 0; t < n; t++) {
        int64_t k = j->rev ? n - 1 - t : t, e = (o * n + k) * inner + c0;
        const char *x = j->x + e * (lanes == 8 ? 4 : 8);
        char *y = j->y + e * (lanes == 8 ? 4 : 8);
        for (int64_t v = 0; v < w / lanes; v++) {
            __m256i xv = _mm256_loadu_si256((const __m256i *)(x + 32 * v)), before = acc[v];
            acc[v] = lanes == 8 ? _mm256_add_epi32(acc[v], xv) : _mm256_add_epi64(acc[v], xv);
            _mm256_storeu_si256((__m256i *)(y + 32 * v), j->excl ? before : acc[v]);
        }
    }
}
#endif

static void cum_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const cum_job *j = ctx;
    for (int64_t it = begin; it < end; it++) {
        if (j->inner == 1) {
            scan_row(j, it);
            continue;
        }
        int64_t o = it / j->blocks, c0 = (it % j->blocks) * LANES;
        int64_t w = j->inner - c0 < LANES ? j->inner - c0 : LANES;
#if defined(__x86_64__) || defined(__i386__)
        int lanes = j->t == TRTL_INT32 ? 8 : 4;
        if (j->avx2 && (j->t == TRTL_FLOAT || !j->prod) && w >= lanes) {
            int64_t wv = w - w % lanes;
            scan_cols_avx2(j, o, c0, wv);
            c0 += wv;
            w -= wv;
        }
#endif
        if (w > 0)
            scan_cols_portable(j, o, c0, w);
    }
}

static trtl_status cum_run(const trtl_kernel_args *a)
{
    const trtl_cumulative_params *q = &a->node->p.cum;
    const trtl_dims *X = &a->in[0].dims;
    trtl_dtype t = a->in[0].dtype;
    int32_t r = X->nb_dims, av;
    if ((t != TRTL_FLOAT && t != TRTL_INT32 && t != TRTL_INT64) || a->node->n_in < 2 || a->in[1].dtype != TRTL_INT32 ||
        trtl_volume(&a->in[1].dims) != 1 || a->out[0].dtype != t || (q->op != TRTL_CUM_SUM && q->op != TRTL_CUM_PROD))
        return trtl_ref_cumulative(a); /* words the error */
    memcpy(&av, a->in[1].data, 4);
    if (av < -r || av >= r)
        return trtl_ref_cumulative(a);
    int32_t axis = av < 0 ? av + r : av;
    cum_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.t = t;
    j.prod = q->op == TRTL_CUM_PROD;
    j.excl = q->exclusive;
    j.rev = q->reverse;
    j.avx2 = trtl_cpu_has(TRTL_CPU_AVX2);
    j.n = X->d[axis];
    j.inner = trtl_volume_range(X, axis + 1, r);
    int64_t outer = trtl_volume_range(X, 0, axis);
    if (outer == 0 || j.n == 0 || j.inner == 0)
        return TRTL_OK;
    j.blocks = (j.inner + LANES - 1) / LANES;
    int64_t per = j.n * (j.inner < LANES ? j.inner : LANES);
    trtl_parallel_for(a->pool, outer * j.blocks, per >= 16384 ? 1 : 16384 / per, cum_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_cumulative_scan = {
    .name = "cumulative.scan",
    .op = TRTL_OP_CUMULATIVE,
    .run = cum_run,
    .any_dtype = 1,
};
