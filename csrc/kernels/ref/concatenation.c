/* Reference concatenation kernel: for each index of the dims before the axis, copy each input's
 * contiguous block (its axis extent times the inner volume) in turn. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

trtl_status trtl_ref_concatenation(const trtl_kernel_args *a)
{
    const trtl_dims *O = &a->out[0].dims;
    int32_t axis = a->node->p.concat.axis, r = O->nb_dims;
    size_t es = trtl_dtype_size(a->out[0].dtype);
    if (axis < 0 || axis >= r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': concatenation axis %d out of range", a->node->name, (int)axis);
    /* A fused residual (never expected here) would be the last input, not a part. */
    int32_t n_parts = a->node->n_in - (a->node->epi.has_residual ? 1 : 0);
    int64_t outer = trtl_volume_range(O, 0, axis), inner = trtl_volume_range(O, axis + 1, r), total = 0;
    for (int32_t k = 0; k < n_parts; k++) {
        const trtl_dims *x = &a->in[k].dims;
        TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, a->in[k].dtype));
        if (x->nb_dims != r ||
            trtl_volume_range(x, 0, axis) != outer || trtl_volume_range(x, axis + 1, r) != inner)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d does not fit the concatenated output",
                              a->node->name, (int)k);
        total += x->d[axis];
    }
    if (total != O->d[axis])
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': inputs add up to %lld along axis %d, the output has %lld",
                          a->node->name, (long long)total, (int)axis, (long long)O->d[axis]);
    uint8_t *y = (uint8_t *)a->out[0].data;
    for (int64_t o = 0; o < outer; o++)
        for (int32_t k = 0; k < n_parts; k++) {
            size_t bytes = (size_t)(a->in[k].dims.d[axis] * inner) * es;
            if (bytes) {
                memcpy(y, (const uint8_t *)a->in[k].data + (size_t)o * bytes, bytes);
                y += bytes;
            }
        }
    return TRTL_OK;
}
