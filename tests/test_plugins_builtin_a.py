"""Built-in plugins, part A: Adder2d_TRT, L2Norm_Helper_TRT, SPP_TRT, LReLU_TRT, Clip_TRT, ResizeNearest_TRT,
InstanceNormalization_TRT, Reorg_TRT, and an external plugin library (examples/plugins/scaled_tanh_plugin.c).

Every plugin runs inside a built engine and is compared with an independent numpy float64 reference written here
(plus torch for Adder2d via unfold and for SPP's adaptive pooling bins, and a transcription of Darknet's reorg_cpu
for Reorg).  Adder2d's optimized (AVX2) path runs in this process; its reference path runs in a subprocess with
TRTL_CPU_MASK=0, which hides the CPU features from the dispatch.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trtlite as trt

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from conftest import assert_close  # noqa: E402

F32, I32 = trt.PluginFieldType.FLOAT32, trt.PluginFieldType.INT32
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


class Capture(trt.ILogger):
    def __init__(self):
        super().__init__()
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


@pytest.fixture(scope="module", autouse=True)
def builtins():
    assert trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")


def creator(name):
    c = trt.get_plugin_registry().get_plugin_creator(name, "1", "")
    assert c is not None, name
    return c


def fc(**kv):
    """Field collection: floats and float arrays become FLOAT32, ints and int arrays INT32; (array, type) as is."""
    out = []
    for k, v in kv.items():
        if isinstance(v, tuple):
            out.append(trt.PluginField(k, np.asarray(v[0]), v[1]))
            continue
        a = np.atleast_1d(np.asarray(v))
        if np.issubdtype(a.dtype, np.integer):
            out.append(trt.PluginField(k, a.astype(np.int32), I32))
        else:
            out.append(trt.PluginField(k, a.astype(np.float32).ravel(), F32))
    return trt.PluginFieldCollection(out)


def plugin(name, layer="p", **kv):
    return creator(name).create_plugin(name=layer, field_collection=fc(**kv))


def adder_fields(w, stride=1, padding=0, **extra):
    F, C, k, _ = w.shape
    kv = dict(weights=w, nbWeights=np.int32(w.size), nbInputChannels=np.int32(C), filterSize=np.int32(k),
              nbFilters=np.int32(F), stride=np.int32(stride), padding=np.int32(padding))
    kv.update(extra)
    return kv


def run_plugin(p, x, layer_name="plugin_layer", input_shape=None, profile=None, shapes=None):
    """Explicit-batch network input -> plugin -> output; returns the output for x (or for each of `shapes`)."""
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    t = net.add_input("x", trt.float32, input_shape or x.shape)
    layer = net.add_plugin_v2(inputs=[t], plugin=p)
    layer.name = layer_name
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    if profile:
        prof = builder.create_optimization_profile()
        prof.set_shape("x", *profile)
        config.add_optimization_profile(prof)
    engine = builder.build_engine(net, config)
    ctx = engine.create_execution_context()
    return ctx.infer({"x": np.ascontiguousarray(x, np.float32)})["y"]


# ---- references (float64) -----------------------------------------------------------------------------------------

def adder_ref(x, w, s, p):
    """-sum |Xp - W| over each window, Xp zero-padded first (padding contributes |w|)."""
    N, C, H, W = x.shape
    F, _, k, _ = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
    y = np.zeros((N, F, OH, OW))
    w = w.astype(np.float64)
    for i in range(k):
        for j in range(k):
            win = xp[:, None, :, i:i + s * (OH - 1) + 1:s, j:j + s * (OW - 1) + 1:s]  # N 1 C OH OW
            y -= np.abs(win - w[None, :, :, i, j, None, None]).sum(2)
    return y


def adder_torch(x, w, s, p):
    import torch
    xt = torch.from_numpy(x).double()
    wt = torch.from_numpy(w).double().reshape(w.shape[0], -1)
    N, _, H, W = x.shape
    k = w.shape[2]
    cols = torch.nn.functional.unfold(xt, k, padding=p, stride=s)  # N, C*k*k, L
    y = -(cols[:, None, :, :] - wt[None, :, :, None]).abs().sum(2)
    return y.reshape(N, w.shape[0], (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1).numpy()


def adder_tol(x, w):
    """The AVX2 path evaluates sum|x-w| as sum x + sum w - 2 sum min(x, w) in float32: its error scales with
    sum(|x| + |w|) per output, the size of one window."""
    K = w[0].size
    return 1e-6 * K * (np.abs(x).max() + np.abs(w).max()) + 1e-6


def reorg_cpu(x, w, h, c, batch, stride, forward):
    """Darknet's reorg_cpu (src/blas.c), transcribed loop for loop."""
    x = x.ravel()
    out = np.zeros_like(x)
    out_c = c // (stride * stride)
    for b in range(batch):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    in_index = i + w * (j + h * (k + c * b))
                    c2 = k % out_c
                    offset = k // out_c
                    w2 = i * stride + offset % stride
                    h2 = j * stride + offset // stride
                    out_index = w2 + w * stride * (h2 + h * stride * (c2 + out_c * b))
                    if forward:
                        out[out_index] = x[in_index]
                    else:
                        out[in_index] = x[out_index]
    return out


