/*
 * convolution_bf16.c -- "convolution.bf16_gemm": any convolution that convolution.packed_gemm
 * runs, computed as Y[Kg, P] = bf16(W)[Kg, ckk] x bf16(Col)[ckk, P] per image and group on the
 * bf16 GEMM core (gemm_bf16.h): `vdpbf16ps` products of bf16-rounded operands accumulated in
 * fp32, bias + residual + activation in fp32 on the accumulators.  Needs AVX512_BF16; chosen
 * only under BuilderFlag.BF16 (precision TRTL_BF16, see builder/select.c).
 *
 * The weights are converted to bf16 pairs once in prepare().  Col is built by
 * convolution.packed_gemm's packer (convolution_gemm.h) into a small fp32 staging block of
 * STAGE_ROWS rows x the pixel panel, which is converted at once (`vcvtne2ps2bf16` +
 * interleave) into the panel's bf16 B block; the B block (kc x pw, sized for L2) then serves
 * every output channel.
 *
 * Work items are (image, group, pixel panel, output-channel chunk); channel chunks only when
 * there are fewer panels than threads (each chunk converts its own B block).  A slot is handed
 * a contiguous run of items.
 *
 * "convolution.amx_bf16" is the same kernel on the Intel AMX core (gemm_amx_bf16.h): weights packed
 * into 32-row tile panels, depth blocks a multiple of 32, the same B blocks (their depth tail
 * zeroed up to the tile's 16 pairs); output-channel chunks are whole 32-row panels.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/convolution_gemm.h"
#include "kernels/x86/gemm_bf16.h"
#include "kernels/x86/gemm_amx_bf16.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define KC_MAX 1024               /* depth block (even): an A micro-panel of 12 x kc bf16 is 24 KiB */
#define B_BLOCK_BYTES (384 * 1024) /* a panel's bf16 B block stays in L2 */
#define STAGE_ROWS 64             /* fp32 Col rows packed then converted at a time (even) */
#define MAX_SLOTS 64
#define NR TRTL_BF16_NR
#define MR TRTL_BF16_MR

typedef struct cb_state {
    int64_t K, G, Kg, ckk, group_elems;
    uint16_t *a;
    int amx; /* convolution.amx_bf16: A in the AMX layout */
} cb_state;

typedef struct cb_plan {
    int64_t kc, pw, npanels, nmc, mc, slots; /* mc: output channels per chunk (whole panels of MR) */
    int64_t slot_bytes;
} cb_plan;

typedef struct cb_job {
    const trtl_conv_geom *g;
    const cb_state *st;
    const cb_plan *pl;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y;
    char *scratch;
    int64_t items;
} cb_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

static double conv_flops(const trtl_conv_geom *g)
{
    return 2.0 * (double)g->N * (double)g->K * (double)g->ckk * (double)g->P;
}

static int64_t depth_block(const trtl_conv_geom *g, int amx)
{
    return round_up(ceil_div(g->ckk, ceil_div(g->ckk, KC_MAX)), amx ? 32 : 2);
}

static int64_t rows_of_panel(int amx) { return amx ? TRTL_AMX_BF16_MR : MR; }

static int64_t stage_ts(void) { return STAGE_ROWS * NR + 16; }   /* floats between staging tiles */
static int64_t bf_ts(int64_t kc) { return round_up(kc, 2) * NR + 32; } /* bf16 elements between B tiles */

static int64_t panel_max(const trtl_conv_geom *g, int64_t kc)
{
    int64_t w = B_BLOCK_BYTES / (kc * 2) / NR * NR;
    if (w < 4 * NR)
        w = 4 * NR;
    return w < round_up(g->P, NR) ? w : round_up(g->P, NR);
}

/* One slot: bf16 B block, fp32 staging block, packer workspace (each 64-byte aligned). */
static int64_t slot_bytes(const trtl_conv_geom *g, int64_t kc, int64_t pw)
{
    int64_t nt = ceil_div(pw, NR);
    return round_up(nt * bf_ts(kc) * 2, 64) + round_up(nt * stage_ts() * 4, 64) +
           round_up(trtl_cg_packer_floats(g, pw, g->Cg) * 4, 64);
}

static int64_t max_slots(const trtl_conv_geom *g)
{
    return trtl_scratch_slots(conv_flops(g), MAX_SLOTS);
}

