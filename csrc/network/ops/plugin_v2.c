/* plugin_v2.c -- STUB: to be implemented. */
#include "network/op_table.h"
#include "core/status.h"

const trtl_attr_desc trtl_attrs_plugin_v2[] = {
    {"__stub", TRTL_ATTR_INT, 0, 0, NULL, TRTL_ATTRF_INTERNAL},
};
TRTL_NATTRS(plugin_v2);

void trtl_init_plugin_v2(trtl_params *p) { (void)p; }

trtl_status trtl_lower_plugin_v2(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}

trtl_status trtl_infer_plugin_v2(const trtl_infer_ctx *c)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': plugin_v2 is not implemented yet", c->layer_name);
}
