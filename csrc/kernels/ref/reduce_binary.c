/* Reference REDUCE_BINARY (network/ops/reduce_binary.c): y = reduce(unary(a ew b)).  Each element
 * v = unary(a ew b) is computed in float, as the elementwise and unary reference kernels would store it,
 * then reduced in double as the reference reduce does (NaN kept by MAX / MIN; AVG divides by the count). */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/ref_index.h"

trtl_status trtl_ref_reduce_binary(const trtl_kernel_args *a)
{
    const trtl_reduce_binary_params *p = &a->node->p.rbin;
    const trtl_dims *ad = &a->in[0].dims, *bd = &a->in[1].dims;
    int r = ad->nb_dims;
    if (bd->nb_dims != r || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': reduce binary needs FLOAT inputs of equal rank", a->node->name);
    int64_t xd[TRTL_MAX_DIMS], sa[TRTL_MAX_DIMS], sb[TRTL_MAX_DIMS];
    ref_bcast_strides(ad, sa);
    ref_bcast_strides(bd, sb);
    for (int d = 0; d < r; d++)
        xd[d] = ad->d[d] == 1 ? bd->d[d] : ad->d[d];
    int64_t kd[TRTL_MAX_DIMS], ka[TRTL_MAX_DIMS], kb[TRTL_MAX_DIMS];
    int64_t rd[TRTL_MAX_DIMS], ra[TRTL_MAX_DIMS], rb[TRTL_MAX_DIMS];
    int nk = 0, nr = 0;
    for (int d = 0; d < r; d++) {
        if (p->axes & (1u << d)) {
            rd[nr] = xd[d];
            ra[nr] = sa[d];
            rb[nr++] = sb[d];
        } else {
            kd[nk] = xd[d];
            ka[nk] = sa[d];
            kb[nk++] = sb[d];
        }
    }
    int64_t nkept = 1, nred = 1;
    for (int i = 0; i < nk; i++)
        nkept *= kd[i];
    for (int i = 0; i < nr; i++)
        nred *= rd[i];
    const float *x0 = a->in[0].data, *x1 = a->in[1].data;
    float *y = a->out[0].data;
    for (int64_t k = 0; k < nkept; k++) {
        const float *pa = x0 + ref_offset(k, kd, ka, nk), *pb = x1 + ref_offset(k, kd, kb, nk);
        double acc = p->op == TRTL_RED_PROD ? 1.0 : p->op == TRTL_RED_MAX ? -INFINITY
                     : p->op == TRTL_RED_MIN ? INFINITY : 0.0;
        for (int64_t j = 0; j < nred; j++) {
            float u = pa[ref_offset(j, rd, ra, nr)], w = pb[ref_offset(j, rd, rb, nr)];
            float e = p->ew_op == TRTL_EW_SUM ? u + w : p->ew_op == TRTL_EW_PROD ? u * w : u - w;
            double v = p->unary_op == TRTL_UN_ABS ? fabsf(e) : e;
            switch (p->op) {
            case TRTL_RED_PROD: acc *= v; break;
            case TRTL_RED_MAX: acc = (v > acc || isnan(v)) ? v : acc; break;
            case TRTL_RED_MIN: acc = (v < acc || isnan(v)) ? v : acc; break;
            default: acc += v; break;
            }
        }
        if (p->op == TRTL_RED_AVG)
            acc /= (double)nred;
        y[k] = (float)acc;
    }
    return TRTL_OK;
}
