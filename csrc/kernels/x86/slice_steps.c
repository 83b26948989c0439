/*
 * slice_steps.c -- "slice.steps": ISliceLayer copies whose innermost step is not 1, and slices of any element
 * type: ONNX Slice with a negative step (torch.flip), Expand along the last dim (a step of 0: [N,C,H,1] ->
 * [N,C,H,W]), integer and bool Slice / Expand (position ids, masks), strided slices (YOLOv5's Focus x[..., ::2]).
 * slice.rows (x86/copy_ops.c) copies slices of step 1 along the last dim (every type since this session: the
 * two were near-ties there), so this kernel applies to the other steps only; any_dtype: it copies bits, like the
 * reference.  (run() takes step 1 too, as one memcpy a row.)
 *
 * Every sampled index must be in range (then every mode reads the same elements); anything else, and slices
 * with start / stride from tensors, run the reference kernel, which also words every error.  The output is cut
 * into rows along the last dim (dims whose rows continue each other merged, dims of one dropped); per row, by
 * the innermost step s: 1 a memcpy, 0 a fill of one element, -1 a reversed copy, else a strided loop per
 * element size.  AVX2 does the fill (a register of the element repeated) and the reversal (32 bytes a step:
 * elements reversed within each 128-bit lane by a byte shuffle, then the two lanes swapped); other steps and
 * the portable path are plain loops.  The copies are bound by memory: an AVX-512 variant would not be faster.
 * Rows go over the pool in groups of about GRAIN elements.
 */
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#define GRAIN 16384 /* elements per work item, about */

typedef struct steps_job {
    const char *x;
    char *y;
    size_t es;
    int r, avx2;
    int64_t base;                /* input element of output index 0 */
    int64_t d[TRTL_MAX_DIMS];    /* merged output dims */
    int64_t st[TRTL_MAX_DIMS];   /* input element step per output index, per merged dim */
} steps_job;

/* ---- per row ----------------------------------------------------------------------------------- */

#define PORTABLE_ROW(T)                                                                                     \
    do {                                                                                                    \
        const T *xs = (const T *)x;                                                                         \
        T *ys = (T *)y;                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                                     \
            ys[i] = xs[i * s];                                                                              \
    } while (0)

/* y[i] = x[i * s], elements of es bytes (x is the row's first input element). */
static void row_portable(char *y, const char *x, int64_t n, int64_t s, size_t es)
{
    switch (es) {
    case 1: PORTABLE_ROW(uint8_t); break;
    case 2: PORTABLE_ROW(uint16_t); break;
    case 4: PORTABLE_ROW(uint32_t); break;
    case 8: PORTABLE_ROW(uint64_t); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(y + (size_t)i * es, x + (i * s) * (int64_t)es, es);
        break;
    }
}

#if defined(__x86_64__) || defined(__i386__)
/* n elements of es (1, 2, 4, 8) bytes, each the element at x. */
__attribute__((target("avx2"))) static void fill_avx2(char *y, const char *x, int64_t n, size_t es)
{
    uint64_t v = 0;
    memcpy(&v, x, es);
    __m256i r = es == 1 ? _mm256_set1_epi8((char)v)
              : es == 2 ? _mm256_set1_epi16((short)v)
              : es == 4 ? _mm256_set1_epi32((int)v)
                        : _mm256_set1_epi64x((long long)v);
    size_t bytes = (size_t)n * es, i = 0;
    for (; i + 32 <= bytes; i += 32)
        _mm256_storeu_si256((__m256i *)(y + i), r);
    char tail[32];
    _mm256_storeu_si256((__m256i *)tail, r);
    memcpy(y + i, tail, bytes - i); /* a whole number of elements: 32 is a multiple of es */
}

/* y[i] = x[-i], n elements of es (1, 2, 4, 8) bytes: 32 bytes a step, the elements of each 128-bit lane
 * reversed by a byte shuffle and the lanes swapped. */
__attribute__((target("avx2"))) static void reverse_avx2(char *y, const char *x, int64_t n, size_t es)
{
    int8_t m[16];
    for (int b = 0; b < 16; b++) /* byte b of the lane takes byte (15 - b) rounded within its element */
        m[b] = (int8_t)((15 - b) - (15 - b) % (int)es + b % (int)es);
    const __m128i m128 = _mm_loadu_si128((const __m128i *)m);
    const __m256i mask = _mm256_broadcastsi128_si256(m128);
    int64_t per = 32 / (int64_t)es, i = 0;
    for (; i + per <= n; i += per) { /* output elements i .. i+per-1 are input elements -(i+per-1) .. -i */
        __m256i v = _mm256_loadu_si256((const __m256i *)(x - (i + per - 1) * (int64_t)es));
        v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, mask), 0x4e);
        _mm256_storeu_si256((__m256i *)(y + i * (int64_t)es), v);
    }
    row_portable(y + i * (int64_t)es, x - i * (int64_t)es, n - i, -1, es);
}
#endif

