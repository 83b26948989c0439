/*
 * params.h -- per-operation parameters.
 *
 * One struct per op; a layer stores the union trtl_params.  The same struct is used twice:
 *   - on a network layer it holds what the user set (TensorRT semantics, axes relative to the
 *     user's view, i.e. without the implicit batch dimension in implicit-batch networks);
 *   - on an engine node it holds the *lowered* form (see trtl_lower_<op>): axes, permutations and
 *     shapes refer to the full tensor including the batch dimension, weights are float32/int32
 *     and owned by the engine.
 * Attribute tables (network/ops/<op>.c) describe these fields by offset for the bindings and the
 * plan writer.  Core, because both the network (which defines and lowers them) and the kernels
 * (which read the lowered form from trtl_node) need them, and neither may include the other.
 *
 * Enum values equal TensorRT's Python enums.
 */
#ifndef TRTL_CORE_PARAMS_H
#define TRTL_CORE_PARAMS_H

#include <stddef.h>
#include <string.h>
#include "trtlite/ops.h"
#include "trtlite/plugin.h"

/* Convolution and deconvolution share one struct.  Spatial dims (kernel_size, stride, ...) have
 * 2 or 3 entries and apply to the last nb spatial dims of the input. */
typedef struct trtl_conv_params {
    int32_t num_output_maps;
    trtl_dims kernel_size;
    trtl_dims stride;
    trtl_dims pre_padding;
    trtl_dims post_padding;
    trtl_dims dilation;
    int32_t num_groups;
    int32_t padding_mode;      /* trtl_padding_mode */
    trtl_weights kernel;       /* conv: [K, C/g, R, S];  deconv: [C, K/g, R, S] */
    trtl_weights bias;         /* [K] or empty */
} trtl_conv_params;

typedef struct trtl_fc_params {
    int32_t num_output_channels;
    trtl_weights kernel;       /* [K, C*H*W] */
    trtl_weights bias;         /* [K] or empty */
} trtl_fc_params;

typedef struct trtl_activation_params {
    int32_t type;              /* trtl_activation_type, or an internal code below */
    float alpha, beta;
} trtl_activation_params;

/* Internal activation codes: only the builder makes them (passes/fuse_pointwise.c), in activation
 * nodes and fused epilogues; users cannot set them (they are no TensorRT ActivationType value,
 * which are 0 .. TRTL_ACT_COUNT-1, and lowering rejects them).  Plans store them like the others
 * and the plan reader accepts them.  Formulas in kernels/epilogue.c. */
enum {
    TRTL_ACT_SILU = 100,       /* x * sigmoid(x) (SiLU / Swish) */
    TRTL_ACT_HARD_SWISH = 101, /* x * hard_sigmoid(x; alpha, beta) (HardSwish: alpha 1/6, beta 0.5) */
    TRTL_ACT_MISH = 102,       /* x * tanh(softplus(x)), softplus with alpha = beta = 1 */
    /* alpha * min(max(rint(x / alpha), lo), hi) (NaN -> lo), lo <= hi integers in [-512, 511] packed into beta by
     * trtl_act_qgrid_beta: a fake quantization (Q -> DQ, zero point folded into lo / hi) clamped by a ReLU / Clip
     * before it (kernels/x86/qlinear_fp32.c puts int8 layers' output quantization in the fp32 kernels' epilogue) */
    TRTL_ACT_QGRID = 103,
    TRTL_ACT_INTERNAL_END
};
/* TRTL_ACT_QGRID's beta for the code bounds [lo, hi], and back (exact: integers below 2^20). */
static inline float trtl_act_qgrid_beta(int32_t lo, int32_t hi) { return (float)((lo + 512) * 1024 + hi + 512); }
/* ... for DequantizeLinear(QuantizeLinear(x)) into int8 (is_signed) or uint8 codes of zero point z: the codes' range
 * shifted by -z. */
static inline float trtl_act_qgrid_codes_beta(int32_t is_signed, int32_t z)
{
    return trtl_act_qgrid_beta((is_signed ? -128 : 0) - z, (is_signed ? 127 : 255) - z);
}
/* Is a a scale the vector QGRID kernels compute exactly?  They divide by one Markstein step from the reciprocal
 * (kernels/x86/fused_epilogue.h, vmath_tmpl.h), exact for a normal reciprocal and remainders: a in [2^-100, 2^100].
 * Every creator of a QGRID step keeps the reference's Q / DQ elsewhere, and the plan reader refuses the rest. */
