/*
 * threadpool.c -- fixed worker pool: per-thread chunk ranges with stealing, short spin then block.
 *
 * One job at a time (the pool's caller thread publishes it and takes part).  The job's chunks are
 * split into one contiguous range per thread; a thread drains its own range first and then
 * steals from the others.  A kernel that cuts its work into one item per thread therefore gets
 * the same item on the same thread on every run (its data stays in that core's cache), while a
 * thread that wakes late simply finds its range taken.
 *
 * Each range has a ticket: (generation << 32) | chunks not yet claimed.  Claiming is a
 * compare-and-swap that only succeeds for the generation the thread is working on, so a worker
 * waking late can never run a chunk of a newer job, and the caller only waits for chunks to
 * finish (`done`), never for sleeping workers to notice a job.  `gen` holds the current
 * generation alone; idle workers watch it.
 *
 * Job fields (fn, ctx, n, chunk, nchunks, each range's first/count) are written by the caller
 * before the release store of the new generation and read by workers only after a successful
 * claim (acquire); the caller rewrites them only after every chunk of the previous job reported
 * done: no data race.
 *
 * Idle workers spin for about SPIN_NS on `gen` (back-to-back layers keep them hot), then sleep
 * on `wake`; while the pool is held they keep spinning.  The caller, its own chunks done, spins
 * for the others' (SPIN_NS, or HELD_WAIT_NS while held), then sleeps on `idle`.  Past YIELD_AFTER_NS
 * a spinning thread yields its CPU at each check, so it never keeps a runnable thread of its own pool waiting
 * behind it for a time slice (TRTL_POOL_YIELD=0: only where another thread of its pool last ran on the same CPU,
 * so that it does not hand its CPU to other programs mid-inference; maybe_yield).  `sleepers` tells
 * the caller whether a broadcast is needed at all.  Counters: trtl_threadpool_stats.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_ALLOC */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

#include "core/threadpool.h"
#include "core/status.h"

#define SPIN_NS 100000LL    /* idle workers and the waiting caller spin this long first */
/* While the pool is held (an inference is running), the caller waits this long for the other threads to finish
 * their chunks before it blocks: a step whose threads finish more than SPIN_NS apart (a few percent of a
 * millisecond layer) would otherwise put the caller to sleep and make every such step pay a wake-up. */
#define HELD_WAIT_NS 2000000LL
/* A thread that has spun this long (a worker waiting for the next step while the pool is held, the caller waiting
 * for the others' chunks) yields its CPU at each check (every 64 pauses; maybe_yield's policies): on a loaded
 * machine a thread of this pool that still has work may be queued behind it on the same CPU, and a spinning thread
 * would hold that CPU for its whole time slice.  With nothing else runnable sched_yield() returns at once (< 1 us). */
#define YIELD_AFTER_NS 20000LL
/* ... and under TRTL_POOL_YIELD=0 a thread that has spun this long on a CPU (spin_clock.on_cpu) yields whoever
 * shares its CPU (should_yield or not): the pool has had no work for it that long (a long step on the caller alone), and the CPU it knows
 * for the caller may be stale. */
#define HOLD_CPU_MAX_NS 500000LL
#define CHUNKS_PER_THREAD 4 /* chunks per thread when grain allows (room for stealing) */
#define MAX_THREADS 256
#define CACHE_LINE 64

/* One thread's share of the current job, alone on its cache line. */
typedef struct chunk_range {
    _Alignas(CACHE_LINE) _Atomic uint64_t ticket; /* (generation << 32) | chunks not yet claimed */
    int64_t first, count;                          /* job fields */
    /* this range's thread's own line: the CPU it last ran on (-1 while it sleeps or before it ran), counters */
    _Alignas(CACHE_LINE) _Atomic int cpu;
    _Atomic int64_t ran, yields; /* chunks run (workers), sched_yield() calls */
} chunk_range;

struct trtl_threadpool {
    int size; /* threads including the caller */
    pthread_t *workers;
    int started;
    chunk_range *ranges; /* size entries */