static void make_plan(const trtl_conv_geom *g, int64_t threads, size_t scratch_bytes, int amx, cb_plan *pl)
{
    const int64_t mr = rows_of_panel(amx);
    memset(pl, 0, sizeof *pl);
    pl->kc = depth_block(g, amx);
    const int64_t pmax = panel_max(g, pl->kc), ng = g->N * g->G;
    pl->slot_bytes = slot_bytes(g, pl->kc, pmax);
    int64_t slots = threads, fit = (int64_t)(scratch_bytes / (size_t)pl->slot_bytes);
    if (fit < slots)
        slots = fit;
    if (slots < 1)
        slots = 1;
    /* narrower panels until every slot has an item (down to one tile) */
    int64_t np = ceil_div(g->P, pmax);
    while (ng * np < slots && np < ceil_div(g->P, NR))
        np++;
    pl->pw = round_up(ceil_div(g->P, np), NR);
    pl->npanels = ceil_div(g->P, pl->pw);
    /* then output-channel chunks */
    int64_t mpan = ceil_div(g->Kg, mr), items = ng * pl->npanels;
    pl->nmc = items >= slots ? 1 : ceil_div(slots, items);
    if (pl->nmc > mpan)
        pl->nmc = mpan;
    pl->mc = ceil_div(mpan, pl->nmc) * mr;
    pl->nmc = ceil_div(g->Kg, pl->mc);
    items *= pl->nmc;
    pl->slots = slots < items ? slots : items;
}

static void cb_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const cb_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const cb_plan *pl = j->pl;
    const cb_state *st = j->st;
    const int64_t nt = ceil_div(pl->pw, NR), bts = bf_ts(pl->kc), mr = rows_of_panel(st->amx);
    const int64_t a_stride = st->amx ? round_up(g->ckk, 32) * mr : round_up(g->ckk, 2) * MR;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        char *base = j->scratch + s * pl->slot_bytes;
        uint16_t *bbuf = (uint16_t *)(void *)base;
        float *stage = (float *)(void *)(base + round_up(nt * bts * 2, 64));
        float *work = (float *)(void *)((char *)stage + round_up(nt * stage_ts() * 4, 64));
        for (int64_t it = s * j->items / pl->slots, end = (s + 1) * j->items / pl->slots; it < end; it++) {
            int64_t mci = it % pl->nmc, rest = it / pl->nmc;
            int64_t panel = rest % pl->npanels, grp = (rest / pl->npanels) % g->G, n = rest / pl->npanels / g->G;
            int64_t p0 = panel * pl->pw, pw = g->P - p0 < pl->pw ? g->P - p0 : pl->pw;
            int64_t m0 = mci * pl->mc, m1 = m0 + pl->mc < g->Kg ? m0 + pl->mc : g->Kg;
            int64_t ch0 = grp * g->Kg + m0, off = (n * g->K + ch0) * g->P + p0, ntp = ceil_div(pw, NR);
            trtl_cg_packer pk;
            trtl_cg_packer_begin(&pk, g, TRTL_GEMM_AVX512, work, j->x + (n * g->C + grp * g->Cg) * g->in_sp, 0,
                                 g->Cg, p0, pw, stage_ts());
            trtl_gemm_epi e = {j->bias ? j->bias + ch0 : NULL, NULL, j->res ? j->res + off : NULL, g->P,
                               j->epi->act, j->epi->alpha, j->epi->beta};
            for (int64_t k0 = 0; k0 < g->ckk; k0 += pl->kc) {
                int64_t kc = g->ckk - k0 < pl->kc ? g->ckk - k0 : pl->kc;
                for (int64_t r = 0; r < kc; r += STAGE_ROWS) {
                    int64_t rows = kc - r < STAGE_ROWS ? kc - r : STAGE_ROWS;
                    trtl_cg_pack_rows(&pk, k0 + r, k0 + r + rows, stage);
                    trtl_bf16_tiles_from_f32(stage, stage_ts(), rows, ntp, bbuf + r * NR, bts);
                }
                int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= g->ckk ? TRTL_GEMM_LAST : 0);
                const uint16_t *a = st->a + grp * st->group_elems + (m0 / mr) * a_stride + k0 * mr;
                if (st->amx) {
                    trtl_amx_bf16_zero_b_tail(bbuf, kc, ntp, bts);
                    trtl_amx_bf16_block(m1 - m0, pw, kc, a, a_stride, bbuf, bts, j->y + off, g->P, &e, flags);
                } else {
                    trtl_bf16_block(m1 - m0, pw, kc, a, a_stride, bbuf, bts, j->y + off, g->P, &e, flags);
                }
            }
        }
    }
}

