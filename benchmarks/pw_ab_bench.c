/*
 * pw_ab_bench.c -- per-shape milliseconds of the fp32 kernels that take a 1x1 (pointwise) convolution, on the
 * expand / project shapes of MobileNetV2, MNASNet and EfficientNet-B0 (batch 1, ReLU6 or no activation, residual
 * on the project layers as in the networks), for A/B comparisons on a shared machine.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/pw_ab_bench.c -o build/pw_ab_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/pw_ab_bench [filter] [--threads N] [--reps N] [--batch N]
 *
 * One thread (default): the minimum CPU time of the calling thread over the runs, the kernels taking turns run by
 * run (time_all); --threads N > 1: minimum wall time with a pool of N, meaningful on a quiet machine only.  --cold:
 * 64 MiB are written before every run, so weights and activations come from memory as in a network whose weights
 * exceed the caches.  Also ResNet-50's and YOLO's 1x1 shapes (stride 2 shortcuts, SiLU).  A/B of two builds of one
 * kernel in one process: compile the variant with -Dtrtl_kernel_conv_1x1_block=trtl_kernel_conv_1x1_block_alt (and
 * its settings) into an object and link it in; it is timed as "(alt)" next to the library's kernels.  The same for
 * trtl_kernel_conv_packed_gemm_alt and trtl_kernel_conv_1x1_direct_alt (an object set whose other global symbols are
 * renamed too, e.g. with objcopy --redefine-syms, so that they do not interpose the library's).  --kernels a,b: time
 * only the kernels whose names contain one of the comma-separated strings.  After the times, each kernel's median
 * paired ratio to the first one timed ("x1.050": 5% slower).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/dims.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_conv_pixel_gemm;
extern const trtl_kernel trtl_kernel_conv_1x1_direct;
extern const trtl_kernel trtl_kernel_conv_1x1_block;
/* A variant of a kernel under test, linked in from an object built with -Dtrtl_kernel_conv_1x1_block=
 * trtl_kernel_conv_1x1_block_alt and other settings (absent: not timed). */
extern const trtl_kernel trtl_kernel_conv_1x1_block_alt __attribute__((weak));
extern const trtl_kernel trtl_kernel_conv_1x1_direct_alt __attribute__((weak));
extern const trtl_kernel trtl_kernel_conv_packed_gemm_alt __attribute__((weak));

static int g_threads = 1, g_reps = 20, g_cold;
static int64_t g_batch = 1; /* --batch N: images per run */
static trtl_threadpool *g_pool;
static const char *g_filter, *g_kernels;

/* Kernel k is timed: linked in and, with --kernels, named there. */
static int want_kernel(const trtl_kernel *k)
{
    if (!k)
        return 0;
    if (!g_kernels)
        return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", g_kernels);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (strstr(k->name, tok))
            return 1;
    return 0;
}

/* Minimum CPU (no pool) or wall time over g_reps runs of each of the nk kernels, the kernels taking turns run by run
 * (A/B interleaved, so that a loaded machine's slow phases hit every kernel alike); with --cold each run comes after
 * 64 MiB of writes evicting the caches.  t[i] < 0: kernel i does not apply or failed.  ratio[i]: the median over
 * the runs of kernel i's time over kernel 0's in the same round (a paired estimate that a loaded machine's phases,
 * which move every minimum, disturb less). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void time_all(const trtl_kernel *const *ks, int nk, trtl_node *nd, const trtl_tensor_view *in,
                     trtl_tensor_view *out, double *t, double *ratio)
{
    double *rr = calloc((size_t)g_reps * 8, sizeof(double));
    if (!rr)
        return;
    static float *evict;
    const int64_t ne = 16 << 20;
    if (g_cold && !evict && !(evict = malloc((size_t)ne * sizeof(float))))
        return;
    void *state[8] = {0}, *scratch[8] = {0};
    trtl_kernel_args a[8];
    for (int i = 0; i < nk; i++) {
        t[i] = -1;
        if ((ks[i]->applies && !ks[i]->applies(nd, &in[0].dims)) ||
            (ks[i]->prepare && ks[i]->prepare(nd, &state[i]) != TRTL_OK))
            continue;
        size_t ss = ks[i]->scratch ? ks[i]->scratch(nd, in, out) : 0;
        scratch[i] = ss ? malloc(ss) : NULL;
        a[i] = (trtl_kernel_args){nd, in, out, scratch[i], ss, state[i], g_threads > 1 ? g_pool : NULL, NULL};
        if (ks[i]->run(&a[i]) == TRTL_OK)
            t[i] = 1e9;
    }
    const clockid_t clk = g_threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
    for (int r = 0; r < g_reps; r++)
        for (int i = 0; i < nk; i++) {
            if (t[i] < 0)
                continue;
            if (g_cold)
                for (int64_t j = 0; j < ne; j += 16)
                    evict[j] = (float)r;
            double t0 = bench_clock_s(clk);
            ks[i]->run(&a[i]);
            double dt = bench_clock_s(clk) - t0;
            t[i] = dt < t[i] ? dt : t[i];
            rr[i * g_reps + r] = dt;
        }
    for (int i = nk - 1; i >= 0; i--) {
        ratio[i] = -1;
        if (t[i] < 0 || t[0] < 0)
            continue;
        for (int r = 0; r < g_reps; r++)
            rr[i * g_reps + r] /= rr[r];
        qsort(rr + i * g_reps, (size_t)g_reps, sizeof(double), cmp_double);
        ratio[i] = rr[i * g_reps + g_reps / 2];
    }
    free(rr);
    for (int i = 0; i < nk; i++) {
        if (ks[i]->release && state[i])
            ks[i]->release(state[i]);
        free(scratch[i]);
    }
}

/* A 1x1 layer C -> K on an H x H output map, input stride s (the input map is H*s - s + 1 wide... rounded as
 * ResNet's shortcuts: input (H*s) x (H*s)); act: 0 none, 1 ReLU6, 2 ReLU, 3 SiLU. */
