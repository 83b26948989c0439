/* fold_fake_quant.c -- a fake quantization left as two layers (Q -> DQ of the same per-tensor parameters on a float
 * tensor, where no int8 layer took the codes) becomes one step: the QGRID activation (core/params.h)
 *
 *     c = Q(x, s, z);  y = DQ(c, s, z)       ==>   y = s * clamp(rint(x / s), lo - z, hi - z)      (lo, hi: the codes' range)
 *
 * fused into the epilogue of x's producer where that is an elementwise layer or a matrix multiply with no activation
 * of its own reading nothing else (the value is still in cache: one pass over y instead of three), else one
 * ACTIVATION layer in place of the pair (one pass instead of two, and no int8 tensor in between).
 *
 * Exact: QuantizeLinear is sat(rne(x / s) + z) with the correctly rounded float32 quotient (NaN to the lowest code),
 * DequantizeLinear (q - z) * s; QGRID computes rint(x / s) with the same quotient, clamps it to the codes' range
 * shifted by -z (NaN to the lower bound), and multiplies by s: the same float32 value for every x.
 *
 * onnxruntime's quantize_static writes such pairs after every quantized operator's output: in a QDQ BERT encoder
 * each bias add after an int8 matrix multiply, the attention's matrix multiplies, its scale and softmax, and every
 * step of the erf GELU is followed by a quantize and a dequantize pass of its own.  Runs after fuse_qdq, qdq_int8_io
 * and drop_fake_quant: it only sees pairs those left as layers.  A pair whose codes have another reader (an int8
 * layer, a network output) is left alone.  The step is named after the producer (if fused), Q and the DQ, the DQ's
 * name last: engine/int8_grid.c finds implicit INT8 inputs (refit) by that name. */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/status.h"

/* Producer of x that can take the fake quantization as its epilogue activation, else -1. */
static int32_t fusable_producer(const trtl_bgraph *g, int32_t x)
{
    const int32_t p = g->t[x].producer;
    if (p < 0 || g->n[p].dead || trtl_bg_is_output(g, x) || trtl_bg_consumers(g, x, NULL) != 1)
        return -1;
    const trtl_node *n = &g->n[p].n;
    if (n->n_out != 1 || n->epi.act != TRTL_ACT_NONE || g->n[p].want_set || g->n[p].fixed_kernel)
        return -1;
    return n->op == TRTL_OP_ELEMENTWISE || n->op == TRTL_OP_MATRIX_MULTIPLY ? p : -1;
}

/* The first DQ reader of codes c when all of c's readers are DQs reading it as input 0 with parameters q, the shape
 * of x, of which only that first one may write a network output; else -1. */
static int32_t dq_readers(const trtl_bgraph *g, int32_t c, int32_t x, const trtl_pm_qparm *q)
{
    int32_t first = -1;
    for (int32_t k = 0; k < g->nn; k++) {
        const trtl_node *r = &g->n[k].n;
        if (g->n[k].dead)
            continue;
        for (int32_t j = 0; j < r->n_in; j++) {
            if (r->in[j] != c)
                continue;
            trtl_pm_qparm d;
            if (j != 0 || !trtl_pm_node_qparm(g, k, TRTL_OP_DEQUANTIZE, &d) || !trtl_pm_same_qparm(&d, q) ||
                !trtl_pm_same_shape(&g->t[x], &g->t[r->out[0]]) || (first >= 0 && trtl_bg_is_output(g, r->out[0])))
                return -1;
            if (first < 0)
                first = k;
        }
    }
    return first;
}

/* Every DQ reader of c dies; the readers of the others' outputs read y (the first one's output) instead. */
static void retire_dqs(trtl_bgraph *g, int32_t c, int32_t y)
{
    for (int32_t k = 0; k < g->nn; k++)
        if (!g->n[k].dead && g->n[k].n.n_in >= 1 && g->n[k].n.in[0] == c) {
            g->n[k].dead = 1;
            if (g->n[k].n.out[0] != y)
                trtl_pm_rewire(g, g->n[k].n.out[0], y);
        }
}

trtl_status trtl_pass_fold_fake_quant(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "fake quantization as one step");
    const int32_t nn = g->nn; /* nodes added below are activations, not quantizers */
    int added = 0;
    for (int32_t qi = 0; qi < nn; qi++) {
        trtl_pm_qparm q;
        if (!trtl_pm_node_qparm(g, qi, TRTL_OP_QUANTIZE, &q))
            continue;
        const int32_t x = g->n[qi].n.in[0], c = g->n[qi].n.out[0];
        /* (a scale the vector QGRID kernels do not compute exactly keeps its Q / DQ pair) */
        const int32_t d0 = g->t[x].dtype != TRTL_FLOAT || trtl_bg_is_output(g, c) || !trtl_act_qgrid_scale_ok(q.scale)
                               ? -1
                               : dq_readers(g, c, x, &q);
        if (d0 < 0)
            continue;
        const int32_t y = g->n[d0].n.out[0]; /* the fake-quantized tensor: the first DQ's output, kept */
        const float beta = trtl_act_qgrid_codes_beta(q.type != TRTL_UINT8, q.zp);
        const int32_t p = fusable_producer(g, x);
        if (p >= 0) { /* the producer writes y, with the fake quantization as its activation */
            trtl_node *pn = &g->n[p].n;
            char *pq = trtl_bg_join_names(pn->name, g->n[qi].n.name); /* named "producer + Q + DQ" (as the */
            char *nm = pq ? trtl_bg_join_names(pq, g->n[d0].n.name) : NULL; /* activation step: DQ's last) */
            free(pq);
            if (!nm)
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            free(pn->name);
            pn->name = nm;
            pn->epi.act = TRTL_ACT_QGRID;
            pn->epi.alpha = q.scale;
            pn->epi.beta = beta;
            pn->out[0] = y;
            g->n[qi].dead = 1;
            retire_dqs(g, c, y);
            g->t[y].producer = p;
            trtl_pass_log_add(&log, "'%s' and its dequantization fused into the epilogue of '%s'",
                              g->n[qi].n.name, pn->name);
            continue;
        }
        /* one activation step x -> y in place of the pair */
        char *name = trtl_bg_join_names(g->n[qi].n.name, g->n[d0].n.name);
        if (!name)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        g->n[qi].dead = 1;
        retire_dqs(g, c, y);
        const trtl_activation_params ap = {TRTL_ACT_QGRID, q.scale, beta};
        const int32_t a = trtl_bg_add_activation(g, name, x, y, &ap);
        free(name);
        if (a < 0)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        g->n[a].order = g->n[qi].order; /* sorted where the pair was */
        added = 1;
        trtl_pass_log_add(&log, "'%s' and its dequantization are one fake-quantize step", g->n[qi].n.name);
    }
    if (added) /* appended activations: back to topological order for the passes after this one */
        TRTL_TRY(trtl_bg_sort(g));
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
