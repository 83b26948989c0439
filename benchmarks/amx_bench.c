/*
 * amx_bench.c -- the Intel AMX kernels against the AVX-512 ones on ResNet convolution shapes
 * (batch 1) and BERT-base fully connected shapes (128 tokens), one thread: the fp32 packed GEMM
 * kernels, the AVX512-BF16 ones, the AMX-BF16 ones, and the int8 library's avx512vnni and amx
 * variants (kernels/qconv.h; rows mode for the FC shapes).
 * Not part of CI; short runs.
 *
 *   build with the sources of tests/test_kernels_c.py (its _sources(), with this file in place of
 *   tests/c/test_kernels.c), e.g.
 *   python3 -c "import sys,subprocess; sys.path.insert(0,'tests'); import test_kernels_c as t;
 *     subprocess.run(['gcc']+t.CFLAGS+['benchmarks/amx_bench.c']+t._sources()[1:]+['-o','build/amx_bench']+t.LIBS)"
 *   build/amx_bench [runs]
 *
 * Each number is the minimum thread CPU time (CLOCK_THREAD_CPUTIME_ID) over `runs` runs (default
 * 5) after one warm-up run: robust to a shared machine's preemptions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernel.h"
#include "kernels/qconv.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_packed_gemm, trtl_kernel_conv_bf16_gemm, trtl_kernel_conv_amx_bf16;
extern const trtl_kernel trtl_kernel_fc_packed_gemm, trtl_kernel_fc_bf16_gemm, trtl_kernel_fc_amx_bf16;

/* Minimum seconds of k->run, or -1 if the kernel does not run here. */
static double best_kernel(const trtl_kernel *k, trtl_node *nd, const trtl_tensor_view *in, trtl_tensor_view *out,
                          int runs)
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
    trtl_kernel_args a = {nd, in, out, scratch, ss, state, NULL, NULL};
    double best = -1.0;
    if (k->run(&a) == TRTL_OK)
        for (int i = 0; i < runs; i++) {
            double t0 = bench_cpu_s();
            k->run(&a);
            double t = bench_cpu_s() - t0;
            if (best < 0 || t < best)
                best = t;
        }
    free(scratch);
    if (k->release && state)
        k->release(state);
    return best;
}

/* The int8 library with the AMX choice `amx` (TRTL_QCONV_AMX_NEVER / ONLY); H = 0: rows (gemm) of k = M rows. */
static double best_qconv(int64_t C, int64_t K, int64_t H, int64_t k, int64_t pad, const float *x, float *y, int amx,
                         int runs)
{
    const int64_t M = k;
    if (H == 0)
        k = 1;
    trtl_qconv_desc d = {0};
    d.gemm = H == 0;
    d.C = (int32_t)C;
    d.K = (int32_t)K;
    d.R = d.S = (int32_t)k;
    d.stride_h = d.stride_w = d.dil_h = d.dil_w = d.groups = 1;
    d.pad_t = d.pad_l = d.pad_b = d.pad_r = (int32_t)pad;
    d.in_scale = 0.01f;
    d.in_zero = 0;
    d.in_signed = 1;
    d.act = TRTL_ACT_RELU;
    int8_t *w = malloc((size_t)(K * C * k * k));
    for (int64_t i = 0; i < K * C * k * k; i++)
        w[i] = (int8_t)(rand() % 255 - 127);
    float ws = 0.01f;
    trtl_qconv_state *s = NULL;
    double best = -1.0;
    if (trtl_qconv_prepare_amx(&d, w, &ws, 0, NULL, amx, &s) == TRTL_OK) {
        size_t ss = H ? trtl_qconv_scratch(s, 1, H, H, 1) : trtl_qgemm_scratch(s, M, 1);
        void *scratch = malloc(ss);
        if ((H ? trtl_qconv_run(s, 1, H, H, x, y, NULL, scratch, ss, NULL)
               : trtl_qgemm_run(s, M, x, y, NULL, scratch, ss, NULL)) == TRTL_OK)
            for (int i = 0; i < runs; i++) {
                double t0 = bench_cpu_s();
                if (H)
                    trtl_qconv_run(s, 1, H, H, x, y, NULL, scratch, ss, NULL);
                else
                    trtl_qgemm_run(s, M, x, y, NULL, scratch, ss, NULL);
                double t = bench_cpu_s() - t0;
                if (best < 0 || t < best)
                    best = t;
            }
        free(scratch);
    }
    trtl_qconv_release(s);
    free(w);
    return best;
}

