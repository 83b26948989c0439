/*
 * convolution_depthwise_c8.c -- "convolution.depthwise_c8": 2-D depthwise convolution (num_groups == C == K) on
 * small maps (padded plane of at most 4096 pixels: MobileNet's, MNASNet's and EfficientNet's 56x56 stride 2,
 * ConvNeXt's 7x7 on 56x56, 28x28, 14x14 and 7x7 stages, the dilated last stage of LR-ASPP / DeepLabV3), kernels
 * up to 7x7, strides 1 or 2 per axis, any dilation, every padding mode, bias + residual + activation fused.  Needs AVX2 + FMA: the counterpart
 * of depthwise_c16 for machines without AVX-512 (AMD Zen 2/3, older Intel), where the row kernels
 * (depthwise_avx2) leave most of the 8 lanes idle on 7- and 14-wide rows and pay a plane copy per few outputs.
 *
 * Per (image, block of 8 channels) the block's planes go into a zero-bordered [Hp][Wp][8] plane (8 pixels of the
 * 8 planes loaded, transposed in registers, each pixel vector stored at its padded position), each output pixel is
 * 8 channels at once (per tap one weight vector shared by up to 8 output pixels of a row, one input vector per
 * FMA), the result [P][8] is transposed back into the NCHW planes with the residual added there, then the
 * activation (ReLU / clip / leaky in registers, the others over the planes).  Partial vectors (the last pixels of
 * a plane, the last channels of C) go through small buffers: AMD cores run masked moves slowly.  Geometry,
 * weights ([block][tap][8], reordered once), the split over the pool and scratch are the channel-block driver's
 * (depthwise_cblock.c).
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/depthwise_cblock.h"
#include "kernels/x86/tr8_avx2.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

/* The block's nc planes (plane stride HW) into [Hp][Wp][8] with zero lanes past nc: 8 pixels of the planes at a
 * time (the last n < 8 through a zeroed buffer), transposed, each pixel vector stored at its padded position.  The
 * border is the driver's (zeroed once per run, never written here). */
__attribute__((target("avx2,fma"))) static void c8_gather(const trtl_dwc_geom *g, const float *xb, int64_t nc,
                                                          float *xp)
{
    const int64_t Wp = g->Wp, HW = g->H * g->W;
    const __m256 zero = _mm256_setzero_ps();
    int64_t h = 0, w = 0; /* position of pixel p0 */
    for (int64_t p0 = 0; p0 < HW; p0 += 8) {
        const int64_t n = HW - p0 < 8 ? HW - p0 : 8;
        __m256 r[8];
        if (n == 8) {
            for (int64_t c = 0; c < 8; c++)
                r[c] = c < nc ? _mm256_loadu_ps(xb + c * HW + p0) : zero;
        } else {
            float t[8][8];
            memset(t, 0, sizeof t);
            for (int64_t c = 0; c < nc; c++)
                memcpy(t[c], xb + c * HW + p0, (size_t)n * sizeof(float));
            for (int c = 0; c < 8; c++)
                r[c] = _mm256_loadu_ps(t[c]);
        }
        trtl_tr8_avx2(r);
        for (int64_t k = 0; k < n; k++) {
            _mm256_store_ps(xp + ((g->pt + h) * Wp + g->pl + w) * 8, r[k]);
            if (++w == g->W) {
                w = 0;
                h++;
            }
        }
    }
}

/* [P][8] pixel vectors back into the block's nc NCHW planes (plane stride P), transposed 8 pixels at a time, plus
 * the residual planes rb (NULL: none), with the fast activation `fast` (TRTL_ACT_NONE: none) in registers. */
__attribute__((target("avx2,fma"))) static void c8_scatter(const float *yo, int64_t P, int64_t nc, const float *rb,
                                                           float *yb, int32_t fast, __m256 alpha, __m256 beta)
{
    for (int64_t p0 = 0; p0 < P; p0 += 8) {
        const int64_t n = P - p0 < 8 ? P - p0 : 8;
        __m256 r[8];
        for (int64_t k = 0; k < 8; k++)
            r[k] = k < n ? _mm256_load_ps(yo + (p0 + k) * 8) : _mm256_setzero_ps();
        trtl_tr8_avx2(r);
        for (int64_t c = 0; c < nc; c++) {
            if (n == 8) {
                __m256 v = rb ? _mm256_add_ps(r[c], _mm256_loadu_ps(rb + c * P + p0)) : r[c];
                _mm256_storeu_ps(yb + c * P + p0, trtl_act8(v, fast, alpha, beta));
            } else {
                float t[8];
                if (rb) {
                    memset(t, 0, sizeof t);
                    memcpy(t, rb + c * P + p0, (size_t)n * sizeof(float));
                    r[c] = _mm256_add_ps(r[c], _mm256_loadu_ps(t));
                }
                _mm256_storeu_ps(t, trtl_act8(r[c], fast, alpha, beta));
                memcpy(yb + c * P + p0, t, (size_t)n * sizeof(float));
            }
        }
    }
}

