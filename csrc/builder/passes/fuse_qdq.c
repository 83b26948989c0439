/* fuse_qdq.c -- explicit quantization: a convolution, fully connected layer or matrix multiply
 * whose activation arrives fake-quantized per tensor and whose weights are int8 values times a
 * per-output-channel (or per-tensor) scale becomes one internal QLINEAR node computed on integers
 * (trtl_qlinear_params, core/params.h):
 *
 *     DQ(Q(x; sx, zx)) -> conv(W = q_w * s_w, b) [-> + bias] [-> act(. + residual)] [-> Q -> DQ (sy, zy)]
 *   ==>  QLINEAR(x): acc = sum (Q(x) - zx) * q_w;  y = acc * sx * s_w[k] + b[k];  y = act(y + residual);
 *                    y = DQ(Q(y; sy, zy))
 *
 * The math is the same: conv(DQ(Q(x)), q_w * s_w) = sx * s_w[k] * sum (Q(x) - zx) * q_w, exactly in
 * real arithmetic (float rounding of the fp32 path aside).  Preconditions:
 *   - the activation's Q and DQ are per tensor (one scale, one zero point, constants) with equal
 *     parameters; the DQ's other consumers keep it;
 *   - the weights are int8 multiples of their scale: the parser and constant folding turn
 *     DQ(int8 constant) into float weights, which are recovered here exactly (per channel or per
 *     tensor, |q| <= 127 or 128; every weight within 1e-3 of an integer multiple); weights that
 *     are not stay fp32 (the node is left alone);
 *   - matrix multiply: input 0 not transposed, input 1 a constant [..1, Cin, K] (or [K, Cin]
 *     transposed) -- a following SUM with a constant [K] vector becomes the bias;
 *   - an absorbed intermediate feeds only the fused node and is no network output.
 * The node's own fused epilogue (fuse_epilogue runs first: activation, residual) moves into the
 * QLINEAR params, applied before the output fake-quantization, as the layers were ordered.
 * Layout-only ops between the activation's DQ and the node (max pooling, shuffle, slice without
 * FILL) commute with a per-tensor fake quantization, so DQ(Q(x)) -> maxpool -> conv also fuses: the
 * pooling then reads x and the QLINEAR node quantizes the pooled values.
 * Where no rule applies the Q/DQ layers stay and run as reference kernels (fp32 simulation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"
#include "network/op_table.h"

typedef trtl_pm_qparm qparm;

static int live(const trtl_bgraph *g, int32_t i) { return i >= 0 && i < g->nn && !g->n[i].dead; }

static int const_tensor(const trtl_bgraph *g, int32_t t)
{
    return t >= 0 && g->t[t].kind == TRTL_TK_CONSTANT && g->t[t].data;
}

/* t = DQ(Q(f)) per tensor with equal parameters: returns f (FLOAT) and the parameters, else -1.
 * (t itself when a node fused earlier in this pass fake-quantizes it.) */
static int32_t fake_quant_source(const trtl_bgraph *g, int32_t t, qparm *q)
{
    qparm dq, qq;
    int32_t d = g->t[t].producer;
    if (live(g, d) && g->n[d].n.op == TRTL_OP_QLINEAR && g->n[d].n.p.qlin.out_quant) {
        /* already fake-quantized by a fused node (its output Q -> DQ): quantizing it again with the
         * same parameters gives the same integers */
        q->scale = g->n[d].n.p.qlin.out_scale;
        q->zp = g->n[d].n.p.qlin.out_zero_point;
        q->type = g->n[d].n.p.qlin.out_type;
        return t;
    }
    if (!trtl_pm_node_qparm(g, d, TRTL_OP_DEQUANTIZE, &dq))
        return -1;
    int32_t qn = g->t[g->n[d].n.in[0]].producer;
    if (!trtl_pm_node_qparm(g, qn, TRTL_OP_QUANTIZE, &qq) || !trtl_pm_same_qparm(&dq, &qq))
        return -1;
    int32_t f = g->n[qn].n.in[0];
    if (g->t[f].dtype != TRTL_FLOAT)
        return -1;
    *q = dq;
    return f;
}

