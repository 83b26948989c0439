/* nchwc_conv.c -- "nchwc_conv.avx2": the NCHWC_CONV op (kernels/nchwc.h) with 8-channel blocks on AVX2 + FMA.
 * (Dense convolutions of 1..16 input channels, plain input -> blocked output: x86/nchwc_dense.c; grouped ones whose
 * groups have multiples of 8 channels: x86/nchwc_grouped.c.)
 *
 * - Pointwise (1x1, stride 1, no padding, groups 1): weights packed once into [ceil(K/8)][C][8]; a register tile of
 *   3 output blocks x 4 pixels (12 accumulators): per input channel 4 broadcasts of the input value and 3 weight
 *   vectors (fewer loads than 2 x 6; weights packed [ceil(K/24)][C][24], one stream a group of 3 blocks).  Pixels in
 *   chunks whose input rows stay in L2 (C * chunk floats), every group of 3 output blocks over a chunk;
 *   past PW_KC_MIN input channels in depth blocks of PW_KC over the chunk (partial sums through the output).
 * - Depthwise (groups == C == K, up to 7x7, strides 1/2, dilation 1-2, any padding): weights packed into
 *   [ceil(C/8)][R*S][8]; every tap one full-vector FMA over 8 channels, 8 (4, 1) output pixels a register tile on
 *   the row's interior (every tap inside), the edge columns of rows whose tap rows all lie inside as column tiles of
 *   8 (4, 1) rows on maps up to 32 wide, other edge pixels one at a time with bounds checks, rows outside skipped.
 * The epilogue (bias, residual, activation) is applied in registers (ReLU / clip / leaky) or over each finished
 * chunk / row (trtl_epi_act).  A plain input is reordered into a blocked scratch copy first, a plain output is
 * computed blocked into scratch and reordered (residual added, activation after) per block: the reorders at a
 * region's edges (x86/nchwc_reorder.c).  Work is items of (image, pixel chunk, group of output blocks) or (image,
 * channel block, band of rows), in even runs a multiple of the threads (even_runs); the pointwise tile prefetches
 * the input 2 tiles ahead, the depthwise rows the input rows of the next output row.  Squeeze-and-excitation
 * (kernels/nchwc.h): the pointwise path multiplies its input (a blocked copy) or its weights (a copy per image),
 * whichever is smaller, by the input scale; the depthwise path sums each finished row into the channel means. */
#include <string.h>
#include <immintrin.h>

#include "kernels/nchwc.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/nchwc_reorder.h"
#include "kernels/x86/nchwc_dense.h"
#include "kernels/x86/nchwc_grouped.h"
#include "kernels/x86/nchwc_pw512.h"
#include "kernels/x86/nchwc_dw512.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/alloc.h"
#include "core/cpu.h"
#include "core/threadpool.h"
#include "core/dims.h"
#include "core/status.h"

#define NB 8       /* channels a block */
#define DW_MAXK 7
#define DW_MAXD 2 /* depthwise dilation up to this (LR-ASPP / DeepLabV3's last MobileNetV3 stage: 5x5, dilation 2) */
#ifndef PW_PF_TILES
#define PW_PF_TILES 2 /* pointwise: the input is prefetched this many tiles ahead (first group, every depth block) */
#endif
#ifndef PW_KC
#define PW_KC 128 /* pointwise: input channels a depth block (a multiple of NB), where there are more than PW_KC_MIN */
#endif
#define PW_KC_MIN 192
#define PW_IMAGE_FLOATS 65536 /* pointwise: a depth-blocked image's input up to this is one pixel chunk (pw_run) */
#ifndef PW_LANE_UNROLL
#define PW_LANE_UNROLL 2 /* pointwise AVX2: lanes of a whole channel block unrolled in the tile loop */
#endif
#define PW_PRAGMA_(x) _Pragma(#x)
#define PW_PRAGMA(x) PW_PRAGMA_(x)
#define PW_GB 3    /* pointwise AVX2: output blocks a group (an item; a packed weight row of 24 lanes) */
#define PW_TP 4    /* pixels a tile of a group's 3 blocks (12 accumulators) */
#define PW_TP2 6   /* pixels a tile of a group of 1-2 real blocks (K's last: 2 x 6 = 12 accumulators, as before) */
#define PW_TILES(X)                                                                                                   \
    X(4, 3) X(3, 3) X(2, 3) X(1, 3) X(6, 2) X(5, 2) X(4, 2) X(3, 2) X(2, 2) X(1, 2) X(6, 1) X(5, 1) X(4, 1) X(3, 1)     \
    X(2, 1) X(1, 1)

typedef struct nc_geom {
    int64_t N, C, K, H, W, OH, OW, R, S, sh, sw, pt, pl, CB, KB, P;
    int64_t dh, dl; /* dilation (depthwise: 1..DW_MAXD; grouped: any; else 1) */
    int dw, dense, in_plain, out_plain; /* dense: x86/nchwc_dense.c (plain input read in place) */
    int grp;     /* grouped: x86/nchwc_grouped.c (G groups, dilation dh x dl) */
    int64_t G;
    int wide;    /* pointwise through the AVX-512 tiles (x86/nchwc_pw512.c): weights [ceil(K/32)][C][32] */
    int dw512;   /* depthwise interior rows through the AVX-512 tiles (x86/nchwc_dw512.c; stride 1 along W) */
    int64_t KL;  /* packed output lanes: ceil(K/24) * 24, or ceil(K/32) * 32 when wide (weights KL * C, bias KL) */
} nc_geom;

typedef struct nc_state {
    float *w, *b; /* packed weights, bias [KL] (zero past K) */
    size_t bytes;
    int finite; /* grouped: every weight finite (x86/nchwc_grouped.c may pad its input) */
} nc_state;

#define WG TRTL_NCHWC_PW512_GROUP /* output channels a group of the wide packing */

/* Lanes of one packed pointwise weight row: a group of PW_GB blocks (24), or a group of the wide packing (32). */
static int64_t row_lanes(int wide)
{
    return wide ? WG : PW_GB * NB;
}

/* Packed output lanes of K channels: whole rows of row_lanes(wide), zero past K. */
static int64_t packed_lanes(int64_t K, int wide)
{
    return (K + row_lanes(wide) - 1) / row_lanes(wide) * row_lanes(wide);
}

/* 1x1, stride 1, no padding, groups 1: the pointwise path (else depthwise). */
int trtl_nchwc_conv_pointwise(const trtl_conv_params *p)
{
    return p->num_groups == 1 && p->kernel_size.d[0] == 1 && p->kernel_size.d[1] == 1 && p->stride.d[0] == 1 &&
           p->stride.d[1] == 1 && p->dilation.d[0] == 1 && p->dilation.d[1] == 1 && p->pre_padding.d[0] == 0 &&
           p->pre_padding.d[1] == 0 && p->post_padding.d[0] == 0 && p->post_padding.d[1] == 0 &&
           (p->padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_DOWN || p->padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_UP ||
            p->padding_mode == TRTL_PADMODE_SAME_UPPER || p->padding_mode == TRTL_PADMODE_SAME_LOWER);
}

int trtl_nchwc_mid_ok(const trtl_node *nd)
{
    if (nd->op != TRTL_OP_NCHWC_CONV || !nd->p.nchwc.mid_qgrid)
        return 1;
    return nd->p.nchwc.mid_qgrid == 1 && nd->epi.has_residual && nd->p.nchwc.out_block &&
           trtl_nchwc_conv_pointwise(&nd->p.conv) && !trtl_nchwc_in_scaled(nd) && !trtl_nchwc_out_pooled(nd);
}

