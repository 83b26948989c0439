/*
 * convolution_gemm.c -- "convolution.packed_gemm": any convolution (1-3 spatial dims, groups,
 * strides, dilations, every padding mode) on trtlite's own SGEMM (gemm_packed.h), with the
 * weights packed once in prepare() and bias + residual + activation applied to each accumulator
 * tile in registers before its single store.  Needs AVX2 + FMA (AVX-512 used when present).
 *
 * For image n and group g:  Y[Kg, P] = W[Kg, Cg*kvol] x Col[Cg*kvol, P]   (P output pixels).
 * W is the packed A operand ([G][Kg rounded to mr][ckk][mr], in the kernel state).  Col is the
 * B operand and is never built whole in its plain form: its rows (c, kd, kh, kw) are generated
 * straight into B's tile layout, one depth block x pixel panel at a time (a 1x1 stride-1
 * unpadded convolution copies rows of the activations, which already are Col).
 *
 * Two ways to split the work over the pool (chosen per call from a cost model):
 *   panels   items are (image, group, pixel panel); a scratch slot packs the B block of its
 *            panel (kc x pw, sized for L2) for each depth block and runs every output channel
 *            over it.  Large maps.
 *   channels per (image, group), first all of B is packed into shared scratch (its depth rows
 *            split over the slots), then each slot runs a share of the output channels over all
 *            pixels.  Small maps with many channels (7x7 and 14x14 at batch 1), where pixel
 *            panels would leave threads idle or cut tiles into narrow remnants.
 * Vertical windows (kx1, stride 1, no dilation: Inception's 7x1 / 3x1) have their weights packed tap-major (depth
 * row tap*Cg + c instead of c*kvol + tap).  With no padding along W, Col row (tap, c) of a pixel panel is then a
 * contiguous run of the panel's window (the input rows it reads, zero rows for the vertical padding) and the rows
 * of one tap are a window plane apart: each tap's depth block goes to the GEMM as strided rows that its first row
 * panel packs as it reads them (as 1x1 convolutions' activation rows), instead of an im2col pass writing B first
 * (~10% of a 7x1 layer's time, in L2).  Other runs pack the tap-major rows (trtl_cg_packer.tap_major).
 * A slot is handed a contiguous run of items, so the same slot (thread, see threadpool.c) gets
 * the same items on every run.  In panel mode, when every thread of the pool has a scratch slot, the
 * items themselves go to the pool: a thread runs its contiguous run first and then takes what is left of
 * the others' (a thread that wakes late or is preempted no longer holds the layer for its whole share).  Depth is cut into blocks of at most KC_MAX: C tiles of earlier
 * blocks are accumulated in place (TRTL_GEMM_ACC), the epilogue runs on the last.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/convolution_gemm.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#ifndef KC_MAX
#define KC_MAX 512 /* depth block: A micro-panel (mr x kc, 24 KiB) stays in L1 */
#endif
#ifndef B_BLOCK_BYTES
#define B_BLOCK_BYTES (384 * 1024) /* a panel's B block (kc x pw) stays in L2 */
#endif
#define SHARED_MAX_FLOATS (4 * 1024 * 1024) /* channel split: all of B (ckk x P) at most 16 MiB */
#define MAX_SLOTS 64
#define ALIGN_FLOATS 16
/* B tiles are kc*nr + TILE_SKEW floats apart: with kc*nr a multiple of 4 KiB, the same row of
 * every tile would fall into one L1 set and packing a row would thrash it. */
#define TILE_SKEW 16

/* Prepared state: the packed weights of every group. */
typedef struct cg_state {
    trtl_gemm_isa isa;
    int64_t K, G, Kg, ckk, group_floats;
    int64_t kvol;  /* tap_major: the window's taps (Cg = ckk / kvol) */
    int tap_major; /* depth row tap*Cg + c (see the top) */
    float *a;
    size_t packed_bytes; /* of the packed weights (state_bytes) */
} cg_state;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* ---- work split --------------------------------------------------------------------------------- */

