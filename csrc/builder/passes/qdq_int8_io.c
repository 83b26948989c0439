/* qdq_int8_io.c -- int8 between int8 layers: a QLINEAR node whose output is fake-quantized
 * (out_quant = 1, made by fuse_qdq from the Q -> DQ after it) and whose every consumer is a QLINEAR
 * node that quantizes that tensor as its input 0 with the same parameters writes the integer codes
 * instead (out_quant = 2; the tensor becomes INT8 / UINT8) and the consumers read them as they are:
 *
 *     QLINEAR_a(...; out Q -> DQ (s, z)) -> y (FLOAT) -> QLINEAR_b(quantize y with (s, z))
 *   ==>  QLINEAR_a(...; out codes (s, z)) -> y (INT8/UINT8) -> QLINEAR_b(codes y)
 *
 * The math is the same: b quantizes DQ(Q(v)) = (Q(v) - z) * s with (s, z) again, which gives back
 * Q(v) exactly (the float32 quotient of (q - z) * s by s rounds to q - z for |q - z| <= 255), so b
 * sees the same integers and the fp32 tensor between (4 bytes an element, a quantize and a
 * dequantize pass) becomes one byte an element.  Preconditions: y is no network output; every
 * consumer is a live QLINEAR reading y as input 0 only (not as its residual) with in_scale,
 * in_zero_point and in_type equal to a's out_scale, out_zero_point, out_type.  Anything else keeps
 * the float tensor: where an int8 layer meets a float one, the reformat is the fused output
 * fake-quantization (codes -> float) or the consumer's input quantization (float -> codes), and the
 * inspector shows the tensor's type (INT8 / UINT8 or FLOAT) at each step.
 *
 * Max pooling between (fuse_qdq lets DQ(Q(y)) -> max pool -> QLINEAR read y through the pooling)
 * joins the chain: the max of the codes is the code of the max (dequantization is increasing, and
 * a window without data gives the lowest code, as -inf quantizes), so a max pooling whose output
 * feeds only code-taking consumers (recursively, a few levels) pools the codes themselves. */
#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/dims.h"
#include "core/status.h"

static int live_qlinear(const trtl_bgraph *g, int32_t i)
{
    return i >= 0 && i < g->nn && !g->n[i].dead && g->n[i].n.op == TRTL_OP_QLINEAR;
}

#define MAX_POOL_DEPTH 4

/* A max pooling with nothing fused: it can pool codes; and the layout-only layers (shuffle with static
 * dims, slice without FILL: moving bytes moves codes) that pass them on. */