/* A layout-only node that commutes with a per-tensor fake quantization. */
static int layout_only(const trtl_node *n)
{
    if (n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
        return 0;
    return (n->op == TRTL_OP_POOLING && n->p.pool.type == TRTL_POOL_MAX) || n->op == TRTL_OP_SHUFFLE ||
           (n->op == TRTL_OP_SLICE && n->p.slice.mode != TRTL_SLICE_FILL);
}

/* Where the quantized activation of input tensor x comes from: *src the float tensor to quantize
 * (x's DQ(Q(.)) source, or x itself when a layout-only node L between does the moving: then *via
 * is L, whose input is to be rewired to *lsrc); -1 when x is not fake-quantized. */
static int32_t activation_source(const trtl_bgraph *g, int32_t x, qparm *q, int32_t *via, int32_t *lsrc)
{
    *via = -1;
    int32_t f = fake_quant_source(g, x, q);
    if (f >= 0)
        return f;
    int32_t l = g->t[x].producer;
    if (!live(g, l) || !layout_only(&g->n[l].n) || trtl_bg_is_output(g, x) || trtl_bg_consumers(g, x, NULL) != 1)
        return -1;
    f = fake_quant_source(g, g->n[l].n.in[0], q);
    if (f < 0)
        return -1;
    *via = l;
    *lsrc = f;
    return x;
}

/* Integer weights q and scales s (K rows of n) with w == q * s within 1e-3 of a step, per channel
 * or else per tensor; 0 if w is no such grid. */
static int recover_weights(const float *w, int64_t K, int64_t n, int8_t *q, float *s)
{
    static const double divs[2] = {127.0, 128.0};
    for (int per_channel = 1; per_channel >= 0; per_channel--)
        for (int di = 0; di < 2; di++) {
            double all = 0;
            for (int64_t i = 0; i < K * n; i++)
                all = fmax(all, fabs(w[i]));
            int ok = 1;
            for (int64_t k = 0; ok && k < K; k++) {
                double m = 0;
                for (int64_t i = 0; per_channel && i < n; i++)
                    m = fmax(m, fabs(w[k * n + i]));
                if (!per_channel)
                    m = all;
                s[k] = m > 0 ? (float)(m / divs[di]) : 1.0f;
                if (!(s[k] > 0) || !isfinite(s[k]))
                    return 0;
                for (int64_t i = 0; ok && i < n; i++) {
                    double r = w[k * n + i] / (double)s[k], ri = nearbyint(r);
                    ok = fabs(r - ri) <= 1e-3 && ri >= -128 && ri <= 127;
                    q[k * n + i] = (int8_t)ri;
                }
            }
            if (ok)
                return 1;
        }
    return 0;
}

/* A fresh graph-owned buffer. */
static void *owned(trtl_bgraph *g, size_t bytes)
{
    void *p = trtl_aligned_alloc(bytes ? bytes : 1);
    if (!p) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory (fuse_qdq)");
        return NULL;
    }
    return trtl_bg_own(g, p) ? p : NULL;
}

/* The float weights [K, n] of node c (the matrix multiply's transposed into *tmp, malloc'd). */
static int weights_of(const trtl_bgraph *g, const trtl_node *c, const float **w, int64_t *K, int64_t *n, float **tmp)
{
    *tmp = NULL;
    if (c->op == TRTL_OP_CONVOLUTION) {
        if (c->p.conv.kernel.type != TRTL_FLOAT || c->p.conv.num_output_maps < 1)
            return 0;
        *K = c->p.conv.num_output_maps;
        *n = c->p.conv.kernel.count / *K;
        *w = c->p.conv.kernel.values;
        return *n > 0 && *w;
    }
    if (c->op == TRTL_OP_FULLY_CONNECTED) {
        if (c->p.fc.kernel.type != TRTL_FLOAT || c->p.fc.num_output_channels < 1)
            return 0;
        *K = c->p.fc.num_output_channels;
        *n = c->p.fc.kernel.count / *K;
        *w = c->p.fc.kernel.values;
        return *n > 0 && *w;
    }
    /* matrix multiply: x [..., M, Cin] (not transposed) times a constant B */
    int32_t b = c->in[1];
    const trtl_dims *bd = &g->t[b].dmax, *xd = &g->t[c->in[0]].dmax;
    if (c->n_in < 2 || c->p.matmul.op0 != TRTL_MATOP_NONE || c->p.matmul.op1 == TRTL_MATOP_VECTOR ||
        !const_tensor(g, b) || g->t[b].dtype != TRTL_FLOAT || bd->nb_dims < 2 || xd->nb_dims < bd->nb_dims)
        return 0;
    for (int32_t i = 0; i + 2 < bd->nb_dims; i++)
        if (bd->d[i] != 1)
            return 0;
    int tr = c->p.matmul.op1 == TRTL_MATOP_TRANSPOSE;
    int64_t r0 = bd->d[bd->nb_dims - 2], r1 = bd->d[bd->nb_dims - 1];
    *K = tr ? r0 : r1;
    *n = tr ? r1 : r0;
    const float *bv = g->t[b].data;
    if (tr) {
        *w = bv;
        return *K > 0 && *n > 0;
    }
    *tmp = malloc(sizeof(float) * (size_t)(*K * *n));
    if (!*tmp)
        return -1;
    for (int64_t i = 0; i < *n; i++)
        for (int64_t k = 0; k < *K; k++)
            (*tmp)[k * *n + i] = bv[i * *K + k];
    *w = *tmp;
    return *K > 0 && *n > 0;
}

