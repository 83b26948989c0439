/*
 * qconv.c -- the int8 convolution library's entry points (qconv.h): checks a descriptor, picks
 * the kernel for this CPU, packs the weights once (qconv_internal.h has the layouts), and sends
 * each run to the SIMD driver (x86/qconv_driver.c) or the portable path (ref/qconv.c).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/qconv_internal.h"
#include "core/alloc.h"
#include "core/cpu.h"
#include "core/params.h"
#include "core/status.h"

/* |acc| <= D * 255 * 128 must fit int32 (and so must the compensation). */
#define QC_MAX_DEPTH 65536
/* Scales are kept where the quantizer's arithmetic (x / scale by reciprocal and one correction
 * step, clamping at 512 * scale) stays exact: no overflow, no subnormal intermediates. */
#define QC_SCALE_MIN 1e-30f
#define QC_SCALE_MAX 1e30f

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int scale_ok(float s) { return isfinite(s) && s >= QC_SCALE_MIN && s <= QC_SCALE_MAX; }

static trtl_status check_desc(const trtl_qconv_desc *d)
{
    const char *fn = "trtl_qconv_prepare";
    if (d->C < 1 || d->K < 1 || d->R < 1 || d->S < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: C, K, R, S must be >= 1 (got %d, %d, %d, %d)", fn, d->C,
                          d->K, d->R, d->S);
    if (d->stride_h < 1 || d->stride_w < 1 || d->dil_h < 1 || d->dil_w < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: strides and dilations must be >= 1", fn);
    if (d->pad_t < 0 || d->pad_l < 0 || d->pad_b < 0 || d->pad_r < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: negative padding", fn);
    if (d->groups < 1 || d->C % d->groups || d->K % d->groups)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: groups %d must divide C %d and K %d", fn, d->groups, d->C,
                          d->K);
    if (d->gemm && (d->R != 1 || d->S != 1 || d->stride_h != 1 || d->stride_w != 1 || d->dil_h != 1 ||
                    d->dil_w != 1 || d->pad_t || d->pad_l || d->pad_b || d->pad_r || d->groups != 1))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "%s: gemm = 1 needs R = S = 1, unit strides and dilations, no padding, groups = 1", fn);
    if ((int64_t)(d->C / d->groups) * d->R * d->S > QC_MAX_DEPTH)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "%s: depth C/groups*R*S = %lld exceeds %d (int32 accumulators)", fn,
                          (long long)(d->C / d->groups) * d->R * d->S, QC_MAX_DEPTH);
    if ((d->in_signed != 0 && d->in_signed != 1) || (d->out_signed != 0 && d->out_signed != 1))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: in_signed / out_signed must be 0 or 1", fn);
    if (!scale_ok(d->in_scale))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: in_scale %g must be finite, in [1e-30, 1e30]", fn,
                          (double)d->in_scale);
    if (d->in_zero < (d->in_signed ? -128 : 0) || d->in_zero > (d->in_signed ? 127 : 255))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: in_zero %d outside the %s range", fn, d->in_zero,
                          d->in_signed ? "int8" : "uint8");
    if (d->act != TRTL_ACT_NONE && !trtl_act_code_valid(d->act))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: unknown activation %d", fn, d->act);
    if (d->has_residual != 0 && d->has_residual != 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: has_residual must be 0 or 1", fn);
    if (d->out_quant) {
        if (d->out_quant != 1 && d->out_quant != 2)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: out_quant must be 0, 1 or 2", fn);
        if (!scale_ok(d->out_scale))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: out_scale %g must be finite, in [1e-30, 1e30]", fn,
                              (double)d->out_scale);
        if (d->out_zero < (d->out_signed ? -128 : 0) || d->out_zero > (d->out_signed ? 127 : 255))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: out_zero %d outside the %s range", fn, d->out_zero,
                              d->out_signed ? "int8" : "uint8");
    }
    if ((d->mid_quant != 0 && d->mid_quant != 1) || (d->res_codes != 0 && d->res_codes != 1))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: mid_quant / res_codes must be 0 or 1", fn);
    if (d->mid_quant && (!scale_ok(d->mid_scale) || (d->mid_signed != 0 && d->mid_signed != 1) ||
                         d->mid_zero < (d->mid_signed ? -128 : 0) || d->mid_zero > (d->mid_signed ? 127 : 255)))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: bad mid_scale %g / mid_zero %d / mid_signed %d", fn,
                          (double)d->mid_scale, d->mid_zero, d->mid_signed);
    if (d->res_codes && (!d->has_residual || !scale_ok(d->res_scale) || (d->res_signed != 0 && d->res_signed != 1) ||
                         d->res_zero < (d->res_signed ? -128 : 0) || d->res_zero > (d->res_signed ? 127 : 255)))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "%s: res_codes needs has_residual and a valid res_scale %g / res_zero %d / res_signed %d",
                          fn, (double)d->res_scale, d->res_zero, d->res_signed);
    if ((d->bias_after_mid != 0 && d->bias_after_mid != 1) || (d->bias_after_mid && !d->gemm))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: bias_after_mid %d must be 0, or 1 with gemm = 1", fn,
                          d->bias_after_mid);
    return TRTL_OK;
}

