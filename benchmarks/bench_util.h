/*
 * bench_util.h -- clocks and random inputs shared by the C micro-benchmarks in benchmarks/ (not part of the
 * library or of CI).  Header-only: each benchmark is one translation unit linked against libtrtlite.
 */
#ifndef TRTL_BENCH_UTIL_H
#define TRTL_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/kernel.h"

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

#endif