typedef struct cg_plan {
    int channels;             /* 1: channel split with shared B; 0: pixel panels */
    int64_t slots, kc, nkb;   /* slots used; depth block and number of blocks */
    int64_t pw, npanels;      /* pixel panels (panel mode) or pixel sub-panels (channel mode) */
    int64_t slot_floats;      /* panel mode: floats of one slot (B block + packer workspace) */
} cg_plan;

static double conv_flops(const trtl_conv_geom *g)
{
    return 2.0 * (double)g->N * (double)g->K * (double)g->ckk * (double)g->P;
}

/* Slots the scratch is sized for. */
static int64_t max_slots(const trtl_conv_geom *g) { return trtl_scratch_slots(conv_flops(g), MAX_SLOTS); }

static void depth_blocks(const trtl_conv_geom *g, int64_t *kc, int64_t *nkb)
{
    *nkb = ceil_div(g->ckk, KC_MAX);
    *kc = ceil_div(g->ckk, *nkb);
}

/* Widest pixel panel of panel mode (a multiple of nr). */
static int64_t panel_max(const trtl_conv_geom *g, int64_t kc, int64_t nr)
{
    int64_t w = B_BLOCK_BYTES / (kc * (int64_t)sizeof(float)) / nr * nr;
    if (w < 4 * nr)
        w = 4 * nr;
    return w < round_up(g->P, nr) ? w : round_up(g->P, nr);
}

static int64_t tile_stride(int64_t kc, int64_t nr) { return kc * nr + TILE_SKEW; }

/* Panel mode, one slot: the B block, then the packer's workspace. */
static int64_t panel_slot_floats(const trtl_conv_geom *g, int64_t kc, int64_t nr)
{
    int64_t pw = panel_max(g, kc, nr);
    return round_up(pw / nr * tile_stride(kc, nr), ALIGN_FLOATS) + trtl_cg_packer_floats(g, pw, g->Cg);
}

/* Channel mode: all of B, then a packer workspace per slot (a share of the input channels). */
static int64_t shared_b_floats(const trtl_conv_geom *g, int64_t nr)
{
    return round_up(ceil_div(g->P, nr) * tile_stride(g->ckk, nr), ALIGN_FLOATS);
}

static int64_t shared_slot_floats(const trtl_conv_geom *g, int64_t slots)
{
    return trtl_cg_packer_floats(g, g->P, ceil_div(g->Cg, slots));
}

static int64_t shared_floats(const trtl_conv_geom *g, int64_t nr, int64_t slots)
{
    return shared_b_floats(g, nr) + slots * shared_slot_floats(g, slots);
}

/* Cost of the work split, the slowest slot's share, in output rows x columns: a tile's columns are computed in
 * 8-float vectors (a panel of 17 pixels costs 24 columns, not the 32 of its padded tiles), and every row a slot
 * computes for a panel streams that row's weights (ckk floats) once more, PLAN_A_COLS columns' worth.  Without the
 * second term two threads on a 7x7 map took two panels of 32 + 17 pixels, each streaming all of the weights
 * (GoogLeNet's 832 -> 384 at 1.4x of one thread), where the channel split streams each weight once. */
#define PLAN_A_COLS 16
static int64_t cols8(int64_t px) { return round_up(px, 8); }

static double panel_cost(const trtl_conv_geom *g, int64_t rows, int64_t pw, int64_t npa, int64_t slots)
{
    const int64_t items = g->N * g->G * npa;
    const double whole = (double)rows * (double)(cols8(pw) + PLAN_A_COLS);
    const double last = (double)rows * (double)(cols8(g->P - (npa - 1) * pw) + PLAN_A_COLS);
    double worst = 0;
    for (int64_t s = 0; s < slots; s++) { /* items b .. e-1; item i is a last panel where (i + 1) % npa == 0 */
        const int64_t b = s * items / slots, e = (s + 1) * items / slots, nlast = e / npa - b / npa;
        const double c = (double)(e - b - nlast) * whole + (double)nlast * last;
        worst = c > worst ? c : worst;
    }
    return worst;
}

