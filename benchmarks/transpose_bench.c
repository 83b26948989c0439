/*
 * transpose_bench.c -- "shuffle.transpose" on the transformer / ConvNeXt shapes of the zoo: ConvNeXt-T's
 * NCHW <-> NHWC permutes around LayerNorm, Swin-T's attention output transpose (1, 2) of [windows, heads, 49, 32]
 * and its window partition / reverse, ViT / BERT head splits.  One thread, thread CPU time, the minimum over --reps
 * runs, each after a pass writing 4 MiB so that the input comes from L3 as in a model (the previous layer wrote it).
 * Not part of CI.  Checked against the reference shuffle once per shape.
 *
 *   make build && gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/transpose_bench.c \
 *       -o build/transpose_bench -Lbuild -ltrtlite -lm -Wl,-rpath,build
 *   build/transpose_bench [filter] [--reps N] [--residual]
 *
 * --residual: the skip addition after the transpose (ConvNeXt's block end) as two steps, the transpose then
 * "elementwise.simd" (before session 20), against one transpose step with the residual in its epilogue
 * (fuse_epilogue since session 20); the two timed alternately, each after the eviction pass, minima.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_shuffle_transpose;
extern const trtl_kernel trtl_kernel_elementwise_simd;

static int g_reps = 20, g_residual;

static void evict(void)
{
    static float *junk;
    const int64_t n = (int64_t)1 << 20;
    if (!junk)
        junk = calloc((size_t)n, sizeof(float));
    for (int64_t i = 0; junk && i < n; i += 16)
        junk[i] += 1.0f;
}

static void bench(const char *name, int rank, const int64_t *d, const int64_t *perm)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_SHUFFLE;
    nd.name = (char *)name;
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = nd.n_out = 1;
    nd.p.shuffle.reshape_dims.nb_dims = -1;
    nd.p.shuffle.zero_is_placeholder = 1;
    nd.p.shuffle.first_transpose = trtl_dims_make(rank, perm);
    int64_t yd[TRTL_MAX_DIMS];
    for (int i = 0; i < rank; i++)
        yd[i] = d[perm[i]];
    trtl_dims xdims = trtl_dims_make(rank, d), ydims = trtl_dims_make(rank, yd);
    const int64_t vol = trtl_volume(&xdims);
    float *x = bench_rand_buf(vol, 2.0f), *y = calloc((size_t)vol, sizeof(float)), *r = calloc((size_t)vol, 4);
    trtl_tensor_view in[1] = {{x, xdims, TRTL_FLOAT}}, out[1] = {{y, ydims, TRTL_FLOAT}}, ro[1] = {{r, ydims, TRTL_FLOAT}};
    trtl_kernel_args a = {&nd, in, out, NULL, 0, NULL, NULL, NULL}, ar = {&nd, in, ro, NULL, 0, NULL, NULL, NULL};
    trtl_ref_shuffle(&ar);
    double t = 1e9;
    trtl_kernel_shuffle_transpose.run(&a);
    int ok = !memcmp(y, r, (size_t)vol * sizeof(float));
    for (int rep = 0; rep < g_reps; rep++) {
        evict();
        double t0 = bench_cpu_s();
        trtl_kernel_shuffle_transpose.run(&a);
        double tt = bench_cpu_s() - t0;
        t = tt < t ? tt : t;
    }
    printf("%-34s %8.1f us  %6.3f ns/float  %s\n", name, t * 1e6, t * 1e9 / (double)vol, ok ? "ok" : "WRONG");
    if (g_residual) {
        /* two steps: y = T(x), then z = y + s (elementwise.simd); one step: z = T(x) + s */
        float *s = bench_rand_buf(vol, 1.0f), *z = calloc((size_t)vol, sizeof(float)), *z2 = calloc((size_t)vol, 4);
        trtl_node ew;
        memset(&ew, 0, sizeof ew);
        ew.op = TRTL_OP_ELEMENTWISE;
        ew.name = "add";
        ew.epi.act = TRTL_ACT_NONE;
        ew.n_in = 2;
        ew.n_out = 1;
        ew.p.ew.op = TRTL_EW_SUM;
        trtl_tensor_view ein[2] = {{y, ydims, TRTL_FLOAT}, {s, ydims, TRTL_FLOAT}}, eout[1] = {{z, ydims, TRTL_FLOAT}};
        trtl_kernel_args ea = {&ew, ein, eout, NULL, 0, NULL, NULL, NULL};
        trtl_node fr = nd;
        fr.n_in = 2;
        fr.epi.has_residual = 1;
        trtl_tensor_view fin[2] = {{x, xdims, TRTL_FLOAT}, {s, ydims, TRTL_FLOAT}}, fout[1] = {{z2, ydims, TRTL_FLOAT}};
        trtl_kernel_args fa = {&fr, fin, fout, NULL, 0, NULL, NULL, NULL};
        double t2 = 1e9, t1 = 1e9;
        for (int rep = 0; rep < g_reps; rep++) {
            evict();
            double t0 = bench_cpu_s();
            trtl_kernel_shuffle_transpose.run(&a);
            trtl_kernel_elementwise_simd.run(&ea);
            double tt = bench_cpu_s() - t0;
            t2 = tt < t2 ? tt : t2;
            evict();
            t0 = bench_cpu_s();
            trtl_kernel_shuffle_transpose.run(&fa);
            tt = bench_cpu_s() - t0;
            t1 = tt < t1 ? tt : t1;
        }
        int same = !memcmp(z, z2, (size_t)vol * sizeof(float));
        printf("%-34s two steps %8.1f us, one step with the residual %8.1f us (%.2fx)  %s\n", "  + residual", t2 * 1e6,
               t1 * 1e6, t1 / t2, same ? "same" : "DIFFERENT");
        free(s), free(z), free(z2);
    }
    free(x), free(y), free(r);
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--residual"))
            g_residual = 1;
        else
            filter = argv[i];
    }
    static const struct {
        const char *name;
        int rank;
        int64_t d[6], p[6];
    } cases[] = {
        {"convnext nchw->nhwc 96x56x56", 4, {1, 96, 56, 56}, {0, 2, 3, 1}},
        {"convnext nhwc->nchw 56x56x96", 4, {1, 56, 56, 96}, {0, 3, 1, 2}},
        {"convnext nchw->nhwc 384x14x14", 4, {1, 384, 14, 14}, {0, 2, 3, 1}},
        {"convnext nhwc->nchw 14x14x384", 4, {1, 14, 14, 384}, {0, 3, 1, 2}},
        {"convnext nhwc->nchw 28x28x192", 4, {1, 28, 28, 192}, {0, 3, 1, 2}},
        {"convnext nhwc->nchw 7x7x768", 4, {1, 7, 7, 768}, {0, 3, 1, 2}},
        {"convnext b8 nhwc->nchw 56x56x96", 4, {8, 56, 56, 96}, {0, 3, 1, 2}},
        {"swin attn out 64x3x49x32", 4, {64, 3, 49, 32}, {0, 2, 1, 3}},
        {"swin attn out 16x6x49x32", 4, {16, 6, 49, 32}, {0, 2, 1, 3}},
        {"swin attn out 4x12x49x32", 4, {4, 12, 49, 32}, {0, 2, 1, 3}},
        {"swin qkv 64x49x3x3x32", 5, {64, 49, 3, 3, 32}, {2, 0, 3, 1, 4}},
        {"swin window 8x7x8x7x96", 6, {1, 8, 7, 8, 7, 96}, {0, 1, 3, 2, 4, 5}},
        {"vit heads 197x12x64", 3, {197, 12, 64}, {1, 0, 2}},
        {"vit heads back 12x197x64", 3, {12, 197, 64}, {1, 0, 2}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!filter || strstr(cases[i].name, filter))
            bench(cases[i].name, cases[i].rank, cases[i].d, cases[i].p);
    return 0;
}
