"""The ONNX parser's fold budget (trtlite/onnx/constants.py FOLD_LIMIT): a node over constants whose output would
be past the budget and larger than its inputs is not folded but imported as layers (computed at run time), so a
model such as the fuzz finding tests/fuzz/findings/onnx/reference_fold_slow.onnx (Unsqueeze -> Expand to
(12648450, 3, 4), 151M elements) parses in little time and memory; past 2^40 elements it is refused.  The results
of the non-folded paths are checked against onnxruntime with the budget lowered to a few elements."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import trtlite as trt
from onnx_helpers import compare, helper, make_model, parse
from trtlite.onnx import constants

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_PARSE_LIMITED = textwrap.dedent("""
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (%d << 20,) * 2)
    import onnx, onnx.reference, numpy
    import trtlite as trt
    lg = trt.Logger(trt.Logger.ERROR)
    net = trt.Builder(lg).create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    p = trt.OnnxParser(net, lg)
    t = time.time()
    ok = p.parse_from_file(sys.argv[1])
    print("RESULT", ok, "%%.2f" %% (time.time() - t))
    for i in range(p.num_errors):
        print("ERROR", p.get_error(i))
""")


def _parse_limited(path, mib=450, timeout=60):
    # one OpenBLAS thread: its per-thread buffers (32 MiB each, one per core) would count against the limit on a
    # many-core host (a 16-core machine refused to start); the limit is for the parser
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", _PARSE_LIMITED % mib, path], capture_output=True, text=True,
                       timeout=timeout, env=env)
    res = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and res, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    _, ok, secs = res[0].split()
    return ok == "True", float(secs), [ln[6:] for ln in p.stdout.splitlines() if ln.startswith("ERROR ")]


def _largest_constant(net):
    """Elements of the network's largest constant layer."""
    n = 0
    for i in range(net.num_layers):
        layer = net.get_layer(i)
        if layer.type == trt.LayerType.CONSTANT:
            n = max(n, int(np.prod(tuple(layer.get_output(0).shape))))
    return n


def test_reference_fold_finding_parses_fast_in_bounded_memory():
    """Before the fix the Expand was folded into a 151M-element int64 constant (1.2 GB) before PRelu refused it."""
    path = os.path.join(HERE, "fuzz", "findings", "onnx", "reference_fold_slow.onnx")
    ok, secs, errors = _parse_limited(path)
    assert secs < 5, (secs, errors)
    assert not ok and any("PRelu" in e and "UNSUPPORTED_NODE_DATATYPE" in e for e in errors), errors


def _grow_model(op, rng):
    """y = x + op(constant): op grows a 3- or 6-element constant to a [4, 2, 3] tensor (24 elements)."""
    c = rng.standard_normal((1, 3)).astype(np.float32)
    inits = {"c": c}
    if op == "Expand":
        node = helper.make_node("Expand", ["c", "s"], ["e"])
        inits["s"] = np.array([4, 2, 3], np.int64)
    elif op == "Tile":
        inits["c"] = rng.standard_normal((1, 2, 3)).astype(np.float32)
        node = helper.make_node("Tile", ["c", "s"], ["e"])
        inits["s"] = np.array([4, 1, 1], np.int64)
    elif op == "ConstantOfShape":
        node = helper.make_node("ConstantOfShape", ["s"], ["e"],
                                value=helper.make_tensor("v", 1, [1], [1.75]))
        inits = {"s": np.array([4, 2, 3], np.int64)}
    elif op == "Pad":
        inits["c"] = rng.standard_normal((2, 2, 3)).astype(np.float32)
        node = helper.make_node("Pad", ["c", "s", "v"], ["e"], mode="constant")
        inits["s"] = np.array([1, 0, 0, 1, 0, 0], np.int64)
        inits["v"] = np.array(-3.5, np.float32)
    elif op == "Add":  # a broadcasting op: [4, 1, 1] + [1, 2, 3]
        inits["c"] = rng.standard_normal((4, 1, 1)).astype(np.float32)
        inits["d"] = rng.standard_normal((1, 2, 3)).astype(np.float32)
        node = helper.make_node("Add", ["c", "d"], ["e"])
    else:  # MatMul [4, 2, 1] x [1, 3]: no bound beforehand (checked after folding)
        inits["c"] = rng.standard_normal((4, 2, 1)).astype(np.float32)
        inits["d"] = rng.standard_normal((1, 3)).astype(np.float32)
        node = helper.make_node("MatMul", ["c", "d"], ["e"])
    nodes = [node, helper.make_node("Add", ["x", "e"], ["y"])]
    return make_model(nodes, {"x": (4, 2, 3)}, {"y": (4, 2, 3)}, inits)


