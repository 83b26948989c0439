"""Enums print as TensorRT's (trtlite/_enums.py): str 'DataType.FLOAT', repr '<DataType.FLOAT: 0>', and stay ints."""
import enum
import pickle

import pytest

import trtlite as trt
from trtlite import _enums


def all_enums():
    seen = []
    for name in _enums.__all__:
        cls = getattr(_enums, name)
        if cls not in seen:
            seen.append(cls)
    return seen


def test_every_enum_prints_class_dot_member():
    classes = all_enums()
    assert len(classes) >= 30
    for cls in classes:
        assert issubclass(cls, enum.IntEnum)
        for m in cls:
            assert str(m) == f"{cls.__name__}.{m.name}", m
            assert repr(m) == f"<{cls.__name__}.{m.name}: {int(m)}>", m
            assert f"{m}" == str(m)
            assert "{}".format(m) == str(m)


def test_tensorrt_examples():
    assert str(trt.DataType.FLOAT) == "DataType.FLOAT"
    assert repr(trt.DataType.FLOAT) == "<DataType.FLOAT: 0>"
    assert str(trt.LayerType.CONVOLUTION) == "LayerType.CONVOLUTION"
    assert str(trt.Logger.WARNING) == "Severity.WARNING"
    assert str(trt.ResizeMode.LINEAR) == "InterpolationMode.LINEAR"  # an alias, as in TensorRT 8.5+
    assert str(trt.float16) == "DataType.HALF"


def test_int_compatibility_kept():
    assert trt.DataType.HALF == 1 and int(trt.DataType.HALF) == 1
    assert 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH) == 1
    assert 1 << trt.BuilderFlag.INT8 == 2
    assert hash(trt.DataType.INT8) == hash(2)
    assert {0: "x"}[trt.DataType.FLOAT] == "x"
    assert "%d" % trt.DataType.INT32 == "3"
    assert f"{trt.DataType.INT32:d}" == "3" and f"{trt.BuilderFlag.FP16:02d}" == "00"
    assert f"{trt.DataType.HALF:>15}" == "  DataType.HALF"
    assert pickle.loads(pickle.dumps(trt.DataType.HALF)) is trt.DataType.HALF
    assert trt.DataType(3) is trt.DataType.INT32


def test_enums_returned_by_the_bindings_print_by_name():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (1, 4))
    layer = net.add_activation(x, trt.ActivationType.RELU)
    assert str(x.dtype) == "DataType.FLOAT"
    assert str(layer.type) == "ActivationType.RELU"
    assert str(trt.ILayer.type.__get__(layer)) == "LayerType.ACTIVATION"


@pytest.mark.parametrize("cls", [trt.DataType, trt.BuilderFlag, trt.Severity])
def test_members_listed_in_order(cls):
    assert [str(m) for m in cls][:2] == [f"{cls.__name__}.{m.name}" for m in list(cls)[:2]]
