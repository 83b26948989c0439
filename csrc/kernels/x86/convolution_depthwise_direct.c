/*
 * convolution_depthwise_direct.c -- "convolution.depthwise": 2-D depthwise convolution (num_groups == C == K,
 * multiplier 1), any kernel size (3x3, 5x5 and 7x7 unrolled, others through a generic tap loop), strides 1
 * and 2 per axis, any dilation, every padding mode, with bias + residual + activation fused into the store.
 * AVX-512 (16 lanes) and AVX2 + FMA (8 lanes) variants, picked at run time.  No scratch, no padded copy.
 *
 * One output row at a time: the taps' input rows that fall inside the image are listed once per row (rows in
 * the vertical padding simply drop out).  Along the row, the interior [lo, hi) -- output columns whose every
 * tap reads inside the row -- runs vector blocks of 2 x lanes columns (each tap: one broadcast weight and one
 * load per vector; stride 2 loads two vectors and keeps the even lanes), its tail masked (AVX-512) or scalar
 * (AVX2); the columns left and right of it (the horizontal padding) run a scalar loop with bounds checks.
 * Items of the pool split are (image, channel, band of output rows).
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/shape.h"
#include "kernels/conv_geometry.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define MAX_TAPS_R 64 /* kernel rows handled (larger kernels fall back to other kernels) */

typedef struct dw_geom {
    union {
        trtl_dw_geom base;
        struct {
            TRTL_DW_GEOM_FIELDS;
        };
    };
    int64_t lo, hi; /* interior output columns */
} dw_geom;

static const trtl_dw_limits dw_limits = {MAX_TAPS_R, 0, 1};

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, dw_geom *g)
{
    TRTL_TRY(trtl_dw_geom_init(nd, xd, yd, &dw_limits, &g->base));
    /* interior: ow*sw - pl >= 0 and ow*sw - pl + (S-1)*dw <= W - 1 */
    g->lo = (g->pl + g->sw - 1) / g->sw;
    int64_t last = g->W - 1 + g->pl - (g->S - 1) * g->dw;
    g->hi = last < 0 ? 0 : last / g->sw + 1;
    if (g->hi > g->OW)
        g->hi = g->OW;
    if (g->lo > g->hi)
        g->lo = g->hi;
    return TRTL_OK;
}

static double dw_flops(const dw_geom *g) { return 2.0 * (double)(g->N * g->C * g->OH * g->OW * g->R * g->S); }

/* What one output row needs: the input rows of its taps that are inside the image. */
typedef struct dw_row {
    const float *x[MAX_TAPS_R]; /* input row of each valid tap row */
    const float *w[MAX_TAPS_R]; /* its S weights */
    int nr;
    float bias;
    const float *res; /* residual row or NULL */
    float *y;
} dw_row;

/* Scalar output columns [c0, c1) with bounds checks (the horizontal padding). */
static void dw_cols_scalar(const dw_geom *g, const dw_row *r, const trtl_epilogue *e, int64_t c0, int64_t c1)
{
    for (int64_t ow = c0; ow < c1; ow++) {
        float acc = r->bias;
        int64_t i0 = ow * g->sw - g->pl;
        for (int t = 0; t < r->nr; t++)
            for (int64_t kw = 0; kw < g->S; kw++) {
                int64_t iw = i0 + kw * g->dw;
                if (iw >= 0 && iw < g->W)
                    acc += r->x[t][iw] * r->w[t][kw];
            }
        if (r->res)
            acc += r->res[ow];
        r->y[ow] = e->act == TRTL_ACT_NONE ? acc : trtl_activation_eval(e->act, e->alpha, e->beta, acc);
    }
}

/* ---- AVX-512 ------------------------------------------------------------------------------------------ */

/* 16 input columns p[0], p[sw], ... (sw 1 or 2); m: the lanes wanted (masked-off lanes read nothing). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ld16(const float *p, int64_t sw, __mmask16 m,
                                                                              int full)
{
    if (sw == 1)
        return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512 a, b;
    if (full) {
        a = _mm512_loadu_ps(p);
        b = _mm512_loadu_ps(p + 16);
    } else {
        /* lane i wants p[2i]: of the 32 floats, those up to 2*(lanes-1) */
        int n = __builtin_popcount((unsigned)m), top = 2 * n - 1;
        __mmask16 ma = (__mmask16)(top >= 16 ? 0xffff : ((1u << top) - 1));
        __mmask16 mb = (__mmask16)(top <= 16 ? 0 : ((1u << (top - 16)) - 1));
        a = _mm512_maskz_loadu_ps(ma, p);
        b = _mm512_maskz_loadu_ps(mb, p + 16);
    }
    return _mm512_permutex2var_ps(a, even, b);
}