/* Picks panel or channel mode and its panel widths for `threads` threads and the scratch (floats) there is. */
static void make_plan(const trtl_conv_geom *g, trtl_gemm_isa isa, int64_t threads, size_t scratch_floats, cg_plan *pl)
{
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa), ng = g->N * g->G;
    const int64_t rows = round_up(g->Kg, mr);
    memset(pl, 0, sizeof *pl);
    depth_blocks(g, &pl->kc, &pl->nkb);
    const int64_t pmax = panel_max(g, pl->kc, nr);
    pl->slot_floats = panel_slot_floats(g, pl->kc, nr);
    int64_t slots = threads;
    if ((int64_t)(scratch_floats / (size_t)pl->slot_floats) < slots)
        slots = (int64_t)(scratch_floats / (size_t)pl->slot_floats);
    if (slots < 1)
        slots = 1;
    /* panel mode: try panel counts from the widest panels up, keep the best balance */
    double best = -1.0;
    for (int64_t np = ceil_div(g->P, pmax), tries = 0; tries < 2 * slots + 2 && np <= ceil_div(g->P, nr);
         np++, tries++) {
        int64_t pw = round_up(ceil_div(g->P, np), nr), npa = ceil_div(g->P, pw);
        int64_t items = ng * npa, s = slots < items ? slots : items;
        double cost = panel_cost(g, rows, pw, npa, s);
        if (best < 0 || cost < best * 0.999) {
            best = cost;
            pl->pw = pw;
            pl->npanels = npa;
            pl->slots = s;
        }
    }
    /* channel mode: every slot runs its share of the row panels over all pixels */
    int64_t cslots = threads < ceil_div(g->Kg, mr) ? threads : ceil_div(g->Kg, mr);
    if (cslots > 1 && (size_t)shared_floats(g, nr, cslots) <= scratch_floats &&
        g->ckk * round_up(g->P, nr) <= SHARED_MAX_FLOATS) {
        /* sub-panels of the shared B for L2, of equal width (a remnant of a few columns
         * would stream the weights once more for little work) */
        const int64_t np = ceil_div(g->P, pmax + pmax / 4), cpw = round_up(ceil_div(g->P, np), nr);
        const int64_t cnp = ceil_div(g->P, cpw);
        double cost = (double)ng * (double)(ceil_div(ceil_div(g->Kg, mr), cslots) * mr) *
                      (double)(cols8(g->P) + PLAN_A_COLS * cnp);
        if (cost < best * 0.97) {
            pl->channels = 1;
            pl->slots = cslots;
            pl->pw = cpw;
            pl->npanels = cnp;
        }
    }
}

/* ---- run ---------------------------------------------------------------------------------------- */

typedef struct cg_job {
    const trtl_conv_geom *g;
    const cg_state *st;
    const cg_plan *pl;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y, *scratch;
    int64_t n, grp;        /* channel mode: the current image and group */
    const trtl_cg_pre *pre; /* PREACT_CONV: the input transform the packer applies; else NULL */
} cg_job;

/* PREACT_CONV's transform p of a C-channel input, classified (trtl_cg_pre: whether it is a clamp the packing tiles
 * apply). */
static trtl_cg_pre pre_of(const trtl_preact_conv_params *p, int64_t C)
{
    trtl_cg_pre t = {p, 0, -INFINITY, INFINITY};
    if (p->in_scale.count != C || p->in_shift.count != C)
        return t;
    switch (p->in_act) {
    case TRTL_ACT_NONE: t.clamp = 1; break;
    case TRTL_ACT_RELU: t.clamp = 1, t.lo = 0.0f; break;
    case TRTL_ACT_CLIP: t.clamp = p->in_alpha <= p->in_beta, t.lo = p->in_alpha, t.hi = p->in_beta; break;
    default: break;
    }
    return t;
}

/* Activation rows to prefetch while a block computes (pf_rows rows of pf_cols floats, in_sp apart; none: NULL). */
typedef struct cg_pf {
    const float *x;
    int64_t rows, cols;
} cg_pf;

/* Rows [m0, m1) of group grp's output for pixels [p0, p0 + pw), depth block [k0, k0 + kc).  src (or NULL): B not
 * packed yet, its rows src + d * src_rs (1x1 stride 1: activation rows; kx1: window rows), packed into b by the first
 * row panel. */
