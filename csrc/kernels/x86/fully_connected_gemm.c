/*
 * fully_connected_gemm.c -- "fully_connected.packed_gemm": Y[M, K] = X[M, D] x W[K, D]^T + bias,
 * then the fused residual + activation, on trtlite's own SGEMM (gemm_packed.h).  D =
 * kernel.count / num_output_channels, M = volume(input) / D.  Needs AVX2 + FMA.
 *
 * The weights are the B operand (output channels are the contiguous axis of Y), packed once in
 * prepare() into tiles of nr channels over the whole depth.  X is the A operand: in the panel order
 * (one row, few channels) each slot packs its rows one depth block at a time (at most MB rows x
 * KC_MAX); in the weight-tile-stationary orders a slot packs its row block over the whole depth once
 * per row block it visits.  Bias, residual and activation are applied to the accumulator tiles
 * before their single store.
 *
 * Work items are (row block, channel chunk): at batch 1 the channels are cut into chunks of whole
 * tiles, so each thread streams its share of the weights once; with many rows the row blocks are
 * spread over the slots.  On a whole pool the tile-stationary orders cut about ITEMS_PER_THREAD
 * items a thread.  Every order runs through trtl_runs_for: with a slot a pool thread the runs are stolen
 * (blas_common.h), otherwise each slot runs a fixed run.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/gemm_packed.h"
#include "kernels/x86/fc_rows.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define KC_MAX 384 /* depth block */
#define MB 96      /* rows packed at a time: a multiple of both variants' mr */
#define MAX_SLOTS 64
#define TILE_SKEW 16 /* see convolution_gemm.c: tiles kc*nr + 16 floats apart */

typedef struct fg_state {
    trtl_gemm_isa isa;
    int64_t K, D, ts; /* ts: tile stride of the packed weights */
    float *b;
    size_t packed_bytes; /* of the packed weights (state_bytes) */
} fg_state;

typedef struct fg_job {
    const fg_state *st;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y, *scratch;
    int64_t M, nmb, nnb, nb, slots, slot_floats; /* nb: channels per chunk (whole tiles) */
    int64_t mb_rows; /* fg_slots: rows a row block (the last one fewer) */
    int tile_major;  /* fg_slots_tiles: the tile-major order (else depth-major) */
    /* the tile-stationary orders: the row block whose A (packed over the whole depth) is in slot s, -1: none;
     * entry s is touched only by the thread that runs slot s */
    int64_t packed_mb[MAX_SLOTS];
} fg_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#ifndef KC_T /* -D: benchmarks/linear_variants.sh sweeps */
#define KC_T 256  /* depth block of the tile-stationary orders: a kc x 32 weight tile is 32 KiB (L1) */
#endif
#ifndef KC_WHOLE
#define KC_WHOLE 768 /* depth up to this: one depth block (no read-back of C; measured 1-4% faster at 768) */
#endif
#define MB_T 240  /* rows a row block in those orders at most */
#define MIN_TILES_T 4 /* fewer weight tiles per chunk: the panel-stationary order */
#define A_TM_BYTES (640 * 1024) /* the tile-major order's packed A (whole depth) at most: in L2 */
#define TM_MIN_ROWS 96 /* fewer rows fit A_TM_BYTES: the depth-major order (weights would be re-read) */
#ifndef A_DM_BYTES /* -D: benchmarks/linear_variants.sh */
/* The depth-major order's packed A (whole depth, one depth block hot in L2): 3 MiB holds ViT-B/16's 197 tokens at
 * depth 3072 in one row block (2 MiB cut them 96 + 101 rows), so two threads split the channels evenly instead of
 * the rows unevenly, each reading half the weights (session 19; level at one thread). */
#define A_DM_BYTES (3072 * 1024)
#endif
#define ITEMS_PER_THREAD 4 /* the tile-stationary orders on a whole pool: items claimed with stealing */

/* The depth block of the tile-stationary orders: the whole depth up to KC_WHOLE (ViT / BERT's 768: C is
 * stored once instead of read back twice, 1-4% faster on Zen 3 and Xeon although an AVX-512 weight tile then
 * overflows L1), else equal blocks of at most KC_T (depth 3072 at M 49..128: 768 measured 2-7% slower). */
