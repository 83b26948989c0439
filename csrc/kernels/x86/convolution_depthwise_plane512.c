/*
 * convolution_depthwise_plane512.c -- "convolution.depthwise_plane512": 2-D depthwise convolution
 * (num_groups == C == K), any kernel size, strides 1 or 2 per axis, dilation 1, every padding mode, with
 * bias + residual + activation fused into the store.  Needs AVX-512F.
 *
 * The AVX-512 counterpart of `depthwise_avx2` (convolution_depthwise.c), for the large maps of MobileNet-style
 * networks (112x112 .. 28x28) where the 16-lane rows are full.  Per (image, channel) plane the input is copied
 * once into a zero-bordered plane in the slot's scratch (rows of a multiple of 16 floats), so the compute loop
 * has no bounds checks and every load is a whole unaligned vector.  For stride 2 along W the padded row is stored
 * de-interleaved (even columns, then odd columns: one vpermt2ps pair per 32 input floats at copy time instead of
 * one per tap and output vector, which is what made the row kernels' stride 2 slow), so output column ow, tap kw
 * reads even[ow + kw/2] or odd[ow + (kw-1)/2].
 *
 * 3x3 kernels: register tiles of 4 output rows x 32 columns (8 accumulators) with the nine weights in registers;
 * each padded input row is loaded once per tap column and feeds every output row of the tile that uses it
 * (0.5 loads per FMA at stride 1, 0.75 at stride 2).  Other sizes: 4 rows x 32 columns, each tap one weight
 * broadcast and one load per FMA.  The last partial vector of a row is computed in full (the padded row is wide
 * enough) and stored masked.  Items of the pool split are whole planes.
 */
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

#include "core/shape.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/depthwise_planes.h"
#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"


typedef struct p5_geom {
    union {
        trtl_dw_geom base;
        struct {
            TRTL_DW_GEOM_FIELDS;
        };
    };
    int64_t rows, half, rowlen; /* padded plane: rows x rowlen floats; stride 2: half = odd offset */
} p5_geom;

static int64_t round16(int64_t v) { return (v + 15) & ~(int64_t)15; }

static const trtl_dw_limits p5_limits = {0, 0, 0};

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, p5_geom *g)
{
    TRTL_TRY(trtl_dw_geom_init(nd, xd, yd, &p5_limits, &g->base));
    /* the padded plane holds every position the taps read and every input position (the input is copied
     * whole, without clipping) */
    g->rows = g->OH > 0 ? (g->OH - 1) * g->sh + g->R : 0;
    if (g->rows < g->pt + g->H)
        g->rows = g->pt + g->H;
    int64_t cols = g->pl + g->W; /* padded columns holding input */
    if (g->sw == 1) {
        int64_t need = round16(g->OW) + g->S - 1;
        g->half = 0;
        g->rowlen = round16(need > cols ? need : cols);
    } else {
        int64_t need = round16(g->OW) + (g->S - 1) / 2, have = (cols + 1) / 2;
        g->half = round16(need > have ? need : have);
        g->rowlen = 2 * g->half;
    }
    return TRTL_OK;
}

static size_t slot_floats(const p5_geom *g) { return (size_t)(g->rows * g->rowlen); }


/* Lanes [0, n) of 16 (n clamped to 0..16). */
static inline __mmask16 first16(int64_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u));
}

/* d[t] = s[t] for t < n. */
__attribute__((target("avx512f"))) static inline void copy512(float *d, const float *s, int64_t n)
{
    int64_t t = 0;
    for (; t + 16 <= n; t += 16)
        _mm512_storeu_ps(d + t, _mm512_loadu_ps(s + t));
    if (t < n) {
        __mmask16 m = first16(n - t);
        _mm512_mask_storeu_ps(d + t, m, _mm512_maskz_loadu_ps(m, s + t));
    }
}

/* One input row of n floats split by column parity: de[k] = s[2k], do_[k] = s[2k + 1] (32 floats in, two
 * permutes, two stores; the last chunk masked, nothing read past s[n - 1] or written past the counts). */