static inline int trtl_act_qgrid_scale_ok(float a) { return a >= 0x1p-100f && a <= 0x1p100f; }
static inline void trtl_act_qgrid_bounds(float beta, float *lo, float *hi)
{
    float t = (float)(int32_t)(beta * (1.0f / 1024.0f));
    *lo = t - 512.0f;
    *hi = beta - t * 1024.0f - 512.0f;
}
/* Is t a valid activation code in an engine (public or internal; not TRTL_ACT_NONE)? */
static inline int trtl_act_code_valid(int32_t t)
{
    return (t >= 0 && t < TRTL_ACT_COUNT) || (t >= TRTL_ACT_SILU && t < TRTL_ACT_INTERNAL_END);
}

typedef struct trtl_pooling_params {
    int32_t type;              /* trtl_pooling_type */
    trtl_dims window_size;
    trtl_dims stride;
    trtl_dims pre_padding;
    trtl_dims post_padding;
    int32_t padding_mode;
    float blend_factor;
    int32_t average_count_excludes_padding;
} trtl_pooling_params;

typedef struct trtl_lrn_params {
    int32_t window_size;
    float alpha, beta, k;
} trtl_lrn_params;

typedef struct trtl_scale_params {
    int32_t mode;              /* trtl_scale_mode */
    trtl_weights shift, scale, power;
    int32_t channel_axis;
} trtl_scale_params;

typedef struct trtl_softmax_params {
    uint32_t axes;             /* bitmask with exactly one bit */
} trtl_softmax_params;

typedef struct trtl_concat_params {
    int32_t axis;
} trtl_concat_params;

typedef struct trtl_elementwise_params {
    int32_t op;                /* trtl_elementwise_op */
} trtl_elementwise_params;

typedef struct trtl_unary_params {
    int32_t op;                /* trtl_unary_op */
} trtl_unary_params;

typedef struct trtl_padding_params {
    trtl_dims pre_padding;     /* applied to the last nb dims; negative values crop */
    trtl_dims post_padding;
} trtl_padding_params;

typedef struct trtl_shuffle_params {
    trtl_dims first_transpose;   /* nb_dims 0: identity */
    trtl_dims reshape_dims;      /* nb_dims -1: no reshape */
    trtl_dims second_transpose;  /* nb_dims 0: identity */
    int32_t zero_is_placeholder; /* default 1 */
    uint32_t copy_mask;          /* lowered only: bit i set -> reshape dim i is the input's dim i */
} trtl_shuffle_params;

typedef struct trtl_reduce_params {
    int32_t op;                /* trtl_reduce_op */
    uint32_t axes;
    int32_t keep_dims;
} trtl_reduce_params;

typedef struct trtl_topk_params {
    int32_t op;                /* trtl_topk_op */
    int32_t k;
    uint32_t axes;             /* exactly one bit */
} trtl_topk_params;

typedef struct trtl_gather_params {
    int32_t axis;
    int32_t num_elementwise_dims;
    int32_t mode;              /* trtl_gather_mode */
} trtl_gather_params;

typedef struct trtl_matmul_params {
    int32_t op0, op1;          /* trtl_matrix_op */
} trtl_matmul_params;

typedef struct trtl_constant_params {
    trtl_dims shape;
    trtl_weights weights;
} trtl_constant_params;

typedef struct trtl_slice_params {
    trtl_dims start, shape, stride;
    int32_t mode;              /* trtl_slice_mode */
    uint32_t copy_mask;        /* lowered only: bit i set -> shape[i] is the input's dim i */
    float fill_value;          /* FILL mode value (set through set_input(4, constant)) */
} trtl_slice_params;

#define TRTL_MAX_SCALES TRTL_MAX_DIMS
typedef struct trtl_resize_params {
    trtl_dims shape;           /* nb_dims 0: use scales */
    int32_t nb_scales;         /* 0: use shape */
    float scales[TRTL_MAX_SCALES];
    int32_t resize_mode;       /* trtl_resize_mode */
    int32_t coordinate_transformation; /* trtl_resize_coord */
    int32_t selector_for_single_pixel; /* trtl_resize_selector */
    int32_t nearest_rounding;  /* trtl_resize_round */
    float cubic_coeff;
    int32_t exclude_outside;
    uint32_t copy_mask;        /* lowered only: bit i set -> output dim i is the input's dim i */
} trtl_resize_params;

