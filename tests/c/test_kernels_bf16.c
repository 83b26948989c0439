/*
 * test_kernels_bf16.c -- the bf16 kernels (convolution.bf16_gemm, fully_connected.bf16_gemm) and
 * their GEMM core's conversions against a float64 reference of the bf16-rounded math; the
 * fp16-storage kernel (fully_connected.f16_gemm) likewise, with only the weights rounded (to IEEE
 * fp16) in the reference.
 *
 * Reference: inputs and weights rounded to bf16 by this file's own rounding (frexp/nearbyint,
 * ties to even; denormal inputs to zero and NaN kept, as vcvtne2ps2bf16 does), then the
 * reference kernels (double accumulation) and the engine's epilogue pass.
 * Tolerance per output element, derived from fp32 accumulation of exact bf16 x bf16 products
 * (each product of two 8-bit mantissas is exact in fp32; the fp16 kernel's FMAs round each product
 * and sum once): n additions of at most 2^-24
 * relative rounding each bound the error by (n + 4) * 2^-24 * sum|x_i w_i|, with n the depth of
 * the dot product (+4: bias, residual, partial-block accumulation); the activation adds 4e-6
 * relative (vector math vs libm) and at most doubles the error before it (|act'| <= 2 for every
 * code used here, SELU's 1.76 the largest).  sum|x_i w_i| is the reference run on |x|, |w|.
 * THRESHOLDED_RELU is left out (a step: any rounding flips it).  Each case runs with no pool and
 * with 2- and 3-thread pools; scratch and outputs start as NaN.
 *
 *   test_kernels_bf16 [seed] [cases-per-kernel]
 * Exit 0 also on CPUs without AVX512_BF16 (then the kernels are checked to refuse in prepare).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_common.h"
#include "kernels/ref/ref.h"
#include "kernels/kernel.h"
#include "kernels/x86/gemm_bf16.h"
#include "kernels/x86/gemm_amx_bf16.h"
#include "core/shape.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

extern const trtl_kernel trtl_kernel_conv_bf16_gemm;
extern const trtl_kernel trtl_kernel_fc_bf16_gemm;
extern const trtl_kernel trtl_kernel_fc_f16_gemm;
static const trtl_kernel *g_fc = &trtl_kernel_fc_bf16_gemm; /* the fully connected kernel under test */
extern const trtl_kernel trtl_kernel_conv_amx_bf16, trtl_kernel_fc_amx_bf16;
extern const trtl_kernel trtl_kernel_linear_bf16_gemm, trtl_kernel_linear_amx_bf16;
static const trtl_kernel *g_conv = &trtl_kernel_conv_bf16_gemm; /* the convolution kernel under test */

static trtl_threadpool *g_pools[3];
static int g_failures, g_cases;
static float rfloat(void) { return (float)rnd() / 2147483648.0f - 1.0f; }

static float *buf(int64_t n, int fill) /* fill: 0 random in [-1, 1), 1 NaN */
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = fill ? NAN : rfloat();
    return p;
}

/* This file's bf16 rounding: 8 significant bits, ties to even (nearbyint in the default mode). */
static float round_bf16(float x)
{
    if (isnan(x) || isinf(x) || x == 0.0f)
        return x;
    if (fabsf(x) < 1.17549435e-38f) /* denormal input */
        return copysignf(0.0f, x);
    int e;
    double m = frexp((double)x, &e); /* |m| in [0.5, 1) */
    return (float)ldexp(nearbyint(ldexp(m, 8)), e - 8);
}

/* IEEE fp16 rounding (11 significant bits, subnormal spacing 2^-24, ties to even, overflow to inf). */
static float round_f16(float x)
{
    if (isnan(x) || isinf(x) || x == 0.0f)
        return x;
    int e;
    double a = fabs((double)x);
    frexp(a, &e);
    int q = e - 11 < -24 ? -24 : e - 11;
    double r = ldexp(nearbyint(ldexp(a, -q)), q);
    return (float)copysign(r > 65504.0 ? INFINITY : r, (double)x);
}

static float keep(float x) { return x; }

typedef float (*round_fn)(float);

static float *rounded_copy(const float *x, int64_t n, int absval, round_fn rf)
{
    float *r = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        r[i] = absval ? fabsf(rf(x[i])) : rf(x[i]);
    return r;
}

