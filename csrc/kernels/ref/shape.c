/* Reference shape kernel: writes the input's dims (this execution's) as INT32; reads no data. */
#include "kernels/ref/ref.h"
#include "core/status.h"

trtl_status trtl_ref_shape(const trtl_kernel_args *a)
{
    int32_t *y = a->out[0].data;
    const trtl_dims *x = &a->in[0].dims;
    if (a->out[0].dtype != TRTL_INT32 || a->out[0].dims.nb_dims != 1 || a->out[0].dims.d[0] != x->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': shape output must be INT32 [%d]", a->node->name, (int)x->nb_dims);
    for (int32_t i = 0; i < x->nb_dims; i++) {
        if (x->d[i] > INT32_MAX)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': dimension %d (%lld) does not fit INT32", a->node->name,
                              (int)i, (long long)x->d[i]);
        y[i] = (int32_t)x->d[i];
    }
    return TRTL_OK;
}
