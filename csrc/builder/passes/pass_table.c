/* pass_table.c -- the table of builder passes and the driver that runs it (contract in passes.h).
 *
 * Order matters: identity removal first (after dead layers), so that no pattern below has to see through a
 * copy; constant folding then turns constant subgraphs (a parser's reshaped scalars)
 * into constants that the pattern fusions match on; GELU and pointwise (SiLU / HardSwish / Mish)
 * fusion precede epilogue fusion so that the activation they make can join a convolution's or
 * matrix multiply's epilogue; transpose folding precedes attention fusion (Q K^T arrives as one
 * multiply), and attention fusion precedes epilogue fusion (which would take a mask add into the
 * first multiply as a residual); scale folding precedes
 * epilogue fusion because it only folds into a producer without an epilogue; Q/DQ fusion comes
 * last and takes a node's fused epilogue into its int8 layer; qdq_int8_io then joins its int8 layers
 * with int8 tensors, and drop_fake_quant removes the Q -> DQ pairs left on values already quantized
 * (after both, so that it never takes a pair they would fuse); qlinear_bias follows fold_fake_quant (it takes the
 * fake quantization that pass put into a bias add's epilogue into the int8 layer before the add), and norm_codes
 * (a layer norm writing the codes of the Q layer after it) runs beside it; padding folding precedes
 * horizontal fusion (a folded padding can make siblings alike), which follows epilogue fusion
 * (the activations are part of its match) and makes slices; concatenation sinking precedes the elisions (it only
 * moves concatenations that would copy, and the pooled pieces it makes may be placed); gathers of constant
 * progressions become slices just before slice and concatenation elision, which come last (any other pass may
 * change what they read), slices first (concatenation elision accounts for their views).  Linear fusion runs after them all (its matrix multiplies are those Q/DQ fusion left;
 * its bias and residual adds are elementwise sums no other pass takes).  Reduce fusion comes last: it takes an
 * elementwise layer and an Abs into the reduce they feed, which no other pass matches.  Reshape elision follows
 * (views of elided concatenations' outputs join their groups).  Plugin int8 output runs last: it needs the int8
 * layers fuse_qdq made (the readers whose quantizer it takes) and the plugins' INT8 inputs that implicit INT8
 * placed, and it only changes a plugin, the scale after it and tensor types.  int8_tactics comes after everything
 * that makes or changes int8 layers: it only marks them for kernel selection; int8_float_regions too (it marks the
 * code tensors that selection may turn back to FLOAT, builder/passes/int8_regions.c).  fuse_preact runs after the
 * fusions and elisions (the scale's activation is fused by then, and it only changes convolutions reading a scale);
 * fuse_chain after every pass that takes pointwise steps into another layer (it takes only the runs they leave);
 * nchwc runs after every fusion (it takes the fused convolutions as they are and changes only their op and layouts);
 * int8_nchwc just before it marks the int8 convolutions it may take (after int8_tactics, whose mark it needs, and
 * int8_float_regions, whose marks stay valid: a node nchwc makes FLOAT no longer writes codes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/status.h"

#define DISABLE_ENV "TRTLITE_DISABLE_PASSES"

_Static_assert(TRTL_PASS_COUNT <= 64, "builder_config.passes_off is a 64-bit mask");

const trtl_pass_desc trtl_passes[TRTL_PASS_COUNT] = {
    [TRTL_PASS_DEAD_LAYERS] = {"dead_layers", trtl_pass_dead_layers, 0, 1,
                               "removes layers none of whose outputs reach a network output"},
    [TRTL_PASS_DROP_IDENTITY] = {"drop_identity", trtl_pass_drop_identity, 1, 0,
                                 "removes a same-type identity layer that writes no network output: its readers "
                                 "read its input"},
    [TRTL_PASS_CONSTANT_FOLD] = {"constant_fold", trtl_pass_constant_fold, 1, 0,
                                 "evaluates layers whose inputs are all constants at build time"},
    [TRTL_PASS_FUSE_GELU] = {"fuse_gelu", trtl_pass_fuse_gelu, 1, 0,
                             "replaces the elementwise erf/tanh GELU subgraph with one GELU activation"},
    [TRTL_PASS_FUSE_LAYERNORM] = {"fuse_layernorm", trtl_pass_fuse_layernorm, 1, 0,
                                  "replaces the reduce/elementwise layer-norm subgraph with one normalization layer"},
    [TRTL_PASS_FUSE_POINTWISE] = {"fuse_pointwise", trtl_pass_fuse_pointwise, 1, 0,
                                  "replaces x * sigmoid(x), x * hard_sigmoid(x) and x * tanh(softplus(x)) with one "
                                  "SiLU / HardSwish / Mish activation"},
    [TRTL_PASS_FOLD_TRANSPOSE] = {"fold_transpose", trtl_pass_fold_transpose, 1, 0,
                                  "composes consecutive transposes, folds a last-two-dims transpose into the "
                                  "matrix multiply it feeds, a layer norm between a transpose and its inverse "
                                  "into one normalization over the transposed axis, and a per-channel scale after a "
                                  "transposed linear result into its weights"},
    [TRTL_PASS_FUSE_ATTENTION] = {"fuse_attention", trtl_pass_fuse_attention, 1, 0,
                                  "replaces softmax(Q K^T * scale [+ mask]) V with one attention step"},
    [TRTL_PASS_FOLD_SCALE] = {"fold_scale", trtl_pass_fold_scale, 1, 0,
                              "folds a scale (batch norm) into the convolution or fully-connected weights before it"},
    [TRTL_PASS_FUSE_EPILOGUE] = {"fuse_epilogue", trtl_pass_fuse_epilogue, 1, 0,
                                 "fuses a residual add and an activation into the producing layer"},
    [TRTL_PASS_FUSE_QDQ] = {"fuse_qdq", trtl_pass_fuse_qdq, 1, 0,
                            "turns DQ(Q(x)) -> convolution / fully connected / matrix multiply with int8 weights "
                            "(and its bias, activation, residual and output Q -> DQ) into one int8 layer"},
    [TRTL_PASS_QDQ_INT8_IO] = {"qdq_int8_io", trtl_pass_qdq_int8_io, 1, 0,
                               "keeps int8 between int8 layers: a fused layer feeding only int8 layers writes "
                               "int8 codes instead of fake-quantized floats"},
    [TRTL_PASS_DROP_FAKE_QUANT] = {"drop_fake_quant", trtl_pass_drop_fake_quant, 1, 0,
                                   "removes a Q -> DQ pair of the same per-tensor parameters whose input already "
                                   "lies on that grid (dequantized codes moved by reshapes, transposes, slices, "
                                   "gathers, concatenations)"},
    [TRTL_PASS_FOLD_FAKE_QUANT] = {"fold_fake_quant", trtl_pass_fold_fake_quant, 1, 0,
                                   "turns a Q -> DQ pair of the same per-tensor parameters left on a float tensor "
                                   "into one fake-quantize step: the producing elementwise layer's or matrix "
                                   "multiply's epilogue, else one activation layer"},
    [TRTL_PASS_QLINEAR_BIAS] = {"qlinear_bias", trtl_pass_qlinear_bias, 1, 0,
                                "takes the bias add after an int8 matrix multiply's output Q -> DQ (and the fake "
                                "quantization or Q layer after the add) into the int8 layer: the bias is added "
                                "after its mid quantization"},
    [TRTL_PASS_NORM_CODES] = {"norm_codes", trtl_pass_norm_codes, 1, 0,
                              "lets a layer norm whose only reader is a Q layer write the int8 codes itself"},
    [TRTL_PASS_FOLD_PADDING] = {"fold_padding", trtl_pass_fold_padding, 1, 0,
                                "folds a zero padding of the spatial dims into the convolution it feeds"},
    [TRTL_PASS_FUSE_SIBLINGS] = {"fuse_siblings", trtl_pass_fuse_siblings, 1, 0,
                                 "stacks sibling convolutions on one input (same geometry and activation, batch 1) "
                                 "into one convolution whose channel slices are their results"},
    [TRTL_PASS_SINK_CONCAT] = {"sink_concat", trtl_pass_sink_concat, 1, 0,
                               "moves a concatenation that copies (batch > 1) below the pooling that reads it: "
                               "the pieces are pooled and the smaller results concatenated"},
    [TRTL_PASS_GATHER_SLICE] = {"gather_slice", trtl_pass_gather_slice, 1, 0,
                                "turns a gather of constant indices in arithmetic progression (the ONNX importer's "
                                "slices beside dynamic axes) into a slice, which elide_slice may then make a view"},
    [TRTL_PASS_ELIDE_SLICE] = {"elide_slice", trtl_pass_elide_slice, 1, 0,
                               "makes a slice that is one contiguous block of its input (batch 1 channel split) a "
                               "view of the input's bytes, so that nothing is copied"},
    [TRTL_PASS_ELIDE_CONCAT] = {"elide_concat", trtl_pass_elide_concat, 1, 0,
                                "lets the producers of a concatenation write into their slices of its output "
                                "(contiguous slices: batch 1 channel concatenation) so that nothing is copied"},
    [TRTL_PASS_FUSE_LINEAR] = {"fuse_linear", trtl_pass_fuse_linear, 1, 0,
                               "turns a matrix multiply by a constant weight (and the bias add, activation and "
                               "residual add after it) into one linear step on the fully connected kernels"},
    [TRTL_PASS_FUSE_REDUCE] = {"fuse_reduce", trtl_pass_fuse_reduce, 1, 0,
                               "turns an elementwise sum / product / difference (and an absolute value after it) "
                               "feeding a reduce into one step that never writes the broadcast tensor (AdderNet)"},
    [TRTL_PASS_ELIDE_RESHAPE] = {"elide_reshape", trtl_pass_elide_reshape, 1, 0,
                                 "makes a shuffle that only reshapes (static shapes) a view of its input's bytes, so "
                                 "that nothing is copied"},
    [TRTL_PASS_PLUGIN_INT8_OUT] = {"plugin_int8_out", trtl_pass_plugin_int8_out, 1, 0,
                                   "lets a plugin reading int8 codes that can write them (Adder2d_TRT) take the "
                                   "batch norm after it and its readers' quantizer: it writes int8 codes, max "
                                   "poolings pool them (AdderNet INT8)"},
    [TRTL_PASS_INT8_TACTICS] = {"int8_tactics", trtl_pass_int8_tactics, 1, 0,
                                "lets kernel selection time fp32 convolution kernels running an int8 convolution's "
                                "quantized math (same codes) against the int8 kernels and keep the faster"},
    [TRTL_PASS_INT8_FLOAT_REGIONS] = {"int8_float_regions", trtl_pass_int8_float_regions, 1, 0,
                                      "keeps the tensor between two int8 layers FLOAT (fake-quantized in the "
                                      "producer's epilogue) where kernel selection puts both on fp32 tactics"},
    [TRTL_PASS_FUSE_PREACT] = {"fuse_preact", trtl_pass_fuse_preact, 1, 0,
                               "makes a per-channel scale (batch norm) and its activation, read only by 1x1 "
                               "convolutions, those convolutions' input transform (applied while they pack their "
                               "input)"},
    [TRTL_PASS_FUSE_CHAIN] = {"fuse_chain", trtl_pass_fuse_chain, 1, 0,
                              "turns a run of pointwise steps over one shape (unary ops, activations, fake "
                              "quantization, elementwise ops with a constant or another tensor) whose intermediates "
                              "nothing else reads into one step running their ops as a program over L1 tiles"},
    [TRTL_PASS_INT8_NCHWC] = {"int8_nchwc", trtl_pass_int8_nchwc, 1, 0,
                              "lets the nchwc pass run int8 pointwise / depthwise convolutions as blocked fp32 "
                              "convolutions of the same quantized math (scaled int8 weights, output fake-quantized in "
                              "the epilogue) on CPUs without VNNI / AMX"},
    [TRTL_PASS_NCHWC] = {"nchwc", trtl_pass_nchwc, 1, 0,
                         "keeps activations in a blocked channel layout (NCHWc, 8 channels) between pointwise and "
                         "depthwise convolutions, reordering only at the region's edges (AVX2)"},
};

int32_t trtl_pass_find(const char *name)
{
    for (int32_t i = 0; i < TRTL_PASS_COUNT; i++)
        if (strcmp(trtl_passes[i].name, name) == 0)
            return i;
    return -1;
}

trtl_status trtl_pass_unknown(trtl_status status, const char *what, const char *name)
{
    char list[512]; /* every name, with room for more passes */
    size_t used = 0;
    list[0] = '\0';
    for (int32_t i = 0; i < TRTL_PASS_COUNT && used < sizeof list; i++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", trtl_passes[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
    return trtl_error(status, "%s: '%.80s' is not a builder pass (passes: %s)", what, name, list);
}

