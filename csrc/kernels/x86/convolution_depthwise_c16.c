/*
 * convolution_depthwise_c16.c -- "convolution.depthwise_c16": 2-D depthwise convolution (num_groups == C == K)
 * on small maps (padded plane of at most 1600 pixels, as MobileNet's and EfficientNet's 14x14 and 7x7
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
 * weights are reordered once in prepare() into [block][tap][16] (zero lanes past C).  The geometry, weights,
 * split over the pool and scratch are the channel-block driver's (depthwise_cblock.c, shared with depthwise_c8).
 */
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/shape.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/depthwise_cblock.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

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
__attribute__((target("avx512f"))) static void c16_gather(const trtl_dwc_geom *g, const float *xb, int64_t nc,
                                                          float *xp)
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
__attribute__((target("avx512f"))) static void c16_item(const trtl_dwc_job *j, int64_t n, int64_t cb, float *xp)
{
    const trtl_dwc_geom *g = j->g;
    const int64_t c0 = cb * 16, nc = g->C - c0 < 16 ? g->C - c0 : 16, Wp = g->Wp, R = g->R, S = g->S;
    c16_gather(g, j->x + (n * g->C + c0) * g->H * g->W, nc, xp);
    /* compute into the plane's tail of the scratch: [OH*OW][16] */
    float *yo = trtl_dwc_out(g, xp);
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

static const trtl_dwc_kernel c16_kernel = {"convolution.depthwise_c16", 16, c16_item, 0};

static trtl_status c16_run(const trtl_kernel_args *a) { return trtl_dwc_run(a, &c16_kernel); }

static size_t c16_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    return trtl_dwc_scratch(nd, in, out, 16);
}

static int c16_applies(const trtl_node *nd, const trtl_dims *in_dims) { return trtl_dwc_applies(nd, in_dims, 16); }

static trtl_status c16_prepare(const trtl_node *nd, void **state) { return trtl_dwc_prepare(nd, 16, state); }

const trtl_kernel trtl_kernel_conv_depthwise_c16 = {
    .name = "convolution.depthwise_c16",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX512F,
    .applies_epilogue = 1,
    .applies = c16_applies,
    .prepare = c16_prepare,
    .release = trtl_dwc_release,
    .scratch = c16_scratch,
    .run = c16_run,
};
