/* fuse_gelu.c -- replaces GELU written out in elementwise layers (as ONNX exporters write it) with
 * one GELU activation step:
 *     x * 0.5 * (1 + erf(x / sqrt(2)))                           ==>  activation GELU_ERF (x)
 *     x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   ==>  activation GELU_TANH (x)
 * Variants matched: either operand order of every product and sum; x / sqrt(2) or x * (1/sqrt(2));
 * the 0.5 as (x * 0.5) * a, (x * a) * 0.5 or x * (a * 0.5), and as a division by 2; x^3 as
 * pow(x, 3), x * (x * x) or (x * x) * x.  Constants must be one-element FLOAT constant tensors;
 * sqrt(2) and 1/sqrt(2) are accepted within the ONNX parser's former tolerance (1e-3), sqrt(2/pi)
 * and 0.044715 within 1e-4 relative, 0.5, 1, 2 and 3 exactly.
 * Preconditions: every intermediate tensor is FLOAT, feeds exactly one layer (the next of the
 * pattern) and is not a network output; no layer of the pattern has a fused epilogue; the result
 * has x's shape (a constant must not broadcast x).  The last layer of the pattern becomes the
 * activation (keeping its output tensor); the others are marked dead.  Runs after constant
 * folding (so that a parser's reshaped scalar constants are constants) and before epilogue fusion
 * (so that the GELU can join its producer's epilogue). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

#define MAX_GROUP 12

typedef struct match {
    int32_t x;              /* the GELU's input */
    int32_t act;            /* TRTL_ACT_GELU_ERF or TRTL_ACT_GELU_TANH */
    int32_t nodes[MAX_GROUP];
    int32_t n;
} match;

static void add(match *m, int32_t node)
{
    if (m->n < MAX_GROUP)
        m->nodes[m->n++] = node;
}

static int near(float v, double want, double rel)
{
    return fabs((double)v - want) <= rel * fabs(want);
}

/* Intermediate t = y * c, c * y or y / c for a scalar constant c: gives y and the factor. */
static int32_t scaled(const trtl_bgraph *g, int32_t t, int32_t *y, double *factor)
{
    int32_t p = trtl_pm_inner(g, t, 1);
    float c;
    if (p < 0)
        return -1;
    const trtl_node *n = &g->n[p].n;
    if (trtl_pm_is_ew(g, p, TRTL_EW_PROD)) {
        float other;
        for (int side = 0; side < 2; side++)
            if (trtl_pm_scalar(g, n->in[1 - side], &c) && !trtl_pm_scalar(g, n->in[side], &other)) {
                *y = n->in[side];
                *factor = c;
                return p;
            }
    } else if (trtl_pm_is_ew(g, p, TRTL_EW_DIV) && trtl_pm_scalar(g, n->in[1], &c) && c != 0.0f) {
        *y = n->in[0];
        *factor = 1.0 / (double)c;
        return p;
    }
    return -1;
}

/* Intermediate t = 1 + y or y + 1: gives y. */
static int32_t one_plus(const trtl_bgraph *g, int32_t t, int32_t *y)
{
    int32_t p = trtl_pm_inner(g, t, 1);
    float c;
    if (p < 0 || !trtl_pm_is_ew(g, p, TRTL_EW_SUM))
        return -1;
    const trtl_node *n = &g->n[p].n;
    for (int side = 0; side < 2; side++)
        if (trtl_pm_scalar(g, n->in[1 - side], &c) && c == 1.0f) {
            *y = n->in[side];
            return p;
        }
    return -1;
}

/* a = 1 + erf(x / sqrt(2)). */
static int erf_core(const trtl_bgraph *g, int32_t a, match *m)
{
    int32_t e, d, x;
    double f;
    int32_t s = one_plus(g, a, &e);
    int32_t u = s < 0 ? -1 : trtl_pm_inner(g, e, 1);
    if (u < 0 || !trtl_pm_is_unary(g, u, TRTL_UN_ERF))
        return 0;
    d = g->n[u].n.in[0];
    int32_t dn = scaled(g, d, &x, &f);
    if (dn < 0)
        return 0;
    /* the ONNX parser's former tolerances: |c - sqrt(2)| < 1e-3 for x / c, |c - sqrt(1/2)| < 1e-3 for x * c */
    if (g->n[dn].n.p.ew.op == TRTL_EW_DIV ? fabs(1.0 / f - 1.4142135623730951) >= 1e-3
                                          : fabs(f - 0.70710678118654752) >= 1e-3)
        return 0;
    m->x = x;
    m->act = TRTL_ACT_GELU_ERF;
    add(m, dn);
    add(m, u);
    add(m, s);
    return 1;
}

/* cube = x^3 as pow(x, 3), x * (x * x) or (x * x) * x. */
static int cube_of(const trtl_bgraph *g, int32_t cube, int32_t x, match *m)
{
    int32_t p = trtl_pm_inner(g, cube, 1);
    float c;
    if (p < 0)
        return 0;
    const trtl_node *n = &g->n[p].n;
    if (trtl_pm_is_ew(g, p, TRTL_EW_POW))
        if (n->in[0] == x && trtl_pm_scalar(g, n->in[1], &c) && c == 3.0f) {
            add(m, p);
            return 1;
        }
    if (!trtl_pm_is_ew(g, p, TRTL_EW_PROD))
        return 0;
    for (int side = 0; side < 2; side++) {
        if (n->in[1 - side] != x)
            continue;
        int32_t sq = trtl_pm_inner(g, n->in[side], 1);
        if (sq >= 0 && trtl_pm_is_ew(g, sq, TRTL_EW_PROD) && g->n[sq].n.in[0] == x && g->n[sq].n.in[1] == x) {
            add(m, sq);
            add(m, p);
            return 1;
        }
    }
    return 0;
}

