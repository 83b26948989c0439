/* Reference constant kernel: copies the weights into the output, converting when their type
 * differs from the output's (HALF weights not yet converted by the builder, or an output type
 * override). */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/convert.h"

trtl_status trtl_ref_constant(const trtl_kernel_args *a)
{
    const trtl_weights *w = &a->node->p.constant.weights;
    int64_t n = trtl_volume(&a->out[0].dims);
    if (w->count != n)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': constant has %lld values for an output of %lld",
                          a->node->name, (long long)w->count, (long long)n);
    trtl_status s = trtl_ref_convert(a->out[0].data, a->out[0].dtype, w->values, w->type, n);
    return s == TRTL_OK ? s : trtl_error_prefix("layer '%s'", a->node->name);
}
