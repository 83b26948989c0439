/* fuse_epilogue.c -- moves a residual addition and an activation into the producing layer's
 * epilogue, so they are applied while the result is still in cache:
 *     relu(conv(x) + skip)  ==>  one node: conv with epilogue {residual: skip, act: RELU}
 * A fusion needs the intermediate result to feed only the fused layer and not be a network
 * output.  A pure transpose (a FLOAT shuffle with no reshape and a permutation that is not the identity) takes a
 * residual too, not an activation: ConvNeXt's permute back to NCHW before its block's skip addition becomes one
 * step, shuffle.transpose adding the skip as it stores each tile. */
#include <stdlib.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/status.h"
#include "core/dims.h"

/* Node i is a pure transpose that moves elements: the input dims that may be larger than 1 (at any shape of the
 * profiles) do not keep their order (a transpose of size-1 dims only is a reshape, which elide_reshape makes a
 * view). */
static int moving_transpose(const trtl_bgraph *g, int32_t i)
{
    int32_t perm[TRTL_MAX_DIMS];
    int r = trtl_pm_pure_transpose(g, i, perm);
    const trtl_dims *x = &g->t[g->n[i].n.in[0]].dmax;
    int32_t prev = -1;
    for (int d = 0; d < r; d++) {
        if (x->d[perm[d]] == 1)
            continue;
        if (perm[d] < prev)
            return 1;
        prev = perm[d];
    }
    return 0;
}

static int takes_residual(trtl_op op)
{
    return op == TRTL_OP_CONVOLUTION || op == TRTL_OP_DECONVOLUTION || op == TRTL_OP_FULLY_CONNECTED ||
           op == TRTL_OP_MATRIX_MULTIPLY;
}

static int takes_activation(trtl_op op)
{
    return takes_residual(op) || op == TRTL_OP_ELEMENTWISE || op == TRTL_OP_SCALE;
}

/* The producer of x if its single result x can absorb more epilogue, else -1. */
static int32_t fusable_producer(const trtl_bgraph *g, int32_t x)
{
    int32_t prod = g->t[x].producer;
    if (prod < 0 || g->n[prod].dead || g->n[prod].n.n_out != 1 || trtl_bg_is_output(g, x) ||
        trtl_bg_consumers(g, x, NULL) != 1 || g->t[x].dtype != TRTL_FLOAT)
        return -1;
    return prod;
}

static trtl_status absorb(trtl_bgraph *g, int32_t prod, trtl_bg_node *c, trtl_pass_log *log)
{
    trtl_node *p = &g->n[prod].n;
    char *nm = trtl_bg_join_names(p->name, c->n.name);
    if (!nm)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    trtl_pass_log_add(log, "fused '%s' into the epilogue of '%s'", c->n.name, p->name);
    free(p->name);
    p->name = nm;
    p->out[0] = c->n.out[0];
    g->t[p->out[0]].producer = prod;
    c->dead = 1;
    return TRTL_OK;
}

static int same_shape(const trtl_bg_tensor *a, const trtl_bg_tensor *b)
{
    return trtl_dims_equal(&a->dmin, &b->dmin) && trtl_dims_equal(&a->dopt, &b->dopt) &&
           trtl_dims_equal(&a->dmax, &b->dmax);
}

trtl_status trtl_pass_fuse_epilogue(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "epilogue fusion");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *c = &g->n[i];
        if (c->dead)
            continue;
        if (c->n.op == TRTL_OP_ELEMENTWISE && c->n.p.ew.op == TRTL_EW_SUM && c->n.n_in == 2 &&
            c->n.in[0] != c->n.in[1]) {
            for (int side = 0; side < 2; side++) {
                int32_t x = c->n.in[side], skip = c->n.in[1 - side];
                int32_t prod = fusable_producer(g, x);
                if (prod < 0)
                    continue;
                trtl_node *p = &g->n[prod].n;
                if (!(takes_residual(p->op) || moving_transpose(g, prod)) || p->epi.act != TRTL_ACT_NONE ||
                    p->epi.has_residual ||
                    g->t[skip].dtype != TRTL_FLOAT || !same_shape(&g->t[x], &g->t[skip]))
                    continue;
                p->in[p->n_in++] = skip; /* the node's input array has one spare slot */
                p->epi.has_residual = 1;
                TRTL_TRY(absorb(g, prod, c, &log));
                break;
            }
        } else if (c->n.op == TRTL_OP_ACTIVATION) {
            int32_t prod = fusable_producer(g, c->n.in[0]);
            if (prod < 0)
                continue;
            trtl_node *p = &g->n[prod].n;
            if (!takes_activation(p->op) || p->epi.act != TRTL_ACT_NONE)
                continue;
            p->epi.act = c->n.p.act.type;
            p->epi.alpha = c->n.p.act.alpha;
            p->epi.beta = c->n.p.act.beta;
            TRTL_TRY(absorb(g, prod, c, &log));
        }
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
