/*
 * convolution_winograd.c -- "convolution.winograd_f43" and "convolution.winograd_f23": 2-D 3x3
 * convolutions with stride 1, dilation 1 and one group (any padding mode, batch, channel count,
 * map size) by Winograd's minimal filtering, F(4x4, 3x3) on 6x6 input tiles or F(2x2, 3x3) on
 * 4x4 tiles, with bias + residual + activation fused into the output transform (activations without a
 * trtl_act8 path: vector math over the group's outputs right after it, act_group).  Needs AVX2+FMA.
 *
 * With m the output tile size, a = m + 2 the input tile size and xi = (i, j) one of the a*a
 * transform positions:
 *     U[xi][k][c] = (G g[k][c] G^T)[i][j]                 prepare(), in double, once
 *     V[xi][c][t] = (B^T d[c][t] B)[i][j]                 input transform of tile t
 *     M[xi][k][t] = sum_c U[xi][k][c] V[xi][c][t]         a*a independent GEMMs over channels
 *     y[k][t]     = A^T M[.][k][t] A                      output transform (+ epilogue)
 * Transform points: 0, 1, -1 (F23) and 0, 1, -1, 2, -2 (F43), with infinity; the matrices are in
 * winograd.h.  Accuracy (ResNet-like data: ReLU'd unit-normal inputs, He-normal
 * weights, 14x14 maps, float64 reference): F43 max |error| / max |y| = 3.7e-6 (64 channels),
 * 1.0e-5 (256), 1.6e-5 (512); F23 below 1e-6.  Other F43 point sets (+-1/2) were at most 2.5x
 * better and cost denser transforms.
 *
 * Tiles are numbered over the whole batch (t = (n * th + tr) * tw + tc) and processed in groups
 * of consecutive tiles.  For a group:
 *   1. input: per input channel, the group's input rows are staged zero-padded (so no tile
 *      needs bounds checks), then 8 tiles at a time are transformed with tiles in vector lanes
 *      and stored to V[xi][panel][c][16 tiles] (the last panel of a group may be 8 wide);
 *   2. GEMM + output: for a chunk of output-channel blocks (MR = 6 channels), for each xi, a 6 x 16
 *      register-blocked microkernel runs the whole channel reduction (U[xi][kb][c][6] broadcast,
 *      V panel loaded) into M[xi][kb][6][tiles]; then the output transform of the chunk reads
 *      M back with tiles in vector lanes, transposes to rows of tiles and stores to y.
 * Threads: with enough tiles, each scratch slot runs whole groups ("private": no barrier, every
 * slot reads all of U per group); otherwise ("shared") the groups run one at a time, phase 1
 * split over input channels and phase 2 over output-channel blocks (disjoint parts of U: the
 * deep, small-map layers where U is largest).
 *
 * NaN and infinity: the transforms mix a whole a x a input tile, so one non-finite input element
 * would turn every output of the tiles that read it into NaN, also outputs outside its receptive
 * field (an Inf enters with both signs and cancels to NaN).  Direct convolution (the reference
 * kernel, numpy, onnxruntime) makes NaN/Inf only where the element is in the receptive field.  So
 * a run first checks the input for non-finite values (one pass over the input, nothing like the
 * convolution's cost; split over the slots in the private split: check_share); when there are any, the
 * tiles whose input footprint holds one are computed
 * again afterwards by direct convolution (in double, with the same epilogue), and every other tile
 * keeps its Winograd result.  Inputs without NaN/Inf take exactly the usual path.
 *
 * Weights are held once: prepare() keeps U and, one byte per weight, what gives the plain weights back
 * from U bit for bit (winograd_exact.c); the direct fallback and unpack() (the plan writer) read them
 * from there, so the engine frees its plain copy (kernel->unpack, engine/weights.c).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/winograd.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define MR 6              /* output channels per microkernel (broadcast) */
#define NRW 16            /* tiles per microkernel (two vectors) */
#define MAX_SLOTS 64
#ifndef VXI_FLOATS
#define VXI_FLOATS 32768  /* C x tiles of one V[xi] slice of a group: 128 KiB, L2-resident in the GEMM */
#endif
#ifndef M_FLOATS
#define M_FLOATS 98304    /* GEMM result block of a slot (384 KiB) */
#endif
#ifndef PRIV_MIN_TILES
#define PRIV_MIN_TILES 48 /* tiles a slot needs for the private (one group per slot) split */
#endif

