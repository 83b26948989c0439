/*
 * pow_const.c -- "elementwise.pow": IElementWiseLayer POW of a FLOAT tensor by one exponent (a tensor of one
 * element, read at run time: ONNX Pow(x, 2) of RMSNorm / LayerNorm exports, Pow(x, 0.5), Pow(x, 3) of GELU-tanh),
 * the reference's bits (kernels/ref/elementwise.c computes (float)pow((double)x, (double)e)).
 *
 *   e == 2:   x * x in float.  x² of a float is exact in double (48 bits), so the reference's double result is
 *             x² itself (pow is exact when its result is representable) and its rounding to float is the float
 *             product's (overflow to inf and subnormals alike; NaN: the input's, quieted, as the conversions).
 *   e == 0.5: sqrt in float: rounding sqrt(x) first to double, then to float, gives the float sqrt (53 >= 2*24+2,
 *             the sqrt of a float is never that close to a float rounding boundary), and glibc's pow stays within
 *             0.52 double ulp, inside that margin.  pow's own cases: pow(-0, 0.5) = +0 (sqrt: -0),
 *             pow(-inf, 0.5) = +inf (sqrt: NaN); negative x: the default NaN, as sqrt's.
 *   e == 3:   the reference's double product (float)((double)x * x * x) (the reference computes x³ so: equal to
 *             glibc's pow for all floats, checked exhaustively in session 22), AVX2 four doubles a vector.
 *   e == 0:   1 for every x (NaN too).
 *   else:     the reference's (float)pow((double)x, (double)e) per element, without the broadcast walk, split
 *             over the pool.
 * AVX2 for the first two (8 lanes; the memory-bound loops gain nothing from 16), portable loops otherwise.
 * Other shapes (a tensor exponent, x broadcast to a larger output) run the reference kernel.
 */
#include <math.h>
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#define CHUNK 8192 /* elements per work item */

enum { P_SQUARE, P_SQRT, P_ONE, P_CUBE, P_POW };

typedef struct pow_job {
    const float *x;
    float *y;
    int64_t n;
    float e;
    int kind, avx2;
} pow_job;

static float sqrt_as_pow(float x)
{
    if (x == 0.0f)
        return 0.0f; /* pow(-0, 0.5) = +0 */
    if (x == -INFINITY)
        return INFINITY;
    return sqrtf(x);
}

static void span_portable(const pow_job *j, const float *x, float *y, int64_t n)
{
    switch (j->kind) {
    case P_SQUARE:
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] * x[i];
        break;
    case P_SQRT:
        for (int64_t i = 0; i < n; i++)
            y[i] = sqrt_as_pow(x[i]);
        break;
    case P_ONE:
        for (int64_t i = 0; i < n; i++)
            y[i] = 1.0f;
        break;
    case P_CUBE:
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)((double)x[i] * x[i] * x[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)pow((double)x[i], (double)j->e);
        break;
    }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void span_avx2(const pow_job *j, const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    if (j->kind == P_SQUARE) {
        for (; i + 8 <= n; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i);
            _mm256_storeu_ps(y + i, _mm256_mul_ps(v, v));
        }
    } else if (j->kind == P_CUBE) {
        for (; i + 8 <= n; i += 8) {
            const __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(x + i)), b = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));
            const __m128 ra = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_mul_pd(a, a), a));
            const __m128 rb = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_mul_pd(b, b), b));
            _mm256_storeu_ps(y + i, _mm256_set_m128(rb, ra));
        }
    } else {
        const __m256 zero = _mm256_setzero_ps(), ninf = _mm256_set1_ps(-INFINITY), inf = _mm256_set1_ps(INFINITY);
        for (; i + 8 <= n; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i), r = _mm256_sqrt_ps(v);
            r = _mm256_blendv_ps(r, zero, _mm256_cmp_ps(v, zero, _CMP_EQ_OQ)); /* -0 -> +0 */
            r = _mm256_blendv_ps(r, inf, _mm256_cmp_ps(v, ninf, _CMP_EQ_OQ));
            _mm256_storeu_ps(y + i, r);
        }
    }
    span_portable(j, x + i, y + i, n - i);
}
#endif

static void pow_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const pow_job *j = ctx;
    int64_t b = begin * CHUNK, e = end * CHUNK < j->n ? end * CHUNK : j->n;
#if defined(__x86_64__) || defined(__i386__)
    if (j->avx2 && (j->kind == P_SQUARE || j->kind == P_SQRT || j->kind == P_CUBE)) {
        span_avx2(j, j->x + b, j->y + b, e - b);
        return;
    }
#endif
    span_portable(j, j->x + b, j->y + b, e - b);
}

static int form_ok(const trtl_dims *x, const trtl_dims *e, const trtl_dims *y)
{
    if (trtl_volume(e) != 1 || x->nb_dims != y->nb_dims)
        return 0;
    for (int i = 0; i < x->nb_dims; i++)
        if (x->d[i] != y->d[i])
            return 0;
    return 1;
}

static int pow_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    if (n->p.ew.op != TRTL_EW_POW || n->n_in != 2)
        return 0;
    trtl_dims y = in_dims[0]; /* the output has x's dims when the exponent is one element of x's rank or less */
    return in_dims[1].nb_dims <= in_dims[0].nb_dims && form_ok(&in_dims[0], &in_dims[1], &y);
}

static trtl_status pow_run(const trtl_kernel_args *a)
{
    if (a->node->p.ew.op != TRTL_EW_POW || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT ||
        a->out[0].dtype != TRTL_FLOAT || !form_ok(&a->in[0].dims, &a->in[1].dims, &a->out[0].dims))
        return trtl_ref_elementwise(a);
    pow_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.n = trtl_volume(&a->out[0].dims);
    memcpy(&j.e, a->in[1].data, sizeof j.e);
    j.kind = j.e == 2.0f ? P_SQUARE : j.e == 0.5f ? P_SQRT : j.e == 0.0f ? P_ONE : j.e == 3.0f ? P_CUBE : P_POW;
    j.avx2 = trtl_cpu_has(TRTL_CPU_AVX2);
    if (j.n == 0)
        return TRTL_OK;
    int64_t chunks = (j.n + CHUNK - 1) / CHUNK;
    trtl_parallel_for(a->pool, chunks, j.kind == P_POW ? 1 : 4, pow_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_elementwise_pow = {
    .name = "elementwise.pow",
    .op = TRTL_OP_ELEMENTWISE,
    .applies = pow_applies,
    .run = pow_run,
};