static void conv_shape(int64_t C, int64_t K, int64_t H, int64_t k, int64_t pad, int runs)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = "conv";
    nd.epi.act = TRTL_ACT_RELU;
    trtl_conv_params *p = &nd.p.conv;
    float *w = bench_rand_buf(K * C * k * k, 1.0f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(C * H * H, 1.0f),
          *y = bench_rand_buf(K * H * H, 1.0f);
    p->num_output_maps = (int32_t)K;
    p->num_groups = 1;
    p->kernel_size = (trtl_dims){2, {k, k}};
    p->stride = (trtl_dims){2, {1, 1}};
    p->dilation = (trtl_dims){2, {1, 1}};
    p->pre_padding = (trtl_dims){2, {pad, pad}};
    p->post_padding = (trtl_dims){2, {pad, pad}};
    p->kernel = (trtl_weights){TRTL_FLOAT, w, K * C * k * k};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.n_in = nd.n_out = 1;
    trtl_tensor_view in = {x, {4, {1, C, H, H}}, TRTL_FLOAT}, out = {y, {4, {1, K, H, H}}, TRTL_FLOAT};
    const double gf = 2.0 * K * C * k * k * H * H * 1e-9;
    const double t[5] = {best_kernel(&trtl_kernel_conv_packed_gemm, &nd, &in, &out, runs),
                         best_kernel(&trtl_kernel_conv_bf16_gemm, &nd, &in, &out, runs),
                         best_kernel(&trtl_kernel_conv_amx_bf16, &nd, &in, &out, runs),
                         best_qconv(C, K, H, k, pad, x, y, TRTL_QCONV_AMX_NEVER, runs),
                         best_qconv(C, K, H, k, pad, x, y, TRTL_QCONV_AMX_ONLY, runs)};
    printf("%4lld->%-4lld %lldx%lld %2lldx%-2lld |", (long long)C, (long long)K, (long long)k, (long long)k,
           (long long)H, (long long)H);
    for (int i = 0; i < 5; i++)
        printf(" %7.3f ms %5.0f GF/s |", t[i] * 1e3, t[i] > 0 ? gf / t[i] : 0.0);
    printf("\n");
    free(w);
    free(b);
    free(x);
    free(y);
}

static void fc_shape(int64_t M, int64_t D, int64_t K, int runs)
{
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
    trtl_tensor_view in = {x, {4, {M, D, 1, 1}}, TRTL_FLOAT}, out = {y, {4, {M, K, 1, 1}}, TRTL_FLOAT};
    const double gf = 2.0 * M * D * K * 1e-9;
    const double t[5] = {best_kernel(&trtl_kernel_fc_packed_gemm, &nd, &in, &out, runs),
                         best_kernel(&trtl_kernel_fc_bf16_gemm, &nd, &in, &out, runs),
                         best_kernel(&trtl_kernel_fc_amx_bf16, &nd, &in, &out, runs),
                         best_qconv(D, K, 0, M, 0, x, y, TRTL_QCONV_AMX_NEVER, runs),
                         best_qconv(D, K, 0, M, 0, x, y, TRTL_QCONV_AMX_ONLY, runs)};
    printf("FC %4lldx%-4lld -> %-4lld |", (long long)M, (long long)D, (long long)K);
    for (int i = 0; i < 5; i++)
        printf(" %7.3f ms %5.0f GF/s |", t[i] * 1e3, t[i] > 0 ? gf / t[i] : 0.0);
    printf("\n");
    free(w);
    free(b);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    printf("amx_bench: cpu features 0x%x, 1 thread, min thread CPU time of %d runs\n", trtl_cpu_features(), runs);
    printf("shape                  | fp32 packed_gemm         | bf16 avx512 (vdpbf16ps)  | bf16 amx (tdpbf16ps)     "
           "| int8 avx512vnni          | int8 amx (tdpbsud)       |\n");
    conv_shape(64, 64, 56, 3, 1, runs);
    conv_shape(256, 256, 14, 1, 0, runs);
    conv_shape(256, 64, 56, 1, 0, runs);
    conv_shape(256, 256, 14, 3, 1, runs);
    conv_shape(512, 512, 7, 3, 1, runs);
    fc_shape(128, 768, 3072, runs);
    fc_shape(128, 3072, 768, runs);
    return 0;
}