static void run_block(const cg_job *j, int64_t n, int64_t grp, int64_t m0, int64_t m1, int64_t p0, int64_t pw,
                      int64_t k0, int64_t kc, const float *b, int64_t b_stride, const cg_pf *pf, const float *src,
                      int64_t src_rs)
{
    const int clamp = j->pre && j->pre->clamp;
    trtl_gemm_pre pre = {NULL, NULL, 0.0f, 0.0f}; /* PREACT_CONV's clamp transform at depth row k0 */
    if (clamp)
        pre = (trtl_gemm_pre){(const float *)j->pre->p->in_scale.values + grp * j->g->Cg + k0,
                              (const float *)j->pre->p->in_shift.values + grp * j->g->Cg + k0, j->pre->lo, j->pre->hi};
    const trtl_conv_geom *g = j->g;
    const cg_state *st = j->st;
    const int64_t mr = trtl_gemm_mr(st->isa), ch0 = grp * g->Kg + m0;
    const int64_t off = (n * g->K + ch0) * g->P + p0;
    int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= g->ckk ? TRTL_GEMM_LAST : 0);
    trtl_gemm_epi e = {j->bias ? j->bias + ch0 : NULL, NULL, j->res ? j->res + off : NULL, g->P,
                       j->epi->act, j->epi->alpha, j->epi->beta};
    const float *a = st->a + grp * st->group_floats + (m0 / mr) * g->ckk * mr + k0 * mr;
    if (src)
        trtl_gemm_block_pack_pre(st->isa, m1 - m0, pw, kc, a, g->ckk * mr, src, src_rs, (float *)b, b_stride,
                                 j->y + off, g->P, &e, flags, pf ? pf->x : NULL, pf ? pf->rows : 0,
                                 pf ? pf->cols * (int64_t)sizeof(float) : 0, g->in_sp * (int64_t)sizeof(float),
                                 clamp ? &pre : NULL);
    else if (pf && pf->x)
        trtl_gemm_block_pf_rows(st->isa, m1 - m0, pw, kc, a, g->ckk * mr, b, b_stride, j->y + off, g->P, &e, flags,
                                pf->x, pf->rows, pf->cols * (int64_t)sizeof(float),
                                g->in_sp * (int64_t)sizeof(float));
    else
        trtl_gemm_block(st->isa, m1 - m0, pw, kc, a, g->ckk * mr, b, b_stride, j->y + off, g->P, &e, flags);
}

/* Panel mode, 1x1 stride-1 convolutions (B rows are activation rows, packed by copies): the rows the slot packs
 * after depth block k0 of item it (the item's next depth block, else the first of item it + 1 < end), fetched
 * into L2 while the block computes.  A panel's rows are short runs a plane apart that the hardware prefetcher
 * follows late, so a copy of them otherwise waits on memory (~20% of ResNet-50's 256->64 56x56 layer). */
static cg_pf next_rows(const cg_job *j, int64_t it, int64_t end, int64_t k0)
{
    const trtl_conv_geom *g = j->g;
    const cg_plan *pl = j->pl;
    cg_pf pf = {NULL, 0, 0};
    /* one pixel panel (small maps): the activations are few and likely in L2 already, the weights are the stream
     * that matters, and a caller's stream would take the place of the next-A-panel prefetch (block_tiles) */
    if (!g->direct || pl->npanels < 2)
        return pf;
    if (k0 + pl->kc >= g->ckk) {
        if (++it >= end)
            return pf;
        k0 = 0;
    } else {
        k0 += pl->kc;
    }
    int64_t panel = it % pl->npanels, grp = (it / pl->npanels) % g->G, n = it / pl->npanels / g->G;
    int64_t p0 = panel * pl->pw;
    pf.x = j->x + (n * g->C + grp * g->Cg + k0) * g->in_sp + p0;
    pf.rows = g->ckk - k0 < pl->kc ? g->ckk - k0 : pl->kc;
    pf.cols = g->P - p0 < pl->pw ? g->P - p0 : pl->pw;
    return pf;
}

