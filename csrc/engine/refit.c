/*
 * refit.c -- replacing the weights of an engine built with TRTL_FLAG_REFIT (contract in trtlite.h).
 *
 * Where the weights are: with REFIT the builder skips the passes that fold weights into others
 * (fold_scale) or quantize them (fuse_qdq), so each convolution, deconvolution, fully connected and
 * scale layer that survives the build is one node holding its own float32 weights, named after the
 * layer -- alone, or first in a fused name ("conv1 + relu1": an epilogue fusion keeps the weights
 * as they are).  The refittable weights are found from the nodes each time (no second record to
 * keep in step with the plan); a layer folded away at build time (constant folding) has none.
 *
 * Replacing: the new values go into the node's buffer when only this node's weights point at it
 * (else into a new engine-owned buffer), then the node's kernel prepares them again (packed GEMM
 * panels, Winograd-transformed filters, bf16/fp16 copies: kernel->prepare); the old prepared
 * state is released only once the new one exists, and a failing prepare restores the old values.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/alloc.h"
#include "core/dims.h"

enum { ROLE_KERNEL = 0, ROLE_BIAS = 1, ROLE_SHIFT = 2, ROLE_SCALE = 3, ROLE_COUNT = 4 };

static const char *const role_names[ROLE_COUNT] = {"KERNEL", "BIAS", "SHIFT", "SCALE"};

/* The node's weights of `role` (NULL: the op has none of that role). */
static trtl_weights *node_weights(trtl_node *n, int32_t role)
{
    switch (n->op) {
    case TRTL_OP_CONVOLUTION:
    case TRTL_OP_DECONVOLUTION:
        return role == ROLE_KERNEL ? &n->p.conv.kernel : role == ROLE_BIAS ? &n->p.conv.bias : NULL;
    case TRTL_OP_FULLY_CONNECTED:
        return role == ROLE_KERNEL ? &n->p.fc.kernel : role == ROLE_BIAS ? &n->p.fc.bias : NULL;
    case TRTL_OP_SCALE:
        return role == ROLE_SHIFT ? &n->p.scale.shift : role == ROLE_SCALE ? &n->p.scale.scale : NULL;
    default: return NULL;
    }
}

/* Length of the layer name a node carries first ("conv1 + relu1" -> 5). */
static size_t first_name_len(const char *name)
{
    const char *plus = strstr(name, " + ");
    return plus ? (size_t)(plus - name) : strlen(name);
}

static int node_is_layer(const trtl_node *n, const char *layer)
{
    size_t len = first_name_len(n->name);
    return strlen(layer) == len && strncmp(n->name, layer, len) == 0;
}

const char *trtl_engine_weights_names(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, NULL);
    return e->weights_names ? e->weights_names : "";
}

int trtl_engine_refittable(const trtl_engine *e)
{
    return e && e->refittable;
}

/* Calls fn for each refittable weights in node order, role order; stops when it returns nonzero. */
static int32_t each(const trtl_engine *e, int (*fn)(void *ctx, trtl_node *n, int32_t role), void *ctx)
{
    int32_t count = 0;
    if (!e || !e->refittable)
        return 0;
    for (int32_t k = 0; k < e->n_nodes; k++)
        for (int32_t role = 0; role < ROLE_COUNT; role++) {
            trtl_weights *w = node_weights(&e->nodes[k], role);
            if (!w || w->count <= 0 || w->type != TRTL_FLOAT)
                continue;
            count++;
            if (fn && fn(ctx, &e->nodes[k], role))
                return count;
        }
    return count;
}

int32_t trtl_engine_refit_count(const trtl_engine *e)
{
    return each(e, NULL, NULL);
}

typedef struct find_ctx {
    int32_t want, seen;
    const char *layer; /* by name (want < 0) */
    int32_t role;
    trtl_node *node;
    int32_t node_role;
} find_ctx;

static int find_fn(void *ctx, trtl_node *n, int32_t role)
{
    find_ctx *f = ctx;
    int hit = f->layer ? (node_is_layer(n, f->layer) && role == f->role) : f->seen == f->want;
    f->seen++;
    if (hit) {
        f->node = n;
        f->node_role = role;
    }
    return hit;
}

trtl_status trtl_engine_refit_info(const trtl_engine *e, int32_t i, char *layer, size_t layer_cap, int32_t *role,
                                   int64_t *count)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(layer);
    TRTL_CHECK_ARG(role);
    TRTL_CHECK_ARG(count);
    trtl_clear_error();
    find_ctx f = {i, 0, NULL, 0, NULL, 0};
    if (i < 0 || (each(e, find_fn, &f), !f.node))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: weights index %d out of range (0..%d)", (int)i,
                          (int)trtl_engine_refit_count(e) - 1);
    size_t len = first_name_len(f.node->name);
    if (len >= layer_cap)
        len = layer_cap ? layer_cap - 1 : 0;
    if (layer_cap) {
        memcpy(layer, f.node->name, len);
        layer[len] = '\0';
    }
    *role = f.node_role;
    *count = node_weights(f.node, f.node_role)->count;
    return TRTL_OK;
}