/* y's only consumer when y is an intermediate that may disappear: else -1. */
static int32_t sole_consumer(const trtl_bgraph *g, int32_t y)
{
    int32_t who;
    if (trtl_bg_is_output(g, y) || trtl_bg_consumers(g, y, &who) != 1)
        return -1;
    return who;
}

/* The matrix multiply's output y feeds only SUM(y, c) with c a constant [..1, K]: c's values. */
static const float *bias_add(const trtl_bgraph *g, int32_t y, int64_t K, int32_t *add)
{
    int32_t a = sole_consumer(g, y);
    if (!live(g, a))
        return NULL;
    const trtl_node *n = &g->n[a].n;
    if (n->op != TRTL_OP_ELEMENTWISE || n->p.ew.op != TRTL_EW_SUM || n->n_in != 2 || n->epi.has_residual)
        return NULL;
    int32_t c = n->in[0] == y ? n->in[1] : n->in[0];
    const trtl_dims *cd = &g->t[c].dmax;
    if (c == y || !const_tensor(g, c) || g->t[c].dtype != TRTL_FLOAT || cd->nb_dims < 1 ||
        cd->nb_dims > g->t[y].dmax.nb_dims || cd->d[cd->nb_dims - 1] != K || trtl_volume(cd) != K)
        return NULL;
    *add = a;
    return g->t[c].data;
}

/* y feeds only Q whose output feeds only DQ, both per tensor with equal parameters: the DQ node. */
static int32_t output_fake_quant(const trtl_bgraph *g, int32_t y, qparm *q, int32_t *qnode)
{
    qparm a, b;
    int32_t qn = sole_consumer(g, y);
    if (!trtl_pm_node_qparm(g, qn, TRTL_OP_QUANTIZE, &a) || g->n[qn].n.in[0] != y)
        return -1;
    int32_t dn = sole_consumer(g, g->n[qn].n.out[0]);
    if (!trtl_pm_node_qparm(g, dn, TRTL_OP_DEQUANTIZE, &b) || g->n[dn].n.in[0] != g->n[qn].n.out[0] || !trtl_pm_same_qparm(&a, &b))
        return -1;
    *q = a;
    *qnode = qn;
    return dn;
}

