/*
 * py_network.c -- trtlite.INetworkDefinition: inputs, outputs and the add_* methods.
 *
 * The add_* methods are described by a table (keyword names exactly as TensorRT's Python API):
 * each argument is either an input tensor, a list of input tensors, or a layer attribute set
 * through the attribute table before the shape check, so every add_* shares one implementation.
 */
#include <string.h>

#include "python/py_network.h"
#include "python/py_layer.h"
#include "python/py_tensor.h"
#include "python/views.h"
#include "python/py_plugin.h"
#include "python/py_network_plugin.h"
#include "python/py_network_dq.h"

/* ---- keep-alive registry ---------------------------------------------------------------------- */

static PyObject *keep_key(const void *layer, const char *key)
{
    return Py_BuildValue("(ns)", (Py_ssize_t)(intptr_t)layer, key);
}

int trtl_py_keep(TrtlNetwork *net, const void *layer, const char *key, PyObject *obj)
{
    PyObject *k = keep_key(layer, key);
    if (!k)
        return -1;
    int r = PyDict_SetItem(net->keep, k, obj);
    Py_DECREF(k);
    return r;
}

PyObject *trtl_py_kept(TrtlNetwork *net, const void *layer, const char *key)
{
    PyObject *k = keep_key(layer, key);
    if (!k) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *v = PyDict_GetItemWithError(net->keep, k);
    Py_DECREF(k);
    if (v == Py_None)
        return NULL;
    return v;
}

/* Forget what a removed layer kept (its address may be reused by a later layer). */
static void keep_drop_layer(TrtlNetwork *net, const void *layer)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb); /* called while an exception is pending: keep it */
    PyObject *keys = PyDict_Keys(net->keep);
    if (!keys) {
        PyErr_Restore(et, ev, tb);
        return;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        if (PyTuple_GET_SIZE(k) == 2 && PyLong_AsSsize_t(PyTuple_GET_ITEM(k, 0)) == (Py_ssize_t)(intptr_t)layer)
            PyDict_DelItem(net->keep, k);
    }
    Py_DECREF(keys);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

/* ---- threading contract ----------------------------------------------------------------------- */

/* A build reads the network with the GIL released (and updates its shape caches), so while one
 * runs, nothing may reach the network through Python: not another thread adding layers or
 * reading shapes, not the build's own logger or progress monitor.  Refused rather than waited
 * for: a build can take minutes, and a callback of the build waiting for it would never return. */
int trtl_py_network_idle(TrtlNetwork *net, const char *what)
{
    if (!net->building)
        return 0;
    const char *name = trtl_network_name(net->net);
    PyErr_Format(TRTL_STATE(net)->StateError,
                 "network '%s': %s is refused while a build uses this network (build_engine or "
                 "build_serialized_network, on another thread or calling this from its logger or progress monitor); "
                 "wait for the build to return", name && *name ? name : "(unnamed)", what);
    return -1;
}

static TrtlNetwork *owner_of(PyObject *self)
{
    trtl_py_state *st = TRTL_STATE(self);
    if (PyObject_TypeCheck(self, st->NetworkType))
        return (TrtlNetwork *)self;
    if (PyObject_TypeCheck(self, st->LayerType))
        return ((TrtlLayer *)self)->owner;
    return ((TrtlTensor *)self)->owner;
}

static int attr_idle(PyObject *self, PyObject *name, const char *verb)
{
    TrtlNetwork *net = owner_of(self);
    if (!net || !net->building)
        return 0;
    char what[160];
    const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!n)
        PyErr_Clear();
    snprintf(what, sizeof what, "%s %s.%s", verb, Py_TYPE(self)->tp_name, n ? n : "?");
    return trtl_py_network_idle(net, what);
}

PyObject *trtl_py_net_getattro(PyObject *self, PyObject *name)
{
    if (attr_idle(self, name, "reading") < 0)
        return NULL;
    return PyObject_GenericGetAttr(self, name);
}

int trtl_py_net_setattro(PyObject *self, PyObject *name, PyObject *v)
{
    if (attr_idle(self, name, "setting") < 0)
        return -1;
    return PyObject_GenericSetAttr(self, name, v);
}

/* ---- object ---------------------------------------------------------------------------------- */

static void network_dealloc(TrtlNetwork *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->keep);
    trtl_network_destroy(self->net);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int network_traverse(TrtlNetwork *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->keep);
    return 0;
}

static int network_clear(TrtlNetwork *self)
{
    Py_CLEAR(self->keep);
    return 0;
}

/* Made by Builder.create_network(). */
PyObject *trtl_py_network_new(trtl_py_state *st, int implicit_batch)
{
    TrtlNetwork *o = PyObject_GC_New(TrtlNetwork, st->NetworkType);
    if (!o)
        return NULL;
    o->net = NULL;
    o->building = 0;
    o->keep = PyDict_New();
    if (!o->keep) {
        Py_DECREF(o);
        return NULL;
    }
    trtl_status s = trtl_network_create(implicit_batch, &o->net);
    if (s != TRTL_OK) {
        Py_DECREF(o);
        return trtl_py_raise(st, s);
    }
    PyObject_GC_Track(o);
    return (PyObject *)o;
}

/* ---- the add_* table ----------------------------------------------------------------------- */

enum { R_IN, R_INLIST, R_ATTR, R_CONST, R_CONST_OPT };

typedef struct arg_spec {
    const char *kw;
    int role;
    const char *attr;  /* R_ATTR, R_CONST: attribute name */
    int index;         /* R_IN, R_CONST: input position */
    int optional;      /* may be omitted or None */
} arg_spec;

typedef struct add_spec {
    const char *method;
    trtl_op op;
    arg_spec args[8];
    const char *doc;
} add_spec;

#define IN(kw, i) {kw, R_IN, NULL, i, 0}
#define INS(kw) {kw, R_INLIST, NULL, 0, 0}
#define AT(kw, attr) {kw, R_ATTR, attr, 0, 0}
#define OPT(kw, attr) {kw, R_ATTR, attr, 0, 1}
/* An input that must be a build-time constant (an IConstantLayer's output): also written to `attr`. */
#define CIN(kw, attr, i) {kw, R_CONST, attr, i, 0}
/* The same where the layer also reads the input at run time: copied to `attr` only if constant. */
#define CIN_OPT(kw, attr, i) {kw, R_CONST_OPT, attr, i, 0}