static void copy_row(const steps_job *j, char *y, const char *x, int64_t n, int64_t s)
{
    const size_t es = j->es;
    if (s == 1) {
        memcpy(y, x, (size_t)n * es);
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    if (j->avx2 && (es == 1 || es == 2 || es == 4 || es == 8)) {
        if (s == 0) {
            fill_avx2(y, x, n, es);
            return;
        }
        if (s == -1) {
            reverse_avx2(y, x, n, es);
            return;
        }
    }
#endif
    row_portable(y, x, n, s, es);
}

static void steps_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const steps_job *j = ctx;
    const int r = j->r;
    const int64_t n = j->d[r - 1], s = j->st[r - 1];
    for (int64_t row = begin; row < end; row++) {
        int64_t rem = row, off = j->base;
        for (int k = r - 2; k >= 0; k--) {
            off += (rem % j->d[k]) * j->st[k];
            rem /= j->d[k];
        }
        copy_row(j, j->y + (size_t)(row * n) * j->es, j->x + off * (int64_t)j->es, n, s);
    }
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

static int params_ok(const trtl_slice_params *p, int r)
{
    return r >= 1 && p->start.nb_dims == r && p->stride.nb_dims == r;
}

/* Steps other than 1 along the last dim: slice.rows (x86/copy_ops.c, every element type) copies the others. */
static int steps_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    int r = in_dims[0].nb_dims;
    return n->n_in == 1 && params_ok(&n->p.slice, r) && n->p.slice.stride.d[r - 1] != 1; /* shape-tensor inputs: the reference */
}

static trtl_status steps_run(const trtl_kernel_args *a)
{
    const trtl_slice_params *p = &a->node->p.slice;
    const trtl_dims *X = &a->in[0].dims, *O = &a->out[0].dims;
    int r = X->nb_dims;
    size_t es = trtl_dtype_size(a->in[0].dtype);
    if (a->node->n_in != 1 || !params_ok(p, r) || O->nb_dims != r || es == 0 || a->in[0].dtype != a->out[0].dtype)
        return trtl_ref_slice(a);
    int64_t vol = trtl_volume(O);
    if (vol == 0)
        return TRTL_OK;
    steps_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.es = es;
    j.avx2 = trtl_cpu_has(TRTL_CPU_AVX2);
    int64_t xs = 1, d[TRTL_MAX_DIMS], st[TRTL_MAX_DIMS];
    for (int k = r - 1; k >= 0; k--) {
        int64_t s = p->start.d[k], span, last;
        /* start / stride are user values up to 2^63-1: an overflowing last index is out of range too */
        if (__builtin_mul_overflow(O->d[k] - 1, p->stride.d[k], &span) || __builtin_add_overflow(s, span, &last) ||
            s < 0 || s >= X->d[k] || last < 0 || last >= X->d[k])
            return trtl_ref_slice(a); /* out of range: the mode decides (or the reference's error) */
        j.base += s * xs;
        d[k] = O->d[k];
        st[k] = p->stride.d[k] * xs; /* |stride| * xs <= X's volume: the range check above bounds it */
        xs *= X->d[k];
    }
    /* Merged dims, outermost first: dims of one dropped; a dim whose step is the inner dim's step times its size
     * continues the inner rows (a flip of the last dim over whole maps: one reversed row per map). */
    int m = 0;
    for (int k = 0; k < r; k++) {
        if (d[k] == 1)
            continue;
        j.d[m] = d[k];
        j.st[m] = st[k];
        m++;
    }
    if (m == 0) {
        j.d[0] = 1;
        j.st[0] = 1;
        m = 1;
    }
    int w = 0; /* j.d[0..w]: the merged dims so far */
    for (int k = 1; k < m; k++) {
        if (j.st[w] == j.st[k] * j.d[k]) {
            j.st[w] = j.st[k];
            j.d[w] *= j.d[k];
        } else {
            w++;
            j.d[w] = j.d[k];
            j.st[w] = j.st[k];
        }
    }
    j.r = w + 1;
    int64_t n = j.d[j.r - 1];
    trtl_parallel_for(a->pool, vol / n, n >= GRAIN ? 1 : GRAIN / n, steps_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_slice_steps = {
    .name = "slice.steps",
    .op = TRTL_OP_SLICE,
    .applies = steps_applies,
    .run = steps_run,
    .any_dtype = 1,
};
