/* attention_geometry.c -- ATTENTION node geometry shared by its kernels (contract in the header). */
#include "kernels/attention_geometry.h"
#include "core/dims.h"
#include "core/status.h"

/* Strides of the batch dims of x (rank r, matrix of `mat` elements) against the output's. */
static void batch_strides(const trtl_dims *x, int nbd, int64_t mat, int64_t *st)
{
    int64_t s = mat;
    for (int d = nbd - 1; d >= 0; d--) {
        st[d] = x->d[d] == 1 ? 0 : s;
        s *= x->d[d];
    }
}

trtl_status trtl_attn_geom_init(const trtl_node *nd, const trtl_tensor_view *in, const trtl_dims *yd,
                                trtl_attn_geom *g)
{
    const trtl_attention_params *p = &nd->p.attn;
    const trtl_dims *q = &in[0].dims, *k = &in[1].dims, *v = &in[2].dims;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    int r = q->nb_dims;
    if (nd->n_in < 3 + (p->mask_mode ? 1 : 0) || r < 2 || k->nb_dims != r || v->nb_dims != r || yd->nb_dims != r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention inputs Q %s, K %s, V %s do not have one rank >= 2",
                          nd->name, trtl_dims_str(q, s1, sizeof s1), trtl_dims_str(k, s2, sizeof s2),
                          trtl_dims_str(v, s3, sizeof s3));
    for (int i = 0; i < nd->n_in; i++)
        if (in[i].dtype != TRTL_FLOAT && !(i == 3 && in[i].dtype == TRTL_BOOL && p->mask_mode == 1))
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': attention needs FLOAT inputs (and a FLOAT or BOOL mask)",
                              nd->name);
    g->nbd = r - 2;
    g->Sq = q->d[r - 2];
    g->D = q->d[r - 1];
    g->Sk = k->d[p->k_transposed ? r - 1 : r - 2];
    g->Dv = v->d[r - 1];
    g->scale = p->scale;
    g->has_mask = p->mask_mode != 0;
    g->m_period0 = 0;
    g->mask_bool = g->has_mask && in[3].dtype == TRTL_BOOL;
    g->norm_none = p->norm_op == TRTL_ATTN_NORM_NONE;
    g->causal = p->causal != 0;
    g->causal_off = p->causal_lower_right ? g->Sk - g->Sq : 0;
    g->empty_zero = p->empty_rows_zero != 0;
    int64_t kd = k->d[p->k_transposed ? r - 2 : r - 1];
    if (kd != g->D || v->d[r - 2] != g->Sk || yd->d[r - 2] != g->Sq || yd->d[r - 1] != g->Dv)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention Q %s, K %s (k_transposed %d), V %s do not agree",
                          nd->name, trtl_dims_str(q, s1, sizeof s1), trtl_dims_str(k, s2, sizeof s2),
                          (int)p->k_transposed, trtl_dims_str(v, s3, sizeof s3));
    g->nb = 1;
    for (int d = 0; d < g->nbd; d++) {
        int64_t o = yd->d[d];
        /* K / V may divide Q's heads (grouped-query attention) */
        int kg = k->d[d] > 1 && q->d[d] == o && o % k->d[d] == 0, vg = v->d[d] > 1 && q->d[d] == o && o % v->d[d] == 0;
        if ((q->d[d] != 1 && q->d[d] != o) || (k->d[d] != 1 && k->d[d] != o && !kg) ||
            (v->d[d] != 1 && v->d[d] != o && !vg))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention batch dim %d of Q %s, K %s, V %s does not broadcast to %lld",
                              nd->name, d, trtl_dims_str(q, s1, sizeof s1), trtl_dims_str(k, s2, sizeof s2),
                              trtl_dims_str(v, s3, sizeof s3), (long long)o);
        g->bdims[d] = o;
        g->krep[d] = k->d[d] > 1 ? o / k->d[d] : 1;
        g->vrep[d] = v->d[d] > 1 ? o / v->d[d] : 1;
        g->nb *= o;
    }
    batch_strides(q, g->nbd, g->Sq * g->D, g->qs);
    batch_strides(k, g->nbd, g->Sk * g->D, g->ks);
    batch_strides(v, g->nbd, g->Sk * g->Dv, g->vs);
    g->k_row = p->k_transposed ? 1 : g->D;
    g->k_col = p->k_transposed ? g->Sk : 1;
    g->m_row = g->m_col = 0;
    for (int d = 0; d < g->nbd; d++)
        g->ms[d] = 0;
    if (g->has_mask) {
        const trtl_dims *m = &in[3].dims;
        if (m->nb_dims != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention mask %s must have rank %d", nd->name,
                              trtl_dims_str(m, s1, sizeof s1), r);
        int64_t s = 1;
        for (int d = r - 1; d >= 0; d--) {
            int64_t want = d == r - 1 ? g->Sk : d == r - 2 ? g->Sq : g->bdims[d];
            if (d == 0 && r > 2 && p->mask_mode == 2) {
                if (m->d[0] < 1 || want % m->d[0])
                    return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention window mask %s: dim 0 does not divide %lld",
                                      nd->name, trtl_dims_str(m, s1, sizeof s1), (long long)want);
                g->m_period0 = m->d[0];
                want = m->d[0];
            }
            if (m->d[d] != 1 && m->d[d] != want)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention mask %s does not broadcast to the scores (dim %d: %lld)",
                                  nd->name, trtl_dims_str(m, s1, sizeof s1), d, (long long)want);
            int64_t st = m->d[d] == 1 ? 0 : s;
            if (d == r - 1)
                g->m_col = st;
            else if (d == r - 2)
                g->m_row = st;
            else
                g->ms[d] = st;
            s *= m->d[d];
        }
    }
    return TRTL_OK;
}
