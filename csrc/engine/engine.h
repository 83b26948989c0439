/*
 * engine.h -- the built engine (internal).  Immutable once built or deserialized; shared by
 * every execution context (reference counted).
 *
 * Tensors are of four kinds: network inputs and outputs (bound to user buffers), activations
 * (in a context's arena, offsets planned at the profile's max shapes) and constants (owned by
 * the engine).  Nodes run in array order, which is topological.
 */
#ifndef TRTL_ENGINE_ENGINE_H
#define TRTL_ENGINE_ENGINE_H

#include <stdatomic.h>
#include "trtlite/trtlite.h"
#include "kernels/kernel.h"

typedef enum trtl_tensor_kind {
    TRTL_TK_INPUT = 0,
    TRTL_TK_OUTPUT = 1,
    TRTL_TK_ACTIVATION = 2,
    TRTL_TK_CONSTANT = 3
} trtl_tensor_kind;

typedef struct trtl_etensor {
    char *name;
    trtl_dtype dtype;
    int32_t kind;          /* trtl_tensor_kind */
    trtl_dims dims;        /* full dims as declared/inferred at build, -1 where dynamic */
    trtl_dims max_dims;    /* full dims at the profiles' max shapes */
    void *data;            /* CONSTANT: owned values (64-byte aligned) */
    int64_t max_bytes;     /* bytes at max shapes */
    int64_t offset;        /* ACTIVATION: arena offset at max shapes */
    int32_t first, last;   /* liveness: first producing / last consuming node (-1 none) */
} trtl_etensor;

typedef struct trtl_profile {
    trtl_dims *min, *opt, *max; /* per engine input (io order, inputs first), full dims */
    /* Per engine input: the value ranges of a shape-tensor input (a value vector in a trtl_dims,
     * nb_dims = its volume); nb_dims 0 for other inputs. */
    trtl_dims *vmin, *vopt, *vmax;
} trtl_profile;

/* A weights buffer of a deferred plan load (trtl_engine_deserialize_deferred) still in the plan's
 * bytes: node weights (w) or a constant tensor's data (node -1). */
typedef struct trtl_pending_weights {
    size_t off, bytes;     /* where in the plan */
    int32_t node;          /* the node whose params hold w; -1: constant tensor `tensor` */
    int32_t tensor;
    trtl_weights *w;
} trtl_pending_weights;

struct trtl_engine {
    atomic_int refcount;
    int implicit_batch;
    int32_t max_batch_size;
    char *name;            /* the network's name (owned; "" if unnamed) */
    char *weights_names;   /* trtl_engine_weights_names' records (owned; NULL: none) */
    int32_t n_tensors;
    trtl_etensor *tensors;
    int32_t n_nodes;
    trtl_node *nodes;
    int32_t n_io;          /* inputs first (in add_input order), then outputs (in mark order) */
    int32_t n_inputs;
    int32_t *io;           /* tensor ids */
    int32_t *shape_input;  /* per input: 1 when its values (host memory) decide shapes (a shape-tensor input) */
    int32_t n_shape_inputs;
    int32_t n_profiles;
    trtl_profile *profiles;
    trtl_dims *env_min, *env_max; /* per input: union over profiles */
    int64_t arena_bytes;   /* activation arena at max shapes */
    int32_t num_threads;   /* 0: available CPUs */
    uint32_t cpu_features; /* union of the chosen kernels' requirements */
    /* Owned weight buffers referenced from nodes' params. */
    void **owned;
    int32_t n_owned, cap_owned;
    int32_t refittable;    /* built with TRTL_FLAG_REFIT: weights can be replaced (refit.c) */
    /* Deferred plan load (serialize/load_weights.c): until trtl_engine_load_weights the pending
     * weights and constants point into the caller's plan bytes and no kernel is prepared. */
    int32_t deferred;      /* 1 while weights are pending */
    trtl_status load_status; /* a failed trtl_engine_load_weights (the engine is unusable) */
    const uint8_t *plan;
    size_t plan_size;
    trtl_pending_weights *pending;
    int32_t n_pending, cap_pending;
    uint64_t plan_discarded; /* bytes of the plan given back to the system while loading */
};

