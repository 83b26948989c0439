/*
 * bcast_rows.h -- the reference's coalesced broadcast iteration (kernels/ref/broadcast.h) split over the
 * pool: the same row callback, each innermost row cut in chunks of at most TRTL_VM_CHUNK elements, the
 * chunks handed out in groups of at least TRTL_VM_GRAIN elements (smaller outputs run on the calling
 * thread).  Used by select.bcast and parametric_relu.simd.  A row's operand strides are 0 or 1 (the last
 * coalesced dim is every operand's innermost dim, or broadcast).
 */
#ifndef TRTL_KERNELS_X86_BCAST_ROWS_H
#define TRTL_KERNELS_X86_BCAST_ROWS_H

#include "kernels/ref/broadcast.h"

struct trtl_threadpool;
void trtl_bcast_rows(const trtl_bcast *b, struct trtl_threadpool *pool, trtl_bcast_row_fn row, void *ctx);

#endif
