/*
 * qdq.h -- checks shared by the Quantize and Dequantize layers (network/ops/quantize.c,
 * network/ops/dequantize.c, network/qdq_check.c).
 */
#ifndef TRTL_NETWORK_QDQ_H
#define TRTL_NETWORK_QDQ_H

#include "network/op_table.h"

struct trtl_layer;

/* Shape/dtype inference of Q (is_q = 1) or DQ: inputs data, scale, optional zero point; see
 * trtl_quantize_params in core/params.h for the rules.  Errors name the layer. */
trtl_status trtl_qdq_infer(const trtl_infer_ctx *c, int is_q);
/* Axis of a lowered Q/DQ param for an input of `rank` dims: negative counts from the end. */
static inline int32_t trtl_qdq_axis(int32_t axis, int32_t rank) { return axis < 0 ? axis + rank : axis; }
/* Network-level check of a Q/DQ layer (network.c, after shape inference): the scale and zero point
 * are outputs of constant layers, and the scales are positive and finite. */
trtl_status trtl_qdq_check_layer(const struct trtl_layer *l);

#endif