static const add_spec add_specs[] = {
    {"add_convolution", TRTL_OP_CONVOLUTION,
     {IN("input", 0), AT("num_output_maps", "num_output_maps"), AT("kernel_shape", "kernel_size"), AT("kernel", "kernel"),
      OPT("bias", "bias")},
     "add_convolution(input, num_output_maps, kernel_shape, kernel, bias=None) -> IConvolutionLayer\n\n"
     "2-D convolution (TensorRT 7); kernel is KCRS."},
    {"add_convolution_nd", TRTL_OP_CONVOLUTION,
     {IN("input", 0), AT("num_output_maps", "num_output_maps"), AT("kernel_shape", "kernel_size_nd"),
      AT("kernel", "kernel"), OPT("bias", "bias")},
     "add_convolution_nd(input, num_output_maps, kernel_shape, kernel, bias=None) -> IConvolutionLayer\n\n"
     "N-d convolution; kernel is KCRS (K, C/groups, spatial...)."},
    {"add_deconvolution", TRTL_OP_DECONVOLUTION,
     {IN("input", 0), AT("num_output_maps", "num_output_maps"), AT("kernel_shape", "kernel_size"), AT("kernel", "kernel"),
      OPT("bias", "bias")},
     "add_deconvolution(input, num_output_maps, kernel_shape, kernel, bias=None) -> IDeconvolutionLayer\n\n"
     "2-D transposed convolution (TensorRT 7); kernel is CKRS."},
    {"add_deconvolution_nd", TRTL_OP_DECONVOLUTION,
     {IN("input", 0), AT("num_output_maps", "num_output_maps"), AT("kernel_shape", "kernel_size_nd"),
      AT("kernel", "kernel"), OPT("bias", "bias")},
     "add_deconvolution_nd(input, num_output_maps, kernel_shape, kernel, bias=None) -> IDeconvolutionLayer\n\n"
     "N-d transposed convolution; kernel is (C, K/groups, spatial...)."},
    {"add_pooling", TRTL_OP_POOLING, {IN("input", 0), AT("type", "type"), AT("window_size", "window_size")},
     "add_pooling(input, type, window_size) -> IPoolingLayer\n\n2-D pooling (TensorRT 7). Stride defaults to 1."},
    {"add_pooling_nd", TRTL_OP_POOLING, {IN("input", 0), AT("type", "type"), AT("window_size", "window_size_nd")},
     "add_pooling_nd(input, type, window_size) -> IPoolingLayer\n\nN-d pooling. Stride defaults to 1."},
    {"add_activation", TRTL_OP_ACTIVATION, {IN("input", 0), AT("type", "type")},
     "add_activation(input, type) -> IActivationLayer\n\nElementwise activation.  alpha / beta start at the type's "
     "natural defaults (ONNX's: LEAKY_RELU 0.01; ELU 1; SELU 1.6733, 1.0507; SOFTPLUS and SCALED_TANH 1, 1; "
     "HARD_SIGMOID 0.2, 0.5; THRESHOLDED_RELU 1; others 0, 0); set them after to override."},
    {"add_lrn", TRTL_OP_LRN,
     {IN("input", 0), AT("window", "window_size"), AT("alpha", "alpha"), AT("beta", "beta"), AT("k", "k")},
     "add_lrn(input, window, alpha, beta, k) -> ILRNLayer\n\nCross-channel local response normalization."},
    {"add_scale", TRTL_OP_SCALE,
     {IN("input", 0), AT("mode", "mode"), OPT("shift", "shift"), OPT("scale", "scale"), OPT("power", "power")},
     "add_scale(input, mode, shift=None, scale=None, power=None) -> IScaleLayer\n\n"
     "out = (in * scale + shift) ** power per ScaleMode; missing weights mean 0 / 1 / 1."},
    {"add_scale_nd", TRTL_OP_SCALE,
     {IN("input", 0), AT("mode", "mode"), OPT("shift", "shift"), OPT("scale", "scale"), OPT("power", "power"),
      OPT("channel_axis", "channel_axis")},
     "add_scale_nd(input, mode, shift=None, scale=None, power=None, channel_axis=...) -> IScaleLayer\n\n"
     "Scale with an explicit channel axis."},
    {"add_softmax", TRTL_OP_SOFTMAX, {IN("input", 0)},
     "add_softmax(input) -> ISoftMaxLayer\n\nSoftmax over one axis (attribute `axes`; TensorRT's default axis)."},
    {"add_concatenation", TRTL_OP_CONCATENATION, {INS("inputs")},
     "add_concatenation(inputs) -> IConcatenationLayer\n\nConcatenation along `axis` (TensorRT's default)."},
    {"add_elementwise", TRTL_OP_ELEMENTWISE, {IN("input1", 0), IN("input2", 1), AT("op", "op")},
     "add_elementwise(input1, input2, op) -> IElementWiseLayer\n\nBinary op with broadcasting."},
    {"add_unary", TRTL_OP_UNARY, {IN("input", 0), AT("op", "op")}, "add_unary(input, op) -> IUnaryLayer\n\nUnary op."},
    {"add_padding", TRTL_OP_PADDING, {IN("input", 0), AT("pre_padding", "pre_padding"), AT("post_padding", "post_padding")},
     "add_padding(input, pre_padding, post_padding) -> IPaddingLayer\n\nZero padding of the last 2 dims (negative crops)."},
    {"add_padding_nd", TRTL_OP_PADDING,
     {IN("input", 0), AT("pre_padding", "pre_padding_nd"), AT("post_padding", "post_padding_nd")},
     "add_padding_nd(input, pre_padding, post_padding) -> IPaddingLayer\n\nZero padding of the last dims (negative crops)."},
    {"add_shuffle", TRTL_OP_SHUFFLE, {IN("input", 0)},
     "add_shuffle(input) -> IShuffleLayer\n\nTranspose -> reshape -> transpose (set first_transpose, reshape_dims, ...)."},
    {"add_reduce", TRTL_OP_REDUCE, {IN("input", 0), AT("op", "op"), AT("axes", "axes"), AT("keep_dims", "keep_dims")},
     "add_reduce(input, op, axes, keep_dims) -> IReduceLayer\n\nReduction over the axes bitmask."},
    {"add_topk", TRTL_OP_TOPK, {IN("input", 0), AT("op", "op"), AT("k", "k"), AT("axes", "axes")},
     "add_topk(input, op, k, axes) -> ITopKLayer\n\nTop-k values (output 0) and int32 indices (output 1)."},
    {"add_gather", TRTL_OP_GATHER, {IN("input", 0), IN("indices", 1), AT("axis", "axis")},
     "add_gather(input, indices, axis) -> IGatherLayer\n\nGather along `axis` with int32 indices."},
    {"add_gather_v2", TRTL_OP_GATHER, {IN("input", 0), IN("indices", 1), AT("mode", "mode")},
     "add_gather_v2(input, indices, mode) -> IGatherLayer\n\nGather in GatherMode DEFAULT, ELEMENT or ND."},
    {"add_matrix_multiply", TRTL_OP_MATRIX_MULTIPLY, {IN("input0", 0), AT("op0", "op0"), IN("input1", 1), AT("op1", "op1")},
     "add_matrix_multiply(input0, op0, input1, op1) -> IMatrixMultiplyLayer\n\nBatched matrix product."},
    {"add_constant", TRTL_OP_CONSTANT, {AT("shape", "shape"), AT("weights", "weights")},
     "add_constant(shape, weights) -> IConstantLayer\n\nA constant tensor."},
    {"add_identity", TRTL_OP_IDENTITY, {IN("input", 0)}, "add_identity(input) -> IIdentityLayer\n\nCopy (or convert with set_output_type)."},
    {"add_cast", TRTL_OP_CAST, {IN("input", 0), AT("to_type", "to_type")},
     "add_cast(input, to_type) -> ICastLayer\n\nConvert to another DataType."},
    {"add_fully_connected", TRTL_OP_FULLY_CONNECTED,
     {IN("input", 0), AT("num_outputs", "num_output_channels"), AT("kernel", "kernel"), OPT("bias", "bias")},
     "add_fully_connected(input, num_outputs, kernel, bias=None) -> IFullyConnectedLayer\n\n"
     "Flattens the last 3 dims (C, H, W) and outputs (K, 1, 1)."},
    {"add_slice", TRTL_OP_SLICE, {IN("input", 0), AT("start", "start"), AT("shape", "shape"), AT("stride", "stride")},
     "add_slice(input, start, shape, stride) -> ISliceLayer\n\nStrided slice."},
    {"add_resize", TRTL_OP_RESIZE, {IN("input", 0)},
     "add_resize(input) -> IResizeLayer\n\nResize (set shape or scales, resize_mode, coordinate_transformation)."},
    {"add_parametric_relu", TRTL_OP_PARAMETRIC_RELU, {IN("input", 0), IN("slopes", 1)},
     "add_parametric_relu(input, slopes) -> IParametricReLULayer\n\nLeaky ReLU with slopes from a tensor."},
    {"add_select", TRTL_OP_SELECT, {IN("condition", 0), IN("then_input", 1), IN("else_input", 2)},
     "add_select(condition, then_input, else_input) -> ISelectLayer\n\nElementwise choice with broadcasting."},
    {"add_normalization", TRTL_OP_NORMALIZATION,
     {IN("input", 0), IN("scale", 1), IN("bias", 2), AT("axesMask", "axes")},
     "add_normalization(input, scale, bias, axesMask) -> INormalizationLayer\n\n"
     "(x - mean) / sqrt(var + epsilon) * scale + bias over the axes (num_groups for group norm)."},
    {"add_quantize", TRTL_OP_QUANTIZE, {IN("input", 0), IN("scale", 1), OPT("output_type", "to_type")},
     "add_quantize(input, scale, output_type=DataType.INT8) -> IQuantizeLayer\n\n"
     "round_half_even(input / scale) + zero point, saturated to INT8 (or UINT8); scale a constant tensor of one value "
     "or one per channel of `axis`; the zero point through set_input(2, constant)."},
    {"add_dequantize", TRTL_OP_DEQUANTIZE, {IN("input", 0), IN("scale", 1), OPT("output_type", "to_type")},
     "add_dequantize(input, scale, output_type=DataType.FLOAT) -> IDequantizeLayer\n\n"
     "(input - zero point) * scale from an INT8 or UINT8 tensor; scale and zero point as add_quantize."},
    {"add_shape", TRTL_OP_SHAPE, {IN("input", 0)},
     "add_shape(input) -> IShapeLayer\n\nThe input's dims as a 1-D INT32 shape tensor (TensorRT 10 gives INT64; trtlite "
     "has no 64-bit integer tensors)."},
    {"add_scatter", TRTL_OP_SCATTER, {IN("data", 0), IN("indices", 1), IN("updates", 2), AT("mode", "mode")},
     "add_scatter(data, indices, updates, mode) -> IScatterLayer\n\n"
     "data with updates written where the INT32 indices point: ScatterMode.ELEMENT (along `axis`) or ND."},
    {"add_one_hot", TRTL_OP_ONE_HOT, {IN("indices", 0), IN("values", 1), CIN("depth", "depth", 2), AT("axis", "axis")},
     "add_one_hot(indices, values, depth, axis) -> IOneHotLayer\n\n"
     "values[1] where the index matches, values[0] elsewhere, along a new dim of size depth at `axis`; depth must "
     "be a constant INT32 scalar tensor."},
    {"add_cumulative", TRTL_OP_CUMULATIVE,
     {IN("input", 0), CIN_OPT("axis", "axis", 1), AT("op", "op"), AT("exclusive", "exclusive"), AT("reverse", "reverse")},
     "add_cumulative(input, axis, op, exclusive, reverse) -> ICumulativeLayer\n\n"
     "Running sum along an axis given as a constant INT32 scalar tensor."},
    {"add_reverse_sequence", TRTL_OP_REVERSE_SEQUENCE, {IN("input", 0), IN("sequence_lens", 1)},
     "add_reverse_sequence(input, sequence_lens) -> IReverseSequenceLayer\n\n"
     "Reverses the first sequence_lens[b] entries along sequence_axis for each b along batch_axis."},
    {"add_squeeze", TRTL_OP_SQUEEZE, {IN("input", 0), CIN_OPT("axes", "axes", 1)},
     "add_squeeze(input, axes) -> ISqueezeLayer\n\nRemoves the size-1 dims listed in a constant INT32 tensor."},
    {"add_unsqueeze", TRTL_OP_UNSQUEEZE, {IN("input", 0), CIN_OPT("axes", "axes", 1)},
     "add_unsqueeze(input, axes) -> IUnsqueezeLayer\n\nInserts size-1 dims at the output axes listed in a constant "
     "INT32 tensor."},
    {"add_grid_sample", TRTL_OP_GRID_SAMPLE, {IN("input", 0), IN("grid", 1)},
     "add_grid_sample(input, grid) -> IGridSampleLayer\n\n"
     "Samples input (N, C, H, W) at the normalized grid (N, H_out, W_out, 2) (ONNX GridSample)."},
    {"add_einsum", TRTL_OP_EINSUM, {INS("inputs"), AT("equation", "equation")},
     "add_einsum(inputs, equation) -> IEinsumLayer\n\nEinstein summation of FLOAT inputs (\"bij,bjk->bik\", \"ii->\", "
     "...; no ellipsis)."},
    {"add_assertion", TRTL_OP_ASSERTION, {IN("condition", 0), AT("message", "message")},
     "add_assertion(condition, message) -> IAssertionLayer\n\nExecution fails with `message` when any element of "
     "the BOOL condition is false."},
    /* Control flow: the boundary layers, made through ILoop / IIfConditional (trtlite/controlflow.py). */
    {"_add_recurrence", TRTL_OP_RECURRENCE, {IN("initial", 0), AT("owner", "owner")},
     "_add_recurrence(initial, owner) -> IRecurrenceLayer\n\nUse ILoop.add_recurrence."},
    {"_add_iterator", TRTL_OP_ITERATOR, {IN("tensor", 0), AT("owner", "owner"), AT("axis", "axis"), AT("reverse", "reverse")},
     "_add_iterator(tensor, owner, axis, reverse) -> IIteratorLayer\n\nUse ILoop.add_iterator."},
    {"_add_trip_limit", TRTL_OP_TRIP_LIMIT, {IN("tensor", 0), AT("owner", "owner"), AT("kind", "kind")},
     "_add_trip_limit(tensor, owner, kind) -> ITripLimitLayer\n\nUse ILoop.add_trip_limit."},
    {"_add_loop_output", TRTL_OP_LOOP_OUTPUT, {IN("tensor", 0), AT("owner", "owner"), AT("kind", "kind"), AT("axis", "axis")},
     "_add_loop_output(tensor, owner, kind, axis) -> ILoopOutputLayer\n\nUse ILoop.add_loop_output."},
    {"_add_condition", TRTL_OP_CONDITION, {IN("condition", 0), AT("owner", "owner")},
     "_add_condition(condition, owner) -> IConditionLayer\n\nUse IIfConditional.set_condition."},
    {"_add_conditional_input", TRTL_OP_CONDITIONAL_INPUT, {IN("input", 0), AT("owner", "owner")},
     "_add_conditional_input(input, owner) -> IIfConditionalInputLayer\n\nUse IIfConditional.add_input."},
    {"_add_conditional_output", TRTL_OP_CONDITIONAL_OUTPUT,
     {IN("true_subgraph_output", 0), IN("false_subgraph_output", 1), AT("owner", "owner")},
     "_add_conditional_output(true_subgraph_output, false_subgraph_output, owner) -> IIfConditionalOutputLayer\n\n"
     "Use IIfConditional.add_output."},
    {"add_fill", TRTL_OP_FILL, {AT("shape", "shape"), AT("op", "operation"), OPT("output_type", "to_type")},
     "add_fill(shape, op, output_type=DataType.FLOAT) -> IFillLayer\n\n"
     "An output made from parameters: LINSPACE (alpha + sum_k beta_k * i_k), RANDOM_UNIFORM [alpha, beta), "
     "RANDOM_NORMAL (mean alpha, std beta).  set_input(0, shape tensor) gives the dims at run time, set_input(1 / 2, "
     "tensor) alpha / beta."},
    {"add_non_zero", TRTL_OP_NON_ZERO, {IN("input", 0)},
     "add_non_zero(input) -> INonZeroLayer\n\n"
     "Indices of the non-zero elements: INT32 [rank, count], count known only after execution (-1 until then; "
     "outputs need an IOutputAllocator)."},
    {"add_nms", TRTL_OP_NMS, {IN("boxes", 0), IN("scores", 1), IN("max_output_boxes_per_class", 2)},
     "add_nms(boxes, scores, max_output_boxes_per_class) -> INMSLayer\n\n"
     "Non-maximum suppression per batch item and class: boxes [B, N, 4] (or [B, N, C, 4]), scores [B, N, C], a "
     "0-D INT32 limit; set_input(3, iou_threshold) / set_input(4, score_threshold) (0-D FLOAT).  Output 0: INT32 "
     "[NumOutputBoxes, 3] (batch, class, box) rows, output 1: NumOutputBoxes (0-D INT32)."},
    {"add_attention", TRTL_OP_ATTENTION,
     {IN("query", 0), IN("key", 1), IN("value", 2), OPT("norm_op", "norm_op"), OPT("causal", "causal")},
     "add_attention(query, key, value, norm_op=AttentionNormalizationOp.SOFTMAX, causal=False) -> IAttention\n\n"
     "Fused attention (TensorRT 10.14): norm(query key^T [+ mask]) value over the last axis, query [B, Hq, Sq, D], "
     "key / value [B, Hkv, Sk, D] (Hkv dividing Hq: grouped-query attention).  No implicit 1/sqrt(D) scale (scale "
     "the query, or set the layer's `scale`).  `mask` (input 3): BOOL (true = may attend) or FLOAT (added to the "
     "scores), broadcast to [B, Hq, Sq, Sk]; causal: key j allowed for query i where j <= i.  A row without an "
     "attendable key gives zeros."},
};
#define N_SPECS ((int)(sizeof add_specs / sizeof add_specs[0]))

