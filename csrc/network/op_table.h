/*
 * op_table.h -- per-op traits, one row per entry of ops.def.
 *
 * Each op `l` provides, in csrc/network/ops/<l>.c:
 *   trtl_init_<l>(p)        defaults of a new layer (TensorRT's defaults)
 *   trtl_lower_<l>(p, c)    user params -> engine params (implicit batch: shift axes, prepend the
 *                           batch to shapes); also validates attribute values
 *   trtl_infer_<l>(c)       output dims and dtypes from lowered params and full input dims;
 *                           validates input ranks/dtypes.  Dims may be -1 (dynamic): propagate.
 *   trtl_attrs_<l>[], trtl_nattrs_<l>   attribute descriptors
 * The op's reference kernel, trtl_ref_<l>, is the kernels' business (kernels/ref/ref.h): the
 * network describes ops, it does not run them.
 */
#ifndef TRTL_NETWORK_OP_TABLE_H
#define TRTL_NETWORK_OP_TABLE_H

#include "network/attrs.h"
#include "core/shape.h"

typedef struct trtl_infer_ctx {
    const char *layer_name;
    const trtl_params *p;       /* lowered */
    int32_t n_in;
    const trtl_dims *in;        /* full dims (batch included) */
    const trtl_dtype *in_type;
    const int64_t *const *in_values; /* shape-tensor inputs: their values (network/shape_values.h), else NULL
                                   * (the array may be NULL) */
    int32_t n_out;
    trtl_dims *out;
    trtl_dtype *out_type;
    int need_values;            /* 1: a shape input whose values are not all known is an error (engine, builder);
                                 * 2: the same at the builder's min corner, where data-dependent extents (NonZero,
                                 * NMS) take their lower bound (0: the network, where they are -1) */
} trtl_infer_ctx;

typedef struct trtl_lower_ctx {
    const char *layer_name;
    int implicit_batch;
    int32_t n_in;
    const trtl_dims *in;        /* full dims of the inputs */
} trtl_lower_ctx;

typedef struct trtl_op_info {
    const char *name;           /* "CONVOLUTION" */
    const char *py_class;       /* "IConvolutionLayer" */
    int32_t trt_layer_type;     /* trt.LayerType value */
    const char *display;        /* "Convolution" (default layer names) */
    int32_t min_inputs, max_inputs, num_outputs;
    void (*init)(trtl_params *p);
    trtl_status (*lower)(trtl_params *p, const trtl_lower_ctx *c);
    trtl_status (*infer)(const trtl_infer_ctx *c);
    const trtl_attr_desc *attrs;
    const int32_t *nattrs;
} trtl_op_info;

extern const trtl_op_info trtl_op_table[TRTL_OP_COUNT];

#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no)                                  \
    void trtl_init_##l(trtl_params *p);                                           \
    trtl_status trtl_lower_##l(trtl_params *p, const trtl_lower_ctx *c);          \
    trtl_status trtl_infer_##l(const trtl_infer_ctx *c);                          \
    extern const trtl_attr_desc trtl_attrs_##l[];                                 \
    extern const int32_t trtl_nattrs_##l;
#include "trtlite/ops.def"
#undef TRTL_OP

/* Helpers for writing attribute tables. */
#define TRTL_PARAM_OFF(member) offsetof(trtl_params, member)
#define TRTL_A(name, type, member) {name, type, TRTL_PARAM_OFF(member), 0, NULL, 0}
/* `count`: the enum's _COUNT sentinel; setting a value outside 0..count-1 fails. */
#define TRTL_A_ENUM(name, member, ename, count) {name, TRTL_ATTR_ENUM, TRTL_PARAM_OFF(member), count, ename, 0}
#define TRTL_A_FLAGS(name, type, member, fl) {name, type, TRTL_PARAM_OFF(member), 0, NULL, fl}
#define TRTL_A_SYM(name, pre, post, fl) {name, TRTL_ATTR_DIMS_SYM, TRTL_PARAM_OFF(pre), TRTL_PARAM_OFF(post), NULL, fl}
#define TRTL_A_STRING(name, member) {name, TRTL_ATTR_STRING, TRTL_PARAM_OFF(member), sizeof(((trtl_params *)0)->member), NULL, 0}
#define TRTL_NATTRS(l) const int32_t trtl_nattrs_##l = (int32_t)(sizeof(trtl_attrs_##l) / sizeof(trtl_attrs_##l[0]))
/* The convolution attributes of an internal op whose params begin with a trtl_conv_params `m` (NCHWC_CONV,
 * PREACT_CONV), in convolution's order without its aliases. */
#define TRTL_CONV_ATTRS(m)                                                          \
    TRTL_A("num_output_maps", TRTL_ATTR_INT, m.num_output_maps),                    \
    TRTL_A("kernel_size_nd", TRTL_ATTR_DIMS, m.kernel_size),                        \
    TRTL_A("stride_nd", TRTL_ATTR_DIMS, m.stride),                                  \
    TRTL_A("pre_padding", TRTL_ATTR_DIMS, m.pre_padding),                           \
    TRTL_A("post_padding", TRTL_ATTR_DIMS, m.post_padding),                         \
    TRTL_A("dilation_nd", TRTL_ATTR_DIMS, m.dilation),                              \
    TRTL_A("num_groups", TRTL_ATTR_INT, m.num_groups),                              \
    TRTL_A_ENUM("padding_mode", m.padding_mode, "PaddingMode", TRTL_PADMODE_COUNT), \
    TRTL_A("kernel", TRTL_ATTR_WEIGHTS, m.kernel),                                  \
    TRTL_A("bias", TRTL_ATTR_WEIGHTS, m.bias)

/* Shape arithmetic shared with the kernels (output sizes, broadcasting, single axis): core/shape.h. */

/* Does a weights attribute of an `op` node's params `prm`, other than `self`, point at p?  (Plugin and
 * control-flow nodes hold none.)  The builder and the engine ask it before freeing a weights buffer that
 * several nodes may share. */
int trtl_params_weights_at(trtl_op op, const trtl_params *prm, const void *p, const trtl_weights *self);

/* Checks kernel_size/stride/dilation/padding of a (de)convolution agree in rank and range
 * (ops/convolution.c). */
trtl_status trtl_conv_check_spatial(const trtl_conv_params *c, const char *layer);

#endif
