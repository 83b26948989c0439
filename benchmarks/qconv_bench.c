/*
 * qconv_bench.c -- the int8 convolution library (kernels/qconv.h) against trtlite's fp32 kernels on
 * ResNet-50's convolutions (batch 1, 224x224) and BERT-base's fully connected layers (128 tokens):
 * per layer, the int8 kernel vs the fastest applicable fp32 kernel, as the builder would pick it
 * (convolution.packed_gemm, the Winograd kernels for 3x3 stride 1, convolution.im2col_sgemm;
 * fully_connected.packed_gemm), then the sum over all
 * of ResNet-50's convolutions with their multiplicities.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/qconv_bench.c \
 *       csrc/core/{cpu,status,dims,threadpool,shape,alloc}.c csrc/kernels/{epilogue,conv_geometry,qconv}.c \
 *       csrc/kernels/ref/qconv.c $(ls csrc/kernels/x86/[a-z]*.c csrc/kernels/blas/[a-z]*.c) \
 *       csrc/kernels/ref/{slice,gather,concatenation,padding,strided,shuffle}.c \
 *       -o build/qconv_bench -lopenblas -lm -lpthread
 *   build/qconv_bench [threads] [filter]
 *
 * Times are the minimum of at least 5 runs (and 0.2 s) after a warm-up run: with one thread the
 * thread's CPU time, with more the wall clock (both robust to a loaded machine's preemptions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernel.h"
#include "kernels/qconv.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_conv_packed_gemm, trtl_kernel_conv_winograd_f43, trtl_kernel_conv_winograd_f23,
    trtl_kernel_conv_im2col_sgemm;
extern const trtl_kernel trtl_kernel_fc_packed_gemm;

static trtl_threadpool *g_pool;
static double g_sum32, g_sum8;

/* One thread: this thread's CPU time (on a loaded machine the wall clock of a run longer than a
 * scheduler slice mostly measures the other processes); more: the wall clock. */
static int g_threads = 1;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef trtl_status (*run_fn)(void *ctx);

static double best_time(run_fn fn, void *ctx)
{
    double t[64];
    int n = 0;
    if (fn(ctx) != TRTL_OK) {
        fprintf(stderr, "run failed: %s\n", trtl_last_error());
        exit(1);
    }
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &w1);
        if (n >= 64 || (n >= 5 && (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec) > 0.2))
            break;
        double t0 = bench_clock_s(g_threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC);
        fn(ctx);
        t[n++] = bench_clock_s(g_threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC) - t0;
    }
    qsort(t, (size_t)n, sizeof t[0], cmp_d);
    return t[0];
}

typedef struct kjob {
    const trtl_kernel *k;
    trtl_kernel_args a;
} kjob;

static trtl_status run_kernel(void *ctx)
{
    kjob *j = ctx;
    return j->k->run(&j->a);
}

typedef struct qjob {
    const trtl_qconv_state *s;
    int64_t N, H, W, M;
    const float *x;
    float *y;
    void *scratch;
    size_t ss;
} qjob;

static trtl_status run_q(void *ctx)
{
    qjob *j = ctx;
    if (j->M)
        return trtl_qgemm_run(j->s, j->M, j->x, j->y, NULL, j->scratch, j->ss, g_pool);
    return trtl_qconv_run(j->s, j->N, j->H, j->W, j->x, j->y, NULL, j->scratch, j->ss, g_pool);
}

/* Seconds of fp32 kernel k on node nd (inf when it does not apply). */
static double time_fp32(const trtl_kernel *k, trtl_node *nd, const trtl_tensor_view *in, trtl_tensor_view *out)
{
    if (k->applies && !k->applies(nd, &in[0].dims))
        return 1e30;
    void *state = NULL;
    if (k->prepare && k->prepare(nd, &state) != TRTL_OK)
        return 1e30;
    size_t ss = k->scratch ? k->scratch(nd, in, out) : 0;
    void *scratch = ss ? malloc(ss) : NULL;
    kjob j = {k, {nd, in, out, scratch, ss, state, g_pool, NULL}};
    double t = best_time(run_kernel, &j);
    if (k->release)
        k->release(state);
    free(scratch);
    return t;
}

static void report(const char *name, int mult, double flops, double t32, const char *k32, double t8,
                   const char *k8)
{
    printf("%-28s x%-2d %8.1f MFLOP  fp32 %-26s %8.3f ms %6.1f GF/s   int8 %-10s %8.3f ms %6.1f GOP/s  %5.2fx\n",
           name, mult, flops / 1e6, k32, t32 * 1e3, flops / t32 / 1e9, k8, t8 * 1e3, flops / t8 / 1e9, t32 / t8);
    g_sum32 += mult * t32;
    g_sum8 += mult * t8;
}

