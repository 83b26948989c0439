"""TensorRT's Python plugin interfaces beside IPluginV2: IPluginV2DynamicExt, IPluginV3 (IPluginCreatorV3One,
add_plugin_v3) and trtlite.plugin (tensorrt.plugin's decorators); NVIDIA's circular-padding sample ported to host
memory (examples/plugins/circ_pad_plugin.py) checked against np.pad(mode="wrap")."""
import os
import subprocess
import sys
import textwrap
from typing import Tuple

import numpy as np
import numpy.typing as npt
import pytest

import trtlite as trt
import trtlite.plugin as trtp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "plugins")
sys.path.insert(0, EXAMPLES)
import circ_pad_plugin as cpp  # noqa: E402

LOG = trt.Logger(trt.Logger.ERROR)


def wrap_pad(x, pads):
    width = [(0, 0)] * x.ndim
    for i in range(len(pads) // 2):
        width[x.ndim - i - 1] = (pads[2 * i], pads[2 * i + 1])
    return np.pad(x, width, mode="wrap")


# ---- the sample port ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["v2dynext", "v3", "trtp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_circ_pad_sample_matches_numpy_wrap(kind, dtype):
    x = np.random.default_rng(3).normal(size=(2, 3, 5, 7)).astype(dtype)
    for pads in [(1, 1, 1, 1), (2, 0, 1, 3)]:
        y = cpp.build_and_run(kind, x, pads)
        want = np.pad(x, [[0, 0], [0, 0], [pads[2], pads[3]], [pads[0], pads[1]]], "wrap")
        assert y.dtype == dtype and y.shape == want.shape
        np.testing.assert_array_equal(y, want)


def test_circ_pad_sample_script_runs():
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "circ_pad_plugin.py")], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("correct!") == 3 and "incorrect" not in r.stdout


@pytest.mark.parametrize("kind", ["v2dynext", "v3", "trtp"])
def test_plans_with_python_plugins_reload_in_a_new_process(tmp_path, kind):
    """Serialization: the plan stores creator name/version/namespace and the plugin's own data (V2DynamicExt:
    serialize() bytes; V3 and trtp: get_fields_to_serialize()); a new process recreates it through the creator."""
    cpp.registered()
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("X", trt.float32, (1, 2, 4, 3))
    fc = trt.PluginFieldCollection([trt.PluginField("pads", np.array([0, 2, 1, 1], np.int32),
                                                    trt.PluginFieldType.INT32)])
    reg = trt.get_plugin_registry()
    if kind == "v2dynext":
        layer = net.add_plugin_v2([x], reg.get_plugin_creator("CircPadPlugin", "1", "").create_plugin("p", fc))
    elif kind == "v3":
        layer = net.add_plugin_v3([x], [], cpp.CircPadPluginV3Creator().create_plugin("p", fc, trt.TensorRTPhase.BUILD))
    else:
        layer = net.add_plugin(trtp.op.sample.circ_pad_plugin(x, pads=np.array([0, 2, 1, 1], np.int32)))
    layer.get_output(0).name = "Y"
    net.mark_output(layer.get_output(0))
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    (tmp_path / "p.plan").write_bytes(bytes(plan))
    xv = np.arange(24, dtype=np.float32).reshape(1, 2, 4, 3)
    np.save(tmp_path / "x.npy", xv)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {ROOT!r}); sys.path.insert(0, {EXAMPLES!r})
        import trtlite as trt
        runtime = trt.Runtime(trt.Logger(trt.Logger.ERROR))
        try:
            runtime.deserialize_cuda_engine(open({str(tmp_path / 'p.plan')!r}, "rb").read())
            print("LOADED-WITHOUT-CREATOR")
        except trt.PluginError as e:
            print("MISSING:", e)
        import circ_pad_plugin
        circ_pad_plugin.registered()
        engine = runtime.deserialize_cuda_engine(open({str(tmp_path / 'p.plan')!r}, "rb").read())
        out = engine.create_execution_context().infer({{"X": np.load({str(tmp_path / 'x.npy')!r})}})
        np.save({str(tmp_path / 'y.npy')!r}, out["Y"])
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "MISSING:" in r.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), wrap_pad(xv, (0, 2, 1, 1)))


