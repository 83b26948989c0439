/*
 * depthwise_cblock.c -- the driver of the channel-block depthwise kernels (see depthwise_cblock.h).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/x86/depthwise_cblock.h"
#include "kernels/blas/blas_common.h"
#include "core/threadpool.h"
#include "core/dims.h"
#include "core/status.h"

/* applies() takes padded planes of at most this many pixels at the opt shapes (40 x 40 of 16 lanes, 64 x 64 of 8:
 * the block, 100-128 KB, stays in L2; 64 x 64 takes ConvNeXt's 7x7 on 56 x 56, a 62 x 62 plane, where c8 runs in
 * 0.83x depthwise_avx2's time); run() takes any size (dynamic shapes), with scratch to match. */
#define PLANE_MAX(lanes) ((lanes) >= 16 ? 1600 : 4096)
#define TAPS_MAX 7
#define MAX_SLOTS 64

static const trtl_dw_limits dwc_limits = {TAPS_MAX, TAPS_MAX, 1};

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, int64_t lanes,
                             trtl_dwc_geom *g)
{
    TRTL_TRY(trtl_dw_geom_init(nd, xd, yd, &dwc_limits, &g->base));
    /* the padded plane holds every row / column a window reads and every input row / column */
    int64_t rh = g->OH > 0 ? (g->OH - 1) * g->sh + (g->R - 1) * g->dh + 1 : 0;
    int64_t rw = g->OW > 0 ? (g->OW - 1) * g->sw + (g->S - 1) * g->dw + 1 : 0;
    g->Hp = rh > g->pt + g->H ? rh : g->pt + g->H;
    g->Wp = rw > g->pl + g->W ? rw : g->pl + g->W;
    g->lanes = lanes;
    g->nblk = (g->C + lanes - 1) / lanes;
    return TRTL_OK;
}

/* One slot: the padded input block, 4 vectors of gap, the output block. */
static int64_t slot_floats(const trtl_dwc_geom *g) { return (g->Hp * g->Wp + 4 + g->OH * g->OW) * g->lanes; }

typedef struct dwc_run_ctx {
    trtl_dwc_job j;
    trtl_dwc_item_fn item;
    int zero_once;
} dwc_run_ctx;

static void dwc_run_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const dwc_run_ctx *c = ctx;
    const trtl_dwc_job *j = &c->j;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        float *xp = j->scratch + s * slot_floats(j->g);
        if (c->zero_once)
            memset(xp, 0, (size_t)(j->g->Hp * j->g->Wp * j->g->lanes) * sizeof(float));
        for (int64_t it = s * j->items / j->slots, end = (s + 1) * j->items / j->slots; it < end; it++)
            c->item(j, it / j->g->nblk, it % j->g->nblk, xp);
    }
}

static float *align64(void *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

trtl_status trtl_dwc_run(const trtl_kernel_args *a, const trtl_dwc_kernel *k)
{
    const trtl_node *nd = a->node;
    const trtl_dwc_state *st = a->state;
    trtl_dwc_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, k->lanes, &g));
    if (!st || st->C != g.C || st->R != g.R || st->S != g.S || st->lanes != k->lanes)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': %s run without its weights", nd->name, k->name);
    dwc_run_ctx c = {{&g, st, &nd->epi, a->in[0].data, NULL, a->out[0].data, NULL, 1, g.N * g.nblk}, k->item,
                     k->zero_once};
    trtl_dwc_job *j = &c.j;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.C * g.OH * g.OW, &j->res));
    if (j->items == 0 || g.OH * g.OW == 0)
        return TRTL_OK;
    size_t avail = a->scratch && a->scratch_size > 64 ? (a->scratch_size - 64) / sizeof(float) : 0;
    int64_t fit = (int64_t)(avail / (size_t)slot_floats(&g));
    if (fit < 1)
        return trtl_error(TRTL_ERR_INTERNAL,
                          "layer '%s': scratch of %zu bytes is smaller than one %lldx%lld plane block", nd->name,
                          a->scratch_size, (long long)g.Hp, (long long)g.Wp);
    double flops = 2.0 * (double)g.N * (double)g.C * (double)(g.OH * g.OW) * (double)(g.R * g.S);
    int64_t slots = trtl_threads_for(a->pool, flops);
    slots = slots < fit ? slots : fit;
    j->slots = slots < j->items ? slots : j->items;
    j->scratch = align64(a->scratch);
    if (j->slots < 1)
        j->slots = 1;
    trtl_parallel_for(a->pool, j->slots, 1, dwc_run_slots, &c); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

size_t trtl_dwc_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out, int64_t lanes)
{
    trtl_dwc_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, lanes, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    int64_t slots = trtl_available_cpus();
    slots = slots < 1 ? 1 : (slots > MAX_SLOTS ? MAX_SLOTS : slots);
    return (size_t)(slots * slot_floats(&g)) * sizeof(float) + 64;
}

int trtl_dwc_applies(const trtl_node *nd, const trtl_dims *in_dims, int64_t lanes)
{
    trtl_dwc_geom g;
    if (geom_init(nd, &in_dims[0], NULL, lanes, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    return g.Hp * g.Wp <= PLANE_MAX(lanes);
}

void trtl_dwc_release(void *state)
{
    trtl_dwc_state *st = state;
    if (st) {
        free(st->w);
        free(st->b);
    }
    free(st);
}

trtl_status trtl_dwc_prepare(const trtl_node *nd, int64_t lanes, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    int64_t C = p->num_output_maps;
    if (!trtl_dw_params_ok(p, C, &dwc_limits))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': not a depthwise 2D convolution this kernel runs",
                          nd->name);
    int64_t R = p->kernel_size.d[0], S = p->kernel_size.d[1], nblk = (C + lanes - 1) / lanes;
    trtl_dwc_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->C = C;
    st->R = R;
    st->S = S;
    st->lanes = lanes;
    size_t wbytes = (size_t)(nblk * R * S * lanes) * sizeof(float), bbytes = (size_t)(nblk * lanes) * sizeof(float);
    st->w = aligned_alloc(64, (wbytes + 63) / 64 * 64);
    st->b = aligned_alloc(64, (bbytes + 63) / 64 * 64);
    if (!st->w || !st->b) {
        trtl_dwc_release(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory reordering weights", nd->name);
    }
    memset(st->w, 0, wbytes);
    memset(st->b, 0, bbytes);
    const float *w = (const float *)p->kernel.values, *b = p->bias.count ? (const float *)p->bias.values : NULL;
    for (int64_t c = 0; c < C; c++) {
        for (int64_t t = 0; t < R * S; t++)
            st->w[((c / lanes) * R * S + t) * lanes + c % lanes] = w[c * R * S + t];
        if (b)
            st->b[c] = b[c];
    }
    *state = st;
    return TRTL_OK;
}
