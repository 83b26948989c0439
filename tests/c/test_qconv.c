/*
 * test_qconv.c -- the int8 convolution library (csrc/kernels/qconv.h) against a float64 model of
 * the quantized math written here, independently of the library: ONNX QuantizeLinear on the
 * float32 quotient, an int64 dot product over the window, dequantization, bias, residual, the
 * activation, the output fake-quantization.
 *
 * Every kernel the CPU has is run (TRTL_CPU_MASK-style masks via trtl_cpu_set_mask: amx, avx512vnni,
 * avxvnni, avx2, portable), on random shapes with tails, single-threaded and on a pool of 3:
 *   - exact mode (scales 1, no bias / activation): y must equal the int32 accumulator exactly;
 *   - general mode: within 1e-5 relative of the model (fp32 output) or 1 LSB of out_scale;
 *   - the quantizer alone on ties (k + 0.5) * scale, their float neighbours, NaN and +-Inf;
 *   - integer input (x as int8 / uint8 codes, the _codes run functions) and integer output codes
 *     (out_quant = 2): codes within 1 LSB of the model's, the int32 accumulators as above;
 *   - batch strips (1x1 stride 1 at N > 1, strips across image boundaries): the batch run byte for
 *     byte equal to the image-by-image run in every epilogue mode, codes equal to the portable path's.
 * Bad descriptors must be refused with a status.
 *
 *   test_qconv [seed] [cases per kernel]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/qconv.h"
#include "kernels/qconv_internal.h"
#include "kernels/kernel.h"
#include "core/cpu.h"
#include "core/params.h"
#include "core/threadpool.h"

static uint64_t g_rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}
static int rint_in(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static double runi(double lo, double hi) { return lo + (hi - lo) * (rnd() / 4294967296.0); }

static int g_fail, g_checked;

/* ---- the float64 model ------------------------------------------------------------------------ */

static int64_t model_quant(float x, float scale, int zero, int is_signed)
{
    const int64_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    if (isnan(x))
        return lo;
    float t = x / scale; /* ONNX: the float32 quotient */
    double r = nearbyint((double)t) + zero;
    return r < lo ? lo : r > hi ? hi : (int64_t)r;
}

static double model_act(int act, double a, double b, double x)
{
    switch (act) {
    case TRTL_ACT_NONE: return x;
    case TRTL_ACT_RELU: return x < 0 ? 0 : x;
    case TRTL_ACT_LEAKY_RELU: return x >= 0 ? x : a * x;
    case TRTL_ACT_CLIP: return x < a ? a : x > b ? b : x;
    case TRTL_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TRTL_ACT_TANH: return tanh(x);
    case TRTL_ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case TRTL_ACT_ELU: return x >= 0 ? x : a * (exp(x) - 1.0);
    case TRTL_ACT_SILU: return x / (1.0 + exp(-x));
    default: return (double)trtl_activation_eval(act, (float)a, (float)b, (float)x);
    }
}

static const int k_acts[] = {TRTL_ACT_NONE, TRTL_ACT_RELU,  TRTL_ACT_LEAKY_RELU, TRTL_ACT_CLIP,      TRTL_ACT_SIGMOID,
                             TRTL_ACT_TANH, TRTL_ACT_GELU_ERF, TRTL_ACT_ELU,     TRTL_ACT_HARD_SWISH, TRTL_ACT_SILU};

typedef struct tcase {
    trtl_qconv_desc d;
    int64_t N, H, W, M; /* M: gemm rows */
    int per_channel, has_bias, exact;
    int x_codes; /* run with the input as codes (x then holds the values the codes stand for) */
} tcase;

/* y (N*K*P or M*K) of the model; acc (int64) too for exact mode. */
static void model_run(const tcase *c, const float *x, const int8_t *w, const float *ws, const float *bias,
                      const float *res, double *y, int64_t *acc_out, int64_t OH, int64_t OW)
{
    const trtl_qconv_desc *d = &c->d;
    const int64_t Cg = d->C / d->groups, Kg = d->K / d->groups, P = OH * OW;
    const int64_t N = d->gemm ? c->M : c->N, out_img = d->gemm ? d->K : d->K * P;
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < d->K; k++)
            for (int64_t p = 0; p < (d->gemm ? 1 : P); p++) {
                int64_t oh = p / (OW ? OW : 1), ow = p % (OW ? OW : 1), g = k / Kg, acc = 0;
                for (int64_t ci = 0; ci < Cg; ci++)
                    for (int64_t r = 0; r < d->R; r++)
                        for (int64_t s = 0; s < d->S; s++) {
                            int64_t ih = oh * d->stride_h - d->pad_t + r * d->dil_h;
                            int64_t iw = ow * d->stride_w - d->pad_l + s * d->dil_w;
                            if (!d->gemm && (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W))
                                continue; /* padding: q = zero, adds nothing */
                            float xv = d->gemm ? x[n * d->C + ci]
                                               : x[((n * d->C + g * Cg + ci) * c->H + ih) * c->W + iw];
                            int64_t q = model_quant(xv, d->in_scale, d->in_zero, d->in_signed) - d->in_zero;
                            acc += q * w[((k * Cg + ci) * d->R + r) * d->S + s];
                        }
                int64_t o = n * out_img + k * (d->gemm ? 1 : P) + p;
                if (acc_out)
                    acc_out[o] = acc;
                const int late = d->bias_after_mid; /* the bias after the mid quantization */
                double v = (double)acc * ((double)d->in_scale * ws[c->per_channel ? k : 0]) +
                           (bias && !late ? bias[k] : 0.0);
                if (d->mid_quant)
                    v = (double)(model_quant((float)v, d->mid_scale, d->mid_zero, d->mid_signed) - d->mid_zero) *
                        (double)d->mid_scale;
                if (late && bias)
                    v += bias[k];
                if (res)
                    v += res[o];
                v = model_act(d->act, d->alpha, d->beta, v);
                if (d->out_quant == 2) /* the code itself */
                    v = (double)model_quant((float)v, d->out_scale, d->out_zero, d->out_signed);
                else if (d->out_quant)
                    v = (double)(model_quant((float)v, d->out_scale, d->out_zero, d->out_signed) - d->out_zero) *
                        d->out_scale;
                y[o] = v;
            }
}

/* ---- one case ---------------------------------------------------------------------------------- */

