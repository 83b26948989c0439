/*
 * convolution_depthwise_c16.c -- "convolution.depthwise_c16": 2-D depthwise convolution (num_groups == C == K)
 * on small maps (padded plane of at most PLANE_MAX pixels, as MobileNet's and EfficientNet's 14x14 and 7x7
 * stages, and the dilated last stage of DeepLabV3 / LR-ASPP's MobileNetV3), kernels up to 7x7, strides 1 or 2
 * per axis, any dilation, every padding mode, bias + residual + activation fused.  Needs AVX-512F.
 *
 * The NCHW kernels vectorize along a row, which on a 7- or 14-wide row leaves most lanes idle and pays a row
 * set-up per few outputs.  This one vectorizes across 16 channels: per (image, block of 16 channels) the
 * block's planes are moved into a zero-bordered [Hp][Wp][16] plane in the slot's scratch (16 pixels of the 16
 * planes loaded, transposed in registers, stored at their padded positions), every output pixel is then 16
 * channels at once (taps: one weight vector and one input vector per FMA, four output pixels of a row sharing
 * each weight load), the activation is applied to the [P][16] result, which is transposed back into the NCHW
 * planes the same way (with a residual, it is added to the planes and the activation applied there).  The
 * weights are reordered once in prepare() into [block][tap][16] (zero lanes past C).
 */
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/shape.h"
#include "kernels/conv_geometry.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

/* applies() takes padded planes of at most this many pixels (40 x 40) at the opt shapes, where the [Hp][Wp][16]
 * block stays in L2; run() takes any size (dynamic shapes), with scratch to match. */
#define PLANE_MAX 1600
#define TAPS_MAX 7
#define MAX_SLOTS 64

typedef struct c16_geom {
    union {
        trtl_dw_geom base;
        struct {
            TRTL_DW_GEOM_FIELDS;
        };
    };
    int64_t Hp, Wp, nblk;
} c16_geom;

typedef struct c16_state {
    int64_t C, R, S;
    float *w, *b; /* [nblk][R*S][16], [nblk][16] */
} c16_state;

static const trtl_dw_limits dw_limits = {TAPS_MAX, TAPS_MAX, 1};

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, c16_geom *g)
{
    TRTL_TRY(trtl_dw_geom_init(nd, xd, yd, &dw_limits, &g->base));
    /* the padded plane holds every row / column a window reads and every input row / column */
    int64_t rh = g->OH > 0 ? (g->OH - 1) * g->sh + (g->R - 1) * g->dh + 1 : 0;
    int64_t rw = g->OW > 0 ? (g->OW - 1) * g->sw + (g->S - 1) * g->dw + 1 : 0;
    g->Hp = rh > g->pt + g->H ? rh : g->pt + g->H;
    g->Wp = rw > g->pl + g->W ? rw : g->pl + g->W;
    g->nblk = (g->C + 15) / 16;
    return TRTL_OK;
}

/* One slot: the padded input block, 4 vectors of gap, the output block. */
static int64_t slot_floats(const c16_geom *g) { return (g->Hp * g->Wp + 4 + g->OH * g->OW) * 16; }

typedef struct c16_job {
    const c16_geom *g;
    const c16_state *st;
    const trtl_epilogue *epi;
    const float *x, *res;
    float *y, *scratch;
    int64_t slots, items;
} c16_job;

/* In-register transpose of a 16x16 float block: r[i][j] -> r[j][i] (64 shuffles, no memory round trip). */
__attribute__((target("avx512f"))) static inline void tr16(__m512 r[16])
{
    __m512 t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4i+j], 128-bit lane L: column 4L+j of rows 4i..4i+3 */
    for (int i = 0; i < 4; i++) {
        __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
        u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* column 4L+j = lane L of u[j], u[4+j], u[8+j], u[12+j] */
    for (int j = 0; j < 4; j++) {
        __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44), v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
        __m512 w0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44), w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[4 + j] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
        r[8 + j] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
    }
}

/* The block's nc planes (plane stride HW) into [Hp][Wp][16] with a zero border and zero lanes past nc: 16 pixels
 * of the planes at a time, transposed in registers, each pixel vector stored at its padded position. */
