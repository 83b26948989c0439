/*
 * convolution_depthwise_rows8.c -- "convolution.depthwise_rows8": 2-D depthwise convolution (num_groups == C == K)
 * straight from the NCHW planes, for AVX2 + FMA machines: square 3x3 / 5x5 / 7x7 kernels, stride 1 or 2 (the same
 * on both axes), dilation 1, every padding mode, bias + residual + activation fused into the store.
 *
 * No plane copy and no transpose: output columns 8j..8j+7 of a row are one vector, each tap's input vector is one
 * unaligned load from the input row (stride 2: two loads and a shufps that keeps the even columns -- the odd ones
 * of the same pair are the next tap's -- in the lane order 0 1 4 5 2 3 6 7, which one vpermpd restores on the
 * accumulator before the store).  Vectors whose taps read left of column 0 or right of column W-1 (the first one,
 * the last one or two; on 7- and 14-wide maps every vector) AND each tap's input with a lane mask computed once per
 * run, so the horizontal padding costs one vandps a tap instead of a padded copy or scalar edge columns; rows in
 * the vertical padding are skipped.  Input rows whose loads would leave their plane (the first row with left
 * padding, the last row or two) are copied into zero-bordered rows of the slot's scratch first, so nothing outside
 * the input tensor is read.  Register tiles: 4 output rows (then 2, 1) x 1 or 2 vectors; each input row is loaded
 * once per tile column and feeds every output row of the tile it belongs to; weights are broadcast once per plane.
 *
 * The last, partial vector of an output row is stored whole when the 8 floats stay inside the plane: its extra
 * lanes land on the first columns of a later row, which that row's own store overwrites (each band of rows does
 * its last vector first, so the later stores come after).  Where they would leave the plane (the plane's last
 * rows), or the residual shares memory with the output, partial vectors go through a small buffer.  ReLU / clip /
 * leaky are applied in registers, the other activations over the finished plane (trtl_epi_act).  Planes are split
 * over the pool by the per-plane driver (depthwise_planes.c).  A run whose shapes exceed the limits below
 * (dynamic shapes past what applies() saw) computes the reference convolution and the epilogue.
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/conv_geometry.h"
#include "kernels/x86/depthwise_planes.h"
#include "kernels/x86/convolution_unpacked.h"
#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define RW_MAXK 7
#define RW_MARGIN 64  /* zero floats on each side of a staged row: loads reach at most this far past the row */
#define RW_MAXVEC 16  /* vectors a row (128 output columns; wider rows run the reference) */
#define RW_MAXSTAGE 8 /* staged input rows per plane */

typedef struct rw_geom {
    union {
        trtl_dw_geom base;
        struct {
            TRTL_DW_GEOM_FIELDS;
        };
    };
    int64_t nvec;     /* vectors per output row */
    int64_t jl, jr;   /* vectors [0, jl) and [jr, nvec) (jr >= jl) read past the row's ends: masked tiles */
    int64_t top, bot; /* input rows [0, top) and [bot, H) read outside their plane (the first plane's first rows
                         * may be both: bot < top) */
    int64_t hi;       /* an input row's loads span [row - pl, row + hi) */
    const float *xbeg, *xend; /* the input tensor (run() sets them): only reads outside it are staged */
    int64_t rowlen;   /* floats of a staged row: RW_MARGIN + W + RW_MARGIN */
    int ok;           /* the shapes fit the limits; else run() computes the reference */
    float mask[RW_MAXVEC][RW_MAXK][8] __attribute__((aligned(32))); /* [vector][tap column][lane] */
} rw_geom;

/* The output column of accumulator lane l, relative to the vector's first column: stride 2 keeps the shufps order. */
static const int lane_col2[8] = {0, 1, 4, 5, 2, 3, 6, 7};

