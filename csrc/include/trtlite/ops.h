/*
 * trtlite/ops.h -- the operation enum (from ops.def) and the value enums of layer attributes.
 * Values equal TensorRT's Python enums (trt.ActivationType.RELU == TRTL_ACT_RELU, ...); each value
 * enum ends with a _COUNT sentinel (valid values are 0.._COUNT-1), which attribute setters check.
 */
#ifndef TRTLITE_OPS_H
#define TRTLITE_OPS_H

#include "trtlite/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum trtl_op {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) TRTL_OP_##E,
#include "trtlite/ops.def"
#undef TRTL_OP
    TRTL_OP_COUNT
} trtl_op;

typedef enum { TRTL_PADMODE_EXPLICIT_ROUND_DOWN = 0, TRTL_PADMODE_EXPLICIT_ROUND_UP = 1,
               TRTL_PADMODE_SAME_UPPER = 2, TRTL_PADMODE_SAME_LOWER = 3,
               TRTL_PADMODE_CAFFE_ROUND_DOWN = 4, TRTL_PADMODE_CAFFE_ROUND_UP = 5,
               TRTL_PADMODE_COUNT } trtl_padding_mode;

typedef enum { TRTL_ACT_RELU = 0, TRTL_ACT_SIGMOID = 1, TRTL_ACT_TANH = 2, TRTL_ACT_LEAKY_RELU = 3,
               TRTL_ACT_ELU = 4, TRTL_ACT_SELU = 5, TRTL_ACT_SOFTSIGN = 6, TRTL_ACT_SOFTPLUS = 7,
               TRTL_ACT_CLIP = 8, TRTL_ACT_HARD_SIGMOID = 9, TRTL_ACT_SCALED_TANH = 10,
               TRTL_ACT_THRESHOLDED_RELU = 11, TRTL_ACT_GELU_ERF = 12, TRTL_ACT_GELU_TANH = 13,
               TRTL_ACT_COUNT,
               TRTL_ACT_NONE = -1 /* epilogues only: no activation */ } trtl_activation_type;

typedef enum { TRTL_EW_SUM = 0, TRTL_EW_PROD = 1, TRTL_EW_MAX = 2, TRTL_EW_MIN = 3, TRTL_EW_SUB = 4,
               TRTL_EW_DIV = 5, TRTL_EW_POW = 6, TRTL_EW_FLOOR_DIV = 7, TRTL_EW_AND = 8, TRTL_EW_OR = 9,
               TRTL_EW_XOR = 10, TRTL_EW_EQUAL = 11, TRTL_EW_GREATER = 12, TRTL_EW_LESS = 13,
               /* trtlite extensions (ONNX BitwiseAnd/Or/Xor, BitShift), INT32 only: bitwise; SHIFT_LEFT
                * gives 0 and SHIFT_RIGHT (arithmetic) the sign fill for an amount outside 0..31. */
               TRTL_EW_BITWISE_AND = 14, TRTL_EW_BITWISE_OR = 15, TRTL_EW_BITWISE_XOR = 16,
               TRTL_EW_SHIFT_LEFT = 17, TRTL_EW_SHIFT_RIGHT = 18,
               TRTL_EW_COUNT } trtl_elementwise_op;

typedef enum { TRTL_UN_EXP = 0, TRTL_UN_LOG = 1, TRTL_UN_SQRT = 2, TRTL_UN_RECIP = 3, TRTL_UN_ABS = 4,
               TRTL_UN_NEG = 5, TRTL_UN_SIN = 6, TRTL_UN_COS = 7, TRTL_UN_TAN = 8, TRTL_UN_SINH = 9,
               TRTL_UN_COSH = 10, TRTL_UN_ASIN = 11, TRTL_UN_ACOS = 12, TRTL_UN_ATAN = 13,
               TRTL_UN_ASINH = 14, TRTL_UN_ACOSH = 15, TRTL_UN_ATANH = 16, TRTL_UN_CEIL = 17,
               TRTL_UN_FLOOR = 18, TRTL_UN_ERF = 19, TRTL_UN_NOT = 20, TRTL_UN_SIGN = 21,
               TRTL_UN_ROUND = 22, TRTL_UN_ISINF = 23,
               TRTL_UN_BITWISE_NOT = 24 /* trtlite extension (ONNX BitwiseNot): ~x over INT32 */,
               TRTL_UN_COUNT } trtl_unary_op;

