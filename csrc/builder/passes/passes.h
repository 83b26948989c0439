/*
 * passes.h -- the builder's optimization passes: one table, in the order they run.
 *
 * Each pass is one file of passes/ exporting one function that rewrites the working graph
 * (graph.h) in place: it marks nodes dead instead of deleting them, keeps every network output
 * and its value, and logs at INFO how many rewrites it made and at VERBOSE each one.
 *
 * A pass runs when the config's builder_optimization_level is at least its min_level and it is
 * switched on: by default every pass is on; trtl_builder_config_set_pass_enabled and the
 * TRTLITE_DISABLE_PASSES environment variable (comma-separated names, read at each build) switch
 * passes off.  Any subset of passes may be off: each pass only makes the graph cheaper, never
 * correct, so an engine built with a pass off computes the same values.
 */
#ifndef TRTL_BUILDER_PASSES_H
#define TRTL_BUILDER_PASSES_H

#include "builder/graph.h"
#include "core/status.h"

/* Indices into trtl_passes[], in run order. */
typedef enum trtl_pass_id {
    TRTL_PASS_DEAD_LAYERS = 0,
    TRTL_PASS_DROP_IDENTITY,
    TRTL_PASS_CONSTANT_FOLD,
    TRTL_PASS_FUSE_GELU,
    TRTL_PASS_FUSE_LAYERNORM,
    TRTL_PASS_FUSE_POINTWISE,
    TRTL_PASS_FOLD_TRANSPOSE,
    TRTL_PASS_FUSE_ATTENTION,
    TRTL_PASS_FOLD_SCALE,
    TRTL_PASS_FUSE_EPILOGUE,
    TRTL_PASS_FUSE_QDQ,
    TRTL_PASS_QDQ_INT8_IO,
    TRTL_PASS_DROP_FAKE_QUANT,
    TRTL_PASS_FOLD_FAKE_QUANT,
    TRTL_PASS_QLINEAR_BIAS,
    TRTL_PASS_NORM_CODES,
    TRTL_PASS_FOLD_PADDING,
    TRTL_PASS_FUSE_SIBLINGS,
    TRTL_PASS_SINK_CONCAT,
    TRTL_PASS_GATHER_SLICE,
    TRTL_PASS_ELIDE_SLICE,
    TRTL_PASS_ELIDE_CONCAT,
    TRTL_PASS_FUSE_LINEAR,
    TRTL_PASS_FUSE_REDUCE,
    TRTL_PASS_ELIDE_RESHAPE,
    TRTL_PASS_PLUGIN_INT8_OUT,
    TRTL_PASS_INT8_TACTICS,
    TRTL_PASS_INT8_FLOAT_REGIONS,
    TRTL_PASS_FUSE_PREACT,
    TRTL_PASS_FUSE_CHAIN,
    TRTL_PASS_INT8_NCHWC,
    TRTL_PASS_NCHWC,
    TRTL_PASS_COUNT
} trtl_pass_id;

typedef struct trtl_pass_desc {
    const char *name;        /* the switch name (config, TRTLITE_DISABLE_PASSES, logs) */
    trtl_status (*run)(trtl_bgraph *g);
    int32_t min_level;       /* runs when builder_optimization_level >= min_level */
    int cleanup;             /* also runs once more after every other pass */
    const char *description; /* one line, for trtlite.builder_passes() */
} trtl_pass_desc;

extern const trtl_pass_desc trtl_passes[TRTL_PASS_COUNT];

/* Index of the pass called `name`, or -1. */
int32_t trtl_pass_find(const char *name);
/* The error for a name that is no pass: names it (`what` says where it came from) and lists the
 * valid names.  Returns `status`. */
trtl_status trtl_pass_unknown(trtl_status status, const char *what, const char *name);
/* Runs the table on the graph as the config and TRTLITE_DISABLE_PASSES say (pass_table.c). */
trtl_status trtl_run_passes(trtl_bgraph *g);

/* What one pass run rewrote (pass_log.c): trtl_pass_log_add logs each rewrite at VERBOSE and
 * keeps the first few; trtl_pass_log_done logs one INFO line with the count and those. */
typedef struct trtl_pass_log {
    const char *what;  /* the pass, in words ("epilogue fusion") */
    int32_t count;
    size_t used;
    char first[512];   /* the first rewrites, "; "-separated (truncated) */
} trtl_pass_log;
void trtl_pass_log_init(trtl_pass_log *l, const char *what);
void trtl_pass_log_add(trtl_pass_log *l, const char *fmt, ...) TRTL_PRINTF(2, 3);
void trtl_pass_log_done(const trtl_pass_log *l);