/* Engine construction helpers used by the builder and the plan reader. */
trtl_engine *trtl_engine_alloc(void);
/* Takes ownership of `p` (freed with the engine); returns 0 on out-of-memory (p is freed). */
int trtl_engine_own(trtl_engine *e, void *p);
/* Frees node k's plain weights that its kernel's prepared state holds packed (kernel->unpack; see
 * kernel.h), so that the engine keeps one copy; the weights keep their type and count, values NULL.
 * No-op for refittable engines, nodes without such a kernel or state, and weights already dropped.
 * A buffer another node or tensor still points at is not freed (its last holder frees it). */
void trtl_engine_drop_plain_weights(trtl_engine *e, int32_t k);
/* For the plan writer of an engine that is serialized and then destroyed (trtl_build_serialized): frees
 * constant tensor `tensor`'s data (tensor >= 0) or node `node`'s weights buffers and kept kernel state, once
 * written, so that the plan and the engine's weights never coexist in full.  Buffers below
 * TRTL_RELEASE_WRITTEN_MIN bytes or that another node or tensor points at are kept.  Returns the bytes freed. */
#define TRTL_RELEASE_WRITTEN_MIN ((size_t)64 << 10)
size_t trtl_engine_release_written(trtl_engine *e, int32_t tensor, int32_t node);
/* trtl_engine_serialize for an engine that is destroyed right after (trtl_build_serialized): each constant
 * and node's weights are freed as soon as the plan holds them (trtl_engine_release_written), so the build
 * peaks at the engine or the plan, not both.  The engine can then only be destroyed (serialize/writer.c). */
trtl_status trtl_engine_serialize_consume(trtl_engine *e, void **data, size_t *size);
/* Bytes the kernels' prepared states hold (packed weights, Winograd transforms), as far as their kernels
 * report them (kernel->state_bytes: the fp32 packing convolution and linear kernels). */
uint64_t trtl_engine_packed_weight_bytes(const trtl_engine *e);
/* Bytes of the weights the engine holds in plain form (owned buffers and constant tensors): the
 * packed weights of kernels with unpack() are not counted (they live in the kernels' states). */
uint64_t trtl_engine_plain_weight_bytes(const trtl_engine *e);
/* TRTL_OK when the engine's weights are loaded (not a deferred plan load still pending, nor one
 * that failed); else TRTL_ERR_STATE with a message starting with `what` (serialize/load_weights.c). */
trtl_status trtl_engine_check_loaded(const trtl_engine *e, const char *what);
/* Clears the pending entries from `from` on (their pointers into the plan) and forgets the plan. */
void trtl_engine_forget_pending(trtl_engine *e, int32_t from);
/* Liveness, arena offsets and kernel state; called once all nodes/tensors are in place.  Drops the
 * plain copy of packed weights (trtl_engine_drop_plain_weights) of every node. */
trtl_status trtl_engine_finalize(trtl_engine *e);
/* Shape inference of every node for concrete input dims (full), writing all tensor dims.  Shape
 * tensors' values are computed on the way (network/shape_values.h); `values` gives those of the
 * shape-tensor inputs (per engine input, as value vectors; may be NULL when the engine has none). */
trtl_status trtl_engine_infer(const trtl_engine *e, trtl_dims *dims, const trtl_dims *values);
/* The same at a profile corner (the plan reader's check at max shapes and values): where a node's shape
 * values and shapes do not fit together there, as the builder allowed (builder/graph.c), its outputs keep
 * their stored max shapes and corner[t] is set for them and everything computed from them. */
trtl_status trtl_engine_infer_corner(const trtl_engine *e, trtl_dims *dims, const trtl_dims *values, char *corner);
/* Every node's inferred output dtypes match the stored tensor dtypes (identity converts to any). */
trtl_status trtl_engine_check_dtypes(const trtl_engine *e);
/* Greedy offset assignment: tensors whose live ranges [first,last] overlap never share bytes. */
int64_t trtl_memplan(int32_t n, const int64_t *bytes, const int32_t *first, const int32_t *last, int64_t *offsets);

#endif
