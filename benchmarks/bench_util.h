/*
 * bench_util.h -- clocks and random inputs shared by the C micro-benchmarks in benchmarks/ (not part of the
 * library or of CI).  Header-only: each benchmark is one translation unit linked against libtrtlite.
 */
#ifndef TRTL_BENCH_UTIL_H
#define TRTL_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernel.h"
#include "core/dims.h"

/* Seconds on `clk`: CLOCK_THREAD_CPUTIME_ID (the calling thread's CPU time, what a shared, loaded machine can
 * still compare) or CLOCK_MONOTONIC (wall time, for thread-pool runs on a quiet machine). */
static inline double bench_clock_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline double bench_cpu_s(void) { return bench_clock_s(CLOCK_THREAD_CPUTIME_ID); }
static inline double bench_wall_s(void) { return bench_clock_s(CLOCK_MONOTONIC); }

/* n floats uniform in [-scale/2, scale/2) from rand() (seed with srand for repeatable inputs); at least one
 * element is allocated, so n = 0 gives a valid pointer. */
static inline float *bench_rand_buf(int64_t n, float scale)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; p && i < n; i++)
        p[i] = scale * ((float)rand() / (float)RAND_MAX - 0.5f);
    return p;
}

/* Minimum seconds of one k->run over `reps` runs after a first (untimed) one, or -1 when the kernel does not apply
 * or fails.  Without a pool the clock is the thread's CPU time, with one wall time. */
/* Where > 0: bench_time_kernel() writes this many bytes of another buffer before every timed run (outside the
 * timing), so that the run's operands come from memory, as a layer's input does after a larger producer
 * (conv_ab_bench --cold). */
static size_t bench_cold_bytes;

static inline void bench_evict(void)
{
    static unsigned char *junk;
    if (!bench_cold_bytes)
        return;
    if (!junk)
        junk = malloc(bench_cold_bytes);
    if (junk)
        for (size_t i = 0; i < bench_cold_bytes; i += 64)
            junk[i] = (unsigned char)(junk[i] + 1);
}

static inline double bench_time_kernel(const trtl_kernel *k, trtl_node *nd, const trtl_tensor_view *in,
                                       trtl_tensor_view *out, struct trtl_threadpool *pool, int reps)
{
    if (k->applies && !k->applies(nd, &in[0].dims))
        return -1;
    void *state = NULL;
    if (k->prepare && k->prepare(nd, &state) != TRTL_OK)
        return -1;
    size_t ss = k->scratch ? k->scratch(nd, in, out) : 0;
    void *scratch = ss ? malloc(ss) : NULL;
    trtl_kernel_args a = {nd, in, out, scratch, ss, state, pool, NULL};
    const clockid_t clk = pool ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
    double best = 1e9;
    if (k->run(&a) != TRTL_OK) {
        best = -1;
    } else {
        for (int i = 0; i < reps; i++) {
            bench_evict();
            double t0 = bench_clock_s(clk);
            k->run(&a);
            double t = bench_clock_s(clk) - t0;
            best = t < best ? t : best;
        }
    }
    if (k->release)
        k->release(state);
    free(scratch);
    return best;
}

/* A LINEAR node (Y = X W^T + b, W [K, D]) named `name` with activation `act` (linear_bench.c, linear_ab.c). */
static inline void bench_linear_node(trtl_node *nd, const char *name, int64_t D, int64_t K, float *w, float *b, int act)
{
    memset(nd, 0, sizeof *nd);
    nd->op = TRTL_OP_LINEAR;
    nd->name = (char *)name;
    nd->n_in = nd->n_out = 1;
    nd->p.fc.num_output_channels = (int32_t)K;
    nd->p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, K * D};
    nd->p.fc.bias = (trtl_weights){TRTL_FLOAT, b, K};
    nd->epi.act = act;
}

/* One 2-D convolution layer (batch 1, square map and kernel, bias, fused activation `act`) on random weights and
 * input, for timing conv kernels against each other: pads = dilation * (k - 1) / 2 ("same" for stride 1). */
typedef struct bench_conv {
    trtl_node nd;
    trtl_tensor_view in[1], out;
    float *w, *b, *x, *y;
} bench_conv;

static inline void bench_conv_make(bench_conv *c, int64_t C, int64_t K, int64_t H, int64_t k, int64_t stride,
                                   int64_t dil, int64_t groups, int act)
{
    memset(c, 0, sizeof *c);
    const int64_t pad = dil * (k - 1) / 2, OH = (H + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    trtl_conv_params *p = &c->nd.p.conv;
    c->nd.op = TRTL_OP_CONVOLUTION;
    c->nd.name = "bench_conv";
    p->num_output_maps = (int32_t)K;
    p->num_groups = (int32_t)groups;
    int64_t kk[2] = {k, k}, st[2] = {stride, stride}, dd[2] = {dil, dil}, pp[2] = {pad, pad};
    p->kernel_size = trtl_dims_make(2, kk);
    p->stride = trtl_dims_make(2, st);
    p->dilation = trtl_dims_make(2, dd);
    p->pre_padding = p->post_padding = trtl_dims_make(2, pp);
    const int64_t nw = K * (C / groups) * k * k;
    c->w = bench_rand_buf(nw, 0.1f);
    c->b = bench_rand_buf(K, 1.0f);
    c->x = bench_rand_buf(C * H * H, 1.0f);
    c->y = bench_rand_buf(K * OH * OH, 1.0f);
    p->kernel = (trtl_weights){TRTL_FLOAT, c->w, nw};
    p->bias = (trtl_weights){TRTL_FLOAT, c->b, K};
    c->nd.epi.act = act;
    c->nd.n_in = c->nd.n_out = 1;
    int64_t xd[4] = {1, C, H, H}, yd[4] = {1, K, OH, OH};
    c->in[0] = (trtl_tensor_view){c->x, trtl_dims_make(4, xd), TRTL_FLOAT};
    c->out = (trtl_tensor_view){c->y, trtl_dims_make(4, yd), TRTL_FLOAT};
}

static inline void bench_conv_free(bench_conv *c)
{
    free(c->w);
    free(c->b);
    free(c->x);
    free(c->y);
}

/* Prints " | <name without its family prefix> <ms>" for each kernel that applies (bench_time_kernel's clock). */
static inline void bench_conv_row(bench_conv *c, const trtl_kernel *const *ks, int nk, struct trtl_threadpool *pool,
                                  int reps)
{
    for (int i = 0; i < nk; i++) {
        double t = bench_time_kernel(ks[i], &c->nd, c->in, &c->out, pool, reps);
        const char *dot = strchr(ks[i]->name, '.');
        if (t > 0)
            printf(" | %s %8.4f ms", dot ? dot + 1 : ks[i]->name, t * 1e3);
    }
    printf("\n");
    fflush(stdout);
}

#endif
