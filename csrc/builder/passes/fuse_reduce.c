/* fuse_reduce.c -- an elementwise layer (optionally through an Abs) feeding a reduce becomes one internal
 * REDUCE_BINARY step (network/ops/reduce_binary.c), so the broadcast tensor between them is never written:
 *
 *     e = a - b  (broadcast, [1, Co, Ci, H, W]);  u = |e|;  y = ReduceSum(u, axis Ci)     (AdderNet)
 *     ==>  y = reduce_binary(a, b; SUB, ABS, SUM, axes)
 *
 * The values are the same: the kernel rounds a ew b to float and takes |.| as the unfused layers do, then
 * reduces with the reduce kernels' rules (kernels/x86/reduce_binary.c).
 * Preconditions: the reduce is a live one-input FLOAT reduce without epilogue; each intermediate (e, u) is
 * FLOAT, feeds exactly one layer (the next of the pattern), is not a network output and its producer has no
 * epilogue (trtl_pm_inner); the elementwise op is SUM, PROD or SUB on two FLOAT operands of the reduce
 * input's rank; every shape is static; and the fused step's kernel reduce_binary.rows takes the shapes (the
 * last dim group of the broadcast is kept, so it vectorises along it), since the reference kernel of the
 * fused step would be slower than the unfused layers.  The reduce node becomes the fused step (keeping its
 * output and joining the pattern's layer names); the others are marked dead. */
#include <stdlib.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "network/op_table.h"
#include "core/status.h"

extern const trtl_kernel trtl_kernel_reduce_binary_rows;

static int static_float(const trtl_bg_tensor *t)
{
    if (t->dtype != TRTL_FLOAT || t->dmin.nb_dims != t->dmax.nb_dims)
        return 0;
    for (int32_t k = 0; k < t->dmax.nb_dims; k++)
        if (t->dmax.d[k] < 0 || t->dmin.d[k] != t->dmax.d[k])
            return 0;
    return 1;
}

static const char *ew_name(int32_t op)
{
    return op == TRTL_EW_SUM ? "sum" : op == TRTL_EW_PROD ? "product" : "difference";
}

trtl_status trtl_pass_fuse_reduce(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "reduce fusion");
    for (int32_t i = 0; i < g->nn; i++) {
        const trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || n->op != TRTL_OP_REDUCE || n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE ||
            n->epi.has_residual || g->n[i].fixed_kernel || !static_float(&g->t[n->in[0]]) ||
            !static_float(&g->t[n->out[0]]))
            continue;
        int32_t p = trtl_pm_inner(g, n->in[0], 1), u = -1, q;
        if (p < 0)
            continue;
        if (trtl_pm_is_unary(g, p, TRTL_UN_ABS) && g->n[p].n.n_in == 1) {
            u = p;
            q = trtl_pm_inner(g, g->n[p].n.in[0], 1);
        } else {
            q = p;
        }
        if (q < 0 || !(trtl_pm_is_ew(g, q, TRTL_EW_SUB) || trtl_pm_is_ew(g, q, TRTL_EW_SUM) ||
                       trtl_pm_is_ew(g, q, TRTL_EW_PROD)))
            continue;
        const trtl_node *e = &g->n[q].n;
        int32_t in[2] = {e->in[0], e->in[1]};
        int32_t rank = g->t[n->in[0]].dmax.nb_dims;
        if (!static_float(&g->t[in[0]]) || !static_float(&g->t[in[1]]) || g->t[in[0]].dmax.nb_dims != rank ||
            g->t[in[1]].dmax.nb_dims != rank)
            continue;
        trtl_params prm;
        trtl_op_table[TRTL_OP_REDUCE_BINARY].init(&prm);
        prm.rbin.ew_op = e->p.ew.op;
        prm.rbin.unary_op = u >= 0 ? TRTL_UN_ABS : -1;
        prm.rbin.op = n->p.reduce.op;
        prm.rbin.axes = n->p.reduce.axes;
        prm.rbin.keep_dims = n->p.reduce.keep_dims;
        trtl_node probe = *n;
        probe.op = TRTL_OP_REDUCE_BINARY;
        probe.p = prm;
        probe.n_in = 2;
        trtl_dims dims[2] = {g->t[in[0]].dmax, g->t[in[1]].dmax};
        if (!trtl_kernel_reduce_binary_rows.applies(&probe, dims))
            continue;
        int32_t nodes[3] = {q, u, i}, nn = u >= 0 ? 3 : 2;
        if (u < 0)
            nodes[1] = i;
        char *name = trtl_pm_join_names(g, nodes, nn);
        if (!name)
            return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
        trtl_pass_log_add(&log, "fused the %s of '%s' and '%s'%s and its reduce into one step '%s'", ew_name(prm.rbin.ew_op),
                          g->t[in[0]].name, g->t[in[1]].name, u >= 0 ? ", its absolute value" : "", name);
        trtl_pm_replace(g, i, nodes, nn, TRTL_OP_REDUCE_BINARY, &prm, in, 2, name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
