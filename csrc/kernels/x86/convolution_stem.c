/*
 * convolution_stem.c -- "convolution.stem": dense 2-D convolutions with few input channels (1..16, groups 1), any
 * kernel size, stride, dilation and padding: the first layer of nearly every CNN (3 -> 16/32/64 channels, 3x3 s2,
 * 7x7 s2, 3x3 s1, 4x4 s4 patchify), whose GEMM form has a depth of only C*kh*kw (27 for a 3x3 stem), so the
 * packed GEMM spends its time packing im2col columns instead of multiplying.
 *
 * Work item (image, band of R output rows), in a slot's scratch:
 *   1. the band's input rows of all C channels are copied zero-padded and split into s1 x s2 stride-phase planes
 *      (padded row s1*(oh0 + i) + a, column s2*j + b go to phase plane (c, a, b) at (i, j); planes wh wide, wh at
 *      least the output row's whole vectors plus the taps' column reach), so tap (c, kh, kw) of the output pixels
 *      (oh, ow .. ow + VL - 1) is one contiguous load at a fixed offset from (oh - oh0)*wh + ow;
 *   2. per block of KT output channels (weights arranged once in prepare() as [block][c, kh, kw][KT], zero past K),
 *      per output row of the band, tiles of KT channels x V vectors of output pixels accumulate in registers from
 *      the bias over the taps (one contiguous load per vector, KT broadcast weights per tap) and are stored straight
 *      into the NCHW output rows (partial vectors / channel blocks through a small buffer).  AVX-512: KT = 8, V = 3
 *      vectors of 16 (24 accumulators); AVX2: KT = 4, V = 3 vectors of 8 (12); portable: the same tile in scalars;
 *   3. the block's band rows (contiguous per channel, still in cache) get the residual and the activation.
 * Padding is read as zeros and multiplied like the image (0 * NaN = NaN, as the reference).  Items are split over
 * the pool's threads in contiguous runs, stolen by threads that finish first (trtl_runs_plan / trtl_runs_for).
 *
 * applies(): groups 1, 1..STEM_MAX_C input channels, 2-D (or 1-D), C*kh*kw <= STEM_MAX_TAPS, a band of one row fits
 * the slot limit.  A run at a shape that does not fit (or with too little scratch) computes the reference.
 */
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/ref/ref.h"
#include "kernels/x86/convolution_unpacked.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/tap_tile.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#define STEM_MAX_C 16
#define STEM_MAX_TAPS 1024          /* C * kh * kw at most (ViT's 16x16 patches of 3 channels: 768) */
#define STEM_MAX_KT 8               /* output channels per register tile, at most */
#define STEM_MAX_VL 16              /* lanes per vector, at most */
#define STEM_MAX_SLOTS 64
#define STEM_MAX_SLOT_FLOATS (1 << 20)
#ifndef STEM_BAND_FLOATS /* (-D for experiments) */
#define STEM_BAND_FLOATS 8192 /* a band's planes: ~32 KiB, in L1 / L2 while its channel blocks read it */
#endif

typedef enum stem_isa { STEM_PORTABLE = 0, STEM_AVX2 = 1, STEM_AVX512 = 2 } stem_isa;

typedef struct stem_state {
    stem_isa isa;
    int64_t K, C, kvol, kt, nkb;
    float *w; /* [nkb][C*kvol][kt] */
    size_t packed_bytes;
} stem_state;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t isa_lanes(stem_isa isa) { return isa == STEM_AVX512 ? 16 : 8; }
static int64_t isa_kt(stem_isa isa) { return isa == STEM_AVX512 ? 8 : 4; }

/* The band and plane sizes of geometry g for vectors of vl lanes. */
typedef struct stem_layout {
    int64_t s1, s2, vl, nv, wh, hh, rows, plane, slot, nbands;
} stem_layout;

