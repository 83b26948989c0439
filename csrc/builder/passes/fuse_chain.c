/* fuse_chain.c -- a maximal run of fp32 pointwise steps over one shape becomes one PW_CHAIN step (core/params.h)
 * running a straight-line program, so the run reads its tensors once and writes once instead of once per step:
 *     v1 = x / c;  v2 = erf(v1);  v3 = qgrid(v2);  v4 = v3 + 1 (+ qgrid);  v5 = h * v4 (+ qgrid);  y = v5 * 0.5
 *         ==>  y = PW_CHAIN(x, c, 1, h, 0.5)  (the QDQ GELU of quantize_static's BERT, which fuse_gelu cannot take)
 * A step joins when it is one of: a unary op the vector kernels compute (trtl_pw_unary_ok), an activation (every
 * public and internal code: SiLU, QGRID, ...), an elementwise op of trtl_pw_binary_ok whose other input -- a
 * constant or any other live tensor -- broadcasts to the chain's shape (every dim 1, or the chain's at every profile
 * corner and never a dynamic dim that may be 1); an elementwise step's fused activation (fold_fake_quant's QGRID,
 * fuse_epilogue's ReLU) is an op of the program.  Every step's output has the chain's dims at every corner, every
 * tensor is FLOAT, and every intermediate has one reader (the next step, reading it once) and is no network output.
 * Steps with a residual epilogue, a precision asked for or a kernel fixed by a pass stay.  Runs of one step stay.
 * At most TRTL_PW_MAX_OPS ops and TRTL_PW_MAX_INPUTS inputs a chain (a longer run is cut into chains).
 * Runs after the fusions that take pointwise steps into other layers (fuse_gelu, fuse_pointwise, fuse_epilogue,
 * fold_fake_quant, fuse_linear's bias adds, fuse_reduce, fuse_preact's scale activations), so it only takes what
 * they leave; before int8_nchwc / nchwc, which only change convolutions. */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct chain {
    int32_t nodes[TRTL_PW_MAX_OPS];
    int32_t n_nodes;
    trtl_pw_op ops[TRTL_PW_MAX_OPS];
    int32_t n_ops;
    int32_t in[TRTL_PW_MAX_INPUTS];
    int32_t n_in;
    int32_t value; /* the tensor the chain has computed so far */
} chain;

static int same_corners(const trtl_bg_tensor *a, const trtl_bg_tensor *b)
{
    return !a->corner_unknown && !b->corner_unknown && trtl_dims_equal(&a->dmin, &b->dmin) &&
           trtl_dims_equal(&a->dopt, &b->dopt) && trtl_dims_equal(&a->dmax, &b->dmax);
}

/* Does operand tensor e broadcast to chain tensor c at run time exactly as the steps would: each dim 1 at every
 * corner, or c's at every corner where c's cannot be 1 unless static (so neither side can broadcast the other up). */
static int operand_ok(const trtl_bg_tensor *e, const trtl_bg_tensor *c)
{
    if (e->dtype != TRTL_FLOAT || e->corner_unknown || c->corner_unknown || e->dopt.nb_dims != c->dopt.nb_dims ||
        e->dmin.nb_dims != c->dmin.nb_dims || e->dmax.nb_dims != c->dmax.nb_dims)
        return 0;
    for (int32_t a = 0; a < c->dopt.nb_dims; a++) {
        const int64_t m = c->dmin.d[a], o = c->dopt.d[a], M = c->dmax.d[a];
        if (e->dmin.d[a] == 1 && e->dopt.d[a] == 1 && e->dmax.d[a] == 1)
            continue;
        if (e->dmin.d[a] != m || e->dopt.d[a] != o || e->dmax.d[a] != M || (m != M && m <= 1))
            return 0;
    }
    return 1;
}

/* Node i as a pointwise step (any position): 1 for unary / activation, 2 for elementwise, 0 for none. */
static int pw_kind(const trtl_bgraph *g, int32_t i)
{
    const trtl_bg_node *b = &g->n[i];
    const trtl_node *n = &b->n;
    if (b->dead || b->want_set || b->fixed_kernel || n->n_out != 1 || n->epi.has_residual ||
        (n->epi.act != TRTL_ACT_NONE && !trtl_act_code_valid(n->epi.act)) ||
        (n->epi.act == TRTL_ACT_QGRID && !trtl_act_qgrid_scale_ok(n->epi.alpha)) ||
        g->t[n->out[0]].dtype != TRTL_FLOAT)
        return 0;
    for (int32_t k = 0; k < n->n_in; k++)
        if (g->t[n->in[k]].dtype != TRTL_FLOAT)
            return 0;
    switch (n->op) {
    case TRTL_OP_UNARY: return n->n_in == 1 && trtl_pw_unary_ok(n->p.unary.op);
    case TRTL_OP_ACTIVATION:
        return n->n_in == 1 && trtl_act_code_valid(n->p.act.type) &&
               (n->p.act.type != TRTL_ACT_QGRID || trtl_act_qgrid_scale_ok(n->p.act.alpha)) ? 1 : 0;
    case TRTL_OP_ELEMENTWISE: return n->n_in == 2 && trtl_pw_binary_ok(n->p.ew.op) ? 2 : 0;
    default: return 0;
    }
}

/* Index of tensor t among the chain's operand inputs (1..), added if new; -1 when the chain has no room. */
static int32_t operand_index(chain *c, int32_t t)
{
    for (int32_t k = 1; k < c->n_in; k++)
        if (c->in[k] == t)
            return k;
    if (c->n_in == TRTL_PW_MAX_INPUTS)
        return -1;
    c->in[c->n_in] = t;
    return c->n_in++;
}

/* Appends node i reading the chain's value (its head x where the chain is empty) to c; 0 (c unchanged) when it
 * cannot join. */
