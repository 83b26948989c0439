/*
 * reduce_axes.c -- "reduce.axes": float reductions (SUM, PROD, MAX, MIN, AVG) over any set of
 * axes that is not a trailing block (that is reduce.inner's case).
 *
 * The input dims are simplified first: dims of size 1 drop out and neighbouring dims that are
 * both reduced or both kept merge, leaving alternating groups.  Then one of two forms:
 *   rows  (the last group is kept, size W):  y[o, 0:W] = op over r of x[base(o) + off(r) : + W];
 *         every reduced index r adds one contiguous row of W floats to W accumulators, so the
 *         vectors run along W (AdderNet's ReduceSum over channels of [N, Co, Ci, H, W], a mean
 *         over the batch, a max over H of NCHW).  Work items are (o, block of W), split over the
 *         pool; the innermost reduced group is a fixed stride inside the SIMD loop, the others
 *         step an odometer outside it, the partial result kept in y between calls.
 *   runs  (the last group is reduced, size W): each output reduces some contiguous runs of W
 *         floats (one per index of the other reduced groups); each run is a vector reduction
 *         to one partial, the partials combined in order.  Outputs are split over the pool.
 * AVX-512, AVX2+FMA and portable variants, picked per call from trtl_cpu_features().
 *
 * Semantics are the reference kernel's (ref/reduce.c) in float: MAX / MIN keep a NaN once met
 * (max(v, acc) = v > acc ? v : acc, then a NaN v replaces acc); AVG divides the float sum by the
 * reduced count; an empty reduction gives the reference's identities (AVG: NaN).  Sums are float
 * sums along the reduced axes, so they differ from the reference's double sums by rounding only.
 */
#include <math.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/cpu.h"
#include "core/dims.h"

#if defined(__x86_64__) || defined(__i386__)
#define RA_X86 1
#endif

enum { ISA_C, ISA_AVX2, ISA_AVX512 };
#define RA_BLOCK 128 /* widest block of a row handled by one work item */

/* ---- geometry ------------------------------------------------------------------------------ */

typedef struct ra_geom {
    int ng;                          /* groups after simplification */
    int64_t size[TRTL_MAX_DIMS];     /* group sizes */
    int64_t stride[TRTL_MAX_DIMS];   /* element strides in x */
    int red[TRTL_MAX_DIMS];          /* 1: reduced */
    int64_t nred;                    /* reduced volume (AVG's divisor) */
    int64_t nout;                    /* output volume */
} ra_geom;

/* Simplified groups of x's dims under `axes`; 0 when some dim is 0 (nout / nred tell which). */
static int ra_geom_make(const trtl_dims *xd, uint32_t axes, ra_geom *g)
{
    int64_t sz[TRTL_MAX_DIMS];
    int rd[TRTL_MAX_DIMS], n = 0;
    g->nred = g->nout = 1;
    int empty = 0;
    for (int i = 0; i < xd->nb_dims; i++) {
        int r = (int)(axes >> i & 1u);
        int64_t d = xd->d[i];
        if (r)
            g->nred *= d;
        else
            g->nout *= d;
        if (d == 0)
            empty = 1;
        if (d == 1)
            continue;
        if (n > 0 && rd[n - 1] == r) {
            sz[n - 1] *= d;
            continue;
        }
        sz[n] = d;
        rd[n++] = r;
    }
    g->ng = n;
    int64_t s = 1;
    for (int i = n - 1; i >= 0; i--) {
        g->size[i] = sz[i];
        g->red[i] = rd[i];
        g->stride[i] = s;
        s *= sz[i];
    }
    return !empty;
}

/* The axes are exactly [first, rank) for some first: reduce.inner's case, not ours. */
static int suffix_axes(uint32_t axes, int rank)
{
    if (!axes || rank <= 0 || axes >> rank)
        return 0;
    int first = 0;
    while (!(axes >> first & 1u))
        first++;
    return axes == ((1u << rank) - 1) - ((1u << first) - 1);
}

static float ra_identity(int op)
{
    return op == TRTL_RED_PROD ? 1.0f : op == TRTL_RED_MAX ? -INFINITY : op == TRTL_RED_MIN ? INFINITY : 0.0f;
}

/* acc op v with the reference's NaN rule. */
static inline float comb1(int op, float acc, float v)
{
    switch (op) {
    case TRTL_RED_PROD: return acc * v;
    case TRTL_RED_MAX: return (v > acc || v != v) ? v : acc;
    case TRTL_RED_MIN: return (v < acc || v != v) ? v : acc;
    default: return acc + v;
    }
}

/* ---- portable ------------------------------------------------------------------------------ */

