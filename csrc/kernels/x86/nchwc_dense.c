/* nchwc_dense.c -- the dense path of "nchwc_conv.avx2": groups 1, 1..16 input channels, kernels up to 7x7, strides
 * 1..4, dilation 1, any padding; plain NCHW input read in place, blocked output (B = 8).  (Input and output channels
 * both multiples of 8 go to the grouped path with one group, x86/nchwc_grouped.c, which reads any layout.)  The stem of MobileNet-style
 * nets (3x3 s2, 3 -> 16/24/32) written straight into the blocked region its depthwise reader starts.
 *
 * Output channels are in the vector: a register tile of NP output pixels x NBK output blocks (8x1, 6x2, 4x3, 3x4:
 * 8-12 accumulators), per tap NP broadcast input values and NBK weight vectors (whichever are fewer held in
 * registers).  The K output blocks are cut into groups of NBK <= 4 blocks (as few groups as possible, as even as
 * possible: 5 blocks are 3 + 2); weights packed once as [group][c, kh, kw][NBK * 8] (zero past K).  Interior pixels
 * (every column tap inside the row) go through the tiles (a row's last < NP of them one pixel at a time), the
 * edge pixels through a per-pixel loop over the taps inside; rows whose taps reach into the padding only skip those
 * kernel rows.  Bias, residual and ReLU / clip / leaky in registers, other activations over each finished row of a
 * block.  Lanes past K are cleared before the residual (weights 0 times a NaN or infinite input would be NaN), so
 * they come out act(0 + residual) as in the other blocked paths.  Work: items of (image, band of output rows), all
 * output blocks of a row together (its input rows stay in L1), cut by trtl_nchwc_even_runs. */
#include <string.h>
#include <immintrin.h>

#include "kernels/nchwc.h"
#include "kernels/x86/nchwc_dense.h"
#include "kernels/x86/nchwc_bcast.h"
#include "kernels/x86/fused_epilogue.h"

#define NB 8
#define DN_MAXC 16
#define DN_MAXK 7
#define DN_MAXSTRIDE 4
#define DN_MAXG TRTL_NCB_MAXG /* output blocks a tile */

int trtl_nchwc_conv_dense(const trtl_conv_params *p, int64_t C)
{
    if (trtl_nchwc_conv_pointwise(p) || p->num_groups != 1 || C < 1 || C > DN_MAXC || p->kernel_size.nb_dims != 2 ||
        p->stride.nb_dims != 2 || p->dilation.nb_dims != 2 || p->num_output_maps < 1)
        return 0;
    if (p->num_output_maps == 1 && C == 1) /* also depthwise: that path takes it (any layout) */
        return 0;
    if (C % NB == 0 && p->num_output_maps % NB == 0) /* the grouped path's (G = 1), any layouts */
        return 0;
    for (int i = 0; i < 2; i++)
        if (p->kernel_size.d[i] < 1 || p->kernel_size.d[i] > DN_MAXK || p->stride.d[i] < 1 ||
            p->stride.d[i] > DN_MAXSTRIDE || p->dilation.d[i] != 1)
            return 0;
    return p->kernel.type == TRTL_FLOAT && (!p->bias.count || p->bias.type == TRTL_FLOAT) &&
           p->kernel.count == p->num_output_maps * C * p->kernel_size.d[0] * p->kernel_size.d[1] &&
           (!p->bias.count || p->bias.count == p->num_output_maps);
}

/* Blocks a group (a tile's NBK) for KB output blocks: the fewest groups of <= DN_MAXG, as even as possible. */
static int64_t dn_group(int64_t KB)
{
    const int64_t ng = (KB + DN_MAXG - 1) / DN_MAXG;
    return ng > 0 ? (KB + ng - 1) / ng : 1;
}

/* Offset of weight (k, tap t) in the packed layout [group][t][nbk][8]. */
static int64_t dn_at(int64_t K, int64_t T, int64_t k, int64_t t)
{
    const int64_t KB = trtl_nchwc_blocks(K, NB), G = dn_group(KB), kb = k / NB, gi = kb / G;
    const int64_t nbk = KB - gi * G < G ? KB - gi * G : G;
    return gi * G * T * NB + (t * nbk + kb % G) * NB + k % NB;
}

void trtl_nchwc_dense_pack(const float *src, int64_t K, int64_t T, float *dst)
{
    for (int64_t k = 0; k < K; k++)
        for (int64_t t = 0; t < T; t++)
            dst[dn_at(K, T, k, t)] = src[k * T + t];
}

void trtl_nchwc_dense_unpack(const float *packed, int64_t K, int64_t T, float *dst)
{
    for (int64_t k = 0; k < K; k++)
        for (int64_t t = 0; t < T; t++)
            memcpy(dst + k * T + t, packed + dn_at(K, T, k, t), sizeof(float));
}