static int64_t depth_block(int64_t D) { return D <= KC_WHOLE ? D : ceil_div(D, ceil_div(D, KC_T)); }

/* Rows a row block of the tile-major order may have for depth D (whole panels), 0 when fewer than
 * TM_MIN_ROWS fit. */
static int64_t tm_rows(int64_t D, int64_t mr)
{
    int64_t r = A_TM_BYTES / ((int64_t)sizeof(float) * D) / mr * mr;
    if (r > MB_T)
        r = MB_T;
    return r >= TM_MIN_ROWS ? r : 0;
}

/* Rows a row block of the depth-major order has at most for depth D: whole panels whose A, packed over the whole
 * depth, fits A_DM_BYTES (at least one panel, at most MB_T rows). */
static int64_t dm_rows(int64_t D, int64_t mr)
{
    int64_t r = A_DM_BYTES / ((int64_t)sizeof(float) * D) / mr * mr;
    return r > MB_T ? MB_T : r < mr ? mr : r;
}

/* Floats a scratch slot holds for depth D: the panel order's A block, and with more than one row (`rows`) the
 * tile-stationary orders' A over the whole depth. */
static int64_t slot_floats(int64_t D, int rows)
{
    int64_t kc = D < KC_MAX ? D : KC_MAX;
    int64_t a = (MB * kc + 15) / 16 * 16;
    if (!rows)
        return a;
    /* the tile-stationary orders' A over the whole depth: both variants' mr divide MB_T, so the larger of
     * AVX-512's and AVX2's rows bounds both */
    int64_t t = tm_rows(D, 12) * D;
    for (int64_t mr = 6; mr <= 12; mr += 6) {
        int64_t r = tm_rows(D, mr) > 0 ? tm_rows(D, mr) : dm_rows(D, mr);
        t = r * D > t ? r * D : t;
    }
    return a > t ? a : t;
}

/* Row block mb of the tile-stationary orders: whole panels, the blocks' panel counts differing by at
 * most one (so that two threads with equally many blocks get equal work). */
static void row_block(const fg_job *j, int64_t mb, int64_t mr, int64_t *m0, int64_t *rows)
{
    const int64_t P = ceil_div(j->M, mr), p0 = P * mb / j->nmb, p1 = P * (mb + 1) / j->nmb;
    *m0 = p0 * mr;
    *rows = (p1 * mr < j->M ? p1 * mr : j->M) - *m0;
}

/* The weight tile after tile t's depth block [k0, k0 + kc) in an item (the next depth block of the
 * same tile in the tile-major order, of the next tile in the depth-major order, ...): its first float
 * and its floats, or NULL at the item's end.  Each call prefetches it into L2 while its tile runs
 * (spread over the row panels), so that the next tile's first panel does not wait on L3 / memory. */
typedef struct fg_next {
    const float *p;
    int64_t floats;
} fg_next;

static void fg_epi(const fg_job *j, int64_t m0, int64_t n, int slow, trtl_gemm_epi *e)
{
    const int64_t K = j->st->K;
    *e = (trtl_gemm_epi){NULL, j->bias ? j->bias + n : NULL, j->res ? j->res + m0 * K + n : NULL, K,
                         slow ? TRTL_ACT_NONE : j->epi->act, j->epi->alpha, j->epi->beta};
}

/* Depth-major order: per depth block (depth_block), each weight tile (kc x nr, 32 KiB) runs over all row panels
 * while it stays in L1; the row block's A block streams from L2 (fg_item packs the whole depth, one depth block
 * after the other, each block's panels contiguous: read as one stream from L3 by the first tile of the block).
 * C is read back once a depth block. */
