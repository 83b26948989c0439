/*
 * blas_common.h -- shared by the BLAS-backed kernels (convolution.im2col_sgemm,
 * fully_connected.sgemm, matrix_multiply.sgemm).
 *
 * BLAS runs single-threaded (OpenBLAS's own split is poor at batch-1 shapes); the kernels split
 * work over the engine's pool themselves.
 */
#ifndef TRTL_KERNELS_BLAS_COMMON_H
#define TRTL_KERNELS_BLAS_COMMON_H

#include <stdint.h>
#include "kernels/kernel.h"
#include "core/threadpool.h"

/* Sets BLAS to one thread, once per process.  Called from every BLAS kernel's prepare and run. */
void trtl_blas_init(void);

/* Below this many flops per thread, splitting costs more than it saves. */
#define TRTL_MIN_FLOPS_PER_THREAD 200000.0

/* Threads worth using for `flops` of work on `pool` (at least 1). */
int trtl_threads_for(const struct trtl_threadpool *pool, double flops);
/* Slots a kernel sizes its per-thread scratch for: the threads of the pool it will run on (trtl_scratch_threads: the
 * context's pool while the context sizes scratch, every CPU elsewhere), at least 1 and at most max_slots. */
int64_t trtl_scratch_slots_all(int64_t max_slots);
/* The same, fewer where `flops` of work would leave some idle (TRTL_MIN_FLOPS_PER_THREAD each). */
int64_t trtl_scratch_slots(double flops, int64_t max_slots);
/* A kernel that cuts `items` into `slots` contiguous runs (a slot a thread, per-slot scratch) and may let the pool
 * steal: returns 1 and *runs = min(items, slots * TRTL_STEAL_RUNS) where every thread of the pool has a slot
 * (slots == pool size > 1), so that parallel_for(pool, *runs, 1, ...) gives thread i exactly the items of slot i
 * first (run r: items [r * items / *runs, (r + 1) * items / *runs)) and then lets a thread that is done take
 * runs the others have not started, the thread's pool index then naming its scratch slot; else 0 and *runs = slots
 * (fixed runs, a slot a thread). */
#define TRTL_STEAL_RUNS 4 /* = threadpool.c's chunks a thread, which the exact split above relies on */
int trtl_steal_runs(const struct trtl_threadpool *pool, int64_t slots, int64_t items, int64_t *runs);

/* The split of a kernel's `items` over per-thread scratch slots (trtl_runs_plan), run by trtl_runs_for. */
typedef struct trtl_runs {
    int64_t items, n; /* n: contiguous runs of the items, run r items [r * items / n, (r + 1) * items / n) */
    int steal;        /* the runs are stolen (trtl_steal_runs): a run writes the slot of the thread that runs it */
} trtl_runs;
/* At most `slots` scratch slots (at least one, at most one an item), then trtl_steal_runs. */
trtl_runs trtl_runs_plan(const struct trtl_threadpool *pool, int64_t slots, int64_t items);
/* Run r of `runs` (items [b, e)), writing scratch slot `slot`. */
typedef void (*trtl_run_fn)(void *ctx, int64_t slot, int64_t r, int64_t b, int64_t e);
/* Every run of `runs` once over `pool` (inline when one run): fixed, run r on slot r, a slot a thread; stealing,
 * the slot of the pool index of the thread that runs it (the only place that index picks a slot). */
void trtl_runs_for(struct trtl_threadpool *pool, const trtl_runs *runs, trtl_run_fn fn, void *ctx);

/* BLAS takes int sizes. */
#define TRTL_BLAS_MAX_DIM 0x7fffffffLL

/* The residual input of a fused epilogue (the node's last input), or NULL.  Fails if the node
 * claims a residual but has no extra input, or if its volume is not `count`. */
trtl_status trtl_epi_residual(const trtl_kernel_args *a, int64_t count, const float **res);

#endif
