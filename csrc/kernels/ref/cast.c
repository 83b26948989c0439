/* Reference cast kernel: element conversion (rules in kernels/ref/convert.h).  The output view's
 * type is the one converted to, so a set_output_type() override is honoured too. */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/convert.h"

trtl_status trtl_ref_cast(const trtl_kernel_args *a)
{
    int64_t n = trtl_volume(&a->in[0].dims);
    if (n != trtl_volume(&a->out[0].dims))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': cast input and output sizes differ", a->node->name);
    trtl_status s = trtl_ref_convert_sat(a->out[0].data, a->out[0].dtype, a->in[0].data, a->in[0].dtype, n,
                                         a->node->p.cast.saturate);
    return s == TRTL_OK ? s : trtl_error_prefix("layer '%s'", a->node->name);
}
