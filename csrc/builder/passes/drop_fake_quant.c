/* drop_fake_quant.c -- removes a fake quantization (Q -> DQ with the same per-tensor parameters) of a value that
 * already lies on that grid: the dequantized codes of the same parameters, moved by layout-only layers.
 *
 *     y = DQ(c, s, z);  r = reshape / transpose / gather / slice / concat(y ...);  r' = DQ(Q(r, s, z), s, z)
 *   ==>  r' is r
 *
 * Exact: every element of r is (q - z) * s for a code q (copies of y's elements), and quantizing that by (s, z)
 * gives q back (the float32 quotient of (q - z) * s by s rounds to q - z for |q - z| <= 255; q is in range), so
 * the pair returns its input bit for bit.  onnxruntime's quantize_static writes such pairs after every Reshape,
 * Transpose, Squeeze and Split of a quantized tensor (BERT: ten a layer, each a quantize and a dequantize pass).
 * Runs after fuse_qdq and qdq_int8_io, so it only removes pairs those left as layers.  The walk back from the
 * quantized tensor follows one-input shuffles, slices that copy (not FILL), gathers' data inputs and
 * concatenations all of whose inputs are on the grid (a few levels); not max pooling (a window of padding only
 * gives -inf, which the pair would have turned into the lowest code).  Readers of Q's codes other than such DQ
 * layers keep Q; a DQ writing a network output stays. */
#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/status.h"

#define MAX_DEPTH 8

static int layout_copy(const trtl_node *n)
{
    if (n->n_out != 1 || n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
        return 0;
    return (n->op == TRTL_OP_SHUFFLE && n->n_in == 1) || (n->op == TRTL_OP_SLICE && n->n_in == 1 &&
           n->p.slice.mode != TRTL_SLICE_FILL) || (n->op == TRTL_OP_GATHER && n->n_in == 2);
}

/* Every element of tensor t is a dequantized code of parameters *p. */
static int on_grid(const trtl_bgraph *g, int32_t t, const trtl_pm_qparm *p, int depth)
{
    const int32_t i = g->t[t].producer;
    if (depth > MAX_DEPTH || i < 0 || g->n[i].dead || g->t[t].dtype != TRTL_FLOAT)
        return 0;
    const trtl_node *n = &g->n[i].n;
    trtl_pm_qparm d;
    if (trtl_pm_node_qparm(g, i, TRTL_OP_DEQUANTIZE, &d))
        return trtl_pm_same_qparm(&d, p);
    if (n->op == TRTL_OP_QLINEAR && n->p.qlin.out_quant == 1 && n->epi.act == TRTL_ACT_NONE)
        return n->p.qlin.out_scale == p->scale && n->p.qlin.out_zero_point == p->zp && n->p.qlin.out_type == p->type;
    if (layout_copy(n))
        return on_grid(g, n->in[0], p, depth + 1);
    if (n->op == TRTL_OP_CONCATENATION && n->n_out == 1 && n->n_in >= 1 && n->epi.act == TRTL_ACT_NONE &&
        !n->epi.has_residual) {
        for (int32_t k = 0; k < n->n_in; k++)
            if (!on_grid(g, n->in[k], p, depth + 1))
                return 0;
        return 1;
    }
    return 0;
}

trtl_status trtl_pass_drop_fake_quant(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "fake quantization of quantized values");
    for (int32_t qi = 0; qi < g->nn; qi++) {
        trtl_pm_qparm q, d;
        if (!trtl_pm_node_qparm(g, qi, TRTL_OP_QUANTIZE, &q))
            continue;
        const int32_t x = g->n[qi].n.in[0], c = g->n[qi].n.out[0];
        if (trtl_bg_is_output(g, c) || !on_grid(g, x, &q, 0))
            continue;
        int32_t dropped = 0, kept = 0;
        for (int32_t k = 0; k < g->nn; k++) {
            const trtl_node *n = &g->n[k].n;
            if (g->n[k].dead || n->n_in < 1 || n->in[0] != c)
                continue;
            const int32_t y = n->out[0];
            if (!trtl_pm_node_qparm(g, k, TRTL_OP_DEQUANTIZE, &d) || !trtl_pm_same_qparm(&d, &q) ||
                trtl_bg_is_output(g, y) || !trtl_pm_same_shape(&g->t[x], &g->t[y])) {
                kept++;
                continue;
            }
            g->n[k].dead = 1;
            trtl_pm_rewire(g, y, x);
            dropped++;
        }
        for (int32_t k = 0; k < g->nn; k++) /* c read elsewhere than as input 0 */
            for (int32_t j = 1; !g->n[k].dead && j < g->n[k].n.n_in; j++)
                kept += g->n[k].n.in[j] == c;
        if (!dropped)
            continue;
        if (!kept)
            g->n[qi].dead = 1;
        trtl_pass_log_add(&log, "'%s'%s: %d dequantization(s) after it removed, its input '%s' is on the grid "
                          "already", g->n[qi].n.name, kept ? " kept for its other readers" : " removed",
                          (int)dropped, g->t[x].name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
