/*
 * fc_rows.h -- what the row-GEMM fully connected kernels share (fully_connected_gemm.c for fp32,
 * fully_connected_bf16.c, fully_connected_f16.c): Y[M, K] = X[M, D] x W[K, D]^T over rows of the
 * input, with the same parameter checks, shapes, scratch slots and work split.  Each kernel keeps
 * its own packing and micro-kernels.
 *
 * Work items are (row block of `mb` rows, channel chunk): at batch 1 the channels are cut into one
 * chunk per slot (whole tiles of `nr` channels), so each thread streams its share of the weights
 * once; with many rows the row blocks alone are spread over the slots.
 */
#ifndef TRTL_KERNELS_X86_FC_ROWS_H
#define TRTL_KERNELS_X86_FC_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"

typedef struct trtl_fc_split {
    int64_t nmb, nnb, nb, slots; /* row blocks, channel chunks, channels per chunk (whole tiles), slots */
} trtl_fc_split;

/* applies(): fp32 weights (and bias) that divide into num_output_channels rows, an input whose
 * volume divides into rows of that depth. */
int trtl_fc_rows_applies(const trtl_node *nd, const trtl_dims *in_dims);
/* prepare()'s check of the weights and bias against num_output_channels (a ShapeError naming the
 * layer); on success *K and *D are the output channels and the depth. */
trtl_status trtl_fc_rows_params(const trtl_node *nd, int64_t *K, int64_t *D);
/* run()'s check of the input / output views against K x D; *M: the rows. */
trtl_status trtl_fc_rows_shapes(const trtl_kernel_args *a, int64_t K, int64_t D, int64_t *M);
/* scratch(): slots (at most max_slots, fewer for small layers) x slot_bytes + 64 for alignment;
 * 0 when the node does not fit (run() then reports it). */
size_t trtl_fc_rows_scratch(const trtl_node *nd, const trtl_tensor_view *in, int64_t max_slots,
                            size_t (*slot_bytes)(int64_t D));
/* How many slots the scratch holds (each slot_elems elements of elem_size bytes), after 64-byte
 * alignment; a slot's start is scratch_aligned + i * slot_elems * elem_size. */
int64_t trtl_fc_rows_avail(const trtl_kernel_args *a, int64_t slot_elems, size_t elem_size, void **scratch_aligned);
/* The work split for M rows, K channels, `threads` threads (<= the slots available). */
trtl_fc_split trtl_fc_rows_split(int64_t M, int64_t K, int64_t mb, int64_t nr, int64_t threads);

#endif
