/* fuse_layernorm.c -- replaces layer normalization written out in elementwise and reduce layers
 * (as PyTorch exports nn.LayerNorm to ONNX at opsets 11-16) with one normalization step:
 *     m = mean(x, A)             reduce AVG over axes A, keep_dims
 *     d = x - m
 *     v = mean(d^2, A)           d^2 as pow(d, 2) or d * d; reduce AVG over the same A, keep_dims
 *     n = d / sqrt(v + eps)      or d * (1 / sqrt(v + eps)) (reciprocal unary), either product order
 *     y = n * gamma + beta       both optional, either operand order
 * ==> normalization(x, gamma, beta) with axes A, epsilon eps, num_groups 1.  Without gamma / beta
 * the pass adds a constant of ones / zeros of shape [1, .., 1].
 * Exactly the normalization's formula (biased variance, eps inside the square root); the
 * normalization kernels compute the statistics in one step instead of five.
 * Preconditions: x is FLOAT; eps is a one-element FLOAT constant >= 0 and finite; the exponent
 * exactly 2; gamma and beta are FLOAT constants of x's rank whose dims are 1 or x's (static) dims;
 * every intermediate is FLOAT, is no network output and is used only by the next layers of the
 * pattern (d by the square and the division, nothing else); no layer of the pattern has a fused
 * epilogue.  The last layer of the pattern becomes the normalization (keeping its output tensor);
 * the others are marked dead.
 * RMSNorm (x * rsqrt(mean(x^2) + eps) * gamma) is not matched: the normalization layer always
 * subtracts the mean, so it cannot express it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/alloc.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

#define MAX_GROUP 10

typedef struct ln_match {
    int32_t x, gamma, beta; /* gamma / beta: -1 when absent */
    uint32_t axes;
    float eps;
    int32_t nodes[MAX_GROUP];
    int32_t n;
} ln_match;

static void add(ln_match *m, int32_t node)
{
    if (m->n < MAX_GROUP)
        m->nodes[m->n++] = node;
}

/* Node i is a keep-dims mean: gives its input and axes. */
static int is_mean(const trtl_bgraph *g, int32_t i, int32_t *in, uint32_t *axes)
{
    const trtl_node *n = &g->n[i].n;
    if (n->op != TRTL_OP_REDUCE || n->p.reduce.op != TRTL_RED_AVG || !n->p.reduce.keep_dims || n->n_in != 1 ||
        !n->p.reduce.axes)
        return 0;
    *in = n->in[0];
    *axes = n->p.reduce.axes;
    return 1;
}

/* s = sqrt(mean(d^2) + eps) with d = x - mean(x) over the same axes, d used by the square and
 * `d_other` more slots (the division). */
static int stddev(const trtl_bgraph *g, int32_t s, int32_t d, ln_match *m)
{
    int32_t sq_node = trtl_pm_inner(g, s, 1), ve, v, sq, vin, xin;
    uint32_t ax2;
    if (sq_node < 0 || !trtl_pm_is_unary(g, sq_node, TRTL_UN_SQRT))
        return 0;
    ve = g->n[sq_node].n.in[0];
    int32_t an = trtl_pm_inner(g, ve, 1);
    if (an < 0 || !trtl_pm_is_ew(g, an, TRTL_EW_SUM))
        return 0;
    float eps = -1.0f;
    int side = trtl_pm_scalar(g, g->n[an].n.in[1], &eps) ? 0 : trtl_pm_scalar(g, g->n[an].n.in[0], &eps) ? 1 : -1;
    if (side < 0 || !(eps >= 0.0f) || !isfinite(eps))
        return 0;
    v = g->n[an].n.in[side];
    int32_t vn = trtl_pm_inner(g, v, 1);
    if (vn < 0 || !is_mean(g, vn, &sq, &ax2))
        return 0;
    int32_t qn = g->t[sq].producer;
    float two;
    int d_slots;
    if (qn >= 0 && trtl_pm_is_ew(g, qn, TRTL_EW_POW) && g->n[qn].n.in[0] == d && trtl_pm_scalar(g, g->n[qn].n.in[1], &two) &&
        two == 2.0f)
        d_slots = 1;
    else if (qn >= 0 && trtl_pm_is_ew(g, qn, TRTL_EW_PROD) && g->n[qn].n.in[0] == d && g->n[qn].n.in[1] == d)
        d_slots = 2;
    else
        return 0;
    if (trtl_pm_inner(g, sq, 1) != qn)
        return 0;
    /* d = x - mean(x): used by the square and the division only */
    int32_t dn = trtl_pm_inner(g, d, d_slots + 1);
    if (dn < 0 || !trtl_pm_is_ew(g, dn, TRTL_EW_SUB))
        return 0;
    xin = g->n[dn].n.in[0];
    int32_t mn = trtl_pm_inner(g, g->n[dn].n.in[1], 1);
    uint32_t ax1;
    if (mn < 0 || !is_mean(g, mn, &vin, &ax1) || vin != xin || ax1 != ax2)
        return 0;
    m->x = xin;
    m->axes = ax1;
    m->eps = eps;
    add(m, mn);
    add(m, dn);
    add(m, qn);
    add(m, vn);
    add(m, an);
    add(m, sq_node);
    return 1;
}