typedef struct trtl_normalization_params {
    float epsilon;
    uint32_t axes;
    int32_t num_groups;
    int32_t compute_precision; /* trtl_dtype */
    /* (appended, internal, plan version 10; builder/passes/norm_codes.c) out_quant 2: the output is the INT8 /
     * UINT8 codes (out_type) of QuantizeLinear(y; out_scale, out_zero_point) instead of the FLOAT y (0) */
    int32_t out_quant;
    float out_scale;
    int32_t out_zero_point;
    int32_t out_type;
} trtl_normalization_params;

typedef struct trtl_cast_params {
    int32_t to_type;           /* trtl_dtype */
    int32_t saturate;          /* trtlite extension (ONNX Cast): 1 (default) float8 / E8M0 targets saturate */
} trtl_cast_params;

/* IQuantizeLayer / IDequantizeLayer (ONNX QuantizeLinear / DequantizeLinear semantics):
 *   Q:  y = saturate(round_half_even(x / scale) + zero_point)     (y INT8 or UINT8)
 *   DQ: y = (x - zero_point) * scale                                (y FLOAT)
 * Inputs: 0 data, 1 scale (FLOAT constant, one value or one per channel of `axis`), 2 optional zero
 * point (constant of the integer type, the scale's shape). */
typedef struct trtl_quantize_params {
    int32_t axis;              /* channel axis of a per-channel scale; negative counts from the end */
    int32_t to_type;           /* trtl_dtype of the output: Q INT8/UINT8, DQ FLOAT */
} trtl_quantize_params;

/* Internal op QLINEAR (passes/fuse_qdq.c): a convolution, fully connected layer or matrix multiply
 * over an activation quantized per tensor and int8 weights quantized per output channel, computed
 * on integers, then  y = acc * in_scale * w_scale[k] + bias[k];  y = act(y + residual);  and, when
 * out_quant, y = DQ(Q(y)) with the output's per-tensor parameters.  `conv` comes first so that
 * node->p.conv is the geometry (the conv geometry helpers read it); its kernel holds the INT8
 * weights [K, C/g, spatial...] (FC: [K, C*H*W]; matmul: [K, Cin]) and its bias FLOAT [K] or none. */
enum { TRTL_QL_CONV = 0, TRTL_QL_FC = 1, TRTL_QL_MATMUL = 2, TRTL_QL_POOL = 3, TRTL_QL_ADD = 4, TRTL_QL_MODE_COUNT };
/* TRTL_QL_ADD (no weights, has_residual): y = act(DQ(x) + r) then the output quantization, x the codes of
 * (in_scale, in_zero_point, in_type) (a FLOAT x is quantized with them first), r input 1 (res_quant: its
 * codes, read as (q - res_zero_point) * res_scale) of x's shape: an int8 add no int8 layer produces. */
/* TRTL_QL_POOL (no weights): average pooling of the input's codes, y = sum (q - in_zero) * in_scale / count
 * (int sums, one rounding to float), then act and the output quantization; pool_mode says which windows:
 * the conv geometry's 2-D windows (kernel_size, stride, paddings; EXPLICIT_ROUND_DOWN) counting the
 * padding or not, or all of the last two dims of a 4-D input (global average pooling), keeping them
 * as 1s or dropping them. */