static void bench_pws(const char *name, int64_t C, int64_t K, int64_t H, int s, int act, int res)
{
    if (g_filter && !strstr(name, g_filter))
        return;
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = (char *)name;
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = 1;
    int64_t one[2] = {1, 1}, zero[2] = {0, 0};
    int64_t st[2] = {s, s};
    p->kernel_size = p->dilation = trtl_dims_make(2, one);
    p->stride = trtl_dims_make(2, st);
    p->pre_padding = p->post_padding = trtl_dims_make(2, zero);
    const int64_t N = g_batch;
    float *w = bench_rand_buf(K * C, 1.0f), *b = bench_rand_buf(K, 1.0f),
          *x = bench_rand_buf(N * C * H * H * s * s, 1.0f), *y = bench_rand_buf(N * K * H * H, 1.0f),
          *r = bench_rand_buf(N * K * H * H, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, K * C};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = act == 1 ? TRTL_ACT_CLIP : act == 2 ? TRTL_ACT_RELU : act == 3 ? TRTL_ACT_SILU : TRTL_ACT_NONE;
    nd.epi.alpha = 0.0f;
    nd.epi.beta = 6.0f;
    nd.epi.has_residual = res;
    nd.n_in = 1 + (res != 0);
    nd.n_out = 1;
    int64_t xd[4] = {N, C, H * s, H * s}, yd[4] = {N, K, H, H};
    trtl_tensor_view in[2] = {{x, trtl_dims_make(4, xd), TRTL_FLOAT}, {r, trtl_dims_make(4, yd), TRTL_FLOAT}};
    trtl_tensor_view out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    double flops = 2.0 * (double)N * (double)K * (double)C * (double)(H * H);
    const trtl_kernel *all[] = {&trtl_kernel_conv_packed_gemm, &trtl_kernel_conv_packed_gemm_alt,
                                &trtl_kernel_conv_pixel_gemm, &trtl_kernel_conv_im2col_sgemm,
                                &trtl_kernel_conv_1x1_direct, &trtl_kernel_conv_1x1_direct_alt,
                                &trtl_kernel_conv_1x1_block, &trtl_kernel_conv_1x1_block_alt};
    const trtl_kernel *ks[8];
    int nk = 0;
    for (int i = 0; i < (int)(sizeof all / sizeof all[0]); i++)
        if (want_kernel(all[i]))
            ks[nk++] = all[i];
    double t[8], ratio[8];
    time_all(ks, nk, &nd, in, &out, t, ratio);
    printf("%-24s %6.1f MFLOP", name, flops / 1e6);
    for (int i = 0; i < nk; i++)
        if (t[i] > 0)
            printf(" | %s%s %6.1f us %4.0f GF/s", ks[i]->name + 12,
                   ks[i] == &trtl_kernel_conv_1x1_block_alt || ks[i] == &trtl_kernel_conv_1x1_direct_alt ||
                           ks[i] == &trtl_kernel_conv_packed_gemm_alt
                       ? "(alt)"
                       : "",
                   t[i] * 1e6, flops / t[i] / 1e9);
    if (nk > 1 && t[0] > 0)
        for (int i = 1; i < nk; i++)
            if (t[i] > 0)
                printf(" | x%.3f", ratio[i]);
    printf("\n");
    fflush(stdout);
    free(w);
    free(b);
    free(x);
    free(y);
    free(r);
}