static int max_pool(const trtl_node *n)
{
    if (n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
        return 0;
    return (n->op == TRTL_OP_POOLING && n->p.pool.type == TRTL_POOL_MAX) || n->op == TRTL_OP_SHUFFLE ||
           (n->op == TRTL_OP_SLICE && n->p.slice.mode != TRTL_SLICE_FILL);
}

/* Node i's outputs reach nothing (fuse_qdq leaves the Q -> DQ it looked through for dead_layers to
 * remove): it may be dropped now. */
static int dead_end(const trtl_bgraph *g, int32_t i, int depth)
{
    const trtl_node *n = &g->n[i].n;
    if (depth > MAX_POOL_DEPTH)
        return 0;
    for (int32_t o = 0; o < n->n_out; o++) {
        if (trtl_bg_is_output(g, n->out[o]))
            return 0;
        for (int32_t k = 0; k < g->nn; k++) {
            if (g->n[k].dead)
                continue;
            for (int32_t j = 0; j < g->n[k].n.n_in; j++)
                if (g->n[k].n.in[j] == n->out[o] && !dead_end(g, k, depth + 1))
                    return 0;
        }
    }
    return 1;
}

/* Marks node i and everything after it dead (dead_end(i) holds). */
static void drop(trtl_bgraph *g, int32_t i)
{
    g->n[i].dead = 1;
    for (int32_t o = 0; o < g->n[i].n.n_out; o++)
        for (int32_t k = 0; k < g->nn; k++)
            for (int32_t j = 0; !g->n[k].dead && j < g->n[k].n.n_in; j++)
                if (g->n[k].n.in[j] == g->n[i].n.out[o])
                    drop(g, k);
}

/* n is a Q layer quantizing per tensor with out's output parameters (constant one-element scale and
 * zero point), its output no network output. */
static int quantize_like(const trtl_bgraph *g, const trtl_node *n, const trtl_qlinear_params *out)
{
    if (n->op != TRTL_OP_QUANTIZE || n->n_out != 1 || n->n_in < 2 || n->n_in > 3 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual || n->p.quant.to_type != out->out_type || trtl_bg_is_output(g, n->out[0]))
        return 0;
    const trtl_bg_tensor *s = &g->t[n->in[1]];
    if (s->kind != TRTL_TK_CONSTANT || !s->data || s->dtype != TRTL_FLOAT || trtl_volume(&s->dmax) != 1 ||
        *(const float *)s->data != out->out_scale)
        return 0;
    int32_t zp = 0;
    if (n->n_in == 3) {
        const trtl_bg_tensor *z = &g->t[n->in[2]];
        if (z->kind != TRTL_TK_CONSTANT || !z->data || (int32_t)z->dtype != out->out_type || trtl_volume(&z->dmax) != 1)
            return 0;
        zp = out->out_type == TRTL_UINT8 ? *(const uint8_t *)z->data : *(const int8_t *)z->data;
    }
    return zp == out->out_zero_point;
}

/* Every consumer of y reads it as the codes of (scale, zp, type) at input 0 and nowhere else: a
 * QLINEAR with those input parameters, or a max pooling whose output is such a tensor again. */
static int consumers_take_codes(const trtl_bgraph *g, int32_t y, const trtl_qlinear_params *out, int depth);
int trtl_qio_consumers_take_codes(const trtl_bgraph *g, int32_t y, const trtl_qlinear_params *out, int depth)
{
    return consumers_take_codes(g, y, out, depth);
}

static int consumers_take_codes(const trtl_bgraph *g, int32_t y, const trtl_qlinear_params *out, int depth)
{
    int32_t seen = 0;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        const trtl_node *n = &g->n[i].n;
        int uses = 0;
        for (int32_t j = 0; j < n->n_in; j++)
            uses += n->in[j] == y;
        if (!uses)
            continue;
        if (dead_end(g, i, 0))
            continue;
        if (uses == 1 && max_pool(n) && depth < MAX_POOL_DEPTH && g->t[n->out[0]].dtype == TRTL_FLOAT &&
            !trtl_bg_is_output(g, n->out[0]) && consumers_take_codes(g, n->out[0], out, depth + 1)) {
            seen++;
            continue;
        }
        if (live_qlinear(g, i) && uses == 1 && n->in[0] != y && n->p.qlin.has_residual && n->in[1] == y) {
            /* the residual: read as codes (res_quant; a FLOAT one is switched to these codes) */
            const trtl_qlinear_params *r = &n->p.qlin;
            if (r->res_quant && (r->res_scale != out->out_scale || r->res_zero_point != out->out_zero_point ||
                                 r->res_type != out->out_type))
                return 0;
            seen++;
            continue;
        }
        if (uses == 1 && n->in[0] == y && quantize_like(g, n, out)) {
            seen++; /* a Q layer computing these codes again: its readers read y instead */
            continue;
        }
        if (!live_qlinear(g, i) || uses != 1 || n->in[0] != y)
            return 0;
        const trtl_qlinear_params *q = &n->p.qlin;
        if (q->in_scale != out->out_scale || q->in_zero_point != out->out_zero_point || q->in_type != out->out_type)
            return 0;
        seen++;
    }
    return seen > 0;
}

/* y and the max poolings after it (consumers_take_codes said yes) become `type` codes; consumers
 * whose outputs reach nothing are dropped (they would read FLOAT). */
static int32_t retype(trtl_bgraph *g, int32_t y, trtl_dtype type, const trtl_qlinear_params *out);
int32_t trtl_qio_retype(trtl_bgraph *g, int32_t y, trtl_dtype type, const trtl_qlinear_params *out)
{
    return retype(g, y, type, out);
}