static void qconv_shape(const char *name, int mult, int64_t C, int64_t K, int64_t H, int64_t ks, int64_t s, int64_t pad)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_CONVOLUTION;
    nd.name = (char *)name;
    trtl_conv_params *p = &nd.p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = 1;
    int64_t kk[2] = {ks, ks}, ss[2] = {s, s}, one[2] = {1, 1}, pp[2] = {pad, pad};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, ss);
    p->dilation = trtl_dims_make(2, one);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    int64_t OH = (H + 2 * pad - ks) / s + 1, nw = K * C * ks * ks;
    float *w = bench_rand_buf(nw, 0.1f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(C * H * H, 4.0f),
          *y = bench_rand_buf(K * OH * OH, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = TRTL_ACT_RELU;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, K, OH, OH};
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT}, out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    const trtl_kernel *ks32[4] = {&trtl_kernel_conv_packed_gemm, &trtl_kernel_conv_winograd_f43,
                                  &trtl_kernel_conv_winograd_f23, &trtl_kernel_conv_im2col_sgemm};
    double t32 = 1e30;
    const char *k32 = "";
    for (int i = 0; i < 4; i++) {
        double t = time_fp32(ks32[i], &nd, &in, &out);
        if (t < t32) {
            t32 = t;
            k32 = ks32[i]->name;
        }
    }
    trtl_qconv_desc d = {0};
    d.C = (int32_t)C;
    d.K = (int32_t)K;
    d.R = d.S = (int32_t)ks;
    d.stride_h = d.stride_w = (int32_t)s;
    d.pad_t = d.pad_l = d.pad_b = d.pad_r = (int32_t)pad;
    d.dil_h = d.dil_w = d.groups = 1;
    d.in_scale = 2.0f / 127.0f;
    d.in_signed = 1;
    d.act = TRTL_ACT_RELU;
    int8_t *wq = malloc((size_t)nw);
    float *wscale = malloc(sizeof(float) * (size_t)K);
    for (int64_t i = 0; i < nw; i++)
        wq[i] = (int8_t)(rand() % 255 - 127);
    for (int64_t k = 0; k < K; k++)
        wscale[k] = 0.001f;
    trtl_qconv_state *st = NULL;
    if (trtl_qconv_prepare(&d, wq, wscale, 1, b, &st) != TRTL_OK) {
        fprintf(stderr, "%s: %s\n", name, trtl_last_error());
        exit(1);
    }
    qjob q = {st, 1, H, H, 0, x, y, NULL, 0};
    q.ss = trtl_qconv_scratch(st, 1, H, H, trtl_threadpool_size(g_pool));
    q.scratch = malloc(q.ss);
    double t8 = best_time(run_q, &q);
    report(name, mult, 2.0 * (double)(K * C * ks * ks) * (double)(OH * OH), t32, k32, t8, trtl_qconv_kernel_name(st));
    trtl_qconv_release(st);
    free(q.scratch);
    free(wq);
    free(wscale);
    free(w);
    free(b);
    free(x);
    free(y);
}