static void bench_pw(const char *name, int64_t C, int64_t K, int64_t H, int relu6, int res)
{
    bench_pws(name, C, K, H, 1, relu6, res);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            g_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold"))
            g_cold = 1;
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            g_kernels = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            g_batch = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else
            g_filter = argv[i];
    }
    if (g_threads > 1)
        trtl_threadpool_create(g_threads, &g_pool);
    /* MobileNetV2 (expand: ReLU6; project: none, residual where the block has one) */
    bench_pw("v2 32->16 112", 32, 16, 112, 0, 0);
    bench_pw("v2 16->96 112", 16, 96, 112, 1, 0);
    bench_pw("v2 96->24 56", 96, 24, 56, 0, 0);
    bench_pw("v2 24->144 56", 24, 144, 56, 1, 0);
    bench_pw("v2 144->24 56 res", 144, 24, 56, 0, 1);
    bench_pw("v2 32->192 28", 32, 192, 28, 1, 0);
    bench_pw("v2 192->32 28 res", 192, 32, 28, 0, 1);
    bench_pw("v2 64->384 14", 64, 384, 14, 1, 0);
    bench_pw("v2 384->64 14 res", 384, 64, 14, 0, 1);
    bench_pw("v2 96->576 14", 96, 576, 14, 1, 0);
    bench_pw("v2 576->96 14 res", 576, 96, 14, 0, 1);
    bench_pw("v2 160->960 7", 160, 960, 7, 1, 0);
    bench_pw("v2 960->160 7 res", 960, 160, 7, 0, 1);
    bench_pw("v2 960->320 7", 960, 320, 7, 0, 0);
    bench_pw("v2 320->1280 7", 320, 1280, 7, 1, 0);
    /* MNASNet / EfficientNet-B0 extras */
    bench_pw("mnas 40->120 28", 40, 120, 28, 1, 0);
    bench_pw("mnas 480->96 14", 480, 96, 14, 0, 0);
    bench_pw("effb0 192->1152 7", 192, 1152, 7, 1, 0);
    bench_pw("effb0 1152->192 7 res", 1152, 192, 7, 0, 1);
    /* ResNet-50 (ReLU after conv1, residual + ReLU after conv3; the shortcuts: none) and YOLO's 1x1 maps (SiLU) */
    bench_pws("r50 64->256 56 res", 64, 256, 56, 1, 2, 1);
    bench_pws("r50 256->64 56", 256, 64, 56, 1, 2, 0);
    bench_pws("r50 64->64 56", 64, 64, 56, 1, 2, 0);
    bench_pws("r50 256->128 56", 256, 128, 56, 1, 2, 0);
    bench_pws("r50 128->512 28 res", 128, 512, 28, 1, 2, 1);
    bench_pws("r50 512->128 28", 512, 128, 28, 1, 2, 0);
    bench_pws("r50 256->1024 14 res", 256, 1024, 14, 1, 2, 1);
    bench_pws("r50 1024->256 14", 1024, 256, 14, 1, 2, 0);
    bench_pws("r50 512->2048 7 res", 512, 2048, 7, 1, 2, 1);
    bench_pws("r50 2048->512 7", 2048, 512, 7, 1, 2, 0);
    bench_pws("r50 s2 256->512 28", 256, 512, 28, 2, 0, 0);
    bench_pws("r50 s2 512->1024 14", 512, 1024, 14, 2, 0, 0);
    bench_pws("r50 s2 1024->2048 7", 1024, 2048, 7, 2, 0, 0);
    bench_pws("yolo 64->64 80", 64, 64, 80, 1, 3, 0);
    bench_pws("yolo 64->32 80", 64, 32, 80, 1, 3, 0);
    bench_pws("yolo 32->32 80", 32, 32, 80, 1, 3, 0);
    bench_pws("yolo 256->64 40", 256, 64, 40, 1, 3, 0);
    bench_pws("yolo 128->128 40", 128, 128, 40, 1, 3, 0);
    /* SqueezeNet 1.1's Fire modules (squeeze, expand1x1; ReLU) and its classifier */
    bench_pws("sq 64->16 55", 64, 16, 55, 1, 2, 0);
    bench_pws("sq 16->64 55", 16, 64, 55, 1, 2, 0);
    bench_pws("sq 128->16 55", 128, 16, 55, 1, 2, 0);
    bench_pws("sq 128->32 27", 128, 32, 27, 1, 2, 0);
    bench_pws("sq 32->128 27", 32, 128, 27, 1, 2, 0);
    bench_pws("sq 256->32 27", 256, 32, 27, 1, 2, 0);
    bench_pws("sq 256->48 13", 256, 48, 13, 1, 2, 0);
    bench_pws("sq 48->192 13", 48, 192, 13, 1, 2, 0);
    bench_pws("sq 384->64 13", 384, 64, 13, 1, 2, 0);
    bench_pws("sq 64->256 13", 64, 256, 13, 1, 2, 0);
    bench_pws("sq 512->64 13", 512, 64, 13, 1, 2, 0);
    bench_pws("sq 512->1000 13", 512, 1000, 13, 1, 2, 0);
    /* RegNetY-400MF's stride-2 shortcuts (the block's sum as residual, ReLU) and a stage-1 / stage-4 1x1 */
    bench_pws("regnet s2 32->48 56 res", 32, 48, 56, 2, 2, 1);
    bench_pws("regnet s2 48->104 28 res", 48, 104, 28, 2, 2, 1);
    bench_pws("regnet s2 104->208 14 res", 104, 208, 14, 2, 2, 1);
    bench_pws("regnet s2 208->440 7 res", 208, 440, 7, 2, 2, 1);
    bench_pws("regnet 32->48 112", 32, 48, 112, 1, 2, 0);
    bench_pws("regnet 440->440 7 res", 440, 440, 7, 1, 2, 1);
    if (g_pool)
        trtl_threadpool_destroy(g_pool);
    return 0;
}