OPS = ["Expand", "Tile", "ConstantOfShape", "Pad", "Add", "MatMul"]


@pytest.mark.parametrize("op", OPS)
def test_over_budget_is_computed_at_run_time(op, monkeypatch, rng):
    m = _grow_model(op, rng)
    _, net, _ = parse(m)
    assert _largest_constant(net) == 24, "with the default budget the 24-element result is folded"
    monkeypatch.setattr(constants, "FOLD_LIMIT", 8)
    _, net, _ = parse(m)
    assert _largest_constant(net) < 24, "past the budget the result must not be folded into a constant"
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    compare(m, {"x": x})


def test_budget_does_not_limit_folds_that_do_not_grow(monkeypatch, rng):
    """Reshape / Transpose of a constant larger than the budget still fold (weights must stay constants)."""
    monkeypatch.setattr(constants, "FOLD_LIMIT", 8)
    c = rng.standard_normal((2, 3, 4)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["c"], ["t"], perm=[2, 0, 1]),
             helper.make_node("Reshape", ["t", "s"], ["r"]),
             helper.make_node("Add", ["x", "r"], ["y"])]
    m = make_model(nodes, {"x": (4, 6)}, {"y": (4, 6)}, {"c": c, "s": np.array([4, 6], np.int64)})
    _, net, _ = parse(m)
    assert net.num_layers == 2 and _largest_constant(net) == 24  # c transposed and reshaped, the Add
    compare(m, {"x": rng.standard_normal((4, 6)).astype(np.float32)})


def test_range_past_budget_is_a_fill_layer(monkeypatch):
    """A Range past the fold budget is an IFillLayer (LINSPACE) computed at run time, no longer refused."""
    monkeypatch.setattr(constants, "FOLD_LIMIT", 8)
    nodes = [helper.make_node("Range", ["a", "b", "d"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])]
    m = make_model(nodes, {"x": (20,)}, {"y": (20,)},
                   {"a": np.array(0.5, np.float32), "b": np.array(20, np.float32), "d": np.array(1, np.float32)})
    _, net, _ = parse(m)
    assert any(net.get_layer(i).type == trt.LayerType.FILL for i in range(net.num_layers))
    compare(m, {"x": np.random.default_rng(0).standard_normal(20).astype(np.float32)})


@pytest.mark.parametrize("op", ["Expand", "ConstantOfShape", "Tile"])
def test_past_2_40_elements_is_invalid_node(op):
    big = np.array([2 ** 21, 2 ** 20, 2], np.int64)
    if op == "Expand":
        node = helper.make_node("Expand", ["c", "s"], ["y"], name="blowup")
        inits = {"c": np.ones((1, 1, 2), np.float32), "s": big}
    elif op == "Tile":
        node = helper.make_node("Tile", ["c", "s"], ["y"], name="blowup")
        inits = {"c": np.ones((1, 1, 1), np.float32), "s": big}
    else:
        node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="blowup")
        inits = {"s": big}
    m = make_model([node], {}, {"y": (None, np.float32)}, inits)
    with pytest.raises(Exception, match=r"(?s)blowup.*INVALID_NODE.*2\^40"):
        parse(m)