enum { TRTL_QP_NONE = 0, TRTL_QP_AVG = 1, TRTL_QP_AVG_EXCL = 2, TRTL_QP_GLOBAL = 3, TRTL_QP_GLOBAL_DROP = 4 };
typedef struct trtl_qlinear_params {
    trtl_conv_params conv;
    int32_t mode;              /* TRTL_QL_* */
    float in_scale;
    int32_t in_zero_point;
    int32_t in_type;           /* INT8 or UINT8: the range the input is quantized to */
    trtl_weights w_scale;      /* FLOAT [K] */
    int32_t act;               /* activation after the residual, TRTL_ACT_NONE for none */
    float alpha, beta;
    int32_t has_residual;      /* input 1 is added before the activation */
    int32_t out_quant;         /* 1: the output is fake-quantized with the three fields below */
    float out_scale;
    int32_t out_zero_point;
    int32_t out_type;
    /* (appended, passes/qdq_residual.c) mid_quant: y = DQ(Q(y)) with the mid_* parameters before the
     * residual is added (the Q -> DQ between a convolution and the add it feeds); res_quant: input 1
     * holds the residual's INT8 / UINT8 codes (res_type), read as (q - res_zero_point) * res_scale */
    int32_t mid_quant;
    float mid_scale;
    int32_t mid_zero_point;
    int32_t mid_type;
    int32_t res_quant;
    float res_scale;
    int32_t res_zero_point;
    int32_t res_type;
    int32_t pool_mode;         /* (appended) TRTL_QP_*: mode TRTL_QL_POOL only */
    /* (appended, plan version 8; builder/passes/int8_regions.c) 1: a FLOAT input 0 is already on the input's grid
     * ((q - in_zero_point) * in_scale, fake-quantized by its producer): the fp32 tactics read it without the
     * quantize pass; other kernels may ignore it (quantizing it again gives q back) */
    int32_t in_grid;
    /* (appended, plan version 10; builder/passes/qlinear_bias.c) 1: the bias is added after the mid quantization,
     * y = DQ(Q(acc * in_scale * w_scale[k]; mid)) + bias[k] (then residual, act, output quantization as above):
     * quantize_static's MatMul -> Q/DQ -> Add(bias) -> Q/DQ as one step.  FC / MATMUL modes with mid_quant and a
     * bias only */
    int32_t bias_after_mid;
} trtl_qlinear_params;

struct trtl_plugin;
typedef struct trtl_plugin_params {
    struct trtl_plugin *plugin; /* owned by the layer / node (cloned) */
    /* The name the plugin was created under (create_plugin(name, ...)), for messages only: the
     * plugin ABI has no place for it, and a plan does not store it ("" when unknown).  An array,
     * so params keep being copied by value. */
    char name[64];
} trtl_plugin_params;

/* Internal (ATTENTION, made by passes/fuse_attention.c only): y = softmax(Q K^T * scale [+ mask]) V
 * over the last axis, inputs Q [.., Sq, D], K [.., Sk, D] (or K^T [.., D, Sk] when k_transposed),
 * V [.., Sk, Dv] and, when mask_mode is 1, an additive mask of the scores' rank broadcast to
 * [.., Sq, Sk]; mask_mode 2 is the same except that the mask's dim 0 repeats along the scores' dim 0
 * (shifted windows: scores batch b reads mask batch b mod the mask's dim 0).  Batch dims broadcast
 * as in matrix multiply; y is [.., Sq, Dv]. */
typedef struct trtl_attention_params {
    float scale;
    int32_t k_transposed;
    int32_t mask_mode;
    /* The network layer (IAttention, network.add_attention; plan version 7).  A BOOL mask allows key j of
     * query i where it is true (mask_mode 1 only).  norm_op: TRTL_ATTN_NORM_SOFTMAX, or NONE (the weights are
     * the scaled, masked scores themselves; a masked-out key weighs 0).  causal: key j allowed for query
     * i where j <= i (upper left), or j <= i + Sk - Sq with causal_lower_right.  empty_rows_zero: a row
     * without an attendable key (every score -inf) gives weights 0 instead of NaN.  K and V batch dims may
     * divide Q's (grouped-query attention: query head h reads key head h / (Hq / Hkv)).  decomposable is
     * recorded only (every attention step runs as one kernel here). */
    int32_t norm_op;
    int32_t causal;
    int32_t decomposable;
    int32_t causal_lower_right;
    int32_t empty_rows_zero;
} trtl_attention_params;

enum { TRTL_ATTN_NORM_NONE = 0, TRTL_ATTN_NORM_SOFTMAX = 1, TRTL_ATTN_NORM_COUNT = 2 };

typedef struct trtl_empty_params {
    int32_t unused;
} trtl_empty_params;

/* ---- TensorRT 10 layers (issue #12): scatter, one-hot, cumulative, reverse sequence, squeeze,
 * grid sample.  Semantics at the top of each network/ops/<op>.c. */
