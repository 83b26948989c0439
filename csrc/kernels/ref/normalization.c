/* Reference normalization: for every slice of the dims that are not normalized, mean and biased
 * variance in double (two passes), then y = (x - mean) / sqrt(var + eps) * scale + bias with scale
 * and bias broadcast.  Group norm splits dim 1 into [G, C/G]: G is kept, C/G joins the reduction.
 * out_quant 2 (builder/passes/norm_codes.c) stores QuantizeLinear((float)y) as the output's codes. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/ref_index.h"
#include "kernels/ref/qdq_math.h"

/* Offset into a broadcast parameter for input offset `off`; with group_div > 0 the parameter has
 * one value per group along dim 1 (channel c uses entry c / group_div). */
static int64_t param_offset(int64_t off, const trtl_dims *xd, const int64_t *pst, int r, int64_t group_div)
{
    int64_t o = 0;
    for (int d = r - 1; d >= 0; d--) {
        int64_t c = off % xd->d[d];
        off /= xd->d[d];
        if (d == 1 && group_div > 0)
            c /= group_div;
        o += c * pst[d];
    }
    return o;
}

trtl_status trtl_ref_normalization(const trtl_kernel_args *a)
{
    const trtl_normalization_params *p = &a->node->p.norm;
    const trtl_dims *xd = &a->in[0].dims, *sd = &a->in[1].dims, *bd = &a->in[2].dims;
    const float *x = (const float *)a->in[0].data, *sc = (const float *)a->in[1].data,
                *bi = (const float *)a->in[2].data;
    void *y = a->out[0].data;
    const int codes = p->out_quant == 2;
    if (codes && a->out[0].dtype != (trtl_dtype)p->out_type)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': the codes output is not %s (the plan is corrupt)",
                          a->node->name, trtl_dtype_name((trtl_dtype)p->out_type));
    int r = xd->nb_dims;
    int64_t G = p->num_groups;
    if (sd->nb_dims != r || bd->nb_dims != r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scale/bias rank differs from the input's", a->node->name);
    int per_group_s = G > 1 && r >= 2 && sd->d[1] == G && G != xd->d[1];
    int per_group_b = G > 1 && r >= 2 && bd->d[1] == G && G != xd->d[1];
    for (int d = 0; d < r; d++)
        if ((sd->d[d] != 1 && sd->d[d] != xd->d[d] && !(d == 1 && per_group_s)) ||
            (bd->d[d] != 1 && bd->d[d] != xd->d[d] && !(d == 1 && per_group_b)))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scale/bias do not broadcast to the input (dim %d)",
                              a->node->name, d);
    if (G > 1 && (r < 2 || xd->d[1] % G))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': channels not divisible by num_groups %lld", a->node->name,
                          (long long)G);
    int64_t ist[TRTL_MAX_DIMS], sst[TRTL_MAX_DIMS], bst[TRTL_MAX_DIMS];
    ref_strides(xd->d, r, ist);
    ref_bcast_strides(sd, sst);
    ref_bcast_strides(bd, bst);
    /* kept / reduced dims as (size, stride) lists; at most r + 1 entries in all */
    int64_t kd[TRTL_MAX_DIMS + 1], ks[TRTL_MAX_DIMS + 1], rd[TRTL_MAX_DIMS + 1], rs[TRTL_MAX_DIMS + 1];
    int nk = 0, nr = 0;
    for (int d = 0; d < r; d++) {
        if (d == 1 && G > 1) {
            kd[nk] = G;
            ks[nk++] = ist[1] * (xd->d[1] / G);
            rd[nr] = xd->d[1] / G;
            rs[nr++] = ist[1];
        } else if (p->axes & (1u << d)) {
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
    if (nred == 0)
        return TRTL_OK;
    for (int64_t k = 0; k < nkept; k++) {
        int64_t base = ref_offset(k, kd, ks, nk);
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < nred; j++)
            mean += x[base + ref_offset(j, rd, rs, nr)];
        mean /= (double)nred;
        for (int64_t j = 0; j < nred; j++) {
            double t = x[base + ref_offset(j, rd, rs, nr)] - mean;
            var += t * t;
        }
        var /= (double)nred;
        double rstd = 1.0 / sqrt(var + (double)p->epsilon);
        for (int64_t j = 0; j < nred; j++) {
            int64_t off = base + ref_offset(j, rd, rs, nr);
            int64_t cg = G > 1 ? xd->d[1] / G : 0;
            double s = sc[param_offset(off, xd, sst, r, per_group_s ? cg : 0)];
            double b = bi[param_offset(off, xd, bst, r, per_group_b ? cg : 0)];
            const float v = (float)(((double)x[off] - mean) * rstd * s + b);
            if (!codes) {
                ((float *)y)[off] = v;
                continue;
            }
            const int32_t q = trtl_q_value(v, p->out_scale, p->out_zero_point, p->out_type);
            if (p->out_type == TRTL_UINT8)
                ((uint8_t *)y)[off] = (uint8_t)q;
            else
                ((int8_t *)y)[off] = (int8_t)q;
        }
    }
    return TRTL_OK;
}
