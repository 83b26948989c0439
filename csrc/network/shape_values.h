/*
 * shape_values.h -- shape tensors' values, computed on the host (internal).
 *
 * A shape tensor (TensorRT's term) is a small INT32/BOOL tensor whose *values* decide other
 * tensors' shapes: the reshape dims of a shuffle's input 1, ...  Its values are computed while
 * shapes are inferred -- by the network (partly known: TRTL_SV_UNKNOWN where a dynamic dim is
 * read), the builder (at the profiles' min/opt/max) and the execution context (when input shapes
 * and shape-input values are set, before execute) -- from input shapes (IShapeLayer), constants and
 * shape-tensor network inputs, through a small set of ops evaluated here on int64 copies with the
 * INT32 semantics of the reference kernels (wrapping arithmetic, truncating DIV).
 *
 * Values are int64 arrays of the tensor's volume (row-major), at most TRTL_SV_MAX elements.
 */
#ifndef TRTL_NETWORK_SHAPE_VALUES_H
#define TRTL_NETWORK_SHAPE_VALUES_H

#include "trtlite/trtlite.h"
#include "core/params.h"

#define TRTL_SV_MAX 64
#define TRTL_SV_UNKNOWN INT64_MIN

/* Can a tensor of these dims and type carry values (static dims, volume <= TRTL_SV_MAX, INT32 or BOOL)? */
int trtl_sv_carriable(const trtl_dims *d, trtl_dtype t);
/* Values from a buffer of `n` elements of type t (INT32, BOOL, INT8, UINT8). */
void trtl_sv_from_data(const void *data, trtl_dtype t, int64_t n, int64_t *out);
/* Is the op input j a shape-tensor position (its values decide the output's shape)? */
int trtl_sv_shape_input(trtl_op op, int32_t j);
/* Are the op's output dims NOT bounded by its outputs at the shape inputs' min / max values (axes from a
 * tensor, input 1 of reduce / squeeze / unsqueeze: a dim kept at both ends of the range may be reduced in
 * between)?  Where input 1 is not a constant, the builder then declares them dynamic, as for a corner
 * whose shapes do not fit together. */
int trtl_sv_dims_unbounded(trtl_op op, int32_t n_in);
/* Does the op compute values here (then its value inputs are shape tensors when its output is)? */
int trtl_sv_op_evaluable(trtl_op op);
/* Values of output 0 of a node from its inputs' values (in_v[j] NULL: not known).  p: lowered params
 * (CONSTANT: the layer's weights).  *done = 1 when computed (elements may be TRTL_SV_UNKNOWN), 0 when
 * this op or these inputs give none; an error for values the op refuses (a gather index out of range),
 * naming the layer. */
trtl_status trtl_sv_eval(trtl_op op, const trtl_params *p, const char *layer, int32_t n_in, const trtl_dims *in,
                         const trtl_dtype *in_t, const int64_t *const *in_v, const trtl_dims *out, trtl_dtype out_t,
                         int64_t *out_v, int *done);

#endif
