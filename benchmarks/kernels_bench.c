/*
 * kernels_bench.c -- GFLOP/s of the optimized kernels on ResNet / VGG / MobileNetV2 / LeNet
 * shapes (batch 1), with 1 thread and with the pool (all available CPUs), against the
 * reference kernel.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/kernels_bench.c \
 *       csrc/core/{cpu,status,dims}.c csrc/core/threadpool.c csrc/core/shape.c \
 *       csrc/kernels/epilogue.c csrc/kernels/conv_geometry.c csrc/kernels/ref/{convolution,fully_connected,matrix_multiply}.c \
 *       $(ls csrc/kernels/x86/[a-z]*.c csrc/kernels/blas/[a-z]*.c) -o build/kernels_bench -lopenblas -lm -lpthread
 *   build/kernels_bench [filter]
 *
 * Times are medians over >= 10 runs and >= 0.3 s after a warm-up run; the reference runs once
 * (it is slow) and is skipped above 400 MFLOP.
 */
#include <math.h>
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
extern const trtl_kernel trtl_kernel_conv_depthwise_avx2;
extern const trtl_kernel trtl_kernel_fc_sgemm;
extern const trtl_kernel trtl_kernel_matmul_sgemm;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds of k->run (ref: one run). */
static double time_kernel(const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, const trtl_tensor_view *in,
                          trtl_tensor_view *out, trtl_threadpool *pool)
{
    void *state = NULL;
    size_t ss = 0;
    void *scratch = NULL;
    if (k) {
        if (k->prepare && k->prepare(nd, &state) != TRTL_OK) {
            fprintf(stderr, "prepare failed: %s\n", trtl_last_error());
            exit(1);
        }
        ss = k->scratch ? k->scratch(nd, in, out) : 0;
        scratch = ss ? malloc(ss) : NULL;
    }
    trtl_kernel_args a = {nd, in, out, scratch, ss, state, pool, NULL};
    trtl_kernel_fn fn = k ? k->run : ref;
    double times[1000];
    int n = 0;
    double t_start = bench_wall_s();
    if (fn(&a) != TRTL_OK) { /* warm-up (or the single reference run) */
        fprintf(stderr, "run failed: %s\n", trtl_last_error());
        exit(1);
    }
    if (!k) {
        free(scratch);
        return bench_wall_s() - t_start;
    }
    t_start = bench_wall_s();
    while (n < 1000 && (n < 10 || bench_wall_s() - t_start < 0.3)) {
        double t0 = bench_wall_s();
        fn(&a);
        times[n++] = bench_wall_s() - t0;
    }
    qsort(times, (size_t)n, sizeof times[0], cmp_d);
    if (k->release)
        k->release(state);
    free(scratch);
    return times[n / 2];
}

static trtl_threadpool *g_pool;
static const char *g_filter;

static void report(const char *name, const char *kname, double flops, const trtl_kernel *k, trtl_kernel_fn ref,
                   trtl_node *nd, const trtl_tensor_view *in, trtl_tensor_view *out)
{
    if (g_filter && !strstr(name, g_filter) && !strstr(kname, g_filter))
        return;
    double t1 = time_kernel(k, NULL, nd, in, out, NULL);
    double tp = time_kernel(k, NULL, nd, in, out, g_pool);
    double tr = flops <= 4e8 ? time_kernel(NULL, ref, nd, in, out, NULL) : NAN;
    printf("%-34s %-28s %9.1f MFLOP  1T %8.3f ms %6.1f GF/s | %dT %8.3f ms %6.1f GF/s | ref %9.2f ms  x%.0f\n", name,
           kname, flops / 1e6, t1 * 1e3, flops / t1 / 1e9, trtl_threadpool_size(g_pool), tp * 1e3, flops / tp / 1e9,
           tr * 1e3, tr / tp);
    fflush(stdout);
}

static void conv_shape(const char *name, const trtl_kernel *k, int64_t C, int64_t K, int64_t G, int64_t H,
                       int64_t ks, int64_t s, int64_t pad, int act)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = (char *)name;
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = (int32_t)G;
    int64_t kk[2] = {ks, ks}, ss[2] = {s, s}, one[2] = {1, 1}, pp[2] = {pad, pad};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, ss);
    p->dilation = trtl_dims_make(2, one);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    int64_t OH = (H + 2 * pad - ks) / s + 1;
    int64_t nw = K * (C / G) * ks * ks;
    float *w = bench_rand_buf(nw, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(C * H * H, 1.0f),
          *y = bench_rand_buf(K * OH * OH, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = act;
    nd.epi.alpha = 0.0f;
    nd.epi.beta = 6.0f;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, K, OH, OH};
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT}, out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    double flops = 2.0 * (double)K * (double)(C / G) * (double)(ks * ks) * (double)(OH * OH);
    report(name, k->name, flops, k, trtl_ref_convolution, &nd, &in, &out);
    free(w);
    free(b);
    free(x);
    free(y);
}