__attribute__((target("avx512f"))) static inline void split2_512(float *de, float *do_, const float *s, int64_t n)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    int64_t q = 0;
    for (; q + 32 <= n; q += 32) {
        __m512 a = _mm512_loadu_ps(s + q), b = _mm512_loadu_ps(s + q + 16);
        _mm512_storeu_ps(de + q / 2, _mm512_permutex2var_ps(a, even, b));
        _mm512_storeu_ps(do_ + q / 2, _mm512_permutex2var_ps(a, odd, b));
    }
    if (q < n) {
        int64_t m = n - q;
        __m512 a = _mm512_maskz_loadu_ps(first16(m), s + q), b = _mm512_maskz_loadu_ps(first16(m - 16), s + q + 16);
        _mm512_mask_storeu_ps(de + q / 2, first16((m + 1) / 2), _mm512_permutex2var_ps(a, even, b));
        _mm512_mask_storeu_ps(do_ + q / 2, first16(m / 2), _mm512_permutex2var_ps(a, odd, b));
    }
}

/* Padded rows [r0, r1) from the input plane x into the slot's padded plane, whose border (and every column /
 * row no input lands in) was zeroed once per run: only the input's own positions are written, so the zeros
 * stay.  Rows are copied just ahead of the row group that reads them, so they are read back from L1. */
__attribute__((target("avx512f"))) static void pad_rows(const p5_geom *g, const float *x, float *buf, int64_t r0,
                                                        int64_t r1)
{
    if (r0 < g->pt)
        r0 = g->pt;
    if (r1 > g->pt + g->H)
        r1 = g->pt + g->H;
    for (int64_t r = r0; r < r1; r++) {
        float *d = buf + r * g->rowlen;
        const float *src = x + (r - g->pt) * g->W;
        if (g->sw == 1) {
            copy512(d + g->pl, src, g->W); /* padded column j holds input column j - pl */
        } else {
            /* padded column j = input column j - pl lies in half j & 1 at (j >> 1): even input columns land in
             * the half of pl's parity, starting at pl >> 1; odd ones in the other, at (pl + 1) >> 1 */
            float *he = d + (g->pl & 1) * g->half + (g->pl >> 1);
            float *ho = d + ((g->pl + 1) & 1) * g->half + ((g->pl + 1) >> 1);
            split2_512(he, ho, src, g->W);
        }
    }
}

/* Per-plane constants of the compute loop. */
typedef struct p5_plane {
    const float *x; /* the input plane */
    float *buf;     /* the padded plane, rows [0, done) copied */
    int64_t done;
    const float *w, *res;
    float *y;
    __m512 bias;
    __m256 alpha, beta;
    int32_t fast; /* activation applied in registers (TRTL_ACT_NONE when the slow pass runs later) */
} p5_plane;

/* The store of one accumulator: + residual, activation, full or masked store of the columns < OW. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void p5_store(const p5_geom *g,
                                                                                        const p5_plane *pa,
                                                                                        int64_t oh, int64_t col,
                                                                                        __m512 a)
{
    const int64_t off = oh * g->OW + col;
    const int full = col + 16 <= g->OW;
    const __mmask16 m = full ? (__mmask16)0xffff : first16(g->OW - col);
    if (pa->res)
        a = _mm512_add_ps(a, full ? _mm512_loadu_ps(pa->res + off) : _mm512_maskz_loadu_ps(m, pa->res + off));
    if (pa->fast != TRTL_ACT_NONE) {
        __m256 lo = trtl_act8(_mm512_castps512_ps256(a), pa->fast, pa->alpha, pa->beta);
        __m256 hi = trtl_act8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)), pa->fast, pa->alpha,
                              pa->beta);
        a = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    }
    if (full)
        _mm512_storeu_ps(pa->y + off, a);
    else
        _mm512_mask_storeu_ps(pa->y + off, m, a);
}

/* Copy the padded rows that output rows < oh_end read. */
__attribute__((target("avx512f"))) static inline void p5_ahead(const p5_geom *g, p5_plane *pa, int64_t oh_end)
{
    int64_t need = (oh_end - 1) * g->sh + g->R;
    if (need > pa->done) {
        pad_rows(g, pa->x, pa->buf, pa->done, need);
        /* the next group's input rows: on maps past L2 (112x112 stride 2) the copy otherwise waits on memory
         * with the FMAs idle */
        int64_t i0 = need - g->pt < 0 ? 0 : need - g->pt, i1 = i0 + 4 * g->sh;
        if (i1 > g->H)
            i1 = g->H;
        for (int64_t i = i0; i < i1; i++)
            for (int64_t c = 0; c < g->W; c += 16)
                _mm_prefetch((const char *)(pa->x + i * g->W + c), _MM_HINT_T0);
        pa->done = need;
    }
}