__attribute__((target("avx512f"))) static void c16_gather(const c16_geom *g, const float *xb, int64_t nc, float *xp)
{
    const int64_t Wp = g->Wp, HW = g->H * g->W;
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t i = 0; i < g->pt * Wp; i++)
        _mm512_store_ps(xp + i * 16, zero);
    for (int64_t h = 0; h < g->H; h++) {
        float *row = xp + (g->pt + h) * Wp * 16;
        for (int64_t w = 0; w < g->pl; w++)
            _mm512_store_ps(row + w * 16, zero);
        for (int64_t w = g->pl + g->W; w < Wp; w++)
            _mm512_store_ps(row + w * 16, zero);
    }
    for (int64_t i = (g->pt + g->H) * Wp; i < g->Hp * Wp; i++)
        _mm512_store_ps(xp + i * 16, zero);
    int64_t h = 0, w = 0; /* position of pixel p0 */
    for (int64_t p0 = 0; p0 < HW; p0 += 16) {
        const int64_t n = HW - p0 < 16 ? HW - p0 : 16;
        const __mmask16 mk = (__mmask16)((1u << n) - 1u);
        __m512 r[16];
        for (int64_t c = 0; c < 16; c++)
            r[c] = c < nc ? _mm512_maskz_loadu_ps(mk, xb + c * HW + p0) : zero;
        tr16(r);
        for (int64_t k = 0; k < n; k++) {
            _mm512_store_ps(xp + ((g->pt + h) * Wp + g->pl + w) * 16, r[k]);
            if (++w == g->W) {
                w = 0;
                h++;
            }
        }
    }
}

/* [P][16] pixel vectors back into the block's nc NCHW planes (plane stride P), transposed 16 pixels at a time. */
__attribute__((target("avx512f"))) static void c16_scatter(const float *yo, int64_t P, int64_t nc, float *yb)
{
    for (int64_t p0 = 0; p0 < P; p0 += 16) {
        const int64_t n = P - p0 < 16 ? P - p0 : 16;
        const __mmask16 mk = (__mmask16)((1u << n) - 1u);
        __m512 r[16];
        for (int64_t k = 0; k < 16; k++)
            r[k] = k < n ? _mm512_load_ps(yo + (p0 + k) * 16) : _mm512_setzero_ps();
        tr16(r);
        for (int64_t c = 0; c < nc; c++)
            _mm512_mask_storeu_ps(yb + c * P + p0, mk, r[c]);
    }
}

/* One (image, channel block): gather, compute, epilogue, scatter. */
__attribute__((target("avx512f"))) static void c16_item(const c16_job *j, int64_t n, int64_t cb, float *xp)
{
    const c16_geom *g = j->g;
    const int64_t c0 = cb * 16, nc = g->C - c0 < 16 ? g->C - c0 : 16, Wp = g->Wp, R = g->R, S = g->S;
    c16_gather(g, j->x + (n * g->C + c0) * g->H * g->W, nc, xp);
    /* compute into the plane's tail of the scratch: [OH*OW][16] */
    float *yo = xp + g->Hp * Wp * 16 + 64;
    const float *wt = j->st->w + cb * R * S * 16;
    const __m512 bias = _mm512_loadu_ps(j->st->b + cb * 16);
    const int64_t xs = g->sw * 16;        /* floats between the inputs of neighbouring outputs */
    const int64_t ts = g->dw * 16;        /* floats between the taps of a kernel row */
    const int64_t rs = g->dh * Wp * 16;   /* floats between kernel rows */
    for (int64_t oh = 0; oh < g->OH; oh++) {
        const float *xr = xp + oh * g->sh * Wp * 16;
        float *yr = yo + oh * g->OW * 16;
        int64_t ow = 0;
        for (; ow + 4 <= g->OW; ow += 4) {
            __m512 a0 = bias, a1 = bias, a2 = bias, a3 = bias;
            for (int64_t r = 0; r < R; r++) {
                const float *xx = xr + r * rs + ow * xs;
                const float *ww = wt + r * S * 16;
                for (int64_t s = 0; s < S; s++) {
                    __m512 wv = _mm512_load_ps(ww + s * 16);
                    a0 = _mm512_fmadd_ps(wv, _mm512_load_ps(xx + s * ts), a0);
                    a1 = _mm512_fmadd_ps(wv, _mm512_load_ps(xx + s * ts + xs), a1);
                    a2 = _mm512_fmadd_ps(wv, _mm512_load_ps(xx + s * ts + 2 * xs), a2);
                    a3 = _mm512_fmadd_ps(wv, _mm512_load_ps(xx + s * ts + 3 * xs), a3);
                }
            }
            _mm512_store_ps(yr + ow * 16, a0);
            _mm512_store_ps(yr + (ow + 1) * 16, a1);
            _mm512_store_ps(yr + (ow + 2) * 16, a2);
            _mm512_store_ps(yr + (ow + 3) * 16, a3);
        }
        for (; ow < g->OW; ow++) {
            __m512 a0 = bias;
            for (int64_t r = 0; r < R; r++) {
                const float *xx = xr + r * rs + ow * xs;
                for (int64_t s = 0; s < S; s++)
                    a0 = _mm512_fmadd_ps(_mm512_load_ps(wt + (r * S + s) * 16), _mm512_load_ps(xx + s * ts), a0);
            }
            _mm512_store_ps(yr + ow * 16, a0);
        }
    }
    const int64_t P = g->OH * g->OW;
    float *yb = j->y + (n * g->C + c0) * P;
    if (!j->res) {
        /* the activation is per element: apply it to the pixel vectors (lanes past nc hold zeros) */
        trtl_epi_act(j->epi, yo, P * 16);
        c16_scatter(yo, P, nc, yb);
        return;
    }
    c16_scatter(yo, P, nc, yb);
    const float *rb = j->res + (n * g->C + c0) * P;
    for (int64_t i = 0; i < nc * P; i++)
        yb[i] += rb[i];
    trtl_epi_act(j->epi, yb, nc * P);
}

