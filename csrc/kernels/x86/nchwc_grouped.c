/* nchwc_grouped.c -- the grouped path of "nchwc_conv.avx2": groups of Cg input and Kg output channels, both
 * multiples of 8 (RegNetY: Cg = Kg = 8), kernels up to 7x7, strides 1..4, any dilation and padding, on the blocked
 * layout (B = 8) in and out: output block ob reads only the Cg / 8 input blocks of its group.  One group is a dense
 * convolution (session 20: the YOLO-style detector's 3x3 stride-2 downsamples, 32..256 input channels).
 *
 * As the dense path (x86/nchwc_dense.c), output channels are in the vector: a register tile of NP output pixels x
 * NBK output blocks of one group (8x1, 6x2, 4x3: 8-12 accumulators); per (input block, tap) 8 input lanes, each
 * broadcast against the tile's NBK weight vectors.  With one block a group (group width 8: nothing shares a
 * broadcast) the lanes are spread from two 128-bit broadcast loads by in-lane permutes (2 loads + 8 permutes for 8
 * FMAs instead of 8 broadcast loads: RegNetY's grouped layers 6-10% faster, AVX2 Zen 3).  A group's Kg / 8 blocks are cut into the fewest tile groups of
 * <= 3, as even as possible; weights packed once as [tile group][cb, kh, kw, lane][nbk][8].  Small-map rows are
 * mostly edge pixels, and an edge pixel is one chain of Cg * R * S dependent FMAs, so the input rows a chunk of
 * output rows reads are first copied with their zero padding into a buffer on the stack (GR_PAD_FLOATS: the copy is
 * one vector an input pixel against Kg * Cg * R * S / 8 FMAs an output pixel), and then every pixel of every row
 * runs on the tiles.  Where one output row's padded input does not fit the buffer (very wide rows of many channels
 * a group) the rows are read in place: interior pixels on the tiles, edge pixels one at a time with bounds checks.
 * Convolutions needing no padding (every tap inside: a 1x1 grouped layer) read in place too, and so do layers with a
 * NaN or infinite weight (trtl_nchwc_grouped_finite false): a tap in the padding is skipped, as by the reference,
 * where the copy would multiply its zero by the weight (NaN).  Row widths that are
 * no multiple of the tile are cut into equal tiles (7: one of 7, 14: two of 7), not a tail of single pixels.
 * Dense layers (session 20): a tile group's weights are C * R * S * nbk * 8 floats (221 KB for 256 -> 512 3x3), so
 * the tile group is the outer loop over a chunk of output rows (their input rows within GR_L2_FLOATS) and the input
 * blocks are cut into depth blocks whose weights fit GR_L1_FLOATS (partial sums stored in the output and read back,
 * the epilogue at the last; one block where the residual shares the output's memory); the tiles take strides 1 and
 * 2 as constants (with a run-time stride gcc kept the np x 8 broadcast addresses on the stack), step 2 lanes at a
 * time, and an edge pixel read in place sums 4 chains of accumulators (one chain of C * R * S FMAs a pixel made the
 * left edge column of a 10-wide row 20% of the layer).
 * Bias, residual and ReLU / clip / leaky in registers, other activations over each finished row of a block; the
 * channel means of squeeze-and-excitation (passes/nchwc.c, se_fold) summed from each finished row.  Work: items of
 * (image, group, band of output rows) in trtl_nchwc_even_runs; bands only where there are few groups and no
 * means. */
#include <math.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/nchwc.h"
#include "kernels/x86/nchwc_grouped.h"
#include "kernels/x86/nchwc_dense.h"
#include "kernels/x86/nchwc_bcast.h"
#include "kernels/x86/fused_epilogue.h"

#define NB 8
#define GR_MAXK 7
#define GR_MAXSTRIDE 4
#define GR_MAXG 3 /* output blocks a tile */
/* Read in place, a chunk of output rows reads at most this many input floats of its group (where one row's input
 * is more, one row a chunk): each tile group runs over the chunk's rows, so its weights come from L2 once a chunk
 * and the chunk's input stays in L2 for the next tile group. */
