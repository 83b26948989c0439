"""Shared helpers for the layer tests: build a one-layer network, run it, compare with a numpy reference.

trtlite is imported lazily here so that tests/test_refs.py runs without it; the test_layers_*.py files import it
at the top, so they fail (not skip) when trtlite is broken.

Fixtures:
  rng                 numpy Generator seeded from the test id (reproducible, different per test)
  build_and_run       build_and_run(make, inputs, explicit=True, max_batch=None, ...) -> output array(s)
  build               the same, returning a Runner (engine + context) to run several times
                      Both are parametrized over two builder modes, so every layer test runs twice:
                        "opt": default optimization level, avg_timing_iterations = 0 (no timing: the first
                               applicable optimized kernel is taken, deterministically; fusion passes on);
                        "ref": builder_optimization_level = 0 (reference kernels only, no passes).
                      With timing on (the default) the kernel choice depends on measured times, so a test could
                      exercise a different kernel from run to run.  Implicit-batch networks are built with
                      TensorRT 7's build_cuda_engine in "opt" mode and build_engine(network, config) in "ref".
  expect_layer_error  expect_layer_error(make, exc, names, explicit=True): building must raise `exc` naming the layer
  new_network         new_network(explicit=True) -> Net (builder, network, config)
"""
import functools
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `import refs` under any import mode


def _trt():
    import trtlite
    return trtlite


RTOL = 1e-4
ATOL = 1e-5


def skip_if_mask_hides_nothing(mask):
    """Skips a rerun under TRTL_CPU_MASK=`mask` (hex) on a CPU that has no feature the mask hides (e.g. 1f, which
    hides AVX-512 / VNNI / AMX, on an AVX2-only CPU): it would run the very kernels the unmasked tests ran."""
    bits = int(mask, 16)
    names = {1 << 0: "sse4.1", 1 << 1: "avx", 1 << 2: "avx2", 1 << 3: "fma", 1 << 4: "f16c"}  # trtlite.h TRTL_CPU_*
    kept = {n for b, n in names.items() if bits & b}
    if bits & ~0x1F == 0 and set(_trt().cpu_features()) <= kept:
        pytest.skip("TRTL_CPU_MASK=%s hides no feature of this CPU (%s): the unmasked tests ran these paths"
                    % (mask, ", ".join(_trt().cpu_features())))


def rerun_with_cpu_mask(test_file, mask, passed, select="not paths"):
    """Runs test_file's tests selected by `select` (pytest -k; default: all but the `*paths*` ones) again in a pytest
    subprocess whose TRTL_CPU_MASK is `mask` (the CPU features are read once per process) and asserts that all
    `passed` of them passed."""
    skip_if_mask_hides_nothing(mask)
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TRTL_CPU_MASK=mask)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--rootdir", root,
                           os.path.abspath(test_file), "-k", select],
                          capture_output=True, text=True, cwd=root, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "%d passed" % passed in proc.stdout, proc.stdout[-2000:]

def assert_close(out, ref, rtol=RTOL, atol=ATOL, scale_atol=True):
    """trtlite output vs float64 reference.  Shapes must match exactly; float outputs must be float32 (unless the
    reference is not float); atol is scaled by max(1, max|ref|) so large-magnitude outputs are judged relatively
    while a wrong index (an O(1) error) is still caught."""
    out = np.asarray(out)
    ref = np.asarray(ref)
    assert out.shape == ref.shape, "shape %s, expected %s" % (out.shape, ref.shape)
    if ref.dtype == np.bool_:
        assert out.dtype == np.bool_, "dtype %s, expected bool" % out.dtype
        np.testing.assert_array_equal(out, ref)
        return
    if np.issubdtype(ref.dtype, np.integer):
        assert out.dtype == np.int32, "dtype %s, expected int32" % out.dtype
        np.testing.assert_array_equal(out, ref)
        return
    assert out.dtype == np.float32, "dtype %s, expected float32" % out.dtype
    finite = np.isfinite(ref)
    if scale_atol and finite.any():
        atol = atol * max(1.0, float(np.abs(ref[finite]).max()))
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, equal_nan=True)


