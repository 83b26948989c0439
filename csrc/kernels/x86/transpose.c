/*
 * transpose.c -- "shuffle.transpose": the shuffle layer (transpose / reshape / transpose) for
 * 4-byte elements whenever it is one strided read of x, i.e. unless both transposes are
 * non-identity around a reshape (that case stays with the reference kernel).
 *
 * The read is described as output dims and input strides; size-1 dims are dropped and output
 * dims whose input strides are contiguous with the next one are merged, so a pure reshape becomes
 * one copy and NCHW -> NHWC becomes a 2-D transpose of [C, HW] per image.  Then:
 *   - the innermost output dim reads with stride 1: rows of contiguous copies (a single range is
 *     split into chunks over the pool);
 *   - otherwise some output dim `a` reads with stride 1 and the innermost output dim `b` writes
 *     with stride 1: 8x8 tiles over (a, b) -- loaded as 8 contiguous rows of x, transposed in
 *     registers with AVX2 and stored as 8 contiguous rows of y (scalar tiles at the edges and on
 *     CPUs without AVX2) -- for every index of the remaining dims.
 * Work is split over (remaining index, 32-wide stripe of a, chunk of b) items: b is cut into chunks (multiples of 8,
 * at least 64) only where the stripes alone make fewer than TILE_ITEMS items (ConvNeXt's NHWC -> NCHW at 56x56: 96
 * channels are 3 stripes of 3136 pixels, 2:1 between two threads; now 18 items).
 *
 * Epilogue: a residual (the node's last input, laid out as y; fuse_epilogue gives one to a pure transpose whose
 * result only an addition reads: ConvNeXt's permute back to NCHW before its block's skip addition) is added as each
 * output row / tile is stored, y = T(x) + r, so the sum costs no pass of its own; an activation (none is fused into
 * a shuffle today) runs over y afterwards.  r may be y itself (each element is read before it is written).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/x86/transpose_2d.h"
#include "kernels/x86/tr8_avx2.h"
#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define STRIPE 32
#define TILE_ITEMS 16 /* fewest work items of the tiled case before b is cut into chunks */
#define COPY_CHUNK 16384 /* elements per work item of a flat copy */

typedef struct tr_plan {
    int n;                            /* merged rank */
    int64_t d[TRTL_MAX_DIMS];         /* output dims */
    int64_t st[TRTL_MAX_DIMS];        /* input strides per output dim */
    int64_t ost[TRTL_MAX_DIMS];       /* output strides */
} tr_plan;

static void effective_perm(const trtl_dims *p, int32_t rank, int64_t *out, int *identity)
{
    *identity = 1;
    for (int32_t i = 0; i < rank; i++) {
        out[i] = p->nb_dims ? p->d[i] : i;
        if (out[i] != i)
            *identity = 0;
    }
}

/* The strided-read description of the shuffle (as the reference kernel derives it); 0 when the
 * layer needs the reference's general path or the shapes do not fit. */
