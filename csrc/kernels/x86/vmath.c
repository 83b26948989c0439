/* vmath.c -- run-time choice of the vector math variant (vmath.h) and the portable spans, which
 * are the scalar reference formulas. */
#include <float.h>
#include <math.h>

#include "kernels/x86/vmath.h"
#include "kernels/kernel.h"
#include "core/cpu.h"
#include "core/threadpool.h"

#define ISA_512 (TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA)
#define ISA_AVX2 (TRTL_CPU_AVX2 | TRTL_CPU_FMA)

void trtl_vm_act(int32_t act, float alpha, float beta, const float *src, float *dst, int64_t n)
{
#ifdef TRTL_VM_HAVE_X86
    if (trtl_cpu_has(ISA_512)) {
        trtl_vm_act_avx512(act, alpha, beta, src, dst, n);
        return;
    }
    if (trtl_cpu_has(ISA_AVX2)) {
        trtl_vm_act_avx2(act, alpha, beta, src, dst, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        dst[i] = trtl_activation_eval(act, alpha, beta, src[i]);
}

int trtl_vm_unary_supported(int32_t op)
{
    switch (op) {
    case TRTL_UN_EXP: case TRTL_UN_LOG: case TRTL_UN_SQRT: case TRTL_UN_RECIP: case TRTL_UN_ABS:
    case TRTL_UN_NEG: case TRTL_UN_CEIL: case TRTL_UN_FLOOR: case TRTL_UN_ROUND: case TRTL_UN_ERF:
    case TRTL_UN_SIGN: return 1;
    default: return 0;
    }
}

static float round_half_even(float x)
{
    float r = nearbyintf(x); /* the default rounding mode: to nearest, ties to even */
    return r == 0.0f ? copysignf(0.0f, x) : r;
}

static float unary_scalar(int32_t op, float x)
{
    switch (op) {
    case TRTL_UN_EXP: return (float)exp((double)x);
    case TRTL_UN_LOG: return (float)log((double)x);
    case TRTL_UN_SQRT: return sqrtf(x);
    case TRTL_UN_RECIP: return (float)(1.0 / (double)x);
    case TRTL_UN_ABS: return fabsf(x);
    case TRTL_UN_NEG: return -x;
    case TRTL_UN_CEIL: return ceilf(x);
    case TRTL_UN_FLOOR: return floorf(x);
    case TRTL_UN_ROUND: return round_half_even(x);
    case TRTL_UN_ERF: return (float)erf((double)x);
    case TRTL_UN_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    default: return x;
    }
}

void trtl_vm_unary(int32_t op, const float *src, float *dst, int64_t n)
{
#ifdef TRTL_VM_HAVE_X86
    if (trtl_cpu_has(ISA_512)) {
        trtl_vm_unary_avx512(op, src, dst, n);
        return;
    }
    if (trtl_cpu_has(ISA_AVX2)) {
        trtl_vm_unary_avx2(op, src, dst, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        dst[i] = unary_scalar(op, src[i]);
}

int trtl_vm_binary_supported(int32_t op)
{
    return op == TRTL_EW_SUM || op == TRTL_EW_PROD || op == TRTL_EW_MAX || op == TRTL_EW_MIN || op == TRTL_EW_SUB ||
           op == TRTL_EW_DIV;
}

void trtl_vm_binary(int32_t op, const float *a, int a_vec, const float *b, int b_vec, float *y, int64_t n)
{
#ifdef TRTL_VM_HAVE_X86
    if (trtl_cpu_has(ISA_512)) {
        trtl_vm_binary_avx512(op, a, a_vec, b, b_vec, y, n);
        return;
    }
    if (trtl_cpu_has(ISA_AVX2)) {
        trtl_vm_binary_avx2(op, a, a_vec, b, b_vec, y, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) {
        float x = a[a_vec ? i : 0], z = b[b_vec ? i : 0];
        switch (op) {
        case TRTL_EW_SUM: y[i] = x + z; break;
        case TRTL_EW_PROD: y[i] = x * z; break;
        case TRTL_EW_SUB: y[i] = x - z; break;
        case TRTL_EW_DIV: y[i] = x / z; break;
        case TRTL_EW_MAX: y[i] = (x > z || x != x) ? x : z; break;
        case TRTL_EW_MIN: y[i] = (x < z || x != x) ? x : z; break;
        default: break;
        }
    }
}

void trtl_vm_fma(const float *src, float *dst, int64_t n, const float *s, int s_vec, const float *t, int t_vec)
{
#ifdef TRTL_VM_HAVE_X86
    if (trtl_cpu_has(ISA_512)) {
        trtl_vm_fma_avx512(src, dst, n, s, s_vec, t, t_vec);
        return;
    }
    if (trtl_cpu_has(ISA_AVX2)) {
        trtl_vm_fma_avx2(src, dst, n, s, s_vec, t, t_vec);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        dst[i] = (float)((double)src[i] * (s ? s[s_vec ? i : 0] : 1.0) + (t ? t[t_vec ? i : 0] : 0.0));
}

float trtl_vm_exp_sum(float *x, int64_t n, float shift)
{
#ifdef TRTL_VM_HAVE_X86
    if (trtl_cpu_has(ISA_512))
        return trtl_vm_exp_sum_avx512(x, n, shift);
    if (trtl_cpu_has(ISA_AVX2))
        return trtl_vm_exp_sum_avx2(x, n, shift);
#endif
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float v = unary_scalar(TRTL_UN_EXP, x[i] - shift);
        x[i] = v < FLT_MIN ? 0.0f : v; /* false for NaN: kept */
        sum += x[i];
    }
    return sum;
}

typedef struct rows_job {
    trtl_vm_row_fn fn;
    void *ctx;
    int64_t row_len, per_row; /* chunks per row */
} rows_job;

static void rows_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const rows_job *j = ctx;
    for (int64_t u = begin; u < end; u++) {
        int64_t row = u / j->per_row, at = (u % j->per_row) * TRTL_VM_CHUNK;
        int64_t len = j->row_len - at < TRTL_VM_CHUNK ? j->row_len - at : TRTL_VM_CHUNK;
        j->fn(j->ctx, row, at, len);
    }
}

void trtl_vm_rows(struct trtl_threadpool *pool, int64_t rows, int64_t row_len, trtl_vm_row_fn fn, void *ctx)
{
    if (rows <= 0 || row_len <= 0)
        return;
    rows_job j = {fn, ctx, row_len, (row_len + TRTL_VM_CHUNK - 1) / TRTL_VM_CHUNK};
    int64_t unit = row_len < TRTL_VM_CHUNK ? row_len : TRTL_VM_CHUNK;
    trtl_parallel_for(pool, rows * j.per_row, TRTL_VM_GRAIN / unit + 1, rows_task, &j);
}
