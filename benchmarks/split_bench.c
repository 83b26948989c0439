/*
 * split_bench.c -- how well each layer of a plan splits over a thread pool, measured in per-thread CPU time so that
 * a loaded machine (where two-thread wall times are the scheduler's) can still tell.  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/split_bench.c -o build/split_bench \
 *       -Lbuild -ltrtlite -lm -lpthread -ldl -rdynamic -Wl,-rpath,$PWD/build
 *   build/split_bench PLAN [--threads N] [--runs R] [--top K]
 *
 * The plan's input shapes must be fixed (min = opt = max; layers_vs_ort.py --plans writes such plans).  The program
 * defines trtl_parallel_for itself (exported with -rdynamic, so libtrtlite's calls through its PLT land here) and
 * forwards to the library's (dlsym RTLD_NEXT), wrapping the task: every chunk's CPU time on the thread that ran it
 * (CLOCK_THREAD_CPUTIME_ID) is added to the range of the pool's static split that owns the chunk (threadpool.c:
 * ceil(n / (size * 4)) items a chunk, nchunks * i / size the first chunk of thread i).  Per layer (the context's
 * profiler callback marks the ends), over R runs, minima of:
 *   t1      the layer's CPU time on a pool of 1 (the same plan run with one thread);
 *   work    the chunks' CPU time summed over the threads at N threads (the split's extra work: packing twice, ...);
 *   ideal   the caller's CPU time outside jobs (the serial part) + for each job its slowest range: the layer's time
 *           at N threads if every thread ran its own range at once with nothing else on the machine and the pool
 *           cost nothing;
 *   jobs    parallel_for calls (each one a publish, wake and barrier: ~1-5 us on a quiet machine).
 * Then 4R runs without the profiler at N threads: wall minimum and median (a quiet machine's figure).
 * Printed: per kernel and the top-K layers by ideal - t1 / N, the speed-up t1 / ideal (N is perfect), and per kernel
 * ideal / (work / N), the imbalance alone (1 is an even split; t1, taken in other runs, moves more on a loaded
 * machine).  A/B of a kernel change: link a second binary against the old library and run both alternately.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trtlite/trtlite.h"
#include "core/threadpool.h"

#define MAX_LAYERS 4096
#define MAX_RANGES 64

typedef void (*pf_fn)(trtl_threadpool *, int64_t, int64_t, trtl_task_fn, void *);

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* current layer's accumulators (the caller's thread writes the job totals; the ranges are added under a lock) */
static double g_range[MAX_RANGES];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static double g_ideal_jobs, g_job_caller_cpu, g_work;
static int g_jobs, g_pool_size = 1;

typedef struct shim {
    trtl_task_fn fn;
    void *ctx;
    int64_t chunk, nchunks, size;
} shim;

static void shim_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const shim *s = ctx;
    double t0 = cpu_s();
    s->fn(s->ctx, b, e, thread);
    double t = cpu_s() - t0;
    int64_t c = b / s->chunk, r = 0;
    if (s->nchunks < s->size)
        r = c;
    else
        while (r + 1 < s->size && s->nchunks * (r + 1) / s->size <= c)
            r++;
    pthread_mutex_lock(&g_lock);
    g_range[r] += t;
    pthread_mutex_unlock(&g_lock);
}

void trtl_parallel_for(trtl_threadpool *p, int64_t n, int64_t grain, trtl_task_fn fn, void *ctx)
{
    static pf_fn real;
    if (!real)
        real = (pf_fn)dlsym(RTLD_NEXT, "trtl_parallel_for");
    int size = trtl_threadpool_size(p);
    if (grain < 1)
        grain = 1;
    if (n <= 0 || size == 1 || n <= grain || size > MAX_RANGES) {
        real(p, n, grain, fn, ctx); /* inline (nested calls too): part of the caller's serial time */
        return;
    }
    shim s = {fn, ctx, 0, 0, size};
    s.chunk = (n + (int64_t)size * 4 - 1) / ((int64_t)size * 4);
    if (s.chunk < grain)
        s.chunk = grain;
    s.nchunks = (n + s.chunk - 1) / s.chunk;
    for (int i = 0; i < size; i++)
        g_range[i] = 0;
    double t0 = cpu_s();
    real(p, n, grain, shim_task, &s);
    g_job_caller_cpu += cpu_s() - t0;
    double mx = 0, sum = 0;
    for (int i = 0; i < size; i++) {
        double v = g_range[i];
        sum += v;
        mx = v > mx ? v : mx;
    }
    g_ideal_jobs += mx;
    g_work += sum;
    g_jobs++;
}