/* Tries to fuse node ci; returns OK whether or not it did (*done says). */
static trtl_status try_fuse(trtl_bgraph *g, int32_t ci, trtl_pass_log *log)
{
    trtl_node *c = &g->n[ci].n;
    qparm in_q, out_q;
    int32_t via = -1, lsrc = -1;
    int32_t src = activation_source(g, c->in[0], &in_q, &via, &lsrc);
    if (src < 0)
        return TRTL_OK;
    const float *w;
    float *tmp;
    int64_t K, n;
    int wo = weights_of(g, c, &w, &K, &n, &tmp);
    if (wo < 0)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory (fuse_qdq)");
    if (!wo)
        return TRTL_OK;
    int8_t *qw = owned(g, (size_t)(K * n));
    float *ws = qw ? owned(g, sizeof(float) * (size_t)K) : NULL;
    if (!ws) {
        free(tmp);
        return trtl_last_status();
    }
    int exact = recover_weights(w, K, n, qw, ws);
    free(tmp);
    if (!exact) {
        trtl_log(TRTL_LOG_VERBOSE, "fuse_qdq: '%s' keeps fp32: its weights are not int8 multiples of a scale", c->name);
        return TRTL_OK;
    }
    trtl_params p;
    trtl_init_qlinear(&p);
    trtl_qlinear_params *q = &p.qlin;
    int32_t y = c->out[0], add = -1;
    if (c->op == TRTL_OP_CONVOLUTION) {
        q->conv = c->p.conv;
        q->mode = TRTL_QL_CONV;
    } else {
        q->mode = c->op == TRTL_OP_FULLY_CONNECTED ? TRTL_QL_FC : TRTL_QL_MATMUL;
        q->conv.num_output_maps = (int32_t)K;
        q->conv.bias = c->op == TRTL_OP_FULLY_CONNECTED ? c->p.fc.bias : q->conv.bias;
    }
    q->conv.kernel.type = TRTL_INT8;
    q->conv.kernel.values = qw;
    q->conv.kernel.count = K * n;
    q->w_scale.type = TRTL_FLOAT;
    q->w_scale.values = ws;
    q->w_scale.count = K;
    q->in_scale = in_q.scale;
    q->in_zero_point = in_q.zp;
    q->in_type = in_q.type;
    int32_t act = c->epi.act;
    float alpha = c->epi.alpha, beta = c->epi.beta;
    if (q->mode == TRTL_QL_MATMUL && act == TRTL_ACT_NONE && !c->epi.has_residual) {
        const float *bv = bias_add(g, y, K, &add);
        if (bv) {
            float *b = owned(g, sizeof(float) * (size_t)K);
            if (!b)
                return trtl_last_status();
            memcpy(b, bv, sizeof(float) * (size_t)K);
            q->conv.bias.type = TRTL_FLOAT;
            q->conv.bias.values = b;
            q->conv.bias.count = K;
            act = g->n[add].n.epi.act;
            alpha = g->n[add].n.epi.alpha;
            beta = g->n[add].n.epi.beta;
            y = g->n[add].n.out[0];
        }
    }
    q->act = act;
    q->alpha = alpha;
    q->beta = beta;
    q->has_residual = c->epi.has_residual;
    int32_t qn = -1, dn = output_fake_quant(g, y, &out_q, &qn);
    if (dn >= 0) {
        q->out_quant = 1;
        q->out_scale = out_q.scale;
        q->out_zero_point = out_q.zp;
        q->out_type = out_q.type;
    }
    /* commit */
    if (add >= 0) {
        TRTL_TRY(trtl_pm_append_name(c, g->n[add].n.name));
        g->n[add].dead = 1;
    }
    if (dn >= 0) {
        TRTL_TRY(trtl_pm_append_name(c, g->n[qn].n.name));
        TRTL_TRY(trtl_pm_append_name(c, g->n[dn].n.name));
        y = g->n[dn].n.out[0];
        g->n[qn].dead = g->n[dn].dead = 1;
    }
    int32_t residual = c->epi.has_residual ? c->in[c->n_in - 1] : -1;
    if (via >= 0)
        g->n[via].n.in[0] = lsrc;
    c->in[0] = src;
    c->n_in = 1;
    if (residual >= 0)
        c->in[c->n_in++] = residual;
    c->op = TRTL_OP_QLINEAR;
    c->p = p;
    c->epi.act = TRTL_ACT_NONE;
    c->epi.has_residual = 0;
    c->out[0] = y;
    g->t[y].producer = ci;
    trtl_pass_log_add(log, "'%s' computes in int8 (%s weights, input scale %g zero point %d%s%s)", c->name,
                      K > 1 && ws[0] != ws[K - 1] ? "per-channel" : "per-tensor", (double)in_q.scale, (int)in_q.zp,
                      via >= 0 ? ", through a layout-only layer" : "", dn >= 0 ? ", output fake-quantized" : "");
    return TRTL_OK;
}

/* ---- residual adds between int8 layers ------------------------------------------------------------
 *
 *     QLINEAR_c(...; out Q -> DQ (sa, za)) -> a;  DQ(qb; sb, zb) -> b  (or any FLOAT b)
 *     add(a, b) [-> act] [-> Q -> DQ (so, zo)]
 *   ==>  QLINEAR_c(...; mid Q -> DQ (sa, za), residual qb codes (sb, zb) or b, act, out (so, zo))
 *
 * ResNet's skip connection as quantize_static writes it (the add's inputs DQ'd, its output Q'd; the
 * ReLU after it dropped: the output's range starts at 0).  The values are the same: the fused epilogue
 * fake-quantizes the convolution's result with (sa, za) (mid_quant), adds the residual -- read from
 * the codes qb as (qb - zb) * sb, what the DQ computes, or the float b -- applies the add's
 * activation and quantizes the output as the Q -> DQ after the add did.  When the add's output feeds
 * other things than one Q -> DQ, but every consumer quantizes it with one set of parameters (int8
 * layers' inputs, Q layers), the output is fake-quantized with those (the consumers get the same
 * integers back), so that qdq_int8_io can make it int8.  Preconditions: c has no activation or
 * residual of its own; a feeds only the add; both inputs have the add's output shape (no broadcast);
 * intermediates are no network outputs. */