static void layout(const trtl_conv_geom *g, int64_t vl, int64_t threads, stem_layout *l)
{
    l->s1 = g->s[1];
    l->s2 = g->s[2];
    l->vl = vl;
    l->nv = ceil_div(g->out[2], vl);
    l->wh = l->nv * vl + (g->k[2] - 1) * g->dl[2] / l->s2;
    const int64_t reach = (g->k[1] - 1) * g->dl[1] / l->s1; /* extra phase rows below a band */
    const int64_t per_row = g->C * l->s1 * l->s2 * l->wh;
    int64_t rows = STEM_BAND_FLOATS / per_row - reach;
    if (rows < 1)
        rows = 1;
    if (rows > g->out[1])
        rows = g->out[1];
    /* at least ~4 runs a thread over the batch, so that stealing has something to take */
    const int64_t want_bands = ceil_div(4 * (threads < 1 ? 1 : threads), g->N < 1 ? 1 : g->N);
    if (ceil_div(g->out[1], rows) < want_bands) {
        rows = ceil_div(g->out[1], want_bands);
        if (rows < 1)
            rows = 1;
    }
    l->rows = rows;
    l->nbands = ceil_div(g->out[1], rows);
    l->hh = rows + reach;
    l->plane = l->hh * l->wh;
    l->slot = (g->C * l->s1 * l->s2 * l->plane + 15) / 16 * 16;
}

static int fits(const trtl_conv_geom *g)
{
    if (g->G != 1 || g->C < 1 || g->C > STEM_MAX_C || g->K < 1 || !trtl_conv_geom_2d(g) ||
        g->C * g->kvol > STEM_MAX_TAPS || g->P < 1)
        return 0;
    stem_layout l;
    layout(g, 16, 1, &l);
    return l.slot <= STEM_MAX_SLOT_FLOATS && l.slot * (int64_t)sizeof(float) < INT32_MAX;
}

typedef struct stem_job {
    const trtl_conv_geom *g;
    const stem_state *st;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y, *base;
    stem_layout l;
    int32_t off[STEM_MAX_TAPS]; /* tap (c, kh, kw): its phase plane and offset from the plane base */
} stem_job;

/* Stride-2 column split, AVX2: src's n floats (src[2*jj] -> even[jj], src[2*jj + 1] -> odd[jj]). */
__attribute__((target("avx2,fma"))) static void split2_avx2(const float *src, int64_t n, float *even, float *odd)
{
    int64_t jj = 0;
    for (; 2 * jj + 16 <= n; jj += 8) {
        const __m256 a = _mm256_loadu_ps(src + 2 * jj), b = _mm256_loadu_ps(src + 2 * jj + 8);
        /* per 128-bit lane: a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit quarters reordered to a0 a2 a4 a6 b0 b2 b4 b6 */
        const __m256 e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xDD);
        _mm256_storeu_ps(even + jj, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
        _mm256_storeu_ps(odd + jj, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8)));
    }
    for (; 2 * jj < n; jj++) {
        even[jj] = src[2 * jj];
        if (2 * jj + 1 < n)
            odd[jj] = src[2 * jj + 1];
    }
}

/* Step 1: input rows of band [oh0, ...) of image x (C planes) into the zero-padded phase planes. */
static void build_planes(const stem_job *j, const float *x, int64_t oh0, float *planes)
{
    const trtl_conv_geom *g = j->g;
    const stem_layout *l = &j->l;
    const int64_t H = g->in[1], W = g->in[2], pt = g->pad[1], pl = g->pad[2], s2 = l->s2, wh = l->wh;
    /* padded columns [0, s2 * wh) of a row: those inside the image, [ulo, uhi), start at input column ulo - pl */
    int64_t ulo, uhi;
    trtl_conv_row_span(-pl, 1, W, s2 * wh, &ulo, &uhi);
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t a = 0; a < l->s1; a++)
            for (int64_t i = 0; i < l->hh; i++) {
                const int64_t ih = l->s1 * (oh0 + i) + a - pt;
                float *dst0 = planes + (c * l->s1 + a) * s2 * l->plane + i * wh; /* phase b at + b * plane */
                if (ih < 0 || ih >= H || ulo >= uhi) {
                    for (int64_t b = 0; b < s2; b++)
                        memset(dst0 + b * l->plane, 0, (size_t)wh * sizeof(float));
                    continue;
                }
                const float *row = x + (c * H + ih) * W + ulo - pl;
                for (int64_t b = 0; b < s2; b++) { /* the padding: phase columns before / after the image */
                    const int64_t lo = (ulo - b + s2 - 1) / s2, hi = (uhi - b + s2 - 1) / s2;
                    memset(dst0 + b * l->plane, 0, (size_t)lo * sizeof(float));
                    memset(dst0 + b * l->plane + hi, 0, (size_t)(wh - hi) * sizeof(float));
                }
                if (s2 == 1) {
                    memcpy(dst0 + ulo, row, (size_t)(uhi - ulo) * sizeof(float));
                } else if (s2 == 2 && j->st->isa != STEM_PORTABLE) {
                    const int64_t b = ulo % 2; /* row[0] is padded column ulo: phase b, column ulo / 2 */
                    split2_avx2(row, uhi - ulo, dst0 + b * l->plane + ulo / 2, dst0 + (1 - b) * l->plane + (ulo + 1) / 2);
                } else { /* phase b: padded columns u = s2 * jj + b of [ulo, uhi) */
                    for (int64_t b = 0; b < s2; b++) {
                        const int64_t lo = (ulo - b + s2 - 1) / s2, hi = (uhi - b + s2 - 1) / s2;
                        float *dst = dst0 + b * l->plane;
                        const float *src = row + s2 * lo + b - ulo;
                        for (int64_t jj = lo; jj < hi; jj++, src += s2)
                            dst[jj] = *src;
                    }
                }
            }
}

