/*
 * convolution_depthwise.c -- "convolution.depthwise_avx2": 2-D depthwise convolution
 * (num_groups == C == K), any kernel size, strides 1 or 2 per axis, dilation 1, every padding
 * mode, with bias + residual + activation fused into the store.  Needs AVX2 + FMA.
 *
 * Per (image, channel) plane the input is first copied into a zero-bordered plane in the
 * thread's scratch slot, so the compute loop has no bounds checks: output row oh reads padded
 * rows oh*sh + kh.  For stride 2 along W the padded row is stored de-interleaved (even columns,
 * then odd columns), so output column ow, tap kw reads even[ow + kw/2] or odd[ow + (kw-1)/2] and
 * every load is a contiguous 8-wide vector.  3x3 kernels run a dedicated tile (4 output rows x
 * 8 columns, weights in registers, each input row loaded once for all output rows it feeds);
 * other sizes run 4 x 16 tiles.  The last partial vector of a row is computed in full (the
 * padded plane is wide enough) and stored through a small buffer.
 */
#include <string.h>

#include "core/shape.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/depthwise_planes.h"
#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"


typedef struct dw_geom {
    union {
        trtl_dw_geom base;
        struct {
            TRTL_DW_GEOM_FIELDS;
        };
    };
    int64_t rows, half, rowlen; /* padded plane: rows x rowlen floats; stride 2: half = odd offset */
} dw_geom;

static int64_t round8(int64_t v) { return (v + 7) & ~(int64_t)7; }

static const trtl_dw_limits dw_limits = {0, 0, 0};

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, dw_geom *g)
{
    TRTL_TRY(trtl_dw_geom_init(nd, xd, yd, &dw_limits, &g->base));
    g->rows = (g->OH - 1) * g->sh + g->R;
    if (g->sw == 1) {
        g->rowlen = round8(round8(g->OW) + g->S - 1);
    } else {
        g->half = round8(round8(g->OW) + (g->S - 1) / 2);
        g->rowlen = 2 * g->half;
    }
    return TRTL_OK;
}

static size_t slot_floats(const dw_geom *g) { return (size_t)(g->rows * g->rowlen); }


/* d[t] = s[t] for t < n. */
__attribute__((target("avx2,fma"))) static inline void copy_avx2(float *d, const float *s, int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8)
        _mm256_storeu_ps(d + t, _mm256_loadu_ps(s + t));
    for (; t < n; t++) /* scalar tail: AMD cores run masked moves slowly */
        d[t] = s[t];
}

/* d[t] = s[2t] for t < n (nothing past s[2n - 2] is read). */
__attribute__((target("avx2,fma"))) static inline void gather2_avx2(float *d, const float *s, int64_t n)
{
    int64_t t = 0;
    for (; 2 * t + 16 <= 2 * n - 1; t += 8) {
        __m256 a = _mm256_loadu_ps(s + 2 * t), b = _mm256_loadu_ps(s + 2 * t + 8);
        __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
        _mm256_storeu_ps(d + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8)));
    }
    for (; t < n; t++)
        d[t] = s[2 * t];
}

/* Zero-bordered (and for sw == 2 de-interleaved) copy of one input plane. */
__attribute__((target("avx2,fma"))) static void pad_plane(const dw_geom *g, const float *x, float *buf)
{
    const __m256 z = _mm256_setzero_ps();
    for (int64_t r = 0; r < g->rows; r++) {
        float *d = buf + r * g->rowlen;
        for (int64_t t = 0; t < g->rowlen; t += 8) /* rowlen is a multiple of 8 */
            _mm256_storeu_ps(d + t, z);
        int64_t ih = r - g->pt;
        if (ih < 0 || ih >= g->H)
            continue;
        const float *src = x + ih * g->W;
        if (g->sw == 1) {
            /* padded column j holds input column j - pl */
            int64_t lo = g->pl, hi = g->pl + g->W;
            if (hi > g->rowlen)
                hi = g->rowlen;
            if (hi > lo)
                copy_avx2(d + lo, src, hi - lo);
        } else {
            /* half `par` column j holds padded column 2j + par, input column 2j + par - pl */
            for (int par = 0; par < 2; par++) {
                int64_t lo = (g->pl - par + 1) / 2, hi = (g->W - 1 + g->pl - par) / 2 + 1;
                if (g->pl - par < 0)
                    lo = 0;
                if (g->W - 1 + g->pl - par < 0)
                    hi = 0;
                if (hi > g->half)
                    hi = g->half;
                if (hi > lo)
                    gather2_avx2(d + par * g->half + lo, src + 2 * lo + par - g->pl, hi - lo);
            }
        }
    }
}

