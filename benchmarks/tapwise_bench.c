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

#include "core/threadpool.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_tapwise;
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_conv_pixel_gemm;

int main(int argc, char **argv)
{
    int reps = 10;
    trtl_threadpool *pool = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc && atoi(argv[i + 1]) > 1)
            trtl_threadpool_create(atoi(argv[++i]), &pool);
    const trtl_kernel *ks[] = {&trtl_kernel_conv_tapwise, &trtl_kernel_conv_packed_gemm,
                               &trtl_kernel_conv_im2col_sgemm, &trtl_kernel_conv_pixel_gemm};
    const int64_t cases[][2] = {{14, 12}, {14, 24}, {14, 36}, {32, 12}}; /* map, dilation */
    srand(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench_conv c;
        bench_conv_make(&c, 960, 256, cases[i][0], 3, 1, cases[i][1], 1, TRTL_ACT_RELU);
        printf("C=960 K=256 %lldx%lld d=%-3lld", (long long)cases[i][0], (long long)cases[i][0],
               (long long)cases[i][1]);
        bench_conv_row(&c, ks, (int)(sizeof ks / sizeof ks[0]), pool, reps);
        bench_conv_free(&c);
    }
    trtl_threadpool_destroy(pool);
    return 0;
}