#define GR_L2_FLOATS (48 * 1024)
/* A tile group's weights of more input channels than fit this many floats go in depth blocks (partial sums stored in
 * the output and read back): each block's weights stay in L1 for the chunk's rows, not streamed from L2 per tile. */
#ifndef GR_L1_FLOATS
#define GR_L1_FLOATS (4 * 1024)
#endif
#ifndef GR_PAD_FLOATS
#define GR_PAD_FLOATS 8192 /* the padded copy of a chunk's input rows: 32 KiB on the worker's stack */
#endif

int trtl_nchwc_conv_grouped(const trtl_conv_params *p, int64_t C)
{
    const int64_t G = p->num_groups, K = p->num_output_maps;
    if (G < 1 || C < 1 || K < 1 || C % G || K % G || (C / G) % NB || (K / G) % NB || p->kernel_size.nb_dims != 2 ||
        p->stride.nb_dims != 2 || p->dilation.nb_dims != 2 || trtl_nchwc_conv_pointwise(p))
        return 0;
    for (int i = 0; i < 2; i++)
        if (p->kernel_size.d[i] < 1 || p->kernel_size.d[i] > GR_MAXK || p->stride.d[i] < 1 ||
            p->stride.d[i] > GR_MAXSTRIDE || p->dilation.d[i] < 1)
            return 0;
    return p->kernel.type == TRTL_FLOAT && (!p->bias.count || p->bias.type == TRTL_FLOAT) &&
           p->kernel.count == K * (C / G) * p->kernel_size.d[0] * p->kernel_size.d[1] &&
           (!p->bias.count || p->bias.count == K);
}

/* Blocks a tile group for KgB output blocks a group: the fewest groups of <= GR_MAXG, as even as possible. */
static int64_t gr_tgroup(int64_t KgB)
{
    const int64_t ng = (KgB + GR_MAXG - 1) / GR_MAXG;
    return (KgB + ng - 1) / ng;
}

/* Offset of weight (k, u) in the packed layout, u = ((cb * R + r) * S + t) * 8 + lane over the group's T = Cg * RS
 * taps: [tile group (from its first block ob0)][u][nbk][8]. */
static int64_t gr_at(int64_t K, int64_t G, int64_t T, int64_t k, int64_t u)
{
    const int64_t KgB = K / G / NB, TG = gr_tgroup(KgB), ob = k / NB, obl = ob % KgB;
    const int64_t ob0 = ob - obl + obl / TG * TG, nbk = KgB - obl / TG * TG < TG ? KgB - obl / TG * TG : TG;
    return ob0 * T * NB + (u * nbk + ob - ob0) * NB + k % NB;
}

/* u of source tap (c, rs): lanes innermost, as the tiles read them */
static int64_t gr_u(int64_t c, int64_t rs, int64_t RS)
{
    return ((c / NB) * RS + rs) * NB + c % NB;
}

void trtl_nchwc_grouped_pack(const float *src, int64_t K, int64_t G, int64_t Cg, int64_t RS, float *dst)
{
    for (int64_t k = 0; k < K; k++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t rs = 0; rs < RS; rs++)
                dst[gr_at(K, G, Cg * RS, k, gr_u(c, rs, RS))] = src[(k * Cg + c) * RS + rs];
}

int trtl_nchwc_grouped_finite(const float *w, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(w[i]))
            return 0;
    return 1;
}

void trtl_nchwc_grouped_unpack(const float *packed, int64_t K, int64_t G, int64_t Cg, int64_t RS, float *dst)
{
    for (int64_t k = 0; k < K; k++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t rs = 0; rs < RS; rs++)
                memcpy(dst + (k * Cg + c) * RS + rs, packed + gr_at(K, G, Cg * RS, k, gr_u(c, rs, RS)),
                       sizeof(float));
}