    _Atomic uint32_t gen;
    _Atomic int64_t done; /* chunks finished in the current job */
    _Atomic int sleepers;
    _Atomic int stop;
    _Atomic int hold; /* > 0: idle workers keep spinning (an inference is running) */
    int yield_mode; /* TRTL_POOL_YIELD: YIELD_ALWAYS (default, unset or 1), YIELD_OWN (0), YIELD_NEVER (2) */

    /* counters (trtl_threadpool_stats): the caller's are plain (one caller thread), the others atomic (and the
     * per-thread ones in the ranges) */
    int64_t jobs, chunks, caller_waits, caller_spin_ns, caller_sleeps, wakes;
    _Atomic int64_t inline_jobs, worker_sleeps;

    pthread_mutex_t lock;
    pthread_cond_t wake; /* workers: a new generation or stop */
    pthread_cond_t idle; /* caller: done == nchunks */
    int caller_waiting;  /* under lock */

    /* current job */
    trtl_task_fn fn;
    void *ctx;
    int64_t n, chunk, nchunks;
};

typedef struct worker_arg {
    trtl_threadpool *pool;
    int index;
} worker_arg;

/* The pool whose job this thread is running and its index there: a nested parallel_for on that
 * pool runs inline, under the same thread index (per-thread scratch stays private). */
static _Thread_local const trtl_threadpool *tl_in_pool;
static _Thread_local int tl_index;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A spinning thread's clocks: wall time since it started waiting, and an estimate of the part of it spent on a
 * CPU (gaps between two checks longer than OFF_CPU_GAP_NS are taken as time preempted and not counted), so that a
 * thread coming back from a preemption does not count that time as its own spinning. */
#define OFF_CPU_GAP_NS 50000LL
typedef struct spin_clock {
    int64_t t0, last, on_cpu;
} spin_clock;

static spin_clock spin_start(void)
{
    const int64_t t = now_ns();
    return (spin_clock){t, t, 0};
}

/* Called at each check: updates the on-CPU estimate, returns the wall time spun. */
static int64_t spin_check(spin_clock *sc)
{
    const int64_t t = now_ns(), gap = t - sc->last;
    sc->on_cpu += gap < OFF_CPU_GAP_NS ? gap : 0;
    sc->last = t;
    return t - sc->t0;
}

/* Pools held by some context right now, process-wide (trtl_threadpool_hold).  With more than one, threads of
 * different pools share the CPUs and a spinning thread yields whatever the CPU's other thread is. */
static _Atomic int g_held_pools;

/* Whether thread `self` of the pool, spinning, should give its CPU away (sched_yield) now.  Only for a thread of
 * its own pool queued behind it on this CPU (the caller waiting for a chunk that a worker on the same CPU has to
 * run, or a worker spinning where the caller works): then it must, or that thread waits a time slice.  Where the
 * pool's threads are on distinct CPUs and the CPU is shared with another program, yielding hands that program
 * the time slice and the pool's step waits for it (a 2-thread inference on a 2-CPU machine with one other busy
 * process fell to the one-thread time); holding the CPU while an inference runs is what onnxruntime's and
 * OpenVINO's spinning threads do.  So: yield when another thread of the pool last ran on this CPU, when the CPU
 * is unknown, or when other pools are held too (contexts running side by side in one process). */
