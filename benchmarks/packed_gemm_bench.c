/*
 * packed_gemm_bench.c -- GFLOP/s of the "*.packed_gemm" kernels against the im2col + OpenBLAS
 * kernels on ResNet-18/50, MobileNetV2 (1x1 and dense 3x3) and LeNet shapes, batch 1, with 1
 * thread and with a pool of all available CPUs.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/packed_gemm_bench.c \
 *       csrc/core/{cpu,status,dims}.c csrc/core/threadpool.c csrc/core/shape.c \
 *       csrc/kernels/epilogue.c csrc/kernels/conv_geometry.c $(ls csrc/kernels/x86/[a-z]*.c csrc/kernels/blas/[a-z]*.c) \
 *       -o build/packed_gemm_bench -lopenblas -lm -lpthread
 *   build/packed_gemm_bench [filter] [--avx2] [--rounds N]
 *
 * Each figure is the minimum over >= 20 runs and >= 0.25 s after a warm-up run, and over
 * --rounds N passes over all shapes (default 1; the machine is shared: the minimum is what the
 * kernel costs undisturbed, and rounds spread the shapes over time).  Every layer has bias and a fused
 * ReLU (ReLU6 on MobileNetV2); the bottleneck outputs of ResNet-50 and the last 3x3 of a ResNet-18
 * block also add a residual, as the fused engine runs them.  --avx2 masks AVX-512 off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/ref/ref.h"
#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_fc_sgemm;
extern const trtl_kernel trtl_kernel_fc_packed_gemm;

/* Minimum seconds of k->run. */
static double time_kernel(const trtl_kernel *k, trtl_node *nd, const trtl_tensor_view *in, trtl_tensor_view *out,
                          trtl_threadpool *pool)
{
    void *state = NULL;
    if (k->prepare && k->prepare(nd, &state) != TRTL_OK) {
        fprintf(stderr, "prepare failed: %s\n", trtl_last_error());
        exit(1);
    }
    size_t ss = k->scratch ? k->scratch(nd, in, out) : 0;
    void *scratch = ss ? malloc(ss) : NULL;
    trtl_kernel_args a = {nd, in, out, scratch, ss, state, pool, NULL};
    if (k->run(&a) != TRTL_OK) {
        fprintf(stderr, "run failed: %s\n", trtl_last_error());
        exit(1);
    }
    double best = 1e30, t_start = bench_wall_s();
    for (int n = 0; n < 20 || bench_wall_s() - t_start < 0.25; n++) {
        double t0 = bench_wall_s();
        k->run(&a);
        double t = bench_wall_s() - t0;
        if (t < best)
            best = t;
    }
    if (k->release)
        k->release(state);
    free(scratch);
    return best;
}

static trtl_threadpool *g_pool;
static const char *g_filter;
static int g_round, g_rounds = 1, g_case;
#define MAX_CASES 128
static double g_best[MAX_CASES][2][2]; /* [case][kernel][1T, pool] seconds, minimum over rounds */

static void report(const char *name, double flops, const trtl_kernel *base, const trtl_kernel *k, trtl_node *nd,
                   const trtl_tensor_view *in, trtl_tensor_view *out)
{
    const trtl_kernel *ks[2] = {base, k};
    double(*t)[2] = g_best[g_case++];
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 2; p++) {
            double v = time_kernel(ks[i], nd, in, out, p ? g_pool : NULL);
            if (g_round == 0 || v < t[i][p])
                t[i][p] = v;
        }
    if (g_round < g_rounds - 1)
        return;
    printf("%-30s %7.1f MF | 1T %6.1f -> %6.1f GF/s x%.2f | %dT %6.1f -> %6.1f GF/s x%.2f  (%.3f -> %.3f ms)\n",
           name, flops / 1e6, flops / t[0][0] / 1e9, flops / t[1][0] / 1e9, t[0][0] / t[1][0],
           trtl_threadpool_size(g_pool), flops / t[0][1] / 1e9, flops / t[1][1] / 1e9, t[0][1] / t[1][1],
           t[0][1] * 1e3, t[1][1] * 1e3);
    fflush(stdout);
}

