/* int8_tactics.c -- marks the int8 convolutions (QLINEAR nodes in conv mode, made by fuse_qdq from
 * explicit Q/DQ or from calibration ranges under BuilderFlag.INT8) whose quantized math kernel selection
 * may also run on the fp32 convolution kernels (kernels/x86/qlinear_fp32.c: the same codes, within one
 * output step on a rounding tie) and keep whichever is faster, as TensorRT times the tactics of each
 * precision a layer is open to.  Nothing of the graph changes: the node keeps its int8 tensors and
 * types, and its precision constraints still apply (layer.precision INT8 under OBEY / PREFER keeps
 * the int8 kernels only; FLOAT keeps the fp32 ones).  Off (config.set_pass_enabled("int8_tactics",
 * False)): int8 kernels only. */
#include "builder/passes/passes.h"
#include "core/status.h"

trtl_status trtl_pass_int8_tactics(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "int8 tactics (fp32 kernels open to int8 convolutions)");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *bn = &g->n[i];
        if (bn->dead || bn->n.op != TRTL_OP_QLINEAR || bn->n.p.qlin.mode != TRTL_QL_CONV)
            continue;
        bn->fp32_tactics = 1;
        trtl_pass_log_add(&log, "'%s'", bn->n.name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
