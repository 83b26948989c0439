"""LeNet through trtlite, in both TensorRT API generations, checked against PyTorch on the same weights.

* TensorRT 8/10 style: explicit batch network (static and dynamic batch), build_serialized_network +
  Runtime.deserialize_cuda_engine, execute_v2 and set_tensor_address + execute_async_v3, name-based
  engine I/O queries.
* TensorRT 7 style: implicit batch network, builder.max_batch_size / max_workspace_size,
  add_convolution / add_pooling / add_fully_connected, build_cuda_engine, binding queries and
  context.execute(batch_size, bindings).
* add_scale (CHANNEL) as BatchNorm, TRT 7 style.
* The shipped checkpoint on 500 Fashion-MNIST test images, and the demo script in --quick mode
  (both skipped when the dataset is not installed).

Weights come from a seeded PyTorch model, so these tests do not depend on the checkpoint.
"""

import os
import sys

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import demo_common as common  # noqa: E402
from demo_common import fashion_mnist  # noqa: E402

trt = common.import_trtlite()
lenet = common.load_example("lenet")

LOGGER = trt.Logger(trt.Logger.WARNING)
ATOL = 1e-4
MAX_BATCH = 128          # TRT 7 engine's max_batch_size
PROFILE_MAX = 32         # TRT 8 dynamic profile: batch 1..32


# ----------------------------------------------------------------------------------------------
# Fixtures and helpers
# ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch_model():
    torch.set_num_threads(2)
    model = lenet.random_model(seed=0)
    with torch.no_grad():   # default init gives nearly uniform softmax; spread the logits out
        model.fc2.weight.mul_(40.0)
        model.fc2.bias.mul_(40.0)
    return model


@pytest.fixture(scope="module")
def weights(torch_model):
    return lenet.state_to_numpy(torch_model)


@pytest.fixture(scope="module")
def images():
    rng = np.random.RandomState(42)
    return rng.standard_normal((MAX_BATCH,) + lenet.INPUT_SHAPE).astype(np.float32)


def assert_matches(p_trt, p_ref, atol=ATOL):
    """Softmax outputs agree within atol and pick the same class wherever the choice is not a near-tie."""
    p_trt = np.asarray(p_trt, dtype=np.float32).reshape(p_ref.shape)
    assert np.isfinite(p_trt).all()
    np.testing.assert_allclose(p_trt, p_ref, rtol=0, atol=atol)
    np.testing.assert_allclose(p_trt.sum(axis=1), 1.0, atol=1e-5)
    top2 = np.sort(p_ref, axis=1)[:, -2:]
    decisive = (top2[:, 1] - top2[:, 0]) > 2 * atol
    assert decisive.mean() > 0.9, "test inputs too ambiguous to compare argmax"
    np.testing.assert_array_equal(p_trt.argmax(axis=1)[decisive], p_ref.argmax(axis=1)[decisive])


def dims(d):
    return tuple(int(v) for v in d)


# ----------------------------------------------------------------------------------------------
# TensorRT 8 / 10 style
# ----------------------------------------------------------------------------------------------

def _fc_as_matmul(network, x, w, b):
    """Fully connected layer from shuffle + constant + matrix multiply (transposed) + broadcast bias."""
    n_out, k = w.shape
    reshape = network.add_shuffle(x)
    reshape.reshape_dims = (0, k)
    w_const = network.add_constant((n_out, k), trt.Weights(w))
    mm = network.add_matrix_multiply(reshape.get_output(0), trt.MatrixOperation.NONE,
                                     w_const.get_output(0), trt.MatrixOperation.TRANSPOSE)
    b_const = network.add_constant((1, n_out), trt.Weights(b))
    return network.add_elementwise(mm.get_output(0), b_const.get_output(0),
                                   trt.ElementWiseOperation.SUM).get_output(0)


