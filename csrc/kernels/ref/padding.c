/* Reference padding kernel: a FILL-mode resampling copy starting at -pre_padding in padded dims. */
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

trtl_status trtl_ref_padding(const trtl_kernel_args *a)
{
    const trtl_padding_params *p = &a->node->p.pad;
    int32_t r = a->in[0].dims.nb_dims, nb = p->pre_padding.nb_dims, off = r - nb;
    if (off < 0)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': padding covers %d dims but the input has %d", a->node->name,
                          (int)nb, (int)r);
    int64_t start[TRTL_MAX_DIMS], step[TRTL_MAX_DIMS];
    for (int32_t i = 0; i < r; i++) {
        start[i] = i < off ? 0 : -p->pre_padding.d[i - off];
        step[i] = 1;
    }
    return trtl_ref_sample(a->node->name, &a->in[0], &a->out[0], start, step, TRTL_SLICE_FILL, NULL);
}
