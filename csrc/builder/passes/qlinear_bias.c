/* qlinear_bias.c -- the bias add after an int8 matrix multiply's output quantization, in the int8 layer's epilogue.
 *
 * onnxruntime's quantize_static quantizes a linear layer's MatMul and its bias Add apart (the MatMul's output gets
 * its own Q -> DQ), so after fuse_qdq and fold_fake_quant a BERT linear layer runs as two steps:
 *
 *     QLINEAR(x; out Q -> DQ (s1, z1))  ->  y  ->  Add(y, b)  [epilogue: QGRID (s2, z2), or none]  [-> Q (s2, z2)]
 *   ==>  QLINEAR(x; mid Q -> DQ (s1, z1), bias b after it (bias_after_mid), out (s2, z2) fake-quantized, codes, or
 *        FLOAT)
 *
 * b a FLOAT constant of K values broadcast over the last axis ([K], [1, .., K]: the output channels of the
 * FC / MATMUL modes).  What the Add's epilogue and readers were decides the output:
 *   - QGRID (fold_fake_quant's Q -> DQ after the add): out_quant 1 with its scale and code bounds;
 *   - no activation (or QGRID of the same parameters), and every reader of the add's output takes the codes of one
 *     set of parameters (qdq_int8_io's rule: a Q layer of them, whose readers then read the codes, an int8 layer
 *     quantizing its input or residual with them): out_quant 2 (the proj / ff2 layers, whose codes the int8
 *     residual add reads through a Q layer);
 *   - no activation otherwise, or another activation: out_quant 0 (FLOAT), the activation the QLINEAR's.
 * Exact, the same floats and codes as the two steps: the QLINEAR's epilogue computes y = DQ(Q(acc * scale; s1, z1))
 * as before (the mid quantization is the same arithmetic as the output one), then y + b[k] in float (one rounding, as
 * the elementwise add), then the output quantization with the correctly rounded quotient (as QGRID / QuantizeLinear).
 * Preconditions: the QLINEAR is FC / MATMUL mode with out_quant 1, no bias, mid quantization, residual or activation;
 * y is read by the add alone and is no network output; the add has no residual and writes y's shape.  Runs after
 * fold_fake_quant (whose QGRID epilogue it takes); plans store the attribute (version 10). */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"

/* The int8 library's scale range (kernels/qconv.c): a Q layer of another scale keeps its step. */
static int lib_scale_ok(float s) { return s >= 1e-30f && s <= 1e30f; }

/* Node ai is a bias add of QLINEAR output y (K channels): SUM(y, c) with c a FLOAT constant [.., 1, K] of K values,
 * no residual, writing y's shape; returns c's values. */
static const float *bias_of(const trtl_bgraph *g, int32_t ai, int32_t y, int64_t K)
{
    const trtl_node *a = &g->n[ai].n;
    if (g->n[ai].dead || a->op != TRTL_OP_ELEMENTWISE || a->p.ew.op != TRTL_EW_SUM || a->n_in != 2 || a->n_out != 1 ||
        a->epi.has_residual || a->in[0] == a->in[1] || g->t[a->out[0]].dtype != TRTL_FLOAT ||
        !trtl_pm_same_shape(&g->t[y], &g->t[a->out[0]]))
        return NULL;
    const int32_t c = a->in[0] == y ? a->in[1] : a->in[0];
    const trtl_bg_tensor *ct = &g->t[c];
    if (ct->kind != TRTL_TK_CONSTANT || !ct->data || ct->dtype != TRTL_FLOAT || ct->dmax.nb_dims < 1 ||
        ct->dmax.nb_dims > g->t[y].dmax.nb_dims || ct->dmax.d[ct->dmax.nb_dims - 1] != K || trtl_volume(&ct->dmax) != K)
        return NULL;
    return ct->data;
}

/* QGRID(alpha, beta) as a QLINEAR output quantization: the full code range of INT8 or UINT8 shifted by a zero point
 * in range (fold_fake_quant's Q -> DQ); 0 for other bounds (a clamp folded in). */
static int qgrid_params(float alpha, float beta, trtl_pm_qparm *q)
{
    float lo, hi;
    trtl_act_qgrid_bounds(beta, &lo, &hi);
    if (hi - lo != 255.0f || !lib_scale_ok(alpha))
        return 0;
    const int32_t z8 = -128 - (int32_t)lo, zu = -(int32_t)lo;
    if (z8 >= -128 && z8 <= 127)
        *q = (trtl_pm_qparm){alpha, z8, TRTL_INT8};
    else if (zu >= 0 && zu <= 255)
        *q = (trtl_pm_qparm){alpha, zu, TRTL_UINT8};
    else
        return 0;
    return 1;
}

