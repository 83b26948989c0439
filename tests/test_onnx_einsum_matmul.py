"""ONNX Einsum with one contraction of two operands becomes one batched matrix multiply (trtlite/onnx/ops_matmul.py
_einsum_matmul): the engine runs a matrix_multiply kernel instead of the broadcast product and its reduction, and the
result equals numpy's einsum in float64 (to float32 GEMM rounding).  Forms that are not one contraction -- an outer
product, operands broadcast against each other, a repeated index -- keep the general path and stay correct."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper

import trtlite as trt


def build(eq, a, b):
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)
    g = helper.make_graph([node], "e", [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape),
                                        helper.make_tensor_value_info("b", TensorProto.FLOAT, b.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(net, logger)
    assert parser.parse(m.SerializeToString()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    engine = builder.build_engine(net, builder.create_builder_config())
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    y = engine.create_execution_context().infer({"a": a, "b": b})["y"]
    return y, [l["kernel"] for l in info["layers"]]


@pytest.mark.parametrize("eq,sa,sb,matmul", [
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5), True),
    ("bhqd,bhkd->bhqk", (1, 2, 5, 8), (1, 2, 6, 8), True),
    ("bhqk,bhkd->bhqd", (2, 3, 7, 6), (2, 3, 6, 9), True),
    ("ij,jk", (3, 4), (4, 5), True),                       # implicit output
    ("ij,ij->", (3, 4), (3, 4), True),                     # full contraction to a scalar
    ("abc,cd->dba", (2, 3, 4), (4, 5), True),              # output order differs
    ("bij,jk->bik", (2, 3, 4), (4, 5), True),
    ("...ij,...jk->...ik", (2, 2, 3, 4), (2, 2, 4, 5), True),
    ("ij,j->i", (3, 4), (4,), True),
    ("ijk,ikl->ijl", (4, 3, 1), (4, 1, 6), True),
    ("ij,kj->ikj", (3, 4), (5, 4), False),                 # no contraction: the broadcast product
    ("bij,bjk->bik", (1, 3, 4), (2, 4, 5), False),         # batch broadcast between the operands
    ("ii,ij->j", (4, 4), (4, 5), False),                   # a repeated index: IEinsumLayer
])
def test_einsum_contraction_is_a_matmul(eq, sa, sb, matmul):
    rng = np.random.default_rng(abs(hash(eq + str(sa))) % 2**32)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    y, kernels = build(eq, a, b)
    want = np.einsum(eq, a.astype(np.float64), b.astype(np.float64))
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    assert any(k.startswith("matrix_multiply.") for k in kernels) == matmul, kernels
    if matmul:
        assert not any(k.startswith(("elementwise.", "reduce.")) for k in kernels), kernels


def test_einsum_matmul_nan_inf():
    """NaN and Inf propagate as through the product and sum (inf * 0 is NaN)."""
    a = np.ones((2, 3, 4), np.float32)
    b = np.ones((2, 4, 5), np.float32)
    a[0, 1, 2] = np.nan
    a[1, 0, 0] = np.inf
    b[1, 0, 3] = 0.0
    y, _ = build("bij,bjk->bik", a, b)
    with np.errstate(invalid="ignore"):
        want = np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_allclose(y[~np.isnan(y)], want[~np.isnan(want)])