typedef struct trtl_scatter_params {
    int32_t mode;              /* trtl_scatter_mode */
    int32_t axis;              /* ELEMENT mode */
    int32_t reduction;         /* trtl_scatter_reduction (trtlite extension; NONE as in TensorRT) */
} trtl_scatter_params;

typedef struct trtl_one_hot_params {
    int32_t axis;              /* where the depth dim goes in the output; -1: last */
    int32_t depth;             /* the build-time value of input 2 (checked again at run time) */
} trtl_one_hot_params;

typedef struct trtl_cumulative_params {
    int32_t op;                /* trtl_cumulative_op */
    int32_t axis;              /* the build-time value of input 1 */
    int32_t exclusive, reverse;
} trtl_cumulative_params;

typedef struct trtl_reverse_sequence_params {
    int32_t batch_axis, sequence_axis;
} trtl_reverse_sequence_params;

typedef struct trtl_squeeze_params {
    trtl_dims axes;            /* the build-time values of input 1 (SQUEEZE and UNSQUEEZE) */
} trtl_squeeze_params;

typedef struct trtl_einsum_params {
    char equation[128];        /* core/einsum.h; NUL-terminated */
} trtl_einsum_params;

typedef struct trtl_assertion_params {
    char message[256];         /* NUL-terminated; named in the run-time error */
} trtl_assertion_params;

typedef struct trtl_grid_sample_params {
    int32_t interpolation_mode; /* trtl_resize_mode */
    int32_t align_corners;
    int32_t sample_mode;        /* trtl_slice_mode: FILL (zeros), CLAMP (border), REFLECT */
} trtl_grid_sample_params;

/* Control flow (network/ops/control_flow.c).  Boundary layers name the loop / conditional they belong to
 * by `owner` (trtl_network_new_control_flow); the builder's CONTROL_FLOW step holds the compiled
 * structure (engine/control_flow.h), whose head is a table of the calls the op table needs. */
typedef enum trtl_trip_limit { TRTL_TRIP_COUNT = 0, TRTL_TRIP_WHILE = 1, TRTL_TRIP_LIMIT_COUNT } trtl_trip_limit;
typedef enum trtl_loop_output {
    TRTL_LOOP_LAST_VALUE = 0, TRTL_LOOP_CONCATENATE = 1, TRTL_LOOP_REVERSE = 2, TRTL_LOOP_OUTPUT_COUNT
} trtl_loop_output;
struct trtl_cf_head;
typedef struct trtl_cf_vtable {
    /* Output dims / dtypes of the step for these input dims (shape inference of the op table). */
    trtl_status (*infer)(const struct trtl_cf_head *cf, const char *name, int32_t n_in, const trtl_dims *in,
                         const trtl_dtype *in_t, int32_t n_out, trtl_dims *out, trtl_dtype *out_t);
} trtl_cf_vtable;
typedef struct trtl_cf_head {
    const trtl_cf_vtable *vt;
} trtl_cf_head;
typedef struct trtl_cf_params {
    int32_t owner;             /* boundary layers: the loop / conditional */
    int32_t kind;              /* TRIP_LIMIT: trtl_trip_limit; LOOP_OUTPUT: trtl_loop_output */
    int32_t axis;              /* ITERATOR, LOOP_OUTPUT */
    int32_t reverse;           /* ITERATOR */
    trtl_cf_head *cf;          /* CONTROL_FLOW: the compiled structure (owned by the step's graph / engine) */
} trtl_cf_params;
typedef struct trtl_fill_params {
    trtl_dims shape;           /* the output's dims, unless input 0 (a shape tensor) gives them */
    int32_t op;                /* trtl_fill_op */
    float alpha, beta;         /* LINSPACE: start, delta (every dim); UNIFORM: min, max; NORMAL: mean, std */
    int32_t to_type;           /* trtl_dtype of the output: FLOAT, or INT32 for LINSPACE */
    int32_t seed;              /* RANDOM_*: trtlite's extension (the stream is a function of seed and index) */
} trtl_fill_params;
typedef struct trtl_nms_params {
    int32_t box_format;        /* trtl_box_format */
    int32_t topk_box_limit;    /* candidates considered per batch item (TensorRT's default 5000) */
} trtl_nms_params;