static const trtl_qk_ops *pick_ops(const trtl_qconv_desc *d, int32_t amx, trtl_qk_isa *isa)
{
    *isa = TRTL_QK_PORTABLE;
    if (d->groups != 1) /* grouped and depthwise: portable path (see qconv.h) */
        return NULL;
#if defined(__x86_64__)
    if (amx != TRTL_QCONV_AMX_NEVER && trtl_cpu_has(TRTL_QCONV_AMX_CPU)) {
        *isa = TRTL_QK_AMX;
        return &trtl_qk_ops_amx;
    }
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_FMA)) {
        *isa = TRTL_QK_AVX512VNNI;
        return &trtl_qk_ops_avx512vnni;
    }
    if (trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA | TRTL_CPU_AVXVNNI)) {
        *isa = TRTL_QK_AVXVNNI;
        return &trtl_qk_ops_avxvnni;
    }
    if (trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA)) {
        *isa = TRTL_QK_AVX2;
        return &trtl_qk_ops_avx2;
    }
#endif
    return NULL;
}

/* Depthwise convolutions (one input channel a group) have their own SIMD kernel per ISA; AMX has none
 * (a depthwise layer has no depth to fill its tiles), so the AVX512-VNNI one serves there. */
static const trtl_qdw_ops *pick_dw(const trtl_qconv_desc *d)
{
    if (d->gemm || d->groups == 1 || d->C != d->groups)
        return NULL;
#if defined(__x86_64__)
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_FMA))
        return &trtl_qdw_ops_avx512vnni;
    if (trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA | TRTL_CPU_AVXVNNI))
        return &trtl_qdw_ops_avxvnni;
    if (trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA))
        return &trtl_qdw_ops_avx2;
#endif
    return NULL;
}

void trtl_qconv_release(trtl_qconv_state *s)
{
    if (!s)
        return;
    trtl_aligned_free(s->w);
    trtl_aligned_free(s->packed);
    trtl_aligned_free(s->comp);
    trtl_aligned_free(s->scale);
    trtl_aligned_free(s->bias);
    trtl_aligned_free(s->dw_w);
    trtl_aligned_free(s->dwc_w);
    free(s);
}

/* The word of G depth values of row k at step q (bytes for G = 4, int16 halves for G = 2). */
static int32_t weight_word(const trtl_qconv_state *s, int64_t k, int64_t q, int32_t g)
{
    uint32_t word = 0;
    for (int32_t i = 0; i < g; i++) {
        int64_t dd = q * g + i;
        int32_t v = (k < s->d.K && dd < s->D) ? s->w[k * s->D + dd] : 0;
        word |= g == 4 ? (uint32_t)(uint8_t)(int8_t)v << (8 * i) : (uint32_t)(uint16_t)(int16_t)v << (16 * i);
    }
    return (int32_t)word;
}

static trtl_status pack_weights(trtl_qconv_state *s)
{
    const trtl_qk_ops *o = s->ops;
    const trtl_qconv_desc *d = &s->d;
    int64_t kpad = d->gemm ? ceil_div(d->K, o->vl) * o->vl : ceil_div(d->K, o->mr) * o->mr;
    size_t words = (size_t)(kpad * s->steps);
    s->packed = trtl_aligned_alloc(words * sizeof(int32_t));
    if (!s->packed)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "trtl_qconv_prepare: out of memory packing %zu weight bytes",
                          words * sizeof(int32_t));
    if (d->gemm) {
        for (int64_t t = 0; t < kpad / o->vl; t++)
            for (int64_t q = 0; q < s->steps; q++)
                for (int64_t l = 0; l < o->vl; l++)
                    s->packed[(t * s->steps + q) * o->vl + l] = weight_word(s, t * o->vl + l, q, o->g);
    } else {
        for (int64_t k = 0; k < kpad; k++)
            for (int64_t q = 0; q < s->steps; q++)
                s->packed[(k / o->mr) * s->steps * o->mr + trtl_qk_panel_word(o, q, k % o->mr)] =
                    weight_word(s, k, q, o->g);
    }
    return TRTL_OK;
}