static int same_dims3(const trtl_bg_tensor *a, const trtl_bg_tensor *b)
{
    return trtl_dims_equal(&a->dmin, &b->dmin) && trtl_dims_equal(&a->dopt, &b->dopt) &&
           trtl_dims_equal(&a->dmax, &b->dmax);
}

/* Every live consumer of y quantizes it per tensor with one set of parameters (QLINEAR input 0 or a
 * Q layer, or a shuffle / slice whose readers do): those in *q; y no network output. */
static int consumers_quantize(const trtl_bgraph *g, int32_t y, qparm *q)
{
    int32_t seen = 0;
    if (trtl_bg_is_output(g, y))
        return 0;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        const trtl_node *n = &g->n[i].n;
        int uses = 0;
        for (int32_t j = 0; j < n->n_in; j++)
            uses += n->in[j] == y;
        if (!uses)
            continue;
        qparm p;
        if (uses == 1 && layout_only(n) && n->op != TRTL_OP_POOLING) {
            /* a shuffle / slice passing y on: its readers decide */
            if (!consumers_quantize(g, n->out[0], &p))
                return 0;
        } else if (n->op == TRTL_OP_QLINEAR && uses == 1 && n->in[0] == y) {
            p.scale = n->p.qlin.in_scale;
            p.zp = n->p.qlin.in_zero_point;
            p.type = n->p.qlin.in_type;
        } else if (!(uses == 1 && n->in[0] == y && trtl_pm_node_qparm(g, i, TRTL_OP_QUANTIZE, &p))) {
            return 0;
        }
        if (seen++ && !trtl_pm_same_qparm(&p, q))
            return 0;
        *q = p;
    }
    return seen > 0;
}

/* Where quantized operand t comes from: the codes under its DQ (*codes = 1), or the float tensor its
 * fake quantization quantizes (*codes = 0); -1 when t is not quantized per tensor. */
static int32_t operand_source(const trtl_bgraph *g, int32_t t, qparm *q, int *codes)
{
    int32_t d = g->t[t].producer;
    *codes = trtl_pm_node_qparm(g, d, TRTL_OP_DEQUANTIZE, q);
    if (*codes)
        return g->n[d].n.in[0];
    return fake_quant_source(g, t, q);
}

/* The add ai of two quantized operands that no int8 layer produces (or that try_residual could not
 * fuse) becomes a standalone int8 add: QLINEAR mode ADD (x: operand 0's codes or float source,
 * residual: operand 1's codes or float source, both with their parameters). */
