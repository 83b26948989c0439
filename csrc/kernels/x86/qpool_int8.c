/* qpool_int8.c -- "qpool.int8": average pooling on int8 / uint8 codes (the internal QLINEAR op in
 * mode TRTL_QL_POOL, made by the builder's fuse_qdq from DQ -> average pooling / global average
 * pooling -> Q).  Sums of (q - in_zero) in integers, then the one rounding of kernels/qpool.h and the
 * output quantization, so it gives the reference kernel's bits (ref/qlinear.c).  Global pooling sums
 * the bytes of a plane with vpsadbw (AVX-512BW 64 bytes, AVX2 32 bytes a step; signed codes are
 * flipped to u8 by xor 0x80 and corrected once), picked at run time from trtl_cpu_features(), with a
 * portable loop otherwise; window pooling uses integer row loops.  A FLOAT input (no int8 producer)
 * is quantized value by value first, except one on its grid (in_grid, AVX2: its codes recovered by a multiply, global
 * pooling).  Planes are split over the pool. */
#include <math.h>
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/qconv.h"
#include "kernels/qpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* Sum of n bytes as unsigned. */
__attribute__((target("avx512f,avx512bw"))) static int64_t sum_u8_avx512(const uint8_t *p, int64_t n)
{
    __m512i acc = _mm512_setzero_si512();
    const __m512i z = _mm512_setzero_si512();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_loadu_si512((const void *)(p + i)), z));
    if (i < n)
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(((__mmask64)-1) >> (64 - (n - i)), p + i),
                                                    z));
    return _mm512_reduce_add_epi64(acc);
}

__attribute__((target("avx2"))) static int64_t sum_u8_avx2(const uint8_t *p, int64_t n)
{
    __m256i acc = _mm256_setzero_si256();
    const __m256i z = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i *)(const void *)(p + i)), z));
    int64_t s[4];
    _mm256_storeu_si256((__m256i *)(void *)s, acc);
    int64_t r = s[0] + s[1] + s[2] + s[3];
    for (; i < n; i++)
        r += p[i];
    return r;
}

/* The same with the bytes read as signed (each flipped by xor 0x80 = q + 128). */
__attribute__((target("avx512f,avx512bw"))) static int64_t sum_s8_avx512(const uint8_t *p, int64_t n)
{
    __m512i acc = _mm512_setzero_si512();
    const __m512i z = _mm512_setzero_si512(), f = _mm512_set1_epi8((char)0x80);
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512((const void *)(p + i)), f), z));
    if (i < n) {
        __mmask64 m = ((__mmask64)-1) >> (64 - (n - i));
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_maskz_mov_epi8(m, _mm512_xor_si512(
                                                                                   _mm512_maskz_loadu_epi8(m, p + i), f)),
                                                    z));
    }
    return _mm512_reduce_add_epi64(acc) - 128 * n;
}

__attribute__((target("avx2"))) static int64_t sum_s8_avx2(const uint8_t *p, int64_t n)
{
    __m256i acc = _mm256_setzero_si256();
    const __m256i z = _mm256_setzero_si256(), f = _mm256_set1_epi8((char)0x80);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        acc = _mm256_add_epi64(acc, _mm256_sad_epu8(
                                        _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + i)), f), z));
    int64_t s[4];
    _mm256_storeu_si256((__m256i *)(void *)s, acc);
    int64_t r = s[0] + s[1] + s[2] + s[3] - 128 * i;
    for (; i < n; i++)
        r += (int8_t)p[i];
    return r;
}

/* Sum of the codes - zero of n FLOAT values on the input's grid (in_grid: (q - z) * s, fake-quantized by their
 * producer, passes/int8_regions.c / nchwc.c): rint(x * (1 / s)) is q - z exactly (|q - z| <= 255, three roundings of
 * 2^-24 each stay far below 1/2), so no quantizer runs (MobileNetV2's global pooling after a blocked region: the
 * scalar quantize per value cost 2 ns). */
__attribute__((target("avx2"))) static int64_t sum_grid_avx2(const float *x, int64_t n, float rcp)
{
    const __m256 r = _mm256_set1_ps(rcp);
    __m256i acc = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) /* |code| <= 255: 2^23 vectors before an int32 lane could overflow */
        acc = _mm256_add_epi32(acc, _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i), r)));
    int32_t l[8];
    _mm256_storeu_si256((__m256i *)l, acc);
    int64_t t = 0;
    for (int k = 0; k < 8; k++)
        t += l[k];
    for (; i < n; i++)
        t += (int64_t)lrintf(x[i] * rcp);
    return t;
}
#endif

static int64_t sum_portable(const uint8_t *p, int64_t n, int is_signed)
{
    int64_t r = 0;
    if (is_signed)
        for (int64_t i = 0; i < n; i++)
            r += (int8_t)p[i];
    else
        for (int64_t i = 0; i < n; i++)
            r += p[i];
    return r;
}

typedef int64_t (*sum_fn)(const uint8_t *p, int64_t n);

typedef struct qp_job {
    const trtl_qlinear_params *q;
    const void *x;
    int32_t codes, in_signed;
    int32_t grid; /* a FLOAT input on the grid (in_grid) and AVX2: sum_grid_avx2 */
    void *y;
    int64_t H, W, OH, OW;
    sum_fn sum; /* NULL: portable */
} qp_job;