# ---- dimension expressions ------------------------------------------------------------------------------------------

def test_expr_builder_operations_match_python():
    eb = trt.IExprBuilder()
    ops = {trt.DimensionOperation.SUM: lambda a, b: a + b, trt.DimensionOperation.PROD: lambda a, b: a * b,
           trt.DimensionOperation.MAX: max, trt.DimensionOperation.MIN: min,
           trt.DimensionOperation.SUB: lambda a, b: a - b, trt.DimensionOperation.EQUAL: lambda a, b: int(a == b),
           trt.DimensionOperation.LESS: lambda a, b: int(a < b),
           trt.DimensionOperation.FLOOR_DIV: lambda a, b: a // b,
           trt.DimensionOperation.CEIL_DIV: lambda a, b: -(-a // b)}
    assert len(ops) == len(trt.DimensionOperation)
    for op, f in ops.items():
        for a, b in [(7, 3), (3, 3), (0, 5), (12, 4)]:
            if op == trt.DimensionOperation.SUB and a < b:
                continue
            e = eb.operation(op, eb.constant(a), eb.constant(b))
            assert e.is_constant() and e.get_constant_value() == f(a, b), (op, a, b)
    unknown = trt.DimsExprs(2)[0]
    assert not unknown.is_constant() and unknown.get_constant_value() == -1
    assert not eb.operation(trt.DimensionOperation.SUM, unknown, eb.constant(1)).is_constant()
    with pytest.raises(ValueError, match="negative"):
        eb.operation(trt.DimensionOperation.SUB, eb.constant(1), eb.constant(2))
    with pytest.raises(ZeroDivisionError):
        eb.operation(trt.DimensionOperation.FLOOR_DIV, eb.constant(1), eb.constant(0))
    with pytest.raises(TypeError, match="IDimensionExpr"):
        eb.operation(trt.DimensionOperation.SUM, "3", eb.constant(2))
    d = trt.DimsExprs([eb.constant(2), 5])
    d[1] = eb.constant(4)
    assert [x.get_constant_value() for x in d] == [2, 4] and d.nbDims == 2


# ---- a configurable V2DynamicExt plugin for behaviour and misuse ---------------------------------------------------

class Concat2(trt.IPluginV2DynamicExt):
    """out = concat(a, b) on the last axis, and (second output) the row sums of a via a workspace."""

    def __init__(self, **bad):
        trt.IPluginV2DynamicExt.__init__(self)
        self.num_outputs = 2
        self.plugin_type = "Concat2_TEST"
        self.plugin_version = "1"
        self.plugin_namespace = ""
        self.bad = bad
        self.configured = []
        self.ws_seen = []

    def get_output_datatype(self, index, input_types):
        if "dtype" in self.bad:
            return self.bad["dtype"]
        return input_types[0]

    def get_output_dimensions(self, output_index, inputs, eb):
        if "dims" in self.bad:
            v = self.bad["dims"]
            if isinstance(v, Exception):
                raise v
            return v
        if output_index == 0:
            out = trt.DimsExprs(inputs[0])
            out[len(out) - 1] = eb.operation(trt.DimensionOperation.SUM, inputs[0][len(out) - 1],
                                             inputs[1][len(out) - 1])
            return out
        return trt.DimsExprs(list(inputs[0])[:-1])

    def supports_format_combination(self, pos, in_out, num_inputs):
        if "formats" in self.bad:
            return self.bad["formats"]
        return in_out[pos].type == trt.DataType.FLOAT and in_out[pos].format == trt.TensorFormat.LINEAR

    def configure_plugin(self, inp, out):
        self.configured.append(tuple(tuple(d.desc.dims) for d in inp))

    def get_workspace_size(self, input_desc, output_desc):
        if "ws" in self.bad:
            return self.bad["ws"]
        return int(np.prod(input_desc[0].dims)) * 8

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        if "enqueue" in self.bad:
            v = self.bad["enqueue"]
            if isinstance(v, Exception):
                raise v
            return v
        a = cpp.host_array(inputs[0], input_desc[0].dims, np.float32)
        b = cpp.host_array(inputs[1], input_desc[1].dims, np.float32)
        cpp.host_array(outputs[0], output_desc[0].dims, np.float32)[...] = np.concatenate([a, b], axis=-1)
        ws = cpp.host_array(workspace, input_desc[0].dims, np.float64)  # the workspace is big enough for this
        ws[...] = a
        self.ws_seen.append(workspace)
        cpp.host_array(outputs[1], output_desc[1].dims, np.float32)[...] = ws.sum(axis=-1)
        return 0

    def serialize(self):
        return b""

    def clone(self):
        if "clone" in self.bad:
            return self.bad["clone"]
        c = Concat2(**self.bad)
        c.configured = self.configured  # shared: the test reads what every clone saw
        c.ws_seen = self.ws_seen
        return c


def concat_network(plugin, shape_a=(2, 3), shape_b=(2, 4), profile=None):
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    a = net.add_input("a", trt.float32, shape_a)
    b = net.add_input("b", trt.float32, shape_b)
    layer = net.add_plugin_v2([a, b], plugin)
    layer.name = "concat_layer"
    layer.get_output(0).name = "y"
    layer.get_output(1).name = "s"
    net.mark_output(layer.get_output(0))
    net.mark_output(layer.get_output(1))
    config = builder.create_builder_config()
    if profile:
        p = builder.create_optimization_profile()
        for name, (lo, opt, hi) in profile.items():
            p.set_shape(name, lo, opt, hi)
        config.add_optimization_profile(p)
    return builder, net, layer, config


def test_v2dynext_two_outputs_workspace_and_dynamic_shapes():
    plugin = Concat2()
    builder, net, layer, config = concat_network(plugin, (-1, 3), (-1, 4),
                                                 {"a": ((1, 3), (2, 3), (8, 3)), "b": ((1, 4), (2, 4), (8, 4))})
    assert layer.get_output(0).shape == (-1, 7) and layer.get_output(1).shape == (-1,)
    assert layer.plugin is plugin
    engine = builder.build_engine(net, config)
    ctx = engine.create_execution_context()
    rng = np.random.default_rng(0)
    for n in (2, 5, 5, 1):
        a = rng.standard_normal((n, 3)).astype(np.float32)
        b = rng.standard_normal((n, 4)).astype(np.float32)
        out = ctx.infer({"a": a, "b": b})
        np.testing.assert_array_equal(out["y"], np.concatenate([a, b], axis=1))
        np.testing.assert_allclose(out["s"], a.astype(np.float64).sum(axis=1), rtol=1e-6)
    # configure_plugin: once at build time (dynamic dims as -1), then on every change of the input shapes
    assert plugin.configured[0] == ((-1, 3), (-1, 4))
    assert plugin.configured[1:] == [((2, 3), (2, 4)), ((5, 3), (5, 4)), ((1, 3), (1, 4))]
    assert all(w != 0 for w in plugin.ws_seen)


@pytest.mark.parametrize("bad,match", [
    ({"dims": 5}, r"get_output_dimensions\(\) must return trt.DimsExprs, not int"),
    ({"dims": ZeroDivisionError("no dims")}, r"get_output_dimensions\(\) raised ZeroDivisionError: no dims"),
    ({"dims": [1.5, 2]}, r"dimension 0 must be an IDimensionExpr"),
    ({"dtype": "float"}, r"get_output_datatype\(\) must return a trt.DataType, not 'float'"),
    ({"formats": False}, r"supports_format_combination\(\) refuses input 0 as DataType.FLOAT"),
    ({"formats": "yes"}, r"supports_format_combination\(\) must return a bool, not str"),
])
def test_v2dynext_build_time_misuse_names_plugin_and_layer(bad, match):
    with pytest.raises(trt.PluginError, match=r"plugin layer '\(Unnamed Layer\* 0\) \[PluginV2\]'") as e:
        concat_network(Concat2(**bad))
    assert "Concat2_TEST" in str(e.value)
    assert e.match(match)


@pytest.mark.parametrize("bad,match", [
    ({"enqueue": RuntimeError("kernel exploded")}, r"enqueue\(\) raised RuntimeError: kernel exploded"),
    ({"enqueue": 3}, r"enqueue\(\) returned 3"),
    ({"enqueue": "ok"}, r"enqueue\(\) returned 'ok'"),
    ({"ws": -1}, r"get_workspace_size\(\) must return an int >= 0, not -1"),
    ({"ws": 2.5}, r"get_workspace_size\(\) must return an int >= 0, not 2.5"),
])
def test_v2dynext_run_time_misuse_names_plugin_and_layer(bad, match):
    builder, net, _, config = concat_network(Concat2(**bad))
    ctx = builder.build_engine(net, config).create_execution_context()
    with pytest.raises(trt.PluginError, match="concat_layer") as e:
        ctx.infer({"a": np.ones((2, 3), np.float32), "b": np.ones((2, 4), np.float32)})
    assert "Concat2_TEST" in str(e.value)
    assert e.match(match)
    # the context stays usable for a plugin that works
    builder, net, _, config = concat_network(Concat2())
    builder.build_engine(net, config).create_execution_context().infer(
        {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 4), np.float32)})


