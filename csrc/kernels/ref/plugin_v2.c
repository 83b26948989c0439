/* Reference plugin_v2 kernel -- STUB. */
#include "network/op_table.h"
#include "core/status.h"

trtl_status trtl_ref_plugin_v2(const trtl_kernel_args *a)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': plugin_v2 kernel not implemented", a->node->name);
}