static void bench_fc(const char *name, int64_t M, int64_t D, int64_t K)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_FULLY_CONNECTED;
    nd.name = (char *)name;
    float *w = bench_rand_buf(K * D, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(M * D, 1.0f),
          *y = bench_rand_buf(M * K, 1.0f);
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = TRTL_ACT_RELU;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {M, D, 1, 1}, yd[4] = {M, K, 1, 1};
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT}, out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    report(name, trtl_kernel_fc_sgemm.name, 2.0 * (double)(M * K * D), &trtl_kernel_fc_sgemm,
           trtl_ref_fully_connected, &nd, &in, &out);
    free(w);
    free(b);
    free(x);
    free(y);
}

static void bench_mm(const char *name, int64_t batch, int64_t M, int64_t K, int64_t N, int shared_b)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_MATRIX_MULTIPLY;
    nd.name = (char *)name;
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = 2;
    nd.n_out = 1;
    float *A = bench_rand_buf(batch * M * K, 1.0f), *B = bench_rand_buf((shared_b ? 1 : batch) * K * N, 1.0f),
          *C = bench_rand_buf(batch * M * N, 1.0f);
    int64_t ad[3] = {batch, M, K}, bd[3] = {shared_b ? 1 : batch, K, N}, cd[3] = {batch, M, N};
    trtl_tensor_view in[2] = {{A, trtl_dims_make(3, ad), TRTL_FLOAT}, {B, trtl_dims_make(3, bd), TRTL_FLOAT}};
    trtl_tensor_view out = {C, trtl_dims_make(3, cd), TRTL_FLOAT};
    report(name, trtl_kernel_matmul_sgemm.name, 2.0 * (double)(batch * M * K * N), &trtl_kernel_matmul_sgemm,
           trtl_ref_matrix_multiply, &nd, in, &out);
    free(A);
    free(B);
    free(C);
}

static void noop_task(void *ctx, int64_t b, int64_t e, int thread)
{
    (void)ctx;
    (void)b;
    (void)e;
    (void)thread;
}

static void spin_task(void *ctx, int64_t b, int64_t e, int thread)
{
    volatile double *acc = ctx;
    (void)thread;
    for (int64_t i = b; i < e; i++) {
        double x = 1.0;
        for (int r = 0; r < 2000000; r++)
            x = x * 1.0000001 + 1e-9;
        acc[i] = x;
    }
}

/* Pool overhead: parallel_for of an empty job back to back (workers spinning) and after a 5 ms
 * pause (workers asleep), and the speedup on a compute-bound loop.  Run it last: OpenBLAS
 * (pthreads build) starts its own threads when it loads and they busy-wait for a while (~0.1 s),
 * sharing our cores. */
static void bench_pool(void)
{
    double t[200], acc[64];
    for (int i = 0; i < 200; i++) {
        double t0 = bench_wall_s();
        trtl_parallel_for(g_pool, 64, 1, noop_task, NULL);
        t[i] = bench_wall_s() - t0;
    }
    qsort(t, 200, sizeof t[0], cmp_d);
    double hot = t[100];
    for (int i = 0; i < 20; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        double t0 = bench_wall_s();
        trtl_parallel_for(g_pool, 64, 1, noop_task, NULL);
        t[i] = bench_wall_s() - t0;
    }
    qsort(t, 20, sizeof t[0], cmp_d);
    double cold = t[10];
    int n = trtl_threadpool_size(g_pool);
    double t0 = bench_wall_s();
    spin_task(acc, 0, n, 0);
    double serial = bench_wall_s() - t0;
    t0 = bench_wall_s();
    trtl_parallel_for(g_pool, n, 1, spin_task, acc);
    double par = bench_wall_s() - t0;
    printf("pool: %d threads; empty parallel_for %.2f us (workers spinning), %.2f us (workers asleep); "
           "compute-bound %.2f ms serial, %.2f ms parallel: x%.2f\n",
           n, hot * 1e6, cold * 1e6, serial * 1e3, par * 1e3, serial / par);
}