def spp_ref(x, levels, avg):
    N, C, H, W = x.shape
    x = x.astype(np.float64)
    feats = []
    for n in levels:
        lvl = np.zeros((N, C, n, n))
        for i in range(n):
            y0, y1 = (i * H) // n, -((-(i + 1) * H) // n)
            for j in range(n):
                x0, x1 = (j * W) // n, -((-(j + 1) * W) // n)
                win = x[:, :, y0:y1, x0:x1]
                lvl[:, :, i, j] = win.mean((2, 3)) if avg else win.max((2, 3))
        feats.append(lvl.reshape(N, -1))
    return np.concatenate(feats, 1).reshape(N, -1, 1, 1)


# ---- registry -------------------------------------------------------------------------------------------------------

MINE = {
    "Adder2d_TRT": ["weights", "nbWeights", "nbInputChannels", "filterSize", "nbFilters", "stride", "padding",
                    "int8Scale", "outputScale", "outputChannelScale", "outputChannelShift"],
    "L2Norm_Helper_TRT": ["op_type", "eps"],
    "SPP_TRT": ["pool_list", "pool_type"],
    "LReLU_TRT": ["negSlope"],
    "Clip_TRT": ["clipMin", "clipMax"],
    "ResizeNearest_TRT": ["scale"],
    "InstanceNormalization_TRT": ["epsilon", "scales", "bias", "relu", "alpha"],
    "Reorg_TRT": ["stride"],
}


def test_creators_registered_with_fields():
    listed = {(c.name, c.plugin_version, c.plugin_namespace) for c in trt.get_plugin_registry().plugin_creator_list}
    for name, fields in MINE.items():
        assert (name, "1", "") in listed
        c = creator(name)
        assert c.name == name and c.plugin_version == "1" and c.plugin_namespace == ""
        assert [f.name for f in c.field_names] == fields


# ---- Adder2d --------------------------------------------------------------------------------------------------------

ADDER_CASES = [  # N, C, H, W, F, k, stride, padding
    (1, 1, 28, 28, 20, 5, 1, 0),   # AdderNet-MNIST layer 1
    (64, 20, 12, 12, 50, 5, 1, 0),  # AdderNet-MNIST layer 2, batch 64
    (64, 1, 28, 28, 20, 5, 1, 0),
    (1, 20, 12, 12, 50, 5, 1, 0),
    (3, 3, 7, 9, 7, 3, 1, 1),
    (2, 4, 11, 13, 13, 3, 2, 1),
    (2, 5, 17, 6, 11, 4, 2, 0),
    (1, 2, 5, 5, 1, 5, 1, 2),     # padding on every side of a single window
    (4, 2, 3, 3, 2, 3, 1, 3),     # padding >= kernel: outputs made only of |w|
    (2, 3, 9, 10, 6, 1, 3, 0),    # 1x1, stride 3
    (2, 6, 19, 23, 9, 3, 2, 1),   # odd sizes, a partial last column chunk
]


@pytest.mark.parametrize("N,C,H,W,F,k,s,p", ADDER_CASES)
def test_adder2d_matches_numpy(N, C, H, W, F, k, s, p):
    rng = np.random.default_rng(N * 1000 + C * 100 + H + F + k + s + p)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((F, C, k, k)).astype(np.float32)
    y = run_plugin(plugin("Adder2d_TRT", "adder", **adder_fields(w, s, p)), x)
    ref = adder_ref(x, w, s, p)
    assert y.shape == ref.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=adder_tol(x, w))


@pytest.mark.parametrize("s,p", [(1, 0), (1, 1), (2, 1), (2, 0)])
def test_adder2d_matches_torch_unfold(s, p):
    rng = np.random.default_rng(7 + s + p)
    x = rng.uniform(0, 1, (3, 4, 10, 9)).astype(np.float32)  # image-like inputs
    w = (rng.standard_normal((10, 4, 3, 3)) * 0.3).astype(np.float32)
    y = run_plugin(plugin("Adder2d_TRT", "adder", **adder_fields(w, s, p)), x)
    np.testing.assert_allclose(y, adder_torch(x, w, s, p), rtol=1e-5, atol=adder_tol(x, w))


