/*
 * qdq_simd.c -- "quantize.simd" / "dequantize.simd": per-tensor QuantizeLinear / DequantizeLinear
 * (one scale, one or no zero point), byte for byte the reference kernels (kernels/ref/qdq_math.h):
 *
 *   quantize:   q = saturate(round_half_even(x / scale) + zero_point); NaN -> the lowest code
 *               (vector: the IEEE quotient, vroundps / vrndscaleps to nearest even, then a clamp to
 *               [qmin - zp, qmax - zp] in float whose max comes first with the bound as second
 *               operand, so a NaN lane becomes qmin - zp; +-Inf saturate; the clamped value is an
 *               exact integer, converted and offset by zp)
 *   dequantize: y = (q - zero_point) * scale, one float rounding (the integer is exact in float)
 *
 * A QDQ transformer from quantize_static quantizes around every layout op (reshape, transpose,
 * split), so these steps are a large share of its time on the reference kernels.  AVX-512 (16
 * lanes) and AVX2 (8 lanes) variants, a portable loop otherwise; tails through the scalar math.
 * Split over the pool above 64K elements.  Per-channel scales keep the reference kernel.
 */
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/ref/qdq_math.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include "kernels/x86/q8_avx2.h"
#define QS_X86 1
#endif

#define QS_CHUNK 16384 /* elements a work item */

typedef struct qs_job {
    const void *x;
    void *y;
    float scale;
    int32_t zp, type; /* type: the codes' dtype (INT8 / UINT8) */
    int64_t n;
    void (*fn)(const struct qs_job *j, int64_t b, int64_t e);
} qs_job;

static void q_scalar(const qs_job *j, int64_t b, int64_t e)
{
    const float *x = j->x;
    for (int64_t i = b; i < e; i++) {
        int32_t q = trtl_q_value(x[i], j->scale, j->zp, j->type);
        if (j->type == TRTL_UINT8)
            ((uint8_t *)j->y)[i] = (uint8_t)q;
        else
            ((int8_t *)j->y)[i] = (int8_t)q;
    }
}

static void dq_scalar(const qs_job *j, int64_t b, int64_t e)
{
    float *y = j->y;
    for (int64_t i = b; i < e; i++) {
        int32_t q = j->type == TRTL_UINT8 ? ((const uint8_t *)j->x)[i] : ((const int8_t *)j->x)[i];
        y[i] = trtl_dq_value(q, j->zp, j->scale);
    }
}

#ifdef QS_X86
#define QS_AVX512 __attribute__((target("avx512f,avx512bw")))
#define QS_AVX2 __attribute__((target("avx2")))

QS_AVX512 static void q_avx512(const qs_job *j, int64_t b, int64_t e)
{
    const float *x = j->x;
    uint8_t *y = j->y;
    const __m512 vs = _mm512_set1_ps(j->scale);
    const __m512 lo = _mm512_set1_ps((float)(trtl_q_min(j->type) - j->zp));
    const __m512 hi = _mm512_set1_ps((float)(trtl_q_max(j->type) - j->zp));
    const __m512i vz = _mm512_set1_epi32(j->zp);
    int64_t i = b;
    for (; i + 16 <= e; i += 16) {
        __m512 r = _mm512_div_ps(_mm512_loadu_ps(x + i), vs);
        r = _mm512_roundscale_ps(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        r = _mm512_min_ps(_mm512_max_ps(r, lo), hi); /* max(NaN, lo) is lo */
        __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(r), vz);
        _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtepi32_epi8(q)); /* in range: the low byte is the code */
    }
    q_scalar(j, i, e);
}

QS_AVX512 static void dq_avx512(const qs_job *j, int64_t b, int64_t e)
{
    const uint8_t *x = j->x;
    float *y = j->y;
    const __m512 vs = _mm512_set1_ps(j->scale);
    const __m512i vz = _mm512_set1_epi32(j->zp);
    const int u8 = j->type == TRTL_UINT8;
    int64_t i = b;
    for (; i + 16 <= e; i += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(x + i));
        __m512i q = u8 ? _mm512_cvtepu8_epi32(c) : _mm512_cvtepi8_epi32(c);
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q, vz)), vs));
    }
    dq_scalar(j, i, e);
}

QS_AVX2 static __m256i q8_avx2(const float *x, __m256 vs, __m256 lo, __m256 hi, __m256i vz)
{
    return trtl_q8_codes_avx2(_mm256_loadu_ps(x), vs, lo, hi, vz);
}