int trtl_nchwc_conv_supported(const trtl_node *nd, const trtl_dims *xd)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (xd->nb_dims != 4 || xd->d[1] <= 0 || p->kernel_size.nb_dims != 2 || p->kernel.type != TRTL_FLOAT ||
        (p->bias.count && p->bias.type != TRTL_FLOAT) || !trtl_nchwc_mid_ok(nd))
        return 0;
    if (nd->op == TRTL_OP_NCHWC_CONV && ((nd->p.nchwc.in_block & ~NB) || (nd->p.nchwc.out_block & ~NB)))
        return 0;
    /* squeeze-and-excitation: the input scale on the pointwise path, the output means on the depthwise one */
    if (nd->op == TRTL_OP_NCHWC_CONV && ((trtl_nchwc_in_scaled(nd) && !trtl_nchwc_conv_pointwise(p)) ||
                                         (trtl_nchwc_out_pooled(nd) && trtl_nchwc_conv_pointwise(p))))
        return 0;
    const trtl_dw_limits lim = {DW_MAXK, DW_MAXK, 1};
    if (trtl_dw_params_ok(p, xd->d[1], &lim) && p->dilation.d[0] <= DW_MAXD && p->dilation.d[1] <= DW_MAXD)
        return 1;
    if (trtl_nchwc_conv_grouped(p, xd->d[1])) /* any layouts; the output means, not the input scale */
        return nd->op != TRTL_OP_NCHWC_CONV || !trtl_nchwc_in_scaled(nd);
    if (trtl_nchwc_conv_dense(p, xd->d[1])) /* plain input, blocked output; no squeeze-and-excitation */
        return nd->op != TRTL_OP_NCHWC_CONV ||
               (!nd->p.nchwc.in_block && nd->p.nchwc.out_block && !trtl_nchwc_out_pooled(nd));
    return trtl_nchwc_conv_pointwise(p) && p->kernel.count == (int64_t)p->num_output_maps * xd->d[1];
}

/* Depthwise rows the AVX-512 tiles take: stride 1 along W, an odd tap count up to DW_MAXK (x86/nchwc_dw512.c). */
static int dw512_taps(int64_t S, int64_t sw)
{
    return sw == 1 && S % 2 == 1 && S <= DW_MAXK;
}

static trtl_status nc_geom_init(const trtl_node *nd, const trtl_dims *xd5, const trtl_dims *yd5, int wide,
                                nc_geom *g)
{
    const trtl_dims xd = trtl_nchwc_plain_in(nd, xd5), yd = trtl_nchwc_plain_out(nd, yd5);
    char s[TRTL_DIMS_STR_MAX];
    if (!trtl_nchwc_conv_supported(nd, &xd))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': input %s is not a convolution nchwc_conv.avx2 runs",
                          nd->name, trtl_dims_str(xd5, s, sizeof s));
    trtl_conv_geom cg;
    TRTL_TRY(trtl_conv_geom_init(nd, &xd, &yd, &cg));
    memset(g, 0, sizeof *g);
    g->N = cg.N, g->C = cg.C, g->K = cg.K, g->H = cg.in[1], g->W = cg.in[2], g->OH = cg.out[1], g->OW = cg.out[2];
    g->R = cg.k[1], g->S = cg.k[2], g->sh = cg.s[1], g->sw = cg.s[2], g->pt = cg.pad[1], g->pl = cg.pad[2];
    g->dh = cg.dl[1], g->dl = cg.dl[2];
    g->CB = trtl_nchwc_blocks(g->C, NB), g->KB = trtl_nchwc_blocks(g->K, NB), g->P = g->OH * g->OW;
    g->dense = trtl_nchwc_conv_dense(&nd->p.conv, g->C);
    g->grp = trtl_nchwc_conv_grouped(&nd->p.conv, g->C);
    g->G = cg.G;
    g->dw = !g->dense && !g->grp && !trtl_nchwc_conv_pointwise(&nd->p.conv);
    g->in_plain = !nd->p.nchwc.in_block;
    g->out_plain = !nd->p.nchwc.out_block;
    g->wide = wide && !g->dw && !g->dense && !g->grp;
    g->dw512 = wide && g->dw && dw512_taps(g->S, g->sw) && g->dh == 1 && g->dl == 1;
    g->KL = packed_lanes(g->K, g->wide);
    return TRTL_OK;
}

/* ---- pointwise ------------------------------------------------------------------------------------- */
typedef struct pw_job {
    const nc_geom *g;
    const nc_state *st;
    const float *w;  /* packed weights: st->w, or per image (w_n floats apart) scaled by the input scale */
    int64_t w_n;
    const float *x, *res;
    float *y;
    const trtl_epilogue *e; /* NULL: bias only (a plain output gets its epilogue after the reorder) */
    int64_t nchunk, groups, items, runs; /* groups: of PW_GB output blocks (4 when wide) */
    const trtl_nchwc_conv_params *mid;   /* mid_qgrid before the residual (trtl_nchwc_mid_ok: blocked output, AVX2) */
} pw_job;

/* One input channel (lane l of the channel block at xc, weight row wl) into the tile's np x nb accumulators. */
__attribute__((target("avx2,fma"), always_inline)) static inline void pw_lane(__m256 acc[PW_GB][PW_TP2],
                                                                             const float *xc, const float *wl,
                                                                             const int np, const int nb)
{
    if (nb > np) { /* more blocks than pixels: the pixels' broadcasts live, one weight vector at a time */
        __m256 xv[PW_TP2];
#pragma GCC unroll 8
        for (int j = 0; j < np; j++)
            xv[j] = _mm256_broadcast_ss(xc + j * NB);
#pragma GCC unroll 8
        for (int b = 0; b < nb; b++) {
            const __m256 wv = _mm256_loadu_ps(wl + b * NB);
#pragma GCC unroll 8
            for (int j = 0; j < np; j++)
                acc[b][j] = _mm256_fmadd_ps(xv[j], wv, acc[b][j]);
        }
    } else { /* the blocks' weight vectors live, one broadcast at a time */
        __m256 wv[PW_GB];
#pragma GCC unroll 8
        for (int b = 0; b < nb; b++)
            wv[b] = _mm256_loadu_ps(wl + b * NB);
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) {
            const __m256 xv = _mm256_broadcast_ss(xc + j * NB);
#pragma GCC unroll 8
            for (int b = 0; b < nb; b++)
                acc[b][j] = _mm256_fmadd_ps(xv, wv[b], acc[b][j]);
        }
    }
}

/* np pixels x nb output blocks from x (block 0, pixel 0 of the tile), weights w (block 0), y / res at the tile. */
__attribute__((target("avx2,fma"), always_inline)) static inline void pw_tile(const float *x, int64_t xs, int64_t C,
                                                                             const float *w, const float *bias, float *y, int64_t ys,
                                                                             const float *res, int32_t act,
                                                                             __m256 va, __m256 vb, int32_t mact,
                                                                             __m256 ma, __m256 mb, const int pf,
                                                                             const int np, const int nb, int first,
                                                                             int last)
{
    __m256 acc[PW_GB][PW_TP2];
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++) {
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) /* a later depth block adds to the sums stored by the one before */
            acc[b][j] = first ? _mm256_loadu_ps(bias + b * NB) : _mm256_loadu_ps(y + b * ys + j * NB);
        if (res && last) /* the residual of the tile PW_PF_TILES ahead */
            for (int q = 0; q < (np + 1) / 2; q++)
                _mm_prefetch((const char *)(res + b * ys + PW_PF_TILES * np * NB + q * 16), _MM_HINT_T0);
    }
    for (int64_t c0 = 0; c0 < C; c0 += NB) {
        const float *xc = x + (c0 / NB) * xs;
        const int64_t nl = C - c0 < NB ? C - c0 : NB;
        if (pf) /* the input of the tile PW_PF_TILES ahead: np pixels x 8 floats */
            for (int q = 0; q < (np + 1) / 2; q++)
                _mm_prefetch((const char *)(xc + PW_PF_TILES * np * NB + q * 16), _MM_HINT_T0);
        const float *wc = w + c0 * PW_GB * NB;
        if (nl == NB) { /* a whole block: lanes PW_LANE_UNROLL at a time, the loop's overhead once a block */
            PW_PRAGMA(GCC unroll PW_LANE_UNROLL)
            for (int l = 0; l < NB; l++)
                pw_lane(acc, xc + l, wc + l * PW_GB * NB, np, nb);
        } else {
            for (int64_t l = 0; l < nl; l++)
                pw_lane(acc, xc + l, wc + l * PW_GB * NB, np, nb);
        }
    }
    if (!last) { /* partial sums: the next depth block goes on from them */
#pragma GCC unroll 8
        for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
            for (int j = 0; j < np; j++)
                _mm256_storeu_ps(y + b * ys + j * NB, acc[b][j]);
        return;
    }
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) {
            __m256 v = acc[b][j];
            if (res && mact != TRTL_ACT_NONE) /* an int8 layer's mid quantization before its residual */
                v = trtl_act8(v, mact, ma, mb);
            if (res)
                v = _mm256_add_ps(v, _mm256_loadu_ps(res + b * ys + j * NB));
            _mm256_storeu_ps(y + b * ys + j * NB, trtl_act8(v, act, va, vb));
        }
}