/* What a tile applies in registers: the residual (r: at y's offsets, or NULL) and a fast activation (fused: the
 * node's activation satisfies trtl_act_is_fast), else nothing (step 3 then applies both). */
typedef struct stem_epi {
    const float *r;
    int32_t act;
    float alpha, beta;
} stem_epi;

/* Step 2's partial tiles: kn channels and nw pixels of buf (row stride ldb) into y (channel stride ldy). */
static void store_part(const float *buf, int64_t ldb, int64_t kn, int64_t nw, float *y, int64_t ldy)
{
    for (int64_t k = 0; k < kn; k++)
        memcpy(y + k * ldy, buf + k * ldb, (size_t)nw * sizeof(float));
}

/* The residual of a partial tile: kn rows of nw floats of r (row stride ldy) into rb (row stride ldb), zero past
 * them (rb is zeroed by the caller). */
static void load_part(const float *r, int64_t ldy, int64_t kn, int64_t nw, float *rb, int64_t ldb)
{
    for (int64_t k = 0; k < kn; k++)
        memcpy(rb + k * ldb, r + k * ldy, (size_t)nw * sizeof(float));
}

/* Step 2, AVX-512: KT = 8 channels x V vectors of 16 pixels. */
__attribute__((target("avx512f"), always_inline)) static inline void tile512(const float *x, const int32_t *off,
                                                                              int64_t ntaps, const float *w,
                                                                              const float *b8, float *y, int64_t ldy,
                                                                              int64_t kn, int64_t nw, const int V,
                                                                              const stem_epi *e)
{
    __m512 acc[8][3];
    trtl_tap_tile16(x, off, ntaps, w, 8, b8, V, acc);
    const __m512 va = _mm512_set1_ps(e->alpha), vb = _mm512_set1_ps(e->beta);
    const int full = kn == 8 && nw == 16 * V;
    float buf[8][48], rb[8][48];
    const float *r = e->r;
    int64_t ldr = ldy;
    if (r && !full) { /* the residual's valid lanes, zero past them */
        memset(rb, 0, sizeof rb);
        load_part(r, ldy, kn, nw, &rb[0][0], 48);
        r = &rb[0][0];
        ldr = 48;
    }
    float *o = full ? y : &buf[0][0];
    const int64_t ldo = full ? ldy : 48;
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++)
#pragma GCC unroll 3
        for (int v = 0; v < V; v++) {
            __m512 t = acc[k][v];
            if (r)
                t = _mm512_add_ps(t, _mm512_loadu_ps(r + k * ldr + 16 * v));
            _mm512_storeu_ps(o + k * ldo + 16 * v, trtl_act16(t, e->act, va, vb));
        }
    if (!full)
        store_part(&buf[0][0], 48, kn, nw, y, ldy);
}

