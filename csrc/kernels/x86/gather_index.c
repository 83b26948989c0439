/*
 * gather_index.c -- "gather.index": IGatherLayer's ELEMENT mode (ONNX GatherElements, torch.gather: detection
 * heads picking the top-k boxes' rows, sorting by indices, segmentation's index maps) and ND mode (ONNX GatherND:
 * point / box gathers of detection post-processing, batch_dims as paired dims), every element type (any_dtype:
 * bits are copied, like the reference kernels/ref/gather.c), INT32 or INT64 indices, negative ones wrapped once.
 *
 * ELEMENT (no paired dims; the index dims after the axis equal the data's): the output is cut into segments of
 * one data row -- a run of `inner` outputs (the dims after the axis) that read data[base + v * SA + t], or, when
 * the axis is the last dim, the axis' outputs of one outer index, which read data[base + v] -- and the segments
 * go over the pool.  AVX2 (4-byte elements, INT32 indices, offsets within int32): 8 indices a step are wrapped,
 * range-checked and turned into offsets in registers, and a masked vpgatherdd reads the elements (lanes out of
 * range read nothing).  Other sizes and INT64 indices: a scalar loop per element size.
 * ND: one work item per index tuple (the paired dims' offsets as the reference's), a copy of the trailing block
 * (a single element by its size, else a memcpy); tuples over the pool.
 *
 * Indices are checked as they are read; a bad one is skipped and flagged, and after the run the reference kernel
 * runs instead and words the error (the layer, the index, the dimension).  Other forms run the reference.
 */
#include <string.h>
#include <stdatomic.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#define GRAIN 8192 /* output elements per work item, about */

/* ---- ELEMENT ------------------------------------------------------------------------------------ */

typedef struct gel_job {
    const char *x;
    char *y;
    const void *ind;
    int is64, avx2, nout;         /* nout: outer dims (before the axis) */
    size_t es;
    int64_t od[TRTL_MAX_DIMS];    /* the output's outer dims */
    int64_t ds[TRTL_MAX_DIMS];    /* the data's strides of those dims */
    int64_t A, SA;                /* the data's axis size and stride */
    int64_t L, c, per_outer;      /* segment length, t step (1: inner run, 0: last axis), segments per outer */
    atomic_int bad;
} gel_job;

#define GEL_ROW(T, IT)                                                                                      \
    do {                                                                                                    \
        const IT *iv = (const IT *)ind;                                                                     \
        const T *xs = (const T *)base;                                                                      \
        T *ys = (T *)y;                                                                                     \
        for (int64_t k = 0; k < n; k++) {                                                                   \
            int64_t v = (int64_t)iv[k];                                                                     \
            v += v < 0 ? A : 0;                                                                             \
            if ((uint64_t)v >= (uint64_t)A)                                                                 \
                return 1;                                                                                   \
            ys[k] = xs[v * SA + k * c];                                                                     \
        }                                                                                                   \
    } while (0)

/* y[k] = base[wrap(ind[k]) * SA + k * c] for k < n; 1 at an index out of range. */
static int gel_row_portable(char *y, const char *base, const void *ind, int is64, size_t es, int64_t n, int64_t A,
                            int64_t SA, int64_t c)
{
    if (is64) {
        switch (es) {
        case 1: GEL_ROW(uint8_t, int64_t); break;
        case 2: GEL_ROW(uint16_t, int64_t); break;
        case 4: GEL_ROW(uint32_t, int64_t); break;
        default: GEL_ROW(uint64_t, int64_t); break;
        }
    } else {
        switch (es) {
        case 1: GEL_ROW(uint8_t, int32_t); break;
        case 2: GEL_ROW(uint16_t, int32_t); break;
        case 4: GEL_ROW(uint32_t, int32_t); break;
        default: GEL_ROW(uint64_t, int32_t); break;
        }
    }
    return 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* The same for 4-byte elements and INT32 indices, A * SA + n * c < 2^31. */
__attribute__((target("avx2"))) static int gel_row4_avx2(uint32_t *y, const uint32_t *base, const int32_t *ind,
                                                         int64_t n, int64_t A, int64_t SA, int64_t c)
{
    const __m256i zero = _mm256_setzero_si256(), vA = _mm256_set1_epi32((int)A), vSA = _mm256_set1_epi32((int)SA),
                  minus1 = _mm256_set1_epi32(-1), step = _mm256_set1_epi32(c ? 8 : 0);
    __m256i t = c ? _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7) : zero, okall = minus1;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(ind + k));
        v = _mm256_add_epi32(v, _mm256_and_si256(_mm256_cmpgt_epi32(zero, v), vA)); /* negative: + A, once */
        __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi32(vA, v), _mm256_cmpgt_epi32(v, minus1));
        okall = _mm256_and_si256(okall, ok);
        __m256i off = SA == 1 ? v : _mm256_mullo_epi32(v, vSA);
        off = _mm256_add_epi32(off, t);
        t = _mm256_add_epi32(t, step);
        __m256i g = _mm256_mask_i32gather_epi32(zero, (const int *)base, off, ok, 4);
        _mm256_storeu_si256((__m256i *)(y + k), g);
    }
    if (_mm256_movemask_epi8(okall) != -1)
        return 1;
    return gel_row_portable((char *)(y + k), (const char *)(base + k * c), ind + k, 0, 4, n - k, A, SA, c);
}
#endif