static int tensor_arg(trtl_py_state *st, PyObject *o, const char *method, const char *kw, trtl_tensor **out)
{
    if (!PyObject_TypeCheck(o, st->TensorType)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be an ITensor, not %s", method, kw, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = ((TrtlTensor *)o)->t;
    return 0;
}

/* The values of tensor t, which must be the output of a constant layer of integers: an int when
 * `attr` is a scalar attribute (one value), else a tuple.  Raises naming the method and argument;
 * `optional`: NULL with no exception set when t is not a constant layer's output. */
static PyObject *const_value(TrtlNetwork *self, const add_spec *sp, const char *kw, trtl_tensor *t, const char *attr,
                             int optional)
{
    const char *method = sp->method;
    trtl_py_state *st = TRTL_STATE(self);
    trtl_weights w = {TRTL_FLOAT, NULL, 0};
    int found = 0;
    for (int32_t i = 0, n = trtl_network_num_layers(self->net); i < n && !found; i++) {
        trtl_layer *c = trtl_network_layer(self->net, i);
        if (trtl_layer_op(c) == TRTL_OP_CONSTANT && trtl_layer_output(c, 0) == t)
            found = trtl_layer_get_weights(c, "weights", &w) == TRTL_OK;
    }
    if (!found && optional)
        return NULL; /* no exception: nothing to copy */
    if (!found || (w.type != TRTL_INT32 && w.count > 0) || (w.count > 0 && !w.values))
        return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s(): %s must be a build-time constant: the output of "
                                 "an IConstantLayer of INT32 values (tensor '%s')", method, kw, trtl_tensor_name(t));
    trtl_attr_info info;
    int scalar = trtl_op_find_attr(sp->op, attr, &info) == TRTL_OK && info.kind == TRTL_ATTR_KIND_INT;
    const int32_t *v = (const int32_t *)w.values;
    if (scalar) {
        if (w.count != 1)
            return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s(): %s must hold one value, got %lld", method, kw,
                                     (long long)w.count);
        return PyLong_FromLong(v[0]);
    }
    if (w.count > TRTL_MAX_DIMS)
        return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s(): %s holds %lld values (max %d)", method, kw,
                                 (long long)w.count, TRTL_MAX_DIMS);
    PyObject *tup = PyTuple_New((Py_ssize_t)w.count);
    for (int64_t i = 0; tup && i < w.count; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (!x) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, (Py_ssize_t)i, x);
    }
    return tup;
}