/* nt tiles of NP pixels side by side in one call (the call's set-up once for a run of equal tiles). */
#define PW_TILE_FN(NP, NBK)                                                                                           \
    __attribute__((target("avx2,fma"), noinline)) static void pw_tile_##NP##_##NBK(                                  \
        const float *x, int64_t xs, int64_t C, const float *w, const float *bias, float *y, int64_t ys,              \
        const float *res, int32_t act, __m256 va, __m256 vb, int32_t mact, __m256 ma, __m256 mb, int pf, int first,  \
        int last, int64_t nt)                                                                                         \
    {                                                                                                                 \
        for (int64_t t = 0; t < nt; t++, x += NP * NB, y += NP * NB, res = res ? res + NP * NB : NULL) {            \
            if (mact != TRTL_ACT_NONE) /* int8 layers' mid quantization: its own copy, out of the fp32 tiles' code */\
                pw_tile(x, xs, C, w, bias, y, ys, res, act, va, vb, TRTL_ACT_QGRID, ma, mb, 1, NP, NBK, first, last); \
            else if (pf)                                                                                              \
                pw_tile(x, xs, C, w, bias, y, ys, res, act, va, vb, TRTL_ACT_NONE, ma, mb, 1, NP, NBK, first, last);  \
            else                                                                                                      \
                pw_tile(x, xs, C, w, bias, y, ys, res, act, va, vb, TRTL_ACT_NONE, ma, mb, 0, NP, NBK, first, last);  \
        }                                                                                                             \
    }
PW_TILES(PW_TILE_FN)

typedef void (*pw_tile_fn)(const float *, int64_t, int64_t, const float *, const float *, float *, int64_t,
                           const float *, int32_t, __m256, __m256, int32_t, __m256, __m256, int, int, int, int64_t);
#define PW_ENTRY(NP, NBK) [NBK - 1][NP - 1] = pw_tile_##NP##_##NBK,
static const pw_tile_fn pw_tiles[PW_GB][PW_TP2] = {PW_TILES(PW_ENTRY)}; /* no 3 x 5 / 3 x 6 */

/* Pixels of the next AVX2 tile of nb blocks where `rem` are left.  3 blocks: 4, but a tail that is no whole number
 * of tiles ends in tiles of 3 (9 accumulators: 9 FMA chains in flight, where a 1- or 2-pixel tile (3 / 6) waits on
 * the FMA latency): the 7 x 7 maps' 49 pixels go 10 x 4 + 3 x 3, not 12 x 4 + 1.  1-2 blocks: 6 (7 and 8 as 4 + 3 /
 * 4 + 4).  The sums are those of any tile: outputs unchanged. */
static inline int pw_tile_width(int64_t rem, int nb)
{
    if (nb < PW_GB)
        return rem == 7 || rem == 8 ? 4 : rem < PW_TP2 ? (int)rem : PW_TP2;
    if (rem <= 9 && rem % PW_TP && rem != 7)
        return rem < 3 ? (int)rem : 3;
    return rem < PW_TP ? (int)rem : PW_TP;
}

/* Runs to cut `items` equal items into for `threads` threads: a multiple of the threads (4, 2 or 1 a thread, so the
 * pool starts every thread on the same number of runs and lets a thread that is done steal runs not begun), the
 * one whose largest run is the least above the mean; returns that ratio x 1000. */
int64_t trtl_nchwc_even_runs(int64_t items, int64_t threads, int64_t *runs)
{
    int64_t best = -1;
    *runs = 1;
    for (int64_t k = 4; k >= 1 && threads > 1 && items > 0; k /= 2) { /* no items: one empty run */
        const int64_t r = k * threads < items ? k * threads : items;
        const int64_t spread = 1000 * ((items + r - 1) / r) * r / (items > 0 ? items : 1);
        if (best < 0 || spread < best) {
            best = spread;
            *runs = r;
        }
    }
    return best < 0 ? 1000 : best;
}

/* Item it = (n * nchunk + ch) * groups + q: output block group q over pixel chunk ch of image n (chunks of whole
 * tiles, the tiles spread evenly over the chunks).  Task r runs items [r * items / runs, (r+1) * ...). */
__attribute__((target("avx2,fma"))) static void pw_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const pw_job *j = (const pw_job *)ctx;
    const nc_geom *g = j->g;
    const int64_t P = g->P, xs = P * NB, tp = g->wide ? 6 : PW_TP, tiles = (P + tp - 1) / tp;
    const int32_t act = j->e && trtl_act_is_fast(j->e->act) ? j->e->act : TRTL_ACT_NONE;
    const __m256 va = _mm256_set1_ps(j->e ? j->e->alpha : 0.0f), vb = _mm256_set1_ps(j->e ? j->e->beta : 0.0f);
    const int32_t mact = j->e && j->mid && j->mid->mid_qgrid ? TRTL_ACT_QGRID : TRTL_ACT_NONE;
    const __m256 ma = _mm256_set1_ps(j->mid ? j->mid->mid_alpha : 0.0f), mb = _mm256_set1_ps(j->mid ? j->mid->mid_beta : 0.0f);
    for (int64_t r = begin; r < end; r++) {
        const int64_t i0 = r * j->items / j->runs, i1 = (r + 1) * j->items / j->runs;
        for (int64_t it = i0; it < i1; it++) {
            const int64_t q = it % j->groups, ch = it / j->groups % j->nchunk, n = it / j->groups / j->nchunk;
            const int64_t p0 = ch * tiles / j->nchunk * tp, p1e = (ch + 1) * tiles / j->nchunk * tp;
            const int64_t gb = g->wide ? 4 : PW_GB, p1 = p1e < P ? p1e : P, kb = gb * q;
            const int nbk = g->KB - kb < gb ? (int)(g->KB - kb) : (int)gb;
            const float *x = j->x + n * g->CB * xs;
            const float *w = j->w + n * j->w_n + kb * g->C * NB; /* wide: group q at q * C * 32 = kb * C * 8 */
            float *y = j->y + (n * g->KB + kb) * xs;
            const float *res = j->res ? j->res + (n * g->KB + kb) * xs : NULL;
            const int pf = it == i0 || q == 0; /* the first pass over this chunk here: prefetch its input */
            /* depth blocks of PW_KC channels over the whole chunk: their weights (PW_KC x 24 floats, or x 32 when
             * wide) stay in L1 for every tile of the chunk, where the whole depth (960 x 24 floats, 92 KiB) came
             * from L2 again for each tile; the partial sums go through y, in L1 too */
            const int64_t kc = g->C > PW_KC_MIN ? PW_KC : g->C;
            if (g->wide) {
                const trtl_nchwc_pw512_span sp = {x + p0 * NB, xs, g->C, w, j->st->b + kb * NB, y + p0 * NB,
                                                  res ? res + p0 * NB : NULL, p1 - p0, nbk, act,
                                                  j->e ? j->e->alpha : 0.0f, j->e ? j->e->beta : 0.0f, pf, kc};
                trtl_nchwc_pw512_run_span(&sp);
            } else {
                for (int64_t c0 = 0; c0 < g->C; c0 += kc) {
                    const int64_t cn = g->C - c0 < kc ? g->C - c0 : kc;
                    const int first = c0 == 0, last = c0 + cn == g->C;
                    for (int64_t p = p0, np, nt; p < p1; p += np * nt) {
                        np = pw_tile_width(p1 - p, nbk); /* a run of nt tiles of this width, one call */
                        for (nt = 1; p + (nt + 1) * np <= p1 && pw_tile_width(p1 - p - nt * np, nbk) == np; nt++)
                            ;
                        pw_tiles[nbk - 1][np - 1](x + (c0 / NB) * xs + p * NB, xs, cn, w + c0 * PW_GB * NB,
                                                  j->st->b + kb * NB, y + p * NB, xs, res ? res + p * NB : NULL, act,
                                                  va, vb, mact, ma, mb, pf, first, last, nt);
                    }
                }
            }
            if (j->e && !trtl_act_is_fast(j->e->act))
                for (int b = 0; b < nbk; b++)
                    trtl_epi_act(j->e, y + b * xs + p0 * NB, (p1 - p0) * NB);
        }
    }
}

/* Pixel chunks whose input stays in L2 (~48K floats, 192 KiB: fewer passes over the weights of the 7 x 7 layers;
 * a depth-blocked image of up to PW_IMAGE_FLOATS input floats is one chunk: 7 x 7 x 1152 was 2 chunks, every group's
 * weights (1152 x 24 floats) read twice an image from L3; session 19, MNASNet b8 1152 -> 320 3.56 -> 3.38 ms), items
 * of one block group over one chunk, cut into even_runs(): every thread starts on an equal share and steals runs
 * the others have not begun. */