def populate_explicit(network, w, batch):
    data = network.add_input(name="data", dtype=trt.float32, shape=(batch, 1, 28, 28))
    conv1 = network.add_convolution_nd(input=data, num_output_maps=20, kernel_shape=(5, 5),
                                       kernel=w["conv1.weight"], bias=w["conv1.bias"])
    conv1.stride_nd = (1, 1)
    pool1 = network.add_pooling_nd(input=conv1.get_output(0), type=trt.PoolingType.MAX, window_size=(2, 2))
    pool1.stride_nd = trt.Dims2(2, 2)
    conv2 = network.add_convolution_nd(input=pool1.get_output(0), num_output_maps=50, kernel_shape=(5, 5),
                                       kernel=trt.Weights(w["conv2.weight"]), bias=trt.Weights(w["conv2.bias"]))
    conv2.stride_nd = (1, 1)
    pool2 = network.add_pooling_nd(input=conv2.get_output(0), type=trt.PoolingType.MAX, window_size=(2, 2))
    pool2.stride_nd = trt.Dims2(2, 2)
    fc1 = _fc_as_matmul(network, pool2.get_output(0), w["fc1.weight"], w["fc1.bias"])
    relu = network.add_activation(input=fc1, type=trt.ActivationType.RELU)
    fc2 = _fc_as_matmul(network, relu.get_output(0), w["fc2.weight"], w["fc2.bias"])
    softmax = network.add_softmax(input=fc2)
    softmax.axes = 1 << 1
    softmax.get_output(0).name = "prob"
    network.mark_output(tensor=softmax.get_output(0))
    return network


def build_explicit_engine(w, batch, tmp_path=None):
    """batch > 0: static shape; batch == -1: dynamic batch with a 1..PROFILE_MAX profile."""
    with trt.Builder(LOGGER) as builder, \
            builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)) as network, \
            builder.create_builder_config() as config:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
        populate_explicit(network, w, batch)
        assert not network.has_implicit_batch_dimension
        assert network.num_inputs == 1 and network.num_outputs == 1
        if batch == -1:
            profile = builder.create_optimization_profile()
            profile.set_shape("data", (1, 1, 28, 28), (8, 1, 28, 28), (PROFILE_MAX, 1, 28, 28))
            config.add_optimization_profile(profile)
        plan = builder.build_serialized_network(network, config)
    assert plan is not None
    assert plan.nbytes > 0
    data = bytes(plan)
    if tmp_path is not None:            # round trip through a file, as a deployment does
        path = os.path.join(str(tmp_path), "lenet.plan")
        with open(path, "wb") as f:
            f.write(plan)
        with open(path, "rb") as f:
            data = f.read()
    runtime = trt.Runtime(LOGGER)
    engine = runtime.deserialize_cuda_engine(data)
    assert engine is not None
    return runtime, engine


@pytest.fixture(scope="module")
def dynamic_engine(weights):
    runtime, engine = build_explicit_engine(weights, -1)
    yield engine
    del engine, runtime


def test_name_based_io_queries(dynamic_engine):
    engine = dynamic_engine
    assert engine.num_io_tensors == 2
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    assert sorted(names) == ["data", "prob"]
    assert engine.get_tensor_mode("data") == trt.TensorIOMode.INPUT
    assert engine.get_tensor_mode("prob") == trt.TensorIOMode.OUTPUT
    assert dims(engine.get_tensor_shape("data")) == (-1, 1, 28, 28)
    assert dims(engine.get_tensor_shape("prob")) == (-1, 10)
    assert engine.get_tensor_dtype("data") == trt.float32
    assert engine.get_tensor_dtype("prob") == trt.DataType.FLOAT


@pytest.mark.parametrize("batch", [1, 4])
def test_explicit_static_execute_v2(weights, torch_model, images, batch, tmp_path):
    runtime, engine = build_explicit_engine(weights, batch, tmp_path)
    assert dims(engine.get_tensor_shape("data")) == (batch, 1, 28, 28)
    assert dims(engine.get_tensor_shape("prob")) == (batch, 10)
    x = np.ascontiguousarray(images[:batch])
    out = np.zeros((batch, 10), dtype=np.float32)
    buffers = {"data": x, "prob": out}
    order = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    with engine.create_execution_context() as context:
        assert context.execute_v2([buffers[n].ctypes.data for n in order])
    assert_matches(out, common.torch_predict(torch_model, x))


