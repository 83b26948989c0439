/*
 * cast.c -- "cast.simd": ICastLayer, the same bits as the reference (kernels/ref/convert.h's rules), split
 * over the pool in chunks (trtl_vm_rows).  AVX2 (+ F16C for HALF) loops for the pairs real models run on
 * large tensors: FLOAT <-> HALF (F16C rounds to nearest even as trtl_float_to_half does; NaN lanes are
 * redone by the scalar conversions, which keep the reference's NaN codes), FLOAT -> INT32 (truncation,
 * saturation: >= 2^31 gives INT32_MAX, NaN 0), INT32 -> FLOAT, BOOL / UINT8 -> FLOAT, INT64 <-> INT32 (low
 * bits / sign extension).  Every other pair, and every pair without AVX2, runs the reference conversion on
 * each chunk (it converts element by element, so chunks give the same bits).
 */
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/ref/convert.h"
#include "kernels/x86/vmath.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

typedef void (*cast_fn)(const void *src, void *dst, int64_t n);

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,f16c"))) static void f32_f16(const void *src, void *dst, int64_t n)
{
    const float *x = src;
    uint16_t *y = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            for (int l = 0; l < 8; l++)
                y[i + l] = trtl_float_to_half(x[i + l]);
    }
    for (; i < n; i++)
        y[i] = trtl_float_to_half(x[i]);
}

__attribute__((target("avx2,f16c"))) static void f16_f32(const void *src, void *dst, int64_t n)
{
    const uint16_t *x = src;
    float *y = dst;
    const __m128i e = _mm_set1_epi16(0x7c00);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(x + i));
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, e), e))) /* inf / NaN: the scalar codes */
            for (int l = 0; l < 8; l++)
                y[i + l] = trtl_half_to_float(x[i + l]);
    }
    for (; i < n; i++)
        y[i] = trtl_half_to_float(x[i]);
}

static inline int32_t f2i_scalar(float v)
{
    return v != v ? 0 : v >= 2147483648.0f ? INT32_MAX : v < -2147483648.0f ? INT32_MIN : (int32_t)v;
}

__attribute__((target("avx2"))) static void f32_i32(const void *src, void *dst, int64_t n)
{
    const float *x = src;
    int32_t *y = dst;
    const __m256 big = _mm256_set1_ps(2147483648.0f);
    const __m256i imax = _mm256_set1_epi32(INT32_MAX);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256i r = _mm256_cvttps_epi32(v); /* INT32_MIN for NaN and out of range */
        r = _mm256_blendv_epi8(r, imax, _mm256_castps_si256(_mm256_cmp_ps(v, big, _CMP_GE_OQ)));
        r = _mm256_and_si256(r, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q))); /* NaN: 0 */
        _mm256_storeu_si256((__m256i *)(y + i), r);
    }
    for (; i < n; i++)
        y[i] = f2i_scalar(x[i]);
}

__attribute__((target("avx2"))) static void i32_f32(const void *src, void *dst, int64_t n)
{
    const int32_t *x = src;
    float *y = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    for (; i < n; i++)
        y[i] = (float)x[i];
}

__attribute__((target("avx2"))) static void b_f32(const void *src, void *dst, int64_t n)
{
    const uint8_t *x = src;
    float *y = dst;
    const __m256i one = _mm256_castps_si256(_mm256_set1_ps(1.0f)), zero = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        long long b;
        memcpy(&b, x + i, 8);
        __m256i z = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(b)), zero);
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_andnot_si256(z, one));
    }
    for (; i < n; i++)
        y[i] = x[i] != 0;
}

__attribute__((target("avx2"))) static void u8_f32(const void *src, void *dst, int64_t n)
{
    const uint8_t *x = src;
    float *y = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        long long b;
        memcpy(&b, x + i, 8);
        _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(b))));
    }
    for (; i < n; i++)
        y[i] = x[i];
}

__attribute__((target("avx2"))) static void i64_i32(const void *src, void *dst, int64_t n)
{
    const int64_t *x = src;
    int32_t *y = dst;
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i v = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(x + i)), even);
        _mm_storeu_si128((__m128i *)(y + i), _mm256_castsi256_si128(v));
    }
    for (; i < n; i++)
        y[i] = (int32_t)(uint32_t)(uint64_t)x[i];
}

__attribute__((target("avx2"))) static void i32_i64(const void *src, void *dst, int64_t n)
{
    const int32_t *x = src;
    int64_t *y = dst;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(x + i))));
    for (; i < n; i++)
        y[i] = x[i];
}
#endif

/* The vector loop of (st -> dt) on this CPU, or NULL (the reference conversion). */
static cast_fn pick(trtl_dtype st, trtl_dtype dt)
{
#if defined(__x86_64__) || defined(__i386__)
    if (!trtl_cpu_has(TRTL_CPU_AVX2))
        return NULL;
    if (st == TRTL_FLOAT && dt == TRTL_HALF)
        return trtl_cpu_has(TRTL_CPU_F16C) ? f32_f16 : NULL;
    if (st == TRTL_HALF && dt == TRTL_FLOAT)
        return trtl_cpu_has(TRTL_CPU_F16C) ? f16_f32 : NULL;
    if (st == TRTL_FLOAT && dt == TRTL_INT32)
        return f32_i32;
    if (st == TRTL_INT32 && dt == TRTL_FLOAT)
        return i32_f32;
    if (st == TRTL_BOOL && dt == TRTL_FLOAT)
        return b_f32;
    if (st == TRTL_UINT8 && dt == TRTL_FLOAT)
        return u8_f32;
    if (st == TRTL_INT64 && dt == TRTL_INT32)
        return i64_i32;
    if (st == TRTL_INT32 && dt == TRTL_INT64)
        return i32_i64;
#else
    (void)st;
    (void)dt;
#endif
    return NULL;
}

typedef struct cast_job {
    const char *x;
    char *y;
    trtl_dtype st, dt;
    size_t ss, ds;
    int saturate;
    cast_fn fn;
} cast_job;

static void cast_chunk(void *ctx, int64_t row, int64_t begin, int64_t len)
{
    (void)row;
    const cast_job *j = ctx;
    const void *src = j->x + (size_t)begin * j->ss;
    void *dst = j->y + (size_t)begin * j->ds;
    if (j->fn)
        j->fn(src, dst, len);
    else /* both types are valid (cast_run): it cannot fail */
        (void)trtl_ref_convert_sat(dst, j->dt, src, j->st, len, j->saturate);
}

static trtl_status cast_run(const trtl_kernel_args *a)
{
    int64_t n = trtl_volume(&a->in[0].dims);
    if (n != trtl_volume(&a->out[0].dims))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': cast input and output sizes differ", a->node->name);
    trtl_dtype st = a->in[0].dtype, dt = a->out[0].dtype;
    if (!trtl_dtype_valid((int)st) || !trtl_dtype_valid((int)dt) || st == dt || n <= 0)
        return trtl_ref_cast(a); /* its error, or a copy */
    cast_job j = {a->in[0].data, a->out[0].data, st, dt, trtl_dtype_size(st), trtl_dtype_size(dt),
                  a->node->p.cast.saturate, pick(st, dt)};
    trtl_vm_rows(a->pool, 1, n, cast_chunk, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_cast_simd = {
    .name = "cast.simd",
    .op = TRTL_OP_CAST,
    .run = cast_run,
    .any_dtype = 1,
};