/* One output row of one tile group: where it is, what it reads. */
typedef struct gr_row {
    const float *x;     /* the group's first input block (a plane, or the padded buffer) */
    int64_t xo;         /* offset of (tap row 0 of this output row, column of output pixel 0's tap 0) in it (may be
                         * < 0 when read in place: rows r < r0 and edge columns are never read) */
    int64_t xcb, xrs;   /* floats between input blocks, between kernel rows (the row stride x dilation) */
    int64_t xw;         /* floats between the columns of neighbouring taps (8 x dilation) */
    int64_t r0, r1;     /* kernel rows [r0, r1) inside the input */
    const float *w;     /* the tile group's packed weights [u][nbk][8] */
    const float *bias;  /* the tile group's bias [nbk][8] */
    float *y;           /* the tile group's first block at this row: [block b at b * ys][OW][8] */
    const float *res;   /* the residual likewise, or NULL */
    int64_t ys;
    int64_t cb0, cb1;   /* the tiles' input blocks of the group: a depth block (gr_job.dblk) */
    int first, last;    /* the first depth block starts from the bias, later ones from the sums stored in y; the
                         * last adds the residual and the activation */
} gr_row;

/* np output pixels from ow (every tap of each inside the rows r0..r1 of rw->x) x nbk blocks. */
__attribute__((target("avx2,fma"), always_inline)) static inline void gr_tile(const trtl_nchwc_grouped *d,
                                                                             const gr_row *rw, int64_t ow, int32_t act,
                                                                             __m256 va, __m256 vb, const int np,
                                                                             const int nbk, const int csw)
{
    __m256 acc[TRTL_NCB_MAXP][TRTL_NCB_MAXG];
    /* ps: floats between pixels, a constant for strides 1 and 2 (csw), so that every broadcast's address is the tap
     * pointer plus a displacement: with a run-time stride gcc kept the np x 8 addresses on the stack */
    const int64_t CgB = d->C / d->G / NB, R = d->R, S = d->S, ps = csw ? csw * NB : d->sw * NB;
    (void)CgB;
#pragma GCC unroll 8
    for (int j = 0; j < np; j++)
#pragma GCC unroll 3
        for (int b = 0; b < nbk; b++)
            acc[j][b] = rw->first ? _mm256_loadu_ps(rw->bias + b * NB)
                                  : _mm256_loadu_ps(rw->y + b * rw->ys + (ow + j) * NB);
    for (int64_t cb = rw->cb0; cb < rw->cb1; cb++)
        for (int64_t r = rw->r0; r < rw->r1; r++) {
            const float *xr = rw->x + (rw->xo + cb * rw->xcb + r * rw->xrs + ow * ps);
            const float *wr = rw->w + ((cb * R + r) * S) * NB * nbk * NB;
            for (int64_t t = 0; t < S; t++, xr += rw->xw) {
                if (nbk == 1) { /* one block: 4 input lanes a 128-bit broadcast, each spread by an in-lane permute */
#pragma GCC unroll 2
                    for (int h = 0; h < 2; h++, wr += 4 * NB) {
                        const __m256 w0 = _mm256_loadu_ps(wr), w1 = _mm256_loadu_ps(wr + NB);
                        const __m256 w2 = _mm256_loadu_ps(wr + 2 * NB), w3 = _mm256_loadu_ps(wr + 3 * NB);
#pragma GCC unroll 8
                        for (int j = 0; j < np; j++) {
                            const __m256 xv = _mm256_broadcast_ps((const __m128 *)(xr + j * ps + 4 * h));
                            acc[j][0] = _mm256_fmadd_ps(_mm256_permute_ps(xv, 0x00), w0, acc[j][0]);
                            acc[j][0] = _mm256_fmadd_ps(_mm256_permute_ps(xv, 0x55), w1, acc[j][0]);
                            acc[j][0] = _mm256_fmadd_ps(_mm256_permute_ps(xv, 0xaa), w2, acc[j][0]);
                            acc[j][0] = _mm256_fmadd_ps(_mm256_permute_ps(xv, 0xff), w3, acc[j][0]);
                        }
                    }
                    continue;
                }
                /* 2 lanes a step: unrolling all 8 had gcc keep weights in memory operands and juggle registers
                 * (the dense layers 3-6% slower) */
#pragma GCC unroll 2
                for (int l = 0; l < NB; l++, wr += nbk * NB)
                    trtl_ncb_step(acc, xr + l, ps, wr, np, nbk);
            }
        }
#pragma GCC unroll 3
    for (int b = 0; b < nbk; b++)
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) {
            __m256 v = acc[j][b];
            if (!rw->last) { /* a partial sum over the depth blocks so far */
                _mm256_storeu_ps(rw->y + b * rw->ys + (ow + j) * NB, v);
                continue;
            }
            if (rw->res)
                v = _mm256_add_ps(v, _mm256_loadu_ps(rw->res + b * rw->ys + (ow + j) * NB));
            _mm256_storeu_ps(rw->y + b * rw->ys + (ow + j) * NB, trtl_act8(v, act, va, vb));
        }
}

