/*
 * copy_ops.c -- memcpy-style kernels for the data-movement layers whose work is whole contiguous
 * runs (4-byte elements):
 *   - "concatenation.copy": every output row (the dims before the axis) is the inputs' blocks in
 *     turn; the blocks, cut into chunks of at most CHUNK elements, are split over the pool;
 *   - "slice.rows": stride 1 along the last dim and every index in range (any mode then reads the
 *     same elements): one memcpy per output row, rows contiguous in the input merged into one; every
 *     element type (any_dtype, since session 22: the rows are copied by the element size);
 *   - "gather.rows": DEFAULT mode without paired dims: one memcpy of the trailing block (or one
 *     element) per (outer index, index); indices are checked before anything is copied;
 *   - "padding.rows": constant (zero) padding and cropping: per output row a memset, a memcpy of
 *     the interior and a memset, or a memset of the whole row when it lies in the padding.
 * Shapes or parameters outside these forms (applies() says 0 at build time; at run time the
 * kernel checks again) run the reference kernel, which also reports every error.
 */
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/dims.h"
#include "core/status.h"

#define CHUNK 16384        /* elements per work item of a long copy */
#define GRAIN_ELEMS 16384  /* about this many elements per work item */

static int64_t grain_for(int64_t per_item)
{
    return per_item >= GRAIN_ELEMS ? 1 : GRAIN_ELEMS / (per_item > 0 ? per_item : 1);
}

static int is_f4(const trtl_tensor_view *v) { return trtl_dtype_size(v->dtype) == 4; }

/* ---- concatenation --------------------------------------------------------------------------- */

typedef struct cat_job {
    const trtl_kernel_args *a;
    int32_t parts;
    int64_t inner, row;   /* row: output elements per outer index */
    int64_t chunks;       /* chunks per outer index */
} cat_job;

static int64_t nchunks(int64_t n) { return (n + CHUNK - 1) / CHUNK; }

static void cat_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const cat_job *j = ctx;
    const trtl_kernel_args *a = j->a;
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / j->chunks, c = it % j->chunks, yoff = o * j->row;
        for (int32_t k = 0; k < j->parts; k++) {
            int64_t len = a->in[k].dims.d[a->node->p.concat.axis] * j->inner, nc = nchunks(len);
            if (c < nc) {
                int64_t b = c * CHUNK, n = len - b < CHUNK ? len - b : CHUNK;
                memcpy((float *)a->out[0].data + yoff + b, (const float *)a->in[k].data + o * len + b,
                       (size_t)n * sizeof(float));
                break;
            }
            c -= nc;
            yoff += len;
        }
    }
}

static int cat_ok(const trtl_kernel_args *a, cat_job *j)
{
    const trtl_dims *O = &a->out[0].dims;
    int32_t axis = a->node->p.concat.axis, r = O->nb_dims;
    if (axis < 0 || axis >= r || a->node->epi.has_residual || !is_f4(&a->out[0]))
        return 0;
    j->parts = a->node->n_in;
    j->inner = trtl_volume_range(O, axis + 1, r);
    j->row = 0;
    j->chunks = 0;
    int64_t outer = trtl_volume_range(O, 0, axis), total = 0;
    for (int32_t k = 0; k < j->parts; k++) {
        const trtl_dims *x = &a->in[k].dims;
        if (a->in[k].dtype != a->out[0].dtype || x->nb_dims != r || trtl_volume_range(x, 0, axis) != outer ||
            trtl_volume_range(x, axis + 1, r) != j->inner)
            return 0;
        total += x->d[axis];
        j->chunks += nchunks(x->d[axis] * j->inner);
    }
    j->row = total * j->inner;
    return total == O->d[axis];
}