/* The passes TRTLITE_DISABLE_PASSES names ("a,b"; spaces around names and empty items are
 * ignored), as a mask; a name that is no pass fails the build, so that a typo is not a silently
 * ignored switch. */
static trtl_status env_disabled(uint64_t *mask)
{
    *mask = 0;
    const char *s = getenv(DISABLE_ENV);
    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        const char *end = s;
        while (*end && *end != ',')
            end++;
        size_t len = (size_t)(end - s);
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (len) {
            char name[96];
            if (len >= sizeof name)
                len = sizeof name - 1;
            memcpy(name, s, len);
            name[len] = '\0';
            int32_t id = trtl_pass_find(name);
            if (id < 0)
                return trtl_pass_unknown(TRTL_ERR_INVALID_ARGUMENT, DISABLE_ENV, name);
            *mask |= (uint64_t)1 << id;
        }
        s = end;
    }
    return TRTL_OK;
}

/* Whether pass `id` runs in this build; logs why not (once per build: `quiet` for the cleanup
 * rerun). */
static int pass_on(const trtl_bgraph *g, int32_t id, uint64_t env_off, int quiet)
{
    const trtl_pass_desc *p = &trtl_passes[id];
    int32_t level = g->cfg->optimization_level;
    if (level < p->min_level) {
        if (!quiet)
            trtl_log(TRTL_LOG_VERBOSE, "builder pass '%s' skipped: builder_optimization_level %d is below its %d",
                     p->name, (int)level, (int)p->min_level);
        return 0;
    }
    if ((g->cfg->passes_off >> id) & 1u) {
        if (!quiet)
            trtl_log(TRTL_LOG_INFO, "builder pass '%s' disabled by the builder config", p->name);
        return 0;
    }
    /* A refittable engine keeps each layer's weights where refit finds them (engine/refit.c). */
    if (((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u) && (id == TRTL_PASS_FOLD_SCALE || id == TRTL_PASS_FUSE_QDQ)) {
        if (!quiet)
            trtl_log(TRTL_LOG_INFO, "builder pass '%s' skipped: BuilderFlag.REFIT keeps weights as given", p->name);
        return 0;
    }
    if ((env_off >> id) & 1u) {
        if (!quiet)
            trtl_log(TRTL_LOG_INFO, "builder pass '%s' disabled by %s", p->name, DISABLE_ENV);
        return 0;
    }
    return 1;
}

/* Progress: phase "Optimization passes" (in "Building engine"), one step per pass of the table,
 * run or skipped; the clean-up reruns belong to the last step. */
#define PHASE_PASSES "Optimization passes"

static trtl_status run_all(trtl_bgraph *g, uint64_t env_off)
{
    for (int32_t id = 0; id < TRTL_PASS_COUNT; id++) {
        if (pass_on(g, id, env_off, 0)) {
            trtl_log(TRTL_LOG_VERBOSE, "running builder pass '%s'", trtl_passes[id].name);
            TRTL_TRY(trtl_passes[id].run(g));
        }
        if (id < TRTL_PASS_COUNT - 1 && !trtl_progress_step(g->cfg, PHASE_PASSES, id))
            return trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    }
    for (int32_t id = 0; id < TRTL_PASS_COUNT; id++)
        if (trtl_passes[id].cleanup && pass_on(g, id, env_off, 1)) {
            trtl_log(TRTL_LOG_VERBOSE, "running builder pass '%s' again (clean-up)", trtl_passes[id].name);
            TRTL_TRY(trtl_passes[id].run(g));
        }
    if (!trtl_progress_step(g->cfg, PHASE_PASSES, TRTL_PASS_COUNT - 1))
        return trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    return TRTL_OK;
}

trtl_status trtl_run_passes(trtl_bgraph *g)
{
    uint64_t env_off;
    TRTL_TRY(env_disabled(&env_off));
    trtl_progress_start(g->cfg, PHASE_PASSES, "Building engine", TRTL_PASS_COUNT);
    trtl_status st = run_all(g, env_off);
    trtl_progress_finish(g->cfg, PHASE_PASSES);
    return st;
}
