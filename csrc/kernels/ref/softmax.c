/* Reference softmax: y = exp(x - max) / sum exp(x - max) along one axis, in double. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_softmax(const trtl_kernel_args *a)
{
    const trtl_dims *xd = &a->in[0].dims;
    const float *x = (const float *)a->in[0].data;
    float *y = (float *)a->out[0].data;
    int ax = trtl_single_axis(a->node->p.softmax.axes);
    if (ax < 0 || ax >= xd->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': softmax axis out of range", a->node->name);
    int64_t outer = trtl_volume_range(xd, 0, ax), D = xd->d[ax], inner = trtl_volume_range(xd, ax + 1, xd->nb_dims);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xs = x + o * D * inner + i;
            float *ys = y + o * D * inner + i;
            double mx = -INFINITY, sum = 0.0;
            for (int64_t d = 0; d < D; d++)
                if (xs[d * inner] > mx)
                    mx = xs[d * inner];
            for (int64_t d = 0; d < D; d++)
                sum += exp((double)xs[d * inner] - mx);
            for (int64_t d = 0; d < D; d++)
                ys[d * inner] = (float)(exp((double)xs[d * inner] - mx) / sum);
        }
    return TRTL_OK;
}