static void bench_fc(const char *name, int64_t M, int64_t C, int64_t K)
{
    trtl_node nd = {0};
    nd.op = TRTL_OP_FULLY_CONNECTED;
    nd.name = (char *)name;
    float *w = bench_rand_buf(K * C, 0.1f), *b = bench_rand_buf(K, 1.0f), *x = bench_rand_buf(M * C, 4.0f),
          *y = bench_rand_buf(M * K, 1.0f);
    nd.p.fc.num_output_channels = (int32_t)K;
    nd.p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * C};
    nd.p.fc.bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd.epi.act = TRTL_ACT_NONE;
    nd.n_in = nd.n_out = 1;
    int64_t xd[4] = {M, C, 1, 1}, yd[4] = {M, K, 1, 1};
    trtl_tensor_view in = {x, trtl_dims_make(4, xd), TRTL_FLOAT}, out = {y, trtl_dims_make(4, yd), TRTL_FLOAT};
    double t32 = time_fp32(&trtl_kernel_fc_packed_gemm, &nd, &in, &out);
    trtl_qconv_desc d = {0};
    d.C = (int32_t)C;
    d.K = (int32_t)K;
    d.R = d.S = d.stride_h = d.stride_w = d.dil_h = d.dil_w = d.groups = 1;
    d.gemm = 1;
    d.in_scale = 2.0f / 127.0f;
    d.in_signed = 1;
    d.act = TRTL_ACT_NONE;
    int8_t *wq = malloc((size_t)(K * C));
    float wscale = 0.001f;
    for (int64_t i = 0; i < K * C; i++)
        wq[i] = (int8_t)(rand() % 255 - 127);
    trtl_qconv_state *st = NULL;
    if (trtl_qconv_prepare(&d, wq, &wscale, 0, b, &st) != TRTL_OK) {
        fprintf(stderr, "%s: %s\n", name, trtl_last_error());
        exit(1);
    }
    qjob q = {st, 0, 0, 0, M, x, y, NULL, 0};
    q.ss = trtl_qgemm_scratch(st, M, trtl_threadpool_size(g_pool));
    q.scratch = malloc(q.ss);
    double t8 = best_time(run_q, &q);
    report(name, 1, 2.0 * (double)(M * K * C), t32, trtl_kernel_fc_packed_gemm.name, t8, trtl_qconv_kernel_name(st));
    trtl_qconv_release(st);
    free(q.scratch);
    free(wq);
    free(w);
    free(b);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    g_threads = threads;
    const char *filter = argc > 2 ? argv[2] : NULL;
    if (trtl_threadpool_create(threads, &g_pool) != TRTL_OK)
        return 1;
    printf("qconv_bench: %d threads, cpu features 0x%x\n", trtl_threadpool_size(g_pool), trtl_cpu_features());
    static const struct {
        const char *name;
        int mult;
        int64_t C, K, H, ks, s, pad;
    } rn[] = {
        {"conv1 7x7s2 3->64 224", 1, 3, 64, 224, 7, 2, 3},
        {"l1 1x1 64->64 56", 1, 64, 64, 56, 1, 1, 0},
        {"l1 3x3 64->64 56", 3, 64, 64, 56, 3, 1, 1},
        {"l1 1x1 64->256 56", 4, 64, 256, 56, 1, 1, 0},
        {"l1 1x1 256->64 56", 2, 256, 64, 56, 1, 1, 0},
        {"l2 1x1 256->128 56", 1, 256, 128, 56, 1, 1, 0},
        {"l2 3x3s2 128->128 56", 1, 128, 128, 56, 3, 2, 1},
        {"l2 1x1s2 256->512 56", 1, 256, 512, 56, 1, 2, 0},
        {"l2 1x1 128->512 28", 4, 128, 512, 28, 1, 1, 0},
        {"l2 1x1 512->128 28", 3, 512, 128, 28, 1, 1, 0},
        {"l2 3x3 128->128 28", 3, 128, 128, 28, 3, 1, 1},
        {"l3 1x1 512->256 28", 1, 512, 256, 28, 1, 1, 0},
        {"l3 3x3s2 256->256 28", 1, 256, 256, 28, 3, 2, 1},
        {"l3 1x1s2 512->1024 28", 1, 512, 1024, 28, 1, 2, 0},
        {"l3 1x1 256->1024 14", 6, 256, 1024, 14, 1, 1, 0},
        {"l3 1x1 1024->256 14", 5, 1024, 256, 14, 1, 1, 0},
        {"l3 3x3 256->256 14", 5, 256, 256, 14, 3, 1, 1},
        {"l4 1x1 1024->512 14", 1, 1024, 512, 14, 1, 1, 0},
        {"l4 3x3s2 512->512 14", 1, 512, 512, 14, 3, 2, 1},
        {"l4 1x1s2 1024->2048 14", 1, 1024, 2048, 14, 1, 2, 0},
        {"l4 1x1 512->2048 7", 3, 512, 2048, 7, 1, 1, 0},
        {"l4 1x1 2048->512 7", 2, 2048, 512, 7, 1, 1, 0},
        {"l4 3x3 512->512 7", 2, 512, 512, 7, 3, 1, 1},
    };
    for (size_t i = 0; i < sizeof rn / sizeof rn[0]; i++)
        if (!filter || strstr(rn[i].name, filter))
            qconv_shape(rn[i].name, rn[i].mult, rn[i].C, rn[i].K, rn[i].H, rn[i].ks, rn[i].s, rn[i].pad);
    if (!filter)
        printf("ResNet-50 convolutions, sum with multiplicities: fp32 %.2f ms, int8 %.2f ms: %.2fx\n", g_sum32 * 1e3,
               g_sum8 * 1e3, g_sum32 / g_sum8);
    if (!filter || strstr("bert", filter)) {
        bench_fc("bert fc 128x768->3072", 128, 768, 3072);
        bench_fc("bert fc 128x3072->768", 128, 3072, 768);
        bench_fc("bert fc 128x768->768", 128, 768, 768);
    }
    trtl_threadpool_destroy(g_pool);
    return 0;
}
