/* data_dependent.c -- which tensors of an engine have data-dependent dims (data_dependent.h). */
#include <stdlib.h>

#include "engine/data_dependent.h"

int trtl_dd_op(trtl_op op)
{
    return op == TRTL_OP_NON_ZERO || op == TRTL_OP_NMS;
}

char *trtl_dd_tensors(const trtl_engine *e, int *oom)
{
    *oom = 0;
    int any = 0;
    for (int32_t k = 0; k < e->n_nodes && !any; k++)
        any = trtl_dd_op(e->nodes[k].op);
    if (!any)
        return NULL;
    char *dd = calloc((size_t)(e->n_tensors ? e->n_tensors : 1), 1);
    if (!dd) {
        *oom = 1;
        return NULL;
    }
    for (int32_t k = 0; k < e->n_nodes; k++) { /* nodes are in topological order */
        const trtl_node *n = &e->nodes[k];
        int from = trtl_dd_op(n->op);
        for (int32_t j = 0; j < n->n_in && !from; j++)
            from = dd[n->in[j]];
        for (int32_t j = 0; from && j < n->n_out; j++)
            dd[n->out[j]] = 1;
    }
    return dd;
}