/* Tap-major weights: each tap's channels in depth blocks of at most KC_MAX, as even as they can be. */
static int64_t tap_block(const cg_job *j)
{
    const int64_t Cg = j->g->Cg;
    return ceil_div(Cg, ceil_div(Cg, KC_MAX));
}

/* Whether packer pk's window rows are the B rows of the tap-major depth blocks (see the top; trtl_cg_tap_rows), in
 * blocks no deeper than the plan's B block. */
static int tap_rows(const cg_job *j, const trtl_cg_packer *pk)
{
    return trtl_cg_tap_rows(pk) && tap_block(j) <= j->pl->kc;
}

/* Panel mode, tap_rows(): the panel's depth blocks straight from the window (trtl_cg_tap_row: pixel p0 + i of the
 * panel reads, for tap kh and channel c, window float (c*wh + kh)*wp + p0 % OW + i). */
static void tap_blocks(const cg_job *j, const trtl_cg_packer *pk, int64_t n, int64_t grp, int64_t p0, int64_t pw,
                       float *bbuf, int64_t ts)
{
    const trtl_conv_geom *g = j->g;
    const int64_t kb = tap_block(j);
    const cg_pf none = {NULL, 0, 0};
    for (int64_t t = 0; t < g->kvol; t++)
        for (int64_t c0 = 0; c0 < g->Cg; c0 += kb) {
            const int64_t kc = g->Cg - c0 < kb ? g->Cg - c0 : kb;
            run_block(j, n, grp, 0, g->Kg, p0, pw, t * g->Cg + c0, kc, bbuf, ts, &none, trtl_cg_tap_row(pk, t, c0),
                      pk->wh * pk->wp);
        }
}

/* Panel mode: items [it0, end) on scratch slot s. */
static void panel_items(const cg_job *j, int64_t s, int64_t it0, int64_t end)
{
    const trtl_conv_geom *g = j->g;
    const cg_plan *pl = j->pl;
    const trtl_gemm_isa isa = j->st->isa;
    const int64_t nr = trtl_gemm_nr(isa), ts = tile_stride(pl->kc, nr);
    float *bbuf = j->scratch + s * pl->slot_floats;
    float *work = bbuf + round_up(pl->pw / nr * ts, ALIGN_FLOATS);
    for (int64_t it = it0; it < end; it++) {
        int64_t panel = it % pl->npanels, grp = (it / pl->npanels) % g->G, n = it / pl->npanels / g->G;
        int64_t p0 = panel * pl->pw, pw = g->P - p0 < pl->pw ? g->P - p0 : pl->pw;
        trtl_cg_packer pk;
        trtl_cg_packer_begin(&pk, g, isa, work, j->x + (n * g->C + grp * g->Cg) * g->in_sp, 0, g->Cg, p0, pw, ts);
        pk.tap_major = j->st->tap_major;
        pk.pre = j->pre, pk.pre_c0 = grp * g->Cg;
        if (tap_rows(j, &pk)) {
            tap_blocks(j, &pk, n, grp, p0, pw, bbuf, ts);
            continue;
        }
        for (int64_t k0 = 0; k0 < g->ckk; k0 += pl->kc) {
            int64_t kc = g->ckk - k0 < pl->kc ? g->ckk - k0 : pl->kc;
            const cg_pf pf = next_rows(j, it, end, k0);
            /* the activation rows are B's rows: packed (and mapped by a clamp transform) by the first row panel's tiles */
            if (g->direct && (!pk.pre || pk.pre->clamp)) {
                run_block(j, n, grp, 0, g->Kg, p0, pw, k0, kc, bbuf, ts, &pf, pk.xg + k0 * g->in_sp + p0, g->in_sp);
                continue;
            }
            trtl_cg_pack_rows(&pk, k0, k0 + kc, bbuf);
            run_block(j, n, grp, 0, g->Kg, p0, pw, k0, kc, bbuf, ts, &pf, NULL, 0);
        }
    }
}