static void note_cpu(trtl_threadpool *p, int self, int cpu)
{
    if (atomic_load_explicit(&p->ranges[self].cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&p->ranges[self].cpu, cpu, memory_order_relaxed);
}

static int should_yield(trtl_threadpool *p, int self)
{
    const int cpu = sched_getcpu();
    note_cpu(p, self, cpu);
    if (cpu < 0 || atomic_load_explicit(&g_held_pools, memory_order_relaxed) > 1)
        return 1;
    for (int i = 0; i < p->size; i++)
        if (i != self && atomic_load_explicit(&p->ranges[i].cpu, memory_order_relaxed) == cpu)
            return 1;
    return 0;
}

/* Yield policies (TRTL_POOL_YIELD, read when a pool is created). */
enum { YIELD_ALWAYS, YIELD_OWN, YIELD_NEVER };

/* At a check of thread `self`'s spin (wall time `spun` so far), past YIELD_AFTER_NS: YIELD_ALWAYS (the default)
 * yields the CPU at every check; YIELD_OWN where should_yield() says so or once it has spun HOLD_CPU_MAX_NS on a
 * CPU; YIELD_NEVER never.  YIELD_OWN is not the default: on this project's shared 2-vCPU VM, with other processes
 * holding 1.3-1.8 CPUs, it was not measurably better on LeNet b8 t2 and perhaps worse on MobileNetV3-S b1 t2
 * (docs/ARCHITECTURE.md, "Two threads on a shared machine"); it awaits an A/B on a quiet host with one busy
 * program beside (benchmarks/small_loop.py --hog). */
static void maybe_yield(trtl_threadpool *p, int self, const spin_clock *sc, int64_t spun)
{
    if (spun <= YIELD_AFTER_NS || p->yield_mode == YIELD_NEVER)
        return;
    if (p->yield_mode == YIELD_ALWAYS || sc->on_cpu > HOLD_CPU_MAX_NS || should_yield(p, self)) {
        atomic_fetch_add_explicit(&p->ranges[self].yields, 1, memory_order_relaxed);
        sched_yield();
    }
}

/* Next chunk of range r for generation `gen`, or -1 when the range is drained (or the job is not
 * `gen` any more). */
static int64_t claim(trtl_threadpool *p, int r, uint32_t gen)
{
    chunk_range *rg = &p->ranges[r];
    uint64_t t = atomic_load_explicit(&rg->ticket, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(t >> 32) != gen || (t & 0xffffffffu) == 0)
            return -1;
        if (atomic_compare_exchange_weak_explicit(&rg->ticket, &t, t - 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            /* claimed: the job cannot finish before this chunk does, so first/count are stable */
            return rg->first + rg->count - (int64_t)(t & 0xffffffffu);
    }
}

/* Runs chunks of generation `gen`: this thread's range first, then the others'. */
static void run_chunks(trtl_threadpool *p, uint32_t gen, int index)
{
    const trtl_threadpool *saved = tl_in_pool;
    int saved_index = tl_index;
    tl_in_pool = p;
    tl_index = index;
    for (int k = 0; k < p->size; k++) {
        int r = (index + k) % p->size;
        int64_t c;
        while ((c = claim(p, r, gen)) >= 0) {
            int64_t nchunks = p->nchunks, b = c * p->chunk, e = b + p->chunk;
            if (e > p->n)
                e = p->n;
            p->fn(p->ctx, b, e, index);
            if (index != 0)
                atomic_fetch_add_explicit(&p->ranges[index].ran, 1, memory_order_relaxed);
            if (atomic_fetch_add_explicit(&p->done, 1, memory_order_acq_rel) + 1 == nchunks && index != 0) {
                pthread_mutex_lock(&p->lock);
                if (p->caller_waiting)
                    pthread_cond_signal(&p->idle);
                pthread_mutex_unlock(&p->lock);
            }
        }
    }
    tl_in_pool = saved;
    tl_index = saved_index;
}

static void *worker_main(void *arg)
{
    worker_arg wa = *(worker_arg *)arg;
    free(arg);
    trtl_threadpool *p = wa.pool;
    uint32_t seen = atomic_load_explicit(&p->gen, memory_order_acquire);
    for (;;) {
        uint32_t gen = seen;
        spin_clock sc = spin_start();
        for (int i = 0;; i++) {
            gen = atomic_load_explicit(&p->gen, memory_order_acquire);
            if (gen != seen || atomic_load_explicit(&p->stop, memory_order_relaxed))
                break;
            CPU_RELAX();
            if ((i & 63) == 63) {
                const int64_t spun = spin_check(&sc);
                if (!atomic_load_explicit(&p->hold, memory_order_relaxed) && spun > SPIN_NS)
                    break;
                maybe_yield(p, wa.index, &sc, spun);
            }
        }
        if (gen == seen) {
            pthread_mutex_lock(&p->lock);
            atomic_fetch_add_explicit(&p->worker_sleeps, 1, memory_order_relaxed);
            atomic_store_explicit(&p->ranges[wa.index].cpu, -1, memory_order_relaxed);
            atomic_fetch_add(&p->sleepers, 1);
            for (;;) {
                gen = atomic_load(&p->gen);
                if (gen != seen || atomic_load(&p->stop))
                    break;
                pthread_cond_wait(&p->wake, &p->lock);
            }
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->lock);
        }
        if (atomic_load(&p->stop))
            break;
        seen = gen;
        note_cpu(p, wa.index, sched_getcpu());
        run_chunks(p, gen, wa.index);
    }
    return NULL;
}

trtl_status trtl_threadpool_create(int n_threads, trtl_threadpool **out)
{
    *out = NULL;
    if (n_threads <= 0)
        n_threads = trtl_available_cpus();
    if (n_threads > MAX_THREADS)
        n_threads = MAX_THREADS;
    trtl_threadpool *p = calloc(1, sizeof *p);
    if (!p)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
    p->size = n_threads;
    p->ranges = aligned_alloc(CACHE_LINE, sizeof(chunk_range) * (size_t)n_threads);
    if (!p->ranges) {
        free(p);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
    }
    memset(p->ranges, 0, sizeof(chunk_range) * (size_t)n_threads);
    for (int i = 0; i < n_threads; i++) {
        atomic_init(&p->ranges[i].cpu, -1);
        atomic_init(&p->ranges[i].ran, 0);
        atomic_init(&p->ranges[i].yields, 0);
    }
    const char *ym = getenv("TRTL_POOL_YIELD");
    p->yield_mode = ym && ym[0] == '0' ? YIELD_OWN : ym && ym[0] == '2' ? YIELD_NEVER : YIELD_ALWAYS;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->idle, NULL);
    if (n_threads > 1) {
        p->workers = calloc((size_t)n_threads - 1, sizeof *p->workers);
        if (!p->workers) {
            trtl_threadpool_destroy(p);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
        }
        for (int i = 0; i < n_threads - 1; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            int rc = wa ? 0 : ENOMEM;
            if (wa) {
                wa->pool = p;
                wa->index = i + 1;
                rc = pthread_create(&p->workers[i], NULL, worker_main, wa);
                if (rc)
                    free(wa);
            }
            if (rc) {
                trtl_threadpool_destroy(p);
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "thread pool: cannot start thread %d of %d: %s",
                                  i + 1, n_threads, strerror(rc));
            }
            p->started++;
        }
    }
    *out = p;
    return TRTL_OK;
}