@pytest.mark.parametrize("batch", [1, 5, PROFILE_MAX])
def test_explicit_dynamic_execute_v2(dynamic_engine, torch_model, images, batch):
    engine = dynamic_engine
    x = np.ascontiguousarray(images[:batch])
    out = np.zeros((batch, 10), dtype=np.float32)
    buffers = {"data": x, "prob": out}
    order = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    context = engine.create_execution_context()
    context.set_input_shape("data", (batch, 1, 28, 28))
    assert context.execute_v2([buffers[n].ctypes.data for n in order])
    assert_matches(out, common.torch_predict(torch_model, x))


@pytest.mark.parametrize("batch", [1, 7])
def test_explicit_dynamic_execute_async_v3(dynamic_engine, torch_model, images, batch):
    engine = dynamic_engine
    context = engine.create_execution_context()
    # Allocate every I/O tensor from the engine's own description, TensorRT 10 style.
    host = {}
    for i in range(engine.num_io_tensors):
        name = engine.get_tensor_name(i)
        shape = tuple(batch if d == -1 else d for d in dims(engine.get_tensor_shape(name)))
        host[name] = np.zeros(shape, dtype=trt.nptype(engine.get_tensor_dtype(name)))
        if engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
            host[name][...] = images[:batch]
            context.set_input_shape(name, shape)
        context.set_tensor_address(name, host[name].ctypes.data)
    assert context.execute_async_v3(0)
    assert_matches(host["prob"], common.torch_predict(torch_model, images[:batch]))

    # Same context, new batch size, numpy arrays accepted as addresses.
    x = np.ascontiguousarray(images[batch:batch + 3])
    out = np.zeros((3, 10), dtype=np.float32)
    context.set_input_shape("data", x.shape)
    context.set_tensor_address("data", x)
    context.set_tensor_address("prob", out)
    assert context.execute_async_v3(stream_handle=0)
    assert_matches(out, common.torch_predict(torch_model, x))


def test_explicit_numpy_bindings_and_infer(dynamic_engine, torch_model, images):
    engine = dynamic_engine
    x = np.ascontiguousarray(images[:6])
    ref = common.torch_predict(torch_model, x)
    context = engine.create_execution_context()
    context.set_input_shape("data", x.shape)
    out = np.zeros((6, 10), dtype=np.float32)
    buffers = {"data": x, "prob": out}
    assert context.execute_v2([buffers[engine.get_tensor_name(i)] for i in range(engine.num_io_tensors)])
    assert_matches(out, ref)
    result = context.infer({"data": x})
    assert set(result) == {"prob"}
    assert_matches(result["prob"], ref)


# ----------------------------------------------------------------------------------------------
# TensorRT 7 style (implicit batch)
# ----------------------------------------------------------------------------------------------

def build_trt7_engine(w):
    with trt.Builder(LOGGER) as builder, builder.create_network() as network:
        builder.max_workspace_size = 1 << 20
        builder.max_batch_size = MAX_BATCH
        assert network.has_implicit_batch_dimension

        data = network.add_input("data", trt.float32, (1, 28, 28))
        conv1 = network.add_convolution(data, 20, (5, 5), w["conv1.weight"], w["conv1.bias"])
        conv1.stride = (1, 1)
        pool1 = network.add_pooling(conv1.get_output(0), trt.PoolingType.MAX, (2, 2))
        pool1.stride = (2, 2)
        conv2 = network.add_convolution(pool1.get_output(0), 50, (5, 5), w["conv2.weight"], w["conv2.bias"])
        conv2.stride = (1, 1)
        pool2 = network.add_pooling(conv2.get_output(0), trt.PoolingType.MAX, (2, 2))
        pool2.stride = (2, 2)
        fc1 = network.add_fully_connected(pool2.get_output(0), 500, w["fc1.weight"], w["fc1.bias"])
        relu1 = network.add_activation(fc1.get_output(0), trt.ActivationType.RELU)
        fc2 = network.add_fully_connected(relu1.get_output(0), 10, w["fc2.weight"], w["fc2.bias"])
        softmax = network.add_softmax(fc2.get_output(0))      # default axis: C of CHW
        softmax.get_output(0).name = "prob"
        network.mark_output(softmax.get_output(0))

        assert dims(fc1.get_output(0).shape) == (500, 1, 1)
        assert network.num_layers == 8
        return builder.build_cuda_engine(network)


