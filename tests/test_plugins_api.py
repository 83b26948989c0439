"""Plugin registry semantics, plugins written in Python, and plugin error paths."""
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import trtlite as trt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Capture(trt.ILogger):
    def __init__(self):
        super().__init__()
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


class AffinePlugin(trt.IPluginV2):
    """y0 = a*x + b, y1 = argmax-like int32 flag (x > 0): two outputs of different dtypes."""
    plugin_type = "PyAffine_TEST"
    plugin_version = "1"
    num_outputs = 2

    def __init__(self, a, b, fail=False):
        self.a, self.b, self.fail = float(a), float(b), fail

    def get_output_dtype(self, index, input_dtypes):
        return trt.DataType.FLOAT if index == 0 else trt.DataType.INT32

    def enqueue(self, inputs, outputs):
        if self.fail:
            raise ValueError("deliberate failure in enqueue")
        outputs[0][...] = self.a * inputs[0] + self.b
        outputs[1][...] = (inputs[0] > 0).astype(np.int32)

    def serialize(self):
        return pickle.dumps((self.a, self.b, self.fail))


class AffineCreator(trt.IPluginCreator):
    name = "PyAffine_TEST"
    plugin_version = "1"
    field_names = trt.PluginFieldCollection([trt.PluginField("a", None, trt.PluginFieldType.FLOAT32),
                                             trt.PluginField("b", None, trt.PluginFieldType.FLOAT32)])

    def create_plugin(self, name, field_collection):
        f = {x.name: x.data for x in field_collection}
        return AffinePlugin(f.get("a", [1.0])[0], f.get("b", [0.0])[0])

    def deserialize_plugin(self, name, serialized_plugin):
        return AffinePlugin(*pickle.loads(serialized_plugin))


@pytest.fixture(scope="module")
def affine_creator():
    c = AffineCreator()
    reg = trt.get_plugin_registry()
    assert reg.register_creator(c, "") in (True, False)
    yield reg.get_plugin_creator("PyAffine_TEST", "1", "")
    reg.deregister_creator(c)


def fields(**kv):
    return trt.PluginFieldCollection([trt.PluginField(k, np.array([v], np.float32), trt.PluginFieldType.FLOAT32)
                                      for k, v in kv.items()])


def affine_network(creator, plugin=None, shape=(2, 5)):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, shape)
    p = plugin or creator.create_plugin("aff", fields(a=3.0, b=-1.0))
    layer = net.add_plugin_v2(inputs=[x], plugin=p)
    layer.name = "affine_layer"
    layer.get_output(0).name = "y"
    layer.get_output(1).name = "flag"
    net.mark_output(layer.get_output(0))
    net.mark_output(layer.get_output(1))
    return builder, net, layer


def test_registry_keys_and_duplicates():
    reg = trt.get_plugin_registry()
    log = Capture()
    assert trt.init_libnvinfer_plugins(log, "") is True
    assert trt.init_libnvinfer_plugins(log, "") is True  # idempotent, no duplicate warnings
    assert not [m for s, m in log.messages if "already registered" in m]
    names = {c.name for c in reg.plugin_creator_list}
    for n in ("Adder2d_TRT", "L2Norm_Helper_TRT", "SPP_TRT", "LReLU_TRT", "Clip_TRT", "Normalize_TRT",
              "FlattenConcat_TRT", "GridAnchor_TRT", "NMS_TRT", "PriorBox_TRT", "Reorg_TRT", "Region_TRT",
              "ResizeNearest_TRT", "InstanceNormalization_TRT"):
        assert n in names
    c = reg.get_plugin_creator("Adder2d_TRT", "1", "")
    assert c.name == "Adder2d_TRT" and c.plugin_version == "1" and c.plugin_namespace == ""
    assert reg.get_plugin_creator("Adder2d_TRT", "2", "") is None
    assert reg.get_plugin_creator("Adder2d_TRT", "1", "other_ns") is None
    # the same built-ins under another namespace are a different key
    assert trt.init_libnvinfer_plugins(None, "myns")
    assert reg.get_plugin_creator("Adder2d_TRT", "1", "myns").plugin_namespace == "myns"