#define GR_TILE_FN(NP, NBK)                                                                                           \
    GR_TILE_FN_S(NP, NBK, 0) GR_TILE_FN_S(NP, NBK, 1) GR_TILE_FN_S(NP, NBK, 2)
#define GR_TILE_FN_S(NP, NBK, SW)                                                                                     \
    __attribute__((target("avx2,fma"), noinline)) static void gr_tile_##NP##_##NBK##_##SW(                           \
        const trtl_nchwc_grouped *d, const gr_row *rw, int64_t ow, int32_t act, __m256 va, __m256 vb)                \
    {                                                                                                                 \
        gr_tile(d, rw, ow, act, va, vb, NP, NBK, SW);                                                                 \
    }
#define GR_TILES(X)                                                                                                   \
    X(8, 1) X(7, 1) X(6, 1) X(5, 1) X(4, 1) X(3, 1) X(2, 1) X(1, 1) X(6, 2) X(5, 2) X(4, 2) X(3, 2) X(2, 2) X(1, 2)     \
    X(4, 3) X(3, 3) X(2, 3) X(1, 3)
GR_TILES(GR_TILE_FN)
typedef void (*gr_tile_fn)(const trtl_nchwc_grouped *, const gr_row *, int64_t, int32_t, __m256, __m256);
#define GR_ENTRY(NP, NBK)                                                                                             \
    [0][NBK - 1][NP - 1] = gr_tile_##NP##_##NBK##_0, [1][NBK - 1][NP - 1] = gr_tile_##NP##_##NBK##_1,                 \
    [2][NBK - 1][NP - 1] = gr_tile_##NP##_##NBK##_2,
/* [stride along W: 1, 2, else 0][nbk - 1][np - 1] */
static const gr_tile_fn gr_tiles[3][GR_MAXG][8] = {GR_TILES(GR_ENTRY)};
static const int gr_np[GR_MAXG] = {8, 6, 4};

/* Pixels of the next tile of nbk blocks where `rem` are left: the row's rest cut into equal tiles (7 pixels: one
 * tile of 7, 14: two of 7), never a tail of single pixels, each a chain waiting on the FMA latency. */
static inline int gr_width(int64_t rem, int nbk)
{
    const int64_t mx = gr_np[nbk - 1], tiles = (rem + mx - 1) / mx;
    return (int)((rem + tiles - 1) / tiles);
}

/* One output pixel of a row read in place, taps outside the input skipped, nbk blocks: the 8 input lanes of a tap
 * go to 4 chains of accumulators (lane % 4), summed at the end, so that the FMAs of a pixel (Cg * R * S * nbk of them
 * on a dense layer's edge) do not wait on one another's latency. */