/* Panel mode: a run of the items (trtl_runs_for: fixed, a slot a thread, or stolen). */
static void panel_slots(void *ctx, int64_t slot, int64_t r, int64_t b, int64_t e)
{
    (void)r;
    panel_items(ctx, slot, b, e);
}

/* Channel mode, phase 1: depth rows of the shared B split over the slots. */
static void shared_pack_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const cg_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const trtl_gemm_isa isa = j->st->isa;
    const int64_t nr = trtl_gemm_nr(isa);
    const int64_t slots = j->pl->slots;
    float *work0 = j->scratch + shared_b_floats(g, nr);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        int64_t c0 = s * g->Cg / slots, c1 = (s + 1) * g->Cg / slots;
        if (c0 == c1)
            continue;
        trtl_cg_packer pk;
        trtl_cg_packer_begin(&pk, g, isa, work0 + s * shared_slot_floats(g, slots),
                             j->x + (j->n * g->C + j->grp * g->Cg) * g->in_sp, c0, c1, 0, g->P,
                             tile_stride(g->ckk, nr));
        pk.tap_major = j->st->tap_major;
        pk.pre = j->pre, pk.pre_c0 = j->grp * g->Cg;
        if (pk.tap_major) /* rows tap*Cg + [c0, c1) for every tap */
            for (int64_t t = 0; t < g->kvol; t++)
                trtl_cg_pack_rows(&pk, t * g->Cg + c0, t * g->Cg + c1, j->scratch + (t * g->Cg + c0) * nr);
        else
            trtl_cg_pack_rows(&pk, c0 * g->kvol, c1 * g->kvol, j->scratch + c0 * g->kvol * nr);
    }
}

/* Channel mode, phase 2: slot s runs its row panels over every pixel sub-panel and depth block. */
static void shared_gemm_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const cg_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const cg_plan *pl = j->pl;
    const int64_t mr = trtl_gemm_mr(j->st->isa), nr = trtl_gemm_nr(j->st->isa), npan = ceil_div(g->Kg, mr);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        int64_t m0 = s * npan / pl->slots * mr, m1 = (s + 1) * npan / pl->slots * mr;
        if (m1 > g->Kg)
            m1 = g->Kg;
        if (m0 >= m1)
            continue;
        for (int64_t p0 = 0; p0 < g->P; p0 += pl->pw) {
            int64_t pw = g->P - p0 < pl->pw ? g->P - p0 : pl->pw;
            for (int64_t k0 = 0; k0 < g->ckk; k0 += pl->kc) {
                int64_t kc = g->ckk - k0 < pl->kc ? g->ckk - k0 : pl->kc;
                const float *b = j->scratch + (p0 / nr) * tile_stride(g->ckk, nr) + k0 * nr;
                run_block(j, j->n, j->grp, m0, m1, p0, pw, k0, kc, b, tile_stride(g->ckk, nr), NULL, NULL, 0);
            }
        }
    }
}

static float *align_floats(void *p)
{
    uintptr_t u = ((uintptr_t)p + 63) & ~(uintptr_t)63;
    return (float *)u;
}