static void item_depth_major(const fg_job *j, int64_t m0, int64_t rows, int64_t n0, int64_t cols, const float *apack,
                             int slow)
{
    const fg_state *st = j->st;
    const trtl_gemm_isa isa = st->isa;
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa), K = st->K, D = st->D;
    const int64_t kcb = depth_block(D), prow = ceil_div(rows, mr) * mr;
    for (int64_t k0 = 0; k0 < D; k0 += kcb) {
        int64_t kc = D - k0 < kcb ? D - k0 : kcb;
        int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= D ? TRTL_GEMM_LAST : 0) | TRTL_GEMM_SPLIT_TAIL;
        for (int64_t c0 = 0; c0 < cols; c0 += nr) {
            int64_t n = n0 + c0, w = cols - c0 < nr ? cols - c0 : nr;
            trtl_gemm_epi e;
            fg_epi(j, m0, n, slow, &e);
            fg_next nx = {NULL, 0};
            if (c0 + nr < cols)
                nx = (fg_next){st->b + (n / nr + 1) * st->ts + k0 * nr, kc * nr};
            else if (k0 + kc < D)
                nx = (fg_next){st->b + (n0 / nr) * st->ts + (k0 + kc) * nr, (D - k0 - kc < kcb ? D - k0 - kc : kcb) * nr};
            trtl_gemm_block_pf_spread(isa, rows, w, kc, apack + k0 * prow, kc * mr, st->b + (n / nr) * st->ts + k0 * nr, st->ts,
                                      j->y + m0 * K + n, K, &e, flags, nx.p,
                                      nx.p ? nx.floats * (int64_t)sizeof(float) : 0);
        }
    }
}

#define TM_ACT_TILES 8 /* the tile-major order applies a slow activation every this many tiles (hot in L2) */

/* Tile-major order: the row block's A is packed over the whole depth (<= A_TM_BYTES, in L2), then
 * each weight tile runs all its depth blocks over all row panels before the next: the C strip of a
 * tile (rows x nr) stays in L1 / L2 between depth blocks instead of the whole chunk's C being read
 * back from L3 once a depth block (the chunk's C is rows x cols: 1.5 MiB for BERT's 768 -> 3072), and
 * the weights are read in their packed order, one sequential stream. */
static void item_tile_major(const fg_job *j, int64_t m0, int64_t rows, int64_t n0, int64_t cols, const float *apack,
                            int slow)
{
    const fg_state *st = j->st;
    const trtl_gemm_isa isa = st->isa;
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa), K = st->K, D = st->D;
    const int64_t kcb = depth_block(D);
    const trtl_epilogue act = {j->epi->act, j->epi->alpha, j->epi->beta, 0};
    int64_t act_from = 0; /* columns [act_from, c0) of the chunk still wait for a slow activation */
    for (int64_t c0 = 0; c0 < cols; c0 += nr) {
        const int64_t n = n0 + c0, w = cols - c0 < nr ? cols - c0 : nr;
        const float *tile = st->b + (n / nr) * st->ts;
        trtl_gemm_epi e;
        fg_epi(j, m0, n, slow, &e);
        for (int64_t k0 = 0; k0 < D; k0 += kcb) {
            int64_t kc = D - k0 < kcb ? D - k0 : kcb;
            int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= D ? TRTL_GEMM_LAST : 0) | TRTL_GEMM_SPLIT_TAIL;
            fg_next nx = {NULL, 0};
            if (k0 + kc < D)
                nx = (fg_next){tile + (k0 + kc) * nr, (D - k0 - kc < kcb ? D - k0 - kc : kcb) * nr};
            else if (c0 + nr < cols)
                nx = (fg_next){tile + st->ts, kcb * nr};
            trtl_gemm_block_pf_spread(isa, rows, w, kc, apack + k0 * mr, D * mr, tile + k0 * nr, st->ts,
                                      j->y + m0 * K + n, K, &e, flags, nx.p,
                                      nx.p ? nx.floats * (int64_t)sizeof(float) : 0);
        }
        if (slow && (c0 / nr + 1) % TM_ACT_TILES == 0) {
            for (int64_t r = 0; r < rows; r++)
                trtl_epi_act(&act, j->y + (m0 + r) * K + n0 + act_from, c0 + w - act_from);
            act_from = c0 + w;
        }
    }
    if (slow && act_from < cols)
        for (int64_t r = 0; r < rows; r++)
            trtl_epi_act(&act, j->y + (m0 + r) * K + n0 + act_from, cols - act_from);
}