__attribute__((target("avx2,fma"), always_inline)) static inline void gr_pixel_n(const trtl_nchwc_grouped *d,
                                                                                const gr_row *rw, int64_t ow,
                                                                                int32_t act, __m256 va, __m256 vb,
                                                                                const int nbk)
{
    __m256 acc[4][GR_MAXG];
#pragma GCC unroll 4
    for (int b = 0; b < nbk; b++) {
        acc[0][b] = _mm256_loadu_ps(rw->bias + b * NB);
        acc[1][b] = acc[2][b] = acc[3][b] = _mm256_setzero_ps();
    }
    const int64_t CgB = d->C / d->G / NB, iw0 = ow * d->sw - d->pl;
    for (int64_t cb = 0; cb < CgB; cb++)
        for (int64_t r = rw->r0; r < rw->r1; r++)
            for (int64_t t = 0; t < d->S; t++) {
                const int64_t iw = iw0 + t * d->dw;
                if (iw < 0 || iw >= d->W)
                    continue;
                const float *xr = rw->x + (rw->xo + cb * rw->xcb + r * rw->xrs + (ow * d->sw + t * d->dw) * NB);
                const float *wr = rw->w + ((cb * d->R + r) * d->S + t) * NB * nbk * NB;
#pragma GCC unroll 8
                for (int l = 0; l < NB; l++) {
                    const __m256 xv = _mm256_broadcast_ss(xr + l);
#pragma GCC unroll 4
                    for (int b = 0; b < nbk; b++)
                        acc[l & 3][b] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wr + (l * nbk + b) * NB), acc[l & 3][b]);
                }
            }
#pragma GCC unroll 4
    for (int b = 0; b < nbk; b++) {
        __m256 v = _mm256_add_ps(_mm256_add_ps(acc[0][b], acc[1][b]), _mm256_add_ps(acc[2][b], acc[3][b]));
        if (rw->res)
            v = _mm256_add_ps(v, _mm256_loadu_ps(rw->res + b * rw->ys + ow * NB));
        _mm256_storeu_ps(rw->y + b * rw->ys + ow * NB, trtl_act8(v, act, va, vb));
    }
}

__attribute__((target("avx2,fma"))) static void gr_pixel(const trtl_nchwc_grouped *d, const gr_row *rw, int64_t ow,
                                                         int nbk, int32_t act, __m256 va, __m256 vb)
{
    if (nbk == 1)
        gr_pixel_n(d, rw, ow, act, va, vb, 1);
    else if (nbk == 2)
        gr_pixel_n(d, rw, ow, act, va, vb, 2);
    else if (nbk == 3)
        gr_pixel_n(d, rw, ow, act, va, vb, 3);
    else
        gr_pixel_n(d, rw, ow, act, va, vb, GR_MAXG);
}

typedef struct gr_job {
    const trtl_nchwc_grouped *d;
    int64_t bands, items, runs; /* item = (n * G + group) * bands + band of output rows */
    int64_t chunk;              /* output rows a padded copy holds (0: the rows are read in place) */
    int64_t ichunk;             /* read in place: output rows a chunk (their input rows fit GR_L2_FLOATS) */
    int64_t dblk;               /* input blocks a depth block (a tile group's weights of it fit GR_L1_FLOATS) */
    int64_t cols;               /* columns of a padded row: (OW - 1) * sw + (S - 1) * dw + 1 */
} gr_job;

/* Input rows [ih, ih + rows) of the group's CgB blocks (planes of H x W pixels from xg), columns from -pl, cols of
 * them, into pad [cb][rows][cols][8] with zeros outside the input. */
