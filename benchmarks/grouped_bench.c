/*
 * grouped_bench.c -- milliseconds of convolution.grouped_direct against convolution.packed_gemm on the grouped
 * 3x3 convolutions of RegNetY-400MF at 224x224 (group width 8; 48 / 104 / 208 / 440 channels on 56 / 28 / 14 /
 * 7 maps, stride 2 at each stage's first block), batch 1, ReLU fused.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/grouped_bench.c -o build/grouped_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/grouped_bench [--reps N]
 *
 * The figure is the minimum CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID, no pool) over the
 * runs, which other processes on a loaded machine inflate far less than wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "core/dims.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_grouped_direct;
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;

static int g_reps = 20;

static void bench(int64_t C, int64_t H, int64_t s)
{
    const int64_t G = C / 8, OH = (H + 2 - 3) / s + 1;
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = "grouped";
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)C;
    p->num_groups = (int32_t)G;
    int64_t kk[2] = {3, 3}, one[2] = {1, 1}, st[2] = {s, s};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, st);
    p->dilation = trtl_dims_make(2, one);
    p->pre_padding = p->post_padding = trtl_dims_make(2, one);
    int64_t nw = C * 8 * 9;
    float *w = bench_rand_buf(nw, 0.1f), *b = bench_rand_buf(C, 1.0f), *x = bench_rand_buf(C * H * H, 1.0f),
          *y = bench_rand_buf(C * OH * OH, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, C};
    nd.epi.act = TRTL_ACT_RELU;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, C, OH, OH};
    trtl_tensor_view in[1] = {{x, trtl_dims_make(4, xd), TRTL_FLOAT}};
    trtl_tensor_view out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    const trtl_kernel *ks[] = {&trtl_kernel_conv_grouped_direct, &trtl_kernel_conv_packed_gemm,
                               &trtl_kernel_conv_im2col_sgemm};
    printf("C=%-4lld G=%-3lld %3lldx%-3lld s=%lld", (long long)C, (long long)G, (long long)H, (long long)H,
           (long long)s);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        double t = bench_time_kernel(ks[i], &nd, in, &out, NULL, g_reps);
        if (t > 0)
            printf(" | %s %8.4f ms", ks[i]->name + 12, t * 1e3);
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
    srand(1);
    bench(48, 112, 2);
    bench(104, 56, 2);
    bench(104, 28, 1);
    bench(208, 28, 2);
    bench(208, 14, 1);
    bench(440, 14, 2);
    bench(440, 7, 1);
    return 0;
}