def test_register_duplicate_returns_false_with_warning():
    reg = trt.get_plugin_registry()
    log = Capture()
    trt.init_libnvinfer_plugins(log, "")
    a, b = AffineCreator(), AffineCreator()
    a.name = b.name = "PyDup_TEST"
    assert reg.register_creator(a, "dupns") is True
    assert reg.register_creator(b, "dupns") is False
    assert any("already registered" in m and "PyDup_TEST" in m for s, m in log.messages)
    # lookups return the registry's checked view of a Python creator, equal to the object registered
    assert reg.get_plugin_creator("PyDup_TEST", "1", "dupns") == a
    assert reg.get_plugin_creator("PyDup_TEST", "1", "dupns") != b
    assert reg.deregister_creator(a) is True
    assert reg.get_plugin_creator("PyDup_TEST", "1", "dupns") is None
    assert reg.deregister_creator(a) is False


def test_registry_is_thread_safe():
    reg = trt.get_plugin_registry()
    errors = []

    def worker(k):
        try:
            for i in range(25):
                c = AffineCreator()
                c.name = f"PyThread_{k}_{i}"
                assert reg.register_creator(c, "threads")
                assert reg.get_plugin_creator(c.name, "1", "threads") == c
                assert len(reg.plugin_creator_list) > 0
                assert reg.deregister_creator(c)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_python_plugin_two_outputs_matches_numpy(affine_creator):
    builder, net, layer = affine_network(affine_creator)
    assert layer.type == trt.LayerType.PLUGIN_V2 and layer.num_outputs == 2
    assert layer.get_output(1).dtype == trt.int32
    assert isinstance(layer.plugin, AffinePlugin)
    engine = builder.build_engine(net, builder.create_builder_config())
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    out = engine.create_execution_context().infer({"x": x})
    np.testing.assert_allclose(out["y"], 3.0 * x.astype(np.float64) - 1.0, rtol=1e-6)
    np.testing.assert_array_equal(out["flag"], (x > 0).astype(np.int32))


def test_python_plugin_plan_reloads_in_new_process(tmp_path, affine_creator):
    builder, net, _ = affine_network(affine_creator)
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    path = tmp_path / "affine.plan"
    path.write_bytes(bytes(plan))
    x = np.arange(10, dtype=np.float32).reshape(2, 5) - 4
    np.save(tmp_path / "x.npy", x)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {ROOT!r}); sys.path.insert(0, {os.path.dirname(__file__)!r})
        import trtlite as trt
        from test_plugins_api import AffineCreator
        runtime = trt.Runtime(trt.Logger(trt.Logger.ERROR))
        try:
            runtime.deserialize_cuda_engine(open({str(path)!r}, "rb").read())
            print("LOADED-WITHOUT-CREATOR")
        except trt.PluginError as e:
            print("MISSING:", e)
        trt.get_plugin_registry().register_creator(AffineCreator(), "")
        engine = runtime.deserialize_cuda_engine(open({str(path)!r}, "rb").read())
        out = engine.create_execution_context().infer({{"x": np.load({str(tmp_path / 'x.npy')!r})}})
        np.save({str(tmp_path / 'y.npy')!r}, out["y"])
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "MISSING:" in r.stdout and "PyAffine_TEST" in r.stdout and "register_creator" in r.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), 3.0 * x - 1.0)


def test_python_plugin_error_in_enqueue_names_layer(affine_creator):
    builder, net, _ = affine_network(affine_creator, plugin=AffinePlugin(1, 0, fail=True))
    engine = builder.build_engine(net, builder.create_builder_config())
    ctx = engine.create_execution_context()
    with pytest.raises(trt.PluginError, match="affine_layer.*deliberate failure"):
        ctx.infer({"x": np.ones((2, 5), np.float32)})


class BadShapePlugin(AffinePlugin):
    def get_output_shape(self, index, input_shapes):
        return (2, -5)