static int run_case(const tcase *c, trtl_threadpool *pool, const char *want_kernel, const char *label)
{
    const trtl_qconv_desc *d = &c->d;
    int64_t OH = 1, OW = 1;
    if (!d->gemm) {
        OH = trtl_qconv_out_dim(c->H, d->R, d->stride_h, d->pad_t, d->pad_b, d->dil_h);
        OW = trtl_qconv_out_dim(c->W, d->S, d->stride_w, d->pad_l, d->pad_r, d->dil_w);
    }
    const int64_t D = (int64_t)(d->C / d->groups) * d->R * d->S;
    const int64_t nx = d->gemm ? c->M * d->C : c->N * d->C * c->H * c->W;
    const int64_t ny = d->gemm ? c->M * d->K : c->N * d->K * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)(nx + 1)), *y = malloc(sizeof(float) * (size_t)(ny + 1));
    float *res = malloc(sizeof(float) * (size_t)(ny + 1)), *ws = malloc(sizeof(float) * (size_t)d->K);
    float *bias = malloc(sizeof(float) * (size_t)d->K);
    int8_t *w = malloc((size_t)(d->K * D));
    double *ym = malloc(sizeof(double) * (size_t)(ny + 1));
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)(ny + 1));
    int8_t *xq = malloc((size_t)(nx + 1)), *yq = malloc((size_t)(ny + 1)), *resq = malloc((size_t)(ny + 1));
    trtl_qconv_state *s = NULL;
    int bad = 0;
    /* activations over the whole code range and beyond (saturation), some exactly on ties */
    for (int64_t i = 0; i < nx; i++) {
        double u = runi(-200.0, 200.0);
        x[i] = (rnd() % 8 == 0) ? (float)((floor(u) + 0.5) * d->in_scale) : (float)(u * d->in_scale);
    }
    if (c->x_codes) /* random codes; the model sees the values they stand for, which quantize back to them */
        for (int64_t i = 0; i < nx; i++) {
            int code = d->in_signed ? rint_in(-128, 127) : rint_in(0, 255);
            xq[i] = (int8_t)code;
            x[i] = (float)(code - d->in_zero) * d->in_scale;
            if (model_quant(x[i], d->in_scale, d->in_zero, d->in_signed) != code) {
                printf("FAIL %s: code %d does not survive a round trip\n", label, code);
                bad = 1;
                goto done;
            }
        }
    for (int64_t i = 0; i < d->K * D; i++)
        w[i] = (int8_t)rint_in(-128, 127);
    for (int64_t k = 0; k < d->K; k++) {
        ws[k] = c->exact ? 1.0f : (float)runi(0.001, 0.02);
        bias[k] = (float)runi(-3.0, 3.0);
    }
    for (int64_t i = 0; i < ny; i++)
        res[i] = (float)runi(-2.0, 2.0);
    if (d->res_codes) /* the model reads the values the codes stand for, as the kernel computes them */
        for (int64_t i = 0; i < ny; i++) {
            int code = d->res_signed ? rint_in(-128, 127) : rint_in(0, 255);
            resq[i] = (int8_t)code;
            res[i] = (float)(code - d->res_zero) * d->res_scale;
        }
    const void *rin = !d->has_residual ? NULL : d->res_codes ? (const void *)resq : (const void *)res;
    trtl_status st = trtl_qconv_prepare(d, w, ws, c->per_channel, c->has_bias ? bias : NULL, &s);
    if (st != TRTL_OK) {
        printf("FAIL %s: prepare returned %d: %s\n", label, (int)st, trtl_last_error());
        bad = 1;
        goto done;
    }
    if (want_kernel && strcmp(trtl_qconv_kernel_name(s), want_kernel) != 0) {
        printf("FAIL %s: kernel %s, expected %s\n", label, trtl_qconv_kernel_name(s), want_kernel);
        bad = 1;
        goto done;
    }
    size_t sz = d->gemm ? trtl_qgemm_scratch(s, c->M, trtl_threadpool_size(pool))
                        : trtl_qconv_scratch(s, c->N, c->H, c->W, trtl_threadpool_size(pool));
    char *scratch = malloc(sz + 8);
    char *sp = scratch + (rnd() % 2); /* any alignment */
    for (int64_t i = 0; i < ny; i++)
        y[i] = -12345.0f;
    memset(yq, 0x5a, (size_t)(ny + 1));
    const void *xin = c->x_codes ? (const void *)xq : (const void *)x;
    void *yout = d->out_quant == 2 ? (void *)yq : (void *)y;
    if (c->x_codes || d->out_quant == 2 || d->res_codes)
        st = d->gemm ? trtl_qgemm_run_codes(s, c->M, xin, c->x_codes, yout, rin, sp, sz, pool)
                     : trtl_qconv_run_codes(s, c->N, c->H, c->W, xin, c->x_codes, yout, rin, sp, sz, pool);
    else
        st = d->gemm ? trtl_qgemm_run(s, c->M, x, y, d->has_residual ? res : NULL, sp, sz, pool)
                     : trtl_qconv_run(s, c->N, c->H, c->W, x, y, d->has_residual ? res : NULL, sp, sz, pool);
    free(scratch);
    if (st != TRTL_OK) {
        printf("FAIL %s: run returned %d\n", label, (int)st);
        bad = 1;
        goto done;
    }
    model_run(c, x, w, ws, c->has_bias ? bias : NULL, d->has_residual ? res : NULL, ym, acc, OH, OW);
    if (d->out_quant == 2 && yq[ny] != 0x5a) {
        printf("FAIL %s: wrote past the output codes\n", label);
        bad++;
    }
    for (int64_t i = 0; i < ny && bad < 5; i++) {
        double got = y[i], want = ym[i], tol;
        if (d->out_quant == 2) {
            got = d->out_signed ? (double)yq[i] : (double)(uint8_t)yq[i];
            tol = 1.0; /* one LSB */
        } else if (c->exact) {
            tol = 0.0;
            want = (double)(float)acc[i];
        } else if (d->out_quant) {
            tol = d->out_scale * 1.0001;
        } else {
            int64_t k = d->gemm ? i % d->K : (i / (OH * OW)) % d->K;
            double mag = fabs((double)acc[i] * d->in_scale * ws[c->per_channel ? k : 0]) + fabs(bias[k]) + 2.0 +
                         fabs(want);
            tol = 2e-5 * mag;
        }
        if (d->mid_quant && !c->exact) /* a value on a rounding tie of the float32 epilogue may move one mid step */
            tol += d->out_quant == 2 ? ceil(d->mid_scale / d->out_scale) : d->mid_scale * 1.0001;
        g_checked++;
        if (!(fabs(got - want) <= tol) && !(isnan(got) && isnan(want))) {
            printf("FAIL %s: y[%lld] = %.9g, model %.9g (acc %lld, tol %.3g)\n", label, (long long)i, got, want,
                   (long long)acc[i], tol);
            bad++;
        }
    }
done:
    trtl_qconv_release(s);
    free(x);
    free(y);
    free(res);
    free(ws);
    free(bias);
    free(w);
    free(ym);
    free(acc);
    free(xq);
    free(yq);
    free(resq);
    return bad ? 1 : 0;
}

static void describe(const tcase *c, char *buf, size_t n, const char *kernel, int threads)
{
    const trtl_qconv_desc *d = &c->d;
    if (d->gemm)
        snprintf(buf, n,
                 "[%s t%d] gemm M%lld C%d K%d act %d res %d signed %d z %d pc %d oq %d mid %d late %d bias %d exact %d "
                 "codes %d",
                 kernel, threads, (long long)c->M, d->C, d->K, d->act, d->has_residual, d->in_signed, d->in_zero,
                 c->per_channel, d->out_quant, d->mid_quant, d->bias_after_mid, c->has_bias, c->exact, c->x_codes);
    else
        snprintf(buf, n,
                 "[%s t%d] conv N%lld C%d H%lld W%lld K%d %dx%d s%d,%d pad %d,%d,%d,%d dil %d,%d g%d act %d res %d "
                 "signed %d z %d pc %d oq %d exact %d codes %d",
                 kernel, threads, (long long)c->N, d->C, (long long)c->H, (long long)c->W, d->K, d->R, d->S,
                 d->stride_h, d->stride_w, d->pad_t, d->pad_l, d->pad_b, d->pad_r, d->dil_h, d->dil_w, d->groups,
                 d->act, d->has_residual, d->in_signed, d->in_zero, c->per_channel, d->out_quant, c->exact, c->x_codes);
}

