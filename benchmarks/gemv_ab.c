/*
 * gemv_ab.c -- convolution.gemv on the squeeze-and-excitation 1x1 layers of MobileNetV3-Large and RegNetY-400MF
 * (one output pixel per image), for A/B comparisons of two builds of the kernel in one process on a shared machine.
 * Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -fPIC -Dtrtl_kernel_conv_gemv=trtl_kernel_conv_gemv_alt -Icsrc -Icsrc/include \
 *       -c OLD/convolution_gemv.c -o build/gemv_alt.o
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include -Ibenchmarks benchmarks/gemv_ab.c build/gemv_alt.o \
 *       -o build/gemv_ab -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/gemv_ab [--batch N] [--reps N] [--evict KiB]
 *
 * A third variant likewise with -Dtrtl_kernel_conv_gemv=trtl_kernel_conv_gemv_alt2 ("alt2").
 *
 * Each round runs every layer of a model in order, the library's kernel and the alt one taking turns layer by layer
 * (the order rotating, each with its own copy of the weights), after writing `--evict` KiB (default 2048: more than L2, so the weights come from L3 as between a network's
 * layers); per layer and in sum the minimum of the calling thread's CPU time over the rounds, and the median of the
 * per-round ratios lib / alt of the model's sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "core/dims.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_gemv;
extern const trtl_kernel trtl_kernel_conv_gemv_alt __attribute__((weak));
extern const trtl_kernel trtl_kernel_conv_gemv_alt2 __attribute__((weak));

typedef struct layer {
    int64_t C, K;
    int act; /* 0 ReLU, 1 hard sigmoid (MobileNetV3), 2 sigmoid (RegNetY) */
} layer;

static const layer mbv3[] = {{72, 24, 0},   {24, 72, 1},   {120, 32, 0},  {32, 120, 1},  {120, 32, 0},
                             {32, 120, 1},  {480, 120, 0}, {120, 480, 1}, {672, 168, 0}, {168, 672, 1},
                             {672, 168, 0}, {168, 672, 1}, {960, 240, 0}, {240, 960, 1}, {960, 240, 0},
                             {240, 960, 1}};
