/* Reference reduce kernel -- STUB. */
#include "network/op_table.h"
#include "core/status.h"

trtl_status trtl_ref_reduce(const trtl_kernel_args *a)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': reduce kernel not implemented", a->node->name);
}