static void pw_run(const nc_geom *g, const nc_state *st, const float *w, int64_t w_n, const float *x,
                   const float *res, float *y, const trtl_epilogue *e, const trtl_nchwc_conv_params *mid,
                   trtl_threadpool *pool)
{
    pw_job j = {g, st, w, w_n, x, res, y, e, 0, 0, 0, 1, mid};
    int64_t chunk = 49152 / (g->C > 0 ? g->C : 1);
    chunk = chunk < 24 ? 24 : chunk > 192 ? 192 : chunk;
    if (g->C > PW_KC_MIN && g->C * g->P <= PW_IMAGE_FLOATS) /* 7 x 7 x 1152: one pass over the weights an image */
        chunk = g->P;
    j.nchunk = (g->P + chunk - 1) / chunk;
    j.groups = g->wide ? (g->KB + 3) / 4 : (g->KB + PW_GB - 1) / PW_GB; /* items' output blocks: PW_GB, or 4 */
    const int64_t threads = trtl_threadpool_size(pool), tp = g->wide ? 6 : PW_TP, tiles = (g->P + tp - 1) / tp;
    const int64_t nchunk0 = j.nchunk;
    /* more threads: smaller chunks (up to 4x as many) where the runs' item counts would differ by more than 1/16
     * (480->112 at 14 x 14, two threads: 2 chunks x 5 groups = 10 items in 8 runs of 1 or 2 items) */
    int64_t best = -1;
    for (int64_t nc = nchunk0; threads > 1 && nc <= 4 * nchunk0 && nc <= tiles && (best < 0 || best > 1062); nc++) {
        int64_t runs;
        const int64_t spread = trtl_nchwc_even_runs(g->N * nc * j.groups, threads, &runs);
        if (best < 0 || spread < best) {
            best = spread;
            j.nchunk = nc;
            j.runs = runs;
        }
    }
    j.items = g->N * j.nchunk * j.groups;
    if (best < 0)
        trtl_nchwc_even_runs(j.items, threads, &j.runs);
    trtl_parallel_for(pool, j.runs, 1, pw_task, &j);
}

/* ---- depthwise ------------------------------------------------------------------------------------- */
typedef struct dw_job {
    const nc_geom *g;
    const nc_state *st;
    const float *x, *res;
    float *y;
    const trtl_epilogue *e;
    float *mean; /* [N, K] channel means of the finished output, or NULL (a plain output: to_plain_task does it) */
    int64_t bands, items, runs; /* item = (n * CB + cb) * bands + band of output rows; runs: dw_run */
} dw_job;

/* sum + the P pixels of the blocked row yr [P][8] (read back while the row is in L1). */
__attribute__((target("avx2,fma"))) static __m256 sum_blocked(__m256 sum, const float *yr, int64_t P)
{
    __m256 s1 = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 2 <= P; p += 2) {
        sum = _mm256_add_ps(sum, _mm256_loadu_ps(yr + p * NB));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(yr + (p + 1) * NB));
    }
    if (p < P)
        sum = _mm256_add_ps(sum, _mm256_loadu_ps(yr + p * NB));
    return _mm256_add_ps(sum, s1);
}

/* m[k] = mean of plane k of nk planes of P floats. */
static void mean_planes(const float *y, int64_t nk, int64_t P, float *m)
{
    for (int64_t k = 0; k < nk; k++) {
        double sum = 0.0;
        for (int64_t p = 0; p < P; p++)
            sum += y[k * P + p];
        m[k] = (float)(sum / (double)P);
    }
}

/* nt output pixels from ow (every tap inside the row) of output row `yr` from tap rows r0..r1 of the block; `dil`:
 * the dilations g->dh, g->dl (else 1: the undilated rows keep their constant offsets). */
__attribute__((target("avx2,fma"), always_inline)) static inline void dw_tile(const nc_geom *g, const float *xb,
                                                                             const float *wb, __m256 bias,
                                                                             int64_t oh, int64_t ow, int64_t r0,
                                                                             int64_t r1, float *yr, const float *rr,
                                                                             int32_t act, __m256 va, __m256 vb,
                                                                             const int nt, const int S, const int sw,
                                                                             const int dil)
{
    const int64_t dh = dil ? g->dh : 1, dl = dil ? g->dl : 1;
    __m256 acc[8];
#pragma GCC unroll 8
    for (int j = 0; j < nt; j++)
        acc[j] = bias;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = xb + ((oh * g->sh - g->pt + r * dh) * g->W + ow * sw - g->pl) * NB;
        const float *wr = wb + r * S * NB;
#pragma GCC unroll 8
        for (int t = 0; t < S; t++) {
            const __m256 wv = _mm256_loadu_ps(wr + t * NB);
#pragma GCC unroll 8
            for (int j = 0; j < nt; j++)
                acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(xr + (j * sw + t * dl) * NB), wv, acc[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nt; j++) {
        __m256 v = acc[j];
        if (rr)
            v = _mm256_add_ps(v, _mm256_loadu_ps(rr + (ow + j) * NB));
        _mm256_storeu_ps(yr + (ow + j) * NB, trtl_act8(v, act, va, vb));
    }
}

/* Taps [*t0, *t1) of a kernel of n taps, dilation d, whose tap 0 reads input i0, that lie inside [0, len). */
static inline void taps_inside(int64_t i0, int64_t len, int64_t n, int64_t d, int64_t *t0, int64_t *t1)
{
    *t0 = i0 < 0 ? (-i0 + d - 1) / d : 0;
    *t1 = len - i0 <= 0 ? 0 : (len - i0 + d - 1) / d < n ? (len - i0 + d - 1) / d : n;
}

/* One output pixel anywhere (taps outside the input skipped; r0..r1: the tap rows inside). */
__attribute__((target("avx2,fma"))) static void dw_pixel(const nc_geom *g, const float *xb, const float *wb,
                                                         __m256 bias, int64_t oh, int64_t ow, int64_t r0, int64_t r1,
                                                         float *yr, const float *rr, int32_t act, __m256 va, __m256 vb)
{
    __m256 acc = bias;
    const int64_t iw0 = ow * g->sw - g->pl; /* the taps inside the row: t in [t0, t1) */
    int64_t t0, t1;
    taps_inside(iw0, g->W, g->S, g->dl, &t0, &t1);
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = xb + ((oh * g->sh - g->pt + r * g->dh) * g->W + iw0 + t0 * g->dl) * NB;
        const float *wr = wb + (r * g->S + t0) * NB;
        for (int64_t t = 0; t < t1 - t0; t++)
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(xr + t * g->dl * NB), _mm256_loadu_ps(wr + t * NB), acc);
    }
    if (rr)
        acc = _mm256_add_ps(acc, _mm256_loadu_ps(rr + ow * NB));
    _mm256_storeu_ps(yr + ow * NB, trtl_act8(acc, act, va, vb));
}

/* Edge column ow (taps [t0, t1) inside the row) of nt output rows from oh whose every tap row lies inside the input:
 * nt independent chains, each pixel's sums in dw_pixel's order (outputs bitwise equal).  An edge pixel alone is one
 * chain of R * (t1 - t0) dependent FMAs (on a 7 x 7 map 2 of 7 pixels a row, 3x3: 4 of 9 tap products each). */