static void gr_pad(const trtl_nchwc_grouped *d, const float *xg, int64_t CgB, int64_t ih, int64_t rows, int64_t cols,
                   float *pad)
{
    const int64_t left = d->pl < cols ? d->pl : cols;
    int64_t cn = cols - left < d->W ? cols - left : d->W; /* input columns copied */
    cn = cn < 0 ? 0 : cn;
    for (int64_t cb = 0; cb < CgB; cb++)
        for (int64_t i = 0; i < rows; i++) {
            float *p = pad + (cb * rows + i) * cols * NB;
            const int64_t r = ih + i;
            if (r < 0 || r >= d->H) {
                memset(p, 0, (size_t)(cols * NB) * sizeof(float));
                continue;
            }
            memset(p, 0, (size_t)(left * NB) * sizeof(float));
            memcpy(p + left * NB, xg + (cb * d->H + r) * d->W * NB, (size_t)(cn * NB) * sizeof(float));
            memset(p + (left + cn) * NB, 0, (size_t)((cols - left - cn) * NB) * sizeof(float));
        }
}

/* Tile group q (its first block) of the group (rw: the group's first): its nbk blocks' row view. */
static gr_row gr_tgroup_row(const trtl_nchwc_grouped *d, const gr_row *rw, int64_t q, int *nbk)
{
    const int64_t KgB = d->K / d->G / NB, TG = gr_tgroup(KgB), T = d->C / d->G * d->R * d->S;
    gr_row r = *rw;
    *nbk = (int)(KgB - q < TG ? KgB - q : TG);
    r.w = rw->w + q * T * NB, r.bias = rw->bias + q * NB, r.y = rw->y + q * rw->ys;
    r.res = rw->res ? rw->res + q * rw->ys : NULL;
    return r;
}

/* The tiles over output row pixels [lo, hi) of one tile group (r: gr_tgroup_row's). */
__attribute__((target("avx2,fma"))) static void gr_row_tiles(const trtl_nchwc_grouped *d, const gr_row *r, int nbk,
                                                             int64_t lo, int64_t hi, int32_t act, __m256 va, __m256 vb)
{
    for (int64_t ow = lo, np; ow < hi; ow += np) {
        np = gr_width(hi - ow, nbk);
        gr_tiles[d->sw == 1 || d->sw == 2 ? d->sw : 0][nbk - 1][np - 1](d, r, ow, act, va, vb);
    }
}

__attribute__((target("avx2,fma"))) static void gr_pixels(const trtl_nchwc_grouped *d, const gr_row *r, int nbk,
                                                          int64_t lo, int64_t hi, int32_t act, __m256 va, __m256 vb)
{
    for (int64_t ow = lo; ow < hi; ow++)
        gr_pixel(d, r, ow, nbk, act, va, vb);
}

/* The finished output row oh of the group's blocks: the slow activations, the channel means' sums. */
__attribute__((target("avx2,fma"))) static void gr_row_done(const trtl_nchwc_grouped *d, float *yrow, int64_t KgB,
                                                            float *msum)
{
    for (int64_t b = 0; b < KgB; b++) {
        float *yr = yrow + b * d->OH * d->OW * NB;
        if (d->e && !trtl_act_is_fast(d->e->act))
            trtl_epi_act(d->e, yr, d->OW * NB);
        if (msum) {
            __m256 s0 = _mm256_loadu_ps(msum + b * NB), s1 = _mm256_setzero_ps();
            int64_t p = 0;
            for (; p + 2 <= d->OW; p += 2) {
                s0 = _mm256_add_ps(s0, _mm256_loadu_ps(yr + p * NB));
                s1 = _mm256_add_ps(s1, _mm256_loadu_ps(yr + (p + 1) * NB));
            }
            if (p < d->OW)
                s0 = _mm256_add_ps(s0, _mm256_loadu_ps(yr + p * NB));
            _mm256_storeu_ps(msum + b * NB, _mm256_add_ps(s0, s1));
        }
    }
}