def test_v2dynext_bad_num_outputs_and_clone():
    p = Concat2()
    p.num_outputs = "two"
    with pytest.raises(TypeError, match="Concat2_TEST.*num_outputs must be an int"):
        concat_network(p)
    with pytest.raises(trt.PluginError, match=r"clone\(\) must return a trt.IPluginV2DynamicExt, not int"):
        concat_network(Concat2(clone=7))


# ---- V3 -------------------------------------------------------------------------------------------------------------

class ScaleV3(trt.IPluginV3, trt.IPluginV3OneCore, trt.IPluginV3OneBuild, trt.IPluginV3OneRuntime):
    """y = x * scale; tactics [7, 9] (the tactic chosen is recorded); misuse switches."""

    log = []

    def __init__(self, scale=2.0, phase=None, bad=None):
        trt.IPluginV3.__init__(self)
        self.num_outputs = 1
        self.plugin_name = "ScaleV3_TEST"
        self.plugin_version = "1"
        self.plugin_namespace = ""
        self.scale = float(scale)
        self.phase = phase
        self.bad = bad or {}
        self.tactic = None

    def get_capability_interface(self, type):
        if self.bad.get("capability") == type:
            return None
        return self

    def get_output_data_types(self, input_types):
        return self.bad.get("dtypes", [input_types[0]])

    def get_output_shapes(self, inputs, shape_inputs, eb):
        return self.bad.get("shapes", [trt.DimsExprs(inputs[0])])

    def get_valid_tactics(self):
        return [7, 9]

    def set_tactic(self, tactic):
        self.tactic = tactic
        ScaleV3.log.append(("set_tactic", tactic, self.phase))

    def on_shape_change(self, inp, out):
        ScaleV3.log.append(("on_shape_change", tuple(inp[0].dims)))

    def attach_to_context(self, context):
        ScaleV3.log.append(("attach",))
        return self.bad.get("attach", self.clone())

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        x = cpp.host_array(inputs[0], input_desc[0].dims, np.float32)
        cpp.host_array(outputs[0], output_desc[0].dims, np.float32)[...] = x * np.float32(self.scale + self.tactic)

    def get_fields_to_serialize(self):
        return self.bad.get("fields", trt.PluginFieldCollection([
            trt.PluginField("scale", np.array([self.scale], np.float32), trt.PluginFieldType.FLOAT32)]))

    def clone(self):
        c = ScaleV3(self.scale, self.phase, self.bad)
        c.tactic = self.tactic
        return c


