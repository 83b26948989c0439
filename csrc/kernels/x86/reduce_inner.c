/*
 * reduce_inner.c -- reductions whose axes are a contiguous trailing block of the input
 * (global average/max pooling: [N, C, H, W] over H, W; mean over the last axis, ...): each output
 * element reduces one contiguous run of floats.  Outputs are split over the pool.
 */
#include <math.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/dims.h"

typedef struct reduce_job {
    const float *x;
    float *y;
    int64_t inner;
    int32_t op;
} reduce_job;

static void reduce_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const reduce_job *j = ctx;
    const int64_t n = j->inner;
    for (int64_t o = begin; o < end; o++) {
        const float *r = j->x + o * n;
        float acc;
        switch (j->op) {
        case TRTL_RED_MAX:
            acc = r[0];
            for (int64_t i = 1; i < n; i++) /* NaN propagates, as in the reference kernel */
                acc = (r[i] > acc || r[i] != r[i]) ? r[i] : acc;
            break;
        case TRTL_RED_MIN:
            acc = r[0];
            for (int64_t i = 1; i < n; i++)
                acc = (r[i] < acc || r[i] != r[i]) ? r[i] : acc;
            break;
        case TRTL_RED_PROD:
            acc = 1.0f;
            for (int64_t i = 0; i < n; i++)
                acc *= r[i];
            break;
        default: { /* SUM, AVG: eight partial sums (vectorizes; better rounding than one chain) */
            float s[8] = {0};
            int64_t i = 0;
            for (; i + 8 <= n; i += 8)
                for (int k = 0; k < 8; k++)
                    s[k] += r[i + k];
            acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
            for (; i < n; i++)
                acc += r[i];
            if (j->op == TRTL_RED_AVG)
                acc /= (float)n;
        }
        }
        j->y[o] = acc;
    }
}

/* The lowest reduced axis, if the reduced axes are exactly [first, rank); -1 otherwise. */
static int suffix_start(uint32_t axes, int rank)
{
    if (!axes || rank <= 0 || axes >> rank)
        return -1;
    int first = 0;
    while (!(axes >> first & 1u))
        first++;
    return axes == ((1u << rank) - 1) - ((1u << first) - 1) ? first : -1;
}

static int reduce_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    return n->n_in < 2 && suffix_start(n->p.reduce.axes, in_dims[0].nb_dims) >= 0; /* axes from input 1: the reference */
}

static trtl_status reduce_run(const trtl_kernel_args *a)
{
    const trtl_dims *xd = &a->in[0].dims;
    int first = suffix_start(a->node->p.reduce.axes, xd->nb_dims);
    if (first < 0) /* only a corrupt plan pairs this kernel with other axes: the reference handles any */
        return trtl_ref_reduce(a);
    reduce_job j = {a->in[0].data, a->out[0].data, trtl_volume_range(xd, first, xd->nb_dims), a->node->p.reduce.op};
    int64_t outer = trtl_volume_range(xd, 0, first);
    if (j.inner == 0) { /* reducing nothing: as the reference kernel (AVG is 0/0) */
        float v = j.op == TRTL_RED_PROD ? 1.0f : j.op == TRTL_RED_MAX ? -INFINITY : j.op == TRTL_RED_MIN ? INFINITY
                  : j.op == TRTL_RED_AVG ? NAN : 0.0f;
        for (int64_t o = 0; o < outer; o++)
            j.y[o] = v;
        return TRTL_OK;
    }
    trtl_parallel_for(a->pool, outer, j.inner > 4096 ? 1 : 4096 / j.inner + 1, reduce_rows, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_reduce_inner = {
    .name = "reduce.inner",
    .op = TRTL_OP_REDUCE,
    .applies = reduce_applies,
    .run = reduce_run,
};