__attribute__((target("avx2,fma"), always_inline)) static inline void dw_col(const nc_geom *g, const float *xb,
                                                                            const float *wb, __m256 bias, int64_t oh,
                                                                            int64_t ow, int64_t t0, int64_t t1,
                                                                            float *yb, const float *rb, int32_t act,
                                                                            __m256 va, __m256 vb, const int nt)
{
    const int64_t rs = g->sh * g->W * NB; /* input floats from one output row to the next */
    const float *x0 = xb + ((oh * g->sh - g->pt) * g->W + ow * g->sw - g->pl + t0 * g->dl) * NB;
    __m256 acc[8];
#pragma GCC unroll 8
    for (int j = 0; j < nt; j++)
        acc[j] = bias;
    for (int64_t r = 0; r < g->R; r++) {
        const float *xr = x0 + r * g->dh * g->W * NB, *wr = wb + (r * g->S + t0) * NB;
        for (int64_t t = 0; t < t1 - t0; t++) {
            const __m256 wv = _mm256_loadu_ps(wr + t * NB);
#pragma GCC unroll 8
            for (int j = 0; j < nt; j++)
                acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(xr + j * rs + t * g->dl * NB), wv, acc[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nt; j++) {
        const int64_t o = ((oh + j) * g->OW + ow) * NB;
        __m256 v = acc[j];
        if (rb)
            v = _mm256_add_ps(v, _mm256_loadu_ps(rb + o));
        _mm256_storeu_ps(yb + o, trtl_act8(v, act, va, vb));
    }
}

/* The edge columns [0, lo) and [hi, OW) of output rows [oh, oh + n) (every tap row inside), 8 / 4 / 1 rows a tile. */
__attribute__((target("avx2,fma"), noinline)) static void dw_edge_cols(const nc_geom *g, const float *xb,
                                                                      const float *wb, __m256 bias, int64_t oh,
                                                                      int64_t n, int64_t lo, int64_t hi, float *yb,
                                                                      const float *rb, int32_t act, __m256 va,
                                                                      __m256 vb)
{
    for (int64_t ow = lo > 0 ? 0 : hi; ow < g->OW; ow = ow + 1 == lo ? hi : ow + 1) {
        int64_t t0, t1;
        taps_inside(ow * g->sw - g->pl, g->W, g->S, g->dl, &t0, &t1);
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
            dw_col(g, xb, wb, bias, oh + i, ow, t0, t1, yb, rb, act, va, vb, 8);
        for (; i + 4 <= n; i += 4)
            dw_col(g, xb, wb, bias, oh + i, ow, t0, t1, yb, rb, act, va, vb, 4);
        for (; i < n; i++)
            dw_col(g, xb, wb, bias, oh + i, ow, t0, t1, yb, rb, act, va, vb, 1);
    }
}

/* The input rows the next output row after oh adds (1 or 2; 0: none), prefetched tile by tile as a row goes
 * (addresses as integers: a tile's last line may lie past the tensor, which a prefetch may touch). */
static inline void dw_next_rows(const nc_geom *g, const float *xb, int64_t oh, uintptr_t *pf0, uintptr_t *pf1)
{
    const int64_t nr = (oh + 1) * g->sh - g->pt + (g->R - 1) * g->dh;
    *pf0 = nr >= 0 && nr < g->H ? (uintptr_t)(xb + nr * g->W * NB) : 0;
    *pf1 = g->sh > 1 && nr >= 1 && nr - 1 < g->H ? (uintptr_t)(xb + (nr - 1) * g->W * NB) : 0;
}

/* The interior columns [lo, hi) of a row in tiles of 8, 4 and 1, S and the stride constant; dw_rowd_*: dilated. */
#define DW_ROW_FN(S, SW) DW_ROW_FN_(S, SW, dw_row_##S##_##SW, 0) DW_ROW_FN_(S, SW, dw_rowd_##S##_##SW, 1)
#define DW_ROW_FN_(S, SW, NAME, DIL)                                                                                  \
    __attribute__((target("avx2,fma"), noinline)) static void NAME(                                                  \
        const nc_geom *g, const float *xb, const float *wb, __m256 bias, int64_t oh, int64_t lo, int64_t hi,         \
        int64_t r0, int64_t r1, float *yr, const float *rr, int32_t act, __m256 va, __m256 vb)                       \
    {                                                                                                                 \
        int64_t ow = lo;                                                                                              \
        uintptr_t pf0, pf1;                                                                                           \
        dw_next_rows(g, xb, oh, &pf0, &pf1);                                                                          \
        for (; ow + 8 <= hi; ow += 8) {                                                                               \
            const uintptr_t off = (uintptr_t)((ow * SW - g->pl) * NB) * sizeof(float);                               \
            for (uintptr_t q = 0; q < 8 * SW * NB * sizeof(float); q += 64) {                                         \
                if (pf0)                                                                                              \
                    _mm_prefetch((const char *)(pf0 + off + q), _MM_HINT_T0);                                         \
                if (pf1)                                                                                              \
                    _mm_prefetch((const char *)(pf1 + off + q), _MM_HINT_T0);                                         \
            }                                                                                                         \
            dw_tile(g, xb, wb, bias, oh, ow, r0, r1, yr, rr, act, va, vb, 8, S, SW, DIL);                             \
        }                                                                                                             \
        for (; ow + 4 <= hi; ow += 4)                                                                                 \
            dw_tile(g, xb, wb, bias, oh, ow, r0, r1, yr, rr, act, va, vb, 4, S, SW, DIL);                             \
        for (; ow < hi; ow++)                                                                                         \
            dw_tile(g, xb, wb, bias, oh, ow, r0, r1, yr, rr, act, va, vb, 1, S, SW, DIL);                             \
    }
#define DW_ROWS(X) X(1, 1) X(1, 2) X(3, 1) X(3, 2) X(5, 1) X(5, 2) X(7, 1) X(7, 2)
DW_ROWS(DW_ROW_FN)
typedef void (*dw_row_fn)(const nc_geom *, const float *, const float *, __m256, int64_t, int64_t, int64_t, int64_t,
                          int64_t, float *, const float *, int32_t, __m256, __m256);
#define DW_ENTRY(S, SW) [0][S][SW] = dw_row_##S##_##SW, [1][S][SW] = dw_rowd_##S##_##SW,
static const dw_row_fn dw_rows[2][DW_MAXK + 1][3] = {DW_ROWS(DW_ENTRY)}; /* [dilated][S][stride] */

#ifndef DW_PAD_FLOATS
#define DW_PAD_FLOATS 4096 /* a small plane's band padded (16 KiB, on the stack): 7x7 and 14x14 maps up to 7x7 taps */
#endif
#define DW_PAD_MIN_S 5     /* ... of 5 or 7 taps a row, stride 1 along W */
#define DW_COL_ROWS 8      /* edge columns of this many rows at once (dw_edge_cols) */
#define DW_COL_MAX_W 32     /* ... on maps up to this wide (28 x 28 and smaller) */

/* Output rows [oh0, oh1) read input rows from oh0 * sh - pt, (oh1 - 1 - oh0) * sh + R of them, and columns from -pl,
 * (OW - 1) * sw + S of them: copied with their zero padding into pad, so that every tap of every output pixel lies
 * inside and whole rows run on the register tiles (on small maps most pixels are edge pixels otherwise, each a
 * chain of dependent FMAs through dw_pixel).  *gp: the copy's geometry (tap row 0 of output row oh0 at row 0, no
 * padding).  0 (nothing done) where the copy would pass DW_PAD_FLOATS or does not pay: AVX2, MNASNet b1 t1, thread
 * CPU: 5x5 stride-1 layers at 14x14 0.237 -> 0.206 ms, at 7x7 0.325 -> 0.270, but 3x3 ones at 14x14 0.248 ->
 * 0.271 (a 3x3 edge pixel is a short chain, the copy a larger share) and 5x5 stride-2 ones 0.046 -> 0.056 (the
 * copy is 4x the output). */
static int pad_band(const nc_geom *g, const float *xb, int64_t oh0, int64_t oh1, float *pad, nc_geom *gp)
{
    const int64_t rows = (oh1 - 1 - oh0) * g->sh + (g->R - 1) * g->dh + 1;
    const int64_t cols = (g->OW - 1) * g->sw + (g->S - 1) * g->dl + 1;
    const int64_t ih = oh0 * g->sh - g->pt;
    if (oh1 <= oh0 || g->S < DW_PAD_MIN_S || g->sw != 1 || rows * cols * NB > DW_PAD_FLOATS)
        return 0;
    int64_t cn = cols - g->pl < g->W ? cols - g->pl : g->W; /* input columns copied */
    if (cn < 0)
        cn = 0;
    for (int64_t i = 0; i < rows; i++) {
        float *d = pad + i * cols * NB;
        const int64_t r = ih + i;
        if (r < 0 || r >= g->H) {
            memset(d, 0, (size_t)(cols * NB) * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)(g->pl * NB) * sizeof(float));
        memcpy(d + g->pl * NB, xb + r * g->W * NB, (size_t)(cn * NB) * sizeof(float));
        memset(d + (g->pl + cn) * NB, 0, (size_t)((cols - g->pl - cn) * NB) * sizeof(float));
    }
    *gp = *g;
    gp->H = rows, gp->W = cols, gp->pt = oh0 * g->sh, gp->pl = 0;
    return 1;
}

__attribute__((target("avx2,fma"))) static void dw_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const dw_job *j = (const dw_job *)ctx;
    const nc_geom *g = j->g;
    const int32_t act = j->e && trtl_act_is_fast(j->e->act) ? j->e->act : TRTL_ACT_NONE;
    const __m256 va = _mm256_set1_ps(j->e ? j->e->alpha : 0.0f), vb = _mm256_set1_ps(j->e ? j->e->beta : 0.0f);
    const dw_row_fn row = (g->S % 2 && g->sw <= 2) ? dw_rows[g->dh != 1 || g->dl != 1][g->S][g->sw] : NULL;
    float pad[DW_PAD_FLOATS] __attribute__((aligned(64)));
    for (int64_t item = begin * j->items / j->runs; item < end * j->items / j->runs; item++) {
        const int64_t it = item / j->bands, band = item % j->bands, cb = it % g->CB; /* it = n * CB + cb */
        const int64_t oh0 = band * g->OH / j->bands, oh1 = (band + 1) * g->OH / j->bands;
        const float *xb = j->x + it * g->H * g->W * NB, *wb = j->st->w + cb * g->R * g->S * NB;
        float *yb = j->y + it * g->P * NB;
        const float *rb = j->res ? j->res + it * g->P * NB : NULL;
        const __m256 bias = _mm256_loadu_ps(j->st->b + cb * NB);
        __m256 msum = _mm256_setzero_ps(); /* the channel means: the finished rows summed (one band) */
        nc_geom gp;
        const nc_geom *gx = g; /* the geometry of the input the rows read: the block's plane, or its padded band */
        if (row && pad_band(g, xb, oh0, oh1, pad, &gp))
            gx = &gp, xb = pad;
        int64_t lo, hi; /* interior columns: every tap inside the row */
        trtl_nchwc_interior(gx->W, (gx->S - 1) * gx->dl + 1, gx->sw, gx->pl, gx->OW, &lo, &hi);
        /* output rows [fa, fb) read every tap row inside the input: their edge columns as column tiles */
        int64_t fa = (gx->pt + gx->sh - 1) / gx->sh, fb = gx->H - 1 + gx->pt - (gx->R - 1) * gx->dh;
        fb = fb < 0 ? 0 : fb / gx->sh + 1;
        fa = fa < oh0 ? oh0 : fa;
        fb = fb > oh1 ? oh1 : fb;
        if (!row || (lo == 0 && hi == g->OW) || gx->W > DW_COL_MAX_W)
            fb = fa; /* none: no edges, or wide maps (56 x 56 at batch 8: 3x3 layers 0.74-0.88 -> 1.04-1.20 ms) */
        for (int64_t oh = oh0; oh < oh1; oh++) {
            const int64_t ih0 = oh * gx->sh - gx->pt;
            int64_t r0, r1; /* the tap rows inside the input */
            taps_inside(ih0, gx->H, gx->R, gx->dh, &r0, &r1);
            float *yr = yb + oh * g->OW * NB;
            const float *rr = rb ? rb + oh * g->OW * NB : NULL;
            const int ecol = oh >= fa && oh < fb; /* edge columns done by dw_edge_cols */
            if (ecol && (oh - fa) % DW_COL_ROWS == 0)
                dw_edge_cols(gx, xb, wb, bias, oh, fb - oh < DW_COL_ROWS ? fb - oh : DW_COL_ROWS, lo, hi, yb, rb, act,
                             va, vb);
            if (r1 <= r0) { /* the whole row in padding */
                for (int64_t ow = 0; ow < g->OW; ow++)
                    dw_pixel(gx, xb, wb, bias, oh, ow, 0, 0, yr, rr, act, va, vb);
            } else if (row) {
                for (int64_t ow = 0; ow < lo && !ecol; ow++)
                    dw_pixel(gx, xb, wb, bias, oh, ow, r0, r1, yr, rr, act, va, vb);
                if (g->dw512) {
                    trtl_nchwc_dw512_row r512 = {xb,  wb, j->st->b + cb * NB, gx->W, gx->S, gx->pl, ih0, r0, r1, lo,
                                                 hi,  yr, rr, act, j->e ? j->e->alpha : 0.0f,
                                                 j->e ? j->e->beta : 0.0f, 0, 0};
                    dw_next_rows(gx, xb, oh, &r512.pf0, &r512.pf1);
                    trtl_nchwc_dw512_row_run(&r512);
                } else
                    row(gx, xb, wb, bias, oh, lo, hi, r0, r1, yr, rr, act, va, vb);
                for (int64_t ow = hi; ow < g->OW && !ecol; ow++)
                    dw_pixel(gx, xb, wb, bias, oh, ow, r0, r1, yr, rr, act, va, vb);
            } else
                for (int64_t ow = 0; ow < g->OW; ow++)
                    dw_pixel(g, xb, wb, bias, oh, ow, r0, r1, yr, rr, act, va, vb);
            if (j->e && !trtl_act_is_fast(j->e->act))
                trtl_epi_act(j->e, yr, g->OW * NB);
            if (j->mean)
                msum = sum_blocked(msum, yr, g->OW);
        }
        if (j->mean) { /* one band: the whole plane */
            const int64_t c0 = cb * NB;
            float t[NB];
            _mm256_storeu_ps(t, _mm256_mul_ps(msum, _mm256_set1_ps(1.0f / (float)g->P)));
            memcpy(j->mean + (it / g->CB) * g->K + c0, t, (size_t)(g->K - c0 < NB ? g->K - c0 : NB) * sizeof(float));
        }
    }
}

/* (image, channel block) planes, each cut into bands of output rows where there are fewer than 16 planes a thread
 * (MNASNet's 72-channel layers at batch 1: 9 planes, 5 : 4 over two threads), except with the channel means (one
 * band sums a whole plane); the items cut by even_runs(). */
static void dw_run(dw_job *j, trtl_threadpool *pool)
{
    const nc_geom *g = j->g;
    const int64_t threads = trtl_threadpool_size(pool), planes = g->N * g->CB;
    j->bands = 1;
    if (threads > 1 && !j->mean && planes < 16 * threads)
        j->bands = (16 * threads + planes - 1) / planes < g->OH ? (16 * threads + planes - 1) / planes : g->OH;
    j->items = planes * j->bands;
    trtl_nchwc_even_runs(j->items, threads, &j->runs);
    trtl_parallel_for(pool, j->runs, 1, dw_task, j);
}

/* ---- the kernel ------------------------------------------------------------------------------------ */
static int nc_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_dims xd = trtl_nchwc_plain_in(n, &in_dims[0]);
    return n->op == TRTL_OP_NCHWC_CONV && trtl_nchwc_conv_supported(n, &xd);
}