static int make_plan(const trtl_shuffle_params *p, const trtl_dims *X, const trtl_dims *O, tr_plan *pl)
{
    int32_t r = X->nb_dims, r2 = O->nb_dims;
    if (trtl_volume(X) != trtl_volume(O) || r > TRTL_MAX_DIMS || r2 > TRTL_MAX_DIMS)
        return 0;
    int has_reshape = p->reshape_dims.nb_dims >= 0;
    int32_t rm = has_reshape ? r2 : r;
    if ((p->first_transpose.nb_dims && p->first_transpose.nb_dims < r) ||
        (p->second_transpose.nb_dims && p->second_transpose.nb_dims < rm) || (!has_reshape && r2 != r))
        return 0;
    int64_t p1[TRTL_MAX_DIMS], p2[TRTL_MAX_DIMS], xs[TRTL_MAX_DIMS], d[TRTL_MAX_DIMS], st[TRTL_MAX_DIMS];
    int id1, id2, n;
    effective_perm(&p->first_transpose, r, p1, &id1);
    effective_perm(&p->second_transpose, rm, p2, &id2);
    for (int32_t k = 0; k < r; k++)
        if (p1[k] < 0 || p1[k] >= r)
            return 0;
    for (int32_t k = 0; k < rm; k++)
        if (p2[k] < 0 || p2[k] >= rm)
            return 0;
    xs[r > 0 ? r - 1 : 0] = 1;
    for (int32_t k = r - 2; k >= 0; k--)
        xs[k] = xs[k + 1] * X->d[k + 1];
    if (!has_reshape) {
        n = r;
        for (int32_t j = 0; j < r; j++) {
            d[j] = O->d[j];
            st[j] = xs[p1[p2[j]]];
        }
    } else if (id2) {
        n = r;
        for (int32_t k = 0; k < r; k++) {
            d[k] = X->d[p1[k]];
            st[k] = xs[p1[k]];
        }
    } else if (id1) {
        int64_t M[TRTL_MAX_DIMS], ms[TRTL_MAX_DIMS];
        for (int32_t j = 0; j < r2; j++)
            M[p2[j]] = O->d[j];
        ms[r2 - 1] = 1;
        for (int32_t k = r2 - 2; k >= 0; k--)
            ms[k] = ms[k + 1] * M[k + 1];
        n = r2;
        for (int32_t j = 0; j < r2; j++) {
            d[j] = O->d[j];
            st[j] = ms[p2[j]];
        }
    } else {
        return 0;
    }
    /* drop size-1 dims, merge dims contiguous in x */
    pl->n = 0;
    for (int j = 0; j < n; j++) {
        if (d[j] == 1)
            continue;
        if (pl->n && pl->st[pl->n - 1] == st[j] * d[j]) {
            pl->d[pl->n - 1] *= d[j];
            pl->st[pl->n - 1] = st[j];
        } else {
            pl->d[pl->n] = d[j];
            pl->st[pl->n++] = st[j];
        }
    }
    int64_t s = 1;
    for (int j = pl->n - 1; j >= 0; j--) {
        pl->ost[j] = s;
        s *= pl->d[j];
    }
    return 1;
}

typedef struct tr_job {
    const tr_plan *pl;
    const float *x;
    float *y;
    const float *res;      /* residual laid out as y, or NULL */
    int a;                 /* tiled case: the output dim read with stride 1 */
    int64_t stripes;       /* stripes of a per outer index */
    int64_t nbc, bchunk;   /* chunks of b per stripe, and their length (the last may be shorter) */
    int64_t rowlen;        /* row case: elements per row */
    int avx2;
} tr_job;

/* Input / output offsets of outer index o over the plan's dims except `skip1`, `skip2`. */
static void outer_offsets(const tr_plan *pl, int64_t o, int skip1, int skip2, int64_t *xo, int64_t *yo)
{
    *xo = *yo = 0;
    for (int j = pl->n - 1; j >= 0; j--) {
        if (j == skip1 || j == skip2)
            continue;
        int64_t i = o % pl->d[j];
        o /= pl->d[j];
        *xo += i * pl->st[j];
        *yo += i * pl->ost[j];
    }
}

/* Row `o`'s multi-index over the plan's dims but the last (idx[j], j < n - 1), and its input / output offsets. */
static void row_index(const tr_plan *pl, int64_t o, int64_t *idx, int64_t *xo, int64_t *yo)
{
    *xo = *yo = 0;
    for (int j = pl->n - 2; j >= 0; j--) {
        idx[j] = o % pl->d[j];
        o /= pl->d[j];
        *xo += idx[j] * pl->st[j];
        *yo += idx[j] * pl->ost[j];
    }
}

/* y[i] = x[i] + r[i] for i < n */
__attribute__((target("avx2"))) static void add_avx2(const float *x, const float *r, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(r + i));
        __m256 b = _mm256_add_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(r + i + 8));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
    }
    for (; i < n; i++)
        y[i] = x[i] + r[i];
}

static void add_c(const float *x, const float *r, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] + r[i];
}