/* A random case; `shape` (0..) cycles through required geometries first. */
static void make_case(tcase *c, int idx, int gemm)
{
    memset(c, 0, sizeof *c);
    trtl_qconv_desc *d = &c->d;
    d->gemm = gemm;
    d->groups = 1;
    d->stride_h = d->stride_w = d->dil_h = d->dil_w = 1;
    d->R = d->S = 1;
    if (gemm) {
        c->M = rint_in(1, 40);
        d->C = rint_in(1, 300);
        d->K = rint_in(1, 90);
    } else {
        static const int ks[] = {1, 1, 3, 3, 3, 5, 7};
        d->R = ks[rnd() % 7];
        d->S = rnd() % 4 ? d->R : ks[rnd() % 7];
        d->C = rint_in(1, 70);
        d->K = rint_in(1, 40);
        c->N = rint_in(1, 3);
        c->H = rint_in(1, 19);
        c->W = rint_in(1, 23);
        if (rnd() % 3 == 0) {
            d->stride_h = rint_in(1, 2);
            d->stride_w = rint_in(1, 3);
        }
        if (rnd() % 4 == 0) {
            d->dil_h = rint_in(1, 2);
            d->dil_w = rint_in(1, 2);
        }
        if (rnd() % 2) {
            d->pad_t = rint_in(0, 3);
            d->pad_l = rint_in(0, 3);
            d->pad_b = rint_in(0, 3);
            d->pad_r = rint_in(0, 3);
        }
        if (rnd() % 8 == 0) { /* grouped / depthwise */
            int g = rint_in(2, 4);
            d->C = g * rint_in(1, 6);
            d->K = g * rint_in(1, 5);
            d->groups = rnd() % 2 ? g : d->C;
            if (d->K % d->groups)
                d->K = d->groups * rint_in(1, 2);
        }
        switch (idx % 8) { /* the geometries that matter, with tails */
        case 0: d->R = d->S = 1; d->pad_t = d->pad_l = d->pad_b = d->pad_r = 0; d->stride_h = d->stride_w = 1;
            d->groups = 1; break;
        case 1: d->R = d->S = 3; d->pad_t = d->pad_l = d->pad_b = d->pad_r = 1; d->stride_h = d->stride_w = 1;
            d->dil_h = d->dil_w = 1; d->groups = 1; break;
        case 2: d->R = d->S = 3; d->pad_t = d->pad_l = d->pad_b = d->pad_r = 1; d->stride_h = d->stride_w = 2;
            d->groups = 1; break;
        case 3: d->R = d->S = 7; d->pad_t = d->pad_l = d->pad_b = d->pad_r = 3; d->stride_h = d->stride_w = 2;
            d->groups = 1; c->H += 8; c->W += 8; break;
        default: break;
        }
    }
    d->in_signed = rnd() % 2;
    d->in_zero = d->in_signed ? rint_in(-20, 20) : rint_in(0, 255);
    if (rnd() % 4 == 0)
        d->in_zero = d->in_signed ? 0 : 128;
    d->in_scale = (float)runi(0.005, 0.05);
    c->per_channel = rnd() % 2;
    c->exact = idx % 5 == 4;
    c->x_codes = idx % 3 == 1;
    if (c->exact) {
        d->in_scale = 1.0f;
        d->act = TRTL_ACT_NONE;
        return;
    }
    c->has_bias = rnd() % 4 != 0;
    d->act = k_acts[rnd() % (sizeof k_acts / sizeof k_acts[0])];
    d->alpha = (float)runi(-1.0, 0.5);
    d->beta = (float)runi(0.5, 3.0);
    if (d->act == TRTL_ACT_HARD_SWISH) {
        d->alpha = 1.0f / 6.0f;
        d->beta = 0.5f;
    }
    if (d->act == TRTL_ACT_ELU)
        d->alpha = (float)runi(0.1, 1.5);
    d->has_residual = rnd() % 2;
    d->out_quant = rnd() % 3 == 0 ? 1 + (int)(rnd() % 2) : 0;
    d->out_signed = rnd() % 2;
    d->out_zero = d->out_signed ? rint_in(-10, 10) : rint_in(0, 40);
    d->out_scale = (float)runi(0.01, 0.1);
    /* the residual-add epilogue (appended fields): a fake quantization before the residual, and the
     * residual given as codes */
    if (d->has_residual && rnd() % 2) {
        d->mid_quant = rnd() % 2;
        d->mid_signed = rnd() % 2;
        d->mid_zero = d->mid_signed ? rint_in(-10, 10) : rint_in(0, 200);
        d->mid_scale = (float)runi(0.01, 0.1);
        d->res_codes = rnd() % 2;
        d->res_signed = rnd() % 2;
        d->res_zero = d->res_signed ? rint_in(-10, 10) : rint_in(0, 200);
        d->res_scale = (float)runi(0.005, 0.05);
    }
    /* quantize_static's MatMul -> Q/DQ -> Add(bias) -> Q/DQ (passes/qlinear_bias.c): rows with a mid quantization and
     * the bias after it, output fake-quantized, codes or float */
    if (gemm && !d->mid_quant && rnd() % 3 == 0) {
        d->mid_quant = 1;
        d->mid_signed = rnd() % 2;
        d->mid_zero = d->mid_signed ? rint_in(-10, 10) : rint_in(0, 200);
        d->mid_scale = (float)runi(0.01, 0.1);
        d->bias_after_mid = 1;
        if (rnd() % 2) { /* the BERT form: no residual, no activation */
            d->has_residual = d->res_codes = 0;
            d->act = TRTL_ACT_NONE;
        }
    }
}

/* A depthwise case (one input channel a group; channel multiplier 1 or 2): 3x3 / 5x5 (sometimes
 * other windows), strides 1 / 2 (sometimes 3), dilations, padding, widths with vector tails. */
static void make_dw_case(tcase *c, int idx)
{
    make_case(c, idx, 0);
    trtl_qconv_desc *d = &c->d;
    static const int ks[] = {3, 3, 3, 5, 5, 1, 7};
    d->R = ks[rnd() % 7];
    d->S = rnd() % 5 ? d->R : ks[rnd() % 7];
    d->C = d->groups = rint_in(2, 24);
    d->K = d->C * (rnd() % 4 == 0 ? 2 : 1);
    d->stride_h = rnd() % 6 ? rint_in(1, 2) : 3;
    d->stride_w = rnd() % 6 ? (rnd() % 3 ? d->stride_h : rint_in(1, 2)) : 3;
    d->dil_h = rnd() % 4 ? 1 : 2;
    d->dil_w = rnd() % 4 ? 1 : rint_in(1, 3);
    d->pad_t = rint_in(0, (d->R - 1) / 2 * d->dil_h + 1);
    d->pad_b = rnd() % 3 ? d->pad_t : rint_in(0, 2);
    d->pad_l = rint_in(0, (d->S - 1) / 2 * d->dil_w + 1);
    d->pad_r = rnd() % 3 ? d->pad_l : rint_in(0, 2);
    c->N = rint_in(1, 2);
    c->H = rint_in(1, 12) + (d->R - 1) * d->dil_h;
    c->W = rint_in(1, 45) + (d->S - 1) * d->dil_w;
}

