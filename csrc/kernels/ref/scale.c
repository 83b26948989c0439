/* Reference scale: y = (x * scale + shift) ^ power in double; absent weights are 1 / 0 / (no pow). */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_scale(const trtl_kernel_args *a)
{
    const trtl_scale_params *p = &a->node->p.scale;
    const trtl_dims *xd = &a->in[0].dims;
    const float *x = (const float *)a->in[0].data;
    float *y = (float *)a->out[0].data;
    const float *sh = p->shift.count ? (const float *)p->shift.values : NULL;
    const float *sc = p->scale.count ? (const float *)p->scale.values : NULL;
    const float *pw = p->power.count ? (const float *)p->power.values : NULL;
    int64_t n = trtl_volume(xd), inner = 1, period = 1, want = 1;
    if (p->mode != TRTL_SCALE_UNIFORM) {
        if (p->channel_axis < 0 || p->channel_axis >= xd->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': channel_axis %d out of range", a->node->name,
                              (int)p->channel_axis);
        inner = trtl_volume_range(xd, p->channel_axis + 1, xd->nb_dims);
        period = trtl_volume_range(xd, p->channel_axis, xd->nb_dims);
        want = p->mode == TRTL_SCALE_CHANNEL ? xd->d[p->channel_axis] : period;
    }
    if ((sh && p->shift.count != want) || (sc && p->scale.count != want) || (pw && p->power.count != want))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': weight count does not match the input (expected %lld)",
                          a->node->name, (long long)want);
    for (int64_t i = 0; i < n; i++) {
        int64_t w;
        if (p->mode == TRTL_SCALE_UNIFORM)
            w = 0;
        else if (p->mode == TRTL_SCALE_CHANNEL)
            w = (i % period) / inner;
        else
            w = i % period;
        double v = (double)x[i] * (sc ? sc[w] : 1.0) + (sh ? sh[w] : 0.0);
        if (pw)
            v = pow(v, (double)pw[w]);
        y[i] = (float)v;
    }
    return TRTL_OK;
}
