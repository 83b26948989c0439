/*
 * topk.c -- "topk.select": TopK (FLOAT / INT32, MAX / MIN, any axis, any k) with exactly the reference's
 * results (kernels/ref/topk.c: NaN the largest value, equal values by lower index, best first).
 *
 * Every (value, index) candidate becomes one 64-bit key whose unsigned order is the reference's "better":
 * the value's 32-bit order key (floats: sign-magnitude flipped to unsigned order, -0 as +0, every NaN
 * above +inf; MIN: the key complemented) in the high half, the complemented index in the low half (a lower
 * index is better).  The order is total, so any correct selection gives the reference's output.  Per slice
 * a min-heap of the k best keys is kept (root: the worst kept); the slice is scanned 8 (AVX2) or 16
 * (AVX-512) values at a time against the root's value, and only lanes that can beat it (MAX: not <= it,
 * NaN included; MIN: not >= it) take the scalar key test and a heap insertion.  With random data that is
 * about k ln(D / k) insertions, so the scan is the cost.  At the end the heap is sorted best first and the
 * values are read back from the input at the kept indices.  A k of at least a quarter of the row (argsort) sorts
 * every key instead, by a stable radix sort (sort_row).
 *
 * A slice along an inner axis (elements `inner` apart) is first gathered into the thread's scratch row.
 * Slices are split over the pool (one scratch slot per thread: k keys, or 2 D when sorting, plus the gathered
 * row).
 */
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/blas/blas_common.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/threadpool.h"