typedef struct wg_geom {
    int64_t N, C, K, H, W, OH, OW, pt, pl;
    int64_t m, a, nxi;   /* output tile, input tile, transform positions (a * a) */
    int64_t th, tw, T;   /* tile rows, tile columns, tiles per image */
    int64_t tiles;       /* N * T */
    int64_t wp;          /* staged row length: m * tw + 2 */
    int64_t nkb;         /* blocks of MR output channels */
} wg_geom;

typedef struct wg_state {
    int64_t m, C, K, nkb;
    float *u; /* [xi][kb][c][MR], channels past K zero */
    size_t packed_bytes; /* of the packed weights (state_bytes) */
    trtl_wg_exact plain; /* the plain weights from u, exactly (winograd_exact.c) */
} wg_state;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round8(int64_t v) { return (v + 7) & ~(int64_t)7; }
static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

static int params_ok(const trtl_conv_params *p)
{
    return p->kernel_size.nb_dims == 2 && p->kernel_size.d[0] == 3 && p->kernel_size.d[1] == 3 &&
           p->stride.nb_dims == 2 && p->stride.d[0] == 1 && p->stride.d[1] == 1 && p->dilation.nb_dims == 2 &&
           p->dilation.d[0] == 1 && p->dilation.d[1] == 1 && p->num_groups == 1 && p->pre_padding.nb_dims == 2 &&
           p->post_padding.nb_dims == 2;
}

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, int64_t m, wg_geom *g)
{
    const trtl_conv_params *p = &nd->p.conv;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    if (xd->nb_dims != 4 || !params_ok(p))
        return trtl_error(TRTL_ERR_UNSUPPORTED,
                          "layer '%s': input %s is not a 3x3 stride-1 single-group 2D convolution this kernel runs",
                          nd->name, trtl_dims_str(xd, s1, sizeof s1));
    memset(g, 0, sizeof *g);
    g->N = xd->d[0];
    g->C = xd->d[1];
    g->H = xd->d[2];
    g->W = xd->d[3];
    g->K = p->num_output_maps;
    int64_t post;
    if (trtl_spatial_out(g->H, 3, 1, p->pre_padding.d[0], p->post_padding.d[0], p->padding_mode, 0, &g->OH, &g->pt,
                         &post) != TRTL_OK ||
        trtl_spatial_out(g->W, 3, 1, p->pre_padding.d[1], p->post_padding.d[1], p->padding_mode, 0, &g->OW, &g->pl,
                         &post) != TRTL_OK)
        return trtl_error_prefix("layer '%s': input %s", nd->name, trtl_dims_str(xd, s1, sizeof s1));
    if (yd && (yd->nb_dims != 4 || yd->d[0] != g->N || yd->d[1] != g->K || yd->d[2] != g->OH || yd->d[3] != g->OW))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not match the convolution of input %s",
                          nd->name, trtl_dims_str(yd, s1, sizeof s1), trtl_dims_str(xd, s2, sizeof s2));
    if (g->K < 1 || p->kernel.count != g->K * g->C * 9 || (p->bias.count && p->bias.count != g->K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights / %lld biases do not fit the convolution",
                          nd->name, (long long)p->kernel.count, (long long)p->bias.count);
    g->m = m;
    g->a = m + 2;
    g->nxi = g->a * g->a;
    g->th = g->OH > 0 ? ceil_div(g->OH, m) : 0;
    g->tw = g->OW > 0 ? ceil_div(g->OW, m) : 0;
    g->T = g->th * g->tw;
    g->tiles = g->N * g->T;
    g->wp = m * g->tw + 2;
    g->nkb = ceil_div(g->K, MR);
    return TRTL_OK;
}

static double wg_flops(const wg_geom *g) { return 18.0 * (double)g->N * (double)g->K * (double)g->C * (double)(g->OH * g->OW); }

/* ---- work split and scratch layout --------------------------------------------------------- */

typedef struct wg_plan {
    int64_t slots, ngroups, tgp, kc, rows;
    int64_t vxs, mxs; /* floats between the V / M blocks of two transform positions */
    int shared;
    size_t v_bytes, m_bytes, s_bytes, tab_bytes, slot_bytes, total;
} wg_plan;

/* A stride of an odd number of cache lines (>= n floats): the a*a blocks it separates then fall
 * in different L1 sets (a power-of-two stride puts all 36 in one or two). */
static int64_t odd_lines(int64_t n)
{
    n = (n + 15) & ~(int64_t)15;
    return (n / 16) % 2 ? n : n + 16;
}

/* First tile of group gi: boundaries are multiples of 8 so 8-tile vectors never straddle two. */
static int64_t group_start(const wg_geom *g, const wg_plan *pl, int64_t gi)
{
    if (gi >= pl->ngroups)
        return g->tiles;
    return (gi * g->tiles / pl->ngroups) & ~(int64_t)7;
}

