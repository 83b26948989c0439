/*
 * pool_wait_bench.c -- what a two-thread step costs beyond its slowest thread's work when the threads finish
 * apart (the imbalance of a real layer), with the pool held as during execute().  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/pool_wait_bench.c -o build/pool_wait_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -Wl,-rpath,$PWD/build
 *   build/pool_wait_bench [--reps N]
 *
 * Each step is a parallel_for of 2 items: item 0 (the caller's) busy-waits `work` us, item 1 (the worker's)
 * `work + lag` us.  Printed: the median and minimum of (step wall time - (work + lag)) over the reps, i.e. the
 * pool's own cost per step: publishing, the worker noticing, and the caller noticing the end (spinning, or a
 * wake-up from a condition variable).  Wall time: meaningful on a quiet machine; on a loaded one the minimum still
 * shows the wake-up when every rep pays it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "bench_util.h"

typedef struct step {
    double work_s, lag_s;
} step;

static void busy(void *ctx, int64_t b, int64_t e, int thread)
{
    const step *s = ctx;
    (void)thread;
    for (int64_t i = b; i < e; i++) {
        double until = bench_wall_s() + s->work_s + (i == 1 ? s->lag_s : 0.0);
        while (bench_wall_s() < until)
            ;
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = 200;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
    trtl_threadpool *pool = NULL;
    if (trtl_threadpool_create(2, &pool) != TRTL_OK)
        return 1;
    double *over = malloc(sizeof(double) * (size_t)reps);
    const double lags_us[] = {0, 50, 200, 500, 1000};
    trtl_threadpool_hold(pool, 1);
    for (size_t li = 0; li < sizeof lags_us / sizeof lags_us[0]; li++) {
        step s = {200e-6, lags_us[li] * 1e-6};
        for (int r = 0; r < reps; r++) {
            double t0 = bench_wall_s();
            trtl_parallel_for(pool, 2, 1, busy, &s);
            over[r] = (bench_wall_s() - t0 - s.work_s - s.lag_s) * 1e6;
        }
        qsort(over, (size_t)reps, sizeof *over, cmp_d);
        printf("work 200 us, worker lag %5.0f us: overhead median %7.1f us, min %6.1f us, p90 %7.1f us\n",
               lags_us[li], over[reps / 2], over[0], over[reps * 9 / 10]);
    }
    trtl_threadpool_hold(pool, 0);
    trtl_threadpool_destroy(pool);
    free(over);
    return 0;
}