static PyObject *network_add(TrtlNetwork *self, PyObject *args, PyObject *kwargs, const add_spec *sp)
{
    trtl_py_state *st = TRTL_STATE(self);
    PyObject *vals[8] = {0};
    if (trtl_py_network_idle(self, sp->method) < 0)
        return NULL;
    int nargs = 0;
    while (nargs < 8 && sp->args[nargs].kw)
        nargs++;
    Py_ssize_t npos = PyTuple_GET_SIZE(args);
    if (npos > nargs)
        return PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", sp->method, nargs, npos);
    for (Py_ssize_t i = 0; i < npos; i++)
        vals[i] = PyTuple_GET_ITEM(args, i);
    if (kwargs) {
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &k, &v)) {
            const char *ks = PyUnicode_AsUTF8(k);
            int found = -1;
            for (int i = 0; ks && i < nargs; i++)
                if (strcmp(sp->args[i].kw, ks) == 0)
                    found = i;
            if (found < 0)
                return PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", sp->method, ks ? ks : "?");
            if (vals[found])
                return PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", sp->method, ks);
            vals[found] = v;
        }
    }
    trtl_tensor *inputs[64];
    int32_t n_in = 0;
    for (int i = 0; i < nargs; i++) {
        const arg_spec *a = &sp->args[i];
        if (!vals[i] && !a->optional)
            return PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", sp->method, a->kw);
        if (a->role == R_IN || a->role == R_CONST || a->role == R_CONST_OPT) {
            if (vals[i] == Py_None)
                return PyErr_Format(PyExc_TypeError, "%s(): %s is None (the tensor it came from was not created?)", sp->method, a->kw);
            if (tensor_arg(st, vals[i], sp->method, a->kw, &inputs[a->index]) < 0)
                return NULL;
            if (a->index + 1 > n_in)
                n_in = a->index + 1;
        } else if (a->role == R_INLIST) {
            PyObject *seq = PySequence_Fast(vals[i], "");
            if (!seq) {
                PyErr_Clear();
                return PyErr_Format(PyExc_TypeError, "%s(): %s must be a list of ITensor", sp->method, a->kw);
            }
            Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
            if (n < 1 || n > 64) {
                Py_DECREF(seq);
                return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s(): %s needs 1 to 64 tensors, got %zd", sp->method,
                                         a->kw, n);
            }
            for (Py_ssize_t j = 0; j < n; j++)
                if (tensor_arg(st, PySequence_Fast_GET_ITEM(seq, j), sp->method, a->kw, &inputs[j]) < 0) {
                    Py_DECREF(seq);
                    return NULL;
                }
            n_in = (int32_t)n;
            Py_DECREF(seq);
        }
    }
    trtl_layer *l;
    trtl_status s = trtl_network_add_layer(self->net, sp->op, inputs, n_in, &l);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    for (int i = 0; i < nargs; i++) {
        const arg_spec *a = &sp->args[i];
        if (a->role == R_CONST || a->role == R_CONST_OPT) {
            PyObject *v = const_value(self, sp, a->kw, inputs[a->index], a->attr, a->role == R_CONST_OPT);
            if (!v && !PyErr_Occurred())
                continue; /* not a constant: the layer reads it at run time */
            int r = v ? trtl_py_set_attr(self, l, a->attr, v) : -1;
            Py_XDECREF(v);
            if (r < 0)
                goto fail;
            continue;
        }
        if (a->role != R_ATTR || !vals[i] || (a->optional && vals[i] == Py_None))
            continue;
        if (trtl_py_set_attr(self, l, a->attr, vals[i]) < 0)
            goto fail;
    }
    s = trtl_layer_validate(l);
    if (s != TRTL_OK) {
        trtl_py_raise(st, s);
        goto fail;
    }
    return trtl_py_layer_wrap(self, l);