static const layer regnet[] = {{48, 8, 0},    {8, 48, 2},    {104, 12, 0},  {12, 104, 2},  {208, 26, 0},
                               {26, 208, 2},  {440, 52, 0},  {52, 440, 2}};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run_model(const char *name, const layer *ls, int nl, int64_t N, int reps, int64_t evict_floats)
{
    const trtl_kernel *ks[3] = {&trtl_kernel_conv_gemv, &trtl_kernel_conv_gemv_alt, &trtl_kernel_conv_gemv_alt2};
    const int nk = !&trtl_kernel_conv_gemv_alt ? 1 : !&trtl_kernel_conv_gemv_alt2 ? 2 : 3;
    trtl_node nd[3][32]; /* each variant its own weights, so that none finds the other's in a cache */
    trtl_tensor_view in[32], out[3][32];
    float *ev = bench_rand_buf(evict_floats > 0 ? evict_floats : 1, 1.0f);
    for (int l = 0; l < nl; l++) {
        memset(&nd[0][l], 0, sizeof nd[0][l]);
        nd[0][l].op = TRTL_OP_CONVOLUTION;
        nd[0][l].name = (char *)name;
        trtl_conv_params *p = &nd[0][l].p.conv;
        p->num_output_maps = (int32_t)ls[l].K;
        p->num_groups = 1;
        int64_t one[2] = {1, 1}, zero[2] = {0, 0};
        p->kernel_size = p->dilation = p->stride = trtl_dims_make(2, one);
        p->pre_padding = p->post_padding = trtl_dims_make(2, zero);
        p->kernel = (trtl_weights){TRTL_FLOAT, bench_rand_buf(ls[l].K * ls[l].C, 1.0f), ls[l].K * ls[l].C};
        p->bias = (trtl_weights){TRTL_FLOAT, bench_rand_buf(ls[l].K, 1.0f), ls[l].K};
        nd[0][l].epi.act = ls[l].act == 0 ? TRTL_ACT_RELU : ls[l].act == 1 ? TRTL_ACT_HARD_SIGMOID : TRTL_ACT_SIGMOID;
        nd[0][l].epi.alpha = 1.0f / 6.0f;
        nd[0][l].epi.beta = 0.5f;
        nd[0][l].n_in = nd[0][l].n_out = 1;
        for (int k = 1; k < 3; k++) {
            nd[k][l] = nd[0][l];
            float *w = malloc((size_t)(ls[l].K * ls[l].C) * sizeof(float));
            memcpy(w, p->kernel.values, (size_t)(ls[l].K * ls[l].C) * sizeof(float));
            nd[k][l].p.conv.kernel.values = w;
        }
        int64_t xd[4] = {N, ls[l].C, 1, 1}, yd[4] = {N, ls[l].K, 1, 1};
        in[l] = (trtl_tensor_view){bench_rand_buf(N * ls[l].C, 1.0f), trtl_dims_make(4, xd), TRTL_FLOAT};
        for (int k = 0; k < 3; k++)
            out[k][l] = (trtl_tensor_view){bench_rand_buf(N * ls[l].K, 1.0f), trtl_dims_make(4, yd), TRTL_FLOAT};
    }
    double best[3][32], sum[3] = {1e9, 1e9, 1e9}, *ratio = calloc((size_t)reps * 2, sizeof(double));
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < nl; l++)
            best[k][l] = 1e9;
    for (int r = 0; r < reps; r++) {
        double tot[3] = {0, 0, 0};
        for (int l = 0; l < nl; l++)
            for (int kk = 0; kk < nk; kk++) {
                const int k = (kk + r + l) % nk; /* the order rotates: the first after an eviction was slower */
                for (int64_t i = 0; i < evict_floats; i += 16)
                    ev[i] += 1.0f;
                trtl_kernel_args a = {&nd[k][l], &in[l], &out[k][l], NULL, 0, NULL, NULL, NULL};
                double t0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
                ks[k]->run(&a);
                double dt = bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
                best[k][l] = dt < best[k][l] ? dt : best[k][l];
                tot[k] += dt;
            }
        for (int k = 0; k < nk; k++)
            sum[k] = tot[k] < sum[k] ? tot[k] : sum[k];
        ratio[r] = nk > 1 ? tot[0] / tot[1] : 1.0;
        ratio[reps + r] = nk > 2 ? tot[0] / tot[2] : 1.0;
    }
    qsort(ratio, (size_t)reps, sizeof(double), cmp_double);
    qsort(ratio + reps, (size_t)reps, sizeof(double), cmp_double);
    int bad = 0;
    for (int k = 1; k < nk; k++)
        for (int l = 0; l < nl; l++)
            for (int64_t i = 0; i < N * ls[l].K; i++) {
                float u = ((float *)out[0][l].data)[i], v = ((float *)out[k][l].data)[i];
                bad += !(u - v < 1e-3f && v - u < 1e-3f);
            }
    printf("%s batch %lld: sum of %d layers lib %.4f ms", name, (long long)N, nl, sum[0] * 1e3);
    if (nk > 1)
        printf(" | alt %.4f ms | lib/alt median %.3f", sum[1] * 1e3, ratio[reps / 2]);
    if (nk > 2)
        printf(" | alt2 %.4f ms | lib/alt2 median %.3f", sum[2] * 1e3, ratio[reps + reps / 2]);
    printf("%s", bad ? " | OUTPUTS DIFFER" : "");
    printf("\n");
    for (int l = 0; l < nl; l++) {
        printf("  %4lld -> %4lld  lib %.4f ms", (long long)ls[l].C, (long long)ls[l].K, best[0][l] * 1e3);
        for (int k = 1; k < nk; k++)
            printf("  alt%s %.4f ms", k == 2 ? "2" : "", best[k][l] * 1e3);
        printf("\n");
    }
    free(ratio);
}

int main(int argc, char **argv)
{
    int64_t N = 1, evict = 2048;
    int reps = 40;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            N = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--evict") && i + 1 < argc)
            evict = atoll(argv[++i]);
    }
    run_model("mobilenet_v3_large SE", mbv3, (int)(sizeof mbv3 / sizeof mbv3[0]), N, reps, evict * 256);
    run_model("regnet_y_400mf SE", regnet, (int)(sizeof regnet / sizeof regnet[0]), N, reps, evict * 256);
    return 0;
}