static void plan_make(const wg_geom *g, int64_t slots, wg_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    int64_t tmax = (VXI_FLOATS / (g->C > 0 ? g->C : 1)) & ~(int64_t)7;
    if (tmax < 16)
        tmax = 16;
    int64_t ng = ceil_div(g->tiles, tmax);
    if (ng < 1)
        ng = 1;
    pl->shared = 0;
    if (slots > 1) {
        if (g->tiles >= slots * PRIV_MIN_TILES)
            ng = ceil_div(ng, slots) * slots;
        else
            pl->shared = 1;
    }
    if (ng > g->tiles / 8) /* groups of >= 8 tiles: none is empty after rounding its start */
        ng = g->tiles / 8 > 0 ? g->tiles / 8 : 1;
    pl->slots = slots;
    pl->ngroups = ng;
    int64_t tgp = 8;
    for (int64_t gi = 0; gi < ng; gi++) {
        int64_t n = group_start(g, pl, gi + 1) - group_start(g, pl, gi);
        if (round8(n) > tgp)
            tgp = round8(n);
    }
    pl->tgp = tgp;
    int64_t kc = M_FLOATS / (g->nxi * MR * tgp);
    if (kc < 1)
        kc = 1;
    if (pl->shared && kc > ceil_div(g->nkb, slots))
        kc = ceil_div(g->nkb, slots);
    if (kc > g->nkb)
        kc = g->nkb;
    pl->kc = kc;
    /* staged rows: the tile rows a run of tgp tiles touches, a - m more per image it reaches */
    pl->rows = ((g->tw > 0 ? ceil_div(tgp, g->tw) : 0) + 1) * g->m + (ceil_div(tgp, g->T > 0 ? g->T : 1) + 1) * (g->a - g->m);
    pl->vxs = odd_lines(g->C * tgp);
    pl->mxs = odd_lines(kc * MR * tgp);
    pl->v_bytes = align64((size_t)(g->nxi * pl->vxs) * sizeof(float));
    pl->m_bytes = align64((size_t)(g->nxi * pl->mxs) * sizeof(float));
    pl->s_bytes = align64((size_t)(pl->rows * g->wp) * sizeof(float));
    pl->tab_bytes = align64((size_t)tgp * (2 * sizeof(int64_t) + sizeof(int32_t)));
    pl->slot_bytes = pl->m_bytes + pl->s_bytes + pl->tab_bytes + (pl->shared ? 0 : pl->v_bytes);
    pl->total = (size_t)slots * pl->slot_bytes + (pl->shared ? pl->v_bytes : 0) + 64;
}

static int max_slots(const wg_geom *g)
{
    return (int)trtl_scratch_slots(wg_flops(g), MAX_SLOTS);
}

/* ---- per-group work ---------------------------------------------------------------------- */

typedef struct wg_job {
    const wg_geom *g;
    const wg_plan *pl;
    const trtl_epilogue *epi;
    const float *x, *u, *bias, *res;
    float *y;
    char *base;      /* 64-byte aligned start of the scratch */
    int64_t gi;      /* shared mode: the group being run */
    int fast_act;    /* epilogue activation has a vector path */
    _Atomic int *nonfinite; /* set where a slot's share of the input holds NaN / Inf (check_share) */
} wg_job;

typedef struct wg_slot {
    float *v, *m, *s;
    int64_t *in_off, *y_off;
    int32_t *valid;  /* valid rows | valid columns << 8 of each tile; 0 past the group's end */
    int64_t t0, cnt, tgp, r0;
} wg_slot;

static void slot_init(const wg_job *j, int64_t s, wg_slot *sl)
{
    const wg_plan *pl = j->pl;
    char *p = j->base + (pl->shared ? pl->v_bytes : 0) + (size_t)s * pl->slot_bytes;
    sl->v = (float *)(pl->shared ? j->base : p);
    if (!pl->shared)
        p += pl->v_bytes;
    sl->m = (float *)p;
    p += pl->m_bytes;
    sl->s = (float *)p;
    p += pl->s_bytes;
    sl->in_off = (int64_t *)p;
    sl->y_off = sl->in_off + pl->tgp;
    sl->valid = (int32_t *)(sl->y_off + pl->tgp);
}

/* Staged row of the first input row of global tile row R (image n) in a group starting at tile
 * row r0 (image n0): an image's tile rows share their overlapping input rows, and each image
 * the group reaches adds the a - m rows below its last tile row. */
static int64_t stage_row0(const wg_geom *g, int64_t r0, int64_t n0, int64_t R, int64_t n)
{
    return (R - r0) * g->m + (n - n0) * (g->a - g->m);
}