static int32_t retype(trtl_bgraph *g, int32_t y, trtl_dtype type, const trtl_qlinear_params *out)
{
    int32_t pools = 0;
    g->t[y].dtype = type;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        int uses = 0;
        for (int32_t j = 0; j < g->n[i].n.n_in; j++)
            uses += g->n[i].n.in[j] == y;
        if (!uses)
            continue;
        trtl_node *n = &g->n[i].n;
        if (dead_end(g, i, 0)) {
            drop(g, i); /* it would read FLOAT */
        } else if (max_pool(n)) {
            pools += 1 + retype(g, n->out[0], type, out);
        } else if (n->op == TRTL_OP_QUANTIZE) {
            /* quantize_like: y already holds its output's codes */
            int32_t qo = n->out[0];
            g->n[i].dead = 1;
            trtl_pm_rewire(g, qo, y);
        } else if (n->op == TRTL_OP_QLINEAR && n->in[0] != y && !n->p.qlin.res_quant) {
            trtl_qlinear_params *r = &n->p.qlin;
            r->res_quant = 1;
            r->res_scale = out->out_scale;
            r->res_zero_point = out->out_zero_point;
            r->res_type = out->out_type;
        }
    }
    return pools;
}

/* ---- concatenations of int8 layers' outputs --------------------------------------------------------
 *
 * A concatenation whose readers all take codes of (s, z, t) (as above: QLINEAR inputs, max poolings,
 * layout-only layers, Q layers of those parameters) and whose every input is the output of an int8
 * layer (QLINEAR convolution / FC / matmul, read by the concatenation alone, no network output)
 * concatenates codes: each producer writes the codes of (s, z, t) straight into its part, and the
 * concatenation moves bytes (concatenation elision then removes even that).  The producer's own
 * output quantization (s_i, z_i) is kept exactly:
 *   out_quant 0 (implicit INT8: the reader quantized the float)   out codes (s, z, t)
 *   out_quant 1, (s_i, z_i, t_i) = (s, z, t)                      out codes, as qdq_int8_io above
 *   out_quant 1, other parameters, no residual, act NONE / RELU,
 *     and no mid quantization or one equal to the output's      mid_quant (s_i, z_i, t_i), out codes (s, z, t)
 * the last since Q(DQ(Q_i(act(v)))) = Q(act(DQ(Q_i(v)))) for ReLU (zero is a code; clamping and max(0, .)
 * commute): the requantization from (s_i, z_i) to (s, z) is one step of the producer's epilogue, with
 * no float tensor between.  Anything else keeps the float concatenation. */
static int32_t producer_of(const trtl_bgraph *g, int32_t t)
{
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            for (int32_t o = 0; o < g->n[i].n.n_out; o++)
                if (g->n[i].n.out[o] == t)
                    return i;
    return -1;
}

/* The code parameters the first QLINEAR reader of y (through layout-only layers) quantizes y with. */
static int reader_params(const trtl_bgraph *g, int32_t y, trtl_qlinear_params *out, int depth);
int trtl_qio_reader_params(const trtl_bgraph *g, int32_t y, trtl_qlinear_params *out, int depth)
{
    return reader_params(g, y, out, depth);
}

static int reader_params(const trtl_bgraph *g, int32_t y, trtl_qlinear_params *out, int depth)
{
    for (int32_t i = 0; i < g->nn; i++) {
        const trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || n->n_in < 1 || n->in[0] != y)
            continue;
        if (live_qlinear(g, i) && n->p.qlin.mode != TRTL_QL_ADD) {
            out->out_scale = n->p.qlin.in_scale;
            out->out_zero_point = n->p.qlin.in_zero_point;
            out->out_type = n->p.qlin.in_type;
            return out->out_type == TRTL_INT8 || out->out_type == TRTL_UINT8;
        }
        if (max_pool(n) && depth < MAX_POOL_DEPTH && reader_params(g, n->out[0], out, depth + 1))
            return 1;
        if (n->op == TRTL_OP_QUANTIZE && n->n_in >= 2 && n->n_in <= 3 && !dead_end(g, i, 0)) {
            /* a kept Q layer of per-tensor constant parameters (quantize_like checks the rest) */
            const trtl_bg_tensor *st = &g->t[n->in[1]];
            const int32_t ty = n->p.quant.to_type;
            if (st->kind != TRTL_TK_CONSTANT || !st->data || st->dtype != TRTL_FLOAT || trtl_volume(&st->dmax) != 1 ||
                (ty != TRTL_INT8 && ty != TRTL_UINT8))
                continue;
            out->out_scale = *(const float *)st->data;
            out->out_type = ty;
            out->out_zero_point = 0;
            if (n->n_in == 3) {
                const trtl_bg_tensor *z = &g->t[n->in[2]];
                if (z->kind != TRTL_TK_CONSTANT || !z->data || trtl_volume(&z->dmax) != 1)
                    continue;
                out->out_zero_point = ty == TRTL_UINT8 ? *(const uint8_t *)z->data : *(const int8_t *)z->data;
            }
            return 1;
        }
    }
    return 0;
}

