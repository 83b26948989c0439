/*
 * linear_ab.c -- A/B of one LINEAR kernel between two builds of libtrtlite.so in one process (for a loaded
 * machine, where separate processes see different loads): both libraries are dlopen'ed (RTLD_LOCAL |
 * RTLD_DEEPBIND, so each kernel calls its own library's code; the program itself does not link libtrtlite), the
 * kernel is looked up by symbol in each, and runs alternate A, B, A, B ... on the same data; each side's figure
 * is the minimum (and median) thread CPU time over --reps runs.  Outputs are compared bit for bit.  Not part of
 * CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/linear_ab.c -o build/linear_ab -ldl -lm
 *   build/linear_ab OLD.so NEW.so M,D,K [--reps N] [--gelu] [--res] [--kernel SYMBOL] [--kernel-b SYMBOL]
 *       [--threads T]
 *   (--kernel-b: side B runs another kernel, e.g. linear.sgemm against linear.packed_gemm of one build;
 *   --threads: each side runs on a held pool of T threads created by its own library, and the wall time of a run
 *   is reported too: on a loaded machine read its minimum; the caller's CPU time then includes its waiting)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "bench_util.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s OLD.so NEW.so M,D,K [--reps N] [--gelu] [--res] [--kernel SYMBOL] [--kernel-b SYMBOL]\n", argv[0]);
        return 2;
    }
    long long M, D, K;
    if (sscanf(argv[3], "%lld,%lld,%lld", &M, &D, &K) != 3)
        return 2;
    int reps = 30, gelu = 0, res = 0, threads = 1;
    const char *sym = "trtl_kernel_linear_packed_gemm", *sym_b = NULL;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gelu"))
            gelu = 1;
        else if (!strcmp(argv[i], "--res"))
            res = 1;
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
            sym = argv[++i];
        else if (!strcmp(argv[i], "--kernel-b") && i + 1 < argc)
            sym_b = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
    }
    struct trtl_threadpool *pool[2] = {NULL, NULL};
    const trtl_kernel *k[2];
    for (int s = 0; s < 2; s++) {
        void *h = dlopen(argv[1 + s], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
        k[s] = h ? dlsym(h, s && sym_b ? sym_b : sym) : NULL;
        if (!k[s]) {
            fprintf(stderr, "%s: %s\n", argv[1 + s], dlerror());
            return 1;
        }
        if (threads > 1) {
            trtl_status (*create)(int, struct trtl_threadpool **) =
                (trtl_status(*)(int, struct trtl_threadpool **))dlsym(h, "trtl_threadpool_create");
            void (*hold)(struct trtl_threadpool *, int) = (void (*)(struct trtl_threadpool *, int))dlsym(h, "trtl_threadpool_hold");
            void (*set_cur)(struct trtl_threadpool *) = (void (*)(struct trtl_threadpool *))dlsym(h, "trtl_set_current_pool");
            if (!create || !hold || !set_cur || create(threads, &pool[s]) != TRTL_OK) {
                fprintf(stderr, "%s: no thread pool\n", argv[1 + s]);
                return 1;
            }
            hold(pool[s], 1);
            set_cur(pool[s]); /* scratch() sizes its slots for this pool */
        }
    }
    float *x = bench_rand_buf(M * D, 2.0f), *w = bench_rand_buf(K * D, 0.1f), *b = bench_rand_buf(K, 1.0f);
    float *r = bench_rand_buf(M * K, 1.0f), *y[2] = {calloc((size_t)(M * K), 4), calloc((size_t)(M * K), 4)};
    trtl_node nd;
    bench_linear_node(&nd, "ab", D, K, w, b, gelu ? TRTL_ACT_GELU_ERF : TRTL_ACT_NONE);
    nd.n_in = res ? 2 : 1;
    nd.epi.has_residual = res;
    trtl_tensor_view in[2] = {{x, {2, {M, D}}, TRTL_FLOAT}, {r, {2, {M, K}}, TRTL_FLOAT}};
    trtl_tensor_view out[2] = {{y[0], {2, {M, K}}, TRTL_FLOAT}, {y[1], {2, {M, K}}, TRTL_FLOAT}};
    void *state[2];
    void *scratch[2];
    trtl_kernel_args a[2];
    for (int s = 0; s < 2; s++) {
        state[s] = NULL;
        if (k[s]->prepare && k[s]->prepare(&nd, &state[s]) != TRTL_OK) {
            fprintf(stderr, "prepare failed (side %d)\n", s);
            return 1;
        }
        size_t ss = k[s]->scratch ? k[s]->scratch(&nd, in, &out[s]) : 0;
        scratch[s] = ss ? malloc(ss) : NULL;
        a[s] = (trtl_kernel_args){&nd, in, &out[s], scratch[s], ss, state[s], pool[s], NULL};
        k[s]->run(&a[s]);
    }
    double *t[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
    double *wt[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
    for (int i = 0; i < reps; i++)
        for (int s = 0; s < 2; s++) {
            double w0 = bench_wall_s(), t0 = bench_cpu_s();
            k[s]->run(&a[s]);
            t[s][i] = bench_cpu_s() - t0;
            wt[s][i] = bench_wall_s() - w0;
        }
    const int same = !memcmp(y[0], y[1], (size_t)(M * K) * sizeof(float));
    double gf = 2.0 * (double)M * (double)D * (double)K / 1e9;
    for (int s = 0; s < 2; s++) {
        qsort(t[s], (size_t)reps, sizeof(double), cmp_d);
        qsort(wt[s], (size_t)reps, sizeof(double), cmp_d);
    }
    printf("M%lld %lld->%lld%s%s  A min %.3f med %.3f ms (%.1f GF/s)  B min %.3f med %.3f ms (%.1f GF/s)  B/A min "
           "%.3f med %.3f  %s\n",
           M, D, K, gelu ? " gelu" : "", res ? " res" : "", t[0][0] * 1e3, t[0][reps / 2] * 1e3, gf / t[0][0],
           t[1][0] * 1e3, t[1][reps / 2] * 1e3, gf / t[1][0], t[1][0] / t[0][0], t[1][reps / 2] / t[0][reps / 2],
           same ? "same bits" : "OUTPUTS DIFFER");
    if (threads > 1)
        printf("  %d threads, wall: A min %.3f med %.3f ms  B min %.3f med %.3f ms  B/A min %.3f med %.3f\n", threads,
               wt[0][0] * 1e3, wt[0][reps / 2] * 1e3, wt[1][0] * 1e3, wt[1][reps / 2] * 1e3, wt[1][0] / wt[0][0],
               wt[1][reps / 2] / wt[0][reps / 2]);
    return 0;
}