static void gel_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    gel_job *j = ctx;
    const size_t es = j->es;
    for (int64_t sg = begin; sg < end; sg++) {
        int64_t rem = sg / j->per_outer, off = 0;
        for (int i = j->nout - 1; i >= 0; i--) {
            off += (rem % j->od[i]) * j->ds[i];
            rem /= j->od[i];
        }
        const char *base = j->x + off * (int64_t)es;
        int64_t e0 = sg * j->L;
        char *y = j->y + e0 * (int64_t)es;
        int bad;
#if defined(__x86_64__) || defined(__i386__)
        if (j->avx2)
            bad = gel_row4_avx2((uint32_t *)y, (const uint32_t *)base, (const int32_t *)j->ind + e0, j->L, j->A, j->SA,
                                j->c);
        else
#endif
            bad = gel_row_portable(y, base, (const char *)j->ind + e0 * (j->is64 ? 8 : 4), j->is64, es, j->L, j->A,
                                   j->SA, j->c);
        if (bad) {
            atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
            return;
        }
    }
}

/* 1: the ELEMENT form this kernel runs (else the reference runs it). */
static int gel_form(const trtl_gather_params *g, const trtl_dims *D, const trtl_dims *I, const trtl_dims *O)
{
    int32_t r = D->nb_dims, axis = g->axis;
    if (g->num_elementwise_dims != 0 || I->nb_dims != r || O->nb_dims != r || axis < 0 || axis >= r)
        return 0;
    for (int32_t i = 0; i < r; i++)
        if (I->d[i] != O->d[i] || (i < axis && O->d[i] > D->d[i]) || (i > axis && O->d[i] != D->d[i]))
            return 0;
    return 1;
}

static trtl_status gel_run(const trtl_kernel_args *a, size_t es, int is64)
{
    const trtl_gather_params *g = &a->node->p.gather;
    const trtl_dims *D = &a->in[0].dims, *O = &a->out[0].dims;
    int32_t r = D->nb_dims, axis = g->axis;
    gel_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.ind = a->in[1].data;
    j.is64 = is64;
    j.es = es;
    j.nout = axis;
    int64_t ds[TRTL_MAX_DIMS], acc = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        ds[i] = acc;
        acc *= D->d[i];
    }
    for (int32_t i = 0; i < axis; i++) {
        j.od[i] = O->d[i];
        j.ds[i] = ds[i];
    }
    int64_t inner = trtl_volume_range(O, axis + 1, r);
    j.A = D->d[axis];
    j.SA = ds[axis];
    if (inner > 1) { /* a segment: the inner run of one (outer, axis) output */
        j.L = inner;
        j.c = 1;
        j.per_outer = O->d[axis];
    } else { /* the last axis (or trailing ones): the axis' outputs of one outer index */
        j.L = O->d[axis];
        j.c = 0;
        j.per_outer = 1;
    }
    j.avx2 = es == 4 && !is64 && trtl_cpu_has(TRTL_CPU_AVX2) && j.A * j.SA + j.L * j.c < ((int64_t)1 << 31);
    atomic_init(&j.bad, 0);
    int64_t segs = trtl_volume(O) / j.L;
    trtl_parallel_for(a->pool, segs, j.L >= GRAIN ? 1 : GRAIN / j.L, gel_task, &j);
    if (atomic_load(&j.bad))
        return trtl_ref_gather(a); /* words the error */
    return TRTL_OK;
}

/* ---- ND ------------------------------------------------------------------------------------------ */

typedef struct gnd_job {
    const char *x;
    char *y;
    const void *ind;
    int is64, b;
    size_t es, bytes;              /* element size; bytes per tuple */
    int64_t k, J;                  /* index tuple length; tuples per paired index */
    int64_t od[TRTL_MAX_DIMS];     /* paired dims of the output */
    int64_t dps[TRTL_MAX_DIMS];    /* their data strides (0 where the data has 1) */
    int64_t ips[TRTL_MAX_DIMS];    /* their index strides (0 where the indices have 1) */
    int64_t kd[TRTL_MAX_DIMS];     /* the indexed data dims */
    int64_t ks[TRTL_MAX_DIMS];     /* and their strides */
    atomic_int bad;
} gnd_job;