static trtl_status try_add(trtl_bgraph *g, int32_t ai, trtl_pass_log *log)
{
    trtl_node *a = &g->n[ai].n;
    const int32_t y = a->out[0];
    if (!same_dims3(&g->t[a->in[0]], &g->t[y]) || !same_dims3(&g->t[a->in[1]], &g->t[y]))
        return TRTL_OK;
    qparm q0, q1, oq;
    int c0, c1;
    int32_t s0 = operand_source(g, a->in[0], &q0, &c0), s1 = operand_source(g, a->in[1], &q1, &c1);
    if (s0 < 0 || s1 < 0)
        return TRTL_OK;
    trtl_params p;
    trtl_init_qlinear(&p);
    trtl_qlinear_params *q = &p.qlin;
    q->mode = TRTL_QL_ADD;
    q->conv.num_output_maps = 0;
    q->in_scale = q0.scale;
    q->in_zero_point = q0.zp;
    q->in_type = q0.type;
    q->has_residual = 1;
    /* a float source is fake-quantized by its own parameters first: read through a DQ(Q) it must stay so */
    int32_t r = c1 ? s1 : a->in[1];
    q->res_quant = c1;
    q->res_scale = q1.scale;
    q->res_zero_point = q1.zp;
    q->res_type = q1.type;
    q->act = a->epi.act;
    q->alpha = a->epi.alpha;
    q->beta = a->epi.beta;
    int32_t qn = -1, dn = output_fake_quant(g, y, &oq, &qn);
    if (dn >= 0 || consumers_quantize(g, y, &oq)) {
        q->out_quant = 1;
        q->out_scale = oq.scale;
        q->out_zero_point = oq.zp;
        q->out_type = oq.type;
    }
    int32_t out = y;
    if (dn >= 0) {
        TRTL_TRY(trtl_pm_append_name(a, g->n[qn].n.name));
        TRTL_TRY(trtl_pm_append_name(a, g->n[dn].n.name));
        out = g->n[dn].n.out[0];
        g->n[qn].dead = g->n[dn].dead = 1;
    }
    a->op = TRTL_OP_QLINEAR;
    a->p = p;
    a->in[0] = s0;
    a->in[1] = r;
    a->epi.act = TRTL_ACT_NONE;
    a->out[0] = out;
    g->t[out].producer = ai;
    trtl_pass_log_add(log, "'%s' adds in int8 (%s + %s%s)", a->name, c0 ? trtl_dtype_name(g->t[s0].dtype) : "FLOAT",
                      c1 ? trtl_dtype_name(g->t[s1].dtype) : "FLOAT", q->out_quant ? ", output fake-quantized" : "");
    return TRTL_OK;
}

/* Tries to fuse the add node ai into the int8 layer producing one of its inputs. */
static trtl_status try_residual(trtl_bgraph *g, int32_t ai, trtl_pass_log *log)
{
    const trtl_node *a = &g->n[ai].n;
    if (a->op != TRTL_OP_ELEMENTWISE || a->p.ew.op != TRTL_EW_SUM || a->n_in != 2 || a->n_out != 1 ||
        a->epi.has_residual || a->in[0] == a->in[1] || g->t[a->out[0]].dtype != TRTL_FLOAT)
        return TRTL_OK;
    const int32_t y = a->out[0];
    for (int k = 0; k < 2; k++) {
        int32_t t = a->in[k], b = a->in[1 - k], ci = g->t[t].producer;
        if (!live(g, ci) || g->n[ci].n.op != TRTL_OP_QLINEAR || sole_consumer(g, t) != ai ||
            g->t[b].dtype != TRTL_FLOAT || !same_dims3(&g->t[t], &g->t[y]) || !same_dims3(&g->t[b], &g->t[y]))
            continue;
        trtl_qlinear_params *q = &g->n[ci].n.p.qlin;
        if (q->out_quant != 1 || q->act != TRTL_ACT_NONE || q->has_residual || q->mid_quant)
            continue;
        /* the residual: DQ(codes) -> the codes, else b as it is */
        qparm rq, oq;
        int32_t res = b, dq = g->t[b].producer;
        int res_codes = 0;
        if (trtl_pm_node_qparm(g, dq, TRTL_OP_DEQUANTIZE, &rq)) {
            res = g->n[dq].n.in[0];
            res_codes = 1;
        }
        /* the output */
        int32_t qn = -1, dn = output_fake_quant(g, y, &oq, &qn), out_quant = dn >= 0;
        if (dn < 0 && consumers_quantize(g, y, &oq))
            out_quant = 1;
        trtl_node *c = &g->n[ci].n;
        TRTL_TRY(trtl_pm_append_name(c, a->name));
        q->mid_quant = 1;
        q->mid_scale = q->out_scale;
        q->mid_zero_point = q->out_zero_point;
        q->mid_type = q->out_type;
        q->out_quant = out_quant;
        if (out_quant) {
            q->out_scale = oq.scale;
            q->out_zero_point = oq.zp;
            q->out_type = oq.type;
        }
        q->act = a->epi.act;
        q->alpha = a->epi.alpha;
        q->beta = a->epi.beta;
        q->has_residual = 1;
        q->res_quant = res_codes;
        if (res_codes) {
            q->res_scale = rq.scale;
            q->res_zero_point = rq.zp;
            q->res_type = rq.type;
        }
        c->in[1] = res;
        c->n_in = 2;
        int32_t out = y;
        g->n[ai].dead = 1;
        if (dn >= 0) {
            TRTL_TRY(trtl_pm_append_name(c, g->n[qn].n.name));
            TRTL_TRY(trtl_pm_append_name(c, g->n[dn].n.name));
            out = g->n[dn].n.out[0];
            g->n[qn].dead = g->n[dn].dead = 1;
        }
        c->out[0] = out;
        g->t[out].producer = ci;
        trtl_pass_log_add(log, "'%s' adds its residual in int8 (%s residual%s)", c->name,
                          res_codes ? trtl_dtype_name(g->t[res].dtype) : "FLOAT",
                          out_quant ? ", output fake-quantized" : "");
        return TRTL_OK;
    }
    return try_add(g, ai, log);
}