/* Tile tables of group gi: staging offset, output offset (channel 0) and valid extent of each
 * tile; lanes past the group's end repeat its last tile (finite values, never stored). */
static void group_tables(const wg_job *j, int64_t gi, wg_slot *sl)
{
    const wg_geom *g = j->g;
    sl->t0 = group_start(g, j->pl, gi);
    sl->cnt = group_start(g, j->pl, gi + 1) - sl->t0;
    sl->tgp = round8(sl->cnt);
    sl->r0 = sl->t0 / g->tw;
    int64_t R = sl->r0, tc = sl->t0 % g->tw, n = R / g->th, tr = R % g->th, n0 = n;
    const int64_t plane = g->K * g->OH * g->OW;
    for (int64_t i = 0; i < sl->tgp; i++) {
        if (i >= sl->cnt) {
            sl->in_off[i] = sl->in_off[sl->cnt - 1];
            sl->y_off[i] = sl->y_off[sl->cnt - 1];
            sl->valid[i] = 0;
            continue;
        }
        sl->in_off[i] = stage_row0(g, sl->r0, n0, R, n) * g->wp + g->m * tc;
        sl->y_off[i] = n * plane + g->m * tr * g->OW + g->m * tc;
        int64_t vr = g->OH - g->m * tr, vc = g->OW - g->m * tc;
        sl->valid[i] = (int32_t)((vr < g->m ? vr : g->m) | (vc < g->m ? vc : g->m) << 8);
        if (++tc == g->tw) {
            tc = 0;
            R++;
            if (++tr == g->th) {
                tr = 0;
                n++;
            }
        }
    }
}

/* Zero-padded copy of the input rows of the group's tiles, channel c: for each image the group
 * reaches, rows m * tr - pt ... m * tr_last - pt + a - 1 at stage_row0() of its first tile row,
 * S[row][col] = x[n][c][ih][col - pl]. */
static void stage_rows(const wg_geom *g, const float *x, int64_t c, const wg_slot *sl, float *S)
{
    int64_t r1 = (sl->t0 + sl->cnt - 1) / g->tw, n0 = sl->r0 / g->th;
    for (int64_t R = sl->r0; R <= r1;) {
        int64_t n = R / g->th, tr = R % g->th, re = (n + 1) * g->th - 1 < r1 ? (n + 1) * g->th - 1 : r1;
        const float *xc = x + (n * g->C + c) * g->H * g->W;
        float *d = S + stage_row0(g, sl->r0, n0, R, n) * g->wp;
        for (int64_t ih = g->m * tr - g->pt, ie = g->m * (re - n * g->th) - g->pt + g->a; ih < ie; ih++, d += g->wp)
            trtl_wg_pad_row(d, ih >= 0 && ih < g->H ? xc + ih * g->W : NULL, g->wp, g->pl, g->W);
        R = re + 1;
    }
}

/* Phase 1: input channels [c0, c1) of the slot's group into V. */
static void wg_input(const wg_job *j, const wg_slot *sl, int64_t c0, int64_t c1)
{
    const wg_geom *g = j->g;
    const int64_t xs = j->pl->vxs;
    for (int64_t c = c0; c < c1; c++) {
        stage_rows(g, j->x, c, sl, sl->s);
        for (int64_t t = 0; t < sl->cnt; t += 8) {
            int64_t p = t / NRW, w = sl->tgp - p * NRW < NRW ? sl->tgp - p * NRW : NRW;
            float *dst = sl->v + p * NRW * g->C + c * w + (t % NRW);
            if (g->m == 4)
                trtl_wg_input8_f43(sl->s, sl->in_off + t, g->wp, dst, xs);
            else
                trtl_wg_input8_f23(sl->s, sl->in_off + t, g->wp, dst, xs);
        }
    }
}

/* An activation without a vector path in trtl_act8 (SiLU, sigmoid, GELU, ...): the output transform stores
 * transform + bias + residual, then this applies the activation with the vector math (trtl_epi_act) over the
 * group's outputs of one channel plane y while they are in L1, one call per output row of each run of adjacent
 * tiles (a run: consecutive tiles of one tile row).  It replaced a scalar trtl_activation_eval per element in the
 * tile store (YOLO's SiLU'd 3x3 layers: ~3% of the model's time in scalar expf). */
