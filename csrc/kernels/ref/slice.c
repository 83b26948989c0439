/* Reference slice kernel: the resampling copy of strided.h with the layer's start/stride/mode. */
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

trtl_status trtl_ref_slice(const trtl_kernel_args *a)
{
    const trtl_slice_params *p = &a->node->p.slice;
    int32_t r = a->in[0].dims.nb_dims;
    if (p->start.nb_dims != r || p->stride.nb_dims != r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': slice start/stride have %d/%d dims, the input has %d",
                          a->node->name, (int)p->start.nb_dims, (int)p->stride.nb_dims, (int)r);
    /* FILL value (TensorRT's optional input 4, captured as a constant when it was set). */
    float f = p->fill_value;
    int32_t i = (int32_t)f;
    const void *fill = a->out[0].dtype == TRTL_FLOAT ? (const void *)&f
                       : a->out[0].dtype == TRTL_INT32 ? (const void *)&i : NULL;
    return trtl_ref_sample(a->node->name, &a->in[0], &a->out[0], p->start.d, p->stride.d, p->mode, fill);
}
