/* Reference fill kernel (network/ops/fill.c): LINSPACE accumulates in double (FLOAT) or wrapping 64-bit
 * integers (INT32, as int32 arithmetic); the random operations hash (seed, element index) with
 * splitmix64 into 53-bit uniforms (Box-Muller for NORMAL), so values do not depend on threads or runs. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "core/dims.h"

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) from (seed, i, stream). */
static double uniform(uint32_t seed, int64_t i, uint32_t stream)
{
    uint64_t h = mix(mix(((uint64_t)seed << 32) | stream) ^ (uint64_t)i);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* One scalar of input j (0-D / one element) as double, else the attribute. */
static double param(const trtl_kernel_args *a, int32_t j, float attr)
{
    if (a->node->n_in <= j)
        return attr;
    return a->in[j].dtype == TRTL_INT32 ? (double)((const int32_t *)a->in[j].data)[0]
                                        : (double)((const float *)a->in[j].data)[0];
}

trtl_status trtl_ref_fill(const trtl_kernel_args *a)
{
    const trtl_fill_params *f = &a->node->p.fill;
    const trtl_dims *od = &a->out[0].dims;
    int64_t n = trtl_volume(od);
    int32_t r = od->nb_dims;
    if (f->op == TRTL_FILL_LINSPACE) {
        double alpha = param(a, 1, f->alpha), delta[TRTL_MAX_DIMS];
        int per_dim = a->node->n_in > 2;
        if (per_dim && (a->in[2].dims.nb_dims != 1 || a->in[2].dims.d[0] != r))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': beta (input 2) needs %d deltas", a->node->name, (int)r);
        for (int32_t k = 0; k < r; k++)
            delta[k] = !per_dim ? f->beta
                       : a->in[2].dtype == TRTL_INT32 ? (double)((const int32_t *)a->in[2].data)[k]
                                                      : (double)((const float *)a->in[2].data)[k];
        int64_t idx[TRTL_MAX_DIMS] = {0};
        for (int64_t e = 0; e < n; e++) {
            if (a->out[0].dtype == TRTL_INT32) {
                uint64_t v = (uint64_t)(int64_t)alpha;
                for (int32_t k = 0; k < r; k++)
                    v += (uint64_t)(int64_t)delta[k] * (uint64_t)idx[k];
                uint32_t lo = (uint32_t)v;
                ((int32_t *)a->out[0].data)[e] = lo <= (uint32_t)INT32_MAX ? (int32_t)lo
                                                                           : (int32_t)(lo - 2147483648u) + INT32_MIN;
            } else {
                double v = alpha;
                for (int32_t k = 0; k < r; k++)
                    v += delta[k] * (double)idx[k];
                ((float *)a->out[0].data)[e] = (float)v;
            }
            for (int32_t k = r - 1; k >= 0; k--) { /* next multi-index, row-major */
                if (++idx[k] < od->d[k])
                    break;
                idx[k] = 0;
            }
        }
        return TRTL_OK;
    }
    if (a->out[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': random fills make FLOAT", a->node->name);
    double alpha = param(a, 1, f->alpha), beta = param(a, 2, f->beta);
    float *y = (float *)a->out[0].data;
    uint32_t seed = (uint32_t)f->seed;
    for (int64_t e = 0; e < n; e++) {
        if (f->op == TRTL_FILL_RANDOM_UNIFORM) {
            y[e] = (float)(alpha + (beta - alpha) * uniform(seed, e, 0));
        } else {
            double u1 = 1.0 - uniform(seed, e, 1), u2 = uniform(seed, e, 2); /* u1 in (0, 1] */
            y[e] = (float)(alpha + beta * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        }
    }
    return TRTL_OK;
}