/* Concatenation node ci is t's one reader (readers whose outputs reach nothing aside: dropped_readers
 * removes them when t changes type). */
static int only_reader(const trtl_bgraph *g, int32_t t, int32_t ci)
{
    for (int32_t k = 0; k < g->nn; k++) {
        if (g->n[k].dead || k == ci)
            continue;
        for (int32_t j = 0; j < g->n[k].n.n_in; j++)
            if (g->n[k].n.in[j] == t && !dead_end(g, k, 0))
                return 0;
    }
    return 1;
}

static void drop_dead_readers(trtl_bgraph *g, int32_t t, int32_t ci)
{
    for (int32_t k = 0; k < g->nn; k++)
        for (int32_t j = 0; k != ci && !g->n[k].dead && j < g->n[k].n.n_in; j++)
            if (g->n[k].n.in[j] == t)
                drop(g, k);
}

/* How input t of a concatenation read as codes of *c can become those codes: 0 no, 1 out codes
 * (out_quant 0 or equal parameters), 2 out codes with the producer's quantization as mid_quant. */
static int concat_part(const trtl_bgraph *g, int32_t t, const trtl_qlinear_params *c, int32_t ci)
{
    int32_t p = producer_of(g, t);
    if (!live_qlinear(g, p) || g->t[t].dtype != TRTL_FLOAT || trtl_bg_is_output(g, t) || !only_reader(g, t, ci) ||
        g->n[p].n.n_out != 1)
        return 0;
    const trtl_qlinear_params *q = &g->n[p].n.p.qlin;
    if (q->mode != TRTL_QL_CONV && q->mode != TRTL_QL_FC && q->mode != TRTL_QL_MATMUL)
        return 0;
    if (q->out_quant == 0 ||
        (q->out_quant == 1 && q->out_scale == c->out_scale && q->out_zero_point == c->out_zero_point &&
         q->out_type == c->out_type))
        return 1;
    if (q->out_quant != 1 || (q->out_type != TRTL_INT8 && q->out_type != TRTL_UINT8) || q->has_residual ||
        (q->act != TRTL_ACT_NONE && q->act != TRTL_ACT_RELU))
        return 0;
    if (q->mid_quant && (q->mid_scale != q->out_scale || q->mid_zero_point != q->out_zero_point ||
                         q->mid_type != q->out_type))
        return 0;
    return 2;
}

static int concat_codes(trtl_bgraph *g, int32_t i, trtl_pass_log *log)
{
    trtl_node *n = &g->n[i].n;
    if (n->op != TRTL_OP_CONCATENATION || n->n_out != 1 || n->n_in < 1 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual)
        return 0;
    const int32_t y = n->out[0];
    trtl_qlinear_params c = {0};
    if (g->t[y].dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) || !reader_params(g, y, &c, 0) ||
        !consumers_take_codes(g, y, &c, 0))
        return 0;
    int requant = 0;
    for (int32_t j = 0; j < n->n_in; j++) {
        for (int32_t k = 0; k < j; k++)
            if (n->in[k] == n->in[j])
                return 0;
        int how = concat_part(g, n->in[j], &c, i);
        if (!how)
            return 0;
        requant += how == 2;
    }
    for (int32_t j = 0; j < n->n_in; j++) {
        int how = concat_part(g, n->in[j], &c, i);
        trtl_qlinear_params *q = &g->n[producer_of(g, n->in[j])].n.p.qlin;
        if (how == 2) {
            q->mid_quant = 1;
            q->mid_scale = q->out_scale;
            q->mid_zero_point = q->out_zero_point;
            q->mid_type = q->out_type;
        }
        q->out_quant = 2;
        q->out_scale = c.out_scale;
        q->out_zero_point = c.out_zero_point;
        q->out_type = c.out_type;
        g->t[n->in[j]].dtype = (trtl_dtype)c.out_type;
        drop_dead_readers(g, n->in[j], i);
    }
    int32_t pools = retype(g, y, (trtl_dtype)c.out_type, &c);
    trtl_pass_log_add(log, "'%s' concatenates %s codes (scale %g, zero point %d) of %d int8 layer(s), %d requantized "
                      "in their epilogue%s", n->name, trtl_dtype_name((trtl_dtype)c.out_type), (double)c.out_scale,
                      (int)c.out_zero_point, (int)n->n_in, requant, pools ? ", max pooling them on the way" : "");
    return 1;
}