fail:
    keep_drop_layer(self, l);
    trtl_network_remove_layer(self->net, l);
    return NULL;
}

#define ADD_FN(i)                                                                         \
    static PyObject *add_fn_##i(TrtlNetwork *self, PyObject *args, PyObject *kwargs)        \
    {                                                                                     \
        return network_add(self, args, kwargs, &add_specs[i]);                            \
    }
ADD_FN(0) ADD_FN(1) ADD_FN(2) ADD_FN(3) ADD_FN(4) ADD_FN(5) ADD_FN(6) ADD_FN(7) ADD_FN(8) ADD_FN(9)
ADD_FN(10) ADD_FN(11) ADD_FN(12) ADD_FN(13) ADD_FN(14) ADD_FN(15) ADD_FN(16) ADD_FN(17) ADD_FN(18) ADD_FN(19)
ADD_FN(20) ADD_FN(21) ADD_FN(22) ADD_FN(23) ADD_FN(24) ADD_FN(25) ADD_FN(26) ADD_FN(27) ADD_FN(28) ADD_FN(29)
ADD_FN(30) ADD_FN(31) ADD_FN(32)
ADD_FN(33) ADD_FN(34) ADD_FN(35) ADD_FN(36) ADD_FN(37) ADD_FN(38) ADD_FN(39) ADD_FN(40) ADD_FN(41)
ADD_FN(42)
ADD_FN(43) ADD_FN(44) ADD_FN(45) ADD_FN(46) ADD_FN(47) ADD_FN(48) ADD_FN(49) /* control flow */
ADD_FN(50)
ADD_FN(51) ADD_FN(52) /* add_non_zero, add_nms */
ADD_FN(53) /* add_attention */
static PyObject *(*const add_fns[])(TrtlNetwork *, PyObject *, PyObject *) = {
    add_fn_0, add_fn_1, add_fn_2, add_fn_3, add_fn_4, add_fn_5, add_fn_6, add_fn_7, add_fn_8, add_fn_9,
    add_fn_10, add_fn_11, add_fn_12, add_fn_13, add_fn_14, add_fn_15, add_fn_16, add_fn_17, add_fn_18, add_fn_19,
    add_fn_20, add_fn_21, add_fn_22, add_fn_23, add_fn_24, add_fn_25, add_fn_26, add_fn_27, add_fn_28, add_fn_29,
    add_fn_30, add_fn_31, add_fn_32,
    add_fn_33, add_fn_34, add_fn_35, add_fn_36, add_fn_37, add_fn_38, add_fn_39, add_fn_40, add_fn_41,
    add_fn_42,
    add_fn_43, add_fn_44, add_fn_45, add_fn_46, add_fn_47, add_fn_48, add_fn_49, add_fn_50,
    add_fn_51, add_fn_52,
    add_fn_53};
