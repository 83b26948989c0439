/* Reference fully connected: y[b, k] = bias[k] + sum_j W[k, j] * x[b, j], j over C*H*W. */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_fully_connected(const trtl_kernel_args *a)
{
    const trtl_fc_params *p = &a->node->p.fc;
    const trtl_dims *xd = &a->in[0].dims;
    const float *x = (const float *)a->in[0].data, *w = (const float *)p->kernel.values;
    const float *b = p->bias.count ? (const float *)p->bias.values : NULL;
    float *y = (float *)a->out[0].data;
    int r = xd->nb_dims;
    int64_t B = trtl_volume_range(xd, 0, r - 3), J = trtl_volume_range(xd, r - 3, r), K = p->num_output_channels;
    if (p->kernel.count != K * J)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': kernel has %lld weights, input needs %lld * %lld",
                          a->node->name, (long long)p->kernel.count, (long long)K, (long long)J);
    for (int64_t n = 0; n < B; n++)
        for (int64_t k = 0; k < K; k++) {
            double acc = b ? b[k] : 0.0;
            for (int64_t j = 0; j < J; j++)
                acc += (double)w[k * J + j] * (double)x[n * J + j];
            y[n * K + k] = (float)acc;
        }
    return TRTL_OK;
}