/* REDUCE_BINARY (internal, passes/fuse_reduce.c): y = reduce_op over `axes` of unary(a ew_op b), a and b of
 * equal rank broadcasting to the reduced input's dims. */
typedef struct trtl_reduce_binary_params {
    int32_t ew_op;             /* trtl_elementwise_op: SUM, PROD or SUB */
    int32_t unary_op;          /* trtl_unary_op ABS, or -1: none */
    int32_t op;                /* trtl_reduce_op */
    uint32_t axes;
    int32_t keep_dims;
} trtl_reduce_binary_params;

/* NCHWC_CONV (internal, passes/nchwc.c): a 2-D convolution whose input and/or output is in a blocked channel
 * layout, [N, ceil(C/B), H, W, B] with channel c at [n, c/B, h, w, c%B] (lanes c >= C finite).  `conv` first, so
 * that nd->p.conv reads the convolution's params (conv_geometry.h) as for CONVOLUTION.  in_block / out_block: B of
 * the input / output (and residual), 0 for plain NCHW.  Squeeze-and-excitation (kernels/nchwc.h): a second input
 * [N, C, 1, 1] scales the input channels, a second output [N, K, 1, 1] gets the mean of each output channel. */
typedef struct trtl_nchwc_conv_params {
    trtl_conv_params conv;
    int32_t in_block, out_block;
    /* (appended, plan version 9; passes/nchwc.c on int8 layers) mid_qgrid 1: TRTL_ACT_QGRID(mid_alpha, mid_beta) of the
     * convolution's value before the residual is added (an int8 layer's mid quantization ahead of its residual add);
     * 0 (a zeroed node's): none.  Only with a residual; the blocked kernels run it on the pointwise path with a blocked
     * output */
    int32_t mid_qgrid;
    float mid_alpha, mid_beta;
} trtl_nchwc_conv_params;

/* PREACT_CONV (internal, passes/fuse_preact.c): a convolution (`conv` first, so that nd->p.conv reads it as for
 * CONVOLUTION) of x' = act(x * in_scale[c] + in_shift[c]), in_act's alpha / beta as an activation layer's (a batch norm
 * and its activation before the convolution).  in_scale / in_shift: C floats each, or empty (1 / 0); in_act
 * TRTL_ACT_NONE: none.  The padding of x' is zeros (the transform applies to the image only). */
typedef struct trtl_preact_conv_params {
    trtl_conv_params conv;
    trtl_weights in_scale, in_shift;
    int32_t in_act;
    float in_alpha, in_beta;
} trtl_preact_conv_params;

/* PW_CHAIN (internal, passes/fuse_chain.c): a run of pointwise steps over one shape as one step running a
 * straight-line program.  The value v starts as input 0 (the output's dims); each op i then replaces it:
 *     TRTL_PW_UNARY     v = unary op `code` (v)                 (the codes trtl_pw_unary_ok accepts)
 *     TRTL_PW_ACT       v = activation `code` (v; alpha, beta)   (every public and internal activation code)
 *     TRTL_PW_BINARY    v = v `code` in[operand]                  (an elementwise op trtl_pw_binary_ok accepts)
 *     TRTL_PW_BINARY_R  v = in[operand] `code` v                  (the chain's value on the right)
 * Inputs 1.. are the operands (constants stay constant tensors), each FLOAT of the output's rank, every dim 1 or
 * the output's (broadcast).  `ops` INT32 [n * 3]: kind, code, operand (0 for the unary kinds); `args` FLOAT
 * [n * 2]: alpha, beta (0 but for TRTL_PW_ACT).  Every op computes what the separate step computed: the fused
 * result is bit-identical to the unfused engine's (kernels/x86/pw_chain.c calls the same vmath spans). */
