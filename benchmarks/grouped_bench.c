/*
 * grouped_bench.c -- milliseconds of convolution.grouped_direct against convolution.packed_gemm on the grouped
 * 3x3 convolutions of RegNetY-400MF at 224x224 (group width 8; 48 / 104 / 208 / 440 channels on 56 / 28 / 14 /
 * 7 maps, stride 2 at each stage's first block), ReLU fused.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/grouped_bench.c -o build/grouped_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/grouped_bench [--reps N] [--batch N]
 *
 * The figure is the minimum CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID, no pool) over the runs, the
 * kernels taking turns run by run (a loaded machine's slow phases hit them alike), which other processes on a
 * loaded machine inflate far less than wall time.  A/B of two builds of grouped_direct in one process: compile
 * the other version with -Dtrtl_kernel_conv_grouped_direct=trtl_kernel_conv_grouped_direct_alt into an object and
 * link it in; it is timed as "grouped_direct(alt)".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_grouped_direct;
extern const trtl_kernel trtl_kernel_conv_grouped_direct_alt __attribute__((weak));
extern const trtl_kernel trtl_kernel_conv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_im2col_sgemm;

#define NK 4

int main(int argc, char **argv)
{
    int reps = 20;
    int64_t N = 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            N = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
    const trtl_kernel *ks[NK] = {&trtl_kernel_conv_grouped_direct, &trtl_kernel_conv_grouped_direct_alt,
                                 &trtl_kernel_conv_packed_gemm, &trtl_kernel_conv_im2col_sgemm};
    const int64_t cases[][3] = {{48, 112, 2}, {104, 56, 2}, {104, 28, 1}, {208, 28, 2},
                                {208, 14, 1}, {440, 14, 2}, {440, 7, 1}}; /* channels, map, stride */
    srand(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t C = cases[i][0], H = cases[i][1], s = cases[i][2];
        bench_conv c;
        bench_conv_make(&c, C, C, H, 3, s, 1, C / 8, TRTL_ACT_RELU);
        /* batch N: the same image N times */
        const int64_t xn = C * H * H, yn = c.out.dims.d[1] * c.out.dims.d[2] * c.out.dims.d[3];
        float *x = malloc((size_t)(N * xn) * sizeof(float)), *y = malloc((size_t)(N * yn) * sizeof(float));
        for (int64_t n = 0; n < N; n++)
            memcpy(x + n * xn, c.x, (size_t)xn * sizeof(float));
        trtl_tensor_view in = c.in[0], out = c.out;
        in.data = x;
        out.data = y;
        in.dims.d[0] = out.dims.d[0] = N;
        void *state[NK] = {0}, *scratch[NK] = {0};
        trtl_kernel_args a[NK];
        double best[NK];
        for (int k = 0; k < NK; k++) {
            best[k] = -1;
            if (!ks[k] || (ks[k]->applies && !ks[k]->applies(&c.nd, &in.dims)) ||
                (ks[k]->prepare && ks[k]->prepare(&c.nd, &state[k]) != TRTL_OK))
                continue;
            size_t ss = ks[k]->scratch ? ks[k]->scratch(&c.nd, &in, &out) : 0;
            scratch[k] = ss ? malloc(ss) : NULL;
            a[k] = (trtl_kernel_args){&c.nd, &in, &out, scratch[k], ss, state[k], NULL, NULL};
            if (ks[k]->run(&a[k]) == TRTL_OK)
                best[k] = 1e9;
        }
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < NK; k++) {
                if (best[k] < 0)
                    continue;
                double t0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
                ks[k]->run(&a[k]);
                double t = bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
                best[k] = t < best[k] ? t : best[k];
            }
        printf("C=%-4lld G=%-3lld %3lldx%-3lld s=%lld", (long long)C, (long long)(C / 8), (long long)H, (long long)H,
               (long long)s);
        for (int k = 0; k < NK; k++) {
            if (best[k] > 0)
                printf(" | %s%s %8.4f ms", ks[k]->name + 12, k == 1 ? "(alt)" : "", best[k] * 1e3);
            if (ks[k] && ks[k]->release && state[k])
                ks[k]->release(state[k]);
            free(scratch[k]);
        }
        printf("\n");
        fflush(stdout);
        free(x);
        free(y);
        bench_conv_free(&c);
    }
    return 0;
}
