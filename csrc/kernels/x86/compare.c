/*
 * compare.c -- "elementwise.compare": IElementWiseLayer EQUAL / GREATER / LESS of FLOAT, INT32 or INT64 tensors
 * (BOOL out) and AND / OR / XOR of BOOL tensors, every broadcast, the reference's bytes (0 / 1; kernels/ref/
 * elementwise.c): attention and padding masks of transformer exports (Equal(ids, pad), Less(pos, len),
 * causal masks, And / Or of masks), detection's score thresholds.
 *
 * The reference's coalesced broadcast (ref/broadcast.h) gives rows in which each operand advances by one element
 * or repeats; x86/bcast_rows.c cuts them in chunks over the pool.  AVX2: FLOAT / INT32 rows 32 elements a step
 * (four 8-lane compares -- ordered quiet for floats: NaN compares false, -0 == +0 -- packed to 32 bytes and
 * masked to 0 / 1; a repeated operand broadcast in a register), BOOL rows 32 bytes a step (any nonzero byte is
 * true, as the reference reads them); INT64 and the tails: scalar loops per type.
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

typedef struct cmp_job {
    const char *a, *b;
    uint8_t *y;
    size_t es;
    trtl_dtype t;
    int32_t op;
    int avx2;
} cmp_job;

#define CMP_LOOP(T, EXPR)                                                                                   \
    do {                                                                                                    \
        const T *pa = (const T *)a, *pb = (const T *)b;                                                     \
        for (int64_t i = 0; i < n; i++) {                                                                   \
            T x = pa[i * sa], z = pb[i * sb];                                                               \
            y[i] = (uint8_t)(EXPR);                                                                         \
        }                                                                                                   \
    } while (0)

#define CMP_TYPE(T)                                                                                         \
    do {                                                                                                    \
        switch (op) {                                                                                       \
        case TRTL_EW_EQUAL: CMP_LOOP(T, x == z); break;                                                     \
        case TRTL_EW_GREATER: CMP_LOOP(T, x > z); break;                                                    \
        default: CMP_LOOP(T, x < z); break;                                                                 \
        }                                                                                                   \
    } while (0)

static void row_portable(int32_t op, trtl_dtype t, const char *a, int64_t sa, const char *b, int64_t sb, uint8_t *y,
                         int64_t n)
{
    switch (t) {
    case TRTL_FLOAT: CMP_TYPE(float); break;
    case TRTL_INT32: CMP_TYPE(int32_t); break;
    case TRTL_INT64: CMP_TYPE(int64_t); break;
    default: /* BOOL: AND / OR / XOR of (byte != 0) */
        switch (op) {
        case TRTL_EW_AND: CMP_LOOP(uint8_t, (x != 0) & (z != 0)); break;
        case TRTL_EW_OR: CMP_LOOP(uint8_t, (x != 0) | (z != 0)); break;
        default: CMP_LOOP(uint8_t, (x != 0) ^ (z != 0)); break;
        }
        break;
    }
}

#if defined(__x86_64__) || defined(__i386__)
/* 8 lanes of a (advancing or, sa == 0, the register ra) against b: all-ones where the comparison holds. */
__attribute__((target("avx2"))) static inline __m256i cmp8(int32_t op, int isf, __m256i va, __m256i vb)
{
    if (isf) {
        __m256 fa = _mm256_castsi256_ps(va), fb = _mm256_castsi256_ps(vb);
        __m256 m = op == TRTL_EW_EQUAL ? _mm256_cmp_ps(fa, fb, _CMP_EQ_OQ)
                 : op == TRTL_EW_GREATER ? _mm256_cmp_ps(fa, fb, _CMP_GT_OQ)
                                         : _mm256_cmp_ps(fa, fb, _CMP_LT_OQ);
        return _mm256_castps_si256(m);
    }
    return op == TRTL_EW_EQUAL ? _mm256_cmpeq_epi32(va, vb)
         : op == TRTL_EW_GREATER ? _mm256_cmpgt_epi32(va, vb)
                                 : _mm256_cmpgt_epi32(vb, va);
}