def test_adder2d_padding_contributes_abs_w():
    # a zero input: every output is -sum|w| over the window, padding included
    w = np.array([[[[1.0, -2.0], [3.0, -4.0]]]], np.float32)
    y = run_plugin(plugin("Adder2d_TRT", "adder", **adder_fields(w, 1, 1)), np.zeros((2, 1, 2, 2), np.float32))
    np.testing.assert_array_equal(y, np.full((2, 1, 3, 3), -10.0, np.float32))


def test_adder2d_nb_input_channels_optional():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    p = plugin("Adder2d_TRT", weights=w, filterSize=np.int32(3), nbFilters=np.int32(4))  # C inferred: 108/(4*9)
    np.testing.assert_allclose(run_plugin(p, x), adder_ref(x, w, 1, 0), rtol=1e-5, atol=adder_tol(x, w))


def test_adder2d_reference_path_matches_numpy(tmp_path):
    """TRTL_CPU_MASK=0 hides AVX2, so the plain reference loop runs; same cases as the optimized path."""
    cases = [(1, 1, 28, 28, 20, 5, 1, 0), (2, 4, 11, 13, 13, 3, 2, 1), (4, 2, 3, 3, 2, 3, 1, 3), (3, 3, 7, 9, 7, 3, 1, 1)]
    rng = np.random.default_rng(11)
    for i, (N, C, H, W, F, k, s, p) in enumerate(cases):
        np.save(tmp_path / f"x{i}.npy", rng.standard_normal((N, C, H, W)).astype(np.float32))
        np.save(tmp_path / f"w{i}.npy", rng.standard_normal((F, C, k, k)).astype(np.float32))
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {ROOT!r}); sys.path.insert(0, {HERE!r})
        import trtlite as trt
        assert "avx2" not in trt.cpu_features()
        import test_plugins_builtin_a as t
        trt.init_libnvinfer_plugins(None, "")
        for i, (N, C, H, W, F, k, s, p) in enumerate({cases!r}):
            x = np.load({str(tmp_path)!r} + f"/x{{i}}.npy"); w = np.load({str(tmp_path)!r} + f"/w{{i}}.npy")
            y = t.run_plugin(t.plugin("Adder2d_TRT", "adder", **t.adder_fields(w, s, p)), x)
            np.save({str(tmp_path)!r} + f"/y{{i}}.npy", y)
    """)
    env = dict(os.environ, TRTL_CPU_MASK="0")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    for i, (N, C, H, W, F, k, s, p) in enumerate(cases):
        x, w = np.load(tmp_path / f"x{i}.npy"), np.load(tmp_path / f"w{i}.npy")
        # the reference sums |x - w| directly: accurate to float32 rounding of the running sum
        np.testing.assert_allclose(np.load(tmp_path / f"y{i}.npy"), adder_ref(x, w, s, p), rtol=1e-5, atol=1e-4)


def test_adder2d_implicit_batch_trt7():
    """TensorRT 7 style: create_network() without flags, CHW inputs, build_cuda_engine, execute(batch, bindings)."""
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((20, 1, 5, 5)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((8, 20, 3, 3)).astype(np.float32) * 0.2
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (1, 28, 28))
    # unknown fields (the original AdderNet plugin's input-size fields) are ignored with a warning
    l1 = net.add_plugin_v2(inputs=[x], plugin=plugin("Adder2d_TRT", "adder1", nInputHeight=np.int32(28),
                                                     nInputWidth=np.int32(28), **adder_fields(w1)))
    l2 = net.add_plugin_v2(inputs=[l1.get_output(0)], plugin=plugin("Adder2d_TRT", "adder2", **adder_fields(w2, 2, 1)))
    assert tuple(l1.get_output(0).shape) == (20, 24, 24) and tuple(l2.get_output(0).shape) == (8, 12, 12)
    l2.get_output(0).name = "y"
    net.mark_output(l2.get_output(0))
    builder.max_batch_size = 8
    engine = builder.build_cuda_engine(net)
    assert engine.has_implicit_batch_dimension and engine.max_batch_size == 8
    ctx = engine.create_execution_context()
    for batch in (1, 5):
        xv = rng.uniform(0, 1, (batch, 1, 28, 28)).astype(np.float32)
        y = np.full((batch, 8, 12, 12), 77, np.float32)
        assert ctx.execute(batch, [xv, y]) in (None, True)
        ref = adder_ref(adder_ref(xv, w1, 1, 0).astype(np.float32), w2, 2, 1)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


def test_adder2d_dynamic_shapes_one_engine():
    """-1 batch/H/W at build time propagate through output_desc; one context runs several shapes."""
    rng = np.random.default_rng(12)
    w = rng.standard_normal((7, 3, 3, 3)).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (-1, 3, -1, -1))
    layer = net.add_plugin_v2([x], plugin("Adder2d_TRT", "adder", **adder_fields(w, 2, 1)))
    assert tuple(layer.get_output(0).shape) == (-1, 7, -1, -1)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 3, 3, 3), (4, 3, 16, 16), (8, 3, 33, 33))
    config.add_optimization_profile(prof)
    ctx = builder.build_engine(net, config).create_execution_context()
    for shape in [(4, 3, 16, 16), (1, 3, 3, 3), (8, 3, 33, 20), (3, 3, 9, 31)]:
        xv = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(ctx.infer({"x": xv})["y"], adder_ref(xv, w, 2, 1), rtol=1e-5,
                                   atol=adder_tol(xv, w))


def test_adder2d_unknown_field_warns():
    log = Capture()
    trt.init_libnvinfer_plugins(log, "")
    w = np.ones((2, 1, 3, 3), np.float32)
    creator("Adder2d_TRT").create_plugin("adder_warn", fc(nInputHeight=np.int32(28), **adder_fields(w)))
    assert any(s == trt.Logger.WARNING and "nInputHeight" in m and "Adder2d_TRT" in m for s, m in log.messages)


W233 = np.ones((2, 3, 3, 3), np.float32)  # F=2, C=3, k=3: 54 weights


@pytest.mark.parametrize("kv,exc,match", [
    (dict(filterSize=np.int32(3), nbFilters=np.int32(2)), trt.InvalidArgumentError, "weights"),
    (dict(weights=W233, nbFilters=np.int32(2)), trt.InvalidArgumentError, "filterSize"),
    (dict(weights=W233, filterSize=np.int32(3)), trt.InvalidArgumentError, "nbFilters"),
    (dict(weights=(W233.ravel().astype(np.float64), trt.PluginFieldType.FLOAT64), filterSize=np.int32(3),
          nbFilters=np.int32(2)), trt.InvalidArgumentError, "field 'weights' must be FLOAT32"),
    (dict(weights=W233, filterSize=np.float32(3), nbFilters=np.int32(2)), trt.InvalidArgumentError,
     "field 'filterSize' must be INT32"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(2), nbInputChannels=np.int32(4)),
     trt.PluginError, "field 'weights' has 54 values"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(4)), trt.PluginError, "field 'weights' has 54"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(2), nbWeights=np.int32(50)), trt.PluginError,
     "field 'nbWeights' is 50"),
    (dict(weights=W233, filterSize=np.int32(0), nbFilters=np.int32(2)), trt.PluginError, "field 'filterSize'"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(-2)), trt.PluginError, "field 'nbFilters'"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(2), nbInputChannels=np.int32(0)),
     trt.PluginError, "field 'nbInputChannels' must be >= 1"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(2), stride=np.int32(0)), trt.PluginError,
     "field 'stride'"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(2), padding=np.int32(-1)), trt.PluginError,
     "field 'padding'"),
    (dict(weights=W233, filterSize=np.int32(3), nbFilters=np.int32(2), stride=(np.zeros(0, np.int32), I32)),
     trt.Error, "stride"),
])
def test_adder2d_field_errors(kv, exc, match):
    with pytest.raises(exc, match=match) as ei:
        creator("Adder2d_TRT").create_plugin("bad_adder", fc(**kv))
    assert "Adder2d_TRT" in str(ei.value) and "bad_adder" in str(ei.value)


@pytest.mark.parametrize("shape,match", [((1, 4, 8, 8), "4 channels but the filters have nbInputChannels = 3"),
                                         ((1, 3, 2, 8), "smaller than filterSize 3"),
                                         ((3, 8, 8), "4-D")])
def test_adder2d_input_shape_errors_name_layer(shape, match):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, shape)
    with pytest.raises(trt.PluginError, match=match) as ei:
        layer = net.add_plugin_v2([x], plugin("Adder2d_TRT", "adder", **adder_fields(W233)))
        layer.name = "my_adder"
        net.mark_output(layer.get_output(0))
        builder.build_engine(net, builder.create_builder_config())
    assert "Adder2d_TRT" in str(ei.value)


# ---- elementwise plugins --------------------------------------------------------------------------------------------

def test_lrelu_and_clip():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 7, 9)).astype(np.float32)
    y = run_plugin(plugin("LReLU_TRT", negSlope=np.float32(0.1)), x)
    assert_close(y, np.where(x >= 0, x, np.float32(0.1) * x.astype(np.float64)), rtol=1e-6, atol=0)
    y = run_plugin(plugin("Clip_TRT", clipMin=np.float32(-0.5), clipMax=np.float32(0.75)), x[0])
    assert_close(y, np.clip(x[0].astype(np.float64), -0.5, 0.75), rtol=0, atol=0)


@pytest.mark.parametrize("op", [0, 1, 2])
def test_l2norm_helper(op):
    rng = np.random.default_rng(op)
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    if op:
        x = np.abs(x) + np.float32(1e-3)
    x.flat[:4] = [0.0, 1e-5, -1.0, 2.0] if op == 0 else [1e-3, 4.0, 1.0, 0.25]
    y = run_plugin(plugin("L2Norm_Helper_TRT", op_type=np.int32(op), eps=np.float32(1e-4)), x)
    xd = x.astype(np.float64)
    ref = [lambda: np.maximum(xd, np.float64(np.float32(1e-4))), lambda: 1 / np.sqrt(xd), lambda: np.sqrt(xd)][op]()
    assert_close(y, ref, rtol=1e-6, atol=0)


def test_l2norm_helper_default_eps():
    x = np.array([[0.0, -3.0, 5e-13, 2.0]], np.float32)
    y = run_plugin(plugin("L2Norm_Helper_TRT", op_type=np.int32(0)), x)
    np.testing.assert_array_equal(y, np.maximum(x, np.float32(1e-12)))


def test_instance_norm():
    rng = np.random.default_rng(2)
    C = 5
    x = (rng.standard_normal((3, C, 7, 9)) * 0.05 + 10).astype(np.float32)  # |mean| >> std
    scales = rng.standard_normal(C).astype(np.float32)
    bias = rng.standard_normal(C).astype(np.float32)
    y = run_plugin(plugin("InstanceNormalization_TRT", epsilon=np.float32(1e-5), scales=scales, bias=bias), x)
    xd = x.astype(np.float64)
    m, v = xd.mean((2, 3), keepdims=True), xd.var((2, 3), keepdims=True)
    ref = (xd - m) / np.sqrt(v + np.float64(np.float32(1e-5))) * scales[:, None, None] + bias[:, None, None]
    assert_close(y, ref, rtol=1e-5, atol=1e-5)
    # 5-D input: normalized over D, H, W
    x5 = rng.standard_normal((2, C, 3, 4, 5)).astype(np.float32)
    y5 = run_plugin(plugin("InstanceNormalization_TRT", scales=scales, bias=bias), x5)
    xd = x5.astype(np.float64)
    m, v = xd.mean((2, 3, 4), keepdims=True), xd.var((2, 3, 4), keepdims=True)
    assert_close(y5, (xd - m) / np.sqrt(v + 1e-5) * scales[:, None, None, None] + bias[:, None, None, None],
                 rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("relu,alpha", [(1, 0.1), (1, 0.0), (7, -0.5), (0, 0.5)])
def test_instance_norm_leaky_relu(relu, alpha):
    """TensorRT 8's `relu`/`alpha` fields: a leaky ReLU after the affine step when relu != 0."""
    rng = np.random.default_rng(3)
    C = 4
    x = rng.standard_normal((2, C, 5, 6)).astype(np.float32)
    scales = rng.standard_normal(C).astype(np.float32)
    bias = rng.standard_normal(C).astype(np.float32)
    p = plugin("InstanceNormalization_TRT", epsilon=np.float32(1e-5), scales=scales, bias=bias, relu=np.int32(relu),
               alpha=np.float32(alpha))
    xd = x.astype(np.float64)
    m, v = xd.mean((2, 3), keepdims=True), xd.var((2, 3), keepdims=True)
    ref = (xd - m) / np.sqrt(v + np.float64(np.float32(1e-5))) * scales[:, None, None] + bias[:, None, None]
    assert (ref < 0).any() and (ref > 0).any()  # both sides of the activation are exercised
    if relu:
        ref = np.where(ref < 0, np.float64(np.float32(alpha)) * ref, ref)
    assert_close(run_plugin(p, x), ref, rtol=1e-5, atol=1e-5)
    # the fields travel with the plugin (serialize / plans)
    again = creator("InstanceNormalization_TRT").deserialize_plugin("again", p.serialize())
    assert_close(run_plugin(again, x), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scale,shape", [(2.0, (2, 3, 5, 7)), (1.5, (1, 2, 5, 6)), (0.5, (2, 4, 6)),
                                         (3.0, (3, 4))])