class RaisingShapePlugin(AffinePlugin):
    def get_output_shape(self, index, input_shapes):
        raise RuntimeError("no shape for you")


@pytest.mark.parametrize("plugin_cls,match", [(BadShapePlugin, "impossible dimension"),
                                              (RaisingShapePlugin, "no shape for you")])
def test_python_plugin_bad_output_shape(affine_creator, plugin_cls, match):
    with pytest.raises(trt.PluginError, match=match):
        affine_network(affine_creator, plugin=plugin_cls(1, 0))


def test_c_creator_ignores_unknown_fields_with_warning_and_checks_types():
    log = Capture()
    trt.init_libnvinfer_plugins(log, "")
    creator = trt.get_plugin_registry().get_plugin_creator("LReLU_TRT", "1", "")
    assert "negSlope" in [f.name for f in creator.field_names]
    fc = fields(negSlope=0.25)
    fc.append(trt.PluginField("nInputHeight", np.array([28], np.int32), trt.PluginFieldType.INT32))
    plugin = creator.create_plugin("lrelu_unknown", fc)
    assert plugin.plugin_type == "LReLU_TRT" and plugin.num_outputs == 1
    assert any(s == trt.Logger.WARNING and "nInputHeight" in m and "LReLU_TRT" in m for s, m in log.messages)
    bad = trt.PluginFieldCollection([trt.PluginField("negSlope", np.array([1], np.int32), trt.PluginFieldType.INT32)])
    with pytest.raises(trt.InvalidArgumentError, match="field 'negSlope' must be FLOAT32, got INT32"):
        creator.create_plugin("bad_type", bad)
    # serialize() / deserialize_plugin() round trip of a C plugin, used in a network
    again = creator.deserialize_plugin("lrelu_copy", plugin.serialize())
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (3, 4))
    net.mark_output(net.add_plugin_v2([x], again).get_output(0))
    xv = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = list(builder.build_engine(net, builder.create_builder_config()).create_execution_context()
             .infer({"x": xv}).values())[0]
    np.testing.assert_allclose(y, np.where(xv >= 0, xv, 0.25 * xv), rtol=1e-6)


def test_add_plugin_v2_rejects_non_plugins():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (1, 2))
    with pytest.raises(TypeError, match="IPluginV2"):
        net.add_plugin_v2([x], object())


def test_load_library_errors(tmp_path):
    reg = trt.get_plugin_registry()
    with pytest.raises(trt.NotFoundError, match="no_such_lib"):
        reg.load_library(str(tmp_path / "no_such_lib.so"))
    libm = "/lib/x86_64-linux-gnu/libm.so.6"
    if os.path.exists(libm):
        with pytest.raises(trt.PluginError, match="does not export trtl_get_plugin_creators"):
            reg.load_library(libm)


# ---- contract breaches of C plugin libraries (tests/c/misbehaving_plugin.c) ----------------------

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MISBEHAVING_SRC = os.path.join(ROOT, "tests", "c", "misbehaving_plugin.c")


def compile_misbehaving(out_dir, name, *defines):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    lib = os.path.join(str(out_dir), name)
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{ROOT}/csrc/include",
                    *defines, MISBEHAVING_SRC, "-o", lib], check=True)
    return lib


@pytest.fixture(scope="module")
def misbehaving(tmp_path_factory):
    lib = compile_misbehaving(tmp_path_factory.mktemp("misbehaving"), "libmisbehaving.so")
    reg = trt.get_plugin_registry()
    assert reg.load_library(lib)
    return reg.get_plugin_creator("Misbehaving_TEST", "1", "")


def misbehaving_plugin(creator, mode, name="mb"):
    fc = trt.PluginFieldCollection([trt.PluginField("mode", np.array([mode], np.int32), trt.PluginFieldType.INT32)])
    return creator.create_plugin(name, fc)


def misbehaving_network(creator, mode, shape=(2, 3)):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, shape)
    layer = net.add_plugin_v2([x], misbehaving_plugin(creator, mode))
    layer.name = "mb_layer"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    return builder, net