/* nchwc_conv.avx512: the pointwise nodes and the depthwise ones of stride 1 along W with 1, 3, 5 or 7 taps a row (the
 * edges, rows in padding and the dense path are nchwc_conv.avx2's code). */
static int nc_applies_wide(const trtl_node *n, const trtl_dims *in_dims)
{
    if (!nc_applies(n, in_dims) || n->p.nchwc.mid_qgrid) /* the mid quantization: AVX2 tiles only */
        return 0;
    const trtl_conv_params *p = &n->p.conv;
    const trtl_dims xd = trtl_nchwc_plain_in(n, &in_dims[0]);
    return trtl_nchwc_conv_pointwise(p) ||
           (!trtl_nchwc_conv_dense(p, xd.d[1]) && !trtl_nchwc_conv_grouped(p, xd.d[1]) &&
            dw512_taps(p->kernel_size.d[1], p->stride.d[1]) && p->dilation.d[0] == 1 && p->dilation.d[1] == 1);
}

/* Weights packed as the paths read them; `wide`: pointwise in groups of 32 output channels (x86/nchwc_pw512.c). */
static trtl_status nc_pack(const trtl_node *n, int wide, void **state)
{
    const trtl_conv_params *p = &n->p.conv;
    const int64_t K = p->num_output_maps, KB = trtl_nchwc_blocks(K, NB), kv = p->kernel_size.d[0] * p->kernel_size.d[1];
    /* pointwise: [K, C]; depthwise: [C, 1, R, S]; dense: [K, C, R, S] */
    const int64_t C = kv > 0 && K > 0 ? p->kernel.count / (K * kv) * p->num_groups : 0;
    const int dense = trtl_nchwc_conv_dense(p, C), grp = trtl_nchwc_conv_grouped(p, C);
    const int dw = !dense && !grp && !trtl_nchwc_conv_pointwise(p);
    wide = wide && !dense && !dw && !grp;
    const int64_t L = row_lanes(wide), KL = packed_lanes(K, wide), G = p->num_groups;
    const size_t wcount = (size_t)(dw ? KB * kv * NB : dense ? KB * C * kv * NB : grp ? K * (C / G) * kv : KL * C);
    const size_t bytes = (wcount + (size_t)KL) * sizeof(float);
    nc_state *st = (nc_state *)trtl_aligned_alloc(sizeof *st);
    float *w = (float *)trtl_aligned_alloc(bytes);
    if (!st || !w) {
        trtl_aligned_free(st);
        trtl_aligned_free(w);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': no memory for packed weights", n->name);
    }
    memset(w, 0, bytes);
    const float *src = (const float *)p->kernel.values, *bias = p->bias.count ? (const float *)p->bias.values : NULL;
    if (dense)
        trtl_nchwc_dense_pack(src, K, C * kv, w);
    if (grp)
        trtl_nchwc_grouped_pack(src, K, G, C / G, kv, w);
    for (int64_t k = 0; k < K; k++) {
        if (dw)
            for (int64_t t = 0; t < kv; t++)
                w[((k / NB) * kv + t) * NB + k % NB] = src[k * kv + t];
        else if (!dense && !grp)
            for (int64_t c = 0; c < C; c++)
                w[((k / L) * C + c) * L + k % L] = src[k * C + c];
        w[wcount + k] = bias ? bias[k] : 0.0f;
    }
    st->w = w;
    st->b = w + wcount;
    st->finite = grp && trtl_nchwc_grouped_finite(w, (int64_t)wcount);
    st->bytes = bytes + sizeof *st;
    *state = st;
    return TRTL_OK;
}