static const int32_t g_acts[] = {TRTL_ACT_NONE,    TRTL_ACT_RELU,       TRTL_ACT_CLIP, TRTL_ACT_LEAKY_RELU,
                                 TRTL_ACT_SIGMOID, TRTL_ACT_TANH,       TRTL_ACT_ELU,  TRTL_ACT_SELU,
                                 TRTL_ACT_GELU_ERF, TRTL_ACT_SILU, TRTL_ACT_SOFTPLUS};
#define N_ACTS ((int)(sizeof g_acts / sizeof g_acts[0]))

static trtl_epilogue rand_epi(int combo)
{
    trtl_epilogue e = {0};
    e.act = g_acts[combo % N_ACTS];
    e.has_residual = (combo / N_ACTS) % 2;
    e.alpha = 0.1f + 0.25f * (rfloat() + 1.0f);
    e.beta = 0.5f + (rfloat() + 1.0f);
    if (e.act == TRTL_ACT_CLIP) {
        e.alpha = -0.5f;
        e.beta = 0.6f;
    }
    if (e.act == TRTL_ACT_SOFTPLUS)
        e.alpha = e.beta = 1.0f;
    return e;
}

/* want: reference of the rounded math + epilogue; mag: sum |x_i w_i| per element; depth n. */
static int compare(const char *kname, const float *got, const float *want, const float *mag, int64_t count,
                   int64_t depth, int pool)
{
    const double u = ldexp(1.0, -24);
    for (int64_t i = 0; i < count; i++) {
        double tol = 2.0 * (double)(depth + 4) * u * (double)mag[i] + 4e-6 * fabs((double)want[i]) + 1e-7;
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= tol) && !(isnan(got[i]) && isnan(want[i]))) {
            fprintf(stderr, "MISMATCH %s [%s] pool=%d: element %lld got %.9g want %.9g (tolerance %.3g, of %lld)\n",
                    kname, g_desc, pool, (long long)i, got[i], want[i], tol, (long long)count);
            g_failures++;
            return 1;
        }
    }
    return 0;
}

/* Runs the reference fn twice (rounded values with the epilogue; |rounded| without bias and
 * epilogue), then k with each pool on the unrounded inputs.  in[0] and the weights `w` (count nw,
 * inside the node's params) are swapped for rounded copies while the references run. */
static int check(const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, trtl_tensor_view *in, float *w,
                 trtl_weights *wp, trtl_weights *bp, const trtl_dims *od, int64_t depth)
{
    /* bf16 kernels round both operands; the fp16-storage kernel only the weights */
    const round_fn rx = k->precision == TRTL_HALF ? keep : round_bf16;
    const round_fn rw = k->precision == TRTL_HALF ? round_f16 : round_bf16;
    int64_t n = trtl_volume(od), nx = trtl_volume(&in[0].dims), nw = wp->count;
    float *x = in[0].data;
    float *xr = rounded_copy(x, nx, 0, rx), *wr = rounded_copy(w, nw, 0, rw);
    float *xa = rounded_copy(x, nx, 1, rx), *wa = rounded_copy(w, nw, 1, rw);
    float *want = buf(n, 1), *mag = buf(n, 1);
    trtl_tensor_view ow = {want, *od, TRTL_FLOAT}, om = {mag, *od, TRTL_FLOAT};
    int bad = 0;
    in[0].data = xr;
    wp->values = wr;
    trtl_kernel_args a = {nd, in, &ow, NULL, 0, NULL, NULL, NULL};
    if (ref(&a) != TRTL_OK) {
        fprintf(stderr, "FAIL reference [%s]: %s\n", g_desc, trtl_last_error());
        bad = 1;
    }
    trtl_epilogue_apply(&nd->epi, want, nd->epi.has_residual ? (const float *)in[nd->n_in - 1].data : NULL, n);
    trtl_weights bias = *bp;
    *bp = (trtl_weights){TRTL_FLOAT, NULL, 0};
    in[0].data = xa;
    wp->values = wa;
    trtl_kernel_args am = {nd, in, &om, NULL, 0, NULL, NULL, NULL};
    if (!bad && ref(&am) != TRTL_OK) {
        fprintf(stderr, "FAIL reference |x||w| [%s]: %s\n", g_desc, trtl_last_error());
        bad = 1;
    }
    *bp = bias;
    for (int64_t i = 0; i < n; i++) /* |bias| <= 1 and |residual| enter the bound as accumulated terms */
        mag[i] += 1.0f + (nd->epi.has_residual ? fabsf(((const float *)in[nd->n_in - 1].data)[i]) : 0.0f);
    in[0].data = x;
    wp->values = w;
    void *state = NULL;
    if (!bad && k->prepare(nd, &state) != TRTL_OK) {
        fprintf(stderr, "FAIL %s [%s]: prepare: %s\n", k->name, g_desc, trtl_last_error());
        bad = 1;
    }
    /* the kernel reads x and writes its output through copies ending at an inaccessible page (test_common.h) */
    g_kernel_name = k->name;
    size_t xg_len = 0, nxb = (size_t)nx * sizeof(float);
    float *xg = guarded_copy(x, nxb, &xg_len);
    if (xg)
        in[0].data = xg;
    for (int pi = 0; pi < 3 && !bad; pi++) {
        trtl_tensor_view out = {buf(n, 1), *od, TRTL_FLOAT};
        float *oplain = out.data;
        size_t olen = 0;
        float *og = guarded_copy(oplain, (size_t)n * sizeof(float), &olen);
        if (og)
            out.data = og;
        size_t ss = k->scratch(nd, in, &out);
        float *scratch = buf((int64_t)(ss / sizeof(float)) + 1, 1);
        trtl_kernel_args ak = {nd, in, &out, scratch, ss, state, g_pools[pi], NULL};
        if (k->run(&ak) != TRTL_OK) {
            fprintf(stderr, "FAIL %s [%s] pool=%d: run: %s\n", k->name, g_desc, pi, trtl_last_error());
            bad = 1;
        } else {
            bad = compare(k->name, out.data, want, mag, n, depth, pi);
            g_failures -= bad; /* counted below */
        }
        free(scratch);
        guarded_free(og, (size_t)n * sizeof(float), olen);
        free(oplain);
    }
    in[0].data = x;
    guarded_free(xg, nxb, xg_len);
    if (state)
        k->release(state);
    g_failures += bad;
    g_cases++;
    free(xr);
    free(wr);
    free(xa);
    free(wa);
    free(want);
    free(mag);
    return bad;
}

