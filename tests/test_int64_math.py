"""INT64 arithmetic (issue #12), as TensorRT 10 allows it: elementwise (SUM/SUB/PROD/DIV/FLOOR_DIV/POW/MIN/MAX,
comparisons, bitwise and shifts), reduce (SUM/PROD/MAX/MIN) and unary ABS/NEG/SIGN/BITWISE_NOT on INT64 tensors,
with exact integer rules (wrap modulo 2^64, division by zero 0, INT64_MIN / -1 = INT64_MIN).  The reference is
Python's own integers, wrapped to 64 bits."""
import numpy as np
import pytest

import trtlite as trt

LOGGER = trt.Logger(trt.Logger.ERROR)
DT = trt.DataType
EW = trt.ElementWiseOperation
LO, HI = -2 ** 63, 2 ** 63 - 1


def wrap(v):
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def trunc_div(x, z):
    if z == 0:
        return 0
    q = abs(x) // abs(z)
    return wrap(q if (x < 0) == (z < 0) else -q)


def floor_div(x, z):
    return 0 if z == 0 else wrap(x // z)


def ipow(x, e):
    if e < 0:
        return 1 if x == 1 else ((-1 if e & 1 else 1) if x == -1 else 0)
    return wrap(pow(x, e, 2 ** 64))


REF = {
    EW.SUM: lambda x, z: wrap(x + z), EW.SUB: lambda x, z: wrap(x - z), EW.PROD: lambda x, z: wrap(x * z),
    EW.DIV: trunc_div, EW.FLOOR_DIV: floor_div, EW.MAX: max, EW.MIN: min, EW.POW: ipow,
    EW.EQUAL: lambda x, z: x == z, EW.GREATER: lambda x, z: x > z, EW.LESS: lambda x, z: x < z,
    EW.BITWISE_AND: lambda x, z: x & z, EW.BITWISE_OR: lambda x, z: x | z, EW.BITWISE_XOR: lambda x, z: x ^ z,
    EW.SHIFT_LEFT: lambda x, z: wrap(x << z) if 0 <= z < 64 else 0,
    EW.SHIFT_RIGHT: lambda x, z: x >> z if 0 <= z < 64 else (-1 if x < 0 else 0),
}


def engine(make):
    b = trt.Builder(LOGGER)
    net = b.create_network(0)
    make(net)
    cfg = b.create_builder_config()
    cfg.avg_timing_iterations = 0
    plan = b.build_serialized_network(net, cfg)
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan)