/* y[0:w] (= identity when first) op= rows x + r * st, r < n. */
static void rows_c(int op, const float *x, int64_t st, int64_t n, int64_t w, float *y, int first)
{
    if (first)
        for (int64_t i = 0; i < w; i++)
            y[i] = ra_identity(op);
    for (int64_t r = 0; r < n; r++) {
        const float *p = x + r * st;
        switch (op) {
        case TRTL_RED_PROD:
            for (int64_t i = 0; i < w; i++)
                y[i] *= p[i];
            break;
        case TRTL_RED_MAX:
            for (int64_t i = 0; i < w; i++)
                y[i] = (p[i] > y[i] || p[i] != p[i]) ? p[i] : y[i];
            break;
        case TRTL_RED_MIN:
            for (int64_t i = 0; i < w; i++)
                y[i] = (p[i] < y[i] || p[i] != p[i]) ? p[i] : y[i];
            break;
        default:
            for (int64_t i = 0; i < w; i++)
                y[i] += p[i];
        }
    }
}

/* op over x[0:n] (n >= 1), combined left to right in eight partials for SUM / AVG. */
static float run_c(int op, const float *x, int64_t n)
{
    if (op == TRTL_RED_SUM || op == TRTL_RED_AVG) {
        float s[8] = {0};
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++)
                s[k] += x[i + k];
        float acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
        for (; i < n; i++)
            acc += x[i];
        return acc;
    }
    float acc = ra_identity(op);
    for (int64_t i = 0; i < n; i++)
        acc = comb1(op, acc, x[i]);
    return acc;
}

#ifdef RA_X86
/* ---- AVX-512 and AVX2: one body (reduce_axes_simd.h) over each ISA's vectors (reduce_vec.h) -------- */

#define RV_AVX512
#include "kernels/x86/reduce_vec.h"
#include "kernels/x86/reduce_axes_simd.h"
#include "kernels/x86/reduce_vec_end.h"

#define RV_AVX2
#include "kernels/x86/reduce_vec.h"
#include "kernels/x86/reduce_axes_simd.h"
#include "kernels/x86/reduce_vec_end.h"
#endif

/* ---- driver -------------------------------------------------------------------------------- */

typedef struct ra_job {
    const float *x;
    float *y;
    const ra_geom *g;
    int op, isa;
    int64_t w;       /* rows: the last group's size; runs: the run length */
    int64_t bw;      /* rows: block width of one work item */
    int64_t nblk;    /* rows: blocks per output row */
    int last_red;    /* the reduced group nearest the end (rows: its stride is the SIMD loop's) */
} ra_job;

static void rows_any(const ra_job *j, const float *x, int64_t st, int64_t n, int64_t w, float *y, int first)
{
#ifdef RA_X86
    if (j->isa == ISA_AVX512) {
        rows_avx512(j->op, x, st, n, w, y, first);
        return;
    }
    if (j->isa == ISA_AVX2) {
        rows_avx2(j->op, x, st, n, w, y, first);
        return;
    }
#endif
    rows_c(j->op, x, st, n, w, y, first);
}

static float run_any(const ra_job *j, const float *x, int64_t n)
{
#ifdef RA_X86
    if (j->isa == ISA_AVX512)
        return run_avx512(j->op, x, n);
    if (j->isa == ISA_AVX2)
        return run_avx2(j->op, x, n);
#endif
    return run_c(j->op, x, n);
}

/* x offset of kept index o (over the kept groups but `skip`), outermost first. */
static int64_t kept_offset(const ra_geom *g, int64_t o, int skip)
{
    int64_t off = 0;
    for (int i = g->ng - 1; i >= 0; i--) {
        if (g->red[i] || i == skip)
            continue;
        off += (o % g->size[i]) * g->stride[i];
        o /= g->size[i];
    }
    return off;
}

/* x offset of the odometer's reduced index (groups other than `skip`). */
static int64_t odo_offset(const ra_geom *g, int64_t *idx, int skip)
{
    int64_t off = 0;
    for (int i = 0; i < g->ng; i++)
        if (g->red[i] && i != skip)
            off += idx[i] * g->stride[i];
    return off;
}

/* Advances the odometer over the reduced groups other than `skip` (innermost fastest). */
static void odo_step(const ra_geom *g, int64_t *idx, int skip)
{
    for (int i = g->ng - 1; i >= 0; i--) {
        if (!g->red[i] || i == skip)
            continue;
        if (++idx[i] < g->size[i])
            return;
        idx[i] = 0;
    }
}

/* Volume of the reduced groups other than `skip`. */
static int64_t red_volume(const ra_geom *g, int skip)
{
    int64_t v = 1;
    for (int i = 0; i < g->ng; i++)
        if (g->red[i] && i != skip)
            v *= g->size[i];
    return v;
}

