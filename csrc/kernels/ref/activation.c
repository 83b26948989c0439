/* Reference activation kernel. */
#include "kernels/ref/ref.h"
#include "core/dims.h"

trtl_status trtl_ref_activation(const trtl_kernel_args *a)
{
    const trtl_activation_params *p = &a->node->p.act;
    const float *x = (const float *)a->in[0].data;
    float *y = (float *)a->out[0].data;
    int64_t n = trtl_volume(&a->in[0].dims);
    for (int64_t i = 0; i < n; i++)
        y[i] = trtl_activation_eval(p->type, p->alpha, p->beta, x[i]);
    return TRTL_OK;
}