def test_misbehaving_plugin_in_mode_0_works(misbehaving):
    builder, net = misbehaving_network(misbehaving, 0)
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        builder.build_serialized_network(net, builder.create_builder_config()))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(engine.create_execution_context().infer({"x": x})["y"], x)


@pytest.mark.parametrize("bad_desc,match", [(1, "'BadFieldDesc_TEST': field description 1 has no name"),
                                            (2, "'BadFieldDesc_TEST': field 'gain' has type 42")])
def test_creator_with_broken_field_list_is_refused_by_load_library(tmp_path, bad_desc, match):
    lib = compile_misbehaving(tmp_path, f"libbaddesc{bad_desc}.so", f"-DBAD_DESC={bad_desc}")
    reg = trt.get_plugin_registry()
    with pytest.raises(trt.PluginError, match=match):
        reg.load_library(lib)
    assert reg.get_plugin_creator("BadFieldDesc_TEST", "1", "") is None
    with open("/proc/self/maps") as f:  # the refused library was closed again
        assert lib not in f.read()


@pytest.mark.parametrize("mode,match", [(1, "field 'mode' has type 99"), (2, "field 'mode' has a negative length -5"),
                                        (3, "field 0 has no name")])
def test_fields_that_cannot_be_stored_fail_the_build(misbehaving, mode, match):
    builder, net = misbehaving_network(misbehaving, mode)
    with pytest.raises(trt.PluginError, match=f"mb_layer.*Misbehaving_TEST.*{match}"):
        builder.build_serialized_network(net, builder.create_builder_config())
    with pytest.raises(trt.PluginError, match=match):
        misbehaving_plugin(misbehaving, mode).serialize()


def test_too_small_vtable_is_reported_as_struct_size(misbehaving):
    with pytest.raises(trt.PluginError, match="vtable struct size is 8, smaller than this ABI's"):
        misbehaving_plugin(misbehaving, 6)


def test_workspace_size_near_size_max_fails_naming_the_layer(misbehaving):
    builder, net = misbehaving_network(misbehaving, 4)
    ctx = builder.build_engine(net, builder.create_builder_config()).create_execution_context()
    with pytest.raises(trt.OutOfMemoryError, match=r"layer 'mb_layer' needs a plugin workspace of 18446744073709551615"):
        ctx.infer({"x": np.ones((2, 3), np.float32)})


def test_dynamic_output_dim_needs_a_dynamic_input(misbehaving):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 3))
    with pytest.raises(trt.PluginError) as ei:
        net.add_plugin_v2([x], misbehaving_plugin(misbehaving, 5, name="dyn_plugin"))
    msg = str(ei.value)
    for part in ("(Unnamed Layer* 0) [PluginV2]", "'dyn_plugin'", "Misbehaving_TEST", "(2, -1)", "every input is static"):
        assert part in msg, msg
    assert net.num_layers == 0
    # -1 following a dynamic input is what dynamic shapes look like at definition time
    d = net.add_input("d", trt.float32, (2, -1))
    assert tuple(net.add_plugin_v2([d], misbehaving_plugin(misbehaving, 5)).get_output(0).shape) == (2, -1)


class GrowingPlugin(trt.IPluginV2):
    """Copies its input; while `grow` is set it claims a much larger output than at build."""
    plugin_type = "Growing_TEST"
    grow = None  # None: the input's shape; "static": dim 1 becomes 10**7; "batch": dim 0 grows 1000x

    def get_output_shape(self, index, input_shapes):
        n, c = input_shapes[0]
        if GrowingPlugin.grow == "static":
            return (n, 10 ** 7)
        if GrowingPlugin.grow == "batch" and n > 0:
            return (n * 1000, c)
        return (n, c)

    def enqueue(self, inputs, outputs):
        # Only the first elements: before run-time shapes were checked, this test must not crash.
        outputs[0].reshape(-1)[:inputs[0].size] = inputs[0].reshape(-1)


