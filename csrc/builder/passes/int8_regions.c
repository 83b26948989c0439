/* int8_regions.c -- float tensors between int8 layers that both run on fp32 tactics (issue #11, session 12).
 *
 * qdq_int8_io turns the tensor y between two int8 layers A -> B into codes (A writes them, B reads them) before
 * kernel selection.  Where selection then puts both on fp32 tactics (kernels/x86/qlinear_fp32.c), the codes are a
 * round trip: A's epilogue quantizes to bytes, B converts the bytes back to (q - zero) floats in a pass of its own
 * before its fp32 kernel reads them.  A region of fp32-tactic layers keeps y FLOAT instead:
 *
 *   A (qlinear.fp32.*, out codes (s, z)) -> y INT8/UINT8 -> B (qlinear.fp32.*, in codes (s, z))
 *   ==> A (out fake-quantized: out_quant 1) -> y FLOAT = (q - z) * s -> B (in_grid 1: no input conversion)
 *
 * The quantized model's rounding is kept: A's epilogue still rounds to the code q (fake quantization, fused), so y
 * holds exactly the values DequantizeLinear gives and any reader quantizing y with (s, z) gets q back.  B, told by
 * in_grid that its FLOAT input is on its own grid, skips the quantize pass and convolves y itself with its int8
 * weights divided by s (qlinear_fp32.c): the sums are the integer sums to float rounding (relative 2^-23 or so),
 * as on the Winograd tactics, so an output moves by one step at most, on a rounding tie.  (TensorRT would keep the
 * Q/DQ pair of an explicitly quantized tensor; it is kept here too, inside A's epilogue.)  Every other kernel of
 * QLINEAR ignores in_grid (it quantizes y again and gets q: correct, only slower), so a plan loaded where another
 * kernel runs the step stays right.
 *
 * Two halves: the pass (last in the table) marks the int8 layers whose output qdq_int8_io made codes read only by
 * int8 layers' input 0 (trtl_bg_node.float_region); after kernel selection trtl_int8_float_regions() makes each
 * such tensor FLOAT where its producer and all its readers chose fp32 tactics, and drops their prepared states (the
 * weight packing prepares them again for the new params).  The choice itself is selection's, by timing, as each
 * layer's; the one mechanism.  Off (config.set_pass_enabled("int8_float_regions", False)): codes stay. */
#include "builder/passes/passes.h"
#include "kernels/qlinear_fp32.h"
#include "core/status.h"

/* Does QLINEAR b read y as its residual codes (input 1, res_quant) of the parameters a writes? */
static int residual_reader(const trtl_bg_node *b, int32_t y, const trtl_qlinear_params *a)
{
    const trtl_qlinear_params *q = &b->n.p.qlin;
    return q->has_residual && q->res_quant && b->n.n_in >= 2 && b->n.in[1] == y && b->n.in[0] != y &&
           q->res_scale == a->out_scale && q->res_zero_point == a->out_zero_point && q->res_type == a->out_type;
}

/* Node i (QLINEAR, out codes) and the readers of its output: each reader a live QLINEAR reading it once, as input 0
 * with the same parameters or (session 13) as its residual codes (a residual add inside the region stays float: the
 * reader takes the FLOAT tensor as a float residual, the same values (q - z) * s); visit(reader, y) for each;
 * returns the readers (0: not a region edge). */
static int32_t region_readers(trtl_bgraph *g, int32_t i, int (*ok)(const trtl_bg_node *),
                              void (*visit)(trtl_bg_node *, int32_t))
{
    const trtl_qlinear_params *a = &g->n[i].n.p.qlin;
    const int32_t y = g->n[i].n.out[0];
    if (a->out_quant != 2 || g->n[i].n.n_out != 1 || trtl_bg_is_output(g, y))
        return 0;
    int32_t seen = 0;
    for (int pass = 0; pass < 2; pass++) /* check all, then visit all */
        for (int32_t k = 0; k < g->nn; k++) {
            trtl_bg_node *b = &g->n[k];
            if (b->dead)
                continue;
            int uses = 0;
            for (int32_t j = 0; j < b->n.n_in; j++)
                uses += b->n.in[j] == y;
            if (!uses)
                continue;
            const trtl_qlinear_params *q = &b->n.p.qlin;
            if (pass == 1) {
                visit(b, y);
                continue;
            }
            if (b->n.op != TRTL_OP_QLINEAR || uses != 1 || (ok && !ok(b)))
                return 0;
            if (!residual_reader(b, y, a) && (b->n.in[0] != y || q->in_scale != a->out_scale ||
                                              q->in_zero_point != a->out_zero_point || q->in_type != a->out_type))
                return 0;
            seen++;
        }
    return seen;
}

static void no_visit(trtl_bg_node *b, int32_t y)
{
    (void)b;
    (void)y;
}