class ScaleV3Creator(trt.IPluginCreatorV3One):
    def __init__(self, result=None):
        trt.IPluginCreatorV3One.__init__(self)
        self.name = "ScaleV3_TEST"
        self.plugin_version = "1"
        self.plugin_namespace = ""
        self.field_names = trt.PluginFieldCollection([trt.PluginField("scale", None, trt.PluginFieldType.FLOAT32)])
        self.result = result

    def create_plugin(self, name, fc, phase):
        if self.result is not None:
            return self.result
        return ScaleV3(float(fc["scale"].data[0]), phase)


@pytest.fixture(scope="module")
def scale_creator():
    reg = trt.get_plugin_registry()
    c = ScaleV3Creator()
    assert reg.register_creator(c, "")
    yield reg.get_creator("ScaleV3_TEST", "1", "")
    reg.deregister_creator(c)


def scale_network(plugin, shape=(2, 3)):
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, shape)
    layer = net.add_plugin_v3([x], [], plugin)
    layer.name = "scale_layer"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    return builder, net, layer


def test_v3_tactic_phase_and_runtime_calls_through_a_plan(scale_creator):
    fc = trt.PluginFieldCollection([trt.PluginField("scale", np.array([3.0], np.float32), trt.PluginFieldType.FLOAT32)])
    plugin = scale_creator.create_plugin("s", fc, trt.TensorRTPhase.BUILD)
    assert isinstance(plugin, ScaleV3) and plugin.phase == trt.TensorRTPhase.BUILD  # the user's own object
    ScaleV3.log.clear()
    builder, net, layer = scale_network(plugin)
    assert layer.plugin is plugin
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    assert ("set_tactic", 7, trt.TensorRTPhase.BUILD) in ScaleV3.log  # the first valid tactic
    ScaleV3.log.clear()
    engine = trt.Runtime(LOG).deserialize_cuda_engine(plan)
    assert ScaleV3.log == [("set_tactic", 7, trt.TensorRTPhase.RUNTIME)]
    ctx = engine.create_execution_context()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ctx.infer({"x": x})["y"], x * 10)  # scale 3 + tactic 7
    np.testing.assert_array_equal(ctx.infer({"x": x})["y"], x * 10)
    assert ScaleV3.log[1:] == [("attach",), ("on_shape_change", (2, 3))]


