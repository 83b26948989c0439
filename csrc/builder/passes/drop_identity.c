/* drop_identity.c -- identity removal: a same-dtype IDENTITY layer whose output is no network output is
 * dropped and its readers read its input.
 *
 *     y = identity(x);  z = relu(y)      ==>      z = relu(x)
 *
 * Importers and users make such layers for no-ops (ONNX Identity, Reduce with noop_with_empty_axes or no
 * axes, Tile with every repeat 1, Dropout at inference, add_identity in a script); each would otherwise be
 * a copy at run time and a fence between the layers around it that the fusions cannot see through, so
 * this pass runs first after dead-layer removal.  A conversion (the output's dtype differs: set_output_type,
 * a Cast lowered to identity) and an identity writing a network output (its output buffer must hold the
 * value) stay. */
#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/status.h"

trtl_status trtl_pass_drop_identity(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "identity removal");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *b = &g->n[i];
        const trtl_node *n = &b->n;
        if (b->dead || b->fixed_kernel || n->op != TRTL_OP_IDENTITY || n->n_in != 1 || n->n_out != 1 ||
            n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
            continue;
        int32_t x = n->in[0], y = n->out[0];
        if (x == y || g->t[x].dtype != g->t[y].dtype || trtl_bg_is_output(g, y) ||
            !trtl_pm_same_shape(&g->t[x], &g->t[y]))
            continue;
        b->dead = 1;
        trtl_pm_rewire(g, y, x);
        trtl_pass_log_add(&log, "'%s' removed: its readers read '%s'", n->name, g->t[x].name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