static trtl_status cb_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const cb_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    if (!st || st->K != g.K || st->G != g.G || st->ckk != g.ckk)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.bf16_gemm run without its packed weights",
                          nd->name);
    cb_job j;
    memset(&j, 0, sizeof j);
    j.g = &g;
    j.st = st;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &j.res));
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    if (g.ckk == 0)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution without input channels", nd->name);
    size_t avail = a->scratch && a->scratch_size > 64 ? a->scratch_size - 64 : 0;
    cb_plan pl;
    make_plan(&g, trtl_threads_for(a->pool, conv_flops(&g)), avail, st->amx, &pl);
    if ((size_t)pl.slot_bytes > avail)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed panel",
                          nd->name, a->scratch_size);
    j.pl = &pl;
    j.scratch = (char *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    j.items = g.N * g.G * pl.npanels * pl.nmc;
    if (pl.slots < 1)
        pl.slots = 1;
    trtl_parallel_for(a->pool, pl.slots, 1, cb_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t cb_scratch_of(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out, int amx)
{
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK || g.P == 0 || g.ckk == 0)
        return 0;
    int64_t kc = depth_block(&g, amx);
    return (size_t)(max_slots(&g) * slot_bytes(&g, kc, panel_max(&g, kc))) + 64;
}

static size_t cb_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    return cb_scratch_of(nd, in, out, 0);
}

static int cb_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    int nsp = p->kernel_size.nb_dims;
    if (nsp < 1 || nsp > 3 || in_dims[0].nb_dims != nsp + 2 || p->num_groups < 1 || p->num_output_maps < 1 ||
        p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT))
        return 0;
    int64_t C = in_dims[0].d[1];
    /* depthwise-like groups (one input channel each) are memory-bound: the fp32 kernels serve them */
    return C > 0 && C % p->num_groups == 0 && p->num_output_maps % p->num_groups == 0 &&
           p->kernel.count % p->num_output_maps == 0 && p->kernel.count > 0 && C / p->num_groups > 1;
}

static void cb_release(void *state)
{
    cb_state *st = state;
    if (st)
        free(st->a);
    free(st);
}

static trtl_status cb_prepare_of(const trtl_node *nd, void **state, int amx)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    if (!trtl_bf16_available())
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution.bf16_gemm needs AVX512_BF16", nd->name);
    if (amx && !trtl_amx_bf16_available())
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution.amx_bf16 needs AMX-BF16", nd->name);
    if (p->num_groups < 1 || p->num_output_maps < 1 || p->num_output_maps % p->num_groups ||
        p->kernel.count % p->num_output_maps || p->kernel.type != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit %d output maps in %d groups", nd->name,
                          (long long)p->kernel.count, p->num_output_maps, p->num_groups);
    cb_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->K = p->num_output_maps;
    st->G = p->num_groups;
    st->Kg = st->K / st->G;
    st->ckk = p->kernel.count / st->K;
    st->amx = amx;
    st->group_elems = amx ? trtl_amx_bf16_packed_a_size(st->Kg, st->ckk) : trtl_bf16_packed_a_size(st->Kg, st->ckk);
    size_t bytes = (size_t)(st->group_elems * st->G) * sizeof(uint16_t);
    st->a = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!st->a) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    const float *w = (const float *)p->kernel.values;
    for (int64_t grp = 0; grp < st->G; grp++)
        (amx ? trtl_amx_bf16_pack_a : trtl_bf16_pack_a)(w + grp * st->Kg * st->ckk, st->ckk, st->Kg, st->ckk,
                                                        st->a + grp * st->group_elems);
    *state = st;
    return TRTL_OK;
}

static trtl_status cb_prepare(const trtl_node *nd, void **state) { return cb_prepare_of(nd, state, 0); }

const trtl_kernel trtl_kernel_conv_bf16_gemm = {
    .name = "convolution.bf16_gemm",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_BF16_CPU,
    .applies_epilogue = 1,
    .applies = cb_applies,
    .prepare = cb_prepare,
    .release = cb_release,
    .scratch = cb_scratch,
    .run = cb_run,
    .precision = TRTL_BF16,
};

static trtl_status ca_prepare(const trtl_node *nd, void **state) { return cb_prepare_of(nd, state, 1); }

static size_t ca_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    return cb_scratch_of(nd, in, out, 1);
}

const trtl_kernel trtl_kernel_conv_amx_bf16 = {
    .name = "convolution.amx_bf16",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_AMX_BF16_CPU,
    .applies_epilogue = 1,
    .applies = cb_applies,
    .prepare = ca_prepare,
    .release = cb_release,
    .scratch = ca_scratch,
    .run = cb_run,
    .precision = TRTL_BF16,
};
