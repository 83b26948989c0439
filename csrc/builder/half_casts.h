/*
 * half_casts.h -- lowering a layer that computes 16-bit float tensors in float32 (network/half_compute.h):
 * each HALF / BF16 input is read through a cast to FLOAT, each HALF / BF16 output is written as a FLOAT
 * temporary and cast back.  build.c calls these around trtl_bg_add_node for a promoting layer.
 */
#ifndef TRTL_BUILDER_HALF_CASTS_H
#define TRTL_BUILDER_HALF_CASTS_H

#include "builder/graph.h"

/* in[j] of a 16-bit tensor becomes a new FLOAT tensor fed by a cast node (in[j] < 0: left alone). */
trtl_status trtl_bg_f16_inputs(trtl_bgraph *g, trtl_op op, const char *layer, int32_t n_in, int32_t *in);
/* out[j] of a 16-bit tensor becomes a new FLOAT temporary; orig[j] keeps the tensor (else -1). */
trtl_status trtl_bg_f16_outputs(trtl_bgraph *g, trtl_op op, const char *layer, int32_t n_out, int32_t *out,
                                int32_t *orig);
/* After the layer's node: one cast node per temporary, writing orig[j]. */
trtl_status trtl_bg_f16_output_casts(trtl_bgraph *g, const char *layer, int32_t n_out, const int32_t *out,
                                     const int32_t *orig);

#endif