static trtl_status cg_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const cg_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    if (!st || st->K != g.K || st->G != g.G || st->ckk != g.ckk || (st->tap_major && st->kvol != g.kvol))
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.packed_gemm run without its packed weights",
                          nd->name);
    cg_job j;
    memset(&j, 0, sizeof j);
    j.g = &g;
    j.st = st;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    const trtl_preact_conv_params *pp = nd->op == TRTL_OP_PREACT_CONV ? &nd->p.preact : NULL;
    if (pp && (!g.direct || (pp->in_scale.count && pp->in_scale.count != g.C) ||
               (pp->in_shift.count && pp->in_shift.count != g.C)))
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': preact_conv.packed_gemm runs 1x1 stride-1 unpadded "
                          "convolutions with one transform weight per input channel (the plan is corrupt)", nd->name);
    trtl_cg_pre pre = {NULL, 0, 0.0f, 0.0f};
    if (pp) {
        pre = pre_of(pp, g.C);
        j.pre = &pre;
    }
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &j.res));
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    if (g.ckk == 0) { /* no input channels: bias + epilogue of nothing */
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution without input channels", nd->name);
    }
    size_t avail = a->scratch && a->scratch_size > 64 ? (a->scratch_size - 64) / sizeof(float) : 0;
    cg_plan pl;
    make_plan(&g, st->isa, trtl_threads_for(a->pool, conv_flops(&g)), avail, &pl);
    if ((size_t)pl.slot_floats > avail && !pl.channels)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed panel",
                          nd->name, a->scratch_size);
    j.pl = &pl;
    j.scratch = align_floats(a->scratch);
    if (pl.channels) {
        for (j.n = 0; j.n < g.N; j.n++)
            for (j.grp = 0; j.grp < g.G; j.grp++) {
                trtl_parallel_for(a->pool, pl.slots, 1, shared_pack_slots, &j);
                trtl_parallel_for(a->pool, pl.slots, 1, shared_gemm_slots, &j);
            }
        return TRTL_OK;
    }
    const trtl_runs runs = trtl_runs_plan(a->pool, pl.slots, g.N * g.G * pl.npanels);
    trtl_runs_for(a->pool, &runs, panel_slots, &j);
    return TRTL_OK;
}

static size_t cg_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK || g.P == 0 || g.ckk == 0)
        return 0;
    /* sized for the widest variant (the state is not visible here); AVX-512 tiles are the wider */
    int64_t need = 0, slots = max_slots(&g), kc, nkb;
    depth_blocks(&g, &kc, &nkb);
    for (int isa = TRTL_GEMM_AVX2; isa <= TRTL_GEMM_AVX512; isa++) {
        int64_t nr = trtl_gemm_nr((trtl_gemm_isa)isa), v = slots * panel_slot_floats(&g, kc, nr);
        if (slots > 1 && g.ckk * round_up(g.P, nr) <= SHARED_MAX_FLOATS && shared_floats(&g, nr, slots) > v)
            v = shared_floats(&g, nr, slots);
        if (v > need)
            need = v;
    }
    return (size_t)need * sizeof(float) + 64;
}

static int cg_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    int nsp = p->kernel_size.nb_dims;
    if (nsp < 1 || nsp > 3 || in_dims[0].nb_dims != nsp + 2 || p->num_groups < 1 || p->num_output_maps < 1 ||
        p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT))
        return 0;
    int64_t C = in_dims[0].d[1];
    return C > 0 && C % p->num_groups == 0 && p->num_output_maps % p->num_groups == 0 &&
           p->kernel.count % p->num_output_maps == 0 && p->kernel.count > 0;
}

static size_t cg_state_bytes(const void *state)
{
    const cg_state *st = state;
    return sizeof *st + st->packed_bytes;
}

static void cg_release(void *state)
{
    cg_state *st = state;
    if (st)
        free(st->a);
    free(st);
}

/* Vertical 2-D windows (kh x 1, kh > 1), stride 1, no dilation: weights packed tap-major (see the top). */
static int tap_major_params(const trtl_conv_params *p)
{
    return p->kernel_size.nb_dims == 2 && p->kernel_size.d[0] > 1 && p->kernel_size.d[1] == 1 &&
           p->stride.nb_dims == 2 && p->stride.d[0] == 1 && p->stride.d[1] == 1 && p->dilation.nb_dims == 2 &&
           p->dilation.d[0] == 1 && p->dilation.d[1] == 1;
}

/* Where natural depth row d = c * kvol + t of a weight row sits in the packed A: t * Cg + c tap-major, else d. */
static int64_t packed_row(const cg_state *st, int64_t d)
{
    return st->tap_major ? (d % st->kvol) * (st->ckk / st->kvol) + d / st->kvol : d;
}