static trtl_status cat_run(const trtl_kernel_args *a)
{
    cat_job j = {a, 0, 0, 0, 0};
    if (!cat_ok(a, &j))
        return trtl_ref_concatenation(a);
    int64_t outer = trtl_volume_range(&a->out[0].dims, 0, a->node->p.concat.axis);
    if (outer == 0 || j.row == 0)
        return TRTL_OK;
    int64_t items = outer * j.chunks;
    trtl_parallel_for(a->pool, items, grain_for(outer * j.row / items), cat_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_concat_copy = {
    .name = "concatenation.copy",
    .op = TRTL_OP_CONCATENATION,
    .run = cat_run,
};

/* ---- slice ----------------------------------------------------------------------------------- */

typedef struct rows_job {
    const float *x;
    float *y;
    size_t es;                     /* slice: bytes per element (any type: bits are copied) */
    int r;
    int64_t d[TRTL_MAX_DIMS];      /* output dims */
    int64_t start[TRTL_MAX_DIMS];  /* input element offset of output index 0, per dim (slice) */
    int64_t st[TRTL_MAX_DIMS];     /* input element step per output index, per dim */
    int64_t pre[TRTL_MAX_DIMS];    /* padding: input index = output index - pre */
    int64_t xd[TRTL_MAX_DIMS];     /* padding: input dims */
} rows_job;

static void slice_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const rows_job *j = ctx;
    int64_t n = j->d[j->r - 1];
    for (int64_t row = begin; row < end; row++) {
        int64_t rem = row, off = j->start[j->r - 1];
        for (int k = j->r - 2; k >= 0; k--) {
            off += j->start[k] + (rem % j->d[k]) * j->st[k];
            rem /= j->d[k];
        }
        memcpy((char *)j->y + (size_t)(row * n) * j->es, (const char *)j->x + (size_t)off * j->es, (size_t)n * j->es);
    }
}

static int slice_params_ok(const trtl_slice_params *p, int r)
{
    return r >= 1 && p->start.nb_dims == r && p->stride.nb_dims == r && p->stride.d[r - 1] == 1;
}

static int slice_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    return n->n_in == 1 && slice_params_ok(&n->p.slice, in_dims[0].nb_dims); /* shape-tensor inputs: the reference */
}

static trtl_status slice_run(const trtl_kernel_args *a)
{
    const trtl_slice_params *p = &a->node->p.slice;
    const trtl_dims *X = &a->in[0].dims, *O = &a->out[0].dims;
    int r = X->nb_dims;
    if (!slice_params_ok(p, r) || O->nb_dims != r || trtl_dtype_size(a->in[0].dtype) == 0 ||
        a->in[0].dtype != a->out[0].dtype)
        return trtl_ref_slice(a);
    int64_t vol = trtl_volume(O);
    if (vol == 0)
        return TRTL_OK;
    rows_job j;
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.es = trtl_dtype_size(a->in[0].dtype);
    j.r = r;
    int64_t xs = 1;
    for (int k = r - 1; k >= 0; k--) {
        int64_t s = p->start.d[k], span, last;
        /* start/stride are user values up to 2^63-1: an overflowing last index is out of range too */
        if (__builtin_mul_overflow(O->d[k] - 1, p->stride.d[k], &span) || __builtin_add_overflow(s, span, &last) ||
            s < 0 || s >= X->d[k] || last < 0 || last >= X->d[k])
            return trtl_ref_slice(a); /* out of range: the mode decides (or the reference's error) */
        j.d[k] = O->d[k];
        j.start[k] = s * xs;
        j.st[k] = O->d[k] > 1 ? p->stride.d[k] * xs : 0; /* bounded by X's volume; unused (any value) for one */
        xs *= X->d[k];
    }
    /* Rows that follow each other in the input are one row: a dim whose next output index starts where the inner
     * row ends (stride 1 over a whole inner row: ShuffleNet's channel halves of 7- to 28-wide maps were one memcpy
     * per 7-28 floats, ~0.09 ms a slice at batch 8, now one per image), or of length 1, merges into the last. */
    while (j.r > 1 && (j.d[j.r - 2] == 1 || j.st[j.r - 2] == j.d[j.r - 1])) {
        j.start[j.r - 2] += j.start[j.r - 1];
        j.d[j.r - 2] *= j.d[j.r - 1];
        j.st[j.r - 2] = 1;
        j.r--;
    }
    trtl_parallel_for(a->pool, vol / j.d[j.r - 1], grain_for(j.d[j.r - 1]), slice_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_slice_rows = {
    .name = "slice.rows",
    .op = TRTL_OP_SLICE,
    .applies = slice_applies,
    .run = slice_run,
    .any_dtype = 1, /* memcpy of element runs: any element size (session 22; x86/slice_steps.c takes other steps) */
};

/* ---- gather ---------------------------------------------------------------------------------- */

typedef struct gather_job {
    const float *x;
    float *y;
    const int32_t *ind;
    int64_t A, Q, inner;
} gather_job;

static void gather_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const gather_job *j = ctx;
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / j->Q, q = it % j->Q, v = j->ind[q];
        if (v < 0)
            v += j->A;
        const float *src = j->x + (o * j->A + v) * j->inner;
        float *dst = j->y + it * j->inner;
        if (j->inner == 1)
            *dst = *src;
        else
            memcpy(dst, src, (size_t)j->inner * sizeof(float));
    }
}

