/*
 * depthwise_planes.c -- the per-plane driver of the padded-plane depthwise kernels (see depthwise_planes.h).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/x86/depthwise_planes.h"
#include "kernels/blas/blas_common.h"
#include "core/threadpool.h"
#include "core/status.h"

#define MAX_SLOTS 64
#define SLOT_ALIGN 64

typedef struct planes_job {
    const trtl_dw_planes *d;
    const trtl_epilogue *epi;
    const float *x, *w, *bias, *res;
    float *y, *scratch;
    int64_t items, slots;
} planes_job;

static double dw_flops(const trtl_dw_geom *g) { return 2.0 * (double)(g->N * g->C * g->OH * g->OW * g->R * g->S); }

/* the slot's buffer stride: whole cache lines, so that every slot starts on one */
static size_t slot_stride(const trtl_dw_planes *d)
{
    return (d->slot_floats * sizeof(float) + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
}

static void planes_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const planes_job *j = ctx;
    const trtl_dw_planes *d = j->d;
    const trtl_dw_geom *g = d->base;
    (void)thread;
    const int64_t in_sp = g->H * g->W, out_sp = g->OH * g->OW;
    for (int64_t s = sb; s < se; s++) {
        float *buf = (float *)((char *)j->scratch + (size_t)s * slot_stride(d));
        if (d->zero_slot)
            memset(buf, 0, d->slot_floats * sizeof(float));
        for (int64_t it = s * j->items / j->slots, end = (s + 1) * j->items / j->slots; it < end; it++) {
            int64_t c = it % g->C;
            d->plane(d->geom, j->x + it * in_sp, buf, j->w + c * g->R * g->S, j->bias ? j->bias[c] : 0.0f,
                     j->res ? j->res + it * out_sp : NULL, j->y + it * out_sp, j->epi);
        }
    }
}

trtl_status trtl_dw_planes_run(const trtl_kernel_args *a, const trtl_dw_planes *d)
{
    const trtl_node *nd = a->node;
    const trtl_conv_params *p = &nd->p.conv;
    const trtl_dw_geom *g = d->base;
    planes_job j;
    memset(&j, 0, sizeof j);
    j.d = d;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.w = (const float *)p->kernel.values;
    j.bias = p->bias.count ? (const float *)p->bias.values : NULL;
    j.y = (float *)a->out[0].data;
    j.items = g->N * g->C;
    TRTL_TRY(trtl_epi_residual(a, j.items * g->OH * g->OW, &j.res));
    if (j.items == 0 || g->OH * g->OW == 0)
        return TRTL_OK;
    const size_t stride = slot_stride(d);
    int64_t avail = a->scratch && a->scratch_size > SLOT_ALIGN ? (int64_t)((a->scratch_size - SLOT_ALIGN) / stride) : 0;
    if (avail < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one padded plane",
                          nd->name, a->scratch_size);
    j.scratch = (float *)(((uintptr_t)a->scratch + SLOT_ALIGN - 1) & ~(uintptr_t)(SLOT_ALIGN - 1));
    j.slots = trtl_threads_for(a->pool, dw_flops(g));
    if (j.slots > avail)
        j.slots = avail;
    if (j.slots > j.items)
        j.slots = j.items;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, planes_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

size_t trtl_dw_planes_scratch(const trtl_dw_planes *d)
{
    return (size_t)trtl_scratch_slots(dw_flops(d->base), MAX_SLOTS) * slot_stride(d) + SLOT_ALIGN;
}