/* ---- an activation between two Q -> DQ pairs --------------------------------------------------------
 *
 *     QLINEAR_c(...; out Q -> DQ (s1, z1)) -> act -> Q -> DQ (s2, z2)     (int8 symmetric activations:
 *     quantize_static keeps the ReLU between the convolution's Q/DQ and its own)
 *   ==>  QLINEAR_c(...; mid Q -> DQ (s1, z1), act, out (s2, z2))
 *
 * A node whose epilogue already uses the mid quantization (a fused residual) or has no mid step (the
 * add) takes the activation only when (s2, z2) == (s1, z1): act(DQ(Q(v))) quantized again with the same
 * parameters is DQ(Q(act(v))) for the activations that keep 0 (a code) and are monotonic (ReLU, clip at
 * 0 and above), so only those. */
static int keeps_grid(const trtl_activation_params *a)
{
    return a->type == TRTL_ACT_RELU;
}

static trtl_status try_activation(trtl_bgraph *g, int32_t ni, trtl_pass_log *log)
{
    trtl_node *n = &g->n[ni].n;
    if (n->op != TRTL_OP_ACTIVATION || n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual)
        return TRTL_OK;
    int32_t t = n->in[0], ci = g->t[t].producer, y = n->out[0];
    if (!live(g, ci) || g->n[ci].n.op != TRTL_OP_QLINEAR || sole_consumer(g, t) != ni ||
        g->t[y].dtype != TRTL_FLOAT)
        return TRTL_OK;
    trtl_node *c = &g->n[ci].n;
    trtl_qlinear_params *q = &c->p.qlin;
    if (q->out_quant != 1 || q->act != TRTL_ACT_NONE)
        return TRTL_OK;
    qparm oq, p1 = {q->out_scale, q->out_zero_point, q->out_type};
    int32_t qn = -1, dn = output_fake_quant(g, y, &oq, &qn);
    int out_quant = dn >= 0 || consumers_quantize(g, y, &oq);
    const int has_mid = q->mode == TRTL_QL_CONV || q->mode == TRTL_QL_FC || q->mode == TRTL_QL_MATMUL;
    if (!has_mid || q->mid_quant) {
        if (!out_quant || !trtl_pm_same_qparm(&oq, &p1) || !keeps_grid(&n->p.act))
            return TRTL_OK;
    } else {
        q->mid_quant = 1;
        q->mid_scale = p1.scale;
        q->mid_zero_point = p1.zp;
        q->mid_type = p1.type;
    }
    q->act = n->p.act.type;
    q->alpha = n->p.act.alpha;
    q->beta = n->p.act.beta;
    q->out_quant = out_quant;
    if (out_quant) {
        q->out_scale = oq.scale;
        q->out_zero_point = oq.zp;
        q->out_type = oq.type;
    }
    TRTL_TRY(trtl_pm_append_name(c, n->name));
    g->n[ni].dead = 1;
    if (dn >= 0) {
        TRTL_TRY(trtl_pm_append_name(c, g->n[qn].n.name));
        TRTL_TRY(trtl_pm_append_name(c, g->n[dn].n.name));
        y = g->n[dn].n.out[0];
        g->n[qn].dead = g->n[dn].dead = 1;
    }
    c->out[0] = y;
    g->t[y].producer = ci;
    trtl_pass_log_add(log, "'%s' applies its activation between two quantizations", c->name);
    return TRTL_OK;
}

/* ---- average pooling on codes ---------------------------------------------------------------------
 *
 *     DQ(Q(x; s, z)) -> average pooling / global average pooling (a mean over the last two dims of a
 *     4-D tensor) [-> Q -> DQ (so, zo)]
 *   ==>  QLINEAR mode POOL(x): y = sum (Q(x) - z) * s / count [-> DQ(Q(y))]
 *
 * (kernels/qpool.h).  Only 2-D windows with explicit round-down padding and no blending. */
