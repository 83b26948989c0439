/* match.c -- graph-matching helpers shared by the pattern-fusion passes (contracts in match.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/match.h"
#include "core/dims.h"

int trtl_pm_scalar(const trtl_bgraph *g, int32_t t, float *v)
{
    const trtl_bg_tensor *c = &g->t[t];
    if (c->kind != TRTL_TK_CONSTANT || c->dtype != TRTL_FLOAT || !c->data || trtl_volume(&c->dmax) != 1)
        return 0;
    *v = *(const float *)c->data;
    return 1;
}

int32_t trtl_pm_inner(const trtl_bgraph *g, int32_t t, int32_t uses)
{
    int32_t p = g->t[t].producer;
    if (p < 0 || g->n[p].dead || g->n[p].n.n_out != 1 || g->n[p].n.epi.act != TRTL_ACT_NONE ||
        g->n[p].n.epi.has_residual || g->t[t].dtype != TRTL_FLOAT || trtl_bg_is_output(g, t) ||
        trtl_bg_consumers(g, t, NULL) != uses)
        return -1;
    return p;
}

int trtl_pm_is_ew(const trtl_bgraph *g, int32_t i, int32_t op)
{
    const trtl_node *n = &g->n[i].n;
    return !g->n[i].dead && n->op == TRTL_OP_ELEMENTWISE && n->p.ew.op == op && n->n_in == 2 &&
           n->epi.act == TRTL_ACT_NONE && !n->epi.has_residual;
}

int trtl_pm_is_unary(const trtl_bgraph *g, int32_t i, int32_t op)
{
    const trtl_node *n = &g->n[i].n;
    return n->op == TRTL_OP_UNARY && n->p.unary.op == op && n->n_in == 1;
}

int trtl_pm_same_shape(const trtl_bg_tensor *a, const trtl_bg_tensor *b)
{
    return trtl_dims_equal(&a->dmin, &b->dmin) && trtl_dims_equal(&a->dopt, &b->dopt) &&
           trtl_dims_equal(&a->dmax, &b->dmax);
}

static int by_index(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

void trtl_pm_sort_nodes(int32_t *nodes, int32_t n)
{
    qsort(nodes, (size_t)n, sizeof nodes[0], by_index);
}

char *trtl_pm_join_names(const trtl_bgraph *g, const int32_t *nodes, int32_t n)
{
    char *name = strdup(g->n[nodes[0]].n.name);
    for (int32_t k = 1; name && k < n; k++) {
        char *j = trtl_bg_join_names(name, g->n[nodes[k]].n.name);
        free(name);
        name = j;
    }
    if (!name)
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    return name;
}

void trtl_pm_replace(trtl_bgraph *g, int32_t fi, const int32_t *nodes, int32_t n, trtl_op op, const trtl_params *p,
                     const int32_t *in, int32_t n_in, char *name)
{
    for (int32_t k = 0; k < n; k++)
        if (nodes[k] != fi)
            g->n[nodes[k]].dead = 1;
    trtl_node *f = &g->n[fi].n;
    f->op = op;
    f->p = *p;
    f->n_in = n_in;
    for (int32_t k = 0; k < n_in; k++)
        f->in[k] = in[k];
    free(f->name);
    f->name = name;
}

trtl_status trtl_pm_append_name(trtl_node *c, const char *extra)
{
    char *nm = trtl_bg_join_names(c->name, extra);
    if (!nm)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    free(c->name);
    c->name = nm;
    return TRTL_OK;
}

int trtl_pm_pure_transpose(const trtl_bgraph *g, int32_t i, int32_t *perm)
{
    const trtl_node *n = &g->n[i].n;
    if (g->n[i].dead || n->op != TRTL_OP_SHUFFLE || n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual || n->p.shuffle.reshape_dims.nb_dims != -1)
        return -1;
    const trtl_bg_tensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]];
    int r = x->dmax.nb_dims;
    if (x->dtype != TRTL_FLOAT || y->dtype != TRTL_FLOAT || r < 1 || x->dmin.nb_dims != r)
        return -1;
    const trtl_dims *f = &n->p.shuffle.first_transpose, *s = &n->p.shuffle.second_transpose;
    if ((f->nb_dims && f->nb_dims != r) || (s->nb_dims && s->nb_dims != r))
        return -1;
    for (int d = 0; d < r; d++) {
        int64_t j = s->nb_dims ? s->d[d] : d;
        if (j < 0 || j >= r)
            return -1;
        int64_t k = f->nb_dims ? f->d[j] : j;
        if (k < 0 || k >= r)
            return -1;
        perm[d] = (int32_t)k;
    }
    return r;
}

void trtl_pm_rewire(trtl_bgraph *g, int32_t from, int32_t to)
{
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            for (int32_t k = 0; k < g->n[i].n.n_in; k++)
                if (g->n[i].n.in[k] == from)
                    g->n[i].n.in[k] = to;
}

static int const_data(const trtl_bgraph *g, int32_t t)
{
    return t >= 0 && g->t[t].kind == TRTL_TK_CONSTANT && g->t[t].data;
}

int trtl_pm_node_qparm(const trtl_bgraph *g, int32_t i, trtl_op op, trtl_pm_qparm *q)
{
    if (i < 0 || i >= g->nn || g->n[i].dead)
        return 0;
    const trtl_node *n = &g->n[i].n;
    if (n->op != op || n->n_out != 1 || n->n_in < 2 || n->n_in > 3 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual)
        return 0;
    int32_t s = n->in[1];
    if (!const_data(g, s) || g->t[s].dtype != TRTL_FLOAT || trtl_volume(&g->t[s].dmax) != 1)
        return 0;
    q->scale = *(const float *)g->t[s].data;
    q->type = op == TRTL_OP_QUANTIZE ? n->p.quant.to_type : (int32_t)g->t[n->in[0]].dtype;
    q->zp = 0;
    if (n->n_in == 3) {
        int32_t z = n->in[2];
        if (!const_data(g, z) || trtl_volume(&g->t[z].dmax) != 1 || (int32_t)g->t[z].dtype != q->type)
            return 0;
        q->zp = q->type == TRTL_UINT8 ? *(const uint8_t *)g->t[z].data : *(const int8_t *)g->t[z].data;
    }
    return (q->type == TRTL_INT8 || q->type == TRTL_UINT8) && q->scale > 0 && isfinite(q->scale);
}

int trtl_pm_same_qparm(const trtl_pm_qparm *a, const trtl_pm_qparm *b)
{
    return a->scale == b->scale && a->zp == b->zp && a->type == b->type;
}
