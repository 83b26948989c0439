/*
 * matmul_ab.c -- matrix_multiply.sgemm (OpenBLAS, per batch matrix) against matrix_multiply.packed (trtlite's
 * packed GEMM) on the shapes the zoo's unfused matrix multiplies have: runs alternate sgemm, packed, sgemm, ... on
 * the same data; each side's figure is the minimum and median thread CPU time over --reps runs on the calling
 * thread (no pool: a loaded machine can still compare them), or with --threads N the wall time on a pool of N.
 * Outputs are compared (max abs difference).  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/matmul_ab.c -o build/matmul_ab \
 *       -Lbuild -ltrtlite -lm -Wl,-rpath,$PWD/build
 *   build/matmul_ab [--reps N] [--threads N] [B,M,K,N,op0,op1 ...]   (op: 0 NONE, 1 TRANSPOSE; B: batch of both)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_matmul_sgemm, trtl_kernel_matmul_packed;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void one_shape(long long B, long long M, long long K, long long N, int op0, int op1, int reps,
                      trtl_threadpool *pool)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_MATRIX_MULTIPLY;
    nd.name = "matmul";
    nd.p.matmul.op0 = op0;
    nd.p.matmul.op1 = op1;
    nd.n_in = 2;
    nd.n_out = 1;
    float *a = bench_rand_buf(B * M * K, 2.0f), *b = bench_rand_buf(B * K * N, 2.0f);
    float *y[2] = {calloc((size_t)(B * M * N), 4), calloc((size_t)(B * M * N), 4)};
    int64_t ad[3] = {B, op0 ? K : M, op0 ? M : K}, bd[3] = {B, op1 ? N : K, op1 ? K : N}, od[3] = {B, M, N};
    trtl_tensor_view in[2] = {{a, trtl_dims_make(3, ad), TRTL_FLOAT}, {b, trtl_dims_make(3, bd), TRTL_FLOAT}};
    const trtl_kernel *k[2] = {&trtl_kernel_matmul_sgemm, &trtl_kernel_matmul_packed};
    trtl_tensor_view out[2] = {{y[0], trtl_dims_make(3, od), TRTL_FLOAT}, {y[1], trtl_dims_make(3, od), TRTL_FLOAT}};
    void *scr[2];
    size_t ss[2];
    for (int s = 0; s < 2; s++) {
        ss[s] = k[s]->scratch ? k[s]->scratch(&nd, in, &out[s]) : 0;
        scr[s] = ss[s] ? malloc(ss[s]) : NULL;
    }
    double *t[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
    const clockid_t clk = pool ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
    for (int i = -2; i < reps; i++)
        for (int s = 0; s < 2; s++) {
            trtl_kernel_args args = {&nd, in, &out[s], scr[s], ss[s], NULL, pool, NULL};
            double t0 = bench_clock_s(clk);
            if (k[s]->run(&args) != TRTL_OK) {
                fprintf(stderr, "%s failed\n", k[s]->name);
                exit(1);
            }
            if (i >= 0)
                t[s][i] = bench_clock_s(clk) - t0;
        }
    double diff = 0;
    for (long long i = 0; i < B * M * N; i++)
        diff = fmax(diff, fabs((double)y[0][i] - (double)y[1][i]));
    qsort(t[0], (size_t)reps, sizeof(double), cmp_d);
    qsort(t[1], (size_t)reps, sizeof(double), cmp_d);
    printf("%4lld x %4lld x %4lld x %4lld op %d,%d  sgemm min %8.1f med %8.1f us  packed min %8.1f med %8.1f us  "
           "sgemm/packed %.2f (med %.2f)  max|diff| %.1e\n",
           B, M, K, N, op0, op1, 1e6 * t[0][0], 1e6 * t[0][reps / 2], 1e6 * t[1][0], 1e6 * t[1][reps / 2],
           t[0][0] / t[1][0], t[0][reps / 2] / t[1][reps / 2], diff);
    for (int s = 0; s < 2; s++) {
        free(scr[s]);
        free(y[s]);
        free(t[s]);
    }
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int reps = 50, threads = 0, nshapes = 0;
    long long sh[64][6];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (nshapes < 64 && sscanf(argv[i], "%lld,%lld,%lld,%lld,%lld,%lld", &sh[nshapes][0], &sh[nshapes][1],
                                        &sh[nshapes][2], &sh[nshapes][3], &sh[nshapes][4], &sh[nshapes][5]) == 6)
            nshapes++;
    }
    static const long long def[][6] = {
        {12, 128, 64, 128, 0, 0},  /* int8 BERT-base: Q x K^T per head (K^T a separate transpose) */
        {12, 128, 128, 64, 0, 0},  /* int8 BERT-base: P x V */
        {12, 128, 64, 128, 0, 1},  /* the same with K^T as the operation */
        {12, 197, 64, 197, 0, 1},  /* ViT-B/16 at batch 1, unfused */
        {12, 197, 197, 64, 0, 0},
        {192, 49, 32, 49, 0, 1},   /* Swin-T stage 1: 64 windows x 3 heads */
        {192, 49, 49, 32, 0, 0},
        {96, 128, 64, 128, 0, 0},  /* BERT at batch 8 */
        {1, 1024, 768, 768, 0, 0}, /* a folded stack over a shared weight */
        {4, 60, 600, 90, 1, 1},    /* both transposed, two depth blocks */
    };
    if (!nshapes) {
        nshapes = (int)(sizeof def / sizeof def[0]);
        memcpy(sh, def, sizeof def);
    }
    trtl_threadpool *pool = NULL;
    if (threads > 1 && trtl_threadpool_create(threads, &pool) != TRTL_OK)
        return 1;
    srand(1);
    printf("matrix_multiply.sgemm vs .packed, %s, %d alternating runs each\n",
           pool ? "wall time on a pool" : "thread CPU time, one thread", reps);
    for (int i = 0; i < nshapes; i++)
        one_shape(sh[i][0], sh[i][1], sh[i][2], sh[i][3], (int)sh[i][4], (int)sh[i][5], reps, pool);
    if (pool)
        trtl_threadpool_destroy(pool);
    return 0;
}
