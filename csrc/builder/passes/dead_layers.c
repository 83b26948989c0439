/* dead_layers.c -- removes layers none of whose outputs reach a network output (assertions, which
 * have none, stay).
 * Fixed-point sweep, so it does not depend on node order. */
#include <stdlib.h>
#include "builder/passes/passes.h"
#include "core/status.h"

trtl_status trtl_pass_dead_layers(trtl_bgraph *g)
{
    int32_t *uses = malloc(sizeof(int32_t) * (size_t)(g->nt ? g->nt : 1));
    if (!uses)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    trtl_pass_log log;
    trtl_pass_log_init(&log, "dead-layer removal");
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int32_t i = 0; i < g->nt; i++)
            uses[i] = 0;
        for (int32_t i = 0; i < g->n_outputs; i++)
            uses[g->outputs[i]]++;
        for (int32_t i = 0; i < g->nn; i++)
            if (!g->n[i].dead)
                for (int32_t j = 0; j < g->n[i].n.n_in; j++)
                    uses[g->n[i].n.in[j]]++;
        for (int32_t i = 0; i < g->nn; i++) {
            trtl_bg_node *b = &g->n[i];
            if (b->dead)
                continue;
            int used = b->n.op == TRTL_OP_ASSERTION; /* no outputs: kept for its check */
            for (int32_t j = 0; j < b->n.n_out; j++)
                used |= uses[b->n.out[j]] > 0;
            if (!used) {
                b->dead = 1;
                changed = 1;
                trtl_pass_log_add(&log, "removed layer '%s' (its outputs are never used)", b->n.name);
            }
        }
    }
    free(uses);
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