static void act_group(const trtl_epilogue *e, const wg_slot *sl, int64_t ow, int64_t m, float *y)
{
    for (int64_t i = 0; i < sl->cnt;) {
        const int64_t off = sl->y_off[i];
        const int32_t vr = sl->valid[i] & 255;
        int64_t len = sl->valid[i] >> 8;
        /* same output row (a 1-wide map's next tile row is also m floats on) and the next column */
        for (i++; i < sl->cnt && sl->y_off[i] / ow == off / ow && sl->y_off[i] == sl->y_off[i - 1] + m; i++)
            len += sl->valid[i] >> 8;
        for (int32_t r = 0; r < vr; r++)
            trtl_epi_act(e, y + off + r * ow, len);
    }
}

/* Phase 2: output-channel blocks [kb0, kb1) of the slot's group: GEMMs, then output transform. */
static void wg_gemm_output(const wg_job *j, const wg_slot *sl, int64_t kb0, int64_t kb1)
{
    const wg_geom *g = j->g;
    const wg_plan *pl = j->pl;
    const int64_t C = g->C, tgp = pl->tgp, np = ceil_div(sl->tgp, NRW), mxs = pl->mxs;
    const int64_t ohw = g->OH * g->OW;
    const int wide = trtl_cpu_has(TRTL_CPU_AVX512F);
    trtl_wg_out oa;
    /* a slow activation: the transform stores without it (act NONE is fast), act_group() applies it after */
    const int slow_act = !j->fast_act;
    const trtl_epilogue no_act = {TRTL_ACT_NONE, 0.0f, 0.0f, 0};
    oa.epi = slow_act ? &no_act : j->epi;
    oa.ow = g->OW;
    oa.y_off = sl->y_off;
    oa.valid = sl->valid;
    for (int64_t ck = kb0; ck < kb1; ck += pl->kc) {
        int64_t ce = ck + pl->kc < kb1 ? ck + pl->kc : kb1;
        for (int64_t xi = 0; xi < g->nxi; xi++) {
            const float *vx = sl->v + xi * pl->vxs;
            for (int64_t kb = ck; kb < ce; kb++) {
                const float *u = j->u + (xi * g->nkb + kb) * C * MR;
                float *mr = sl->m + xi * mxs + (kb - ck) * MR * tgp;
                for (int64_t p = 0; p < np; p++) {
                    const float *v = vx + p * NRW * C;
                    int64_t rem = sl->tgp - p * NRW;
                    if (wide && rem == 2 * NRW + 8) { /* two full panels and the 8-tile last one */
                        trtl_wg_gemm_6x40_avx512(C, u, v, v + NRW * C, v + 2 * NRW * C, mr + p * NRW, tgp);
                        p += 2;
                    } else if (wide && rem == NRW + 8) {
                        trtl_wg_gemm_6x24_avx512(C, u, v, v + NRW * C, mr + p * NRW, tgp);
                        p++;
                    } else if (wide && rem >= 2 * NRW) { /* two full panels */
                        trtl_wg_gemm_6x32_avx512(C, u, v, v + NRW * C, mr + p * NRW, tgp);
                        p++;
                    } else if (sl->tgp - p * NRW >= NRW) {
                        (wide ? trtl_wg_gemm_6x16_avx512 : trtl_wg_gemm_6x16)(C, u, v, mr + p * NRW, tgp);
                    } else {
                        trtl_wg_gemm_6x8(C, u, v, mr + p * NRW, tgp);
                    }
                }
            }
        }
        for (int64_t kb = ck; kb < ce; kb++)
            for (int64_t r = 0; r < MR && kb * MR + r < g->K; r++) {
                int64_t k = kb * MR + r;
                const float *mk = sl->m + ((kb - ck) * MR + r) * tgp;
                oa.bias = j->bias ? j->bias[k] : 0.0f;
                oa.y = j->y + k * ohw;
                oa.res = j->res ? j->res + k * ohw : NULL;
                for (int64_t t = 0; t < sl->cnt; t += 8) {
                    if (g->m == 4)
                        trtl_wg_output8_f43(mk + t, mxs, &oa, t);
                    else
                        trtl_wg_output8_f23(mk + t, mxs, &oa, t);
                }
                if (slow_act)
                    act_group(j->epi, sl, g->OW, g->m, oa.y);
            }
    }
}

/* Private split: slot s checks its share (an s-th of the whole input, flat) for NaN / Inf, so the check (one pass
 * over the input) is split over the threads instead of running on the caller before them: DenseNet's 56x56x128
 * inputs (1.6 MB) were a serial pass ahead of a two-thread layer (split_bench, three rounds each, load 8: the 56x56
 * layers' ideal / t1 0.558-0.577 -> 0.503-0.540).  The shared split (small maps) checks on the caller first: split
 * there, its 14x14 layers measured 0.75-0.79 against 0.71-0.73.  The result is read after the job. */