/* FLOAT / INT32 rows, 32 elements a step. */
__attribute__((target("avx2"))) static void row4_avx2(int32_t op, int isf, const int32_t *a, int64_t sa,
                                                      const int32_t *b, int64_t sb, uint8_t *y, int64_t n)
{
    const __m256i one = _mm256_set1_epi8(1), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i ra = _mm256_set1_epi32(a[0]), rb = _mm256_set1_epi32(b[0]);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i m[4];
        for (int k = 0; k < 4; k++) {
            __m256i va = sa ? _mm256_loadu_si256((const __m256i *)(a + i + 8 * k)) : ra;
            __m256i vb = sb ? _mm256_loadu_si256((const __m256i *)(b + i + 8 * k)) : rb;
            m[k] = cmp8(op, isf, va, vb);
        }
        /* 32-bit masks -> bytes: the packs work per 128-bit lane, the permute restores the order */
        __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(m[0], m[1]), _mm256_packs_epi32(m[2], m[3]));
        p = _mm256_permutevar8x32_epi32(p, order);
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_and_si256(p, one));
    }
    row_portable(op, isf ? TRTL_FLOAT : TRTL_INT32, (const char *)(a + i * sa), sa, (const char *)(b + i * sb), sb,
                 y + i, n - i);
}

/* BOOL rows, 32 bytes a step. */
__attribute__((target("avx2"))) static void row_bool_avx2(int32_t op, const uint8_t *a, int64_t sa, const uint8_t *b,
                                                          int64_t sb, uint8_t *y, int64_t n)
{
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi8(1);
    __m256i ra = _mm256_set1_epi8((char)a[0]), rb = _mm256_set1_epi8((char)b[0]);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i va = sa ? _mm256_loadu_si256((const __m256i *)(a + i)) : ra;
        __m256i vb = sb ? _mm256_loadu_si256((const __m256i *)(b + i)) : rb;
        __m256i fa = _mm256_cmpeq_epi8(va, zero), fb = _mm256_cmpeq_epi8(vb, zero); /* false lanes */
        __m256i r = op == TRTL_EW_AND ? _mm256_andnot_si256(_mm256_or_si256(fa, fb), one)
                  : op == TRTL_EW_OR  ? _mm256_andnot_si256(_mm256_and_si256(fa, fb), one)
                                      : _mm256_and_si256(_mm256_xor_si256(fa, fb), one);
        _mm256_storeu_si256((__m256i *)(y + i), r);
    }
    row_portable(op, TRTL_BOOL, (const char *)(a + i * sa), sa, (const char *)(b + i * sb), sb, y + i, n - i);
}
#endif

static void cmp_row(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s)
{
    const cmp_job *j = ctx;
    const char *a = j->a + (size_t)off[0] * j->es, *b = j->b + (size_t)off[1] * j->es;
    uint8_t *y = j->y + out_off;
#if defined(__x86_64__) || defined(__i386__)
    if (j->avx2 && (j->t == TRTL_FLOAT || j->t == TRTL_INT32)) {
        row4_avx2(j->op, j->t == TRTL_FLOAT, (const int32_t *)a, s[0], (const int32_t *)b, s[1], y, n);
        return;
    }
    if (j->avx2 && j->t == TRTL_BOOL) {
        row_bool_avx2(j->op, (const uint8_t *)a, s[0], (const uint8_t *)b, s[1], y, n);
        return;
    }
#endif
    row_portable(j->op, j->t, a, s[0], b, s[1], y, n);
}

static int is_compare(int32_t op) { return op == TRTL_EW_EQUAL || op == TRTL_EW_GREATER || op == TRTL_EW_LESS; }
static int is_logic(int32_t op) { return op == TRTL_EW_AND || op == TRTL_EW_OR || op == TRTL_EW_XOR; }

static int cmp_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    (void)in_dims;
    return n->n_in == 2 && (is_compare(n->p.ew.op) || is_logic(n->p.ew.op));
}

static trtl_status cmp_run(const trtl_kernel_args *a)
{
    int32_t op = a->node->p.ew.op;
    trtl_dtype t = a->in[0].dtype;
    int ok = a->in[1].dtype == t && a->out[0].dtype == TRTL_BOOL &&
             ((is_compare(op) && (t == TRTL_FLOAT || t == TRTL_INT32 || t == TRTL_INT64)) ||
              (is_logic(op) && t == TRTL_BOOL));
    if (!ok)
        return trtl_ref_elementwise(a); /* words the error (or runs another op) */
    trtl_dims in[2] = {a->in[0].dims, a->in[1].dims};
    trtl_bcast b;
    TRTL_TRY(trtl_bcast_init(&b, a->node->name, &a->out[0].dims, 2, in));
    cmp_job j = {a->in[0].data, a->in[1].data, a->out[0].data, trtl_dtype_size(t), t, op,
                 trtl_cpu_has(TRTL_CPU_AVX2)};
    trtl_bcast_rows(&b, a->pool, cmp_row, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_elementwise_compare = {
    .name = "elementwise.compare",
    .op = TRTL_OP_ELEMENTWISE,
    .applies = cmp_applies,
    .run = cmp_run,
    .any_dtype = 1,
};
