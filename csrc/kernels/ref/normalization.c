/* Reference normalization kernel -- STUB. */
#include "network/op_table.h"
#include "core/status.h"

trtl_status trtl_ref_normalization(const trtl_kernel_args *a)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': normalization kernel not implemented", a->node->name);
}
