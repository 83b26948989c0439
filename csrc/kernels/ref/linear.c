/* Reference LINEAR: y[m, n] = bias[n] + sum_j W[n, j] * x[m, j] (sums in double), m over every leading dim. */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_linear(const trtl_kernel_args *a)
{
    const trtl_fc_params *p = &a->node->p.fc;
    const float *x = (const float *)a->in[0].data, *w = (const float *)p->kernel.values;
    const float *b = p->bias.count ? (const float *)p->bias.values : NULL;
    float *y = (float *)a->out[0].data;
    const int64_t N = p->num_output_channels, D = N > 0 ? p->kernel.count / N : 0, vol = trtl_volume(&a->in[0].dims);
    if (N < 1 || D < 1 || p->kernel.count != N * D || vol < 0 || vol % D ||
        trtl_volume(&a->out[0].dims) != vol / D * N)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': linear input of %lld values does not fit %lld x %lld weights",
                          a->node->name, (long long)vol, (long long)N, (long long)D);
    for (int64_t m = 0, M = vol / D; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = b ? b[n] : 0.0;
            for (int64_t j = 0; j < D; j++)
                acc += (double)w[n * D + j] * (double)x[m * D + j];
            y[m * N + n] = (float)acc;
        }
    return TRTL_OK;
}
