/*
 * match.h -- graph-matching helpers shared by the fusion passes that recognize a pattern of
 * layers and replace it with one node (fuse_gelu.c, fuse_layernorm.c, fuse_pointwise.c).
 *
 * All of them read the working graph (graph.h) only, except trtl_pm_replace, which rewrites it.
 * Node and tensor arguments are valid indices into g->n / g->t.
 */
#ifndef TRTL_BUILDER_PASSES_MATCH_H
#define TRTL_BUILDER_PASSES_MATCH_H

#include <stdint.h>

#include "builder/graph.h"
#include "core/status.h"

/* Tensor t is a one-element FLOAT constant with data: stores its value in *v and returns 1;
 * else returns 0 and leaves *v alone. */
int trtl_pm_scalar(const trtl_bgraph *g, int32_t t, float *v);

/* The producer of intermediate tensor t if it may disappear into a fusion: a live single-output
 * node without fused epilogue (activation or residual), whose result t is FLOAT, is no network
 * output and feeds exactly `uses` input slots (counted as trtl_bg_consumers does); else -1. */
int32_t trtl_pm_inner(const trtl_bgraph *g, int32_t t, int32_t uses);

/* Node i is a live two-input elementwise `op` (TRTL_EW_*) without fused epilogue. */
int trtl_pm_is_ew(const trtl_bgraph *g, int32_t i, int32_t op);

/* Node i is a one-input unary `op` (TRTL_UN_*).  Does not look at liveness or the epilogue
 * (trtl_pm_inner does, for the nodes it returns). */
int trtl_pm_is_unary(const trtl_bgraph *g, int32_t i, int32_t op);

/* a, b have the same min / opt / max dims. */
int trtl_pm_same_shape(const trtl_bg_tensor *a, const trtl_bg_tensor *b);

/* Sorts the n node indices ascending (graph order). */
void trtl_pm_sort_nodes(int32_t *nodes, int32_t n);

/* The names of the n >= 1 nodes joined (trtl_bg_join_names) in the given order: a malloc'd string
 * the caller owns, or NULL with TRTL_ERR_OUT_OF_MEMORY set. */
char *trtl_pm_join_names(const trtl_bgraph *g, const int32_t *nodes, int32_t n);

/* Node c's name becomes "name + extra" (trtl_bg_join_names): a fused node named after what it took in; TRTL_OK, or
 * TRTL_ERR_OUT_OF_MEMORY with the name unchanged. */
trtl_status trtl_pm_append_name(trtl_node *c, const char *extra);

/* Rewrites root node fi into one node of `op` with params *p, inputs in[0..n_in) and name `name`
 * (taken over; the old name is freed), keeping its outputs; marks every other node of
 * nodes[0..n) dead (fi may or may not be among them).  n_in must fit the node's input room. */
void trtl_pm_replace(trtl_bgraph *g, int32_t fi, const int32_t *nodes, int32_t n, trtl_op op, const trtl_params *p,
                     const int32_t *in, int32_t n_in, char *name);

/* Per-tensor quantization parameters: scale, zero point, code type (TRTL_INT8 / TRTL_UINT8). */
typedef struct trtl_pm_qparm {
    float scale;
    int32_t zp;
    int32_t type;
} trtl_pm_qparm;

/* Node i is a live Q or DQ node (op: TRTL_OP_QUANTIZE / TRTL_OP_DEQUANTIZE) without epilogue whose scale and zero
 * point are one-element constants (a positive finite scale, INT8 / UINT8 codes): stores them in *q, returns 1. */
int trtl_pm_node_qparm(const trtl_bgraph *g, int32_t i, trtl_op op, trtl_pm_qparm *q);

int trtl_pm_same_qparm(const trtl_pm_qparm *a, const trtl_pm_qparm *b);

/* Every live node reading tensor `from` reads `to` instead. */
void trtl_pm_rewire(trtl_bgraph *g, int32_t from, int32_t to);

/* Node i is a live one-input shuffle without reshape or fused epilogue, FLOAT in and out, i.e. a
 * pure transpose: stores y[d] = x[perm[d]] (its two permutations composed) in perm and returns the
 * rank; else returns -1. */
int trtl_pm_pure_transpose(const trtl_bgraph *g, int32_t i, int32_t *perm);

#endif