trtl_status trtl_qconv_prepare(const trtl_qconv_desc *d, const int8_t *w, const float *w_scale, int32_t per_channel,
                               const float *bias, trtl_qconv_state **out)
{
    return trtl_qconv_prepare_amx(d, w, w_scale, per_channel, bias, TRTL_QCONV_AMX_AUTO, out);
}

/* The epilogue's folded clamp (trtl_qk_epi.fold): act then the clamp to +-lim equal one clamp to
 * [clamp(a), clamp(b)] when y is never NaN (clamps compose: clamp_[L,U] o clamp_[a,b] is the clamp to
 * the interval [clamp_[L,U](a), clamp_[L,U](b)], a <= b).  y = float(acc) * scale + bias with |acc| <
 * 2^31 is finite when scale * 2^31 and bias are. */
static float fold_med(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

static void fold_init(trtl_qconv_state *s, int64_t kpad)
{
    const trtl_qconv_desc *d = &s->d;
    const float lim = s->e.out_lim;
    s->e.fold = 0;
    if (d->out_quant != 2)
        return;
    for (int64_t k = 0; k < kpad; k++)
        if (!isfinite(s->scale[k] * 2147483648.0f) || !isfinite(s->bias[k]))
            return;
    float a = -lim, b = lim;
    if (d->act == TRTL_ACT_RELU) {
        a = 0.0f;
    } else if (d->act == TRTL_ACT_CLIP) {
        if (!(d->alpha <= d->beta)) /* also NaN bounds */
            return;
        a = fold_med(d->alpha, -lim, lim);
        b = fold_med(d->beta, -lim, lim);
    } else if (d->act != TRTL_ACT_NONE) {
        return;
    }
    s->e.fold = 1;
    s->e.fold_lo = a;
    s->e.fold_hi = b;
}

trtl_status trtl_qconv_prepare_amx(const trtl_qconv_desc *d, const int8_t *w, const float *w_scale,
                                   int32_t per_channel, const float *bias, int32_t amx, trtl_qconv_state **out)
{
    TRTL_CHECK_ARG(out);
    *out = NULL;
    TRTL_CHECK_ARG(d);
    TRTL_CHECK_ARG(w);
    TRTL_CHECK_ARG(w_scale);
    TRTL_TRY(check_desc(d));
    for (int64_t k = 0; k < (per_channel ? d->K : 1); k++)
        if (!scale_ok(w_scale[k]) || !scale_ok(d->in_scale * w_scale[k]))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                              "trtl_qconv_prepare: w_scale[%lld] = %g must be finite, > 0 (in_scale * w_scale in "
                              "[1e-30, 1e30])",
                              (long long)k, (double)w_scale[k]);
    if (amx == TRTL_QCONV_AMX_ONLY && (d->groups != 1 || !trtl_cpu_has(TRTL_QCONV_AMX_CPU)))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "trtl_qconv_prepare: the amx kernel needs groups = 1 (got %d) and a CPU "
                          "with AMX-INT8 and AVX512-VNNI", d->groups);
    trtl_qconv_state *s = calloc(1, sizeof *s);
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "trtl_qconv_prepare: out of memory");
    s->d = *d;
    s->dw = pick_dw(d);
    if (s->dw) {
        s->ops = s->dw->qk;
        s->isa = s->dw->isa;
    } else {
        s->ops = pick_ops(d, amx, &s->isa);
    }
    s->Cg = d->C / d->groups;
    s->Kg = d->K / d->groups;
    s->D = s->Cg * d->R * d->S;
    const int32_t g = s->ops ? s->ops->g : 1;
    s->steps = ceil_div(s->D, g);
    if (s->ops && s->ops->kchunk)
        s->steps = ceil_div(s->steps, s->ops->kchunk) * s->ops->kchunk;
    int64_t kpad = d->K + 64; /* covers every padding of K (to MR rows or VL columns) */
    s->w = trtl_aligned_alloc((size_t)(d->K * s->D));
    s->comp = trtl_aligned_alloc((size_t)kpad * sizeof(int32_t));
    s->scale = trtl_aligned_alloc((size_t)kpad * sizeof(float));
    s->bias = trtl_aligned_alloc((size_t)kpad * sizeof(float));
    if (!s->w || !s->comp || !s->scale || !s->bias) {
        trtl_qconv_release(s);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "trtl_qconv_prepare: out of memory copying the weights");
    }
    memcpy(s->w, w, (size_t)(d->K * s->D));
    /* u8 activations (VNNI) are q + shift; the dot products are corrected by (zero + shift) * sum w */
    const int32_t shift = d->in_signed ? 128 : 0, lowest = d->in_signed ? -128 : 0;
    const int32_t ucomp = (g == 4) ? d->in_zero + shift : 0;
    for (int64_t k = 0; k < kpad; k++) {
        int64_t sum = 0;
        if (k < d->K)
            for (int64_t i = 0; i < s->D; i++)
                sum += s->w[k * s->D + i];
        s->comp[k] = (int32_t)(ucomp * sum);
        s->scale[k] = k < d->K ? d->in_scale * w_scale[per_channel ? k : 0] : 0.0f;
        s->bias[k] = (k < d->K && bias) ? bias[k] : 0.0f;
    }
    s->q.scale = d->in_scale;
    s->q.rcp = 1.0f / d->in_scale;
    s->q.lim = 512.0f * d->in_scale;
    if (g == 4) {
        s->q.add = d->in_zero + shift;
        s->q.lo = 0;
        s->q.hi = 255;
        s->q.pad = d->in_zero + shift;
    } else {
        s->q.add = 0;
        s->q.lo = lowest - d->in_zero;
        s->q.hi = lowest + 255 - d->in_zero;
        s->q.pad = 0;
    }
    s->e.act = d->act;
    s->e.alpha = d->alpha;
    s->e.beta = d->beta;
    s->e.out_quant = d->out_quant;
    if (d->out_quant) {
        const int32_t olow = d->out_signed ? -128 : 0;
        s->e.out_scale = d->out_scale;
        s->e.out_rcp = 1.0f / d->out_scale;
        s->e.out_lim = 512.0f * d->out_scale;
        s->e.out_lo = olow - d->out_zero;
        s->e.out_hi = olow + 255 - d->out_zero;
        s->e.out_zero = d->out_zero;
    }
    s->e.mid_quant = d->mid_quant;
    if (d->mid_quant) {
        const int32_t mlow = d->mid_signed ? -128 : 0;
        s->e.mid_scale = d->mid_scale;
        s->e.mid_rcp = 1.0f / d->mid_scale;
        s->e.mid_lim = 512.0f * d->mid_scale;
        s->e.mid_lo = mlow - d->mid_zero;
        s->e.mid_hi = mlow + 255 - d->mid_zero;
    }
    s->e.res_codes = d->res_codes;
    s->e.res_signed = d->res_signed;
    s->e.res_zero = d->res_zero;
    s->e.res_scale = d->res_scale;
    s->e.bias_late = d->bias_after_mid;
    fold_init(s, kpad);
    if (s->dw)
        s->dw_T = ceil_div(d->S, g);
    if (s->ops) {
        trtl_status st = s->dw ? trtl_qdw_pack(s) : pack_weights(s);
        if (st != TRTL_OK) {
            trtl_qconv_release(s);
            return st;
        }
    }
    *out = s;
    return TRTL_OK;
}