static void conv_shape(const char *name, int64_t C, int64_t K, int64_t H, int64_t ks, int64_t s, int act, int res)
{
    if (g_filter && !strstr(name, g_filter))
        return;
    int64_t pad = ks / 2;
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = (char *)name;
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = 1;
    int64_t kk[2] = {ks, ks}, ss[2] = {s, s}, one[2] = {1, 1}, pp[2] = {pad, pad};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, ss);
    p->dilation = trtl_dims_make(2, one);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    int64_t OH = (H + 2 * pad - ks) / s + 1, nw = K * C * ks * ks;
    float *w = bench_rand_buf(nw, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(C * H * H, 1.0f),
          *y = bench_rand_buf(K * OH * OH, 1.0f);
    float *r = res ? bench_rand_buf(K * OH * OH, 1.0f) : NULL;
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = act;
    nd.epi.alpha = 0.0f;
    nd.epi.beta = 6.0f;
    nd.epi.has_residual = res;
    nd.n_in = res ? 2 : 1;
    nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, K, OH, OH};
    trtl_tensor_view in[2] = {{x, trtl_dims_make(4, xd), TRTL_FLOAT}, {r, trtl_dims_make(4, yd), TRTL_FLOAT}};
    trtl_tensor_view out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    report(name, 2.0 * (double)(K * C * ks * ks * OH * OH), &trtl_kernel_conv_im2col_sgemm,
           &trtl_kernel_conv_packed_gemm, &nd, in, &out);
    free(w);
    free(b);
    free(x);
    free(y);
    free(r);
}

static void bench_fc(const char *name, int64_t M, int64_t D, int64_t K, int act)
{
    if (g_filter && !strstr(name, g_filter))
        return;
    trtl_node nd = {0};
    nd.op = TRTL_OP_FULLY_CONNECTED;
    nd.name = (char *)name;
    float *w = bench_rand_buf(K * D, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(M * D, 1.0f),
          *y = bench_rand_buf(M * K, 1.0f);
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = act;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {M, D, 1, 1}, yd[4] = {M, K, 1, 1};
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT}, out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    report(name, 2.0 * (double)(M * K * D), &trtl_kernel_fc_sgemm, &trtl_kernel_fc_packed_gemm, &nd, &in, &out);
    free(w);
    free(b);
    free(x);
    free(y);
}

