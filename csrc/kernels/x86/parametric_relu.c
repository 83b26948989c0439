/*
 * parametric_relu.c -- "parametric_relu.simd": IParametricReLULayer (ONNX PRelu) y = x >= 0 ? x : s * x for
 * every broadcast of the slopes (per channel [1, C, 1, 1], per last dim, one value, full), the same bits as
 * the reference (kernels/ref/parametric_relu.c: one product, the same comparison).
 *
 * The reference's coalesced broadcast (ref/broadcast.h) gives rows in which x and the slopes each advance or
 * repeat (per channel on NCHW: rows of H*W with one slope); x86/bcast_rows.c cuts them in chunks over the
 * pool.  A row is an AVX-512 (16 lanes, masked tail) or AVX2 (8 lanes) loop of compare, multiply and blend,
 * or the portable loop.  The fused epilogue is the engine's (the kernel leaves it, as the reference does).
 */
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/ref/strided.h"
#include "kernels/x86/bcast_rows.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

typedef void (*pr_span_fn)(const float *x, int64_t sx, const float *s, int64_t ss, float *y, int64_t n);

typedef struct pr_job {
    const float *x, *s;
    float *y;
    pr_span_fn span;
} pr_job;

static void pr_portable(const float *x, int64_t sx, const float *s, int64_t ss, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i * sx];
        y[i] = v >= 0.0f ? v : s[i * ss] * v;
    }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void pr_avx2(const float *x, int64_t sx, const float *s, int64_t ss, float *y,
                                                    int64_t n)
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 xv = _mm256_set1_ps(x[0]), sv = _mm256_set1_ps(s[0]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        if (sx)
            xv = _mm256_loadu_ps(x + i);
        if (ss)
            sv = _mm256_loadu_ps(s + i);
        __m256 ge = _mm256_cmp_ps(xv, zero, _CMP_GE_OQ);
        _mm256_storeu_ps(y + i, _mm256_blendv_ps(_mm256_mul_ps(sv, xv), xv, ge));
    }
    pr_portable(x + i * sx, sx, s + i * ss, ss, y + i, n - i);
}

__attribute__((target("avx512f"))) static void pr_avx512(const float *x, int64_t sx, const float *s, int64_t ss,
                                                         float *y, int64_t n)
{
    const __m512 zero = _mm512_setzero_ps();
    __m512 xv = _mm512_set1_ps(x[0]), sv = _mm512_set1_ps(s[0]);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        if (sx)
            xv = _mm512_maskz_loadu_ps(m, x + i);
        if (ss)
            sv = _mm512_maskz_loadu_ps(m, s + i);
        __mmask16 ge = _mm512_cmp_ps_mask(xv, zero, _CMP_GE_OQ);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mask_blend_ps(ge, _mm512_mul_ps(sv, xv), xv));
    }
}
#endif

static pr_span_fn pick_span(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (trtl_cpu_has(TRTL_CPU_AVX512F))
        return pr_avx512;
    if (trtl_cpu_has(TRTL_CPU_AVX2))
        return pr_avx2;
#endif
    return pr_portable;
}

static void pr_row(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *st)
{
    const pr_job *j = ctx;
    j->span(j->x + off[0], st[0], j->s + off[1], st[1], j->y + out_off, n);
}

static trtl_status pr_run(const trtl_kernel_args *a)
{
    if (a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': parametric ReLU needs FLOAT input and slopes", a->node->name);
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, TRTL_FLOAT));
    trtl_dims in[2] = {a->in[0].dims, a->in[1].dims};
    trtl_bcast b;
    TRTL_TRY(trtl_bcast_init(&b, a->node->name, &a->out[0].dims, 2, in));
    pr_job j = {a->in[0].data, a->in[1].data, a->out[0].data, pick_span()};
    trtl_bcast_rows(&b, a->pool, pr_row, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_parametric_relu_simd = {
    .name = "parametric_relu.simd",
    .op = TRTL_OP_PARAMETRIC_RELU,
    .run = pr_run,
};