__attribute__((target("avx2,fma"))) static void gr_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const gr_job *j = (const gr_job *)ctx;
    const trtl_nchwc_grouped *d = j->d;
    const int32_t act = d->e && trtl_act_is_fast(d->e->act) ? d->e->act : TRTL_ACT_NONE;
    const __m256 va = _mm256_set1_ps(d->e ? d->e->alpha : 0.0f), vb = _mm256_set1_ps(d->e ? d->e->beta : 0.0f);
    const int64_t CB = d->C / NB, KB = d->K / NB, CgB = CB / d->G, KgB = KB / d->G, P = d->OH * d->OW;
    const int64_t T = CgB * NB * d->R * d->S, ekw = (d->S - 1) * d->dw + 1, ekh = (d->R - 1) * d->dh + 1;
    const int64_t TG = gr_tgroup(KgB);
    int64_t lo, hi; /* read in place: the interior columns (every column tap inside the row) */
    trtl_nchwc_interior(d->W, ekw, d->sw, d->pl, d->OW, &lo, &hi);
    float pad[GR_PAD_FLOATS] __attribute__((aligned(64)));
    float msum[64 * NB];
    for (int64_t item = begin * j->items / j->runs; item < end * j->items / j->runs; item++) {
        const int64_t band = item % j->bands, gn = item / j->bands, grp = gn % d->G, n = gn / d->G;
        const int64_t oh0 = band * d->OH / j->bands, oh1 = (band + 1) * d->OH / j->bands;
        const float *xg = d->x + (n * CB + grp * CgB) * d->H * d->W * NB;
        const int64_t ofs = (n * KB + grp * KgB) * P * NB;
        gr_row rw = {xg, 0, d->H * d->W * NB, d->dh * d->W * NB, d->dw * NB, 0, d->R, d->w + grp * KgB * T * NB,
                     d->b + grp * KgB * NB, d->y + ofs, d->res ? d->res + ofs : NULL, P * NB, 0, CgB, 1, 1};
        float *ms = d->mean && KgB <= 64 ? msum : NULL;
        if (ms)
            memset(ms, 0, (size_t)(KgB * NB) * sizeof(float));
        for (int64_t c0 = oh0; c0 < oh1;) {
            /* a chunk of output rows [c0, c1): padded into the buffer, or read in place (as many rows as keep their
             * input in L2: each tile group's weights are then read once a chunk, not once a row) */
            const int64_t cr = j->chunk ? j->chunk : j->ichunk;
            const int64_t nch = (oh1 - c0 + cr - 1) / cr, c1 = c0 + (oh1 - c0 + nch - 1) / nch;
            if (j->chunk) {
                const int64_t rows = (c1 - 1 - c0) * d->sh + ekh;
                gr_pad(d, xg, CgB, c0 * d->sh - d->pt, rows, j->cols, pad);
                rw.x = pad, rw.xcb = rows * j->cols * NB, rw.xrs = d->dh * j->cols * NB;
            }
            for (int64_t q = 0; q < KgB; q += TG) {
                int nbk;
                const gr_row rq = gr_tgroup_row(d, &rw, q, &nbk);
                for (int64_t cb0 = 0; cb0 < CgB; cb0 += j->dblk)
                    for (int64_t oh = c0; oh < c1; oh++) {
                        gr_row r = rq;
                        r.y = rq.y + oh * d->OW * NB, r.res = rq.res ? rq.res + oh * d->OW * NB : NULL;
                        r.cb0 = cb0, r.cb1 = cb0 + j->dblk < CgB ? cb0 + j->dblk : CgB;
                        r.first = cb0 == 0, r.last = r.cb1 == CgB;
                        if (j->chunk) {
                            r.xo = (oh - c0) * d->sh * j->cols * NB;
                            gr_row_tiles(d, &r, nbk, 0, d->OW, act, va, vb);
                        } else {
                            const int64_t ih0 = oh * d->sh - d->pt;
                            r.r0 = ih0 < 0 ? (-ih0 + d->dh - 1) / d->dh : 0;
                            r.r1 = d->H - ih0 > 0 ? (d->H - ih0 + d->dh - 1) / d->dh : 0;
                            r.r1 = r.r1 > d->R ? d->R : r.r1;
                            r.r0 = r.r0 > r.r1 ? r.r1 : r.r0;
                            r.xo = (ih0 * d->W - d->pl) * NB;
                            if (r.r1 > r.r0 && hi > lo) {
                                if (r.last) /* edge pixels: the whole depth at once */
                                    gr_pixels(d, &r, nbk, 0, lo, act, va, vb);
                                gr_row_tiles(d, &r, nbk, lo, hi, act, va, vb);
                                if (r.last)
                                    gr_pixels(d, &r, nbk, hi, d->OW, act, va, vb);
                            } else if (r.last)
                                gr_pixels(d, &r, nbk, 0, d->OW, act, va, vb);
                        }
                        if (r.last)
                            gr_row_done(d, r.y, nbk, ms ? ms + q * NB : NULL);
                    }
            }
            c0 = c1;
        }
        if (d->mean) { /* one band: the whole plane */
            float *m = d->mean + n * d->K + grp * KgB * NB;
            if (ms)
                for (int64_t k = 0; k < KgB * NB; k++)
                    m[k] = ms[k] / (float)P;
            else /* groups of more than 64 blocks: summed from the finished planes */
                for (int64_t k = 0; k < KgB * NB; k++) {
                    double s = 0.0;
                    for (int64_t p = 0; p < P; p++)
                        s += rw.y[(k / NB * P + p) * NB + k % NB];
                    m[k] = (float)(s / (double)P);
                }
        }
    }
}

