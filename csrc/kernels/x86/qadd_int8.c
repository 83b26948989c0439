/* qadd_int8.c -- "qadd.int8": the int8 add no int8 layer produces (the internal QLINEAR op in mode
 * TRTL_QL_ADD, made by the builder's fuse_qdq from DQ(a) + DQ(b) [-> act] -> Q where neither operand
 * comes from a fusable int8 layer): both operands' codes dequantized in registers, added, the
 * activation, then requantized -- the arithmetic of the reference kernel (ref/qlinear.c run_add), to
 * the bit: (float)(q - z) * s for each operand, one float add, x / scale by a true division, round half
 * to even, saturation.  AVX-512 (16 lanes) and AVX2 (8 lanes) picked at run time from
 * trtl_cpu_features(); the portable loop for tails, other activations and a FLOAT first operand.
 * Work is split over the pool in blocks. */
#include "kernels/kernel.h"
#include "kernels/qconv.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef struct qa_job {
    const trtl_qlinear_params *q;
    const void *x, *r;
    int32_t x_codes, x_signed, r_signed, out_signed;
    void *y;
    int64_t n;
    int isa; /* 2: AVX-512, 1: AVX2, 0: portable */
} qa_job;

static inline int32_t code(const void *p, int is_signed, int64_t i)
{
    return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* Elements [b, e) one at a time. */
static void add_portable(const qa_job *j, int64_t b, int64_t e)
{
    const trtl_qlinear_params *q = j->q;
    for (int64_t i = b; i < e; i++) {
        int32_t qx = j->x_codes ? code(j->x, j->x_signed, i)
                                : trtl_q8_quantize(((const float *)j->x)[i], q->in_scale, q->in_zero_point, j->x_signed);
        float v = (float)(qx - q->in_zero_point) * q->in_scale;
        if (q->res_quant)
            v += (float)(code(j->r, j->r_signed, i) - q->res_zero_point) * q->res_scale;
        else
            v += ((const float *)j->r)[i];
        if (q->act != TRTL_ACT_NONE)
            v = trtl_activation_eval(q->act, q->alpha, q->beta, v);
        if (q->out_quant == 2) {
            ((int8_t *)j->y)[i] = (int8_t)trtl_q8_quantize(v, q->out_scale, q->out_zero_point, j->out_signed);
            continue;
        }
        if (q->out_quant == 1)
            v = (float)(trtl_q8_quantize(v, q->out_scale, q->out_zero_point, j->out_signed) - q->out_zero_point) *
                q->out_scale;
        ((float *)j->y)[i] = v;
    }
}

#if defined(__x86_64__)
#define QA_AVX512 __attribute__((target("avx512f,avx512bw")))
QA_AVX512 static inline __m512 deq512(const void *p, int is_signed, int64_t i, int32_t zero, float scale)
{
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)((const int8_t *)p + i));
    __m512i v = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, _mm512_set1_epi32(zero))), _mm512_set1_ps(scale));
}

/* Whole vectors of [b, e); returns where the vectors stop. */
QA_AVX512 static int64_t add_avx512(const qa_job *j, int64_t b, int64_t e)
{
    const trtl_qlinear_params *q = j->q;
    const __m512 os = _mm512_set1_ps(q->out_scale), oz = _mm512_set1_ps((float)q->out_zero_point);
    const __m512 lo = _mm512_set1_ps(j->out_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps(j->out_signed ? 127.0f : 255.0f);
    int64_t i = b;
    for (; i + 16 <= e; i += 16) {
        __m512 v = _mm512_add_ps(deq512(j->x, j->x_signed, i, q->in_zero_point, q->in_scale),
                                 deq512(j->r, j->r_signed, i, q->res_zero_point, q->res_scale));
        if (q->act == TRTL_ACT_RELU)
            v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ), v);
        if (!q->out_quant) {
            _mm512_storeu_ps((float *)j->y + i, v);
            continue;
        }
        __m512 t = _mm512_roundscale_ps(_mm512_div_ps(v, os), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, oz), lo), hi);
        if (q->out_quant == 2)
            _mm_storeu_si128((__m128i *)(void *)((int8_t *)j->y + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(t)));
        else
            _mm512_storeu_ps((float *)j->y + i, _mm512_mul_ps(_mm512_sub_ps(t, oz), os));
    }
    return i;
}