/* The weight-tile-stationary orders (transformer projections: many channels, depth 192..3072): each
 * weight tile (kc x nr, 32 KiB) runs over all row panels of a row block while it stays in L1; A
 * streams from L2 as 12 broadcasts a depth step.  fg_slots (A panel in L1, every weight tile streamed
 * from L2 per row panel) reads 128 bytes of weights a depth step instead and measured 1.05-1.5x slower
 * on BERT / ViT / Swin shapes at one thread; it stays for few channels (Swin's 384 -> 96), where A
 * would be re-read from L2 for each of 3 tiles.  An activation without a register path (GELU, ...)
 * runs over rows of the output once many tiles are done (hot in L2), not per 32-column tile: one call
 * per row instead of one per row and tile (the per-call dispatch cost as much as the math for 32
 * columns). */
/* Item `it` (row block, channel chunk) on slot `slot`: the row block's A is packed over the whole depth once
 * per row block the slot visits (items are numbered row block first, so a slot's run of items shares it). */
static void fg_item(fg_job *j, int64_t it, int64_t slot)
{
    const fg_state *st = j->st;
    const int64_t mr = trtl_gemm_mr(st->isa), K = st->K, D = st->D;
    const int slow = !trtl_act_is_fast(j->epi->act);
    int64_t mb = it / j->nnb, nbi = it % j->nnb, m0, rows;
    row_block(j, mb, mr, &m0, &rows);
    int64_t n0 = nbi * j->nb, cols = K - n0 < j->nb ? K - n0 : j->nb;
    if (cols <= 0 || rows <= 0)
        return;
    float *apack = j->scratch + slot * j->slot_floats;
    if (j->packed_mb[slot] != mb) {
        if (j->tile_major) { /* panels over the whole depth */
            trtl_gemm_pack_a_split(st->isa, j->x + m0 * D, D, rows, D, apack);
        } else { /* depth block after depth block, as item_depth_major reads them */
            const int64_t kcb = depth_block(D), prow = ceil_div(rows, mr) * mr;
            for (int64_t k0 = 0; k0 < D; k0 += kcb)
                trtl_gemm_pack_a_split(st->isa, j->x + m0 * D + k0, D, rows, D - k0 < kcb ? D - k0 : kcb,
                                       apack + k0 * prow);
        }
        j->packed_mb[slot] = mb;
    }
    if (j->tile_major) {
        item_tile_major(j, m0, rows, n0, cols, apack, slow);
    } else {
        item_depth_major(j, m0, rows, n0, cols, apack, slow);
        if (slow) {
            const trtl_epilogue act = {j->epi->act, j->epi->alpha, j->epi->beta, 0};
            for (int64_t r = 0; r < rows; r++)
                trtl_epi_act(&act, j->y + (m0 + r) * K + n0, cols);
        }
    }
}

/* Items [b, e) (trtl_runs_for) on scratch slot `slot`, in a tile-stationary order. */
static void fg_run_tiles(void *ctx, int64_t slot, int64_t r, int64_t b, int64_t e)
{
    (void)r;
    for (int64_t it = b; it < e; it++)
        fg_item(ctx, it, slot);
}

/* Items [it0, it1) (trtl_runs_for) on scratch slot `slot`, in the panel order. */
static void fg_run_panels(void *ctx, int64_t slot, int64_t r, int64_t it0, int64_t it1)
{
    const fg_job *j = ctx;
    const fg_state *st = j->st;
    const trtl_gemm_isa isa = st->isa;
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa), K = st->K, D = st->D;
    /* one row streams the weights once: no depth blocks needed */
    const int64_t kcb = j->M == 1 ? D : ceil_div(D, ceil_div(D, KC_MAX));
    (void)r;
    float *apack = j->scratch + slot * j->slot_floats;
    for (int64_t it = it0; it < it1; it++) {
        int64_t mb = it / j->nnb, nbi = it % j->nnb;
        int64_t m0 = mb * MB, rows = j->M - m0 < MB ? j->M - m0 : MB;
        int64_t n0 = nbi * j->nb, cols = K - n0 < j->nb ? K - n0 : j->nb;
        if (cols <= 0)
            continue;
        trtl_gemm_epi e = {NULL, j->bias ? j->bias + n0 : NULL, j->res ? j->res + m0 * K + n0 : NULL, K,
                           j->epi->act, j->epi->alpha, j->epi->beta};
        for (int64_t k0 = 0; k0 < D; k0 += kcb) {
            int64_t kc = D - k0 < kcb ? D - k0 : kcb;
            int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= D ? TRTL_GEMM_LAST : 0);
            const float *ap = j->x + m0 * D + k0; /* one row: read in place */
            if (rows > 1) {
                trtl_gemm_pack_a_split(isa, ap, D, rows, kc, apack);
                flags |= TRTL_GEMM_SPLIT_TAIL;
                ap = apack;
            } else {
                flags |= TRTL_GEMM_A_ROW;
            }
            trtl_gemm_block(isa, rows, cols, kc, ap, kc * mr, st->b + (n0 / nr) * st->ts + k0 * nr, st->ts,
                            j->y + m0 * K + n0, K, &e, flags);
        }
    }
}