/* Items of (image, group, band of output rows): bands only where there are fewer than 8 groups a thread and no
 * channel means (one band sums a whole plane); cut by trtl_nchwc_even_runs. */
void trtl_nchwc_grouped_run(const trtl_nchwc_grouped *d, trtl_threadpool *pool)
{
    const int64_t threads = trtl_threadpool_size(pool), planes = d->N * d->G, CgB = d->C / d->G / NB;
    const int64_t ekw = (d->S - 1) * d->dw + 1, ekh = (d->R - 1) * d->dh + 1;
    gr_job j = {d, 1, 0, 1, 0, 1, CgB, (d->OW - 1) * d->sw + ekw};
    const int64_t tg_floats = NB * d->R * d->S * gr_tgroup(d->K / d->G / NB) * NB; /* an input block's weights */
    const size_t ybytes = (size_t)(d->N * d->K * d->OH * d->OW) * sizeof(float);
    const int res_in_y = d->res && (const char *)d->res < (const char *)d->y + ybytes &&
                         (const char *)d->y < (const char *)d->res + ybytes; /* partial sums would overwrite it */
    if (CgB * tg_floats > GR_L1_FLOATS && !res_in_y) { /* as few blocks as fit, as even as possible */
        const int64_t mx = GR_L1_FLOATS / tg_floats > 1 ? GR_L1_FLOATS / tg_floats : 1, nd = (CgB + mx - 1) / mx;
        j.dblk = (CgB + nd - 1) / nd;
    }
    if (threads > 1 && !d->mean && planes < 8 * threads)
        j.bands = (8 * threads + planes - 1) / planes < d->OH ? (8 * threads + planes - 1) / planes : d->OH;
    /* padded copies where some tap lies outside the input and one output row's input fits the buffer */
    int64_t lo, hi;
    trtl_nchwc_interior(d->W, ekw, d->sw, d->pl, d->OW, &lo, &hi);
    const int inside = lo == 0 && hi == d->OW && d->pt == 0 && (d->OH - 1) * d->sh + ekh <= d->H;
    const int64_t fit_rows = GR_PAD_FLOATS / (CgB * j.cols * NB);
    if (!inside && fit_rows >= ekh && d->finite)
        j.chunk = (fit_rows - ekh) / d->sh + 1;
    const int64_t l2_rows = GR_L2_FLOATS / (CgB * d->W * NB); /* input rows of the group's blocks in the budget */
    j.ichunk = l2_rows > ekh ? (l2_rows - ekh) / d->sh + 1 : 1;
    j.items = planes * j.bands;
    trtl_nchwc_even_runs(j.items, threads, &j.runs);
    trtl_parallel_for(pool, j.runs, 1, gr_task, &j);
}