def trt_dtype(np_dtype):
    trt = _trt()
    dt = np.dtype(np_dtype)
    table = {np.dtype(np.float32): trt.float32, np.dtype(np.float16): trt.float16, np.dtype(np.int32): trt.int32,
             np.dtype(np.int8): trt.int8, np.dtype(np.bool_): trt.bool, np.dtype(np.uint8): trt.uint8}
    return table[dt]


def np_dtype(trt_dt):
    return np.dtype(_trt().nptype(trt_dt))


def weights_array(w):
    """A layer's weights attribute as a flat numpy array (trt.Weights or array)."""
    if w is None:
        return np.zeros(0, np.float32)
    if hasattr(w, "numpy"):
        w = w.numpy()
    return np.asarray(w).ravel()


class Net:
    """A builder, a network (explicit or implicit batch) and a builder config."""

    def __init__(self, explicit=True, mode="opt"):
        trt = _trt()
        self.trt = trt
        self.explicit = explicit
        self.mode = mode
        self.logger = trt.Logger(trt.Logger.WARNING)
        self.builder = trt.Builder(self.logger)
        if explicit:
            self.network = self.builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        else:
            self.network = self.builder.create_network()
        self.config = self.builder.create_builder_config()
        if mode == "ref":
            self.config.builder_optimization_level = 0
        elif mode == "opt":
            self.config.avg_timing_iterations = 0

    def mark(self, result):
        """Mark what a make() function returned (tensor, layer, or list of them) as outputs out0, out1, ..."""
        if result is None:
            return []
        if isinstance(result, (list, tuple)):
            tensors = []
            for r in result:
                tensors += self._as_tensors(r)
        else:
            tensors = self._as_tensors(result)
        for i, t in enumerate(tensors):
            t.name = "out%d" % i
            self.network.mark_output(t)
        return ["out%d" % i for i in range(len(tensors))]

    @staticmethod
    def _as_tensors(r):
        if hasattr(r, "num_outputs") and hasattr(r, "get_output"):
            return [r.get_output(i) for i in range(r.num_outputs)]
        return [r]

    def build(self, max_batch=None, profile=None):
        """Explicit batch: build_serialized_network + Runtime.deserialize_cuda_engine (raises on failure).
        Implicit batch: TensorRT 7's builder.max_batch_size + build_cuda_engine."""
        trt = self.trt
        if self.explicit:
            if profile:
                p = self.builder.create_optimization_profile()
                for name, (mn, opt, mx) in profile.items():
                    p.set_shape(name, mn, opt, mx)
                self.config.add_optimization_profile(p)
            plan = self.builder.build_serialized_network(self.network, self.config)
            assert plan is not None, "build_serialized_network returned None"
            engine = trt.Runtime(self.logger).deserialize_cuda_engine(plan)
        else:
            self.builder.max_batch_size = max_batch
            if self.mode == "ref":
                engine = self.builder.build_engine(self.network, self.config)
            else:
                engine = self.builder.build_cuda_engine(self.network)
        assert engine is not None, "building returned no engine"
        return engine