static const trtl_dw_limits rw_limits = {RW_MAXK, RW_MAXK, 0};

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, rw_geom *g)
{
    memset(g, 0, sizeof *g);
    TRTL_TRY(trtl_dw_geom_init(nd, xd, yd, &rw_limits, &g->base));
    g->ok = g->R == g->S && (g->R == 3 || g->R == 5 || g->R == 7) && g->sh == g->sw && g->OH > 0 && g->OW > 0 &&
            g->pl <= g->S && g->pt <= g->R;
    if (!g->ok)
        return TRTL_OK;
    const int64_t st = g->sw;
    g->nvec = (g->OW + 7) / 8;
    /* lanes reading outside [0, W): left edge vectors from the start, right edge ones from the end */
    g->jl = 0;
    g->jr = g->nvec;
    for (int64_t j = 0; j < g->nvec; j++) {
        int left = 0, right = 0;
        for (int l = 0; l < 8; l++) {
            int64_t c = 8 * j + (st == 2 ? lane_col2[l] : l);
            if (c >= g->OW)
                continue;
            left |= c * st - g->pl < 0;
            right |= c * st - g->pl + g->S - 1 >= g->W;
        }
        if (left)
            g->jl = j + 1;
        if (right && g->jr == g->nvec)
            g->jr = j;
    }
    if (g->jr < g->jl)
        g->jr = g->jl;
    if (g->nvec > RW_MAXVEC) {
        g->ok = 0;
        return TRTL_OK;
    }
    for (int64_t j = 0; j < g->nvec; j++) /* every vector's: a masked tile may pair an edge vector with another */
        for (int64_t kw = 0; kw < g->S; kw++)
            for (int l = 0; l < 8; l++) {
                int64_t c = 8 * j + (st == 2 ? lane_col2[l] : l), iw = c * st - g->pl + kw;
                uint32_t bits = c < g->OW && iw >= 0 && iw < g->W ? 0xffffffffu : 0u;
                memcpy(&g->mask[j][kw][l], &bits, sizeof bits);
            }
    /* an input row's loads span [row - pl, row + hi): stage the rows where that leaves the plane */
    const int64_t hi = g->hi = 8 * st * (g->nvec - 1) + (g->S - 1) - g->pl + 8 * st;
    g->top = g->pl > 0 ? (g->pl + g->W - 1) / g->W : 0;
    if (g->top > g->H)
        g->top = g->H;
    /* down to row 0, not to top: only the first plane stages its first rows, so in the last plane of a map smaller
     * than a row's reads (2x2, 3x3) every row whose reads leave the plane is staged from the bottom (stopping at top
     * read the last plane's first rows in place, past the tensor's end) */
    g->bot = g->H;
    while (g->bot > 0 && (g->bot - 1) * g->W + hi > g->H * g->W)
        g->bot--;
    g->rowlen = RW_MARGIN + g->W + RW_MARGIN;
    if (g->top + (g->H - g->bot) > RW_MAXSTAGE || hi - g->W > RW_MARGIN || g->pl > RW_MARGIN)
        g->ok = 0;
    return TRTL_OK;
}

/* Per-plane constants of the compute loops. */
typedef struct rw_plane {
    const float *x;     /* the input plane */
    const float *stage; /* staged rows (each at RW_MARGIN into its rowlen floats) */
    int64_t top, bot;   /* rows [0, top) and [bot, H) of this plane are read from the staged copies */
    const float *res;   /* residual plane or NULL */
    float *y;
    const __m256 *w; /* R*S broadcast weights */
    __m256 bias, alpha, beta;
    int32_t fast;   /* activation applied in registers (TRTL_ACT_NONE when the plane pass runs later) */
    int overflow;   /* partial vectors may be stored whole when they stay in the plane */
} rw_plane;

static inline const float *in_row(const rw_geom *g, const rw_plane *pp, int64_t ih)
{
    if (ih < pp->top)
        return pp->stage + ih * g->rowlen + RW_MARGIN;
    if (ih >= pp->bot)
        return pp->stage + (pp->top + ih - pp->bot) * g->rowlen + RW_MARGIN;
    return pp->x + ih * g->W;
}

