/*
 * linear_bench.c -- GFLOP/s of "linear.packed_gemm" (Y = X W^T + b, the fp32 row GEMM) on the transformer
 * projection shapes of BERT-base (M = 128 tokens a sequence) and ViT-B/16 (M = 197), batch 1 and 8, one
 * thread, against the reference kernel's results.  Not part of CI.
 *
 *   make build && gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/linear_bench.c \
 *       -o build/linear_bench -Lbuild -ltrtlite -lm -Wl,-rpath,build
 *   build/linear_bench [filter] [--reps N] [--gelu] [--cold] [--peak GFLOPS] [--shape M,D,K]
 *   (--shape: that one shape only; options before it apply)
 *
 * Each figure is the minimum thread CPU time over --reps runs (default 10) after a warm-up run (the machine is
 * shared; CPU time is what it can still compare).  --peak: the core's fp32 FMA peak for the "% peak" column
 * (default 220: 2 x 16-lane FMA a cycle at the ~3.45 GHz this machine's cores run AVX-512 at, measured with a
 * register-only FMA loop).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "trtlite/trtlite.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_linear_packed_gemm;

static double g_peak = 220.0;
static int g_reps = 10, g_gelu = 0, g_cold = 0;

/* --cold: the weights come from memory, as in a whole model (BERT-base's 85 MB, ViT-B's 330 MB of weights
 * do not stay in cache from one run to the next): each timed run follows a pass writing 256 MiB. */
static void evict(void)
{
    static float *junk;
    const int64_t n = (int64_t)64 << 20;
    if (!junk)
        junk = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; junk && i < n; i += 16)
        junk[i] += 1.0f;
}

static void bench(const char *name, int64_t M, int64_t D, int64_t K)
{
    float *x = bench_rand_buf(M * D, 2.0f), *w = bench_rand_buf(K * D, 0.1f), *b = bench_rand_buf(K, 1.0f);
    float *y = calloc((size_t)(M * K), sizeof(float)), *r = calloc((size_t)(M * K), sizeof(float));
    trtl_node nd;
    bench_linear_node(&nd, name, D, K, w, b, g_gelu ? TRTL_ACT_GELU_ERF : TRTL_ACT_NONE);
    trtl_tensor_view in = {x, {2, {M, D}}, TRTL_FLOAT}, out = {y, {2, {M, K}}, TRTL_FLOAT};
    const trtl_kernel *k = &trtl_kernel_linear_packed_gemm;
    void *state = NULL;
    if (k->prepare(&nd, &state) != TRTL_OK) {
        fprintf(stderr, "prepare failed: %s\n", trtl_last_error());
        exit(1);
    }
    size_t ss = k->scratch(&nd, &in, &out);
    void *scratch = malloc(ss);
    trtl_kernel_args a = {&nd, &in, &out, scratch, ss, state, NULL, NULL};
    double t = 1e9;
    k->run(&a);
    for (int rep = 0; rep < g_reps; rep++) {
        if (g_cold)
            evict();
        double t0 = bench_cpu_s();
        k->run(&a);
        double tt = bench_cpu_s() - t0;
        t = tt < t ? tt : t;
    }
    k->release(state);
    free(scratch);
    /* check against float64 */
    double err = 0;
    for (int64_t i = 0; i < M; i += 7)
        for (int64_t n = 0; n < K; n += 5) {
            double s = b[n];
            for (int64_t d = 0; d < D; d++)
                s += (double)x[i * D + d] * w[n * D + d];
            if (g_gelu)
                s = 0.5 * s * (1.0 + erf(s / sqrt(2.0)));
            double e = fabs(s - y[i * K + n]);
            err = e > err ? e : err;
        }
    double gf = 2.0 * (double)M * (double)D * (double)K / t / 1e9;
    printf("%-28s %8.3f ms %7.1f GF/s %5.1f%% peak  err %.1e\n", name, t * 1e3, gf, 100.0 * gf / g_peak, err);
    free(x), free(w), free(b), free(y), free(r);
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--peak") && i + 1 < argc)
            g_peak = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cold"))
            g_cold = 1;
        else if (!strcmp(argv[i], "--gelu"))
            g_gelu = 1;
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            long long m, d, k;
            if (sscanf(argv[++i], "%lld,%lld,%lld", &m, &d, &k) != 3)
                return 1;
            char name[64];
            snprintf(name, sizeof name, "M%lld %lld->%lld", m, d, k);
            bench(name, m, d, k);
            return 0;
        }
        else
            filter = argv[i];
    }
    static const struct { const char *fam; int64_t m; } fams[] = {{"bert", 128}, {"vit", 197}};
    static const int64_t kn[][2] = {{768, 768}, {768, 2304}, {768, 3072}, {3072, 768}};
    for (int b = 1; b <= 8; b += 7)
        for (int f = 0; f < 2; f++)
            for (int s = 0; s < 4; s++) {
                char name[64];
                snprintf(name, sizeof name, "%s b%d M%lld %lld->%lld", fams[f].fam, b, (long long)(b * fams[f].m),
                         (long long)kn[s][0], (long long)kn[s][1]);
                if (!filter || strstr(name, filter))
                    bench(name, b * fams[f].m, kn[s][0], kn[s][1]);
            }
    /* ConvNeXt-T's MLP (rows = pixels of a stage, channels c -> 4c -> c) */
    static const int64_t cnx[][2] = {{3136, 96}, {784, 192}, {196, 384}, {49, 768}};
    for (int b = 1; b <= 8; b += 7)
        for (int s = 0; s < 4; s++)
            for (int up = 1; up >= 0; up--) {
                int64_t c = cnx[s][1], d = up ? c : 4 * c, k = up ? 4 * c : c;
                char name[64];
                snprintf(name, sizeof name, "convnext b%d M%lld %lld->%lld", b, (long long)(b * cnx[s][0]),
                         (long long)d, (long long)k);
                if (!filter || strstr(name, filter))
                    bench(name, b * cnx[s][0], d, k);
            }
    return 0;
}