static void run_shapes(void)
{
    const int R = TRTL_ACT_RELU, C6 = TRTL_ACT_CLIP;
    /* ResNet-18 */
    conv_shape("r18 conv1 3->64 k7s2 224", 3, 64, 224, 7, 2, R, 0);
    conv_shape("r18 3x3 64->64 56", 64, 64, 56, 3, 1, R, 0);
    conv_shape("r18 3x3 64->64 56 +res", 64, 64, 56, 3, 1, R, 1);
    conv_shape("r18 3x3s2 64->128 56", 64, 128, 56, 3, 2, R, 0);
    conv_shape("r18 1x1s2 64->128 56", 64, 128, 56, 1, 2, TRTL_ACT_NONE, 0);
    conv_shape("r18 3x3 128->128 28", 128, 128, 28, 3, 1, R, 0);
    conv_shape("r18 3x3s2 128->256 28", 128, 256, 28, 3, 2, R, 0);
    conv_shape("r18 3x3 256->256 14", 256, 256, 14, 3, 1, R, 0);
    conv_shape("r18 3x3s2 256->512 14", 256, 512, 14, 3, 2, R, 0);
    conv_shape("r18 3x3 512->512 7", 512, 512, 7, 3, 1, R, 0);
    conv_shape("r18 3x3 512->512 7 +res", 512, 512, 7, 3, 1, R, 1);
    /* ResNet-50 */
    conv_shape("r50 1x1 64->64 56", 64, 64, 56, 1, 1, R, 0);
    conv_shape("r50 1x1 64->256 56 +res", 64, 256, 56, 1, 1, R, 1);
    conv_shape("r50 1x1 256->64 56", 256, 64, 56, 1, 1, R, 0);
    conv_shape("r50 1x1 256->128 56", 256, 128, 56, 1, 1, R, 0);
    conv_shape("r50 1x1s2 256->512 56", 256, 512, 56, 1, 2, TRTL_ACT_NONE, 0);
    conv_shape("r50 3x3s2 128->128 56", 128, 128, 56, 3, 2, R, 0);
    conv_shape("r50 1x1 128->512 28 +res", 128, 512, 28, 1, 1, R, 1);
    conv_shape("r50 1x1 512->128 28", 512, 128, 28, 1, 1, R, 0);
    conv_shape("r50 1x1 256->1024 14 +res", 256, 1024, 14, 1, 1, R, 1);
    conv_shape("r50 1x1 1024->256 14", 1024, 256, 14, 1, 1, R, 0);
    conv_shape("r50 1x1 512->2048 7 +res", 512, 2048, 7, 1, 1, R, 1);
    conv_shape("r50 1x1 2048->512 7", 2048, 512, 7, 1, 1, R, 0);
    /* MobileNetV2 (dense convolutions only) */
    conv_shape("mbv2 stem 3->32 k3s2 224", 3, 32, 224, 3, 2, C6, 0);
    conv_shape("mbv2 1x1 32->16 112", 32, 16, 112, 1, 1, TRTL_ACT_NONE, 0);
    conv_shape("mbv2 1x1 16->96 112", 16, 96, 112, 1, 1, C6, 0);
    conv_shape("mbv2 1x1 96->24 56", 96, 24, 56, 1, 1, TRTL_ACT_NONE, 0);
    conv_shape("mbv2 1x1 24->144 56", 24, 144, 56, 1, 1, C6, 0);
    conv_shape("mbv2 1x1 144->24 56 +res", 144, 24, 56, 1, 1, TRTL_ACT_NONE, 1);
    conv_shape("mbv2 1x1 32->192 28", 32, 192, 28, 1, 1, C6, 0);
    conv_shape("mbv2 1x1 192->32 28 +res", 192, 32, 28, 1, 1, TRTL_ACT_NONE, 1);
    conv_shape("mbv2 1x1 64->384 14", 64, 384, 14, 1, 1, C6, 0);
    conv_shape("mbv2 1x1 384->64 14 +res", 384, 64, 14, 1, 1, TRTL_ACT_NONE, 1);
    conv_shape("mbv2 1x1 96->576 14", 96, 576, 14, 1, 1, C6, 0);
    conv_shape("mbv2 1x1 576->160 7", 576, 160, 7, 1, 1, TRTL_ACT_NONE, 0);
    conv_shape("mbv2 1x1 160->960 7", 160, 960, 7, 1, 1, C6, 0);
    conv_shape("mbv2 1x1 960->320 7", 960, 320, 7, 1, 1, TRTL_ACT_NONE, 0);
    conv_shape("mbv2 1x1 320->1280 7", 320, 1280, 7, 1, 1, C6, 0);
    /* LeNet */
    conv_shape("lenet conv1 1->20 k5 28", 1, 20, 28, 5, 1, TRTL_ACT_NONE, 0);
    conv_shape("lenet conv2 20->50 k5 12", 20, 50, 12, 5, 1, TRTL_ACT_NONE, 0);
    bench_fc("lenet fc 800->500", 1, 800, 500, R);
    bench_fc("lenet fc 500->10", 1, 500, 10, TRTL_ACT_NONE);
    /* fully connected */
    bench_fc("resnet fc 2048->1000", 1, 2048, 1000, TRTL_ACT_NONE);
    bench_fc("mbv2 fc 1280->1000", 1, 1280, 1000, TRTL_ACT_NONE);
    bench_fc("fc batch 8 2048->1000", 8, 2048, 1000, TRTL_ACT_NONE);
    bench_fc("fc batch 64 1024->1024", 64, 1024, 1024, R);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--avx2") == 0)
            trtl_cpu_set_mask(~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI));
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            g_rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else
            g_filter = argv[i];
    }
    if (trtl_threadpool_create(0, &g_pool) != TRTL_OK)
        return 1;
    printf("packed_gemm_bench: %d threads, cpu features 0x%x; im2col_sgemm -> packed_gemm (fused bias + act)\n",
           trtl_threadpool_size(g_pool), trtl_cpu_features());
    for (g_round = 0; g_round < g_rounds; g_round++) {
        g_case = 0;
        run_shapes();
    }
    double sum[2][2] = {{0}};
    for (int c = 0; c < g_case; c++)
        for (int i = 0; i < 2; i++)
            for (int p = 0; p < 2; p++)
                sum[i][p] += g_best[c][i][p];
    printf("sum of the shapes run: 1T %.3f -> %.3f ms, %dT %.3f -> %.3f ms\n", sum[0][0] * 1e3, sum[1][0] * 1e3,
           trtl_threadpool_size(g_pool), sum[0][1] * 1e3, sum[1][1] * 1e3);
    trtl_threadpool_destroy(g_pool);
    return 0;
}
