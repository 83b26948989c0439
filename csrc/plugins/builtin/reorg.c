/* reorg.c -- Reorg_TRT: STUB, to be implemented. */
#include <stdio.h>
#include "plugins/builtin/builtins.h"

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)self;
    (void)fields;
    snprintf(msg, msg_len, "%s: Reorg_TRT is not implemented yet", layer_name);
    return NULL;
}

const trtl_plugin_creator trtl_creator_reorg = {
    sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "Reorg_TRT", "1", "", NULL, 0, create, NULL};