static void check_share(const wg_job *j, int64_t s)
{
    const int64_t n = j->g->N * j->g->C * j->g->H * j->g->W, b = s * n / j->pl->slots, e = (s + 1) * n / j->pl->slots;
    if (!trtl_wg_all_finite(j->x + b, e - b))
        atomic_store_explicit(j->nonfinite, 1, memory_order_relaxed);
}

/* Private split: slot s runs groups [s * ng / slots, (s + 1) * ng / slots) whole. */
static void wg_private(void *ctx, int64_t sb, int64_t se, int thread)
{
    const wg_job *j = ctx;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        check_share(j, s);
        wg_slot sl;
        slot_init(j, s, &sl);
        for (int64_t gi = s * j->pl->ngroups / j->pl->slots, ge = (s + 1) * j->pl->ngroups / j->pl->slots; gi < ge;
             gi++) {
            group_tables(j, gi, &sl);
            wg_input(j, &sl, 0, j->g->C);
            wg_gemm_output(j, &sl, 0, j->g->nkb);
        }
    }
}

/* Shared split, phase 1: slot s transforms an equal share of the input channels of group j->gi. */
static void wg_shared_input(void *ctx, int64_t sb, int64_t se, int thread)
{
    const wg_job *j = ctx;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        wg_slot sl;
        slot_init(j, s, &sl);
        group_tables(j, j->gi, &sl);
        wg_input(j, &sl, s * j->g->C / j->pl->slots, (s + 1) * j->g->C / j->pl->slots);
    }
}

/* Shared split, phase 2: slot s runs an equal share of the output-channel blocks. */
static void wg_shared_output(void *ctx, int64_t sb, int64_t se, int thread)
{
    const wg_job *j = ctx;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        wg_slot sl;
        slot_init(j, s, &sl);
        group_tables(j, j->gi, &sl);
        wg_gemm_output(j, &sl, s * j->g->nkb / j->pl->slots, (s + 1) * j->g->nkb / j->pl->slots);
    }
}

/* ---- non-finite inputs ----------------------------------------------------------------------- */

/* Does tile (tr, tc) of image n read a non-finite input element (any channel)? */
static int tile_reads_nonfinite(const wg_geom *g, const float *x, int64_t n, int64_t tr, int64_t tc)
{
    int64_t h0 = g->m * tr - g->pt, w0 = g->m * tc - g->pl;
    int64_t h1 = h0 + g->a < g->H ? h0 + g->a : g->H, w1 = w0 + g->a < g->W ? w0 + g->a : g->W;
    if (h0 < 0)
        h0 = 0;
    if (w0 < 0)
        w0 = 0;
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t ih = h0; ih < h1; ih++) {
            const float *row = x + ((n * g->C + c) * g->H + ih) * g->W;
            for (int64_t iw = w0; iw < w1; iw++)
                if (!isfinite(row[iw]))
                    return 1;
        }
    return 0;
}

/* Recomputes, by direct convolution plus the epilogue, every output of the tiles that read a
 * non-finite input element (see the top of the file).  The plain weights come from the state, exactly
 * (the engine frees its plain copy: kernel->unpack), one 3x3 kernel at a time. */
static void wg_direct_nonfinite_tiles(const wg_job *j, const wg_state *st)
{
    const wg_geom *g = j->g;
    const trtl_epilogue *e = j->epi;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t tr = 0; tr < g->th; tr++)
            for (int64_t tc = 0; tc < g->tw; tc++) {
                if (!tile_reads_nonfinite(g, j->x, n, tr, tc))
                    continue;
                const int64_t oh0 = g->m * tr, ow0 = g->m * tc;
                const int64_t oh1 = oh0 + g->m < g->OH ? oh0 + g->m : g->OH;
                const int64_t ow1 = ow0 + g->m < g->OW ? ow0 + g->m : g->OW;
                for (int64_t k = 0; k < g->K; k++) {
                    double s[4][4] = {{0}}; /* the tile's outputs (m <= 4) */
                    for (int64_t c = 0; c < g->C; c++) {
                        float wk[9];
                        trtl_wg_exact_get(&st->plain, st->u, k, c, wk);
                        for (int64_t oh = oh0; oh < oh1; oh++)
                            for (int64_t ow = ow0; ow < ow1; ow++)
                                for (int64_t kh = 0; kh < 3; kh++) {
                                    int64_t ih = oh - g->pt + kh;
                                    if (ih < 0 || ih >= g->H)
                                        continue;
                                    const float *row = j->x + ((n * g->C + c) * g->H + ih) * g->W;
                                    for (int64_t kw = 0; kw < 3; kw++) {
                                        int64_t iw = ow - g->pl + kw;
                                        if (iw >= 0 && iw < g->W)
                                            s[oh - oh0][ow - ow0] += (double)wk[kh * 3 + kw] * (double)row[iw];
                                    }
                                }
                    }
                    for (int64_t oh = oh0; oh < oh1; oh++)
                        for (int64_t ow = ow0; ow < ow1; ow++) {
                            int64_t at = ((n * g->K + k) * g->OH + oh) * g->OW + ow;
                            float v = (float)s[oh - oh0][ow - ow0] + (j->bias ? j->bias[k] : 0.0f);
                            if (j->res)
                                v += j->res[at];
                            j->y[at] = trtl_activation_eval(e->act, e->alpha, e->beta, v);
                        }
                }
            }
}

