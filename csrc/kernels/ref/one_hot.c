/* Reference one-hot kernel (ops/one_hot.c): y[outer, d, inner] = values[d == index ? 1 : 0]. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

trtl_status trtl_ref_one_hot(const trtl_kernel_args *a)
{
    const trtl_one_hot_params *o = &a->node->p.one_hot;
    const char *node = a->node->name;
    const trtl_dims *I = &a->in[0].dims, *Y = &a->out[0].dims;
    trtl_dtype vt = a->in[1].dtype;
    size_t es = trtl_dtype_size(vt);
    int32_t r = I->nb_dims, axis = o->axis;
    int64_t depth = o->depth;
    if (a->in[0].dtype != TRTL_INT32 || a->in[2].dtype != TRTL_INT32 || trtl_volume(&a->in[1].dims) != 2 ||
        trtl_volume(&a->in[2].dims) != 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': one-hot needs INT32 indices, 2 values and an INT32 depth", node);
    TRTL_TRY(trtl_ref_check_out_type(node, a->out[0].dtype, vt));
    int32_t dv;
    memcpy(&dv, a->in[2].data, 4);
    if (dv != depth)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': depth is %d at run time but was %lld when the engine "
                          "was built (depth must be a build-time constant)", node, (int)dv, (long long)depth);
    if (axis < 0 || axis > r || Y->nb_dims != r + 1 || Y->d[axis] != depth)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad one-hot output shape", node);
    int64_t outer = trtl_volume_range(I, 0, axis), inner = trtl_volume_range(I, axis, r);
    const int32_t *ind = (const int32_t *)a->in[0].data;
    const uint8_t *off = (const uint8_t *)a->in[1].data, *on = off + es;
    uint8_t *y = (uint8_t *)a->out[0].data;
    for (int64_t p = 0; p < outer; p++)
        for (int64_t d = 0; d < depth; d++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t v = ind[p * inner + i];
                if (v < 0)
                    v += depth;
                trtl_ref_copy_elem(y, v == d ? on : off, es);
                y += es;
            }
    return TRTL_OK;
}
