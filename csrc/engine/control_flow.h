/*
 * control_flow.h -- a compiled loop or conditional: the CONTROL_FLOW step (internal).
 *
 * The builder (builder/control_flow.c) gathers the layers of each loop body / conditional branch into
 * a sub-network, builds it into a nested engine, and replaces the whole structure by one step whose
 * inputs are the outer tensors the structure reads and whose outputs are its loop / conditional
 * outputs.  The structure is owned by its step (freed with the engine, or the builder's graph).
 *
 * IF: node input 0 is the 0-d BOOL condition; body[0] runs when it is true, body[1] otherwise.  Each
 *   body's engine input k reads node input in_map[b][k]; its output j is node output j (both branches
 *   have the same output shapes and types: checked at build and whenever shapes are resolved).
 * LOOP: body[0] inputs are, in order: n_rec recurrences (their initial values: node input in_map[k]),
 *   n_iter iterator slices (of node input in_map[k], along iter_axis, from the end when iter_rev), then
 *   outer tensors (node input in_map[k]).  Body outputs: the n_rec next values, then (cond_out >= 0) the
 *   WHILE condition, then the values the loop outputs read.  Node output j is out[j]: LAST_VALUE of a
 *   body output (src >= 0) or of recurrence -1 - src (its final value: the initial one when no iteration
 *   ran), or the CONCATENATE / REVERSE of a body output along `axis`, `len` slots (-1: the trip count known
 *   at shape time: static_trip and the iterators' lengths).  An iteration runs while fewer than the
 *   COUNT (node input trip_in, INT32) and the iterators' lengths have run and the WHILE condition,
 *   computed by the body from the iteration's values, holds; a CONCATENATE slot no iteration wrote is
 *   zero.  Carried values keep their shapes (TensorRT's rule), so no iteration allocates.
 */
#ifndef TRTL_ENGINE_CONTROL_FLOW_H
#define TRTL_ENGINE_CONTROL_FLOW_H

#include "engine/engine.h"

typedef struct trtl_cf_out {
    int32_t kind;   /* trtl_loop_output (LOOP) */
    int32_t axis;
    int32_t src;    /* body output index, or -1 - r: recurrence r's final value */
    int64_t len;    /* CONCATENATE / REVERSE: slots, -1: the trip count known at shape time */
} trtl_cf_out;

/* Build-time shape inference of a body not compiled yet (builder/control_flow.c): dims and types of the
 * body's outputs for these input dims. */
typedef trtl_status (*trtl_cf_body_infer_fn)(void *net, const trtl_dims *in, trtl_dims *out, trtl_dtype *out_t);

typedef struct trtl_cf {
    trtl_cf_head head;       /* first: the op table reaches infer through it */
    int32_t is_loop;
    int32_t n_bodies;        /* LOOP 1, IF 2 */
    trtl_engine *body[2];
    int32_t n_body_in[2], n_body_out[2];
    int32_t *in_map[2];      /* per body input: node input index */
    int32_t n_rec, n_iter;
    int32_t *iter_axis, *iter_rev;
    int32_t trip_in;         /* node input of the COUNT trip limit, -1: none */
    int32_t cond_out;        /* body output of the WHILE condition, -1: none */
    int64_t static_trip;     /* COUNT known at build, -1: not known */
    int32_t n_out;
    trtl_cf_out *out;
    /* builder only: the bodies as networks until they are compiled, and how to infer / free them */
    void *build_net[2];
    trtl_cf_body_infer_fn build_infer;
    void (*build_free)(void *net);
} trtl_cf;

/* A zeroed structure with its vtable set (NULL: out of memory, error set). */
trtl_cf *trtl_cf_alloc(void);
void trtl_cf_destroy(trtl_cf *cf);
/* Every index and count against the bodies and the step's input / output counts (the plan reader). */
trtl_status trtl_cf_check(const trtl_cf *cf, const char *name, int32_t n_in, int32_t n_out);

/* Per execution context: the bodies' contexts and the loop's buffers. */
typedef struct trtl_cf_ctx trtl_cf_ctx;
struct trtl_threadpool;
trtl_status trtl_cf_ctx_create(const trtl_cf *cf, struct trtl_threadpool *pool, trtl_cf_ctx **out);
void trtl_cf_ctx_destroy(trtl_cf_ctx *x);
/* Shapes resolved: the bodies' input shapes, their contexts, the buffers (may allocate). */
trtl_status trtl_cf_ctx_resolve(trtl_cf_ctx *x, const char *name, int32_t n_in, const trtl_tensor_view *in);
/* One execution of the step (no allocation). */
trtl_status trtl_cf_ctx_run(trtl_cf_ctx *x, const char *name, int32_t n_in, const trtl_tensor_view *in, int32_t n_out,
                            const trtl_tensor_view *out);

/* Contexts of a body: they run on their parent's thread pool (engine/context.c). */
trtl_status trtl_context_create_nested(trtl_engine *e, struct trtl_threadpool *pool, trtl_context **out);
trtl_status trtl_context_run_nested(trtl_context *c, void *const *bindings);
/* The parent's pool changed (set_num_threads): its bodies' contexts follow. */
void trtl_context_set_pool_nested(trtl_context *c, struct trtl_threadpool *pool);
void trtl_cf_ctx_set_pool(trtl_cf_ctx *x, struct trtl_threadpool *pool);

#endif