/* ---- a kept DQ of codes in front of a max pooling -------------------------------------------------
 *
 * GoogLeNet's inception3b -> maxpool3 after the concatenation sweep: codes c (INT8 / UINT8) -> DQ (s, z) -> max
 * pool -> QLINEAR quantizing with (s, z).  The DQ stays a layer (fuse_qdq looks through max poolings only between a
 * Q and a DQ, and the Q before it was bypassed), so the pooling ran on floats and its reader quantized again.  Where
 * every reader of the DQ's output takes the codes of (s, z) (consumers_take_codes: max poolings, layout-only
 * layers, QLINEAR inputs / residuals, Q layers of those parameters) and at least one is a max pooling, the DQ is
 * removed and its readers read c: the max of the codes is the code of the max, and the QLINEAR readers see the
 * integers they computed before (quantizing (q - z) * s by s gives q back). */
static int dq_codes(trtl_bgraph *g, int32_t i, trtl_pass_log *log)
{
    const trtl_node *n = &g->n[i].n;
    if (n->op != TRTL_OP_DEQUANTIZE || n->n_out != 1 || n->n_in < 2 || n->n_in > 3 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual)
        return 0;
    const int32_t c = n->in[0], y = n->out[0];
    const trtl_dtype ty = g->t[c].dtype;
    if ((ty != TRTL_INT8 && ty != TRTL_UINT8) || g->t[y].dtype != TRTL_FLOAT || trtl_bg_is_output(g, y))
        return 0;
    const trtl_bg_tensor *st = &g->t[n->in[1]];
    if (st->kind != TRTL_TK_CONSTANT || !st->data || st->dtype != TRTL_FLOAT || trtl_volume(&st->dmax) != 1)
        return 0;
    trtl_qlinear_params p = {0};
    p.out_scale = *(const float *)st->data;
    p.out_type = ty;
    if (n->n_in == 3) {
        const trtl_bg_tensor *z = &g->t[n->in[2]];
        if (z->kind != TRTL_TK_CONSTANT || !z->data || z->dtype != ty || trtl_volume(&z->dmax) != 1)
            return 0;
        p.out_zero_point = ty == TRTL_UINT8 ? *(const uint8_t *)z->data : *(const int8_t *)z->data;
    }
    int pooled = 0;
    for (int32_t k = 0; k < g->nn; k++)
        if (!g->n[k].dead && g->n[k].n.op == TRTL_OP_POOLING && g->n[k].n.n_in == 1 && g->n[k].n.in[0] == y &&
            max_pool(&g->n[k].n))
            pooled = 1;
    if (!pooled || !consumers_take_codes(g, y, &p, 0))
        return 0;
    g->n[i].dead = 1;
    trtl_pm_rewire(g, y, c);
    int32_t pools = retype(g, c, ty, &p);
    trtl_pass_log_add(log, "'%s' removed: its readers take the %s codes (scale %g, zero point %d) it dequantized, "
                      "%d max pooling(s) of codes", g->n[i].n.name, trtl_dtype_name(ty), (double)p.out_scale,
                      (int)p.out_zero_point, (int)pools);
    return 1;
}

trtl_status trtl_pass_qdq_int8_io(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "int8 tensors between int8 layers");
    for (int32_t i = 0; i < g->nn; i++) {
        if (!live_qlinear(g, i))
            continue;
        trtl_node *a = &g->n[i].n;
        trtl_qlinear_params *q = &a->p.qlin;
        int32_t y = a->out[0];
        if (q->out_quant != 1 || (q->out_type != TRTL_INT8 && q->out_type != TRTL_UINT8) ||
            g->t[y].dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) || !consumers_take_codes(g, y, q, 0))
            continue;
        q->out_quant = 2;
        int32_t pools = retype(g, y, (trtl_dtype)q->out_type, q);
        trtl_pass_log_add(&log, "'%s' writes %s codes (scale %g, zero point %d) for %d consumer(s)%s", a->name,
                          trtl_dtype_name(g->t[y].dtype), (double)q->out_scale, (int)q->out_zero_point,
                          (int)trtl_bg_consumers(g, y, NULL), pools ? ", max pooling them on the way" : "");
    }
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            concat_codes(g, i, &log);
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            dq_codes(g, i, &log);
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
