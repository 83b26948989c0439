/*
 * half_compute.h -- 16-bit float tensors (HALF, and BF16 where it is a tensor type) on compute layers.
 *
 * TensorRT accepts fp16 / bf16 tensors on its compute layers (convolution, matrix multiply,
 * elementwise, ...).  trtlite's kernels compute in float32, so such a layer is "promoted": shape
 * inference treats its 16-bit inputs as FLOAT and gives its FLOAT outputs the 16-bit type of its
 * inputs (network.c), and the builder lowers it as cast(HALF -> FLOAT) -> layer -> cast(FLOAT ->
 * HALF) (builder/half_casts.c).  Byte-moving layers (shuffle, concatenation, slice, gather, ...)
 * keep the 16-bit type as they are and need none of this.
 */
#ifndef TRTL_NETWORK_HALF_COMPUTE_H
#define TRTL_NETWORK_HALF_COMPUTE_H

#include "network/op_table.h"

/* 1 for HALF and BF16. */
int trtl_dtype_is_f16(int t);
/* 1 when `op` computes in float32 and takes 16-bit float tensors through casts. */
int trtl_op_promotes_f16(trtl_op op);
/* For a promoting op: the 16-bit type among in_t[0..n) (the first one found; TRTL_DTYPE_COUNT
 * if none), after which in_t's 16-bit entries are replaced by TRTL_FLOAT. */
trtl_dtype trtl_f16_promote_inputs(trtl_op op, int32_t n, trtl_dtype *in_t);

#endif