static int gather_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_gather_params *g = &n->p.gather;
    return g->mode == TRTL_GATHER_DEFAULT && g->num_elementwise_dims == 0 && g->axis >= 0 &&
           g->axis < in_dims[0].nb_dims;
}

static trtl_status gather_run(const trtl_kernel_args *a)
{
    const trtl_gather_params *g = &a->node->p.gather;
    const trtl_dims *D = &a->in[0].dims, *I = &a->in[1].dims, *O = &a->out[0].dims;
    int32_t r = D->nb_dims, q = I->nb_dims, axis = g->axis;
    if (g->mode != TRTL_GATHER_DEFAULT || g->num_elementwise_dims != 0 || axis < 0 || axis >= r ||
        O->nb_dims != r + q - 1 || a->in[1].dtype != TRTL_INT32 || !is_f4(&a->in[0]) ||
        a->in[0].dtype != a->out[0].dtype || trtl_volume(O) == 0)
        return trtl_ref_gather(a);
    gather_job j = {a->in[0].data, a->out[0].data, a->in[1].data, D->d[axis], trtl_volume(I),
                    trtl_volume_range(D, axis + 1, r)};
    for (int64_t k = 0; k < j.Q; k++)
        if (j.ind[k] < -j.A || j.ind[k] >= j.A)
            return trtl_ref_gather(a); /* reports the bad index */
    int64_t outer = trtl_volume_range(D, 0, axis);
    trtl_parallel_for(a->pool, outer * j.Q, grain_for(j.inner), gather_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_gather_rows = {
    .name = "gather.rows",
    .op = TRTL_OP_GATHER,
    .applies = gather_applies,
    .run = gather_run,
};

/* ---- padding --------------------------------------------------------------------------------- */

static void pad_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const rows_job *j = ctx;
    int r = j->r;
    int64_t n = j->d[r - 1], pre = j->pre[r - 1], xn = j->xd[r - 1];
    int64_t lo = pre > 0 ? pre : 0, hi = xn + pre < n ? xn + pre : n;
    for (int64_t row = begin; row < end; row++) {
        float *y = j->y + row * n;
        int64_t rem = row, off = 0, xs = xn, inside = hi > lo;
        for (int k = r - 2; k >= 0 && inside; k--) {
            int64_t i = rem % j->d[k] - j->pre[k];
            rem /= j->d[k];
            inside = i >= 0 && i < j->xd[k];
            off += i * xs;
            xs *= j->xd[k];
        }
        if (!inside) {
            memset(y, 0, (size_t)n * sizeof(float));
            continue;
        }
        memset(y, 0, (size_t)lo * sizeof(float));
        memcpy(y + lo, j->x + off + lo - pre, (size_t)(hi - lo) * sizeof(float));
        memset(y + hi, 0, (size_t)(n - hi) * sizeof(float));
    }
}

static trtl_status pad_run(const trtl_kernel_args *a)
{
    const trtl_padding_params *p = &a->node->p.pad;
    const trtl_dims *X = &a->in[0].dims, *O = &a->out[0].dims;
    int r = X->nb_dims, nb = p->pre_padding.nb_dims, off = r - nb;
    if (r < 1 || off < 0 || O->nb_dims != r || !is_f4(&a->in[0]) || a->in[0].dtype != a->out[0].dtype)
        return trtl_ref_padding(a);
    int64_t vol = trtl_volume(O);
    if (vol == 0)
        return TRTL_OK;
    rows_job j;
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.es = sizeof(float);
    j.r = r;
    for (int k = 0; k < r; k++) {
        j.d[k] = O->d[k];
        j.xd[k] = X->d[k];
        j.pre[k] = k < off ? 0 : p->pre_padding.d[k - off];
    }
    trtl_parallel_for(a->pool, vol / O->d[r - 1], grain_for(O->d[r - 1]), pad_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_padding_rows = {
    .name = "padding.rows",
    .op = TRTL_OP_PADDING,
    .run = pad_run,
};