_Static_assert(sizeof add_fns / sizeof add_fns[0] == sizeof add_specs / sizeof add_specs[0],
               "one C entry point per add_* spec");

/* ---- other methods ------------------------------------------------------------------------- */

static PyObject *network_add_input(TrtlNetwork *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "dtype", "shape", NULL};
    const char *name;
    PyObject *dto, *shape;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOO:add_input", kw, &name, &dto, &shape) ||
        trtl_py_network_idle(self, "add_input") < 0)
        return NULL;
    int32_t dt;
    if (trtl_py_as_int32(dto, "add_input(): dtype", &dt) < 0)
        return NULL;
    trtl_dims d;
    if (trtl_py_to_dims(st, shape, &d, "add_input(): shape") < 0)
        return NULL;
    trtl_tensor *t;
    trtl_status s = trtl_network_add_input(self->net, name, (trtl_dtype)dt, &d, &t);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return trtl_py_tensor_wrap(self, t);
}

static PyObject *network_mark_output(TrtlNetwork *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"tensor", NULL};
    PyObject *t;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:mark_output", kw, st->TensorType, &t) ||
        trtl_py_network_idle(self, "mark_output") < 0)
        return NULL;
    trtl_status s = trtl_network_mark_output(self->net, ((TrtlTensor *)t)->t);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_NONE;
}

static PyObject *network_unmark_output(TrtlNetwork *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"tensor", NULL};
    PyObject *t;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:unmark_output", kw, st->TensorType, &t) ||
        trtl_py_network_idle(self, "unmark_output") < 0)
        return NULL;
    trtl_status s = trtl_network_unmark_output(self->net, ((TrtlTensor *)t)->t);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_NONE;
}

static PyObject *network_add_plugin_v2(TrtlNetwork *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"inputs", "plugin", NULL};
    PyObject *ins, *plugin;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:add_plugin_v2", kw, &ins, &plugin) ||
        trtl_py_network_idle(self, "add_plugin_v2") < 0)
        return NULL;
    /* The plugin object lends a C plugin through its `_trtl_clone_capsule()` (plugins.c). */
    PyObject *cap = PyObject_CallMethod(plugin, "_trtl_clone_capsule", NULL);
    if (!cap) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError, "add_plugin_v2(): plugin must be an IPluginV2 (from a creator's "
                                "create_plugin, or a trt.IPluginV2 subclass), not %s", Py_TYPE(plugin)->tp_name);
        }
        return NULL;
    }
    trtl_plugin *p = PyCapsule_GetPointer(cap, "trtlite.plugin");
    Py_DECREF(cap);
    if (!p)
        return NULL;
    PyObject *seq = PySequence_Fast(ins, "add_plugin_v2(): inputs must be a list of ITensor");
    if (!seq) {
        p->vt->destroy(p);
        return NULL;
    }
    trtl_tensor *inputs[64];
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 64) {
        Py_DECREF(seq);
        p->vt->destroy(p);
        return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "add_plugin_v2(): at most 64 inputs");
    }
    for (Py_ssize_t j = 0; j < n; j++)
        if (tensor_arg(st, PySequence_Fast_GET_ITEM(seq, j), "add_plugin_v2", "inputs", &inputs[j]) < 0) {
            Py_DECREF(seq);
            p->vt->destroy(p);
            return NULL;
        }
    Py_DECREF(seq);
    trtl_layer *l;
    /* Messages name the plugin: a C plugin by the name it was created under, a Python one without
     * a registered creator (so no type in messages) by its plugin_type. */
    const char *pname = trtl_py_plugin_name(st, plugin);
    PyObject *ptype = pname || p->creator ? NULL : PyObject_GetAttrString(plugin, "plugin_type");
    if (!pname && ptype && PyUnicode_Check(ptype))
        pname = PyUnicode_AsUTF8(ptype);
    PyErr_Clear();
    trtl_status s = trtl_network_add_named_plugin(self->net, inputs, (int32_t)n, p, pname, &l);
    Py_XDECREF(ptype);
    if (s != TRTL_OK) {
        p->vt->destroy(p);
        return trtl_py_raise(st, s);
    }
    if (trtl_py_keep(self, l, "plugin", plugin) < 0)
        return NULL;
    return trtl_py_layer_wrap(self, l);
}

