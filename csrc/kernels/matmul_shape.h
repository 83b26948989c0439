/*
 * matmul_shape.h -- the operand shapes and batch broadcast of matrix_multiply, shared by its kernels
 * (blas/matrix_multiply.c "matrix_multiply.sgemm", x86/matmul_packed.c "matrix_multiply.packed").
 *
 * Operands (TensorRT's MatrixOperation):
 *   A NONE [.., M, K]; TRANSPOSE [.., K, M]; VECTOR [.., K] (one row, M = 1)
 *   B NONE [.., K, N]; TRANSPOSE [.., N, K]; VECTOR [.., K] (one column, N = 1)
 * The batch dims (all but the matrix or vector dims) are right-aligned and broadcast (a dim of 1 or a missing dim
 * repeats).  C is [batch.., M, N] with the vector dims dropped, which is the same memory as [batch.., M, N] with M
 * or N equal to 1, so the output dims are only checked for their volume.
 *
 * When B has a single batch and A is a non-transposed, non-broadcast stack of matrices or vectors (a constant
 * weight applied to activations), the stack folds into one [batch*M, K] x op(B) product.
 */
#ifndef TRTL_KERNELS_MATMUL_SHAPE_H
#define TRTL_KERNELS_MATMUL_SHAPE_H

#include <stdint.h>
#include "kernels/kernel.h"

typedef struct trtl_mm_shape {
    int op0, op1;                  /* trtl_matrix_op of A and B */
    int64_t M, N, K;               /* C[M, N] = op0(A)[M, K] x op1(B)[K, N], per batch */
    int64_t nbat;                  /* products (the volume of bdims) */
    int nb;                        /* output batch dims (0 after the fold) */
    int64_t bdims[TRTL_MAX_DIMS];  /* output batch dims */
    int64_t astr[TRTL_MAX_DIMS], bstr[TRTL_MAX_DIMS]; /* per output batch dim, elements; 0 when broadcast */
    int64_t a_sm, a_sk, b_sk, b_sn; /* element strides of A(m, k) and B(k, n) in their stored matrices */
} trtl_mm_shape;

/* applies(): two inputs of enough dims for their matrix operations. */
int trtl_mm_shape_applies(const trtl_node *nd, const trtl_dims *in_dims);

/* The shapes of a run: checks the inputs (two FLOAT tensors of dims that fit the operations and broadcast) and the
 * output's volume, naming the layer and `kernel` in the error; folds a stack over a shared B (see above). */
trtl_status trtl_mm_shape_of(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out,
                             const char *kernel, trtl_mm_shape *s);

/* The element offsets of A's and B's matrices for output batch `bat` (0 <= bat < nbat). */
void trtl_mm_batch_offsets(const trtl_mm_shape *s, int64_t bat, int64_t *aoff, int64_t *boff);

#endif