__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
st16(const dw_row *r, const trtl_epilogue *e, int fast, int64_t ow, __m512 acc, __mmask16 m, int full)
{
    if (r->res)
        acc = _mm512_add_ps(acc, full ? _mm512_loadu_ps(r->res + ow) : _mm512_maskz_loadu_ps(m, r->res + ow));
    if (fast && e->act != TRTL_ACT_NONE) {
        const __m256 va = _mm256_set1_ps(e->alpha), vb = _mm256_set1_ps(e->beta);
        __m256 lo = trtl_act8(_mm512_castps512_ps256(acc), e->act, va, vb);
        __m256 hi = trtl_act8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1)), e->act, va, vb);
        acc = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    }
    if (full)
        _mm512_storeu_ps(r->y + ow, acc);
    else
        _mm512_mask_storeu_ps(r->y + ow, m, acc);
}

/* Lanes [lo, hi) of 16 (empty when hi <= lo). */
static inline __mmask16 lanes16(int64_t lo, int64_t hi)
{
    if (lo < 0)
        lo = 0;
    if (hi > 16)
        hi = 16;
    if (hi <= lo)
        return 0;
    return (__mmask16)((hi == 16 ? 0xffffu : ((1u << hi) - 1)) & ~((1u << lo) - 1));
}

/* 16 output columns from ow (n of them valid) that touch the horizontal padding: each tap loads only the
 * lanes whose input column lies inside the row (the others are zero and add nothing). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 edge16(const dw_geom *g, const dw_row *r,
                                                                               int64_t ow, int64_t n, int64_t S)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const int64_t sw = g->sw;
    __m512 acc = _mm512_set1_ps(r->bias);
    for (int64_t kw = 0; kw < S; kw++) {
        const int64_t base = ow * sw - g->pl + kw * g->dw; /* input column of lane 0 */
        /* lanes i with 0 <= base + i*sw <= W - 1 */
        const int sh1 = sw == 2; /* sw is 1 or 2: shifts, not divisions, in this per-tap bound */
        int64_t ilo = base >= 0 ? 0 : (-base + sw - 1) >> sh1, ihi = base > g->W - 1 ? 0 : ((g->W - 1 - base) >> sh1) + 1;
        if (ihi > n)
            ihi = n;
        if (ihi <= ilo)
            continue;
        for (int t = 0; t < r->nr; t++) {
            const float *xp = r->x[t] + base;
            __m512 v;
            if (sw == 1) {
                v = _mm512_maskz_loadu_ps(lanes16(ilo, ihi), xp);
            } else {
                /* raw floats [2*ilo, 2*ihi - 1) of the 32 from xp, then the even ones */
                __m512 a = _mm512_maskz_loadu_ps(lanes16(2 * ilo, 2 * ihi - 1), xp);
                __m512 b = _mm512_maskz_loadu_ps(lanes16(2 * ilo - 16, 2 * ihi - 17), xp + 16);
                v = _mm512_permutex2var_ps(a, even, b);
            }
            acc = _mm512_fmadd_ps(v, _mm512_set1_ps(r->w[t][kw]), acc);
        }
    }
    return acc;
}

/* One output row; S is a constant at the unrolled call sites (0: use g->S).  Blocks inside the interior
 * load whole vectors; blocks touching the padding or the row's end go through edge16. */
