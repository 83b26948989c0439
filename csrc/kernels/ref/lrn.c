/* Reference LRN across channels (dim 1); channels outside [0, C) contribute nothing (the window is
 * clipped, the divisor stays window_size). */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_lrn(const trtl_kernel_args *a)
{
    const trtl_lrn_params *p = &a->node->p.lrn;
    const trtl_dims *xd = &a->in[0].dims;
    const float *x = (const float *)a->in[0].data;
    float *y = (float *)a->out[0].data;
    if (xd->nb_dims < 3)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': LRN needs at least 3 dims", a->node->name);
    int64_t N = xd->d[0], C = xd->d[1], inner = trtl_volume_range(xd, 2, xd->nb_dims), half = (p->window_size - 1) / 2;
    double alpha_n = (double)p->alpha / (double)p->window_size;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < inner; i++) {
                double sq = 0.0;
                int64_t lo = c - half < 0 ? 0 : c - half, hi = c + half >= C ? C - 1 : c + half;
                for (int64_t cc = lo; cc <= hi; cc++) {
                    double v = x[(n * C + cc) * inner + i];
                    sq += v * v;
                }
                int64_t at = (n * C + c) * inner + i;
                y[at] = (float)((double)x[at] / pow((double)p->k + alpha_n * sq, (double)p->beta));
            }
    return TRTL_OK;
}