static trtl_status fg_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const fg_state *st = a->state;
    if (!st)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': fully_connected.packed_gemm run without its packed weights",
                          nd->name);
    const int64_t K = st->K, D = st->D;
    int64_t M;
    TRTL_TRY(trtl_fc_rows_shapes(a, K, D, &M));
    fg_job j;
    memset(&j, 0, sizeof j);
    j.st = st;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.fc.bias.count ? (const float *)nd->p.fc.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    j.M = M;
    TRTL_TRY(trtl_epi_residual(a, M * K, &j.res));
    if (M == 0)
        return TRTL_OK;
    j.slot_floats = slot_floats(D, M > 1);
    void *aligned;
    int64_t avail = trtl_fc_rows_avail(a, j.slot_floats, sizeof(float), &aligned);
    if (avail < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed block",
                          nd->name, a->scratch_size);
    j.scratch = aligned;
    int64_t t = trtl_threads_for(a->pool, 2.0 * (double)M * (double)K * (double)D);
    if (t > avail)
        t = avail;
    const int64_t nr = trtl_gemm_nr(st->isa), mr = trtl_gemm_mr(st->isa);
    const int tile_order = M > 1 && trtl_fc_rows_split(M, K, MB_T, nr, t).nb >= MIN_TILES_T * nr;
    const int64_t tmr = tm_rows(D, mr);
    j.tile_major = tile_order && tmr > 0;
    const int64_t mb = !tile_order ? MB : j.tile_major ? tmr : dm_rows(D, mr);
    trtl_fc_split sp = trtl_fc_rows_split(M, K, mb, nr, t);
    j.nmb = sp.nmb;
    j.nnb = sp.nnb;
    j.nb = sp.nb;
    j.slots = sp.slots;
    /* Whole row blocks per thread: as many blocks as a multiple of the threads, so that each gets the
     * same number of (balanced) blocks; e.g. 1024 rows on 2 threads: 6 blocks of 168-180 rows, not
     * 4 x 240 + 64 split 2 / 3. */
    if (tile_order && sp.nnb == 1 && j.slots > 1)
        j.nmb = ceil_div(j.nmb, j.slots) * j.slots;
    if (j.nmb > ceil_div(M, mr))
        j.nmb = ceil_div(M, mr);
    j.mb_rows = mb;
    if (j.slots < 1)
        j.slots = 1;
    for (int s = 0; s < MAX_SLOTS; s++)
        j.packed_mb[s] = -1;
    const int pool = trtl_threadpool_size(a->pool);
    if (tile_order && t > 1 && t == pool && avail >= pool && pool <= MAX_SLOTS) {
        /* The whole pool, a slot a thread: finer channel chunks (>= MIN_TILES_T tiles each) so that there are
         * about ITEMS_PER_THREAD items a thread, claimed with stealing. */
        const int64_t ntiles = ceil_div(K, nr), most = ntiles / MIN_TILES_T > 1 ? ntiles / MIN_TILES_T : 1;
        int64_t nnb = ceil_div(ITEMS_PER_THREAD * t, j.nmb);
        nnb = nnb > most ? most : nnb;
        if (nnb > j.nnb) {
            j.nb = ceil_div(ntiles, nnb) * nr;
            j.nnb = ceil_div(K, j.nb);
        }
        j.slots = t; /* a slot a pool thread: trtl_runs_plan steals */
    }
    const trtl_runs runs = trtl_runs_plan(a->pool, j.slots, j.nmb * j.nnb);
    trtl_runs_for(a->pool, &runs, tile_order ? fg_run_tiles : fg_run_panels, &j);
    return TRTL_OK;
}