static PyObject *index_get(TrtlNetwork *self, PyObject *arg, int which)
{
    long i = trtl_py_as_long(arg, "index");
    if ((i == -1 && PyErr_Occurred()) ||
        trtl_py_network_idle(self, which == 0 ? "get_layer" : which == 1 ? "get_input" : "get_output") < 0)
        return NULL;
    int32_t n = which == 0 ? trtl_network_num_layers(self->net)
                : which == 1 ? trtl_network_num_inputs(self->net) : trtl_network_num_outputs(self->net);
    if (i < 0 || i >= n)
        return PyErr_Format(PyExc_IndexError, "%s index %ld out of range (%d)", which == 0 ? "layer" : which == 1 ? "input" : "output",
                            i, (int)n);
    if (which == 0)
        return trtl_py_layer_wrap(self, trtl_network_layer(self->net, (int32_t)i));
    return trtl_py_tensor_wrap(self, which == 1 ? trtl_network_input(self->net, (int32_t)i)
                                                : trtl_network_output(self->net, (int32_t)i));
}

static PyObject *network_get_layer(TrtlNetwork *self, PyObject *arg) { return index_get(self, arg, 0); }
static PyObject *network_get_input(TrtlNetwork *self, PyObject *arg) { return index_get(self, arg, 1); }
static PyObject *network_get_output(TrtlNetwork *self, PyObject *arg) { return index_get(self, arg, 2); }

static Py_ssize_t network_len(TrtlNetwork *self)
{
    return trtl_py_network_idle(self, "len()") < 0 ? -1 : trtl_network_num_layers(self->net);
}

static PyObject *network_item(TrtlNetwork *self, Py_ssize_t i)
{
    if (trtl_py_network_idle(self, "network[i]") < 0)
        return NULL;
    if (i < 0 || i >= trtl_network_num_layers(self->net)) {
        PyErr_SetString(PyExc_IndexError, "layer index out of range");
        return NULL;
    }
    return trtl_py_layer_wrap(self, trtl_network_layer(self->net, (int32_t)i));
}