void trtl_threadpool_stats(const trtl_threadpool *p, trtl_pool_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!p)
        return;
    out->jobs = p->jobs;
    out->chunks = p->chunks;
    out->caller_waits = p->caller_waits;
    out->inline_jobs = atomic_load_explicit(&p->inline_jobs, memory_order_relaxed);
    out->wakes = p->wakes;
    out->caller_sleeps = p->caller_sleeps;
    out->caller_spin_ns = p->caller_spin_ns;
    out->worker_sleeps = atomic_load_explicit(&p->worker_sleeps, memory_order_relaxed);
    for (int i = 0; i < p->size; i++) {
        out->worker_chunks += atomic_load_explicit(&p->ranges[i].ran, memory_order_relaxed);
        out->yields += atomic_load_explicit(&p->ranges[i].yields, memory_order_relaxed);
    }
}

void trtl_threadpool_destroy(trtl_threadpool *p)
{
    if (!p)
        return;
    if (p->size > 1 && getenv("TRTL_POOL_STATS")) {
        trtl_pool_stats st;
        trtl_threadpool_stats(p, &st);
        fprintf(stderr, "trtlite pool of %d: %lld jobs of %lld chunks (%lld inline), %lld wake-ups, caller waited in %lld "
                "jobs, %.3f ms spinning "
                "and slept %lld times, workers slept %lld times and ran %lld chunks, %lld yields\n", p->size,
                (long long)st.jobs, (long long)st.chunks, (long long)st.inline_jobs, (long long)st.wakes,
                (long long)st.caller_waits, (double)st.caller_spin_ns * 1e-6,
                (long long)st.caller_sleeps, (long long)st.worker_sleeps, (long long)st.worker_chunks,
                (long long)st.yields);
    }
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    free(p->workers);
    free(p->ranges);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int trtl_threadpool_size(const trtl_threadpool *p) { return p ? p->size : 1; }

void trtl_parallel_for(trtl_threadpool *p, int64_t n, int64_t grain, trtl_task_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    if (!p || p->size == 1 || n <= grain || tl_in_pool == p) {
        if (p)
            atomic_fetch_add_explicit(&p->inline_jobs, 1, memory_order_relaxed);
        fn(ctx, 0, n, p && tl_in_pool == p ? tl_index : 0);
        return;
    }
    int64_t chunk = (n + (int64_t)p->size * CHUNKS_PER_THREAD - 1) / ((int64_t)p->size * CHUNKS_PER_THREAD);
    if (chunk < grain)
        chunk = grain;
    int64_t nchunks = (n + chunk - 1) / chunk; /* <= size * CHUNKS_PER_THREAD */
    p->jobs++;
    p->chunks += nchunks;

    /* Publish: job fields and range tickets first, then the generation (release). */
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->chunk = chunk;
    p->nchunks = nchunks;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    uint32_t gen = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1;
    for (int i = 0; i < p->size; i++) {
        chunk_range *rg = &p->ranges[i];
        if (nchunks < p->size) { /* fewer chunks than threads: chunk i to thread i */
            rg->first = i;
            rg->count = i < nchunks ? 1 : 0;
        } else {
            rg->first = nchunks * i / p->size;
            rg->count = nchunks * (i + 1) / p->size - rg->first;
        }
        atomic_store_explicit(&rg->ticket, ((uint64_t)gen << 32) | (uint64_t)rg->count, memory_order_relaxed);
    }
    atomic_store(&p->gen, gen); /* seq_cst: releases the above, and is ordered before the sleepers load */
    if (atomic_load(&p->sleepers) > 0) {
        p->wakes++;
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }

    note_cpu(p, 0, sched_getcpu());
    run_chunks(p, gen, 0);

    /* Wait for chunks other threads are still running: spin, then block. */
    if (atomic_load_explicit(&p->done, memory_order_acquire) == nchunks)
        return;
    p->caller_waits++;
    spin_clock sc = spin_start();
    const int64_t limit = atomic_load_explicit(&p->hold, memory_order_relaxed) > 0 ? HELD_WAIT_NS : SPIN_NS;
    for (int i = 0;; i++) {
        if (atomic_load_explicit(&p->done, memory_order_acquire) == nchunks) {
            p->caller_spin_ns += now_ns() - sc.t0;
            return;
        }
        CPU_RELAX();
        if ((i & 63) == 63) {
            const int64_t spun = spin_check(&sc);
            if (spun > limit)
                break;
            maybe_yield(p, 0, &sc, spun);
        }
    }
    p->caller_spin_ns += now_ns() - sc.t0;
    p->caller_sleeps++;
    pthread_mutex_lock(&p->lock);
    p->caller_waiting = 1;
    while (atomic_load(&p->done) != nchunks)
        pthread_cond_wait(&p->idle, &p->lock);
    p->caller_waiting = 0;
    pthread_mutex_unlock(&p->lock);
}

/* ---- how many CPUs this process may use ------------------------------------------------------ */

/* ceil(quota / period) from a cgroup v2 "cpu.max" file ("max 100000" or "150000 100000"). */
static int cgroup2_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char q[32] = {0};
    long long period = 0;
    int lim = 0;
    if (fscanf(f, "%31s %lld", q, &period) == 2 && strcmp(q, "max") != 0 && period > 0) {
        long long quota = atoll(q);
        if (quota > 0)
            lim = (int)((quota + period - 1) / period);
    }
    fclose(f);
    return lim;
}