/* Step 2, AVX2: KT = 4 channels x V vectors of 8 pixels (12 accumulators, 3 inputs and a weight: 16 registers). */
__attribute__((target("avx2,fma"), always_inline)) static inline void tile256(const float *x, const int32_t *off,
                                                                              int64_t ntaps, const float *w,
                                                                              const float *b4, float *y, int64_t ldy,
                                                                              int64_t kn, int64_t nw, const int V,
                                                                              const stem_epi *e)
{
    __m256 acc[4][3];
    trtl_tap_tile8(x, off, ntaps, w, 4, b4, V, acc);
    const __m256 va = _mm256_set1_ps(e->alpha), vb = _mm256_set1_ps(e->beta);
    const int full = kn == 4 && nw == 8 * V;
    float buf[4][24], rb[4][24];
    const float *r = e->r;
    int64_t ldr = ldy;
    if (r && !full) { /* the residual's valid lanes, zero past them */
        memset(rb, 0, sizeof rb);
        load_part(r, ldy, kn, nw, &rb[0][0], 24);
        r = &rb[0][0];
        ldr = 24;
    }
    float *o = full ? y : &buf[0][0];
    const int64_t ldo = full ? ldy : 24;
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
#pragma GCC unroll 3
        for (int v = 0; v < V; v++) {
            __m256 t = acc[k][v];
            if (r)
                t = _mm256_add_ps(t, _mm256_loadu_ps(r + k * ldr + 8 * v));
            _mm256_storeu_ps(o + k * ldo + 8 * v, trtl_act8(t, e->act, va, vb));
        }
    if (!full)
        store_part(&buf[0][0], 24, kn, nw, y, ldy);
}

/* Step 2, portable: the AVX2 tile's arithmetic in scalars (KT = 4, nw pixels). */
static void tile_portable(const float *x, const int32_t *off, int64_t ntaps, const float *w, const float *b4,
                          float *y, int64_t ldy, int64_t kn, int64_t nw, const stem_epi *e)
{
    for (int64_t i = 0; i < nw; i++) {
        float acc[4] = {b4[0], b4[1], b4[2], b4[3]};
        const float *wt = w;
        for (int64_t t = 0; t < ntaps; t++, wt += 4) {
            const float xv = x[off[t] + i];
            for (int k = 0; k < 4; k++)
                acc[k] += xv * wt[k];
        }
        for (int64_t k = 0; k < kn; k++) {
            const float v = acc[k] + (e->r ? e->r[k * ldy + i] : 0.0f);
            y[k * ldy + i] = e->act == TRTL_ACT_NONE ? v : trtl_activation_eval(e->act, e->alpha, e->beta, v);
        }
    }
}

/* Step 2 over one output row: tiles of up to 3 vectors along the row (e->r at y's offsets). */
__attribute__((target("avx512f"))) static void row512(const float *x, const int32_t *off, int64_t ntaps,
                                                       const float *w, const float *b, float *y, int64_t ldy,
                                                       int64_t kn, int64_t OW, const stem_epi *e)
{
    int64_t ow = 0;
    stem_epi et = *e;
    for (; ow + 48 <= OW; ow += 48) {
        et.r = e->r ? e->r + ow : NULL;
        tile512(x + ow, off, ntaps, w, b, y + ow, ldy, kn, 48, 3, &et);
    }
    const int64_t left = OW - ow;
    et.r = e->r ? e->r + ow : NULL;
    if (left > 32)
        tile512(x + ow, off, ntaps, w, b, y + ow, ldy, kn, left, 3, &et);
    else if (left > 16)
        tile512(x + ow, off, ntaps, w, b, y + ow, ldy, kn, left, 2, &et);
    else if (left > 0)
        tile512(x + ow, off, ntaps, w, b, y + ow, ldy, kn, left, 1, &et);
}

__attribute__((target("avx2,fma"))) static void row256(const float *x, const int32_t *off, int64_t ntaps,
                                                        const float *w, const float *b, float *y, int64_t ldy,
                                                        int64_t kn, int64_t OW, const stem_epi *e)
{
    int64_t ow = 0;
    stem_epi et = *e;
    for (; ow + 24 <= OW; ow += 24) {
        et.r = e->r ? e->r + ow : NULL;
        tile256(x + ow, off, ntaps, w, b, y + ow, ldy, kn, 24, 3, &et);
    }
    const int64_t left = OW - ow;
    et.r = e->r ? e->r + ow : NULL;
    if (left > 16)
        tile256(x + ow, off, ntaps, w, b, y + ow, ldy, kn, left, 3, &et);
    else if (left > 8)
        tile256(x + ow, off, ntaps, w, b, y + ow, ldy, kn, left, 2, &et);
    else if (left > 0)
        tile256(x + ow, off, ntaps, w, b, y + ow, ldy, kn, left, 1, &et);
}

