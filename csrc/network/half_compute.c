/* half_compute.c -- which layers compute 16-bit float tensors through float32 (see half_compute.h). */
#include "network/half_compute.h"

int trtl_dtype_is_f16(int t) { return t == TRTL_HALF || t == TRTL_BF16; }

int trtl_op_promotes_f16(trtl_op op)
{
    switch (op) {
    case TRTL_OP_CONVOLUTION: case TRTL_OP_DECONVOLUTION: case TRTL_OP_FULLY_CONNECTED:
    case TRTL_OP_MATRIX_MULTIPLY: case TRTL_OP_ACTIVATION: case TRTL_OP_POOLING: case TRTL_OP_LRN:
    case TRTL_OP_SCALE: case TRTL_OP_SOFTMAX: case TRTL_OP_ELEMENTWISE: case TRTL_OP_UNARY:
    case TRTL_OP_REDUCE: case TRTL_OP_TOPK: case TRTL_OP_PARAMETRIC_RELU: case TRTL_OP_RESIZE:
    case TRTL_OP_NORMALIZATION: case TRTL_OP_CUMULATIVE: case TRTL_OP_GRID_SAMPLE: case TRTL_OP_EINSUM:
        return 1;
    default:
        return 0;
    }
}

trtl_dtype trtl_f16_promote_inputs(trtl_op op, int32_t n, trtl_dtype *in_t)
{
    trtl_dtype found = TRTL_DTYPE_COUNT;
    if (!trtl_op_promotes_f16(op))
        return found;
    for (int32_t i = 0; i < n; i++)
        if (trtl_dtype_is_f16((int)in_t[i])) {
            if (found == TRTL_DTYPE_COUNT)
                found = in_t[i];
            in_t[i] = TRTL_FLOAT;
        }
    return found;
}