/* NP (constant, 1..8) consecutive output pixels of a row from xx (the first one's window origin), each tap one
 * weight vector for all NP pixels. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
c8_pixels(const trtl_dwc_geom *g, const float *xx, const float *wt, __m256 bias, float *yr, const int NP)
{
    const int64_t xs = g->sw * 8, ts = g->dw * 8, rs = g->dh * g->Wp * 8;
    __m256 acc[8];
#pragma GCC unroll 8
    for (int p = 0; p < NP; p++)
        acc[p] = bias;
    for (int64_t r = 0; r < g->R; r++) {
        const float *xr = xx + r * rs;
        const float *ww = wt + r * g->S * 8;
        for (int64_t s = 0; s < g->S; s++) {
            const __m256 wv = _mm256_load_ps(ww + s * 8);
#pragma GCC unroll 8
            for (int p = 0; p < NP; p++)
                acc[p] = _mm256_fmadd_ps(wv, _mm256_load_ps(xr + s * ts + p * xs), acc[p]);
        }
    }
#pragma GCC unroll 8
    for (int p = 0; p < NP; p++)
        _mm256_store_ps(yr + p * 8, acc[p]);
}

/* One (image, channel block): gather, taps, scatter with residual and activation. */
__attribute__((target("avx2,fma"))) static void c8_item(const trtl_dwc_job *j, int64_t n, int64_t cb, float *xp)
{
    const trtl_dwc_geom *g = j->g;
    const int64_t c0 = cb * 8, nc = g->C - c0 < 8 ? g->C - c0 : 8;
    c8_gather(g, j->x + (n * g->C + c0) * g->H * g->W, nc, xp);
    float *yo = trtl_dwc_out(g, xp);
    const float *wt = j->st->w + cb * g->R * g->S * 8;
    const __m256 bias = _mm256_load_ps(j->st->b + cb * 8);
    for (int64_t oh = 0; oh < g->OH; oh++) {
        const float *xr = xp + oh * g->sh * g->Wp * 8;
        float *yr = yo + oh * g->OW * 8;
        int64_t ow = 0;
        for (; ow + 8 <= g->OW; ow += 8)
            c8_pixels(g, xr + ow * g->sw * 8, wt, bias, yr + ow * 8, 8);
        const float *xx = xr + ow * g->sw * 8;
        switch (g->OW - ow) {
        case 7: c8_pixels(g, xx, wt, bias, yr + ow * 8, 7); break;
        case 6: c8_pixels(g, xx, wt, bias, yr + ow * 8, 6); break;
        case 5: c8_pixels(g, xx, wt, bias, yr + ow * 8, 5); break;
        case 4: c8_pixels(g, xx, wt, bias, yr + ow * 8, 4); break;
        case 3: c8_pixels(g, xx, wt, bias, yr + ow * 8, 3); break;
        case 2: c8_pixels(g, xx, wt, bias, yr + ow * 8, 2); break;
        case 1: c8_pixels(g, xx, wt, bias, yr + ow * 8, 1); break;
        default: break;
        }
    }
    const trtl_epilogue *e = j->epi;
    const int64_t P = g->OH * g->OW;
    float *yb = j->y + (n * g->C + c0) * P;
    const int fast = trtl_act_is_fast(e->act);
    c8_scatter(yo, P, nc, j->res ? j->res + (n * g->C + c0) * P : NULL, yb, fast ? e->act : TRTL_ACT_NONE,
               _mm256_set1_ps(e->alpha), _mm256_set1_ps(e->beta));
    if (!fast)
        trtl_epi_act(e, yb, nc * P);
}

static const trtl_dwc_kernel c8_kernel = {"convolution.depthwise_c8", 8, c8_item, 1};

static trtl_status c8_run(const trtl_kernel_args *a) { return trtl_dwc_run(a, &c8_kernel); }

static size_t c8_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    return trtl_dwc_scratch(nd, in, out, 8);
}

static int c8_applies(const trtl_node *nd, const trtl_dims *in_dims) { return trtl_dwc_applies(nd, in_dims, 8); }

static trtl_status c8_prepare(const trtl_node *nd, void **state) { return trtl_dwc_prepare(nd, 8, state); }

const trtl_kernel trtl_kernel_conv_depthwise_c8 = {
    .name = "convolution.depthwise_c8",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = c8_applies,
    .prepare = c8_prepare,
    .release = trtl_dwc_release,
    .scratch = c8_scratch,
    .run = c8_run,
};