typedef struct layer_stat {
    char name[160];
    double t1, work, ideal;
    int jobs;
} layer_stat;

static layer_stat g_l[MAX_LAYERS];
static int g_nl, g_cur, g_threads_mode;
static double g_mark;

static void prof(void *user, const char *name, float ms)
{
    (void)user;
    (void)ms;
    double now = cpu_s();
    double caller = now - g_mark;
    if (g_cur < MAX_LAYERS) {
        layer_stat *l = &g_l[g_cur];
        if (g_cur >= g_nl) {
            snprintf(l->name, sizeof l->name, "%s", name);
            l->t1 = l->work = l->ideal = 1e30;
            g_nl = g_cur + 1;
        }
        if (g_threads_mode == 1) {
            if (caller < l->t1)
                l->t1 = caller;
        } else {
            double serial = caller - g_job_caller_cpu, ideal = serial + g_ideal_jobs, work = serial + g_work;
            if (ideal < l->ideal)
                l->ideal = ideal;
            if (work < l->work)
                l->work = work;
            l->jobs = g_jobs;
        }
    }
    g_cur++;
    g_ideal_jobs = g_job_caller_cpu = g_work = 0;
    g_jobs = 0;
    g_mark = cpu_s();
}

static int cmp_gap(const void *a, const void *b)
{
    const layer_stat *x = a, *y = b;
    double gx = x->ideal - x->t1 / g_pool_size, gy = y->ideal - y->t1 / g_pool_size;
    return gx < gy ? 1 : gx > gy ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int threads = 2, runs = 10, top = 25;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--top") && i + 1 < argc)
            top = atoi(argv[++i]);
        else
            path = argv[i];
    }
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        fprintf(stderr, "usage: split_bench PLAN [--threads N] [--runs R] [--top K]\n");
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc((size_t)sz);
    if (fread(data, 1, (size_t)sz, f) != (size_t)sz)
        return 2;
    fclose(f);
    trtl_engine *e = NULL;
    trtl_context *c = NULL;
    if (trtl_engine_deserialize(data, (size_t)sz, &e) != TRTL_OK || trtl_context_create(e, &c) != TRTL_OK) {
        fprintf(stderr, "cannot load %s\n", path);
        return 1;
    }
    int nio = trtl_engine_num_io(e);
    void **bind = calloc((size_t)nio, sizeof *bind);
    for (int i = 0; i < nio; i++) {
        trtl_dims d = trtl_engine_io_dims(e, i);
        if (trtl_engine_io_is_input(e, i)) {
            trtl_dims mn, opt, mx;
            trtl_engine_profile_shape(e, 0, trtl_engine_io_name(e, i), &mn, &opt, &mx);
            d = opt;
            trtl_context_set_input_shape(c, trtl_engine_io_name(e, i), &d);
        }
    }
    trtl_context_resolve(c, 0);
    for (int i = 0; i < nio; i++) {
        trtl_dims d;
        trtl_context_io_dims(c, i, &d);
        int64_t v = 1;
        for (int k = 0; k < d.nb_dims; k++)
            v *= d.d[k];
        bind[i] = calloc((size_t)(v > 0 ? v : 1), 8);
        if (trtl_engine_io_is_input(e, i))
            for (int64_t k = 0; k < v; k++)
                ((float *)bind[i])[k] = (float)((k * 7919) % 200) / 100.0f - 1.0f;
    }
    trtl_context_set_profiler(c, prof, NULL);
    g_pool_size = threads;
    for (int r = 0; r < runs; r++) /* alternate: one-thread run, N-thread run */
        for (int mode = 1; mode <= 2; mode++) {
            g_threads_mode = mode;
            trtl_context_set_num_threads(c, mode == 1 ? 1 : threads);
            g_cur = 0;
            g_ideal_jobs = g_job_caller_cpu = g_work = 0;
            g_jobs = 0;
            g_mark = cpu_s();
            if (trtl_context_execute_bindings(c, 0, bind) != TRTL_OK) {
                fprintf(stderr, "execute failed\n");
                return 1;
            }
        }
    /* unprofiled wall time at N threads (meaningful on a quiet machine; the minimum on a loaded one) */
    trtl_context_set_profiler(c, NULL, NULL);
    trtl_context_set_num_threads(c, threads);
    double *wall = calloc((size_t)runs * 4, sizeof *wall);
    for (int r = 0; r < runs * 4; r++) {
        struct timespec a0, a1;
        clock_gettime(CLOCK_MONOTONIC, &a0);
        trtl_context_execute_bindings(c, 0, bind);
        clock_gettime(CLOCK_MONOTONIC, &a1);
        wall[r] = (double)(a1.tv_sec - a0.tv_sec) * 1e3 + 1e-6 * (double)(a1.tv_nsec - a0.tv_nsec);
    }
    for (int a = 1; a < runs * 4; a++) /* insertion sort: few runs */
        for (int b = a; b > 0 && wall[b] < wall[b - 1]; b--) {
            double t = wall[b];
            wall[b] = wall[b - 1];
            wall[b - 1] = t;
        }
    printf("wall at %d threads, %d runs: min %.3f ms, median %.3f ms\n", threads, runs * 4, wall[0], wall[runs * 2]);
    /* totals per kernel */
    double T1 = 0, TI = 0, TW = 0;
    int TJ = 0;
    char kern[64][64];
    double kt1[64] = {0}, kid[64] = {0}, kw[64] = {0};
    int kj[64] = {0}, kn[64] = {0}, nk = 0;
    for (int i = 0; i < g_nl; i++) {
        const char *k = i < trtl_engine_num_layers(e) ? trtl_engine_layer_kernel(e, i) : "?";
        int j = 0;
        while (j < nk && strcmp(kern[j], k))
            j++;
        if (j == nk && nk < 64)
            snprintf(kern[nk++], 64, "%s", k);
        if (j < 64) {
            kt1[j] += g_l[i].t1;
            kid[j] += g_l[i].ideal;
            kw[j] += g_l[i].work;
            kj[j] += g_l[i].jobs;
            kn[j]++;
        }
        T1 += g_l[i].t1;
        TI += g_l[i].ideal;
        TW += g_l[i].work;
        TJ += g_l[i].jobs;
    }
    printf("%s: %d layers, %d threads: t1 %.3f ms, ideal %.3f ms (speed-up %.2f of %d), work %.3f ms (%+.1f%%), "
           "%d jobs\n",
           path, g_nl, threads, T1 * 1e3, TI * 1e3, T1 / TI, threads, TW * 1e3, (TW / T1 - 1) * 100, TJ);
    printf("| kernel | layers | t1 ms | ideal ms | speed-up | work vs t1 | ideal / (work / N) | jobs |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (int j = 0; j < nk; j++)
        printf("| %s | %d | %.3f | %.3f | %.2f | %+.1f%% | %.3f | %d |\n", kern[j], kn[j], kt1[j] * 1e3, kid[j] * 1e3,
               kt1[j] / kid[j], (kw[j] / kt1[j] - 1) * 100, kid[j] / (kw[j] / threads), kj[j]);
    for (int i = 0; i < g_nl; i++) /* kernel names before sorting */
        snprintf(g_l[i].name + 100, 60, "%s", i < trtl_engine_num_layers(e) ? trtl_engine_layer_kernel(e, i) : "?");
    qsort(g_l, (size_t)g_nl, sizeof g_l[0], cmp_gap);
    printf("layers furthest from t1/%d: ideal - t1/%d ms, t1, ideal, work, speed-up, jobs, kernel, name\n", threads,
           threads);
    for (int i = 0; i < g_nl && i < top; i++)
        printf("  %+.3f  %.3f  %.3f  %.3f  %.2f  %2d  %-28s %.60s\n", (g_l[i].ideal - g_l[i].t1 / threads) * 1e3,
               g_l[i].t1 * 1e3, g_l[i].ideal * 1e3, g_l[i].work * 1e3, g_l[i].t1 / g_l[i].ideal, g_l[i].jobs,
               g_l[i].name + 100, g_l[i].name);
    return 0;
}