@pytest.mark.parametrize("bad,match", [
    ({"shapes": [trt.DimsExprs([1, 2]), trt.DimsExprs([3])]}, r"get_output_shapes\(\) returned 2 shapes for 1 outputs"),
    ({"shapes": trt.DimsExprs([1, 2])}, r"get_output_shapes\(\) must return a list of trt.DimsExprs"),
    ({"dtypes": []}, r"get_output_data_types\(\) returned 0 dtypes for 1 outputs"),
    ({"dtypes": [None]}, r"get_output_data_types\(\) must return a trt.DataType, not None"),
    ({"capability": trt.PluginCapabilityType.BUILD},
     r"get_capability_interface\(PluginCapabilityType.BUILD\) returned None"),
])
def test_v3_build_time_misuse(bad, match):
    with pytest.raises(trt.PluginError, match=r"plugin layer '\(Unnamed Layer\* 0\) \[PluginV2\]'") as e:
        scale_network(ScaleV3(bad=bad))
    assert "ScaleV3_TEST" in str(e.value)
    assert e.match(match)


def test_v3_run_and_serialize_misuse(scale_creator):
    """Serializing needs the creator registered (the plan names it), so this test asks for the scale_creator fixture
    itself instead of relying on an earlier test of this module having registered it."""
    builder, net, _ = scale_network(ScaleV3(bad={"attach": "nope"}))
    ctx = builder.build_engine(net, builder.create_builder_config()).create_execution_context()
    with pytest.raises(trt.PluginError, match=r"scale_layer.*attach_to_context\(\) must return a trt.IPluginV3, not str"):
        ctx.infer({"x": np.ones((2, 3), np.float32)})
    builder, net, _ = scale_network(ScaleV3(bad={"fields": 42}))
    with pytest.raises(trt.Error, match=r"scale_layer.*get_fields_to_serialize\(\) must return a PluginFieldCollection"):
        builder.build_serialized_network(net, builder.create_builder_config())
    unregistered = ScaleV3()
    unregistered.plugin_name = "ScaleV3_Unregistered_TEST"
    builder, net, _ = scale_network(unregistered)
    with pytest.raises(trt.PluginError, match=r"scale_layer.*the plugin has no creator, so it cannot be serialized"):
        builder.build_serialized_network(net, builder.create_builder_config())