/* One output row of one block group: where it is, what it reads. */
typedef struct dn_row {
    const float *x;    /* the image's input [C][H][W] */
    const float *w;    /* the group's packed weights [C * R * S][nbk][8] */
    const float *bias; /* the group's bias [nbk][8] */
    float *y;          /* the group's first block at row oh: [block b at b * ys][OW][8] */
    const float *res;  /* the residual likewise, or NULL */
    int64_t ys, r0, r1; /* block stride; kernel rows [r0, r1) inside the input */
    int64_t xo;         /* offset of (input row oh * sh - pt, column -pl) in a channel plane (may be < 0) */
    __m256 mask;       /* the group's last block: lanes < K */
} dn_row;

/* np output pixels from ow (every column tap inside) x nbk blocks. */
__attribute__((target("avx2,fma"), always_inline)) static inline void dn_tile(const trtl_nchwc_dense *d,
                                                                             const dn_row *rw, int64_t ow, int32_t act,
                                                                             __m256 va, __m256 vb, const int np,
                                                                             const int nbk)
{
    __m256 acc[TRTL_NCB_MAXP][TRTL_NCB_MAXG];
    const int64_t S = d->S, sw = d->sw, HW = d->H * d->W, RS = d->R * S;
#pragma GCC unroll 8
    for (int j = 0; j < np; j++)
#pragma GCC unroll 4
        for (int b = 0; b < nbk; b++)
            acc[j][b] = _mm256_loadu_ps(rw->bias + b * NB);
    for (int64_t c = 0; c < d->C; c++)
        for (int64_t r = rw->r0; r < rw->r1; r++) {
            const float *xr = rw->x + (c * HW + r * d->W + rw->xo + ow * sw); /* inside: r >= r0, ow >= lo */
            const float *wr = rw->w + (c * RS + r * S) * nbk * NB;
            for (int64_t t = 0; t < S; t++, wr += nbk * NB)
                trtl_ncb_step(acc, xr + t, sw, wr, np, nbk);
        }
#pragma GCC unroll 4
    for (int b = 0; b < nbk; b++)
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) {
            __m256 v = b == nbk - 1 ? _mm256_and_ps(acc[j][b], rw->mask) : acc[j][b];
            if (rw->res)
                v = _mm256_add_ps(v, _mm256_loadu_ps(rw->res + b * rw->ys + (ow + j) * NB));
            _mm256_storeu_ps(rw->y + b * rw->ys + (ow + j) * NB, trtl_act8(v, act, va, vb));
        }
}

#define DN_TILE_FN(NP, NBK)                                                                                           \
    __attribute__((target("avx2,fma"), noinline)) static void dn_tile_##NP##_##NBK(                                  \
        const trtl_nchwc_dense *d, const dn_row *rw, int64_t ow, int32_t act, __m256 va, __m256 vb)                  \
    {                                                                                                                 \
        dn_tile(d, rw, ow, act, va, vb, NP, NBK);                                                                     \
    }
/* per NBK: the full tile and the single pixel of a row's last interior pixels */
#define DN_TILES(X) X(8, 1) X(1, 1) X(6, 2) X(1, 2) X(4, 3) X(1, 3) X(3, 4) X(1, 4)
DN_TILES(DN_TILE_FN)
typedef void (*dn_tile_fn)(const trtl_nchwc_dense *, const dn_row *, int64_t, int32_t, __m256, __m256);
#define DN_ENTRY(NP, NBK) [NBK - 1][NP > 1] = dn_tile_##NP##_##NBK,
static const dn_tile_fn dn_tiles[DN_MAXG][2] = {DN_TILES(DN_ENTRY)};
static const int dn_np[DN_MAXG] = {8, 6, 4, 3};

