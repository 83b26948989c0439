"""AdderNet through trtlite (examples/addernet/demo.py), TensorRT 7 style, checked against the PyTorch reference.

* The network built by the demo's ``populate_network`` (Adder2d_TRT plugin -> scale (BatchNorm) -> max pool, twice,
  fully connected -> ReLU -> fully connected -> softmax) on seeded random weights, at batch 1 and 64, against
  examples/addernet/model.py's AdderNetMnist evaluated in float64: probabilities to 1e-4, logits relatively.
* Smaller adder networks (adder 1->6 k3, BN, pool, adder 6->8 k3, BN, FC, softmax) with padding 0/1 and
  stride 1/2, through the demo's ``add_adder2d`` / ``add_batch_norm`` helpers.
* Every network both in this process (``build_cuda_engine`` + ``execute``) and from its serialized plan loaded in a
  new process after ``init_libnvinfer_plugins``; loading a plan in a new process without registering the built-in
  plugins raises trt.PluginError naming Adder2d_TRT and saying how to register it.
* The creator's warning for the unknown fields nInputHeight / nInputWidth.
* The shipped checkpoint on 256 Fashion-MNIST test images, and the demo on 200 of them with few timing runs
  (skipped without the dataset).

Tolerances: the plugin's AVX2 path evaluates |x - w| as x + w - 2 min(x, w) in float32, so an adder output's error
scales with the window's sum of |x| + |w| rather than with the result (see adder_tol in test_plugins_builtin_a.py).
Logits are therefore compared relative to their largest magnitude; softmax outputs with atol 1e-4.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import demo_common as common  # noqa: E402
from demo_common import fashion_mnist  # noqa: E402

trt = common.import_trtlite()
addernet = common.load_example("addernet")
demo = common.load_module("addernet_demo", os.path.join(common.EXAMPLES, "addernet", "demo.py"))

PROB_ATOL = 1e-4
LOGIT_RTOL = 2e-5        # of max |logit|: float32 rounding through two adder layers (K = 25 and 500 taps)
BATCHES = (1, 64)
VARIANTS = [(1, 0), (1, 1), (2, 0), (2, 1)]        # (stride, padding) of both adder layers of the small net
LOGGER = trt.Logger(trt.Logger.ERROR)


class Capture(trt.ILogger):
    def __init__(self):
        super().__init__()
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


@pytest.fixture(scope="module", autouse=True)
def builtins():
    torch.set_num_threads(1)      # the references are small; one thread does not collapse on a busy machine
    assert trt.init_libnvinfer_plugins(LOGGER, "")


# ----------------------------------------------------------------------------------------------
# Models and references
# ----------------------------------------------------------------------------------------------

def calibrate_bn(model, x, seed):
    """Random affine BatchNorm parameters and running statistics taken from a batch (so BN normalizes)."""
    g = torch.Generator().manual_seed(seed)
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.copy_(0.5 + torch.rand(bn.num_features, generator=g))
            bn.bias.copy_(0.3 * torch.randn(bn.num_features, generator=g))
            bn.momentum = None          # cumulative average: one batch sets the statistics
            bn.reset_running_stats()
        model.train()
        model(torch.from_numpy(x))
    return model.eval()


class SmallAdderNet(nn.Module):
    """adder 1->6 k3 -> BN -> maxpool 2/2 -> adder 6->8 k3 -> BN -> fc -> softmax (stride, padding of the adders)."""

    def __init__(self, stride, padding):
        super().__init__()
        self.adder1 = addernet.Adder2d(1, 6, 3, stride=stride, padding=padding)
        self.bn1 = nn.BatchNorm2d(6, eps=addernet.BN_EPS)
        self.adder2 = addernet.Adder2d(6, 8, 3, stride=stride, padding=padding)
        self.bn2 = nn.BatchNorm2d(8, eps=addernet.BN_EPS)
        h = (28 + 2 * padding - 3) // stride + 1
        h = h // 2
        h = (h + 2 * padding - 3) // stride + 1
        self.fc = nn.Linear(8 * h * h, 10)

    def logits(self, x):
        x = F.max_pool2d(self.bn1(self.adder1(x)), kernel_size=2, stride=2)
        return self.fc(torch.flatten(self.bn2(self.adder2(x)), 1))

    def forward(self, x):
        return F.softmax(self.logits(x), dim=1)


def small_weights(model):
    w = {k: np.ascontiguousarray(v.detach().numpy(), dtype=np.float32) for k, v in model.state_dict().items()}
    w["bn_eps"] = np.array([addernet.BN_EPS], np.float32)
    return w


def populate_small(network, w, stride, padding):
    data = network.add_input(name=demo.INPUT_NAME, dtype=trt.float32, shape=demo.INPUT_SHAPE)
    a1 = demo.add_adder2d(network, data, w["adder1.weight"], stride=stride, padding=padding, name="adder1")
    bn1 = demo.add_batch_norm(network, a1.get_output(0), w, "bn1")
    pool = demo.add_max_pool(network, bn1.get_output(0), "pool1")
    a2 = demo.add_adder2d(network, pool.get_output(0), w["adder2.weight"], stride=stride, padding=padding,
                          name="adder2")
    bn2 = demo.add_batch_norm(network, a2.get_output(0), w, "bn2")
    fc = network.add_fully_connected(input=bn2.get_output(0), num_outputs=10, kernel=w["fc.weight"],
                                     bias=w["fc.bias"])
    sm = network.add_softmax(input=fc.get_output(0))
    sm.get_output(0).name = demo.OUTPUT_NAME
    network.mark_output(tensor=sm.get_output(0))


def reference(model, x):
    """(probabilities, logits) of the PyTorch model in float64."""
    m64 = model.double()
    try:
        with torch.inference_mode():
            logits = m64.logits(torch.from_numpy(x).double())
            return F.softmax(logits, dim=1).numpy(), logits.numpy()
    finally:
        model.float()


def build_trt7(populate, max_batch=64):
    """build_cuda_engine of an implicit-batch network; the softmax input is marked as a second output, "logits"."""
    with trt.Builder(LOGGER) as builder, builder.create_network() as network:
        builder.max_batch_size = max_batch
        builder.max_workspace_size = 1 << 28
        populate(network)
        softmax = [network.get_layer(i) for i in range(network.num_layers)
                   if isinstance(network.get_layer(i), trt.ISoftMaxLayer)]
        assert len(softmax) == 1
        logits = softmax[0].get_input(0)
        logits.name = "logits"
        network.mark_output(logits)
        engine = builder.build_cuda_engine(network)
        assert engine is not None and engine.has_implicit_batch_dimension
        return engine


def execute(engine, x):
    """context.execute(batch_size, bindings) -> {"prob": (N, 10), "logits": (N, 10)}."""
    context = engine.create_execution_context()
    x = np.ascontiguousarray(x, np.float32)
    n = len(x)
    bindings = [0] * engine.num_bindings
    bindings[engine.get_binding_index(demo.INPUT_NAME)] = x.ctypes.data
    outs = {}
    for name in (demo.OUTPUT_NAME, "logits"):
        i = engine.get_binding_index(name)
        assert not engine.binding_is_input(i) and tuple(engine.get_binding_shape(i)) == (10, 1, 1)
        outs[name] = np.full((n, 10, 1, 1), np.nan, np.float32)
        bindings[i] = outs[name].ctypes.data
    assert context.execute(batch_size=n, bindings=bindings)
    return {k: v.reshape(n, 10) for k, v in outs.items()}


def assert_matches(out, ref_prob, ref_logits):
    prob, logits = out[demo.OUTPUT_NAME], out["logits"]
    assert prob.shape == ref_prob.shape and np.isfinite(prob).all() and np.isfinite(logits).all()
    np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=LOGIT_RTOL * np.abs(ref_logits).max())
    np.testing.assert_allclose(prob, ref_prob, rtol=0, atol=PROB_ATOL)
    np.testing.assert_allclose(prob.sum(1), 1.0, atol=1e-5)
    top2 = np.sort(ref_prob, axis=1)[:, -2:]
    decisive = (top2[:, 1] - top2[:, 0]) > 2 * PROB_ATOL
    np.testing.assert_array_equal(prob.argmax(1)[decisive], ref_prob.argmax(1)[decisive])


# ----------------------------------------------------------------------------------------------
# Fixtures: every network, its in-process engine, its plan, and a new process that runs the plans
# ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def images():
    return np.random.RandomState(42).standard_normal((64,) + demo.INPUT_SHAPE).astype(np.float32)


@pytest.fixture(scope="module")
def nets(images):
    """{key: (torch model, weights, populate)} for the full AdderNet and the small variants."""
    torch.manual_seed(0)
    full = calibrate_bn(addernet.AdderNetMnist(), images, seed=1)
    with torch.no_grad():              # spread the logits so the softmax is not nearly uniform
        full.fc2.weight.mul_(12.0)
    wf = addernet.state_to_numpy(full)
    out = {"full": (full, wf, lambda net, w=wf: demo.populate_network(net, w))}
    for i, (s, p) in enumerate(VARIANTS):
        torch.manual_seed(10 + i)
        m = calibrate_bn(SmallAdderNet(s, p), images, seed=20 + i)
        with torch.no_grad():
            m.fc.weight.mul_(5.0)
        w = small_weights(m)
        out["s%dp%d" % (s, p)] = (m, w, lambda net, w=w, s=s, p=p: populate_small(net, w, s, p))
    return out


@pytest.fixture(scope="module")
def engines(nets):
    return {k: build_trt7(populate) for k, (_, _, populate) in nets.items()}


@pytest.fixture(scope="module")
def plans(engines, tmp_path_factory):
    d = tmp_path_factory.mktemp("addernet_plans")
    paths = {}
    for k, e in engines.items():
        paths[k] = str(d / (k + ".plan"))
        with open(paths[k], "wb") as f:
            f.write(e.serialize())
    return paths


def run_in_new_process(script, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)] + [str(a) for a in args],
                          capture_output=True, text=True, env=env, timeout=120)


NEW_PROCESS_RUN = """
    import sys, numpy as np
    import trtlite as trt
    assert trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")
    runtime = trt.Runtime(trt.Logger(trt.Logger.ERROR))
    x = np.load(sys.argv[1])
    results = {}
    for key, path in zip(sys.argv[3::2], sys.argv[4::2]):
        with open(path, "rb") as f:
            engine = runtime.deserialize_cuda_engine(f.read())
        context = engine.create_execution_context()
        for n in (1, 64):
            xb = np.ascontiguousarray(x[:n])
            bindings = [0] * engine.num_bindings
            bindings[engine.get_binding_index("data")] = xb.ctypes.data
            for name in ("prob", "logits"):
                out = np.full((n, 10, 1, 1), np.nan, np.float32)
                bindings[engine.get_binding_index(name)] = out.ctypes.data
                results["%s/%d/%s" % (key, n, name)] = out
            assert context.execute(batch_size=n, bindings=bindings)
    np.savez(sys.argv[2], **results)