__attribute__((target("avx512f,avx2,fma"), always_inline)) static inline void
interior512(const dw_geom *g, const dw_row *r, const trtl_epilogue *e, int fast, const int S_const)
{
    const int64_t S = S_const ? S_const : g->S, sw = g->sw, dw = g->dw, pl = g->pl;
    const __m512 vbias = _mm512_set1_ps(r->bias);
    const int64_t span = (S - 1) * dw + (sw == 2 ? 1 : 0);
    int64_t ow = 0;
    for (; ow < g->lo; ow += 16) {
        int64_t n = g->OW - ow < 16 ? g->OW - ow : 16;
        __mmask16 m = lanes16(0, n);
        st16(r, e, fast, ow, edge16(g, r, ow, n, S), m, n == 16);
    }
    for (; ow + 32 <= g->hi && (ow + 31) * sw - pl + span <= g->W - 1; ow += 32) {
        __m512 a0 = vbias, a1 = vbias;
        for (int t = 0; t < r->nr; t++) {
            const float *xp = r->x[t] + ow * sw - pl, *wp = r->w[t];
#pragma GCC unroll 7
            for (int64_t kw = 0; kw < S; kw++) {
                __m512 wv = _mm512_set1_ps(wp[kw]);
                a0 = _mm512_fmadd_ps(ld16(xp + kw * dw, sw, 0xffff, 1), wv, a0);
                a1 = _mm512_fmadd_ps(ld16(xp + 16 * sw + kw * dw, sw, 0xffff, 1), wv, a1);
            }
        }
        st16(r, e, fast, ow, a0, 0xffff, 1);
        st16(r, e, fast, ow + 16, a1, 0xffff, 1);
    }
    for (; ow < g->OW; ow += 16) {
        int64_t n = g->OW - ow < 16 ? g->OW - ow : 16;
        __mmask16 m = lanes16(0, n);
        if (ow + n > g->hi) {
            st16(r, e, fast, ow, edge16(g, r, ow, n, S), m, n == 16);
            continue;
        }
        int full = n == 16 && (ow + 15) * sw - pl + span <= g->W - 1;
        __m512 a0 = vbias;
        for (int t = 0; t < r->nr; t++) {
            const float *xp = r->x[t] + ow * sw - pl, *wp = r->w[t];
#pragma GCC unroll 7
            for (int64_t kw = 0; kw < S; kw++)
                a0 = _mm512_fmadd_ps(ld16(xp + kw * dw, sw, m, full), _mm512_set1_ps(wp[kw]), a0);
        }
        st16(r, e, fast, ow, a0, m, full);
    }
}

__attribute__((target("avx512f,avx2,fma"))) static void row512(const dw_geom *g, const dw_row *r,
                                                               const trtl_epilogue *e, int fast)
{
    switch (g->S) {
    case 3: interior512(g, r, e, fast, 3); break;
    case 5: interior512(g, r, e, fast, 5); break;
    case 7: interior512(g, r, e, fast, 7); break;
    default: interior512(g, r, e, fast, 0); break;
    }
}

/* ---- AVX2 --------------------------------------------------------------------------------------------- */

__attribute__((target("avx2,fma"), always_inline)) static inline __m256 ld8(const float *p, int64_t sw)
{
    if (sw == 1)
        return _mm256_loadu_ps(p);
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8));
}

__attribute__((target("avx2,fma"), always_inline)) static inline void st8(const dw_row *r, const trtl_epilogue *e,
                                                                           int fast, int64_t ow, __m256 acc)
{
    if (r->res)
        acc = _mm256_add_ps(acc, _mm256_loadu_ps(r->res + ow));
    if (fast && e->act != TRTL_ACT_NONE)
        acc = trtl_act8(acc, e->act, _mm256_set1_ps(e->alpha), _mm256_set1_ps(e->beta));
    _mm256_storeu_ps(r->y + ow, acc);
}

/* The interior of one row, up to the last full vector; returns the first column not done. */
__attribute__((target("avx2,fma"), always_inline)) static inline int64_t
interior256(const dw_geom *g, const dw_row *r, const trtl_epilogue *e, int fast, const int S_const)
{
    const int64_t S = S_const ? S_const : g->S, sw = g->sw, dw = g->dw, pl = g->pl;
    const __m256 vbias = _mm256_set1_ps(r->bias);
    const int64_t span = (S - 1) * dw + (sw == 2 ? 1 : 0);
    int64_t ow = g->lo;
    for (; ow + 16 <= g->hi && (ow + 15) * sw - pl + span <= g->W - 1; ow += 16) {
        __m256 a0 = vbias, a1 = vbias;
        for (int t = 0; t < r->nr; t++) {
            const float *xp = r->x[t] + ow * sw - pl, *wp = r->w[t];
#pragma GCC unroll 7
            for (int64_t kw = 0; kw < S; kw++) {
                __m256 wv = _mm256_broadcast_ss(wp + kw);
                a0 = _mm256_fmadd_ps(ld8(xp + kw * dw, sw), wv, a0);
                a1 = _mm256_fmadd_ps(ld8(xp + 8 * sw + kw * dw, sw), wv, a1);
            }
        }
        st8(r, e, fast, ow, a0);
        st8(r, e, fast, ow + 8, a1);
    }
    for (; ow + 8 <= g->hi && (ow + 7) * sw - pl + span <= g->W - 1; ow += 8) {
        __m256 a0 = vbias;
        for (int t = 0; t < r->nr; t++) {
            const float *xp = r->x[t] + ow * sw - pl, *wp = r->w[t];
#pragma GCC unroll 7
            for (int64_t kw = 0; kw < S; kw++)
                a0 = _mm256_fmadd_ps(ld8(xp + kw * dw, sw), _mm256_broadcast_ss(wp + kw), a0);
        }
        st8(r, e, fast, ow, a0);
    }
    return ow;
}