static long long read_ll(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lld", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

/* cgroup v1 CFS quota in `dir` (a cpu controller directory). */
static int cgroup1_limit(const char *dir)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/cpu.cfs_quota_us", dir);
    snprintf(b, sizeof b, "%s/cpu.cfs_period_us", dir);
    long long quota = read_ll(a), period = read_ll(b);
    return (quota > 0 && period > 0) ? (int)((quota + period - 1) / period) : 0;
}

static int min_limit(int cur, int lim) { return (lim > 0 && (cur == 0 || lim < cur)) ? lim : cur; }

/* Smallest quota of this process's cgroup and its ancestors (0: none). */
static int cgroup_cpu_limit(void)
{
    int lim = 0;
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024], path[1200];
    if (f) {
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c2)
                continue;
            const char *ctrl = c1 + 1, *cg = c2 + 1;
            int v2 = (c2 == c1 + 1);
            int v1cpu = 0;
            if (!v2) {
                /* controller list like "cpu,cpuacct" */
                size_t len = (size_t)(c2 - ctrl);
                char ctl[256];
                if (len >= sizeof ctl)
                    continue;
                memcpy(ctl, ctrl, len);
                ctl[len] = '\0';
                for (char *tok = strtok(ctl, ","); tok; tok = strtok(NULL, ","))
                    if (strcmp(tok, "cpu") == 0)
                        v1cpu = 1;
                if (!v1cpu)
                    continue;
            }
            /* walk from the process's cgroup up to the root of the mounted hierarchy */
            char rel[1024];
            snprintf(rel, sizeof rel, "%s", cg);
            for (;;) {
                if (v2) {
                    snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", rel);
                    lim = min_limit(lim, cgroup2_limit(path));
                } else {
                    snprintf(path, sizeof path, "/sys/fs/cgroup/cpu,cpuacct%s", rel);
                    lim = min_limit(lim, cgroup1_limit(path));
                    snprintf(path, sizeof path, "/sys/fs/cgroup/cpu%s", rel);
                    lim = min_limit(lim, cgroup1_limit(path));
                }
                char *slash = strrchr(rel, '/');
                if (!slash || rel[0] == '\0' || (slash == rel && rel[1] == '\0'))
                    break;
                if (slash == rel)
                    rel[1] = '\0';
                else
                    *slash = '\0';
            }
        }
        fclose(f);
    }
    /* Inside a container with a cgroup namespace the limit sits at the mount's root. */
    lim = min_limit(lim, cgroup2_limit("/sys/fs/cgroup/cpu.max"));
    lim = min_limit(lim, cgroup1_limit("/sys/fs/cgroup/cpu"));
    lim = min_limit(lim, cgroup1_limit("/sys/fs/cgroup/cpu,cpuacct"));
    return lim;
}