/* A 1x1, stride-1, unpadded convolution with the input as codes: the strips are packed straight from
 * the codes (pack_direct, no padded image); depths with every remainder of the word's G and image
 * sizes with strip tails. */
static void make_direct_codes_case(tcase *c, int idx)
{
    make_case(c, idx, 0);
    trtl_qconv_desc *d = &c->d;
    d->R = d->S = 1;
    d->stride_h = d->stride_w = d->dil_h = d->dil_w = 1;
    d->pad_t = d->pad_l = d->pad_b = d->pad_r = 0;
    d->groups = 1;
    d->C = rint_in(1, 70);
    d->K = rint_in(1, 40);
    c->x_codes = 1;
}

/* The kernel a case runs on path `name`: depthwise convolutions on the ISA's depthwise kernel (AMX
 * has none: avx512vnni's), other grouped ones on the portable path. */
static const char *want_kernel(const tcase *c, const char *name, char *buf, size_t n)
{
    if (c->d.groups == 1 || !strcmp(name, "portable"))
        return name;
    if (c->d.C != c->d.groups)
        return "portable";
    snprintf(buf, n, "%s_dw", strcmp(name, "amx") ? name : "avx512vnni");
    return buf;
}

/* ---- the quantizer on ties, NaN and Inf ---------------------------------------------------------- */

/* A made case on path `name` (its expected kernel), described for the failure message. */
static int run_made(const tcase *c, trtl_threadpool *p, const char *name)
{
    char wbuf[64], label[512];
    const char *want = want_kernel(c, name, wbuf, sizeof wbuf);
    describe(c, label, sizeof label, want, trtl_threadpool_size(p));
    return run_case(c, p, want, label);
}

static int quantizer_case(trtl_threadpool *pool, const char *want, float scale, int zero, int is_signed)
{
    enum { HW = 4099 };
    static float x[HW], y[HW];
    for (int i = 0; i < HW; i++) {
        float t = (float)(((int)(rnd() % 600) - 300) + 0.5) * scale;
        switch (i % 4) {
        case 0: x[i] = t; break;
        case 1: x[i] = nextafterf(t, INFINITY); break;
        case 2: x[i] = nextafterf(t, -INFINITY); break;
        default: x[i] = (float)runi(-300.0, 300.0) * scale; break;
        }
    }
    x[0] = NAN;
    x[1] = INFINITY;
    x[2] = -INFINITY;
    x[3] = 3.0e38f;
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    d.C = d.K = d.R = d.S = 1;
    d.stride_h = d.stride_w = d.dil_h = d.dil_w = d.groups = 1;
    d.in_scale = scale;
    d.in_zero = zero;
    d.in_signed = is_signed;
    d.act = TRTL_ACT_NONE;
    const int8_t w = 1;
    const float ws = 1.0f;
    trtl_qconv_state *s = NULL;
    if (trtl_qconv_prepare(&d, &w, &ws, 0, NULL, &s) != TRTL_OK || strcmp(trtl_qconv_kernel_name(s), want)) {
        printf("FAIL quantizer [%s]: prepare\n", want);
        trtl_qconv_release(s);
        return 1;
    }
    size_t sz = trtl_qconv_scratch(s, 1, 1, HW, 1);
    void *scratch = malloc(sz);
    int bad = 0;
    if (trtl_qconv_run(s, 1, 1, HW, x, y, NULL, scratch, sz, pool) != TRTL_OK)
        bad = 1;
    for (int i = 0; i < HW && bad < 5; i++) {
        /* y = (q - zero) * (scale * 1): the code comes back exactly */
        float want_y = (float)(model_quant(x[i], scale, zero, is_signed) - zero) * scale;
        g_checked++;
        if (y[i] != want_y) {
            printf("FAIL quantizer [%s] scale %.9g zero %d signed %d: x = %.9g gives %.9g, model %.9g\n", want,
                   (double)scale, zero, is_signed, (double)x[i], (double)y[i], (double)want_y);
            bad++;
        }
    }
    free(scratch);
    trtl_qconv_release(s);
    return bad ? 1 : 0;
}

/* ---- bad input ---------------------------------------------------------------------------------- */

static int refuses(void)
{
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    d.C = d.K = 4;
    d.R = d.S = 1;
    d.stride_h = d.stride_w = d.dil_h = d.dil_w = d.groups = 1;
    d.in_scale = 0.1f;
    d.act = TRTL_ACT_NONE;
    int8_t w[16] = {0};
    float ws[4] = {1, 1, 1, 1}, bad_ws[4] = {1, NAN, 1, 1};
    trtl_qconv_state *s = (trtl_qconv_state *)&d;
    int fails = 0;
    struct {
        const char *what;
        trtl_qconv_desc d;
    } cases[10];
    for (int i = 0; i < 10; i++)
        cases[i].d = d;
    cases[0].what = "zero scale", cases[0].d.in_scale = 0.0f;
    cases[1].what = "NaN scale", cases[1].d.in_scale = NAN;
    cases[2].what = "zero out of range", cases[2].d.in_zero = 300;
    cases[3].what = "groups", cases[3].d.groups = 3;
    cases[4].what = "gemm with 3x3", cases[4].d.gemm = 1, cases[4].d.R = 3;
    cases[5].what = "stride 0", cases[5].d.stride_w = 0;
    cases[6].what = "activation", cases[6].d.act = 77;
    cases[7].what = "out scale", cases[7].d.out_quant = 1, cases[7].d.out_scale = INFINITY;
    cases[8].what = "bias_after_mid on a convolution", cases[8].d.bias_after_mid = 1;
    cases[9].what = "bias_after_mid 2", cases[9].d.bias_after_mid = 2, cases[9].d.gemm = 1;
    for (int i = 0; i < 10; i++) {
        s = (trtl_qconv_state *)&d;
        if (trtl_qconv_prepare(&cases[i].d, w, ws, 0, NULL, &s) == TRTL_OK || s != NULL) {
            printf("FAIL refuses: %s accepted\n", cases[i].what);
            fails++;
        }
    }
    if (trtl_qconv_prepare(&d, w, bad_ws, 1, NULL, &s) == TRTL_OK) {
        printf("FAIL refuses: NaN weight scale accepted\n");
        fails++;
    }
    if (trtl_qconv_prepare(&d, w, ws, 1, NULL, &s) != TRTL_OK) {
        printf("FAIL refuses: a good descriptor refused\n");
        return fails + 1;
    }
    float x[4] = {0}, y[4];
    if (trtl_qconv_run(s, 1, 1, 1, x, y, NULL, NULL, 0, NULL) == TRTL_OK && trtl_qconv_scratch(s, 1, 1, 1, 1)) {
        printf("FAIL refuses: run without scratch accepted\n");
        fails++;
    }
    if (trtl_qgemm_run(s, 1, x, y, NULL, NULL, 0, NULL) == TRTL_OK) {
        printf("FAIL refuses: gemm run of a convolution state accepted\n");
        fails++;
    }
    trtl_qconv_release(s);
    return fails;
}

