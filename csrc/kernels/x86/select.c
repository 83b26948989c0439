/*
 * select.c -- "select.bcast": ISelectLayer (ONNX Where) y = cond ? t : e for every broadcast of the three
 * operands and every element type, the same bits as the reference (kernels/ref/select.c).
 *
 * The reference's coalesced broadcast (ref/broadcast.h) gives rows in which each operand advances by one
 * element or repeats; x86/bcast_rows.c cuts them in chunks over the pool.  In a row: a repeated condition
 * makes it a copy of one operand (memcpy) or a fill of one value; otherwise 4-byte elements (FLOAT, INT32:
 * attention masks and scores) take an AVX2 blend of 8 lanes (the condition's bytes widened, compared with
 * 0; a repeated t or e broadcast in a register), other sizes a scalar loop per element size.
 */
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/ref/strided.h"
#include "kernels/x86/bcast_rows.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct sel_job {
    const uint8_t *cond;
    const char *t, *e;
    char *y;
    size_t es;
    int avx2;
} sel_job;

/* y[i] = c[i] ? t[i * st] : e[i * se] for 4-byte elements, st / se in {0, 1}. */
static void sel4_portable(const uint8_t *c, const uint32_t *t, int64_t st, const uint32_t *e, int64_t se, uint32_t *y,
                          int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = c[i] ? t[i * st] : e[i * se];
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void sel4_avx2(const uint8_t *c, const uint32_t *t, int64_t st,
                                                      const uint32_t *e, int64_t se, uint32_t *y, int64_t n)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i tv = _mm256_set1_epi32((int)t[0]), ev = _mm256_set1_epi32((int)e[0]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        long long cb;
        memcpy(&cb, c + i, 8);
        __m256i z = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(cb)), zero); /* lanes taking e */
        if (st)
            tv = _mm256_loadu_si256((const __m256i *)(t + i));
        if (se)
            ev = _mm256_loadu_si256((const __m256i *)(e + i));
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_blendv_epi8(tv, ev, z));
    }
    sel4_portable(c + i, t + i * st, st, e + i * se, se, y + i, n - i);
}
#endif

static void sel_row(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s)
{
    const sel_job *j = ctx;
    const size_t es = j->es;
    const uint8_t *c = j->cond + off[0];
    const char *t = j->t + (size_t)off[1] * es, *e = j->e + (size_t)off[2] * es;
    char *y = j->y + (size_t)out_off * es;
    if (s[0] == 0) { /* one condition for the row: a copy or a fill of one operand */
        const char *src = c[0] ? t : e;
        int64_t ss = c[0] ? s[1] : s[2];
        if (ss) {
            memcpy(y, src, (size_t)n * es);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, src, 4);
            for (int64_t i = 0; i < n; i++)
                ((uint32_t *)y)[i] = v;
        } else {
            for (int64_t i = 0; i < n; i++)
                memcpy(y + (size_t)i * es, src, es);
        }
        return;
    }
    switch (es) {
    case 4:
#if defined(__x86_64__) || defined(__i386__)
        if (j->avx2) {
            sel4_avx2(c, (const uint32_t *)t, s[1], (const uint32_t *)e, s[2], (uint32_t *)y, n);
            break;
        }
#endif
        sel4_portable(c, (const uint32_t *)t, s[1], (const uint32_t *)e, s[2], (uint32_t *)y, n);
        break;
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)y)[i] = c[i] ? ((const uint8_t *)t)[i * s[1]] : ((const uint8_t *)e)[i * s[2]];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)y)[i] = c[i] ? ((const uint16_t *)t)[i * s[1]] : ((const uint16_t *)e)[i * s[2]];
        break;
    case 8:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)y)[i] = c[i] ? ((const uint64_t *)t)[i * s[1]] : ((const uint64_t *)e)[i * s[2]];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(y + (size_t)i * es, c[i] ? t + (size_t)(i * s[1]) * es : e + (size_t)(i * s[2]) * es, es);
        break;
    }
}

static trtl_status sel_run(const trtl_kernel_args *a)
{
    if (a->in[0].dtype != TRTL_BOOL || a->in[1].dtype != a->in[2].dtype)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': select needs a BOOL condition and then/else of one type",
                          a->node->name);
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, a->in[1].dtype));
    size_t es = trtl_dtype_size(a->out[0].dtype);
    if (es == 0) /* not a valid type: the reference words the error */
        return trtl_ref_select(a);
    trtl_dims in[3] = {a->in[0].dims, a->in[1].dims, a->in[2].dims};
    trtl_bcast b;
    TRTL_TRY(trtl_bcast_init(&b, a->node->name, &a->out[0].dims, 3, in));
    sel_job j = {a->in[0].data, a->in[1].data, a->in[2].data, a->out[0].data, es, trtl_cpu_has(TRTL_CPU_AVX2)};
    trtl_bcast_rows(&b, a->pool, sel_row, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_select_bcast = {
    .name = "select.bcast",
    .op = TRTL_OP_SELECT,
    .run = sel_run,
    .any_dtype = 1,
};
