/* int8_grid.h -- weights on the per-output-channel int8 grid of implicit INT8 quantization
 * (builder/quantize_implicit.c), and where a refittable engine has such weights (engine/refit.c rounds new
 * values the same way, so that a refitted engine computes what a fresh INT8 build with them does). */
#ifndef TRTL_ENGINE_INT8_GRID_H
#define TRTL_ENGINE_INT8_GRID_H

#include <stdint.h>

#include "engine/engine.h"

/* Per output channel k (K of them, n values each; col: w is [n][K], a matrix multiply's B, else [K][n]):
 * s_k = max|w_k| / 127, w_k = round(w_k / s_k) * s_k, in place (channels all zero or not finite stay). */
void trtl_int8_grid_round(float *w, int64_t K, int64_t n, int col);

/* The dequantize node name implicit INT8 gives the Q/DQ pair it inserts (suffix of "<tensor> [...]"). */
#define TRTL_INT8_IMPLICIT_DQ "[implicit int8 Dequantize]"

/* Are the weights of node `node` (its kernel: conv / fully connected) or of constant tensor `tensor` (the B of a
 * matrix multiply by a constant; node -1) on the int8 grid, i.e. does implicit INT8 quantize their layer's input?
 * Fills K, n and col as trtl_int8_grid_round takes them.  0: no. */
int trtl_int8_grid_of(const trtl_engine *e, int32_t node, int32_t tensor, int64_t *K, int64_t *n, int *col);

#endif
