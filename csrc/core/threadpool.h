/*
 * threadpool.h -- a fixed pool of worker threads for one execution context.
 *
 * Core, so every layer may use it: engines' contexts own instances, kernels get one passed in
 * (trtl_kernel_args.pool) and built-in plugins reach the running context's through
 * trtl_current_pool().
 *
 * Size comes from the CPUs this process may run on (sched_getaffinity, cgroup quota), not the
 * host's core count.  Workers spin briefly after a job, then block on a condition variable, so
 * an idle pool costs nothing.  A pool is used by one caller thread at a time (its context).
 */
#ifndef TRTL_CORE_THREADPOOL_H
#define TRTL_CORE_THREADPOOL_H

#include <stdint.h>
#include "trtlite/types.h"

typedef struct trtl_threadpool trtl_threadpool;

/* fn(ctx, begin, end, thread_index) over a slice [begin, end) of [0, n). */
typedef void (*trtl_task_fn)(void *ctx, int64_t begin, int64_t end, int thread);

/* n_threads <= 0: trtl_available_cpus().  A pool of 1 creates no thread. */
trtl_status trtl_threadpool_create(int n_threads, trtl_threadpool **out);
void trtl_threadpool_destroy(trtl_threadpool *pool);
/* Number of threads including the caller; 1 for NULL. */
int trtl_threadpool_size(const trtl_threadpool *pool);
/* Splits [0, n) into chunks of at least `grain` items over the pool's threads (the caller takes
 * part) and returns when all are done.  Runs inline when pool is NULL or n <= grain.  With grain 1
 * and n <= the pool's size, each thread gets at most one index: kernels that give each of `slots`
 * work slots its own scratch call it with n = slots >= 1 (one slot a thread, inline when 1). */
void trtl_parallel_for(trtl_threadpool *pool, int64_t n, int64_t grain, trtl_task_fn fn, void *ctx);
/* While held (calls nest), idle workers keep spinning instead of sleeping between jobs, so the
 * layers of one inference do not pay a wake-up each (a context holds its pool for the length of
 * execute()).  Release with on = 0.  NULL is allowed. */
void trtl_threadpool_hold(trtl_threadpool *pool, int on);

/* What a pool has done since it was created (read by its caller thread).  jobs: parallel_for calls handed to the
 * pool's threads, in `chunks` chunks; inline_jobs: calls that ran on the calling thread alone (n <= grain, nested);
 * wakes: jobs that had to wake sleeping workers; caller_waits: jobs whose caller, its chunks done, found others'
 * still running; caller_sleeps: those of them whose caller then blocked; caller_spin_ns: the callers' spinning in
 * those waits, in all; worker_sleeps: times a worker blocked; worker_chunks: chunks run by the workers; yields:
 * sched_yield() calls of spinning threads.  TRTL_POOL_STATS=1 prints them to stderr when a pool of several threads
 * is destroyed.  TRTL_POOL_YIELD (read at creation): unset or 1, a spinning thread yields its CPU at every check
 * past 20 us; 0, only where another thread of the pool last ran on its CPU (threadpool.c, maybe_yield); 2, never. */
typedef struct trtl_pool_stats {
    int64_t jobs, chunks, inline_jobs, wakes, caller_waits, caller_sleeps, caller_spin_ns, worker_sleeps, worker_chunks,
        yields;
} trtl_pool_stats;
void trtl_threadpool_stats(const trtl_threadpool *pool, trtl_pool_stats *out);

/* CPUs this process may use (affinity mask and cgroup CPU quota). */
int trtl_available_cpus(void);

/* The pool of the execution context that is running a plugin on this thread (NULL outside a
 * plugin's enqueue).  Built-in plugins parallelize with it; the plugin ABI is unchanged.
 * A plugin sizing per-thread workspace uses trtl_available_cpus() slots and falls back to one
 * thread when the pool is larger. */
trtl_threadpool *trtl_current_pool(void);
void trtl_set_current_pool(trtl_threadpool *pool);

/* Threads a kernel's scratch() sizes its per-thread slots for: the current pool's size (an execution context sets
 * it around its scratch() calls), at most trtl_available_cpus(); trtl_available_cpus() without a current pool.
 * run() must still cap its slots by the scratch it is given (the pool can grow after the sizing). */
int trtl_scratch_threads(void);

#endif