/* Per-plane constants of the compute loop. */
typedef struct dw_plane_args {
    const float *buf, *w, *res;
    float *y;
    __m256 bias, alpha, beta;
    int32_t fast; /* activation applied in registers (TRTL_ACT_NONE when the slow pass runs later) */
} dw_plane_args;

/* The store of one accumulator: + residual, activation, full or masked store. */
__attribute__((target("avx2,fma"), always_inline)) static inline void dw_store(const dw_geom *g,
                                                                                const dw_plane_args *pa, int64_t oh,
                                                                                int64_t col, __m256 a)
{
    int64_t off = oh * g->OW + col;
    if (col + 8 <= g->OW) {
        if (pa->res)
            a = _mm256_add_ps(a, _mm256_loadu_ps(pa->res + off));
        _mm256_storeu_ps(pa->y + off, trtl_act8(a, pa->fast, pa->alpha, pa->beta));
    } else {
        /* partial vector: through a buffer (AMD cores run masked moves slowly) */
        float t[8];
        int64_t n = g->OW - col;
        _mm256_storeu_ps(t, a);
        if (pa->res)
            for (int64_t i = 0; i < n; i++)
                t[i] += pa->res[off + i];
        if (pa->fast != TRTL_ACT_NONE)
            _mm256_storeu_ps(t, trtl_act8(_mm256_loadu_ps(t), pa->fast, pa->alpha, pa->beta));
        for (int64_t i = 0; i < n; i++)
            pa->y[off + i] = t[i];
    }
}

/* An NR x NV register tile: output rows oh..oh+NR-1, columns ow..ow+8*NV-1 (the last vector may
 * be partial: only columns < OW are stored).  NR and NV are constants at every call site, so the
 * loops unroll into NR*NV independent accumulators. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
dw_tile(const dw_geom *g, const dw_plane_args *pa, int64_t oh, int64_t ow, const int NR, const int NV)
{
    __m256 acc[4][2];
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
            __m256 wv = _mm256_broadcast_ss(wk + kw);
#pragma GCC unroll 4
            for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
                for (int v = 0; v < NV; v++)
                    acc[r][v] = _mm256_fmadd_ps(_mm256_loadu_ps(ip + r * g->sh * rl + 8 * v), wv, acc[r][v]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            dw_store(g, pa, oh + r, ow + 8 * v, acc[r][v]);
}

/* Output rows oh..oh+NR-1: 16 columns at a time, then the last 8 (maybe partial). */
__attribute__((target("avx2,fma"), always_inline)) static inline void dw_rows(const dw_geom *g,
                                                                               const dw_plane_args *pa, int64_t oh,
                                                                               const int NR)
{
    int64_t ow = 0;
    for (; ow + 16 <= g->OW; ow += 16)
        dw_tile(g, pa, oh, ow, NR, 2);
    if (ow + 8 < g->OW)
        dw_tile(g, pa, oh, ow, NR, 2); /* second vector partial */
    else if (ow < g->OW)
        dw_tile(g, pa, oh, ow, NR, 1);
}

/* 3x3 kernel, NR output rows x 8 columns at `ow`: each padded input row is loaded once per tap
 * column and feeds every output row it belongs to (the weights stay in registers), so loads per
 * output vector drop from 9 to (NR-1)*sh/NR*3 + 9/NR.  SH is the vertical stride (constant). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
dw_tile3(const dw_geom *g, const dw_plane_args *pa, const __m256 *w9, int64_t oh, int64_t ow, const int NR,
         const int SH)
{
    __m256 acc[4];
    const int64_t rl = g->rowlen;
    const int64_t o1 = g->sw == 2 ? g->half : 1, o2 = g->sw == 2 ? 1 : 2; /* taps kw = 1, 2 */
    const float *base = pa->buf + oh * SH * rl + ow;
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
        acc[r] = pa->bias;
