/* release.c -- the builder keeps one copy of the weights: values that no step reads any more are freed
 * before kernel selection (constants folded into other nodes' weights: fuse_linear's transposed copy,
 * fold_scale, constant folding), and a node's plain weights once its kernel packed them (kernel->unpack;
 * engine/weights.c does the same for engines and plans).  Without it an in-process ViT-B/16 build held
 * the network's weights, the graph's constants, fuse_linear's copies and the packed copies at once. */
#include <stdint.h>

#include "builder/graph.h"
#include "core/alloc.h"
#include "network/op_table.h"

/* Does a weights attribute of a node other than `self` point at p? */
static int weights_use(const trtl_bgraph *g, const void *p, const trtl_weights *self)
{
    for (int32_t k = 0; k < g->nn; k++)
        if (trtl_params_weights_at(g->n[k].n.op, &g->n[k].n.p, p, self))
            return 1;
    return 0;
}

int trtl_bg_release_constant(trtl_bgraph *g, int32_t t)
{
    trtl_bg_tensor *c = &g->t[t];
    if (c->kind != TRTL_TK_CONSTANT || !c->data || trtl_bg_is_output(g, t) || trtl_bg_consumers(g, t, NULL) ||
        weights_use(g, c->data, NULL))
        return 0;
    for (int32_t u = 0; u < g->nt; u++)
        if (u != t && g->t[u].data == c->data)
            return 0; /* another tensor shares the buffer */
    trtl_aligned_free(c->data);
    c->data = NULL;
    return 1;
}

void trtl_bg_release_unused_constants(trtl_bgraph *g)
{
    for (int32_t t = 0; t < g->nt; t++)
        trtl_bg_release_constant(g, t);
}

void trtl_bg_drop_plain_weights(trtl_bgraph *g, int32_t i)
{
    trtl_node *n = &g->n[i].n;
    if (((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u) || !n->kernel || !n->kernel->unpack || !n->kstate)
        return;
    trtl_weights *w = trtl_node_packed_weights(n);
    if (!w || !w->values)
        return;
    void *p = (void *)(uintptr_t)w->values;
    w->values = NULL;
    trtl_bg_release_weights(g, p);
}

void trtl_bg_release_weights(trtl_bgraph *g, const void *p)
{
    if (!p || weights_use(g, p, NULL))
        return;
    for (int32_t t = 0; t < g->nt; t++)
        if (g->t[t].data == p)
            return;
    for (int32_t k = 0; k < g->n_owned; k++)
        if (g->owned[k] == p) {
            trtl_aligned_free(g->owned[k]);
            g->owned[k] = g->owned[--g->n_owned];
            return;
        }
}