/* The first n < 8 lanes of a (+ residual, activation) to y + off through a buffer: AMD cores run masked stores
 * slowly.  Out of line: the tiles stay small. */
__attribute__((target("avx2,fma"), noinline)) static void rw_store_part(const rw_plane *pp, int64_t off, int64_t n,
                                                                        __m256 a)
{
    float t[8];
    if (pp->res) /* a masked load (fast on AMD, unlike the masked store) */
        a = _mm256_add_ps(a, _mm256_maskload_ps(pp->res + off, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                                                                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5,
                                                                                                     6, 7))));
    _mm256_storeu_ps(t, trtl_act8(a, pp->fast, pp->alpha, pp->beta));
    memcpy(pp->y + off, t, (size_t)n * sizeof(float));
}

/* One output vector: (stride 2: lane order restored,) + residual, activation, stored whole or through a buffer. */
__attribute__((target("avx2,fma"), always_inline)) static inline void rw_store(const rw_geom *g, const rw_plane *pp,
                                                                                int64_t oh, int64_t c0, __m256 a,
                                                                                const int ST)
{
    if (ST == 2)
        a = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(a), 0xD8));
    const int64_t off = oh * g->OW + c0, n = g->OW - c0 < 8 ? g->OW - c0 : 8;
    if (n == 8 || (pp->overflow && off + 8 <= g->OH * g->OW)) {
        if (pp->res)
            a = _mm256_add_ps(a, _mm256_loadu_ps(pp->res + off));
        _mm256_storeu_ps(pp->y + off, trtl_act8(a, pp->fast, pp->alpha, pp->beta));
    } else {
        rw_store_part(pp, off, n, a);
    }
}