static PyObject *network_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *network_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyObject *get_num_layers(TrtlNetwork *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_network_num_layers(self->net));
}
static PyObject *get_num_inputs(TrtlNetwork *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_network_num_inputs(self->net));
}
static PyObject *get_num_outputs(TrtlNetwork *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_network_num_outputs(self->net));
}
static PyObject *get_implicit(TrtlNetwork *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_network_implicit_batch(self->net));
}
static PyObject *get_false(TrtlNetwork *self, void *c)
{
    (void)self;
    (void)c;
    Py_RETURN_FALSE;
}
static PyObject *get_name(TrtlNetwork *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(trtl_network_name(self->net));
}
static int set_name(TrtlNetwork *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || !PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "network name must be a str");
        return -1;
    }
    trtl_status s = trtl_network_set_name(self->net, PyUnicode_AsUTF8(v));
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyGetSetDef network_getset[] = {
    {"num_layers", (getter)get_num_layers, NULL, "Number of layers.", NULL},
    {"num_inputs", (getter)get_num_inputs, NULL, "Number of network inputs.", NULL},
    {"num_outputs", (getter)get_num_outputs, NULL, "Number of marked outputs.", NULL},
    {"has_implicit_batch_dimension", (getter)get_implicit, NULL, "True for TensorRT 7 style (implicit batch) networks.", NULL},
    {"has_explicit_precision", (getter)get_false, NULL, "Always False.", NULL},
    {"name", (getter)get_name, (setter)set_name, "Network name.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* add_loop / add_if_conditional: a new structure id (C API), wrapped by trtlite/controlflow.py. */
static PyObject *new_control_flow(TrtlNetwork *self, const char *cls)
{
    int32_t id = 0;
    if (trtl_py_network_idle(self, cls) < 0)
        return NULL;
    trtl_status s = trtl_network_new_control_flow(self->net, &id);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    PyObject *mod = PyImport_ImportModule("trtlite.controlflow");
    if (!mod)
        return NULL;
    PyObject *r = PyObject_CallMethod(mod, cls, "Oi", (PyObject *)self, (int)id);
    Py_DECREF(mod);
    return r;
}

static PyObject *network_add_loop(TrtlNetwork *self, PyObject *Py_UNUSED(a)) { return new_control_flow(self, "ILoop"); }

static PyObject *network_add_if_conditional(TrtlNetwork *self, PyObject *Py_UNUSED(a))
{
    return new_control_flow(self, "IIfConditional");
}

/* The fixed methods; trtl_py_init_network appends the add_* ones in a copy. */
static const PyMethodDef network_methods[] = {
    {"add_input", (PyCFunction)(void (*)(void))network_add_input, METH_VARARGS | METH_KEYWORDS,
     "add_input(name, dtype, shape) -> ITensor\n\nAdd a network input (shape without the batch for implicit-batch networks; "
     "-1 for dynamic dims)."},
    {"mark_output", (PyCFunction)(void (*)(void))network_mark_output, METH_VARARGS | METH_KEYWORDS,
     "mark_output(tensor) -> None\n\nMake `tensor` a network output."},
    {"unmark_output", (PyCFunction)(void (*)(void))network_unmark_output, METH_VARARGS | METH_KEYWORDS,
     "unmark_output(tensor) -> None\n\nUndo mark_output."},
    {"add_plugin_v2", (PyCFunction)(void (*)(void))network_add_plugin_v2, METH_VARARGS | METH_KEYWORDS,
     "add_plugin_v2(inputs, plugin) -> IPluginV2Layer\n\nInsert a plugin layer."},
    {"add_plugin_v3", (PyCFunction)(void (*)(void))trtl_py_network_add_plugin_v3, METH_VARARGS | METH_KEYWORDS,
     "add_plugin_v3(inputs, shape_inputs, plugin) -> IPluginV2Layer\n\nInsert a trt.IPluginV3 plugin layer "
     "(trtlite/plugins_dynamic.py)."},
    {"add_plugin", (PyCFunction)(void (*)(void))trtl_py_network_add_plugin, METH_VARARGS | METH_KEYWORDS,
     "add_plugin(op) -> IPluginV2Layer\n\nInsert a trtlite.plugin (tensorrt.plugin) op: "
     "add_plugin(trtp.op.ns.name(inputs..., attrs...))."},
    {"get_layer", (PyCFunction)network_get_layer, METH_O, "get_layer(index) -> ILayer\n\nLayer `index`."},
    {"get_input", (PyCFunction)network_get_input, METH_O, "get_input(index) -> ITensor\n\nInput `index`."},
    {"get_output", (PyCFunction)network_get_output, METH_O, "get_output(index) -> ITensor\n\nOutput `index`."},
    {"__enter__", network_enter, METH_NOARGS, "Context manager entry; returns the network."},
    {"__exit__", network_exit, METH_VARARGS, "Context manager exit (the network lives until unreferenced)."},
    {"_repr_html_", trtl_py_view_html, METH_NOARGS, TRTL_PY_VIEW_HTML_DOC},
    {"to_dot", trtl_py_view_dot, METH_NOARGS, TRTL_PY_VIEW_DOT_DOC},
    {"to_svg", trtl_py_view_svg, METH_NOARGS, TRTL_PY_VIEW_SVG_DOC},
    {"add_loop", (PyCFunction)network_add_loop, METH_NOARGS,
     "add_loop() -> ILoop\n\nA new loop: recurrences, iterators, a trip limit and loop outputs; the layers computed "
     "from its recurrences and iterators form its body (trtlite.controlflow)."},
    {"add_if_conditional", (PyCFunction)network_add_if_conditional, METH_NOARGS,
     "add_if_conditional() -> IIfConditional\n\nA new conditional: a 0-d BOOL condition, inputs and outputs; the "
     "layers computed from its inputs form its branches (trtlite.controlflow)."},
    {"add_dynamic_quantize", (PyCFunction)(void (*)(void))trtl_py_network_add_dynamic_quantize,
     METH_VARARGS | METH_KEYWORDS,
     "add_dynamic_quantize(input, axis, block_size, output_type, scale_type) -> IDynamicQuantizeLayer\n\n"
     "Block quantization with scales computed at run time (NVFP4: FP4 data, FP8 scales; "
     "trtlite/dynamic_quantize.py)."},
    {"add_dynamic_quantize_v2", (PyCFunction)(void (*)(void))trtl_py_network_add_dynamic_quantize_v2,
     METH_VARARGS | METH_KEYWORDS,
     "add_dynamic_quantize_v2(input, block_shape, output_type, scale_type) -> IDynamicQuantizeLayer\n\n"
     "Block quantization with a block shape (one extent per input dim, -1: all of it; e.g. 2-D blocks) and "
     "scales computed at run time (trtlite/dynamic_quantize.py)."},
    {NULL, NULL, 0, NULL},
};

static const PyType_Slot network_slots[] = {
    {Py_tp_dealloc, network_dealloc},
    {Py_tp_traverse, network_traverse},
    {Py_tp_clear, network_clear},
    {Py_tp_getset, network_getset},
    {Py_tp_methods, (void *)network_methods}, /* replaced by the module state's copy */
    {Py_sq_length, network_len},
    {Py_sq_item, network_item},
    {Py_tp_getattro, trtl_py_net_getattro},
    {Py_tp_setattro, trtl_py_net_setattro},
    {Py_tp_repr, trtl_py_view_repr},
    {Py_tp_doc, "A network definition (INetworkDefinition), made by Builder.create_network()."},
    {0, NULL}};

static const PyType_Spec network_spec = {"trtlite.INetworkDefinition", sizeof(TrtlNetwork), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   (PyType_Slot *)network_slots};

int trtl_py_init_network(PyObject *m, trtl_py_state *st)
{
    /* The fixed methods, then the table-driven add_* methods, in the module state (the type points
     * into the array). */
    size_t n_fixed = 0;
    while (network_methods[n_fixed].ml_name)
        n_fixed++;
    st->network_methods = PyMem_Calloc(n_fixed + N_SPECS + 1, sizeof(PyMethodDef));
    if (!st->network_methods) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(st->network_methods, network_methods, n_fixed * sizeof(PyMethodDef));
    for (int i = 0; i < N_SPECS; i++) {
        PyMethodDef *d = &st->network_methods[n_fixed + (size_t)i];
        d->ml_name = add_specs[i].method;
        d->ml_meth = (PyCFunction)(void (*)(void))add_fns[i];
        d->ml_flags = METH_VARARGS | METH_KEYWORDS;
        d->ml_doc = add_specs[i].doc;
    }
    PyType_Slot slots[sizeof network_slots / sizeof network_slots[0]];
    memcpy(slots, network_slots, sizeof slots);
    for (size_t i = 0; slots[i].slot; i++)
        if (slots[i].slot == Py_tp_methods)
            slots[i].pfunc = st->network_methods;
    PyType_Spec spec = network_spec;
    spec.slots = slots;
    st->NetworkType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
    if (!st->NetworkType)
        return -1;
    return PyModule_AddType(m, st->NetworkType);
}