const char *trtl_qconv_kernel_name(const trtl_qconv_state *s)
{
    if (!s)
        return NULL;
    return s->dw ? s->dw->name : s->ops ? s->ops->name : "portable";
}

static trtl_status check_run(const trtl_qconv_state *s, int gemm, const char *fn)
{
    if (!s)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: s is NULL", fn);
    if (s->d.gemm != gemm)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: state was prepared with gemm = %d", fn, s->d.gemm);
    return TRTL_OK;
}

size_t trtl_qconv_scratch(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, int nthreads)
{
    if (!s || s->d.gemm || N < 0 || H < 0 || W < 0)
        return 0;
    if (s->dw) /* per thread (the other paths' scratch is shared by the threads) */
        return trtl_qdw_scratch(s, H, W, nthreads);
    return s->ops ? trtl_qconv_simd_scratch(s, N, H, W) : trtl_qconv_ref_scratch(s, N, H, W);
}

trtl_status trtl_qconv_run_codes(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const void *x,
                                 int32_t x_codes, void *y, const void *residual, void *scratch, size_t scratch_size,
                                 struct trtl_threadpool *pool)
{
    const char *fn = "trtl_qconv_run";
    TRTL_TRY(check_run(s, 0, fn));
    const trtl_qconv_desc *d = &s->d;
    int64_t OH = trtl_qconv_out_dim(H, d->R, d->stride_h, d->pad_t, d->pad_b, d->dil_h);
    int64_t OW = trtl_qconv_out_dim(W, d->S, d->stride_w, d->pad_l, d->pad_r, d->dil_w);
    if (N < 0 || OH < 0 || OW < 0)
        return trtl_error(TRTL_ERR_SHAPE, "%s: bad input size N %lld H %lld W %lld", fn, (long long)N, (long long)H,
                          (long long)W);
    if (N == 0 || OH == 0 || OW == 0)
        return TRTL_OK;
    if (!x || !y || (d->has_residual && !residual))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: x, y (or residual with has_residual) is NULL", fn);
    if ((H + d->pad_t + d->pad_b) * (W + d->pad_l + d->pad_r) * (int64_t)d->C > INT32_MAX)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "%s: input image of %lld x %lld x %lld is too large", fn,
                          (long long)d->C, (long long)H, (long long)W);
    size_t need = trtl_qconv_scratch(s, N, H, W, 1);
    if (need && (!scratch || scratch_size < need))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: scratch of %zu bytes, %zu needed", fn, scratch_size, need);
    const trtl_qk_io io = {x, x_codes ? 1 : 0, y, d->has_residual && !d->res_codes ? residual : NULL,
                           d->has_residual && d->res_codes ? residual : NULL};
    if (s->dw)
        trtl_qdw_run(s, N, H, W, &io, scratch, scratch_size, pool);
    else if (s->ops)
        trtl_qconv_simd_run(s, N, H, W, &io, scratch, pool);
    else
        trtl_qconv_ref_run(s, N, H, W, &io, scratch, pool);
    return TRTL_OK;
}

