"""IExprBuilder.declare_size_tensor (issue #12): class-based IPluginV3 plugins whose output extents are known only
once they have run (TensorRT's NonZero plugin sample, numpy in place of CUDA).  The plugin writes each
data-dependent output packed at its real shape into a buffer sized by the upper bound, and the count into its 0-D
size-tensor output; the network returns the real shapes through infer(), with fixed and dynamic input shapes,
through a serialized plan and through the ONNX parser's plugin fallback.  Misuse (bad index, bounds, dtype, shape,
arithmetic on the size, IPluginV2DynamicExt, a count beyond the bound) is a clear exception.  References: numpy."""
import numpy as np
import pytest

import trtlite as trt

LOG = trt.Logger(trt.Logger.ERROR)


def _host(addr, shape, dtype):
    import ctypes
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return np.empty(shape, dt)
    return np.frombuffer((ctypes.c_char * (n * dt.itemsize)).from_address(addr), dt).reshape(shape)


class NonZeroV3(trt.IPluginV3, trt.IPluginV3OneCore, trt.IPluginV3OneBuild, trt.IPluginV3OneRuntime):
    """NonZero of a 2-D input: output 0 the [K, 2] (row_order) or [2, K] indices, output 1 the count K (a size
    tensor of dtype `count_dtype`).  `bad` switches on one kind of misuse."""

    def __init__(self, row_order=True, count_dtype=trt.int32, bad=None):
        trt.IPluginV3.__init__(self)
        self.num_outputs = 2
        self.plugin_namespace = ""
        self.plugin_name = "NonZeroV3_TEST"
        self.plugin_version = "1"
        self.row_order = bool(row_order)
        self.count_dtype = count_dtype
        self.bad = bad or ""
        self.seen = []

    def get_capability_interface(self, type):
        return self

    def get_output_data_types(self, input_types):
        return [trt.int32, trt.float32 if self.bad == "float_count" else self.count_dtype]

    def get_output_shapes(self, inputs, shape_inputs, eb):
        out = [trt.DimsExprs(2), trt.DimsExprs(0)]
        upper = eb.operation(trt.DimensionOperation.PROD, inputs[0][0], inputs[0][1])
        opt = eb.operation(trt.DimensionOperation.FLOOR_DIV, upper, eb.constant(2))
        k = eb.declare_size_tensor(1, opt, upper)
        assert k.is_size_tensor() and not upper.is_size_tensor()
        if self.bad == "index":
            eb.declare_size_tensor(2, opt, upper)
        if self.bad == "opt_above_upper":
            eb.declare_size_tensor(1, eb.constant(10 ** 6), eb.constant(3))
        if self.bad == "arith":
            k = eb.operation(trt.DimensionOperation.PROD, k, eb.constant(2))
        if self.bad == "count_not_scalar":
            out[1] = trt.DimsExprs([eb.constant(1)])
        out[0][0], out[0][1] = (k, eb.constant(2)) if self.row_order else (eb.constant(2), k)
        return out

    def supports_format_combination(self, pos, in_out, num_inputs):
        want = {0: in_out[0].desc.type in (trt.float32, trt.int32), 1: in_out[1].desc.type == trt.int32,
                2: in_out[2].desc.type == self.count_dtype}
        return in_out[pos].desc.format == trt.TensorFormat.LINEAR and want[pos]

    def on_shape_change(self, inp, out):
        self.seen.append((tuple(inp[0].dims), tuple(out[0].dims)))

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        r, c = input_desc[0].dims
        x = _host(inputs[0], (r, c), trt.nptype(input_desc[0].type))
        idx = np.argwhere(x != 0).astype(np.int32)  # [K, 2]
        if not self.row_order:
            idx = np.ascontiguousarray(idx.T)  # [2, K]
        # as the sample does: the buffer holds up to 2 * R * C values; the first idx.size hold the result
        _host(outputs[0], (2 * r * c,), np.int32)[:idx.size] = idx.reshape(-1)
        count = idx.size // 2 + (r * c + 1 if self.bad == "count_above_upper" else 0)
        _host(outputs[1], (), trt.nptype(output_desc[1].type))[...] = count

    def attach_to_context(self, context):
        return self.clone()

    def get_fields_to_serialize(self):
        return trt.PluginFieldCollection([
            trt.PluginField("row_order", np.array([int(self.row_order)], np.int32), trt.PluginFieldType.INT32),
            trt.PluginField("count64", np.array([int(self.count_dtype == trt.int64)], np.int32),
                            trt.PluginFieldType.INT32)])

    def clone(self):
        c = NonZeroV3(self.row_order, self.count_dtype, self.bad)
        c.seen = self.seen
        return c