def test_resize_nearest(scale, shape):
    rng = np.random.default_rng(int(scale * 10))
    x = rng.standard_normal(shape).astype(np.float32)
    y = run_plugin(plugin("ResizeNearest_TRT", scale=np.float32(scale)), x)
    s32 = np.float32(scale)
    H, W = shape[-2:]
    OH, OW = int(np.float32(H) * s32), int(np.float32(W) * s32)
    iy = np.minimum(np.floor(np.arange(OH, dtype=np.float32) / s32).astype(int), H - 1)
    ix = np.minimum(np.floor(np.arange(OW, dtype=np.float32) / s32).astype(int), W - 1)
    assert_close(y, x[..., iy, :][..., ix].astype(np.float64), rtol=0, atol=0)


@pytest.mark.parametrize("N,C,H,W,s", [(2, 8, 6, 4, 2), (1, 18, 9, 6, 3), (3, 4, 2, 2, 2), (2, 64, 8, 6, 2),
                                       (2, 5, 3, 4, 1)])
def test_reorg_matches_darknet(N, C, H, W, s):
    rng = np.random.default_rng(C + H + s)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    kv = {} if s == 2 else dict(stride=np.int32(s))  # stride defaults to 2
    y = run_plugin(plugin("Reorg_TRT", **kv), x)
    assert y.shape == (N, C * s * s, H // s, W // s)
    np.testing.assert_array_equal(y.ravel(), reorg_cpu(x, W, H, C, N, s, forward=0))


# ---- SPP ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("avg", [0, 1])
def test_spp_matches_numpy_and_torch(avg):
    import torch
    rng = np.random.default_rng(avg)
    x = rng.standard_normal((3, 4, 13, 7)).astype(np.float32)
    y = run_plugin(plugin("SPP_TRT", pool_list=np.array([1, 2, 4], np.int32), pool_type=np.int32(avg)), x)
    ref = spp_ref(x, [1, 2, 4], avg)
    assert_close(y, ref, rtol=1e-6, atol=1e-6)
    pool = torch.nn.functional.adaptive_avg_pool2d if avg else torch.nn.functional.adaptive_max_pool2d
    t = torch.cat([pool(torch.from_numpy(x).double(), n).reshape(3, -1) for n in (1, 2, 4)], 1).numpy()
    np.testing.assert_allclose(ref.reshape(3, -1), t, rtol=1e-12)


def test_spp_dynamic_hw_one_engine_several_sizes():
    """One engine (optimization profile over H, W), one context, inputs of several sizes, then a FC layer."""
    rng = np.random.default_rng(9)
    C, levels = 3, np.array([1, 2, 3], np.int32)
    feats = C * int((levels ** 2).sum())
    fcw = rng.standard_normal((4, feats)).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, C, -1, -1))
    spp = net.add_plugin_v2([x], plugin("SPP_TRT", "spp", pool_list=levels))
    assert tuple(spp.get_output(0).shape) == (2, feats, 1, 1)
    fcl = net.add_fully_connected(spp.get_output(0), 4, fcw)
    fcl.get_output(0).name = "y"
    net.mark_output(fcl.get_output(0))
    config = builder.create_builder_config()
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (2, C, 3, 3), (2, C, 16, 16), (2, C, 40, 40))
    config.add_optimization_profile(prof)
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(
        builder.build_serialized_network(net, config))
    ctx = engine.create_execution_context()
    for H, W in [(16, 16), (3, 3), (40, 17), (7, 29), (16, 16)]:
        xv = rng.standard_normal((2, C, H, W)).astype(np.float32)
        y = ctx.infer({"x": xv})["y"]
        ref = spp_ref(xv, levels, 0).reshape(2, feats) @ fcw.T.astype(np.float64)
        assert_close(y.reshape(2, 4), ref, rtol=1e-5, atol=1e-5)