def operands(rng, n):
    edge = np.array([LO, LO + 1, HI, -1, 0, 1, 2, -2, 3, 2 ** 32, -2 ** 32, 2 ** 31, 63, 64, -7, 7], np.int64)
    a = np.concatenate([np.repeat(edge, len(edge)), rng.integers(LO, HI, n, dtype=np.int64, endpoint=True)])
    b = np.concatenate([np.tile(edge, len(edge)), rng.integers(-70, 70, n // 2, dtype=np.int64),
                        rng.integers(LO, HI, n - n // 2, dtype=np.int64, endpoint=True)])
    return a, b


def test_int64_elementwise_exact():
    rng = np.random.default_rng(0)
    a, b = operands(rng, 300)
    ops = list(REF)

    def make(net):
        x = net.add_input("a", DT.INT64, a.shape)
        y = net.add_input("b", DT.INT64, b.shape)
        for op in ops:
            layer = net.add_elementwise(x, y, op)
            assert layer.get_output(0).dtype == (DT.BOOL if op in (EW.EQUAL, EW.GREATER, EW.LESS) else DT.INT64)
            layer.get_output(0).name = op.name
            net.mark_output(layer.get_output(0))

    out = engine(make).create_execution_context().infer({"a": a, "b": b})
    for op in ops:
        want = [REF[op](int(x), int(z)) for x, z in zip(a, b)]
        got = out[op.name]
        assert got.dtype == (np.bool_ if op in (EW.EQUAL, EW.GREATER, EW.LESS) else np.int64), op
        bad = [(int(x), int(z), int(g), w) for x, z, g, w in zip(a, b, got, want) if int(g) != int(w)]
        assert not bad, (op.name, bad[:5])


def test_int64_broadcast_unary_and_reduce():
    rng = np.random.default_rng(1)
    x = rng.integers(LO, HI, (3, 4, 5), dtype=np.int64, endpoint=True)
    x[0, 0, :3] = [LO, HI, 0]
    s = np.array([[[3]], [[-5]], [[-2 ** 31]]], np.int64)
    U, R = trt.UnaryOperation, trt.ReduceOperation

    def make(net):
        t = net.add_input("x", DT.INT64, x.shape)
        c = net.add_cast(net.add_constant(s.shape, trt.Weights(s.astype(np.int32))).get_output(0), DT.INT64)
        outs = {"prod": net.add_elementwise(t, c.get_output(0), EW.PROD)}
        for u in (U.ABS, U.NEG, U.SIGN, U.BITWISE_NOT):
            outs[u.name] = net.add_unary(t, u)
        for r in (R.SUM, R.PROD, R.MAX, R.MIN):
            outs["r" + r.name] = net.add_reduce(t, r, 0b110, False)
        outs["rall"] = net.add_reduce(t, R.SUM, 0b111, True)
        for k, layer in outs.items():
            layer.get_output(0).name = k
            net.mark_output(layer.get_output(0))

    out = engine(make).create_execution_context().infer({"x": x})
    xi = x.astype(object)
    wr = np.vectorize(wrap, otypes=[object])
    assert np.array_equal(out["prod"].astype(object), wr(xi * s.astype(object)))
    assert np.array_equal(out["ABS"].astype(object), wr(abs(xi)))
    assert np.array_equal(out["NEG"].astype(object), wr(-xi))
    assert np.array_equal(out["SIGN"], np.sign(x))
    assert np.array_equal(out["BITWISE_NOT"], ~x)
    rows = xi.reshape(3, -1)
    assert [int(v) for v in out["rSUM"]] == [wrap(sum(r)) for r in rows]
    assert [int(v) for v in out["rPROD"]] == [wrap(int(np.prod(r))) for r in rows]
    assert np.array_equal(out["rMAX"], x.reshape(3, -1).max(1)) and np.array_equal(out["rMIN"], x.reshape(3, -1).min(1))
    assert out["rall"].shape == (1, 1, 1) and int(out["rall"][0, 0, 0]) == wrap(sum(xi.ravel()))


def test_int64_refusals_name_the_layer():
    U, R = trt.UnaryOperation, trt.ReduceOperation
    cases = [
        (lambda net, x, f: net.add_elementwise(x, f, EW.SUM), "same type, got INT64 and FLOAT"),
        (lambda net, x, f: net.add_unary(x, U.EXP), "EXP needs a FLOAT input, got INT64"),
        (lambda net, x, f: net.add_reduce(x, R.AVG, 1, False), "INT64 with AVG"),
        (lambda net, x, f: net.add_elementwise(x, x, EW.AND), "AND needs BOOL inputs, got INT64"),
    ]
    for add, msg in cases:
        net = trt.Builder(LOGGER).create_network(0)
        x = net.add_input("x", DT.INT64, (2,))
        f = net.add_input("f", DT.FLOAT, (2,))
        with pytest.raises(trt.DTypeError, match=r"layer '\(Unnamed Layer\* 0\).*" + msg):
            add(net, x, f)


@pytest.mark.parametrize("dt", [DT.INT64, DT.INT32])
def test_integer_matrix_multiply_wraps_exactly(dt, rng=np.random.default_rng(31)):
    """INT32 / INT64 matrix multiply (both inputs of one type; trtlite's extension for ONNX integer MatMul): every
    op pair, batch broadcast, products and sums wrapping at the type's width, vs Python integers."""
    bits = 64 if dt == DT.INT64 else 32
    npt = np.int64 if dt == DT.INT64 else np.int32
    lim = 2 ** (bits - 1)
    w = lambda v: (v + lim) % (2 * lim) - lim  # noqa: E731
    M, K, N = (int(v) for v in rng.integers(1, 6, 3))
    for op0, op1 in [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)]:
        O = trt.MatrixOperation
        sa = (3, K) if op0 == 2 else ((3, K, M) if op0 == 1 else (3, M, K))
        sb = (1, K) if op1 == 2 else ((1, N, K) if op1 == 1 else (1, K, N))
        a = rng.integers(-lim, lim, sa, dtype=npt)
        b = rng.integers(-lim, lim, sb, dtype=npt)

        def make(net):
            y = net.add_matrix_multiply(net.add_input("a", dt, sa), O(op0), net.add_input("b", dt, sb), O(op1))
            y.get_output(0).name = "y"
            net.mark_output(y.get_output(0))
        got = engine(make).create_execution_context().infer({"a": a, "b": b})["y"]
        A = [[int(v) for v in r] for r in (a[:, None, :] if op0 == 2 else (a.swapaxes(1, 2) if op0 == 1 else a))
             .reshape(-1, K)]
        B = b[0].T if op1 == 1 else (b[0][:, None] if op1 == 2 else b[0])
        B = [[int(v) for v in r] for r in B]
        want = [[w(sum(x * B[k][j] for k, x in enumerate(row))) for j in range(len(B[0]))] for row in A]
        assert got.dtype == npt
        assert got.reshape(len(A), len(B[0])).tolist() == want, (op0, op1)


def test_int64_cumulative_wraps(rng=np.random.default_rng(32)):
    x = rng.integers(LO, HI, (3, 5), dtype=np.int64, endpoint=True)

    def make(net):
        t = net.add_input("x", DT.INT64, x.shape)
        ax = net.add_constant((), trt.Weights(np.array(1, np.int32))).get_output(0)
        for name, op, excl, rev in (("s", trt.CumulativeOperation.SUM, False, False),
                                    ("p", trt.CumulativeOperation.PROD, True, True)):
            y = net.add_cumulative(t, ax, op, excl, rev).get_output(0)
            y.name = name
            net.mark_output(y)
    out = engine(make).create_execution_context().infer({"x": x})
    for i, row in enumerate(x.tolist()):
        acc, s = 0, []
        for v in row:
            acc = wrap(acc + v)
            s.append(acc)
        acc, p = 1, []
        for v in reversed(row):
            p.append(acc)
            acc = wrap(acc * v)
        assert out["s"][i].tolist() == s and out["p"][i].tolist() == p[::-1]
    with pytest.raises(trt.DTypeError, match=r"matrix multiply needs FLOAT inputs \(or two INT32 or two INT64 inputs\), "
                                             r"got INT64 and INT32"):
        net = trt.Builder(LOGGER).create_network(0)
        net.add_matrix_multiply(net.add_input("a", DT.INT64, (2, 2)), trt.MatrixOperation.NONE,
                                net.add_input("b", DT.INT32, (2, 2)), trt.MatrixOperation.NONE)
