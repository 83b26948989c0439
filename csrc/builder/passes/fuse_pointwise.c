/* fuse_pointwise.c -- replaces the gated activations that exporters write as an activation and a
 * product with one activation node of an internal code (core/params.h):
 *     x * sigmoid(x)                        ==>  activation SILU (x)
 *     x * hard_sigmoid(x; alpha, beta)      ==>  activation HARD_SWISH (x; alpha, beta)
 *                                                (ONNX HardSwish: alpha 1/6, beta 0.5)
 *     x * tanh(softplus(x; 1, 1))           ==>  activation MISH (x)
 * either operand order of the product.  The formulas are the same (kernels/epilogue.c), so the
 * values change only by the rounding of one fewer store.
 * Preconditions: the product is a live two-input FLOAT elementwise PROD without epilogue; every
 * intermediate (the sigmoid / hard sigmoid / tanh / softplus result) is FLOAT, feeds exactly one
 * layer (the next of the pattern), is not a network output and its producer has no epilogue.
 * x itself may have other consumers.  The product becomes the activation (keeping its output
 * tensor and joining the pattern's layer names); the other layers are marked dead.  Runs after
 * GELU fusion and before epilogue fusion, which then folds the activation into x's producer
 * (conv -> SiLU is one step) when the activation is x's only consumer. */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "network/op_table.h"
#include "core/status.h"

/* The producer of intermediate t if it is a live one-input activation of `type` without epilogue
 * whose FLOAT result feeds exactly one layer and is no network output; else -1. */
static int32_t act_producer(const trtl_bgraph *g, int32_t t, int32_t type)
{
    int32_t p = trtl_pm_inner(g, t, 1);
    if (p < 0)
        return -1;
    const trtl_node *n = &g->n[p].n;
    if (n->op != TRTL_OP_ACTIVATION || n->p.act.type != type || n->n_in != 1)
        return -1;
    return p;
}

typedef struct match {
    int32_t act;      /* internal code */
    float alpha, beta;
    int32_t x;
    int32_t dead[2];  /* layers that disappear */
    int32_t n_dead;
} match;

/* The gate g of x * g: which pattern, if any. */
static int gate(const trtl_bgraph *g, int32_t x, int32_t gt, match *m)
{
    int32_t p;
    if ((p = act_producer(g, gt, TRTL_ACT_SIGMOID)) >= 0 && g->n[p].n.in[0] == x) {
        *m = (match){TRTL_ACT_SILU, 0.0f, 0.0f, x, {p, -1}, 1};
        return 1;
    }
    if ((p = act_producer(g, gt, TRTL_ACT_HARD_SIGMOID)) >= 0 && g->n[p].n.in[0] == x) {
        const trtl_activation_params *a = &g->n[p].n.p.act;
        *m = (match){TRTL_ACT_HARD_SWISH, a->alpha, a->beta, x, {p, -1}, 1};
        return 1;
    }
    if ((p = act_producer(g, gt, TRTL_ACT_TANH)) >= 0) {
        int32_t s = act_producer(g, g->n[p].n.in[0], TRTL_ACT_SOFTPLUS);
        if (s >= 0 && g->n[s].n.in[0] == x && g->n[s].n.p.act.alpha == 1.0f && g->n[s].n.p.act.beta == 1.0f) {
            *m = (match){TRTL_ACT_MISH, 0.0f, 0.0f, x, {s, p}, 2};
            return 1;
        }
    }
    return 0;
}

static const char *code_name(int32_t act)
{
    return act == TRTL_ACT_SILU ? "SiLU" : act == TRTL_ACT_HARD_SWISH ? "HardSwish" : "Mish";
}

/* Node fi (the product) becomes the activation; its name joins the pattern's names in graph
 * order (the gate's layers come first). */
static trtl_status rewrite(trtl_bgraph *g, int32_t fi, const match *m, trtl_pass_log *log)
{
    int32_t nodes[3] = {m->dead[0], m->dead[1], fi};
    nodes[m->n_dead] = fi;
    char *name = trtl_pm_join_names(g, nodes, m->n_dead + 1);
    if (!name)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    trtl_pass_log_add(log, "fused %d layers computing %s of tensor '%s' into one activation '%s'", (int)m->n_dead + 1,
                      code_name(m->act), g->t[m->x].name, name);
    trtl_params p;
    trtl_op_table[TRTL_OP_ACTIVATION].init(&p);
    p.act.type = m->act;
    p.act.alpha = m->alpha;
    p.act.beta = m->beta;
    trtl_pm_replace(g, fi, nodes, m->n_dead + 1, TRTL_OP_ACTIVATION, &p, &m->x, 1, name);
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_pointwise(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "pointwise fusion");
    for (int32_t i = 0; i < g->nn; i++) {
        const trtl_node *n = &g->n[i].n;
        if (!trtl_pm_is_ew(g, i, TRTL_EW_PROD) || n->n_out != 1 || g->t[n->out[0]].dtype != TRTL_FLOAT)
            continue;
        match m;
        for (int side = 0; side < 2; side++)
            if (g->t[n->in[side]].dtype == TRTL_FLOAT && gate(g, n->in[side], n->in[1 - side], &m)) {
                TRTL_TRY(rewrite(g, i, &m, &log));
                break;
            }
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
