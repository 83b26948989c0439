/*
 * attention_bench.c -- "attention.tiled" (x86/attention.c) on the zoo's transformer shapes: BERT-base (12 heads,
 * seq 128, head dim 64, K as [Sk, D] and as K^T), ViT-B/16 (seq 197), Swin-T windows (49 x 32, many batches).
 * One thread (no pool), thread CPU time, the minimum over --reps runs; checked against the reference kernel once
 * per shape.  Not part of CI.
 *
 * A/B against an older copy of the kernel in the same process (runs alternate, so a loaded machine slows both):
 * compile with -DATTN_OLD='"/path/to/old_attention.c"'; that file's kernel symbol is renamed by the macro below.
 *
 *   make build && gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/attention_bench.c \
 *       -o build/attention_bench -Lbuild -ltrtlite -lm -Wl,-rpath,build
 *   build/attention_bench [filter] [--reps N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "bench_util.h"

#ifdef ATTN_OLD
#define trtl_kernel_attention_tiled trtl_kernel_attention_tiled_old
#include ATTN_OLD
#undef trtl_kernel_attention_tiled
#endif

extern const trtl_kernel trtl_kernel_attention_tiled;

static int g_reps = 30;

static double max_diff(const float *a, const float *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        m = d > m || d != d ? d : m;
    }
    return m;
}

static void bench(const char *name, int64_t B, int64_t H, int64_t Sq, int64_t Sk, int64_t D, int kt)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_ATTENTION;
    nd.name = (char *)name;
    nd.n_in = 3;
    nd.n_out = 1;
    nd.p.attn.scale = 1.0f / sqrtf((float)D);
    nd.p.attn.k_transposed = kt;
    nd.p.attn.norm_op = TRTL_ATTN_NORM_SOFTMAX;
    int64_t q[4] = {B, H, Sq, D}, k[4] = {B, H, kt ? D : Sk, kt ? Sk : D}, v[4] = {B, H, Sk, D}, y[4] = {B, H, Sq, D};
    trtl_dims qd = trtl_dims_make(4, q), kd = trtl_dims_make(4, k), vd = trtl_dims_make(4, v);
    trtl_dims yd = trtl_dims_make(4, y);
    float *Q = bench_rand_buf(trtl_volume(&qd), 6.0f), *K = bench_rand_buf(trtl_volume(&kd), 2.0f);
    float *V = bench_rand_buf(trtl_volume(&vd), 2.0f);
    int64_t ny = trtl_volume(&yd);
    float *Y = calloc((size_t)ny, sizeof(float)), *R = calloc((size_t)ny, sizeof(float));
    trtl_tensor_view in[3] = {{Q, qd, TRTL_FLOAT}, {K, kd, TRTL_FLOAT}, {V, vd, TRTL_FLOAT}};
    trtl_tensor_view out[1] = {{Y, yd, TRTL_FLOAT}}, ro[1] = {{R, yd, TRTL_FLOAT}};
    trtl_kernel_args ar = {&nd, in, ro, NULL, 0, NULL, NULL, NULL};
    trtl_ref_attention(&ar);
    const trtl_kernel *ks[2] = {&trtl_kernel_attention_tiled, NULL};
#ifdef ATTN_OLD
    ks[1] = &trtl_kernel_attention_tiled_old;
#endif
    double best[2] = {1e9, 1e9}, err[2] = {0, 0};
    void *scr[2] = {NULL, NULL};
    size_t ss[2] = {0, 0};
    for (int i = 0; i < 2 && ks[i]; i++) {
        ss[i] = ks[i]->scratch(&nd, in, out);
        scr[i] = malloc(ss[i]);
        trtl_kernel_args a = {&nd, in, out, scr[i], ss[i], NULL, NULL, NULL};
        memset(Y, 0, (size_t)ny * sizeof(float));
        ks[i]->run(&a);
        err[i] = max_diff(Y, R, ny);
    }
    for (int rep = 0; rep < g_reps; rep++)
        for (int i = 0; i < 2 && ks[i]; i++) {
            trtl_kernel_args a = {&nd, in, out, scr[i], ss[i], NULL, NULL, NULL};
            double t0 = bench_cpu_s();
            ks[i]->run(&a);
            double t = bench_cpu_s() - t0;
            best[i] = t < best[i] ? t : best[i];
        }
    double gf = 2.0 * (double)(B * H) * (double)Sq * (double)Sk * (double)(2 * D) * 1e-9;
    printf("%-26s new %8.3f ms %6.1f GFLOP/s (max err %.1e)", name, best[0] * 1e3, gf / best[0], err[0]);
    if (ks[1])
        printf("   old %8.3f ms %6.1f GFLOP/s (max err %.1e)  old/new %.3f", best[1] * 1e3, gf / best[1], err[1],
               best[1] / best[0]);
    printf("\n");
    free(scr[0]);
    free(scr[1]);
    free(Q);
    free(K);
    free(V);
    free(Y);
    free(R);
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else
            filter = argv[i];
    }
    static const struct {
        const char *name;
        int64_t B, H, Sq, Sk, D;
        int kt;
    } shapes[] = {
        {"bert 1x12x128x64", 1, 12, 128, 128, 64, 0},
        {"bert 1x12x128x64 K^T", 1, 12, 128, 128, 64, 1},
        {"bert 8x12x128x64", 8, 12, 128, 128, 64, 0},
        {"vit 1x12x197x64", 1, 12, 197, 197, 64, 0},
        {"swin 64x3x49x32", 64, 3, 49, 49, 32, 0},
        {"tail 2x5x77x45x40", 2, 5, 77, 45, 40, 0},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        if (!filter || strstr(shapes[s].name, filter))
            bench(shapes[s].name, shapes[s].B, shapes[s].H, shapes[s].Sq, shapes[s].Sk, shapes[s].D, shapes[s].kt);
    return 0;
}
