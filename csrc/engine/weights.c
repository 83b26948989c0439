/*
 * weights.c -- one copy of the weights in an engine.
 *
 * A kernel that packs a node's weights in prepare() (fully_connected / linear.packed_gemm) keeps
 * everything run() needs in its state; the plain copy the builder or the plan reader made would
 * then double the engine's memory (BERT-base, ViT-B/16: 330-340 MiB twice).  Such kernels declare
 * unpack() (kernel.h): the engine frees the plain buffer right after the state is prepared (the plan
 * reader node by node, so loading peaks at the plan bytes plus one copy) and the plan writer
 * re-derives the values from the state.  Refittable engines keep the plain copy: refit.c writes
 * the new values there and prepares again.
 */
#include <stdint.h>

#include "engine/engine.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "network/op_table.h"

/* Does a weights attribute of a node (other than `self`) or a constant tensor point at p? */
static int still_used(const trtl_engine *e, const void *p, const trtl_weights *self)
{
    for (int32_t i = 0; i < e->n_tensors; i++)
        if (e->tensors[i].data == p)
            return 1;
    for (int32_t k = 0; k < e->n_nodes; k++)
        if (trtl_params_weights_at(e->nodes[k].op, &e->nodes[k].p, p, self))
            return 1;
    return 0;
}

void trtl_engine_drop_plain_weights(trtl_engine *e, int32_t k)
{
    trtl_node *n = &e->nodes[k];
    if (e->refittable || !n->kernel || !n->kernel->unpack || !n->kstate)
        return;
    trtl_weights *w = trtl_node_packed_weights(n);
    if (!w || !w->values)
        return;
    void *p = (void *)(uintptr_t)w->values;
    w->values = NULL;
    if (still_used(e, p, w))
        return;
    for (int32_t i = 0; i < e->n_owned; i++)
        if (e->owned[i] == p) {
            trtl_aligned_free(p);
            e->owned[i] = e->owned[--e->n_owned];
            return;
        }
}

/* Frees p when nothing but the reference just cleared points at it: a constant tensor's data (tensor >= 0,
 * freed by the tensor) or an owned weights buffer.  Returns the bytes freed. */
static size_t free_unshared(trtl_engine *e, void *p, int32_t tensor, trtl_weights *w, size_t bytes)
{
    if (!p || bytes < TRTL_RELEASE_WRITTEN_MIN || still_used(e, p, w))
        return 0;
    if (tensor >= 0) {
        trtl_aligned_free(p);
        e->tensors[tensor].data = NULL;
        return bytes;
    }
    for (int32_t i = 0; i < e->n_owned; i++)
        if (e->owned[i] == p) {
            trtl_aligned_free(p);
            w->values = NULL;
            e->owned[i] = e->owned[--e->n_owned];
            return bytes;
        }
    return 0;
}

size_t trtl_engine_release_written(trtl_engine *e, int32_t tensor, int32_t node)
{
    if (tensor >= 0) {
        trtl_etensor *t = &e->tensors[tensor];
        if (t->kind != TRTL_TK_CONSTANT || !t->data)
            return 0;
        void *p = t->data;
        t->data = NULL; /* still_used() must not find the tensor itself */
        size_t freed = free_unshared(e, p, tensor, NULL, (size_t)t->max_bytes);
        if (!freed)
            t->data = p;
        return freed;
    }
    trtl_node *n = &e->nodes[node];
    if (n->op == TRTL_OP_PLUGIN_V2 || n->op == TRTL_OP_CONTROL_FLOW)
        return 0;
    size_t freed = 0;
    const trtl_op_info *info = &trtl_op_table[n->op];
    for (int32_t i = 0; i < *info->nattrs; i++) {
        const trtl_attr_desc *d = &info->attrs[i];
        if (d->type != TRTL_ATTR_WEIGHTS)
            continue;
        trtl_weights *w = (trtl_weights *)((char *)&n->p + d->offset);
        if (w->values && w->count > 0)
            freed += free_unshared(e, (void *)(uintptr_t)w->values, -1, w,
                                   (size_t)w->count * trtl_dtype_size(w->type));
    }
    if (n->kernel && n->kernel->release && n->kstate) { /* a state kept from timing (packed weights) */
        n->kernel->release(n->kstate);
        n->kstate = NULL;
    }
    return freed;
}

uint64_t trtl_engine_packed_weight_bytes(const trtl_engine *e)
{
    uint64_t total = 0;
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        if (n->kernel && n->kernel->state_bytes && n->kstate)
            total += n->kernel->state_bytes(n->kstate);
    }
    return total;
}

uint64_t trtl_engine_plain_weight_bytes(const trtl_engine *e)
{
    uint64_t total = 0;
    for (int32_t i = 0; i < e->n_tensors; i++)
        if (e->tensors[i].kind == TRTL_TK_CONSTANT && e->tensors[i].data)
            total += (uint64_t)e->tensors[i].max_bytes;
    /* each buffer once: a weights attribute counts unless an earlier one points at the same values */
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        if (n->op == TRTL_OP_PLUGIN_V2 || n->op == TRTL_OP_CONTROL_FLOW)
            continue;
        const trtl_op_info *info = &trtl_op_table[n->op];
        for (int32_t i = 0; i < *info->nattrs; i++) {
            const trtl_attr_desc *d = &info->attrs[i];
            if (d->type != TRTL_ATTR_WEIGHTS)
                continue;
            const trtl_weights *w = (const trtl_weights *)((const char *)&n->p + d->offset);
            if (!w->values || w->count <= 0)
                continue;
            int seen = 0;
            for (int32_t t = 0; t < e->n_tensors && !seen; t++)
                seen = e->tensors[t].kind == TRTL_TK_CONSTANT && e->tensors[t].data == w->values;
            for (int32_t k2 = 0; k2 <= k && !seen; k2++) {
                const trtl_node *m = &e->nodes[k2];
                if (m->op == TRTL_OP_PLUGIN_V2 || m->op == TRTL_OP_CONTROL_FLOW)
                    continue;
                const trtl_op_info *mi = &trtl_op_table[m->op];
                for (int32_t j = 0; j < *mi->nattrs && !seen; j++) {
                    const trtl_attr_desc *md = &mi->attrs[j];
                    const trtl_weights *v = (const trtl_weights *)((const char *)&m->p + md->offset);
                    if (k2 == k && j >= i)
                        break;
                    seen = md->type == TRTL_ATTR_WEIGHTS && v->values == w->values;
                }
            }
            if (!seen)
                total += (uint64_t)w->count * trtl_dtype_size(w->type);
        }
    }
    return total;
}