/* The state of path `mask` (s1) and of the portable path (s0) for one layer: 1 when both prepared. */
static int prepare_pair(const trtl_qconv_desc *d, const int8_t *w, const float *ws, const float *bias, uint32_t mask,
                        trtl_qconv_state **s1, trtl_qconv_state **s0)
{
    trtl_status st1 = trtl_qconv_prepare(d, w, ws, 1, bias, s1);
    trtl_cpu_set_mask(0u);
    trtl_status st0 = trtl_qconv_prepare(d, w, ws, 1, bias, s0);
    trtl_cpu_set_mask(mask);
    return st1 == TRTL_OK && st0 == TRTL_OK;
}

/* ---- the bias after the mid quantization (bias_after_mid, passes/qlinear_bias.c) -------------------------- */

/* quantize_static's MatMul -> Q/DQ -> Add(bias) -> Q/DQ on rows: y = fq_mid(acc * scale) + bias[k], then ReLU or
 * nothing, then the output fake-quantized, as codes or float.  Against a float32 model written here (the library's
 * own arithmetic: scale = in_scale * w_scale[k] rounded once, float(acc) * scale, the mid and output quantizers on the
 * correctly rounded quotient, the bias added in float) bit for bit: unlike a bias added before the mid quantization
 * (one mid step apart at most, which the float64 comparison's tolerance allows), a wrong order shows.  Rows, depths
 * and columns with every tail, float or code input, per-channel or per-tensor weight scales, int8 / uint8 codes. */
