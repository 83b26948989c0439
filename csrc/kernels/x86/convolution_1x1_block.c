/*
 * convolution_1x1_block.c -- "convolution.1x1_block": pointwise convolutions (1x1 window, no padding, one group,
 * any strides, any map size) on the register tiles of convolution.1x1_direct (pw_tile.h: the weights packed once
 * into panels of 8 output channels and broadcast, the activation rows the vector operand, the NCHW output rows
 * stored once with bias, residual and activation applied), over cache blocks of output pixels:
 *
 *   item (image set n, pixel block b, channel range r):
 *       the block's input pixels of every input channel are copied into the slot's buffer (stride 1: row pieces;
 *       stride 2 in the width: the even lanes of two vectors; other strides one by one), output row by output row
 *       with the next strided source row prefetched, a C x PB block of at most PB_BLOCK_BYTES that stays in L2, as C
 *       rows pb_rs floats apart (dense where the block is one chunk); where a block holds a whole map, it holds
 *       several images (an image set);
 *       then for every channel group of the range, every image and every pixel chunk (3 vectors) of the block
 *       runs its tile over the chunk's rows.
 *
 * Why a block copy: read in place (convolution.1x1_direct) a chunk is C rows P floats apart, C streams that no
 * hardware prefetcher follows and, on large maps, rows that map to a few L1 sets (112x112: 49 KiB apart) and
 * many pages; the copy reads each row's piece of the block as one sequential run (prefetched, many misses in
 * flight) once and every channel group then reuses it.  It also is where a stride is applied, so the strided
 * shortcut convolutions (ResNet's 1x1/s2) need no separate strided tile.
 *
 * The work split: items (n, b, r), r fastest; a channel range is the whole K unless there are fewer blocks than
 * threads (then the groups are split into ranges and the ranges of a block copy its pixels each).  Blocks are
 * of equal size where that evens the threads' shares (pb_balance); a thread that is done takes runs of items
 * the others have not started where every pool thread has a buffer (trtl_steal_runs).
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/pw_tile.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#ifndef PB_BLOCK_BYTES
#define PB_BLOCK_BYTES (128 * 1024) /* a block's rows (C x xs floats) */
#endif
#define PB_MAX_BLOCK 2048 /* pixels a block at most */
#define PB_MAX_SLOTS 64
#define PB_ALIGN 64

typedef struct pb_geom {
    int64_t N, C, K, P, in_sp;
    int64_t in[3], out[3], s[3];
    int64_t pb, xs;        /* pixels a block, floats an image's block takes in the buffer (pb_img_floats) */
    int64_t nblock, ngroup;
    int64_t nimg, nset;    /* images a block (> 1 only where a block holds a whole map), image sets (N / nimg up) */
    int wide;
} pb_geom;

typedef struct pb_job {
    const pw_state *st;
    const pb_geom *g;
    const float *x, *bias, *res;
    float *y, *buf;
    const trtl_epilogue *epi;
    trtl_epilogue tile_epi; /* epi, without its activation where that is no register one (applied per block row) */
    int64_t nrange, slot_floats;
} pb_job;

