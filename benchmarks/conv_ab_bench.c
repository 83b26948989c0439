/*
 * conv_ab_bench.c -- per-shape milliseconds of every fp32 convolution kernel (and 2-D max / average pooling)
 * on ResNet-18/50 and YOLO/DenseNet-style shapes, batch 1, for A/B comparisons of kernel changes on
 * a shared machine.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/conv_ab_bench.c -o build/conv_ab_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/conv_ab_bench [filter] [--threads N] [--reps N] [--cold] [--batch N]
 *
 * For an A/B comparison, copy the old build/libtrtlite.so into a folder first and link a second
 * binary against it (-L<folder> -Wl,-rpath,<folder>); the kernels are the library's exported
 * trtl_kernel_* tables.
 *
 * One thread (default): the figure is the minimum CPU time of the calling thread
 * (CLOCK_THREAD_CPUTIME_ID) over the runs, which other processes on a loaded machine inflate far
 * less than wall time.  --threads N > 1: the minimum wall time with a pool of N.  To compare two
 * builds, run their binaries alternately (A B A B) and compare the minima.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/ref/ref.h"
#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/dims.h"
#include "core/status.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_winograd_f43;
extern const trtl_kernel trtl_kernel_conv_winograd_f23;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_pooling_2d;
#ifndef NO_PIXEL_GEMM /* -DNO_PIXEL_GEMM: a binary for a library built before convolution.pixel_gemm */
extern const trtl_kernel trtl_kernel_conv_pixel_gemm;
#endif
#ifndef NO_STEM /* -DNO_STEM: a library built before convolution.stem */
extern const trtl_kernel trtl_kernel_conv_stem;
#endif
#ifndef NO_NCHWC_DENSE /* -DNO_NCHWC_DENSE: a library built before nchwc_conv.avx2's dense path */
extern const trtl_kernel trtl_kernel_nchwc_conv_avx2;
#endif

static int g_threads = 1, g_reps = 15;
static int64_t g_batch = 1; /* --batch N: images per run (the convolution shapes) */
static trtl_threadpool *g_pool;

static const char *g_filter;

/* A square convolution of C -> K channels on an H x H map, kernel ks, stride s, padding pad on every side, ReLU
 * (and a residual when res). */
static void conv_shape_rs(const char *name, int64_t C, int64_t K, int64_t H, int64_t kh, int64_t kw, int64_t s,
                          int64_t ph, int64_t pw, int res)
{
    if (g_filter && !strstr(name, g_filter))
        return;
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = (char *)name;
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = 1;
    int64_t kk[2] = {kh, kw}, st[2] = {s, s}, one[2] = {1, 1}, pp[2] = {ph, pw};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, st);
    p->dilation = trtl_dims_make(2, one);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    int64_t OH = (H + 2 * ph - kh) / s + 1, OW = (H + 2 * pw - kw) / s + 1;
    int64_t nw = K * C * kh * kw;
    const int64_t N = g_batch;
    float *w = bench_rand_buf(nw, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(N * C * H * H, 1.0f),
          *y = bench_rand_buf(N * K * OH * OW, 1.0f);
    float *r = bench_rand_buf(N * K * OH * OW, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = TRTL_ACT_RELU;
    nd.n_in = 1 + (res != 0);
    nd.n_out = 1;
    nd.epi.has_residual = res ? 1 : 0;
    int64_t xd[4] = {N, C, H, H}, yd[4] = {N, K, OH, OW};
    trtl_tensor_view in[2] = {{x, trtl_dims_make(4, xd), TRTL_FLOAT}, {r, trtl_dims_make(4, yd), TRTL_FLOAT}};
    trtl_tensor_view out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    double flops = 2.0 * (double)N * (double)K * (double)C * (double)(kh * kw) * (double)(OH * OW);
    const trtl_kernel *ks_[] = {&trtl_kernel_conv_packed_gemm, &trtl_kernel_conv_winograd_f43,
                                &trtl_kernel_conv_winograd_f23, &trtl_kernel_conv_im2col_sgemm,
#ifndef NO_PIXEL_GEMM
                                &trtl_kernel_conv_pixel_gemm,
#endif
#ifndef NO_STEM
                                &trtl_kernel_conv_stem,
#endif
    };
    printf("%-30s %7.1f MFLOP", name, flops / 1e6);
    for (size_t i = 0; i < sizeof ks_ / sizeof ks_[0]; i++) {
        double t = bench_time_kernel(ks_[i], &nd, in, &out, g_threads > 1 ? g_pool : NULL, g_reps);
        if (t > 0)
            printf(" | %s %7.3f ms %5.0f GF/s", ks_[i]->name + 12, t * 1e3, flops / t / 1e9);
    }
#ifndef NO_NCHWC_DENSE
    if (C <= 16 && !res) { /* the same convolution writing the blocked layout (NCHWC_CONV, plain -> blocked) */
        int64_t ybd[5] = {N, (K + 7) / 8, OH, OW, 8};
        float *yb = bench_rand_buf(N * ybd[1] * OH * OW * 8, 1.0f);
        trtl_tensor_view outb = {yb, trtl_dims_make(5, ybd), TRTL_FLOAT};
        nd.op = TRTL_OP_NCHWC_CONV;
        nd.p.nchwc.in_block = 0;
        nd.p.nchwc.out_block = 8;
        double t = bench_time_kernel(&trtl_kernel_nchwc_conv_avx2, &nd, in, &outb, g_threads > 1 ? g_pool : NULL,
                                     g_reps);
        if (t > 0)
            printf(" | nchwc dense %7.3f ms %5.0f GF/s", t * 1e3, flops / t / 1e9);
        nd.op = TRTL_OP_CONVOLUTION;
        free(yb);
    }
#endif
    printf("\n");
    fflush(stdout);
    free(w);
    free(b);
    free(x);
    free(y);
    free(r);
}

static void conv_shape_pad(const char *name, int64_t C, int64_t K, int64_t H, int64_t ks, int64_t s, int64_t pad,
                           int res)
{
    conv_shape_rs(name, C, K, H, ks, ks, s, pad, pad, res);
}

/* "Same" padding ks / 2. */
static void conv_shape(const char *name, int64_t C, int64_t K, int64_t H, int64_t ks, int64_t s, int res)
{
    conv_shape_pad(name, C, K, H, ks, s, ks / 2, res);
}

static void bench_pool_pad(const char *name, int64_t C, int64_t H, int64_t s, int type, int64_t pad)
{
    if (g_filter && !strstr(name, g_filter))
        return;
    trtl_node nd = {0};
    nd.op = TRTL_OP_POOLING;
    nd.name = (char *)name;
    trtl_pooling_params *p = &nd.p.pool;
    int64_t kk[2] = {3, 3}, st[2] = {s, s}, pp[2] = {pad, pad};
    p->type = type;
    p->window_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, st);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    int64_t OH = (H + 2 * pad - 3) / s + 1;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, C, OH, OH};
    float *x = bench_rand_buf(C * H * H, 1.0f), *y = bench_rand_buf(C * OH * OH, 1.0f);
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT}, out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    double t = bench_time_kernel(&trtl_kernel_pooling_2d, &nd, &in, &out, g_threads > 1 ? g_pool : NULL, g_reps);
    printf("%-30s | pooling.2d %7.3f ms\n", name, t * 1e3);
    free(x);
    free(y);
}