/* NR output rows from oh0 x NV vectors from j0, K x K taps, stride ST; MASKED: the inputs ANDed with the masks. */
__attribute__((target("avx2,fma"), always_inline)) static inline void rw_tile(const rw_geom *g, const rw_plane *pp,
                                                                               int64_t oh0, int64_t j0, const int K,
                                                                               const int ST, const int NR,
                                                                               const int NV, const int MASKED)
{
    __m256 acc[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[r][v] = pp->bias;
    const __m256 *mk[2] = {NULL, NULL};
    if (MASKED)
        for (int v = 0; v < NV; v++)
            mk[v] = (const __m256 *)g->mask[j0 + v];
#pragma GCC unroll 13
    for (int ir = 0; ir < (NR - 1) * ST + K; ir++) {
        const int64_t ih = oh0 * ST + ir - g->pt;
        if (ih < 0 || ih >= g->H)
            continue;
        const float *row = in_row(g, pp, ih) - g->pl;
        __m256 odd[2];
#pragma GCC unroll 7
        for (int kw = 0; kw < K; kw++) {
#pragma GCC unroll 2
            for (int v = 0; v < NV; v++) {
                const float *p = row + (j0 + v) * 8 * ST + kw;
                __m256 xv;
                if (ST == 1) {
                    xv = _mm256_loadu_ps(p);
                } else if (kw % 2 == 0) {
                    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
                    xv = _mm256_shuffle_ps(a, b, 0x88);
                    odd[v] = _mm256_shuffle_ps(a, b, 0xDD); /* the next tap's */
                } else {
                    xv = odd[v];
                }
                if (MASKED)
                    xv = _mm256_and_ps(xv, mk[v][kw]);
#pragma GCC unroll 4
                for (int r = 0; r < NR; r++) {
                    const int kh = ir - r * ST;
                    if (kh >= 0 && kh < K) /* the weight loaded once for the NV vectors */
                        acc[r][v] = _mm256_fmadd_ps(xv, pp->w[kh * K + kw], acc[r][v]);
                }
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            rw_store(g, pp, oh0 + r, (j0 + v) * 8, acc[r][v], ST);
}

/* The tile instances, each out of line (all of them inlined into one plane function made it ~450 KB of code). */
typedef void (*rw_tile_fn)(const rw_geom *g, const rw_plane *pp, int64_t oh0, int64_t j0);
#define RW_TILE(K, ST, NR, NV, M)                                                                                    \
    __attribute__((target("avx2,fma"), noinline)) static void rw_tile_##K##_##ST##_##NR##_##NV##_##M(               \
        const rw_geom *g, const rw_plane *pp, int64_t oh0, int64_t j0)                                               \
    {                                                                                                                \
        rw_tile(g, pp, oh0, j0, K, ST, NR, NV, M);                                                                   \
    }
#define RW_TILES_NR(K, ST, NR) \
    RW_TILE(K, ST, NR, 1, 1) RW_TILE(K, ST, NR, 1, 0) RW_TILE(K, ST, NR, 2, 0) RW_TILE(K, ST, NR, 2, 1)
#define RW_TILES(K, ST) RW_TILES_NR(K, ST, 4) RW_TILES_NR(K, ST, 2) RW_TILES_NR(K, ST, 1)
RW_TILES(3, 1)
RW_TILES(3, 2)
RW_TILES(5, 1)
RW_TILES(5, 2)
RW_TILES(7, 1)
RW_TILES(7, 2)

/* The tiles of one kernel size and stride: [NR 4, 2, 1][masked 1 vector, 1 vector, 2 vectors, masked 2 vectors]. */
typedef struct rw_tiles {
    rw_tile_fn t[3][4];
} rw_tiles;
#define RW_TSET_NR(K, ST, NR)                                                                                       \
    {rw_tile_##K##_##ST##_##NR##_1_1, rw_tile_##K##_##ST##_##NR##_1_0, rw_tile_##K##_##ST##_##NR##_2_0,             \
     rw_tile_##K##_##ST##_##NR##_2_1}
#define RW_TSET(K, ST) {{RW_TSET_NR(K, ST, 4), RW_TSET_NR(K, ST, 2), RW_TSET_NR(K, ST, 1)}}
static const rw_tiles rw_tile_sets[6] = {RW_TSET(3, 1), RW_TSET(3, 2), RW_TSET(5, 1), RW_TSET(5, 2), RW_TSET(7, 1),
                                         RW_TSET(7, 2)};

/* Vectors j0..j0+nv-1 (nv 1 or 2) of a band, masked where one of them reads past the row's ends. */
static void rw_tile_at(const rw_geom *g, const rw_plane *pp, int64_t oh0, const rw_tile_fn *t, int64_t j0, int nv)
{
    const int masked = j0 < g->jl || j0 + nv > g->jr;
    t[nv == 2 ? (masked ? 3 : 2) : (masked ? 0 : 1)](g, pp, oh0, j0);
}

/* Output rows oh0..oh0+NR-1 with the tiles t of that NR, in pairs of vectors: the tile with the last vector first
 * (its whole-vector store may spill onto the next row's first columns, which the later tiles overwrite; a tile
 * stores row by row, so the spill of its own rows is overwritten too), then the others from the left. */
static void rw_band(const rw_geom *g, const rw_plane *pp, int64_t oh0, const rw_tile_fn *t)
{
    const int64_t first = g->nvec % 2 ? g->nvec - 1 : g->nvec - 2;
    rw_tile_at(g, pp, oh0, t, first, (int)(g->nvec - first));
    for (int64_t j = 0; j < first; j += 2)
        rw_tile_at(g, pp, oh0, t, j, 2);
}

static void rw_rows(const rw_geom *g, const rw_plane *pp, const rw_tiles *ts)
{
    int64_t oh = 0;
    for (; oh + 4 <= g->OH; oh += 4)
        rw_band(g, pp, oh, ts->t[0]);
    if (oh + 2 <= g->OH) {
        rw_band(g, pp, oh, ts->t[1]);
        oh += 2;
    }
    if (oh < g->OH)
        rw_band(g, pp, oh, ts->t[2]);
}

/* One plane (the driver's plane function): the staged rows, the weights broadcast, the rows, the slow activation. */
__attribute__((target("avx2,fma"))) static void rw_plane_fn(const void *geom, const float *x, float *buf,
                                                             const float *w, float bias, const float *res, float *y,
                                                             const trtl_epilogue *epi)
{
    const rw_geom *g = geom;
    /* rows whose loads leave the plane are read in place where they stay inside the input tensor (masked lanes
     * drop what they read of the neighbouring planes); the first plane's first rows and the last plane's last rows
     * are copied into buf first (its borders zeroed once per run by the driver) */
    const uintptr_t xa = (uintptr_t)x, fl = sizeof(float);
    const int64_t top = xa < (uintptr_t)g->xbeg + (uintptr_t)g->pl * fl ? g->top : 0;
    const int64_t bot = xa + (uintptr_t)((g->H - 1) * g->W + g->hi) * fl > (uintptr_t)g->xend ? g->bot : g->H;
    for (int64_t ih = 0; ih < top; ih++)
        memcpy(buf + ih * g->rowlen + RW_MARGIN, x + ih * g->W, (size_t)g->W * sizeof(float));
    for (int64_t ih = bot; ih < g->H; ih++)
        memcpy(buf + (top + ih - bot) * g->rowlen + RW_MARGIN, x + ih * g->W, (size_t)g->W * sizeof(float));
    __m256 wv[RW_MAXK * RW_MAXK];
    for (int64_t t = 0; t < g->R * g->S; t++)
        wv[t] = _mm256_broadcast_ss(w + t);
    const int fast = trtl_act_is_fast(epi->act);
    const int64_t P = g->OH * g->OW;
    /* whole-vector stores of partial vectors would clobber a residual that shares memory with the output */
    const uintptr_t r0 = (uintptr_t)res, y0 = (uintptr_t)y, bytes = (uintptr_t)P * sizeof(float);
    const int overflow = !res || r0 + bytes <= y0 || y0 + bytes <= r0;
    const rw_plane pp = {x,   buf, top, bot,
                         res, y,
                         wv,  _mm256_set1_ps(bias),
                         _mm256_set1_ps(epi->alpha), _mm256_set1_ps(epi->beta),
                         fast ? epi->act : TRTL_ACT_NONE, overflow};
    rw_rows(g, &pp, &rw_tile_sets[(g->R - 3) + (g->sw - 1)]);
    if (!fast)
        trtl_epi_act(epi, y, P);
}

static trtl_dw_planes rw_driver(const rw_geom *g)
{
    const trtl_dw_planes d = {g, &g->base, rw_plane_fn, (size_t)(RW_MAXSTAGE * g->rowlen), 1};
    return d;
}

static trtl_status rw_run(const trtl_kernel_args *a)
{
    rw_geom g;
    TRTL_TRY(geom_init(a->node, &a->in[0].dims, &a->out[0].dims, &g));
    if (!g.ok) { /* shapes past what applies() took (dynamic): the reference and the epilogue */
        const float *res;
        TRTL_TRY(trtl_epi_residual(a, trtl_volume(&a->out[0].dims), &res));
        return trtl_conv_reference_fallback(a, res, NULL);
    }
    g.xbeg = (const float *)a->in[0].data;
    g.xend = g.xbeg + trtl_volume(&a->in[0].dims);
    const trtl_dw_planes d = rw_driver(&g);
    return trtl_dw_planes_run(a, &d);
}

static size_t rw_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    rw_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (!g.ok)
        return 0;
    const trtl_dw_planes d = rw_driver(&g);
    return trtl_dw_planes_scratch(&d);
}

static int rw_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    rw_geom g;
    if (geom_init(nd, &in_dims[0], NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    return g.ok;
}

const trtl_kernel trtl_kernel_conv_depthwise_rows8 = {
    .name = "convolution.depthwise_rows8",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = rw_applies,
    .prepare = NULL,
    .release = NULL,
    .scratch = rw_scratch,
    .run = rw_run,
};