static int pool_mode_of(const trtl_bgraph *g, const trtl_node *n, trtl_params *p)
{
    if (n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE || n->epi.has_residual ||
        g->t[n->in[0]].dmax.nb_dims != 4)
        return TRTL_QP_NONE;
    if (n->op == TRTL_OP_REDUCE)
        return n->p.reduce.op == TRTL_RED_AVG && n->p.reduce.axes == 0xCu
                   ? (n->p.reduce.keep_dims ? TRTL_QP_GLOBAL : TRTL_QP_GLOBAL_DROP)
                   : TRTL_QP_NONE;
    const trtl_pooling_params *pp = &n->p.pool;
    if (n->op != TRTL_OP_POOLING || pp->type != TRTL_POOL_AVERAGE || pp->window_size.nb_dims != 2 ||
        pp->padding_mode != TRTL_PADMODE_EXPLICIT_ROUND_DOWN)
        return TRTL_QP_NONE;
    p->qlin.conv.kernel_size = pp->window_size;
    p->qlin.conv.stride = pp->stride;
    p->qlin.conv.pre_padding = pp->pre_padding;
    p->qlin.conv.post_padding = pp->post_padding;
    p->qlin.conv.padding_mode = pp->padding_mode;
    return pp->average_count_excludes_padding ? TRTL_QP_AVG_EXCL : TRTL_QP_AVG;
}

static trtl_status try_pool(trtl_bgraph *g, int32_t pi, trtl_pass_log *log)
{
    trtl_node *n = &g->n[pi].n;
    trtl_params p;
    trtl_init_qlinear(&p);
    int mode = pool_mode_of(g, n, &p);
    if (mode == TRTL_QP_NONE)
        return TRTL_OK;
    qparm in_q, out_q;
    int32_t src = fake_quant_source(g, n->in[0], &in_q);
    if (src < 0)
        return TRTL_OK;
    trtl_qlinear_params *q = &p.qlin;
    q->mode = TRTL_QL_POOL;
    q->pool_mode = mode;
    q->conv.num_output_maps = 0;
    q->in_scale = in_q.scale;
    q->in_zero_point = in_q.zp;
    q->in_type = in_q.type;
    int32_t y = n->out[0], qn = -1, dn = output_fake_quant(g, y, &out_q, &qn);
    if (dn >= 0 || consumers_quantize(g, y, &out_q)) {
        q->out_quant = 1;
        q->out_scale = out_q.scale;
        q->out_zero_point = out_q.zp;
        q->out_type = out_q.type;
    }
    if (dn >= 0) {
        TRTL_TRY(trtl_pm_append_name(n, g->n[qn].n.name));
        TRTL_TRY(trtl_pm_append_name(n, g->n[dn].n.name));
        y = g->n[dn].n.out[0];
        g->n[qn].dead = g->n[dn].dead = 1;
    }
    n->op = TRTL_OP_QLINEAR;
    n->p = p;
    n->in[0] = src;
    n->out[0] = y;
    g->t[y].producer = pi;
    trtl_pass_log_add(log, "'%s' pools int8 codes (input scale %g zero point %d%s)", n->name, (double)in_q.scale,
                      (int)in_q.zp, q->out_quant ? ", output fake-quantized" : "");
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_qdq(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "Q/DQ fusion into int8 layers");
    for (int32_t i = 0; i < g->nn; i++) {
        const trtl_node *c = &g->n[i].n;
        if (g->n[i].dead || c->n_out != 1 || g->t[c->out[0]].dtype != TRTL_FLOAT ||
            (c->op != TRTL_OP_CONVOLUTION && c->op != TRTL_OP_FULLY_CONNECTED && c->op != TRTL_OP_MATRIX_MULTIPLY))
            continue;
        TRTL_TRY(try_fuse(g, i, &log));
    }
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead && g->n[i].n.op == TRTL_OP_ACTIVATION)
            TRTL_TRY(try_activation(g, i, &log));
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            TRTL_TRY(try_residual(g, i, &log));
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead && g->n[i].n.op == TRTL_OP_ACTIVATION)
            TRTL_TRY(try_activation(g, i, &log));
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead && (g->n[i].n.op == TRTL_OP_REDUCE || g->n[i].n.op == TRTL_OP_POOLING))
            TRTL_TRY(try_pool(g, i, &log));
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