/* Node i computes n = d / s or d * (1 / s) (either order): fills m. */
static int normalized(const trtl_bgraph *g, int32_t i, ln_match *m)
{
    const trtl_node *n = &g->n[i].n;
    if (trtl_pm_is_ew(g, i, TRTL_EW_DIV)) {
        if (stddev(g, n->in[1], n->in[0], m)) {
            add(m, i);
            return 1;
        }
        return 0;
    }
    if (!trtl_pm_is_ew(g, i, TRTL_EW_PROD))
        return 0;
    for (int side = 0; side < 2; side++) {
        int32_t rn = trtl_pm_inner(g, n->in[1 - side], 1);
        int32_t n0 = m->n;
        if (rn >= 0 && trtl_pm_is_unary(g, rn, TRTL_UN_RECIP) && stddev(g, g->n[rn].n.in[0], n->in[side], m)) {
            add(m, rn);
            add(m, i);
            return 1;
        }
        m->n = n0;
    }
    return 0;
}

/* A FLOAT constant of x's rank that broadcasts to x (each dim 1 or x's static dim). */
static int affine_const(const trtl_bgraph *g, int32_t t, int32_t x)
{
    const trtl_bg_tensor *c = &g->t[t], *xt = &g->t[x];
    if (c->kind != TRTL_TK_CONSTANT || c->dtype != TRTL_FLOAT || !c->data || c->dmax.nb_dims != xt->dmax.nb_dims)
        return 0;
    for (int d = 0; d < c->dmax.nb_dims; d++)
        if (c->dmax.d[d] != 1 && !(xt->dmin.d[d] == xt->dmax.d[d] && c->dmax.d[d] == xt->dmax.d[d]))
            return 0;
    return 1;
}

/* Node i (a product) is n * gamma: gives gamma. */
static int times_gamma(const trtl_bgraph *g, int32_t i, ln_match *m)
{
    if (!trtl_pm_is_ew(g, i, TRTL_EW_PROD))
        return 0;
    const trtl_node *n = &g->n[i].n;
    for (int side = 0; side < 2; side++) {
        int32_t p = trtl_pm_inner(g, n->in[side], 1);
        int32_t n0 = m->n;
        if (p >= 0 && normalized(g, p, m) && affine_const(g, n->in[1 - side], m->x)) {
            m->gamma = n->in[1 - side];
            add(m, i);
            return 1;
        }
        m->n = n0;
    }
    return 0;
}