/* One row (or range) of the copy cases: a copy, or the sum with the residual at the same output offset. */
static void copy_row(const tr_job *j, int64_t xo, int64_t yo, int64_t n)
{
    if (!j->res)
        memcpy(j->y + yo, j->x + xo, (size_t)n * sizeof(float));
    else if (j->avx2)
        add_avx2(j->x + xo, j->res + yo, j->y + yo, n);
    else
        add_c(j->x + xo, j->res + yo, j->y + yo, n);
}

/* Rows [begin, end) of the row case: the row index advances as an odometer (no divisions per row: Swin's
 * q / k / v permute copies 32-float rows, where the per-row index arithmetic cost more than the copy).  The output
 * rows are consecutive (the last dim is innermost in y), so y advances by the row length. */
static void rows_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const tr_job *j = ctx;
    const tr_plan *pl = j->pl;
    if (pl->n <= 1) { /* one flat range in chunks */
        int64_t total = pl->n ? pl->d[0] : 1;
        for (int64_t c = begin; c < end; c++) {
            int64_t b = c * COPY_CHUNK, e = b + COPY_CHUNK < total ? b + COPY_CHUNK : total;
            copy_row(j, b, b, e - b);
        }
        return;
    }
    int64_t idx[TRTL_MAX_DIMS], xo, yo;
    const int last = pl->n - 2;
    row_index(pl, begin, idx, &xo, &yo);
    for (int64_t o = begin; o < end; o++) {
        copy_row(j, xo, yo, j->rowlen);
        yo += j->rowlen;
        xo += pl->st[last];
        for (int k = last; ++idx[k] == pl->d[k] && k > 0; k--) { /* carry */
            idx[k] = 0;
            xo += pl->st[k - 1] - pl->d[k] * pl->st[k];
        }
    }
}