class NonZeroV3Creator(trt.IPluginCreatorV3One):
    def __init__(self):
        trt.IPluginCreatorV3One.__init__(self)
        self.name = "NonZeroV3_TEST"
        self.plugin_namespace = ""
        self.plugin_version = "1"
        self.field_names = trt.PluginFieldCollection([
            trt.PluginField("row_order", None, trt.PluginFieldType.INT32),
            trt.PluginField("count64", None, trt.PluginFieldType.INT32)])
        self.fields_seen = []

    def create_plugin(self, name, fc, phase):
        f = {x.name: int(np.asarray(x.data).reshape(-1)[0]) for x in fc}
        self.fields_seen.append(sorted(f))
        return NonZeroV3(f.get("row_order", 1), trt.int64 if f.get("count64", 0) else trt.int32)


@pytest.fixture(scope="module")
def creator():
    reg = trt.get_plugin_registry()
    c = NonZeroV3Creator()
    assert reg.register_creator(c, "")
    yield c
    reg.deregister_creator(c)


def _network(plugin, shape=(5, 7), dtype=trt.float32, mark_count=True):
    builder = trt.Builder(LOG)
    net = builder.create_network(0)
    x = net.add_input("x", dtype, shape)
    layer = net.add_plugin_v3([x], [], plugin)
    layer.name = "nz"
    layer.get_output(0).name = "idx"
    net.mark_output(layer.get_output(0))
    if mark_count:
        layer.get_output(1).name = "count"
        net.mark_output(layer.get_output(1))
    return builder, net, layer


def _sparse(rng, shape, density, dtype=np.float32):
    x = rng.standard_normal(shape).astype(dtype) if dtype == np.float32 else \
        rng.integers(1, 9, shape).astype(dtype)
    x[rng.random(shape) >= density] = 0
    return x


def _ref(x, row_order):
    idx = np.argwhere(x != 0).astype(np.int32)
    return idx if row_order else idx.T


@pytest.mark.parametrize("row_order", [True, False])
@pytest.mark.parametrize("count_dtype", [trt.int32, trt.int64])
def test_non_zero_plugin_through_a_plan(creator, row_order, count_dtype):
    """The data-dependent dim first ([K, 2]) and last ([2, K], where the packed layout differs from the
    upper-bound one), count as INT32 and INT64; the plan recreates the plugin through the creator."""
    builder, net, layer = _network(NonZeroV3(row_order, count_dtype))
    assert layer.num_outputs == 2 and layer.plugin.plugin_name == "NonZeroV3_TEST"
    assert net.get_output(0).shape == ((-1, 2) if row_order else (2, -1))
    assert net.get_output(1).shape == () and net.get_output(1).dtype == count_dtype
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    creator.fields_seen.clear()
    engine = trt.Runtime(LOG).deserialize_cuda_engine(plan)
    assert creator.fields_seen == [["count64", "row_order"]]  # trtlite's own record is not passed on
    ctx = engine.create_execution_context()
    rng = np.random.default_rng(11)
    for density in (0.0, 0.3, 1.0, 0.6):  # none, some, all, some: the extent changes from run to run
        x = _sparse(rng, (5, 7), density)
        out = ctx.infer({"x": x})
        ref = _ref(x, row_order)
        assert out["idx"].shape == ref.shape
        np.testing.assert_array_equal(out["idx"], ref)
        assert out["count"].dtype == trt.nptype(count_dtype) and int(out["count"]) == np.count_nonzero(x)


def test_non_zero_plugin_dynamic_shapes(creator):
    builder, net, _ = _network(NonZeroV3(row_order=False), shape=(-1, -1), dtype=trt.int32, mark_count=False)
    cfg = builder.create_builder_config()
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 1), (4, 6), (9, 13))
    cfg.add_optimization_profile(prof)
    engine = builder.build_engine(net, cfg)
    ctx = engine.create_execution_context()
    rng = np.random.default_rng(3)
    for shape in [(4, 6), (9, 13), (1, 1), (3, 11)]:
        x = _sparse(rng, shape, 0.4, np.int32)
        out = ctx.infer({"x": x})["idx"]
        np.testing.assert_array_equal(out, _ref(x, False))