int main(int argc, char **argv)
{
    g_filter = argc > 1 ? argv[1] : NULL;
    if (trtl_threadpool_create(0, &g_pool) != TRTL_OK)
        return 1;
    printf("kernels_bench: %d threads, cpu features 0x%x\n", trtl_threadpool_size(g_pool), trtl_cpu_features());
    const trtl_kernel *im2col = &trtl_kernel_conv_im2col_sgemm, *dw = &trtl_kernel_conv_depthwise_avx2;
    /* ResNet-18/50 */
    conv_shape("resnet conv1 3->64 k7s2 224", im2col, 3, 64, 1, 224, 7, 2, 3, TRTL_ACT_RELU);
    conv_shape("resnet 3x3 64->64 56", im2col, 64, 64, 1, 56, 3, 1, 1, TRTL_ACT_RELU);
    conv_shape("resnet 1x1 64->256 56", im2col, 64, 256, 1, 56, 1, 1, 0, TRTL_ACT_RELU);
    conv_shape("resnet 1x1 256->64 56", im2col, 256, 64, 1, 56, 1, 1, 0, TRTL_ACT_RELU);
    conv_shape("resnet 1x1s2 256->512 56", im2col, 256, 512, 1, 56, 1, 2, 0, TRTL_ACT_NONE);
    conv_shape("resnet 3x3s2 128->128 56", im2col, 128, 128, 1, 56, 3, 2, 1, TRTL_ACT_RELU);
    conv_shape("resnet 3x3 128->128 28", im2col, 128, 128, 1, 28, 3, 1, 1, TRTL_ACT_RELU);
    conv_shape("resnet 3x3 256->256 14", im2col, 256, 256, 1, 14, 3, 1, 1, TRTL_ACT_RELU);
    conv_shape("resnet 3x3 512->512 7", im2col, 512, 512, 1, 7, 3, 1, 1, TRTL_ACT_RELU);
    conv_shape("resnet 1x1 512->2048 7", im2col, 512, 2048, 1, 7, 1, 1, 0, TRTL_ACT_RELU);
    conv_shape("vgg 3x3 256->256 56", im2col, 256, 256, 1, 56, 3, 1, 1, TRTL_ACT_RELU);
    conv_shape("vgg 3x3 64->64 224", im2col, 64, 64, 1, 224, 3, 1, 1, TRTL_ACT_RELU);
    /* LeNet */
    conv_shape("lenet conv1 1->20 k5 28", im2col, 1, 20, 1, 28, 5, 1, 0, TRTL_ACT_NONE);
    conv_shape("lenet conv2 20->50 k5 12", im2col, 20, 50, 1, 12, 5, 1, 0, TRTL_ACT_NONE);
    /* MobileNetV2 depthwise (ReLU6), and the same through im2col for comparison */
    static const struct { int64_t C, H, s; } mb[] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2},
                                                   {192, 28, 1},  {384, 14, 1}, {576, 14, 2},  {960, 7, 1}};
    if (trtl_cpu_has(dw->cpu_features))
        for (size_t i = 0; i < sizeof mb / sizeof mb[0]; i++) {
            char nm[64];
            snprintf(nm, sizeof nm, "mbv2 dw3x3 %lld s%lld %lld", (long long)mb[i].C, (long long)mb[i].s,
                     (long long)mb[i].H);
            conv_shape(nm, dw, mb[i].C, mb[i].C, mb[i].C, mb[i].H, 3, mb[i].s, 1, TRTL_ACT_CLIP);
            conv_shape(nm, im2col, mb[i].C, mb[i].C, mb[i].C, mb[i].H, 3, mb[i].s, 1, TRTL_ACT_CLIP);
        }
    conv_shape("mbv2 1x1 32->16 112", im2col, 32, 16, 1, 112, 1, 1, 0, TRTL_ACT_NONE);
    conv_shape("mbv2 1x1 96->24 56", im2col, 144, 24, 1, 56, 1, 1, 0, TRTL_ACT_NONE);
    conv_shape("mbv2 1x1 24->144 56", im2col, 24, 144, 1, 56, 1, 1, 0, TRTL_ACT_CLIP);
    conv_shape("mbv2 1x1 320->1280 7", im2col, 320, 1280, 1, 7, 1, 1, 0, TRTL_ACT_CLIP);
    /* fully connected, matmul */
    bench_fc("lenet fc 800->500", 1, 800, 500);
    bench_fc("resnet fc 2048->1000", 1, 2048, 1000);
    bench_fc("vgg fc 25088->4096", 1, 25088, 4096);
    bench_fc("fc batch 32 1024->1024", 32, 1024, 1024);
    bench_mm("matmul 128x768 * 768x768 shared", 1, 128, 768, 768, 1);
    bench_mm("matmul 12x 64x64 * 64x64", 12, 64, 64, 64, 0);
    bench_mm("matmul 4x 256x256 * 256x256", 4, 256, 256, 256, 0);
    /* last: OpenBLAS's own threads spin for a while after the library loads */
    if (!g_filter || strstr("pool", g_filter))
        bench_pool();
    trtl_threadpool_destroy(g_pool);
    return 0;
}