__attribute__((target("avx2"), always_inline)) static inline void tile8_avx2(const float *x, int64_t sx, float *y,
                                                                             int64_t sy)
{
    __m256 r[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(x + i * sx);
    trtl_tr8_avx2(r);
    for (int i = 0; i < 8; i++)
        _mm256_storeu_ps(y + i * sy, r[i]);
}

/* The same with the residual: y[i * sy + k] = x[i + k * sx] + r[i * sy + k] (r laid out as y) */
__attribute__((target("avx2"), always_inline)) static inline void tile8r_avx2(const float *x, int64_t sx, float *y,
                                                                              int64_t sy, const float *res)
{
    __m256 r[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(x + i * sx);
    trtl_tr8_avx2(r);
    for (int i = 0; i < 8; i++)
        _mm256_storeu_ps(y + i * sy, _mm256_add_ps(r[i], _mm256_loadu_ps(res + i * sy)));
}

static void tile_cr(const float *x, int64_t sx, float *y, int64_t sy, int64_t na, int64_t nb, const float *res)
{
    for (int64_t i = 0; i < na; i++)
        for (int64_t k = 0; k < nb; k++)
            y[i * sy + k] = x[i + k * sx] + res[i * sy + k];
}

__attribute__((target("avx2"))) static void stripe_r_avx2(const float *x, int64_t sx, float *y, int64_t sy,
                                                          int64_t na, int64_t nb, const float *res)
{
    int64_t i = 0;
    for (; i + 8 <= na; i += 8) {
        int64_t k = 0;
        for (; k + 8 <= nb; k += 8)
            tile8r_avx2(x + i + k * sx, sx, y + i * sy + k, sy, res + i * sy + k);
        tile_cr(x + i + k * sx, sx, y + i * sy + k, sy, 8, nb - k, res + i * sy + k);
    }
    tile_cr(x + i, sx, y + i * sy, sy, na - i, nb, res + i * sy);
}

static void stripe_r_c(const float *x, int64_t sx, float *y, int64_t sy, int64_t na, int64_t nb, const float *res)
{
    for (int64_t i = 0; i < na; i += 8)
        for (int64_t k = 0; k < nb; k += 8)
            tile_cr(x + i + k * sx, sx, y + i * sy + k, sy, na - i < 8 ? na - i : 8, nb - k < 8 ? nb - k : 8,
                    res + i * sy + k);
}

/* y[i * sy + k] = x[i + k * sx] for i < na, k < nb */
static void tile_c(const float *x, int64_t sx, float *y, int64_t sy, int64_t na, int64_t nb)
{
    for (int64_t i = 0; i < na; i++)
        for (int64_t k = 0; k < nb; k++)
            y[i * sy + k] = x[i + k * sx];
}

__attribute__((target("avx2"))) static void stripe_avx2(const float *x, int64_t sx, float *y, int64_t sy, int64_t na,
                                                        int64_t nb)
{
    int64_t i = 0;
    for (; i + 8 <= na; i += 8) {
        int64_t k = 0;
        for (; k + 8 <= nb; k += 8)
            tile8_avx2(x + i + k * sx, sx, y + i * sy + k, sy);
        tile_c(x + i + k * sx, sx, y + i * sy + k, sy, 8, nb - k);
    }
    tile_c(x + i, sx, y + i * sy, sy, na - i, nb);
}

static void stripe_c(const float *x, int64_t sx, float *y, int64_t sy, int64_t na, int64_t nb)
{
    for (int64_t i = 0; i < na; i += 8)
        for (int64_t k = 0; k < nb; k += 8)
            tile_c(x + i + k * sx, sx, y + i * sy + k, sy, na - i < 8 ? na - i : 8, nb - k < 8 ? nb - k : 8);
}

void trtl_transpose_2d(const float *x, int64_t sx, float *y, int64_t sy, int64_t na, int64_t nb, int avx2)
{
    if (avx2)
        stripe_avx2(x, sx, y, sy, na, nb);
    else
        stripe_c(x, sx, y, sy, na, nb);
}

static void tiles_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const tr_job *j = ctx;
    const tr_plan *pl = j->pl;
    int a = j->a, b = pl->n - 1;
    const int64_t per_outer = j->stripes * j->nbc;
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / per_outer, rem = it % per_outer;
        int64_t a0 = rem / j->nbc * STRIPE, k0 = rem % j->nbc * j->bchunk;
        int64_t na = pl->d[a] - a0 < STRIPE ? pl->d[a] - a0 : STRIPE, xo, yo;
        int64_t nb = pl->d[b] - k0 < j->bchunk ? pl->d[b] - k0 : j->bchunk;
        outer_offsets(pl, o, a, b, &xo, &yo);
        const float *x = j->x + xo + a0 + k0 * pl->st[b];
        float *y = j->y + yo + a0 * pl->ost[a] + k0;
        if (j->res) {
            const float *r = j->res + yo + a0 * pl->ost[a] + k0;
            if (j->avx2)
                stripe_r_avx2(x, pl->st[b], y, pl->ost[a], na, nb, r);
            else
                stripe_r_c(x, pl->st[b], y, pl->ost[a], na, nb, r);
        } else if (j->avx2)
            stripe_avx2(x, pl->st[b], y, pl->ost[a], na, nb);
        else
            stripe_c(x, pl->st[b], y, pl->ost[a], na, nb);
    }
}

static int tr_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    /* both transposes around a reshape: the reference's general path */
    const trtl_shuffle_params *p = &n->p.shuffle;
    int64_t perm[TRTL_MAX_DIMS];
    int id1, id2, r = in_dims[0].nb_dims;
    if (p->reshape_dims.nb_dims < 0 || r > TRTL_MAX_DIMS || p->reshape_dims.nb_dims > TRTL_MAX_DIMS)
        return 1;
    effective_perm(&p->first_transpose, r, perm, &id1);
    effective_perm(&p->second_transpose, p->reshape_dims.nb_dims, perm, &id2);
    return id1 || id2;
}

static trtl_status tr_body(const trtl_kernel_args *a);

/* The epilogue's activation (none is fused into a shuffle today) over the finished output; the residual was added
 * as the output was stored (tr_body), or here where the reference kernel ran. */