def test_v3_creator_returning_a_non_plugin_and_add_plugin_v3_arguments(scale_creator):
    reg = trt.get_plugin_registry()
    bad = ScaleV3Creator(result=42)
    bad.name = "ScaleV3Bad_TEST"
    assert reg.register_creator(bad, "")
    try:
        with pytest.raises(trt.PluginError, match=r"ScaleV3Bad_TEST.*create_plugin\(\) must return a trt.IPluginV3"):
            reg.get_creator("ScaleV3Bad_TEST", "1", "").create_plugin("b", trt.PluginFieldCollection(),
                                                                     trt.TensorRTPhase.BUILD)
    finally:
        reg.deregister_creator(bad)
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (2, 3))
    with pytest.raises(trt.UnsupportedError, match="ScaleV3_TEST.*shape inputs"):
        net.add_plugin_v3([x], [x], ScaleV3())
    with pytest.raises(TypeError, match="must be a trt.IPluginV3, not Concat2"):
        net.add_plugin_v3([x], [], Concat2())
    with pytest.raises(TypeError, match="missing the plugin"):
        net.add_plugin_v3([x], [])


# ---- trtlite.plugin ----------------------------------------------------------------------------------------------

@trtp.register("trtltest::split_scale")
def _split_scale_desc(a: trtp.TensorDesc, factor: float, name: str = "s") -> Tuple[trtp.TensorDesc, trtp.TensorDesc]:
    half = a.like()
    half.shape_expr[0] = a.shape_expr[0] // 2
    total = trtp.from_shape_expr((a.shape_expr.numel(),), dtype=trt.float32)
    return half, total


@trtp.impl("trtltest::split_scale")
def _split_scale_impl(a: trtp.Tensor, factor: float, name: str, outputs: Tuple[trtp.Tensor, trtp.Tensor],
                      stream: int) -> None:
    x = np.asarray(a)
    assert name == "hello" and stream == 0 and a.shape == x.shape and a.numel() == x.size
    np.asarray(outputs[0])[...] = x[: x.shape[0] // 2] * factor
    np.asarray(outputs[1])[...] = x.reshape(-1) + 1


def test_trtp_two_outputs_attributes_and_reload():
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (6, 2))
    layer = net.add_plugin(trtp.op.trtltest.split_scale(x, factor=2.5, name="hello"))
    assert [layer.get_output(i).shape for i in range(2)] == [(3, 2), (12,)]
    for i, n in enumerate("yz"):
        layer.get_output(i).name = n
        net.mark_output(layer.get_output(i))
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    ctx = trt.Runtime(LOG).deserialize_cuda_engine(plan).create_execution_context()
    xv = np.random.default_rng(5).standard_normal((6, 2)).astype(np.float32)
    out = ctx.infer({"x": xv})
    np.testing.assert_allclose(out["y"], xv[:3].astype(np.float64) * 2.5, rtol=1e-6)
    np.testing.assert_allclose(out["z"], xv.reshape(-1).astype(np.float64) + 1, rtol=1e-6)


