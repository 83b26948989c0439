/*
 * bf16_bench.c -- the bf16 kernels (and the fp16-storage fully connected kernel) against the fp32
 * kernels of the same op on a BERT-base fully
 * connected layer (128 tokens, 768 -> 3072 and 3072 -> 768; also one token) and a ResNet 3x3
 * convolution (64 -> 64 channels, 56x56), with 1 and 2 threads.  Not part of CI; short runs.
 *
 *   build with the sources of tests/test_kernels_c.py (its _sources(), with this file in place of
 *   tests/c/test_kernels.c), e.g.
 *   python3 -c "import sys,subprocess; sys.path.insert(0,'tests'); import test_kernels_c as t;
 *     subprocess.run(['gcc']+t.CFLAGS+['benchmarks/bf16_bench.c']+t._sources()[1:]+['-o','build/bf16_bench']+t.LIBS)"
 *   build/bf16_bench [runs]
 *
 * Each number is the minimum over `runs` (default 20) runs after one warm-up run: the machine may
 * be shared, and the minimum is what the kernel costs when nothing interferes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_fc_packed_gemm, trtl_kernel_fc_bf16_gemm, trtl_kernel_fc_f16_gemm;
extern const trtl_kernel trtl_kernel_conv_packed_gemm, trtl_kernel_conv_winograd_f43, trtl_kernel_conv_bf16_gemm;

/* Minimum seconds of k->run over `runs` runs, or -1 if the kernel does not run here. */
static double best_of(const trtl_kernel *k, trtl_node *nd, const trtl_tensor_view *in, trtl_tensor_view *out,
                      trtl_threadpool *pool, int runs)
{
    if (!trtl_cpu_has(k->cpu_features))
        return -1.0;
    trtl_dims d[1] = {in[0].dims};
    if (k->applies && !k->applies(nd, d))
        return -1.0;
    void *state = NULL;
    if (k->prepare && k->prepare(nd, &state) != TRTL_OK)
        return -1.0;
    size_t ss = k->scratch ? k->scratch(nd, in, out) : 0;
    void *scratch = ss ? aligned_alloc(64, (ss + 63) / 64 * 64) : NULL;
    trtl_kernel_args a = {nd, in, out, scratch, ss, state, pool, NULL};
    double best = -1.0;
    if (k->run(&a) == TRTL_OK)
        for (int i = 0; i < runs; i++) {
            double t0 = bench_wall_s();
            k->run(&a);
            double t = bench_wall_s() - t0;
            if (best < 0 || t < best)
                best = t;
        }
    free(scratch);
    if (k->release && state)
        k->release(state);
    return best;
}

static void report(const char *what, double flops, const trtl_kernel *fp32, const trtl_kernel *bf16, trtl_node *nd,
                   const trtl_tensor_view *in, trtl_tensor_view *out, trtl_threadpool *pool, int threads, int runs)
{
    double t32 = best_of(fp32, nd, in, out, pool, runs), t16 = best_of(bf16, nd, in, out, pool, runs);
    printf("%-34s %d thr  %-28s %8.3f ms %6.1f GFLOP/s   %-22s %8.3f ms %6.1f GFLOP/s   x%.2f\n", what, threads,
           fp32->name, t32 * 1e3, flops / t32 * 1e-9, bf16->name, t16 * 1e3, flops / t16 * 1e-9, t32 / t16);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 20;
    trtl_threadpool *pool2 = NULL;
    if (trtl_threadpool_create(2, &pool2) != TRTL_OK)
        return 2;
    printf("bf16_bench: cpu features 0x%x, min of %d runs\n", trtl_cpu_features(), runs);
    static const int64_t fcs[][3] = {{128, 768, 3072}, {128, 3072, 768}, {1, 768, 3072}};
    for (size_t s = 0; s < sizeof fcs / sizeof fcs[0]; s++) {
        int64_t M = fcs[s][0], D = fcs[s][1], K = fcs[s][2];
        trtl_node nd = {0};
        nd.op = TRTL_OP_FULLY_CONNECTED;
        nd.name = "fc";
        nd.epi.act = TRTL_ACT_NONE;
        float *w = bench_rand_buf(K * D, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(M * D, 1.0f),
              *y = bench_rand_buf(M * K, 1.0f);
        nd.p.fc.num_output_channels = (int32_t)K;
        nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
        nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, K};
        nd.n_in = nd.n_out = 1;
        int64_t xd[4] = {M, D, 1, 1}, yd[4] = {M, K, 1, 1};
        trtl_tensor_view in = {x, {4, {0}}, TRTL_FLOAT}, out = {y, {4, {0}}, TRTL_FLOAT};
        memcpy(in.dims.d, xd, sizeof xd);
        memcpy(out.dims.d, yd, sizeof yd);
        char what[64];
        snprintf(what, sizeof what, "FC %lldx%lld -> %lld", (long long)M, (long long)D, (long long)K);
        for (int t = 1; t <= 2; t++)
        {
            report(what, 2.0 * M * D * K, &trtl_kernel_fc_packed_gemm, &trtl_kernel_fc_bf16_gemm, &nd, &in, &out,
                   t == 1 ? NULL : pool2, t, runs);
            report(what, 2.0 * M * D * K, &trtl_kernel_fc_packed_gemm, &trtl_kernel_fc_f16_gemm, &nd, &in, &out,
                   t == 1 ? NULL : pool2, t, runs);
        }
        free(w);
        free(b);
        free(x);
        free(y);
    }
    {
        const int64_t C = 64, K = 64, H = 56, W = 56;
        trtl_node nd = {0};
        nd.op = TRTL_OP_CONVOLUTION;
        nd.name = "conv";
        nd.epi.act = TRTL_ACT_RELU;
        trtl_conv_params *p = &nd.p.conv;
        float *w = bench_rand_buf(K * C * 9, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(C * H * W, 1.0f),
              *y = bench_rand_buf(K * H * W, 1.0f);
        p->num_output_maps = (int32_t)K;
        p->num_groups = 1;
        p->kernel_size = (trtl_dims){2, {3, 3}};
        p->stride = (trtl_dims){2, {1, 1}};
        p->dilation = (trtl_dims){2, {1, 1}};
        p->pre_padding = (trtl_dims){2, {1, 1}};
        p->post_padding = (trtl_dims){2, {1, 1}};
        p->kernel = (trtl_weights){TRTL_FLOAT, w, K * C * 9};
        p->bias = (trtl_weights){TRTL_FLOAT, b, K};
        nd.n_in = nd.n_out = 1;
        trtl_tensor_view in = {x, {4, {1, C, H, W}}, TRTL_FLOAT}, out = {y, {4, {1, K, H, W}}, TRTL_FLOAT};
        double flops = 2.0 * K * C * 9 * H * W;
        for (int t = 1; t <= 2; t++) {
            report("conv 3x3 64->64 56x56 +relu", flops, &trtl_kernel_conv_packed_gemm, &trtl_kernel_conv_bf16_gemm,
                   &nd, &in, &out, t == 1 ? NULL : pool2, t, runs);
            report("conv 3x3 64->64 56x56 +relu", flops, &trtl_kernel_conv_winograd_f43, &trtl_kernel_conv_bf16_gemm,
                   &nd, &in, &out, t == 1 ? NULL : pool2, t, runs);
        }
        free(w);
        free(b);
        free(x);
        free(y);
    }
    trtl_threadpool_destroy(pool2);
    return 0;
}