#define QA_AVX2 __attribute__((target("avx2,fma")))
QA_AVX2 static inline __m256 deq256(const void *p, int is_signed, int64_t i, int32_t zero, float scale)
{
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)((const int8_t *)p + i));
    __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, _mm256_set1_epi32(zero))), _mm256_set1_ps(scale));
}

QA_AVX2 static int64_t add_avx2(const qa_job *j, int64_t b, int64_t e)
{
    const trtl_qlinear_params *q = j->q;
    const __m256 os = _mm256_set1_ps(q->out_scale), oz = _mm256_set1_ps((float)q->out_zero_point);
    const __m256 lo = _mm256_set1_ps(j->out_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps(j->out_signed ? 127.0f : 255.0f);
    int64_t i = b;
    for (; i + 8 <= e; i += 8) {
        __m256 v = _mm256_add_ps(deq256(j->x, j->x_signed, i, q->in_zero_point, q->in_scale),
                                 deq256(j->r, j->r_signed, i, q->res_zero_point, q->res_scale));
        if (q->act == TRTL_ACT_RELU)
            v = _mm256_and_ps(v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
        if (!q->out_quant) {
            _mm256_storeu_ps((float *)j->y + i, v);
            continue;
        }
        __m256 t = _mm256_round_ps(_mm256_div_ps(v, os), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        t = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(t, oz), lo), hi);
        if (q->out_quant == 2) {
            __m256i c = _mm256_cvtps_epi32(t);
            int32_t tmp[8];
            _mm256_storeu_si256((__m256i *)(void *)tmp, c);
            for (int k = 0; k < 8; k++)
                ((int8_t *)j->y)[i + k] = (int8_t)tmp[k];
        } else {
            _mm256_storeu_ps((float *)j->y + i, _mm256_mul_ps(_mm256_sub_ps(t, oz), os));
        }
    }
    return i;
}
#endif

#define QA_BLOCK 4096

static void add_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const qa_job *j = ctx;
    (void)thread;
    b *= QA_BLOCK;
    e = e * QA_BLOCK < j->n ? e * QA_BLOCK : j->n;
    int64_t i = b;
#if defined(__x86_64__)
    /* the vector loops take codes for both operands and the activations they spell out */
    const int vec = j->x_codes && j->q->res_quant && (j->q->act == TRTL_ACT_NONE || j->q->act == TRTL_ACT_RELU);
    if (vec && j->isa == 2)
        i = add_avx512(j, b, e);
    else if (vec && j->isa == 1)
        i = add_avx2(j, b, e);
#endif
    add_portable(j, i, e);
}

static int qa_applies(const trtl_node *n, const trtl_dims *in)
{
    (void)in;
    return n->p.qlin.mode == TRTL_QL_ADD;
}

static trtl_status qa_run(const trtl_kernel_args *a)
{
    const trtl_qlinear_params *q = &a->node->p.qlin;
    qa_job j = {q, a->in[0].data, a->in[1].data, a->in[0].dtype != TRTL_FLOAT, q->in_type == TRTL_INT8,
                q->res_type == TRTL_INT8, q->out_type == TRTL_INT8, a->out[0].data, trtl_volume(&a->out[0].dims), 0};
#if defined(__x86_64__)
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW))
        j.isa = 2;
    else if (trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA))
        j.isa = 1;
#endif
    trtl_parallel_for(a->pool, (j.n + QA_BLOCK - 1) / QA_BLOCK, 4, add_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_qadd_int8 = {
    .name = "qadd.int8",
    .op = TRTL_OP_QLINEAR,
    .cpu_features = 0, /* dispatches itself */
    .applies_epilogue = 1,
    .applies = qa_applies,
    .run = qa_run,
    .precision = TRTL_INT8,
};