# ---- field errors of the small plugins ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,kv,exc,match", [
    ("LReLU_TRT", {}, trt.InvalidArgumentError, "required field 'negSlope'"),
    ("LReLU_TRT", dict(negSlope=np.int32(1)), trt.InvalidArgumentError, "field 'negSlope' must be FLOAT32"),
    ("Clip_TRT", dict(clipMin=np.float32(0)), trt.InvalidArgumentError, "required field 'clipMax'"),
    ("Clip_TRT", dict(clipMin=np.float32(1), clipMax=np.float32(0)), trt.PluginError,
     "field 'clipMin' .* must be <= field 'clipMax'"),
    ("L2Norm_Helper_TRT", dict(eps=np.float32(1e-6)), trt.InvalidArgumentError, "required field 'op_type'"),
    ("L2Norm_Helper_TRT", dict(op_type=np.int32(3)), trt.PluginError, "field 'op_type' must be 0"),
    ("L2Norm_Helper_TRT", dict(op_type=np.int32(0), eps=np.float32(-1)), trt.PluginError, "field 'eps'"),
    ("SPP_TRT", {}, trt.InvalidArgumentError, "required field 'pool_list'"),
    ("SPP_TRT", dict(pool_list=np.array([1, 0], np.int32)), trt.PluginError, r"field 'pool_list'\[1\] = 0"),
    ("SPP_TRT", dict(pool_list=np.array([1.0], np.float32)), trt.InvalidArgumentError, "must be INT32"),
    ("SPP_TRT", dict(pool_list=np.array([2], np.int32), pool_type=np.int32(2)), trt.PluginError, "field 'pool_type'"),
    ("ResizeNearest_TRT", {}, trt.InvalidArgumentError, "required field 'scale'"),
    ("ResizeNearest_TRT", dict(scale=np.float32(0)), trt.PluginError, "field 'scale' must be > 0"),
    ("InstanceNormalization_TRT", dict(scales=np.ones(3, np.float32)), trt.InvalidArgumentError,
     "required field 'bias'"),
    ("InstanceNormalization_TRT", dict(scales=np.ones(3, np.float32), bias=np.ones(2, np.float32)), trt.PluginError,
     "field 'bias' has 2 values but field 'scales' has 3"),
    ("InstanceNormalization_TRT", dict(scales=np.ones(2, np.float32), bias=np.ones(2, np.float32),
                                       epsilon=np.float32(-1)), trt.PluginError, "field 'epsilon'"),
    ("InstanceNormalization_TRT", dict(scales=np.ones(2, np.float32), bias=np.ones(2, np.float32), relu=np.int32(1),
                                       alpha=np.float32(np.nan)), trt.PluginError, "field 'alpha' must be finite"),
    ("InstanceNormalization_TRT", dict(scales=np.ones(2, np.float32), bias=np.ones(2, np.float32),
                                       relu=np.float32(1)), trt.InvalidArgumentError, "field 'relu' must be INT32"),
    ("Reorg_TRT", dict(stride=np.int32(0)), trt.PluginError, "field 'stride'"),
    ("Reorg_TRT", dict(stride=np.float32(2)), trt.InvalidArgumentError, "field 'stride' must be INT32"),
])
def test_field_errors(name, kv, exc, match):
    with pytest.raises(exc, match=match) as ei:
        creator(name).create_plugin("bad_layer", fc(**kv))
    assert name in str(ei.value) and "bad_layer" in str(ei.value)