QS_AVX2 static void q_avx2(const qs_job *j, int64_t b, int64_t e)
{
    const float *x = j->x;
    uint8_t *y = j->y;
    const __m256 vs = _mm256_set1_ps(j->scale);
    const __m256 lo = _mm256_set1_ps((float)(trtl_q_min(j->type) - j->zp));
    const __m256 hi = _mm256_set1_ps((float)(trtl_q_max(j->type) - j->zp));
    const __m256i vz = _mm256_set1_epi32(j->zp), perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const int u8 = j->type == TRTL_UINT8;
    int64_t i = b;
    for (; i + 32 <= e; i += 32) {
        /* packs per 128-bit lane: dwords come out a0-3 b0-3 c0-3 d0-3 a4-7 b4-7 c4-7 d4-7 */
        __m256i ab = _mm256_packs_epi32(q8_avx2(x + i, vs, lo, hi, vz), q8_avx2(x + i + 8, vs, lo, hi, vz));
        __m256i cd = _mm256_packs_epi32(q8_avx2(x + i + 16, vs, lo, hi, vz), q8_avx2(x + i + 24, vs, lo, hi, vz));
        __m256i p = u8 ? _mm256_packus_epi16(ab, cd) : _mm256_packs_epi16(ab, cd);
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_permutevar8x32_epi32(p, perm));
    }
    q_scalar(j, i, e);
}

QS_AVX2 static void dq_avx2(const qs_job *j, int64_t b, int64_t e)
{
    const uint8_t *x = j->x;
    float *y = j->y;
    const __m256 vs = _mm256_set1_ps(j->scale);
    const __m256i vz = _mm256_set1_epi32(j->zp);
    const int u8 = j->type == TRTL_UINT8;
    int64_t i = b;
    for (; i + 8 <= e; i += 8) {
        __m128i c = _mm_loadl_epi64((const __m128i *)(x + i));
        __m256i q = u8 ? _mm256_cvtepu8_epi32(c) : _mm256_cvtepi8_epi32(c);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, vz)), vs));
    }
    dq_scalar(j, i, e);
}
#endif

static void qs_items(void *ctx, int64_t b, int64_t e, int thread)
{
    const qs_job *j = ctx;
    (void)thread;
    int64_t lo = b * QS_CHUNK, hi = e * QS_CHUNK < j->n ? e * QS_CHUNK : j->n;
    j->fn(j, lo, hi);
}

/* One scale (and one zero point or none) of a FLOAT scale tensor. */
static int qs_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    return n->n_in >= 2 && trtl_volume(&in_dims[1]) == 1 && (n->n_in < 3 || trtl_volume(&in_dims[2]) == 1);
}

static trtl_status qs_run(const trtl_kernel_args *a, int quantize)
{
    const trtl_node *nd = a->node;
    trtl_dtype codes = quantize ? a->out[0].dtype : a->in[0].dtype;
    if (nd->n_in < 2 || trtl_volume(&a->in[1].dims) != 1 || a->in[1].dtype != TRTL_FLOAT ||
        (nd->n_in >= 3 && trtl_volume(&a->in[2].dims) != 1) || (codes != TRTL_INT8 && codes != TRTL_UINT8) ||
        (quantize ? a->in[0].dtype : a->out[0].dtype) != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': %s.simd needs a FLOAT tensor, INT8/UINT8 codes and one "
                          "scale (the plan is corrupt: the builder never picks it for this layer)",
                          nd->name, quantize ? "quantize" : "dequantize");
    qs_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.scale = *(const float *)a->in[1].data;
    j.type = codes;
    j.zp = nd->n_in < 3 ? 0
                        : a->in[2].dtype == TRTL_UINT8 ? *(const uint8_t *)a->in[2].data : *(const int8_t *)a->in[2].data;
    j.n = trtl_volume(&a->in[0].dims);
    j.fn = quantize ? q_scalar : dq_scalar;
#ifdef QS_X86
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW))
        j.fn = quantize ? q_avx512 : dq_avx512;
    else if (trtl_cpu_has(TRTL_CPU_AVX2))
        j.fn = quantize ? q_avx2 : dq_avx2;
#endif
    if (j.n <= 0)
        return TRTL_OK;
    int64_t items = (j.n + QS_CHUNK - 1) / QS_CHUNK;
    trtl_parallel_for(items >= 4 ? a->pool : NULL, items, 1, qs_items, &j);
    return TRTL_OK;
}

static trtl_status q_run(const trtl_kernel_args *a) { return qs_run(a, 1); }
static trtl_status dq_run(const trtl_kernel_args *a) { return qs_run(a, 0); }

const trtl_kernel trtl_kernel_quantize_simd = {
    .name = "quantize.simd",
    .op = TRTL_OP_QUANTIZE,
    .applies = qs_applies,
    .run = q_run,
};

const trtl_kernel trtl_kernel_dequantize_simd = {
    .name = "dequantize.simd",
    .op = TRTL_OP_DEQUANTIZE,
    .applies = qs_applies,
    .run = dq_run,
};
