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
 * Constants (role CONSTANT, named after their tensor): a FLOAT constant tensor of more than one
 * element that a node reads (one-element constants are not: passes copy their value into the
 * nodes using them -- scalar factors, epsilons, quantization scales).  With REFIT, fuse_linear
 * keeps a constant times a matrix multiply as it is, so the constant stays a tensor that kernels
 * read when they run; new values are written into its buffer in place (contexts hold its address).
 *
 * Replacing: the new values go into the node's buffer when only this node's weights point at it
 * (else into a new engine-owned buffer), then the node's kernel prepares them again (packed GEMM
 * panels, Winograd-transformed filters, bf16/fp16 copies: kernel->prepare); the old prepared
 * state is released only once the new one exists, and a failing prepare restores the old values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/refit_names.h"
#include "engine/int8_grid.h"
#include "network/network.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/alloc.h"
#include "core/dims.h"

enum { ROLE_KERNEL = 0, ROLE_BIAS = 1, ROLE_SHIFT = 2, ROLE_SCALE = 3, ROLE_CONSTANT = 4, ROLE_COUNT = 5 };

static const char *const role_names[ROLE_COUNT] = {"KERNEL", "BIAS", "SHIFT", "SCALE", "CONSTANT"};

/* One refittable weights: a node's (node != NULL, named after its first layer) or a constant
 * tensor's (tensor >= 0, named after the tensor; role CONSTANT). */
typedef struct slot {
    trtl_node *node;
    int32_t tensor;
    int32_t role;
} slot;

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

/* A constant tensor is refittable when it is FLOAT, has more than one element (passes copy
 * one-element constants into parameters: scalar factors, epsilons, quantization scales) and some
 * node reads it. */
static int constant_refittable(const trtl_engine *e, int32_t t)
{
    const trtl_etensor *et = &e->tensors[t];
    if (et->kind != TRTL_TK_CONSTANT || et->dtype != TRTL_FLOAT || !et->data || trtl_volume(&et->max_dims) <= 1)
        return 0;
    for (int32_t k = 0; k < e->n_nodes; k++)
        for (int32_t j = 0; j < e->nodes[k].n_in; j++)
            if (e->nodes[k].in[j] == t)
                return 1;
    return 0;
}

static int64_t slot_count(const trtl_engine *e, const slot *s)
{
    return s->node ? node_weights(s->node, s->role)->count : trtl_volume(&e->tensors[s->tensor].max_dims);
}

static const char *slot_name(const trtl_engine *e, const slot *s)
{
    return s->node ? s->node->name : e->tensors[s->tensor].name;
}

/* Length of the layer name a node carries first ("conv1 + relu1" -> 5); a tensor's whole name. */
static size_t first_name_len(const char *name, int whole)
{
    const char *plus = whole ? NULL : strstr(name, " + ");
    return plus ? (size_t)(plus - name) : strlen(name);
}

static int slot_is(const trtl_engine *e, const slot *s, const char *layer)
{
    const char *name = slot_name(e, s);
    size_t len = first_name_len(name, !s->node);
    return strlen(layer) == len && strncmp(name, layer, len) == 0;
}

const char *trtl_engine_weights_names(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, NULL);
    return e->weights_names ? e->weights_names : "";
}

trtl_status trtl_engine_take_weights_names(trtl_engine *e, const trtl_network *net)
{
    size_t len = net->weights_names ? strlen(net->weights_names) : 0;
    for (int32_t i = 0; i < net->n_layers; i++) {
        const trtl_layer *l = net->layers[i];
        if (l->op == TRTL_OP_CONSTANT && l->n_out == 1 && l->out[0] && strcmp(trtl_layer_name(l), l->out[0]->name))
            len += strlen(l->out[0]->name) + strlen(trtl_layer_name(l)) + 8;
    }
    if (!len)
        return TRTL_OK;
    char *s = malloc(len + 1), *p = s;
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    *p = '\0';
    if (net->weights_names)
        p = stpcpy(p, net->weights_names);
    for (int32_t i = 0; i < net->n_layers; i++) {
        const trtl_layer *l = net->layers[i];
        const char *name = trtl_layer_name(l);
        if (l->op == TRTL_OP_CONSTANT && l->n_out == 1 && l->out[0] && strcmp(name, l->out[0]->name) &&
            !strpbrk(name, "\t\n") && !strpbrk(l->out[0]->name, "\t\n"))
            p += sprintf(p, "%s\t%d\t%s\n", l->out[0]->name, ROLE_CONSTANT, name);
    }
    free(e->weights_names);
    e->weights_names = s;
    return TRTL_OK;
}