@pytest.fixture
def growing():
    GrowingPlugin.grow = None
    yield GrowingPlugin
    GrowingPlugin.grow = None


def growing_network(dynamic):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (-1, 5) if dynamic else (2, 5))
    layer = net.add_plugin_v2([x], GrowingPlugin())
    layer.name = "grow_layer"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    if dynamic:
        profile = builder.create_optimization_profile()
        profile.set_shape("x", (1, 5), (2, 5), (4, 5))
        cfg.add_optimization_profile(profile)
    return builder, net, cfg


@pytest.mark.parametrize("dynamic,grow,match", [
    (False, "static", r"output 0 \(tensor 'y'\) is inferred as \(2, 10000000\) for these input shapes, but the engine "
                      r"was built for \(2, 5\)"),
    (True, "static", r"output 0 \(tensor 'y'\) is inferred as \(2, 10000000\) .*built for \(-1, 5\)"),
    (True, "batch", r"output 0 \(tensor 'y'\) is inferred as \(2000, 5\), larger than the maximum \(4, 5\)")])
def test_plugin_output_shape_changing_after_build_is_refused_at_run_time(growing, dynamic, grow, match):
    builder, net, cfg = growing_network(dynamic)
    engine = builder.build_engine(net, cfg)
    ctx = engine.create_execution_context()
    if dynamic:
        ctx.set_input_shape("x", (2, 5))
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    y = np.zeros((2, 5), np.float32)
    assert ctx.execute_v2([x.ctypes.data, y.ctypes.data])
    np.testing.assert_array_equal(y, x)
    growing.grow = grow
    ctx2 = engine.create_execution_context()  # resolves shapes afresh
    if dynamic:
        ctx2.set_input_shape("x", (2, 5))
    with pytest.raises(trt.PluginError, match="layer 'grow_layer' \\(plugin 'Growing_TEST'.*" + match):
        ctx2.execute_v2([x.ctypes.data, y.ctypes.data])


def test_plugin_output_shape_changing_before_build_fails_the_build(growing):
    builder, net, cfg = growing_network(False)
    growing.grow = "static"
    with pytest.raises(trt.PluginError, match=r"grow_layer.*tensor 'y'\) is \(2, 10000000\) at build time but was "
                                              r"\(2, 5\) when the layer was added"):
        builder.build_engine(net, cfg)


def test_runtime_get_plugin_registry_is_the_registry():
    runtime = trt.Runtime(trt.Logger(trt.Logger.ERROR))
    reg = runtime.get_plugin_registry()
    assert reg is trt.get_plugin_registry()
    trt.init_libnvinfer_plugins(None, "")
    assert reg.get_plugin_creator("Adder2d_TRT", "1", "").name == "Adder2d_TRT"
    assert "registry" in trt.Runtime.get_plugin_registry.__doc__


# ---- Python creators through the registry: the same checks as C creators -----------------------

class ScalePlugin(AffinePlugin):
    plugin_type = "PyScale_TEST"


class ScaleCreator(trt.IPluginCreator):
    """ScalePlugin: y = a * x; a negative `a` makes create_plugin raise."""
    name = "PyScale_TEST"
    plugin_version = "1"
    field_names = trt.PluginFieldCollection([trt.PluginField("a", None, trt.PluginFieldType.FLOAT32)])
    note = "kept on the creator object"

    def create_plugin(self, name, field_collection):
        a = float({f.name: f.data for f in field_collection}.get("a", [1.0])[0])
        if a < 0:
            raise KeyError("a must not be negative")
        return ScalePlugin(a, 0.0)

    def deserialize_plugin(self, name, serialized_plugin):
        return ScalePlugin(*pickle.loads(serialized_plugin))


@pytest.fixture
def scale_creator():
    reg = trt.get_plugin_registry()
    own = ScaleCreator()
    assert reg.register_creator(own, "ns2")
    yield own, reg.get_plugin_creator("PyScale_TEST", "1", "ns2")
    reg.deregister_creator(own)