"""


@pytest.fixture(scope="module")
def new_process_outputs(plans, images, tmp_path_factory):
    """Every plan loaded and run (batch 1 and 64) in one new process after init_libnvinfer_plugins."""
    d = tmp_path_factory.mktemp("addernet_new_process")
    np.save(d / "x.npy", images)
    args = [d / "x.npy", d / "out.npz"]
    for k, p in plans.items():
        args += [k, p]
    r = run_in_new_process(NEW_PROCESS_RUN, *args)
    assert r.returncode == 0, r.stderr
    with np.load(d / "out.npz") as f:
        return {k: f[k].reshape(-1, 10) for k in f.files}


@pytest.fixture(scope="module")
def references(nets, images):
    return {(k, n): reference(m, images[:n]) for k, (m, _, _) in nets.items() for n in BATCHES}


# ----------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------

def test_populate_network_structure(engines, nets):
    with trt.Builder(LOGGER) as builder, builder.create_network() as network:
        demo.populate_network(network, nets["full"][1])
        assert network.has_implicit_batch_dimension
        # class names: IPoolingLayer.type and IActivationLayer.type are the pooling / activation type, as in TensorRT
        network_layers = [type(network.get_layer(i)).__name__ for i in range(network.num_layers)]
        assert tuple(network.get_output(0).shape) == (10, 1, 1)
    assert network_layers == ["IPluginV2Layer", "IScaleLayer", "IPoolingLayer"] * 2 + [
        "IFullyConnectedLayer", "IActivationLayer", "IFullyConnectedLayer", "ISoftMaxLayer"]
    e = engines["full"]
    assert e.max_batch_size == 64
    assert e.binding_is_input(e.get_binding_index("data"))
    assert tuple(e.get_binding_shape(e.get_binding_index("data"))) == demo.INPUT_SHAPE


@pytest.mark.parametrize("batch", BATCHES)
def test_addernet_matches_torch(engines, references, images, batch):
    assert_matches(execute(engines["full"], images[:batch]), *references["full", batch])


@pytest.mark.parametrize("stride,padding", VARIANTS)
@pytest.mark.parametrize("batch", BATCHES)
def test_adder_variants_match_torch(engines, references, images, stride, padding, batch):
    key = "s%dp%d" % (stride, padding)
    assert_matches(execute(engines[key], images[:batch]), *references[key, batch])


@pytest.mark.parametrize("key", ["full"] + ["s%dp%d" % v for v in VARIANTS])
@pytest.mark.parametrize("batch", BATCHES)
def test_plan_in_new_process_matches_torch(new_process_outputs, engines, references, images, key, batch):
    out = {name: new_process_outputs["%s/%d/%s" % (key, batch, name)] for name in (demo.OUTPUT_NAME, "logits")}
    assert_matches(out, *references[key, batch])
    same = execute(engines[key], images[:batch])           # the plan runs the kernels the built engine ran
    for name in out:
        np.testing.assert_array_equal(out[name], same[name])


def test_plan_without_init_plugins_fails_in_new_process(plans):
    script = """
        import sys
        import trtlite as trt
        with open(sys.argv[1], "rb") as f:
            data = f.read()
        try:
            trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR)).deserialize_cuda_engine(data)
        except trt.PluginError as e:
            print("PluginError:", e)
            sys.exit(0)
        print("no PluginError")
        sys.exit(1)
    """
    r = run_in_new_process(script, plans["full"])
    assert r.returncode == 0, r.stdout + r.stderr
    msg = r.stdout
    assert "Adder2d_TRT" in msg
    assert "init_libnvinfer_plugins" in msg and "not registered" in msg


def test_unknown_plugin_fields_are_ignored_with_a_warning(nets):
    capture = Capture()
    try:
        trt.init_libnvinfer_plugins(capture, "")
        with trt.Builder(LOGGER) as builder, builder.create_network() as network:
            demo.populate_network(network, nets["full"][1])
    finally:
        trt.init_libnvinfer_plugins(LOGGER, "")
    warnings = [m for s, m in capture.messages if s == trt.Logger.WARNING and "unknown field" in m]
    for layer in ("adder1", "adder2"):
        for field in ("nInputHeight", "nInputWidth"):
            assert sum("'%s'" % layer in m and "'%s'" % field in m and "Adder2d_TRT" in m for m in warnings) == 1, \
                warnings
    assert len(warnings) == 4


def test_get_adder_creator():
    c = demo.get_adder_creator()
    assert c.name == "Adder2d_TRT" and c.plugin_version == "1"


needs_data = pytest.mark.skipif(
    not (fashion_mnist.available("test") and os.path.exists(addernet.CHECKPOINT)),
    reason="needs dataset-fashion-mnist (apt-get install dataset-fashion-mnist) and the AdderNet checkpoint")


@needs_data
def test_checkpoint_on_fashion_mnist():
    w = addernet.load_weights()
    model = addernet.model_from_weights(w)
    x, y = fashion_mnist.load("test", limit=256)
    ref = common.torch_predict(model, x)
    engine = demo.build_engine(w)
    runner = demo.AdderNetEngine(engine)
    out = demo.predict_batched(runner.infer, x, demo.BATCH)
    np.testing.assert_allclose(out, ref, rtol=0, atol=PROB_ATOL)
    np.testing.assert_array_equal(out.argmax(1), ref.argmax(1))
    assert (ref.argmax(1) == y).mean() > 0.75


@needs_data
def test_demo_small(tmp_path, capsys):
    try:
        rc = demo.main(["--limit", "200", "--runs", "5", "--runs64", "2", "--threads", "1",
                        "--plan", str(tmp_path / "addernet.plan")])
    finally:
        trt.init_libnvinfer_plugins(LOGGER, "")      # the demo made its logger the registry's
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "trtlite" in out and "PyTorch" in out and "same prediction on" in out
    assert out.count("ignoring unknown field") == 2      # shown once, not once per adder layer