/* Items [ib, ie) (trtl_runs_for) on the band planes of scratch slot `slot`. */
static void run_items(void *ctx, int64_t slot, int64_t r, int64_t ib, int64_t ie)
{
    (void)r;
    const stem_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const stem_state *st = j->st;
    const stem_layout *l = &j->l;
    const int64_t ntaps = g->C * g->kvol, OH = g->out[1], OW = g->out[2], P = g->P, kt = st->kt;
    const int fused = trtl_act_is_fast(j->epi->act);
    float *planes = j->base + slot * l->slot;
    for (int64_t it = ib; it < ie; it++) {
        const int64_t n = it / l->nbands, oh0 = it % l->nbands * l->rows;
        const int64_t rows = OH - oh0 < l->rows ? OH - oh0 : l->rows;
        build_planes(j, j->x + n * g->C * g->in_sp, oh0, planes);
        for (int64_t kb = 0; kb < st->nkb; kb++) {
            const int64_t k0 = kb * kt, kn = g->K - k0 < kt ? g->K - k0 : kt;
            const float *w = st->w + kb * ntaps * kt;
            float b[STEM_MAX_KT] = {0};
            for (int64_t k = 0; k < kn; k++)
                b[k] = j->bias ? j->bias[k0 + k] : 0.0f;
            float *yb = j->y + (n * g->K + k0) * P + oh0 * OW;
            /* residual and a fast activation in the tiles' registers, else after the band (step 3) */
            const float *rb = j->res ? j->res + (yb - j->y) : NULL;
            for (int64_t lo = 0; lo < rows; lo++) {
                const float *xr = planes + lo * l->wh;
                float *yr = yb + lo * OW;
                const stem_epi e = {fused && rb ? rb + lo * OW : NULL, fused ? j->epi->act : TRTL_ACT_NONE,
                                    j->epi->alpha, j->epi->beta};
                if (st->isa == STEM_AVX512)
                    row512(xr, j->off, ntaps, w, b, yr, P, kn, OW, &e);
                else if (st->isa == STEM_AVX2)
                    row256(xr, j->off, ntaps, w, b, yr, P, kn, OW, &e);
                else
                    tile_portable(xr, j->off, ntaps, w, b, yr, P, kn, OW, &e);
            }
            /* step 3: the block's band rows (contiguous per channel) + residual, then the activation */
            for (int64_t k = 0; k < kn && !fused; k++) {
                float *yk = yb + k * P;
                if (rb)
                    for (int64_t i = 0; i < rows * OW; i++)
                        yk[i] += rb[k * P + i];
                trtl_epi_act(j->epi, yk, rows * OW);
            }
        }
    }
}

static int64_t max_slots(void) { return trtl_scratch_slots_all(STEM_MAX_SLOTS); }

static void stem_unpack(const trtl_node *nd, const void *state, void *dst);

static trtl_status stem_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const stem_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!st || st->K != g.K || st->C != g.C * g.G || st->kvol != g.kvol)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.stem run without its weights", nd->name);
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    const size_t job_bytes = (sizeof(stem_job) + 63) / 64 * 64;
    const double flops = 2.0 * (double)g.N * (double)g.K * (double)g.C * (double)g.kvol * (double)g.P;
    int64_t slots = trtl_threads_for(a->pool, flops);
    stem_layout l;
    int ok = fits(&g);
    if (ok) {
        layout(&g, isa_lanes(st->isa), slots, &l);
        ok = a->scratch && a->scratch_size >= job_bytes + (size_t)l.slot * sizeof(float) + 128;
    }
    if (!ok)
        return trtl_conv_reference_fallback(a, res, stem_unpack); /* a shape the direct path does not take */
    stem_job *j = (stem_job *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    memset(j, 0, offsetof(stem_job, off));
    j->g = &g;
    j->st = st;
    j->l = l;
    j->epi = &nd->epi;
    j->x = (const float *)a->in[0].data;
    j->bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j->res = res;
    j->y = (float *)a->out[0].data;
    j->base = (float *)((char *)j + job_bytes);
    for (int64_t c = 0, t = 0; c < g.C; c++)
        for (int64_t kh = 0; kh < g.k[1]; kh++)
            for (int64_t kw = 0; kw < g.k[2]; kw++, t++) {
                const int64_t dh = kh * g.dl[1], dw = kw * g.dl[2];
                j->off[t] = (int32_t)(((c * l.s1 + dh % l.s1) * l.s2 + dw % l.s2) * l.plane + (dh / l.s1) * l.wh +
                                      dw / l.s2);
            }
    const size_t avail = (a->scratch_size - job_bytes - 128) / sizeof(float);
    if ((int64_t)(avail / (size_t)l.slot) < slots)
        slots = (int64_t)(avail / (size_t)l.slot);
    const trtl_runs runs = trtl_runs_plan(a->pool, slots, g.N * l.nbands);
    trtl_runs_for(a->pool, &runs, run_items, j);
    return TRTL_OK;
}