@pytest.mark.parametrize("name,kv,shape,match", [
    ("InstanceNormalization_TRT", dict(scales=np.ones(3, np.float32), bias=np.ones(3, np.float32)), (2, 4, 5, 5),
     "4 channels but fields 'scales' and 'bias' have 3"),
    ("InstanceNormalization_TRT", dict(scales=np.ones(3, np.float32), bias=np.ones(3, np.float32)), (2, 3),
     "rank >= 3"),
    ("Reorg_TRT", {}, (1, 4, 5, 6), "not divisible by field 'stride'"),
    ("Reorg_TRT", {}, (1, 6, 4, 4), "divisible by stride"),
    ("SPP_TRT", dict(pool_list=np.array([2], np.int32)), (2, 3, 4), "4-D"),
    ("ResizeNearest_TRT", dict(scale=np.float32(0.1)), (1, 2, 4, 4), "empty output"),
])
def test_input_shape_errors(name, kv, shape, match):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, shape)
    with pytest.raises(trt.PluginError, match=match) as ei:
        layer = net.add_plugin_v2([x], plugin(name, "shape_layer", **kv))
        net.mark_output(layer.get_output(0))
        builder.build_engine(net, builder.create_builder_config())
    assert name in str(ei.value)


# ---- serialization --------------------------------------------------------------------------------------------------