/* ---- kernel entry points --------------------------------------------------------------------- */

static trtl_status wg_run(const trtl_kernel_args *a, int64_t m)
{
    const trtl_node *nd = a->node;
    const wg_state *st = a->state;
    wg_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, m, &g));
    if (!st || st->m != m || st->C != g.C || st->K != g.K)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': Winograd weights were not prepared for this shape", nd->name);
    wg_job j = {0};
    j.g = &g;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.u = st->u;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    j.fast_act = trtl_act_is_fast(nd->epi.act);
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.OH * g.OW, &j.res));
    if (g.tiles == 0)
        return TRTL_OK;
    if (g.C == 0) { /* no input channels: bias (+ residual) only */
        int64_t hw = g.OH * g.OW;
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t k = 0; k < g.K; k++) {
                float *yk = j.y + (n * g.K + k) * hw;
                trtl_epi_prefill(yk, j.res ? j.res + (n * g.K + k) * hw : NULL, j.bias ? j.bias[k] : 0.0f, NULL, hw);
                trtl_epi_act(j.epi, yk, hw);
            }
        return TRTL_OK;
    }
    /* the scratch base is aligned here (plan sizes include 64 bytes of slack for it) */
    j.base = (char *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    size_t avail = a->scratch ? a->scratch_size : 0;
    wg_plan pl;
    int64_t slots = trtl_threads_for(a->pool, wg_flops(&g));
    if (slots > MAX_SLOTS)
        slots = MAX_SLOTS;
    for (;; slots--) {
        plan_make(&g, slots, &pl);
        if (pl.total <= avail || slots == 1)
            break;
    }
    if (pl.total > avail || !a->scratch)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than the %zu Winograd needs",
                          nd->name, a->scratch_size, pl.total);
    j.pl = &pl;
    _Atomic int nonfinite = pl.shared && !trtl_wg_all_finite(j.x, g.N * g.C * g.H * g.W);
    j.nonfinite = &nonfinite;
    if (!pl.shared) {
        if (pl.slots == 1)
            wg_private(&j, 0, 1, 0);
        else
            trtl_parallel_for(a->pool, pl.slots, 1, wg_private, &j);
    } else {
        for (j.gi = 0; j.gi < pl.ngroups; j.gi++) {
            trtl_parallel_for(a->pool, pl.slots, 1, wg_shared_input, &j);
            trtl_parallel_for(a->pool, pl.slots, 1, wg_shared_output, &j);
        }
    }
    if (atomic_load_explicit(&nonfinite, memory_order_relaxed)) /* the pool's join orders the slots' stores */
        wg_direct_nonfinite_tiles(&j, st);
    return TRTL_OK;
}

static size_t wg_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out, int64_t m)
{
    wg_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, m, &g) != TRTL_OK || g.tiles == 0 || g.C == 0)
        return 0;
    /* run() uses fewer slots with a smaller pool, and a plan with fewer slots can need more (one
     * slot takes all output channels at once): the largest of them */
    size_t most = 0;
    for (int s = max_slots(&g); s >= 1; s--) {
        wg_plan pl;
        plan_make(&g, s, &pl);
        if (pl.total > most)
            most = pl.total;
    }
    return most;
}

static int wg_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (!trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) || !params_ok(p) || in_dims[0].nb_dims != 4)
        return 0;
    int64_t C = in_dims[0].d[1];
    return C > 0 && p->num_output_maps > 0 && p->kernel.count == (int64_t)p->num_output_maps * C * 9 &&
           C * p->num_output_maps <= ((int64_t)1 << 26);
}

/* F(4,3) on a small map: a 7x7 map is 2 x 2 tiles of 4x4 outputs, so each of the 36 transform-domain
 * GEMMs has 4 columns and runs at a fraction of the packed GEMM's speed (measured 2.4x slower than
 * convolution.packed_gemm on ResNet's 512-channel 7x7 layers; F(2,3)'s 16 tiles are close to it).
 * Below 16 tiles over the batch it is no candidate: the builder's timing on a loaded machine
 * could otherwise keep it. */