trtl_status trtl_qconv_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const float *x, float *y,
                           const float *residual, void *scratch, size_t scratch_size, struct trtl_threadpool *pool)
{
    return trtl_qconv_run_codes(s, N, H, W, x, 0, y, residual, scratch, scratch_size, pool);
}

size_t trtl_qgemm_scratch(const trtl_qconv_state *s, int64_t M, int nthreads)
{
    (void)nthreads;
    if (!s || !s->d.gemm || M < 0)
        return 0;
    return s->ops ? trtl_qgemm_simd_scratch(s, M) : trtl_qgemm_ref_scratch(s, M);
}

trtl_status trtl_qgemm_run_codes(const trtl_qconv_state *s, int64_t M, const void *x, int32_t x_codes, void *y,
                                 const void *residual, void *scratch, size_t scratch_size,
                                 struct trtl_threadpool *pool)
{
    const char *fn = "trtl_qgemm_run";
    TRTL_TRY(check_run(s, 1, fn));
    if (M < 0)
        return trtl_error(TRTL_ERR_SHAPE, "%s: M %lld < 0", fn, (long long)M);
    if (M == 0)
        return TRTL_OK;
    if (!x || !y || (s->d.has_residual && !residual))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: x, y (or residual with has_residual) is NULL", fn);
    size_t need = trtl_qgemm_scratch(s, M, 1);
    if (need && (!scratch || scratch_size < need))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: scratch of %zu bytes, %zu needed", fn, scratch_size, need);
    const trtl_qk_io io = {x, x_codes ? 1 : 0, y, s->d.has_residual && !s->d.res_codes ? residual : NULL,
                           s->d.has_residual && s->d.res_codes ? residual : NULL};
    if (s->ops)
        trtl_qgemm_simd_run(s, M, &io, scratch, pool);
    else
        trtl_qgemm_ref_run(s, M, &io, scratch, pool);
    return TRTL_OK;
}

trtl_status trtl_qgemm_run(const trtl_qconv_state *s, int64_t M, const float *x, float *y, const float *residual,
                           void *scratch, size_t scratch_size, struct trtl_threadpool *pool)
{
    return trtl_qgemm_run_codes(s, M, x, 0, y, residual, scratch, scratch_size, pool);
}