/* Order key of a float: unsigned order = the reference's order (NaN largest, -0 == +0). */
static inline uint32_t fkey(float v)
{
    if (v != v)
        return 0xffffffffu;
    uint32_t b;
    memcpy(&b, &v, 4);
    if (v == 0.0f)
        b = 0;
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

static inline uint32_t ikey(int32_t v) { return (uint32_t)v ^ 0x80000000u; }

typedef struct tk_geom {
    int64_t outer, D, inner, K;
    int is_float, max;
} tk_geom;

/* Key of element d of the row (the complemented index in the low half). */
static inline uint64_t key_at(const tk_geom *g, const void *row, int64_t d)
{
    uint32_t k = g->is_float ? fkey(((const float *)row)[d]) : ikey(((const int32_t *)row)[d]);
    if (!g->max)
        k = ~k;
    return ((uint64_t)k << 32) | (uint32_t)~(uint32_t)d;
}

/* Min-heap of keys (root: the smallest key, the worst kept candidate). */
static inline void sift_down(uint64_t *h, int64_t i, int64_t n)
{
    uint64_t v = h[i];
    for (;;) {
        int64_t l = 2 * i + 1;
        if (l >= n)
            break;
        int64_t c = (l + 1 < n && h[l + 1] < h[l]) ? l + 1 : l;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static inline int64_t root_index(const uint64_t *h) { return (int64_t)(uint32_t)~(uint32_t)h[0]; }

/* Scalar candidate test and insertion of element d; returns 1 when the heap root changed. */
static inline int offer(const tk_geom *g, const void *row, uint64_t *h, int64_t d)
{
    uint64_t k = key_at(g, row, d);
    if (k <= h[0])
        return 0;
    h[0] = k;
    sift_down(h, 0, g->K);
    return 1;
}

/* Scans row[from, D) for keys better than the heap's root (the heap holds K keys). */
static void scan_portable(const tk_geom *g, const void *row, uint64_t *h, int64_t from)
{
    for (int64_t d = from; d < g->D; d++)
        offer(g, row, h, d);
}

#if defined(__x86_64__) || defined(__i386__)
/* Lanes that may beat threshold value t (a superset: offer() decides).  Floats: MAX takes !(v <= t), MIN
 * !(v >= t) (unordered lanes pass both); INT32: v > t / v < t. */
__attribute__((target("avx2"))) static void scan_avx2(const tk_geom *g, const void *row, uint64_t *h, int64_t from)
{
    int64_t d = from, D = g->D;
    if (g->is_float) {
        const float *x = row;
        __m256 t = _mm256_set1_ps(x[root_index(h)]);
        for (; d + 8 <= D; d += 8) {
            __m256 v = _mm256_loadu_ps(x + d);
            int m = _mm256_movemask_ps(g->max ? _mm256_cmp_ps(v, t, _CMP_NLE_UQ) : _mm256_cmp_ps(v, t, _CMP_NGE_UQ));
            while (m) {
                int l = __builtin_ctz((unsigned)m);
                m &= m - 1;
                if (offer(g, row, h, d + l))
                    t = _mm256_set1_ps(x[root_index(h)]);
            }
        }
    } else {
        const int32_t *x = row;
        __m256i t = _mm256_set1_epi32(x[root_index(h)]);
        for (; d + 8 <= D; d += 8) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(x + d));
            __m256i c = g->max ? _mm256_cmpgt_epi32(v, t) : _mm256_cmpgt_epi32(t, v);
            int m = _mm256_movemask_ps(_mm256_castsi256_ps(c));
            while (m) {
                int l = __builtin_ctz((unsigned)m);
                m &= m - 1;
                if (offer(g, row, h, d + l))
                    t = _mm256_set1_epi32(x[root_index(h)]);
            }
        }
    }
    scan_portable(g, row, h, d);
}

__attribute__((target("avx512f"))) static void scan_avx512(const tk_geom *g, const void *row, uint64_t *h,
                                                           int64_t from)
{
    int64_t d = from, D = g->D;
    if (g->is_float) {
        const float *x = row;
        __m512 t = _mm512_set1_ps(x[root_index(h)]);
        for (; d + 16 <= D; d += 16) {
            __m512 v = _mm512_loadu_ps(x + d);
            unsigned m = g->max ? _mm512_cmp_ps_mask(v, t, _CMP_NLE_UQ) : _mm512_cmp_ps_mask(v, t, _CMP_NGE_UQ);
            while (m) {
                int l = __builtin_ctz(m);
                m &= m - 1;
                if (offer(g, row, h, d + l))
                    t = _mm512_set1_ps(x[root_index(h)]);
            }
        }
    } else {
        const int32_t *x = row;
        __m512i t = _mm512_set1_epi32(x[root_index(h)]);
        for (; d + 16 <= D; d += 16) {
            __m512i v = _mm512_loadu_si512((const void *)(x + d));
            unsigned m = g->max ? _mm512_cmpgt_epi32_mask(v, t) : _mm512_cmpgt_epi32_mask(t, v);
            while (m) {
                int l = __builtin_ctz(m);
                m &= m - 1;
                if (offer(g, row, h, d + l))
                    t = _mm512_set1_epi32(x[root_index(h)]);
            }
        }
    }
    scan_portable(g, row, h, d);
}
#endif

typedef void (*tk_scan_fn)(const tk_geom *g, const void *row, uint64_t *h, int64_t from);

static tk_scan_fn pick_scan(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (trtl_cpu_has(TRTL_CPU_AVX512F))
        return scan_avx512;
    if (trtl_cpu_has(TRTL_CPU_AVX2))
        return scan_avx2;
#endif
    return scan_portable;
}

/* A k of at least a quarter of the row (a full sort, argsort): every key sorted, best first, by a stable LSD radix
 * sort on the value halves in 8-bit digits (keys made in index order, so equal values stay by index), passes whose
 * digit is one value for the whole row skipped.  The heap's sift-downs mispredict a branch each level; these passes
 * do not branch on the data. */
static int use_sort(const tk_geom *g) { return g->D >= 64 && g->K * 4 >= g->D; }

static void sort_row(const tk_geom *g, const void *row, uint64_t *h, uint64_t *tmp)
{
    const int64_t D = g->D;
    uint64_t *a = h, *b = tmp;
    int64_t cnt[4][256];
    memset(cnt, 0, sizeof cnt);
    for (int64_t d = 0; d < D; d++) {
        uint64_t k = key_at(g, row, d);
        a[d] = k;
        uint32_t v = ~(uint32_t)(k >> 32); /* ascending in v = best first */
        for (int p = 0; p < 4; p++)
            cnt[p][(v >> (8 * p)) & 0xff]++;
    }
    for (int p = 0; p < 4; p++) {
        int64_t *c = cnt[p], sum = 0;
        int one = 0;
        for (int i = 0; i < 256; i++)
            one |= c[i] == D;
        if (one)
            continue;
        for (int i = 0; i < 256; i++) {
            int64_t t = c[i];
            c[i] = sum;
            sum += t;
        }
        for (int64_t d = 0; d < D; d++) {
            uint64_t k = a[d];
            b[c[(~(uint32_t)(k >> 32) >> (8 * p)) & 0xff]++] = k;
        }
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != h)
        memcpy(h, a, (size_t)g->K * sizeof *h);
}

/* The K best of one contiguous row, best first, into h[0, K). */
static void select_row(const tk_geom *g, const void *row, uint64_t *h, tk_scan_fn scan)
{
    int64_t K = g->K;
    for (int64_t d = 0; d < K; d++)
        h[d] = key_at(g, row, d);
    for (int64_t i = K / 2 - 1; i >= 0; i--)
        sift_down(h, i, K);
    if (K < g->D)
        scan(g, row, h, K);
    for (int64_t end = K - 1; end > 0; end--) { /* heap sort of a min-heap: the worst to the back, best first */
        uint64_t t = h[0];
        h[0] = h[end];
        h[end] = t;
        sift_down(h, 0, end);
    }
}

typedef struct tk_job {
    tk_geom g;
    const void *x;
    char *yv;
    int32_t *yi;
    char *scratch;
    int64_t slot_bytes, slots, items;
    tk_scan_fn scan;
} tk_job;

static void tk_slot(void *ctx, int64_t sb, int64_t se, int thread)
{
    (void)thread;
    const tk_job *j = ctx;
    const tk_geom *g = &j->g;
    const int64_t D = g->D, K = g->K, inner = g->inner;
    for (int64_t s = sb; s < se; s++) {
        uint64_t *h = (uint64_t *)(j->scratch + s * j->slot_bytes);
        const int sort = use_sort(g);
        uint64_t *tmp = sort ? h + D : NULL;       /* sort: the radix passes' second buffer */
        void *col = h + (sort ? 2 * D : K);        /* the gathered row */
        for (int64_t it = s * j->items / j->slots, end = (s + 1) * j->items / j->slots; it < end; it++) {
            int64_t o = it / inner, i = it % inner, at = o * D * inner + i;
            const void *row;
            if (g->is_float) {
                const float *src = (const float *)j->x + at;
                row = src;
                if (inner > 1) {
                    for (int64_t d = 0; d < D; d++)
                        ((float *)col)[d] = src[d * inner];
                    row = col;
                }
            } else {
                const int32_t *src = (const int32_t *)j->x + at;
                row = src;
                if (inner > 1) {
                    for (int64_t d = 0; d < D; d++)
                        ((int32_t *)col)[d] = src[d * inner];
                    row = col;
                }
            }
            if (sort)
                sort_row(g, row, h, tmp);
            else
                select_row(g, row, h, j->scan);
            int32_t *yi = j->yi + o * K * inner + i;
            if (g->is_float) {
                const float *xr = (const float *)row;
                float *yv = (float *)j->yv + o * K * inner + i;
                for (int64_t q = 0; q < K; q++) {
                    int32_t d = (int32_t)(uint32_t)~(uint32_t)h[q];
                    yi[q * inner] = d;
                    yv[q * inner] = (float)(double)xr[d]; /* as the reference stores it */
                }
            } else {
                int32_t *yv = (int32_t *)j->yv + o * K * inner + i;
                for (int64_t q = 0; q < K; q++) {
                    int32_t d = (int32_t)(uint32_t)~(uint32_t)h[q];
                    yi[q * inner] = d;
                    yv[q * inner] = ((const int32_t *)row)[d];
                }
            }
        }
    }
}

/* The geometry of this run, or an error as the reference words it. */
static trtl_status tk_geometry(const trtl_node *n, const trtl_dims *xd, const trtl_dims *yd, trtl_dtype t, tk_geom *g)
{
    const trtl_topk_params *p = &n->p.topk;
    int ax = trtl_single_axis(p->axes);
    if (ax < 0 || ax >= xd->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': TopK axis out of range", n->name);
    g->outer = trtl_volume_range(xd, 0, ax);
    g->D = xd->d[ax];
    g->inner = trtl_volume_range(xd, ax + 1, xd->nb_dims);
    g->K = n->n_in > 1 ? yd->d[ax] : p->k;
    if (g->K > g->D || yd->d[ax] != g->K)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': k = %lld does not fit axis size %lld", n->name,
                          (long long)g->K, (long long)g->D);
    if (g->D > INT32_MAX)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis too long for int32 indices", n->name);
    if (t != TRTL_FLOAT && t != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': topk.select takes FLOAT or INT32 values", n->name);
    g->is_float = t == TRTL_FLOAT;
    g->max = p->op == TRTL_TOPK_MAX;
    return TRTL_OK;
}

static int64_t tk_slot_bytes(const tk_geom *g)
{
    return ((use_sort(g) ? 2 * g->D : g->K) * 8 + (g->inner > 1 ? g->D * 4 : 0) + 63) / 64 * 64;
}

/* Slots worth using: one per thread, at most one per slice, and ~32K values each at least. */
static int64_t tk_slots(const tk_geom *g, int64_t threads)
{
    int64_t items = g->outer * g->inner, vol = items * g->D, s = threads;
    if (s > items)
        s = items;
    if (s > vol / 32768 + 1)
        s = vol / 32768 + 1;
    return s < 1 ? 1 : s;
}

static size_t tk_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    tk_geom g;
    if (tk_geometry(n, &in[0].dims, &out[0].dims, in[0].dtype, &g) != TRTL_OK)
        return 0;
    return (size_t)(tk_slots(&g, trtl_scratch_slots_all(1 << 20)) * tk_slot_bytes(&g) + 64);
}

static trtl_status tk_run(const trtl_kernel_args *a)
{
    tk_job j;
    TRTL_TRY(tk_geometry(a->node, &a->in[0].dims, &a->out[0].dims, a->in[0].dtype, &j.g));
    j.items = j.g.outer * j.g.inner;
    if (j.items == 0 || j.g.K == 0)
        return TRTL_OK;
    j.slot_bytes = tk_slot_bytes(&j.g);
    int64_t fit = a->scratch && a->scratch_size > 64 ? (int64_t)(a->scratch_size - 64) / j.slot_bytes : 0;
    if (fit < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': topk.select scratch of %zu bytes is too small",
                          a->node->name, a->scratch_size);
    j.slots = tk_slots(&j.g, trtl_threadpool_size(a->pool));
    if (j.slots > fit)
        j.slots = fit;
    j.x = a->in[0].data;
    j.yv = a->out[0].data;
    j.yi = a->out[1].data;
    j.scratch = (char *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    j.scan = pick_scan();
    trtl_parallel_for(a->pool, j.slots, 1, tk_slot, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_topk_select = {
    .name = "topk.select",
    .op = TRTL_OP_TOPK,
    .scratch = tk_scratch,
    .run = tk_run,
    .any_dtype = 1,
};