int trtl_engine_refittable(const trtl_engine *e)
{
    return e && e->refittable;
}

/* Calls fn for each refittable weights (nodes in order, role order, then constant tensors in
 * order); stops when it returns nonzero. */
static int32_t each(const trtl_engine *e, int (*fn)(void *ctx, const slot *s), void *ctx)
{
    int32_t count = 0;
    if (!e || !e->refittable)
        return 0;
    for (int32_t k = 0; k < e->n_nodes; k++)
        for (int32_t role = 0; role < ROLE_CONSTANT; role++) {
            trtl_weights *w = node_weights(&e->nodes[k], role);
            if (!w || w->count <= 0 || w->type != TRTL_FLOAT)
                continue;
            count++;
            slot s = {&e->nodes[k], -1, role};
            if (fn && fn(ctx, &s))
                return count;
        }
    for (int32_t t = 0; t < e->n_tensors; t++) {
        if (!constant_refittable(e, t))
            continue;
        count++;
        slot s = {NULL, t, ROLE_CONSTANT};
        if (fn && fn(ctx, &s))
            return count;
    }
    return count;
}

int32_t trtl_engine_refit_count(const trtl_engine *e)
{
    return each(e, NULL, NULL);
}

typedef struct find_ctx {
    const trtl_engine *e;
    int32_t want, seen;
    const char *layer; /* by name (want < 0) */
    int32_t role;
    slot found;
    int hit;
} find_ctx;

static int find_fn(void *ctx, const slot *s)
{
    find_ctx *f = ctx;
    int hit = f->layer ? (s->role == f->role && slot_is(f->e, s, f->layer)) : f->seen == f->want;
    f->seen++;
    if (hit) {
        f->found = *s;
        f->hit = 1;
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
    find_ctx f = {e, i, 0, NULL, 0, {NULL, -1, 0}, 0};
    if (i < 0 || (each(e, find_fn, &f), !f.hit))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: weights index %d out of range (0..%d)", (int)i,
                          (int)trtl_engine_refit_count(e) - 1);
    const char *name = slot_name(e, &f.found);
    size_t len = first_name_len(name, !f.found.node);
    if (len >= layer_cap)
        len = layer_cap ? layer_cap - 1 : 0;
    if (layer_cap) {
        memcpy(layer, name, len);
        layer[len] = '\0';
    }
    *role = f.found.role;
    *count = slot_count(e, &f.found);
    return TRTL_OK;
}