/* ---- conversions ------------------------------------------------------------------------------ */

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* trtl_bf16_from_float (scalar), the hardware conversion (pack_row) and round_bf16 agree. */
static void test_conversions(void)
{
    static const uint32_t special[] = {0x3f808000u, /* tie below even -> 0x3f80 */
                                       0x3f818000u, /* tie above odd -> 0x3f82 */
                                       0x3f808001u, 0xbf817fffu, 0x7f7fffffu /* FLT_MAX -> inf */,
                                       0x7f800000u, 0xff800000u, 0x7fc00001u, 0xff800001u /* NaNs */,
                                       0x00000001u, 0x807fffffu /* denormals -> signed 0 */, 0x00800000u,
                                       0x80000000u, 0x00000000u, 0x477fe000u, 0x3effffffu};
    enum { N = 4096 + 17 };
    float *x = malloc(N * sizeof(float));
    uint16_t *hw = malloc((N + 1) * sizeof(uint16_t));
    const int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < N; i++)
        x[i] = i < ns ? from_bits(special[i]) : (i % 3 ? rfloat() * 1000.0f : from_bits(rnd() << 16 | rnd()));
    trtl_bf16_pack_row(x, N, hw);
    int bad = 0;
    for (int i = 0; i < N && !bad; i++) {
        uint16_t sw = trtl_bf16_from_float(x[i]);
        float want = round_bf16(x[i]), got = trtl_bf16_to_float(sw), goth = trtl_bf16_to_float(hw[i]);
        int same = isnan(want) ? isnan(got) && isnan(goth) : (got == want && goth == want &&
                                                               signbit(got) == signbit(want) &&
                                                               signbit(goth) == signbit(want));
        if (!same) {
            fprintf(stderr, "MISMATCH bf16 conversion of %.9g (0x%08x): scalar 0x%04x hardware 0x%04x want %.9g\n",
                    x[i], (unsigned)*(uint32_t *)(void *)&x[i], sw, hw[i], want);
            bad = 1;
        }
    }
    if (trtl_bf16_from_float(from_bits(0x3f808000u)) != 0x3f80 || trtl_bf16_from_float(from_bits(0x3f818000u)) != 0x3f82) {
        fprintf(stderr, "MISMATCH bf16 conversion: ties do not go to even\n");
        bad = 1;
    }
    g_failures += bad;
    g_cases++;
    free(x);
    free(hw);
}

/* ---- fully connected -------------------------------------------------------------------------- */

