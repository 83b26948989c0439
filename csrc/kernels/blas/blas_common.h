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
/* Slots a kernel sizes its per-thread scratch for: the machine's CPUs, fewer where `flops` of work would leave
 * some idle (TRTL_MIN_FLOPS_PER_THREAD each), at least 1 and at most max_slots. */
int64_t trtl_scratch_slots(double flops, int64_t max_slots);
/* A kernel that cuts `items` into `slots` contiguous runs (a slot a thread, per-slot scratch) and may let the pool
 * steal: returns 1 and *runs = min(items, slots * TRTL_STEAL_RUNS) where every thread of the pool has a slot
 * (slots == pool size > 1), so that parallel_for(pool, *runs, 1, ...) gives thread i exactly the items of slot i
 * first (run r: items [r * items / *runs, (r + 1) * items / *runs)) and then lets a thread that is done take
 * runs the others have not started, the thread's pool index then naming its scratch slot; else 0 and *runs = slots
 * (fixed runs, a slot a thread). */
#define TRTL_STEAL_RUNS 4 /* = threadpool.c's chunks a thread, which the exact split above relies on */
int trtl_steal_runs(const struct trtl_threadpool *pool, int64_t slots, int64_t items, int64_t *runs);

/* BLAS takes int sizes. */
#define TRTL_BLAS_MAX_DIM 0x7fffffffLL

/* The residual input of a fused epilogue (the node's last input), or NULL.  Fails if the node
 * claims a residual but has no extra input, or if its volume is not `count`. */
trtl_status trtl_epi_residual(const trtl_kernel_args *a, int64_t count, const float **res);

#endif