/* 3x3 windows, padding 1 */
static void bench_pool(const char *name, int64_t C, int64_t H, int64_t s, int type)
{
    bench_pool_pad(name, C, H, s, type, 1);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            g_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            g_batch = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else if (!strcmp(argv[i], "--cold")) /* operands from memory: 64 MiB written before every run */
            bench_cold_bytes = (size_t)64 << 20;
        else
            g_filter = argv[i];
    }
    if (g_threads > 1)
        trtl_threadpool_create(g_threads, &g_pool);
    bench_pool("maxpool 3x3s2 64x112", 64, 112, 2, TRTL_POOL_MAX);
    bench_pool("maxpool 3x3s2 64x56", 64, 56, 2, TRTL_POOL_MAX);
    bench_pool("maxpool 3x3s2 64x111 (squeezenet)", 64, 111, 2, TRTL_POOL_MAX);
    bench_pool_pad("maxpool 3x3s2 64x111 p0 (squeezenet)", 64, 111, 2, TRTL_POOL_MAX, 0);
    bench_pool_pad("maxpool 3x3s2 128x55 p0 (squeezenet)", 128, 55, 2, TRTL_POOL_MAX, 0);
    bench_pool_pad("maxpool 3x3s2 256x27 p0 (squeezenet)", 256, 27, 2, TRTL_POOL_MAX, 0);
    bench_pool_pad("maxpool 3x3s2 32x27 p0 (in L2)", 32, 27, 2, TRTL_POOL_MAX, 0);
    bench_pool("maxpool 3x3s2 128x76 (yolo-like)", 128, 76, 2, TRTL_POOL_MAX);
    bench_pool("maxpool 3x3s1 192x28 (googlenet)", 192, 28, 1, TRTL_POOL_MAX);
    bench_pool("maxpool 3x3s1 480x14 (googlenet)", 480, 14, 1, TRTL_POOL_MAX);
    bench_pool("maxpool 3x3s1 832x7 (googlenet)", 832, 7, 1, TRTL_POOL_MAX);
    bench_pool("maxpool 3x3s2 480x28 (googlenet)", 480, 28, 2, TRTL_POOL_MAX);
    bench_pool("avgpool 3x3s1 288x35 (inception)", 288, 35, 1, TRTL_POOL_AVERAGE);
    bench_pool("avgpool 3x3s1 768x17 (inception)", 768, 17, 1, TRTL_POOL_AVERAGE);
    bench_pool("avgpool 3x3s1 192x35 (inception)", 192, 35, 1, TRTL_POOL_AVERAGE);
    bench_pool("avgpool 3x3s1 2048x8 (inception)", 2048, 8, 1, TRTL_POOL_AVERAGE);
    bench_pool_pad("maxpool 3x3s2 64x147 p0 (inception)", 64, 147, 2, TRTL_POOL_MAX, 0);
    bench_pool_pad("maxpool 3x3s2 192x71 p0 (inception)", 192, 71, 2, TRTL_POOL_MAX, 0);
    bench_pool_pad("maxpool 3x3s2 288x35 p0 (inception)", 288, 35, 2, TRTL_POOL_MAX, 0);
    bench_pool_pad("maxpool 3x3s2 768x17 p0 (inception)", 768, 17, 2, TRTL_POOL_MAX, 0);
    conv_shape("r18 7x7s2 3->64 224", 3, 64, 224, 7, 2, 0);
    conv_shape("stem mnv2 3x3s2 3->32 224", 3, 32, 224, 3, 2, 0);
    conv_shape("stem mnv3 3x3s2 3->16 224", 3, 16, 224, 3, 2, 0);
    conv_shape("stem shufflenet 3x3s2 3->24 224", 3, 24, 224, 3, 2, 0);
    conv_shape_pad("stem squeezenet 3x3s2 3->64 224 p0", 3, 64, 224, 3, 2, 0, 0);
    conv_shape("stem unet 3x3 3->16 256", 3, 16, 256, 3, 1, 0);
    conv_shape("stem yolo 3x3 3->16 320", 3, 16, 320, 3, 1, 0);
    conv_shape("stem yolo 3x3 3->32 320", 3, 32, 320, 3, 1, 0);
    conv_shape_pad("stem convnext 4x4s4 3->96 224", 3, 96, 224, 4, 4, 0, 0);
    conv_shape_pad("stem vit 16x16s16 3->768 224", 3, 768, 224, 16, 16, 0, 0);
    conv_shape("stem 3x3 16->32 112", 16, 32, 112, 3, 1, 0);
    conv_shape("r18 3x3 64->64 56", 64, 64, 56, 3, 1, 1);
    conv_shape("r18 3x3s2 64->128 56", 64, 128, 56, 3, 2, 0);
    conv_shape("r18 3x3 128->128 28", 128, 128, 28, 3, 1, 1);
    conv_shape("r18 3x3s2 128->256 28", 128, 256, 28, 3, 2, 0);
    conv_shape("r18 3x3 256->256 14", 256, 256, 14, 3, 1, 1);
    conv_shape("r18 3x3s2 256->512 14", 256, 512, 14, 3, 2, 0);
    conv_shape("r18 3x3 512->512 7", 512, 512, 7, 3, 1, 1);
    conv_shape("r18 1x1s2 64->128 56", 64, 128, 56, 1, 2, 0);
    conv_shape("r50 1x1 64->256 56", 64, 256, 56, 1, 1, 1);
    conv_shape("r50 1x1 256->64 56", 256, 64, 56, 1, 1, 0);
    conv_shape("r50 1x1 512->128 28", 512, 128, 28, 1, 1, 0);
    conv_shape("r50 1x1 1024->256 14", 1024, 256, 14, 1, 1, 0);
    conv_shape("r50 1x1 256->1024 14", 256, 1024, 14, 1, 1, 1);
    conv_shape("r50 1x1 2048->512 7", 2048, 512, 7, 1, 1, 0);
    conv_shape("r50 1x1 512->2048 7", 512, 2048, 7, 1, 1, 1);
    conv_shape("yolo 3x3 32->64 160", 32, 64, 160, 3, 1, 0);
    conv_shape("dn 1x1 512->128 28", 512, 128, 28, 1, 1, 0);
    conv_shape("dn 3x3 128->32 14", 128, 32, 14, 3, 1, 0);
    conv_shape_rs("incep 7x1 192->192 17", 192, 192, 17, 7, 1, 1, 3, 0, 0);
    conv_shape_rs("incep 1x7 192->192 17", 192, 192, 17, 1, 7, 1, 0, 3, 0);
    conv_shape_rs("incep 7x1 160->160 17", 160, 160, 17, 7, 1, 1, 3, 0, 0);
    conv_shape_rs("incep 1x7 128->128 17", 128, 128, 17, 1, 7, 1, 0, 3, 0);
    conv_shape_rs("incep 3x1 384->384 8", 384, 384, 8, 3, 1, 1, 1, 0, 0);
    conv_shape_rs("incep 1x3 384->384 8", 384, 384, 8, 1, 3, 1, 0, 1, 0);
    conv_shape("incep 5x5 48->64 35", 48, 64, 35, 5, 1, 0);
    conv_shape_pad("incep 3x3s2 288->384 35", 288, 384, 35, 3, 2, 0, 0);
    conv_shape_pad("incep 3x3s2 96->96 35", 96, 96, 35, 3, 2, 0, 0);
    conv_shape("incep 1x1 768->192 17", 768, 192, 17, 1, 1, 0);
    trtl_threadpool_destroy(g_pool);
    return 0;
}