static void c16_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const c16_job *j = ctx;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        float *xp = j->scratch + s * slot_floats(j->g);
        for (int64_t it = s * j->items / j->slots, end = (s + 1) * j->items / j->slots; it < end; it++)
            c16_item(j, it / j->g->nblk, it % j->g->nblk, xp);
    }
}

static float *align64(void *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

static trtl_status c16_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const c16_state *st = a->state;
    c16_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    if (!st || st->C != g.C || st->R != g.R || st->S != g.S)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.depthwise_c16 run without its weights", nd->name);
    c16_job j = {&g, st, &nd->epi, a->in[0].data, NULL, a->out[0].data, NULL, 1, g.N * g.nblk};
    TRTL_TRY(trtl_epi_residual(a, g.N * g.C * g.OH * g.OW, &j.res));
    if (j.items == 0 || g.OH * g.OW == 0)
        return TRTL_OK;
    size_t avail = a->scratch && a->scratch_size > 64 ? (a->scratch_size - 64) / sizeof(float) : 0;
    int64_t fit = (int64_t)(avail / (size_t)slot_floats(&g));
    if (fit < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one %lldx%lld plane block",
                          nd->name, a->scratch_size, (long long)g.Hp, (long long)g.Wp);
    double flops = 2.0 * (double)g.N * (double)g.C * (double)(g.OH * g.OW) * (double)(g.R * g.S);
    int64_t slots = trtl_threads_for(a->pool, flops);
    slots = slots < fit ? slots : fit;
    j.slots = slots < j.items ? slots : j.items;
    j.scratch = align64(a->scratch);
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, c16_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t c16_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    c16_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    int64_t slots = trtl_available_cpus();
    slots = slots < 1 ? 1 : (slots > MAX_SLOTS ? MAX_SLOTS : slots);
    return (size_t)(slots * slot_floats(&g)) * sizeof(float) + 64;
}

static int c16_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    c16_geom g;
    if (geom_init(nd, &in_dims[0], NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    return g.Hp * g.Wp <= PLANE_MAX;
}

static void c16_release(void *state)
{
    c16_state *st = state;
    if (st) {
        free(st->w);
        free(st->b);
    }
    free(st);
}

static trtl_status c16_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    int64_t C = p->num_output_maps;
    if (!trtl_dw_params_ok(p, C, &dw_limits))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': not a depthwise 2D convolution this kernel runs", nd->name);
    int64_t R = p->kernel_size.d[0], S = p->kernel_size.d[1], nblk = (C + 15) / 16;
    c16_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->C = C;
    st->R = R;
    st->S = S;
    size_t wbytes = (size_t)(nblk * R * S * 16) * sizeof(float), bbytes = (size_t)(nblk * 16) * sizeof(float);
    st->w = aligned_alloc(64, (wbytes + 63) / 64 * 64);
    st->b = aligned_alloc(64, (bbytes + 63) / 64 * 64);
    if (!st->w || !st->b) {
        c16_release(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory reordering weights", nd->name);
    }
    memset(st->w, 0, wbytes);
    memset(st->b, 0, bbytes);
    const float *w = (const float *)p->kernel.values, *b = p->bias.count ? (const float *)p->bias.values : NULL;
    for (int64_t c = 0; c < C; c++) {
        for (int64_t t = 0; t < R * S; t++)
            st->w[((c / 16) * R * S + t) * 16 + c % 16] = w[c * R * S + t];
        if (b)
            st->b[c] = b[c];
    }
    *state = st;
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_conv_depthwise_c16 = {
    .name = "convolution.depthwise_c16",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX512F,
    .applies_epilogue = 1,
    .applies = c16_applies,
    .prepare = c16_prepare,
    .release = c16_release,
    .scratch = c16_scratch,
    .run = c16_run,
};