/* 1: fc_case makes internal LINEAR nodes ([M, D] -> [M, K], passes/fuse_linear.c) for the linear.* kernels */
static int g_fc_linear;
trtl_status trtl_ref_linear(const trtl_kernel_args *a);

static int fc_case(int64_t M, int64_t D, int64_t K, int bias, int combo)
{
    trtl_node nd = {0};
    nd.op = g_fc_linear ? TRTL_OP_LINEAR : TRTL_OP_FULLY_CONNECTED;
    nd.name = "fc";
    int64_t xd[4] = {M, D, 1, 1}, yd[4] = {M, K, 1, 1};
    trtl_dims xdims = trtl_dims_make(g_fc_linear ? 2 : 4, xd), ydims = trtl_dims_make(g_fc_linear ? 2 : 4, yd);
    float *w = buf(K * D, 0), *b = bias ? buf(K, 0) : NULL, *x = buf(M * D, 0), *res = NULL;
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, bias ? K : 0};
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    nd.n_out = 1;
    if (nd.epi.has_residual) {
        res = buf(M * K, 0);
        in[1].data = res;
        nd.n_in = 2;
    }
    snprintf(g_desc, sizeof g_desc, "M=%lld D=%lld K=%lld bias=%d act=%d res=%d", (long long)M, (long long)D,
             (long long)K, bias, nd.epi.act, nd.epi.has_residual);
    int r = check(g_fc, g_fc_linear ? trtl_ref_linear : trtl_ref_fully_connected, &nd, in, w, &nd.p.fc.kernel, &nd.p.fc.bias,
                  &ydims, D);
    free(w);
    free(b);
    free(x);
    free(res);
    return r;
}

static void test_fc(int ncases)
{
    /* tails of the 12-row panels, 32-column tiles, odd depths, several depth blocks (768) */
    static const int64_t fixed[][3] = {{1, 1, 1},     {1, 70, 45},    {1, 769, 100},  {2, 3, 33},
                                       {12, 32, 32},  {13, 33, 31},   {97, 64, 17},   {128, 768, 96},
                                       {5, 1537, 40}, {200, 31, 65},  {1, 2048, 130}, {25, 1, 7}};
    int combo = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fc_case(fixed[i][0], fixed[i][1], fixed[i][2], (int)(i % 3 != 2), combo++))
            return;
    for (int c = 0; c < ncases; c++) {
        int64_t M = rnd() % 3 == 0 ? 1 : rint_in(1, 140), D = rint_in(1, rnd() % 4 == 0 ? 1700 : 200),
                K = rint_in(1, 120);
        if (fc_case(M, D, K, (int)(rnd() % 4 != 0), combo++))
            return;
    }
}

/* ---- convolution ------------------------------------------------------------------------------ */

typedef struct conv_case {
    int nsp;
    int64_t N, C, K, G, in[3], k[3], s[3], d[3], pre[3], post[3];
    int mode, bias;
} conv_case;

static int conv_case_run(const conv_case *c, int combo)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = "conv";
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
        if (trtl_spatial_out(c->in[i], c->d[i] * (c->k[i] - 1) + 1, c->s[i], c->pre[i], c->post[i], c->mode, 0, &o,
                             &pre, &post) != TRTL_OK || o < 1)
            return -1;
        xd[2 + i] = c->in[i];
        yd[2 + i] = o;
        kvol *= c->k[i];
    }
    trtl_dims xdims = trtl_dims_make(c->nsp + 2, xd), ydims = trtl_dims_make(c->nsp + 2, yd);
    int64_t depth = (c->C / c->G) * kvol, nw = c->K * depth;
    float *w = buf(nw, 0), *b = c->bias ? buf(c->K, 0) : NULL, *x = buf(trtl_volume(&xdims), 0), *res = NULL;
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, c->bias ? c->K : 0};
    nd.epi = rand_epi(combo);
    trtl_tensor_view in[2] = {{x, xdims, TRTL_FLOAT}, {NULL, ydims, TRTL_FLOAT}};
    nd.n_in = 1;
    nd.n_out = 1;
    if (nd.epi.has_residual) {
        res = buf(trtl_volume(&ydims), 0);
        in[1].data = res;
        nd.n_in = 2;
    }
    char xs[TRTL_DIMS_STR_MAX], ys[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc,
             "x%s -> y%s G=%lld k=(%lld,%lld,%lld) s=(%lld,%lld,%lld) d=(%lld,%lld,%lld) pre=(%lld,%lld,%lld) "
             "mode=%d bias=%d act=%d res=%d",
             trtl_dims_str(&xdims, xs, sizeof xs), trtl_dims_str(&ydims, ys, sizeof ys), (long long)c->G,
             (long long)c->k[0], (long long)c->k[1], (long long)c->k[2], (long long)c->s[0], (long long)c->s[1],
             (long long)c->s[2], (long long)c->d[0], (long long)c->d[1], (long long)c->d[2], (long long)c->pre[0],
             (long long)c->pre[1], (long long)c->pre[2], c->mode, c->bias, nd.epi.act, nd.epi.has_residual);
    trtl_dims in_dims[2] = {xdims, ydims};
    int r;
    if (!g_conv->applies(&nd, in_dims)) {
        fprintf(stderr, "FAIL %s [%s]: applies() refused the case\n", g_conv->name, g_desc);
        g_failures++;
        r = 1;
    } else {
        r = check(g_conv, trtl_ref_convolution, &nd, in, w, &p->kernel, &p->bias, &ydims, depth);
    }
    free(w);
    free(b);
    free(x);
    free(res);
    return r;
}