def test_non_zero_plugin_as_an_onnx_node(creator, tmp_path):
    """The sample's ONNX route: a node named like the registered creator (the parser's plugin fallback), whose
    second output (the count) is not a graph output."""
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("NonZeroV3_TEST", ["X"], ["Y", "Y_num"], name="nz", row_order=0)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [6, 4])],
                          [helper.make_tensor_value_info("Y", TensorProto.INT32, None)])
    path = tmp_path / "nz.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), str(path))
    builder = trt.Builder(LOG)
    net = builder.create_network(0)
    parser = trt.OnnxParser(net, LOG)
    assert parser.parse_from_file(str(path)), [parser.get_error(i).desc() for i in range(parser.num_errors)]
    engine = builder.build_engine(net, builder.create_builder_config())
    ctx = engine.create_execution_context()
    x = _sparse(np.random.default_rng(8), (6, 4), 0.5)
    np.testing.assert_array_equal(ctx.infer({"X": x})["Y"], _ref(x, False))


@pytest.mark.parametrize("bad,match", [
    ("index", r"declare_size_tensor\(\): output_index 2 is not an output of the plugin \(it has 2 outputs\)"),
    ("opt_above_upper", r"declare_size_tensor\(1\): opt is 1000000; it must lie in \[0, upper = 3\]"),
    ("arith", r"DimensionOperation.PROD on a size tensor's expression"),
    ("count_not_scalar", r"output 1 is a size tensor .* its shape must be 0-D \(trt.DimsExprs\(0\)\), not 1-D"),
    ("float_count", r"output 1 is a size tensor, so get_output_data_types\(\) must give it INT32 or INT64, not "
                    r"DataType.FLOAT"),
])
def test_build_time_misuse(bad, match):
    with pytest.raises(trt.PluginError, match=r"NonZeroV3_TEST") as e:
        _network(NonZeroV3(bad=bad))
    assert e.match(match)


def test_count_beyond_the_upper_bound_is_an_error():
    builder, net, _ = _network(NonZeroV3(bad="count_above_upper"))
    ctx = builder.build_engine(net, builder.create_builder_config()).create_execution_context()
    with pytest.raises(trt.Error, match=r"nz.*NonZeroV3_TEST.*size tensor \(output 1\) holds 71, outside \[0, 35\]"):
        ctx.infer({"x": np.ones((5, 7), np.float32)})


def test_size_tensor_outside_add_plugin_v3_and_in_v2dynamicext_are_refused():
    builder = trt.Builder(LOG)
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (3, 4))
    with pytest.raises(trt.PluginError, match=r"declares size tensors \(outputs \[1\]\), which need the layer added "
                                              r"with network.add_plugin_v3"):
        net.add_plugin_v2([x], NonZeroV3())

    class V2(trt.IPluginV2DynamicExt):
        def __init__(self):
            trt.IPluginV2DynamicExt.__init__(self)
            self.num_outputs = 2
            self.plugin_type = "SizeV2Dyn_TEST"

        def get_output_dimensions(self, index, inputs, eb):
            k = eb.declare_size_tensor(1, eb.constant(1), eb.constant(12))
            return trt.DimsExprs([k]) if index == 0 else trt.DimsExprs(0)

    with pytest.raises(trt.PluginError, match=r"SizeV2Dyn_TEST.*size tensors \(data-dependent output shapes\) need "
                                              r"an IPluginV3 plugin"):
        net.add_plugin_v2([x], V2())


def test_expr_builder_declare_size_tensor_arguments():
    eb = trt.IExprBuilder()
    k = eb.declare_size_tensor(0, eb.constant(2), eb.constant(8))
    assert k.is_size_tensor() and k.get_constant_value() == -1 and not k.is_constant()
    assert eb.declare_size_tensor(0, 2, 8) is k  # declared again with the same bounds: the same expression
    with pytest.raises(ValueError, match=r"output 0 is already a size tensor with opt 2 and upper 8"):
        eb.declare_size_tensor(0, 1, 8)
    with pytest.raises(ValueError, match=r"upper must not depend on a size tensor"):
        eb.declare_size_tensor(1, 1, k)
    with pytest.raises(TypeError, match=r"output_index must be an int, not str"):
        eb.declare_size_tensor("1", 1, 2)
    with pytest.raises(ValueError, match=r"a dimension cannot be negative"):
        eb.declare_size_tensor(1, 0, -1)
    with pytest.raises(ValueError, match=r"on a size tensor's expression"):
        k + 1