trtl_status trtl_pass_int8_float_regions(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "int8 float regions (candidates)");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *bn = &g->n[i];
        bn->float_region = !bn->dead && bn->n.op == TRTL_OP_QLINEAR && region_readers(g, i, NULL, no_visit) > 0;
        if (bn->float_region)
            trtl_pass_log_add(&log, "'%s'", bn->n.name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}

static int on_fp32_tactic(const trtl_bg_node *b) { return b->n.kernel && trtl_qlinear_fp32_inner(b->n.kernel) != NULL; }

static void drop_state(trtl_bg_node *b)
{
    if (b->n.kstate && b->n.kernel->release)
        b->n.kernel->release(b->n.kstate);
    b->n.kstate = NULL;
}

/* Reader b of y, now FLOAT: on its grid as input 0, or a float residual. */
static void take_float(trtl_bg_node *b, int32_t y)
{
    if (b->n.in[0] == y)
        b->n.p.qlin.in_grid = 1;
    else
        b->n.p.qlin.res_quant = 0;
    drop_state(b);
}

int trtl_int8_codes_may_float(trtl_bgraph *g, int32_t i)
{
    return !g->n[i].dead && g->n[i].n.op == TRTL_OP_QLINEAR && region_readers(g, i, NULL, no_visit) > 0;
}

void trtl_int8_codes_to_float(trtl_bgraph *g, int32_t i)
{
    trtl_bg_node *a = &g->n[i];
    if (!trtl_int8_codes_may_float(g, i) || region_readers(g, i, NULL, take_float) == 0)
        return;
    a->n.p.qlin.out_quant = 1;
    g->t[a->n.out[0]].dtype = TRTL_FLOAT;
    drop_state(a);
}

int32_t trtl_int8_float_regions(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "int8 float regions (tensors kept FLOAT between fp32 tactics)");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *a = &g->n[i];
        /* region_readers checks every reader before it visits any: nothing is changed unless all qualify */
        if (a->dead || !a->float_region || a->n.op != TRTL_OP_QLINEAR || !on_fp32_tactic(a) ||
            region_readers(g, i, on_fp32_tactic, take_float) == 0)
            continue;
        a->n.p.qlin.out_quant = 1;
        g->t[a->n.out[0]].dtype = TRTL_FLOAT;
        drop_state(a);
        trtl_pass_log_add(&log, "'%s'", a->n.name);
    }
    trtl_pass_log_done(&log);
    return log.count;
}

/* The node whose output 0 is tensor t (-1: none). */
static int32_t producer(const trtl_bgraph *g, int32_t t)
{
    for (int32_t k = 0; k < g->nn; k++)
        if (!g->n[k].dead && g->n[k].n.n_out >= 1 && g->n[k].n.out[0] == t)
            return k;
    return -1;
}

static int region_input(const trtl_bgraph *g, int32_t t)
{
    int32_t p = producer(g, t);
    return p >= 0 && g->n[p].float_region;
}

int trtl_int8_region_view(trtl_bgraph *g, int32_t i, trtl_node *view, trtl_dtype saved[3])
{
    const trtl_node *n = &g->n[i].n;
    if (n->op != TRTL_OP_QLINEAR || n->n_in < 1 || n->n_out != 1)
        return 0;
    const trtl_qlinear_params *q = &n->p.qlin;
    const int in = g->t[n->in[0]].dtype != TRTL_FLOAT && region_input(g, n->in[0]);
    const int res = q->has_residual && q->res_quant && n->n_in >= 2 && region_input(g, n->in[1]);
    const int out = g->n[i].float_region && q->out_quant == 2;
    if (!in && !res && !out)
        return 0;
    *view = *n;
    const int32_t ids[3] = {n->in[0], res ? n->in[1] : -1, n->out[0]};
    const int on[3] = {in, res, out};
    for (int j = 0; j < 3; j++)
        if (on[j]) {
            saved[j] = g->t[ids[j]].dtype;
            g->t[ids[j]].dtype = TRTL_FLOAT;
        }
    view->p.qlin.in_grid = in ? 1 : q->in_grid;
    view->p.qlin.res_quant = res ? 0 : q->res_quant;
    view->p.qlin.out_quant = out ? 1 : q->out_quant;
    view->kstate = NULL;
    return 1 | in << 1 | res << 2 | out << 3;
}

void trtl_int8_region_view_end(trtl_bgraph *g, int32_t i, int view, const trtl_dtype saved[3])
{
    const trtl_node *n = &g->n[i].n;
    const int32_t ids[3] = {n->in[0], n->n_in >= 2 ? n->in[1] : -1, n->out[0]};
    for (int j = 2; j >= 0; j--) /* reverse: where input 0 is the residual too, its first saved type wins */
        if (view >> (j + 1) & 1)
            g->t[ids[j]].dtype = saved[j];
}