def test_python_creator_from_registry_checks_field_types(scale_creator):
    own, creator = scale_creator
    bad = trt.PluginFieldCollection([trt.PluginField("a", np.array([2], np.int32), trt.PluginFieldType.INT32)])
    with pytest.raises(trt.PluginFieldError, match="plugin 'PyScale_TEST' \\(layer 'sc'\\): field 'a' must be "
                                                   "FLOAT32, got INT32") as ei:
        creator.create_plugin("sc", bad)
    assert isinstance(ei.value, trt.PluginError) and isinstance(ei.value, trt.InvalidArgumentError)
    # TensorRT-style direct calls on the script's own object stay plain Python
    assert own.create_plugin("sc", bad).a == 2.0


def test_python_creator_from_registry_warns_about_unknown_fields(scale_creator):
    _, creator = scale_creator
    log = Capture()
    trt.init_libnvinfer_plugins(log, "")
    fc = fields(a=4.0)
    fc.append(trt.PluginField("gain", np.array([3], np.int32), trt.PluginFieldType.INT32))
    plugin = creator.create_plugin("sc", fc)
    assert isinstance(plugin, ScalePlugin) and plugin.a == 4.0
    assert any(s == trt.Logger.WARNING and "PyScale_TEST" in m and "'gain'" in m for s, m in log.messages)


def test_python_creator_exception_is_wrapped_naming_the_plugin(scale_creator):
    own, creator = scale_creator
    with pytest.raises(trt.PluginError, match="plugin 'PyScale_TEST' \\(layer 'neg'\\): create_plugin\\(\\) raised "
                                              "KeyError: 'a must not be negative'") as ei:
        creator.create_plugin("neg", fields(a=-1.0))
    assert isinstance(ei.value.__cause__, KeyError)
    with pytest.raises(KeyError):  # the script's own object: plain Python, as in TensorRT
        own.create_plugin("neg", fields(a=-1.0))


def test_python_creator_reports_its_registration_namespace(scale_creator, tmp_path):
    own, creator = scale_creator
    assert creator.plugin_namespace == "ns2" and own.plugin_namespace == ""
    assert creator == own and creator.name == "PyScale_TEST" and creator.note == "kept on the creator object"
    assert [f.name for f in creator.field_names] == ["a"]
    assert creator in trt.get_plugin_registry().plugin_creator_list
    plugin = creator.create_plugin("sc", fields(a=3.0))
    assert plugin.plugin_namespace == "ns2"  # found again under ns2 when the network is serialized
    again = creator.deserialize_plugin("sc2", plugin.serialize())
    assert isinstance(again, ScalePlugin) and (again.a, again.b) == (3.0, 0.0)
    builder, net, _ = affine_network(None, plugin=plugin)
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_allclose(engine.create_execution_context().infer({"x": x})["y"], 3.0 * x, rtol=1e-6)


# ---- field values are converted only when they fit ---------------------------------------------

@pytest.mark.parametrize("plugin,field,data,ftype,match", [
    ("Reorg_TRT", "stride", np.array([2 ** 32 + 1], np.int64), trt.PluginFieldType.INT32,
     "value 4294967297 is out of int32's range"),
    ("Reorg_TRT", "stride", np.array([2.5]), trt.PluginFieldType.INT32, "non-integral"),
    ("Reorg_TRT", "stride", "two", trt.PluginFieldType.INT32, "cannot be converted to int32"),
    ("LReLU_TRT", "negSlope", np.array([1e300]), trt.PluginFieldType.FLOAT32, "value 1e\\+300 is out of float32's range"),
])
def test_field_values_that_do_not_fit_raise_naming_plugin_and_field(plugin, field, data, ftype, match):
    trt.init_libnvinfer_plugins(None, "")
    creator = trt.get_plugin_registry().get_plugin_creator(plugin, "1", "")
    with pytest.raises(trt.PluginFieldError, match=f"plugin '{plugin}': field '{field}': .*{match}") as ei:
        creator.create_plugin("f", trt.PluginFieldCollection([trt.PluginField(field, data, ftype)]))
    assert isinstance(ei.value, trt.InvalidArgumentError) and isinstance(ei.value.__cause__, ValueError)


