/*
 * broadcast.h -- iteration of an output tensor together with up to three broadcast operands
 * (elementwise, select, parametric ReLU).
 *
 * Operands have the output's rank; each of their dims equals the output's or is 1.  Dims are
 * coalesced where every operand is contiguous across them, so the common cases (same shape, a
 * per-channel or scalar operand) become a few long rows.  A row callback then runs a plain loop
 * `for i < n: y[out_off + i] = f(op_k[off[k] + i * s[k]])` with s[k] in {0, 1, ...}.
 */
#ifndef TRTL_KERNELS_REF_BROADCAST_H
#define TRTL_KERNELS_REF_BROADCAST_H

#include "kernels/kernel.h"

#define TRTL_BCAST_MAX_OPS 3

typedef struct trtl_bcast {
    int rank;                                     /* coalesced rank, >= 1 */
    int nops;
    int empty;                                    /* output has no elements */
    int64_t n[TRTL_MAX_DIMS];                     /* coalesced output dims */
    int64_t s[TRTL_BCAST_MAX_OPS][TRTL_MAX_DIMS]; /* element strides, 0 where broadcast */
} trtl_bcast;

/* Prepares iteration of `out` with operands in[0..nops).  Fails (TRTL_ERR_SHAPE naming `node`) when
 * an operand's rank differs or a dim is neither the output's nor 1. */
trtl_status trtl_bcast_init(trtl_bcast *b, const char *node, const trtl_dims *out, int nops, const trtl_dims *in);

/* Row callback: out_off = element offset of the row in the (dense) output, off[k] = element offset
 * of operand k's first element, n = row length, s[k] = operand k's element stride along the row. */
typedef void (*trtl_bcast_row_fn)(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s);

/* Calls row() once per innermost row, in output order. */
void trtl_bcast_run(const trtl_bcast *b, trtl_bcast_row_fn row, void *ctx);

#endif