@pytest.fixture(scope="module")
def trt7_engine(weights):
    engine = build_trt7_engine(weights)
    assert engine is not None
    return engine


def test_trt7_binding_queries(trt7_engine):
    engine = trt7_engine
    assert engine.num_bindings == 2
    assert engine.max_batch_size == MAX_BATCH
    assert engine.has_implicit_batch_dimension
    i_in, i_out = engine.get_binding_index("data"), engine.get_binding_index("prob")
    assert sorted([i_in, i_out]) == [0, 1]
    assert engine[i_in] == "data" and engine[i_out] == "prob"
    assert engine.get_binding_name(i_out) == "prob"
    assert engine.binding_is_input(i_in) and not engine.binding_is_input(i_out)
    assert dims(engine.get_binding_shape(i_in)) == (1, 28, 28)
    assert dims(engine.get_binding_shape(i_out)) == (10, 1, 1)
    assert engine.get_binding_dtype(i_in) == trt.float32


@pytest.mark.parametrize("batch", [1, 7, MAX_BATCH])
def test_trt7_execute(trt7_engine, torch_model, images, batch):
    engine = trt7_engine
    x = np.ascontiguousarray(images[:batch])
    out = np.empty((batch,) + dims(engine.get_binding_shape("prob")), dtype=np.float32)
    bindings = [0] * engine.num_bindings
    bindings[engine.get_binding_index("data")] = int(x.ctypes.data)
    bindings[engine.get_binding_index("prob")] = int(out.ctypes.data)
    with engine.create_execution_context() as context:
        assert context.execute(batch_size=batch, bindings=bindings)
    assert_matches(out.reshape(batch, 10), common.torch_predict(torch_model, x))


def test_trt7_execute_numpy_bindings_reuse_context(trt7_engine, torch_model, images):
    engine = trt7_engine
    context = engine.create_execution_context()
    for batch in (3, 64, 2):
        x = np.ascontiguousarray(images[-batch:])
        out = np.zeros((batch, 10, 1, 1), dtype=np.float32)
        bindings = [None, None]
        bindings[engine.get_binding_index("data")] = x
        bindings[engine.get_binding_index("prob")] = out
        assert context.execute(batch, bindings)
        assert_matches(out.reshape(batch, 10), common.torch_predict(torch_model, x))


def test_trt7_batch_over_max_is_rejected(trt7_engine, images):
    engine = trt7_engine
    x = np.zeros((MAX_BATCH + 1, 1, 28, 28), dtype=np.float32)
    out = np.zeros((MAX_BATCH + 1, 10, 1, 1), dtype=np.float32)
    bindings = [0, 0]
    bindings[engine.get_binding_index("data")] = x.ctypes.data
    bindings[engine.get_binding_index("prob")] = out.ctypes.data
    context = engine.create_execution_context()
    try:
        ok = context.execute(batch_size=MAX_BATCH + 1, bindings=bindings)
    except Exception:          # TensorRT returns False and logs an error; raising is acceptable too
        ok = False
    assert not ok


# ----------------------------------------------------------------------------------------------
# add_scale as BatchNorm (TRT 7 style)
# ----------------------------------------------------------------------------------------------

def test_trt7_scale_channel_as_batchnorm():
    torch.manual_seed(3)
    c = 6
    bn = torch.nn.BatchNorm2d(c, eps=1e-5).eval()
    with torch.no_grad():
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1.0, 1.0)
        bn.running_mean.uniform_(-1.0, 1.0)
        bn.running_var.uniform_(0.2, 3.0)
    gamma, beta = bn.weight.detach().numpy(), bn.bias.detach().numpy()
    mean, var = bn.running_mean.numpy(), bn.running_var.numpy()
    scale = (gamma / np.sqrt(var + bn.eps)).astype(np.float32)
    shift = (beta - mean * scale).astype(np.float32)
    power = np.ones(c, dtype=np.float32)

    with trt.Builder(LOGGER) as builder, builder.create_network() as network:
        builder.max_batch_size = 8
        builder.max_workspace_size = 1 << 20
        data = network.add_input("data", trt.float32, (c, 5, 7))
        layer = network.add_scale(data, trt.ScaleMode.CHANNEL, shift, scale, power)
        layer.get_output(0).name = "out"
        network.mark_output(layer.get_output(0))
        engine = builder.build_cuda_engine(network)
    assert engine is not None

    x = np.random.RandomState(0).standard_normal((8, c, 5, 7)).astype(np.float32)
    with torch.no_grad():
        ref = bn(torch.from_numpy(x)).numpy()
    context = engine.create_execution_context()
    for batch in (1, 8):
        out = np.zeros((batch, c, 5, 7), dtype=np.float32)
        bindings = [0, 0]
        bindings[engine.get_binding_index("data")] = x[:batch].ctypes.data
        bindings[engine.get_binding_index("out")] = out.ctypes.data
        assert context.execute(batch_size=batch, bindings=bindings)
        np.testing.assert_allclose(out, ref[:batch], rtol=1e-5, atol=1e-5)


