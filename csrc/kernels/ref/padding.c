/* Reference padding kernel -- STUB. */
#include "network/op_table.h"
#include "core/status.h"

trtl_status trtl_ref_padding(const trtl_kernel_args *a)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': padding kernel not implemented", a->node->name);
}