static size_t slot_bytes(int64_t D) { return (size_t)slot_floats(D, 1) * sizeof(float); }
static size_t slot_bytes_row(int64_t D) { return (size_t)slot_floats(D, 0) * sizeof(float); }

static size_t fg_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    const trtl_fc_params *p = &nd->p.fc;
    const int64_t D = p->num_output_channels > 0 ? p->kernel.count / p->num_output_channels : 0;
    const int one_row = D > 0 && trtl_volume(&in[0].dims) <= D;
    return trtl_fc_rows_scratch(nd, in, MAX_SLOTS, one_row ? slot_bytes_row : slot_bytes);
}

static size_t fg_state_bytes(const void *state)
{
    const fg_state *st = state;
    return sizeof *st + st->packed_bytes;
}

static void fg_release(void *state)
{
    fg_state *st = state;
    if (st)
        free(st->b);
    free(st);
}

static trtl_status fg_prepare(const trtl_node *nd, void **state)
{
    const trtl_fc_params *p = &nd->p.fc;
    *state = NULL;
    trtl_gemm_isa isa = trtl_gemm_isa_best();
    if (isa == TRTL_GEMM_NONE)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': fully_connected.packed_gemm needs AVX2 and FMA", nd->name);
    int64_t K, D;
    TRTL_TRY(trtl_fc_rows_params(nd, &K, &D));
    fg_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    const int64_t nr = trtl_gemm_nr(isa);
    st->isa = isa;
    st->K = K;
    st->D = D;
    st->ts = st->D * nr + TILE_SKEW;
    size_t bytes = (size_t)(ceil_div(st->K, nr) * st->ts) * sizeof(float);
    st->b = aligned_alloc(64, (bytes + 63) / 64 * 64);
    st->packed_bytes = bytes;
    if (!st->b) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    /* B(d, n) = W[n, d] */
    trtl_gemm_pack_b(isa, (const float *)p->kernel.values, 1, st->D, st->D, st->K, st->b, st->ts);
    *state = st;
    return TRTL_OK;
}

/* W[n, d] = B(d, n), read back from its tile: exact (the packing only moves floats).  dst is the plan
 * writer's buffer at any byte offset, so each float is stored with memcpy. */
static void fg_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const fg_state *st = state;
    const int64_t nr = trtl_gemm_nr(st->isa);
    unsigned char *w = dst;
    (void)nd;
    for (int64_t n = 0; n < st->K; n++) {
        const float *tile = st->b + (n / nr) * st->ts + n % nr;
        for (int64_t d = 0; d < st->D; d++)
            memcpy(w + (size_t)(n * st->D + d) * sizeof(float), &tile[d * nr], sizeof(float));
    }
}

const trtl_kernel trtl_kernel_fc_packed_gemm = {
    .name = "fully_connected.packed_gemm",
    .op = TRTL_OP_FULLY_CONNECTED,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = trtl_fc_rows_applies,
    .prepare = fg_prepare,
    .release = fg_release,
    .state_bytes = fg_state_bytes,
    .scratch = fg_scratch,
    .run = fg_run,
    .unpack = fg_unpack,
};

/* The internal LINEAR op (passes/fuse_linear.c: a matrix multiply by a constant weight) has FULLY_CONNECTED's
 * params and row semantics (volume / D rows of D values, output [.., N]): the same kernel runs it. */
const trtl_kernel trtl_kernel_linear_packed_gemm = {
    .name = "linear.packed_gemm",
    .op = TRTL_OP_LINEAR,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = trtl_fc_rows_applies,
    .prepare = fg_prepare,
    .release = fg_release,
    .state_bytes = fg_state_bytes,
    .scratch = fg_scratch,
    .run = fg_run,
    .unpack = fg_unpack,
};
