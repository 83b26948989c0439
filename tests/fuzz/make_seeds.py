"""Generates the fuzzers' seed corpora (committed; rerun after a plan-format or parser change):

    python tests/fuzz/make_seeds.py            # writes tests/fuzz/corpus/{plan,onnx}/

corpus/onnx/  small ONNX models (onnx.helper): convolution, Gemm, Resize, Slice, Reshape, Concat and the other op
              families the parser imports, static and dynamic (dim_param) inputs, a Shape->Gather->Reshape chain,
              a custom (plugin) node.
corpus/plan/  small valid plans: each ONNX seed that parses and builds (default and level-0 builders), plus
              networks made with the network API for what ONNX does not reach: concatenation of 40 inputs,
              two dynamic optimization profiles, built-in plugins, implicit batch, TopK, Select, LRN, Normalization,
              Cast, Padding, Fully Connected, int32 tensors, loops and conditionals (nested plans).

Weights are tiny and deterministic (seeded), so the files stay small and the output is reproducible.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import trtlite as trt  # noqa: E402

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
RNG = np.random.default_rng(1234)
F = TensorProto.FLOAT


def w(*shape):
    return (RNG.standard_normal(shape) * 0.5).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="trtlite-fuzz-seeds")
    m.ir_version = 8
    return m


def vi(name, shape, dt=F):
    return helper.make_tensor_value_info(name, dt, shape)


# ---------------------------------------------------------------------------------------------------------------
# ONNX seeds: name -> (ModelProto, {input: (min, opt, max)} for dynamic inputs)
# ---------------------------------------------------------------------------------------------------------------

def onnx_seeds():
    s = {}
    s["conv_relu_pool"] = model(
        [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
        [vi("x", [1, 2, 6, 6])], [vi("y", None)], [init("cw", w(3, 2, 3, 3)), init("cb", w(3))])
    s["conv_group_dilated_bn"] = model(
        [helper.make_node("Conv", ["x", "cw"], ["c"], group=2, dilations=[2, 2], strides=[1, 2], pads=[2, 1, 2, 1]),
         helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"], epsilon=1e-5),
         helper.make_node("Sigmoid", ["bn"], ["y"])],
        [vi("x", [1, 4, 7, 7])], [vi("y", None)],
        [init("cw", w(4, 2, 3, 3)), init("s", w(4)), init("b", w(4)), init("m", w(4)),
         init("v", np.abs(w(4)) + 0.5)])
    s["gemm"] = model(
        [helper.make_node("Gemm", ["x", "gw", "gb"], ["y"], transB=1, alpha=0.5, beta=2.0)],
        [vi("x", [2, 5])], [vi("y", None)], [init("gw", w(3, 5)), init("gb", w(3))])
    s["matmul_add_softmax"] = model(
        [helper.make_node("MatMul", ["x", "mw"], ["m"]), helper.make_node("Add", ["m", "mb"], ["a"]),
         helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
        [vi("x", [2, 3, 4])], [vi("y", None)], [init("mw", w(4, 5)), init("mb", w(5))])
    s["resize"] = model(
        [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest"),
         helper.make_node("Resize", ["x", "", "", "sz"], ["z"], mode="linear",
                          coordinate_transformation_mode="align_corners")],
        [vi("x", [1, 2, 3, 4])], [vi("y", None), vi("z", None)],
        [init("sc", np.array([1, 1, 2, 2], np.float32)), init("sz", np.array([1, 2, 5, 7], np.int64))])
    s["slice_steps"] = model(
        [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
        [vi("x", [3, 8, 5])], [vi("y", None)],
        [init("st", np.array([1, -1], np.int64)), init("en", np.array([7, -6], np.int64)),
         init("ax", np.array([1, 2], np.int64)), init("sp", np.array([2, -2], np.int64))])
    s["reshape_transpose_flatten"] = model(
        [helper.make_node("Reshape", ["x", "shp"], ["r"]), helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
         helper.make_node("Flatten", ["t"], ["y"], axis=1)],
        [vi("x", [2, 3, 4])], [vi("y", None)], [init("shp", np.array([2, -1, 6], np.int64))])
    s["concat_split"] = model(
        [helper.make_node("Concat", ["a", "b", "c"], ["cat"], axis=1),
         helper.make_node("Split", ["cat", "sizes"], ["y0", "y1"], axis=1)],
        [vi("a", [2, 1, 3]), vi("b", [2, 2, 3]), vi("c", [2, 3, 3])], [vi("y0", None), vi("y1", None)],
        [init("sizes", np.array([4, 2], np.int64))])
    s["dynamic_shape_chain"] = model(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
         helper.make_node("Concat", ["n", "m1"], ["shp"], axis=0), helper.make_node("Reshape", ["x", "shp"], ["y"])],
        [vi("x", ["N", 3, 4])], [vi("y", None)],
        [init("i0", np.array([0], np.int64)), init("m1", np.array([-1], np.int64))])
    s["pad_reduce_clip"] = model(
        [helper.make_node("Pad", ["x", "pads", "cv"], ["p"], mode="constant"),
         helper.make_node("ReduceMean", ["p"], ["r"], axes=[2, 3], keepdims=1),
         helper.make_node("Clip", ["r", "lo", "hi"], ["y"])],
        [vi("x", [1, 2, 3, 3])], [vi("y", None)],
        [init("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)), init("cv", np.array(0.5, np.float32)),
         init("lo", np.array(-0.2, np.float32)), init("hi", np.array(0.3, np.float32))])
    s["elementwise_broadcast"] = model(
        [helper.make_node("Mul", ["x", "k"], ["m"]), helper.make_node("Sub", ["m", "x"], ["d"]),
         helper.make_node("Div", ["d", "k"], ["q"]), helper.make_node("Max", ["q", "x"], ["y"]),
         helper.make_node("LeakyRelu", ["y"], ["z"], alpha=0.1)],
        [vi("x", [2, 3, 1, 4])], [vi("z", None)], [init("k", np.abs(w(3, 1, 1)) + 1)])
    s["where_cast_compare"] = model(
        [helper.make_node("Greater", ["x", "zero"], ["g"]), helper.make_node("Where", ["g", "x", "neg"], ["y"]),
         helper.make_node("Cast", ["g"], ["gi"], to=TensorProto.INT32)],
        [vi("x", [2, 5])], [vi("y", None), vi("gi", None, TensorProto.INT32)],
        [init("zero", np.array(0, np.float32)), init("neg", np.full((2, 5), -1, np.float32))])
    s["topk_gather"] = model(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1),
         helper.make_node("Gather", ["x", "idx"], ["g"], axis=1)],
        [vi("x", [2, 6])], [vi("v", None), vi("i", None, TensorProto.INT64), vi("g", None)],
        [init("k", np.array([3], np.int64)), init("idx", np.array([[0, 5], [2, 2]], np.int64))])
    s["convtranspose_instnorm"] = model(
        [helper.make_node("ConvTranspose", ["x", "dw", "db"], ["d"], strides=[2, 2], pads=[1, 1, 1, 1],
                          output_padding=[1, 1]),
         helper.make_node("InstanceNormalization", ["d", "s", "b"], ["y"], epsilon=1e-5)],
        [vi("x", [1, 2, 3, 3])], [vi("y", None)], [init("dw", w(2, 3, 3, 3)), init("db", w(3)),
                                                   init("s", w(3)), init("b", w(3))])
    s["layernorm_gelu"] = model(
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["l"], axis=-1, epsilon=1e-5),
         helper.make_node("Erf", ["l"], ["e"]), helper.make_node("Tanh", ["e"], ["y"])],
        [vi("x", [2, 3, 4])], [vi("y", None)], [init("s", w(4)), init("b", w(4))], opset=17)
    s["avgpool_global_squeeze"] = model(
        [helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
         helper.make_node("GlobalAveragePool", ["a"], ["g"]), helper.make_node("Squeeze", ["g", "ax"], ["y"])],
        [vi("x", [1, 3, 5, 5])], [vi("y", None)], [init("ax", np.array([2, 3], np.int64))])
    s["unsqueeze_expand_prelu"] = model(
        [helper.make_node("Unsqueeze", ["x", "ax"], ["u"]), helper.make_node("Expand", ["u", "shp"], ["e"]),
         helper.make_node("PRelu", ["e", "slope"], ["y"])],
        [vi("x", [3, 4])], [vi("y", None)],
        [init("ax", np.array([0], np.int64)), init("shp", np.array([2, 3, 4], np.int64)), init("slope", w(4))])
    s["dynamic_conv"] = model(
        [helper.make_node("Conv", ["x", "cw"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("GlobalMaxPool", ["c"], ["y"])],
        [vi("x", ["N", 2, "H", "W"])], [vi("y", None)], [init("cw", w(2, 2, 3, 3))])
    s["constant_folding"] = model(
        [helper.make_node("Constant", [], ["c"], value=init("cv", w(2, 3))),
         helper.make_node("Range", ["s", "l", "d"], ["r"]), helper.make_node("Cast", ["r"], ["rf"], to=F),
         helper.make_node("Add", ["x", "c"], ["a"]), helper.make_node("Mul", ["a", "rf"], ["y"])],
        [vi("x", [2, 3])], [vi("y", None)],
        [init("s", np.array(0, np.int64)), init("l", np.array(3, np.int64)), init("d", np.array(1, np.int64))])
    s["plugin_node"] = model(
        [helper.make_node("LReLU_TRT", ["x"], ["y"], domain="", negSlope=0.2)],
        [vi("x", [1, 2, 3])], [vi("y", None)])
    return s


def parse(m):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.ERROR))
    ok = parser.parse(m.SerializeToString())
    errs = [str(parser.get_error(i)) for i in range(parser.num_errors)]
    return builder, net, ok, errs


def build_plan(builder, net, level=None, profiles=()):
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0  # deterministic kernel choice
    if level is not None:
        config.builder_optimization_level = level
    for prof in profiles:
        p = builder.create_optimization_profile()
        for name, (mn, op, mx) in prof.items():
            if name.startswith("="):  # "=name": a shape-tensor input's value ranges
                p.set_shape_input(name[1:], mn, op, mx)
            else:
                p.set_shape(name, mn, op, mx)
        config.add_optimization_profile(p)
    plan = builder.build_serialized_network(net, config)
    if plan is None:
        raise RuntimeError("build failed")
    return bytes(plan)


def dynamic_profile(net, big=3):
    """min 1 / opt 2 / max `big` for every -1 dimension of every input."""
    prof = {}
    for i in range(net.num_inputs):
        t = net.get_input(i)
        shp = tuple(t.shape)
        if -1 in shp:
            prof[t.name] = tuple(tuple(v if d == -1 else d for d in shp) for v in (1, 2, big))
    return prof


# ---------------------------------------------------------------------------------------------------------------
# plans from the network API
# ---------------------------------------------------------------------------------------------------------------

def net_concat_many(net):
    ins = [net.add_input("x%d" % i, trt.float32, (1, 1 + i % 2, 2)) for i in range(40)]
    cat = net.add_concatenation(ins)
    cat.axis = 1
    net.mark_output(cat.get_output(0))


def net_two_profiles(net):
    x = net.add_input("x", trt.float32, (-1, 2, -1))
    u = net.add_unary(x, trt.UnaryOperation.ABS)
    r = net.add_reduce(u.get_output(0), trt.ReduceOperation.SUM, 1 << 2, True)
    net.mark_output(r.get_output(0))
    return [{"x": ((1, 2, 1), (2, 2, 3), (3, 2, 5))}, {"x": ((4, 2, 1), (5, 2, 2), (6, 2, 8))}]


def net_misc(net):
    x = net.add_input("x", trt.float32, (1, 4, 3, 3))
    lrn = net.add_lrn(x, 3, 1e-3, 0.75, 1.0)
    pad = net.add_padding_nd(lrn.get_output(0), (1, 0), (0, 1))
    ident = net.add_identity(pad.get_output(0))
    sl = net.add_slice(ident.get_output(0), (0, 1, 0, 0), (1, 2, 3, 3), (1, 1, 1, 1))
    sh = net.add_shuffle(sl.get_output(0))
    sh.first_transpose = (0, 2, 3, 1)
    sh.reshape_dims = (1, 9, 2)
    tk = net.add_topk(sh.get_output(0), trt.TopKOperation.MAX, 2, 1 << 1)
    net.mark_output(tk.get_output(0))
    net.mark_output(tk.get_output(1))


def net_select_cast_norm(net):
    x = net.add_input("x", trt.float32, (2, 3, 4))
    c = net.add_input("c", trt.bool, (2, 3, 4))
    k = net.add_constant((1, 1, 1), np.array([2.0], np.float32))
    sel = net.add_select(c, x, k.get_output(0))
    s = net.add_constant((1, 1, 4), w(1, 1, 4))
    b = net.add_constant((1, 1, 4), w(1, 1, 4))
    nrm = net.add_normalization(sel.get_output(0), s.get_output(0), b.get_output(0), 1 << 2)
    ci = net.add_cast(nrm.get_output(0), trt.int32)
    net.mark_output(nrm.get_output(0))
    net.mark_output(ci.get_output(0))


def net_int_gather(net):
    x = net.add_input("x", trt.int32, (3, 4))
    i = net.add_input("i", trt.int32, (2,))
    g = net.add_gather(x, i, 1)
    e = net.add_elementwise(g.get_output(0), g.get_output(0), trt.ElementWiseOperation.PROD)
    net.mark_output(e.get_output(0))


def net_deconv_scale_prelu(net):
    x = net.add_input("x", trt.float32, (1, 2, 3, 3))
    d = net.add_deconvolution_nd(x, 2, (2, 2), w(2, 2, 2, 2), w(2))
    d.stride_nd = (2, 2)
    sc = net.add_scale(d.get_output(0), trt.ScaleMode.CHANNEL, w(2), np.abs(w(2)) + 0.5, None)
    sl = net.add_constant((1, 2, 1, 1), w(1, 2, 1, 1))
    pr = net.add_parametric_relu(sc.get_output(0), sl.get_output(0))
    sm = net.add_softmax(pr.get_output(0))
    sm.axes = 1 << 1
    mm = net.add_matrix_multiply(sm.get_output(0), trt.MatrixOperation.NONE, sm.get_output(0),
                                 trt.MatrixOperation.TRANSPOSE)
    net.mark_output(mm.get_output(0))


def plugin(name, **fields):
    c = trt.get_plugin_registry().get_plugin_creator(name, "1", "")
    fs = []
    for k, v in fields.items():
        a = np.atleast_1d(np.asarray(v))
        ft = trt.PluginFieldType.INT32 if np.issubdtype(a.dtype, np.integer) else trt.PluginFieldType.FLOAT32
        fs.append(trt.PluginField(k, a.astype(np.int32 if ft == trt.PluginFieldType.INT32 else np.float32), ft))
    return c.create_plugin(name="p_" + name, field_collection=trt.PluginFieldCollection(fs))


def net_plugins(net):
    x = net.add_input("x", trt.float32, (1, 4, 4, 4))
    a = net.add_plugin_v2([x], plugin("LReLU_TRT", negSlope=0.1))
    b = net.add_plugin_v2([a.get_output(0)], plugin("Clip_TRT", clipMin=-0.5, clipMax=0.5))
    c = net.add_plugin_v2([b.get_output(0)], plugin("Reorg_TRT", stride=2))
    d = net.add_plugin_v2([c.get_output(0)], plugin("ResizeNearest_TRT", scale=2.0))
    net.mark_output(d.get_output(0))


def implicit_plan():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network()  # TensorRT 7 default: implicit batch
    x = net.add_input("x", trt.float32, (2, 4, 4))
    conv = net.add_convolution(x, 3, (3, 3), w(3, 2, 3, 3), w(3))
    pool = net.add_pooling(conv.get_output(0), trt.PoolingType.AVERAGE, (2, 2))
    fc = net.add_fully_connected(pool.get_output(0), 3, w(3, 3), w(3))
    act = net.add_activation(fc.get_output(0), trt.ActivationType.TANH)
    net.mark_output(act.get_output(0))
    builder.max_batch_size = 3
    engine = builder.build_cuda_engine(net)
    return bytes(engine.serialize())


def i32(net, values):
    v = np.asarray(values, np.int32)
    return net.add_constant((v.size,), v).get_output(0)


def net_shape_tensors(net):
    """Shape tensors (plan format 4): a dynamic reshape from add_shape + gather + elementwise + concatenation, a
    slice whose size and stride are shape tensors, a resize to a shape tensor, and a shape-tensor input."""
    x = net.add_input("x", trt.float32, (-1, 2, 3))
    s = net.add_input("s", trt.int32, (2,))
    shp = net.add_shape(x).get_output(0)
    n = net.add_gather(shp, i32(net, [0]), 0).get_output(0)
    n6 = net.add_elementwise(n, i32(net, [6]), trt.ElementWiseOperation.PROD).get_output(0)
    cat = net.add_concatenation([n6, i32(net, [1])])
    cat.axis = 0
    r = net.add_shuffle(x)
    r.set_input(1, cat.get_output(0))
    net.mark_output(r.get_output(0))
    sl = net.add_slice(x, (0, 0, 0), (1, 1, 1), (1, 1, 1))
    sl.set_input(2, net.add_elementwise(shp, i32(net, [1, 1, 2]), trt.ElementWiseOperation.MIN).get_output(0))
    sl.set_input(3, i32(net, [1, 1, 2]))
    net.mark_output(sl.get_output(0))
    rs = net.add_resize(x)
    rs.set_input(1, net.add_elementwise(shp, i32(net, [1, 2, 1]), trt.ElementWiseOperation.PROD).get_output(0))
    net.mark_output(rs.get_output(0))
    v = net.add_shuffle(x)
    v.set_input(1, s)
    net.mark_output(v.get_output(0))
    net.mark_output(shp)
    return [{"x": ((1, 2, 3), (2, 2, 3), (3, 2, 3)), "=s": ((1, 1), (2, 6), (3, 18))}]


def net_trt10_layers(net):
    """Issue #12's layers: scatter (ELEMENT with a reduction, ND), one-hot, cumulative, reverse sequence,
    squeeze / unsqueeze, grid sample, einsum, assertion."""
    def ci(v):
        a = np.asarray(v, np.int32)
        return net.add_constant(a.shape, a).get_output(0)
    x = net.add_input("x", trt.float32, (2, 3, 4))
    i = net.add_input("i", trt.int32, (2, 3, 2))
    u = net.add_input("u", trt.float32, (2, 3, 2))
    se = net.add_scatter(x, i, u, trt.ScatterMode.ELEMENT)
    se.axis = 2
    se.reduction = trt.ScatterReduction.SUM
    sn = net.add_scatter(se.get_output(0), ci([[1, 2], [0, 0]]), net.add_constant((2, 4), w(2, 4)).get_output(0),
                         trt.ScatterMode.ND)
    cu = net.add_cumulative(sn.get_output(0), ci(-1), trt.CumulativeOperation.SUM, True, True)
    rs = net.add_reverse_sequence(cu.get_output(0), ci([2, 1, 2]))  # lengths <= the sequence axis (0: 2)
    un = net.add_unsqueeze(rs.get_output(0), ci([0, -1]))
    sq = net.add_squeeze(un.get_output(0), ci([0]))
    oh = net.add_one_hot(ci([[0, 2], [1, -1]]), net.add_constant((2,), w(2)).get_output(0), ci(3), 1)
    g = net.add_input("g", trt.float32, (2, 3, 2, 2))
    gs = net.add_grid_sample(sq.get_output(0), g)
    gs.interpolation_mode = trt.InterpolationMode.CUBIC
    gs.sample_mode = trt.SampleMode.REFLECT
    pos = net.add_elementwise(x, x, trt.ElementWiseOperation.EQUAL)
    net.add_assertion(pos.get_output(0), "x is not NaN")
    es = net.add_einsum([gs.get_output(0), gs.get_output(0)], "nchw,nchw->nh")
    net.mark_output(gs.get_output(0))
    net.mark_output(oh.get_output(0))
    net.mark_output(es.get_output(0))


def net_control_flow(net):
    """Control flow (plan format 5: CONTROL_FLOW steps with nested plans): a loop with a constant COUNT, a
    WHILE condition, an iterator read backwards, a recurrence updated through a conditional nested in the body,
    and LAST_VALUE / CONCATENATE / REVERSE outputs; a conditional at the top level."""
    def c(v, dt=np.float32):
        a = np.array(v, dt)
        return net.add_constant(a.shape, a).get_output(0)
    x = net.add_input("x", trt.float32, (4, 3))
    loop = net.add_loop()
    loop.add_trip_limit(c(4, np.int32), trt.TripLimit.COUNT)
    acc = loop.add_recurrence(c(np.zeros(3)))
    row = loop.add_iterator(x, 0, True).get_output(0)
    s = net.add_reduce(acc.get_output(0), trt.ReduceOperation.SUM, 1, False).get_output(0)
    loop.add_trip_limit(net.add_elementwise(s, c(100.0), trt.ElementWiseOperation.LESS).get_output(0),
                        trt.TripLimit.WHILE)
    rs = net.add_reduce(row, trt.ReduceOperation.SUM, 1, False).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(net.add_elementwise(rs, c(0.0), trt.ElementWiseOperation.GREATER).get_output(0))
    a = cond.add_input(acc.get_output(0)).get_output(0)
    r = cond.add_input(row).get_output(0)
    nxt = cond.add_output(net.add_elementwise(a, r, trt.ElementWiseOperation.SUM).get_output(0),
                          net.add_elementwise(a, r, trt.ElementWiseOperation.SUB).get_output(0)).get_output(0)
    acc.set_input(1, nxt)
    net.mark_output(loop.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0))
    net.mark_output(loop.add_loop_output(nxt, trt.LoopOutput.CONCATENATE, 1).get_output(0))
    net.mark_output(loop.add_loop_output(row, trt.LoopOutput.REVERSE, 0).get_output(0))
    b = net.add_input("b", trt.bool, ())
    top = net.add_if_conditional()
    top.set_condition(b)
    xi = top.add_input(x).get_output(0)
    net.mark_output(top.add_output(net.add_unary(xi, trt.UnaryOperation.EXP).get_output(0), xi).get_output(0))


def net_runtime_operands(net):
    """Run-time shape operands (issue #12): reduce / squeeze / unsqueeze axes, TopK K and a fill's shape from
    shape-tensor inputs, a fill's alpha / beta and a slice's FILL value (input 4) as execution tensors."""
    x = net.add_input("x", trt.float32, (2, 3, 4))
    ax = net.add_input("ax", trt.int32, (2,))
    k = net.add_input("k", trt.int32, (1,))
    n = net.add_input("n", trt.int32, (1,))
    v = net.add_input("v", trt.float32, ())
    red = net.add_reduce(x, trt.ReduceOperation.MAX, 1, False)
    red.set_input(1, ax)
    net.mark_output(red.get_output(0))
    tk = net.add_topk(x, trt.TopKOperation.MIN, 1, 1 << 2)
    tk.set_input(1, k)
    net.mark_output(tk.get_output(1))
    un = net.add_unsqueeze(x, ax)
    sq = net.add_squeeze(un.get_output(0), ax)
    net.mark_output(sq.get_output(0))
    f = net.add_fill((0,), trt.FillOperation.LINSPACE, trt.float32)
    f.set_input(0, n)
    f.set_input(1, v)
    f.beta = 0.5
    net.mark_output(f.get_output(0))
    r = net.add_fill((3, 2), trt.FillOperation.RANDOM_NORMAL, trt.float32)
    r.seed = 7
    net.mark_output(r.get_output(0))
    sl = net.add_slice(x, (-1, 0, 0), (4, 3, 4), (1, 1, 1))
    sl.mode = trt.SampleMode.FILL
    sl.set_input(4, v)
    net.mark_output(sl.get_output(0))
    return [{"=ax": ((0, 1), (0, 1), (1, 2)), "=k": ((1,), (2,), (4,)), "=n": ((0,), (3,), (9,))}]


NETS = {"concat40": net_concat_many, "two_profiles": net_two_profiles, "misc": net_misc,
        "select_cast_norm": net_select_cast_norm, "int_gather": net_int_gather,
        "deconv_scale_prelu": net_deconv_scale_prelu, "plugins": net_plugins, "shape_tensors": net_shape_tensors,
        "trt10_layers": net_trt10_layers, "control_flow": net_control_flow,
        "runtime_operands": net_runtime_operands}


def main():
    trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")
    out_onnx = os.path.join(HERE, "corpus", "onnx")
    out_plan = os.path.join(HERE, "corpus", "plan")
    os.makedirs(out_onnx, exist_ok=True)
    os.makedirs(out_plan, exist_ok=True)
    plans = {}
    for name, m in onnx_seeds().items():
        data = m.SerializeToString()
        with open(os.path.join(out_onnx, name + ".onnx"), "wb") as f:
            f.write(data)
        builder, net, ok, errs = parse(m)
        if not ok:
            print("onnx seed %s does not parse (kept as an ONNX seed): %s" % (name, errs[:1]))
            continue
        prof = dynamic_profile(net)
        for level in (None, 0):
            try:
                plans["onnx_%s%s" % (name, "_l0" if level == 0 else "")] = build_plan(builder, net, level,
                                                                                    [prof] if prof else [])
            except Exception as e:  # a seed that does not build is reported, not fatal
                print("onnx seed %s does not build: %s" % (name, e))
    for name, define in NETS.items():
        builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
        net = builder.create_network(EXPLICIT)
        profiles = define(net) or []
        plans[name] = build_plan(builder, net, None, profiles)
        if name in ("misc", "plugins", "shape_tensors", "control_flow"):
            plans[name + "_l0"] = build_plan(builder, net, 0, profiles)
    plans["implicit_batch"] = implicit_plan()
    seen = set()
    for name, data in sorted(plans.items()):
        if data in seen:  # a level-0 build identical to the default one adds nothing
            continue
        seen.add(data)
        with open(os.path.join(out_plan, name + ".plan"), "wb") as f:
            f.write(data)
    sizes = [len(d) for d in seen]
    print("%d ONNX seeds, %d plan seeds (%d..%d bytes)" % (len(onnx_seeds()), len(seen), min(sizes), max(sizes)))


if __name__ == "__main__":
    main()
