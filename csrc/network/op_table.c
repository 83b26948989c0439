/* op_table.c -- the per-op trait table generated from ops.def, and attribute lookup. */
#include <string.h>
#include "network/op_table.h"

const trtl_op_info trtl_op_table[TRTL_OP_COUNT] = {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no)                                                    \
    [TRTL_OP_##E] = {#E, cls, lt, disp, mi, ma, no, trtl_init_##l, trtl_lower_##l, trtl_infer_##l, \
                     trtl_attrs_##l, &trtl_nattrs_##l},
#include "trtlite/ops.def"
#undef TRTL_OP
};

const trtl_attr_desc *trtl_attr_find(trtl_op op, const char *name)
{
    if ((int)op < 0 || op >= TRTL_OP_COUNT || !name)
        return NULL;
    const trtl_op_info *info = &trtl_op_table[op];
    for (int32_t i = 0; i < *info->nattrs; i++)
        if (strcmp(info->attrs[i].name, name) == 0)
            return &info->attrs[i];
    return NULL;
}

int trtl_params_weights_at(trtl_op op, const trtl_params *prm, const void *p, const trtl_weights *self)
{
    if (op == TRTL_OP_PLUGIN_V2 || op == TRTL_OP_CONTROL_FLOW)
        return 0;
    const trtl_op_info *info = &trtl_op_table[op];
    for (int32_t i = 0; i < *info->nattrs; i++) {
        const trtl_attr_desc *d = &info->attrs[i];
        if (d->type != TRTL_ATTR_WEIGHTS)
            continue;
        const trtl_weights *w = (const trtl_weights *)((const char *)prm + d->offset);
        if (w != self && w->values == p)
            return 1;
    }
    return 0;
}