typedef enum { TRTL_POOL_MAX = 0, TRTL_POOL_AVERAGE = 1, TRTL_POOL_MAX_AVERAGE_BLEND = 2,
               TRTL_POOL_COUNT } trtl_pooling_type;
typedef enum { TRTL_RED_SUM = 0, TRTL_RED_PROD = 1, TRTL_RED_MAX = 2, TRTL_RED_MIN = 3, TRTL_RED_AVG = 4,
               TRTL_RED_COUNT } trtl_reduce_op;
typedef enum { TRTL_TOPK_MAX = 0, TRTL_TOPK_MIN = 1, TRTL_TOPK_COUNT } trtl_topk_op;
typedef enum { TRTL_MATOP_NONE = 0, TRTL_MATOP_TRANSPOSE = 1, TRTL_MATOP_VECTOR = 2,
               TRTL_MATOP_COUNT } trtl_matrix_op;
typedef enum { TRTL_SCALE_UNIFORM = 0, TRTL_SCALE_CHANNEL = 1, TRTL_SCALE_ELEMENTWISE = 2,
               TRTL_SCALE_COUNT } trtl_scale_mode;
typedef enum { TRTL_RESIZE_NEAREST = 0, TRTL_RESIZE_LINEAR = 1, TRTL_RESIZE_CUBIC = 2,
               TRTL_RESIZE_COUNT } trtl_resize_mode;
typedef enum { TRTL_COORD_ALIGN_CORNERS = 0, TRTL_COORD_ASYMMETRIC = 1, TRTL_COORD_HALF_PIXEL = 2,
               TRTL_COORD_COUNT } trtl_resize_coord;
typedef enum { TRTL_SELECT_FORMULA = 0, TRTL_SELECT_UPPER = 1, TRTL_SELECT_COUNT } trtl_resize_selector;
typedef enum { TRTL_ROUND_HALF_UP = 0, TRTL_ROUND_HALF_DOWN = 1, TRTL_ROUND_FLOOR = 2, TRTL_ROUND_CEIL = 3,
               TRTL_ROUND_COUNT } trtl_resize_round;
typedef enum { TRTL_SLICE_DEFAULT = 0, TRTL_SLICE_WRAP = 1, TRTL_SLICE_CLAMP = 2, TRTL_SLICE_FILL = 3,
               TRTL_SLICE_REFLECT = 4, TRTL_SLICE_COUNT } trtl_slice_mode;
typedef enum { TRTL_GATHER_DEFAULT = 0, TRTL_GATHER_ELEMENT = 1, TRTL_GATHER_ND = 2, TRTL_GATHER_COUNT } trtl_gather_mode;
typedef enum { TRTL_SCATTER_ELEMENT = 0, TRTL_SCATTER_ND = 1, TRTL_SCATTER_COUNT } trtl_scatter_mode;
/* trtlite extension (TensorRT's IScatterLayer only replaces): how a scattered update combines with
 * the value in place (ONNX ScatterElements/ScatterND `reduction`). */
typedef enum { TRTL_SCATTER_RED_NONE = 0, TRTL_SCATTER_RED_SUM = 1, TRTL_SCATTER_RED_PROD = 2,
               TRTL_SCATTER_RED_MAX = 3, TRTL_SCATTER_RED_MIN = 4, TRTL_SCATTER_RED_COUNT } trtl_scatter_reduction;
/* PROD: trtlite's extension (ONNX CumProd); TensorRT 10 has SUM only. */
typedef enum { TRTL_CUM_SUM = 0, TRTL_CUM_PROD = 1, TRTL_CUM_COUNT } trtl_cumulative_op;
/* IFillLayer (TensorRT's FillOperation values). */
typedef enum { TRTL_FILL_LINSPACE = 0, TRTL_FILL_RANDOM_UNIFORM = 1, TRTL_FILL_RANDOM_NORMAL = 2,
               TRTL_FILL_COUNT } trtl_fill_op;
/* INMSLayer's box coordinates (TensorRT's BoundingBoxFormat values). */
typedef enum { TRTL_BOX_CORNER_PAIRS = 0, TRTL_BOX_CENTER_SIZES = 1, TRTL_BOX_FORMAT_COUNT } trtl_box_format;

#ifdef __cplusplus
}
#endif
#endif /* TRTLITE_OPS_H */
