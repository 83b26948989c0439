/*
 * kernel.h -- what the engine runs: nodes, tensor views, kernels.
 *
 * A node is a lowered layer (params in engine form: full dims including batch, float32 weights
 * owned by the engine) plus an optional fused epilogue.  A kernel is one implementation of one
 * op; several may exist per op (reference, BLAS, SIMD) and the builder picks one per node.
 *
 * Contract of a kernel's run():
 *   - inputs/outputs are dense row-major buffers with the concrete dims of this execution;
 *   - it must not allocate; scratch (of the size scratch() returned for these shapes) is given;
 *   - it returns TRTL_OK or an error set with trtl_error() naming node->name;
 *   - it is called concurrently from different contexts: node and state are read-only.
 */
#ifndef TRTL_KERNELS_KERNEL_H
#define TRTL_KERNELS_KERNEL_H

#include <stddef.h>
#include "core/params.h"

struct trtl_threadpool;

typedef struct trtl_tensor_view {
    void *data;
    trtl_dims dims;
    trtl_dtype dtype;
} trtl_tensor_view;

/* Fused epilogue, applied in this order after the op's own result (bias included):
 *   y = act(y + residual)       residual: the node's last input when has_residual. */
typedef struct trtl_epilogue {
    int32_t act;          /* trtl_activation_type, TRTL_ACT_NONE for none */
    float alpha, beta;
    int32_t has_residual;
} trtl_epilogue;

struct trtl_kernel;

typedef struct trtl_node {
    trtl_op op;
    char *name;           /* fused layer names joined with " + " */
    trtl_params p;        /* lowered */
    trtl_epilogue epi;
    int32_t n_in, n_out;
    int32_t *in, *out;    /* engine tensor ids; in[i] == -1 never happens after build */
    const struct trtl_kernel *kernel;
    void *kstate;         /* kernel->prepare() result, may be NULL */
} trtl_node;

typedef struct trtl_kernel_args {
    const trtl_node *node;
    const trtl_tensor_view *in;   /* node->n_in views */
    trtl_tensor_view *out;        /* node->n_out views; dims already set */
    void *scratch;
    size_t scratch_size;
    const void *state;            /* node->kstate */
    struct trtl_threadpool *pool; /* NULL: run on the calling thread */
    void *plugin;                 /* PLUGIN_V2: the context's clone of the plugin */
} trtl_kernel_args;

typedef trtl_status (*trtl_kernel_fn)(const trtl_kernel_args *a);

typedef struct trtl_kernel {
    const char *name;        /* unique; recorded in plans ("conv.ref", "conv.im2col_sgemm", ...) */
    trtl_op op;
    uint32_t cpu_features;   /* TRTL_CPU_* bits it needs */
    int applies_epilogue;    /* 1: run() applies node->epi itself */
    /* Can this kernel run the node (given the dims at the optimization profile's opt shapes)?
     * NULL: always. */
    int (*applies)(const trtl_node *n, const trtl_dims *in_dims);
    /* Prepare constant state from the node's weights (packing).  NULL: none. */
    trtl_status (*prepare)(const trtl_node *n, void **state);
    void (*release)(void *state);
    /* Scratch bytes for these concrete shapes.  NULL: none. */
    size_t (*scratch)(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out);
    trtl_kernel_fn run;
    int32_t precision;       /* trtl_dtype the kernel computes in; 0 (TRTL_FLOAT) for fp32 kernels */
    /* Optional: writes the node's packed weights (trtl_node_packed_weights) exactly, in plain form, from
     * prepare()'s state to dst (their count values of their type; dst has no alignment: the plan writer's
     * buffer, so store with memcpy).  A kernel with it reads nothing of
     * those weights but the state after prepare(), so the engine frees the plain copy once the state
     * exists (refittable engines keep it: refit writes there) and the plan writer calls this instead:
     * the weights are held once, packed (trtl_engine_drop_plain_weights). */
    void (*unpack)(const trtl_node *n, const void *state, void *dst);
    /* Optional: bytes prepare()'s state holds (the packed weights and the state itself), for the engine's
     * memory report (inspector "packed_weight_bytes"); NULL: not counted. */
    size_t (*state_bytes)(const void *state);
    /* 1: a fallback (the OpenBLAS kernels, kernels/blas/): a candidate only where no other optimized kernel
     * applies (kernel selection drops it otherwise, before timing).  OpenBLAS rounds an output element
     * differently by where it falls in its tiles, so equal rows of weights give unequal outputs; trtlite's
     * own kernels sum every output in the same order. */
    int fallback;
    /* 1: run() takes every dtype the op's reference kernel takes, with the reference's bits (the selection and
     * conversion kernels: topk.select, select.bcast, cast.simd); kernel selection offers it for nodes with
     * non-FLOAT tensors too.  0: a candidate only where every input and output is FLOAT (builder/select.c). */
    int any_dtype;
} trtl_kernel;

/* The weights a kernel with unpack() keeps packed in its state: a fully connected or linear layer's
 * kernel (W [N, D]), a convolution's or blocked convolution's kernel (W [K, C/G, k...]), a deconvolution's
 * kernel (W [C, K/G, k...]); NULL for other ops. */
static inline trtl_weights *trtl_node_packed_weights(trtl_node *n)
{
    if (n->op == TRTL_OP_CONVOLUTION || n->op == TRTL_OP_NCHWC_CONV || n->op == TRTL_OP_DECONVOLUTION ||
        n->op == TRTL_OP_PREACT_CONV)
        return &n->p.conv.kernel;
    return n->op == TRTL_OP_FULLY_CONNECTED || n->op == TRTL_OP_LINEAR ? &n->p.fc.kernel : NULL;
}

/* Applies an epilogue in place over n contiguous floats (residual may be NULL). */
void trtl_epilogue_apply(const trtl_epilogue *e, float *y, const float *residual, int64_t n);
/* One activation function value, TensorRT's formulas. */
float trtl_activation_eval(int32_t type, float alpha, float beta, float x);

#endif