static trtl_status lookup(const trtl_engine *e, const char *layer, int32_t role, slot *out)
{
    if (!e->refittable)
        return trtl_error(TRTL_ERR_STATE, "refit: the engine was not built with BuilderFlag.REFIT");
    if (role < 0 || role >= ROLE_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: layer '%s': role %d is not KERNEL, BIAS, SHIFT, SCALE "
                          "or CONSTANT", layer, (int)role);
    find_ctx f = {e, -1, 0, layer, role, {NULL, -1, 0}, 0};
    each(e, find_fn, &f);
    if (f.hit) {
        *out = f.found;
        return TRTL_OK;
    }
    /* Why not: no such layer, or a layer without weights of that role. */
    char have[64] = "";
    int any = 0;
    for (int32_t k = 0; k < e->n_nodes; k++) {
        slot s = {&e->nodes[k], -1, 0};
        if (!slot_is(e, &s, layer))
            continue;
        any = 1;
        for (int32_t r = 0; r < ROLE_CONSTANT; r++) {
            trtl_weights *w = node_weights(&e->nodes[k], r);
            if (w && w->count > 0 && w->type == TRTL_FLOAT && strlen(have) + 10 < sizeof have) {
                strcat(have, have[0] ? ", " : "");
                strcat(have, role_names[r]);
            }
        }
    }
    for (int32_t t = 0; t < e->n_tensors; t++) {
        slot s = {NULL, t, ROLE_CONSTANT};
        if (!slot_is(e, &s, layer))
            continue;
        if (e->tensors[t].kind != TRTL_TK_CONSTANT)
            break;
        return trtl_error(TRTL_ERR_UNSUPPORTED, "refit: constant '%s' (%s, %lld element(s)) is not refittable: trtlite "
                          "refits FLOAT constants of more than one element that a layer reads (builder passes copy "
                          "one-element constants into the layers using them)", layer,
                          trtl_dtype_name(e->tensors[t].dtype), (long long)trtl_volume(&e->tensors[t].max_dims));
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
    slot s;
    TRTL_TRY(lookup(e, layer, role, &s));
    int64_t have = slot_count(e, &s);
    if (count != have)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "refit: %s '%s' %s weights: %lld values given, the engine was "
                          "built with %lld", s.node ? "layer" : "constant", layer, role_names[role], (long long)count,
                          (long long)have);
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
    return 0;
}

/* Is p a constant tensor's data, other than tensor `self`'s? */
static int tensor_data(const trtl_engine *e, const void *p, int32_t self)
{
    for (int32_t t = 0; t < e->n_tensors; t++)
        if (t != self && e->tensors[t].data == p)
            return 1;
    return 0;
}

/* A constant's new values: written in place (contexts hold the data's address), so the buffer must
 * be the tensor's alone; kernels read constants when they run, so nothing is prepared again. */
static trtl_status refit_constant(trtl_engine *e, const char *layer, int32_t t, const trtl_weights *w)
{
    trtl_etensor *et = &e->tensors[t];
    if (shared(e, et->data, NULL) || tensor_data(e, et->data, t))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "refit: constant '%s' shares its values with another layer's weights "
                          "or constant; refit those", layer);
    memcpy(et->data, w->values, (size_t)w->count * sizeof(float));
    int64_t K, n;
    int col;
    if (trtl_int8_grid_of(e, -1, t, &K, &n, &col)) /* implicit INT8: on the grid, as a fresh build rounds */
        trtl_int8_grid_round((float *)et->data, K, n, col);
    trtl_log(TRTL_LOG_VERBOSE, "refit: constant '%s' replaced (%lld values)", layer, (long long)w->count);
    return TRTL_OK;
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
    slot sl;
    TRTL_TRY(lookup(e, layer, role, &sl));
    if (!sl.node)
        return refit_constant(e, layer, sl.tensor, w);
    trtl_node *n = sl.node;
    trtl_weights *dst = node_weights(n, role);
    size_t bytes = (size_t)w->count * sizeof(float);
    /* The old values, to restore if the kernel cannot prepare the new ones. */
    void *old = malloc(bytes);
    if (!old)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "refit: layer '%s': out of memory", layer);
    memcpy(old, dst->values, bytes);
    void *target = (void *)dst->values;
    if (shared(e, target, dst) || tensor_data(e, target, -1)) {
        target = trtl_aligned_alloc(bytes);
        if (!target || !trtl_engine_own(e, target)) {
            free(old);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "refit: layer '%s': out of memory", layer);
        }
    }
    const void *prev = dst->values;
    memcpy(target, w->values, bytes);
    int64_t K, nv;
    int col;
    if (role == ROLE_KERNEL && trtl_int8_grid_of(e, (int32_t)(n - e->nodes), -1, &K, &nv, &col))
        trtl_int8_grid_round((float *)target, K, nv, col); /* implicit INT8: on the grid, as a fresh build rounds */
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
