/*
 * test_kernels.c -- every optimized kernel against the reference on random shapes.
 *
 * For each case: the reference kernel runs, then trtl_epilogue_apply as the engine would; the
 * optimized kernel runs with its own prepare/scratch/run (scratch and output pre-filled with NaN
 * so unwritten or uninitialized values show), with no pool, a 2-thread pool and a 3-thread pool
 * (more threads than the scratch has slots on a 2-CPU machine).  A kernel's cases stop at its
 * first mismatch, which is printed with the case; the exit status is 1 if any kernel failed.
 * Every optimized kernel of kernels/registry.c has a section here (tests/test_kernels_c.py checks
 * that none is missing).  Kernels that do not apply the fused epilogue themselves (pooling.2d,
 * reduce.inner) are compared without one, as the engine applies it after them.
 * Also: the thread pool (every index once, nested calls, sleeping workers) and which shapes the
 * depthwise, Winograd and reduce.inner kernels' applies() take.
 *
 *   test_kernels [seed] [cases-per-kernel]
 *
 * fully_connected / matrix_multiply: compared with trtl_ref_* when that reference is implemented
 * (it returns TRTL_ERR_UNSUPPORTED while it is a stub), otherwise with the naive loops below.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_common.h"
#include "kernels/ref/ref.h"
#include "kernels/ref/qdq_math.h"
#include "core/shape.h"
#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/x86/vmath.h"
#include "kernels/inplace.h"
#include "kernels/qlinear_fp32.h"
#include "kernels/nchwc.h"
#include "kernels/x86/gemm_packed.h"
#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"

extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_conv_depthwise_avx2;
extern const trtl_kernel trtl_kernel_fc_sgemm;
extern const trtl_kernel trtl_kernel_matmul_sgemm;
extern const trtl_kernel trtl_kernel_matmul_packed;
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_fc_packed_gemm;
extern const trtl_kernel trtl_kernel_elementwise_simd;
extern const trtl_kernel trtl_kernel_unary_simd;
extern const trtl_kernel trtl_kernel_activation_simd;
extern const trtl_kernel trtl_kernel_scale_simd;

/* ---- helpers ------------------------------------------------------------------------------- */

static float rfloat(void) { return (float)rnd() / 2147483648.0f - 1.0f; }

static float *rand_buf(int64_t n)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = rfloat();
    return p;
}

static float *nan_buf(int64_t n)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = NAN;
    return p;
}

static const int32_t g_acts[] = {
    TRTL_ACT_NONE, TRTL_ACT_RELU, TRTL_ACT_CLIP, TRTL_ACT_LEAKY_RELU, TRTL_ACT_SIGMOID, TRTL_ACT_TANH,
    TRTL_ACT_ELU, TRTL_ACT_SELU, TRTL_ACT_SOFTSIGN, TRTL_ACT_SOFTPLUS, TRTL_ACT_HARD_SIGMOID,
    TRTL_ACT_SCALED_TANH, TRTL_ACT_THRESHOLDED_RELU, TRTL_ACT_GELU_ERF, TRTL_ACT_GELU_TANH};
#define N_ACTS ((int)(sizeof g_acts / sizeof g_acts[0]))
/* The pointwise section sets this to run the convolution / GEMM tests with one of the internal
 * activation codes (core/params.h) in every epilogue; below TRTL_ACT_NONE: rand_epi's choice. */
static int32_t g_force_act = TRTL_ACT_NONE - 1;

static trtl_epilogue rand_epi(int combo)
{
    trtl_epilogue e = {0};
    e.act = g_force_act >= TRTL_ACT_NONE ? g_force_act : g_acts[combo % N_ACTS];
    e.has_residual = (combo / N_ACTS) % 2;
    e.alpha = 0.1f + 0.5f * (rfloat() + 1.0f) * 0.5f;
    e.beta = 0.5f + (rfloat() + 1.0f);
    if (e.act == TRTL_ACT_CLIP) {
        e.alpha = -0.5f + 0.3f * rfloat();
        e.beta = 0.6f + 0.3f * rfloat();
        if (combo % 7 == 3) { /* degenerate clip with alpha > beta must match too */
            float t = e.alpha;
            e.alpha = e.beta;
            e.beta = t;
        }
    }
    return e;
}

static const char *act_name(int32_t a)
{
    static const char *const n[] = {"RELU", "SIGMOID", "TANH", "LEAKY_RELU", "ELU", "SELU", "SOFTSIGN",
                                    "SOFTPLUS", "CLIP", "HARD_SIGMOID", "SCALED_TANH", "THRESHOLDED_RELU",
                                    "GELU_ERF", "GELU_TANH"};
    if (a == TRTL_ACT_SILU || a == TRTL_ACT_HARD_SWISH || a == TRTL_ACT_MISH || a == TRTL_ACT_QGRID)
        return a == TRTL_ACT_SILU ? "SILU" : a == TRTL_ACT_HARD_SWISH ? "HARD_SWISH" : a == TRTL_ACT_MISH ? "MISH" : "QGRID";
    return a < 0 ? "NONE" : (a < TRTL_ACT_COUNT ? n[a] : "?");
}

static trtl_threadpool *g_pools[3]; /* NULL, 2 threads, 3 threads */
static int g_failures, g_cases;
static double g_rtol = 1e-4, g_atol = 0.0; /* tolerances of compare(); the Winograd section widens them */
static int g_elementwise_tol; /* compare(): tolerance per element only (the pointwise sections, whose inputs
                                 include huge values that would make the rms scale meaningless) */

/* Compares got to want; prints the case on the first bad element. */
/* run_opt(): the threshold of a THRESHOLDED_RELU epilogue, else NAN.  That activation jumps from 0 to alpha at x = alpha,
 * so a pre-activation within rounding of alpha may land on either side in the kernel and the reference. */
static float g_jump = NAN;
/* ... and a degenerate CLIP (alpha > beta: alpha below alpha, beta from alpha up) jumps from alpha to beta at x =
 * alpha: a few elements may take either value (a pre-activation within rounding of alpha), never more than a few
 * (a kernel evaluating the clip in the other order gives beta for every x in (beta, alpha)). */
static float g_clip_a = NAN, g_clip_b = NAN;

static int compare(const char *kname, const float *got, const float *want, int64_t n, int pool_index)
{
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(want[i])) /* pooling over padding only gives -inf, reducing nothing NaN or +-inf */
            ss += (double)want[i] * want[i];
    double scale = n && !g_elementwise_tol ? sqrt(ss / (double)n) : 0.0;
    int64_t flips = 0;
    for (int64_t i = 0; i < n; i++) {
        if (got[i] == want[i]) /* also equal infinities, whose difference is NaN */
            continue;
        if (!isnan(g_clip_a) && ((got[i] == g_clip_a && want[i] == g_clip_b) ||
                                 (got[i] == g_clip_b && want[i] == g_clip_a)) && ++flips <= 2 + n / 20000)
            continue; /* one side of the clip's jump each */
        double d = fabs((double)got[i] - (double)want[i]);
        double tol = g_rtol * (fabs((double)want[i]) + scale) + g_atol + 1e-6;
        if (!isnan(g_jump) && (got[i] == 0.0f || want[i] == 0.0f) && fabs((double)got[i] + want[i] - g_jump) <= tol)
            continue; /* one side of the jump each */
        if (!(d <= tol) && !(isnan(got[i]) && isnan(want[i]))) {
            fprintf(stderr, "MISMATCH %s [%s] pool=%d: element %lld got %.7g want %.7g (of %lld; rms %.4g)\n",
                    kname, g_desc, pool_index == 0 ? 0 : pool_index + 1, (long long)i, got[i], want[i],
                    (long long)n, scale);
            g_failures++;
            return 1;
        }
    }
    return 0;
}

/* A node with a second output (nd->n_out == 2: NCHWC_CONV's channel means): its dims, and the buffer ref_output()
 * fills with the reference's second output, which run_opt() then compares with the kernel's. */
static trtl_dims g_out2_dims;
static float *g_out2_want;

/* Runs kernel k on node nd (views in/out) with each pool and compares with `want`.  Returns 1 on
 * failure. */
static int run_opt(const trtl_kernel *k, trtl_node *nd, const trtl_tensor_view *in, const trtl_dims *out_dims,
                   const float *want)
{
    trtl_dims in_dims[4];
    for (int i = 0; i < nd->n_in; i++)
        in_dims[i] = in[i].dims;
    if (k->applies && !k->applies(nd, in_dims)) {
        fprintf(stderr, "FAIL %s [%s]: applies() refused a case the test expects it to take\n", k->name, g_desc);
        g_failures++;
        return 1;
    }
    g_kernel_name = k->name;
    void *state = NULL;
    if (k->prepare && k->prepare(nd, &state) != TRTL_OK) {
        fprintf(stderr, "FAIL %s [%s]: prepare: %s\n", k->name, g_desc, trtl_last_error());
        g_failures++;
        return 1;
    }
    nd->kstate = state;
    /* A kernel with unpack(): it writes the weights back bit for bit, and run() reads none of the plain copy
     * (the engine frees it after prepare: engine/weights.c) */
    trtl_weights *pw = k->unpack ? trtl_node_packed_weights(nd) : NULL;
    const void *plain = pw ? pw->values : NULL;
    if (pw) {
        size_t nb = (size_t)pw->count * trtl_dtype_size(pw->type);
        void *back = malloc(nb ? nb : 1);
        k->unpack(nd, state, back);
        int diff = memcmp(back, plain, nb) != 0;
        free(back);
        if (diff) {
            fprintf(stderr, "FAIL %s [%s]: unpack() does not give back the weights\n", k->name, g_desc);
            g_failures++;
        }
        pw->values = NULL;
    }
    int64_t n = trtl_volume(out_dims);
    int bad = 0;
    /* the kernel reads its inputs through copies that end at an inaccessible page, where guarded_copy can make
     * them: a read past an input faults (the arena's neighbours would hide it) */
    trtl_tensor_view gin[4];
    size_t gbytes[4] = {0}, glen[4] = {0};
    void *gcopy[4] = {NULL};
    for (int i = 0; i < nd->n_in && i < 4; i++) {
        gin[i] = in[i];
        gbytes[i] = (size_t)trtl_volume(&in[i].dims) * trtl_dtype_size(in[i].dtype);
        gcopy[i] = guarded_copy(in[i].data, gbytes[i], &glen[i]);
        if (gcopy[i])
            gin[i].data = gcopy[i];
    }
    if (nd->n_in <= 4)
        in = gin;
    g_jump = nd->epi.act == TRTL_ACT_THRESHOLDED_RELU ? nd->epi.alpha : NAN;
    const int jclip = nd->epi.act == TRTL_ACT_CLIP && nd->epi.alpha > nd->epi.beta;
    g_clip_a = jclip ? nd->epi.alpha : NAN;
    g_clip_b = jclip ? nd->epi.beta : NAN;
    for (int pi = 0; pi < 3 && !bad; pi++) {
        const int64_t n2 = nd->n_out == 2 ? trtl_volume(&g_out2_dims) : 0;
        trtl_tensor_view outs[2] = {{nan_buf(n), *out_dims, TRTL_FLOAT}, {n2 ? nan_buf(n2) : NULL, g_out2_dims, TRTL_FLOAT}};
        /* the first output ends at an inaccessible page too where it can: a write past it faults */
        size_t olen = 0;
        float *oplain = outs[0].data, *og = guarded_copy(oplain, (size_t)n * sizeof(float), &olen);
        if (og)
            outs[0].data = og;
        trtl_tensor_view out = outs[0];
        size_t ss = k->scratch ? k->scratch(nd, in, outs) : 0;
        float *scratch = ss ? nan_buf((int64_t)(ss / sizeof(float)) + 1) : NULL;
        trtl_kernel_args a = {nd, in, outs, scratch, ss, state, g_pools[pi], NULL};
        trtl_status st = k->run(&a);
        if (st != TRTL_OK) {
            fprintf(stderr, "FAIL %s [%s] pool=%d: run: %s\n", k->name, g_desc, pi, trtl_last_error());
            g_failures++;
            bad = 1;
        } else {
            bad = compare(k->name, (float *)out.data, want, n, pi);
            if (!bad && n2)
                bad = compare(k->name, (float *)outs[1].data, g_out2_want, n2, pi);
        }
        free(scratch);
        guarded_free(og, (size_t)n * sizeof(float), olen);
        free(oplain);
        free(outs[1].data);
    }
    for (int i = 0; i < nd->n_in && i < 4; i++)
        guarded_free(gcopy[i], gbytes[i], glen[i]);
    g_jump = g_clip_a = g_clip_b = NAN;
    if (pw)
        pw->values = plain;
    if (k->release)
        k->release(state);
    nd->kstate = NULL;
    g_cases++;
    return bad;
}

/* Reference output: ref kernel, then the engine's epilogue pass (the residual is the last input). */
static float *ref_output(trtl_kernel_fn ref, trtl_node *nd, const trtl_tensor_view *in, const trtl_dims *out_dims,
                         trtl_status *st)
{
    int64_t n = trtl_volume(out_dims);
    trtl_tensor_view outs[2] = {{nan_buf(n), *out_dims, TRTL_FLOAT}, {g_out2_want, g_out2_dims, TRTL_FLOAT}};
    trtl_tensor_view out = outs[0];
    trtl_kernel_args a = {nd, in, outs, NULL, 0, NULL, NULL, NULL};
    *st = ref(&a);
    if (*st != TRTL_OK) {
        free(out.data);
        return NULL;
    }
    trtl_epilogue_apply(&nd->epi, (float *)out.data, nd->epi.has_residual ? (const float *)in[nd->n_in - 1].data : NULL,
                        n);
    return (float *)out.data;
}

/* ---- convolution ------------------------------------------------------------------------------ */

typedef struct conv_case {
    int nsp;
    int64_t N, C, K, G, in[3], k[3], s[3], d[3], pre[3], post[3];
    int mode, bias;
} conv_case;

/* A 2-D case with square kernel k, stride st and dilation 1; padding (pre, post) the same on both axes. */
static conv_case conv2d(int64_t N, int64_t C, int64_t K, int64_t G, int64_t H, int64_t W, int64_t k, int64_t st,
                        int64_t pre, int64_t post, int mode, int bias)
{
    conv_case c = {0};
    c.nsp = 2;
    c.N = N;
    c.C = C;
    c.K = K;
    c.G = G;
    c.in[0] = H;
    c.in[1] = W;
    c.k[0] = c.k[1] = k;
    c.s[0] = c.s[1] = st;
    c.d[0] = c.d[1] = 1;
    c.pre[0] = c.pre[1] = pre;
    c.post[0] = c.post[1] = post;
    c.mode = mode;
    c.bias = bias;
    return c;
}

/* conv_run_case(): where >= 0, the weight / input element set to NaN (the convolution.tapwise section). */
static int64_t g_conv_nan_w = -1, g_conv_nan_x = -1;
/* conv_run_case(): where either is set, the node is an NCHWC_CONV with these input / output blocks (the nchwc
 * section): blocked operands [N, ceil(C/B), H, W, B], blocked input lanes past C huge (1e20, finite: a kernel
 * mixing them into real channels fails), the reference trtl_ref_nchwc_conv. */
static int32_t g_nchwc_in, g_nchwc_out;
/* conv_run_case() on an NCHWC_CONV: squeeze-and-excitation's input-channel scale (a second input [N, C, 1, 1]) and
 * output-channel means (a second output [N, K, 1, 1]). */
static int g_nchwc_scale, g_nchwc_mean;
/* conv_run_case(): >= TRTL_ACT_NONE: the node is a PREACT_CONV whose input transform has random per-channel scales
 * and shifts and this activation (g_preact_alpha / _beta), the reference trtl_ref_preact_conv (the preact section). */
static int32_t g_preact = -2;
static float g_preact_alpha, g_preact_beta;

/* dims d (4-D, plain) as [N, ceil(C/B), H, W, B] when B, else d. */
static trtl_dims blocked_dims(trtl_dims d, int32_t B)
{
    if (B) {
        d.nb_dims = 5;
        d.d[1] = (d.d[1] + B - 1) / B;
        d.d[4] = B;
    }
    return d;
}

/* Builds the node and runs one case through kernel k (and the reference).  Returns 1 on failure,
 * 0 on pass, -1 if the shape is invalid (skipped). */
static int conv_run_case(const trtl_kernel *k, const conv_case *c, int combo)
{
    trtl_node nd = {0};
    const int nchwc = g_nchwc_in || g_nchwc_out;
    const int preact = g_preact >= TRTL_ACT_NONE;
    nd.op = nchwc ? TRTL_OP_NCHWC_CONV : preact ? TRTL_OP_PREACT_CONV : TRTL_OP_CONVOLUTION;
    nd.name = "conv";
    trtl_conv_params *p = &nd.p.conv;
    nd.p.nchwc.in_block = g_nchwc_in;
    nd.p.nchwc.out_block = g_nchwc_out;
    p->num_output_maps = (int32_t)c->K;
    p->num_groups = (int32_t)c->G;
    p->padding_mode = c->mode;
    p->kernel_size = trtl_dims_make(c->nsp, c->k);
    p->stride = trtl_dims_make(c->nsp, c->s);
    p->dilation = trtl_dims_make(c->nsp, c->d);
    p->pre_padding = trtl_dims_make(c->nsp, c->pre);
    p->post_padding = trtl_dims_make(c->nsp, c->post);
    int64_t xd[5] = {c->N, c->C}, yd[5] = {c->N, c->K}, kvol = 1;
    for (int i = 0; i < c->nsp; i++) {
        int64_t o, pre, post;
        if (trtl_spatial_out(c->in[i], c->d[i] * (c->k[i] - 1) + 1, c->s[i], c->pre[i], c->post[i], c->mode, 0, &o,
                             &pre, &post) != TRTL_OK)
            return -1;
        xd[2 + i] = c->in[i];
        yd[2 + i] = o;
        kvol *= c->k[i];
    }
    trtl_dims xdims = blocked_dims(trtl_dims_make(c->nsp + 2, xd), g_nchwc_in), ydims = blocked_dims(trtl_dims_make(c->nsp + 2, yd), g_nchwc_out);
    int64_t nw = c->K * (c->C / c->G) * kvol;
    float *w = rand_buf(nw), *b = c->bias ? rand_buf(c->K) : NULL, *x = rand_buf(trtl_volume(&xdims));
    float *res = NULL;
    for (int64_t i = 0, B = g_nchwc_in, hwb = B * xdims.d[2] * xdims.d[3]; B && i < trtl_volume(&xdims); i++)
        if (i / hwb % xdims.d[1] * B + i % B >= c->C)
            x[i] = 1e20f; /* a lane past the channels */
    if (g_conv_nan_w >= 0 && g_conv_nan_w < nw)
        w[g_conv_nan_w] = NAN;
    if (g_conv_nan_x >= 0 && g_conv_nan_x < trtl_volume(&xdims))
        x[g_conv_nan_x] = NAN;
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, c->bias ? c->K : 0};
    float *isc = preact ? rand_buf(c->C) : NULL, *ish = preact ? rand_buf(c->C) : NULL;
    if (preact) {
        for (int64_t i = 0; i < c->C; i++)
            isc[i] *= 2.0f; /* negative scales too: a ReLU after them zeroes either sign of x */
        nd.p.preact.in_scale = (trtl_weights){TRTL_FLOAT, isc, c->C};
        nd.p.preact.in_shift = (trtl_weights){TRTL_FLOAT, ish, c->C};
        nd.p.preact.in_act = g_preact;
        nd.p.preact.in_alpha = g_preact_alpha;
        nd.p.preact.in_beta = g_preact_beta;
    }
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[3] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    float *scale = NULL;
    if (nchwc && g_nchwc_scale) {
        int64_t sd[4] = {c->N, c->C, 1, 1};
        scale = rand_buf(c->N * c->C);
        in[1] = (trtl_tensor_view){scale, trtl_dims_make(4, sd), TRTL_FLOAT};
        nd.n_in = 2;
    }
    if (nd.epi.has_residual) {
        res = rand_buf(trtl_volume(&ydims));
        in[nd.n_in].data = res;
        in[nd.n_in].dims = ydims;
        nd.n_in++;
    }
    nd.n_out = 1;
    if (nchwc && g_nchwc_mean) {
        int64_t md[4] = {c->N, c->K, 1, 1};
        g_out2_dims = trtl_dims_make(4, md);
        g_out2_want = nan_buf(c->N * c->K);
        nd.n_out = 2;
    }
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc,
             "%sx%s -> y%s G=%lld k=(%lld,%lld,%lld) s=(%lld,%lld,%lld) d=(%lld,%lld,%lld) pre=(%lld,%lld,%lld) "
             "post=(%lld,%lld,%lld) mode=%d bias=%d act=%s res=%d%s%s",
             nchwc ? "nchwc " : "", trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys),
             (long long)c->G,
             (long long)c->k[0], (long long)c->k[1], (long long)c->k[2], (long long)c->s[0], (long long)c->s[1],
             (long long)c->s[2], (long long)c->d[0], (long long)c->d[1], (long long)c->d[2], (long long)c->pre[0],
             (long long)c->pre[1], (long long)c->pre[2], (long long)c->post[0], (long long)c->post[1],
             (long long)c->post[2], c->mode, c->bias, act_name(nd.epi.act), nd.epi.has_residual,
             scale ? " in-scale" : "", nd.n_out == 2 ? " out-means" : "");
    if (preact)
        snprintf(g_desc + strlen(g_desc), sizeof g_desc - strlen(g_desc), " preact=%s(%g,%g)", act_name(g_preact),
                 (double)g_preact_alpha, (double)g_preact_beta);
    trtl_status st;
    float *want = ref_output(nchwc ? trtl_ref_nchwc_conv : preact ? trtl_ref_preact_conv : trtl_ref_convolution, &nd,
                             in, &ydims, &st);
    int r;
    if (!want) {
        fprintf(stderr, "FAIL reference convolution [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        r = 1;
    } else {
        r = run_opt(k, &nd, in, &ydims, want);
    }
    free(want);
    free(w);
    free(b);
    free(x);
    free(res);
    free(scale);
    free(isc);
    free(ish);
    free(g_out2_want);
    g_out2_want = NULL;
    return r;
}

static void rand_conv(conv_case *c, int depthwise)
{
    memset(c, 0, sizeof *c);
    c->nsp = depthwise ? 2 : (int)(rnd() % 6 == 0 ? 1 : (rnd() % 6 == 0 ? 3 : 2));
    c->N = rint_in(1, 3);
    if (depthwise) {
        c->G = c->C = c->K = rint_in(1, 19);
    } else {
        int gk = (int)(rnd() % 4);
        c->G = gk == 0 ? rint_in(2, 4) : 1;
        c->C = c->G * rint_in(1, 9);
        c->K = c->G * rint_in(1, 11);
        if (gk == 1 && rnd() % 2) { /* depthwise through im2col too */
            c->G = c->C;
            c->K = c->C * rint_in(1, 2);
        }
    }
    c->mode = (int)(rnd() % 6);
    c->bias = (int)(rnd() % 4 != 0);
    for (int i = 0; i < c->nsp; i++) {
        int64_t maxin = c->nsp == 3 ? 7 : (c->nsp == 1 || (depthwise && i == 1 && rnd() % 3 == 0) ? 75 : 21);
        c->in[i] = rint_in(1, maxin);
        c->k[i] = rint_in(1, c->nsp == 3 ? 3 : 5);
        c->s[i] = depthwise ? rint_in(1, 2) : rint_in(1, 3);
        c->d[i] = depthwise ? 1 : (rnd() % 3 == 0 ? rint_in(2, 3) : 1);
        c->pre[i] = rint_in(0, 3);
        c->post[i] = rint_in(0, 3);
    }
}

/* The two ISA passes of a kernel test: pass 0 with every feature the CPU has, pass 1 with AVX-512 hidden (the
 * AVX2 paths) where the CPU has AVX-512 (elsewhere pass 0 already ran them).  Whether `pass` runs; the test restores
 * the mask after its loop. */
static int isa_pass(int pass)
{
    if (pass == 0)
        return 1;
    if (pass > 1 || !trtl_cpu_has(TRTL_CPU_AVX512F))
        return 0;
    trtl_cpu_set_mask(~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI));
    return 1;
}

/* isa_pass's passes plus pass 2: AVX-512, AVX2 and FMA hidden (the portable loops).  Whether `pass` runs; the test
 * restores the mask after its loop. */
static int isa_pass_portable(int pass)
{
    if (pass < 2)
        return isa_pass(pass);
    if (pass > 2)
        return 0;
    trtl_cpu_set_mask(~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_AVX2 |
                                  TRTL_CPU_FMA));
    return 1;
}

static void test_conv_kernel(const trtl_kernel *k, int depthwise, int ncases)
{
    int done = 0, combo = (int)(rnd() % 64);
    while (done < ncases) {
        conv_case c;
        rand_conv(&c, depthwise);
        int r = conv_run_case(k, &c, combo);
        if (r < 0)
            continue;
        combo++;
        done++;
        if (r > 0)
            return;
    }
}

/* Fixed shapes: larger maps (several panels, channel blocks), 1x1 direct, every epilogue. */
static void test_conv_fixed(const trtl_kernel *k, int depthwise)
{
    static const struct { int64_t N, C, K, G, H, W, k, s, pad; int mode; } sh[] = {
        {1, 64, 64, 1, 20, 20, 3, 1, 1, 0},   /* 2 panels */
        {1, 300, 24, 1, 30, 29, 3, 1, 1, 0},  /* ckk 2700: min-width panels */
        {1, 64, 96, 1, 7, 7, 3, 1, 1, 0},     /* small map: split output channels */
        {2, 32, 48, 1, 13, 11, 1, 1, 0, 0},   /* 1x1 direct */
        {1, 48, 40, 2, 9, 17, 1, 1, 0, 0},    /* 1x1 direct, grouped */
        {1, 24, 40, 1, 15, 15, 1, 2, 0, 0},   /* 1x1 stride 2 (im2col) */
        {1, 3, 16, 1, 33, 35, 7, 2, 3, 0},    /* stem */
        {1, 32, 32, 32, 23, 17, 3, 1, 1, 0},  /* depthwise */
        {2, 40, 40, 40, 16, 16, 3, 2, 1, 2},  /* depthwise s2 SAME_UPPER */
        {1, 24, 24, 24, 9, 40, 5, 1, 2, 3},   /* depthwise 5x5 SAME_LOWER */
        {1, 17, 17, 17, 30, 30, 3, 2, 0, 1},  /* depthwise s2 round up */
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        if (depthwise && !(sh[i].G == sh[i].C && sh[i].K == sh[i].C))
            continue;
        for (int combo = 0; combo < 2 * N_ACTS; combo += (i == 0 || i == 7) ? 1 : 7) {
            conv_case c = conv2d(sh[i].N, sh[i].C, sh[i].K, sh[i].G, sh[i].H, sh[i].W, sh[i].k, sh[i].s, sh[i].pad,
                                 sh[i].pad, sh[i].mode, combo % 3 != 2);
            if (conv_run_case(k, &c, combo) > 0)
                return;
        }
    }
}

/* ---- convolution.gemv (x86/convolution_gemv.c) ----------------------------------------------- */

extern const trtl_kernel trtl_kernel_conv_gemv;

/* Windows covering the whole input (squeeze-and-excitation's 1x1 convolutions on 1x1 maps, and
 * whole-map windows), depths with vector tails, output channels not a multiple of 4, channel
 * splits over the pools; applies() must accept them.  Then inputs of another size than the window
 * (the run-time fallback to the reference). */
static void test_conv_gemv(int ncases)
{
    static const int64_t big[][3] = {{1, 1000, 250}, {2, 577, 403}, {1, 1152, 48}, {3, 48, 1152}, {1, 17, 5}};
    int combo = (int)(rnd() % 64);
    for (int i = 0; i < ncases + 5; i++, combo++) {
        conv_case c = {0};
        c.nsp = i < 5 ? 2 : (int)rint_in(1, 3);
        c.N = i < 5 ? big[i][0] : rint_in(1, 3);
        c.C = i < 5 ? big[i][1] : rint_in(1, 70);
        c.K = i < 5 ? big[i][2] : rint_in(1, 23);
        c.G = 1;
        c.bias = (int)(rnd() % 4 != 0);
        for (int d = 0; d < c.nsp; d++) {
            c.in[d] = c.k[d] = i < 5 ? 1 : rint_in(1, 3);
            c.s[d] = rint_in(1, 2);
            c.d[d] = c.k[d] > 1 ? 1 : rint_in(1, 2);
            c.post[d] = c.s[d] == 2 ? rint_in(0, 1) : 0; /* still one output pixel */
        }
        conv_case w = c;
        trtl_node nd = {0};
        int64_t nw = c.K * c.C, xd[5] = {c.N, c.C};
        for (int d = 0; d < c.nsp; d++) {
            nw *= c.k[d];
            xd[2 + d] = c.in[d];
        }
        nd.op = TRTL_OP_CONVOLUTION;
        nd.p.conv.num_output_maps = (int32_t)c.K;
        nd.p.conv.num_groups = 1;
        nd.p.conv.kernel_size = trtl_dims_make(c.nsp, c.k);
        nd.p.conv.stride = trtl_dims_make(c.nsp, c.s);
        nd.p.conv.dilation = trtl_dims_make(c.nsp, c.d);
        nd.p.conv.pre_padding = trtl_dims_make(c.nsp, c.pre);
        nd.p.conv.post_padding = trtl_dims_make(c.nsp, c.post);
        nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, nw};
        trtl_dims xdims = trtl_dims_make(c.nsp + 2, xd);
        if (!trtl_kernel_conv_gemv.applies(&nd, &xdims)) {
            snprintf(g_desc, sizeof g_desc, "C=%lld K=%lld nsp=%d window %lldx%lldx%lld", (long long)c.C,
                     (long long)c.K, c.nsp, (long long)c.k[0], (long long)c.k[1], (long long)c.k[2]);
            fprintf(stderr, "FAIL convolution.gemv does not apply to a whole-window convolution [%s]: %s\n", g_desc,
                    trtl_last_error());
            g_failures++;
            return;
        }
        if (conv_run_case(&trtl_kernel_conv_gemv, &c, combo) > 0)
            return;
        if (i % 4 == 0) { /* the same weights' shape on a larger input: the fallback (run without applies()) */
            trtl_kernel any = trtl_kernel_conv_gemv;
            any.applies = NULL;
            w.in[0] += 2;
            w.pre[0] = i % 8 == 0;
            if (conv_run_case(&any, &w, combo) > 0)
                return;
        }
    }
}

/* Batches (session 20: the rows of a quad serve every image before the next quad) and depths whose ends take each
 * of the dot loop's parts (2 vectors, 1 vector, masked: 45 = 32 + 8 + 5 on AVX2, 50 = 32 + 16 + 2 on AVX-512),
 * output channels not a multiple of 4 and fewer than 4.  Run after the random sections, so their streams stay. */
static void test_conv_gemv_batches(void)
{
    static const int64_t cases[][3] = {{8, 240, 960}, {9, 45, 7}, {5, 50, 13}, {8, 168, 67}, {2, 33, 9},
                                       {6, 17, 1},    {7, 64, 3}, {3, 16, 8},  {4, 9, 6}};
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        conv_case c = {0};
        c.nsp = 2;
        c.N = cases[i][0];
        c.C = cases[i][1];
        c.K = cases[i][2];
        c.G = 1;
        c.bias = i % 3 != 2;
        for (int d = 0; d < 2; d++)
            c.in[d] = c.k[d] = c.s[d] = c.d[d] = 1;
        if (conv_run_case(&trtl_kernel_conv_gemv, &c, i * 5) > 0)
            return;
    }
}

/* ---- convolution.depthwise_c16 / depthwise_c8 (x86/convolution_depthwise_c16.c, _c8.c, depthwise_cblock.c) --- */

extern const trtl_kernel trtl_kernel_conv_depthwise_c16;
extern const trtl_kernel trtl_kernel_conv_depthwise_c8;

/* Whether depthwise kernel k's applies() takes the 2-D depthwise case c (G = K = C). */
static int dw_case_applies(const trtl_kernel *k, const conv_case *c)
{
    trtl_node nd = {0};
    nd.p.conv.num_output_maps = nd.p.conv.num_groups = (int32_t)c->C;
    nd.p.conv.padding_mode = c->mode;
    nd.p.conv.kernel_size = trtl_dims_make(2, c->k);
    nd.p.conv.stride = trtl_dims_make(2, c->s);
    nd.p.conv.dilation = trtl_dims_make(2, c->d);
    nd.p.conv.pre_padding = trtl_dims_make(2, c->pre);
    nd.p.conv.post_padding = trtl_dims_make(2, c->post);
    nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, c->C * c->k[0] * c->k[1]};
    int64_t xd[4] = {c->N, c->C, c->in[0], c->in[1]};
    trtl_dims xdims = trtl_dims_make(4, xd);
    int ok = k->applies(&nd, &xdims);
    trtl_clear_error();
    return ok;
}

/* MobileNet / EfficientNet small-map shapes (channel tails past blocks of 16 / 8, 3x3 to 7x7, strides 1 and 2,
 * padding modes, planes of a multiple of 8 pixels and not), then random small depthwise convolutions the kernel
 * applies to, every epilogue. */
static void test_depthwise_cblock(const trtl_kernel *k, int ncases)
{
    static const struct { int64_t N, C, H, W, k, s, pad; int mode; } sh[] = {
        {1, 960, 7, 7, 3, 1, 1, 0},  {1, 72, 14, 14, 5, 2, 2, 0}, {1, 1152, 7, 7, 5, 1, 2, 0},
        {2, 40, 28, 28, 3, 2, 0, 2}, {1, 33, 9, 13, 7, 1, 3, 0},  {2, 17, 5, 6, 3, 2, 1, 1},
        {1, 35, 14, 14, 5, 1, 4, 0}, {1, 20, 14, 14, 3, 1, 2, 0}, /* dilation 2 (DeepLabV3 / LR-ASPP) */
        {1, 24, 8, 8, 3, 1, 1, 0},   {1, 9, 28, 28, 5, 2, 2, 0},  {2, 7, 4, 4, 5, 1, 2, 0},
        /* 8 lanes only (planes past 16 lanes' 1600 pixels): ConvNeXt's 7x7 on 56x56 (62 x 62 padded), the
         * 4096-pixel limit (64 x 64) */
        {1, 13, 56, 56, 7, 1, 3, 0}, {1, 9, 62, 62, 3, 1, 1, 0},
    };
    const int nfixed = (int)(sizeof sh / sizeof sh[0]), nfixed16 = nfixed - 2;
    int combo = (int)(rnd() % 64);
    for (int i = 0; i < ncases + nfixed; i++, combo++) {
        conv_case c = {0};
        c.nsp = 2;
        c.d[0] = c.d[1] = 1;
        if (i >= nfixed16 && i < nfixed && k != &trtl_kernel_conv_depthwise_c8)
            continue;
        if (i < nfixed) {
            c.N = sh[i].N;
            c.C = sh[i].C;
            c.in[0] = sh[i].H;
            c.in[1] = sh[i].W;
            c.k[0] = c.k[1] = sh[i].k;
            c.s[0] = c.s[1] = sh[i].s;
            c.pre[0] = c.pre[1] = c.post[0] = c.post[1] = sh[i].pad;
            c.mode = sh[i].mode;
            c.d[0] = c.d[1] = i == 6 || i == 7 ? 2 : 1;
        } else {
            c.N = rint_in(1, 2);
            c.C = rint_in(1, 40);
            c.mode = (int)(rnd() % 6);
            for (int d = 0; d < 2; d++) {
                c.in[d] = rint_in(1, 20);
                c.k[d] = rint_in(1, 7);
                c.s[d] = rint_in(1, 2);
                c.pre[d] = rint_in(0, 3);
                c.post[d] = rint_in(0, 3);
                c.d[d] = rnd() % 3 == 0 ? rint_in(2, 3) : 1;
            }
        }
        c.G = c.K = c.C;
        c.bias = combo % 3 != 2;
        if (!dw_case_applies(k, &c)) {
            if (i < nfixed) {
                fprintf(stderr, "FAIL %s does not apply to fixed shape %d\n", k->name, i);
                g_failures++;
                return;
            }
            continue; /* invalid or too large */
        }
        if (conv_run_case(k, &c, combo) > 0)
            return;
    }
}

/* ---- fully_connected -------------------------------------------------------------------------- */

/* Naive Y[M, K] = X[M, D] W[K, D]^T + bias. */
static trtl_status naive_fc(const trtl_kernel_args *a)
{
    const trtl_fc_params *p = &a->node->p.fc;
    int64_t K = p->num_output_channels, D = p->kernel.count / K, M = trtl_volume(&a->in[0].dims) / D;
    const float *x = a->in[0].data, *w = p->kernel.values, *b = p->bias.count ? p->bias.values : NULL;
    float *y = a->out[0].data;
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++) {
            double acc = b ? b[k] : 0.0;
            for (int64_t d = 0; d < D; d++)
                acc += (double)x[m * D + d] * (double)w[k * D + d];
            y[m * K + k] = (float)acc;
        }
    return TRTL_OK;
}

/* want = the reference kernel's result when it is implemented, else the naive one; when both
 * exist they must agree (a disagreement means the optimized kernel's reading of the op differs
 * from the reference's). */
static float *want_output(trtl_kernel_fn ref, trtl_kernel_fn naive, const char *what, trtl_node *nd,
                          const trtl_tensor_view *in, const trtl_dims *od)
{
    trtl_status st;
    float *nv = ref_output(naive, nd, in, od, &st);
    float *rf = ref_output(ref, nd, in, od, &st);
    if (!rf) {
        if (st != TRTL_ERR_UNSUPPORTED) {
            fprintf(stderr, "FAIL reference %s [%s]: %s\n", what, g_desc, trtl_last_error());
            g_failures++;
            free(nv);
            return NULL;
        }
        return nv;
    }
    if (compare("naive-vs-reference", nv, rf, trtl_volume(od), 0)) {
        free(nv);
        free(rf);
        return NULL;
    }
    free(nv);
    return rf;
}

/* Input [batch.., C, H, W] (nbatch leading dims), output [batch.., K, 1, 1]. */
static int fc_case(const int64_t *batch, int nbatch, const int64_t *chw, int64_t K, int bias, int combo)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_FULLY_CONNECTED;
    nd.name = "fc";
    int64_t xd[TRTL_MAX_DIMS], yd[TRTL_MAX_DIMS], M = 1, D = chw[0] * chw[1] * chw[2];
    for (int i = 0; i < nbatch; i++) {
        xd[i] = yd[i] = batch[i];
        M *= batch[i];
    }
    for (int i = 0; i < 3; i++) {
        xd[nbatch + i] = chw[i];
        yd[nbatch + i] = i == 0 ? K : 1;
    }
    trtl_dims xdims = trtl_dims_make(nbatch + 3, xd), ydims = trtl_dims_make(nbatch + 3, yd);
    float *w = rand_buf(K * D), *b = bias ? rand_buf(K) : NULL, *x = rand_buf(M * D), *res = NULL;
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, bias ? K : 0};
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    nd.n_out = 1;
    if (nd.epi.has_residual) {
        res = rand_buf(M * K);
        in[1].data = res;
        nd.n_in = 2;
    }
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s K=%lld bias=%d act=%s res=%d", trtl_dims_str(&xdims, xs, sizeof xs),
             (long long)K, bias, act_name(nd.epi.act), nd.epi.has_residual);
    float *want = want_output(trtl_ref_fully_connected, naive_fc, "fully_connected", &nd, in, &ydims);
    int r = want ? run_opt(&trtl_kernel_fc_sgemm, &nd, in, &ydims, want) : 1;
    free(want);
    free(w);
    free(b);
    free(x);
    free(res);
    return r;
}

static void test_fc(int ncases)
{
    static const struct { int64_t M, C, H, W, K; } fixed[] = {
        {1, 800, 1, 1, 500}, {1, 500, 1, 1, 10}, {1, 50, 4, 4, 37}, {3, 300, 1, 1, 100},
        {16, 64, 1, 1, 33}, {2, 7, 3, 3, 130}, {1, 2048, 1, 1, 1000}};
    int combo = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        int64_t chw[3] = {fixed[i].C, fixed[i].H, fixed[i].W}, batch[1] = {fixed[i].M};
        for (int r = 0; r < 3; r++, combo += 11)
            if (fc_case(batch, 1, chw, fixed[i].K, r != 1, combo))
                return;
    }
    for (int i = 0; i < ncases; i++, combo++) {
        int64_t chw[3] = {rint_in(1, 40), rint_in(1, 4), rint_in(1, 4)}, batch[2] = {rint_in(1, 9), rint_in(1, 3)};
        if (fc_case(batch, (int)rint_in(1, 2), chw, rint_in(1, 70), (int)(rnd() % 3 != 0), combo))
            return;
    }
}

/* ---- matrix_multiply ------------------------------------------------------------------------- */

/* Naive matrix_multiply over right-aligned broadcast batch dims (written independently of the
 * kernel: explicit multi-indices). */
static trtl_status naive_mm(const trtl_kernel_args *a)
{
    const trtl_matmul_params *p = &a->node->p.matmul;
    const trtl_dims *ad = &a->in[0].dims, *bd = &a->in[1].dims;
    const float *A = a->in[0].data, *B = a->in[1].data;
    float *C = a->out[0].data;
    int va = p->op0 == TRTL_MATOP_VECTOR, vb = p->op1 == TRTL_MATOP_VECTOR;
    int ra = ad->nb_dims - (va ? 1 : 2), rb = bd->nb_dims - (vb ? 1 : 2);
    int64_t M, K, N;
    if (va) {
        M = 1;
        K = ad->d[ad->nb_dims - 1];
    } else if (p->op0 == TRTL_MATOP_TRANSPOSE) {
        M = ad->d[ad->nb_dims - 1];
        K = ad->d[ad->nb_dims - 2];
    } else {
        M = ad->d[ad->nb_dims - 2];
        K = ad->d[ad->nb_dims - 1];
    }
    if (vb)
        N = 1;
    else
        N = p->op1 == TRTL_MATOP_TRANSPOSE ? bd->d[bd->nb_dims - 2] : bd->d[bd->nb_dims - 1];
    int nb = ra > rb ? ra : rb;
    int64_t od[TRTL_MAX_DIMS], nbat = 1;
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - ra), ib = i - (nb - rb);
        int64_t x = ia >= 0 ? ad->d[ia] : 1, y = ib >= 0 ? bd->d[ib] : 1;
        od[i] = x > y ? x : y;
        nbat *= od[i];
    }
    int64_t amat = va ? K : M * K, bmat = vb ? K : K * N;
    for (int64_t bt = 0; bt < nbat; bt++) {
        int64_t idx[TRTL_MAX_DIMS], r = bt;
        for (int i = nb - 1; i >= 0; i--) {
            idx[i] = r % od[i];
            r /= od[i];
        }
        int64_t ai = 0, bi = 0;
        for (int i = 0; i < ra; i++)
            ai = ai * ad->d[i] + (ad->d[i] == 1 ? 0 : idx[i + (nb - ra)]);
        for (int i = 0; i < rb; i++)
            bi = bi * bd->d[i] + (bd->d[i] == 1 ? 0 : idx[i + (nb - rb)]);
        const float *Ab = A + ai * amat, *Bb = B + bi * bmat;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    float av = p->op0 == TRTL_MATOP_TRANSPOSE ? Ab[k * M + m] : Ab[m * K + k];
                    float bv = p->op1 == TRTL_MATOP_NONE ? Bb[k * N + n] : Bb[n * K + k];
                    acc += (double)av * (double)bv;
                }
                C[(bt * M + m) * N + n] = (float)acc;
            }
    }
    return TRTL_OK;
}

/* A matrix operand's stored dims: batch (nbd dims) then the matrix or vector dims. */
static trtl_dims mm_dims(const int64_t *batch, int nbd, int op, int which, int64_t rows, int64_t cols)
{
    int64_t d[TRTL_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < nbd; i++)
        d[n++] = batch[i];
    if (op == TRTL_MATOP_VECTOR) {
        d[n++] = which == 0 ? cols : rows; /* A: a row of K; B: a column of K */
    } else if (op == TRTL_MATOP_TRANSPOSE) {
        d[n++] = cols;
        d[n++] = rows;
    } else {
        d[n++] = rows;
        d[n++] = cols;
    }
    return trtl_dims_make(n, d);
}

static int mm_case(int op0, int op1, const int64_t *ab, int na, const int64_t *bb, int nbd, int64_t M, int64_t K,
                   int64_t N, int combo)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_MATRIX_MULTIPLY;
    nd.name = "matmul";
    nd.p.matmul.op0 = op0;
    nd.p.matmul.op1 = op1;
    if (op0 == TRTL_MATOP_VECTOR)
        M = 1;
    if (op1 == TRTL_MATOP_VECTOR)
        N = 1;
    trtl_dims adims = mm_dims(ab, na, op0, 0, M, K), bdims = mm_dims(bb, nbd, op1, 1, K, N);
    int nb = na > nbd ? na : nbd, n = 0;
    int64_t od[TRTL_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - na), ib = i - (nb - nbd);
        int64_t x = ia >= 0 ? ab[ia] : 1, y = ib >= 0 ? bb[ib] : 1;
        od[n++] = x > y ? x : y;
    }
    if (op0 != TRTL_MATOP_VECTOR)
        od[n++] = M;
    if (op1 != TRTL_MATOP_VECTOR)
        od[n++] = N;
    trtl_dims odims = trtl_dims_make(n, od);
    int64_t nout = trtl_volume(&odims);
    float *A = rand_buf(trtl_volume(&adims)), *B = rand_buf(trtl_volume(&bdims)), *res = NULL;
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[3] = {{A, adims, TRTL_FLOAT}, {B, bdims, TRTL_FLOAT}, {NULL, odims, TRTL_FLOAT}};
    nd.n_in = 2;
    nd.n_out = 1;
    if (nd.epi.has_residual) {
        res = rand_buf(nout);
        in[2].data = res;
        nd.n_in = 3;
    }
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "A%s op0=%d x B%s op1=%d -> %s act=%s res=%d", trtl_dims_str(&adims, s1, sizeof s1),
             op0, trtl_dims_str(&bdims, s2, sizeof s2), op1, trtl_dims_str(&odims, s3, sizeof s3),
             act_name(nd.epi.act), nd.epi.has_residual);
    float *want = want_output(trtl_ref_matrix_multiply, naive_mm, "matrix_multiply", &nd, in, &odims);
    int r = want ? run_opt(&trtl_kernel_matmul_sgemm, &nd, in, &odims, want) : 1;
    /* matrix_multiply.packed: every case but a matrix x vector product (its applies() leaves those to SGEMV); a
     * depth its applies() refuses too (deeper products stay on OpenBLAS), through a copy without applies():
     * dynamic shapes reach run() at any depth */
    const trtl_kernel *packed = &trtl_kernel_matmul_packed;
    if (want && !r && N > 1 && trtl_cpu_has(packed->cpu_features)) {
        trtl_kernel deep = *packed;
        const trtl_dims ind[2] = {adims, bdims};
        if (K >= 256 && deep.applies(&nd, ind)) {
            fprintf(stderr, "FAIL %s [%s]: applies() took a depth of %lld\n", deep.name, g_desc, (long long)K);
            g_failures++;
            r = 1;
        }
        if (K >= 256)
            deep.applies = NULL;
        r |= run_opt(&deep, &nd, in, &odims, want);
    }
    free(want);
    free(A);
    free(B);
    free(res);
    return r;
}

static void test_mm(int ncases)
{
    int combo = 0;
    /* every op pair, equal batch ranks, plus larger shapes that split over threads */
    static const struct { int64_t b[2]; int nb; int64_t bb[2]; int nbb; int64_t M, K, N; } fixed[] = {
        {{0}, 0, {0}, 0, 37, 29, 41},      {{3}, 1, {3}, 1, 5, 7, 9},       {{2, 3}, 2, {1, 3}, 2, 4, 6, 5},
        {{4}, 1, {1}, 1, 50, 64, 70},      {{1}, 1, {5}, 1, 6, 8, 7},       {{0}, 0, {0}, 0, 300, 128, 200},
        {{2}, 1, {2}, 1, 1, 256, 600},     {{0}, 0, {0}, 0, 700, 256, 1},   {{6}, 1, {1}, 1, 30, 40, 50},
        /* matrix_multiply.packed: 2 depth blocks (K 600 > 512) and 2 column chunks (N 300 > 256) with tails; an
         * attention head (128 x 64 x 128) per batch; a Swin window (49 x 32 x 49) with broadcast batch dims */
        {{2}, 1, {2}, 1, 13, 600, 45},     {{0}, 0, {0}, 0, 5, 33, 300},    {{3}, 1, {3}, 1, 128, 64, 128},
        {{1, 3}, 2, {2, 1}, 2, 49, 32, 49},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (int op0 = 0; op0 < 3; op0++)
            for (int op1 = 0; op1 < 3; op1++, combo += 5)
                if (mm_case(op0, op1, fixed[i].b, fixed[i].nb, fixed[i].bb, fixed[i].nbb, fixed[i].M, fixed[i].K,
                            fixed[i].N, combo))
                    return;
    for (int i = 0; i < ncases; i++, combo++) {
        int64_t ab[3], bb[3];
        int na = (int)rint_in(0, 3), nbd = na; /* TensorRT: equal batch ranks */
        for (int d = 0; d < 3; d++) {
            int64_t v = rint_in(1, 4);
            ab[d] = rnd() % 3 ? v : 1;
            bb[d] = rnd() % 3 ? v : 1;
        }
        /* right-align: make the shared trailing batch dims compatible */
        for (int d = 0; d < (na < nbd ? na : nbd); d++)
            if (ab[na - 1 - d] != 1 && bb[nbd - 1 - d] != 1)
                bb[nbd - 1 - d] = ab[na - 1 - d];
        if (mm_case((int)(rnd() % 3), (int)(rnd() % 3), ab, na, bb, nbd, rint_in(1, 19), rint_in(1, 23),
                    rint_in(1, 21), combo))
            return;
    }
}

/* ---- packed_gemm kernels (gemm_packed.c) ------------------------------------------------------- */

/* Shapes that reach every path of convolution.packed_gemm: row panels with tails (Kg not a
 * multiple of 6 / 12), pixel tails (P not a multiple of 16 / 32, also 9..24 columns of an
 * AVX-512 tile), several depth blocks (ckk > 384) with a remainder, pixel panels (large maps),
 * the channel split with shared B (small maps, many channels, also per image and group), 1x1
 * direct with several panels, windowed packing with strides 1 and 2 and dilation, bounds-checked
 * packing (stride 3, 3-D), groups, 1-D.  `thorough`: every epilogue on the first two shapes. */
static void test_conv_packed_fixed(const trtl_kernel *k, int thorough)
{
    static const struct { int64_t N, C, K, G, H, W, k, s, d, pad; int mode, nsp, all; } sh[] = {
        {1, 50, 37, 1, 9, 11, 3, 1, 1, 1, 0, 2, 1},   /* ckk 450: 2 depth blocks; row + pixel tails */
        {1, 130, 75, 1, 6, 6, 1, 1, 1, 0, 0, 2, 1},   /* 1x1 direct, channel split */
        {1, 64, 64, 1, 20, 20, 3, 1, 1, 1, 0, 2, 0},  /* panels, 2 depth blocks */
        {1, 96, 100, 1, 7, 7, 3, 1, 1, 1, 0, 2, 0},   /* 7x7: channel split, 3 depth blocks */
        {2, 48, 64, 2, 7, 5, 3, 1, 1, 1, 0, 2, 0},    /* channel split per image and group */
        {1, 20, 23, 1, 45, 47, 1, 1, 1, 0, 0, 2, 0},  /* 1x1 direct, several panels, tails */
        {3, 24, 40, 1, 15, 15, 1, 2, 1, 0, 0, 2, 0},  /* 1x1 stride 2 (im2col), batch */
        {1, 3, 16, 1, 33, 35, 7, 2, 1, 3, 0, 2, 0},   /* stem */
        {1, 16, 13, 1, 17, 19, 3, 2, 2, 2, 2, 2, 0},  /* dilation 2, stride 2, SAME_UPPER */
        {1, 12, 30, 3, 11, 13, 5, 1, 1, 2, 3, 2, 0},  /* groups, 5x5, SAME_LOWER */
        {1, 32, 32, 32, 23, 17, 3, 1, 1, 1, 0, 2, 0}, /* depthwise */
        {1, 300, 24, 1, 12, 13, 3, 1, 1, 1, 0, 2, 0}, /* ckk 2700: 8 depth blocks */
        {1, 400, 29, 1, 4, 5, 1, 1, 1, 0, 1, 2, 0},   /* 1x1 depth 400: 2 blocks, round up mode */
        {2, 9, 14, 1, 70, 1, 3, 1, 1, 1, 0, 1, 0},    /* 1-D */
        {1, 4, 13, 1, 6, 7, 3, 3, 1, 1, 0, 2, 0},     /* stride 3 (bounds-checked rows) */
        {1, 4, 13, 1, 6, 7, 3, 1, 1, 1, 0, 3, 0},     /* 3-D (W used for the 2 inner dims) */
        {2, 700, 29, 1, 21, 23, 1, 1, 1, 0, 0, 2, 0}, /* 1x1 direct, packing tiles: 2 depth blocks, panels, tails */
        {1, 40, 5, 1, 30, 31, 1, 1, 1, 0, 0, 2, 0},   /* 1x1 direct, packing tiles of fewer rows than a panel */
        {1, 5, 6, 1, 1, 4, 1, 3, 1, 2, 0, 2, 1},      /* 1x1 stride 3, padding 2: outputs wholly in the padding */
        {1, 5, 6, 1, 4, 2, 1, 3, 1, 2, 0, 3, 1},      /* the same in 3-D */
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        /* every activation x residual on the cheap shapes, a sample elsewhere */
        int step = sh[i].all ? (thorough ? 1 : 2) : (thorough ? 5 : 11);
        for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
            conv_case c = {0};
            c.nsp = sh[i].nsp;
            c.N = sh[i].N;
            c.C = sh[i].C;
            c.K = sh[i].K;
            c.G = sh[i].G;
            for (int d = 0; d < c.nsp; d++) {
                c.in[d] = d == 0 ? sh[i].H : sh[i].W;
                c.k[d] = sh[i].k;
                c.s[d] = sh[i].s;
                c.d[d] = sh[i].d;
                c.pre[d] = c.post[d] = sh[i].pad;
            }
            c.mode = sh[i].mode;
            c.bias = combo % 3 != 2;
            if (conv_run_case(k, &c, combo) > 0)
                return;
        }
    }
    /* kx1 windows (Inception's 7x1 / 3x1), weights packed tap-major: tap depth blocks read straight from the panel's
     * window where W has no padding (one and several pixel panels, two depth blocks a tap past 512 channels, groups,
     * a batch, windows reaching past the vertical padding), the tap-major im2col rows elsewhere (padding along W,
     * SAME modes); the channel split (small maps, many channels) on the 2- and 3-thread pools. */
    static const struct { int64_t N, C, K, G, H, W, kh, pt, pb, pl, pr; int mode; } kx1[] = {
        {1, 20, 13, 1, 17, 17, 7, 3, 3, 0, 0, 0}, {2, 24, 10, 1, 40, 45, 3, 1, 1, 0, 0, 0},
        {1, 600, 7, 1, 5, 6, 3, 1, 1, 0, 0, 0},   {1, 12, 14, 2, 9, 11, 5, 2, 2, 0, 0, 0},
        {1, 9, 8, 1, 8, 7, 3, 1, 1, 1, 1, 0},     {1, 10, 9, 1, 7, 9, 4, 0, 0, 0, 0, 2},
        {1, 7, 11, 1, 6, 13, 7, 4, 5, 0, 0, 0},   {1, 192, 40, 1, 8, 8, 3, 1, 1, 0, 0, 0},
        {1, 3, 5, 1, 2, 3, 2, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof kx1 / sizeof kx1[0]; i++)
        for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += thorough ? 3 : 7) {
            conv_case c = {.nsp = 2, .N = kx1[i].N, .C = kx1[i].C, .K = kx1[i].K, .G = kx1[i].G,
                           .in = {kx1[i].H, kx1[i].W}, .k = {kx1[i].kh, 1}, .s = {1, 1}, .d = {1, 1},
                           .pre = {kx1[i].pt, kx1[i].pl}, .post = {kx1[i].pb, kx1[i].pr}, .mode = kx1[i].mode,
                           .bias = combo % 3 != 2};
            if (conv_run_case(k, &c, combo) > 0)
                return;
        }
    /* 3-D 1x1 whose outputs all lie in the padding along the first axis (found at seed 99: strides 3, dilation and
     * paddings differing per axis): every output is act(bias + residual) */
    for (int combo = 0; combo < 2 * N_ACTS; combo++) {
        conv_case c = {.nsp = 3, .N = 1, .C = 5, .K = 5, .G = 1, .in = {1, 4, 2}, .k = {1, 1, 1}, .s = {3, 3, 1},
                       .d = {1, 1, 2}, .pre = {2, 2, 1}, .post = {0, 1, 1}, .mode = 0, .bias = combo % 3 != 2};
        if (conv_run_case(k, &c, combo) > 0)
            return;
    }
}

/* fully_connected.packed_gemm: input [M, C, H, W] (or [B1, B2, C, H, W] when m2 > 0). */
static int packed_fc_case(int64_t m1, int64_t m2, int64_t C, int64_t H, int64_t W, int64_t K, int bias, int combo)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_FULLY_CONNECTED;
    nd.name = "fc";
    const int nb = m2 > 0 ? 2 : 1;
    const int64_t M = m1 * (m2 > 0 ? m2 : 1), D = C * H * W;
    int64_t xd[5] = {m1, m2, C, H, W}, yd[5] = {m1, m2, K, 1, 1};
    if (nb == 1) {
        xd[1] = C, xd[2] = H, xd[3] = W;
        yd[1] = K, yd[2] = yd[3] = 1;
    }
    trtl_dims xdims = trtl_dims_make(nb + 3, xd), ydims = trtl_dims_make(nb + 3, yd);
    float *w = rand_buf(K * D), *b = bias ? rand_buf(K) : NULL, *x = rand_buf(M * D), *res = NULL;
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, bias ? K : 0};
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    nd.n_out = 1;
    if (nd.epi.has_residual) {
        res = rand_buf(M * K);
        in[1].data = res;
        nd.n_in = 2;
    }
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s K=%lld bias=%d act=%s res=%d", trtl_dims_str(&xdims, xs, sizeof xs),
             (long long)K, bias, act_name(nd.epi.act), nd.epi.has_residual);
    float *want = want_output(trtl_ref_fully_connected, naive_fc, "fully_connected", &nd, in, &ydims);
    int r = want ? run_opt(&trtl_kernel_fc_packed_gemm, &nd, in, &ydims, want) : 1;
    free(want);
    free(w);
    free(b);
    free(x);
    free(res);
    return r;
}

/* Batch 1 (channel chunks per thread), row blocks past MB = 96, depth blocks past 384 with a
 * remainder, channel tails (K not a multiple of 16 / 32 / 8), every epilogue. */
static void test_fc_packed(int ncases)
{
    static const struct { int64_t M, C, H, W, K; } fixed[] = {
        {1, 800, 1, 1, 500}, {1, 500, 1, 1, 10},  {1, 50, 4, 4, 37},   {3, 300, 1, 1, 100}, {16, 64, 1, 1, 33},
        {2, 7, 3, 3, 130},   {1, 2048, 1, 1, 1000}, {100, 97, 1, 1, 75}, {200, 30, 1, 1, 17}, {1, 1, 1, 1, 1},
        {7, 1000, 1, 1, 41}, {1, 40, 1, 1, 24},    {5, 13, 1, 1, 9},
        /* the weight-tile-stationary order (>= 4 tiles a chunk): row blocks past 240, one depth block up to
         * depth 768 (KC_WHOLE), past it blocks of <= 256 with a remainder (769), row and channel tails */
        {250, 300, 1, 1, 130}, {13, 520, 1, 1, 200}, {37, 64, 1, 1, 257}, {2, 33, 1, 1, 300},
        {40, 768, 1, 1, 150}, {41, 769, 1, 1, 150},
        /* the depth-major order (depth past what the tile-major order packs whole), and the tile-major
         * order's balanced row blocks (a multiple of the threads, panels differing by at most one) */
        {100, 1800, 1, 1, 140}, {800, 20, 1, 1, 130}, {517, 3, 7, 1, 161},
    };
    int combo = 3;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (int r = 0; r < 4; r++, combo += 4)
            if (packed_fc_case(fixed[i].M, 0, fixed[i].C, fixed[i].H, fixed[i].W, fixed[i].K, r != 1, combo))
                return;
    for (int i = 0; i < ncases; i++, combo++)
        if (packed_fc_case(rint_in(1, 9), rnd() % 2 ? rint_in(1, 3) : 0, rint_in(1, 40), rint_in(1, 4), rint_in(1, 4),
                           rint_in(1, 70), (int)(rnd() % 3 != 0), combo))
            return;
}

/* The tile-stationary orders on a whole pool, items claimed with stealing (a scratch slot a pool thread):
 * channel chunks finer than one a thread (many tiles), several row blocks (A packed once per row block a slot
 * visits), tile-major and depth-major, channel and row tails; on the 2-thread pool (and the 3-thread one where the
 * scratch has a slot for each of its threads, else its fixed runs).  Run last in main() so that the random cases
 * of the other kernels stay the ones they were. */
static void test_fc_stealing(void)
{
    static const struct { int64_t M, D, K; } fixed[] = {
        {128, 72, 700}, {130, 1800, 520}, {300, 1750, 90}, {400, 48, 333}, {1024, 40, 200},
        /* the depth-major order: ViT's 197 tokens at depth 3072 in one row block (channel chunks), 300 rows in two */
        {197, 3072, 200}, {300, 3072, 70},
    };
    int combo = 5;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (int r = 0; r < 2; r++, combo += 3)
            if (packed_fc_case(fixed[i].M, 0, fixed[i].D, 1, 1, fixed[i].K, r == 0, combo))
                return;
}

/* trtl_gemm_block_pack (B packed by the first row panel's tiles) against trtl_gemm_pack_b + trtl_gemm_block on the
 * variant prepare() would pick: the same FMAs in the same order, so C and the packed tiles must match bit for bit.
 * Random M (row tails, one row with TRTL_GEMM_A_ROW), N (whole and partial tiles), depth, accumulate / epilogue
 * flags, with and without a prefetch stream.  Its own random stream, so the other tests' draws do not move. */
static void test_gemm_block_pack(void)
{
    uint64_t saved = g_rng;
    g_rng = 0x9e3779b97f4a7c15ull;
    const trtl_gemm_isa isa = trtl_gemm_isa_best();
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa);
    for (int it = 0; it < 60; it++) {
        const int64_t M = it % 7 == 0 ? 1 : rint_in(1, 3 * mr + 1), N = rint_in(1, 5 * nr + 3), kc = rint_in(1, 70);
        const int64_t srs = N + rint_in(0, 9), ldc = N + rint_in(0, 5), ts = kc * nr + 16, nt = (N + nr - 1) / nr;
        const int flags = (it % 3 == 1 ? TRTL_GEMM_ACC : 0) | (it % 2 ? TRTL_GEMM_LAST : 0) |
                          (M == 1 && it % 2 ? TRTL_GEMM_A_ROW : 0);
        float *w = rand_buf(M * kc), *src = rand_buf(kc * srs), *bias = rand_buf(M), *res = rand_buf(M * ldc);
        float *c1 = rand_buf(M * ldc), *c2 = malloc((size_t)(M * ldc) * sizeof(float));
        float *a = malloc((size_t)trtl_gemm_packed_a_size(isa, M, kc) * sizeof(float));
        float *b1 = nan_buf(nt * ts), *b2 = nan_buf(nt * ts);
        memcpy(c2, c1, (size_t)(M * ldc) * sizeof(float));
        if (flags & TRTL_GEMM_A_ROW)
            memcpy(a, w, (size_t)kc * sizeof(float));
        else
            trtl_gemm_pack_a(isa, w, kc, 1, M, kc, a);
        const trtl_gemm_epi e = {bias, NULL, res, ldc, TRTL_ACT_RELU, 0.0f, 0.0f};
        trtl_gemm_pack_b(isa, src, srs, 1, kc, N, b1, ts);
        trtl_gemm_block(isa, M, N, kc, a, kc * mr, b1, ts, c1, ldc, &e, flags);
        trtl_gemm_block_pack(isa, M, N, kc, a, kc * mr, src, srs, b2, ts, c2, ldc, &e, flags, it % 4 ? src : NULL,
                             kc, N * (int64_t)sizeof(float), srs * (int64_t)sizeof(float));
        int bad = memcmp(c1, c2, (size_t)(M * ldc) * sizeof(float)) != 0;
        for (int64_t t = 0; t < nt && !bad; t++)
            bad = memcmp(b1 + t * ts, b2 + t * ts, (size_t)(kc * nr) * sizeof(float)) != 0;
        if (bad) {
            fprintf(stderr, "MISMATCH trtl_gemm_block_pack isa %d M=%lld N=%lld kc=%lld flags=%d: C or packed B differs\n",
                    (int)isa, (long long)M, (long long)N, (long long)kc, flags);
            g_failures++;
        }
        g_cases++;
        free(w), free(src), free(bias), free(res), free(c1), free(c2), free(a), free(b1), free(b2);
        if (bad)
            break;
    }
    g_rng = saved;
}

/* trtl_gemm_block sums every C element in one order wherever it falls in the tiles (full tiles, column tails
 * through colk512, row tails, the last vector's masks): A with equal rows gives equal C rows, B with equal columns
 * equal C columns, bit for bit; and C matches a float64 product.  Random M over several row panels, N with tails
 * of 1..nr-1 columns, depths past one accumulation step.  Its own random stream. */
static void test_gemm_block_invariance(void)
{
    uint64_t saved = g_rng;
    g_rng = 0x5851f42d4c957f2dull;
    const trtl_gemm_isa isa = trtl_gemm_isa_best();
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa);
    for (int it = 0; it < 24; it++) {
        const int64_t M = rint_in(2, 5 * mr + 3), N = rint_in(2, 3 * nr + nr - 1), kc = rint_in(1, 200);
        const int64_t ts = kc * nr + 16, nt = (N + nr - 1) / nr, rows = it % 2; /* rows: A rows equal, else B cols */
        float *w = rand_buf(M * kc), *src = rand_buf(kc * N), *c = nan_buf(M * N);
        for (int64_t i = 0; i < M && rows; i++)
            memcpy(w + i * kc, w, (size_t)kc * sizeof(float));
        for (int64_t d = 0; d < kc && !rows; d++)
            for (int64_t j = 1; j < N; j++)
                src[d * N + j] = src[d * N];
        for (int64_t i = 0; i < M * kc; i++)
            w[i] *= 1000.0f; /* large sums: any other order rounds differently */
        float *a = malloc((size_t)trtl_gemm_packed_a_size(isa, M, kc) * sizeof(float)), *b = nan_buf(nt * ts);
        trtl_gemm_pack_a(isa, w, kc, 1, M, kc, a);
        trtl_gemm_pack_b(isa, src, N, 1, kc, N, b, ts);
        trtl_gemm_block(isa, M, N, kc, a, kc * mr, b, ts, c, N, NULL, 0);
        int bad = 0;
        for (int64_t i = 0; i < M && !bad; i++)
            for (int64_t j = 0; j < N && !bad; j++) {
                double want = 0.0;
                for (int64_t d = 0; d < kc; d++)
                    want += (double)w[i * kc + d] * src[d * N + j];
                const float same = rows ? c[j] : c[i * N];
                bad = c[i * N + j] != same || !(fabs(c[i * N + j] - want) <= 1e-4 * (1.0 + fabs(want)) * kc);
            }
        if (bad) {
            fprintf(stderr, "MISMATCH trtl_gemm_block isa %d M=%lld N=%lld kc=%lld equal %s: an element differs from "
                            "its equal neighbour or from float64\n", (int)isa, (long long)M, (long long)N,
                    (long long)kc, rows ? "rows" : "columns");
            g_failures++;
        }
        g_cases++;
        free(w), free(src), free(c), free(a), free(b);
        if (bad)
            break;
    }
    g_rng = saved;
}

/* The split tail (trtl_gemm_pack_a_split + TRTL_GEMM_SPLIT_TAIL: on AVX2 a last panel of 1..3 rows becomes two
 * panels sharing the last 7..9 rows) against trtl_gemm_pack_a + trtl_gemm_block: each row's sum runs in the same
 * order in either tile, so C matches bit for bit; and against float64.  Every M of 1..5 panels + 3 rows (the
 * split and the plain tails), random N / depth, row bias + residual + relu on the last block, accumulate, the
 * spread prefetch entry.  Its own random stream. */
static void test_gemm_split_tail(void)
{
    uint64_t saved = g_rng;
    g_rng = 0x2545f4914f6cdd1dull;
    const trtl_gemm_isa isa = trtl_gemm_isa_best();
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa);
    for (int64_t M = 1; M <= 5 * mr + 3; M++) {
        const int64_t N = rint_in(1, 3 * nr + 5), kc = rint_in(1, 90), ldc = N + rint_in(0, 4);
        const int64_t ts = kc * nr + 16, nt = (N + nr - 1) / nr;
        const int flags = (M % 3 == 1 ? TRTL_GEMM_ACC : 0) | (M % 2 ? TRTL_GEMM_LAST : 0);
        float *w = rand_buf(M * kc), *src = rand_buf(kc * N), *bias = rand_buf(M), *res = rand_buf(M * ldc);
        float *c1 = rand_buf(M * ldc), *c2 = malloc((size_t)(M * ldc) * sizeof(float));
        float *c0 = malloc((size_t)(M * ldc) * sizeof(float));
        const size_t asz = (size_t)trtl_gemm_packed_a_size(isa, M, kc);
        float *a1 = malloc(asz * sizeof(float)), *a2 = nan_buf((int64_t)asz), *b = nan_buf(nt * ts);
        memcpy(c2, c1, (size_t)(M * ldc) * sizeof(float));
        memcpy(c0, c1, (size_t)(M * ldc) * sizeof(float));
        trtl_gemm_pack_a(isa, w, kc, 1, M, kc, a1);
        trtl_gemm_pack_a_split(isa, w, kc, M, kc, a2);
        trtl_gemm_pack_b(isa, src, N, 1, kc, N, b, ts);
        const trtl_gemm_epi e = {bias, NULL, res, ldc, TRTL_ACT_RELU, 0.0f, 0.0f};
        trtl_gemm_block(isa, M, N, kc, a1, kc * mr, b, ts, c1, ldc, &e, flags);
        if (M % 4 == 0)
            trtl_gemm_block(isa, M, N, kc, a2, kc * mr, b, ts, c2, ldc, &e, flags | TRTL_GEMM_SPLIT_TAIL);
        else
            trtl_gemm_block_pf_spread(isa, M, N, kc, a2, kc * mr, b, ts, c2, ldc, &e, flags | TRTL_GEMM_SPLIT_TAIL,
                                      src, kc * N * (int64_t)sizeof(float));
        int bad = 0;
        for (int64_t i = 0; i < M && !bad; i++)
            for (int64_t j = 0; j < N && !bad; j++) {
                double want = 0.0;
                for (int64_t d = 0; d < kc; d++)
                    want += (double)w[i * kc + d] * src[d * N + j];
                if (flags & TRTL_GEMM_ACC)
                    want += c0[i * ldc + j];
                if (flags & TRTL_GEMM_LAST) {
                    want += (double)bias[i] + res[i * ldc + j];
                    want = want > 0.0 ? want : 0.0;
                }
                const float got = c2[i * ldc + j];
                bad = got != c1[i * ldc + j] || !(fabs(got - want) <= 1e-5 * (4.0 + fabs(want)) * (kc + 2));
            }
        for (int64_t i = 0; i < M && !bad; i++) /* columns past N untouched */
            for (int64_t j = N; j < ldc && !bad; j++)
                bad = memcmp(&c2[i * ldc + j], &c0[i * ldc + j], sizeof(float)) != 0;
        if (bad) {
            fprintf(stderr, "MISMATCH split tail isa %d M=%lld N=%lld kc=%lld flags=%d: C differs from the plain "
                            "layout's or from float64\n", (int)isa, (long long)M, (long long)N, (long long)kc, flags);
            g_failures++;
        }
        g_cases++;
        free(w), free(src), free(bias), free(res), free(c0), free(c1), free(c2), free(a1), free(a2), free(b);
        if (bad)
            break;
    }
    /* fully_connected.packed_gemm's three orders on rows that end in a 1..3-row panel: the tile-major order (BERT's
     * 128 tokens: 21 panels + 2 rows; 7, 8, 9, 49 rows), the depth-major order (depth past the tile-major A), the
     * panel order (few channels; 103 rows: a 96-row block and 7 rows) */
    static const struct { int64_t M, D, K; } fixed[] = {
        {128, 96, 130}, {7, 64, 70}, {8, 200, 64}, {9, 33, 100}, {49, 768, 65}, {14, 1800, 80}, {61, 2000, 64},
        {103, 40, 20}, {9, 50, 7}, {128, 3072, 64},
    };
    int combo = 11;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (int r = 0; r < 2; r++, combo += 5)
            if (packed_fc_case(fixed[i].M, 0, fixed[i].D, 1, 1, fixed[i].K, r == 0, combo))
                break;
    g_rng = saved;
}

/* The packed kernels on the widest variant this CPU has, then on AVX2 (AVX-512 masked off):
 * prepare() picks the variant, so both layouts and both sets of microkernels are checked. */
static void test_packed_gemm(int ncases)
{
    if (!trtl_cpu_has(trtl_kernel_conv_packed_gemm.cpu_features)) {
        printf("test_kernels: skipping the packed_gemm kernels (CPU lacks AVX2/FMA)\n");
        return;
    }
    for (int pass = 0; isa_pass(pass); pass++) {
        /* the AVX2 pass (microkernels and packing layout of the other variant) a bit lighter */
        test_conv_packed_fixed(&trtl_kernel_conv_packed_gemm, pass == 0);
        test_conv_kernel(&trtl_kernel_conv_packed_gemm, 0, pass == 0 ? ncases : ncases / 2);
        test_fc_packed(pass == 0 ? ncases : ncases / 2);
        test_gemm_block_pack();
        test_gemm_block_invariance();
        test_gemm_split_tail();
    }
    trtl_cpu_set_mask(~0u);
}

/* ---- Winograd kernels (convolution_winograd.c) --------------------------------------------- */

extern const trtl_kernel trtl_kernel_conv_winograd_f43;
extern const trtl_kernel trtl_kernel_conv_winograd_f23;

/* Winograd rounds differently from direct convolution: the transforms combine inputs with
 * weights up to 5 (B^T) and 8 (A^T) before and after the channel sums, so its error is a fraction
 * of the magnitude of the convolution's sums, not of the output: F43 measured 1.5e-5 of max|y|
 * and 6e-5 of rms(y) with 512 ResNet-like channels (2.6e-5 of rms with 64 uniform channels), F23
 * and im2col ~1e-6.  A saturating activation (CLIP, TANH, ...) shrinks y but not that error, so
 * the tolerance has an absolute part scaled by the sums' rms, sqrt(C) with this suite's uniform
 * data (9C products of variance 1/9), next to a relative part of 3e-4; still far below what a
 * wrong tap, tile or epilogue gives. */
#define WINO_TOL 3e-4

static int wino_case(const trtl_kernel *k, int64_t N, int64_t C, int64_t K, int64_t H, int64_t W, int64_t pre0,
                     int64_t pre1, int64_t post0, int64_t post1, int mode, int bias, int combo)
{
    if (k == &trtl_kernel_conv_winograd_f43 && N * ((H + 3) / 4) * ((W + 3) / 4) < 16)
        return -1; /* no candidate below 16 output tiles (test_winograd_applies) */
    conv_case c = conv2d(N, C, K, 1, H, W, 3, 1, pre0, post0, mode, bias);
    c.pre[1] = pre1;
    c.post[1] = post1;
    g_rtol = WINO_TOL;
    g_atol = WINO_TOL * sqrt((double)C);
    int r = conv_run_case(k, &c, combo);
    g_rtol = 1e-4;
    g_atol = 0.0;
    return r;
}

/* Fixed shapes reaching each path (tiles split into groups shared by the slots or one group per
 * slot, several groups per slot, groups spanning images, 8-wide tail panels, partial edge tiles,
 * output channels not a multiple of the 6-row microkernel, deep channel sums), every epilogue
 * on the first, then random 3x3 stride-1 shapes over all padding modes. */
/* `ncases` random Winograd cases (sizes, padding, epilogue mode, bias) of kernel k, combos from `combo` on. */
static void wino_random(const trtl_kernel *k, int ncases, int combo)
{
    for (int done = 0; done < ncases; combo++) {
        int r = wino_case(k, rint_in(1, 3), rint_in(1, 40), rint_in(1, 40), rint_in(1, 30), rint_in(1, 30),
                          rint_in(0, 3), rint_in(0, 3), rint_in(0, 3), rint_in(0, 3), (int)(rnd() % 6),
                          (int)(rnd() % 4 != 0), combo);
        if (r < 0)
            continue;
        done++;
        if (r > 0)
            return;
    }
}

static void test_winograd_kernel(const trtl_kernel *k, int ncases)
{
    static const struct { int64_t N, C, K, H, W, pre, post; int mode; } sh[] = {
        {1, 64, 64, 20, 20, 1, 1, 0},  /* shared split */
        {1, 16, 23, 58, 61, 1, 1, 0},  /* private split, partial tiles, K % 6 != 0 */
        {2, 13, 21, 17, 9, 1, 1, 0},   /* batch, odd sizes */
        {1, 300, 10, 44, 45, 1, 1, 0}, /* deep: several groups (private), tail panels */
        {3, 1100, 7, 9, 10, 1, 1, 0},  /* very deep: several groups over images (shared) */
        {4, 8, 8, 13, 13, 0, 0, 0},    /* no padding, groups spanning images */
        {3, 5, 7, 1, 1, 1, 1, 0},      /* 1x1 map */
        {1, 7, 9, 3, 2, 0, 3, 2},      /* SAME_UPPER */
        {2, 6, 12, 16, 15, 2, 0, 3},   /* SAME_LOWER */
        {1, 9, 11, 12, 13, 3, 2, 1},   /* round-up mode, asymmetric explicit padding */
        {1, 1, 1, 5, 5, 0, 0, 0},      /* one channel */
        {1, 32, 64, 7, 7, 1, 1, 0},    /* ResNet's last stage, scaled */
        {3, 5, 7, 24, 1, 1, 1, 0},     /* 1-wide map: a tile row's next is m floats on (slow-act runs, act_group) */
    };
    int combo = 0;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int e = 0; e < (i == 0 ? 2 * N_ACTS : 3); e++, combo++)
            if (wino_case(k, sh[i].N, sh[i].C, sh[i].K, sh[i].H, sh[i].W, sh[i].pre, sh[i].pre, sh[i].post,
                          sh[i].post, sh[i].mode, (combo % 3) != 2, i == 0 ? e : combo) > 0)
                return;
    /* one NaN input in the last, a middle or the first slot's share of the finiteness check (check_share: a flat
     * s-th of the input a slot, in the run's first job) on the shared and private splits and a batch */
    for (size_t i = 0; i < 3; i++)
        for (int at = 0; at < 3; at++, combo++) {
            const int64_t vol = sh[i].N * sh[i].C * sh[i].H * sh[i].W;
            g_conv_nan_x = at == 0 ? vol - 1 : at == 1 ? vol / 2 + 3 : 5;
            int r = wino_case(k, sh[i].N, sh[i].C, sh[i].K, sh[i].H, sh[i].W, sh[i].pre, sh[i].pre, sh[i].post,
                              sh[i].post, sh[i].mode, 1, combo);
            g_conv_nan_x = -1;
            if (r > 0)
                return;
        }
    wino_random(k, ncases, combo);
}

/* applies(): only 3x3, stride 1, dilation 1, one group, 2-D; never without AVX2+FMA. */
static void test_winograd_applies(const trtl_kernel *k)
{
    static const struct { int64_t kh, kw, s0, s1, d0, G, nsp; int want; } c[] = {
        {3, 3, 1, 1, 1, 1, 2, 1}, {3, 3, 2, 2, 1, 1, 2, 0}, {3, 3, 1, 2, 1, 1, 2, 0}, {3, 3, 1, 1, 2, 1, 2, 0},
        {3, 3, 1, 1, 1, 2, 2, 0}, {5, 5, 1, 1, 1, 1, 2, 0}, {1, 3, 1, 1, 1, 1, 2, 0}, {3, 3, 1, 1, 1, 1, 3, 0},
        {3, 3, 1, 1, 1, 1, 1, 0},
    };
    int have = trtl_cpu_has(k->cpu_features);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        trtl_node nd = {0};
        nd.name = "applies";
        nd.op = TRTL_OP_CONVOLUTION;
        trtl_conv_params *p = &nd.p.conv;
        int nsp = (int)c[i].nsp;
        int64_t kk[3] = {c[i].kh, c[i].kw, 3}, s[3] = {c[i].s0, c[i].s1, 1}, d[3] = {c[i].d0, 1, 1},
                z[3] = {1, 1, 1}, xd[5] = {1, 8, 16, 16, 16};
        if (nsp == 1)
            kk[0] = 3;
        p->num_output_maps = 8;
        p->num_groups = (int32_t)c[i].G;
        p->kernel_size = trtl_dims_make(nsp, kk);
        p->stride = trtl_dims_make(nsp, s);
        p->dilation = trtl_dims_make(nsp, d);
        p->pre_padding = p->post_padding = trtl_dims_make(nsp, z);
        p->kernel.count = 8 * (8 / c[i].G) * kk[0] * (nsp > 1 ? kk[1] : 1) * (nsp > 2 ? kk[2] : 1);
        trtl_dims in = trtl_dims_make(nsp + 2, xd);
        int got = k->applies(&nd, &in), want = c[i].want && have;
        if (got != want) {
            fprintf(stderr, "FAIL applies %s case %zu: says %d (want %d)\n", k->name, i, got, want);
            g_failures++;
        }
        g_cases++;
    }
    /* F(4,3) is no candidate below 16 output tiles over the batch (7x7 map: 4); F(2,3) stays one */
    trtl_node nd = {0};
    nd.name = "applies";
    nd.op = TRTL_OP_CONVOLUTION;
    int64_t kk[2] = {3, 3}, one[2] = {1, 1}, x7[4] = {1, 8, 7, 7}, x7b4[4] = {4, 8, 7, 7};
    nd.p.conv.num_output_maps = 8;
    nd.p.conv.num_groups = 1;
    nd.p.conv.kernel_size = trtl_dims_make(2, kk);
    nd.p.conv.stride = nd.p.conv.dilation = nd.p.conv.pre_padding = nd.p.conv.post_padding = trtl_dims_make(2, one);
    nd.p.conv.kernel.count = 8 * 8 * 9;
    trtl_dims small = trtl_dims_make(4, x7), batch4 = trtl_dims_make(4, x7b4);
    int f43 = !strcmp(k->name, "convolution.winograd_f43");
    if (k->applies(&nd, &small) != (have && !f43) || k->applies(&nd, &batch4) != have) {
        fprintf(stderr, "FAIL applies %s on a 7x7 map: %d at batch 1, %d at batch 4\n", k->name,
                k->applies(&nd, &small), k->applies(&nd, &batch4));
        g_failures++;
    }
    g_cases++;
}

static void test_winograd(int ncases)
{
    const trtl_kernel *ks[2] = {&trtl_kernel_conv_winograd_f43, &trtl_kernel_conv_winograd_f23};
    for (int i = 0; i < 2; i++) {
        test_winograd_applies(ks[i]);
        if (!trtl_cpu_has(ks[i]->cpu_features)) {
            printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", ks[i]->name);
            continue;
        }
        test_winograd_kernel(ks[i], ncases);
    }
}

/* ---- 2-D pooling (x86/pooling_2d.c) ---------------------------------------------------------- */

extern const trtl_kernel trtl_kernel_pooling_2d;

typedef struct pool_case {
    int rank, type, mode, excl, nans; /* nans: NaNs planted at random positions of x */
    int64_t nan_row;                  /* > 0: a NaN in row nan_row - 1 of every plane (at a column of its own) */
    int64_t lead[3], H, W, k[2], s[2], pre[2], post[2];
    float blend;
} pool_case;

/* The engine applies the epilogue of a kernel that does not (pooling.2d): compare bare outputs. */
static trtl_epilogue no_epilogue(void)
{
    trtl_epilogue e = {0};
    e.act = TRTL_ACT_NONE;
    return e;
}

/* Returns 1 on failure, 0 on pass, -1 if the shape is invalid (skipped). */
static int pool_run_case(const pool_case *c)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_POOLING;
    nd.name = "pool";
    nd.epi = no_epilogue();
    trtl_pooling_params *p = &nd.p.pool;
    p->type = c->type;
    p->padding_mode = c->mode;
    p->average_count_excludes_padding = c->excl;
    p->blend_factor = c->blend;
    p->window_size = trtl_dims_make(2, c->k);
    p->stride = trtl_dims_make(2, c->s);
    p->pre_padding = trtl_dims_make(2, c->pre);
    p->post_padding = trtl_dims_make(2, c->post);
    int64_t xd[5], yd[5], io[2] = {c->H, c->W};
    int nl = c->rank - 2;
    for (int i = 0; i < nl; i++)
        xd[i] = yd[i] = c->lead[i];
    for (int i = 0; i < 2; i++) {
        int64_t o, pre, post;
        if (trtl_spatial_out(io[i], c->k[i], c->s[i], c->pre[i], c->post[i], c->mode, 1, &o, &pre, &post) != TRTL_OK)
            return -1;
        xd[nl + i] = io[i];
        yd[nl + i] = o;
    }
    trtl_dims xdims = trtl_dims_make(c->rank, xd), ydims = trtl_dims_make(c->rank, yd);
    float *x = rand_buf(trtl_volume(&xdims));
    for (int i = 0; i < c->nans; i++)
        x[rnd() % (uint32_t)trtl_volume(&xdims)] = NAN;
    for (int64_t pl = 0, np = c->nan_row > 0 ? trtl_volume(&xdims) / (c->H * c->W) : 0; pl < np; pl++)
        x[(pl * c->H + c->nan_row - 1) * c->W + (pl * 7 + 3) % c->W] = NAN;
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    nd.n_in = nd.n_out = 1;
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc,
             "x%s -> y%s type=%d k=(%lld,%lld) s=(%lld,%lld) pre=(%lld,%lld) post=(%lld,%lld) mode=%d "
             "excludes_padding=%d blend=%.3f nans=%d nan_row=%lld",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), c->type,
             (long long)c->k[0], (long long)c->k[1], (long long)c->s[0], (long long)c->s[1], (long long)c->pre[0],
             (long long)c->pre[1], (long long)c->post[0], (long long)c->post[1], c->mode, c->excl, c->blend, c->nans,
             (long long)c->nan_row);
    trtl_status st;
    float *want = ref_output(trtl_ref_pooling, &nd, in, &ydims, &st);
    int r;
    if (!want) {
        fprintf(stderr, "FAIL reference pooling [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        r = 1;
    } else {
        r = run_opt(&trtl_kernel_pooling_2d, &nd, in, &ydims, want);
    }
    free(want);
    free(x);
    return r;
}

/* Fixed shapes (VGG/ResNet/LeNet-like windows, count_include_pad both ways, windows reaching
 * into or past the padding, SAME modes, Caffe's round-up rule), then random ones with odd sizes. */
static void test_pooling(int ncases)
{
    static const struct { int64_t C, H, W, k, s, pad; int mode; } sh[] = {
        {3, 8, 8, 2, 2, 0, 0},   {5, 9, 7, 3, 2, 1, 0},  {4, 13, 11, 3, 1, 1, 0}, {2, 17, 19, 3, 2, 1, 1},
        {3, 7, 7, 7, 1, 0, 0},   {2, 10, 9, 2, 2, 0, 2}, {2, 11, 6, 3, 2, 0, 3},  {3, 12, 13, 3, 2, 1, 4},
        {2, 9, 10, 3, 3, 2, 5},  {1, 1, 1, 1, 1, 0, 0},  {6, 5, 33, 5, 1, 2, 0},  {2, 6, 6, 2, 3, 1, 1},
        {2, 7, 75, 3, 2, 1, 0},  {2, 6, 70, 2, 2, 0, 0}, {1, 5, 41, 4, 2, 2, 1}, /* the vector max path */
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int type = 0; type < 3; type++)
            for (int excl = 0; excl < 2; excl++) {
                pool_case c = {0};
                c.rank = 4;
                c.lead[0] = 2;
                c.lead[1] = sh[i].C;
                c.H = sh[i].H;
                c.W = sh[i].W;
                c.k[0] = c.k[1] = sh[i].k;
                c.s[0] = c.s[1] = sh[i].s;
                c.pre[0] = c.pre[1] = c.post[0] = c.post[1] = sh[i].pad;
                c.mode = sh[i].mode;
                c.type = type;
                c.excl = excl;
                c.blend = type == TRTL_POOL_MAX_AVERAGE_BLEND ? 0.25f + 0.25f * (float)excl : 0.0f;
                if (pool_run_case(&c) > 0)
                    return;
            }
    /* max pooling's NaN check (planes of at most NAN_CHECK_MAX = 4096 floats): planes of 14x14 and 70x75 (past
     * it), without and with NaNs, so both the plain-maxps and the NaN-keeping variants run on either side */
    for (int big = 0; big < 2; big++)
        for (int nans = 0; nans <= 6; nans += 6) {
            pool_case c = {0};
            c.rank = 4;
            c.lead[0] = 1;
            c.lead[1] = 3;
            c.H = big ? 70 : 14;
            c.W = big ? 75 : 14;
            c.k[0] = c.k[1] = 3;
            c.s[0] = c.s[1] = 1;
            c.pre[0] = c.pre[1] = c.post[0] = c.post[1] = 1;
            c.type = TRTL_POOL_MAX;
            c.nans = nans;
            if (pool_run_case(&c) > 0)
                return;
        }
    /* planes past NAN_CHECK_MAX (the NaN-keeping max, unchecked) with one NaN a plane in its first, a middle, the
     * last row or none (3x3 s2 with ceil mode: SqueezeNet's 111x111 -> 55x55; 3x3 s1 padded; 2x2 s2) */
    static const struct { int64_t H, W, k, s, pad; int mode; } big[] = {
        {66, 70, 3, 2, 0, 1}, {66, 70, 3, 1, 1, 0}, {70, 66, 2, 2, 0, 0}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (int64_t row = 0; row <= 4; row++) {
            pool_case c = {0};
            c.rank = 4;
            c.lead[0] = 1;
            c.lead[1] = 3;
            c.H = big[i].H;
            c.W = big[i].W;
            c.k[0] = c.k[1] = big[i].k;
            c.s[0] = c.s[1] = big[i].s;
            c.pre[0] = c.pre[1] = c.post[0] = c.post[1] = big[i].pad;
            c.mode = big[i].mode;
            c.type = TRTL_POOL_MAX;
            c.nan_row = row == 0 ? 0 : row == 1 ? 1 : row == 2 ? c.H / 2 : row == 3 ? c.H - 1 : c.H;
            if (pool_run_case(&c) > 0)
                return;
        }
    for (int done = 0; done < ncases;) {
        pool_case c = {0};
        c.rank = (int)rint_in(3, 5);
        for (int i = 0; i < c.rank - 2; i++)
            c.lead[i] = rint_in(1, i == c.rank - 3 ? 9 : 3);
        c.H = rint_in(1, rnd() % 4 == 0 ? 40 : 17);
        c.W = rint_in(1, rnd() % 4 == 0 ? 40 : 17);
        for (int i = 0; i < 2; i++) {
            c.k[i] = rint_in(1, 5);
            c.s[i] = rint_in(1, 4);
            /* mostly smaller than the window; sometimes as large (windows of padding only) */
            c.pre[i] = rint_in(0, rnd() % 5 == 0 ? c.k[i] + 1 : c.k[i] - 1);
            c.post[i] = rint_in(0, rnd() % 5 == 0 ? c.k[i] + 1 : c.k[i] - 1);
        }
        c.mode = (int)(rnd() % 6);
        c.type = (int)(rnd() % 3);
        c.excl = (int)(rnd() % 2);
        c.blend = rnd() % 5 == 0 ? 1.0f : (rfloat() + 1.0f) * 0.5f;
        int r = pool_run_case(&c);
        if (r < 0)
            continue;
        done++;
        if (r > 0)
            return;
    }
}

/* Max and average pooling on GoogLeNet's, Inception-V3's and DenseNet's maps: rows shorter than a vector or
 * with a tail (the masked loads and stores of the vector paths), NaNs planted (a NaN in a window wins).  Runs last in main(), so
 * that the random cases of the other sections stay those of their seeds. */
static void test_pooling_tails(void)
{
    static const struct { int64_t C, H, W, k, s, pad; int mode; } sh[] = {
        {5, 14, 14, 3, 1, 1, 0}, {3, 7, 7, 3, 1, 1, 0},  {3, 28, 28, 3, 1, 1, 0}, {3, 28, 28, 3, 2, 0, 1},
        {3, 14, 14, 3, 2, 0, 1}, {2, 9, 3, 3, 1, 1, 0},  {2, 5, 17, 2, 1, 0, 0},  {2, 6, 33, 3, 2, 1, 1},
        {2, 13, 11, 3, 1, 1, 0}, {2, 7, 75, 3, 2, 1, 0}, {1, 5, 41, 4, 2, 2, 1},  {2, 4, 47, 5, 1, 2, 0},
        {3, 35, 35, 3, 1, 1, 0}, {2, 17, 17, 3, 1, 1, 0}, {2, 8, 8, 3, 1, 1, 0},  {3, 28, 28, 2, 2, 0, 0},
        {2, 9, 7, 4, 3, 2, 0}, /* Inception-V3's and DenseNet's average pools; a stride of 3 */
        /* SqueezeNet's ceil-mode 3x3 s2 pools (rows' tails read whole past the row, masked at the tensor's end), one
         * whose last window reaches past the row (26 wide: no such reads), rows in several blocks of the row buffer */
        {4, 27, 27, 3, 2, 0, 1}, {3, 55, 55, 3, 2, 0, 1}, {3, 26, 26, 3, 2, 0, 1}, {2, 40, 300, 3, 2, 1, 0},
        {2, 40, 500, 3, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int nans = 0; nans <= 3; nans += 3)
            for (int type = TRTL_POOL_MAX; type <= TRTL_POOL_AVERAGE; type++) {
            pool_case c = {0};
            c.rank = 4;
            c.lead[0] = 2;
            c.lead[1] = sh[i].C;
            c.H = sh[i].H;
            c.W = sh[i].W;
            c.k[0] = c.k[1] = sh[i].k;
            c.s[0] = c.s[1] = sh[i].s;
            c.pre[0] = c.pre[1] = c.post[0] = c.post[1] = sh[i].pad;
            c.mode = sh[i].mode;
            c.type = type;
            c.excl = (int)(i % 2);
            c.nans = nans;
            if (pool_run_case(&c) > 0)
                return;
        }
    /* strides past the row buffer, up to 2^62 where there is one output column or row (a fuzzed plan: the row
     * path's buffer size, (OW + 16) * stride, overflowed int64): the scalar path, the reference's result */
    static const int64_t huge[][2] = {{1, (int64_t)1 << 62}, {(int64_t)1 << 62, 2}, {4097, 4097}, {3, 4097}};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
        for (int type = TRTL_POOL_MAX; type <= TRTL_POOL_MAX_AVERAGE_BLEND; type++) {
            pool_case c = {0};
            c.rank = 4;
            c.lead[0] = 1;
            c.lead[1] = 3;
            c.H = 6;
            c.W = 9;
            c.k[0] = 2;
            c.k[1] = 3;
            c.s[0] = huge[i][0];
            c.s[1] = huge[i][1];
            c.pre[1] = c.post[1] = 1;
            c.type = type;
            c.excl = (int)(i % 2);
            c.blend = 0.5f;
            if (pool_run_case(&c) > 0)
                return;
        }
    /* The average small-plane path (stride 1 along W, planes up to 256 x 256 outputs in a 4096-float buffer):
     * Inception-V3's three maps with both counts, asymmetric padding, a vertical stride of 2 and 3, windows of 2 / 5 /
     * 1x3 / 3x1, rows shorter than, equal to and a float past a vector (7, 8, 9, 15, 16, 17), windows reaching past
     * the padding (ceil mode: rows of padding only), the largest plane it takes (the row path's past it), NaN / Inf
     * planted; the buffer's zeros are set once per task, so every plane after the first checks them. */
    static const struct { int64_t H, W, kh, kw, sh, pre_h, post_h, pre_w, post_w; int mode; } avg[] = {
        {35, 35, 3, 3, 1, 1, 1, 1, 1, 0}, {17, 17, 3, 3, 1, 1, 1, 1, 1, 0}, {8, 8, 3, 3, 1, 1, 1, 1, 1, 0},
        {9, 7, 3, 3, 1, 0, 2, 2, 0, 0},   {16, 16, 2, 2, 1, 0, 1, 0, 1, 0}, {15, 9, 5, 5, 2, 2, 2, 2, 2, 0},
        {11, 16, 1, 3, 1, 0, 0, 1, 1, 0}, {12, 17, 3, 1, 3, 1, 1, 0, 0, 0}, {6, 9, 3, 3, 2, 0, 0, 1, 1, 1},
        {2, 5, 3, 3, 1, 2, 2, 2, 2, 0},   {60, 60, 3, 3, 1, 1, 1, 1, 1, 0}, {62, 62, 3, 3, 1, 1, 1, 1, 1, 0},
        {3, 250, 3, 3, 1, 1, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof avg / sizeof avg[0]; i++)
        for (int excl = 0; excl < 2; excl++)
            for (int nans = 0; nans <= 2; nans += 2) {
                pool_case c = {0};
                c.rank = 4;
                c.lead[0] = 2;
                c.lead[1] = 3;
                c.H = avg[i].H;
                c.W = avg[i].W;
                c.k[0] = avg[i].kh;
                c.k[1] = avg[i].kw;
                c.s[0] = avg[i].sh;
                c.s[1] = 1;
                c.pre[0] = avg[i].pre_h;
                c.post[0] = avg[i].post_h;
                c.pre[1] = avg[i].pre_w;
                c.post[1] = avg[i].post_w;
                c.mode = avg[i].mode;
                c.type = TRTL_POOL_AVERAGE;
                c.excl = excl;
                c.nans = nans;
                if (pool_run_case(&c) > 0)
                    return;
            }
}

/* ---- trailing-axes reduce (x86/reduce_inner.c) ---------------------------------------------- */

extern const trtl_kernel trtl_kernel_reduce_inner;

/* Reduces d[first..rank) of x (keep_dims or not) with `op`; `nan_at` >= 0 puts a NaN there.
 * Returns 1 on failure. */
static int reduce_run_case(int op, int rank, const int64_t *d, int first, int keep, int64_t nan_at)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_REDUCE;
    nd.name = "reduce";
    nd.epi = no_epilogue();
    nd.p.reduce.op = op;
    nd.p.reduce.keep_dims = keep;
    nd.p.reduce.axes = (uint32_t)(((1u << rank) - 1) - ((1u << first) - 1));
    int64_t yd[TRTL_MAX_DIMS];
    int ny = 0;
    for (int i = 0; i < rank; i++)
        if (i < first || keep)
            yd[ny++] = i < first ? d[i] : 1;
    trtl_dims xdims = trtl_dims_make(rank, d), ydims = trtl_dims_make(ny, yd);
    int64_t nx = trtl_volume(&xdims);
    float *x = rand_buf(nx);
    if (op == TRTL_RED_PROD) /* products of many values in [-1, 1) vanish: keep them near 1 */
        for (int64_t i = 0; i < nx; i++)
            x[i] = 1.0f + 0.05f * x[i];
    if (nan_at >= 0 && nan_at < nx)
        x[nan_at] = NAN;
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    nd.n_in = nd.n_out = 1;
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s -> y%s op=%d axes=0x%x keep_dims=%d nan_at=%lld",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), op,
             (unsigned)nd.p.reduce.axes, keep, (long long)nan_at);
    trtl_status st;
    float *want = ref_output(trtl_ref_reduce, &nd, in, &ydims, &st);
    int r;
    if (!want) {
        fprintf(stderr, "FAIL reference reduce [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        r = 1;
    } else {
        r = run_opt(&trtl_kernel_reduce_inner, &nd, in, &ydims, want);
    }
    free(want);
    free(x);
    return r;
}

/* applies(): exactly the trailing blocks of axes. */
static void test_reduce_applies(void)
{
    static const struct { uint32_t axes; int rank, want; } c[] = {
        {0xc, 4, 1}, {0x8, 4, 1}, {0xf, 4, 1}, {0xe, 4, 1}, {0x4, 4, 0}, {0x6, 4, 0},
        {0x5, 3, 0}, {0x1, 1, 1}, {0x0, 3, 0}, {0x10, 4, 0}, {0x3, 3, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        trtl_node nd = {0};
        nd.name = "applies";
        nd.op = TRTL_OP_REDUCE;
        nd.p.reduce.axes = c[i].axes;
        int64_t xd[4] = {2, 3, 4, 5};
        trtl_dims in = trtl_dims_make(c[i].rank, xd);
        int got = trtl_kernel_reduce_inner.applies(&nd, &in);
        if (got != c[i].want) {
            fprintf(stderr, "FAIL applies reduce.inner case %zu: says %d (want %d)\n", i, got, c[i].want);
            g_failures++;
        }
        g_cases++;
    }
}

/* Every op; global pooling shapes, runs below / at / past the 8-wide partial sums and past the
 * 4096-element grain, an empty reduced block, NaNs for MAX/MIN; then random shapes. */
static void test_reduce(int ncases)
{
    static const struct { int rank; int64_t d[4]; int first; } sh[] = {
        {4, {1, 64, 7, 7}, 2}, {4, {2, 5, 3, 3}, 2}, {3, {3, 4, 8}, 2},   {3, {2, 3, 17}, 2},
        {2, {5, 4099}, 1},     {2, {9000, 3}, 1},    {4, {2, 3, 4, 5}, 0}, {4, {2, 3, 4, 5}, 3},
        {1, {1}, 0},           {3, {4, 0, 5}, 1},    {3, {2, 1, 1}, 1},
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int op = 0; op < TRTL_RED_COUNT; op++)
            for (int keep = 0; keep < 2; keep++)
                if (reduce_run_case(op, sh[i].rank, sh[i].d, sh[i].first, keep, -1))
                    return;
    static const int64_t nd[3] = {3, 4, 21};
    for (int op = TRTL_RED_MAX; op <= TRTL_RED_MIN; op++)
        for (int64_t at = 0; at < 3 * 4 * 21; at += 37)
            if (reduce_run_case(op, 3, nd, 2, 1, at))
                return;
    for (int i = 0; i < ncases; i++) {
        int rank = (int)rint_in(1, 5), first = (int)rint_in(0, rank - 1);
        int64_t d[5], total, inner;
        do { /* at most 100k elements, 6k per output (float sums and products stay close to double) */
            total = inner = 1;
            for (int j = 0; j < rank; j++) {
                d[j] = rint_in(1, rnd() % 3 == 0 ? 40 : 9);
                total *= d[j];
                inner *= j >= first ? d[j] : 1;
            }
        } while (total > 100000 || inner > 6000);
        int op = (int)(rnd() % TRTL_RED_COUNT);
        if (reduce_run_case(op, rank, d, first, (int)(rnd() % 2), rnd() % 6 == 0 ? rint_in(0, 50) : -1))
            return;
    }
}

/* ---- thread pool ------------------------------------------------------------------------------ */

typedef struct pool_check {
    _Atomic int *hits;
    int size;
    _Atomic int bad_thread;
    trtl_threadpool *pool; /* for the nested call */
} pool_check;

static void count_task(void *ctx, int64_t b, int64_t e, int thread)
{
    pool_check *pc = ctx;
    if (thread < 0 || thread >= pc->size)
        atomic_store(&pc->bad_thread, 1);
    for (int64_t i = b; i < e; i++)
        atomic_fetch_add(&pc->hits[i], 1);
}

static void nested_task(void *ctx, int64_t b, int64_t e, int thread)
{
    pool_check *pc = ctx;
    (void)thread;
    for (int64_t i = b; i < e; i++) {
        /* a nested parallel_for on the same pool runs inline */
        pool_check inner = {pc->hits + i * 4, pc->size, 0, NULL};
        trtl_parallel_for(pc->pool, 4, 1, count_task, &inner);
        if (atomic_load(&inner.bad_thread))
            atomic_store(&pc->bad_thread, 1);
    }
}

/* Every index of [0, n) runs exactly once, thread indices stay below the pool size, nested calls
 * run inline, with workers hot (back to back) and asleep (after a pause). */
static void test_threadpool(void)
{
    enum { MAXN = 300 };
    static _Atomic int hits[MAXN * 4];
    for (int pi = 0; pi < 3; pi++) {
        for (int it = 0; it < 1500; it++) {
            int64_t n = rint_in(0, MAXN), grain = rint_in(1, 7);
            int nested = it % 50 == 7;
            for (int64_t i = 0; i < MAXN * 4; i++)
                atomic_store(&hits[i], 0);
            pool_check pc = {hits, trtl_threadpool_size(g_pools[pi]), 0, g_pools[pi]};
            if (it % 100 == 99 && pi > 0) {
                struct timespec ts = {0, 5000000}; /* past the spin: workers go to sleep */
                nanosleep(&ts, NULL);
            }
            trtl_parallel_for(g_pools[pi], n, grain, nested ? nested_task : count_task, &pc);
            int64_t total = nested ? n * 4 : n;
            for (int64_t i = 0; i < MAXN * 4; i++) {
                int want = i < total ? 1 : 0;
                if (atomic_load(&hits[i]) != want || atomic_load(&pc.bad_thread)) {
                    fprintf(stderr, "FAIL threadpool (size %d): n=%lld grain=%lld nested=%d: index %lld ran %d times%s\n",
                            pc.size, (long long)n, (long long)grain, nested, (long long)i, atomic_load(&hits[i]),
                            atomic_load(&pc.bad_thread) ? ", bad thread index" : "");
                    g_failures++;
                    return;
                }
            }
        }
    }
    int cpus = trtl_available_cpus();
    if (cpus < 1 || cpus > 4096) {
        fprintf(stderr, "FAIL trtl_available_cpus() = %d\n", cpus);
        g_failures++;
    }
    g_cases++;
}

/* trtl_steal_runs / trtl_runs_plan / trtl_runs_for: the runs a kernel with per-thread scratch slots deals to the
 * pool.  Slot 0's first run is slow (20 ms), so the other threads finish their own runs and steal slot 0's remaining
 * ones; every run executes once with its items [r * items / n, (r + 1) * items / n), a stolen run gets the thief's
 * slot, and no two runs ever execute at once on one slot (the scratch the run writes).  The steal is observed within
 * ten tries (a thread not scheduled for 20 ms on a loaded machine can miss one).  Then without the sleep: every
 * item once and slots below the plan's on every pool (none, 2, 3 threads) and slot count, fixed and stolen. */
typedef struct steal_check {
    int64_t nslots, items, n, slow; /* slow: run 0 sleeps */
    _Atomic int hits[64], busy[8], bad, stolen;
} steal_check;

static void steal_task(void *ctx, int64_t slot, int64_t r, int64_t b, int64_t e)
{
    steal_check *c = ctx;
    if (slot < 0 || slot >= c->nslots || r < 0 || r >= c->n || b != r * c->items / c->n ||
        e != (r + 1) * c->items / c->n || atomic_exchange(&c->busy[slot], 1)) {
        atomic_store(&c->bad, 1);
        return;
    }
    for (int64_t it = b; it < e; it++)
        atomic_fetch_add(&c->hits[it], 1);
    if (r / TRTL_STEAL_RUNS != slot)
        atomic_store(&c->stolen, 1);
    if (r == 0 && c->slow) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&c->busy[slot], 0);
}

/* Runs plan `ru` with steal_task; 1 (and a failure) where an item did not run exactly once or a slot was wrong. */
static int steal_check_run(trtl_threadpool *pool, const trtl_runs *ru, int64_t nslots, int slow, int *stolen)
{
    static steal_check c;
    memset(&c, 0, sizeof c);
    c.nslots = nslots;
    c.items = ru->items;
    c.n = ru->n;
    c.slow = slow;
    trtl_runs_for(pool, ru, steal_task, &c);
    *stolen = atomic_load(&c.stolen);
    for (int64_t it = 0; it < ru->items; it++)
        if (atomic_load(&c.hits[it]) != 1 || atomic_load(&c.bad)) {
            fprintf(stderr, "FAIL trtl_runs_for (pool of %d, %lld slots, %lld runs, steal %d): item %lld ran %d times%s\n",
                    trtl_threadpool_size(pool), (long long)nslots, (long long)ru->n, ru->steal, (long long)it,
                    atomic_load(&c.hits[it]), atomic_load(&c.bad) ? ", a wrong slot or range, or one slot twice at once" : "");
            g_failures++;
            return 1;
        }
    return 0;
}

static void test_steal_runs(void)
{
    int64_t runs = -1;
    if (trtl_steal_runs(g_pools[1], 3, 50, &runs) || runs != 3 || trtl_steal_runs(g_pools[1], 2, 1, &runs) ||
        trtl_steal_runs(NULL, 1, 50, &runs) || runs != 1 || !trtl_steal_runs(g_pools[2], 3, 7, &runs) || runs != 7) {
        fprintf(stderr, "FAIL trtl_steal_runs: steals where a thread has no slot, or runs wrong (%lld)\n",
                (long long)runs);
        g_failures++;
        return;
    }
    for (int pi = 1; pi < 3; pi++) {
        const int size = trtl_threadpool_size(g_pools[pi]);
        const trtl_runs ru = trtl_runs_plan(g_pools[pi], size, 60);
        if (!ru.steal || ru.n != size * TRTL_STEAL_RUNS) {
            fprintf(stderr, "FAIL trtl_runs_plan: pool of %d, %lld runs, steal %d\n", size, (long long)ru.n, ru.steal);
            g_failures++;
            return;
        }
        int stolen = 0;
        for (int attempt = 0; attempt < 10 && !stolen; attempt++)
            if (steal_check_run(g_pools[pi], &ru, size, 1, &stolen))
                return;
        if (!stolen) {
            fprintf(stderr, "FAIL steal runs (pool of %d): no run of the slow slot was stolen in 10 tries\n", size);
            g_failures++;
        }
        g_cases++;
    }
    static const int64_t items[] = {0, 1, 2, 3, 5, 7, 13, 50};
    for (int pi = 0; pi < 3; pi++)
        for (int64_t slots = 0; slots <= 4; slots++)
            for (size_t ii = 0; ii < sizeof items / sizeof items[0]; ii++) {
                const trtl_runs ru = trtl_runs_plan(g_pools[pi], slots, items[ii]);
                const int64_t most = slots < items[ii] ? slots : items[ii];
                int stolen;
                if (ru.items != items[ii] || ru.n < 1 || (!ru.steal && ru.n != (most < 1 ? 1 : most)) ||
                    (ru.steal && most != trtl_threadpool_size(g_pools[pi]))) {
                    fprintf(stderr, "FAIL trtl_runs_plan(pool of %d, %lld slots, %lld items): %lld runs, steal %d\n",
                            trtl_threadpool_size(g_pools[pi]), (long long)slots, (long long)items[ii],
                            (long long)ru.n, ru.steal);
                    g_failures++;
                    return;
                }
                if (steal_check_run(g_pools[pi], &ru, most < 1 ? 1 : most, 0, &stolen))
                    return;
                g_cases++;
            }
}

/* ---- applies() ------------------------------------------------------------------------------ */

static void test_applies(void)
{
    static const struct { int64_t C, K, G, s0, s1, d0, nsp; int want; } c[] = {
        {8, 8, 8, 1, 1, 1, 2, 1},  {8, 8, 8, 2, 2, 1, 2, 1},  {8, 8, 8, 1, 2, 1, 2, 1}, {8, 8, 8, 3, 1, 1, 2, 0},
        {8, 8, 8, 1, 1, 2, 2, 0},  {8, 16, 8, 1, 1, 1, 2, 0}, {8, 8, 4, 1, 1, 1, 2, 0}, {8, 8, 8, 1, 1, 1, 3, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        trtl_node nd = {0};
        nd.name = "applies";
        nd.op = TRTL_OP_CONVOLUTION;
        trtl_conv_params *p = &nd.p.conv;
        int nsp = (int)c[i].nsp;
        int64_t k[3] = {3, 3, 3}, s[3] = {c[i].s0, c[i].s1, 1}, d[3] = {c[i].d0, 1, 1},
                z[3] = {0, 0, 0}, xd[5] = {1, c[i].C, 9, 9, 9};
        p->num_output_maps = (int32_t)c[i].K;
        p->num_groups = (int32_t)c[i].G;
        p->kernel_size = trtl_dims_make(nsp, k);
        p->stride = trtl_dims_make(nsp, s);
        p->dilation = trtl_dims_make(nsp, d);
        p->pre_padding = p->post_padding = trtl_dims_make(nsp, z);
        p->kernel.type = TRTL_FLOAT; /* weights that fit: applies() also checks their count */
        p->kernel.count = c[i].K * (c[i].C / c[i].G) * (nsp == 3 ? 27 : 9);
        trtl_dims in = trtl_dims_make(nsp + 2, xd);
        int got = trtl_kernel_conv_depthwise_avx2.applies(&nd, &in);
        int im2col = trtl_kernel_conv_im2col_sgemm.applies(&nd, &in);
        if (got != c[i].want || !im2col) {
            fprintf(stderr, "FAIL applies case %zu: depthwise_avx2 says %d (want %d), im2col_sgemm says %d (want 1)\n",
                    i, got, c[i].want, im2col);
            g_failures++;
        }
        g_cases++;
    }
}

/* ---- softmax, normalization, shuffle and copy kernels (x86/softmax.c, normalization.c,
 * transpose.c, copy_ops.c) ------------------------------------------------------------------- */

extern const trtl_kernel trtl_kernel_softmax_simd;
extern const trtl_kernel trtl_kernel_normalization_rows;
extern const trtl_kernel trtl_kernel_normalization_channels;
extern const trtl_kernel trtl_kernel_shuffle_transpose;
extern const trtl_kernel trtl_kernel_concat_copy;
extern const trtl_kernel trtl_kernel_slice_rows;
extern const trtl_kernel trtl_kernel_concat_inplace; /* elided copies: tensors not in place here, so they copy */
extern const trtl_kernel trtl_kernel_slice_inplace;
extern const trtl_kernel trtl_kernel_gather_rows;
extern const trtl_kernel trtl_kernel_padding_rows;

/* Runs the reference `ref` and kernel k on node nd; returns 1 on failure. */
static int ref_vs(const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, const trtl_tensor_view *in,
                  const trtl_dims *ydims)
{
    trtl_status st;
    float *want = ref_output(ref, nd, in, ydims, &st);
    if (!want) {
        fprintf(stderr, "FAIL reference for %s [%s]: %s\n", k->name, g_desc, trtl_last_error());
        g_failures++;
        return 1;
    }
    int r = run_opt(k, nd, in, ydims, want);
    free(want);
    return r;
}

/* Puts NaN / +Inf / -Inf at a few places (special != 0). */
static void sprinkle(float *x, int64_t n, int special)
{
    if (!special || n == 0)
        return;
    static const float v[3] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++)
        x[rint_in(0, n - 1)] = v[(special + i) % 3];
}

static int softmax_case(int rank, const int64_t *d, int axis, int special)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_SOFTMAX;
    nd.name = "softmax";
    nd.epi = no_epilogue();
    nd.p.softmax.axes = 1u << axis;
    nd.n_in = nd.n_out = 1;
    trtl_dims xdims = trtl_dims_make(rank, d);
    int64_t n = trtl_volume(&xdims);
    float *x = rand_buf(n);
    for (int64_t i = 0; i < n; i++)
        x[i] *= 20.0f;
    sprinkle(x, n, special);
    if (special == 4) /* a whole row of -inf */
        for (int64_t i = 0; i < d[axis]; i++)
            x[i * trtl_volume_range(&xdims, axis + 1, rank)] = -INFINITY;
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s axis=%d special=%d features=0x%x", trtl_dims_str(&xdims, xs, sizeof xs),
             axis, special, trtl_cpu_features());
    int r = ref_vs(&trtl_kernel_softmax_simd, trtl_ref_softmax, &nd, in, &xdims);
    free(x);
    return r;
}

/* Every axis of fixed shapes (rows below / at / past the vector widths and the 64-column block),
 * NaN/+-Inf and a row of -Inf, then random shapes; on every ISA variant this CPU has. */
static void test_softmax(int ncases)
{
    static const struct { int rank; int64_t d[4]; } sh[] = {
        {4, {1, 3, 17, 33}}, {2, {3, 1000}}, {3, {2, 16, 130}}, {2, {5, 8}}, {1, {1}}, {3, {2, 7, 64}},
        {4, {2, 12, 9, 16}}, {2, {1, 31}},
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
            for (int ax = 0; ax < sh[i].rank; ax++)
                for (int sp = 0; sp < 5; sp++)
                    if (softmax_case(sh[i].rank, sh[i].d, ax, sp))
                        goto out;
        for (int i = 0; i < ncases; i++) {
            int rank = (int)rint_in(1, 5);
            int64_t d[5];
            rand_dims(rank, d, 60000);
            if (softmax_case(rank, d, (int)rint_in(0, rank - 1), rnd() % 5 == 0 ? (int)rint_in(1, 4) : 0))
                goto out;
        }
    }
out:
    trtl_cpu_set_mask(~0u);
}

/* The normalization kernel norm_case tests (test_normalization: .rows, test_normalization_channels: .channels). */
static const trtl_kernel *g_norm_kernel = &trtl_kernel_normalization_rows;

/* x of rank r, axes / groups as given; scale and bias dims: each dim 1 or x's (sbits / bbits: which
 * dims are x's), group: dim 1 may be G (sgroup / bgroup). */
static int norm_case(int r, const int64_t *d, uint32_t axes, int G, uint32_t sbits, uint32_t bbits, int sgroup,
                     int bgroup, int special, int want_applies)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_NORMALIZATION;
    nd.name = "norm";
    nd.epi = no_epilogue();
    nd.p.norm.axes = axes;
    nd.p.norm.num_groups = G;
    nd.p.norm.epsilon = (rnd() % 2) ? 1e-5f : 0.1f;
    nd.n_in = 3;
    nd.n_out = 1;
    int64_t sd[TRTL_MAX_DIMS], bd[TRTL_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        sd[i] = (sbits >> i & 1u) ? d[i] : 1;
        bd[i] = (bbits >> i & 1u) ? d[i] : 1;
    }
    if (sgroup)
        sd[1] = G;
    if (bgroup)
        bd[1] = G;
    trtl_dims xdims = trtl_dims_make(r, d), sdims = trtl_dims_make(r, sd), bdims = trtl_dims_make(r, bd);
    int64_t n = trtl_volume(&xdims);
    float *x = rand_buf(n), *s = rand_buf(trtl_volume(&sdims)), *b = rand_buf(trtl_volume(&bdims));
    for (int64_t i = 0; i < n; i++)
        x[i] = 3.0f + 2.0f * x[i]; /* an offset: the variance must not cancel */
    sprinkle(x, n, special);
    trtl_tensor_view in[3] = {{x, xdims, TRTL_FLOAT}, {s, sdims, TRTL_FLOAT}, {b, bdims, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX], ss[TRTL_DIMS_STR_MAX], bs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s scale%s bias%s axes=0x%x G=%d special=%d features=0x%x",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&sdims, ss, sizeof ss),
             trtl_dims_str(&bdims, bs, sizeof bs), (unsigned)axes, G, special, trtl_cpu_features());
    int r2 = 0;
    trtl_dims ind[3] = {xdims, sdims, bdims};
    int got = g_norm_kernel->applies(&nd, ind);
    if (got != want_applies) {
        fprintf(stderr, "FAIL applies %s [%s]: says %d, want %d\n", g_norm_kernel->name, g_desc, got, want_applies);
        g_failures++;
        r2 = 1;
    } else if (got) {
        r2 = ref_vs(g_norm_kernel, trtl_ref_normalization, &nd, in, &xdims);
    }
    g_cases++;
    free(x);
    free(s);
    free(b);
    return r2;
}

/* Layer norm over every trailing block with scale/bias broadcast inside the row, instance norm with
 * per-channel and scalar affine, group norm with per-channel and per-group affine; shapes that must
 * be refused; NaN/Inf rows; random shapes; on every ISA variant this CPU has. */
static void test_normalization(int ncases)
{
    static const int64_t ln[3] = {2, 13, 768}, in4[4] = {2, 6, 7, 9}, gn[4] = {3, 8, 5, 3}, odd[3] = {3, 5, 33};
    for (int pass = 0; isa_pass(pass); pass++) {
        for (int sp = 0; sp < 2; sp++) {
            if (norm_case(3, ln, 0x4, 1, 0x4, 0x4, 0, 0, sp, 1) || norm_case(3, ln, 0x6, 1, 0x4, 0x6, 0, 0, sp, 1) ||
                norm_case(3, odd, 0x4, 1, 0x4, 0x0, 0, 0, sp, 1) || norm_case(3, odd, 0x7, 1, 0x7, 0x2, 0, 0, sp, 1) ||
                norm_case(4, in4, 0xc, 1, 0x2, 0x2, 0, 0, sp, 1) || norm_case(4, in4, 0xc, 1, 0x0, 0x2, 0, 0, sp, 1) ||
                norm_case(4, gn, 0xc, 4, 0x2, 0x2, 0, 0, sp, 1) || norm_case(4, gn, 0xc, 4, 0x0, 0x0, 1, 1, sp, 1) ||
                norm_case(4, gn, 0xe, 2, 0x2, 0x0, 1, 0, sp, 1) || norm_case(4, gn, 0xc, 8, 0x2, 0x2, 0, 0, sp, 1) ||
                norm_case(2, gn, 0x0, 4, 0x2, 0x0, 0, 1, sp, 1))
                goto out;
        }
        /* refused: non-trailing axes, scale varying along a kept dim other than channels, spatial group scale */
        if (norm_case(3, odd, 0x2, 1, 0x2, 0x2, 0, 0, 0, 0) || norm_case(4, in4, 0xc, 1, 0x1, 0x2, 0, 0, 0, 0) ||
            norm_case(4, gn, 0xc, 4, 0x4, 0x2, 0, 0, 0, 0) || norm_case(4, in4, 0x8, 2, 0x2, 0x2, 0, 0, 0, 0) ||
            norm_case(3, odd, 0x4, 1, 0x1, 0x4, 0, 0, 0, 0))
            goto out;
        for (int i = 0; i < ncases; i++) {
            int rank = (int)rint_in(2, 5);
            int64_t d[5];
            rand_dims(rank, d, 60000);
            int kind = (int)(rnd() % 3);
            if (kind == 0) { /* layer norm */
                int first = (int)rint_in(0, rank - 1);
                uint32_t axes = ((1u << rank) - 1) - ((1u << first) - 1);
                if (norm_case(rank, d, axes, 1, axes & (uint32_t)rnd(), axes & (uint32_t)rnd(), 0, 0,
                              rnd() % 6 == 0, 1))
                    goto out;
            } else if (rank >= 3 || kind == 2) {
                int G = 1;
                if (kind == 2) {
                    G = (int)rint_in(1, 4);
                    d[1] = G * rint_in(1, 5);
                }
                uint32_t axes = ((1u << rank) - 1) & ~3u;
                if (G == 1 && !axes)
                    continue;
                int sg = G > 1 && G != d[1] && rnd() % 2, bg = G > 1 && G != d[1] && rnd() % 2;
                if (norm_case(rank, d, axes, G, rnd() % 2 ? 0x2 : 0, rnd() % 2 ? 0x2 : 0, sg, bg, rnd() % 6 == 0, 1))
                    goto out;
            }
        }
    }
out:
    trtl_cpu_set_mask(~0u);
}

/* "normalization.channels": one normalized axis that is not the last (ConvNeXt's LayerNorm2d over NCHW channels),
 * scale / bias per channel or one value; pixel counts with every tail (32-, 16-, 8-pixel vectors, single pixels);
 * NaN / Inf; cases it must refuse (the last axis, two axes, groups, scale varying along another dim); random
 * shapes; every ISA variant this CPU has and the portable loop. */
static void test_normalization_channels(int ncases)
{
    static const int64_t cnx[4] = {1, 96, 14, 14}, odd[4] = {2, 13, 5, 7}, r3[3] = {3, 33, 61}, r2[2] = {19, 45},
                         r5[5] = {2, 3, 17, 2, 5};
    g_norm_kernel = &trtl_kernel_normalization_channels;
    for (int pass = 0; pass < 3; pass++) {
        if (!isa_pass_portable(pass))
            continue;
        for (int sp = 0; sp < 2; sp++)
            if (norm_case(4, cnx, 0x2, 1, 0x2, 0x2, 0, 0, sp, 1) || norm_case(4, odd, 0x2, 1, 0x2, 0x0, 0, 0, sp, 1) ||
                norm_case(3, r3, 0x2, 1, 0x0, 0x2, 0, 0, sp, 1) || norm_case(2, r2, 0x1, 1, 0x1, 0x1, 0, 0, sp, 1) ||
                norm_case(5, r5, 0x4, 1, 0x4, 0x4, 0, 0, sp, 1) || norm_case(4, odd, 0x1, 1, 0x1, 0x1, 0, 0, sp, 1))
                goto out;
        /* refused: the last axis, two axes, groups, scale along another dim */
        if (norm_case(4, odd, 0x8, 1, 0x8, 0x8, 0, 0, 0, 0) || norm_case(4, odd, 0x6, 1, 0x2, 0x2, 0, 0, 0, 0) ||
            norm_case(4, odd, 0x2, 2, 0x2, 0x2, 0, 0, 0, 0) || norm_case(4, odd, 0x2, 1, 0x6, 0x2, 0, 0, 0, 0))
            goto out;
        for (int i = 0; i < ncases / 4; i++) {
            int rank = (int)rint_in(2, 5);
            int64_t d[5];
            rand_dims(rank, d, 60000);
            const uint32_t axis = 1u << rint_in(0, rank - 2);
            if (norm_case(rank, d, axis, 1, rnd() % 2 ? axis : 0, rnd() % 2 ? axis : 0, 0, 0, rnd() % 6 == 0, 1))
                goto out;
        }
    }
out:
    g_norm_kernel = &trtl_kernel_normalization_rows;
    trtl_cpu_set_mask(~0u);
}

/* One run of normalization kernel fn (k's run, or the reference) into out (floats or codes: the node's out_quant),
 * on the calling thread or the pool pi; 0 on success. */
static int norm_run_into(const trtl_kernel *k, trtl_kernel_fn fn, trtl_node *nd, const trtl_tensor_view *in,
                         trtl_tensor_view *out, int pi)
{
    size_t ss = k && k->scratch ? k->scratch(nd, in, out) : 0;
    float *scratch = ss ? nan_buf((int64_t)(ss / sizeof(float)) + 1) : NULL;
    trtl_kernel_args a = {nd, in, out, scratch, ss, NULL, pi >= 0 ? g_pools[pi] : NULL, NULL};
    trtl_status st = k ? k->run(&a) : fn(&a);
    free(scratch);
    if (st != TRTL_OK) {
        fprintf(stderr, "FAIL %s codes [%s]: run: %s\n", k ? k->name : "normalization.ref", g_desc, trtl_last_error());
        g_failures++;
        return 1;
    }
    return 0;
}

/* normalization.rows writing int8 / uint8 codes (out_quant 2, builder/passes/norm_codes.c): the codes must be, bit for
 * bit, those of its own float output quantized as QuantizeLinear (trtl_q_value, which quantize.simd matches: the
 * norm_codes pass replaces "normalization.rows -> quantize.simd"), and within one code of the reference kernel's
 * codes (it computes in double, so a value next to a rounding tie may quantize one code apart: at most 2 % of them);
 * on the calling thread and the pools. */
static int norm_codes_case(int r, const int64_t *d, uint32_t axes, int G, uint32_t sbits, uint32_t bbits, int special)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_NORMALIZATION;
    nd.name = "norm codes";
    nd.epi = no_epilogue();
    nd.p.norm.axes = axes;
    nd.p.norm.num_groups = G;
    nd.p.norm.epsilon = (rnd() % 2) ? 1e-5f : 0.1f;
    nd.p.norm.compute_precision = TRTL_FLOAT;
    nd.n_in = 3;
    nd.n_out = 1;
    const int u8 = rnd() % 2;
    const trtl_dtype ct = u8 ? TRTL_UINT8 : TRTL_INT8;
    const float qs = (float)(0.004 + 0.05 * (rnd() % 1000) / 1000.0);
    const int32_t zp = (int32_t)(u8 ? rint_in(0, 255) : rint_in(-128, 127));
    int64_t sd[TRTL_MAX_DIMS], bd[TRTL_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        sd[i] = (sbits >> i & 1u) ? d[i] : 1;
        bd[i] = (bbits >> i & 1u) ? d[i] : 1;
    }
    trtl_dims xdims = trtl_dims_make(r, d), sdims = trtl_dims_make(r, sd), bdims = trtl_dims_make(r, bd);
    const int64_t n = trtl_volume(&xdims);
    float *x = rand_buf(n), *sc = rand_buf(trtl_volume(&sdims)), *b = rand_buf(trtl_volume(&bdims));
    for (int64_t i = 0; i < n; i++)
        x[i] = 3.0f + 2.0f * x[i];
    sprinkle(x, n, special);
    trtl_tensor_view in[3] = {{x, xdims, TRTL_FLOAT}, {sc, sdims, TRTL_FLOAT}, {b, bdims, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s axes=0x%x G=%d %s scale %g zero %d special=%d features=0x%x",
             trtl_dims_str(&xdims, xs, sizeof xs), (unsigned)axes, G, u8 ? "uint8" : "int8", (double)qs, (int)zp,
             special, trtl_cpu_features());
    uint8_t *got = malloc((size_t)n + 1), *want_ref = malloc((size_t)n + 1);
    float *yf = nan_buf(n);
    int bad = 0;
    trtl_tensor_view of = {yf, xdims, TRTL_FLOAT};
    trtl_dims ind[3] = {xdims, sdims, bdims};
    if (!trtl_kernel_normalization_rows.applies(&nd, ind)) {
        fprintf(stderr, "FAIL normalization.rows codes [%s]: applies() refused\n", g_desc);
        g_failures++;
        bad = 1;
        goto done;
    }
    if (norm_run_into(&trtl_kernel_normalization_rows, NULL, &nd, in, &of, -1)) { /* the float output */
        bad = 1;
        goto done;
    }
    nd.p.norm.out_quant = 2;
    nd.p.norm.out_scale = qs;
    nd.p.norm.out_zero_point = zp;
    nd.p.norm.out_type = ct;
    trtl_tensor_view oref = {want_ref, xdims, ct};
    if (norm_run_into(NULL, trtl_ref_normalization, &nd, in, &oref, -1)) {
        bad = 1;
        goto done;
    }
    for (int pi = -1; pi < 3 && !bad; pi++) {
        memset(got, 0x5a, (size_t)n + 1);
        trtl_tensor_view oq = {got, xdims, ct};
        if (norm_run_into(&trtl_kernel_normalization_rows, NULL, &nd, in, &oq, pi)) {
            bad = 1;
            break;
        }
        int64_t off_ref = 0;
        for (int64_t i = 0; i < n && !bad; i++) {
            const int32_t c = u8 ? got[i] : (int8_t)got[i];
            const int32_t w = trtl_q_value(yf[i], qs, zp, ct);
            const int32_t wr = u8 ? want_ref[i] : (int8_t)want_ref[i];
            if (c != w) {
                fprintf(stderr, "FAIL normalization.rows codes [%s] pool=%d: code[%lld] = %d, its float %.9g quantizes "
                        "to %d\n", g_desc, pi, (long long)i, (int)c, (double)yf[i], (int)w);
                bad = 1;
            } else if (c != wr) {
                off_ref++;
                if (c - wr > 1 || wr - c > 1) {
                    fprintf(stderr, "FAIL normalization.rows codes [%s] pool=%d: code[%lld] = %d, the reference's %d\n",
                            g_desc, pi, (long long)i, (int)c, (int)wr);
                    bad = 1;
                }
            }
        }
        if (!bad && got[n] != 0x5a) {
            fprintf(stderr, "FAIL normalization.rows codes [%s]: wrote past the codes\n", g_desc);
            bad = 1;
        }
        if (!bad && off_ref * 50 > n + 50) {
            fprintf(stderr, "FAIL normalization.rows codes [%s]: %lld of %lld codes one off the reference's\n",
                    g_desc, (long long)off_ref, (long long)n);
            bad = 1;
        }
        if (bad)
            g_failures++;
    }
done:
    g_cases++;
    free(x);
    free(sc);
    free(b);
    free(got);
    free(want_ref);
    free(yf);
    return bad;
}

static void test_normalization_codes(int ncases)
{
    static const int64_t ln[3] = {2, 13, 768}, odd[3] = {3, 5, 33}, in4[4] = {2, 6, 7, 9}, gn[4] = {3, 8, 5, 3};
    for (int pass = 0; pass < 3; pass++) {
        if (!isa_pass_portable(pass))
            continue;
        for (int sp = 0; sp < 2; sp++)
            if (norm_codes_case(3, ln, 0x4, 1, 0x4, 0x4, sp) || norm_codes_case(3, odd, 0x4, 1, 0x4, 0x0, sp) ||
                norm_codes_case(3, odd, 0x6, 1, 0x6, 0x2, sp) || norm_codes_case(4, in4, 0xc, 1, 0x2, 0x2, sp) ||
                norm_codes_case(4, gn, 0xc, 4, 0x2, 0x0, sp))
                goto out;
        for (int i = 0; i < ncases / 2; i++) {
            int rank = (int)rint_in(2, 4);
            int64_t d[4];
            rand_dims(rank, d, 40000);
            int first = (int)rint_in(0, rank - 1);
            uint32_t axes = ((1u << rank) - 1) - ((1u << first) - 1);
            if (norm_codes_case(rank, d, axes, 1, axes & (uint32_t)rnd(), axes & (uint32_t)rnd(), rnd() % 6 == 0))
                goto out;
        }
    }
out:
    trtl_cpu_set_mask(~0u);
}

static void rand_perm(int n, int64_t *p)
{
    for (int i = 0; i < n; i++)
        p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rint_in(0, i);
        int64_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

/* kind 0: transposes only; 1: first transpose + reshape (adjacent dims merged); 2: reshape + second
 * transpose; 3: both transposes around a reshape (the reference path inside the kernel).  epi 1: a residual in the
 * epilogue (fuse_epilogue gives pure transposes one: added as each row / tile is stored), 2: a residual and ReLU. */
static int shuffle_case(int rank, const int64_t *d, int kind, int epi)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_SHUFFLE;
    nd.name = "shuffle";
    nd.epi = no_epilogue();
    nd.n_in = nd.n_out = 1;
    if (epi) {
        nd.epi.has_residual = 1;
        nd.n_in = 2;
        if (epi == 2)
            nd.epi.act = TRTL_ACT_RELU;
    }
    trtl_shuffle_params *p = &nd.p.shuffle;
    p->reshape_dims.nb_dims = -1;
    p->zero_is_placeholder = 1;
    int64_t p1[TRTL_MAX_DIMS], p2[TRTL_MAX_DIMS], t[TRTL_MAX_DIMS], m[TRTL_MAX_DIMS], yd[TRTL_MAX_DIMS];
    rand_perm(rank, p1);
    for (int i = 0; i < rank; i++)
        t[i] = d[p1[i]];
    int mr = rank;
    if (kind != 2)
        p->first_transpose = trtl_dims_make(rank, p1);
    else
        for (int i = 0; i < rank; i++)
            t[i] = d[i];
    for (int i = 0; i < rank; i++)
        m[i] = t[i];
    if (kind >= 1) { /* merge one random adjacent pair */
        if (rank >= 2) {
            int k = (int)rint_in(0, rank - 2);
            mr = 0;
            for (int i = 0; i < rank; i++) {
                if (i == k + 1)
                    m[mr - 1] *= t[i];
                else
                    m[mr++] = t[i];
            }
        }
        p->reshape_dims = trtl_dims_make(mr, m);
    }
    for (int i = 0; i < mr; i++)
        yd[i] = m[i];
    if (kind != 1) {
        rand_perm(mr, p2);
        p->second_transpose = trtl_dims_make(mr, p2);
        for (int i = 0; i < mr; i++)
            yd[i] = m[p2[i]];
    }
    trtl_dims xdims = trtl_dims_make(rank, d), ydims = trtl_dims_make(mr, yd);
    float *x = rand_buf(trtl_volume(&xdims)), *res = epi ? rand_buf(trtl_volume(&ydims)) : NULL;
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {res, ydims, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s -> y%s kind=%d epi=%d features=0x%x", trtl_dims_str(&xdims, xs, sizeof xs),
             trtl_dims_str(&ydims, ys, sizeof ys), kind, epi, trtl_cpu_features());
    int r;
    trtl_dims ind[2] = {xdims, ydims};
    if (!trtl_kernel_shuffle_transpose.applies(&nd, ind)) {
        int id1 = 1, id2 = 1;
        for (int i = 0; i < rank; i++)
            id1 &= p1[i] == i;
        for (int i = 0; i < mr; i++)
            id2 &= p2[i] == i;
        r = !(kind == 3 && !id1 && !id2);
        if (r) {
            fprintf(stderr, "FAIL applies %s [%s]: refused\n", trtl_kernel_shuffle_transpose.name, g_desc);
            g_failures++;
        }
        g_cases++;
    } else {
        r = ref_vs(&trtl_kernel_shuffle_transpose, trtl_ref_shuffle, &nd, in, &ydims);
    }
    free(x);
    free(res);
    return r;
}

static void test_shuffle(int ncases)
{
    /* {5, 7, 3, 3, 32}, {6, 3, 7, 32}: Swin's q / k / v permute and attention output (rows of 32, carries) */
    static const struct { int rank; int64_t d[5]; } sh[] = {
        {4, {1, 56, 56, 96}}, {4, {2, 24, 7, 9}}, {3, {3, 17, 33}}, {2, {64, 8}}, {4, {1, 2, 3, 40}}, {1, {5}},
        {5, {5, 7, 3, 3, 32}}, {4, {6, 3, 7, 32}}, {4, {1, 7, 7, 768}}, {4, {2, 14, 14, 20}},
    };
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            trtl_cpu_set_mask(0); /* the portable tiles */
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
            for (int rep = 0; rep < 9; rep++)
                if (shuffle_case(sh[i].rank, sh[i].d, rep % 4, rep / 4 == 1 ? 1 : rep == 8 ? 2 : 0))
                    goto out;
        for (int i = 0; i < ncases; i++) {
            int rank = (int)rint_in(1, 5);
            int64_t d[5];
            rand_dims(rank, d, 60000);
            if (shuffle_case(rank, d, (int)(rnd() % 4), (int)(rnd() % 3)))
                goto out;
        }
    }
out:
    trtl_cpu_set_mask(~0u);
}

static int concat_case(int rank, const int64_t *d, int axis, int parts)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONCATENATION;
    nd.name = "concat";
    nd.epi = no_epilogue();
    nd.p.concat.axis = axis;
    nd.n_in = parts;
    nd.n_out = 1;
    trtl_tensor_view in[4];
    int64_t yd[TRTL_MAX_DIMS];
    for (int i = 0; i < rank; i++)
        yd[i] = d[i];
    yd[axis] = 0;
    for (int k = 0; k < parts; k++) {
        int64_t xd[TRTL_MAX_DIMS];
        for (int i = 0; i < rank; i++)
            xd[i] = d[i];
        xd[axis] = rnd() % 8 == 0 ? 0 : rint_in(1, rnd() % 4 == 0 ? 3000 : 9);
        yd[axis] += xd[axis];
        in[k].dims = trtl_dims_make(rank, xd);
        in[k].dtype = TRTL_FLOAT;
        in[k].data = rand_buf(trtl_volume(&in[k].dims));
    }
    trtl_dims ydims = trtl_dims_make(rank, yd);
    char ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "y%s axis=%d parts=%d", trtl_dims_str(&ydims, ys, sizeof ys), axis, parts);
    int r = ref_vs(&trtl_kernel_concat_copy, trtl_ref_concatenation, &nd, in, &ydims);
    if (!r) { /* the elided concatenation's copying path (its applies() says no: a pass chooses it) */
        trtl_kernel ip = *&trtl_kernel_concat_inplace;
        ip.applies = NULL;
        r = ref_vs(&ip, trtl_ref_concatenation, &nd, in, &ydims);
    }
    for (int k = 0; k < parts; k++)
        free(in[k].data);
    return r;
}

/* slice.rows (and the elided slice's copying path) on input dims d with start / size / stride st / sz / sd vs the
 * reference. */
static int slice_run_case(int rank, const int64_t *d, const int64_t *st, const int64_t *sz, const int64_t *sd, int mode)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_SLICE;
    nd.name = "slice";
    nd.epi = no_epilogue();
    nd.n_in = nd.n_out = 1;
    trtl_slice_params *p = &nd.p.slice;
    p->mode = mode;
    p->start = trtl_dims_make(rank, st);
    p->shape = trtl_dims_make(rank, sz);
    p->stride = trtl_dims_make(rank, sd);
    trtl_dims xdims = trtl_dims_make(rank, d), ydims = trtl_dims_make(rank, sz);
    float *x = rand_buf(trtl_volume(&xdims));
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s -> y%s start %lld stride %lld mode=%d",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), (long long)st[rank > 1],
             (long long)sd[0], mode);
    int r = ref_vs(&trtl_kernel_slice_rows, trtl_ref_slice, &nd, in, &ydims);
    if (!r) { /* the elided slice's copying path (its applies() says no: a pass chooses it) */
        trtl_kernel ip = *&trtl_kernel_slice_inplace;
        ip.applies = NULL;
        r = ref_vs(&ip, trtl_ref_slice, &nd, in, &ydims);
    }
    free(x);
    return r;
}

static int slice_case(int rank, const int64_t *d, int mode)
{
    int64_t st[TRTL_MAX_DIMS], sz[TRTL_MAX_DIMS], sd[TRTL_MAX_DIMS];
    for (int i = 0; i < rank; i++) {
        sd[i] = i == rank - 1 ? 1 : (rnd() % 3 == 0 ? -rint_in(1, 3) : rint_in(1, 3));
        if (mode != TRTL_SLICE_DEFAULT && rnd() % 3 == 0) { /* out of range: the reference path */
            st[i] = rint_in(-3, d[i] + 2);
            sz[i] = rint_in(1, 6);
        } else {
            int64_t a = rint_in(0, d[i] - 1), b = rint_in(0, d[i] - 1);
            if (sd[i] < 0 && a < b) {
                int64_t t = a;
                a = b;
                b = t;
            } else if (sd[i] > 0 && a > b) {
                int64_t t = a;
                a = b;
                b = t;
            }
            st[i] = a;
            sz[i] = (b - a) / sd[i] + 1;
        }
    }
    return slice_run_case(rank, d, st, sz, sd, mode);
}

/* Slices whose output rows follow each other in the input (slice.rows merges them into one row): ShuffleNet's
 * channel halves of [N, C, H, W] (every inner dim whole), and next to them the forms that must not merge -- an
 * inner dim not whole, stride 2 or -1 on the channel axis, a length-1 dim between whole ones, a partial last dim. */
static int slice_merge_cases(void)
{
    static const struct { int64_t d[4], st[4], sz[4], sd[4]; } c[] = {
        {{3, 10, 7, 5}, {0, 5, 0, 0}, {3, 5, 7, 5}, {1, 1, 1, 1}},   /* second half: all three inner dims merge */
        {{3, 10, 7, 5}, {0, 0, 0, 0}, {3, 5, 7, 5}, {1, 1, 1, 1}},   /* first half */
        {{3, 10, 7, 5}, {1, 2, 0, 0}, {2, 7, 7, 5}, {1, 1, 1, 1}},   /* images 1..2 too */
        {{3, 10, 7, 5}, {0, 1, 0, 0}, {3, 4, 7, 5}, {1, 2, 1, 1}},   /* channel stride 2: merges H, W only */
        {{3, 10, 7, 5}, {0, 9, 0, 0}, {3, 5, 7, 5}, {1, -2, 1, 1}},  /* negative channel stride */
        {{3, 10, 7, 5}, {0, 5, 1, 0}, {3, 5, 6, 5}, {1, 1, 1, 1}},   /* H not whole: W merges, then stops */
        {{3, 10, 7, 5}, {0, 5, 0, 1}, {3, 5, 7, 4}, {1, 1, 1, 1}},   /* W not whole: nothing merges */
        {{3, 10, 1, 5}, {2, 4, 0, 0}, {1, 1, 1, 5}, {1, 1, 1, 1}},   /* length-1 dims */
        {{2, 10, 7, 5}, {0, 3, 3, 0}, {2, 4, 1, 5}, {1, 1, 1, 1}},   /* one row of H, whole W */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (slice_run_case(4, c[i].d, c[i].st, c[i].sz, c[i].sd, TRTL_SLICE_DEFAULT))
            return 1;
    return 0;
}

static int gather_case(int rank, const int64_t *d, int axis, int q)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_GATHER;
    nd.name = "gather";
    nd.epi = no_epilogue();
    nd.n_in = 2;
    nd.n_out = 1;
    nd.p.gather.axis = axis;
    nd.p.gather.mode = TRTL_GATHER_DEFAULT;
    int64_t id[3], yd[TRTL_MAX_DIMS];
    for (int i = 0; i < q; i++)
        id[i] = rint_in(1, 6);
    trtl_dims xdims = trtl_dims_make(rank, d), idims = trtl_dims_make(q, id);
    int ny = 0;
    for (int i = 0; i < axis; i++)
        yd[ny++] = d[i];
    for (int i = 0; i < q; i++)
        yd[ny++] = id[i];
    for (int i = axis + 1; i < rank; i++)
        yd[ny++] = d[i];
    trtl_dims ydims = trtl_dims_make(ny, yd);
    int64_t ni = trtl_volume(&idims);
    int32_t *ind = malloc((size_t)ni * sizeof(int32_t));
    for (int64_t i = 0; i < ni; i++)
        ind[i] = (int32_t)rint_in(-d[axis], d[axis] - 1);
    float *x = rand_buf(trtl_volume(&xdims));
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {ind, idims, TRTL_INT32}};
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s -> y%s axis=%d", trtl_dims_str(&xdims, xs, sizeof xs),
             trtl_dims_str(&ydims, ys, sizeof ys), axis);
    int r = ref_vs(&trtl_kernel_gather_rows, trtl_ref_gather, &nd, in, &ydims);
    free(x);
    free(ind);
    return r;
}

static int pad_case(int rank, const int64_t *d)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_PADDING;
    nd.name = "pad";
    nd.epi = no_epilogue();
    nd.n_in = nd.n_out = 1;
    int nb = (int)rint_in(1, rank);
    int64_t pre[TRTL_MAX_DIMS], post[TRTL_MAX_DIMS], yd[TRTL_MAX_DIMS];
    for (int i = 0; i < rank; i++)
        yd[i] = d[i];
    for (int i = 0; i < nb; i++) {
        int k = rank - nb + i;
        pre[i] = rint_in(-(d[k] - 1) / 2, 4);
        post[i] = rint_in(-(d[k] - 1) / 2, 4);
        yd[k] = d[k] + pre[i] + post[i];
    }
    nd.p.pad.pre_padding = trtl_dims_make(nb, pre);
    nd.p.pad.post_padding = trtl_dims_make(nb, post);
    trtl_dims xdims = trtl_dims_make(rank, d), ydims = trtl_dims_make(rank, yd);
    float *x = rand_buf(trtl_volume(&xdims));
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s -> y%s", trtl_dims_str(&xdims, xs, sizeof xs),
             trtl_dims_str(&ydims, ys, sizeof ys));
    int r = ref_vs(&trtl_kernel_padding_rows, trtl_ref_padding, &nd, in, &ydims);
    free(x);
    return r;
}

static void test_copy_ops(int ncases)
{
    static const int64_t fixed[4] = {2, 3, 5, 7};
    for (int ax = 0; ax < 4; ax++)
        if (concat_case(4, fixed, ax, 3) || gather_case(4, fixed, ax, ax % 3) || slice_case(4, fixed, ax % 5) ||
            pad_case(4, fixed))
            return;
    if (slice_merge_cases())
        return;
    for (int i = 0; i < ncases; i++) {
        int rank = (int)rint_in(1, 5);
        int64_t d[5];
        rand_dims(rank, d, 20000);
        if (concat_case(rank, d, (int)rint_in(0, rank - 1), (int)rint_in(1, 4)) ||
            slice_case(rank, d, (int)(rnd() % TRTL_SLICE_COUNT)) ||
            gather_case(rank, d, (int)rint_in(0, rank - 1), (int)rint_in(0, 2)) || pad_case(rank, d))
            return;
    }
}

/* ---- deconvolution (x86/deconvolution_gemm.c) ---------------------------------------------- */

extern const trtl_kernel trtl_kernel_deconv_packed_gemm;

/* One deconvolution case through kernel k vs trtl_ref_deconvolution (+ the engine's epilogue).
 * Returns 1 on failure, 0 on pass, -1 if the shape is invalid (skipped). */
static int deconv_run_case(const trtl_kernel *k, const conv_case *c, int combo)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_DECONVOLUTION;
    nd.name = "deconv";
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)c->K;
    p->num_groups = (int32_t)c->G;
    p->padding_mode = c->mode;
    p->kernel_size = trtl_dims_make(c->nsp, c->k);
    p->stride = trtl_dims_make(c->nsp, c->s);
    p->dilation = trtl_dims_make(c->nsp, c->d);
    p->pre_padding = trtl_dims_make(c->nsp, c->pre);
    p->post_padding = trtl_dims_make(c->nsp, c->post);
    int64_t xd[5] = {c->N, c->C}, yd[5] = {c->N, c->K}, kvol = 1;
    for (int i = 0; i < c->nsp; i++) {
        int64_t o, pre, post;
        if (trtl_deconv_out(c->in[i], c->d[i] * (c->k[i] - 1) + 1, c->s[i], c->pre[i], c->post[i], c->mode, &o, &pre,
                            &post) != TRTL_OK)
            return -1;
        xd[2 + i] = c->in[i];
        yd[2 + i] = o;
        kvol *= c->k[i];
    }
    trtl_dims xdims = trtl_dims_make(c->nsp + 2, xd), ydims = trtl_dims_make(c->nsp + 2, yd);
    int64_t nw = c->C * (c->K / c->G) * kvol;
    float *w = rand_buf(nw), *b = c->bias ? rand_buf(c->K) : NULL, *x = rand_buf(trtl_volume(&xdims));
    float *res = NULL;
    if (combo % 5 == 4) /* NaN and infinities propagate as in the reference */
        for (int t = 0; t < 3; t++)
            x[rnd() % (uint32_t)trtl_volume(&xdims)] = t == 0 ? NAN : (t == 1 ? INFINITY : -INFINITY);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, c->bias ? c->K : 0};
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    if (nd.epi.has_residual) {
        res = rand_buf(trtl_volume(&ydims));
        in[1].data = res;
        nd.n_in = 2;
    }
    nd.n_out = 1;
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc,
             "deconv x%s -> y%s G=%lld k=(%lld,%lld,%lld) s=(%lld,%lld,%lld) d=(%lld,%lld,%lld) pre=(%lld,%lld,%lld) "
             "post=(%lld,%lld,%lld) mode=%d bias=%d act=%s res=%d",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), (long long)c->G,
             (long long)c->k[0], (long long)c->k[1], (long long)c->k[2], (long long)c->s[0], (long long)c->s[1],
             (long long)c->s[2], (long long)c->d[0], (long long)c->d[1], (long long)c->d[2], (long long)c->pre[0],
             (long long)c->pre[1], (long long)c->pre[2], (long long)c->post[0], (long long)c->post[1],
             (long long)c->post[2], c->mode, c->bias, act_name(nd.epi.act), nd.epi.has_residual);
    trtl_status st;
    float *want = ref_output(trtl_ref_deconvolution, &nd, in, &ydims, &st);
    int r;
    if (!want) {
        fprintf(stderr, "FAIL reference deconvolution [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        r = 1;
    } else {
        r = run_opt(k, &nd, in, &ydims, want);
    }
    free(want);
    free(w);
    free(b);
    free(x);
    free(res);
    return r;
}

static void rand_deconv(conv_case *c)
{
    memset(c, 0, sizeof *c);
    c->nsp = (int)(rnd() % 6 == 0 ? 1 : (rnd() % 6 == 0 ? 3 : 2));
    c->N = rint_in(1, 2);
    c->G = rnd() % 4 == 0 ? rint_in(2, 3) : 1;
    c->C = c->G * (rnd() % 8 == 0 ? rint_in(500, 700) : rint_in(1, 9)); /* sometimes several depth blocks */
    c->K = c->G * rint_in(1, 17);
    c->mode = (int)(rnd() % 6);
    c->bias = (int)(rnd() % 4 != 0);
    int direct = rnd() % 3 == 0; /* kernel == stride: the direct path */
    for (int i = 0; i < c->nsp; i++) {
        int64_t maxin = c->nsp == 3 ? 5 : (c->nsp == 1 ? 60 : (c->C > 100 ? 9 : 19));
        c->in[i] = rint_in(1, maxin);
        c->k[i] = rint_in(1, c->nsp == 3 ? 3 : 4);
        c->s[i] = direct ? c->k[i] : rint_in(1, 3);
        c->d[i] = direct || rnd() % 3 ? 1 : 2;
        c->pre[i] = rnd() % 2 ? 0 : rint_in(0, 2);
        c->post[i] = rnd() % 2 ? 0 : rint_in(0, 2);
    }
}

/* Fixed shapes: the U-Net up-sampling (2x2 stride 2, wide rows for the interleaving path, odd
 * padding), 3x3 stride 2 / 4x4 stride 2 (overlapping taps), a panel larger than one slot. */
static void test_deconv_fixed(const trtl_kernel *k)
{
    static const struct { int64_t N, C, K, G, H, W, k, s, pre, post; int mode; } sh[] = {
        {1, 32, 16, 1, 16, 37, 2, 2, 0, 0, 0}, {2, 12, 8, 1, 9, 40, 2, 2, 1, 0, 0},  {1, 16, 24, 1, 9, 23, 3, 2, 1, 1, 0},
        {1, 8, 8, 2, 12, 12, 4, 2, 1, 1, 0},  {1, 64, 32, 1, 40, 40, 2, 2, 0, 0, 0}, {1, 24, 13, 1, 70, 70, 3, 1, 1, 1, 2},
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int combo = 0; combo < 2 * N_ACTS; combo += i == 0 ? 1 : 5) {
            conv_case c = conv2d(sh[i].N, sh[i].C, sh[i].K, sh[i].G, sh[i].H, sh[i].W, sh[i].k, sh[i].s, sh[i].pre,
                                 sh[i].post, sh[i].mode, combo % 3 != 2);
            if (deconv_run_case(k, &c, combo) > 0)
                return;
        }
}

static void test_deconv(int ncases)
{
    if (!trtl_cpu_has(trtl_kernel_deconv_packed_gemm.cpu_features)) {
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_deconv_packed_gemm.name);
        return;
    }
    for (int pass = 0; isa_pass(pass); pass++) {
        test_deconv_fixed(&trtl_kernel_deconv_packed_gemm);
        for (int done = 0, combo = (int)(rnd() % 64); done < (pass == 0 ? ncases : ncases / 2);) {
            conv_case c;
            rand_deconv(&c);
            int r = deconv_run_case(&trtl_kernel_deconv_packed_gemm, &c, combo);
            if (r < 0)
                continue;
            combo++;
            done++;
            if (r > 0)
                break;
        }
    }
    trtl_cpu_set_mask(~0u);
}

/* ---- depthwise convolution without a padded copy (x86/convolution_depthwise_direct.c) --------- */

extern const trtl_kernel trtl_kernel_conv_depthwise;

static void rand_depthwise(conv_case *c)
{
    static const int64_t ks[] = {3, 3, 3, 5, 5, 7, 1, 2, 4};
    memset(c, 0, sizeof *c);
    c->nsp = 2;
    c->N = rint_in(1, 2);
    c->G = c->C = c->K = rint_in(1, 21);
    c->mode = (int)(rnd() % 6);
    c->bias = (int)(rnd() % 4 != 0);
    int64_t k = ks[rnd() % 9];
    for (int i = 0; i < 2; i++) {
        c->in[i] = rint_in(1, i == 1 && rnd() % 3 == 0 ? 90 : 24); /* wide rows: several vector blocks */
        c->k[i] = rnd() % 5 == 0 ? rint_in(1, 6) : k;
        c->s[i] = rint_in(1, 2);
        c->d[i] = rnd() % 4 == 0 ? rint_in(2, 3) : 1;
        c->pre[i] = rint_in(0, c->k[i]);
        c->post[i] = rint_in(0, c->k[i]);
    }
}

/* Both ISA variants; fixed MobileNet / EfficientNet shapes, then random ones. */
static void test_depthwise_direct(int ncases)
{
    static const struct { int64_t C, H, W, k, s, pad; } sh[] = {
        {32, 28, 28, 3, 1, 1}, {24, 29, 29, 3, 2, 1}, {16, 14, 14, 5, 2, 2}, {8, 17, 40, 7, 1, 3}, {12, 33, 35, 5, 1, 2},
    };
    if (!trtl_cpu_has(trtl_kernel_conv_depthwise.cpu_features)) {
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_depthwise.name);
        return;
    }
    for (int pass = 0; isa_pass(pass); pass++) {
        int stop = 0;
        for (size_t i = 0; i < sizeof sh / sizeof sh[0] && !stop; i++)
            for (int combo = 0; combo < 2 * N_ACTS && !stop; combo += 3) {
                conv_case c = conv2d(1, sh[i].C, sh[i].C, sh[i].C, sh[i].H, sh[i].W, sh[i].k, sh[i].s, sh[i].pad,
                                     sh[i].pad, 0, combo % 3 != 2);
                stop = conv_run_case(&trtl_kernel_conv_depthwise, &c, combo) > 0;
            }
        for (int done = 0, combo = (int)(rnd() % 64); done < ncases && !stop;) {
            conv_case c;
            rand_depthwise(&c);
            int r = conv_run_case(&trtl_kernel_conv_depthwise, &c, combo);
            if (r < 0)
                continue;
            combo++;
            done++;
            stop = r > 0;
        }
    }
    trtl_cpu_set_mask(~0u);
}

/* ---- convolution.depthwise_plane512 (x86/convolution_depthwise_plane512.c) ------------------------- */

extern const trtl_kernel trtl_kernel_conv_depthwise_plane512;

/* MobileNet-like fixed shapes (112-wide rows, both strides, 3x3 / 5x5 / 7x7, every padding mode), then random
 * undilated depthwise shapes of rand_depthwise: kernels 1..7 (even ones too), pads up to the kernel size. */
/* A fixed depthwise shape of the plane kernels' tests. */
typedef struct dw_shape {
    int64_t N, C, H, W, k, s, pad;
    int mode;
} dw_shape;

/* Kernel k on the n shapes sh, every third epilogue combination, bias on and off, a NaN in the last input column of
 * the first plane (the masked tail of a copy, an edge mask) in every ninth case; 1 when one failed. */
static int dw_fixed_shapes(const trtl_kernel *k, const dw_shape *sh, size_t n)
{
    int stop = 0;
    for (size_t i = 0; i < n && !stop; i++)
        for (int combo = 0; combo < 2 * N_ACTS && !stop; combo += 3) {
            conv_case c = conv2d(sh[i].N, sh[i].C, sh[i].C, sh[i].C, sh[i].H, sh[i].W, sh[i].k, sh[i].s, sh[i].pad,
                                 sh[i].pad, sh[i].mode, combo % 3 != 2);
            g_conv_nan_x = combo % 9 == 0 ? sh[i].W - 1 : -1;
            stop = conv_run_case(k, &c, combo) > 0;
            g_conv_nan_x = -1;
        }
    return stop;
}

static void test_depthwise_plane512(int ncases)
{
    static const dw_shape sh[] = {
        {1, 6, 9, 112, 3, 2, 1, 0}, {1, 5, 12, 112, 3, 1, 1, 0}, {1, 16, 29, 29, 3, 2, 1, 0}, {1, 12, 14, 14, 5, 2, 2, 0},
        {1, 8, 17, 40, 7, 1, 3, 0}, {2, 20, 28, 28, 3, 1, 1, 0}, {1, 9, 7, 7, 3, 1, 1, 0}, {1, 7, 33, 47, 3, 2, 0, 2},
        {1, 7, 16, 34, 5, 2, 1, 3}, {1, 4, 16, 33, 2, 2, 0, 1},
    };
    int stop = dw_fixed_shapes(&trtl_kernel_conv_depthwise_plane512, sh, sizeof sh / sizeof sh[0]);
    for (int done = 0, combo = (int)(rnd() % 64); done < ncases && !stop;) {
        conv_case c;
        rand_depthwise(&c);
        c.d[0] = c.d[1] = 1;
        int r = conv_run_case(&trtl_kernel_conv_depthwise_plane512, &c, combo);
        if (r < 0)
            continue;
        combo++;
        done++;
        stop = r > 0;
    }
}

/* ---- convolution.depthwise_rows8 (x86/convolution_depthwise_rows8.c) ------------------------------------ */

extern const trtl_kernel trtl_kernel_conv_depthwise_rows8;

/* MobileNet / MNASNet / EfficientNet shapes (112 / 56 / 28 / 14 / 7 maps, 3x3 / 5x5 / 7x7, strides 1 and 2, odd
 * maps, every padding mode, rows of 1..3 vectors with and without a partial last one, batch 2: the whole-vector
 * stores of partial vectors and the staged first / last rows at the tensor's ends), a NaN in the last input column
 * of the first plane (masked edge loads), then random undilated square-kernel shapes (the edge masks of 1..12
 * vectors a row, pads up to the kernel size), every epilogue. */
static void test_depthwise_rows8(int ncases)
{
    static const dw_shape sh[] = {
        {1, 6, 9, 112, 3, 2, 1, 0}, {1, 5, 12, 112, 3, 1, 1, 0}, {1, 16, 29, 29, 3, 2, 1, 0}, {1, 12, 14, 14, 5, 2, 2, 0},
        {1, 8, 17, 40, 7, 1, 3, 0}, {2, 20, 28, 28, 3, 1, 1, 0}, {1, 9, 7, 7, 3, 1, 1, 0},   {1, 7, 33, 47, 3, 2, 0, 2},
        {1, 7, 16, 34, 5, 2, 1, 3}, {2, 11, 14, 14, 3, 1, 1, 0}, {2, 10, 14, 14, 3, 2, 1, 0}, {1, 13, 7, 7, 5, 1, 2, 0},
        {2, 6, 7, 7, 5, 2, 2, 0},   {1, 8, 56, 56, 3, 2, 1, 0},  {1, 5, 28, 28, 5, 2, 2, 0},  {1, 4, 10, 9, 3, 1, 0, 0},
        /* planes smaller than a row's reads (MobileNetV2's last blocks at 64x64 inputs): every row of the last plane
         * staged, the input ending at an inaccessible page (volumes a multiple of 16: guarded_copy) */
        {1, 16, 2, 2, 3, 1, 1, 0},  {2, 8, 3, 3, 3, 1, 1, 0},   {1, 16, 4, 4, 5, 1, 2, 0},  {1, 64, 1, 1, 3, 1, 1, 0},
        {1, 16, 2, 4, 3, 2, 1, 0},
    };
    if (!trtl_cpu_has(trtl_kernel_conv_depthwise_rows8.cpu_features)) {
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_depthwise_rows8.name);
        return;
    }
    int stop = dw_fixed_shapes(&trtl_kernel_conv_depthwise_rows8, sh, sizeof sh / sizeof sh[0]);
    static const int64_t ks[] = {3, 3, 5, 7};
    for (int done = 0, tries = 0, combo = (int)(rnd() % 64); done < ncases && !stop && tries < 50 * ncases; tries++) {
        conv_case c;
        rand_depthwise(&c);
        c.k[0] = c.k[1] = ks[rnd() % 4];
        c.s[1] = c.s[0];
        c.d[0] = c.d[1] = 1;
        for (int i = 0; i < 2; i++) {
            c.pre[i] = rint_in(0, c.k[i]);
            c.post[i] = rint_in(0, c.k[i]);
        }
        if (!dw_case_applies(&trtl_kernel_conv_depthwise_rows8, &c))
            continue; /* an invalid shape, or staged rows past the kernel's limit (maps a few pixels wide) */
        int r = conv_run_case(&trtl_kernel_conv_depthwise_rows8, &c, combo);
        if (r < 0)
            continue;
        combo++;
        done++;
        stop = r > 0;
    }
}

/* ---- blocked channel layout (x86/nchwc_conv.c) ---------------------------------------------------------- */

extern const trtl_kernel trtl_kernel_nchwc_conv_avx2;
extern const trtl_kernel trtl_kernel_nchwc_conv_avx512;

/* A weightless node of 2-D case c's convolution (op `op`, plain layouts) and its plain input dims, for applies(). */
static trtl_node nchwc_probe(const conv_case *c, trtl_op op, trtl_dims *xp)
{
    int64_t xd[4] = {c->N, c->C, c->in[0], c->in[1]};
    *xp = trtl_dims_make(4, xd);
    trtl_node probe = {0};
    trtl_conv_params *p = &probe.p.conv;
    probe.op = op;
    p->num_output_maps = (int32_t)c->K;
    p->num_groups = (int32_t)c->G;
    p->kernel_size = trtl_dims_make(2, c->k);
    p->stride = trtl_dims_make(2, c->s);
    p->dilation = trtl_dims_make(2, c->d);
    p->pre_padding = trtl_dims_make(2, c->pre);
    p->post_padding = trtl_dims_make(2, c->post);
    p->padding_mode = c->mode;
    p->kernel = (trtl_weights){TRTL_FLOAT, NULL, c->K * (c->C / c->G) * c->k[0] * c->k[1]};
    return probe;
}

/* Whether nchwc_conv.avx2 runs case c (its applies() on the case's convolution). */
static int nchwc_case_applies(const conv_case *c)
{
    trtl_dims xp;
    const trtl_node probe = nchwc_probe(c, TRTL_OP_CONVOLUTION, &xp);
    return c->nsp == 2 && trtl_nchwc_conv_supported(&probe, &xp);
}

/* A random case's result r (conv_run_case: < 0 skipped, > 0 failed): counts a run case; whether to stop. */
static int tally_case(int r, int *combo, int *done)
{
    if (r < 0)
        return 0;
    (*combo)++;
    (*done)++;
    return r > 0;
}

/* nchwc_conv.avx2 / .avx512 (`wide`: pointwise output channels up to 72, past two groups of 32; depthwise layers of
 * stride 1 along W only, on x86/nchwc_dw512.c) vs trtl_ref_nchwc_conv on every (input,
 * output) layout: MobileNet shapes, then random pointwise and depthwise shapes with channel tails, widths up to 75
 * (every tile of 16 / 8 / 4 / 2 pixels and a last single one), strides, paddings and every epilogue (conv_run_case
 * with g_nchwc_*). */
static void test_nchwc_kernel(const trtl_kernel *k, int wide, int ncases)
{
    if (!trtl_cpu_has(k->cpu_features)) {
        printf("test_kernels: skipping %s (CPU lacks its features)\n", k->name);
        return;
    }
    static const int64_t fixed[][8] = { /* N C K H W k stride depthwise */
        {1, 32, 16, 14, 14, 1, 1, 0},   {1, 96, 24, 7, 7, 1, 1, 0},     {2, 13, 21, 5, 9, 1, 1, 0},
        {1, 960, 160, 7, 7, 1, 1, 0},   {1, 144, 144, 56, 56, 3, 2, 1}, {1, 32, 32, 112, 112, 3, 1, 1},
        {1, 19, 19, 9, 13, 5, 2, 1},    {2, 12, 12, 7, 7, 7, 1, 1},     {1, 576, 576, 14, 14, 3, 1, 1},
        {1, 3, 3, 1, 1, 3, 1, 1},       {1, 11, 11, 3, 2, 5, 2, 1},
        /* pointwise items of one block pair over one pixel chunk in even runs: 6 chunks with a partial last tile,
         * a batch of 3 images of 3 chunks each and an odd block (K = 40), 14 x 14 cut into smaller chunks */
        {1, 144, 23, 29, 31, 1, 1, 0},  {3, 1152, 40, 7, 7, 1, 1, 0},   {1, 480, 112, 14, 14, 1, 1, 0},
        /* a depth-blocked image of up to 65536 input floats is one chunk (1336 x 49), one past it two (1344 x 49) */
        {1, 1336, 16, 7, 7, 1, 1, 0},   {2, 1344, 17, 7, 7, 1, 1, 0},
        /* pointwise depth blocks of 128 input channels with a last block of 75 (a partial channel block) / 5 */
        {1, 203, 19, 5, 7, 1, 1, 0},    {2, 389, 9, 3, 5, 1, 1, 0},
        /* depth blocks with groups of 3 + 1 output blocks (AVX2 tiles 3 blocks x 4 pixels; one wide group of 4)
         * and a last depth block of 4 channels, 15 pixels (tiles 4 + 4 + 4 + 3); one block alone, 16 pixels */
        {2, 260, 25, 5, 3, 1, 1, 0},    {1, 200, 8, 4, 4, 1, 1, 0},
        /* depthwise planes cut into bands of rows at 2 and 3 threads (9 planes; 2 planes of 9 rows) */
        {1, 72, 72, 28, 28, 5, 2, 1},   {2, 9, 9, 17, 9, 3, 1, 1}};
    int stop = 0, combo = (int)(rnd() % 64);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && !stop; i++)
        for (int lay = 1; lay < 4 && !stop && !(wide && fixed[i][7] && fixed[i][6] != 1); lay++) {
            const int64_t *f = fixed[i];
            conv_case c = conv2d(f[0], f[1], f[2], f[7] ? f[1] : 1, f[3], f[4], f[5], f[6], f[5] / 2, f[5] / 2,
                                 TRTL_PADMODE_EXPLICIT_ROUND_DOWN, (int)((i + (size_t)lay) % 3 != 0));
            g_nchwc_in = lay & 1 ? 8 : 0;
            g_nchwc_out = lay & 2 ? 8 : 0;
            g_nchwc_scale = !f[7] && lay != 2; /* squeeze-and-excitation (all but one layout) */
            g_nchwc_mean = f[7] && lay != 2;
            if (!nchwc_case_applies(&c)) {
                fprintf(stderr, "FAIL %s: does not apply to fixed case %zu\n", k->name, i);
                g_failures++;
                break;
            }
            stop = conv_run_case(k, &c, combo++) > 0;
        }
    /* dilated depthwise (AVX2 rows only: the wide kernel refuses them): LR-ASPP / DeepLabV3's 5x5 dilation 2 on
     * 14 x 14 (a padded band), a wide plane (edges per pixel), stride 2, 7x7, the two axes' dilations apart, rows
     * and columns whose taps straddle the map (padding past a dilated tap) */
    static const int64_t dil[][9] = {/* N C H W k stride dil_h dil_w pad */
                                     {1, 20, 14, 14, 5, 1, 2, 2, 4}, {2, 13, 9, 11, 3, 1, 2, 2, 2},
                                     {1, 16, 17, 15, 3, 2, 2, 2, 2}, {1, 11, 20, 37, 5, 1, 2, 2, 3},
                                     {1, 9, 7, 7, 7, 1, 2, 2, 6},    {1, 8, 12, 12, 5, 2, 2, 2, 1},
                                     {1, 10, 11, 19, 3, 1, 2, 1, 1}, {2, 7, 13, 10, 5, 1, 1, 2, 2},
                                     {1, 12, 5, 6, 3, 1, 2, 2, 3}};
    for (size_t i = 0; i < sizeof dil / sizeof dil[0] && !stop && !wide; i++)
        for (int lay = 1; lay < 4 && !stop; lay++) {
            const int64_t *f = dil[i];
            conv_case c = conv2d(f[0], f[1], f[1], f[1], f[2], f[3], f[4], f[5], f[8], f[8],
                                 TRTL_PADMODE_EXPLICIT_ROUND_DOWN, (int)((i + (size_t)lay) % 3 != 0));
            c.d[0] = f[6];
            c.d[1] = f[7];
            g_nchwc_in = lay & 1 ? 8 : 0;
            g_nchwc_out = lay & 2 ? 8 : 0;
            g_nchwc_scale = 0;
            g_nchwc_mean = lay == 3;
            if (!nchwc_case_applies(&c)) {
                fprintf(stderr, "FAIL %s: does not apply to dilated case %zu\n", k->name, i);
                g_failures++;
                break;
            }
            stop = conv_run_case(k, &c, combo++) > 0;
        }
    for (int done = 0, tries = 0; done < ncases && !stop && tries < 50 * ncases; tries++) {
        conv_case c;
        int dw = (int)(rnd() % 2);
        rand_conv(&c, dw);
        if (dw) {
            c.k[0] = c.k[1] = rint_in(1, 4) * 2 - 1;
            c.pre[0] = rint_in(0, c.k[0]);
            c.pre[1] = rint_in(0, c.k[1]);
            c.post[0] = rint_in(0, c.k[0]);
            c.post[1] = rint_in(0, c.k[1]);
            for (int a = 0; a < 2 && !wide; a++) /* dilation 2 on a third of the axes (3: refused) */
                c.d[a] = rnd() % 3 == 0 ? 2 : 1;
        } else {
            c.nsp = 2;
            c.G = 1;
            c.C = rint_in(1, 40);
            c.K = rint_in(1, wide ? 72 : 40); /* the wide tiles: groups of 32 output channels and their tails */
            for (int a = 0; a < 2; a++) {
                c.k[a] = c.s[a] = c.d[a] = 1;
                c.pre[a] = c.post[a] = 0;
                c.in[a] = rint_in(1, 21);
            }
            c.mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
        }
        int lay = (int)(rnd() % 3) + 1;
        g_nchwc_in = lay & 1 ? 8 : 0;
        g_nchwc_out = lay & 2 ? 8 : 0;
        if (!nchwc_case_applies(&c) || (wide && dw && c.s[1] != 1)) /* the wide kernel: stride 1 along W */
            continue;
        /* squeeze-and-excitation on half the cases: the scale on pointwise, the means on depthwise */
        const int se = (int)(rnd() % 2), pointwise = c.G == 1 && c.k[0] == 1 && c.k[1] == 1 && c.s[0] == 1 &&
                                                     c.s[1] == 1 && !c.pre[0] && !c.pre[1] && !c.post[0] && !c.post[1];
        g_nchwc_scale = se && pointwise;
        g_nchwc_mean = se && !pointwise;
        stop = tally_case(conv_run_case(k, &c, combo), &combo, &done);
    }
    g_nchwc_in = g_nchwc_out = g_nchwc_scale = g_nchwc_mean = 0;
}

/* nchwc_conv.avx512 applies to pointwise layers and to undilated depthwise ones of stride 1 along W with an odd tap
 * count up to 7 (x86/nchwc_dw512.c), not to other depthwise ones; nchwc_conv.avx2 to all of them, dilated up to 2;
 * neither to dilation 3. */
static void test_nchwc_wide_applies(void)
{
    static const int64_t cases[][6] = {/* k, stride H, stride W, depthwise, avx512 applies, dilation H / W */
                                       {1, 1, 1, 0, 1, 11}, {3, 1, 1, 1, 1, 11}, {5, 2, 1, 1, 1, 11},
                                       {7, 1, 1, 1, 1, 11}, {3, 1, 2, 1, 0, 11}, {5, 2, 2, 1, 0, 11},
                                       {1, 1, 1, 1, 1, 11}, {5, 1, 1, 1, 0, 22}, {3, 1, 1, 1, 0, 21},
                                       {3, 1, 1, 1, 0, 12}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t *f = cases[i], C = 24;
        conv_case c = conv2d(1, C, C, f[3] ? C : 1, 9, 11, f[0], f[2], f[0] / 2, f[0] / 2,
                             TRTL_PADMODE_EXPLICIT_ROUND_DOWN, 0);
        c.s[0] = f[1];
        c.d[0] = f[5] / 10;
        c.d[1] = f[5] % 10;
        trtl_dims x;
        const trtl_node nd = nchwc_probe(&c, TRTL_OP_NCHWC_CONV, &x);
        if (!trtl_kernel_nchwc_conv_avx2.applies(&nd, &x) ||
            trtl_kernel_nchwc_conv_avx512.applies(&nd, &x) != (int)f[4]) {
            fprintf(stderr, "FAIL nchwc applies: case %zu (k %lld, stride %lld x %lld, depthwise %lld)\n", i,
                    (long long)f[0], (long long)f[1], (long long)f[2], (long long)f[3]);
            g_failures++;
        }
    }
    for (int a = 0; a < 2; a++) { /* dilation 3 on either axis: no blocked kernel */
        conv_case c = conv2d(1, 16, 16, 16, 14, 14, 3, 1, 3, 3, TRTL_PADMODE_EXPLICIT_ROUND_DOWN, 0);
        c.d[a] = 3;
        trtl_dims x;
        const trtl_node nd = nchwc_probe(&c, TRTL_OP_NCHWC_CONV, &x);
        if (trtl_kernel_nchwc_conv_avx2.applies(&nd, &x) || trtl_kernel_nchwc_conv_avx512.applies(&nd, &x)) {
            fprintf(stderr, "FAIL nchwc applies: dilation 3 on axis %d taken\n", a);
            g_failures++;
        }
    }
}

static void test_nchwc(int ncases)
{
    test_nchwc_wide_applies();
    test_nchwc_kernel(&trtl_kernel_nchwc_conv_avx2, 0, ncases);
    test_nchwc_kernel(&trtl_kernel_nchwc_conv_avx512, 1, ncases);
}

/* nchwc_conv.avx2's dense path (x86/nchwc_dense.c: plain input -> blocked output, 1..16 input channels) vs the
 * reference: the zoo's stems at small maps (3 -> 16 / 24 / 32 3x3 s2 pad 1, 3 -> 32 s1, a 5x5 and a 7x7), K with
 * tails past 8 / 16 / 32 and past a 4-block group (K 40: groups of 3 + 2 blocks), odd sizes, stride 3 / 4,
 * asymmetric / SAME padding, every epilogue with and without a residual on the first shapes, a NaN weight and a
 * NaN input (lanes past K must stay act(0 + residual), not NaN), batches, pools of 1-3 threads (run_opt); then
 * random shapes (C 1..16, kernel 1..7, strides 1..4, padding 0..3).  applies() refuses the dense path with a
 * blocked input, a plain output or the squeeze-and-excitation operands. */
static void rand_conv2d_rest(conv_case *c, int kmax, int inmax, int smax, int dmax, int padmax);
static void rand_stem_conv(conv_case *c, int nmax, int inmax, int dmax);
static int conv_fixed_case(const trtl_kernel *k, conv_case *c, int i, int combo);

static void test_nchwc_dense(int ncases)
{
    const trtl_kernel *k = &trtl_kernel_nchwc_conv_avx2;
    if (!trtl_cpu_has(k->cpu_features)) {
        printf("test_kernels: skipping %s dense (CPU lacks AVX2/FMA)\n", k->name);
        return;
    }
    static const struct { int64_t N, C, K, H, W, kh, kw, s, pre, post; int mode, all; } sh[] = {
        {1, 3, 32, 23, 29, 3, 3, 2, 1, 1, 0, 1},  /* MobileNetV2 / MNASNet / EfficientNet stem, odd map */
        {1, 3, 16, 20, 17, 3, 3, 2, 1, 1, 0, 1},  /* MobileNetV3 stem */
        {2, 3, 24, 16, 18, 3, 3, 2, 1, 1, 0, 0},  /* ShuffleNetV2 stem, batch 2 */
        {1, 3, 32, 13, 27, 3, 3, 1, 1, 1, 0, 1},  /* stride 1 */
        {1, 5, 40, 15, 14, 5, 5, 2, 2, 2, 0, 0},  /* 5x5, K 40: groups of 3 + 2 blocks */
        {1, 3, 21, 19, 25, 7, 7, 2, 3, 3, 0, 0},  /* 7x7, K tail 5 */
        {3, 16, 9, 9, 11, 3, 2, 3, 0, 2, 0, 0},   /* C 16, stride 3, 3x2, asymmetric, K 9 */
        {1, 2, 33, 12, 35, 4, 4, 4, 0, 0, 0, 0},  /* patchify stride 4, K 33 (5 blocks) */
        {1, 1, 7, 8, 31, 3, 3, 2, 0, 0, 2, 0},    /* one channel, SAME_UPPER, K 7 */
        {2, 4, 64, 6, 10, 3, 3, 1, 2, 3, 0, 0},   /* padding past the taps: rows all in padding, K 64 */
    };
    int stop = 0;
    g_nchwc_in = 0;
    g_nchwc_out = 8;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0] && !stop; i++)
        for (int combo = (int)i; combo < (int)i + 2 * N_ACTS && !stop; combo += sh[i].all || combo == (int)i ? 1 : 5) {
            conv_case c = conv2d(sh[i].N, sh[i].C, sh[i].K, 1, sh[i].H, sh[i].W, sh[i].kh, sh[i].s, sh[i].pre,
                                 sh[i].post, sh[i].mode, 1);
            c.k[1] = sh[i].kw;
            if (!nchwc_case_applies(&c)) {
                fprintf(stderr, "FAIL %s: dense path does not apply to fixed case %zu\n", k->name, i);
                g_failures++;
                stop = 1;
                break;
            }
            stop = conv_fixed_case(k, &c, (int)i, combo) > 0;
        }
    for (int done = 0, tries = 0, combo = (int)(rnd() % 64); done < ncases && !stop && tries < 20 * ncases; tries++) {
        conv_case c = {0};
        rand_stem_conv(&c, 2, 21, 1);
        if (!nchwc_case_applies(&c))
            continue;
        stop = tally_case(conv_run_case(k, &c, combo), &combo, &done);
    }
    /* what the dense path does not take: a blocked input, a plain output, the SE operands */
    trtl_node nd = {0};
    int64_t kd[2] = {3, 3}, one[2] = {1, 1}, st2[2] = {2, 2}, xdv[4] = {1, 3, 16, 16};
    nd.op = TRTL_OP_NCHWC_CONV;
    nd.p.conv.num_output_maps = 16;
    nd.p.conv.num_groups = 1;
    nd.p.conv.kernel_size = trtl_dims_make(2, kd);
    nd.p.conv.stride = trtl_dims_make(2, st2);
    nd.p.conv.dilation = trtl_dims_make(2, one);
    nd.p.conv.pre_padding = nd.p.conv.post_padding = trtl_dims_make(2, one);
    nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, 16 * 3 * 9};
    nd.n_in = nd.n_out = 1;
    const trtl_dims xd = trtl_dims_make(4, xdv);
    const int32_t lay[4][2] = {{0, 8}, {8, 8}, {0, 0}, {8, 0}};
    for (int l = 0; l < 4; l++) {
        nd.p.nchwc.in_block = lay[l][0];
        nd.p.nchwc.out_block = lay[l][1];
        if (trtl_nchwc_conv_supported(&nd, &xd) != (l == 0)) {
            fprintf(stderr, "FAIL %s: dense path, in_block %d out_block %d: supported() says %d\n", k->name,
                    lay[l][0], lay[l][1], !(l == 0));
            g_failures++;
        }
    }
    nd.p.nchwc.in_block = 0;
    nd.p.nchwc.out_block = 8;
    nd.n_out = 2;
    if (trtl_nchwc_conv_supported(&nd, &xd)) {
        fprintf(stderr, "FAIL %s: dense path took the channel means output\n", k->name);
        g_failures++;
    }
    nd.n_out = 1;
    nd.n_in = 2;
    if (trtl_nchwc_conv_supported(&nd, &xd)) {
        fprintf(stderr, "FAIL %s: dense path took the input scale\n", k->name);
        g_failures++;
    }
    g_nchwc_in = g_nchwc_out = 0;
}

/* nchwc_conv.avx2's grouped path (x86/nchwc_grouped.c: groups of multiples of 8 input and output channels, any
 * layouts) vs the reference on every (input, output) layout: RegNetY's 3x3 layers (group width 8, stride 1 and 2,
 * odd maps, widths 7 / 14 / 29 that cut into equal tiles), group widths 16 / 24 and 40 output channels a group
 * (tile groups of 3 + 2 blocks), a 1x1 grouped layer (read in place), 5x5 / 7x7, stride 3, dilation 2, asymmetric
 * and SAME padding, rows too wide for the padded copy (read in place with edge pixels), the channel means on some;
 * every epilogue on the first shapes, a NaN weight and input; then random shapes; applies() refusing the input scale
 * and groups of 4 channels. */
static void test_nchwc_grouped(int ncases)
{
    const trtl_kernel *k = &trtl_kernel_nchwc_conv_avx2;
    if (!trtl_cpu_has(k->cpu_features)) {
        printf("test_kernels: skipping %s grouped (CPU lacks AVX2/FMA)\n", k->name);
        return;
    }
    static const struct { int64_t N, G, Cg, Kg, H, W, kh, kw, s, d, pre, post; int mode, all; } sh[] = {
        {1, 6, 8, 8, 23, 29, 3, 3, 2, 1, 1, 1, 0, 1},   /* RegNetY stage 1, stride 2, odd map */
        {1, 13, 8, 8, 14, 14, 3, 3, 1, 1, 1, 1, 0, 1},  /* stride 1, 14 wide: two tiles of 7 */
        {2, 26, 8, 8, 14, 13, 3, 3, 2, 1, 1, 1, 0, 0},  /* 14 -> 7 stride 2, batch 2 */
        {1, 5, 8, 8, 7, 7, 3, 3, 1, 1, 1, 1, 0, 1},     /* 7 x 7 */
        {1, 2, 16, 16, 9, 11, 3, 3, 1, 1, 1, 1, 0, 0},  /* group width 16: 2 blocks a tile */
        {1, 2, 24, 24, 8, 13, 3, 3, 2, 1, 1, 1, 0, 0},  /* 24: 3 blocks a tile */
        {1, 2, 8, 40, 10, 9, 3, 3, 1, 1, 1, 1, 0, 0},   /* 40 outputs a group: tile groups of 3 + 2 */
        {1, 4, 8, 16, 10, 10, 1, 1, 1, 1, 0, 0, 0, 0},  /* 1x1 grouped, every tap inside: read in place */
        {1, 3, 8, 8, 12, 17, 5, 5, 1, 1, 2, 2, 0, 0},   /* 5x5 */
        {2, 2, 16, 8, 15, 16, 7, 7, 2, 1, 3, 3, 0, 0},  /* 7x7 stride 2, Kg 8 < Cg 16 */
        {1, 2, 8, 8, 11, 19, 3, 3, 3, 1, 0, 2, 0, 0},   /* stride 3, asymmetric padding */
        {1, 3, 8, 8, 13, 15, 3, 3, 1, 2, 2, 2, 0, 0},   /* dilation 2 */
        {1, 2, 8, 16, 9, 10, 3, 3, 2, 1, 0, 0, 2, 0},   /* SAME_UPPER */
        {1, 2, 16, 16, 4, 300, 3, 3, 1, 1, 1, 1, 0, 0}, /* rows too wide for the padded copy: edge pixels */
        {1, 2, 8, 8, 3, 520, 3, 3, 2, 2, 2, 1, 0, 0},   /* likewise at stride 2, dilation 2 */
        {1, 2, 8, 8, 6, 6, 3, 3, 1, 1, 4, 4, 0, 0},     /* padding past the taps: rows all in padding */
        /* dense (one group, session 20: the YOLO-style detector's downsamples): odd map, batch 2, C 40 -> K 24 */
        {2, 1, 40, 24, 11, 13, 3, 3, 2, 1, 1, 1, 0, 1},
        {1, 1, 64, 72, 9, 10, 3, 3, 1, 1, 1, 1, 0, 0},  /* 9 blocks: tile groups 3 + 3 + 3, depth blocks 3 + 3 + 2 */
        {1, 1, 256, 16, 8, 7, 3, 3, 2, 1, 1, 1, 0, 0},  /* 32 input blocks: 11 depth blocks on padded copies */
        {1, 1, 64, 16, 5, 130, 3, 3, 2, 1, 1, 1, 0, 1}, /* rows read in place (edge pixels) in depth blocks */
        {1, 1, 24, 40, 7, 9, 3, 3, 2, 1, 1, 1, 0, 0},   /* C 24 (3 blocks, not a multiple of 16), K 40: 3 + 2 */
    };
    int stop = 0;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0] && !stop; i++)
        for (int combo = (int)i; combo < (int)i + 2 * N_ACTS && !stop; combo += sh[i].all || combo == (int)i ? 1 : 5) {
            conv_case c = conv2d(sh[i].N, sh[i].G * sh[i].Cg, sh[i].G * sh[i].Kg, sh[i].G, sh[i].H, sh[i].W, sh[i].kh,
                                 sh[i].s, sh[i].pre, sh[i].post, sh[i].mode, 1);
            c.k[1] = sh[i].kw;
            c.d[0] = c.d[1] = sh[i].d;
            const int lay = combo % 3 + 1;
            g_nchwc_in = lay & 1 ? 8 : 0;
            g_nchwc_out = lay & 2 ? 8 : 0;
            g_nchwc_mean = combo % 2;
            if (!nchwc_case_applies(&c)) {
                fprintf(stderr, "FAIL %s: grouped path does not apply to fixed case %zu\n", k->name, i);
                g_failures++;
                stop = 1;
                break;
            }
            stop = conv_fixed_case(k, &c, (int)i, combo) > 0;
        }
    for (int done = 0, tries = 0, combo = (int)(rnd() % 64); done < ncases && !stop && tries < 20 * ncases; tries++) {
        static const int64_t widths[] = {8, 16, 24};
        conv_case c = {0};
        rand_conv2d_rest(&c, 7, 21, 3, 2, 3);
        c.N = rint_in(1, 2);
        c.G = rint_in(1, 5);
        c.C = c.G * widths[rnd() % 3];
        c.K = c.G * (rnd() % 4 ? widths[rnd() % 3] : 40);
        const int lay = (int)(rnd() % 3) + 1;
        g_nchwc_in = lay & 1 ? 8 : 0;
        g_nchwc_out = lay & 2 ? 8 : 0;
        g_nchwc_mean = (int)(rnd() % 2);
        if (!nchwc_case_applies(&c) || !trtl_nchwc_conv_grouped(&(trtl_conv_params){.num_groups = (int32_t)c.G,
                                                                                   .num_output_maps = (int32_t)c.K,
                                                                                   .kernel_size = trtl_dims_make(2, c.k),
                                                                                   .stride = trtl_dims_make(2, c.s),
                                                                                   .dilation = trtl_dims_make(2, c.d),
                                                                                   .kernel = {TRTL_FLOAT, NULL,
                                                                                              c.K * (c.C / c.G) *
                                                                                                  c.k[0] * c.k[1]}},
                                                            c.C))
            continue;
        stop = tally_case(conv_run_case(k, &c, combo), &combo, &done);
    }
    /* nchwc_conv.avx512 leaves grouped nodes to nchwc_conv.avx2 (no AVX-512 grouped tiles), even at stride 1 along W */
    {
        conv_case c = conv2d(1, 48, 48, 6, 14, 14, 3, 1, 1, 1, 0, 1);
        trtl_dims xd;
        const trtl_node nd = nchwc_probe(&c, TRTL_OP_NCHWC_CONV, &xd);
        if (!trtl_kernel_nchwc_conv_avx2.applies(&nd, &xd) || trtl_kernel_nchwc_conv_avx512.applies(&nd, &xd)) {
            fprintf(stderr, "FAIL nchwc applies: a grouped node (avx2 %d, avx512 %d)\n",
                    trtl_kernel_nchwc_conv_avx2.applies(&nd, &xd), trtl_kernel_nchwc_conv_avx512.applies(&nd, &xd));
            g_failures++;
        }
    }
    /* not taken: the input scale (pointwise only), groups of 4 channels, 12 output channels a group */
    static const int64_t no[][3] = {{8, 8, 1}, {4, 8, 0}, {8, 12, 0}}; /* Cg, Kg, input scale */
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        conv_case c = conv2d(1, 2 * no[i][0], 2 * no[i][1], 2, 9, 9, 3, 1, 1, 1, 0, 1);
        trtl_dims xd;
        trtl_node nd = nchwc_probe(&c, TRTL_OP_NCHWC_CONV, &xd);
        nd.p.nchwc.in_block = nd.p.nchwc.out_block = 8;
        nd.n_in = no[i][2] ? 2 : 1;
        nd.n_out = 1;
        if (trtl_nchwc_conv_supported(&nd, &xd)) {
            fprintf(stderr, "FAIL %s: grouped path took case %zu (Cg %lld, Kg %lld, scale %lld)\n", k->name, i,
                    (long long)no[i][0], (long long)no[i][1], (long long)no[i][2]);
            g_failures++;
        }
    }
    g_nchwc_in = g_nchwc_out = g_nchwc_mean = 0;
}

/* ---- resize (x86/resize_tables.c) ------------------------------------------------------------------- */

extern const trtl_kernel trtl_kernel_resize_tables;

/* One resize of x (rank r, dims xd) to yd with the given modes; scales (nb_scales = r) or the shape.
 * Returns 1 on failure. */
static int resize_case(int r, const int64_t *xd, const int64_t *yd, int mode, int coord, int sel, int round,
                       const float *scales, float cubic, int excl, int nan)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_RESIZE;
    nd.name = "resize";
    nd.epi = no_epilogue();
    trtl_resize_params *p = &nd.p.resize;
    p->resize_mode = mode;
    p->coordinate_transformation = coord;
    p->selector_for_single_pixel = sel;
    p->nearest_rounding = round;
    p->cubic_coeff = cubic;
    p->exclude_outside = excl;
    if (scales) {
        p->nb_scales = r;
        for (int i = 0; i < r; i++)
            p->scales[i] = scales[i];
    } else {
        p->shape = trtl_dims_make(r, yd);
    }
    trtl_dims xdims = trtl_dims_make(r, xd), ydims = trtl_dims_make(r, yd);
    int64_t nx = trtl_volume(&xdims);
    float *x = rand_buf(nx);
    if (nan) /* nan > 1: 2 * nan specials, so that some sit at taps of weight 0 (which must multiply too) */
        for (int t = 0; t < (nan > 1 ? 2 * nan : 3) && nx > 0; t++)
            x[rnd() % (uint32_t)nx] = t % 3 == 0 ? NAN : (t % 3 == 1 ? INFINITY : -INFINITY);
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    nd.n_in = nd.n_out = 1;
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "resize x%s -> y%s mode=%d coord=%d sel=%d round=%d scales=%s (%g %g) cubic=%g excl=%d nan=%d",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), mode, coord, sel, round,
             scales ? "yes" : "no", scales ? scales[r - 2 >= 0 ? r - 2 : 0] : 0.0, scales ? scales[r - 1] : 0.0,
             cubic, excl, nan);
    trtl_status st;
    float *want = ref_output(trtl_ref_resize, &nd, in, &ydims, &st);
    int res;
    if (!want) {
        fprintf(stderr, "FAIL reference resize [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        res = 1;
    } else {
        res = run_opt(&trtl_kernel_resize_tables, &nd, in, &ydims, want);
    }
    free(want);
    free(x);
    return res;
}

static void test_resize(int ncases)
{
    static const float facs[] = {2.0f, 4.0f, 0.5f, 1.5f, 0.6f, 3.0f, 1.0f, 0.75f, 2.5f, 1.25f};
    const uint32_t masks[3] = {~0u, ~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI), 0u};
    /* the issue's shapes: nearest 2x, bilinear 4x half-pixel */
    for (int pass = 0; pass < 3; pass++) {
        trtl_cpu_set_mask(masks[pass]);
        int64_t xd[4] = {1, 32, 16, 16}, yd[4] = {1, 32, 32, 32}, yd4[4] = {1, 32, 64, 64};
        float sc2[4] = {1, 1, 2, 2};
        if (resize_case(4, xd, yd, TRTL_RESIZE_NEAREST, TRTL_COORD_ASYMMETRIC, 0, TRTL_ROUND_FLOOR, sc2, -0.75f, 0, 0) ||
            resize_case(4, xd, yd4, TRTL_RESIZE_LINEAR, TRTL_COORD_HALF_PIXEL, 0, TRTL_ROUND_FLOOR, NULL, -0.75f, 0, 0))
            break;
        /* NaN / Inf at taps of weight 0 (align-corners 5 -> 9 hits every input exactly), on an unchanged axis
         * (whose filler taps must not turn an Inf into NaN) and at rank 1 (no H axis) */
        int bad = 0;
        for (int m = TRTL_RESIZE_LINEAR; m <= TRTL_RESIZE_CUBIC && !bad; m++)
            for (int c = 0; c < 3 && !bad; c++) {
                int64_t x5[4] = {1, 2, 5, 5}, y9[4] = {1, 2, 9, 9}, yh[4] = {1, 2, 9, 5}, yw[4] = {1, 2, 5, 9};
                int64_t x1[1] = {5}, y1[1] = {9}, xw[4] = {1, 1, 3, 20}, yww[4] = {1, 1, 6, 40};
                bad = resize_case(4, x5, y9, m, c, 0, TRTL_ROUND_FLOOR, NULL, -0.75f, c == 1, 3) ||
                      resize_case(4, x5, yh, m, c, 0, TRTL_ROUND_FLOOR, NULL, -0.75f, 0, 4) ||
                      resize_case(4, x5, yw, m, c, 0, TRTL_ROUND_FLOOR, NULL, -0.5f, 1, 4) ||
                      resize_case(1, x1, y1, m, c, 0, TRTL_ROUND_FLOOR, NULL, -0.75f, 0, 1 + c) ||
                      resize_case(4, xw, yww, m, c, 0, TRTL_ROUND_FLOOR, NULL, -0.75f, c == 2, 3);
            }
        if (bad)
            break;
        int stop = 0;
        for (int done = 0; done < (pass == 0 ? ncases : ncases / 3) && !stop; done++) {
            int r = (int)rint_in(1, 5);
            int64_t xd2[5], yd2[5];
            float sc[5];
            int use_scales = (int)(rnd() % 2), mode = (int)(rnd() % 3);
            /* LINEAR / CUBIC mostly change only the last two axes (the kernel's own path) */
            int lead_fixed = mode != TRTL_RESIZE_NEAREST && rnd() % 4 != 0;
            for (int i = 0; i < r; i++) {
                xd2[i] = rint_in(1, i >= r - 2 ? 19 : 3);
                if (lead_fixed && i < r - 2) {
                    sc[i] = 1.0f;
                    yd2[i] = xd2[i];
                } else {
                    sc[i] = facs[rnd() % 10];
                    yd2[i] = (int64_t)floor((double)xd2[i] * (double)sc[i]);
                    if (yd2[i] < 1) {
                        yd2[i] = 1;
                        if (use_scales)
                            sc[i] = 1.0f / (float)xd2[i];
                        yd2[i] = (int64_t)floor((double)xd2[i] * (double)sc[i]);
                        if (yd2[i] < 1) {
                            sc[i] = 1.0f;
                            yd2[i] = xd2[i];
                        }
                    }
                }
            }
            if (rnd() % 8 == 0) { /* a wide row: vector blocks and the 2x replication */
                xd2[r - 1] = rint_in(20, 70);
                sc[r - 1] = 2.0f;
                yd2[r - 1] = 2 * xd2[r - 1];
            }
            stop = resize_case(r, xd2, yd2, mode, (int)(rnd() % 3), (int)(rnd() % 2), (int)(rnd() % 4),
                               use_scales ? sc : NULL, rnd() % 2 ? -0.75f : -0.5f, (int)(rnd() % 2),
                               rnd() % 4 == 0 ? (int)rint_in(1, 3) : 0);
        }
        if (stop)
            break;
    }
    trtl_cpu_set_mask(~0u);
}

/* ---- pointwise kernels (elementwise / unary / activation / scale .simd) and vmath.h ----------- */

/* Values that exercise every branch of the vector math: small, moderate and huge magnitudes,
 * the exp overflow / denormal thresholds, denormals, signed zeros, +-Inf and NaN. */
static float pw_value(void)
{
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 1.17549435e-38f,
                                    88.72f, 88.73f, -87.33f, -103.9f, -104.5f, 0.5f, -0.5f, 0.49999997f,
                                    20.0f, 20.5f, 9.0f, -9.0f, 1.0f, -1.0f, 3e38f, -3e38f};
    uint32_t k = rnd() % 8;
    if (k == 0)
        return special[rnd() % (sizeof special / sizeof special[0])];
    if (k <= 2) /* log-uniform magnitude 1e-30 .. 1e4, either sign */
        return (rnd() & 1 ? -1.0f : 1.0f) * powf(10.0f, -30.0f + 34.0f * (rfloat() + 1.0f) * 0.5f);
    if (k <= 4)
        return 12.0f * rfloat();
    if (k == 5)
        return 120.0f * rfloat();
    return 2.0f * rfloat();
}

static float *pw_buf(int64_t n)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = pw_value();
    return p;
}

/* Accuracy of the vector math against double libm: relative error at most 1e-6 (about 8 ulp;
 * 1e-37 absolute for results that underflow), NaN exactly where libm gives NaN, the same
 * infinities.  fn(kind, x): 0 exp, 1 log, 2 erf, 3 tanh, 4 sigmoid, 5 silu, 6 mish, 7 GELU (erf),
 * 8 GELU (tanh). */
static double pw_truth(int kind, double x)
{
    switch (kind) {
    case 0: return exp(x);
    case 1: return log(x);
    case 2: return erf(x);
    case 3: return tanh(x);
    case 4: return 1.0 / (1.0 + exp(-x));
    case 5: return x / (1.0 + exp(-x));
    case 7: return 0.5 * x * erfc(-x / sqrt(2.0));
    case 8: return x / (1.0 + exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)));
    default: {
        double sp = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
        return x * tanh(sp);
    }
    }
}

static void pw_vm_kind(int kind, const float *x, float *y, int64_t n, int isa)
{
    static const int32_t un[] = {TRTL_UN_EXP, TRTL_UN_LOG, TRTL_UN_ERF};
    static const int32_t act[] = {TRTL_ACT_TANH,      TRTL_ACT_SIGMOID,  TRTL_ACT_SILU,
                                  TRTL_ACT_MISH,      TRTL_ACT_GELU_ERF, TRTL_ACT_GELU_TANH};
#ifdef TRTL_VM_HAVE_X86
    if (isa == 2) {
        if (kind < 3)
            trtl_vm_unary_avx512(un[kind], x, y, n);
        else
            trtl_vm_act_avx512(act[kind - 3], 0.0f, 0.0f, x, y, n);
        return;
    }
    if (isa == 1) {
        if (kind < 3)
            trtl_vm_unary_avx2(un[kind], x, y, n);
        else
            trtl_vm_act_avx2(act[kind - 3], 0.0f, 0.0f, x, y, n);
        return;
    }
#endif
    (void)isa;
    if (kind < 3)
        trtl_vm_unary(un[kind], x, y, n);
    else
        trtl_vm_act(act[kind - 3], 0.0f, 0.0f, x, y, n);
}

static void test_vmath_accuracy(void)
{
    static const char *const names[] = {"exp", "log", "erf", "tanh", "sigmoid", "silu", "mish", "gelu_erf", "gelu_tanh"};
    enum { N = 200003 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *y13 = malloc(N * sizeof(float));
    for (int64_t i = 0; i < N; i++)
        x[i] = pw_value();
    for (int isa = 1; isa <= 2; isa++) {
        uint32_t need = isa == 2 ? (TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA) : (TRTL_CPU_AVX2 | TRTL_CPU_FMA);
        if (!trtl_cpu_has(need))
            continue;
        for (int kind = 0; kind < 9; kind++) {
            pw_vm_kind(kind, x, y, N, isa);
            /* spans of 13 run the one-vector loop and the masked tail only (GELU's long spans interleave
             * several vectors step by step): the same bits */
            for (int64_t i = 0; i < N; i += 13)
                pw_vm_kind(kind, x + i, y13 + i, N - i < 13 ? N - i : 13, isa);
            if (memcmp(y, y13, N * sizeof(float))) {
                fprintf(stderr, "FAIL vmath %s (%s): a long span differs from spans of 13\n", names[kind],
                        isa == 2 ? "avx512" : "avx2");
                g_failures++;
            }
            double worst = 0.0;
            int64_t at = -1;
            for (int64_t i = 0; i < N; i++) {
                double t = pw_truth(kind, (double)x[i]), g = y[i];
                int ok;
                if (isnan(t))
                    ok = isnan(g);
                else if (isinf(t) || fabs(t) > 3.4028234663852886e38)
                    ok = g == (float)t || (isinf(g) && (g > 0) == (t > 0));
                else {
                    double err = fabs(g - t);
                    /* GELU's tails: rounding x / sqrt(2) (or u) to float alone moves erfc / sigmoid by
                     * about x^2 ulp there, whatever the kernel does after it */
                    double rel = kind >= 7 ? 1e-6 * (1.0 + (double)x[i] * x[i]) : 1e-6;
                    ok = err <= rel * fabs(t) + 1e-37;
                    if (fabs(t) > 1e-30 && kind < 7 && err / fabs(t) > worst) {
                        worst = err / fabs(t);
                        at = i;
                    }
                }
                if (!ok) {
                    fprintf(stderr, "FAIL vmath %s (%s): x = %.9g gives %.9g, libm %.9g\n", names[kind],
                            isa == 2 ? "avx512" : "avx2", x[i], y[i], t);
                    g_failures++;
                    break;
                }
            }
            if (at >= 0 && worst > 5e-7)
                printf("test_kernels: vmath %s (%s) worst relative error %.3g at x = %.9g\n", names[kind],
                       isa == 2 ? "avx512" : "avx2", worst, x[at]);
            g_cases++;
        }
    }
    free(x);
    free(y);
    free(y13);
}

/* trtl_vm_exp_sum (attention's softmax rows): x = exp(x - shift) with results below FLT_MIN flushed to 0, and their
 * sum, against double libm on rows across the 8-vector interleaved body and the tails (lengths 1..300), with -inf,
 * NaN and scores far below the maximum (denormal exps); each variant this CPU has, and the dispatcher (portable in
 * the TRTL_CPU_MASK=0 run). */
static void test_vmath_exp_sum(void)
{
    static const int64_t lens[] = {1, 7, 8, 9, 49, 63, 64, 65, 128, 129, 197, 300};
    float x[300], y[300];
    for (int variant = 0; variant < 3; variant++) {
#ifdef TRTL_VM_HAVE_X86
        if ((variant == 1 && !trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA)) ||
            (variant == 2 && !trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA)))
            continue;
#else
        if (variant)
            continue;
#endif
        for (int c = 0; c < 40; c++) {
            int64_t n = c < 12 ? lens[c] : rint_in(1, 300);
            int kind = c % 4; /* 0 plain, 1 with -inf and far-below values, 2 with a NaN, 3 all -inf */
            float mx = -INFINITY;
            for (int64_t i = 0; i < n; i++) {
                x[i] = kind == 3 ? -INFINITY : 12.0f * rfloat();
                if (kind == 1 && rnd() % 5 == 0)
                    x[i] = rnd() % 2 ? -INFINITY : -95.0f + rfloat();
                mx = x[i] > mx ? x[i] : mx;
            }
            if (kind == 2)
                x[rint_in(0, n - 1)] = NAN;
            memcpy(y, x, sizeof(float) * (size_t)n);
            float got;
#ifdef TRTL_VM_HAVE_X86
            got = variant == 1   ? trtl_vm_exp_sum_avx512(y, n, mx)
                  : variant == 2 ? trtl_vm_exp_sum_avx2(y, n, mx)
                                 : trtl_vm_exp_sum(y, n, mx);
#else
            got = trtl_vm_exp_sum(y, n, mx);
#endif
            double sum = 0.0;
            int bad = 0;
            for (int64_t i = 0; i < n && !bad; i++) {
                double t = exp((double)(x[i] - mx));
                t = t < FLT_MIN ? 0.0 : t; /* false for NaN */
                sum += t;
                bad = isnan(t) ? !isnan(y[i]) : !(fabs((double)y[i] - t) <= 1e-6 * t);
                if (bad)
                    fprintf(stderr, "FAIL vmath exp_sum (variant %d, n %lld): x[%lld] = %.9g, shift %.9g gives %.9g, "
                            "libm %.9g\n", variant, (long long)n, (long long)i, x[i], mx, y[i], t);
            }
            if (!bad && (isnan(sum) ? !isnan(got) : !(fabs((double)got - sum) <= 4e-6 * sum))) {
                fprintf(stderr, "FAIL vmath exp_sum (variant %d, n %lld, kind %d): sum %.9g, libm %.9g\n", variant,
                        (long long)n, kind, got, sum);
                bad = 1;
            }
            g_failures += bad;
            g_cases++;
        }
    }
}

static trtl_dims pw_rand_dims(int64_t max_total)
{
    trtl_dims d;
    int64_t total;
    do {
        d.nb_dims = (int)rint_in(1, 4);
        total = 1;
        for (int i = 0; i < d.nb_dims; i++) {
            d.d[i] = rint_in(1, rnd() % 4 == 0 ? 70 : 9);
            total *= d.d[i];
        }
    } while (total > max_total);
    return d;
}

/* One single-input case: kernel k vs the reference on node nd with input dims d. */
static int pw_unary_case(const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, trtl_dims d)
{
    int64_t n = trtl_volume(&d);
    trtl_tensor_view in = {pw_buf(n), d, TRTL_FLOAT};
    trtl_status st;
    float *want = ref_output(ref, nd, &in, &d, &st);
    int bad = 1;
    if (!want) {
        fprintf(stderr, "FAIL %s [%s]: reference: %s\n", k->name, g_desc, trtl_last_error());
        g_failures++;
    } else {
        bad = run_opt(k, nd, &in, &d, want);
    }
    free(want);
    free(in.data);
    return bad;
}

/* TRTL_ACT_QGRID's vector forms -- trtl_act8 / trtl_act16 (the kernels' epilogues) and trtl_vm_act_avx2 / _avx512
 * (activation steps) divide by one Markstein step from the reciprocal -- against the scalar reference (a division),
 * bit for bit, over scales across trtl_act_qgrid_scale_ok's [2^-100, 2^100] (any mantissa, short mantissas, all-ones
 * mantissas) and values at, next to and between the ties (k + 0.5) * scale, beyond the codes' bounds, NaN, +-Inf,
 * +-0 and denormals. */
__attribute__((target("avx2,fma"))) static void qgrid_act8(float a, float b, const float *v, float *y)
{
    for (int k = 0; k < 16; k += 8)
        _mm256_storeu_ps(y + k, trtl_act8(_mm256_loadu_ps(v + k), TRTL_ACT_QGRID, _mm256_set1_ps(a), _mm256_set1_ps(b)));
}
__attribute__((target("avx512f"))) static void qgrid_act16(float a, float b, const float *v, float *y)
{
    _mm512_storeu_ps(y, trtl_act16(_mm512_loadu_ps(v), TRTL_ACT_QGRID, _mm512_set1_ps(a), _mm512_set1_ps(b)));
}
static void test_qgrid_exact(int ncases)
{
    const int avx2 = trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA), avx512 = trtl_cpu_has(TRTL_CPU_AVX512F);
    int fails = 0;
    for (int i = 0; i < ncases && fails < 5; i++) {
        const int mode = i % 4;
        float a = mode == 0   ? ldexpf(1.0f + (float)rnd() / 4294967296.0f, (int)rint_in(-100, 99))
                  : mode == 1 ? ldexpf((float)rint_in(1, 255) / 128.0f, (int)rint_in(-30, 30))
                  : mode == 2 ? ldexpf(2.0f - ldexpf(1.0f, -(int)rint_in(1, 24)), (int)rint_in(-101, 99))
                              : (float)rint_in(1, 1000) * 1e-4f;
        if (i < 4) /* the range's ends */
            a = i == 0 ? 0x1p-100f : i == 1 ? 0x1p100f : i == 2 ? 0x1.fffffep99f : 0x1.000002p-100f;
        if (!trtl_act_qgrid_scale_ok(a))
            continue;
        const int32_t lo = (int32_t)rint_in(-512, 0), hi = lo + (int32_t)rint_in(0, 511 - lo);
        const float b = trtl_act_qgrid_beta(lo, hi);
        float v[16], ref[16], y[16];
        for (int k = 0; k < 16; k++) {
            const float t = (float)(rint_in(-600, 600)) + 0.5f;
            switch (rint_in(0, 5)) {
            case 0: v[k] = t * a; break;
            case 1: v[k] = nextafterf(t * a, (rnd() & 1) ? INFINITY : -INFINITY); break;
            case 2: v[k] = ((float)rnd() / 4294967296.0f * 1200.0f - 600.0f) * a; break;
            case 3: {
                static const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, -1e-45f, FLT_MAX, -FLT_MAX};
                v[k] = sp[rnd() % 9];
                break;
            }
            case 4: v[k] = (float)rint_in(-3, 3) * 0.25f * a; break; /* small codes, +-0.25 / 0.5 / 0.75 */
            default: v[k] = ldexpf((float)rnd() / 4294967296.0f, (int)rint_in(-149, 127)) * ((rnd() & 1) ? 1 : -1);
            }
            ref[k] = trtl_activation_eval(TRTL_ACT_QGRID, a, b, v[k]);
        }
        for (int path = 0; path < 4; path++) {
            if ((path == 0 || path == 2) ? !avx2 : !avx512)
                continue;
            if (path == 0)
                qgrid_act8(a, b, v, y);
            else if (path == 1)
                qgrid_act16(a, b, v, y);
            else if (path == 2)
                trtl_vm_act_avx2(TRTL_ACT_QGRID, a, b, v, y, 16);
            else
                trtl_vm_act_avx512(TRTL_ACT_QGRID, a, b, v, y, 16);
            for (int k = 0; k < 16; k++)
                if (memcmp(&y[k], &ref[k], sizeof(float))) {
                    static const char *names[] = {"trtl_act8", "trtl_act16", "vm_act_avx2", "vm_act_avx512"};
                    fprintf(stderr, "FAIL QGRID %s: scale %a, bounds [%d, %d], x %a: %a, reference %a\n", names[path],
                            (double)a, (int)lo, (int)hi, (double)v[k], (double)y[k], (double)ref[k]);
                    g_failures++;
                    fails++;
                    break;
                }
        }
    }
}

static void test_activation_simd(int ncases)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_ACTIVATION;
    nd.name = "act";
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = nd.n_out = 1;
    for (int i = 0; i < ncases; i++) {
        static const int32_t internal[] = {TRTL_ACT_SILU, TRTL_ACT_HARD_SWISH, TRTL_ACT_MISH, TRTL_ACT_QGRID};
        int32_t act = i % (N_ACTS + 3) < N_ACTS - 1 ? g_acts[1 + i % (N_ACTS + 3)] : internal[i % (N_ACTS + 3) - (N_ACTS - 1)];
        trtl_epilogue e = rand_epi(i); /* alpha / beta as the epilogue tests draw them */
        nd.p.act.type = act;
        nd.p.act.alpha = act == TRTL_ACT_CLIP ? e.alpha : (act == TRTL_ACT_HARD_SWISH ? 1.0f / 6.0f : e.alpha);
        nd.p.act.beta = act == TRTL_ACT_HARD_SWISH ? 0.5f : e.beta;
        if (act == TRTL_ACT_CLIP)
            nd.p.act.beta = e.beta;
        if (act == TRTL_ACT_QGRID) { /* a fake quantization: scale, code bounds (exact: the vector path must match) */
            int32_t lo = (int32_t)rint_in(-280, 19), hi = lo + (int32_t)rint_in(0, 255);
            nd.p.act.alpha = 0.001f + (float)rint_in(0, 999) * 0.0007f;
            nd.p.act.beta = trtl_act_qgrid_beta(lo, hi);
        }
        trtl_dims d = i < 8 ? (trtl_dims){1, {(int64_t)(i < 4 ? 1 + i * 5 : 40000 + i * 7)}} : pw_rand_dims(60000);
        snprintf(g_desc, sizeof g_desc, "activation %s alpha %g beta %g, %lld elements", act_name(act),
                 (double)nd.p.act.alpha, (double)nd.p.act.beta, (long long)trtl_volume(&d));
        if (pw_unary_case(&trtl_kernel_activation_simd, trtl_ref_activation, &nd, d))
            return;
    }
}

static void test_unary_simd(int ncases)
{
    static const int32_t ops[] = {TRTL_UN_EXP, TRTL_UN_LOG, TRTL_UN_SQRT, TRTL_UN_RECIP, TRTL_UN_ABS, TRTL_UN_NEG,
                                  TRTL_UN_CEIL, TRTL_UN_FLOOR, TRTL_UN_ROUND, TRTL_UN_ERF, TRTL_UN_SIGN};
    trtl_node nd = {0};
    nd.op = TRTL_OP_UNARY;
    nd.name = "unary";
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = nd.n_out = 1;
    for (int32_t op = 0; op < TRTL_UN_COUNT; op++) { /* applies() takes exactly the vectorized ops */
        nd.p.unary.op = op;
        int want = 0;
        for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++)
            want |= ops[j] == op;
        trtl_dims d = {1, {5}};
        if (trtl_kernel_unary_simd.applies(&nd, &d) != want) {
            fprintf(stderr, "FAIL unary.simd applies(op %d) != %d\n", (int)op, want);
            g_failures++;
        }
    }
    for (int i = 0; i < ncases; i++) {
        nd.p.unary.op = ops[i % (int)(sizeof ops / sizeof ops[0])];
        trtl_dims d = i < 11 ? (trtl_dims){1, {(int64_t)(1 + i * 3)}} : pw_rand_dims(60000);
        snprintf(g_desc, sizeof g_desc, "unary op %d, %lld elements", (int)nd.p.unary.op, (long long)trtl_volume(&d));
        if (pw_unary_case(&trtl_kernel_unary_simd, trtl_ref_unary, &nd, d))
            return;
    }
}

/* a op b with the given input dims (equal rank); the output dims are the broadcast. */
static int ew_case(int32_t op, trtl_dims da, trtl_dims db)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_ELEMENTWISE;
    nd.name = "ew";
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = 2;
    nd.n_out = 1;
    nd.p.ew.op = op;
    if (rnd() % 2) { /* a fused activation (fuse_epilogue), applied by the kernel */
        nd.epi = rand_epi((int)rint_in(0, N_ACTS - 1));
        nd.epi.has_residual = 0;
        if (rnd() % 4 == 0)
            nd.epi.act = TRTL_ACT_SILU + (int32_t)(rnd() % 3);
    }
    trtl_dims dy = da;
    for (int i = 0; i < da.nb_dims; i++)
        dy.d[i] = da.d[i] == 1 ? db.d[i] : da.d[i];
    trtl_tensor_view in[2] = {{pw_buf(trtl_volume(&da)), da, TRTL_FLOAT}, {pw_buf(trtl_volume(&db)), db, TRTL_FLOAT}};
    char sa[64], sb[64];
    snprintf(g_desc, sizeof g_desc, "elementwise op %d, %s x %s, epilogue %s", (int)op,
             trtl_dims_str(&da, sa, sizeof sa), trtl_dims_str(&db, sb, sizeof sb), act_name(nd.epi.act));
    trtl_status st;
    float *want = ref_output(trtl_ref_elementwise, &nd, in, &dy, &st);
    int bad = 1;
    trtl_dims ind[2] = {da, db};
    if (!want) {
        fprintf(stderr, "FAIL elementwise.simd [%s]: reference: %s\n", g_desc, trtl_last_error());
        g_failures++;
    } else if (trtl_kernel_elementwise_simd.applies(&nd, ind)) {
        bad = run_opt(&trtl_kernel_elementwise_simd, &nd, in, &dy, want);
    } else { /* a broadcast of more than three levels: run() falls back to the reference */
        int64_t n = trtl_volume(&dy);
        trtl_tensor_view out = {nan_buf(n), dy, TRTL_FLOAT};
        trtl_kernel_args a = {&nd, in, &out, NULL, 0, NULL, g_pools[1], NULL};
        bad = trtl_kernel_elementwise_simd.run(&a) != TRTL_OK || compare("elementwise.simd", out.data, want, n, 1);
        free(out.data);
        g_cases++;
    }
    free(want);
    free(in[0].data);
    free(in[1].data);
    return bad;
}

static void test_elementwise_simd(int ncases)
{
    static const int32_t ops[] = {TRTL_EW_SUM, TRTL_EW_PROD, TRTL_EW_MAX, TRTL_EW_MIN, TRTL_EW_SUB, TRTL_EW_DIV};
    enum { NOPS = 6 };
    /* the patterns of real models, sizes with tails, past the chunk and the grain */
    static const struct { int nb; int64_t a[4], b[4]; } fixed[] = {
        {4, {2, 37, 9, 11}, {2, 37, 9, 11}},  {4, {1, 96, 30, 31}, {1, 96, 1, 1}}, {4, {2, 5, 3, 3}, {1, 5, 1, 1}},
        {4, {1, 24, 1, 1}, {1, 24, 1, 1}},    {3, {4, 7, 77}, {1, 1, 77}},        {3, {2, 100, 768}, {1, 1, 768}},
        {2, {3, 1}, {1, 45}},                 {1, {100003}, {1}},                 {1, {1}, {9000}},
        {4, {1, 1, 1, 1}, {2, 3, 4, 5}},      {4, {2, 1, 4, 1}, {1, 3, 1, 5}},    {4, {1, 64, 1, 1}, {1, 64, 56, 56}},
        {2, {0, 5}, {1, 5}},
    };
    for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; f++)
        for (int o = 0; o < NOPS; o++) {
            trtl_dims da = trtl_dims_make(fixed[f].nb, fixed[f].a), db = trtl_dims_make(fixed[f].nb, fixed[f].b);
            if (ew_case(ops[o], da, db) || ew_case(ops[o], db, da))
                return;
        }
    for (int i = 0; i < ncases; i++) {
        trtl_dims d = pw_rand_dims(60000), da = d, db = d;
        for (int j = 0; j < d.nb_dims; j++) {
            uint32_t r = rnd() % 4;
            if (r == 1)
                da.d[j] = 1;
            else if (r == 2)
                db.d[j] = 1;
        }
        if (ew_case(ops[rnd() % NOPS], da, db))
            return;
    }
    trtl_node nd = {0};
    nd.p.ew.op = TRTL_EW_POW;
    nd.n_in = 2;
    trtl_dims ad[2] = {{1, {4}}, {1, {4}}};
    if (trtl_kernel_elementwise_simd.applies(&nd, ad)) {
        fprintf(stderr, "FAIL elementwise.simd applies() takes POW\n");
        g_failures++;
    }
}

static int scale_case(int mode, int axis, trtl_dims d, int has_scale, int has_shift)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_SCALE;
    nd.name = "scale";
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = nd.n_out = 1;
    trtl_scale_params *p = &nd.p.scale;
    p->mode = mode;
    p->channel_axis = axis;
    if (rnd() % 2) { /* a fused activation (fuse_epilogue), applied by the kernel */
        nd.epi = rand_epi((int)rint_in(0, N_ACTS - 1));
        nd.epi.has_residual = 0;
        if (rnd() % 4 == 0)
            nd.epi.act = TRTL_ACT_SILU + (int32_t)(rnd() % 3);
    }
    int64_t want = mode == TRTL_SCALE_UNIFORM ? 1
                   : mode == TRTL_SCALE_CHANNEL ? d.d[axis] : trtl_volume_range(&d, axis, d.nb_dims);
    float *sc = rand_buf(want), *sh = rand_buf(want);
    if (has_scale) {
        p->scale.values = sc;
        p->scale.count = want;
        p->scale.type = TRTL_FLOAT;
    }
    if (has_shift) {
        p->shift.values = sh;
        p->shift.count = want;
        p->shift.type = TRTL_FLOAT;
    }
    char s[64];
    snprintf(g_desc, sizeof g_desc, "scale mode %d axis %d %s scale %d shift %d epilogue %s", mode, axis,
             trtl_dims_str(&d, s, sizeof s), has_scale, has_shift, act_name(nd.epi.act));
    int bad = pw_unary_case(&trtl_kernel_scale_simd, trtl_ref_scale, &nd, d);
    free(sc);
    free(sh);
    return bad;
}

static void test_scale_simd(int ncases)
{
    static const int64_t fixed[][4] = {{1, 96, 30, 31}, {2, 3, 5, 7}, {1, 3, 1, 1}, {4, 9, 13, 1}};
    for (int f = 0; f < 4; f++)
        for (int mode = 0; mode < TRTL_SCALE_COUNT; mode++)
            for (int w = 1; w < 4; w++)
                if (scale_case(mode, 1, trtl_dims_make(4, fixed[f]), w & 1, w >> 1))
                    return;
    for (int i = 0; i < ncases; i++) {
        trtl_dims d = pw_rand_dims(60000);
        int w = (int)rint_in(1, 3);
        if (scale_case((int)(rnd() % TRTL_SCALE_COUNT), (int)rint_in(0, d.nb_dims - 1), d, w & 1, w >> 1))
            return;
    }
    trtl_node nd = {0};
    float two = 2.0f, one = 1.0f;
    nd.p.scale.power.type = TRTL_FLOAT;
    nd.p.scale.power.values = &two;
    nd.p.scale.power.count = 1;
    trtl_dims d = {1, {4}};
    if (trtl_kernel_scale_simd.applies(&nd, &d)) {
        fprintf(stderr, "FAIL scale.simd applies() takes a power\n");
        g_failures++;
    }
    nd.p.scale.power.values = &one; /* a power of ones is no power (batch-norm scripts) */
    if (!trtl_kernel_scale_simd.applies(&nd, &d)) {
        fprintf(stderr, "FAIL scale.simd applies() refuses a power of ones\n");
        g_failures++;
    }
}

/* Each pointwise kernel on the AVX-512 variant, then on the AVX2 one (the portable spans run in
 * the TRTL_CPU_MASK=0 pass of tests/test_kernels_c.py). */
static void test_pointwise(int ncases)
{
    double rtol = g_rtol, atol = g_atol;
    g_rtol = 2e-6;
    g_atol = 0.0;
    g_elementwise_tol = 1;
    test_vmath_accuracy();
    test_vmath_exp_sum();
    test_qgrid_exact(ncases * 400);
    for (int pass = 0; isa_pass(pass); pass++) {
        test_activation_simd(ncases + 60);
        test_unary_simd(ncases);
        test_elementwise_simd(ncases);
        test_scale_simd(ncases / 2);
        /* the internal codes in the fused epilogues of the convolution / fully-connected kernels */
        static const int32_t internal[] = {TRTL_ACT_SILU, TRTL_ACT_HARD_SWISH, TRTL_ACT_MISH};
        g_rtol = rtol;
        g_elementwise_tol = 0;
        for (int k = 0; k < 3; k++) {
            g_force_act = internal[k];
            if (trtl_cpu_has(trtl_kernel_conv_packed_gemm.cpu_features)) {
                test_conv_kernel(&trtl_kernel_conv_packed_gemm, 0, 6);
                test_fc_packed(4);
            }
            if (pass == 0) {
                test_conv_kernel(&trtl_kernel_conv_im2col_sgemm, 0, 4);
                /* random cases only: test_winograd's fixed shapes (~4 s a pass) vary shapes, not the activation */
                if (trtl_cpu_has(trtl_kernel_conv_winograd_f43.cpu_features)) {
                    wino_random(&trtl_kernel_conv_winograd_f43, 4, 0);
                    wino_random(&trtl_kernel_conv_winograd_f23, 4, 0);
                }
                if (trtl_cpu_has(trtl_kernel_conv_depthwise_avx2.cpu_features))
                    test_conv_kernel(&trtl_kernel_conv_depthwise_avx2, 1, 4);
            }
        }
        g_force_act = TRTL_ACT_NONE - 1;
        g_rtol = 2e-6;
        g_elementwise_tol = 1;
    }
    trtl_cpu_set_mask(~0u);
    g_rtol = rtol;
    g_atol = atol;
    g_elementwise_tol = 0;
}

/* ---- main ----------------------------------------------------------------------------------- */

/* ---- attention (x86/attention.c, internal op) ---------------------------------------------------- */

extern const trtl_kernel trtl_kernel_attention_tiled;

/* Q [B.., Sq, D], K [.., Sk, D] or K^T [.., D, Sk], V [.., Sk, Dv] over batch dims bd (each operand's
 * dim may be broadcast: bits of qb / kb / vb set -> that operand has 1 there); mask kinds: 0 none,
 * 1 [1.., 1, Sk] (key padding), 2 per batch [B.., 1, Sk], 3 causal [1.., Sq, Sk] with -inf above the
 * diagonal, 4 full [B.., Sq, Sk] with a fully masked row (NaN output, as the unfused graph gives);
 * special: NaN / +-Inf sprinkled into Q, K or V. */
static int attn_case(int nbd, const int64_t *bd, uint32_t qb, uint32_t kb, uint32_t vb, int64_t Sq, int64_t Sk,
                     int64_t D, int64_t Dv, int kt, int mask, int special)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_ATTENTION;
    nd.name = "attention";
    nd.epi = no_epilogue();
    nd.p.attn.scale = 1.0f / sqrtf((float)(D ? D : 1));
    nd.p.attn.k_transposed = kt;
    nd.p.attn.mask_mode = mask == 5 ? 2 : mask != 0;
    nd.p.attn.norm_op = TRTL_ATTN_NORM_SOFTMAX;
    nd.n_in = mask ? 4 : 3;
    nd.n_out = 1;
    int r = nbd + 2;
    int64_t q[TRTL_MAX_DIMS], k[TRTL_MAX_DIMS], v[TRTL_MAX_DIMS], m[TRTL_MAX_DIMS], y[TRTL_MAX_DIMS];
    for (int i = 0; i < nbd; i++) {
        q[i] = (qb >> i) & 1u ? 1 : bd[i];
        k[i] = (kb >> i) & 1u ? 1 : bd[i];
        v[i] = (vb >> i) & 1u ? 1 : bd[i];
        y[i] = q[i] > k[i] ? q[i] : k[i];
        y[i] = y[i] > v[i] ? y[i] : v[i];
        m[i] = mask == 2 || mask == 4 || (mask == 5 && i > 0) ? y[i] : 1;
    }
    if (mask == 5 && nbd > 0) /* shifted windows: the mask's dim 0 repeats along the scores' dim 0 */
        m[0] = y[0] % 3 == 0 && y[0] > 3 ? 3 : y[0] % 2 == 0 && y[0] > 2 ? 2 : 1;
    q[nbd] = Sq, q[nbd + 1] = D;
    k[nbd] = kt ? D : Sk, k[nbd + 1] = kt ? Sk : D;
    v[nbd] = Sk, v[nbd + 1] = Dv;
    y[nbd] = Sq, y[nbd + 1] = Dv;
    m[nbd] = mask >= 3 ? Sq : 1, m[nbd + 1] = Sk;
    trtl_dims qd = trtl_dims_make(r, q), kd = trtl_dims_make(r, k), vd = trtl_dims_make(r, v), md = trtl_dims_make(r, m), yd = trtl_dims_make(r, y);
    int64_t nq = trtl_volume(&qd), nk = trtl_volume(&kd), nv = trtl_volume(&vd), nm = trtl_volume(&md);
    float *Q = rand_buf(nq), *K = rand_buf(nk), *V = rand_buf(nv), *M = rand_buf(nm);
    for (int64_t i = 0; i < nq; i++)
        Q[i] *= 3.0f;
    for (int64_t i = 0; i < nm; i++)
        M[i] = mask == 3 ? (i % Sk > (i / Sk) % Sq ? -INFINITY : 0.0f) : M[i] * 4.0f;
    if (mask == 4 && nm >= Sk)
        for (int64_t i = 0; i < Sk; i++)
            M[(Sq / 2) * Sk + i] = -INFINITY;
    if (special)
        sprinkle(special == 1 ? Q : special == 2 ? K : V, special == 1 ? nq : special == 2 ? nk : nv, special);
    trtl_tensor_view in[4] = {{Q, qd, TRTL_FLOAT}, {K, kd, TRTL_FLOAT}, {V, vd, TRTL_FLOAT}, {M, md, TRTL_FLOAT}};
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX], s4[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "Q%s K%s V%s mask%d%s kt=%d special=%d features=0x%x",
             trtl_dims_str(&qd, s1, sizeof s1), trtl_dims_str(&kd, s2, sizeof s2), trtl_dims_str(&vd, s3, sizeof s3),
             mask, mask ? trtl_dims_str(&md, s4, sizeof s4) : "", kt, special, trtl_cpu_features());
    int res = ref_vs(&trtl_kernel_attention_tiled, trtl_ref_attention, &nd, in, &yd);
    free(Q);
    free(K);
    free(V);
    free(M);
    return res;
}

/* The IAttention layer's modes (network.add_attention): grouped-query heads (Hkv dividing Hq), causal upper
 * left / lower right, a BOOL or FLOAT mask of [1|B, 1|Hq, Sq, Sk], norm_op NONE, empty rows as zeros, NaN /
 * Inf in Q, K or V (special 1..3), sequence lengths across the 32-row tile. */
static int attn_layer_case(int64_t B, int64_t Hq, int64_t Hk, int64_t Sq, int64_t Sk, int64_t D, int causal,
                           int mask, int norm_none, int special)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_ATTENTION;
    nd.name = "attention_layer";
    nd.epi = no_epilogue();
    nd.p.attn.scale = 0.7f;
    nd.p.attn.mask_mode = mask != 0;
    nd.p.attn.norm_op = norm_none ? TRTL_ATTN_NORM_NONE : TRTL_ATTN_NORM_SOFTMAX;
    nd.p.attn.causal = causal != 0;
    nd.p.attn.causal_lower_right = causal == 2;
    nd.p.attn.empty_rows_zero = 1;
    nd.n_in = mask ? 4 : 3;
    nd.n_out = 1;
    int64_t q[4] = {B, Hq, Sq, D}, k[4] = {B, Hk, Sk, D}, v[4] = {B, Hk, Sk, D + 3}, y[4] = {B, Hq, Sq, D + 3};
    int64_t m[4] = {rnd() & 1 ? B : 1, rnd() & 1 ? Hq : 1, rnd() % 4 ? Sq : 1, Sk};
    trtl_dims qd = trtl_dims_make(4, q), kd = trtl_dims_make(4, k), vd = trtl_dims_make(4, v), md = trtl_dims_make(4, m), yd = trtl_dims_make(4, y);
    int64_t nq = trtl_volume(&qd), nk = trtl_volume(&kd), nv = trtl_volume(&vd), nm = trtl_volume(&md);
    float *Q = rand_buf(nq), *K = rand_buf(nk), *V = rand_buf(nv), *M = rand_buf(nm);
    unsigned char *MB = malloc((size_t)(nm > 0 ? nm : 1));
    for (int64_t i = 0; i < nm; i++) {
        MB[i] = rnd() % 4 != 0;
        M[i] *= 3.0f;
    }
    if (nm >= Sk && Sq > 1)
        for (int64_t j = 0; j < Sk; j++) /* one row without a key */
            MB[j] = 0;
    if (special)
        sprinkle(special == 1 ? Q : special == 2 ? K : V, special == 1 ? nq : special == 2 ? nk : nv, special);
    trtl_tensor_view in[4] = {{Q, qd, TRTL_FLOAT}, {K, kd, TRTL_FLOAT}, {V, vd, TRTL_FLOAT},
                              {mask == 2 ? (void *)MB : (void *)M, md, mask == 2 ? TRTL_BOOL : TRTL_FLOAT}};
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "layer Q%s K%s mask%d%s causal=%d none=%d special=%d features=0x%x",
             trtl_dims_str(&qd, s1, sizeof s1), trtl_dims_str(&kd, s2, sizeof s2), mask,
             mask ? trtl_dims_str(&md, s3, sizeof s3) : "", causal, norm_none, special, trtl_cpu_features());
    int res = ref_vs(&trtl_kernel_attention_tiled, trtl_ref_attention, &nd, in, &yd);
    free(Q);
    free(K);
    free(V);
    free(M);
    free(MB);
    return res;
}

/* Transformer shapes (seq 1, 7, 64, 128, 197; heads 1, 3, 12; head dims 32, 64, 80) with every mask
 * kind and both K layouts, NaN/Inf, broadcast batch dims, then random shapes; on every ISA variant
 * this CPU has (TRTL_CPU_MASK=0 in the portable run). */
static void test_attention(int ncases)
{
    static const int64_t seqs[] = {1, 7, 64, 128, 197}, heads[] = {1, 3, 12}, hdims[] = {32, 64, 80};
    for (int pass = 0; isa_pass(pass); pass++) {
        for (int si = 0; si < 5; si++)
            for (int hi = 0; hi < 3; hi++) {
                int64_t S = seqs[si], H = heads[hi], D = hdims[(si + hi) % 3];
                int64_t bd[2] = {si % 2 ? 2 : 1, H};
                if (S * S * H > 200000 && hi > 1) /* keep the reference's time in bounds */
                    H = 3, bd[1] = 3;
                if (attn_case(2, bd, 0, 0, 0, S, S, D, D, (si + hi) % 2, (si + hi) % 5, 0))
                    goto out;
            }
        for (int mk = 0; mk < 5; mk++)
            for (int kt = 0; kt < 2; kt++)
                for (int sp = 0; sp < 4; sp++) {
                    int64_t bd[2] = {2, 3};
                    if (attn_case(2, bd, 0, 0, 0, 9, 13, 17, 20, kt, mk, sp))
                        goto out;
                }
        for (int kt = 0; kt < 2; kt++) {
            int64_t bd[2] = {6, 3}, bd2[2] = {4, 2};
            if (attn_case(2, bd, 0, 0, 0, 49, 49, 32, 32, kt, 5, 0) || attn_case(2, bd2, 0, 0, 0, 7, 9, 5, 6, kt, 5, 0))
                goto out;
        }
        {
            int64_t bd[2] = {3, 4};
            if (attn_case(2, bd, 1u, 2u, 0, 5, 33, 8, 40, 0, 2, 0) || /* broadcast Q / K batch dims */
                attn_case(2, bd, 2u, 1u, 3u, 16, 16, 16, 16, 1, 1, 0) || attn_case(0, bd, 0, 0, 0, 40, 3, 5, 7, 0, 3, 0) ||
                attn_case(1, bd, 0, 0, 0, 17, 0, 8, 8, 0, 0, 0) || /* no keys: zeros */
                attn_case(1, bd, 0, 0, 0, 65, 31, 0, 8, 1, 1, 0)) /* D = 0: uniform weights */
                goto out;
        }
        for (int c = 0; c < 3; c++)
            for (int mk = 0; mk < 3; mk++)
                for (int sp = 0; sp < 4; sp++)
                    if (attn_layer_case(2, 4, sp % 2 ? 2 : 4, 37 + 30 * (c == 2), 45 - 20 * (c == 2), 9, c, mk,
                                        sp == 3, sp))
                        goto out;
        for (int i = 0; i < ncases / 6; i++) {
            int64_t hk = rint_in(1, 3);
            if (attn_layer_case(rint_in(1, 2), hk * rint_in(1, 3), hk, rint_in(1, 75), rint_in(1, 75), rint_in(1, 40),
                                (int)rint_in(0, 2), (int)rint_in(0, 2), rnd() % 4 == 0, rnd() % 5 == 0 ? (int)rint_in(1, 3) : 0))
                goto out;
        }
        for (int i = 0; i < ncases / 3; i++) {
            int nbd = (int)rint_in(0, 3);
            int64_t bd[3];
            for (int d = 0; d < nbd; d++)
                bd[d] = rint_in(1, 4);
            if (attn_case(nbd, bd, (uint32_t)rnd() & 7u, (uint32_t)rnd() & 7u, rnd() % 3 ? 0 : (uint32_t)rnd() & 7u,
                          rint_in(1, 70), rint_in(1, 70), rint_in(1, 90), rint_in(1, 90), (int)(rnd() & 1),
                          (int)rint_in(0, 5), rnd() % 6 == 0 ? (int)rint_in(1, 3) : 0))
                goto out;
        }
    }
out:
    trtl_cpu_set_mask(~0u);
}

/* ---- qlinear.int8 (internal int8 conv / FC / matmul on kernels/qconv.h) vs qlinear.ref ---------- */

extern const trtl_kernel trtl_kernel_qlinear_int8, trtl_kernel_qlinear_amx_int8;
/* The fp32 tactics of int8 convolutions (x86/qlinear_fp32.c): the same quantized math on fp32 convolution kernels;
 * every one of the list (kernels/qlinear_fp32.h), so that a tactic added there is compared here. */
#define QF_EXTERN(id, inner, feat) extern const trtl_kernel trtl_kernel_qlinear_fp32_##id;
TRTL_QLINEAR_FP32_TACTICS(QF_EXTERN)
#undef QF_EXTERN
static const trtl_kernel *const qf_tactics[] = {
#define QF_ADDR(id, inner, feat) &trtl_kernel_qlinear_fp32_##id,
    TRTL_QLINEAR_FP32_TACTICS(QF_ADDR)
#undef QF_ADDR
};
#define N_QF_TACTICS ((int)(sizeof qf_tactics / sizeof qf_tactics[0]))

/* A tactic that can run nd on this CPU (the CPU's features and its applies()). */
static int qf_tactic_runs(const trtl_kernel *k, const trtl_node *nd, const trtl_tensor_view *in)
{
    trtl_dims d[2] = {in[0].dims, in[0].dims};
    return !(k->cpu_features & ~trtl_cpu_features()) && (!k->applies || k->applies(nd, d));
}

/* One random case: mode 0 conv (2-D), 1 FC, 2 matmul rows.  Returns 1 on failure. */
static int qlinear_case(int mode, int out_quant)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_QLINEAR;
    nd.name = "qlinear";
    nd.epi = no_epilogue();
    trtl_qlinear_params *q = &nd.p.qlin;
    q->mode = mode;
    int64_t N = rint_in(1, 3), C = rint_in(1, 40), K = rint_in(1, 37), G = 1, H = 1, W = 1, R = 1, S = 1;
    int64_t xd[4], yd[4];
    trtl_dims xdims, ydims;
    if (mode == TRTL_QL_CONV) {
        G = rint_in(0, 3) == 0 ? 2 : 1;
        C = G * rint_in(1, 12);
        K = G * rint_in(1, 12);
        if (rint_in(0, 2) == 0) /* depthwise (the fp32 tactics' blocks of 8 channels and a tail) */
            G = C = K = rint_in(2, 21);
        H = rint_in(3, 14);
        W = rint_in(3, 17);
        R = rint_in(1, 3);
        S = rint_in(1, 3);
        int64_t k[2] = {R, S}, st[2] = {rint_in(1, 2), rint_in(1, 2)}, dl[2] = {rint_in(1, 2), 1};
        int64_t pre[2] = {rint_in(0, 1), rint_in(0, 2)}, post[2] = {rint_in(0, 1), rint_in(0, 1)};
        q->conv.kernel_size = trtl_dims_make(2, k);
        q->conv.stride = trtl_dims_make(2, st);
        q->conv.dilation = trtl_dims_make(2, dl);
        q->conv.pre_padding = trtl_dims_make(2, pre);
        q->conv.post_padding = trtl_dims_make(2, post);
        q->conv.num_groups = (int32_t)G;
        q->conv.padding_mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
        int64_t oh, ow, a, b;
        if (trtl_spatial_out(H, dl[0] * (R - 1) + 1, st[0], pre[0], post[0], q->conv.padding_mode, 0, &oh, &a, &b) ||
            trtl_spatial_out(W, dl[1] * (S - 1) + 1, st[1], pre[1], post[1], q->conv.padding_mode, 0, &ow, &a, &b) ||
            oh < 1 || ow < 1)
            return 0;
        xd[0] = N, xd[1] = C, xd[2] = H, xd[3] = W;
        yd[0] = N, yd[1] = K, yd[2] = oh, yd[3] = ow;
        xdims = trtl_dims_make(4, xd);
        ydims = trtl_dims_make(4, yd);
    } else if (mode == TRTL_QL_FC) {
        H = rint_in(1, 3);
        xd[0] = N, xd[1] = C, xd[2] = H, xd[3] = 1;
        yd[0] = N, yd[1] = K, yd[2] = 1, yd[3] = 1;
        xdims = trtl_dims_make(4, xd);
        ydims = trtl_dims_make(4, yd);
        C *= H;
    } else {
        int64_t M = rint_in(1, 19);
        xd[0] = N, xd[1] = M, xd[2] = C;
        yd[0] = N, yd[1] = M, yd[2] = K;
        xdims = trtl_dims_make(3, xd);
        ydims = trtl_dims_make(3, yd);
    }
    int64_t nw = K * (C / G) * R * S;
    int8_t *w = malloc((size_t)nw);
    float *ws = malloc(sizeof(float) * (size_t)K), *b = rint_in(0, 1) ? rand_buf(K) : NULL;
    for (int64_t i = 0; i < nw; i++)
        w[i] = (int8_t)rint_in(-128, 127);
    for (int64_t k = 0; k < K; k++)
        ws[k] = 0.001f + 0.01f * (float)(rnd() % 1000) / 1000.0f;
    q->conv.num_output_maps = (int32_t)K;
    q->conv.kernel = (trtl_weights){TRTL_INT8, w, nw};
    q->conv.bias = (trtl_weights){TRTL_FLOAT, b, b ? K : 0};
    q->w_scale = (trtl_weights){TRTL_FLOAT, ws, K};
    q->in_type = rint_in(0, 1) ? TRTL_INT8 : TRTL_UINT8;
    q->in_zero_point = q->in_type == TRTL_INT8 ? (int32_t)rint_in(-5, 5) : (int32_t)rint_in(0, 200);
    q->in_scale = 0.004f + 0.01f * (float)(rnd() % 100) / 100.0f;
    q->act = rint_in(0, 1) ? TRTL_ACT_RELU : TRTL_ACT_NONE;
    q->has_residual = (int32_t)rint_in(0, 1);
    q->out_quant = out_quant;
    q->out_type = rint_in(0, 1) ? TRTL_INT8 : TRTL_UINT8;
    q->out_zero_point = q->out_type == TRTL_INT8 ? 3 : 100;
    q->out_scale = 0.02f;
    float *x = rand_buf(trtl_volume(&xdims)), *res = q->has_residual ? rand_buf(trtl_volume(&ydims)) : NULL;
    for (int64_t i = 0; i < trtl_volume(&xdims); i++)
        x[i] *= 1.5f;
    /* half the convolutions: the input on its grid ((q - zero) * scale, as an int8 layer's fake-quantized output)
     * and in_grid set (passes/int8_regions.c): the fp32 tactics read it without their quantize pass, the other
     * kernels quantize it again (the same codes) */
    if (mode == TRTL_QL_CONV && rint_in(0, 1)) {
        q->in_grid = 1;
        for (int64_t i = 0; i < trtl_volume(&xdims); i++)
            x[i] = (float)(trtl_q8_quantize(x[i], q->in_scale, q->in_zero_point, q->in_type == TRTL_INT8) -
                           q->in_zero_point) * q->in_scale;
    }
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {res, ydims, TRTL_FLOAT}};
    nd.n_in = q->has_residual ? 2 : 1;
    nd.n_out = 1;
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "qlinear mode=%d x%s -> y%s G=%lld k=%lldx%lld in=%s zp=%d act=%d res=%d oq=%d "
             "grid=%d", mode, trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), (long long)G,
             (long long)R, (long long)S, q->in_type == TRTL_INT8 ? "s8" : "u8", (int)q->in_zero_point, (int)q->act,
             (int)q->has_residual, out_quant, (int)q->in_grid);
    trtl_status st;
    float *want = ref_output(trtl_ref_qlinear, &nd, in, &ydims, &st);
    int r = 1;
    if (!want) {
        fprintf(stderr, "FAIL reference qlinear [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
    } else {
        /* the library rounds in_scale * w_scale to float once: float-rounding differences, and one output
         * step where an output lies on a rounding tie */
        double atol = g_atol;
        g_atol = out_quant ? 1.001 * q->out_scale : 1e-5;
        r = run_opt(&trtl_kernel_qlinear_int8, &nd, in, &ydims, want);
        /* the AMX kernel where the CPU has it (groups = 1): the same tolerance */
        if (!r && trtl_cpu_has(trtl_kernel_qlinear_amx_int8.cpu_features) &&
            (mode != TRTL_QL_CONV || q->conv.num_groups == 1))
            r = run_opt(&trtl_kernel_qlinear_amx_int8, &nd, in, &ydims, want);
        /* the fp32 tactics that take the convolution (Winograd: sums to float rounding, the same tolerance) */
        for (int t = 0; t < N_QF_TACTICS && !r; t++)
            if (mode == TRTL_QL_CONV && qf_tactic_runs(qf_tactics[t], &nd, in))
                r = run_opt(qf_tactics[t], &nd, in, &ydims, want);
        g_atol = atol;
    }
    free(want);
    free(w);
    free(ws);
    free(b);
    free(x);
    free(res);
    return r;
}

/* Integer input codes and output codes (passes/qdq_int8_io.c): qlinear.int8 vs qlinear.ref on a
 * 3x3 convolution (mode 0) or rows (mode 2), output codes within one step. */
static int qlinear_codes_case(int mode)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_QLINEAR;
    nd.name = "qlinear codes";
    nd.epi = no_epilogue();
    trtl_qlinear_params *q = &nd.p.qlin;
    q->mode = mode;
    int64_t N = rint_in(1, 2), C = rint_in(1, 40), K = rint_in(1, 37), H = rint_in(1, 11), W = rint_in(1, 13);
    int64_t R = mode == TRTL_QL_CONV ? 3 : 1, xd[4], yd[4], G = 1;
    trtl_dims xdims, ydims;
    if (mode == TRTL_QL_CONV) {
        int64_t k[2] = {3, 3}, one[2] = {1, 1};
        if (rint_in(0, 1)) /* depthwise: the fp32 tactics' blocks of 8 channels and a tail, codes folded */
            G = C = K = rint_in(2, 21);
        q->conv.kernel_size = trtl_dims_make(2, k);
        q->conv.stride = q->conv.dilation = q->conv.pre_padding = q->conv.post_padding = trtl_dims_make(2, one);
        q->conv.num_groups = (int32_t)G;
        q->conv.padding_mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
        xd[0] = N, xd[1] = C, xd[2] = H, xd[3] = W;
        yd[0] = N, yd[1] = K, yd[2] = H, yd[3] = W;
        xdims = trtl_dims_make(4, xd);
        ydims = trtl_dims_make(4, yd);
    } else {
        xd[0] = N, xd[1] = H, xd[2] = C;
        yd[0] = N, yd[1] = H, yd[2] = K;
        xdims = trtl_dims_make(3, xd);
        ydims = trtl_dims_make(3, yd);
    }
    int64_t nw = K * (C / G) * R * R, nx = trtl_volume(&xdims), ny = trtl_volume(&ydims);
    int8_t *w = malloc((size_t)nw), *x = malloc((size_t)nx), *want = malloc((size_t)ny), *got = malloc((size_t)ny);
    float *ws = malloc(sizeof(float) * (size_t)K), *b = rand_buf(K);
    for (int64_t i = 0; i < nw; i++)
        w[i] = (int8_t)rint_in(-128, 127);
    for (int64_t i = 0; i < nx; i++)
        x[i] = (int8_t)rint_in(-128, 127); /* any byte is a code of either type */
    for (int64_t k = 0; k < K; k++)
        ws[k] = 0.001f + 0.01f * (float)(rnd() % 1000) / 1000.0f;
    q->conv.num_output_maps = (int32_t)K;
    q->conv.kernel = (trtl_weights){TRTL_INT8, w, nw};
    q->conv.bias = (trtl_weights){TRTL_FLOAT, b, K};
    q->w_scale = (trtl_weights){TRTL_FLOAT, ws, K};
    q->in_type = rint_in(0, 1) ? TRTL_INT8 : TRTL_UINT8;
    q->in_zero_point = q->in_type == TRTL_INT8 ? (int32_t)rint_in(-5, 5) : (int32_t)rint_in(0, 200);
    q->in_scale = 0.004f + 0.01f * (float)(rnd() % 100) / 100.0f;
    q->act = (int32_t[]){TRTL_ACT_NONE, TRTL_ACT_RELU, TRTL_ACT_CLIP}[rint_in(0, 2)];
    q->alpha = 0.0f;
    q->beta = 0.9f; /* ReLU6's clip at this scale: codes 0 .. 45 above the zero */
    q->out_quant = 2;
    q->out_type = rint_in(0, 1) ? TRTL_INT8 : TRTL_UINT8;
    q->out_zero_point = q->out_type == TRTL_INT8 ? 3 : 100;
    q->out_scale = 0.02f;
    /* a mid quantization equal to the output's (quantize_static's Conv -> Q/DQ -> Clip -> Q/DQ: the fp32 tactics
     * fold it into the code bounds) or another one (the general epilogue) */
    q->mid_quant = mode == TRTL_QL_CONV ? (int32_t)rint_in(0, 2) % 2 : 0;
    q->mid_type = q->out_type;
    q->mid_zero_point = q->out_zero_point + (rint_in(0, 2) == 0 ? 1 : 0);
    q->mid_scale = q->out_scale;
    trtl_tensor_view in[1] = {{x, xdims, (trtl_dtype)q->in_type}};
    trtl_tensor_view out = {want, ydims, (trtl_dtype)q->out_type};
    /* half the convolutions: the input codes as FLOAT on their grid, in_grid set (passes/int8_regions.c: the fp32
     * tactics read it in place; a depthwise one then runs the layer in one call and folds the codes after it) */
    float *xf = NULL;
    if (mode == TRTL_QL_CONV && rint_in(0, 1)) {
        xf = malloc(sizeof(float) * (size_t)nx);
        for (int64_t i = 0; i < nx; i++)
            xf[i] = (float)((q->in_type == TRTL_INT8 ? x[i] : (uint8_t)x[i]) - q->in_zero_point) * q->in_scale;
        q->in_grid = 1;
        in[0] = (trtl_tensor_view){xf, xdims, TRTL_FLOAT};
    }
    nd.n_in = nd.n_out = 1;
    snprintf(g_desc, sizeof g_desc, "qlinear codes mode=%d N%lld C%lld K%lld G%lld H%lld W%lld in=%s out=%s act=%d "
             "mid=%d/%d grid=%d", mode, (long long)N, (long long)C, (long long)K, (long long)G, (long long)H,
             (long long)W, q->in_type == TRTL_INT8 ? "s8" : "u8", q->out_type == TRTL_INT8 ? "s8" : "u8", (int)q->act,
             (int)q->mid_quant, (int)(q->mid_zero_point - q->out_zero_point), (int)q->in_grid);
    int bad = 0;
    trtl_kernel_args ra = {&nd, in, &out, NULL, 0, NULL, NULL, NULL};
    if (trtl_ref_qlinear(&ra) != TRTL_OK) {
        fprintf(stderr, "FAIL [%s]: %s\n", g_desc, trtl_last_error());
        bad = 1;
    }
    /* qlinear.int8, then the fp32 tactics that take the convolution */
    for (int t = -1; t < N_QF_TACTICS && !bad; t++) {
        const trtl_kernel *k = t < 0 ? &trtl_kernel_qlinear_int8 : qf_tactics[t];
        if (t >= 0 && (mode != TRTL_QL_CONV || !qf_tactic_runs(k, &nd, in)))
            continue;
        void *state = NULL;
        if (k->prepare(&nd, &state) != TRTL_OK) {
            fprintf(stderr, "FAIL %s prepare [%s]: %s\n", k->name, g_desc, trtl_last_error());
            bad = 1;
        }
        for (int pi = 0; pi < 3 && !bad; pi++) {
            trtl_tensor_view o = {got, ydims, (trtl_dtype)q->out_type};
            size_t ss = k->scratch(&nd, in, &o);
            float *scratch = nan_buf((int64_t)(ss / sizeof(float)) + 1);
            trtl_kernel_args a = {&nd, in, &o, scratch, ss, state, g_pools[pi], NULL};
            memset(got, 0x5a, (size_t)ny);
            if (k->run(&a) != TRTL_OK) {
                fprintf(stderr, "FAIL %s [%s]: %s\n", k->name, g_desc, trtl_last_error());
                bad = 1;
            }
            int64_t moved = 0; /* codes one step off: rounding ties only, so rare (a biased rounding fails) */
            for (int64_t i = 0; i < ny && !bad; i++) {
                int gv = q->out_type == TRTL_INT8 ? got[i] : (uint8_t)got[i];
                int wv = q->out_type == TRTL_INT8 ? want[i] : (uint8_t)want[i];
                moved += gv != wv;
                if (abs(gv - wv) > 1) {
                    fprintf(stderr, "FAIL %s [%s] pool=%d: code[%lld] = %d, reference %d\n", k->name, g_desc, pi,
                            (long long)i, gv, wv);
                    bad = 1;
                }
            }
            if (!bad && moved > ny / 50) {
                fprintf(stderr, "FAIL %s [%s] pool=%d: %lld of %lld codes one step off\n", k->name, g_desc, pi,
                        (long long)moved, (long long)ny);
                bad = 1;
            }
            free(scratch);
        }
        if (state)
            k->release(state);
    }
    g_failures += bad;
    free(w);
    free(x);
    free(xf);
    free(want);
    free(got);
    free(ws);
    free(b);
    return bad;
}

static void test_qlinear(int ncases)
{
    int bad = 0;
    for (int i = 0; i < 3 * ncases && !bad; i++)
        bad = qlinear_case(i % 3, (i / 3) % 2);
    for (int i = 0; i < ncases && !bad; i++)
        bad = qlinear_codes_case(i % 2 ? TRTL_QL_MATMUL : TRTL_QL_CONV);
}

/* ---- qadd.int8 / qpool.int8 (QLINEAR modes ADD and POOL) against trtl_ref_qlinear: the same bytes ---- */
extern const trtl_kernel trtl_kernel_qadd_int8, trtl_kernel_qpool_int8, trtl_kernel_pooling_codes_max;

static void test_qadd_qpool(int ncases)
{
    for (int c = 0; c < ncases; c++) {
        const int add = c % 2 == 0;
        const int64_t N = rint_in(1, 2), C = rint_in(1, 9), H = rint_in(1, 13), W = rint_in(1, 17), n = N * C * H * W;
        trtl_node nd;
        memset(&nd, 0, sizeof nd);
        nd.op = TRTL_OP_QLINEAR;
        nd.name = "q";
        trtl_qlinear_params *q = &nd.p.qlin; /* zeroed: no weights, no mid quantization */
        q->act = TRTL_ACT_NONE;
        const int sx = (int)(rnd() % 2), sr = (int)(rnd() % 2), so = (int)(rnd() % 2);
        q->in_type = sx ? TRTL_INT8 : TRTL_UINT8;
        q->in_scale = 0.005f + 0.05f * (float)(rnd() % 1000) / 1000.0f;
        q->in_zero_point = sx ? (int32_t)rint_in(-20, 20) : (int32_t)rint_in(0, 255);
        q->out_quant = 1 + (int32_t)(rnd() % 2);
        q->out_type = so ? TRTL_INT8 : TRTL_UINT8;
        q->out_scale = 0.005f + 0.05f * (float)(rnd() % 1000) / 1000.0f;
        q->out_zero_point = so ? (int32_t)rint_in(-20, 20) : (int32_t)rint_in(0, 255);
        trtl_dims xd = {4, {N, C, H, W}}, yd = xd;
        if (add) {
            q->mode = TRTL_QL_ADD;
            q->has_residual = 1;
            q->res_quant = 1;
            q->res_type = sr ? TRTL_INT8 : TRTL_UINT8;
            q->res_scale = 0.005f + 0.05f * (float)(rnd() % 1000) / 1000.0f;
            q->res_zero_point = sr ? (int32_t)rint_in(-20, 20) : (int32_t)rint_in(0, 255);
            q->act = rnd() % 2 ? TRTL_ACT_RELU : TRTL_ACT_NONE;
        } else {
            q->mode = TRTL_QL_POOL;
            q->pool_mode = (int32_t)rint_in(TRTL_QP_AVG, TRTL_QP_GLOBAL);
            if (q->pool_mode == TRTL_QP_GLOBAL) {
                yd.d[2] = yd.d[3] = 1;
            } else {
                int64_t k = rint_in(1, 3), st = rint_in(1, 2), pad = rint_in(0, k - 1);
                q->conv.kernel_size = (trtl_dims){2, {k, k}};
                q->conv.stride = (trtl_dims){2, {st, st}};
                q->conv.pre_padding = q->conv.post_padding = (trtl_dims){2, {pad, pad}};
                q->conv.padding_mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
                if (H + 2 * pad < k || W + 2 * pad < k)
                    continue;
                yd.d[2] = (H + 2 * pad - k) / st + 1;
                yd.d[3] = (W + 2 * pad - k) / st + 1;
            }
        }
        int8_t *x = malloc((size_t)n), *r = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            x[i] = (int8_t)rnd();
            r[i] = (int8_t)rnd();
        }
        const int64_t ny = trtl_volume(&yd);
        const size_t es = q->out_quant == 2 ? 1 : sizeof(float);
        char *want = calloc((size_t)ny, es), *got = calloc((size_t)ny, es);
        trtl_tensor_view in[2] = {{x, xd, (trtl_dtype)q->in_type}, {r, xd, (trtl_dtype)q->res_type}};
        trtl_tensor_view out = {want, yd, q->out_quant == 2 ? (trtl_dtype)q->out_type : TRTL_FLOAT};
        nd.n_in = add ? 2 : 1;
        trtl_kernel_args ra = {&nd, in, &out, NULL, 0, NULL, NULL, NULL};
        const trtl_kernel *k = add ? &trtl_kernel_qadd_int8 : &trtl_kernel_qpool_int8;
        trtl_dims dd[2] = {xd, xd};
        g_cases++;
        if (!k->applies(&nd, dd) || trtl_ref_qlinear(&ra) != TRTL_OK) {
            fprintf(stderr, "FAIL %s case %d: applies / reference\n", k->name, c);
            g_failures++;
        }
        for (int pi = 0; pi < 3; pi++) {
            memset(got, 0x5a, (size_t)ny * es);
            out.data = got;
            trtl_kernel_args a = {&nd, in, &out, NULL, 0, NULL, g_pools[pi], NULL};
            if (k->run(&a) != TRTL_OK || memcmp(got, want, (size_t)ny * es) != 0) {
                fprintf(stderr, "FAIL %s case %d (%lldx%lldx%lldx%lld, out_quant %d, pool mode %d) pool=%d: differs "
                        "from the reference\n", k->name, c, (long long)N, (long long)C, (long long)H, (long long)W,
                        (int)q->out_quant, (int)q->pool_mode, pi);
                g_failures++;
                break;
            }
            out.data = want;
        }
        free(x);
        free(r);
        free(want);
        free(got);
    }
}

/* pooling.codes_max against the reference on INT8 / UINT8 codes: random maps, windows 1-4, strides 1-3,
 * padding (windows over padding only give the lowest code), ceil rounding, rows wider than its row buffer;
 * every fourth case the 2x2 stride-2 window without padding (its own loop: AVX2 16 outputs a step and
 * the row tails, odd H / W leaving a row / column out, or ceil rounding taking the other loop). */
static void test_pooling_codes(int ncases)
{
    const trtl_kernel *k = &trtl_kernel_pooling_codes_max;
    for (int c = 0; c < ncases + 2; c++) {
        const int wide = c >= ncases; /* the last two: W past the 4096-byte row of column maxima */
        const int64_t N = rint_in(1, 2), C = rint_in(1, 5), H = rint_in(1, 15);
        int64_t W = wide ? 4100 + c : rint_in(1, 40);
        trtl_node nd;
        memset(&nd, 0, sizeof nd);
        nd.op = TRTL_OP_POOLING;
        nd.name = "pool";
        nd.n_in = nd.n_out = 1;
        trtl_pooling_params *p = &nd.p.pool;
        p->type = TRTL_POOL_MAX;
        int64_t kh = rint_in(1, 4), kw = rint_in(1, 4), sh = rint_in(1, 3), sw = rint_in(1, 3);
        int64_t ph = rint_in(0, kh - 1), pw = rint_in(0, kw - 1);
        if (!wide && c % 4 == 0) {
            kh = kw = sh = sw = 2;
            ph = pw = 0;
            W = rint_in(1, 80);
        }
        p->window_size = (trtl_dims){2, {kh, kw}};
        p->stride = (trtl_dims){2, {sh, sw}};
        p->pre_padding = (trtl_dims){2, {ph, pw}};
        p->post_padding = (trtl_dims){2, {ph, pw}};
        p->padding_mode = rnd() % 2 ? TRTL_PADMODE_EXPLICIT_ROUND_UP : TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
        int64_t oh, ow, pre, post;
        if (trtl_spatial_out(H, kh, sh, ph, ph, p->padding_mode, 1, &oh, &pre, &post) != TRTL_OK ||
            trtl_spatial_out(W, kw, sw, pw, pw, p->padding_mode, 1, &ow, &pre, &post) != TRTL_OK || oh < 1 || ow < 1) {
            trtl_clear_error();
            continue;
        }
        const trtl_dtype dt = rnd() % 2 ? TRTL_INT8 : TRTL_UINT8;
        trtl_dims xd = {4, {N, C, H, W}}, yd = {4, {N, C, oh, ow}};
        const int64_t n = trtl_volume(&xd), ny = trtl_volume(&yd);
        int8_t *x = malloc((size_t)n);
        char *want = malloc((size_t)ny), *got = malloc((size_t)ny);
        for (int64_t i = 0; i < n; i++)
            x[i] = (int8_t)rnd();
        trtl_tensor_view in = {x, xd, dt}, out = {want, yd, dt};
        trtl_kernel_args ra = {&nd, &in, &out, NULL, 0, NULL, NULL, NULL};
        g_cases++;
        if (!k->applies(&nd, &xd) || trtl_ref_pooling(&ra) != TRTL_OK) {
            fprintf(stderr, "FAIL %s case %d: applies / reference\n", k->name, c);
            g_failures++;
        }
        for (int pi = 0; pi < 3; pi++) {
            memset(got, 0x5a, (size_t)ny);
            out.data = got;
            trtl_kernel_args a = {&nd, &in, &out, NULL, 0, NULL, g_pools[pi], NULL};
            if (k->run(&a) != TRTL_OK || memcmp(got, want, (size_t)ny) != 0) {
                fprintf(stderr, "FAIL %s case %d (%s %lldx%lldx%lldx%lld, window %lldx%lld, stride %lldx%lld, pad "
                        "%lldx%lld) pool=%d: differs from the reference\n", k->name, c, trtl_dtype_name(dt),
                        (long long)N, (long long)C, (long long)H, (long long)W, (long long)kh, (long long)kw,
                        (long long)sh, (long long)sw, (long long)ph, (long long)pw, pi);
                g_failures++;
                break;
            }
            out.data = want;
        }
        /* a FLOAT tensor is refused, not misread */
        trtl_tensor_view fin = {x, xd, TRTL_FLOAT}, fout = {got, yd, TRTL_FLOAT};
        trtl_kernel_args fa = {&nd, &fin, &fout, NULL, 0, NULL, NULL, NULL};
        if (c == 0 && k->run(&fa) != TRTL_ERR_DTYPE) {
            fprintf(stderr, "FAIL %s: a FLOAT input was not refused\n", k->name);
            g_failures++;
        }
        trtl_clear_error();
        free(x);
        free(want);
        free(got);
    }
}

/* ---- linear (internal LINEAR op: passes/fuse_linear.c; the fully connected kernels' functions) ------------ */

extern const trtl_kernel trtl_kernel_linear_packed_gemm, trtl_kernel_linear_sgemm;
trtl_status trtl_ref_linear(const trtl_kernel_args *a);

/* x [B.., M, D] (nb leading dims of 2) -> y [B.., M, K]: the kernel vs trtl_ref_linear (and the naive FC). */
static int linear_case(const trtl_kernel *k, int nb, int64_t M, int64_t D, int64_t K, int bias, int combo)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_LINEAR;
    nd.name = "linear";
    int64_t xd[4] = {2, 3, M, D}, yd[4] = {2, 3, M, K}, rows = M;
    for (int i = 2 - nb; i < 2; i++)
        rows *= xd[i];
    trtl_dims xdims = trtl_dims_make(nb + 2, xd + 2 - nb), ydims = trtl_dims_make(nb + 2, yd + 2 - nb);
    float *w = rand_buf(K * D), *b = bias ? rand_buf(K) : NULL, *x = rand_buf(rows * D), *res = NULL;
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, bias ? K : 0};
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    nd.n_out = 1;
    if (nd.epi.has_residual) {
        res = rand_buf(rows * K);
        in[1].data = res;
        nd.n_in = 2;
    }
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "%s x%s K=%lld bias=%d act=%s res=%d", k->name,
             trtl_dims_str(&xdims, xs, sizeof xs), (long long)K, bias, act_name(nd.epi.act), nd.epi.has_residual);
    float *want = want_output(trtl_ref_linear, naive_fc, "linear", &nd, in, &ydims);
    int r = want ? run_opt(k, &nd, in, &ydims, want) : 1;
    free(want);
    free(w);
    free(b);
    free(x);
    free(res);
    return r;
}

/* Transformer-like shapes (128 x 768 -> 96 with depth blocks), one-row GEMVs, tails, 2-D and 3-/4-D inputs. */
static void test_linear(int ncases)
{
    static const int64_t fixed[][4] = {{0, 1, 1, 1},   {1, 128, 768, 96}, {0, 1, 300, 70}, {1, 13, 33, 31},
                                       {2, 5, 97, 17}, {0, 100, 64, 130}, {1, 1, 2048, 40}};
    const trtl_kernel *ks[2] = {&trtl_kernel_linear_sgemm, &trtl_kernel_linear_packed_gemm};
    int combo = 1;
    for (int ki = 0; ki < 2; ki++) {
        if (!trtl_cpu_has(ks[ki]->cpu_features)) {
            printf("test_kernels: skipping %s (CPU lacks its features)\n", ks[ki]->name);
            continue;
        }
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (linear_case(ks[ki], (int)fixed[i][0], fixed[i][1], fixed[i][2], fixed[i][3], (int)(i % 3 != 2),
                            combo++))
                return;
        for (int c = 0; c < ncases / 4 + 1; c++, combo++)
            if (linear_case(ks[ki], (int)(rnd() % 3), rint_in(1, 40), rint_in(1, 90), rint_in(1, 70),
                            (int)(rnd() % 3 != 0), combo))
                return;
    }
}

/* ---- quantize.simd / dequantize.simd (x86/qdq_simd.c) vs the reference Q / DQ, byte for byte ------------------ */

extern const trtl_kernel trtl_kernel_quantize_simd, trtl_kernel_dequantize_simd;

/* n values (tails of 8 / 16 / 32 lanes), a scale near 1/20..1/2, int8 or uint8 codes, a zero point (or none);
 * x holds ties (k + 0.5 steps), values past both saturation bounds, NaN and +-Inf; each pool size. */
static int qdq_case(int64_t n, int u8, int zp_kind)
{
    const trtl_dtype ct = u8 ? TRTL_UINT8 : TRTL_INT8;
    float scale = 0.05f + (float)(rnd() % 1000) / 2000.0f;
    int8_t zi = (int8_t)(zp_kind == 2 ? (int)(rnd() % 41) - 20 : 0);
    uint8_t zu = (uint8_t)(zp_kind == 2 ? 100 + rnd() % 56 : 0);
    float *x = malloc((size_t)n * sizeof(float)), *back = malloc((size_t)n * sizeof(float) * 2);
    uint8_t *codes = malloc((size_t)n * 2 + 1);
    for (int64_t i = 0; i < n; i++) {
        int r = (int)(rnd() % 40);
        x[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r < 8 ? ((float)(rnd() % 600) - 300.0f + 0.5f) * scale
                                                                     : ((float)(rnd() % 20001) - 10000.0f) / 500.0f;
    }
    trtl_node nd = {0};
    nd.name = "qdq";
    nd.n_in = zp_kind ? 3 : 2;
    nd.n_out = 1;
    int64_t one = 1, nn = n;
    trtl_dims xd = trtl_dims_make(1, &nn), sd = trtl_dims_make(1, &one);
    trtl_tensor_view in[3] = {{x, xd, TRTL_FLOAT}, {&scale, sd, TRTL_FLOAT}, {u8 ? (void *)&zu : (void *)&zi, sd, ct}};
    snprintf(g_desc, sizeof g_desc, "n=%lld %s scale=%g zp=%d", (long long)n, u8 ? "uint8" : "int8", scale,
             zp_kind ? (u8 ? zu : zi) : -999);
    int bad = 0;
    for (int dq = 0; dq < 2 && !bad; dq++) {
        const trtl_kernel *k = dq ? &trtl_kernel_dequantize_simd : &trtl_kernel_quantize_simd;
        nd.op = dq ? TRTL_OP_DEQUANTIZE : TRTL_OP_QUANTIZE;
        if (dq) /* the reference quantize's codes as input */
            in[0] = (trtl_tensor_view){codes, xd, ct};
        trtl_dims ind[3] = {in[0].dims, in[1].dims, in[2].dims};
        if (!k->applies(&nd, ind)) {
            fprintf(stderr, "FAIL %s [%s]: applies() refused\n", k->name, g_desc);
            g_failures++;
            bad = 1;
            break;
        }
        size_t esz = dq ? sizeof(float) : 1;
        trtl_tensor_view want = {dq ? (void *)back : (void *)codes, xd, dq ? TRTL_FLOAT : ct};
        trtl_kernel_args ra = {&nd, in, &want, NULL, 0, NULL, NULL, NULL};
        if ((dq ? trtl_ref_dequantize(&ra) : trtl_ref_quantize(&ra)) != TRTL_OK) {
            fprintf(stderr, "FAIL reference [%s]: %s\n", g_desc, trtl_last_error());
            g_failures++;
            bad = 1;
            break;
        }
        for (int pi = 0; pi < 3 && !bad; pi++) {
            unsigned char *got = malloc((size_t)n * esz + 1);
            memset(got, 0xA5, (size_t)n * esz + 1);
            trtl_tensor_view out = {got, xd, want.dtype};
            trtl_kernel_args a = {&nd, in, &out, NULL, 0, NULL, g_pools[pi], NULL};
            if (k->run(&a) != TRTL_OK) {
                fprintf(stderr, "FAIL %s [%s] pool=%d: run: %s\n", k->name, g_desc, pi, trtl_last_error());
                g_failures++;
                bad = 1;
            } else if (memcmp(got, want.data, (size_t)n * esz) != 0) {
                int64_t i = 0;
                while (memcmp(got + i * esz, (unsigned char *)want.data + i * esz, esz) == 0)
                    i++;
                fprintf(stderr, "MISMATCH %s [%s] pool=%d: element %lld (x %g) differs from the reference\n", k->name,
                        g_desc, pi, (long long)i, (double)x[i]);
                g_failures++;
                bad = 1;
            }
            free(got);
        }
        g_cases++;
    }
    free(x);
    free(back);
    free(codes);
    return bad;
}

static void test_qdq_simd(int ncases)
{
    static const int64_t fixed[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 100, 16384, 16385, 70001};
    for (int pass = 0; isa_pass(pass); pass++) { /* the widest variant, then AVX2 (AVX-512 masked off) */
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (qdq_case(fixed[i], (int)(i % 2), (int)(i % 3)))
                goto done;
        for (int c = 0; c < ncases / 4 + 1; c++)
            if (qdq_case(rint_in(1, 300), (int)(rnd() % 2), (int)(rnd() % 3)))
                goto done;
    }
done:
    trtl_cpu_set_mask(~0u);
}

/* ---- convolution.pixel_gemm (x86/convolution_pixel_gemm.c) ------------------------------------ */

extern const trtl_kernel trtl_kernel_conv_pixel_gemm;

/* Small maps with one group, on the AVX-512 variant and on AVX2 (AVX-512 masked off): pixel counts
 * that cut into uneven panels (49 = 9 + 4 x 10; 1; 13; batches), channel counts that end in a
 * partial tile (K not a multiple of 32 / 16, fewer than one tile), several depth blocks (ckk >
 * 384) with a remainder, strides 1-3, dilation, asymmetric / SAME padding, 1x1 and 1-D, every
 * epilogue on the first shapes; then random small shapes, and shapes past the kernel's limits run
 * without applies() (the reference fallback). */
static void test_conv_pixel_gemm(int ncases)
{
    static const struct { int64_t N, C, K, H, W, k, s, d, pre, post; int mode, nsp, all; } sh[] = {
        {1, 40, 70, 7, 7, 3, 1, 1, 1, 1, 0, 2, 1},   /* 49 pixels, K tail (70 = 2 x 32 + 6) */
        {2, 17, 33, 5, 6, 3, 2, 1, 1, 0, 0, 2, 1},   /* batch, stride 2, asymmetric pad */
        {1, 200, 64, 6, 5, 3, 1, 1, 1, 1, 0, 2, 0},  /* ckk 1800: several depth blocks */
        {1, 64, 96, 14, 14, 1, 1, 1, 0, 0, 0, 2, 0}, /* 1x1, 196 pixels */
        {3, 12, 9, 9, 8, 3, 1, 2, 2, 2, 0, 2, 0},    /* dilation 2, K < one tile */
        {1, 7, 50, 1, 1, 1, 1, 1, 0, 0, 0, 2, 0},    /* one pixel */
        {1, 9, 20, 11, 13, 5, 3, 1, 2, 1, 2, 2, 0},  /* 5x5 stride 3, SAME_UPPER */
        {2, 10, 24, 1, 29, 3, 1, 1, 1, 1, 0, 1, 0},  /* 1-D */
        {1, 3, 16, 15, 17, 7, 2, 1, 3, 3, 0, 2, 0},  /* stem-like, 3 input channels */
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int step = sh[i].all ? (pass == 0 ? 1 : 3) : 7;
            for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
                conv_case c = {0};
                c.nsp = sh[i].nsp;
                c.N = sh[i].N;
                c.C = sh[i].C;
                c.K = sh[i].K;
                c.G = 1;
                for (int d = 0; d < c.nsp; d++) {
                    c.in[d] = c.nsp == 1 || d == 1 ? sh[i].W : sh[i].H;
                    c.k[d] = sh[i].k;
                    c.s[d] = sh[i].s;
                    c.d[d] = sh[i].d;
                    c.pre[d] = sh[i].pre;
                    c.post[d] = sh[i].post;
                }
                c.mode = sh[i].mode;
                c.bias = combo % 3 != 2;
                if (conv_run_case(&trtl_kernel_conv_pixel_gemm, &c, combo) > 0)
                    goto done;
            }
        }
        for (int i = 0, combo = (int)(rnd() % 64); i < (pass == 0 ? ncases / 3 : ncases / 6); i++, combo++) {
            conv_case c = {0};
            c.nsp = 2;
            c.N = rint_in(1, 3);
            c.C = rint_in(1, 40);
            c.K = rint_in(1, 80);
            c.G = 1;
            c.bias = (int)(rnd() % 4 != 0);
            for (int d = 0; d < 2; d++) {
                c.k[d] = rint_in(1, 3);
                c.in[d] = rint_in(c.k[d], 12);
                c.s[d] = rint_in(1, 2);
                c.d[d] = c.k[d] > 1 ? rint_in(1, 2) : 1;
                c.pre[d] = rint_in(0, 1);
                c.post[d] = rint_in(0, 1);
            }
            int r = conv_run_case(&trtl_kernel_conv_pixel_gemm, &c, combo);
            if (r < 0)
                i--;
            else if (r > 0)
                goto done;
        }
        {
            /* past the map limit (24x24 outputs > 256 pixels): applies() refuses, run() computes the reference */
            trtl_kernel any = trtl_kernel_conv_pixel_gemm;
            any.applies = NULL;
            conv_case c = conv2d(2, 5, 6, 1, 24, 24, 3, 1, 1, 1, 0, 1);
            if (conv_run_case(&any, &c, 3) > 0)
                goto done;
        }
    }
done:
    trtl_cpu_set_mask(~0u);
}

/* ---- convolution.tapwise (x86/convolution_tapwise.c) ------------------------------------------- */

extern const trtl_kernel trtl_kernel_conv_tapwise;

/* Dilated / padding-heavy convolutions of one group, on the AVX-512 variant and on AVX2: dilations
 * where no, some and all off-centre taps are dead (ASPP-like 3x3 with dilation = padding on a small
 * map), partial taps that span whole rows and narrow ones, no full tap at all (stride 2, kernel
 * larger than the map), channel tails, several depth blocks (C > 512), batches, 1-D, every
 * epilogue on the first shapes; NaN weights on a dead tap and on a partial one (0 * NaN must reach
 * every output as in the reference), a NaN input; random small dilated shapes; and a shape past
 * the kernel's limits run without applies() (the reference fallback). */
static void test_conv_tapwise(int ncases)
{
    static const struct { int64_t N, C, K, H, W, k, s, d, pre, post; int nsp, all; } sh[] = {
        {1, 40, 70, 9, 9, 3, 1, 6, 6, 6, 2, 1},    /* off-centre taps partial (3 rows / columns) */
        {1, 33, 45, 6, 7, 3, 1, 8, 8, 8, 2, 1},    /* every off-centre tap dead: a 1x1 convolution */
        {2, 20, 27, 8, 8, 3, 1, 2, 2, 2, 2, 0},    /* no tap dead, batch */
        {1, 600, 20, 5, 5, 3, 1, 3, 3, 3, 2, 0},   /* two depth blocks */
        {1, 9, 13, 7, 10, 3, 2, 3, 3, 2, 2, 0},    /* stride 2 (no full tap), asymmetric padding */
        {1, 5, 6, 2, 3, 5, 1, 1, 2, 2, 2, 0},      /* kernel larger than the map: dead taps, dilation 1 */
        {2, 10, 24, 1, 29, 3, 1, 12, 12, 12, 1, 0}, /* 1-D */
        {1, 16, 40, 14, 14, 3, 1, 12, 12, 12, 2, 0}, /* the ASPP's dilation 12 on 14x14 */
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int step = sh[i].all ? (pass == 0 ? 1 : 3) : 7;
            for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
                conv_case c = {0};
                c.nsp = sh[i].nsp;
                c.N = sh[i].N;
                c.C = sh[i].C;
                c.K = sh[i].K;
                c.G = 1;
                for (int d = 0; d < c.nsp; d++) {
                    c.in[d] = c.nsp == 1 || d == 1 ? sh[i].W : sh[i].H;
                    c.k[d] = sh[i].k;
                    c.s[d] = sh[i].s;
                    c.d[d] = sh[i].d;
                    c.pre[d] = sh[i].pre;
                    c.post[d] = sh[i].post;
                }
                c.bias = combo % 3 != 2;
                if (conv_run_case(&trtl_kernel_conv_tapwise, &c, combo) > 0)
                    goto done;
            }
        }
        /* NaN weight of output channel 3, input channel 2 on tap 0 (dead in the first case, partial in
         * the second), then on the centre tap (4, full), then a NaN input */
        for (int v = 0; v < 4; v++) {
            conv_case c = {0};
            c.nsp = 2;
            c.N = 1;
            c.C = 7;
            c.K = 9;
            c.G = 1;
            c.bias = 1;
            for (int d = 0; d < 2; d++) {
                c.in[d] = 6;
                c.k[d] = 3;
                c.s[d] = 1;
                c.d[d] = c.pre[d] = c.post[d] = v == 1 ? 3 : 7;
            }
            g_conv_nan_w = v == 3 ? -1 : (3 * c.C + 2) * 9 + (v == 2 ? 4 : 0);
            g_conv_nan_x = v == 3 ? 2 * 36 + 15 : -1;
            int r = conv_run_case(&trtl_kernel_conv_tapwise, &c, v + 1);
            g_conv_nan_w = g_conv_nan_x = -1;
            if (r > 0)
                goto done;
        }
        for (int i = 0, combo = (int)(rnd() % 64); i < (pass == 0 ? ncases / 3 : ncases / 6); i++, combo++) {
            conv_case c = {0};
            c.nsp = 2;
            c.N = rint_in(1, 2);
            c.C = rint_in(1, 40);
            c.K = rint_in(1, 80);
            c.G = 1;
            c.bias = (int)(rnd() % 4 != 0);
            for (int d = 0; d < 2; d++) {
                c.k[d] = rint_in(1, 3);
                c.in[d] = rint_in(1, 12);
                c.s[d] = rint_in(1, 2);
                c.d[d] = rint_in(2, 9);
                c.pre[d] = rint_in(0, 9);
                c.post[d] = rint_in(0, 9);
            }
            if (rnd() % 4 == 0)
                g_conv_nan_w = (int64_t)(rnd() % (uint32_t)(c.K * c.C * c.k[0] * c.k[1]));
            int r = conv_run_case(&trtl_kernel_conv_tapwise, &c, combo);
            g_conv_nan_w = -1;
            if (r < 0)
                i--;
            else if (r > 0)
                goto done;
        }
        {
            /* a 3-D convolution: applies() refuses, run() computes the reference */
            conv_case c = {0};
            trtl_kernel any = trtl_kernel_conv_tapwise;
            any.applies = NULL;
            c.nsp = 3;
            c.N = 1;
            c.C = 3;
            c.K = 4;
            c.G = 1;
            c.bias = 1;
            for (int d = 0; d < 3; d++) {
                c.in[d] = 4;
                c.k[d] = 3;
                c.s[d] = 1;
                c.d[d] = c.pre[d] = c.post[d] = 2;
            }
            if (conv_run_case(&any, &c, 3) > 0)
                goto done;
        }
    }
done:
    g_conv_nan_w = g_conv_nan_x = -1;
    trtl_cpu_set_mask(~0u);
}

/* A random 2-D case's bias, epilogue mode and per-axis kernel 1..kmax, input 1..inmax, stride 1..smax, dilation
 * 1..dmax, padding 0..padmax each side (the grouped and stem tests; N, G, C and K are the caller's). */
/* A random stem-like convolution (test_conv_stem, test_nchwc_dense): batch 1..nmax, groups 1, 1..16 input and
 * 1..40 output channels, kernels up to 7, inputs up to inmax, strides up to 4, dilation up to dmax, padding up to 3. */
static void rand_stem_conv(conv_case *c, int nmax, int inmax, int dmax)
{
    c->N = rint_in(1, nmax);
    c->G = 1;
    c->C = rint_in(1, 16);
    c->K = rint_in(1, 40);
    rand_conv2d_rest(c, 7, inmax, 4, dmax, 3);
}

static void rand_conv2d_rest(conv_case *c, int kmax, int inmax, int smax, int dmax, int padmax)
{
    c->nsp = 2;
    c->bias = (int)(rnd() % 4 != 0);
    c->mode = (int)(rnd() % 6);
    for (int d = 0; d < 2; d++) {
        c->k[d] = rint_in(1, kmax);
        c->in[d] = rint_in(1, inmax);
        c->s[d] = rint_in(1, smax);
        c->d[d] = rint_in(1, dmax);
        c->pre[d] = rint_in(0, padmax);
        c->post[d] = rint_in(0, padmax);
    }
}

/* Fixed shape i of a kernel test at epilogue combo `combo`: a bias but every third combo, and on combo i + 1 a NaN
 * weight, then a NaN input (the grouped and stem tests).  conv_run_case's result. */
static int conv_fixed_case(const trtl_kernel *k, conv_case *c, int i, int combo)
{
    c->bias = combo % 3 != 2;
    if (combo == i + 1) {
        g_conv_nan_w = (int64_t)i * 7;
        g_conv_nan_x = (int64_t)i * 13 + 5;
    }
    int r = conv_run_case(k, c, combo);
    g_conv_nan_w = g_conv_nan_x = -1;
    return r;
}

/* ---- convolution.grouped_direct (x86/convolution_grouped.c) ------------------------------------ */

extern const trtl_kernel trtl_kernel_conv_grouped_direct;

/* Grouped convolutions with few channels per group on the AVX-512, AVX2 and portable variants:
 * RegNet's group width 8 at stride 1 and 2 (odd and even maps), output channels per group that
 * fill one block of 8, two, or part of one, strides (2, 1) and 3, dilation, 5x5 and 1x1 kernels,
 * asymmetric / SAME padding, batches, every epilogue on the first shapes; NaN weights and input;
 * random small shapes; and a shape past the kernel's limits run without applies(). */
static void test_conv_grouped_direct(int ncases)
{
    static const struct { int64_t N, G, Cg, Kg, H, W, kh, kw, sh, sw, d, pre, post; int mode, all; } sh[] = {
        {1, 6, 8, 8, 15, 15, 3, 3, 2, 2, 1, 1, 1, 0, 1},  /* RegNet stride 2, odd map */
        {1, 13, 8, 8, 14, 14, 3, 3, 1, 1, 1, 1, 1, 0, 1}, /* RegNet stride 1 */
        {2, 3, 4, 12, 9, 11, 3, 3, 1, 1, 1, 1, 1, 0, 0},  /* Kg 12: a full and a partial block, batch */
        {1, 2, 3, 16, 10, 9, 5, 5, 2, 1, 2, 3, 1, 0, 0},  /* 5x5, stride (2, 1), dilation 2, asymmetric */
        {1, 4, 5, 3, 12, 13, 3, 3, 3, 3, 1, 0, 2, 2, 0},  /* stride 3, SAME_UPPER */
        {2, 5, 2, 2, 7, 7, 1, 1, 1, 1, 1, 0, 0, 0, 0},    /* 1x1 */
        {1, 55, 8, 8, 7, 7, 3, 3, 1, 1, 1, 1, 1, 0, 0},   /* RegNet's last stage */
    };
    for (int pass = 0; pass < 3; pass++) {
        if (!isa_pass_portable(pass))
            continue;
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int step = sh[i].all ? (pass == 0 ? 1 : 3) : 7;
            for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
                conv_case c = {0};
                c.nsp = 2;
                c.N = sh[i].N;
                c.G = sh[i].G;
                c.C = sh[i].G * sh[i].Cg;
                c.K = sh[i].G * sh[i].Kg;
                c.in[0] = sh[i].H;
                c.in[1] = sh[i].W;
                c.k[0] = sh[i].kh;
                c.k[1] = sh[i].kw;
                c.s[0] = sh[i].sh;
                c.s[1] = sh[i].sw;
                c.d[0] = c.d[1] = sh[i].d;
                c.pre[0] = c.pre[1] = sh[i].pre;
                c.post[0] = c.post[1] = sh[i].post;
                c.mode = sh[i].mode;
                if (conv_fixed_case(&trtl_kernel_conv_grouped_direct, &c, (int)i, combo) > 0)
                    goto done;
            }
        }
        for (int i = 0, combo = (int)(rnd() % 64); i < (pass == 0 ? ncases / 3 : ncases / 6); i++, combo++) {
            conv_case c = {0};
            c.N = rint_in(1, 2);
            c.G = rint_in(2, 5);
            c.C = c.G * rint_in(2, 16);
            c.K = c.G * rint_in(2, 16);
            rand_conv2d_rest(&c, 3, 13, 2, 2, 2);
            int r = conv_run_case(&trtl_kernel_conv_grouped_direct, &c, combo);
            if (r < 0)
                i--;
            else if (r > 0)
                goto done;
        }
        {
            /* 20 input channels per group (past GD_MAX_CG): applies() refuses, run() computes the reference */
            trtl_kernel any = trtl_kernel_conv_grouped_direct;
            any.applies = NULL;
            conv_case c = conv2d(1, 40, 6, 2, 5, 5, 3, 1, 1, 1, 0, 1);
            if (conv_run_case(&any, &c, 3) > 0)
                goto done;
        }
    }
done:
    g_conv_nan_w = g_conv_nan_x = -1;
    trtl_cpu_set_mask(~0u);
}

/* grouped_direct with the residual in the output's own memory (y = act(conv(x) + y)): its row stores write a
 * partial last vector whole where the extra lanes land on the next rows, which must not happen before those rows'
 * residual is read.  Output rows 7, 14, 5 and 3 wide (partial vectors spanning one and two rows), batch 2, on the
 * AVX-512, AVX2 and portable variants, one and three threads. */
static void test_conv_grouped_inplace_residual(void)
{
    static const int64_t sh[][3] = {{7, 7, 1}, {14, 14, 2}, {5, 5, 1}, {6, 6, 2}}; /* H, W, stride */
    for (int pass = 0; pass < 3; pass++) {
        if (!isa_pass_portable(pass))
            continue;
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            const int64_t N = 2, G = 3, C = 24, K = 24, H = sh[i][0], W = sh[i][1], s = sh[i][2];
            const int64_t OH = (H + 2 - 3) / s + 1, OW = (W + 2 - 3) / s + 1, nw = K * (C / G) * 9, ny = N * K * OH * OW;
            trtl_node nd = {0};
            nd.op = TRTL_OP_CONVOLUTION;
            nd.name = "conv";
            trtl_conv_params *p = &nd.p.conv;
            int64_t k2[2] = {3, 3}, s2[2] = {s, s}, one[2] = {1, 1};
            p->num_output_maps = (int32_t)K;
            p->num_groups = (int32_t)G;
            p->kernel_size = trtl_dims_make(2, k2);
            p->stride = trtl_dims_make(2, s2);
            p->dilation = p->pre_padding = p->post_padding = trtl_dims_make(2, one);
            float *w = rand_buf(nw), *b = rand_buf(K), *x = rand_buf(N * C * H * W), *r = rand_buf(ny);
            p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
            p->bias = (trtl_weights){TRTL_FLOAT, b, K};
            nd.epi.act = i % 2 ? TRTL_ACT_RELU : TRTL_ACT_SIGMOID; /* in registers / the pass after */
            nd.epi.has_residual = 1;
            nd.n_in = 2;
            nd.n_out = 1;
            int64_t xd[4] = {N, C, H, W}, yd[4] = {N, K, OH, OW};
            const trtl_dims ydims = trtl_dims_make(4, yd);
            trtl_tensor_view in[2] = {{x, trtl_dims_make(4, xd), TRTL_FLOAT}, {r, ydims, TRTL_FLOAT}};
            snprintf(g_desc, sizeof g_desc, "residual in the output, %lldx%lld s%lld act=%s", (long long)H,
                     (long long)W, (long long)s, act_name(nd.epi.act));
            trtl_status st;
            float *want = ref_output(trtl_ref_convolution, &nd, in, &ydims, &st);
            void *state = NULL;
            const trtl_kernel *k = &trtl_kernel_conv_grouped_direct;
            if (!want || k->prepare(&nd, &state) != TRTL_OK) {
                fprintf(stderr, "FAIL %s [%s]: %s\n", k->name, g_desc, trtl_last_error());
                g_failures++;
            } else {
                for (int pi = 0; pi < 3; pi += 2) {
                    float *y = malloc((size_t)ny * sizeof(float));
                    memcpy(y, r, (size_t)ny * sizeof(float));
                    trtl_tensor_view io[2] = {in[0], {y, ydims, TRTL_FLOAT}}, out = {y, ydims, TRTL_FLOAT};
                    size_t ss = k->scratch(&nd, io, &out);
                    float *scratch = nan_buf((int64_t)(ss / sizeof(float)) + 1);
                    trtl_kernel_args a = {&nd, io, &out, scratch, ss, state, g_pools[pi], NULL};
                    if (k->run(&a) != TRTL_OK) {
                        fprintf(stderr, "FAIL %s [%s]: run: %s\n", k->name, g_desc, trtl_last_error());
                        g_failures++;
                    } else {
                        compare(k->name, y, want, ny, pi);
                    }
                    g_cases++;
                    free(scratch);
                    free(y);
                }
                k->release(state);
            }
            free(want);
            free(w);
            free(b);
            free(x);
            free(r);
        }
    }
    trtl_cpu_set_mask(~0u);
}

/* ---- convolution.stem (x86/convolution_stem.c) ------------------------------------------------- */

extern const trtl_kernel trtl_kernel_conv_stem;

/* Dense convolutions with 1..16 input channels on the AVX-512, AVX2 and portable variants: the zoo's stems at small
 * maps with tails (3x3 s2 3 -> 32, 7x7 s2 3 -> 64, 3x3 s1 3 -> 16, 4x4 s4 patchify, 16x16 s16 patches), output rows
 * that end inside a vector and across tiles of 2 / 3 vectors, output channels past a register tile (K 5, 13, 1),
 * dilation, strides (3, 1) and 4, asymmetric / SAME padding, a 1x1, 1-D, batches of 2-3, every epilogue on the first
 * shapes; NaN weights and input; random shapes (C 1..16, kernel 1..7, strides 1..4, dilation 1..3, padding 0..3);
 * and a shape past the kernel's limits run without applies() (the reference fallback). */
static void test_conv_stem(int ncases)
{
    static const struct { int nsp; int64_t N, C, K, H, W, kh, kw, sh, sw, dh, dw, pre, post; int mode, all; } sh[] = {
        {2, 1, 3, 32, 37, 41, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1},  /* MobileNet / EfficientNet stem, odd map */
        {2, 1, 3, 64, 29, 35, 7, 7, 2, 2, 1, 1, 3, 3, 0, 1},  /* ResNet stem */
        {2, 2, 3, 16, 20, 51, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1},  /* U-Net / YOLO first layer, 51 = 3 x 16 + 3 columns */
        {2, 1, 3, 24, 19, 23, 4, 4, 4, 4, 1, 1, 0, 0, 0, 0},  /* ConvNeXt / Swin patchify */
        {2, 1, 3, 13, 35, 33, 16, 16, 16, 16, 1, 1, 0, 0, 0, 0}, /* ViT patches, K past a tile */
        {2, 3, 1, 5, 17, 18, 5, 5, 1, 1, 2, 2, 4, 3, 0, 0},   /* one channel, dilation 2, asymmetric */
        {2, 1, 16, 9, 12, 25, 3, 2, 3, 1, 1, 2, 1, 2, 0, 0},  /* C 16, stride (3, 1), dilation (1, 2) */
        {2, 2, 8, 12, 9, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   /* 1x1 */
        {2, 1, 4, 1, 14, 49, 3, 3, 2, 2, 1, 1, 0, 2, 2, 0},   /* K 1, SAME_UPPER, 25 outputs a row */
        {1, 2, 5, 7, 1, 70, 1, 5, 1, 2, 1, 1, 0, 2, 0, 0},    /* 1-D */
        {2, 1, 2, 33, 8, 100, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0},  /* 100 = 2 x 48 + 4 columns */
    };
    for (int pass = 0; pass < 3; pass++) {
        if (!isa_pass_portable(pass))
            continue;
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int step = sh[i].all ? (pass == 0 ? 1 : 3) : 7;
            for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
                conv_case c = {0};
                c.nsp = sh[i].nsp;
                c.N = sh[i].N;
                c.G = 1;
                c.C = sh[i].C;
                c.K = sh[i].K;
                const int o = sh[i].nsp == 2 ? 0 : 1; /* 1-D: the width only */
                int64_t v[6][2] = {{sh[i].H, sh[i].W}, {sh[i].kh, sh[i].kw}, {sh[i].sh, sh[i].sw},
                                   {sh[i].dh, sh[i].dw}, {sh[i].pre, sh[i].pre}, {sh[i].post, sh[i].post}};
                for (int d = 0; d < sh[i].nsp; d++) {
                    c.in[d] = v[0][d + o];
                    c.k[d] = v[1][d + o];
                    c.s[d] = v[2][d + o];
                    c.d[d] = v[3][d + o];
                    c.pre[d] = v[4][d + o];
                    c.post[d] = v[5][d + o];
                }
                c.mode = sh[i].mode;
                if (conv_fixed_case(&trtl_kernel_conv_stem, &c, (int)i, combo) > 0)
                    goto done;
            }
        }
        for (int i = 0, combo = (int)(rnd() % 64); i < (pass == 0 ? ncases / 3 : ncases / 6); i++, combo++) {
            conv_case c = {0};
            rand_stem_conv(&c, 3, 40, 3);
            int r = conv_run_case(&trtl_kernel_conv_stem, &c, combo);
            if (r < 0)
                i--;
            else if (r > 0)
                goto done;
        }
        {
            /* 20 input channels (past STEM_MAX_C): applies() refuses, run() computes the reference */
            trtl_kernel any = trtl_kernel_conv_stem;
            any.applies = NULL;
            conv_case c = conv2d(1, 20, 6, 1, 5, 5, 3, 1, 1, 1, 0, 1);
            if (conv_run_case(&any, &c, 3) > 0)
                goto done;
        }
    }
done:
    g_conv_nan_w = g_conv_nan_x = -1;
    trtl_cpu_set_mask(~0u);
}

/* ---- convolution.1x1_direct (x86/convolution_1x1.c) -------------------------------------------- */

extern const trtl_kernel trtl_kernel_conv_1x1_direct;

/* Pointwise convolutions on the AVX-512 variant and on AVX2 (AVX-512 masked off): MobileNet shapes (49 = 3 x 16 + 1
 * and 196 = 12 x 16 + 4 pixels: extra columns; 784, 3136: whole vectors), every remainder of a vector 0..15 (extra
 * columns up to 4, masked vectors past them), maps smaller than a vector, output channels past a panel of 8 (K
 * tails, K < 8), batches, 1-D and 3-D 1x1, every epilogue on the first shapes; then random shapes; NaN and Inf in
 * the activations propagate as the reference's. */
/* The registered kernel where its applies() takes case c, else `any` (the same kernel without applies()). */
static const trtl_kernel *pw_kernel(const trtl_kernel *any, const conv_case *c)
{
    int64_t xd[5] = {c->N, c->C}, one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
    for (int d = 0; d < c->nsp; d++)
        xd[2 + d] = c->in[d];
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = "conv";
    nd.p.conv.num_output_maps = (int32_t)c->K;
    nd.p.conv.num_groups = 1;
    nd.p.conv.kernel_size = nd.p.conv.stride = trtl_dims_make(c->nsp, one);
    nd.p.conv.dilation = trtl_dims_make(c->nsp, c->d);
    nd.p.conv.pre_padding = nd.p.conv.post_padding = trtl_dims_make(c->nsp, zero);
    nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, c->K * c->C};
    trtl_dims xdims = trtl_dims_make(c->nsp + 2, xd);
    return trtl_kernel_conv_1x1_direct.applies(&nd, &xdims) ? &trtl_kernel_conv_1x1_direct : any;
}

static void test_conv_1x1(int ncases)
{
    static const struct { int64_t N, C, K, H, W; int nsp, all; } sh[] = {
        {1, 160, 960, 7, 7, 2, 1}, {1, 960, 160, 7, 7, 2, 0},  {1, 96, 576, 14, 14, 2, 1}, {1, 24, 144, 56, 56, 2, 0},
        {2, 19, 13, 1, 50, 2, 1},  {1, 7, 5, 3, 6, 2, 0},      {3, 33, 17, 1, 20, 1, 0},   {1, 5, 70, 1, 1, 2, 0},
        {2, 40, 9, 28, 28, 2, 0},  {1, 17, 31, 2, 3, 3, 0},    {1, 64, 64, 1, 47, 2, 0},   {1, 11, 3, 1, 35, 1, 0},
    };
    trtl_kernel any = trtl_kernel_conv_1x1_direct; /* shapes applies() leaves to other kernels: run() computes them */
    any.applies = NULL;
    {
        /* applies(): small maps yes, maps past 32x32 no, 7x7 with a short depth no (what the builder would time) */
        static const struct { int64_t C, H, W; int want; } ap[] = {
            {960, 7, 7, 1}, {160, 7, 7, 0}, {64, 14, 14, 1}, {32, 28, 28, 1}, {24, 56, 56, 0}, {16, 112, 112, 0}};
        for (size_t i = 0; i < sizeof ap / sizeof ap[0]; i++) {
            trtl_node nd = {0};
            int64_t one[2] = {1, 1}, zero[2] = {0, 0}, xd[4] = {1, ap[i].C, ap[i].H, ap[i].W};
            nd.op = TRTL_OP_CONVOLUTION;
            nd.name = "conv";
            nd.p.conv.num_output_maps = 32;
            nd.p.conv.num_groups = 1;
            nd.p.conv.kernel_size = nd.p.conv.stride = nd.p.conv.dilation = trtl_dims_make(2, one);
            nd.p.conv.pre_padding = nd.p.conv.post_padding = trtl_dims_make(2, zero);
            nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, 32 * ap[i].C};
            trtl_dims xdims = trtl_dims_make(4, xd);
            if (trtl_kernel_conv_1x1_direct.applies(&nd, &xdims) != ap[i].want) {
                fprintf(stderr, "FAIL convolution.1x1_direct applies() on C=%lld %lldx%lld: %d, want %d\n",
                        (long long)ap[i].C, (long long)ap[i].H, (long long)ap[i].W, !ap[i].want, ap[i].want);
                g_failures++;
                return;
            }
        }
    }
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int step = sh[i].all ? (pass == 0 ? 1 : 3) : 5;
            for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
                conv_case c = {0};
                c.nsp = sh[i].nsp;
                c.N = sh[i].N;
                c.C = sh[i].C;
                c.K = sh[i].K;
                c.G = 1;
                for (int d = 0; d < c.nsp; d++) {
                    c.in[d] = d == c.nsp - 1 ? sh[i].W : d == c.nsp - 2 ? sh[i].H : 2;
                    c.k[d] = c.s[d] = c.d[d] = 1;
                }
                c.bias = combo % 3 != 2;
                if (conv_run_case(pw_kernel(&any, &c), &c, combo) > 0)
                    goto done;
            }
        }
        for (int64_t w = 1; w <= 37; w++) { /* every remainder of 16 and 8, with and without whole vectors */
            conv_case c = {0};
            c.nsp = 2;
            c.N = 1;
            c.C = 1 + w % 5;
            c.K = 1 + w % 11;
            c.G = 1;
            c.in[0] = w > 18 ? 2 : 1;
            c.in[1] = w;
            c.k[0] = c.k[1] = c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
            c.bias = (int)(w % 2);
            if (conv_run_case(pw_kernel(&any, &c), &c, (int)w) > 0)
                goto done;
        }
        for (int i = 0, combo = (int)(rnd() % 64); i < ncases / 4; i++, combo++) {
            conv_case c = {0};
            c.nsp = (int)rint_in(1, 3);
            c.N = rint_in(1, 3);
            c.C = rint_in(1, 70);
            c.K = rint_in(1, 40);
            c.G = 1;
            c.bias = (int)(rnd() % 4 != 0);
            for (int d = 0; d < c.nsp; d++) {
                c.in[d] = rint_in(1, c.nsp == 1 ? 120 : 15);
                c.k[d] = c.s[d] = 1;
                c.d[d] = rint_in(1, 2);
            }
            if (conv_run_case(pw_kernel(&any, &c), &c, combo) > 0)
                goto done;
        }
        {
            /* NaN and +-Inf in the activations: they reach exactly the outputs the reference gives them */
            trtl_node nd = {0};
            int64_t C = 6, K = 11, H = 7, W = 7, P = H * W;
            int64_t xd[4] = {1, C, H, W}, yd[4] = {1, K, H, W}, one[2] = {1, 1};
            float *w = rand_buf(K * C), *x = rand_buf(C * P);
            x[2 * P + 5] = NAN;
            x[4 * P + 48] = INFINITY; /* an extra column */
            x[0 * P + 20] = -INFINITY;
            nd.op = TRTL_OP_CONVOLUTION;
            nd.name = "conv";
            nd.p.conv.num_output_maps = (int32_t)K;
            nd.p.conv.num_groups = 1;
            nd.p.conv.kernel_size = trtl_dims_make(2, one);
            nd.p.conv.stride = trtl_dims_make(2, one);
            nd.p.conv.dilation = trtl_dims_make(2, one);
            int64_t zero[2] = {0, 0};
            nd.p.conv.pre_padding = trtl_dims_make(2, zero);
            nd.p.conv.post_padding = trtl_dims_make(2, zero);
            nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, w, K * C};
            nd.n_in = nd.n_out = 1;
            nd.epi.act = TRTL_ACT_CLIP;
            nd.epi.alpha = 0.0f;
            nd.epi.beta = 6.0f;
            trtl_dims xdims = trtl_dims_make(4, xd), ydims = trtl_dims_make(4, yd);
            trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
            snprintf(g_desc, sizeof g_desc, "1x1 with NaN / Inf inputs, clip 0..6");
            trtl_status st;
            float *want = ref_output(trtl_ref_convolution, &nd, in, &ydims, &st);
            int bad = want ? run_opt(&any, &nd, in, &ydims, want) : 1;
            if (!want) {
                fprintf(stderr, "FAIL reference convolution [%s]: %s\n", g_desc, trtl_last_error());
                g_failures++;
            }
            free(want);
            free(w);
            free(x);
            if (bad)
                goto done;
        }
    }
done:
    trtl_cpu_set_mask(~0u);
}

/* ---- convolution.1x1_block (x86/convolution_1x1_block.c) ---------------------------------------- */

extern const trtl_kernel trtl_kernel_conv_1x1_block;

/* Pointwise convolutions over pixel blocks, AVX-512 and AVX2 (AVX-512 masked off): maps of several blocks with a
 * short last block (C = 64: blocks of 504 / 480 pixels; C = 300: one chunk a block), strides 2 and 3 in the width
 * and height with odd input widths (the vector gather of the even lanes must stop inside the row), 1-D and 3-D,
 * K tails, batches, every epilogue; then random shapes with strides 1..3; applies() refuses padding, groups and
 * windows past 1x1. */
static void test_conv_1x1_block(int ncases)
{
    static const struct { int64_t N, C, K, D, H, W, sd, sh, sw; int nsp, all; } sh[] = {
        {1, 64, 20, 1, 41, 40, 1, 1, 1, 2, 1}, {1, 32, 13, 1, 30, 31, 1, 2, 2, 2, 1}, {2, 300, 9, 1, 7, 9, 1, 1, 1, 2, 0},
        {1, 16, 35, 1, 57, 57, 1, 2, 2, 2, 0}, {1, 5, 7, 1, 1, 101, 1, 1, 3, 1, 0},   {1, 7, 11, 5, 6, 7, 2, 2, 2, 3, 0},
        {3, 9, 4, 1, 9, 10, 1, 3, 2, 2, 0},    {1, 256, 33, 1, 14, 14, 1, 2, 2, 2, 0}, {1, 3, 70, 1, 2, 2, 1, 1, 1, 2, 0},
        /* blocks evened out over the threads (pb_balance): 28x28 at C = 48 (was 672 + 112 pixels), 14x14 at
         * C = 208 (144 + 52), 3 images of 2 blocks */
        {1, 48, 20, 1, 55, 55, 1, 2, 2, 2, 0}, {1, 208, 21, 1, 14, 14, 1, 1, 1, 2, 0}, {3, 208, 9, 1, 13, 15, 1, 1, 1, 2, 0},
        /* blocks of several whole maps (RegNetY's 14x14 / 7x7 at batch 8: 7 and 4 images, 5 x 35 pixels), maps of
         * 49 and 35 pixels that end in AVX-512 extra pixels in the last chunk's panel, and 120 = 5 whole chunks */
        {8, 104, 23, 1, 27, 27, 1, 2, 2, 2, 0}, {8, 208, 11, 1, 13, 13, 1, 2, 2, 2, 0}, {5, 24, 13, 1, 5, 7, 1, 1, 1, 2, 0},
        {4, 40, 6, 1, 10, 12, 1, 1, 1, 2, 0},
        /* C >= 1024: blocks of one chunk with dense rows (pb_rs); 9x9: a last block of 33 pixels (AVX-512: 2 vectors
         * and an extra pixel, in a row of 52 floats), stride 2, batches, a 1-D map of 77 */
        {2, 1024, 13, 1, 9, 9, 1, 1, 1, 2, 0}, {2, 1030, 9, 1, 13, 13, 1, 2, 2, 2, 0}, {1, 1024, 5, 1, 1, 77, 1, 1, 1, 1, 0},
    };
    {
        /* post: post-padding (pre-padding is pad): outputs past the input (a bad read before the check) */
        static const struct { int64_t k, s, pad, G; int want; int64_t post; } ap[] = {
            {1, 1, 0, 1, 1, 0}, {1, 2, 0, 1, 1, 0}, {1, 3, 0, 1, 1, 0}, {1, 1, 1, 1, 0, 1}, {3, 1, 0, 1, 0, 0},
            {1, 1, 0, 2, 0, 0}, {1, 1, 0, 1, 0, 1}, {1, 2, 0, 1, 0, 1}, {1, 3, 0, 1, 0, 1}};
        for (size_t i = 0; i < sizeof ap / sizeof ap[0]; i++) {
            trtl_node nd = {0};
            int64_t k[2] = {ap[i].k, ap[i].k}, st[2] = {ap[i].s, ap[i].s}, pad[2] = {ap[i].pad, ap[i].pad};
            int64_t post[2] = {ap[i].post, ap[i].post};
            int64_t one[2] = {1, 1}, xd[4] = {1, 8, 12, 12};
            nd.op = TRTL_OP_CONVOLUTION;
            nd.name = "conv";
            nd.p.conv.num_output_maps = 16;
            nd.p.conv.num_groups = (int32_t)ap[i].G;
            nd.p.conv.kernel_size = trtl_dims_make(2, k);
            nd.p.conv.stride = trtl_dims_make(2, st);
            nd.p.conv.dilation = trtl_dims_make(2, one);
            nd.p.conv.pre_padding = trtl_dims_make(2, pad);
            nd.p.conv.post_padding = trtl_dims_make(2, post);
            nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, 16 * 8 / ap[i].G * ap[i].k * ap[i].k};
            trtl_dims xdims = trtl_dims_make(4, xd);
            if (trtl_kernel_conv_1x1_block.applies(&nd, &xdims) != ap[i].want) {
                fprintf(stderr,
                        "FAIL convolution.1x1_block applies() on k=%lld s=%lld pad=%lld/%lld G=%lld: %d, want %d\n",
                        (long long)ap[i].k, (long long)ap[i].s, (long long)ap[i].pad, (long long)ap[i].post,
                        (long long)ap[i].G, !ap[i].want, ap[i].want);
                g_failures++;
                return;
            }
        }
    }
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int step = sh[i].all ? (pass == 0 ? 1 : 3) : 5;
            for (int combo = (int)i; combo < (int)i + 2 * N_ACTS; combo += step) {
                conv_case c = {0};
                c.nsp = sh[i].nsp;
                c.N = sh[i].N;
                c.C = sh[i].C;
                c.K = sh[i].K;
                c.G = 1;
                const int64_t in[3] = {sh[i].D, sh[i].H, sh[i].W}, s[3] = {sh[i].sd, sh[i].sh, sh[i].sw};
                for (int d = 0; d < c.nsp; d++) {
                    c.in[d] = in[3 - c.nsp + d];
                    c.s[d] = s[3 - c.nsp + d];
                    c.k[d] = c.d[d] = 1;
                }
                c.bias = combo % 3 != 2;
                if (conv_run_case(&trtl_kernel_conv_1x1_block, &c, combo) > 0)
                    goto done;
            }
        }
        for (int i = 0, combo = (int)(rnd() % 64); i < ncases / 4; i++, combo++) {
            conv_case c = {0};
            c.nsp = (int)rint_in(1, 3);
            c.N = rint_in(1, 3);
            c.C = rint_in(1, 90);
            c.K = rint_in(1, 40);
            c.G = 1;
            c.bias = (int)(rnd() % 4 != 0);
            for (int d = 0; d < c.nsp; d++) {
                c.in[d] = rint_in(1, c.nsp == 1 ? 300 : c.nsp == 2 ? 40 : 9);
                c.k[d] = 1;
                c.s[d] = rint_in(1, 3);
                c.d[d] = rint_in(1, 2);
            }
            if (conv_run_case(&trtl_kernel_conv_1x1_block, &c, combo) > 0)
                goto done;
        }
        g_conv_nan_x = 3 * 40 * 41 + 17; /* a NaN activation (channel 3) reaches its pixel's outputs */
        {
            conv_case c = {0};
            c.nsp = 2;
            c.N = 1;
            c.C = 64;
            c.K = 12;
            c.G = 1;
            c.in[0] = 41;
            c.in[1] = 40;
            c.k[0] = c.k[1] = c.s[0] = c.s[1] = c.d[0] = c.d[1] = 1;
            c.bias = 1;
            int r = conv_run_case(&trtl_kernel_conv_1x1_block, &c, 5);
            g_conv_nan_x = -1;
            if (r > 0)
                goto done;
        }
    }
done:
    g_conv_nan_x = -1;
    trtl_cpu_set_mask(~0u);
}

/* ---- reduce over any axes (x86/reduce_axes.c) ----------------------------------------------- */

extern const trtl_kernel trtl_kernel_reduce_axes;

/* Reduces the axes of `axes` of x (keep_dims or not) with `op` on reduce.axes; `nan_at` >= 0 puts a
 * NaN there, `inf_at` >= 0 a -inf (MAX must keep it where nothing is larger).  Returns 1 on failure. */
static int reduce_axes_case(int op, int rank, const int64_t *d, uint32_t axes, int keep, int64_t nan_at,
                            int64_t inf_at)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_REDUCE;
    nd.name = "reduce";
    nd.epi = no_epilogue();
    nd.p.reduce.op = op;
    nd.p.reduce.keep_dims = keep;
    nd.p.reduce.axes = axes;
    int64_t yd[TRTL_MAX_DIMS];
    int ny = 0;
    for (int i = 0; i < rank; i++)
        if (!(axes >> i & 1u) || keep)
            yd[ny++] = axes >> i & 1u ? 1 : d[i];
    trtl_dims xdims = trtl_dims_make(rank, d), ydims = trtl_dims_make(ny, yd);
    int64_t nx = trtl_volume(&xdims);
    float *x = rand_buf(nx);
    if (op == TRTL_RED_PROD) /* products of many values in [-1, 1) vanish: keep them near 1 */
        for (int64_t i = 0; i < nx; i++)
            x[i] = 1.0f + 0.05f * x[i];
    if (nan_at >= 0 && nan_at < nx)
        x[nan_at] = NAN;
    if (inf_at >= 0 && inf_at < nx)
        x[inf_at] = op == TRTL_RED_MIN ? INFINITY : -INFINITY;
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    nd.n_in = nd.n_out = 1;
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s -> y%s op=%d axes=0x%x keep_dims=%d nan_at=%lld inf_at=%lld",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), op, (unsigned)axes, keep,
             (long long)nan_at, (long long)inf_at);
    trtl_status st;
    float *want = ref_output(trtl_ref_reduce, &nd, in, &ydims, &st);
    int r;
    if (!want) {
        fprintf(stderr, "FAIL reference reduce [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        r = 1;
    } else {
        r = run_opt(&trtl_kernel_reduce_axes, &nd, in, &ydims, want);
    }
    free(want);
    free(x);
    return r;
}

/* applies(): any constant axes but a trailing block (reduce.inner's). */
static void test_reduce_axes_applies(void)
{
    static const struct { uint32_t axes; int rank, want; } c[] = {
        {0x4, 4, 1}, {0x6, 4, 1}, {0x5, 3, 1}, {0x1, 2, 1}, {0xa, 4, 1}, {0x3, 3, 1},
        {0xc, 4, 0}, {0x8, 4, 0}, {0xf, 4, 0}, {0x0, 3, 0}, {0x10, 4, 0}, {0x1, 1, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        trtl_node nd = {0};
        nd.name = "applies";
        nd.op = TRTL_OP_REDUCE;
        nd.n_in = 1;
        nd.p.reduce.axes = c[i].axes;
        int64_t xd[4] = {2, 3, 4, 5};
        trtl_dims in = trtl_dims_make(c[i].rank, xd);
        int got = trtl_kernel_reduce_axes.applies(&nd, &in);
        if (got != c[i].want) {
            fprintf(stderr, "FAIL applies reduce.axes case %zu: says %d (want %d)\n", i, got, c[i].want);
            g_failures++;
        }
        g_cases++;
    }
}

/* Every op on: AdderNet's channel sums (kept rows of 576 and 64), rows past the 128-wide block with
 * every vector tail, two reduced groups around a kept one (rows and runs forms), size-1 and empty
 * dims, one element per output; NaNs and infinities for MAX / MIN; then random shapes and axes. */
static void test_reduce_axes(int ncases)
{
    static const struct { int rank; int64_t d[5]; uint32_t axes; } sh[] = {
        {5, {1, 2, 9, 24, 24}, 0x4},  {5, {1, 3, 50, 8, 8}, 0x4}, {2, {7, 300}, 0x1},   {2, {5, 177}, 0x1},
        {3, {3, 9, 47}, 0x2},         {3, {2, 5, 15}, 0x2},       {4, {3, 4, 5, 6}, 0x5}, {4, {3, 4, 5, 6}, 0xa},
        {4, {3, 4, 5, 6}, 0x9},       {4, {3, 4, 5, 6}, 0xb},     {4, {3, 4, 5, 6}, 0x3}, {5, {2, 3, 2, 5, 33}, 0xb},
        {4, {2, 1, 5, 1}, 0x5},       {3, {4, 1, 6}, 0x2},        {3, {4, 0, 6}, 0x2},    {3, {0, 3, 6}, 0x2},
        {4, {1, 1, 1, 1}, 0x3},       {3, {2, 70, 3}, 0x2},       {3, {900, 2, 3}, 0x1},  {2, {3, 2000}, 0x1},
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int op = 0; op < TRTL_RED_COUNT; op++)
            for (int keep = 0; keep < 2; keep++)
                if (reduce_axes_case(op, sh[i].rank, sh[i].d, sh[i].axes, keep, -1, -1))
                    return;
    static const int64_t nd1[3] = {3, 21, 37}, nd2[4] = {3, 4, 5, 21};
    for (int op = TRTL_RED_MAX; op <= TRTL_RED_MIN; op++)
        for (int64_t at = 0; at < 3 * 21 * 37; at += 97)
            if (reduce_axes_case(op, 3, nd1, 0x2, 1, at, at + 40) || reduce_axes_case(op, 3, nd1, 0x5, 0, at, at + 40) ||
                reduce_axes_case(op, 4, nd2, 0xa, 0, at, at + 40) || reduce_axes_case(op, 3, nd1, 0x1, 0, -1, at))
                return;
    for (int i = 0; i < ncases; i++) {
        int rank = (int)rint_in(2, 5);
        int64_t d[5], total;
        uint32_t axes;
        do { /* at most 20k elements, not a trailing block of axes */
            total = 1;
            for (int j = 0; j < rank; j++) {
                d[j] = rint_in(1, rnd() % 3 == 0 ? 40 : 9);
                total *= d[j];
            }
            axes = rnd() & ((1u << rank) - 1);
        } while (total > 20000 || !trtl_kernel_reduce_axes.applies(&(trtl_node){.n_in = 1, .p.reduce.axes = axes},
                                                                     &(trtl_dims){.nb_dims = rank}));
        int op = (int)(rnd() % TRTL_RED_COUNT);
        if (reduce_axes_case(op, rank, d, axes, (int)(rnd() % 2), rnd() % 6 == 0 ? rint_in(0, 50) : -1, -1))
            return;
    }
}

/* ---- reduce of an elementwise result (x86/reduce_binary.c) ------------------------------------ */

extern const trtl_kernel trtl_kernel_reduce_binary_rows;

/* y = reduce op over `axes` of unary(a ew b), a of dims da and b of dims db (equal rank, broadcasting), on
 * reduce_binary.rows vs the reference; `nan_at` >= 0 puts a NaN into a there.  Returns 1 on failure, 0 also
 * when the kernel does not take the shapes (the caller counts those). */
static int reduce_binary_case(int ew, int un, int op, int rank, const int64_t *da, const int64_t *db, uint32_t axes,
                              int keep, int64_t nan_at, int *taken)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_REDUCE_BINARY;
    nd.name = "reduce_binary";
    nd.epi = no_epilogue();
    nd.p.rbin.ew_op = ew;
    nd.p.rbin.unary_op = un;
    nd.p.rbin.op = op;
    nd.p.rbin.axes = axes;
    nd.p.rbin.keep_dims = keep;
    nd.n_in = 2;
    nd.n_out = 1;
    int64_t yd[TRTL_MAX_DIMS];
    int ny = 0;
    for (int i = 0; i < rank; i++)
        if (!(axes >> i & 1u) || keep)
            yd[ny++] = axes >> i & 1u ? 1 : (da[i] == 1 ? db[i] : da[i]);
    trtl_dims adims = trtl_dims_make(rank, da), bdims = trtl_dims_make(rank, db), ydims = trtl_dims_make(ny, yd);
    trtl_dims both[2] = {adims, bdims};
    *taken = trtl_kernel_reduce_binary_rows.applies(&nd, both);
    if (!*taken)
        return 0;
    int64_t na = trtl_volume(&adims), nb = trtl_volume(&bdims);
    float *a = rand_buf(na), *b = rand_buf(nb);
    if (op == TRTL_RED_PROD) /* keep long products near 1 */
        for (int64_t i = 0; i < nb; i++)
            b[i] = ew == TRTL_EW_PROD ? 1.0f + 0.01f * b[i] : 0.05f * b[i];
    if (op == TRTL_RED_PROD)
        for (int64_t i = 0; i < na; i++)
            a[i] = ew == TRTL_EW_SUB ? 1.0f + 0.05f * a[i] : ew == TRTL_EW_SUM ? 1.0f + 0.05f * a[i] : 1.0f + 0.01f * a[i];
    if (nan_at >= 0 && nan_at < na)
        a[nan_at] = NAN;
    trtl_tensor_view in[2] = {{a, adims, TRTL_FLOAT}, {b, bdims, TRTL_FLOAT}};
    char as[TRTL_DIMS_STR_MAX], bs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "a%s ew%d b%s unary=%d -> y%s op=%d axes=0x%x keep_dims=%d nan_at=%lld",
             trtl_dims_str(&adims, as, sizeof as), ew, trtl_dims_str(&bdims, bs, sizeof bs), un,
             trtl_dims_str(&ydims, ys, sizeof ys), op, (unsigned)axes, keep, (long long)nan_at);
    trtl_status st;
    float *want = ref_output(trtl_ref_reduce_binary, &nd, in, &ydims, &st);
    int r;
    if (!want) {
        fprintf(stderr, "FAIL reference reduce_binary [%s]: %s\n", g_desc, trtl_last_error());
        g_failures++;
        r = 1;
    } else {
        r = run_opt(&trtl_kernel_reduce_binary_rows, &nd, in, &ydims, want);
    }
    free(want);
    free(a);
    free(b);
    return r;
}

/* AdderNet's two layers (scaled down), both operands along the row, the row a broadcast of b, reduced groups
 * on both sides of a kept one, every vector tail; NaNs; applies() refusing a reduced last group; random
 * shapes and axes. */
static void test_reduce_binary(int ncases)
{
    static const struct { int rank; int64_t a[5], b[5]; uint32_t axes; int want; } sh[] = {
        {5, {1, 1, 9, 24, 24}, {1, 3, 9, 1, 1}, 0x4, 1},   {5, {1, 1, 50, 8, 8}, {1, 3, 50, 1, 1}, 0x4, 1},
        {5, {2, 1, 9, 3, 5}, {1, 4, 9, 1, 1}, 0x4, 1},     {3, {3, 9, 131}, {3, 9, 131}, 0x2, 1},
        {3, {3, 9, 1}, {1, 9, 77}, 0x2, 1},                {4, {3, 4, 1, 9}, {1, 4, 5, 9}, 0x5, 1},
        {4, {3, 4, 5, 17}, {3, 1, 5, 1}, 0x5, 1},           {2, {40, 33}, {40, 1}, 0x1, 1},
        {3, {2, 5, 7}, {1, 5, 7}, 0x4, 0},                  {3, {2, 5, 7}, {2, 5, 1}, 0x6, 0},
        {2, {5, 7}, {5, 7}, 0x0, 0},
    };
    static const int ews[3] = {TRTL_EW_SUB, TRTL_EW_SUM, TRTL_EW_PROD};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int op = 0; op < TRTL_RED_COUNT; op++)
            for (int un = 0; un < 2; un++) { /* each elementwise op in turn */
                int taken, e = (int)((op + un + i) % 3);
                if (reduce_binary_case(ews[e], un ? TRTL_UN_ABS : -1, op, sh[i].rank, sh[i].a, sh[i].b, sh[i].axes,
                                       (op + e) % 2, -1, &taken))
                    return;
                if (taken != sh[i].want) {
                    fprintf(stderr, "FAIL applies reduce_binary.rows shape case %zu: says %d (want %d)\n", i, taken,
                            sh[i].want);
                    g_failures++;
                    return;
                }
            }
    static const int64_t na[4] = {3, 4, 5, 21}, nb[4] = {1, 4, 5, 1};
    for (int op = TRTL_RED_MAX; op <= TRTL_RED_MIN; op++)
        for (int64_t at = 0; at < 3 * 4 * 5 * 21; at += 61) {
            int taken;
            if (reduce_binary_case(TRTL_EW_SUB, TRTL_UN_ABS, op, 4, na, nb, 0x5, 1, at, &taken) ||
                reduce_binary_case(TRTL_EW_SUB, -1, op, 4, na, nb, 0x2, 0, at, &taken))
                return;
        }
    for (int i = 0, done = 0; done < ncases && i < 50 * ncases; i++) {
        int rank = (int)rint_in(2, 5), taken;
        int64_t a[5], b[5], total = 1;
        for (int j = 0; j < rank; j++) {
            int64_t d = rint_in(1, rnd() % 3 == 0 ? 40 : 9);
            int k = (int)(rnd() % 3); /* 0: both, 1: a only, 2: b only */
            a[j] = k == 2 ? 1 : d;
            b[j] = k == 1 ? 1 : d;
            total *= d;
        }
        if (total > 20000)
            continue;
        uint32_t axes = rnd() & ((1u << rank) - 1);
        if (reduce_binary_case(ews[rnd() % 3], rnd() % 2 ? TRTL_UN_ABS : -1, (int)(rnd() % TRTL_RED_COUNT), rank, a, b,
                               axes, (int)(rnd() % 2), rnd() % 6 == 0 ? rint_in(0, 50) : -1, &taken))
            return;
        done += taken;
    }
}

/* ---- reshape as a view (x86/inplace.c, shuffle.inplace) --------------------------------------- */

extern const trtl_kernel trtl_kernel_shuffle_inplace;

/* A reshape [2, 6, 5] -> [2, 2, 3, 5]: with the output on the input's bytes nothing is written (the values stay);
 * elsewhere it copies as the reference shuffle does (its applies() says no: a pass chooses it). */
static void test_shuffle_inplace(void)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_SHUFFLE;
    nd.name = "reshape";
    nd.epi = no_epilogue();
    nd.n_in = nd.n_out = 1;
    nd.p.shuffle.zero_is_placeholder = 1;
    static const int64_t xd[3] = {2, 6, 5}, yd[4] = {2, 2, 3, 5};
    nd.p.shuffle.reshape_dims = trtl_dims_make(4, yd);
    trtl_dims xdims = trtl_dims_make(3, xd), ydims = trtl_dims_make(4, yd);
    float *x = rand_buf(60), *keep = malloc(60 * sizeof(float));
    memcpy(keep, x, 60 * sizeof(float));
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}};
    snprintf(g_desc, sizeof g_desc, "reshape x(2, 6, 5) -> y(2, 2, 3, 5)");
    trtl_kernel ip = *&trtl_kernel_shuffle_inplace;
    ip.applies = NULL;
    if (!ref_vs(&ip, trtl_ref_shuffle, &nd, in, &ydims)) {
        trtl_tensor_view out = {x, ydims, TRTL_FLOAT};
        trtl_kernel_args a = {&nd, in, &out, NULL, 0, NULL, g_pools[1], NULL};
        if (ip.run(&a) != TRTL_OK || memcmp(x, keep, 60 * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL shuffle.inplace [%s]: in place it changed its input\n", g_desc);
            g_failures++;
        }
        g_cases++;
    }
    int64_t bad[2] = {3, 20};
    trtl_dims bdims = trtl_dims_make(2, bad);
    if (trtl_inplace_shuffle_is_reshape(&nd.p.shuffle, &xdims, &ydims) != 1 ||
        trtl_inplace_shuffle_is_reshape(&nd.p.shuffle, &xdims, &bdims) != 1) {
        fprintf(stderr, "FAIL trtl_inplace_shuffle_is_reshape: a reshape of equal volume not recognised\n");
        g_failures++;
    }
    static const int64_t perm[3] = {0, 2, 1};
    nd.p.shuffle.first_transpose = trtl_dims_make(3, perm);
    if (trtl_inplace_shuffle_is_reshape(&nd.p.shuffle, &xdims, &ydims) != 0) {
        fprintf(stderr, "FAIL trtl_inplace_shuffle_is_reshape: a transpose taken for a reshape\n");
        g_failures++;
    }
    g_cases += 2;
    free(x);
    free(keep);
    /* transposes that move only axes of extent 1 (the ONNX importer's Squeeze / Unsqueeze of dynamic shapes): the
     * same bytes, so views; a transpose of two longer axes, or a malformed permutation, is not */
    static const struct {
        int64_t x[5], y[5], first[5], second[5];
        int xr, yr, fr, sr, want;
    } cases[] = {
        {{1, 4, 3, 5}, {4, 3, 5}, {1, 2, 3, 0}, {0}, 4, 3, 4, 0, 1},       /* squeeze axis 0 */
        {{4, 1, 3, 5}, {4, 3, 5}, {0, 2, 3, 1}, {0}, 4, 3, 4, 0, 1},       /* squeeze axis 1 */
        {{4, 3, 5}, {1, 4, 3, 5}, {0}, {3, 0, 1, 2}, 3, 4, 0, 4, 1},       /* unsqueeze: 1s placed by the second */
        {{4, 1, 3, 1}, {4, 3, 1, 1}, {0, 3, 2, 1}, {0}, 4, 4, 4, 0, 1},    /* 1s swapped around a longer axis */
        {{1, 4, 3, 5}, {3, 4, 5}, {2, 1, 3, 0}, {0}, 4, 3, 4, 0, 0},       /* 4 and 3 swapped */
        {{4, 3, 5}, {1, 3, 4, 5}, {0}, {3, 1, 0, 2}, 3, 4, 0, 4, 0},       /* the second swaps 4 and 3 */
        {{1, 4, 3, 5}, {4, 3, 5}, {1, 1, 3, 0}, {0}, 4, 3, 4, 0, 0},       /* not a permutation */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trtl_node sq = nd;
        sq.p.shuffle.first_transpose = trtl_dims_make(cases[c].fr, cases[c].first);
        sq.p.shuffle.second_transpose = trtl_dims_make(cases[c].sr, cases[c].second);
        trtl_dims cx = trtl_dims_make(cases[c].xr, cases[c].x), cy = trtl_dims_make(cases[c].yr, cases[c].y);
        /* the reshape between the transposes: the first's result reshaped to what the second permutes */
        trtl_dims mid = cy;
        for (int k = 0; k < cases[c].sr; k++)
            mid.d[cases[c].second[k]] = cases[c].y[k];
        sq.p.shuffle.reshape_dims = mid;
        if (trtl_inplace_shuffle_is_reshape(&sq.p.shuffle, &cx, &cy) != cases[c].want) {
            fprintf(stderr, "FAIL trtl_inplace_shuffle_is_reshape: case %zu gives %d\n", c, !cases[c].want);
            g_failures++;
        }
        g_cases++;
        if (cases[c].want) {
            float *v = rand_buf(60), *v0 = malloc(60 * sizeof(float));
            memcpy(v0, v, 60 * sizeof(float));
            trtl_tensor_view vin[1] = {{v, cx, TRTL_FLOAT}};
            snprintf(g_desc, sizeof g_desc, "shuffle moving 1s, case %zu", c);
            if (!ref_vs(&ip, trtl_ref_shuffle, &sq, vin, &cy)) { /* copying: the reference's values */
                trtl_tensor_view out = {v, cy, TRTL_FLOAT};
                trtl_kernel_args a = {&sq, vin, &out, NULL, 0, NULL, g_pools[1], NULL};
                if (ip.run(&a) != TRTL_OK || memcmp(v, v0, 60 * sizeof(float)) != 0) {
                    fprintf(stderr, "FAIL shuffle.inplace [%s]: in place it changed its input\n", g_desc);
                    g_failures++;
                }
                g_cases++;
            }
            free(v);
            free(v0);
        }
    }
}

/* ---- pw_chain.simd (x86/pw_chain.c, the PW_CHAIN op) ---------------------------------------------------------- */

extern const trtl_kernel trtl_kernel_pw_chain_simd;

/* Random programs (2-10 ops: unary, activation, elementwise either way round with 1-3 operands broadcast along random
 * axes; ops without jumps, so that the vector math's few ulp stay within tolerance) on random dims with tails, past
 * the 512-float tile and the pool's chunk, against trtl_ref_pw_chain (the steps' reference kernels in turn). */
static void test_pw_chain(int ncases)
{
    static const int32_t un[] = {TRTL_UN_ABS, TRTL_UN_NEG, TRTL_UN_ERF, TRTL_UN_EXP};
    static const int32_t bin[] = {TRTL_EW_SUM, TRTL_EW_PROD, TRTL_EW_MAX, TRTL_EW_MIN, TRTL_EW_SUB};
    int redraws = 0;
    for (int c = 0; c < ncases; c++) {
        trtl_dims d = c == 0 ? (trtl_dims){3, {2, 3, 3001}} : pw_rand_dims(60000);
        const int n_in = 2 + (int)(rnd() % 3);
        trtl_tensor_view in[4];
        for (int k = 0; k < n_in; k++) {
            trtl_dims e = d;
            for (int a = 0; k > 0 && a < d.nb_dims; a++)
                if (rnd() % 2)
                    e.d[a] = 1;
            in[k] = (trtl_tensor_view){pw_buf(trtl_volume(&e)), e, TRTL_FLOAT};
        }
        int32_t ops[3 * 10];
        float args[2 * 10];
        int n_ops = 2 + (int)(rnd() % 9), next = 1;
        if (n_ops < n_in - 1)
            n_ops = n_in - 1; /* every operand read */
        for (int i = 0; i < n_ops; i++) {
            int kind = next < n_in ? TRTL_PW_BINARY : (int)(rnd() % 4);
            int32_t code = 0, operand = 0;
            float al = 0.0f, be = 0.0f;
            if (kind == TRTL_PW_UNARY) {
                code = un[rnd() % 4];
            } else if (kind == TRTL_PW_ACT) {
                trtl_epilogue e = rand_epi((int)(rnd() % N_ACTS));
                if (e.act == TRTL_ACT_THRESHOLDED_RELU || e.act == TRTL_ACT_CLIP || e.act == TRTL_ACT_NONE)
                    e.act = TRTL_ACT_SIGMOID;
                code = e.act;
                al = e.alpha;
                be = e.beta;
            } else {
                kind = TRTL_PW_BINARY + (int)(rnd() % 2);
                code = bin[rnd() % 5];
                operand = next < n_in ? next++ : 1 + (int32_t)(rnd() % (uint32_t)(n_in - 1));
            }
            ops[3 * i] = kind;
            ops[3 * i + 1] = code;
            ops[3 * i + 2] = operand;
            args[2 * i] = al;
            args[2 * i + 1] = be;
        }
        trtl_node nd = {0};
        nd.op = TRTL_OP_PW_CHAIN;
        nd.name = "pw_chain";
        nd.epi.act = TRTL_ACT_NONE;
        nd.n_in = n_in;
        nd.n_out = 1;
        nd.p.pwc.ops = (trtl_weights){TRTL_INT32, ops, 3 * (int64_t)n_ops};
        nd.p.pwc.args = (trtl_weights){TRTL_FLOAT, args, 2 * (int64_t)n_ops};
        char sd[64];
        snprintf(g_desc, sizeof g_desc, "%d ops, %d inputs, %s, first op kind %d code %d", n_ops, n_in,
                 trtl_dims_str(&d, sd, sizeof sd), (int)ops[0], (int)ops[1]);
        trtl_status st;
        float *want = ref_output(trtl_ref_pw_chain, &nd, in, &d, &st);
        int overflow = 0; /* a program that reaches float's overflow (exp of exp, products): where vmath's exp and
                           * libm's meet inf a few ulp apart, the ops after it turn inf into NaN on one side only */
        for (int64_t k = 0; want && k < trtl_volume(&d) && !overflow; k++)
            overflow = !(fabsf(want[k]) <= 1e30f);
        if (!want) {
            fprintf(stderr, "FAIL pw_chain.simd [%s]: reference: %s\n", g_desc, trtl_last_error());
            g_failures++;
        } else if (overflow && redraws < 4 * ncases) {
            redraws++;
            c--; /* another program in its place */
        } else {
            run_opt(&trtl_kernel_pw_chain_simd, &nd, in, &d, want);
        }
        free(want);
        for (int k = 0; k < n_in; k++)
            free(in[k].data);
    }
}

/* ---- preact_conv.packed_gemm (x86/convolution_gemm.c, the PREACT_CONV op) ------------------------------------ */

extern const trtl_kernel trtl_kernel_preact_conv_packed_gemm;

/* 1x1 stride-1 convolutions of act(x * s[c] + t[c]) against trtl_ref_preact_conv, AVX-512 and AVX2 (AVX-512 masked
 * off), no pool and 2- / 3-thread pools (panel and channel splits): maps with tile tails (49, 196, 3 pixels), two
 * depth blocks (C > 512), groups, batches, 1-D and 3-D, every epilogue, the transform's activation none / ReLU /
 * clip (the packing tiles' clamp), clip with alpha > beta, leaky ReLU and sigmoid (the row-buffer path), a NaN
 * activation; then random shapes; applies() refuses windows past 1x1, strides and padding. */
static void test_preact_conv(int ncases)
{
    static const struct { int64_t N, C, K, G, D, H, W; int nsp; } sh[] = {
        {1, 64, 20, 1, 1, 41, 40, 2}, {2, 600, 13, 1, 1, 7, 7, 2}, {1, 520, 33, 1, 1, 14, 14, 2},
        {3, 9, 4, 1, 1, 9, 10, 2},    {1, 5, 70, 1, 1, 1, 3, 2},    {1, 24, 10, 2, 1, 6, 7, 2},
        {1, 7, 11, 1, 1, 1, 101, 1},  {2, 6, 5, 1, 3, 4, 5, 3},
    };
    static const struct { int32_t act; float alpha, beta; } acts[] = {
        {TRTL_ACT_RELU, 0, 0}, {TRTL_ACT_NONE, 0, 0}, {TRTL_ACT_CLIP, -0.25f, 0.5f}, {TRTL_ACT_CLIP, 0.5f, -0.25f},
        {TRTL_ACT_LEAKY_RELU, 0.1f, 0}, {TRTL_ACT_SIGMOID, 0, 0},
    };
    const int nacts = (int)(sizeof acts / sizeof acts[0]);
    {
        static const struct { int64_t k, s, pad; int want; } ap[] = {{1, 1, 0, 1}, {3, 1, 1, 0}, {1, 2, 0, 0}, {1, 1, 1, 0}};
        for (size_t i = 0; i < sizeof ap / sizeof ap[0]; i++) {
            trtl_node nd = {0};
            int64_t k[2] = {ap[i].k, ap[i].k}, st[2] = {ap[i].s, ap[i].s}, pad[2] = {ap[i].pad, ap[i].pad};
            int64_t one[2] = {1, 1}, xd[4] = {1, 8, 12, 12};
            float sv[8] = {0};
            nd.op = TRTL_OP_PREACT_CONV;
            nd.name = "preact";
            nd.p.conv.num_output_maps = 16;
            nd.p.conv.num_groups = 1;
            nd.p.conv.kernel_size = trtl_dims_make(2, k);
            nd.p.conv.stride = trtl_dims_make(2, st);
            nd.p.conv.dilation = trtl_dims_make(2, one);
            nd.p.conv.pre_padding = nd.p.conv.post_padding = trtl_dims_make(2, pad);
            nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, NULL, 16 * 8 * ap[i].k * ap[i].k};
            nd.p.preact.in_scale = nd.p.preact.in_shift = (trtl_weights){TRTL_FLOAT, sv, 8};
            nd.p.preact.in_act = TRTL_ACT_RELU;
            trtl_dims xdims = trtl_dims_make(4, xd);
            if (trtl_kernel_preact_conv_packed_gemm.applies(&nd, &xdims) != ap[i].want) {
                fprintf(stderr, "FAIL preact_conv.packed_gemm applies() on k=%lld s=%lld pad=%lld: %d, want %d\n",
                        (long long)ap[i].k, (long long)ap[i].s, (long long)ap[i].pad, !ap[i].want, ap[i].want);
                g_failures++;
                return;
            }
        }
    }
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
            for (int a = 0; a < nacts; a++) {
                conv_case c = {0};
                c.nsp = sh[i].nsp;
                c.N = sh[i].N;
                c.C = sh[i].C;
                c.K = sh[i].K;
                c.G = sh[i].G;
                const int64_t in[3] = {sh[i].D, sh[i].H, sh[i].W};
                for (int d = 0; d < c.nsp; d++) {
                    c.in[d] = in[3 - c.nsp + d];
                    c.k[d] = c.s[d] = c.d[d] = 1;
                }
                c.bias = (int)((i + (size_t)a) % 3 != 2);
                g_preact = acts[a].act;
                g_preact_alpha = acts[a].alpha;
                g_preact_beta = acts[a].beta;
                g_conv_nan_x = a == 0 ? 2 * c.in[c.nsp - 1] + 1 : -1; /* channel 0, row 2: NaN through the ReLU */
                if (conv_run_case(&trtl_kernel_preact_conv_packed_gemm, &c, (int)((i * 7 + (size_t)a) % (2 * N_ACTS))) > 0)
                    goto done;
            }
        g_conv_nan_x = -1;
        for (int i = 0, combo = (int)(rnd() % 64); i < ncases / 6; i++, combo++) {
            conv_case c = {0};
            c.nsp = (int)rint_in(1, 3);
            c.N = rint_in(1, 3);
            c.G = rnd() % 4 == 0 ? 2 : 1;
            c.C = c.G * rint_in(1, rnd() % 5 == 0 ? 300 : 40);
            c.K = c.G * rint_in(1, 20);
            c.bias = (int)(rnd() % 4 != 0);
            for (int d = 0; d < c.nsp; d++) {
                c.in[d] = rint_in(1, c.nsp == 1 ? 200 : c.nsp == 2 ? 24 : 7);
                c.k[d] = c.s[d] = c.d[d] = 1;
            }
            const int a = (int)(rnd() % (uint64_t)nacts);
            g_preact = acts[a].act;
            g_preact_alpha = acts[a].alpha;
            g_preact_beta = acts[a].beta;
            if (conv_run_case(&trtl_kernel_preact_conv_packed_gemm, &c, combo) > 0)
                goto done;
        }
    }
done:
    g_preact = -2;
    g_conv_nan_x = -1;
    trtl_cpu_set_mask(~0u);
}

int main(int argc, char **argv)
{
    test_install_fault_handler();
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    int ncases = argc > 2 ? atoi(argv[2]) : 150;
    g_rng = seed * 2654435761u + 88172645463325252ull;
    printf("test_kernels: seed %llu, %d random cases per kernel, cpu features 0x%x, %d cpus\n",
           (unsigned long long)seed, ncases, trtl_cpu_features(), trtl_available_cpus());
    if (trtl_threadpool_create(2, &g_pools[1]) != TRTL_OK || trtl_threadpool_create(3, &g_pools[2]) != TRTL_OK) {
        fprintf(stderr, "cannot create thread pools: %s\n", trtl_last_error());
        return 2;
    }

    test_threadpool();
    test_steal_runs();
    test_applies();
    test_conv_fixed(&trtl_kernel_conv_im2col_sgemm, 0);
    test_conv_kernel(&trtl_kernel_conv_im2col_sgemm, 0, ncases);
    if (trtl_cpu_has(trtl_kernel_conv_depthwise_avx2.cpu_features)) {
        test_conv_fixed(&trtl_kernel_conv_depthwise_avx2, 1);
        test_conv_kernel(&trtl_kernel_conv_depthwise_avx2, 1, ncases);
    } else {
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_depthwise_avx2.name);
    }
    test_winograd(ncases);

    test_fc(ncases);
    test_mm(ncases);
    test_packed_gemm(ncases);
    test_pooling(ncases);
    test_reduce_applies();
    test_reduce(ncases);
    test_softmax(ncases);
    test_normalization(ncases);
    test_normalization_channels(ncases);
    test_normalization_codes(ncases);
    test_shuffle(ncases);
    test_copy_ops(ncases);
    test_deconv(ncases);
    test_depthwise_direct(ncases);
    test_resize(ncases);
    test_pointwise(ncases);
    test_attention(ncases);
    test_qlinear(ncases);
    test_pooling_tails();
    if (trtl_cpu_has(trtl_kernel_conv_depthwise_c16.cpu_features))
        test_depthwise_cblock(&trtl_kernel_conv_depthwise_c16, ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX-512)\n", trtl_kernel_conv_depthwise_c16.name);
    if (trtl_cpu_has(trtl_kernel_conv_depthwise_c8.cpu_features))
        test_depthwise_cblock(&trtl_kernel_conv_depthwise_c8, ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_depthwise_c8.name);
    if (trtl_cpu_has(trtl_kernel_conv_gemv.cpu_features))
        test_conv_gemv(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_gemv.name);
    test_qadd_qpool(ncases);
    test_pooling_codes(ncases);
    if (trtl_cpu_has(trtl_kernel_conv_pixel_gemm.cpu_features))
        test_conv_pixel_gemm(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_pixel_gemm.name);
    test_linear(ncases);
    test_qdq_simd(ncases);
    if (trtl_cpu_has(trtl_kernel_conv_tapwise.cpu_features))
        test_conv_tapwise(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_tapwise.name);
    test_conv_grouped_direct(ncases);
    test_conv_grouped_inplace_residual();
    test_conv_stem(ncases);
    if (trtl_cpu_has(trtl_kernel_conv_1x1_direct.cpu_features))
        test_conv_1x1(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_1x1_direct.name);
    if (trtl_cpu_has(trtl_kernel_conv_1x1_block.cpu_features))
        test_conv_1x1_block(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_conv_1x1_block.name);
    test_reduce_axes_applies();
    test_reduce_axes(ncases / 3);
    test_reduce_binary(ncases / 3);
    test_shuffle_inplace();
    test_depthwise_rows8(ncases);
    test_nchwc(ncases);
    test_nchwc_dense(ncases);
    test_nchwc_grouped(ncases);
    test_pw_chain(ncases);
    if (trtl_cpu_has(trtl_kernel_preact_conv_packed_gemm.cpu_features))
        test_preact_conv(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX2/FMA)\n", trtl_kernel_preact_conv_packed_gemm.name);
    if (trtl_cpu_has(trtl_kernel_conv_depthwise_plane512.cpu_features))
        test_depthwise_plane512(ncases);
    else
        printf("test_kernels: skipping %s (CPU lacks AVX-512)\n", trtl_kernel_conv_depthwise_plane512.name);
    if (trtl_cpu_has(trtl_kernel_fc_packed_gemm.cpu_features))
        test_fc_stealing();
    if (trtl_cpu_has(trtl_kernel_conv_gemv.cpu_features))
        test_conv_gemv_batches();

    trtl_threadpool_destroy(g_pools[1]);
    trtl_threadpool_destroy(g_pools[2]);
    printf("test_kernels: %d cases, %d failures\n", g_cases, g_failures);
    return g_failures ? 1 : 0;
}
