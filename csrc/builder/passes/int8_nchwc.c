/* int8_nchwc.c -- marks the int8 convolutions (QLINEAR, conv mode) that the nchwc pass may run in a blocked region
 * (issue #11, session 19; the rewrite itself is passes/nchwc.c's).  There an int8 pointwise / depthwise convolution
 * whose input is on its grid (the dequantized codes of an int8 producer) becomes an fp32 NCHWC_CONV of the same
 * quantized math: the int8 weights times their scales, the bias, a float residual, and the activation with the
 * output's fake quantization in the epilogue (TRTL_ACT_QGRID; a mid quantization before a residual as the node's
 * mid activation): kernels/x86/qlinear_fp32.c's fused form, on the blocked layout that the fp32 model's mobile
 * layers run in.  That is untimed (a layout is a choice across layers, not one layer's kernel), so it is a rule of
 * the host: CPUs without VNNI (AVX512-VNNI, AVX-VNNI) and AMX, where the int8 kernels' vpmaddwd does no more
 * multiply-adds an instruction than an fp32 FMA (docs/ARCHITECTURE.md, "INT8 in blocked regions", measures it on
 * MobileNetV2).  Only layers the int8_tactics pass opened to fp32 kernels (so its switch and precision constraints
 * apply: a layer with a precision of its own keeps its kernels' choice), not on the int8 kernels' hosts, and not in
 * untimed builds (avg_timing_iterations 0), where kernel selection takes the int8 kernels first.
 * Off (config.set_pass_enabled("int8_nchwc", False)): int8 layers stay QLINEAR. */
#include "builder/passes/passes.h"
#include "core/cpu.h"
#include "core/status.h"

trtl_status trtl_pass_int8_nchwc(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "int8 layers open to the blocked layout");
    const int fast_int8 = trtl_cpu_has(TRTL_CPU_AVX512VNNI) || trtl_cpu_has(TRTL_CPU_AVXVNNI) ||
                          trtl_cpu_has(TRTL_CPU_AMX_TILE | TRTL_CPU_AMX_INT8);
    const int untimed = g->cfg->avg_timing_iterations <= 0;
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *bn = &g->n[i];
        bn->int8_blocked = !fast_int8 && !untimed && !bn->dead && bn->n.op == TRTL_OP_QLINEAR && bn->n.p.qlin.mode == TRTL_QL_CONV &&
                           bn->fp32_tactics && !bn->want_set && !bn->fixed_kernel;
        if (bn->int8_blocked)
            trtl_pass_log_add(&log, "'%s'", bn->n.name);
    }
    trtl_pass_log_done(&log);
    if (fast_int8 || untimed)
        trtl_log(TRTL_LOG_INFO, "builder pass 'int8_nchwc': %s, int8 layers keep their kernels",
                 fast_int8 ? "this CPU has VNNI / AMX" : "an untimed build takes the int8 kernels first");
    return TRTL_OK;
}