static trtl_status lookup(const trtl_engine *e, const char *layer, int32_t role, trtl_node **node)
{
    if (!e->refittable)
        return trtl_error(TRTL_ERR_STATE, "refit: the engine was not built with BuilderFlag.REFIT");
    if (role < 0 || role >= ROLE_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: layer '%s': role %d is not KERNEL, BIAS, SHIFT or SCALE",
                          layer, (int)role);
    find_ctx f = {-1, 0, layer, role, NULL, 0};
    each(e, find_fn, &f);
    if (f.node) {
        *node = f.node;
        return TRTL_OK;
    }
    /* Why not: no such layer, or a layer without weights of that role. */
    char have[64] = "";
    int any = 0;
    for (int32_t k = 0; k < e->n_nodes; k++) {
        if (!node_is_layer(&e->nodes[k], layer))
            continue;
        any = 1;
        for (int32_t r = 0; r < ROLE_COUNT; r++) {
            trtl_weights *w = node_weights(&e->nodes[k], r);
            if (w && w->count > 0 && w->type == TRTL_FLOAT && strlen(have) + 10 < sizeof have) {
                strcat(have, have[0] ? ", " : "");
                strcat(have, role_names[r]);
            }
        }
    }
    if (!any)
        return trtl_error(TRTL_ERR_NOT_FOUND, "refit: the engine has no layer '%s' with refittable weights (it may "
                          "have no weights, or have been folded away at build time)", layer);
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: layer '%s' has no %s weights (it has: %s)", layer,
                      role_names[role], have[0] ? have : "none");
}

trtl_status trtl_engine_refit_check(const trtl_engine *e, const char *layer, int32_t role, int64_t count)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(layer);
    trtl_clear_error();
    trtl_node *n;
    TRTL_TRY(lookup(e, layer, role, &n));
    int64_t have = node_weights(n, role)->count;
    if (count != have)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: layer '%s' %s weights: %lld values given, the engine was "
                          "built with %lld", layer, role_names[role], (long long)count, (long long)have);
    return TRTL_OK;
}

/* Does any weights attribute of any node other than (self, self_w) point at p? */
static int shared(const trtl_engine *e, const void *p, const trtl_weights *self_w)
{
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        if (n->op == TRTL_OP_PLUGIN_V2)
            continue;
        const trtl_op_info *info = &trtl_op_table[n->op];
        for (int32_t i = 0; i < *info->nattrs; i++) {
            const trtl_attr_desc *d = &info->attrs[i];
            if (d->type != TRTL_ATTR_WEIGHTS)
                continue;
            const trtl_weights *w = (const trtl_weights *)((const char *)&n->p + d->offset);
            if (w != self_w && w->values == p)
                return 1;
        }
    }
    for (int32_t t = 0; t < e->n_tensors; t++)
        if (e->tensors[t].data == p)
            return 1;
    return 0;
}

trtl_status trtl_engine_refit(trtl_engine *e, const char *layer, int32_t role, const trtl_weights *w)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(layer);
    TRTL_CHECK_ARG(w);
    trtl_clear_error();
    TRTL_TRY(trtl_engine_check_loaded(e, "refit"));
    if (w->type != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: layer '%s': weights must be FLOAT, not %s", layer,
                          trtl_dtype_name(w->type));
    if (w->count > 0 && !w->values)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: layer '%s': weights without values", layer);
    TRTL_TRY(trtl_engine_refit_check(e, layer, role, w->count));
    trtl_node *n;
    TRTL_TRY(lookup(e, layer, role, &n));
    trtl_weights *dst = node_weights(n, role);
    size_t bytes = (size_t)w->count * sizeof(float);
    /* The old values, to restore if the kernel cannot prepare the new ones. */
    void *old = malloc(bytes);
    if (!old)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "refit: layer '%s': out of memory", layer);
    memcpy(old, dst->values, bytes);
    void *target = (void *)dst->values;
    if (shared(e, target, dst)) {
        target = trtl_aligned_alloc(bytes);
        if (!target || !trtl_engine_own(e, target)) {
            free(old);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "refit: layer '%s': out of memory", layer);
        }
    }
    const void *prev = dst->values;
    memcpy(target, w->values, bytes);
    dst->values = target;
    if (n->kernel && n->kernel->prepare) {
        void *state = NULL;
        trtl_status st = n->kernel->prepare(n, &state);
        if (st != TRTL_OK) {
            memcpy((void *)prev, old, bytes);
            dst->values = prev;
            free(old);
            return st;
        }
        if (n->kernel->release && n->kstate)
            n->kernel->release(n->kstate);
        n->kstate = state;
    }
    free(old);
    trtl_log(TRTL_LOG_VERBOSE, "refit: layer '%s' %s weights replaced (%lld values)", layer, role_names[role],
             (long long)w->count);
    return TRTL_OK;
}