/* 3x3 kernel, NR output rows x NV vectors at `ow`: each padded input row is loaded once per tap column and
 * feeds every output row of the tile it belongs to; SH (vertical stride), NR, NV are constants. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
p5_tile3(const p5_geom *g, const p5_plane *pa, const __m512 *w9, int64_t oh, int64_t ow, const int NR, const int NV,
         const int SH)
{
    __m512 acc[4][2];
    const int64_t rl = g->rowlen;
    const int64_t o1 = g->sw == 2 ? g->half : 1, o2 = g->sw == 2 ? 1 : 2; /* taps kw = 1, 2 */
    const float *base = pa->buf + oh * SH * rl + ow;
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[r][v] = pa->bias;
#pragma GCC unroll 9
    for (int ir = 0; ir < (NR - 1) * SH + 3; ir++) {
        const float *row = base + ir * rl;
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++) {
            __m512 x0 = _mm512_loadu_ps(row + 16 * v), x1 = _mm512_loadu_ps(row + 16 * v + o1),
                   x2 = _mm512_loadu_ps(row + 16 * v + o2);
#pragma GCC unroll 4
            for (int r = 0; r < NR; r++) {
                int kh = ir - r * SH;
                if (kh >= 0 && kh < 3) {
                    acc[r][v] = _mm512_fmadd_ps(x0, w9[kh * 3], acc[r][v]);
                    acc[r][v] = _mm512_fmadd_ps(x1, w9[kh * 3 + 1], acc[r][v]);
                    acc[r][v] = _mm512_fmadd_ps(x2, w9[kh * 3 + 2], acc[r][v]);
                }
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            p5_store(g, pa, oh + r, ow + 16 * v, acc[r][v]);
}

__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
p5_rows3(const p5_geom *g, const p5_plane *pa, const __m512 *w9, int64_t oh, const int NR, const int SH)
{
    int64_t ow = 0;
    for (; ow + 16 < g->OW; ow += 32)
        p5_tile3(g, pa, w9, oh, ow, NR, 2, SH);
    if (ow < g->OW)
        p5_tile3(g, pa, w9, oh, ow, NR, 1, SH);
}

__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void p5_plane3(const p5_geom *g,
                                                                                         p5_plane *pa,
                                                                                         const int SH)
{
    __m512 w9[9];
    for (int t = 0; t < 9; t++)
        w9[t] = _mm512_set1_ps(pa->w[t]);
    int64_t oh = 0;
    for (; oh + 4 <= g->OH; oh += 4) {
        p5_ahead(g, pa, oh + 4);
        p5_rows3(g, pa, w9, oh, 4, SH);
    }
    p5_ahead(g, pa, g->OH);
    switch (g->OH - oh) {
    case 3: p5_rows3(g, pa, w9, oh, 3, SH); break;
    case 2: p5_rows3(g, pa, w9, oh, 2, SH); break;
    case 1: p5_rows3(g, pa, w9, oh, 1, SH); break;
    default: break;
    }
}

/* Any kernel: NR output rows x NV vectors at `ow`, one weight broadcast and one load per FMA. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
p5_tile(const p5_geom *g, const p5_plane *pa, int64_t oh, int64_t ow, const int NR, const int NV)
{
    __m512 acc[4][2];
    const int64_t rl = g->rowlen;
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[r][v] = pa->bias;
    for (int64_t kh = 0; kh < g->R; kh++) {
        const float *rk = pa->buf + (oh * g->sh + kh) * rl + ow;
        const float *wk = pa->w + kh * g->S;
        for (int64_t kw = 0; kw < g->S; kw++) {
            /* stride 2: tap kw reads the even (kw even) or odd half of the de-interleaved row */
            const float *ip = g->sw == 2 ? rk + (kw & 1) * g->half + (kw >> 1) : rk + kw;
            __m512 wv = _mm512_set1_ps(wk[kw]);
#pragma GCC unroll 4
            for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
                for (int v = 0; v < NV; v++)
                    acc[r][v] = _mm512_fmadd_ps(_mm512_loadu_ps(ip + r * g->sh * rl + 16 * v), wv, acc[r][v]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            p5_store(g, pa, oh + r, ow + 16 * v, acc[r][v]);
}

__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void p5_rows(const p5_geom *g,
                                                                                       const p5_plane *pa, int64_t oh,
                                                                                       const int NR)
{
    int64_t ow = 0;
    for (; ow + 16 < g->OW; ow += 32)
        p5_tile(g, pa, oh, ow, NR, 2);
    if (ow < g->OW)
        p5_tile(g, pa, oh, ow, NR, 1);
}

/* One output plane from a padded plane. */
__attribute__((target("avx512f,avx2,fma"))) static void p5_one(const p5_geom *g, const float *x, float *buf,
                                                              const float *w, float bias, const float *res, float *y,
                                                              const trtl_epilogue *epi)
{
    p5_plane pa = {x, buf, 0, w, res, y, _mm512_set1_ps(bias), _mm256_set1_ps(epi->alpha), _mm256_set1_ps(epi->beta),
                   trtl_act_is_fast(epi->act) ? epi->act : TRTL_ACT_NONE};
    if (g->R == 3 && g->S == 3) {
        if (g->sh == 1)
            p5_plane3(g, &pa, 1);
        else
            p5_plane3(g, &pa, 2);
    } else {
        int64_t oh = 0;
        for (; oh + 4 <= g->OH; oh += 4) {
            p5_ahead(g, &pa, oh + 4);
            p5_rows(g, &pa, oh, 4);
        }
        p5_ahead(g, &pa, g->OH);
        switch (g->OH - oh) {
        case 3: p5_rows(g, &pa, oh, 3); break;
        case 2: p5_rows(g, &pa, oh, 2); break;
        case 1: p5_rows(g, &pa, oh, 1); break;
        default: break;
        }
    }
    if (!trtl_act_is_fast(epi->act))
        trtl_epi_act(epi, y, g->OH * g->OW);
}

/* the driver's plane function */
static void p5_plane_fn(const void *geom, const float *x, float *buf, const float *w, float bias, const float *res,
                        float *y, const trtl_epilogue *epi)
{
    p5_one(geom, x, buf, w, bias, res, y, epi);
}

static trtl_status p5_run(const trtl_kernel_args *a)
{
    p5_geom g;
    TRTL_TRY(geom_init(a->node, &a->in[0].dims, &a->out[0].dims, &g));
    const trtl_dw_planes d = {&g, &g.base, p5_plane_fn, slot_floats(&g), 1};
    return trtl_dw_planes_run(a, &d);
}

static size_t p5_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    p5_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    const trtl_dw_planes d = {&g, &g.base, p5_plane_fn, slot_floats(&g), 1};
    return trtl_dw_planes_scratch(&d);
}

static int p5_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    return in_dims[0].nb_dims == 4 && trtl_dw_params_ok(&nd->p.conv, in_dims[0].d[1], &p5_limits);
}

const trtl_kernel trtl_kernel_conv_depthwise_plane512 = {
    .name = "convolution.depthwise_plane512",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = p5_applies,
    .prepare = NULL,
    .release = NULL,
    .scratch = p5_scratch,
    .run = p5_run,
};