static trtl_status nc_prepare(const trtl_node *n, void **state)
{
    return nc_pack(n, 0, state);
}

static trtl_status nc_prepare_wide(const trtl_node *n, void **state)
{
    return nc_pack(n, 1, state);
}

/* The plain weights [K, C/G, R, S] back from the packed ones (the engine then holds only the packed copy). */
static void nc_unpack_as(const trtl_node *n, const void *state, int wide, void *dst)
{
    const nc_state *st = (const nc_state *)state;
    const trtl_conv_params *p = &n->p.conv;
    const int64_t K = p->num_output_maps, kv = p->kernel_size.d[0] * p->kernel_size.d[1];
    const int64_t C = kv > 0 && K > 0 ? p->kernel.count / (K * kv) * p->num_groups : 0;
    const int dw = !trtl_nchwc_conv_dense(p, C) && !trtl_nchwc_conv_grouped(p, C) && !trtl_nchwc_conv_pointwise(p);
    if (trtl_nchwc_conv_dense(p, C)) {
        trtl_nchwc_dense_unpack(st->w, K, C * kv, (float *)dst);
        return;
    }
    if (trtl_nchwc_conv_grouped(p, C)) {
        trtl_nchwc_grouped_unpack(st->w, K, p->num_groups, C / p->num_groups, kv, (float *)dst);
        return;
    }
    const int64_t L = dw ? NB : row_lanes(wide); /* depthwise: [ceil(C/8)][R*S][8] */
    for (int64_t k = 0; k < K; k++)
        for (int64_t t = 0, nt = dw ? kv : C; t < nt; t++)
            memcpy((char *)dst + (size_t)(k * nt + t) * sizeof(float), &st->w[((k / L) * nt + t) * L + k % L],
                   sizeof(float));
}

static void nc_unpack(const trtl_node *n, const void *state, void *dst)
{
    nc_unpack_as(n, state, 0, dst);
}

static void nc_unpack_wide(const trtl_node *n, const void *state, void *dst)
{
    nc_unpack_as(n, state, 1, dst);
}

static void nc_release(void *state)
{
    nc_state *st = (nc_state *)state;
    if (st)
        trtl_aligned_free(st->w);
    trtl_aligned_free(st);
}

static size_t nc_state_bytes(const void *state)
{
    return state ? ((const nc_state *)state)->bytes : 0;
}

/* The input scale multiplies the input (a blocked copy) where it is smaller than the weights (maps of fewer pixels
 * than output channels: the 7 x 7 and 14 x 14 projections), else the weights (one copy per image). */
static int scale_input(const nc_geom *g)
{
    return g->P < g->KB * NB;
}

/* Scratch floats one image takes: the blocked copy of a plain input, the blocked output before a plain one, and
 * squeeze-and-excitation's scaled copy (of the input, or of the weights: scale_input()). */
static int64_t image_scratch(const trtl_node *n, const nc_geom *g)
{
    int64_t f = (g->in_plain && !g->dense ? g->CB * g->H * g->W * NB : 0) + (g->out_plain ? g->KB * g->P * NB : 0);
    if (trtl_nchwc_in_scaled(n) && !scale_input(g))
        f += g->KL * g->C;
    else if (trtl_nchwc_in_scaled(n) && !g->in_plain) /* a plain input's blocked copy is scaled in place */
        f += g->CB * g->P * NB;
    return f;
}

/* Images a pass stages at once: as many whole images' scratch (image_scratch) as fit EDGE_BYTES (at least one),
 * not the batch (FCN-ResNet50 at batch 8: a 49 MiB scratch for one 1x1 layer). */
#define EDGE_BYTES ((int64_t)8 << 20)

static int64_t edge_images(const trtl_node *nd, const nc_geom *g)
{
    const int64_t per = image_scratch(nd, g) * (int64_t)sizeof(float);
    const int64_t n = per > 0 ? EDGE_BYTES / per : g->N;
    return n < 1 ? 1 : n > g->N ? g->N : n;
}

static size_t nc_scratch_as(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out, int wide)
{
    nc_geom g;
    if (nc_geom_init(n, &in[0].dims, &out[0].dims, wide, &g) != TRTL_OK)
        return 0;
    const int64_t imgs = edge_images(n, &g);
    size_t s = 0;
    if (g.in_plain && !g.dense) /* the dense path reads the plain input in place */
        s += (size_t)(imgs * g.CB * g.H * g.W * NB) * sizeof(float) + 64;
    if (g.out_plain)
        s += (size_t)(imgs * g.KB * g.P * NB) * sizeof(float) + 64;
    if (trtl_nchwc_in_scaled(n) && !scale_input(&g))
        s += (size_t)(imgs * g.KL * g.C) * sizeof(float) + 64;
    else if (trtl_nchwc_in_scaled(n) && !g.in_plain)
        s += (size_t)(imgs * g.CB * g.P * NB) * sizeof(float) + 64;
    return s;
}

static size_t nc_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    return nc_scratch_as(n, in, out, 0);
}

static size_t nc_scratch_wide(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    return nc_scratch_as(n, in, out, 1);
}

typedef struct edge_job {
    const nc_geom *g;
    const float *src, *res;
    float *dst;
    const trtl_epilogue *e;
    float *mean; /* to_plain_task: the output channels' means [N, K], or NULL */
    const float *scale; /* scale_task: the input channels' scale [N, C] */
} edge_job;

static void to_blocked_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const edge_job *j = (const edge_job *)ctx;
    const nc_geom *g = j->g;
    const int64_t HW = g->H * g->W;
    for (int64_t it = begin; it < end; it++) {
        const int64_t n = it / g->CB, cb = it % g->CB, c0 = cb * NB;
        trtl_nchwc8_from_planes(j->src + (n * g->C + c0) * HW, g->C - c0 < NB ? g->C - c0 : NB, HW,
                                j->dst + it * HW * NB);
    }
}

static void to_plain_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const edge_job *j = (const edge_job *)ctx;
    const nc_geom *g = j->g;
    for (int64_t it = begin; it < end; it++) {
        const int64_t n = it / g->KB, kb = it % g->KB, k0 = kb * NB, nk = g->K - k0 < NB ? g->K - k0 : NB;
        float *dst = j->dst + (n * g->K + k0) * g->P;
        trtl_nchwc8_to_planes(j->src + it * g->P * NB, nk, g->P, j->res ? j->res + (n * g->K + k0) * g->P : NULL,
                              dst);
        trtl_epi_act(j->e, dst, nk * g->P);
        if (j->mean)
            mean_planes(dst, nk, g->P, j->mean + n * g->K + k0);
    }
}

/* The blocked input scaled: dst[n][cb][p][:] = src[n][cb][p][:] * scale[n, cb * 8 + lane] (lanes past C: 0),
 * task it = n * CB + cb; dst may be src. */
__attribute__((target("avx2,fma"))) static void scale_in_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const edge_job *j = (const edge_job *)ctx;
    const nc_geom *g = j->g;
    for (int64_t it = begin; it < end; it++) {
        const int64_t n = it / g->CB, c0 = it % g->CB * NB, nl = g->C - c0 < NB ? g->C - c0 : NB;
        float sv[NB] = {0};
        memcpy(sv, j->scale + n * g->C + c0, (size_t)nl * sizeof(float));
        const __m256 v = _mm256_loadu_ps(sv);
        const float *x = j->src + it * g->P * NB;
        float *d = j->dst + it * g->P * NB;
        for (int64_t p = 0; p < g->P; p++)
            _mm256_storeu_ps(d + p * NB, _mm256_mul_ps(_mm256_loadu_ps(x + p * NB), v));
    }
}

