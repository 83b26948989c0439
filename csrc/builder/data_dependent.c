/* data_dependent.c -- the builder's checks for data-dependent shapes (NonZero, NMS; engine/data_dependent.h).
 * Their consumers run with shapes re-inferred after the step (engine/context.c); a plugin (its shapes were
 * asked at build time, its workspace sized once) and a loop or conditional (its bodies are resolved with
 * the step's input shapes before execution) cannot, so a data-dependent tensor feeding one is a build
 * error naming the layer, as is a data-dependent layer inside a loop or conditional. */
#include <stdlib.h>

#include "builder/data_dependent.h"
#include "engine/data_dependent.h"
#include "core/status.h"

trtl_status trtl_check_data_dependent(const trtl_bgraph *g)
{
    char *dd = calloc((size_t)(g->nt ? g->nt : 1), 1);
    if (!dd)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    trtl_status st = TRTL_OK;
    for (int32_t i = 0; i < g->nn && st == TRTL_OK; i++) { /* topological order (trtl_bg_sort) */
        const trtl_bg_node *b = &g->n[i];
        if (b->dead)
            continue;
        int from = trtl_dd_op(b->n.op), in_dd = 0;
        for (int32_t j = 0; j < b->n.n_in; j++)
            in_dd |= dd[b->n.in[j]];
        if (in_dd && (b->n.op == TRTL_OP_PLUGIN_V2 || b->n.op == TRTL_OP_CONTROL_FLOW))
            st = trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': a %s cannot read a tensor of data-dependent shape "
                            "(computed from a NonZero / NMS layer); only built-in layers can", b->n.name,
                            b->n.op == TRTL_OP_PLUGIN_V2 ? "plugin" : "loop or conditional");
        for (int32_t j = 0; (from || in_dd) && j < b->n.n_out; j++)
            dd[b->n.out[j]] = 1;
    }
    free(dd);
    return st;
}