/* The passes (passes/<name>.c). */
trtl_status trtl_pass_dead_layers(trtl_bgraph *g);
trtl_status trtl_pass_drop_identity(trtl_bgraph *g);
trtl_status trtl_pass_drop_fake_quant(trtl_bgraph *g);
trtl_status trtl_pass_fold_fake_quant(trtl_bgraph *g);
trtl_status trtl_pass_qlinear_bias(trtl_bgraph *g);
trtl_status trtl_pass_norm_codes(trtl_bgraph *g);
trtl_status trtl_pass_gather_slice(trtl_bgraph *g);
trtl_status trtl_pass_constant_fold(trtl_bgraph *g);
trtl_status trtl_pass_fuse_gelu(trtl_bgraph *g);
trtl_status trtl_pass_fuse_layernorm(trtl_bgraph *g);
trtl_status trtl_pass_fuse_pointwise(trtl_bgraph *g);
trtl_status trtl_pass_fold_scale(trtl_bgraph *g);
trtl_status trtl_pass_fuse_epilogue(trtl_bgraph *g);
trtl_status trtl_pass_fold_transpose(trtl_bgraph *g);
trtl_status trtl_pass_fuse_attention(trtl_bgraph *g);
trtl_status trtl_pass_fuse_qdq(trtl_bgraph *g);
trtl_status trtl_pass_qdq_int8_io(trtl_bgraph *g);
trtl_status trtl_pass_fold_padding(trtl_bgraph *g);
trtl_status trtl_pass_fuse_siblings(trtl_bgraph *g);
trtl_status trtl_pass_sink_concat(trtl_bgraph *g);
trtl_status trtl_pass_elide_slice(trtl_bgraph *g);
trtl_status trtl_pass_elide_concat(trtl_bgraph *g);
trtl_status trtl_pass_fuse_linear(trtl_bgraph *g);
trtl_status trtl_pass_fuse_reduce(trtl_bgraph *g);
trtl_status trtl_pass_elide_reshape(trtl_bgraph *g);
trtl_status trtl_pass_plugin_int8_out(trtl_bgraph *g);
trtl_status trtl_pass_int8_tactics(trtl_bgraph *g);
trtl_status trtl_pass_int8_float_regions(trtl_bgraph *g);
/* After kernel selection (select.c): the tensors int8_float_regions marked whose producer and readers all chose
 * fp32 tactics become FLOAT again (int8_regions.c); returns how many. */
int32_t trtl_int8_float_regions(trtl_bgraph *g);
/* Session 13: QLINEAR node i as it runs where its neighbours' tensors become FLOAT (its output if float_region,
 * input 0 / the residual if their producer's is): *view is a copy of the node with out_quant 1 / in_grid 1 /
 * res_quant 0 and those tensors' dtypes are set FLOAT in g (saved[3]: input 0, residual, output) until
 * trtl_int8_region_view_end(g, i, the return value, saved); returns 0 (nothing changed) where no tensor of it may
 * become FLOAT.  select.c times the fp32 tactics in this view, as they run inside a region. */
int trtl_int8_region_view(trtl_bgraph *g, int32_t i, trtl_node *view, trtl_dtype saved[3]);
void trtl_int8_region_view_end(trtl_bgraph *g, int32_t i, int view, const trtl_dtype saved[3]);
trtl_status trtl_pass_fuse_preact(trtl_bgraph *g);
trtl_status trtl_pass_fuse_chain(trtl_bgraph *g);
trtl_status trtl_pass_int8_nchwc(trtl_bgraph *g);
trtl_status trtl_pass_nchwc(trtl_bgraph *g);
/* int8_regions.c, for nchwc.c (session 19): whether QLINEAR node i's codes output (out_quant 2) may become FLOAT
 * fake-quantized codes (every reader a QLINEAR taking it as input 0 of the same parameters or as its residual codes,
 * no network output: the region rule), and making it so (out_quant 1, the tensor FLOAT, the readers in_grid 1 /
 * res_quant 0). */
int trtl_int8_codes_may_float(trtl_bgraph *g, int32_t i);
void trtl_int8_codes_to_float(trtl_bgraph *g, int32_t i);

/* Shared by passes (defined in the pass named).  qdq_int8_io.c: the code parameters (out_scale,
 * out_zero_point, out_type of *out) that the first int8 reader of y quantizes it with (through max poolings
 * and layout-only layers, or a kept Q layer); whether every reader of y takes those codes; and y's retyping
 * to those codes (max poolings after it pool codes, Q layers recomputing them are bypassed), returning the
 * poolings retyped.  fold_scale.c: whether a scale layer is a per-tensor or per-channel (axis 1, K
 * channels) scale and shift without power, and its value for channel k (`dflt` where absent). */
int trtl_qio_reader_params(const trtl_bgraph *g, int32_t y, trtl_qlinear_params *out, int depth);
int trtl_qio_consumers_take_codes(const trtl_bgraph *g, int32_t y, const trtl_qlinear_params *out, int depth);
int32_t trtl_qio_retype(trtl_bgraph *g, int32_t y, trtl_dtype type, const trtl_qlinear_params *out);
int trtl_scale_foldable(const trtl_node *s, int64_t K);
float trtl_scale_value(const trtl_weights *w, int64_t k, float dflt);

#endif
