/*
 * graph.h -- the builder's working graph (internal).
 *
 * build.c lowers a network into this graph (params in engine form, weights copied and converted
 * to float32, constants materialized), the passes in passes/ rewrite it, select.c picks kernels,
 * and emit.c turns it into an engine.  Nodes are kept in topological order between passes
 * (trtl_bg_sort); a pass marks nodes dead instead of deleting them.
 */
#ifndef TRTL_BUILDER_GRAPH_H
#define TRTL_BUILDER_GRAPH_H

#include "trtlite/trtlite.h"
#include "kernels/kernel.h"
#include "engine/engine.h" /* trtl_tensor_kind: the graph becomes an engine (emit.c) */
#include "builder/config.h"

typedef struct trtl_bg_tensor {
    char *name;
    trtl_dtype dtype;
    int32_t kind;           /* trtl_tensor_kind */
    trtl_dims dmin, dopt, dmax; /* full dims at the profiles' min / opt / max input shapes */
    void *data;             /* CONSTANT: owned values */
    int32_t producer;       /* node index, -1 for inputs and constants */
    int32_t io_index;       /* INPUT: position among inputs; OUTPUT: among outputs; else -1 */
    int32_t corner_unknown; /* its dims at the profiles' min or max come from shape values that are invalid
                             * there (a reshape to values of another corner): dmin/dmax then hold dopt and the
                             * engine declares every dim dynamic */
} trtl_bg_tensor;

typedef struct trtl_bg_node {
    trtl_node n;            /* name, params (lowered), epilogue, in/out tensor ids */
    int dead;
    int32_t order;          /* original network position (stable sorting) */
    int32_t want_set;       /* 1: the layer asked for want_precision (layer.precision or set_output_type) */
    int32_t want_precision; /* trtl_dtype or TRTL_BF16; honoured under OBEY/PREFER_PRECISION_CONSTRAINTS */
    const struct trtl_kernel *fixed_kernel; /* set by a pass that decides the kernel (elide_concat); else NULL */
    int32_t fp32_tactics;   /* QLINEAR: the int8_tactics pass admitted the qlinear.fp32.* kernels (select.c) */
    int32_t float_region;   /* QLINEAR: its codes output may become FLOAT after selection (passes/int8_regions.c) */
    int32_t int8_blocked;   /* QLINEAR: the int8_nchwc pass lets the nchwc pass run it in a blocked region */
} trtl_bg_node;

typedef struct trtl_bgraph {
    const trtl_builder_config *cfg;
    int implicit_batch;
    int32_t max_batch;
    trtl_bg_tensor *t;
    int32_t nt, capt;
    trtl_bg_node *n;
    int32_t nn, capn;
    int32_t *inputs, n_inputs;   /* tensor ids, in add_input order */
    int32_t *outputs, n_outputs; /* tensor ids, in mark_output order */
    int32_t n_profiles;
    trtl_dims *pmin, *popt, *pmax; /* [profile * n_inputs + i], full dims */
    trtl_dims *vmin, *vopt, *vmax; /* [profile * n_inputs + i]: shape-tensor inputs' values, else nb_dims 0;
                                    * [n_profiles * n_inputs + i]: element-wise min / max over the profiles */
    int32_t *shape_input;          /* per input: a shape-tensor input */
    void **owned;                /* weight buffers referenced by node params */
    int32_t n_owned, cap_owned;
    int32_t plan_only;           /* trtl_build_serialized: the engine is only serialized, so kernel selection
                                  * skips the weight packing (prepare), which a plan does not store */
} trtl_bgraph;

int32_t trtl_bg_add_tensor(trtl_bgraph *g, const char *name, trtl_dtype dtype, int32_t kind);
/* Appends a node (copies `in`/`out`); returns its index or -1 (out of memory, error set). */
int32_t trtl_bg_add_node(trtl_bgraph *g, trtl_op op, const char *name, const trtl_params *p, int32_t n_in,
                         const int32_t *in, int32_t n_out, const int32_t *out);
/* Appends an ACTIVATION node y = act(x) (parameters `a`; e.g. the fake-quantize step TRTL_ACT_QGRID that
 * fold_fake_quant and the nchwc pass insert); returns its index or -1 (out of memory, error set). */
int32_t trtl_bg_add_activation(trtl_bgraph *g, const char *name, int32_t x, int32_t y, const trtl_activation_params *a);
/* Registers a buffer to be owned by the graph (then the engine). 0 on failure (buffer freed). */
int trtl_bg_own(trtl_bgraph *g, void *p);
/* Live consumers of tensor `t`; *only (if non-NULL) receives the consumer when there is exactly one. */
int32_t trtl_bg_consumers(const trtl_bgraph *g, int32_t t, int32_t *only);
/* Is tensor t a network output? */
int trtl_bg_is_output(const trtl_bgraph *g, int32_t t);
/* Re-sorts live nodes topologically (stable by `order`). */
trtl_status trtl_bg_sort(trtl_bgraph *g);
/* Recomputes dmin/dopt/dmax of every non-constant tensor. */
trtl_status trtl_bg_infer(trtl_bgraph *g);
/* Joins two node names as "a + b" (for fusions); returns a new string or NULL. */
char *trtl_bg_join_names(const char *a, const char *b);
void trtl_bg_free(trtl_bgraph *g);
/* Frees the values of constant t when no live node reads it, no node's weights and no other tensor point at
 * them and it is no network output; 1 when freed (release.c). */
int trtl_bg_release_constant(trtl_bgraph *g, int32_t t);
/* trtl_bg_release_constant on every tensor. */
void trtl_bg_release_unused_constants(trtl_bgraph *g);
/* Frees node i's plain weights once its kernel's prepared state holds them packed (kernel->unpack), unless
 * the build is REFIT; the weights keep type and count, values NULL (release.c). */
void trtl_bg_drop_plain_weights(trtl_bgraph *g, int32_t i);
/* Frees weights buffer p where the graph owns it and no node's weights and no tensor point at it (release.c). */
void trtl_bg_release_weights(trtl_bgraph *g, const void *p);

/* The optimization passes and the table that runs them: passes/passes.h. */

/* Kernel selection with autotuning (select.c). */
trtl_status trtl_select_kernels(trtl_bgraph *g);
/* The graph becomes an engine (emit.c); the graph is left empty. */
trtl_status trtl_emit_engine(trtl_bgraph *g, trtl_engine **out);

#endif