def test_field_values_that_fit_are_converted():
    trt.init_libnvinfer_plugins(None, "")
    creator = trt.get_plugin_registry().get_plugin_creator("Reorg_TRT", "1", "")
    p = creator.create_plugin("r", trt.PluginFieldCollection([trt.PluginField("stride", np.array([2], np.int64),
                                                                              trt.PluginFieldType.INT32)]))
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (1, 4, 4, 4))
    layer = net.add_plugin_v2([x], p)
    assert tuple(layer.get_output(0).shape) == (1, 16, 2, 2)  # stride 2 arrived as 2


# ---- what enqueue() is given stays valid after the engine's memory is gone ----------------------

KEEP_SCRIPT = """
import gc, sys
import numpy as np
sys.path.insert(0, {root!r})
import trtlite as trt

class Keep(trt.IPluginV2):
    plugin_type = "Keep_TEST"
    kept = []

    def enqueue(self, inputs, outputs):
        outputs[0][...] = inputs[0] * 2
        Keep.kept.append((inputs[0], outputs[0]))

shape = (64, 1024, 64)  # 16 MiB tensors: freed memory of this size is unmapped, so touching it would crash
builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
x = net.add_input("x", trt.float32, shape)
relu = net.add_activation(x, trt.ActivationType.RELU)  # the plugin reads and writes the engine's arena
layer = net.add_plugin_v2([relu.get_output(0)], Keep())
neg = net.add_unary(layer.get_output(0), trt.UnaryOperation.NEG)
neg.get_output(0).name = "y"
net.mark_output(neg.get_output(0))
engine = builder.build_engine(net, builder.create_builder_config())
ctx = engine.create_execution_context()
rng = np.random.default_rng(0)
xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
for xv in xs:
    np.testing.assert_array_equal(ctx.infer({{"x": xv}})["y"], -2 * np.maximum(xv, 0))
del ctx, engine, builder, net
gc.collect()
junk = [np.full(shape, 7.0, np.float32) for _ in range(4)]
assert len(Keep.kept) == 2
for xv, (i, o) in zip(xs, Keep.kept):
    np.testing.assert_array_equal(i, np.maximum(xv, 0))
    np.testing.assert_array_equal(o, 2 * np.maximum(xv, 0))
    assert not i.flags.writeable and o.flags.writeable
    o[...] = 1.0  # still the plugin's own memory
print("KEPT-OK")
"""


def test_python_plugin_arrays_kept_after_the_context_is_freed_stay_valid():
    r = subprocess.run([sys.executable, "-c", KEEP_SCRIPT.format(root=ROOT)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "KEPT-OK" in r.stdout, (r.returncode, r.stderr[-2000:])


def test_python_plugin_inputs_are_read_only(affine_creator):
    class Writer(AffinePlugin):
        def enqueue(self, inputs, outputs):
            inputs[0][...] = 0

    builder, net, _ = affine_network(affine_creator, plugin=Writer(1, 0))
    ctx = builder.build_engine(net, builder.create_builder_config()).create_execution_context()
    with pytest.raises(trt.PluginError, match="affine_layer.*read-only"):
        ctx.infer({"x": np.ones((2, 5), np.float32)})


def test_python_plugin_serialize_error_is_in_the_build_error(affine_creator):
    class Unpicklable(AffinePlugin):
        def serialize(self):
            raise RuntimeError("cannot pickle the weights")

    builder, net, _ = affine_network(affine_creator, plugin=Unpicklable(1, 0))
    with pytest.raises(trt.PluginError, match=r"layer 'affine_layer': plugin PyAffine_TEST failed to report its fields "
                                              r"for serialization: serialize\(\) raised RuntimeError: cannot pickle "
                                              r"the weights"):
        builder.build_serialized_network(net, builder.create_builder_config())