enum { TRTL_PW_UNARY = 0, TRTL_PW_ACT = 1, TRTL_PW_BINARY = 2, TRTL_PW_BINARY_R = 3, TRTL_PW_KIND_COUNT };
#define TRTL_PW_MAX_OPS 32
#define TRTL_PW_MAX_INPUTS 9 /* the chain's value and at most 8 operands */
typedef struct trtl_pw_chain_params {
    trtl_weights ops;  /* INT32 [n_ops * 3] */
    trtl_weights args; /* FLOAT [n_ops * 2] */
} trtl_pw_chain_params;
/* One decoded op of a chain (the plan reader leaves weights unaligned in the plan bytes: read with memcpy). */
typedef struct trtl_pw_op {
    int32_t kind, code, operand;
    float alpha, beta;
} trtl_pw_op;
static inline int32_t trtl_pw_n_ops(const trtl_pw_chain_params *p) { return (int32_t)(p->ops.count / 3); }
static inline trtl_pw_op trtl_pw_op_get(const trtl_pw_chain_params *p, int32_t i)
{
    trtl_pw_op o;
    int32_t w[3];
    float f[2];
    memcpy(w, (const int32_t *)p->ops.values + 3 * (int64_t)i, sizeof w);
    memcpy(f, (const float *)p->args.values + 2 * (int64_t)i, sizeof f);
    o.kind = w[0];
    o.code = w[1];
    o.operand = w[2];
    o.alpha = f[0];
    o.beta = f[1];
    return o;
}
/* The unary / elementwise ops a chain may hold: those the vector kernels compute (kernels/x86/vmath.h). */
static inline int trtl_pw_unary_ok(int32_t op)
{
    return op == TRTL_UN_EXP || op == TRTL_UN_LOG || op == TRTL_UN_SQRT || op == TRTL_UN_RECIP || op == TRTL_UN_ABS ||
           op == TRTL_UN_NEG || op == TRTL_UN_CEIL || op == TRTL_UN_FLOOR || op == TRTL_UN_ROUND || op == TRTL_UN_ERF ||
           op == TRTL_UN_SIGN;
}
static inline int trtl_pw_binary_ok(int32_t op)
{
    return op == TRTL_EW_SUM || op == TRTL_EW_PROD || op == TRTL_EW_MAX || op == TRTL_EW_MIN || op == TRTL_EW_SUB ||
           op == TRTL_EW_DIV;
}

typedef union trtl_params {
    trtl_conv_params conv;            /* CONVOLUTION, DECONVOLUTION */
    trtl_fc_params fc;
    trtl_activation_params act;
    trtl_pooling_params pool;
    trtl_lrn_params lrn;
    trtl_scale_params scale;
    trtl_softmax_params softmax;
    trtl_concat_params concat;
    trtl_elementwise_params ew;
    trtl_unary_params unary;
    trtl_padding_params pad;
    trtl_shuffle_params shuffle;
    trtl_reduce_params reduce;
    trtl_topk_params topk;
    trtl_gather_params gather;
    trtl_matmul_params matmul;
    trtl_constant_params constant;
    trtl_slice_params slice;
    trtl_resize_params resize;
    trtl_normalization_params norm;
    trtl_cast_params cast;
    trtl_plugin_params plugin;
    trtl_attention_params attn;       /* ATTENTION (internal) */
    trtl_empty_params empty;          /* IDENTITY, PARAMETRIC_RELU, SELECT */
    trtl_quantize_params quant;       /* QUANTIZE, DEQUANTIZE */
    trtl_qlinear_params qlin;         /* QLINEAR (internal) */
    trtl_scatter_params scatter;
    trtl_one_hot_params one_hot;
    trtl_cumulative_params cum;
    trtl_reverse_sequence_params revseq;
    trtl_squeeze_params squeeze;      /* SQUEEZE, UNSQUEEZE */
    trtl_grid_sample_params grid;
    trtl_einsum_params einsum;
    trtl_assertion_params assertion;
    trtl_cf_params cf;                /* control flow (issue #12) */
    trtl_fill_params fill;
    trtl_nms_params nms;              /* NMS (NON_ZERO: empty) */
    trtl_reduce_binary_params rbin;   /* REDUCE_BINARY (internal) */
    trtl_nchwc_conv_params nchwc;     /* NCHWC_CONV (internal; .conv aliases `conv` above) */
    trtl_preact_conv_params preact;   /* PREACT_CONV (internal; .conv aliases `conv` above) */
    trtl_pw_chain_params pwc;         /* PW_CHAIN (internal) */
} trtl_params;

/* "plugin 'NAME' TYPE vVERSION in namespace 'NS'" (the parts known) for messages about a plugin
 * layer or node (params.c); returns buf. */
const char *trtl_plugin_label(const trtl_plugin_params *p, char *buf, size_t n);

#endif /* TRTL_CORE_PARAMS_H */
