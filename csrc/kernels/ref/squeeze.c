/* Reference squeeze / unsqueeze kernels (ops/squeeze.c): a reshape, so a copy of the bytes. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

static trtl_status copy(const trtl_kernel_args *a)
{
    int64_t n = trtl_volume(&a->in[0].dims);
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, a->in[0].dtype));
    if (trtl_volume(&a->out[0].dims) != n)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': squeeze/unsqueeze output has another volume", a->node->name);
    if (n > 0)
        memcpy(a->out[0].data, a->in[0].data, (size_t)n * trtl_dtype_size(a->in[0].dtype));
    return TRTL_OK;
}

trtl_status trtl_ref_squeeze(const trtl_kernel_args *a) { return copy(a); }
trtl_status trtl_ref_unsqueeze(const trtl_kernel_args *a) { return copy(a); }