#pragma GCC unroll 9
    for (int ir = 0; ir < (NR - 1) * SH + 3; ir++) {
        const float *row = base + ir * rl;
        __m256 x0 = _mm256_loadu_ps(row), x1 = _mm256_loadu_ps(row + o1), x2 = _mm256_loadu_ps(row + o2);
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            int kh = ir - r * SH;
            if (kh >= 0 && kh < 3) {
                acc[r] = _mm256_fmadd_ps(x0, w9[kh * 3], acc[r]);
                acc[r] = _mm256_fmadd_ps(x1, w9[kh * 3 + 1], acc[r]);
                acc[r] = _mm256_fmadd_ps(x2, w9[kh * 3 + 2], acc[r]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; r++)
        dw_store(g, pa, oh + r, ow, acc[r]);
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
dw_rows3(const dw_geom *g, const dw_plane_args *pa, const __m256 *w9, int64_t oh, const int NR, const int SH)
{
    for (int64_t ow = 0; ow < g->OW; ow += 8)
        dw_tile3(g, pa, w9, oh, ow, NR, SH);
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
dw_plane3(const dw_geom *g, const dw_plane_args *pa, const int SH)
{
    __m256 w9[9];
    for (int t = 0; t < 9; t++)
        w9[t] = _mm256_broadcast_ss(pa->w + t);
    int64_t oh = 0;
    for (; oh + 4 <= g->OH; oh += 4)
        dw_rows3(g, pa, w9, oh, 4, SH);
    switch (g->OH - oh) {
    case 3: dw_rows3(g, pa, w9, oh, 3, SH); break;
    case 2: dw_rows3(g, pa, w9, oh, 2, SH); break;
    case 1: dw_rows3(g, pa, w9, oh, 1, SH); break;
    default: break;
    }
}

/* One output plane from a padded plane.  3x3: dw_plane3; other sizes: tiles of 4 output rows x
 * 16 columns (8 accumulators), smaller tiles at the bottom and right edges. */
__attribute__((target("avx2,fma"))) static void dw_plane(const dw_geom *g, const float *buf, const float *w,
                                                          float bias, const float *res, float *y,
                                                          const trtl_epilogue *epi)
{
    dw_plane_args pa = {buf, w, res, y, _mm256_set1_ps(bias), _mm256_set1_ps(epi->alpha),
                        _mm256_set1_ps(epi->beta), trtl_act_is_fast(epi->act) ? epi->act : TRTL_ACT_NONE};
    if (g->R == 3 && g->S == 3) {
        if (g->sh == 1)
            dw_plane3(g, &pa, 1);
        else
            dw_plane3(g, &pa, 2);
    } else {
        int64_t oh = 0;
        for (; oh + 4 <= g->OH; oh += 4)
            dw_rows(g, &pa, oh, 4);
        switch (g->OH - oh) {
        case 3: dw_rows(g, &pa, oh, 3); break;
        case 2: dw_rows(g, &pa, oh, 2); break;
        case 1: dw_rows(g, &pa, oh, 1); break;
        default: break;
        }
    }
    if (!trtl_act_is_fast(epi->act))
        trtl_epi_act(epi, y, g->OH * g->OW);
}

/* one plane: the padded copy, then the rows (the driver's plane function) */
static void dw_plane_fn(const void *geom, const float *x, float *buf, const float *w, float bias, const float *res,
                        float *y, const trtl_epilogue *epi)
{
    pad_plane(geom, x, buf);
    dw_plane(geom, buf, w, bias, res, y, epi);
}

static trtl_status dw_run(const trtl_kernel_args *a)
{
    dw_geom g;
    TRTL_TRY(geom_init(a->node, &a->in[0].dims, &a->out[0].dims, &g));
    const trtl_dw_planes d = {&g, &g.base, dw_plane_fn, slot_floats(&g), 0};
    return trtl_dw_planes_run(a, &d);
}

static size_t dw_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    dw_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    const trtl_dw_planes d = {&g, &g.base, dw_plane_fn, slot_floats(&g), 0};
    return trtl_dw_planes_scratch(&d);
}

static int dw_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    return in_dims[0].nb_dims == 4 && trtl_dw_params_ok(&nd->p.conv, in_dims[0].d[1], &dw_limits);
}

const trtl_kernel trtl_kernel_conv_depthwise_avx2 = {
    .name = "convolution.depthwise_avx2",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = dw_applies,
    .prepare = NULL,
    .release = NULL,
    .scratch = dw_scratch,
    .run = dw_run,
};