def test_trt7_scale_uniform_with_power():
    with trt.Builder(LOGGER) as builder, builder.create_network() as network:
        builder.max_batch_size = 2
        data = network.add_input("data", trt.float32, (3, 4, 4))
        layer = network.add_scale(data, trt.ScaleMode.UNIFORM,
                                  shift=np.array([0.5], np.float32), scale=np.array([2.0], np.float32),
                                  power=np.array([2.0], np.float32))
        network.mark_output(layer.get_output(0))
        engine = builder.build_cuda_engine(network)
    x = np.random.RandomState(1).uniform(0.0, 1.0, (2, 3, 4, 4)).astype(np.float32)
    out = np.zeros_like(x)
    context = engine.create_execution_context()
    i_in = 0 if engine.binding_is_input(0) else 1
    bindings = [None, None]
    bindings[i_in], bindings[1 - i_in] = x, out
    assert context.execute(2, bindings)
    np.testing.assert_allclose(out, (x * 2.0 + 0.5) ** 2, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# Shipped checkpoint and the demo
# ----------------------------------------------------------------------------------------------

needs_data = pytest.mark.skipif(
    not (fashion_mnist.available("test") and os.path.exists(lenet.CHECKPOINT)),
    reason="needs dataset-fashion-mnist (apt-get install dataset-fashion-mnist) and the LeNet checkpoint")


@needs_data
def test_checkpoint_on_fashion_mnist():
    w = lenet.load_weights()
    model = lenet.model_from_weights(w)
    x, y = fashion_mnist.load("test", limit=500)
    ref = common.torch_predict(model, x)

    runtime, engine = build_explicit_engine(w, -1)
    context = engine.create_execution_context()
    out = np.zeros((500, 10), dtype=np.float32)
    for i in range(0, 500, PROFILE_MAX):
        xb = np.ascontiguousarray(x[i:i + PROFILE_MAX])
        context.set_input_shape("data", xb.shape)
        context.set_tensor_address("data", xb.ctypes.data)
        context.set_tensor_address("prob", out[i:i + len(xb)].ctypes.data)
        assert context.execute_async_v3(0)
    assert_matches(out, ref)
    acc_ref = (ref.argmax(1) == y).mean()
    acc_trt = (out.argmax(1) == y).mean()
    assert acc_ref > 0.85
    assert abs(acc_trt - acc_ref) <= 0.002     # at most one image of 500

    trt7 = build_trt7_engine(w)
    out7 = np.zeros((500, 10, 1, 1), dtype=np.float32)
    ctx7 = trt7.create_execution_context()
    for i in range(0, 500, MAX_BATCH):
        xb = np.ascontiguousarray(x[i:i + MAX_BATCH])
        bindings = [0, 0]
        bindings[trt7.get_binding_index("data")] = xb.ctypes.data
        bindings[trt7.get_binding_index("prob")] = out7[i:i + len(xb)].ctypes.data
        assert ctx7.execute(batch_size=len(xb), bindings=bindings)
    assert_matches(out7.reshape(500, 10), ref)


@needs_data
def test_demo_quick(tmp_path, capsys):
    demo = common.load_module("network_api_mnist", os.path.join(common.EXAMPLES, "network_api_mnist.py"))
    rc = demo.main(["--quick", "--runs", "200", "--plan", str(tmp_path / "lenet.plan")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "trtlite" in out and "PyTorch" in out