/* One output pixel anywhere (column taps outside the input skipped), nbk blocks. */
__attribute__((target("avx2,fma"))) static void dn_pixel(const trtl_nchwc_dense *d, const dn_row *rw, int64_t ow,
                                                         int64_t nbk, int32_t act, __m256 va, __m256 vb)
{
    __m256 acc[DN_MAXG];
    for (int64_t b = 0; b < nbk; b++)
        acc[b] = _mm256_loadu_ps(rw->bias + b * NB);
    const int64_t iw0 = ow * d->sw, S = d->S; /* rw->x is at column -pl */
    const int64_t t0 = iw0 < d->pl ? d->pl - iw0 : 0, t1 = d->W + d->pl - iw0 < S ? d->W + d->pl - iw0 : S;
    for (int64_t c = 0; c < d->C; c++)
        for (int64_t r = rw->r0; r < rw->r1; r++) {
            const float *xr = rw->x + (c * d->H * d->W + r * d->W + rw->xo + iw0 + t0); /* tap t0, inside */
            const float *wr = rw->w + (c * d->R + r) * S * nbk * NB;
            for (int64_t t = t0; t < t1; t++) {
                const __m256 xv = _mm256_broadcast_ss(xr + (t - t0));
                for (int64_t b = 0; b < nbk; b++)
                    acc[b] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wr + (t * nbk + b) * NB), acc[b]);
            }
        }
    for (int64_t b = 0; b < nbk; b++) {
        __m256 v = b == nbk - 1 ? _mm256_and_ps(acc[b], rw->mask) : acc[b];
        if (rw->res)
            v = _mm256_add_ps(v, _mm256_loadu_ps(rw->res + b * rw->ys + ow * NB));
        _mm256_storeu_ps(rw->y + b * rw->ys + ow * NB, trtl_act8(v, act, va, vb));
    }
}

typedef struct dn_job {
    const trtl_nchwc_dense *d;
    int64_t bands, items, runs; /* item = n * bands + band of output rows */
} dn_job;

__attribute__((target("avx2,fma"))) static void dn_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const dn_job *j = (const dn_job *)ctx;
    const trtl_nchwc_dense *d = j->d;
    const trtl_epilogue *e = d->e;
    const int32_t act = trtl_act_is_fast(e->act) ? e->act : TRTL_ACT_NONE;
    const __m256 va = _mm256_set1_ps(e->alpha), vb = _mm256_set1_ps(e->beta);
    const int64_t KB = trtl_nchwc_blocks(d->K, NB), G = dn_group(KB), T = d->C * d->R * d->S, P = d->OH * d->OW;
    int64_t lo, hi; /* interior columns: every column tap inside the row */
    trtl_nchwc_interior(d->W, d->S, d->sw, d->pl, d->OW, &lo, &hi);
    const __m256 ones = _mm256_castsi256_ps(_mm256_set1_epi32(-1)); /* the last block's lanes < K: */
    const __m256 tmask = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(d->K - (KB - 1) * NB)),
                                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    for (int64_t item = begin * j->items / j->runs; item < end * j->items / j->runs; item++) {
        const int64_t n = item / j->bands, band = item % j->bands;
        for (int64_t oh = band * d->OH / j->bands; oh < (band + 1) * d->OH / j->bands; oh++) {
            const int64_t ih0 = oh * d->sh - d->pt;
            const int64_t r0 = ih0 < 0 ? -ih0 : 0, r1e = d->H - ih0 < d->R ? d->H - ih0 : d->R;
            for (int64_t g0 = 0; g0 < KB; g0 += G) {
                const int64_t nbk = KB - g0 < G ? KB - g0 : G, ofs = ((n * KB + g0) * d->OH + oh) * d->OW * NB;
                const dn_row rw = {d->x + n * d->C * d->H * d->W, d->w + g0 * T * NB, d->b + g0 * NB, d->y + ofs,
                                   d->res ? d->res + ofs : NULL, P * NB, r0, r1e > r0 ? r1e : r0,
                                   ih0 * d->W - d->pl, g0 + nbk == KB ? tmask : ones};
                const int np = dn_np[nbk - 1];
                const dn_tile_fn full = dn_tiles[nbk - 1][1], one = dn_tiles[nbk - 1][0];
                int64_t ow = 0;
                for (; ow < lo; ow++)
                    dn_pixel(d, &rw, ow, nbk, act, va, vb);
                for (; ow + np <= hi; ow += np)
                    full(d, &rw, ow, act, va, vb);
                for (; ow < hi; ow++)
                    one(d, &rw, ow, act, va, vb);
                for (; ow < d->OW; ow++)
                    dn_pixel(d, &rw, ow, nbk, act, va, vb);
                if (!trtl_act_is_fast(e->act))
                    for (int64_t b = 0; b < nbk; b++)
                        trtl_epi_act(e, rw.y + b * rw.ys, d->OW * NB);
            }
        }
    }
}

/* Items of (image, band of output rows): one band an image on one thread, else at least 4 items a thread. */
void trtl_nchwc_dense_run(const trtl_nchwc_dense *d, trtl_threadpool *pool)
{
    const int64_t threads = trtl_threadpool_size(pool);
    dn_job j = {d, 1, 0, 1};
    if (threads > 1 && d->N < 4 * threads)
        j.bands = (4 * threads + d->N - 1) / d->N < d->OH ? (4 * threads + d->N - 1) / d->N : d->OH;
    j.items = d->N * j.bands;
    trtl_nchwc_even_runs(j.items, threads, &j.runs);
    trtl_parallel_for(pool, j.runs, 1, dn_task, &j);
}
