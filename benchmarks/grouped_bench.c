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

#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_grouped_direct;
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;

int main(int argc, char **argv)
{
    int reps = 20;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
    const trtl_kernel *ks[] = {&trtl_kernel_conv_grouped_direct, &trtl_kernel_conv_packed_gemm,
                               &trtl_kernel_conv_im2col_sgemm};
    const int64_t cases[][3] = {{48, 112, 2}, {104, 56, 2}, {104, 28, 1}, {208, 28, 2},
                                {208, 14, 1}, {440, 14, 2}, {440, 7, 1}}; /* channels, map, stride */
    srand(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t C = cases[i][0], H = cases[i][1], s = cases[i][2];
        bench_conv c;
        bench_conv_make(&c, C, C, H, 3, s, 1, C / 8, TRTL_ACT_RELU);
        printf("C=%-4lld G=%-3lld %3lldx%-3lld s=%lld", (long long)C, (long long)(C / 8), (long long)H, (long long)H,
               (long long)s);
        bench_conv_row(&c, ks, (int)(sizeof ks / sizeof ks[0]), NULL, reps);
        bench_conv_free(&c);
    }
    return 0;
}
