/* Reference reduce: one accumulation per output element over the reduced dims.  FLOAT accumulates
 * in double; INT32 in unsigned 64-bit, so SUM/PROD wrap modulo 2^32 like int32 arithmetic; INT64 in
 * unsigned 64-bit too, wrapping modulo 2^64. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/ref_index.h"
#include "core/axes_values.h"

trtl_status trtl_ref_reduce(const trtl_kernel_args *a)
{
    const trtl_reduce_params *p = &a->node->p.reduce;
    const trtl_dims *xd = &a->in[0].dims;
    int r = xd->nb_dims;
    uint32_t axes = p->axes;
    if (a->node->n_in > 1) { /* run-time axes (network/ops/reduce.c): validated with the shapes, read again here */
        const trtl_dims *ad = &a->in[1].dims;
        int64_t k = ad->nb_dims == 0 ? 1 : ad->d[0], v[TRTL_MAX_DIMS];
        if (ad->nb_dims > 1 || k > TRTL_MAX_DIMS || k > r || a->in[1].dtype != TRTL_INT32)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad reduce axes tensor", a->node->name);
        for (int64_t i = 0; i < k; i++)
            v[i] = ((const int32_t *)a->in[1].data)[i];
        if (k == 0)
            axes = (1u << r) - 1u;
        else
            TRTL_TRY(trtl_axes_values_mask(a->node->name, "the reduce axes (input 1)", v, k, r, &axes));
    }
    int64_t ist[TRTL_MAX_DIMS], kd[TRTL_MAX_DIMS], ks[TRTL_MAX_DIMS], rd[TRTL_MAX_DIMS], rs[TRTL_MAX_DIMS];
    int nk = 0, nr = 0;
    ref_strides(xd->d, r, ist);
    for (int d = 0; d < r; d++) {
        if (axes & (1u << d)) {
            rd[nr] = xd->d[d];
            rs[nr++] = ist[d];
        } else {
            kd[nk] = xd->d[d];
            ks[nk++] = ist[d];
        }
    }
    int64_t nkept = 1, nred = 1;
    for (int i = 0; i < nk; i++)
        nkept *= kd[i];
    for (int i = 0; i < nr; i++)
        nred *= rd[i];
    if (a->in[0].dtype == TRTL_INT32) {
        const int32_t *x = (const int32_t *)a->in[0].data;
        int32_t *y = (int32_t *)a->out[0].data;
        for (int64_t k = 0; k < nkept; k++) {
            int64_t base = ref_offset(k, kd, ks, nk);
            uint64_t acc = p->op == TRTL_RED_PROD ? 1u : 0u;
            int32_t best = p->op == TRTL_RED_MAX ? INT32_MIN : INT32_MAX;
            for (int64_t j = 0; j < nred; j++) {
                int32_t v = x[base + ref_offset(j, rd, rs, nr)];
                if (p->op == TRTL_RED_SUM)
                    acc += (uint64_t)(int64_t)v;
                else if (p->op == TRTL_RED_PROD)
                    acc *= (uint64_t)(int64_t)v;
                else if (p->op == TRTL_RED_MAX ? v > best : v < best)
                    best = v;
            }
            if (p->op == TRTL_RED_SUM || p->op == TRTL_RED_PROD) {
                uint32_t lo = (uint32_t)acc;
                y[k] = lo <= (uint32_t)INT32_MAX ? (int32_t)lo : (int32_t)(lo - 2147483648u) + INT32_MIN;
            } else {
                y[k] = best;
            }
        }
        return TRTL_OK;
    }
    if (a->in[0].dtype == TRTL_INT64) {
        const int64_t *x = (const int64_t *)a->in[0].data;
        int64_t *y = (int64_t *)a->out[0].data;
        for (int64_t k = 0; k < nkept; k++) {
            int64_t base = ref_offset(k, kd, ks, nk);
            uint64_t acc = p->op == TRTL_RED_PROD ? 1u : 0u;
            int64_t best = p->op == TRTL_RED_MAX ? INT64_MIN : INT64_MAX;
            for (int64_t j = 0; j < nred; j++) {
                int64_t v = x[base + ref_offset(j, rd, rs, nr)];
                if (p->op == TRTL_RED_SUM)
                    acc += (uint64_t)v;
                else if (p->op == TRTL_RED_PROD)
                    acc *= (uint64_t)v;
                else if (p->op == TRTL_RED_MAX ? v > best : v < best)
                    best = v;
            }
            if (p->op == TRTL_RED_SUM || p->op == TRTL_RED_PROD)
                y[k] = acc <= (uint64_t)INT64_MAX ? (int64_t)acc : (int64_t)(acc - (uint64_t)INT64_MAX - 1u) + INT64_MIN;
            else
                y[k] = best;
        }
        return TRTL_OK;
    }
    if (a->in[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': reduce kernel needs FLOAT, INT32 or INT64", a->node->name);
    const float *x = (const float *)a->in[0].data;
    float *y = (float *)a->out[0].data;
    for (int64_t k = 0; k < nkept; k++) {
        int64_t base = ref_offset(k, kd, ks, nk);
        double acc;
        switch (p->op) {
        case TRTL_RED_PROD: acc = 1.0; break;
        case TRTL_RED_MAX: acc = -INFINITY; break;
        case TRTL_RED_MIN: acc = INFINITY; break;
        default: acc = 0.0; break;
        }
        for (int64_t j = 0; j < nred; j++) {
            double v = x[base + ref_offset(j, rd, rs, nr)];
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