static int late_case(trtl_threadpool *pool, const char *path, int variant)
{
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    static const int64_t Ms[] = {1, 5, 13, 37, 4, 64};
    const int64_t M = Ms[variant % 6];
    d.C = variant % 7 == 0 ? 768 : rint_in(1, 300);
    d.K = variant % 5 == 0 ? 96 : rint_in(1, 90);
    d.R = d.S = d.stride_h = d.stride_w = d.dil_h = d.dil_w = d.groups = 1;
    d.gemm = 1;
    d.in_scale = (float)runi(0.005, 0.05);
    d.in_signed = variant % 2;
    d.in_zero = d.in_signed ? rint_in(-5, 5) : rint_in(100, 140);
    d.act = variant % 4 == 3 ? TRTL_ACT_RELU : TRTL_ACT_NONE;
    d.mid_quant = 1;
    d.mid_signed = (variant / 2) % 2;
    d.mid_zero = d.mid_signed ? rint_in(-10, 10) : rint_in(0, 200);
    d.mid_scale = (float)runi(0.01, 0.1);
    d.bias_after_mid = 1;
    d.out_quant = variant % 3;
    d.out_signed = (variant / 3) % 2;
    d.out_zero = d.out_signed ? rint_in(-10, 10) : rint_in(0, 40);
    d.out_scale = (float)runi(0.01, 0.1);
    const int per_channel = variant % 8 < 5, x_codes = variant % 4 == 1;
    const int64_t nx = M * d.C, ny = M * d.K;
    float *x = malloc(sizeof(float) * (size_t)nx), *y = malloc(sizeof(float) * (size_t)ny);
    float *ws = malloc(sizeof(float) * (size_t)d.K), *bias = malloc(sizeof(float) * (size_t)d.K);
    int8_t *w = malloc((size_t)(d.K * d.C)), *xq = malloc((size_t)nx), *yq = malloc((size_t)ny + 1);
    int32_t *qx = malloc(sizeof(int32_t) * (size_t)nx);
    for (int64_t i = 0; i < nx; i++) {
        double u = runi(-200.0, 200.0);
        x[i] = (rnd() % 8 == 0) ? (float)((floor(u) + 0.5) * d.in_scale) : (float)(u * d.in_scale);
        qx[i] = (int32_t)model_quant(x[i], d.in_scale, d.in_zero, d.in_signed);
        xq[i] = (int8_t)qx[i];
    }
    for (int64_t i = 0; i < d.K * d.C; i++)
        w[i] = (int8_t)rint_in(-127, 127);
    for (int64_t k = 0; k < d.K; k++) {
        ws[k] = per_channel || k == 0 ? (float)runi(0.0005, 0.01) : ws[0];
        bias[k] = (float)runi(-3.0, 3.0);
    }
    trtl_qconv_state *s = NULL;
    int bad = 0;
    if (trtl_qconv_prepare(&d, w, ws, 1, bias, &s) != TRTL_OK) {
        printf("FAIL late %s variant %d: prepare: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    size_t sz = trtl_qgemm_scratch(s, M, 3);
    void *sc = malloc(sz ? sz : 1);
    memset(yq, 0x5a, (size_t)ny + 1);
    trtl_status st = trtl_qgemm_run_codes(s, M, x_codes ? (const void *)xq : (const void *)x, x_codes,
                                          d.out_quant == 2 ? (void *)yq : (void *)y, NULL, sc, sz, pool);
    free(sc);
    if (st != TRTL_OK) {
        printf("FAIL late %s variant %d: run: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    for (int64_t m = 0; m < M && !bad; m++)
        for (int64_t k = 0; k < d.K && !bad; k++) {
            int64_t acc = 0;
            for (int64_t c = 0; c < d.C; c++)
                acc += (int64_t)(qx[m * d.C + c] - d.in_zero) * w[k * d.C + c];
            const float scale = d.in_scale * ws[k];
            float v = (float)acc * scale;
            v = (float)(model_quant(v, d.mid_scale, d.mid_zero, d.mid_signed) - d.mid_zero) * d.mid_scale;
            v = v + bias[k];
            if (d.act == TRTL_ACT_RELU)
                v = v < 0.0f ? 0.0f : v;
            const int64_t o = m * d.K + k;
            const int64_t code = model_quant(v, d.out_scale, d.out_zero, d.out_signed);
            g_checked++;
            if (d.out_quant == 2) {
                const int64_t got = d.out_signed ? (int64_t)yq[o] : (int64_t)(uint8_t)yq[o];
                bad = got != code;
                if (bad)
                    printf("FAIL late %s variant %d (M%lld C%d K%d): code [%lld, %lld] is %lld, model %lld\n", path,
                           variant, (long long)M, d.C, d.K, (long long)m, (long long)k, (long long)got,
                           (long long)code);
            } else {
                const float want = d.out_quant ? (float)(code - d.out_zero) * d.out_scale : v;
                bad = memcmp(&y[o], &want, sizeof want) != 0;
                if (bad)
                    printf("FAIL late %s variant %d (M%lld C%d K%d oq %d): y[%lld, %lld] = %.9g, model %.9g\n", path,
                           variant, (long long)M, d.C, d.K, d.out_quant, (long long)m, (long long)k, (double)y[o],
                           (double)want);
            }
        }
    if (!bad && d.out_quant == 2 && yq[ny] != 0x5a) {
        printf("FAIL late %s variant %d: wrote past the codes\n", path, variant);
        bad = 1;
    }
done:
    trtl_qconv_release(s);
    free(x);
    free(y);
    free(ws);
    free(bias);
    free(w);
    free(xq);
    free(yq);
    free(qx);
    return bad;
}

/* ---- the codes epilogue's folded clamp (trtl_qk_epi.fold) ------------------------------------------ */

/* Codes out on the current path vs the portable path, bit for bit: ReLU6 and the other clamps that fold
 * into one (bounds beyond +-512 out_scale, alpha > beta which does not fold, biases of 1e30 and NaN which
 * do not either), a 1x1 convolution, a 3x3 one and a depthwise one, signed and unsigned codes, a
 * residual of codes with mid quantization, codes in; rows 1, 7, 23 and 70 wide (the depthwise kernels'
 * word rows straight from codes: masked loads at both ends of a row, beyond 64 columns). */
static int fold_case(trtl_threadpool *pool, const char *path, uint32_t mask, int variant)
{
    static const float acts[][3] = {{TRTL_ACT_CLIP, 0, 6},     {TRTL_ACT_CLIP, -1e6f, 1e6f}, {TRTL_ACT_CLIP, 3, 1},
                                    {TRTL_ACT_CLIP, -1e30f, -1e29f}, {TRTL_ACT_RELU, 0, 0}, {TRTL_ACT_NONE, 0, 0},
                                    {TRTL_ACT_LEAKY_RELU, 0.1f, 0}, {TRTL_ACT_CLIP, 2e9f, 3e9f}};
    const int na = (int)(sizeof acts / sizeof acts[0]);
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    const int shape = variant % 3, dw = shape == 2;
    d.C = dw ? 19 : 21;
    d.K = dw ? 19 : 35;
    d.R = d.S = shape == 0 ? 1 : 3;
    d.stride_h = d.stride_w = 1 + (variant / 3) % 2;
    d.pad_t = d.pad_l = d.pad_b = d.pad_r = shape == 0 ? 0 : 1;
    d.dil_h = d.dil_w = 1;
    d.groups = dw ? d.C : 1;
    d.in_scale = 0.03f;
    d.in_signed = variant % 2;
    d.in_zero = d.in_signed ? 3 : 120;
    d.act = (int32_t)acts[variant % na][0];
    d.alpha = acts[variant % na][1];
    d.beta = acts[variant % na][2];
    d.out_quant = 2;
    d.out_scale = variant % 4 == 0 ? 0.011f : 0.2f;
    d.out_signed = (variant / 2) % 2;
    d.out_zero = d.out_signed ? -5 : 17;
    if (variant % 5 == 4) { /* a residual of codes after a mid quantization */
        d.mid_quant = 1, d.mid_scale = 0.05f, d.mid_zero = 2, d.mid_signed = 1;
        d.has_residual = 1, d.res_codes = 1, d.res_scale = 0.07f, d.res_zero = -1, d.res_signed = 1;
    }
    static const int64_t widths[] = {23, 70, 7, 1};
    const int64_t N = 2, H = 13, W = widths[(variant / 6) % 4], Cg = d.C / d.groups, D = Cg * d.R * d.S;
    if (variant % 9 == 8) /* a wider left pad than the window needs */
        d.pad_l = 2;
    const int64_t OH = trtl_qconv_out_dim(H, d.R, d.stride_h, d.pad_t, d.pad_b, 1);
    const int64_t OW = trtl_qconv_out_dim(W, d.S, d.stride_w, d.pad_l, d.pad_r, 1);
    const int64_t nx = N * d.C * H * W, ny = N * d.K * OH * OW;
    int8_t *w = malloc((size_t)(d.K * D)), *x = malloc((size_t)nx), *r = malloc((size_t)ny);
    int8_t *y0 = malloc((size_t)ny), *y1 = malloc((size_t)ny);
    float *ws = malloc(sizeof(float) * (size_t)d.K), *bias = malloc(sizeof(float) * (size_t)d.K);
    for (int64_t i = 0; i < d.K * D; i++)
        w[i] = (int8_t)rint_in(-127, 127);
    for (int64_t i = 0; i < nx; i++)
        x[i] = (int8_t)rint_in(-128, 127);
    for (int64_t i = 0; i < ny; i++)
        r[i] = (int8_t)rint_in(-128, 127);
    for (int64_t k = 0; k < d.K; k++) {
        ws[k] = (float)runi(0.0005, 0.02);
        bias[k] = (float)runi(-3.0, 3.0);
    }
    if (variant % 7 == 5)
        bias[3] = 1e30f;
    if (variant % 7 == 6)
        bias[4] = NAN;
    trtl_qconv_state *s1 = NULL, *s0 = NULL;
    int bad = 0;
    if (!prepare_pair(&d, w, ws, bias, mask, &s1, &s0)) {
        printf("FAIL fold %s variant %d: prepare failed: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    size_t n1 = trtl_qconv_scratch(s1, N, H, W, 3), n0 = trtl_qconv_scratch(s0, N, H, W, 3);
    void *sc1 = malloc(n1 ? n1 : 1), *sc0 = malloc(n0 ? n0 : 1);
    trtl_status r1 = trtl_qconv_run_codes(s1, N, H, W, x, 1, y1, d.res_codes ? r : NULL, sc1, n1, pool);
    trtl_status r0 = trtl_qconv_run_codes(s0, N, H, W, x, 1, y0, d.res_codes ? r : NULL, sc0, n0, pool);
    free(sc1);
    free(sc0);
    if (r1 != TRTL_OK || r0 != TRTL_OK) {
        printf("FAIL fold %s variant %d: run failed: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    for (int64_t i = 0; i < ny; i++) {
        g_checked++;
        if (y1[i] != y0[i]) {
            printf("FAIL fold %s (%s) variant %d: code %lld is %d, the portable path's %d\n", path,
                   trtl_qconv_kernel_name(s1), variant, (long long)i, y1[i], y0[i]);
            bad = 1;
            break;
        }
    }
done:
    trtl_qconv_release(s1);
    trtl_qconv_release(s0);
    free(w), free(x), free(r), free(y0), free(y1), free(ws), free(bias);
    return bad;
}

/* ---- batch strips (1x1 stride 1, N > 1: strips run across image boundaries) ---------------------- */

/* A 1x1 stride-1 convolution at batch N on maps whose pixel count is no multiple of 16 (7x7, 14x14, 5x3,
 * and 40x40 with C = 64 / 128, which the driver splits into groups of images): the batch run must equal the
 * same kernel run image by image (batch 1 keeps the per-image strips) byte for byte, in every epilogue mode
 * (codes out with and without mid quantization and residual codes, float out with a float residual, output
 * fake quantization, an activation without a register form), input as codes or floats; codes out with a
 * register activation and no float residual must also equal the portable path's codes. */
static int batch_case(trtl_threadpool *pool, const char *path, uint32_t mask, int variant)
{
    static const int64_t hw[][2] = {{7, 7}, {14, 14}, {5, 3}, {40, 40}, {7, 7}, {1, 1}};
    static const int32_t cs[] = {21, 64, 3, 64, 96, 5}, ks[] = {35, 17, 40, 9, 24, 3};
    static const int64_t ns[] = {2, 3, 5, 8, 3};
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    const int shape = variant % 6, mode = (variant / 6) % 6, x_codes = variant % 2;
    d.C = cs[shape] * (shape == 3 && variant % 4 == 1 ? 2 : 1);
    d.K = ks[shape];
    d.R = d.S = d.stride_h = d.stride_w = d.dil_h = d.dil_w = d.groups = 1;
    d.in_scale = 0.03f;
    d.in_signed = (variant / 2) % 2;
    d.in_zero = d.in_signed ? -3 : 121;
    d.act = TRTL_ACT_CLIP, d.alpha = 0.0f, d.beta = 6.0f;
    d.out_scale = 0.045f, d.out_signed = variant % 3 == 0, d.out_zero = d.out_signed ? -7 : 11;
    switch (mode) {
    case 0: d.out_quant = 2; break;
    case 1: d.act = TRTL_ACT_RELU, d.has_residual = 1; break;
    case 2: d.act = TRTL_ACT_LEAKY_RELU, d.alpha = 0.1f, d.out_quant = 1; break;
    case 3:
        d.out_quant = 2, d.mid_quant = 1, d.mid_scale = 0.05f, d.mid_zero = 2, d.mid_signed = 1;
        d.has_residual = 1, d.res_codes = 1, d.res_scale = 0.07f, d.res_zero = -1, d.res_signed = 1;
        break;
    case 4: d.out_quant = 2, d.has_residual = 1; break;
    default: d.act = TRTL_ACT_SIGMOID, d.has_residual = 1, d.res_codes = 1, d.res_scale = 0.02f, d.res_zero = 100;
    }
    const int64_t N = ns[variant % 5], H = hw[shape][0], W = hw[shape][1], P = H * W;
    const int64_t nx = N * d.C * P, ny = N * d.K * P;
    const size_t xes = x_codes ? 1 : sizeof(float), yes = d.out_quant == 2 ? 1 : sizeof(float);
    const size_t res_es = d.res_codes ? 1 : sizeof(float);
    int8_t *w = malloc((size_t)d.K * (size_t)d.C);
    uint8_t *x = malloc((size_t)nx * xes), *r = malloc((size_t)ny * res_es);
    uint8_t *y0 = malloc((size_t)ny * yes), *y1 = malloc((size_t)ny * yes), *yp = malloc((size_t)ny * yes);
    float *ws = malloc(sizeof(float) * (size_t)d.K), *bias = malloc(sizeof(float) * (size_t)d.K);
    for (int64_t i = 0; i < d.K * d.C; i++)
        w[i] = (int8_t)rint_in(-127, 127);
    for (int64_t i = 0; i < nx; i++) {
        if (x_codes)
            x[i] = (uint8_t)rint_in(0, 255);
        else
            ((float *)(void *)x)[i] = (float)runi(-4.0, 4.0);
    }
    for (int64_t i = 0; i < ny; i++) {
        if (d.res_codes)
            r[i] = (uint8_t)rint_in(0, 255);
        else
            ((float *)(void *)r)[i] = (float)runi(-2.0, 2.0);
    }
    for (int64_t k = 0; k < d.K; k++) {
        ws[k] = (float)runi(0.0005, 0.02);
        bias[k] = (float)runi(-3.0, 3.0);
    }
    trtl_qconv_state *s1 = NULL, *s0 = NULL;
    int bad = 0;
    if (!prepare_pair(&d, w, ws, bias, mask, &s1, &s0)) {
        printf("FAIL batch %s variant %d: prepare failed: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    const void *rin = d.has_residual ? r : NULL;
    size_t n1 = trtl_qconv_scratch(s1, N, H, W, 3), n0 = trtl_qconv_scratch(s0, N, H, W, 3);
    size_t nb = trtl_qconv_scratch(s1, 1, H, W, 3);
    void *sc1 = malloc(n1 ? n1 : 1), *sc0 = malloc(n0 ? n0 : 1), *scb = malloc(nb ? nb : 1);
    trtl_status r1 = trtl_qconv_run_codes(s1, N, H, W, x, x_codes, y1, rin, sc1, n1, pool);
    trtl_status r0 = trtl_qconv_run_codes(s0, N, H, W, x, x_codes, yp, rin, sc0, n0, pool);
    for (int64_t n = 0; n < N && r1 == TRTL_OK; n++)
        r1 = trtl_qconv_run_codes(s1, 1, H, W, x + (size_t)(n * d.C * P) * xes, x_codes,
                                  y0 + (size_t)(n * d.K * P) * yes,
                                  rin ? r + (size_t)(n * d.K * P) * res_es : NULL, scb, nb, pool);
    free(sc1), free(sc0), free(scb);
    if (r1 != TRTL_OK || r0 != TRTL_OK) {
        printf("FAIL batch %s variant %d: run failed: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    const int vs_portable = d.out_quant == 2 && !(d.has_residual && !d.res_codes);
    for (int64_t i = 0; i < ny; i++) {
        g_checked++;
        const int same = !memcmp(y1 + (size_t)i * yes, y0 + (size_t)i * yes, yes);
        if (!same || (vs_portable && y1[i] != yp[i])) {
            printf("FAIL batch %s (%s) variant %d (N %lld, %lldx%lld, C %d, K %d, mode %d, x_codes %d): output %lld "
                   "(image %lld, channel %lld, pixel %lld) differs from %s\n",
                   path, trtl_qconv_kernel_name(s1), variant, (long long)N, (long long)H, (long long)W, d.C, d.K,
                   mode, x_codes, (long long)i, (long long)(i / (d.K * P)), (long long)(i / P % d.K),
                   (long long)(i % P), same ? "the portable path's" : "the image-by-image run's");
            bad = 1;
            break;
        }
    }
done:
    trtl_qconv_release(s1);
    trtl_qconv_release(s0);
    free(w), free(x), free(r), free(y0), free(y1), free(yp), free(ws), free(bias);
    return bad;
}

/* ---- the channel-interleaved depthwise kernel (x86/qconv_dw_c16.h) ------------------------------- */

/* Codes in and out on the current path vs the portable path, bit for bit, on the shapes the channel-
 * interleaved kernel takes (channel counts with a block tail, 1x1 .. 7x7 and 3x5 windows, strides 1-3,
 * dilation 2 along H, asymmetric and wider-than-needed padding, maps from 1 x 1, signed / unsigned codes,
 * the fast activations), and that it ran where the CPU has it (avx512vnni and amx paths). */
static int dwc_case(trtl_threadpool *pool, const char *path, uint32_t mask, int variant)
{
    static const int ks[][2] = {{3, 3}, {3, 3}, {5, 5}, {7, 7}, {1, 1}, {3, 5}, {5, 3}, {8, 8}};
    static const float acts[][3] = {{TRTL_ACT_CLIP, 0, 6}, {TRTL_ACT_RELU, 0, 0}, {TRTL_ACT_NONE, 0, 0},
                                    {TRTL_ACT_LEAKY_RELU, 0.1f, 0}, {TRTL_ACT_CLIP, -1e30f, -1e29f}};
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    d.C = d.K = d.groups = variant % 5 == 0 ? 16 * rint_in(1, 3) : rint_in(2, 40);
    d.R = ks[variant % 8][0];
    d.S = ks[variant % 8][1];
    d.stride_h = rint_in(1, 2);
    d.stride_w = variant % 7 == 3 ? 3 : rint_in(1, 2);
    d.dil_h = variant % 6 == 5 ? 2 : 1;
    d.dil_w = 1;
    d.pad_t = rint_in(0, d.R / 2 + 1);
    d.pad_b = rint_in(0, d.R / 2);
    d.pad_l = rint_in(0, d.S / 2 + 1);
    d.pad_r = rint_in(0, d.S / 2);
    d.in_scale = 0.03f;
    d.in_signed = variant % 2;
    d.in_zero = d.in_signed ? rint_in(-5, 5) : rint_in(100, 140);
    d.act = (int32_t)acts[variant % 5][0];
    d.alpha = acts[variant % 5][1];
    d.beta = acts[variant % 5][2];
    d.out_quant = 2;
    d.out_scale = (float)runi(0.01, 0.2);
    d.out_signed = (variant / 2) % 2;
    d.out_zero = d.out_signed ? rint_in(-5, 5) : rint_in(0, 20);
    const int64_t N = rint_in(1, 2), H = rint_in(1, 9) + (d.R - 1) * d.dil_h, W = rint_in(1, 17) + d.S - 1, D = d.R * d.S;
    const int64_t OH = trtl_qconv_out_dim(H, d.R, d.stride_h, d.pad_t, d.pad_b, d.dil_h);
    const int64_t OW = trtl_qconv_out_dim(W, d.S, d.stride_w, d.pad_l, d.pad_r, 1);
    const int64_t nx = N * d.C * H * W, ny = N * d.K * OH * OW;
    int8_t *w = malloc((size_t)(d.K * D)), *x = malloc((size_t)nx);
    int8_t *y0 = malloc((size_t)ny + 1), *y1 = malloc((size_t)ny + 1);
    float *ws = malloc(sizeof(float) * (size_t)d.K), *bias = malloc(sizeof(float) * (size_t)d.K);
    for (int64_t i = 0; i < d.K * D; i++)
        w[i] = (int8_t)rint_in(-127, 127);
    for (int64_t i = 0; i < nx; i++)
        x[i] = (int8_t)rint_in(-128, 127);
    for (int64_t k = 0; k < d.K; k++) {
        ws[k] = (float)runi(0.0005, 0.02);
        bias[k] = (float)runi(-3.0, 3.0);
    }
    trtl_qconv_state *s1 = NULL, *s0 = NULL;
    int bad = 0;
    if (!prepare_pair(&d, w, ws, bias, mask, &s1, &s0)) {
        printf("FAIL dwc %s variant %d: prepare failed: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    const int want = (!strcmp(path, "avx512vnni") || !strcmp(path, "amx")) && trtl_qdwc_cpu();
    if (s1->dwc != want) {
        printf("FAIL dwc %s variant %d: channel-interleaved kernel %s\n", path, variant, want ? "not used" : "used");
        bad = 1;
        goto done;
    }
    size_t n1 = trtl_qconv_scratch(s1, N, H, W, 3), n0 = trtl_qconv_scratch(s0, N, H, W, 3);
    void *sc1 = malloc(n1 ? n1 : 1), *sc0 = malloc(n0 ? n0 : 1);
    y1[ny] = 0x5a;
    trtl_status r1 = trtl_qconv_run_codes(s1, N, H, W, x, 1, y1, NULL, sc1, n1, pool);
    trtl_status r0 = trtl_qconv_run_codes(s0, N, H, W, x, 1, y0, NULL, sc0, n0, pool);
    free(sc1);
    free(sc0);
    if (r1 != TRTL_OK || r0 != TRTL_OK) {
        printf("FAIL dwc %s variant %d: run failed: %s\n", path, variant, trtl_last_error());
        bad = 1;
        goto done;
    }
    if (y1[ny] != 0x5a) {
        printf("FAIL dwc %s variant %d: wrote past the output\n", path, variant);
        bad = 1;
    }
    for (int64_t i = 0; i < ny && !bad; i++) {
        g_checked++;
        if (y1[i] != y0[i]) {
            printf("FAIL dwc %s (%s) variant %d: C %d %dx%d stride %d,%d dil_h %d pad %d,%d,%d,%d N %lld H %lld W %lld: "
                   "code %lld is %d, the portable path's %d\n", path, trtl_qconv_kernel_name(s1), variant, d.C, d.R,
                   d.S, d.stride_h, d.stride_w, d.dil_h, d.pad_t, d.pad_l, d.pad_b, d.pad_r, (long long)N,
                   (long long)H, (long long)W, (long long)i, y1[i], y0[i]);
            bad = 1;
        }
    }
done:
    trtl_qconv_release(s1);
    trtl_qconv_release(s0);
    free(w), free(x), free(y0), free(y1), free(ws), free(bias);
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int cases = argc > 2 ? atoi(argv[2]) : 60;
    g_rng ^= seed * 0x9E3779B97F4A7C15ull;
    if (!g_rng)
        g_rng = 1;
    const uint32_t all = trtl_cpu_features();
    struct {
        const char *name;
        uint32_t mask, need;
    } paths[] = {
        {"amx", ~0u, TRTL_QCONV_AMX_CPU},
        {"avx512vnni", ~(uint32_t)(TRTL_CPU_AMX_TILE | TRTL_CPU_AMX_INT8 | TRTL_CPU_AMX_BF16),
         TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_FMA},
        {"avxvnni", ~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI),
         TRTL_CPU_AVX2 | TRTL_CPU_FMA | TRTL_CPU_AVXVNNI},
        {"avx2", ~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_AVXVNNI),
         TRTL_CPU_AVX2 | TRTL_CPU_FMA},
        {"portable", 0u, 0u},
    };
    trtl_threadpool *pool = NULL;
    if (trtl_threadpool_create(3, &pool) != TRTL_OK) {
        printf("cannot create a pool\n");
        return 2;
    }
    g_fail += refuses();
    for (size_t pi = 0; pi < sizeof paths / sizeof paths[0]; pi++) {
        trtl_cpu_set_mask(~0u);
        if ((all & paths[pi].need) != paths[pi].need) {
            printf("skip %s: this CPU lacks it\n", paths[pi].name);
            continue;
        }
        trtl_cpu_set_mask(paths[pi].mask);
        int before = g_fail;
        for (int i = 0; i < 6; i++) {
            float sc = (float)runi(0.001, 0.3);
            g_fail += quantizer_case(i % 2 ? pool : NULL, paths[pi].name, sc, i % 3 == 0 ? 0 : rint_in(-100, 100) + 128 * (i % 2), i % 2 == 0);
        }
        for (int i = 0; i < cases; i++) {
            tcase c;
            make_case(&c, i, i % 4 == 3);
            g_fail += run_made(&c, i % 2 ? pool : NULL, paths[pi].name);
        }
        for (int i = 0; i < cases / 2; i++) { /* depthwise */
            tcase c;
            make_dw_case(&c, i);
            g_fail += run_made(&c, i % 2 ? pool : NULL, paths[pi].name);
        }
        for (int i = 0; i < cases / 4; i++) { /* 1x1 stride 1 from codes */
            tcase c;
            make_direct_codes_case(&c, i);
            g_fail += run_made(&c, i % 2 ? pool : NULL, paths[pi].name);
        }
        for (int v = 0; v < 72; v++)
            g_fail += batch_case(v % 3 == 2 ? pool : NULL, paths[pi].name, paths[pi].mask, v);
        for (int v = 0; v < 72; v++)
            g_fail += fold_case(v % 2 ? pool : NULL, paths[pi].name, paths[pi].mask, v);
        for (int v = 0; v < 48; v++)
            g_fail += late_case(v % 2 ? pool : NULL, paths[pi].name, v);
        for (int v = 0; v < 40; v++)
            g_fail += dwc_case(v % 2 ? pool : NULL, paths[pi].name, paths[pi].mask, v);
        printf("%s: %d failures\n", paths[pi].name, g_fail - before);
    }
    trtl_cpu_set_mask(~0u);
    trtl_threadpool_destroy(pool);
    printf("%d values checked, %d failures\n", g_checked, g_fail);
    return g_fail ? 1 : 0;
}