/* Code i of the input (quantized first when the input is FLOAT), minus the zero point. */
static inline int32_t code_at(const qp_job *j, int64_t i)
{
    const trtl_qlinear_params *q = j->q;
    if (!j->codes)
        return trtl_q8_quantize(((const float *)j->x)[i], q->in_scale, q->in_zero_point, j->in_signed) -
               q->in_zero_point;
    return (j->in_signed ? ((const int8_t *)j->x)[i] : ((const uint8_t *)j->x)[i]) - q->in_zero_point;
}

static void put(const trtl_qlinear_params *q, float v, void *y, int64_t i)
{
    if (q->act != TRTL_ACT_NONE)
        v = trtl_activation_eval(q->act, q->alpha, q->beta, v);
    int32_t sgn = q->out_type == TRTL_INT8;
    if (q->out_quant == 2) {
        ((int8_t *)y)[i] = (int8_t)trtl_q8_quantize(v, q->out_scale, q->out_zero_point, sgn);
        return;
    }
    if (q->out_quant == 1)
        v = (float)(trtl_q8_quantize(v, q->out_scale, q->out_zero_point, sgn) - q->out_zero_point) * q->out_scale;
    ((float *)y)[i] = v;
}

static void global_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const qp_job *j = ctx;
    const int64_t hw = j->H * j->W;
    (void)thread;
    for (int64_t p = b; p < e; p++) {
        int64_t sum = 0;
        if (j->codes) {
            const uint8_t *xp = (const uint8_t *)j->x + p * hw;
            sum = (j->sum ? j->sum(xp, hw) : sum_portable(xp, hw, j->in_signed)) - (int64_t)j->q->in_zero_point * hw;
#if defined(__x86_64__)
        } else if (j->grid && hw < ((int64_t)1 << 23)) {
            sum = sum_grid_avx2((const float *)j->x + p * hw, hw, 1.0f / j->q->in_scale);
#endif
        } else {
            for (int64_t i = 0; i < hw; i++)
                sum += code_at(j, p * hw + i);
        }
        put(j->q, trtl_qpool_value(sum, hw, j->q->in_scale), j->y, p);
    }
}

static void window_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const qp_job *j = ctx;
    const trtl_conv_params *c = &j->q->conv;
    const int64_t R = c->kernel_size.d[0], S = c->kernel_size.d[1], sh = c->stride.d[0], sw = c->stride.d[1];
    const int64_t pt = c->pre_padding.d[0], pl = c->pre_padding.d[1];
    (void)thread;
    for (int64_t p = b; p < e; p++)
        for (int64_t oh = 0; oh < j->OH; oh++) {
            int64_t h0 = oh * sh - pt, h1 = h0 + R;
            h0 = h0 < 0 ? 0 : h0;
            h1 = h1 > j->H ? j->H : h1;
            for (int64_t ow = 0; ow < j->OW; ow++) {
                int64_t w0 = ow * sw - pl, w1 = w0 + S, sum = 0;
                w0 = w0 < 0 ? 0 : w0;
                w1 = w1 > j->W ? j->W : w1;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        sum += code_at(j, (p * j->H + h) * j->W + w);
                int64_t valid = (h1 > h0 ? h1 - h0 : 0) * (w1 > w0 ? w1 - w0 : 0);
                put(j->q, trtl_qpool_value(sum, j->q->pool_mode == TRTL_QP_AVG_EXCL ? valid : R * S, j->q->in_scale),
                    j->y, (p * j->OH + oh) * j->OW + ow);
            }
        }
}

static int qp_applies(const trtl_node *n, const trtl_dims *in)
{
    const trtl_qlinear_params *q = &n->p.qlin;
    if (q->mode != TRTL_QL_POOL || in[0].nb_dims != 4)
        return 0;
    return q->pool_mode >= TRTL_QP_GLOBAL ||
           (q->conv.kernel_size.nb_dims == 2 && q->conv.padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_DOWN);
}

static trtl_status qp_run(const trtl_kernel_args *a)
{
    const trtl_qlinear_params *q = &a->node->p.qlin;
    const trtl_dims *x = &a->in[0].dims, *y = &a->out[0].dims;
    qp_job j = {q, a->in[0].data, a->in[0].dtype != TRTL_FLOAT, q->in_type == TRTL_INT8,
                a->in[0].dtype == TRTL_FLOAT && q->in_grid && trtl_cpu_has(TRTL_CPU_AVX2), a->out[0].data,
                x->d[2], x->d[3], y->nb_dims == 4 ? y->d[2] : 1, y->nb_dims == 4 ? y->d[3] : 1, NULL};
#if defined(__x86_64__)
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW))
        j.sum = j.in_signed ? sum_s8_avx512 : sum_u8_avx512;
    else if (trtl_cpu_has(TRTL_CPU_AVX2))
        j.sum = j.in_signed ? sum_s8_avx2 : sum_u8_avx2;
#endif
    const int64_t planes = x->d[0] * x->d[1];
    if (q->pool_mode >= TRTL_QP_GLOBAL)
        trtl_parallel_for(a->pool, planes, 1 + 16384 / (j.H * j.W + 1), global_task, &j);
    else
        trtl_parallel_for(a->pool, planes, 1 + 4096 / (j.OH * j.OW + 1), window_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_qpool_int8 = {
    .name = "qpool.int8",
    .op = TRTL_OP_QLINEAR,
    .cpu_features = 0, /* dispatches itself */
    .applies_epilogue = 1,
    .applies = qp_applies,
    .run = qp_run,
    .precision = TRTL_INT8,
};