/* Node fi is the last layer of a layer-norm pattern. */
static int match_at(const trtl_bgraph *g, int32_t fi, ln_match *m)
{
    if (g->n[fi].dead || g->n[fi].n.n_out != 1 || g->t[g->n[fi].n.out[0]].dtype != TRTL_FLOAT)
        return 0;
    m->n = 0;
    m->gamma = m->beta = -1;
    if (trtl_pm_is_ew(g, fi, TRTL_EW_SUM)) { /* (...) + beta */
        const trtl_node *n = &g->n[fi].n;
        for (int side = 0; side < 2; side++) {
            int32_t p = trtl_pm_inner(g, n->in[side], 1);
            m->n = 0;
            m->gamma = -1;
            if (p < 0)
                continue;
            if (times_gamma(g, p, m) || normalized(g, p, m)) {
                if (!affine_const(g, n->in[1 - side], m->x))
                    continue;
                m->beta = n->in[1 - side];
                add(m, fi);
                return 1;
            }
        }
        m->n = 0;
        m->gamma = -1;
    }
    if (times_gamma(g, fi, m))
        return 1;
    m->n = 0;
    m->gamma = -1;
    return normalized(g, fi, m);
}

/* A [1, .., 1] FLOAT constant holding v, named after the node; -1 on failure (error set). */
static int32_t const_fill(trtl_bgraph *g, const char *node, const char *what, int rank, float v)
{
    char name[256];
    snprintf(name, sizeof name, "%.200s/%s", node, what);
    float *data = trtl_aligned_alloc(sizeof(float));
    if (!data) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    int32_t t = trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_CONSTANT);
    if (t < 0) {
        trtl_aligned_free(data);
        return -1;
    }
    *data = v;
    trtl_bg_tensor *c = &g->t[t];
    c->data = data;
    c->dmin.nb_dims = rank;
    for (int d = 0; d < rank; d++)
        c->dmin.d[d] = 1;
    c->dopt = c->dmax = c->dmin;
    return t;
}

static trtl_status rewrite(trtl_bgraph *g, int32_t fi, ln_match *m, trtl_pass_log *log)
{
    int rank = g->t[m->x].dmax.nb_dims;
    if (m->gamma < 0 && (m->gamma = const_fill(g, g->n[fi].n.name, "ones", rank, 1.0f)) < 0)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    if (m->beta < 0 && (m->beta = const_fill(g, g->n[fi].n.name, "zeros", rank, 0.0f)) < 0)
        return TRTL_ERR_OUT_OF_MEMORY;
    trtl_pm_sort_nodes(m->nodes, m->n);
    char *name = trtl_pm_join_names(g, m->nodes, m->n);
    if (!name)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    trtl_pass_log_add(log, "fused %d layers computing layer normalization of tensor '%s' (axes 0x%x, eps %g) into '%s'",
                      (int)m->n, g->t[m->x].name, (unsigned)m->axes, (double)m->eps, name);
    trtl_params p;
    trtl_op_table[TRTL_OP_NORMALIZATION].init(&p);
    p.norm.axes = m->axes;
    p.norm.epsilon = m->eps;
    p.norm.num_groups = 1;
    /* elementwise nodes have room for three inputs (trtl_bg_add_node) */
    const int32_t in[3] = {m->x, m->gamma, m->beta};
    trtl_pm_replace(g, fi, m->nodes, m->n, TRTL_OP_NORMALIZATION, &p, in, 3, name);
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_layernorm(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "layer-norm fusion");
    /* from the last node back, so that a pattern is matched at its last layer (the beta add), not at
     * its division */
    for (int32_t i = g->nn - 1; i >= 0; i--) {
        ln_match m = {-1, -1, -1, 0, 0.0f, {0}, 0};
        /* the last node must be a two-input elementwise (room for three inputs) */
        if (g->n[i].dead || g->n[i].n.op != TRTL_OP_ELEMENTWISE || !match_at(g, i, &m))
            continue;
        const trtl_bg_tensor *x = &g->t[m.x];
        if (x->dtype != TRTL_FLOAT || !trtl_pm_same_shape(x, &g->t[g->n[i].n.out[0]]) || (m.axes >> x->dmax.nb_dims))
            continue;
        TRTL_TRY(rewrite(g, i, &m, &log));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
