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
 * inspector shows the tensor's type (INT8 / UINT8 or FLOAT) at each step. */
#include "builder/passes/passes.h"
#include "core/status.h"

static int live_qlinear(const trtl_bgraph *g, int32_t i)
{
    return i >= 0 && i < g->nn && !g->n[i].dead && g->n[i].n.op == TRTL_OP_QLINEAR;
}

/* Every consumer of y reads it as the codes of (scale, zp, type) at input 0 and nowhere else. */
static int consumers_take_codes(const trtl_bgraph *g, int32_t y, const trtl_qlinear_params *out)
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
        if (!live_qlinear(g, i) || uses != 1 || n->in[0] != y)
            return 0;
        const trtl_qlinear_params *q = &n->p.qlin;
        if (q->in_scale != out->out_scale || q->in_zero_point != out->out_zero_point || q->in_type != out->out_type)
            return 0;
        seen++;
    }
    return seen > 0;
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
            g->t[y].dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) || !consumers_take_codes(g, y, q))
            continue;
        q->out_quant = 2;
        g->t[y].dtype = (trtl_dtype)q->out_type;
        trtl_pass_log_add(&log, "'%s' writes %s codes (scale %g, zero point %d) for %d int8 layer(s)", a->name,
                          trtl_dtype_name(g->t[y].dtype), (double)q->out_scale, (int)q->out_zero_point,
                          (int)trtl_bg_consumers(g, y, NULL));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
