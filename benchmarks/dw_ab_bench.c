/*
 * dw_ab_bench.c -- per-shape microseconds of the fp32 depthwise convolution kernels on MobileNet /
 * EfficientNet / DeepLabV3 shapes, batch 1, one thread, for A/B comparisons of kernel changes on a
 * shared machine.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/dw_ab_bench.c -o build/dw_ab_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/dw_ab_bench [filter] [--reps N] [--rounds R]
 *
 * The figure is the minimum CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID) over the runs; --rounds R
 * times the kernels of a shape in turn R times (min over all), so that load changes hit them alike.
 * For an A/B comparison link a second binary against an older libtrtlite.so and run both alternately.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernel.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/cpu.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_depthwise;
extern const trtl_kernel trtl_kernel_conv_depthwise_avx2;
extern const trtl_kernel trtl_kernel_conv_depthwise_c16;
extern const trtl_kernel trtl_kernel_conv_depthwise_plane512;
extern const trtl_kernel trtl_kernel_conv_depthwise_c8;
extern const trtl_kernel trtl_kernel_conv_depthwise_rows8;

static int g_reps = 30, g_rounds = 1;
static const char *g_filter;

static void bench_dw(const char *name, int64_t C, int64_t H, int64_t ks, int64_t s, int64_t d, int32_t act)
{
    if (g_filter && !strstr(name, g_filter))
        return;
    int64_t pad = d * (ks - 1) / 2;
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = (char *)name;
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = p->num_groups = (int32_t)C;
    int64_t kk[2] = {ks, ks}, st[2] = {s, s}, dl[2] = {d, d}, pp[2] = {pad, pad};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, st);
    p->dilation = trtl_dims_make(2, dl);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    int64_t OH = (H + 2 * pad - d * (ks - 1) - 1) / s + 1;
    float *w = bench_rand_buf(C * ks * ks, 1.0f), *b = bench_rand_buf(C, 1.0f), *x = bench_rand_buf(C * H * H, 1.0f),
          *y = bench_rand_buf(C * OH * OH, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, C * ks * ks};
    p->bias = (trtl_weights){TRTL_FLOAT, b, C};
    nd.epi.act = act;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, C, OH, OH};
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT};
    trtl_tensor_view out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    const trtl_kernel *ks_[] = {&trtl_kernel_conv_depthwise, &trtl_kernel_conv_depthwise_avx2,
                                &trtl_kernel_conv_depthwise_c16, &trtl_kernel_conv_depthwise_plane512,
                                &trtl_kernel_conv_depthwise_c8, &trtl_kernel_conv_depthwise_rows8};
    enum { NK = sizeof ks_ / sizeof ks_[0] };
    double best[NK];
    for (size_t i = 0; i < NK; i++)
        best[i] = -1;
    for (int r = 0; r < g_rounds; r++)
        for (size_t i = 0; i < NK; i++) {
            if (!trtl_cpu_has(ks_[i]->cpu_features))
                continue; /* e.g. the AVX-512 kernels on an AVX2-only machine */
            double t = bench_time_kernel(ks_[i], &nd, &in, &out, NULL, g_reps);
            if (t > 0 && (best[i] < 0 || t < best[i]))
                best[i] = t;
        }
    printf("%-28s", name);
    for (size_t i = 0; i < NK; i++)
        if (best[i] > 0)
            printf(" | %s %7.1f us", ks_[i]->name + 12, best[i] * 1e6);
    printf("\n");
    fflush(stdout);
    free(w);
    free(b);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            g_rounds = atoi(argv[++i]);
        else
            g_filter = argv[i];
    }
    bench_dw("3x3 s1 C32 112 relu", 32, 112, 3, 1, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s2 C96 112 relu", 96, 112, 3, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s1 C144 56 relu", 144, 56, 3, 1, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s2 C144 56 relu", 144, 56, 3, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s2 C192 28 relu", 192, 28, 3, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s2 C576 14 relu", 576, 14, 3, 2, 1, TRTL_ACT_RELU);
    bench_dw("5x5 s2 C144 56 relu", 144, 56, 5, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s2 C48 112 relu", 48, 112, 3, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s1 C192 28 relu", 192, 28, 3, 1, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s1 C384 14 relu", 384, 14, 3, 1, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s1 C960 7 relu", 960, 7, 3, 1, 1, TRTL_ACT_RELU);
    bench_dw("5x5 s1 C120 28 relu", 120, 28, 5, 1, 1, TRTL_ACT_RELU);
    bench_dw("5x5 s1 C240 28 silu", 240, 28, 5, 1, 1, TRTL_ACT_SILU);
    bench_dw("5x5 s1 C672 14 silu", 672, 14, 5, 1, 1, TRTL_ACT_SILU);
    bench_dw("5x5 s1 C1152 7 silu", 1152, 7, 5, 1, 1, TRTL_ACT_SILU);
    bench_dw("5x5 s1 C1152 7 none", 1152, 7, 5, 1, 1, TRTL_ACT_NONE);
    bench_dw("5x5 s2 C672 14 silu", 672, 14, 5, 2, 1, TRTL_ACT_SILU);
    bench_dw("5x5 s1 d2 C960 14 hswish", 960, 14, 5, 1, 2, TRTL_ACT_HARD_SWISH);
    bench_dw("3x3 s1 d2 C480 14 hswish", 480, 14, 3, 1, 2, TRTL_ACT_HARD_SWISH);
    /* MNASNet 1.0 */
    bench_dw("5x5 s2 C72 56 relu", 72, 56, 5, 2, 1, TRTL_ACT_RELU);
    bench_dw("5x5 s2 C240 28 none", 240, 28, 5, 2, 1, TRTL_ACT_NONE);
    bench_dw("5x5 s1 C480 14 relu", 480, 14, 5, 1, 1, TRTL_ACT_RELU);
    bench_dw("5x5 s2 C576 14 relu", 576, 14, 5, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s1 C1152 7 relu", 1152, 7, 3, 1, 1, TRTL_ACT_RELU);
    /* MobileNetV3-L / EfficientNet-B0 stride 2 on 56 / 28 / 14 maps */
    bench_dw("3x3 s2 C64 56 relu", 64, 56, 3, 2, 1, TRTL_ACT_RELU);
    bench_dw("5x5 s2 C72 28 relu", 72, 28, 5, 2, 1, TRTL_ACT_RELU);
    bench_dw("3x3 s2 C240 14 hswish", 240, 14, 3, 2, 1, TRTL_ACT_HARD_SWISH);
    bench_dw("3x3 s1 C32 112 silu", 32, 112, 3, 1, 1, TRTL_ACT_SILU);
    /* ConvNeXt-T's 7x7 stride 1 (padding 3) on its four stages */
    bench_dw("7x7 s1 C96 56 none", 96, 56, 7, 1, 1, TRTL_ACT_NONE);
    bench_dw("7x7 s1 C192 28 none", 192, 28, 7, 1, 1, TRTL_ACT_NONE);
    bench_dw("7x7 s1 C384 14 none", 384, 14, 7, 1, 1, TRTL_ACT_NONE);
    bench_dw("7x7 s1 C768 7 none", 768, 7, 7, 1, 1, TRTL_ACT_NONE);
    return 0;
}