/* Every reader of the add's output z takes the codes of one set of parameters (qdq_int8_io's rule: QLINEAR inputs and
 * residuals quantizing z with them, Q layers of them, max poolings of such): those parameters in *c. */
static int readers_take_codes(const trtl_bgraph *g, int32_t z, trtl_qlinear_params *c)
{
    return !trtl_bg_is_output(g, z) && trtl_qio_reader_params(g, z, c, 0) &&
           trtl_qio_consumers_take_codes(g, z, c, 0) && lib_scale_ok(c->out_scale);
}

static trtl_status try_bias(trtl_bgraph *g, int32_t ci, trtl_pass_log *log)
{
    trtl_node *c = &g->n[ci].n;
    trtl_qlinear_params *q = &c->p.qlin;
    if ((q->mode != TRTL_QL_FC && q->mode != TRTL_QL_MATMUL) || q->out_quant != 1 || q->mid_quant ||
        q->has_residual || q->act != TRTL_ACT_NONE || q->conv.bias.count || q->bias_after_mid || c->n_out != 1 ||
        c->epi.act != TRTL_ACT_NONE || c->epi.has_residual || g->n[ci].fixed_kernel)
        return TRTL_OK;
    const int32_t y = c->out[0];
    int32_t ai;
    if (g->t[y].dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) || trtl_bg_consumers(g, y, &ai) != 1)
        return TRTL_OK;
    const int64_t K = q->conv.num_output_maps;
    const float *bv = bias_of(g, ai, y, K);
    if (!bv)
        return TRTL_OK;
    const trtl_node *a = &g->n[ai].n;
    const int32_t z = a->out[0];
    trtl_pm_qparm out = {0};
    trtl_qlinear_params rc = {0};
    int32_t out_quant = 0, act = a->epi.act;
    if (act == TRTL_ACT_QGRID) {
        if (!qgrid_params(a->epi.alpha, a->epi.beta, &out))
            return TRTL_OK;
        out_quant = 1;
        act = TRTL_ACT_NONE;
    }
    /* codes for readers that take them: the add had no activation, or its fake quantization is theirs */
    if ((act == TRTL_ACT_NONE && out_quant == 0 && readers_take_codes(g, z, &rc)) ||
        (out_quant == 1 && readers_take_codes(g, z, &rc) && rc.out_scale == out.scale &&
         rc.out_zero_point == out.zp && rc.out_type == out.type)) {
        out_quant = 2;
        out = (trtl_pm_qparm){rc.out_scale, rc.out_zero_point, rc.out_type};
    }
    float *b = trtl_aligned_alloc(sizeof(float) * (size_t)K);
    if (!b)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory (qlinear_bias)");
    if (!trtl_bg_own(g, b)) /* (frees b) */
        return trtl_last_status();
    memcpy(b, bv, sizeof(float) * (size_t)K);
    /* commit: the output quantization becomes the mid one, the bias comes after it */
    q->mid_quant = 1;
    q->mid_scale = q->out_scale;
    q->mid_zero_point = q->out_zero_point;
    q->mid_type = q->out_type;
    q->conv.bias.type = TRTL_FLOAT;
    q->conv.bias.values = b;
    q->conv.bias.count = K;
    q->bias_after_mid = 1;
    q->act = act;
    q->alpha = a->epi.alpha;
    q->beta = a->epi.beta;
    q->out_quant = out_quant;
    if (out_quant) {
        q->out_scale = out.scale;
        q->out_zero_point = out.zp;
        q->out_type = out.type;
    }
    TRTL_TRY(trtl_pm_append_name(c, a->name));
    g->n[ai].dead = 1;
    c->out[0] = z;
    g->t[z].producer = ci;
    if (out_quant == 2) /* z becomes the codes; Q layers computing them again are bypassed (qdq_int8_io.c) */
        trtl_qio_retype(g, z, (trtl_dtype)out.type, &rc);
    trtl_pass_log_add(log, "'%s' adds its bias after its output's fake quantization (%s)", c->name,
                      out_quant == 2   ? "writes the codes its readers take"
                      : out_quant == 1 ? "the add's fake quantization as its output's"
                                       : "FLOAT output");
    return TRTL_OK;
}

trtl_status trtl_pass_qlinear_bias(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "bias after an int8 layer's output quantization");
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead && g->n[i].n.op == TRTL_OP_QLINEAR)
            TRTL_TRY(try_bias(g, i, &log));
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
