/* Reference fully_connected kernel -- STUB. */
#include "network/op_table.h"
#include "core/status.h"

trtl_status trtl_ref_fully_connected(const trtl_kernel_args *a)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': fully_connected kernel not implemented", a->node->name);
}