static trtl_status tr_run(const trtl_kernel_args *a)
{
    const trtl_epilogue *e = &a->node->epi;
    TRTL_TRY(tr_body(a));
    if (e->act != TRTL_ACT_NONE) {
        if (a->out[0].dtype != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': an epilogue on a non-FLOAT shuffle", a->node->name);
        trtl_epilogue only_act = *e;
        only_act.has_residual = 0;
        trtl_epilogue_apply(&only_act, a->out[0].data, NULL, trtl_volume(&a->out[0].dims));
    }
    return TRTL_OK;
}

/* The reference kernel with the residual added after it (the reference does not apply epilogues): the output
 * does not overlap the residual (the memory plan never places a step's output over one of its inputs). */
static trtl_status tr_ref(const trtl_kernel_args *a)
{
    TRTL_TRY(trtl_ref_shuffle(a));
    if (a->node->epi.has_residual) { /* (tr_run applies the activation) */
        const trtl_epilogue only_res = {TRTL_ACT_NONE, 0.0f, 0.0f, 1};
        trtl_epilogue_apply(&only_res, a->out[0].data, a->in[a->node->n_in - 1].data, trtl_volume(&a->out[0].dims));
    }
    return TRTL_OK;
}

static trtl_status tr_body(const trtl_kernel_args *a)
{
    tr_plan pl;
    if (trtl_dtype_size(a->in[0].dtype) != 4 || a->in[0].dtype != a->out[0].dtype ||
        !make_plan(&a->node->p.shuffle, &a->in[0].dims, &a->out[0].dims, &pl))
        return tr_ref(a);
    int64_t vol = trtl_volume(&a->out[0].dims);
    if (vol == 0)
        return TRTL_OK;
    const float *res = a->node->epi.has_residual ? a->in[a->node->n_in - 1].data : NULL;
    if (res && a->out[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': a residual on a non-FLOAT shuffle", a->node->name);
    tr_job j = {&pl, a->in[0].data, a->out[0].data, res, -1, 0, 1, 0, 0, trtl_cpu_has(TRTL_CPU_AVX2)};
    if (pl.n <= 1) {
        trtl_parallel_for(a->pool, (vol + COPY_CHUNK - 1) / COPY_CHUNK, 4, rows_task, &j);
        return TRTL_OK;
    }
    int b = pl.n - 1;
    if (pl.st[b] == 1) {
        j.rowlen = pl.d[b];
        trtl_parallel_for(a->pool, vol / j.rowlen, j.rowlen >= 16384 ? 1 : 16384 / j.rowlen, rows_task, &j);
        return TRTL_OK;
    }
    for (int k = 0; k < b; k++)
        if (pl.st[k] == 1)
            j.a = k;
    if (j.a < 0) /* cannot happen for a dense x; keep the reference as the answer */
        return tr_ref(a);
    j.stripes = (pl.d[j.a] + STRIPE - 1) / STRIPE;
    int64_t outer = vol / (pl.d[j.a] * pl.d[b]);
    j.nbc = 1;
    j.bchunk = pl.d[b];
    if (outer * j.stripes < TILE_ITEMS) {
        int64_t want = (TILE_ITEMS + outer * j.stripes - 1) / (outer * j.stripes);
        int64_t len = (pl.d[b] + want - 1) / want;
        len = (len + 7) / 8 * 8;
        j.bchunk = len < 64 ? 64 : len;
        if (j.bchunk > pl.d[b])
            j.bchunk = pl.d[b];
        j.nbc = (pl.d[b] + j.bchunk - 1) / j.bchunk;
    }
    int64_t items = outer * j.stripes * j.nbc, per = STRIPE * j.bchunk;
    trtl_parallel_for(a->pool, items, per >= 16384 ? 1 : 16384 / per, tiles_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_shuffle_transpose = {
    .name = "shuffle.transpose",
    .op = TRTL_OP_SHUFFLE,
    .applies = tr_applies,
    .run = tr_run,
    .applies_epilogue = 1,
};