static int64_t pb_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Floats between a block's rows for a block of np pixels of the geometry g: a block of one chunk (deep inputs:
 * C >= 683 on AVX2, 1366 on AVX-512) has dense rows of 3 vectors (+ AVX-512's 4 extra pixels), others a skew of 16
 * floats past a multiple of 16, so that rows a power of two apart do not share L1 sets.  The skew made a deep
 * block 1.7-2.5x its PB_BLOCK_BYTES (C = 2048: 320 KiB of rows of 40 floats for 24 pixels), past L2: dense rows
 * made ResNet-50's 2048->512 7x7 and 1024->2048 s2 6-16% faster (pw_ab_bench, batch 1). */
static int64_t pb_rs(const pb_geom *g, int64_t np)
{
    const int64_t cw = PW_MAX_NV * (g->wide ? 16 : 8);
    return np <= cw ? cw + (g->wide ? PW_MAX_EXTRA : 0) : (np + 15) / 16 * 16 + 16;
}

/* Floats of the buffer an image's block of np pixels takes: C rows of pb_rs. */
static int64_t pb_img_floats(const pb_geom *g, int64_t np) { return g->C * pb_rs(g, np); }

/* Block size for C input channels: a whole number of 3-vector chunks, PB_BLOCK_BYTES of rows, at least a chunk. */
static void pb_geom_block(pb_geom *g)
{
    const int vl = g->wide ? 16 : 8, cw = PW_MAX_NV * vl;
    int64_t pb = PB_BLOCK_BYTES / (int64_t)sizeof(float) / (g->C > 0 ? g->C : 1);
    pb = pb_min(pb, PB_MAX_BLOCK) / cw * cw;
    if (pb < cw)
        pb = cw;
    if (pb > g->P)
        pb = g->P;
    g->pb = pb;
    g->nblock = pb ? (g->P + pb - 1) / pb : 0;
    /* Whole maps that leave room in the block (RegNetY's 14x14 / 7x7 layers at batch 8): a block of several images,
     * so that a channel group's weight panel (C x 8 floats, in L1) serves them all instead of streaming from L2
     * once an image.  The buffer is sized for the most images that fit, whatever the batch. */
    g->nimg = 1;
    if (g->nblock == 1 && g->P > 0) {
        int64_t cap = pb_min(PB_BLOCK_BYTES / (int64_t)sizeof(float) / (g->C > 0 ? g->C : 1), PB_MAX_BLOCK) / g->P;
        g->nimg = cap > 1 ? cap : 1;
    }
    g->xs = pb_img_floats(g, pb);
    g->nset = g->nimg > 1 ? (g->N + g->nimg - 1) / g->nimg : g->N;
    const int gr = g->wide ? PW_MR : 4;
    g->ngroup = (g->K + gr - 1) / gr;
}

/* The pb_geom of node nd on input dims xd (output dims yd or NULL); 0 where this kernel cannot compute it. */
static int pb_geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, pb_geom *g)
{
    trtl_conv_geom cg;
    if (trtl_conv_geom_init(nd, xd, yd, &cg) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (cg.G != 1 || cg.kvol != 1)
        return 0;
    for (int d = 0; d < 3; d++) /* no pre-padding, and no post-padding that outputs past the input (cg.pad is the
                                  * pre-padding only: a 1x1 window at (out - 1) * s must lie in the input) */
        if (cg.pad[d] != 0 || (cg.out[d] - 1) * cg.s[d] >= cg.in[d])
            return 0;
    memset(g, 0, sizeof *g);
    g->N = cg.N;
    g->C = cg.C;
    g->K = cg.K;
    g->P = cg.P;
    g->in_sp = cg.in_sp;
    for (int d = 0; d < 3; d++) {
        g->in[d] = cg.in[d];
        g->out[d] = cg.out[d];
        g->s[d] = cg.s[d];
    }
    g->wide = trtl_cpu_has(TRTL_CPU_AVX512F);
    pb_geom_block(g);
    return 1;
}

/* Work of a block of np pixels: its vectors (a partial last one costs a whole one). */
static int64_t pb_block_cost(const pb_geom *g, int64_t np)
{
    const int64_t vl = g->wide ? 16 : 8;
    return (np + vl - 1) / vl;
}

/* The slowest of `slots` contiguous runs of the N * nblock blocks of pb pixels (work units of pb_block_cost).  Every
 * block costs the same but an image's last (items i with (i + 1) % nb == 0: e / nb - b / nb of them in [b, e)), so a
 * run costs in O(1) and pb_balance, which run() calls on every inference, in O(slots^2) (was O(slots * N * nblock):
 * 3 x 2 x 8 x 13 block costs for RegNetY's 1x1 s2 at batch 8, now 3 x 2 run costs). */
static int64_t pb_split_cost(const pb_geom *g, int64_t pb, int64_t slots)
{
    const int64_t nb = (g->P + pb - 1) / pb, items = g->N * nb;
    const int64_t full = pb_block_cost(g, pb), last = pb_block_cost(g, g->P - (nb - 1) * pb);
    int64_t worst = 0;
    for (int64_t s = 0; s < slots; s++) {
        const int64_t b = s * items / slots, e = (s + 1) * items / slots;
        const int64_t c = (e - b) * full - (e / nb - b / nb) * (full - last);
        worst = c > worst ? c : worst;
    }
    return worst;
}

/* With at least as many blocks as slots: blocks of equal size (whole vectors, at most the scratch-sized pb), and
 * more of them where that evens the slots' runs.  pb_geom_block cuts the map into blocks of the largest size and
 * a remnant: ResNet-style 28x28 at C = 48 was 672 + 112 pixels, RegNetY's 14x14 at C = 208 144 + 52, so two
 * threads ran at 1.03x / 1.3x of one.  Only shrinks pb, so the scratch sized for g stays large enough. */
static void pb_balance(pb_geom *g, int64_t slots)
{
    if (slots < 2 || g->N * g->nblock < slots || g->nimg > 1)
        return;
    const int64_t vl = g->wide ? 16 : 8, pmax = g->pb;
    int64_t best_pb = pmax, best_nb = g->nblock, best = pb_split_cost(g, pmax, slots);
    for (int64_t nb = g->nblock; nb <= g->nblock + slots; nb++) {
        int64_t pb = ((g->P + nb - 1) / nb + vl - 1) / vl * vl;
        if (pb > pmax)
            pb = pmax;
        const int64_t c = pb_split_cost(g, pb, slots), nbk = (g->P + pb - 1) / pb;
        /* more blocks re-stream the weights once more each: a split must gain 3% to take more of them */
        if (c < best && (nbk <= best_nb || c * 100 < best * 97)) {
            best = c;
            best_pb = pb;
            best_nb = nbk;
        }
    }
    g->pb = best_pb;
    g->xs = pb_img_floats(g, best_pb);
    g->nset = g->N;
    g->nblock = (g->P + best_pb - 1) / best_pb;
}

/* ---- the block copy ------------------------------------------------------------------------ */

/* n outputs of one input row, every sw-th float from src. */
/* 8 outputs: the even lanes of src[0 .. 15]. */
__attribute__((target("avx2,fma"))) static inline void pb_even8(float *dst, const float *src)
{
    __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
    __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 a4 a6 b4 b6 */
    _mm256_storeu_ps(dst, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
}

/* n outputs of one input row, every sw-th float from src (avail floats left in the row; pb_copy copies stride 1
 * by memcpy).  Stride 2 by vectors of 8 while their 16 source floats lie in the row, and a last partial vector as
 * a whole one that overlaps the previous where n >= 8 and it stays in the row; the rest one by one. */
__attribute__((target("avx2,fma"))) static void pb_row(float *dst, const float *src, int64_t n, int64_t sw,
                                                       int64_t avail)
{
    int64_t i = 0;
    if (sw == 2) {
        for (; i + 8 <= n && 2 * (i + 8) <= avail; i += 8)
            pb_even8(dst + i, src + 2 * i);
        if (i < n && n >= 8 && 2 * n <= avail) {
            pb_even8(dst + n - 8, src + 2 * (n - 8));
            return;
        }
    }
    for (; i < n; i++)
        dst[i] = src[i * sw];
}

/* Output pixels [p0, p0 + np) of image x (C input maps) into img as C rows pb_rs floats apart, output row by output
 * row; with a stride the next output row's source lines of each channel are prefetched while this one is copied (at
 * batch 8 the strided inputs come from memory: RegNetY's 32->48 56x56 s2 reads 12.8 MB of input). */
static void pb_copy(const pb_geom *g, const float *x, int64_t p0, int64_t np, float *img)
{
    const int64_t ow = g->out[2], oh = g->out[1], sw = g->s[2];
    const int64_t rs = pb_rs(g, np);
    int64_t p = p0, w = p0 % ow, h = (p0 / ow) % oh, d = p0 / (ow * oh);
    while (p < p0 + np) {
        const int64_t run = pb_min(ow - w, p0 + np - p), avail = g->in[2] - w * sw;
        const int64_t src = (d * g->s[0] * g->in[1] + h * g->s[1]) * g->in[2] + w * sw;
        /* with a stride, the next output row's source piece (from its start), prefetched a row ahead */
        const int64_t nn = sw > 1 || g->s[1] > 1 ? pb_min(ow, p0 + np - p - run) : 0;
        const int64_t nsrc = ((h + 1 == oh ? d + 1 : d) * g->s[0] * g->in[1] + (h + 1 == oh ? 0 : h + 1) * g->s[1]) *
                             g->in[2];
        const int64_t nbytes = nn > 0 ? ((nn - 1) * sw + 1) * (int64_t)sizeof(float) : 0;
        for (int64_t c = 0; c < g->C; c++) {
            const float *xc = x + c * g->in_sp;
            for (int64_t b = 0; b < nbytes; b += 64)
                _mm_prefetch((const char *)(xc + nsrc) + b, _MM_HINT_T0);
            if (sw == 1) /* whole row pieces: a memcpy (an inline vector loop was 5-20% slower on 13..27 maps) */
                memcpy(img + c * rs + p - p0, xc + src, (size_t)run * sizeof(float));
            else
                pb_row(img + c * rs + p - p0, xc + src, run, sw, avail);
        }
        p += run;
        w = 0;
        if (++h == oh) {
            h = 0;
            d++;
        }
    }
}

/* ---- the work split ------------------------------------------------------------------------ */

/* Items [it0, it1) (trtl_runs_for) on the block buffer of scratch slot `slot`. */
static void pb_items(void *ctx, int64_t slot, int64_t run, int64_t it0, int64_t it1)
{
    const pb_job *j = ctx;
    const pb_geom *g = j->g;
    const int vl = g->wide ? 16 : 8, gr = g->wide ? PW_MR : 4;
    const int64_t P = g->P, C = g->C, K = g->K;
    (void)run;
    float *buf = j->buf + slot * j->slot_floats;
    for (int64_t it = it0; it < it1; it++) {
        int64_t r = it % j->nrange, col = it / j->nrange, set = col / g->nblock, b = col % g->nblock;
        int64_t p0 = b * g->pb, np = pb_min(g->pb, P - p0);
        int64_t n0 = set * g->nimg, ni = pb_min(g->nimg, g->N - n0); /* images n0 .. n0+ni-1, at buf + i * ifl */
        const int64_t ifl = pb_img_floats(g, np);
        int64_t g0 = r * g->ngroup / j->nrange, g1 = (r + 1) * g->ngroup / j->nrange;
        for (int64_t i = 0; i < ni; i++)
            pb_copy(g, j->x + (n0 + i) * C * g->in_sp, p0, np, buf + i * ifl);
        const int64_t xs = pb_rs(g, np), nq = pw_nchunks(np, vl, g->wide, P);
        for (int64_t gi = g0; gi < g1; gi++)
            for (int64_t i = 0; i < ni; i++) {
                const float *res = j->res ? j->res + (n0 + i) * K * P + p0 : NULL;
                float *y = j->y + (n0 + i) * K * P + p0;
                const float *xb = buf + i * ifl;
                for (int64_t q = 0; q < nq; q++) {
                    pw_chunk ch = pw_chunk_at(np, vl, g->wide, P, q);
                    pw_chunk_groups(j->st, g->wide, &ch, gi, gi + 1, xb + ch.p0, xs, j->bias, res ? res + ch.p0 : NULL,
                                    y + ch.p0, P, &j->tile_epi);
                }
                if (!trtl_act_is_fast(j->epi->act)) /* the group's rows of the block, in L1: one span each */
                    for (int64_t k = gi * gr, ke = pb_min(k + gr, K); k < ke; k++)
                        trtl_epi_act(j->epi, y + k * P, np);
            }
    }
}

/* ---- the kernel ---------------------------------------------------------------------------- */

static double pb_flops(const pb_geom *g) { return 2.0 * (double)g->N * (double)g->K * (double)g->C * (double)g->P; }

/* Slots the scratch is sized for and run() may use. */
static int64_t pb_max_slots(const pb_geom *g) { return trtl_scratch_slots(pb_flops(g), PB_MAX_SLOTS); }

static size_t pb_slot_floats(const pb_geom *g)
{
    return (size_t)((g->nimg * g->xs + PB_ALIGN / 4 - 1) / (PB_ALIGN / 4) * (PB_ALIGN / 4));
}

static size_t pb_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    pb_geom g;
    if (!pb_geom_init(nd, &in[0].dims, &out[0].dims, &g))
        return 0;
    return (size_t)pb_max_slots(&g) * pb_slot_floats(&g) * sizeof(float) + PB_ALIGN;
}

static trtl_status pb_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const pw_state *st = a->state;
    pb_geom g;
    if (!pb_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g) || !st || g.C != st->C || g.K != st->K)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': convolution.1x1_block cannot compute this "
                          "convolution (the plan is corrupt)", nd->name);
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    const size_t slot_floats = pb_slot_floats(&g);
    int64_t avail = a->scratch && a->scratch_size > PB_ALIGN
                        ? (int64_t)((a->scratch_size - PB_ALIGN) / (slot_floats * sizeof(float)))
                        : 0;
    if (avail < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one pixel block",
                          nd->name, a->scratch_size);
    pb_job j = {st, &g, (const float *)a->in[0].data,
                nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL, res, (float *)a->out[0].data,
                (float *)(((uintptr_t)a->scratch + PB_ALIGN - 1) & ~(uintptr_t)(PB_ALIGN - 1)), &nd->epi, nd->epi,
                1, (int64_t)slot_floats};
    if (!trtl_act_is_fast(nd->epi.act))
        j.tile_epi.act = TRTL_ACT_NONE;
    int64_t slots = trtl_threads_for(a->pool, pb_flops(&g));
    slots = pb_min(pb_min(slots, avail), pb_max_slots(&g));
    if (g.nimg > 1) { /* image sets: at least one a thread where the batch allows, of even sizes */
        int64_t per = (g.N + slots - 1) / slots;
        g.nimg = pb_min(g.nimg, per > 0 ? per : 1);
        g.nset = (g.N + g.nimg - 1) / g.nimg;
        g.nimg = (g.N + g.nset - 1) / g.nset;
    }
    pb_balance(&g, slots);
    int64_t blocks = g.nset * g.nblock;
    if (blocks < slots) /* fewer blocks than threads: split the output channels too */
        j.nrange = pb_min((slots + blocks - 1) / blocks, g.ngroup);
    const trtl_runs runs = trtl_runs_plan(a->pool, slots, blocks * j.nrange);
    trtl_runs_for(a->pool, &runs, pb_items, &j);
    return TRTL_OK;
}

static int pb_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1 || p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT) ||
        p->num_output_maps < 1 || p->kernel.count % p->num_output_maps)
        return 0;
    pb_geom g;
    return pb_geom_init(nd, &in_dims[0], NULL, &g) && p->kernel.count == g.K * g.C;
}

const trtl_kernel trtl_kernel_conv_1x1_block = {
    .name = "convolution.1x1_block",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = pb_applies,
    .prepare = trtl_pw_prepare,
    .release = trtl_pw_release,
    .scratch = pb_scratch,
    .run = pb_run,
    .unpack = trtl_pw_unpack,
    .state_bytes = trtl_pw_state_bytes,
};