static int wg43_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    if (!wg_applies(nd, in_dims))
        return 0;
    const trtl_dims *x = &in_dims[0];
    return x->d[0] * ((x->d[2] + 3) / 4) * ((x->d[3] + 3) / 4) >= 16;
}

static trtl_status wg_prepare(const trtl_node *nd, void **state, int64_t m)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    if (!params_ok(p) || p->num_output_maps < 1 || p->kernel.count % ((int64_t)p->num_output_maps * 9))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': not a 3x3 convolution the Winograd kernel runs", nd->name);
    wg_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->m = m;
    st->K = p->num_output_maps;
    st->C = p->kernel.count / (st->K * 9);
    st->nkb = ceil_div(st->K, MR);
    int64_t a = m + 2, nxi = a * a;
    size_t bytes = (size_t)(nxi * st->nkb * MR * (st->C > 0 ? st->C : 1)) * sizeof(float);
    void *u = NULL;
    if (posix_memalign(&u, 64, bytes) != 0) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory for %zu bytes of Winograd weights",
                          nd->name, bytes);
    }
    st->u = u;
    st->packed_bytes = bytes;
    memset(st->u, 0, bytes);
    const float *w = (const float *)p->kernel.values;
    const double(*G)[3] = m == 4 ? trtl_wg_G43 : trtl_wg_G23;
    for (int64_t k = 0; k < st->K; k++)
        for (int64_t c = 0; c < st->C; c++) {
            const float *gk = w + (k * st->C + c) * 9;
            double t[8][3]; /* G g */
            for (int64_t i = 0; i < a; i++)
                for (int q = 0; q < 3; q++)
                    t[i][q] = G[i][0] * gk[q] + G[i][1] * gk[3 + q] + G[i][2] * gk[6 + q];
            for (int64_t i = 0; i < a; i++)
                for (int64_t jj = 0; jj < a; jj++) {
                    double v = t[i][0] * G[jj][0] + t[i][1] * G[jj][1] + t[i][2] * G[jj][2];
                    int64_t xi = i * a + jj, kb = k / MR;
                    st->u[((xi * st->nkb + kb) * st->C + c) * MR + k % MR] = (float)v;
                }
        }
    trtl_status es = trtl_wg_exact_init(&st->plain, G, m, st->K, st->C, MR, st->nkb, st->u, w, nd->name);
    if (es != TRTL_OK) {
        free(st->u);
        free(st);
        return es;
    }
    *state = st;
    return TRTL_OK;
}

/* The plain weights back, bit for bit, from u and the exact-weights table (plan writer; dst at any offset). */
static void wg_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const wg_state *st = state;
    (void)nd;
    trtl_wg_exact_unpack(&st->plain, st->u, dst);
}

static size_t wg_state_bytes(const void *state)
{
    const wg_state *st = state;
    return sizeof *st + st->packed_bytes + trtl_wg_exact_bytes(&st->plain);
}

static void wg_release(void *state)
{
    wg_state *st = state;
    if (st) {
        free(st->u);
        trtl_wg_exact_free(&st->plain);
    }
    free(st);
}

static trtl_status wg43_run(const trtl_kernel_args *a) { return wg_run(a, 4); }
static trtl_status wg23_run(const trtl_kernel_args *a) { return wg_run(a, 2); }
static trtl_status wg43_prepare(const trtl_node *n, void **s) { return wg_prepare(n, s, 4); }
static trtl_status wg23_prepare(const trtl_node *n, void **s) { return wg_prepare(n, s, 2); }
static size_t wg43_scratch(const trtl_node *n, const trtl_tensor_view *i, const trtl_tensor_view *o)
{
    return wg_scratch(n, i, o, 4);
}
static size_t wg23_scratch(const trtl_node *n, const trtl_tensor_view *i, const trtl_tensor_view *o)
{
    return wg_scratch(n, i, o, 2);
}

const trtl_kernel trtl_kernel_conv_winograd_f43 = {
    .name = "convolution.winograd_f43",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = wg43_applies,
    .prepare = wg43_prepare,
    .release = wg_release,
    .state_bytes = wg_state_bytes,
    .unpack = wg_unpack,
    .scratch = wg43_scratch,
    .run = wg43_run,
};

const trtl_kernel trtl_kernel_conv_winograd_f23 = {
    .name = "convolution.winograd_f23",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = wg_applies,
    .prepare = wg23_prepare,
    .release = wg_release,
    .state_bytes = wg_state_bytes,
    .unpack = wg_unpack,
    .scratch = wg23_scratch,
    .run = wg23_run,
};