class Runner:
    """An engine and its execution context; run(inputs) returns the outputs in marking order."""

    def __init__(self, net, engine, out_names, explicit, via):
        self.net = net  # keep the builder and network alive with the engine
        self.engine = engine
        self.context = engine.create_execution_context()
        self.out_names = out_names
        self.explicit = explicit
        self.via = via

    def run(self, inputs, batch=None):
        inputs = {k: np.asarray(v, order="C") for k, v in inputs.items()}  # keeps 0-d arrays 0-d
        if self.explicit:
            outs = self._run_explicit(inputs)
        else:
            outs = self._run_implicit(inputs, batch)
        res = [outs[n] for n in self.out_names]
        return res[0] if len(res) == 1 else res

    def _run_explicit(self, inputs):
        trt = self.net.trt
        eng, ctx = self.engine, self.context
        if self.via == "infer":
            return {k: np.asarray(v) for k, v in ctx.infer(inputs).items()}
        names = [eng.get_tensor_name(i) for i in range(eng.num_io_tensors)]
        for n in names:
            if eng.get_tensor_mode(n) == trt.TensorIOMode.INPUT and -1 in tuple(eng.get_tensor_shape(n)):
                ctx.set_input_shape(n, inputs[n].shape)
        arrays = {}
        for n in names:
            if eng.get_tensor_mode(n) == trt.TensorIOMode.INPUT:
                arrays[n] = inputs[n]
            else:
                shape = tuple(ctx.get_tensor_shape(n))
                arrays[n] = np.full(shape, 77, dtype=np_dtype(eng.get_tensor_dtype(n)))  # garbage-filled
        if self.via == "v3":
            for n in names:
                ctx.set_tensor_address(n, arrays[n])
            ok = ctx.execute_async_v3(0)
        elif self.via == "ptr":  # bindings as host addresses, as TensorRT scripts pass device pointers
            ok = ctx.execute_v2([int(arrays[n].ctypes.data) for n in names])
        else:
            ok = ctx.execute_v2([arrays[n] for n in names])
        assert ok is None or ok, "execution reported failure"
        return {n: arrays[n] for n in names if eng.get_tensor_mode(n) == trt.TensorIOMode.OUTPUT}

    def _run_implicit(self, inputs, batch):
        eng, ctx = self.engine, self.context
        if batch is None:
            batch = next(iter(inputs.values())).shape[0]
        bindings, outs = [], {}
        for i in range(eng.num_bindings):
            n = eng.get_binding_name(i)
            if eng.binding_is_input(i):
                bindings.append(inputs[n])
            else:
                shape = (batch,) + tuple(eng.get_binding_shape(i))
                a = np.full(shape, 77, dtype=np_dtype(eng.get_binding_dtype(i)))
                outs[n] = a
                bindings.append(a)
        ok = ctx.execute(batch, bindings)
        assert ok is None or ok, "execution reported failure"
        return outs


def _build(make, inputs, explicit=True, max_batch=None, input_shapes=None, profile=None, via="v2", mode="opt"):
    """inputs: dict name -> array, or name -> (shape, np dtype) for build-only use.  In implicit-batch networks the
    arrays include the batch dim N and the network inputs are declared without it.  input_shapes overrides the
    declared shape (-1 for dynamic dims; then give profile = {name: (min, opt, max)}).  make(network, *inputs)
    returns the tensor(s) or layer to mark as outputs."""
    net = Net(explicit, mode)
    tensors = []
    nmax = 1
    for name, v in inputs.items():
        if isinstance(v, tuple):
            shape, dt = v
        else:
            shape, dt = np.shape(v), np.asarray(v).dtype
        nmax = max(nmax, shape[0] if shape else 1)
        if input_shapes and name in input_shapes:
            shape = input_shapes[name]
        elif not explicit:
            shape = shape[1:]
        tensors.append(net.network.add_input(name, trt_dtype(dt), tuple(shape)))
    out_names = net.mark(make(net.network, *tensors))
    # implicit batch: by default the engine allows a larger batch than the one run (batch < max_batch_size)
    engine = net.build(max_batch=max_batch or nmax + 2, profile=profile)
    return Runner(net, engine, out_names, explicit, via)


def _build_and_run(make, inputs, explicit=True, max_batch=None, input_shapes=None, profile=None, via="v2",
                   batch=None, mode="opt"):
    r = _build(make, inputs, explicit, max_batch, input_shapes, profile, via, mode)
    return r.run(inputs, batch=batch)


def _expect_layer_error(make, exc, names, explicit=True):
    """Defining and building the network in make(network) must raise `exc` (a trt.Error subclass) at add_*/attribute
    time or at build time, and the message must contain one of `names` (the name given with layer.name, or the
    TensorRT default-name suffix such as "[Convolution]" for errors raised before the name could be set)."""
    trt = _trt()
    net = Net(explicit)
    if isinstance(names, str):
        names = (names,)
    with pytest.raises(exc) as ei:
        make(net.network)
        net.build(max_batch=4)
    assert isinstance(ei.value, trt.Error), "%r is not a trt.Error" % (ei.value,)
    msg = str(ei.value)
    assert any(n in msg for n in names), "message %r names none of %r" % (msg, names)
    return ei.value


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


KERNEL_MODES = ("opt", "ref")


@pytest.fixture(params=KERNEL_MODES)
def kernel_mode(request):
    return request.param


@pytest.fixture
def build_and_run(kernel_mode):
    return functools.partial(_build_and_run, mode=kernel_mode)


@pytest.fixture
def build(kernel_mode):
    return functools.partial(_build, mode=kernel_mode)


@pytest.fixture
def expect_layer_error():
    return _expect_layer_error


@pytest.fixture
def new_network():
    return Net