static trtl_status cg_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    trtl_gemm_isa isa = trtl_gemm_isa_best();
    if (isa == TRTL_GEMM_NONE)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution.packed_gemm needs AVX2 and FMA", nd->name);
    if (p->num_groups < 1 || p->num_output_maps < 1 || p->num_output_maps % p->num_groups ||
        p->kernel.count % p->num_output_maps || p->kernel.type != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit %d output maps in %d groups", nd->name,
                          (long long)p->kernel.count, p->num_output_maps, p->num_groups);
    cg_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->isa = isa;
    st->K = p->num_output_maps;
    st->G = p->num_groups;
    st->Kg = st->K / st->G;
    st->ckk = p->kernel.count / st->K;
    st->group_floats = trtl_gemm_packed_a_size(isa, st->Kg, st->ckk);
    size_t bytes = (size_t)(st->group_floats * st->G) * sizeof(float);
    st->a = aligned_alloc(64, (bytes + 63) / 64 * 64);
    st->packed_bytes = bytes;
    if (!st->a) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    const float *w = (const float *)p->kernel.values;
    float *tm = NULL; /* a group's weights in tap-major order */
    if (tap_major_params(p) && st->ckk % p->kernel_size.d[0] == 0) {
        st->tap_major = 1;
        st->kvol = p->kernel_size.d[0];
        tm = malloc((size_t)(st->Kg * st->ckk) * sizeof(float));
        if (!tm) {
            cg_release(st);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory reordering the weights", nd->name);
        }
    }
    for (int64_t grp = 0; grp < st->G; grp++) {
        const float *wg = w + grp * st->Kg * st->ckk;
        if (tm) {
            for (int64_t m = 0; m < st->Kg; m++)
                for (int64_t d = 0; d < st->ckk; d++)
                    tm[m * st->ckk + packed_row(st, d)] = wg[m * st->ckk + d];
            wg = tm;
        }
        trtl_gemm_pack_a(isa, wg, st->ckk, 1, st->Kg, st->ckk, st->a + grp * st->group_floats);
    }
    free(tm);
    *state = st;
    return TRTL_OK;
}

/* W[grp*Kg + m][d] read back from A panel m / mr of its group (gemm_packed.h's layout): exact, the packing
 * only moves floats.  dst is the plan writer's buffer at any byte offset: stored with memcpy. */
static void cg_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const cg_state *st = state;
    const int64_t mr = trtl_gemm_mr(st->isa);
    unsigned char *w = dst;
    (void)nd;
    for (int64_t grp = 0; grp < st->G; grp++)
        for (int64_t m = 0; m < st->Kg; m++) {
            const float *panel = st->a + grp * st->group_floats + (m / mr) * st->ckk * mr + m % mr;
            unsigned char *row = w + (size_t)((grp * st->Kg + m) * st->ckk) * sizeof(float);
            for (int64_t d = 0; d < st->ckk; d++)
                memcpy(row + (size_t)d * sizeof(float), &panel[packed_row(st, d) * mr], sizeof(float));
        }
}

const trtl_kernel trtl_kernel_conv_packed_gemm = {
    .name = "convolution.packed_gemm",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = cg_applies,
    .prepare = cg_prepare,
    .release = cg_release,
    .state_bytes = cg_state_bytes,
    .scratch = cg_scratch,
    .run = cg_run,
    .unpack = cg_unpack,
};

/* PREACT_CONV (passes/fuse_preact.c): the same kernel where the convolution is 1x1, stride 1, unpadded (B's rows are
 * the activation rows, each mapped by the input transform while it is packed: trtl_cg_pack_rows). */
static int preact_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_preact_conv_params *p = &nd->p.preact;
    trtl_conv_geom g;
    if (!cg_applies(nd, in_dims) || trtl_conv_geom_init(nd, &in_dims[0], NULL, &g) != TRTL_OK || !g.direct)
        return 0;
    return (!p->in_scale.count || (p->in_scale.count == g.C && p->in_scale.type == TRTL_FLOAT)) &&
           (!p->in_shift.count || (p->in_shift.count == g.C && p->in_shift.type == TRTL_FLOAT));
}

const trtl_kernel trtl_kernel_preact_conv_packed_gemm = {
    .name = "preact_conv.packed_gemm",
    .op = TRTL_OP_PREACT_CONV,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = preact_applies,
    .prepare = cg_prepare,
    .release = cg_release,
    .state_bytes = cg_state_bytes,
    .scratch = cg_scratch,
    .run = cg_run,
    .unpack = cg_unpack,
};