static void rand_conv(conv_case *c)
{
    memset(c, 0, sizeof *c);
    c->nsp = (int)(rnd() % 6 == 0 ? 1 : (rnd() % 6 == 0 ? 3 : 2));
    c->N = rint_in(1, 3);
    c->G = rnd() % 4 == 0 ? rint_in(2, 3) : 1;
    c->C = c->G * rint_in(2, 12);
    c->K = c->G * rint_in(1, 40);
    c->mode = (int)(rnd() % 6);
    c->bias = (int)(rnd() % 4 != 0);
    for (int i = 0; i < c->nsp; i++) {
        c->in[i] = rint_in(1, c->nsp == 3 ? 7 : (c->nsp == 1 ? 75 : 21));
        c->k[i] = rint_in(1, c->nsp == 3 ? 3 : 5);
        c->s[i] = rint_in(1, 3);
        c->d[i] = rnd() % 3 == 0 ? rint_in(2, 3) : 1;
        c->pre[i] = rint_in(0, 3);
        c->post[i] = rint_in(0, 3);
    }
}

static void test_conv(int ncases)
{
    /* ResNet-like 3x3 (several pixel panels), 1x1 direct, stride 2, a depth over one block (1024),
     * odd depth, channels past one 12-row panel */
    static const struct { int64_t N, C, K, H, W, k, s, pad; } fixed[] = {
        {1, 64, 64, 28, 28, 3, 1, 1}, {1, 64, 256, 14, 14, 1, 1, 0}, {2, 32, 48, 15, 17, 3, 2, 1},
        {1, 130, 20, 9, 9, 3, 1, 1},  {1, 3, 25, 33, 31, 7, 2, 3},  {1, 512, 13, 7, 7, 3, 1, 1},
        /* AMX: channels past 32-row panels, odd depth (35 * 9), 1x1 with 33 channels, 2 images */
        {2, 35, 70, 11, 13, 3, 2, 1}, {1, 256, 33, 14, 14, 1, 1, 0}, {2, 17, 5, 6, 5, 1, 2, 0}};
    int combo = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        conv_case c;
        memset(&c, 0, sizeof c);
        c.nsp = 2;
        c.N = fixed[i].N;
        c.C = fixed[i].C;
        c.K = fixed[i].K;
        c.G = 1;
        c.in[0] = fixed[i].H;
        c.in[1] = fixed[i].W;
        for (int a = 0; a < 2; a++) {
            c.k[a] = fixed[i].k;
            c.s[a] = fixed[i].s;
            c.d[a] = 1;
            c.pre[a] = c.post[a] = fixed[i].pad;
        }
        c.bias = 1;
        if (conv_case_run(&c, combo++) > 0)
            return;
    }
    for (int done = 0; done < ncases;) {
        conv_case c;
        rand_conv(&c);
        int r = conv_case_run(&c, combo);
        if (r < 0)
            continue;
        combo++;
        done++;
        if (r > 0)
            return;
    }
}

/* Without AVX512_BF16 (TRTL_CPU_MASK or trtl_cpu_set_mask) both kernels refuse in prepare with a
 * message naming the feature, and the builder never offers them (their cpu_features). */