static size_t stem_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (!fits(&g))
        return trtl_conv_unpacked_bytes(nd); /* the reference fallback rebuilds the plain weights there */
    /* the largest slot of any ISA and thread count (the band rows shrink with more threads, never grow) */
    stem_layout l8, l16;
    layout(&g, 8, 1, &l8);
    layout(&g, 16, 1, &l16);
    const int64_t slot = l8.slot > l16.slot ? l8.slot : l16.slot;
    return (sizeof(stem_job) + 63) / 64 * 64 + (size_t)(max_slots() * slot) * sizeof(float) + 128;
}

static int stem_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1 || p->kernel_size.nb_dims < 1 || p->kernel_size.nb_dims > 2)
        return 0;
    trtl_conv_geom g;
    if (!trtl_conv_float_applies(nd, &in_dims[0], &g))
        return 0;
    return fits(&g);
}

static size_t stem_state_bytes(const void *state)
{
    const stem_state *st = state;
    return sizeof *st + st->packed_bytes;
}

static void stem_release(void *state)
{
    stem_state *st = state;
    if (st)
        free(st->w);
    free(st);
}

static trtl_status stem_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    int64_t kvol = 1;
    for (int i = 0; i < p->kernel_size.nb_dims; i++)
        kvol *= p->kernel_size.d[i];
    if (p->num_groups != 1 || p->num_output_maps < 1 || kvol < 1 || p->kernel.type != TRTL_FLOAT ||
        p->kernel.count % ((int64_t)p->num_output_maps * kvol))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit %d output maps of one group",
                          nd->name, (long long)p->kernel.count, p->num_output_maps);
    stem_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->isa = trtl_cpu_has(TRTL_CPU_AVX512F)              ? STEM_AVX512
              : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? STEM_AVX2
                                                           : STEM_PORTABLE;
    st->K = p->num_output_maps;
    st->kvol = kvol;
    st->C = p->kernel.count / st->K / kvol;
    st->kt = isa_kt(st->isa);
    st->nkb = ceil_div(st->K, st->kt);
    const int64_t ntaps = st->C * kvol;
    const size_t bytes = (size_t)(st->nkb * ntaps * st->kt) * sizeof(float);
    st->w = calloc(1, bytes ? bytes : 1);
    st->packed_bytes = bytes;
    if (!st->w) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory arranging %zu bytes of weights",
                          nd->name, bytes);
    }
    /* w[kb][t][k] = W[kb*kt + k][t], t = (c, kh, kw); zero past K */
    const float *w = (const float *)p->kernel.values;
    for (int64_t k = 0; k < st->K; k++)
        for (int64_t t = 0; t < ntaps; t++)
            st->w[((k / st->kt) * ntaps + t) * st->kt + k % st->kt] = w[k * ntaps + t];
    *state = st;
    return TRTL_OK;
}

/* W[k][t] read back from the arranged weights (exact: arranging only moves floats); dst at any byte offset. */
static void stem_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const stem_state *st = state;
    const int64_t ntaps = st->C * st->kvol;
    unsigned char *w = dst;
    (void)nd;
    for (int64_t k = 0; k < st->K; k++)
        for (int64_t t = 0; t < ntaps; t++)
            memcpy(w + (size_t)(k * ntaps + t) * sizeof(float), &st->w[((k / st->kt) * ntaps + t) * st->kt + k % st->kt],
                   sizeof(float));
}

const trtl_kernel trtl_kernel_conv_stem = {
    .name = "convolution.stem",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .applies = stem_applies,
    .prepare = stem_prepare,
    .release = stem_release,
    .state_bytes = stem_state_bytes,
    .scratch = stem_scratch,
    .run = stem_run,
    .unpack = stem_unpack,
};