/* a = 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)). */
static int tanh_core(const trtl_bgraph *g, int32_t a, match *m)
{
    int32_t th, v, sum, cube;
    double k, kappa;
    int32_t s = one_plus(g, a, &th);
    int32_t t = s < 0 ? -1 : trtl_pm_inner(g, th, 1);
    if (t < 0 || g->n[t].n.op != TRTL_OP_ACTIVATION || g->n[t].n.p.act.type != TRTL_ACT_TANH)
        return 0;
    v = g->n[t].n.in[0];
    int32_t kn = scaled(g, v, &sum, &k);
    if (kn < 0 || !near((float)k, 0.79788456080286536, 1e-4))
        return 0;
    int32_t sn = trtl_pm_inner(g, sum, 1);
    if (sn < 0 || !trtl_pm_is_ew(g, sn, TRTL_EW_SUM))
        return 0;
    for (int side = 0; side < 2; side++) {
        int32_t x = g->n[sn].n.in[side];
        int32_t n0 = m->n;
        int32_t cn = scaled(g, g->n[sn].n.in[1 - side], &cube, &kappa);
        if (cn < 0 || !near((float)kappa, 0.044715, 1e-4) || !cube_of(g, cube, x, m)) {
            m->n = n0;
            continue;
        }
        m->x = x;
        m->act = TRTL_ACT_GELU_TANH;
        add(m, cn);
        add(m, sn);
        add(m, kn);
        add(m, t);
        add(m, s);
        return 1;
    }
    return 0;
}

/* a = 1 + erf(...) or 1 + tanh(...) of some x: fills m. */
static int core(const trtl_bgraph *g, int32_t a, match *m)
{
    int32_t n0 = m->n;
    if (erf_core(g, a, m))
        return 1;
    m->n = n0;
    if (tanh_core(g, a, m))
        return 1;
    m->n = n0;
    return 0;
}

/* Node fi (a product) is the last layer of a GELU pattern: x*0.5 * a, (x*a) * 0.5 or x * (a*0.5). */
static int match_at(const trtl_bgraph *g, int32_t fi, match *m)
{
    if (!trtl_pm_is_ew(g, fi, TRTL_EW_PROD) || g->t[g->n[fi].n.out[0]].dtype != TRTL_FLOAT)
        return 0;
    const trtl_node *f = &g->n[fi].n;
    float c;
    double half;
    int32_t y;
    for (int side = 0; side < 2; side++) {
        int32_t p = f->in[side], q = f->in[1 - side];
        m->n = 0;
        if (trtl_pm_scalar(g, q, &c)) {
            /* (x * a) * 0.5 */
            int32_t mi = trtl_pm_inner(g, p, 1);
            if (c != 0.5f || mi < 0 || !trtl_pm_is_ew(g, mi, TRTL_EW_PROD))
                continue;
            for (int ms = 0; ms < 2; ms++) {
                m->n = 0;
                if (core(g, g->n[mi].n.in[ms], m) && m->x == g->n[mi].n.in[1 - ms]) {
                    add(m, mi);
                    return 1;
                }
            }
            continue;
        }
        /* (x * 0.5) * a */
        int32_t hi = scaled(g, p, &y, &half);
        if (hi >= 0 && half == 0.5 && core(g, q, m) && m->x == y) {
            add(m, hi);
            return 1;
        }
        m->n = 0;
        /* x * (a * 0.5) */
        hi = scaled(g, q, &y, &half);
        if (hi >= 0 && half == 0.5 && core(g, y, m) && m->x == p) {
            add(m, hi);
            return 1;
        }
    }
    return 0;
}

/* Node fi becomes the activation; the rest of the pattern dies.  The name joins the pattern's
 * layer names in graph order. */
static trtl_status rewrite(trtl_bgraph *g, int32_t fi, match *m, trtl_pass_log *log)
{
    trtl_pm_sort_nodes(m->nodes, m->n);
    char *name = trtl_pm_join_names(g, m->nodes, m->n);
    if (!name)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    trtl_pass_log_add(log, "fused %d layers computing GELU (%s) of tensor '%s' into one activation '%s'", (int)m->n,
                      m->act == TRTL_ACT_GELU_ERF ? "erf" : "tanh", g->t[m->x].name, name);
    trtl_params p;
    trtl_op_table[TRTL_OP_ACTIVATION].init(&p);
    p.act.type = m->act;
    trtl_pm_replace(g, fi, m->nodes, m->n, TRTL_OP_ACTIVATION, &p, &m->x, 1, name);
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_gelu(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "GELU fusion");
    for (int32_t i = 0; i < g->nn; i++) {
        match m = {-1, TRTL_ACT_NONE, {0}, 0};
        if (!match_at(g, i, &m))
            continue;
        const trtl_bg_tensor *x = &g->t[m.x];
        if (x->dtype != TRTL_FLOAT || !trtl_pm_same_shape(x, &g->t[g->n[i].n.out[0]]))
            continue;
        add(&m, i);
        TRTL_TRY(rewrite(g, i, &m, &log));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