static void gnd_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    gnd_job *j = ctx;
    const int64_t k = j->k;
    for (int64_t it = begin; it < end; it++) {
        int64_t pl = it / j->J, jj = it % j->J, doff = 0, ioff = 0;
        for (int i = j->b - 1; i >= 0; i--) {
            int64_t p = pl % j->od[i];
            pl /= j->od[i];
            doff += p * j->dps[i];
            ioff += p * j->ips[i];
        }
        ioff += jj * k;
        for (int64_t t = 0; t < k; t++) {
            int64_t v = j->is64 ? ((const int64_t *)j->ind)[ioff + t] : (int64_t)((const int32_t *)j->ind)[ioff + t];
            v += v < 0 ? j->kd[t] : 0;
            if ((uint64_t)v >= (uint64_t)j->kd[t]) {
                atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
                return;
            }
            doff += v * j->ks[t];
        }
        const char *src = j->x + doff * (int64_t)j->es;
        char *dst = j->y + it * (int64_t)j->bytes;
        switch (j->bytes) {
        case 1: memcpy(dst, src, 1); break;
        case 2: memcpy(dst, src, 2); break;
        case 4: memcpy(dst, src, 4); break;
        case 8: memcpy(dst, src, 8); break;
        default: memcpy(dst, src, j->bytes); break;
        }
    }
}

static trtl_status gnd_run(const trtl_kernel_args *a, size_t es, int is64)
{
    const trtl_gather_params *g = &a->node->p.gather;
    const trtl_dims *D = &a->in[0].dims, *I = &a->in[1].dims, *O = &a->out[0].dims;
    int32_t r = D->nb_dims, q = I->nb_dims, b = g->num_elementwise_dims;
    int64_t k = q >= 1 ? I->d[q - 1] : 0;
    if (b < 0 || b >= r || q < b + 1 || k < 1 || k > r - b || O->nb_dims != q - 1 + r - b - (int32_t)k)
        return trtl_ref_gather(a);
    for (int32_t i = 0; i < b; i++)
        if ((D->d[i] != O->d[i] && D->d[i] != 1) || (I->d[i] != O->d[i] && I->d[i] != 1))
            return trtl_ref_gather(a);
    gnd_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.ind = a->in[1].data;
    j.is64 = is64;
    j.b = b;
    j.es = es;
    j.k = k;
    j.J = trtl_volume_range(I, b, q - 1);
    int64_t ds[TRTL_MAX_DIMS], is[TRTL_MAX_DIMS], acc = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        ds[i] = acc;
        acc *= D->d[i];
    }
    acc = 1;
    for (int32_t i = q - 1; i >= 0; i--) {
        is[i] = acc;
        acc *= I->d[i];
    }
    for (int32_t i = 0; i < b; i++) {
        j.od[i] = O->d[i];
        j.dps[i] = D->d[i] != 1 ? ds[i] : 0;
        j.ips[i] = I->d[i] != 1 ? is[i] : 0;
    }
    for (int64_t t = 0; t < k; t++) {
        j.kd[t] = D->d[b + t];
        j.ks[t] = ds[b + t];
    }
    j.bytes = (size_t)trtl_volume_range(D, b + (int32_t)k, r) * es;
    atomic_init(&j.bad, 0);
    int64_t items = trtl_volume_range(O, 0, b) * j.J, per = (int64_t)(j.bytes / es) + k;
    if (items > 0 && j.bytes > 0)
        trtl_parallel_for(a->pool, items, per >= GRAIN ? 1 : GRAIN / per, gnd_task, &j);
    if (atomic_load(&j.bad))
        return trtl_ref_gather(a); /* words the error */
    return TRTL_OK;
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

static int gi_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_gather_params *g = &n->p.gather;
    (void)in_dims;
    return g->mode == TRTL_GATHER_ND || (g->mode == TRTL_GATHER_ELEMENT && g->num_elementwise_dims == 0);
}

static trtl_status gi_run(const trtl_kernel_args *a)
{
    const trtl_gather_params *g = &a->node->p.gather;
    size_t es = trtl_dtype_size(a->in[0].dtype);
    int is64 = a->in[1].dtype == TRTL_INT64;
    if ((!is64 && a->in[1].dtype != TRTL_INT32) || a->out[0].dtype != a->in[0].dtype ||
        !(es == 1 || es == 2 || es == 4 || es == 8) || trtl_volume(&a->out[0].dims) == 0)
        return trtl_ref_gather(a);
    if (g->mode == TRTL_GATHER_ELEMENT && gel_form(g, &a->in[0].dims, &a->in[1].dims, &a->out[0].dims))
        return gel_run(a, es, is64);
    if (g->mode == TRTL_GATHER_ND)
        return gnd_run(a, es, is64);
    return trtl_ref_gather(a);
}

const trtl_kernel trtl_kernel_gather_index = {
    .name = "gather.index",
    .op = TRTL_OP_GATHER,
    .applies = gi_applies,
    .run = gi_run,
    .any_dtype = 1,
};