static int append(const trtl_bgraph *g, chain *c, int32_t i, int32_t x)
{
    const int kind = pw_kind(g, i);
    const trtl_node *n = &g->n[i].n;
    const int need = 1 + (n->epi.act != TRTL_ACT_NONE);
    if (!kind || c->n_ops + need > TRTL_PW_MAX_OPS || c->n_nodes == TRTL_PW_MAX_OPS ||
        !same_corners(&g->t[n->out[0]], &g->t[x]))
        return 0;
    const chain saved = *c;
    trtl_pw_op o = {0, 0, 0, 0.0f, 0.0f};
    if (kind == 1) {
        if (n->in[0] != x)
            return 0;
        if (n->op == TRTL_OP_UNARY)
            o = (trtl_pw_op){TRTL_PW_UNARY, n->p.unary.op, 0, 0.0f, 0.0f};
        else
            o = (trtl_pw_op){TRTL_PW_ACT, n->p.act.type, 0, n->p.act.alpha, n->p.act.beta};
    } else {
        const int pos = n->in[0] == x ? 0 : 1;
        const int32_t other = n->in[1 - pos];
        if (n->in[pos] != x || other == x || !operand_ok(&g->t[other], &g->t[x]))
            return 0;
        const int32_t k = operand_index(c, other);
        if (k < 0)
            return 0;
        o = (trtl_pw_op){pos == 0 ? TRTL_PW_BINARY : TRTL_PW_BINARY_R, n->p.ew.op, k, 0.0f, 0.0f};
    }
    c->ops[c->n_ops++] = o;
    if (n->epi.act != TRTL_ACT_NONE)
        c->ops[c->n_ops++] = (trtl_pw_op){TRTL_PW_ACT, n->epi.act, 0, n->epi.alpha, n->epi.beta};
    if (c->n_ops > TRTL_PW_MAX_OPS) {
        *c = saved;
        return 0;
    }
    c->nodes[c->n_nodes++] = i;
    c->value = n->out[0];
    return 1;
}

/* Starts a chain at node i: its head is the input with the output's dims (input 0 where both have them). */
static int start(const trtl_bgraph *g, chain *c, int32_t i)
{
    memset(c, 0, sizeof *c);
    c->n_in = 1;
    const trtl_node *n = &g->n[i].n;
    const int kind = pw_kind(g, i);
    if (!kind)
        return 0;
    const int32_t y = n->out[0];
    int32_t x = n->in[0];
    if (kind == 2 && !same_corners(&g->t[x], &g->t[y]))
        x = n->in[1];
    if (!same_corners(&g->t[x], &g->t[y]))
        return 0;
    c->in[0] = x;
    return append(g, c, i, x);
}

/* Makes chain c one PW_CHAIN node (appended; the steps dead). */
static trtl_status emit(trtl_bgraph *g, const chain *c, trtl_pass_log *log)
{
    int32_t *ops = trtl_aligned_alloc(sizeof(int32_t) * 3 * (size_t)c->n_ops);
    float *args = ops && trtl_bg_own(g, ops) ? trtl_aligned_alloc(sizeof(float) * 2 * (size_t)c->n_ops) : NULL;
    if (!args || !trtl_bg_own(g, args))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory fusing a pointwise chain");
    for (int32_t i = 0; i < c->n_ops; i++) {
        ops[3 * i] = c->ops[i].kind;
        ops[3 * i + 1] = c->ops[i].code;
        ops[3 * i + 2] = c->ops[i].operand;
        args[2 * i] = c->ops[i].alpha;
        args[2 * i + 1] = c->ops[i].beta;
    }
    trtl_params p;
    memset(&p, 0, sizeof p);
    p.pwc.ops = (trtl_weights){TRTL_INT32, ops, 3 * (int64_t)c->n_ops};
    p.pwc.args = (trtl_weights){TRTL_FLOAT, args, 2 * (int64_t)c->n_ops};
    char *name = NULL;
    for (int32_t k = 0; k < c->n_nodes; k++) {
        const char *nk = g->n[c->nodes[k]].n.name;
        char *j = name ? trtl_bg_join_names(name, nk) : strdup(nk);
        free(name);
        name = j;
        if (!name)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    const int32_t last = c->nodes[c->n_nodes - 1], y = g->n[last].n.out[0], order = g->n[last].order;
    for (int32_t k = 0; k < c->n_nodes; k++)
        g->n[c->nodes[k]].dead = 1;
    const int32_t a = trtl_bg_add_node(g, TRTL_OP_PW_CHAIN, name, &p, c->n_in, c->in, 1, &y);
    if (a < 0) {
        free(name);
        return trtl_error_prefix("builder");
    }
    g->n[a].order = order; /* sorted where the last step was */
    trtl_pass_log_add(log, "%d steps (%d ops, %d operands) are one pointwise chain: '%.200s'", (int)c->n_nodes,
                      (int)c->n_ops, (int)c->n_in - 1, name);
    free(name);
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_chain(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "pointwise chain fusion");
    const int32_t nn = g->nn;
    int added = 0;
    for (int32_t i = 0; i < nn; i++) {
        chain c;
        if (g->n[i].dead || !start(g, &c, i))
            continue;
        for (;;) {
            int32_t j = -1;
            if (trtl_bg_is_output(g, c.value) || trtl_bg_consumers(g, c.value, &j) != 1 || j < 0 ||
                !append(g, &c, j, c.value))
                break;
        }
        if (c.n_nodes < 2)
            continue;
        TRTL_TRY(emit(g, &c, &log));
        added = 1;
    }
    if (added) /* appended nodes: back to topological order for the passes after this one */
        TRTL_TRY(trtl_bg_sort(g));
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