static void test_refuse_without_bf16(void)
{
    trtl_cpu_set_mask(~TRTL_CPU_AVX512BF16);
    const trtl_kernel *ks[4] = {&trtl_kernel_conv_bf16_gemm, &trtl_kernel_fc_bf16_gemm, &trtl_kernel_conv_amx_bf16,
                                &trtl_kernel_fc_amx_bf16};
    float w[12] = {0};
    for (int i = 0; i < 4; i++) {
        trtl_node nd = {0};
        nd.name = "masked";
        nd.op = ks[i]->op;
        if (nd.op == TRTL_OP_FULLY_CONNECTED) {
            nd.p.fc.num_output_channels = 3;
            nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, 12};
        } else {
            int64_t one[2] = {1, 1};
            nd.p.conv.num_output_maps = 3;
            nd.p.conv.num_groups = 1;
            nd.p.conv.kernel_size = trtl_dims_make(2, one);
            nd.p.conv.kernel = (trtl_weights){TRTL_FLOAT, w, 12};
        }
        void *state = NULL;
        trtl_status st = ks[i]->prepare(&nd, &state);
        if (st == TRTL_OK || !strstr(trtl_last_error(), "AVX512_BF16") || trtl_cpu_has(ks[i]->cpu_features)) {
            fprintf(stderr, "FAIL %s: prepare without AVX512_BF16 gave %d (%s)\n", ks[i]->name, (int)st,
                    trtl_last_error());
            g_failures++;
            if (state)
                ks[i]->release(state);
        }
        g_cases++;
    }
    trtl_cpu_set_mask(~0u);
}

int main(int argc, char **argv)
{
    test_install_fault_handler();
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    int ncases = argc > 2 ? atoi(argv[2]) : 60;
    g_rng = seed * 2654435761u + 88172645463325252ull;
    printf("test_kernels_bf16: seed %llu, %d random cases per kernel, cpu features 0x%x\n", (unsigned long long)seed,
           ncases, trtl_cpu_features());
    if (trtl_threadpool_create(2, &g_pools[1]) != TRTL_OK || trtl_threadpool_create(3, &g_pools[2]) != TRTL_OK) {
        fprintf(stderr, "cannot create thread pools: %s\n", trtl_last_error());
        return 2;
    }
    if (trtl_bf16_available()) {
        test_conversions();
        test_fc(ncases);
        test_conv(ncases);
    } else {
        printf("test_kernels_bf16: CPU lacks AVX512_BF16: only the refusal is checked\n");
    }
    test_refuse_without_bf16();
    if (trtl_amx_bf16_available()) { /* convolution.amx_bf16: the same cases */
        g_conv = &trtl_kernel_conv_amx_bf16;
        int before = g_failures;
        test_conv(ncases);
        printf("test_kernels_bf16: convolution.amx_bf16 checked, %d failures\n", g_failures - before);
        g_conv = &trtl_kernel_conv_bf16_gemm;
        g_fc = &trtl_kernel_fc_amx_bf16; /* every row count (its applies() wants >= 16 at the opt shape) */
        before = g_failures;
        test_fc(ncases);
        printf("test_kernels_bf16: fully_connected.amx_bf16 checked, %d failures\n", g_failures - before);
        g_fc = &trtl_kernel_fc_bf16_gemm;
    } else {
        printf("test_kernels_bf16: CPU lacks AMX-BF16: convolution.amx_bf16, fully_connected.amx_bf16 not checked\n");
    }
    /* linear.bf16_gemm / linear.amx_bf16: the fully connected kernels' functions on LINEAR nodes (2-D input) */
    g_fc_linear = 1;
    if (trtl_bf16_available()) {
        g_fc = &trtl_kernel_linear_bf16_gemm;
        test_fc(ncases / 2);
    }
    if (trtl_amx_bf16_available()) {
        g_fc = &trtl_kernel_linear_amx_bf16;
        test_fc(ncases / 2);
    }
    g_fc_linear = 0;
    g_fc = &trtl_kernel_fc_bf16_gemm;
    if (trtl_cpu_has(trtl_kernel_fc_f16_gemm.cpu_features)) {
        g_fc = &trtl_kernel_fc_f16_gemm;
        test_fc(ncases);
    } else {
        printf("test_kernels_bf16: CPU lacks AVX-512 + F16C: fully_connected.f16_gemm not checked\n");
    }
    trtl_threadpool_destroy(g_pools[1]);
    trtl_threadpool_destroy(g_pools[2]);
    printf("test_kernels_bf16: %d cases, %d failures\n", g_cases, g_failures);
    return g_failures ? 1 : 0;
}