__attribute__((target("avx2,fma"))) static int64_t row256(const dw_geom *g, const dw_row *r, const trtl_epilogue *e,
                                                          int fast)
{
    switch (g->S) {
    case 3: return interior256(g, r, e, fast, 3);
    case 5: return interior256(g, r, e, fast, 5);
    case 7: return interior256(g, r, e, fast, 7);
    default: return interior256(g, r, e, fast, 0);
    }
}

/* ---- run ---------------------------------------------------------------------------------------------- */

typedef struct dw_job {
    const dw_geom *g;
    const trtl_epilogue *epi;
    const float *x, *w, *bias, *res;
    float *y;
    int64_t bands, band_rows;
    int avx512;
} dw_job;

static void dw_items(void *ctx, int64_t b, int64_t e, int thread)
{
    const dw_job *j = ctx;
    const dw_geom *g = j->g;
    const int fast = trtl_act_is_fast(j->epi->act);
    (void)thread;
    for (int64_t it = b; it < e; it++) {
        int64_t band = it % j->bands, plane = it / j->bands, c = plane % g->C;
        int64_t oh0 = band * j->band_rows, oh1 = oh0 + j->band_rows < g->OH ? oh0 + j->band_rows : g->OH;
        const float *xp = j->x + plane * g->H * g->W, *wc = j->w + c * g->R * g->S;
        dw_row r;
        r.bias = j->bias ? j->bias[c] : 0.0f;
        for (int64_t oh = oh0; oh < oh1; oh++) {
            r.nr = 0;
            for (int64_t kh = 0; kh < g->R; kh++) {
                int64_t ih = oh * g->sh - g->pt + kh * g->dh;
                if (ih >= 0 && ih < g->H) {
                    r.x[r.nr] = xp + ih * g->W;
                    r.w[r.nr] = wc + kh * g->S;
                    r.nr++;
                }
            }
            const int64_t off = (plane * g->OH + oh) * g->OW;
            r.y = j->y + off;
            r.res = j->res ? j->res + off : NULL;
            if (j->avx512) {
                row512(g, &r, j->epi, fast);
                if (!fast)
                    trtl_epi_act(j->epi, r.y, g->OW);
                continue;
            }
            int64_t done = row256(g, &r, j->epi, fast);
            dw_cols_scalar(g, &r, j->epi, 0, g->lo);
            dw_cols_scalar(g, &r, j->epi, done, g->OW);
            if (!fast)
                trtl_epi_act(j->epi, r.y + g->lo, done - g->lo);
        }
    }
}

static trtl_status dw_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    dw_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    dw_job j;
    memset(&j, 0, sizeof j);
    j.g = &g;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.w = (const float *)nd->p.conv.kernel.values;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    j.avx512 = trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA);
    int64_t planes = g.N * g.C;
    TRTL_TRY(trtl_epi_residual(a, planes * g.OH * g.OW, &j.res));
    if (planes == 0)
        return TRTL_OK;
    int64_t threads = trtl_threads_for(a->pool, dw_flops(&g));
    /* bands of rows when there are too few planes to keep every thread busy */
    j.bands = 1;
    if (planes < 4 * threads) {
        j.bands = (4 * threads + planes - 1) / planes;
        if (j.bands > g.OH)
            j.bands = g.OH;
    }
    j.band_rows = (g.OH + j.bands - 1) / j.bands;
    j.bands = (g.OH + j.band_rows - 1) / j.band_rows;
    if (threads <= 1)
        dw_items(&j, 0, planes * j.bands, 0);
    else
        trtl_parallel_for(a->pool, planes * j.bands, 1, dw_items, &j);
    return TRTL_OK;
}

static int dw_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    return in_dims[0].nb_dims == 4 && trtl_dw_params_ok(&nd->p.conv, in_dims[0].d[1], &dw_limits);
}

const trtl_kernel trtl_kernel_conv_depthwise = {
    .name = "convolution.depthwise",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = dw_applies,
    .prepare = NULL,
    .release = NULL,
    .scratch = NULL,
    .run = dw_run,
};