def test_engine_with_plugins_serializes_and_reloads(tmp_path):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((8, 2, 3, 3)).astype(np.float32) * 0.5
    C = 8
    sc, b = rng.standard_normal(C).astype(np.float32), rng.standard_normal(C).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    t = net.add_input("x", trt.float32, (2, 2, 12, 12))
    chain = [plugin("Adder2d_TRT", "adder", **adder_fields(w, 1, 1)),
             plugin("InstanceNormalization_TRT", "inorm", epsilon=np.float32(1e-4), scales=sc, bias=b),
             plugin("LReLU_TRT", "lrelu", negSlope=np.float32(0.2)),
             plugin("Clip_TRT", "clip", clipMin=np.float32(-1.5), clipMax=np.float32(2.0)),
             plugin("ResizeNearest_TRT", "up", scale=np.float32(2.0)),
             plugin("Reorg_TRT", "reorg"),
             plugin("L2Norm_Helper_TRT", "l2", op_type=np.int32(0), eps=np.float32(0.25)),
             plugin("SPP_TRT", "spp", pool_list=np.array([1, 3], np.int32), pool_type=np.int32(1))]
    for p in chain:
        t = net.add_plugin_v2([t], p).get_output(0)
    t.name = "y"
    net.mark_output(t)
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    path = tmp_path / "plugins_a.plan"
    path.write_bytes(bytes(plan))
    x = rng.standard_normal((2, 2, 12, 12)).astype(np.float32)

    # reference chain in float64
    r = adder_ref(x, w, 1, 1)
    m, v = r.mean((2, 3), keepdims=True), r.var((2, 3), keepdims=True)
    r = (r - m) / np.sqrt(v + np.float64(np.float32(1e-4))) * sc[:, None, None] + b[:, None, None]
    r = np.clip(np.where(r >= 0, r, np.float64(np.float32(0.2)) * r), -1.5, 2.0)
    r = r.repeat(2, 2).repeat(2, 3)
    r = reorg_cpu(r, 24, 24, C, 2, 2, 0).reshape(2, C * 4, 12, 12)
    r = spp_ref(np.maximum(r, 0.25), [1, 3], 1)

    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(path.read_bytes())
    y = engine.create_execution_context().infer({"x": x})["y"]
    assert_close(y, r, rtol=1e-4, atol=1e-4)
    # and again from the re-serialized engine, in a fresh process (creators looked up by name)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {ROOT!r})
        import trtlite as trt
        trt.init_libnvinfer_plugins(None, "")
        e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(open({str(path)!r}, "rb").read())
        np.save({str(tmp_path / "y2.npy")!r}, e.create_execution_context().infer({{"x": np.load({str(tmp_path)!r} + "/x.npy")}})["y"])
    """)
    np.save(tmp_path / "x.npy", x)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y2.npy"), y)


def test_plugin_serialize_deserialize_round_trip():
    rng = np.random.default_rng(8)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    x = rng.standard_normal((2, 2, 7, 8)).astype(np.float32)
    c = creator("Adder2d_TRT")
    p = c.create_plugin("adder", fc(weights=w, filterSize=np.int32(3), nbFilters=np.int32(3), stride=np.int32(2),
                                    padding=np.int32(1)))
    again = c.deserialize_plugin("adder_copy", p.serialize())
    assert again.plugin_type == "Adder2d_TRT"
    np.testing.assert_array_equal(run_plugin(again, x), run_plugin(p, x))


# ---- external plugin library ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scaled_tanh_lib():
    r = subprocess.run(["make", "-s", "build/plugins/libscaled_tanh_plugin.so"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    path = os.path.join(ROOT, "build", "plugins", "libscaled_tanh_plugin.so")
    assert os.path.exists(path)
    trt.get_plugin_registry().load_library(path)
    return path


def test_external_library_plugin_in_network(scaled_tanh_lib):
    c = creator("ScaledTanh_EXAMPLE")
    assert [f.name for f in c.field_names] == ["alpha", "beta"]
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32) * 3
    y = run_plugin(plugin("ScaledTanh_EXAMPLE", alpha=np.float32(1.5), beta=np.float32(0.5)), x)
    assert_close(y, 1.5 * np.tanh(0.5 * x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    y = run_plugin(plugin("ScaledTanh_EXAMPLE"), x)  # defaults alpha = beta = 1
    assert_close(y, np.tanh(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    # loading twice keeps one registration
    trt.get_plugin_registry().load_library(scaled_tanh_lib)
    names = [k.name for k in trt.get_plugin_registry().plugin_creator_list]
    assert names.count("ScaledTanh_EXAMPLE") == 1


def test_load_library_errors(tmp_path):
    reg = trt.get_plugin_registry()
    with pytest.raises(trt.NotFoundError, match="no_such_plugin_lib.so"):
        reg.load_library(str(tmp_path / "no_such_plugin_lib.so"))
    not_a_plugin = trt._C.__file__  # a shared object that is not a plugin library
    with pytest.raises(trt.PluginError, match="does not export trtl_get_plugin_creators"):
        reg.load_library(not_a_plugin)
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"this is not an ELF file")
    with pytest.raises(trt.Error, match="junk.so"):
        reg.load_library(str(junk))