static void rows_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const ra_job *j = ctx;
    const ra_geom *g = j->g;
    int lr = j->last_red, lw = g->ng - 1;
    int64_t nouter = red_volume(g, lr), n = g->size[lr], st = g->stride[lr];
    for (int64_t b = begin; b < end; b++) {
        int64_t o = b / j->nblk, c0 = (b % j->nblk) * j->bw;
        int64_t w = j->w - c0 < j->bw ? j->w - c0 : j->bw;
        const float *x = j->x + kept_offset(g, o, lw) + c0;
        float *y = j->y + o * j->w + c0;
        int64_t idx[TRTL_MAX_DIMS] = {0};
        for (int64_t r = 0; r < nouter; r++) {
            rows_any(j, x + odo_offset(g, idx, lr), st, n, w, y, r == 0);
            odo_step(g, idx, lr);
        }
        if (j->op == TRTL_RED_AVG) {
            float d = (float)g->nred;
            for (int64_t i = 0; i < w; i++)
                y[i] /= d;
        }
    }
}

static void runs_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const ra_job *j = ctx;
    const ra_geom *g = j->g;
    int lw = g->ng - 1;
    int64_t nouter = red_volume(g, lw);
    for (int64_t o = begin; o < end; o++) {
        const float *x = j->x + kept_offset(g, o, -1);
        int64_t idx[TRTL_MAX_DIMS] = {0};
        float acc = ra_identity(j->op);
        for (int64_t r = 0; r < nouter; r++) {
            acc = comb1(j->op == TRTL_RED_AVG ? TRTL_RED_SUM : j->op, acc, run_any(j, x + odo_offset(g, idx, lw), j->w));
            odo_step(g, idx, lw);
        }
        j->y[o] = j->op == TRTL_RED_AVG ? acc / (float)g->nred : acc;
    }
}

static int reduce_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    uint32_t axes = n->p.reduce.axes;
    int r = in_dims[0].nb_dims;
    return n->n_in < 2 && r > 0 && axes && !(axes >> r) && !suffix_axes(axes, r);
}

static trtl_status reduce_run(const trtl_kernel_args *a)
{
    const trtl_dims *xd = &a->in[0].dims;
    uint32_t axes = a->node->p.reduce.axes;
    int op = a->node->p.reduce.op;
    if (a->node->n_in > 1 || !axes || xd->nb_dims <= 0 || axes >> xd->nb_dims || a->in[0].dtype != TRTL_FLOAT)
        return trtl_ref_reduce(a); /* only a corrupt plan pairs this kernel with these: the reference handles any */
    ra_geom g;
    float *y = a->out[0].data;
    if (!ra_geom_make(xd, axes, &g) || g.ng == 0 || g.nred == 1) {
        if (g.nout == 0)
            return TRTL_OK;
        if (g.nred == 0) { /* reducing nothing: as the reference kernel (AVG is 0/0) */
            float v = op == TRTL_RED_AVG ? NAN : ra_identity(op);
            for (int64_t o = 0; o < g.nout; o++)
                y[o] = v;
            return TRTL_OK;
        }
        /* one element per output (reduced dims all 1): a copy, AVG divides by 1 */
        const float *x = a->in[0].data;
        for (int64_t o = 0; o < g.nout; o++)
            y[o] = x[o];
        return TRTL_OK;
    }
    ra_job j = {a->in[0].data, y, &g, op, ISA_C, g.size[g.ng - 1], 0, 0, -1};
#ifdef RA_X86
    j.isa = trtl_cpu_has(TRTL_CPU_AVX512F) ? ISA_AVX512 : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? ISA_AVX2 : ISA_C;
#endif
    if (g.red[g.ng - 1]) {
        int64_t per = g.nred; /* elements read per output */
        trtl_parallel_for(a->pool, g.nout, per >= 8192 ? 1 : 8192 / per + 1, runs_task, &j);
        return TRTL_OK;
    }
    for (int i = g.ng - 1; i >= 0 && j.last_red < 0; i--)
        if (g.red[i])
            j.last_red = i;
    int64_t rows = g.nout / j.w; /* output rows of w */
    /* blocks of at most RA_BLOCK; narrower (down to 32) when there are too few rows to share */
    j.bw = RA_BLOCK;
    while (j.bw > 32 && rows * ((j.w + j.bw - 1) / j.bw) < 8)
        j.bw /= 2;
    j.nblk = (j.w + j.bw - 1) / j.bw;
    int64_t work = g.nred * (j.w < j.bw ? j.w : j.bw);
    trtl_parallel_for(a->pool, rows * j.nblk, work >= 8192 ? 1 : 8192 / work + 1, rows_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_reduce_axes = {
    .name = "reduce.axes",
    .op = TRTL_OP_REDUCE,
    .applies = reduce_applies,
    .run = reduce_run,
};
