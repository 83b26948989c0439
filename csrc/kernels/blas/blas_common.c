/* blas_common.c -- one-time BLAS setup and work-splitting helpers for the BLAS kernels. */
#include <pthread.h>
#include <cblas.h>

#include "kernels/blas/blas_common.h"
#include "core/dims.h"
#include "core/status.h"

static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;

static void blas_single_thread(void) { openblas_set_num_threads(1); }

void trtl_blas_init(void) { pthread_once(&g_blas_once, blas_single_thread); }

int trtl_threads_for(const struct trtl_threadpool *pool, double flops)
{
    int t = trtl_threadpool_size(pool);
    double want = flops / TRTL_MIN_FLOPS_PER_THREAD;
    if (want < 1.0)
        return 1;
    return want < (double)t ? (int)want : t;
}

int trtl_steal_runs(const struct trtl_threadpool *pool, int64_t slots, int64_t items, int64_t *runs)
{
    *runs = slots;
    if (slots < 2 || slots != trtl_threadpool_size(pool) || items < slots)
        return 0;
    *runs = items < slots * TRTL_STEAL_RUNS ? items : slots * TRTL_STEAL_RUNS;
    return 1;
}

trtl_runs trtl_runs_plan(const struct trtl_threadpool *pool, int64_t slots, int64_t items)
{
    trtl_runs r = {items, 1, 0};
    if (slots > items)
        slots = items;
    r.steal = trtl_steal_runs(pool, slots < 1 ? 1 : slots, items, &r.n);
    return r;
}

typedef struct runs_shim {
    const trtl_runs *runs;
    trtl_run_fn fn;
    void *ctx;
} runs_shim;

static void runs_task(void *ctx, int64_t rb, int64_t re, int thread)
{
    const runs_shim *sh = ctx;
    const trtl_runs *r = sh->runs;
    for (int64_t i = rb; i < re; i++)
        sh->fn(sh->ctx, r->steal ? thread : i, i, i * r->items / r->n, (i + 1) * r->items / r->n);
}

void trtl_runs_for(struct trtl_threadpool *pool, const trtl_runs *runs, trtl_run_fn fn, void *ctx)
{
    runs_shim sh = {runs, fn, ctx};
    trtl_parallel_for(pool, runs->n, 1, runs_task, &sh);
}

int64_t trtl_scratch_slots_all(int64_t max_slots)
{
    int64_t t = trtl_scratch_threads();
    return t < 1 ? 1 : t > max_slots ? max_slots : t;
}

int64_t trtl_scratch_slots(double flops, int64_t max_slots)
{
    int64_t t = trtl_scratch_slots_all(max_slots);
    double want = flops / TRTL_MIN_FLOPS_PER_THREAD;
    if (want < (double)t)
        t = want < 1.0 ? 1 : (int64_t)want;
    return t;
}

trtl_status trtl_epi_residual(const trtl_kernel_args *a, int64_t count, const float **res)
{
    const trtl_node *n = a->node;
    *res = NULL;
    if (!n->epi.has_residual)
        return TRTL_OK;
    if (n->n_in < 2)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': fused residual add without a residual input", n->name);
    const trtl_tensor_view *r = &a->in[n->n_in - 1];
    char s[TRTL_DIMS_STR_MAX];
    if (r->dtype != TRTL_FLOAT || trtl_volume(&r->dims) != count)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': fused residual %s does not match the output (%lld values)",
                          n->name, trtl_dims_str(&r->dims, s, sizeof s), (long long)count);
    *res = (const float *)r->data;
    return TRTL_OK;
}