def test_trtp_misuse_is_reported():
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (6, 2))
    with pytest.raises(TypeError, match="attribute 'factor' must be a float, not str"):
        trtp.op.trtltest.split_scale(x, factor="2", name="a")
    with pytest.raises(TypeError, match=r"unknown attributes \['fator'\]"):
        trtp.op.trtltest.split_scale(x, fator=2.0)
    with pytest.raises(TypeError, match="takes 1 input tensors"):
        trtp.op.trtltest.split_scale(x, x, factor=2.0)
    with pytest.raises(AttributeError, match="no plugin 'nope'"):
        trtp.op.trtltest.nope
    with pytest.raises(TypeError, match="expected trtp.op"):
        net.add_plugin(42)
    with pytest.raises(ValueError, match="already registered"):
        trtp.register("trtltest::split_scale")(_split_scale_desc)
    with pytest.raises(ValueError, match="'namespace::name'"):
        trtp.register("no_namespace")(_split_scale_desc)
    with pytest.raises(TypeError, match="return annotation"):
        @trtp.register("trtltest::no_return")
        def _f(a: trtp.TensorDesc):
            return a
    with pytest.raises(TypeError, match="attribute 'c' has annotation"):
        @trtp.register("trtltest::bad_attr")
        def _g(a: trtp.TensorDesc, c: complex) -> trtp.TensorDesc:
            return a

    @trtp.register("trtltest::no_impl")
    def _h(a: trtp.TensorDesc) -> trtp.TensorDesc:
        return a.like()

    @trtp.register("trtltest::bad_desc")
    def _k(a: trtp.TensorDesc) -> trtp.TensorDesc:
        return (a.like(), a.like())

    with pytest.raises(trt.PluginError, match="trtltest::bad_desc.*returned 2 descs for 1 outputs"):
        net.add_plugin(trtp.op.trtltest.bad_desc(x))
    layer = net.add_plugin(trtp.op.trtltest.no_impl(x))
    layer.name = "no_impl_layer"
    net.mark_output(layer.get_output(0))
    ctx = builder.build_engine(net, builder.create_builder_config()).create_execution_context()
    with pytest.raises(trt.PluginError, match="no_impl_layer.*has no implementation"):
        ctx.infer({"x": np.ones((6, 2), np.float32)})


def test_plugin_resources_are_cloned_counted_and_released():
    class Res(trt.IPluginResource):
        released = []

        def __init__(self, tag):
            self.tag = tag

        def clone(self):
            return Res(self.tag + "-clone")

        def release(self):
            Res.released.append(self.tag)

    reg = trt.get_plugin_registry()
    a = reg.acquire_plugin_resource("trtl_test_res", Res("r"))
    assert a.tag == "r-clone"
    assert reg.acquire_plugin_resource("trtl_test_res", Res("other")) is a
    assert reg.release_plugin_resource("trtl_test_res") == 1 and Res.released == []
    assert reg.release_plugin_resource("trtl_test_res") == 0 and Res.released == ["r-clone"]
    assert reg.release_plugin_resource("trtl_test_res") == -1
    with pytest.raises(TypeError, match="trt.IPluginResource"):
        reg.acquire_plugin_resource("trtl_test_res2", object())


@pytest.mark.parametrize("op,domain", [("CircPadPlugin", ""), ("CircPadPluginV3", ""), ("circ_pad_plugin", "sample")])
def test_onnx_nodes_become_these_plugins(op, domain):
    """The samples' ONNX route: a node whose op names a registered creator becomes its plugin (the parser's plugin
    fallback), for V2DynamicExt, V3 and trtp creators alike."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    cpp.registered()
    pads = [1, 2, 0, 1]
    node = helper.make_node(op, ["X"], ["Y"], name="circ", domain=domain, pads=pads)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3, 5, 7])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    opsets = [helper.make_opsetid("", 16)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    builder = trt.Builder(LOG)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(net, LOG)
    assert parser.parse(model.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    x = np.random.default_rng(11).standard_normal((2, 3, 5, 7)).astype(np.float32)
    y = trt.Runtime(LOG).deserialize_cuda_engine(plan).create_execution_context().infer({"X": x})["Y"]
    np.testing.assert_array_equal(y, wrap_pad(x, pads))


def test_trtp_size_tensor_checks_its_bounds():
    """trtp.size_tensor is supported (tests/test_plugin_size_tensors.py runs such plugins); its arguments are
    checked at once."""
    import trtlite.plugin as trtp_mod
    assert trtp_mod.size_tensor(4, 16).expr().is_size_tensor
    with pytest.raises(ValueError, match="opt is 17"):
        trtp_mod.size_tensor(17, 16)
