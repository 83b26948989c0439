/*
 * nchwc_pw_bench.c -- per-shape milliseconds of nchwc_conv.avx2 (blocked input and output, x86/nchwc_conv.c) on the
 * pointwise and depthwise shapes of MNASNet-1.0 and MobileNetV3-Large, for A/B comparisons of two builds of the
 * kernel in one process on a shared machine.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/nchwc_pw_bench.c -o build/nchwc_pw_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/nchwc_pw_bench [filter] [--batch N] [--reps N] [--cold]
 *
 * One thread: the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), the kernels taking turns run by run, the
 * minimum of each and the median of the paired ratios; --cold: 64 MiB are written before every run (untimed), so
 * weights and activations come from memory as in a network.  A/B: compile the other variant of nchwc_conv.c into an
 * object whose global symbols are renamed with an `_alt` suffix
 *   for s in trtl_kernel_nchwc_conv_avx2 trtl_kernel_nchwc_conv_avx512 trtl_nchwc_conv_pointwise \
 *            trtl_nchwc_conv_supported trtl_nchwc_even_runs; do D="$D -D$s=${s}_alt"; done
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -fPIC $D -Icsrc -Icsrc/include -c OLD/nchwc_conv.c -o build/nchwc_alt.o
 * and link it in: it is timed as "alt1" next to the library's kernel ("x1.05": the library's 5% slower); a third
 * variant likewise with the suffix `_alt2` ("alt2").  The dense shapes ("dn", session 20: the YOLO-style detector's
 * 3x3 layers, SiLU) run on x86/nchwc_grouped.c with one group: for their A/B compile nchwc_conv.c, nchwc_grouped.c
 * and nchwc_dense.c with every global symbol of the three renamed (`nm -g --defined-only` lists them) and link the
 * three objects (`ld -r`) in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "core/dims.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_nchwc_conv_avx2;
extern const trtl_kernel trtl_kernel_nchwc_conv_avx2_alt __attribute__((weak));
extern const trtl_kernel trtl_kernel_nchwc_conv_avx2_alt2 __attribute__((weak));

static int g_reps = 15, g_batch = 1;
static const char *g_filter;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* C -> K, H x H, kernel k (groups C when dw), stride s, padding k / 2; res: a residual; act: the fused activation. */
static void shape(const char *name, int64_t C, int64_t K, int64_t H, int64_t k, int64_t s, int dw, int res, int act)
{
    char label[96];
    snprintf(label, sizeof label, "%s %lld->%lld %lldx%lld k%lld s%lld", name, (long long)C, (long long)K,
             (long long)H, (long long)H, (long long)k, (long long)s);
    if (g_filter && !strstr(label, g_filter))
        return;
    const int64_t N = g_batch, pad = k / 2, OH = (H + 2 * pad - k) / s + 1, CB = (C + 7) / 8, KB = (K + 7) / 8;
    trtl_node nd = {0};
    nd.op = TRTL_OP_NCHWC_CONV;
    nd.name = "bench";
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = dw ? (int32_t)C : 1;
    int64_t kk[2] = {k, k}, st[2] = {s, s}, one[2] = {1, 1}, pp[2] = {pad, pad};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, st);
    p->dilation = trtl_dims_make(2, one);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    const int64_t nw = K * (dw ? 1 : C) * k * k;
    float *w = bench_rand_buf(nw, 0.1f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(N * CB * H * H * 8, 1.0f);
    float *y = bench_rand_buf(N * KB * OH * OH * 8, 1.0f), *r = bench_rand_buf(N * KB * OH * OH * 8, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.p.nchwc.in_block = nd.p.nchwc.out_block = 8;
    nd.epi.act = act;
    nd.epi.alpha = 0.0f;
    nd.epi.beta = 6.0f;
    nd.n_in = 1 + (res != 0);
    nd.n_out = 1;
    nd.epi.has_residual = res ? 1 : 0;
    int64_t xd[5] = {N, CB, H, H, 8}, yd[5] = {N, KB, OH, OH, 8};
    trtl_tensor_view in[2] = {{x, trtl_dims_make(5, xd), TRTL_FLOAT}, {r, trtl_dims_make(5, yd), TRTL_FLOAT}};
    trtl_tensor_view out = {y, trtl_dims_make(5, yd), TRTL_FLOAT};
    const trtl_kernel *ks[3] = {&trtl_kernel_nchwc_conv_avx2, &trtl_kernel_nchwc_conv_avx2_alt,
                                &trtl_kernel_nchwc_conv_avx2_alt2};
    const int nk = !ks[1] ? 1 : !ks[2] ? 2 : 3;
    void *state[3] = {0};
    void *scratch[3] = {0};
    trtl_kernel_args a[3];
    for (int i = 0; i < nk; i++) {
        if (!ks[i]->applies(&nd, &in[0].dims) || ks[i]->prepare(&nd, &state[i]) != TRTL_OK) {
            printf("%-44s does not apply\n", label);
            return;
        }
        size_t ss = ks[i]->scratch(&nd, in, &out);
        scratch[i] = ss ? malloc(ss) : NULL;
        a[i] = (trtl_kernel_args){&nd, in, &out, scratch[i], ss, state[i], NULL, NULL};
        ks[i]->run(&a[i]);
    }
    double best[3] = {1e9, 1e9, 1e9}, ratio[2][256];
    int nr = 0;
    for (int rep = 0; rep < g_reps && rep < 256; rep++) {
        double t[3];
        for (int q = 0; q < nk; q++) {
            const int i = rep % 2 ? nk - 1 - q : q; /* ABBA (ABCCBA) */
            bench_evict();
            double t0 = bench_cpu_s();
            ks[i]->run(&a[i]);
            t[i] = bench_cpu_s() - t0;
            best[i] = t[i] < best[i] ? t[i] : best[i];
        }
        for (int i = 1; i < nk; i++)
            ratio[i - 1][nr] = t[0] / t[i];
        nr += nk > 1;
    }
    const double flops = 2.0 * (double)(N * K * OH * OH) * (double)((dw ? 1 : C) * k * k);
    printf("%-30s lib %7.4f ms %5.1f GF/s", label, best[0] * 1e3, flops / best[0] / 1e9);
    for (int i = 1; i < nk; i++) {
        qsort(ratio[i - 1], (size_t)nr, sizeof ratio[0][0], cmp_double);
        printf(" | alt%d %8.4f ms min x%.3f med x%.3f", i, best[i] * 1e3, best[0] / best[i], ratio[i - 1][nr / 2]);
    }
    printf("\n");
    fflush(stdout);
    for (int i = 0; i < nk; i++) {
        ks[i]->release(state[i]);
        free(scratch[i]);
    }
    free(w);
    free(b);
    free(x);
    free(y);
    free(r);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            g_batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold"))
            bench_cold_bytes = (size_t)64 << 20;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else
            g_filter = argv[i];
    }
    srand(1);
    const int R6 = TRTL_ACT_CLIP, RE = TRTL_ACT_RELU, NO = TRTL_ACT_NONE;
    (void)R6;
    /* pointwise: large depth (projections), expansions, small maps */
    shape("pw", 960, 160, 7, 1, 1, 0, 1, NO);
    shape("pw", 672, 160, 7, 1, 1, 0, 0, NO);
    shape("pw", 672, 112, 14, 1, 1, 0, 1, NO);
    shape("pw", 480, 112, 14, 1, 1, 0, 0, NO);
    shape("pw", 1152, 320, 7, 1, 1, 0, 0, NO);
    shape("pw", 1152, 192, 7, 1, 1, 0, 1, NO);
    shape("pw", 576, 96, 14, 1, 1, 0, 1, NO);
    shape("pw", 320, 1280, 7, 1, 1, 0, 0, RE);
    shape("pw", 192, 1152, 7, 1, 1, 0, 0, RE);
    shape("pw", 160, 960, 7, 1, 1, 0, 0, NO);
    shape("pw", 96, 576, 14, 1, 1, 0, 0, RE);
    shape("pw", 16, 16, 112, 1, 1, 0, 0, RE);
    shape("pw", 32, 16, 112, 1, 1, 0, 0, NO);
    shape("pw", 16, 48, 112, 1, 1, 0, 0, RE);
    shape("pw", 16, 64, 112, 1, 1, 0, 0, RE);
    shape("pw", 24, 72, 56, 1, 1, 0, 0, RE);
    shape("pw", 72, 24, 56, 1, 1, 0, 1, NO);
    shape("pw", 40, 120, 28, 1, 1, 0, 0, RE);
    shape("pw", 120, 40, 28, 1, 1, 0, 1, NO);
    /* depthwise */
    shape("dw", 48, 48, 112, 3, 2, 1, 0, RE);
    shape("dw", 64, 64, 112, 3, 2, 1, 0, RE);
    shape("dw", 72, 72, 56, 3, 1, 1, 0, RE);
    shape("dw", 480, 480, 14, 3, 1, 1, 0, RE);
    shape("dw", 1152, 1152, 7, 3, 1, 1, 0, RE);
    shape("dw", 1152, 1152, 7, 5, 1, 1, 0, RE);
    shape("dw", 120, 120, 28, 5, 1, 1, 0, RE);
    /* dense 3x3 (the YOLO-style detector's trunk, session 20) */
    const int SI = TRTL_ACT_SILU;
    shape("dn", 32, 64, 160, 3, 2, 0, 0, SI);
    shape("dn", 64, 128, 80, 3, 2, 0, 0, SI);
    shape("dn", 128, 256, 40, 3, 2, 0, 0, SI);
    shape("dn", 256, 512, 20, 3, 2, 0, 0, SI);
    shape("dn", 128, 128, 40, 3, 2, 0, 0, SI);
    shape("dn", 256, 256, 20, 3, 2, 0, 0, SI);
    shape("dn", 32, 32, 80, 3, 1, 0, 1, SI);
    shape("dn", 64, 64, 40, 3, 1, 0, 1, SI);
    shape("dn", 128, 128, 20, 3, 1, 0, 1, SI);
    shape("dn", 256, 256, 10, 3, 1, 0, 1, SI);
    return 0;
}
