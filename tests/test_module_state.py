"""Module state without C globals (issue 8 item 2): two instances of trtlite._C in one interpreter each have their
own types, exceptions and tables and keep working when the other goes away; the types are immutable; infer() is a
method of the C type; subinterpreters are refused rather than half supported."""
import gc
import importlib.machinery
import importlib.util
import os
import re
import sys

import numpy as np
import pytest

import trtlite as trt
from trtlite import _C, _enums

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)


def second_instance():
    """A second, independent module object of the same extension (multi-phase init: its own state)."""
    spec = importlib.util.spec_from_file_location("trtlite._C", _C.__file__)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    m._register({name: getattr(_enums, name) for name in _enums.__all__}, trt.Dims)
    return m


class Recorder:
    def __init__(self):
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


def conv_relu(mod, logger):
    """conv 3x3 (2 -> 3 channels, padding 1) + relu, built and run with module `mod`'s types."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    builder = mod.Builder(logger)
    network = builder.create_network(EXPLICIT)
    t = network.add_input("x", trt.float32, x.shape)
    conv = network.add_convolution_nd(t, 3, (3, 3), w)
    conv.padding_nd = (1, 1)                                    # a generated layer property
    assert tuple(conv.padding_nd) == (1, 1)
    out = network.add_activation(conv.get_output(0), trt.ActivationType.RELU).get_output(0)
    out.name = "y"
    network.mark_output(out)
    engine = builder.build_engine(network, builder.create_builder_config())
    y = engine.create_execution_context().infer({"x": x})["y"]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 3, 5, 5))
    for i in range(3):
        for j in range(3):
            ref += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 5, j:j + 5], w[:, :, i, j].astype(np.float64))
    np.testing.assert_allclose(y, np.maximum(ref, 0), rtol=1e-5, atol=1e-5)
    return conv


def test_two_module_instances_are_independent():
    m2 = second_instance()
    assert m2 is not _C and m2.IConvolutionLayer is not _C.IConvolutionLayer
    assert m2.StateError is not _C.StateError and not issubclass(m2.StateError, _C.Error)
    log2 = Recorder()
    layer2 = conv_relu(m2, log2)
    assert isinstance(layer2, m2.IConvolutionLayer) and not isinstance(layer2, _C.IConvolutionLayer)
    # the second instance's errors are its own classes
    with pytest.raises(m2.InvalidArgumentError):
        m2.Builder(Recorder()).create_network(-1)
    # the first instance is unaffected, also once the second one is gone
    del layer2, m2
    gc.collect()
    layer1 = conv_relu(_C, Recorder())
    assert isinstance(layer1, trt.IConvolutionLayer) and tuple(layer1.padding_nd) == (1, 1)


def test_logger_callbacks_carry_their_module_state():
    """Severity values reach each instance's logger as that instance's registered enum."""
    m2 = second_instance()
    log2 = Recorder()
    builder = m2.Builder(log2)
    network = builder.create_network(EXPLICIT)
    network.mark_output(network.add_identity(network.add_input("x", trt.float32, (2,))).get_output(0))
    builder.build_engine(network, builder.create_builder_config())
    assert log2.messages and all(isinstance(s, trt.Logger.Severity) for s, _ in log2.messages)


def test_types_are_immutable():
    for name in dir(_C):
        obj = getattr(_C, name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            with pytest.raises(TypeError):
                setattr(obj, "monkeypatched", 1)


def test_infer_is_a_method_of_the_c_type():
    assert "infer" in _C.IExecutionContext.__dict__
    assert type(_C.IExecutionContext.__dict__["infer"]).__name__ == "method_descriptor"
    assert "feed" in _C.IExecutionContext.infer.__doc__


def test_infer_errors_name_inputs():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    network = builder.create_network(EXPLICIT)
    network.mark_output(network.add_identity(network.add_input("x", trt.float32, (2,))).get_output(0))
    context = builder.build_engine(network, builder.create_builder_config()).create_execution_context()
    with pytest.raises(trt.NotFoundError, match=r"\['z'\] are not inputs of this engine \(inputs: \['x'\]\)"):
        context.infer({"x": np.ones(2, np.float32), "z": 1})
    with pytest.raises(trt.InvalidArgumentError, match=r"missing inputs \['x'\]"):
        context.infer({})
    with pytest.raises(TypeError, match="feed must be a dict"):
        context.infer([np.ones(2, np.float32)])
    out = context.infer({"x": [1.5, -2]})                  # converted to the engine's dtype
    assert list(out) == [network.get_output(0).name]
    np.testing.assert_array_equal(next(iter(out.values())), np.array([1.5, -2], np.float32))


def test_no_mutable_file_scope_data_in_the_bindings():
    """File-scope data in csrc/python is const, or one of the CPython definition tables handed to the type machinery
    (never written after compile time); no `extern` variables."""
    allowed = re.compile(r"^static (PyMethodDef|PyGetSetDef|PyType_Slot|PyType_Spec|PyModuleDef_Slot|PyMemberDef) ")
    bad = []
    src = os.path.join(ROOT, "csrc", "python")
    for fn in sorted(os.listdir(src)):
        with open(os.path.join(src, fn)) as f:
            for i, line in enumerate(f, 1):
                if re.match(r"^extern [^(]*;", line) and "PyModuleDef" not in line:
                    bad.append(f"{fn}:{i}: {line.strip()}")
                if not line.startswith("static ") or "(" in line.split("=")[0] or " const " in line:
                    continue
                if not allowed.match(line):
                    bad.append(f"{fn}:{i}: {line.strip()}")
    assert bad == []


@pytest.mark.skipif(sys.version_info < (3, 12), reason="Py_mod_multiple_interpreters exists from Python 3.12")
def test_subinterpreters_are_refused():
    import _testcapi  # noqa: F401
    import _xxsubinterpreters as interpreters
    interp = interpreters.create()
    with pytest.raises(interpreters.RunFailedError, match="ImportError"):
        interpreters.run_string(interp, "import trtlite._C")