/* Pointwise weights scaled per image: dst[n][r][c][:] = w[r][c][:] * scale[n, c] for the packed rows r of L lanes
 * (L = 24, or 32 when wide), task it = n * (KL / L) + r. */
__attribute__((target("avx2,fma"))) static void scale_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const edge_job *j = (const edge_job *)ctx;
    const nc_geom *g = j->g;
    const int64_t L = row_lanes(g->wide), rows = g->KL / L;
    for (int64_t it = begin; it < end; it++) {
        const int64_t n = it / rows, r = it % rows;
        const float *w = j->src + r * g->C * L, *sc = j->scale + n * g->C;
        float *d = j->dst + it * g->C * L;
        for (int64_t c = 0; c < g->C; c++)
            for (int64_t l = 0; l < L; l += NB)
                _mm256_storeu_ps(d + c * L + l, _mm256_mul_ps(_mm256_loadu_ps(w + c * L + l), _mm256_set1_ps(sc[c])));
    }
}

/* One pass's tensors: g->N images from the batch's image n0 on (pointers already offset). */
typedef struct nc_views {
    const float *x, *res, *scale; /* scale: squeeze-and-excitation's [N, C] (input 1), or NULL */
    float *y, *mean;              /* mean: the output channels' means [N, K] (output 1), or NULL */
} nc_views;

static void nc_pass(const trtl_kernel_args *a, const nc_geom *gp, const nc_state *st, nc_views v);

static trtl_status nc_run_as(const trtl_kernel_args *a, int wide)
{
    const trtl_node *nd = a->node;
    nc_geom g;
    TRTL_TRY(nc_geom_init(nd, &a->in[0].dims, &a->out[0].dims, wide, &g));
    if (!g.N || !g.P || !g.H || !g.W) {
        if (trtl_nchwc_out_pooled(nd)) /* no pixels: means 0, as the reference */
            memset(a->out[1].data, 0, (size_t)(g.N * g.K) * sizeof(float));
        return TRTL_OK;
    }
    const nc_state *st = (const nc_state *)a->state;
    if (!st || a->scratch_size < nc_scratch_as(nd, a->in, a->out, wide))
        return trtl_error(TRTL_ERR_STATE, "layer '%s': nchwc_conv.%s was not prepared", nd->name,
                          wide ? "avx512" : "avx2");
    const float *res0 = nd->epi.has_residual ? (const float *)a->in[nd->n_in - 1].data : NULL;
    const float *scale0 = trtl_nchwc_in_scaled(nd) ? (const float *)a->in[1].data : NULL;
    float *mean0 = trtl_nchwc_out_pooled(nd) ? (float *)a->out[1].data : NULL;
    /* per pass, `imgs` images (edge_images); a tensor's image stride: plain C*H*W, blocked CB*H*W*8 */
    const int64_t N = g.N, imgs = edge_images(nd, &g);
    const int64_t xs = g.in_plain ? g.C * g.H * g.W : g.CB * g.H * g.W * NB, ys = g.out_plain ? g.K * g.P : g.KB * g.P * NB;
    for (int64_t n0 = 0; n0 < N; n0 += imgs) {
        g.N = N - n0 < imgs ? N - n0 : imgs;
        nc_views v = {(const float *)a->in[0].data + n0 * xs, res0 ? res0 + n0 * ys : NULL,
                      scale0 ? scale0 + n0 * g.C : NULL, (float *)a->out[0].data + n0 * ys,
                      mean0 ? mean0 + n0 * g.K : NULL};
        nc_pass(a, &g, st, v);
    }
    return TRTL_OK;
}

static trtl_status nc_run(const trtl_kernel_args *a)
{
    return nc_run_as(a, 0);
}

static trtl_status nc_run_wide(const trtl_kernel_args *a)
{
    return nc_run_as(a, 1);
}

/* One pass over g->N images (the node's layouts). */
static void nc_pass(const trtl_kernel_args *a, const nc_geom *gp, const nc_state *st, nc_views v)
{
    const trtl_node *nd = a->node;
    const nc_geom g = *gp;
    char *sp = (char *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    const float *x = v.x;
    if (g.dense) { /* plain input in place, blocked output (trtl_nchwc_conv_supported) */
        const trtl_nchwc_dense d = {g.N,  g.C,  g.K,  g.H,      g.W,      g.OH, g.OW, g.R,     g.S,
                                    g.sh, g.sw, g.pt, g.pl,     st->w,    st->b, x,    v.res, v.y, &nd->epi};
        trtl_nchwc_dense_run(&d, a->pool);
        return;
    }
    if (g.in_plain) {
        float *xb = (float *)sp;
        sp += ((size_t)(g.N * g.CB * g.H * g.W * NB) * sizeof(float) + 63) / 64 * 64;
        edge_job ej = {&g, x, NULL, xb, NULL, NULL, NULL};
        trtl_parallel_for(a->pool, g.N * g.CB, 1, to_blocked_task, &ej);
        x = xb;
    }
    const float *w = st->w;
    int64_t w_n = 0;
    if (v.scale && scale_input(&g)) { /* squeeze-and-excitation's multiply on the input */
        float *xs = (float *)x; /* a plain input's blocked copy in scratch: in place */
        if (!g.in_plain) {
            xs = (float *)sp;
            sp += ((size_t)(g.N * g.CB * g.P * NB) * sizeof(float) + 63) / 64 * 64;
        }
        edge_job ej = {&g, x, NULL, xs, NULL, NULL, v.scale};
        trtl_parallel_for(a->pool, g.N * g.CB, 1, scale_in_task, &ej);
        x = xs;
    } else if (v.scale) { /* ... or folded into the weights, one copy per image */
        float *ws = (float *)sp;
        sp += ((size_t)(g.N * g.KL * g.C) * sizeof(float) + 63) / 64 * 64;
        edge_job ej = {&g, st->w, NULL, ws, NULL, NULL, v.scale};
        trtl_parallel_for(a->pool, g.N * (g.KL / row_lanes(g.wide)), 1, scale_task, &ej);
        w = ws;
        w_n = g.KL * g.C;
    }
    float *y = g.out_plain ? (float *)sp : v.y;
    const trtl_epilogue *e = g.out_plain ? NULL : &nd->epi;
    const float *rb = g.out_plain ? NULL : v.res;
    if (g.grp) {
        const trtl_nchwc_grouped gd = {g.N,  g.C,  g.K,  g.G,  g.H,   g.W,   g.OH, g.OW, g.R, g.S, g.sh,
                                       g.sw, g.dh, g.dl, g.pt, g.pl, st->w, st->b, x,    rb,  y,   e,
                                       g.out_plain ? NULL : v.mean, st->finite};
        trtl_nchwc_grouped_run(&gd, a->pool);
    } else if (g.dw) {
        dw_job j = {&g, st, x, rb, y, e, g.out_plain ? NULL : v.mean, 0, 0, 0};
        dw_run(&j, a->pool);
    } else
        pw_run(&g, st, w, w_n, x, rb, y, e, &nd->p.nchwc, a->pool);
    if (g.out_plain) {
        edge_job ej = {&g, y, v.res, v.y, &nd->epi, v.mean, NULL};
        trtl_parallel_for(a->pool, g.N * g.KB, 1, to_plain_task, &ej);
    }
}

const trtl_kernel trtl_kernel_nchwc_conv_avx2 = {
    .name = "nchwc_conv.avx2",
    .op = TRTL_OP_NCHWC_CONV,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = nc_applies,
    .prepare = nc_prepare,
    .release = nc_release,
    .scratch = nc_scratch,
    .run = nc_run,
    .unpack = nc_unpack,
    .state_bytes = nc_state_bytes,
};

/* The same op with the pointwise tiles on AVX-512 (x86/nchwc_pw512.c): 16 output channels a vector.  Timed against
 * nchwc_conv.avx2 like any two candidates (Zen 4 runs zmm FMAs at half rate, so it need not win there). */
const trtl_kernel trtl_kernel_nchwc_conv_avx512 = {
    .name = "nchwc_conv.avx512",
    .op = TRTL_OP_NCHWC_CONV,
    .cpu_features = TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = nc_applies_wide,
    .prepare = nc_prepare_wide,
    .release = nc_release,
    .scratch = nc_scratch_wide,
    .run = nc_run_wide,
    .unpack = nc_unpack_wide,
    .state_bytes = nc_state_bytes,
};
