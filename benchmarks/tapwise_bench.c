/*
 * tapwise_bench.c -- milliseconds of convolution.tapwise against the other fp32 convolution kernels on
 * the dilated convolutions of DeepLabV3's ASPP (960 -> 256 channels, 3x3, dilation = padding = 12 / 24 /
 * 36) at 224x224 (14x14 map) and 512x512 (32x32) inputs, batch 1, ReLU fused.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/tapwise_bench.c -o build/tapwise_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/tapwise_bench [--reps N] [--threads N]
 *
 * The figure is the minimum CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID, no pool) over the
 * runs, which other processes on a loaded machine inflate far less than wall time; --threads N > 1: the
 * minimum wall time with a pool of N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "core/dims.h"
#include "core/threadpool.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_tapwise;
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_conv_pixel_gemm;

static int g_reps = 10;
static trtl_threadpool *g_pool;

static void bench(int64_t C, int64_t K, int64_t H, int64_t d)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = "aspp";
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = 1;
    int64_t kk[2] = {3, 3}, one[2] = {1, 1}, dd[2] = {d, d};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, one);
    p->dilation = trtl_dims_make(2, dd);
    p->pre_padding = p->post_padding = trtl_dims_make(2, dd);
    int64_t nw = K * C * 9;
    float *w = bench_rand_buf(nw, 0.1f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(C * H * H, 1.0f),
          *y = bench_rand_buf(K * H * H, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = TRTL_ACT_RELU;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, K, H, H};
    trtl_tensor_view in[1] = {{x, trtl_dims_make(4, xd), TRTL_FLOAT}};
    trtl_tensor_view out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    const trtl_kernel *ks[] = {&trtl_kernel_conv_tapwise, &trtl_kernel_conv_packed_gemm,
                               &trtl_kernel_conv_im2col_sgemm, &trtl_kernel_conv_pixel_gemm};
    printf("C=%lld K=%lld %lldx%lld d=%-3lld", (long long)C, (long long)K, (long long)H, (long long)H, (long long)d);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        double t = bench_time_kernel(ks[i], &nd, in, &out, g_pool, g_reps);
        if (t > 0)
            printf(" | %s %8.3f ms", ks[i]->name + 12, t * 1e3);
    }
    printf("\n");
    fflush(stdout);
    free(w);
    free(b);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc && atoi(argv[i + 1]) > 1)
            trtl_threadpool_create(atoi(argv[++i]), &g_pool);
    srand(1);
    for (int64_t d = 12; d <= 36; d += 12)
        bench(960, 256, 14, d);
    bench(960, 256, 32, 12);
    return 0;
}