static int affinity_cpus(void)
{
    for (int ncpu = 1024; ncpu <= 1 << 16; ncpu *= 2) {
        cpu_set_t *set = CPU_ALLOC(ncpu);
        if (!set)
            break;
        size_t sz = CPU_ALLOC_SIZE(ncpu);
        CPU_ZERO_S(sz, set);
        if (sched_getaffinity(0, sz, set) == 0) {
            int n = CPU_COUNT_S(sz, set);
            CPU_FREE(set);
            return n;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            break;
    }
    return 0;
}

static _Atomic int g_cpus;

int trtl_available_cpus(void)
{
    int n = atomic_load_explicit(&g_cpus, memory_order_relaxed);
    if (n > 0)
        return n;
    n = affinity_cpus();
    if (n <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (int)online : 1;
    }
    n = min_limit(n, cgroup_cpu_limit());
    if (n < 1)
        n = 1;
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    atomic_store_explicit(&g_cpus, n, memory_order_relaxed);
    return n;
}

static _Thread_local trtl_threadpool *tl_current;

trtl_threadpool *trtl_current_pool(void) { return tl_current; }
void trtl_set_current_pool(trtl_threadpool *pool) { tl_current = pool; }

int trtl_scratch_threads(void)
{
    int n = trtl_available_cpus();
    return tl_current && tl_current->size < n ? tl_current->size : n;
}

void trtl_threadpool_hold(trtl_threadpool *pool, int on)
{
    if (!pool || pool->size == 1)
        return;
    const int was = atomic_fetch_add_explicit(&pool->hold, on ? 1 : -1, memory_order_relaxed);
    if (on ? was == 0 : was == 1)
        atomic_fetch_add_explicit(&g_held_pools, on ? 1 : -1, memory_order_relaxed);
}
