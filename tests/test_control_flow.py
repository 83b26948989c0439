"""Control flow (issue #12): ILoop and IIfConditional built layer by layer, checked against numpy (float64), in both
builder modes (optimized and reference kernels); plans with nested bodies round trip and refuse corruption cleanly."""
import struct
import zlib

import numpy as np
import pytest

import trtlite as trt

MODES = ["opt", "ref"]
EW = trt.ElementWiseOperation


def new_net():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    return builder, net


def build_plan(builder, net, mode="opt", profile=None):
    cfg = builder.create_builder_config()
    if mode == "ref":
        cfg.builder_optimization_level = 0
    else:
        cfg.avg_timing_iterations = 0
    if profile:
        p = builder.create_optimization_profile()
        for name, (mn, opt, mx) in profile.items():
            p.set_shape(name, mn, opt, mx)
        cfg.add_optimization_profile(p)
    return bytes(builder.build_serialized_network(net, cfg))


def load(plan):
    return trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)


def build(builder, net, mode="opt", profile=None):
    return load(build_plan(builder, net, mode, profile)).create_execution_context()


def const(net, arr):
    arr = np.array(arr, order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)
    return net.add_constant(arr.shape, arr).get_output(0)


def ew(net, a, b, op):
    return net.add_elementwise(a, b, op).get_output(0)


def mark(net, t, name):
    t.name = name
    net.mark_output(t)


def cumsum_net(n_rows=5, cols=3):
    """Running sum over the rows of x: last value, every value (CONCATENATE) and reversed (REVERSE)."""
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (n_rows, cols))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(n_rows, np.int32)), trt.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, np.zeros(cols, np.float32)))
    row = loop.add_iterator(x, 0, False)
    nxt = ew(net, acc.get_output(0), row.get_output(0), EW.SUM)
    acc.set_input(1, nxt)
    mark(net, loop.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0), "last")
    mark(net, loop.add_loop_output(nxt, trt.LoopOutput.CONCATENATE, 0).get_output(0), "all")
    mark(net, loop.add_loop_output(nxt, trt.LoopOutput.REVERSE, 1).get_output(0), "rev")
    return builder, net


@pytest.mark.parametrize("mode", MODES)
def test_cumulative_sum_loop(mode, rng=np.random.default_rng(1)):
    builder, net = cumsum_net()
    ctx = build(builder, net, mode)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    out = ctx.infer({"x": x})
    ref = np.cumsum(x.astype(np.float64), axis=0)
    np.testing.assert_allclose(out["last"], ref[-1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["all"], ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["rev"], ref[::-1].T, rtol=1e-5, atol=1e-6)
    # a second run on the same context sees the initial values again (nothing carried over between executions)
    out2 = ctx.infer({"x": x})
    np.testing.assert_allclose(out2["last"], ref[-1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_iterator_axis1_reverse_concat_axis2(mode):
    rng = np.random.default_rng(2)
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2, 4, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(4, np.int32)), trt.TripLimit.COUNT)
    it = loop.add_iterator(x, 1, True)
    y = ew(net, it.get_output(0), const(net, np.full((1, 1), 2.0, np.float32)), EW.PROD)
    mark(net, loop.add_loop_output(y, trt.LoopOutput.CONCATENATE, 2).get_output(0), "y")
    ctx = build(builder, net, mode)
    xv = rng.standard_normal((2, 4, 3)).astype(np.float32)
    ref = np.stack([xv[:, 3 - i, :].astype(np.float64) * 2 for i in range(4)], axis=2)
    np.testing.assert_allclose(ctx.infer({"x": xv})["y"], ref, rtol=1e-6)


def while_net():
    """v doubles while sum(v) < limit; a counter counts the iterations."""
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    limit = net.add_input("limit", trt.float32, ())
    loop = net.add_loop()
    v = loop.add_recurrence(x)
    n = loop.add_recurrence(const(net, np.array(0, np.int32)))
    s = net.add_reduce(v.get_output(0), trt.ReduceOperation.SUM, 1, False).get_output(0)
    loop.add_trip_limit(ew(net, s, limit, EW.LESS), trt.TripLimit.WHILE)
    v.set_input(1, ew(net, v.get_output(0), const(net, np.array([2.0], np.float32)), EW.PROD))
    n.set_input(1, ew(net, n.get_output(0), const(net, np.array(1, np.int32)), EW.SUM))
    mark(net, loop.add_loop_output(v.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0), "v")
    mark(net, loop.add_loop_output(n.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0), "n")
    return builder, net


@pytest.mark.parametrize("mode", MODES)
def test_while_loop(mode):
    builder, net = while_net()
    ctx = build(builder, net, mode)
    for x, limit in (([1.0, 2.0], 100.0), ([5.0, 5.0], 3.0), ([0.25, 0.5], 1000.0)):
        v, n = np.array(x, np.float64), 0
        while v.sum() < limit:
            v, n = v * 2, n + 1
        out = ctx.infer({"x": np.array(x, np.float32), "limit": np.array(limit, np.float32)})
        np.testing.assert_allclose(out["v"], v, rtol=1e-6)
        assert int(out["n"]) == n


@pytest.mark.parametrize("mode", MODES)
def test_runtime_count_and_constant_length(mode):
    """A COUNT read at run time; a CONCATENATE output sized by set_input(1, length): slots past the count are 0."""
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (3,))
    count = net.add_input("count", trt.int32, ())
    loop = net.add_loop()
    loop.add_trip_limit(count, trt.TripLimit.COUNT)
    r = loop.add_recurrence(x)
    nxt = ew(net, r.get_output(0), const(net, np.array([1.5], np.float32)), EW.PROD)
    r.set_input(1, nxt)
    mark(net, loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0), "last")
    cat = loop.add_loop_output(nxt, trt.LoopOutput.CONCATENATE, 0)
    cat.set_input(1, const(net, np.array(6, np.int32)))
    mark(net, cat.get_output(0), "all")
    ctx = build(builder, net, mode)
    xv = np.array([1.0, -2.0, 0.5], np.float32)
    for n in (0, 3, 6, 9):
        out = ctx.infer({"x": xv, "count": np.array(n, np.int32)})
        k = min(n, 6)  # the loop stops when a CONCATENATE output is full
        ref_all = np.zeros((6, 3))
        for i in range(k):
            ref_all[i] = xv * 1.5 ** (i + 1)
        np.testing.assert_allclose(out["all"], ref_all, rtol=1e-6)
        np.testing.assert_allclose(out["last"], xv * 1.5 ** k, rtol=1e-6)


def if_net():
    builder, net = new_net()
    c = net.add_input("c", trt.bool, ())
    x = net.add_input("x", trt.float32, (2, 3))
    cond = net.add_if_conditional()
    cond.set_condition(c)
    xi = cond.add_input(x).get_output(0)
    t = ew(net, xi, const(net, np.full((1, 1), 2.0, np.float32)), EW.PROD)
    f = ew(net, xi, const(net, np.full((1, 1), 1.0, np.float32)), EW.SUM)
    mark(net, cond.add_output(t, f).get_output(0), "y")
    # an output whose true branch is an outer constant
    mark(net, cond.add_output(const(net, np.full((2, 3), 7.0, np.float32)),
                              net.add_unary(xi, trt.UnaryOperation.ABS).get_output(0)).get_output(0), "z")
    return builder, net


@pytest.mark.parametrize("mode", MODES)
def test_if_conditional(mode):
    builder, net = if_net()
    ctx = build(builder, net, mode)
    x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    out = ctx.infer({"c": np.array(True), "x": x})
    np.testing.assert_allclose(out["y"], x.astype(np.float64) * 2, rtol=1e-6)
    np.testing.assert_allclose(out["z"], np.full((2, 3), 7.0), rtol=0)
    out = ctx.infer({"c": np.array(False), "x": x})
    np.testing.assert_allclose(out["y"], x.astype(np.float64) + 1, rtol=1e-6)
    np.testing.assert_allclose(out["z"], np.abs(x), rtol=0)


@pytest.mark.parametrize("mode", MODES)
def test_if_inside_loop(mode):
    """acc += row when sum(row) > 0, else acc -= row: a conditional nested in a loop body."""
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (6, 4))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(6, np.int32)), trt.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, np.zeros(4, np.float32)))
    row = loop.add_iterator(x).get_output(0)
    s = net.add_reduce(row, trt.ReduceOperation.SUM, 1, False).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(ew(net, s, const(net, np.array(0.0, np.float32)), EW.GREATER))
    a = cond.add_input(acc.get_output(0)).get_output(0)
    r = cond.add_input(row).get_output(0)
    nxt = cond.add_output(ew(net, a, r, EW.SUM), ew(net, a, r, EW.SUB)).get_output(0)
    acc.set_input(1, nxt)
    mark(net, loop.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0), "acc")
    ctx = build(builder, net, mode)
    xv = np.random.default_rng(4).standard_normal((6, 4)).astype(np.float32)
    ref = np.zeros(4)
    for row_v in xv.astype(np.float64):
        ref = ref + row_v if row_v.sum() > 0 else ref - row_v
    np.testing.assert_allclose(ctx.infer({"x": xv})["acc"], ref, rtol=1e-5, atol=1e-6)


def test_dynamic_shapes_loop():
    """An iterator over a dynamic dim: the concatenation is as long as the input, at every shape of the profile."""
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (-1, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(1000, np.int32)), trt.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, np.zeros(3, np.float32)))
    nxt = ew(net, acc.get_output(0), loop.add_iterator(x).get_output(0), EW.SUM)
    acc.set_input(1, nxt)
    mark(net, loop.add_loop_output(nxt, trt.LoopOutput.CONCATENATE, 0).get_output(0), "cs")
    ctx = build(builder, net, "opt", profile={"x": ((1, 3), (4, 3), (8, 3))})
    for n in (1, 5, 8, 2):
        xv = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(ctx.infer({"x": xv})["cs"], np.cumsum(xv.astype(np.float64), 0), rtol=1e-5,
                                   atol=1e-6)


def test_plan_round_trip():
    builder, net = cumsum_net()
    plan = build_plan(builder, net)
    assert struct.unpack_from("<I", plan, 8)[0] >= 5  # plan format 5 and later: control-flow steps
    engine = load(plan)
    again = load(bytes(engine.serialize()))
    x = np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32)
    a = engine.create_execution_context().infer({"x": x})
    b = again.create_execution_context().infer({"x": x})
    for k in ("last", "all", "rev"):
        np.testing.assert_array_equal(a[k], b[k])


def _refresh_crc(plan):
    payload = bytes(plan[64:])
    return plan[:24] + struct.pack("<I", zlib.crc32(payload) & 0xFFFFFFFF) + plan[28:]


def test_corrupt_body_gives_plan_error():
    """Bytes of a nested body changed (outer checksum recomputed, so the nested plan's own checks must catch it)."""
    builder, net = if_net()
    plan = bytearray(build_plan(builder, net))
    nested = plan.find(b"TRTLPLAN", 8)
    assert nested > 0
    rng = np.random.default_rng(6)
    for trial in range(40):
        bad = bytearray(plan)
        where = nested + int(rng.integers(0, len(plan) - nested))
        bad[where] ^= 1 << int(rng.integers(0, 8))
        try:
            load(_refresh_crc(bytes(bad)))
        except trt.PlanError:
            pass
    # the body's length field pointing past the end, and a truncated body
    size_at = nested - 8
    bad = bytearray(plan)
    bad[size_at:size_at + 8] = struct.pack("<Q", 1 << 40)
    with pytest.raises(trt.PlanError, match="control-flow step"):
        load(_refresh_crc(bytes(bad)))
    bad = bytearray(plan)
    bad[nested:nested + 8] = b"XXXXXXXX"
    with pytest.raises(trt.PlanError, match="control-flow step"):
        load(_refresh_crc(bytes(bad)))


# ---- errors --------------------------------------------------------------------------------------------------

def test_condition_must_be_0d_bool():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    cond = net.add_if_conditional()
    with pytest.raises(trt.Error, match="0-d BOOL"):
        cond.set_condition(x)
    b = net.add_input("b", trt.bool, (1,))
    with pytest.raises(trt.Error, match="0-d BOOL"):
        cond.set_condition(b)


def test_branch_shapes_must_match():
    builder, net = new_net()
    c = net.add_input("c", trt.bool, ())
    x = net.add_input("x", trt.float32, (2, 3))
    cond = net.add_if_conditional()
    cond.set_condition(c)
    xi = cond.add_input(x).get_output(0)
    t = net.add_shuffle(xi)
    t.reshape_dims = (3, 2)
    with pytest.raises(trt.Error, match=r"Conditional Output.*different outputs"):
        cond.add_output(t.get_output(0), xi)


def test_recurrence_without_next():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(3, np.int32)), trt.TripLimit.COUNT)
    r = loop.add_recurrence(x)
    r.name = "carry"
    net.mark_output(loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0))
    with pytest.raises(trt.Error, match="recurrence layer 'carry' has no next value"):
        build_plan(builder, net)


def test_missing_trip_limit():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    r = loop.add_recurrence(x)
    r.set_input(1, net.add_unary(r.get_output(0), trt.UnaryOperation.EXP).get_output(0))
    net.mark_output(loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0))
    with pytest.raises(trt.Error, match="no trip limit"):
        build_plan(builder, net)


def test_body_tensor_used_outside_loop():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(3, np.int32)), trt.TripLimit.COUNT)
    r = loop.add_recurrence(x)
    e = net.add_unary(r.get_output(0), trt.UnaryOperation.EXP).get_output(0)
    e.name = "inside"
    r.set_input(1, e)
    net.mark_output(loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0))
    net.mark_output(e)
    with pytest.raises(trt.Error, match="tensor 'inside' is computed inside loop"):
        build_plan(builder, net)


def test_concatenate_needs_known_trip_count():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    n = net.add_input("n", trt.int32, ())
    loop = net.add_loop()
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    r = loop.add_recurrence(x)
    r.set_input(1, net.add_unary(r.get_output(0), trt.UnaryOperation.EXP).get_output(0))
    net.mark_output(loop.add_loop_output(r.get_output(0), trt.LoopOutput.CONCATENATE).get_output(0))
    with pytest.raises(trt.Error, match=r"set_input\(1, length\)"):
        build_plan(builder, net)


def test_carried_shape_must_not_change():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(3, np.int32)), trt.TripLimit.COUNT)
    r = loop.add_recurrence(x)
    r.set_input(1, net.add_concatenation([r.get_output(0), r.get_output(0)]).get_output(0))
    net.mark_output(loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0))
    with pytest.raises(trt.Error, match="carried values"):
        build_plan(builder, net)


@pytest.mark.parametrize("mode", MODES)
def test_loop_in_loop_in_conditional(mode):
    """A loop nested in a loop body, inside a conditional's true branch (the inner recurrence's next value is
    computed after it in the copied body)."""
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (3, 4))
    c = net.add_input("c", trt.bool, ())
    cond = net.add_if_conditional()
    cond.set_condition(c)
    xi = cond.add_input(x).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(3, np.int32)), trt.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, np.zeros(4, np.float32)))
    row = loop.add_iterator(xi).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(const(net, np.array(2, np.int32)), trt.TripLimit.COUNT)
    r2 = inner.add_recurrence(row)
    r2.set_input(1, ew(net, r2.get_output(0), const(net, np.array([2.0], np.float32)), EW.PROD))
    row4 = inner.add_loop_output(r2.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0)
    acc.set_input(1, ew(net, acc.get_output(0), row4, EW.SUM))
    t = loop.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0)
    f = net.add_reduce(xi, trt.ReduceOperation.MAX, 1, False).get_output(0)
    mark(net, cond.add_output(t, f).get_output(0), "y")
    ctx = build(builder, net, mode)
    xv = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ctx.infer({"x": xv, "c": np.array(True)})["y"], (xv.astype(np.float64) * 4).sum(0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ctx.infer({"x": xv, "c": np.array(False)})["y"], xv.max(0), rtol=0)


def test_branch_tensor_used_outside_conditional():
    builder, net = new_net()
    c = net.add_input("c", trt.bool, ())
    x = net.add_input("x", trt.float32, (2,))
    cond = net.add_if_conditional()
    cond.set_condition(c)
    e = net.add_unary(cond.add_input(x).get_output(0), trt.UnaryOperation.EXP).get_output(0)
    e.name = "branch_value"
    net.mark_output(cond.add_output(e, x).get_output(0))
    net.mark_output(e)
    with pytest.raises(trt.Error, match=r"tensor 'branch_value' is computed inside conditional .*add_output"):
        build_plan(builder, net)


def test_layer_reading_two_loops():
    builder, net = new_net()
    x = net.add_input("x", trt.float32, (2,))
    bodies = []
    for _ in range(2):
        loop = net.add_loop()
        loop.add_trip_limit(const(net, np.array(2, np.int32)), trt.TripLimit.COUNT)
        r = loop.add_recurrence(x)
        r.set_input(1, net.add_unary(r.get_output(0), trt.UnaryOperation.EXP).get_output(0))
        net.mark_output(loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0))
        bodies.append(r.get_output(0))
    mix = net.add_elementwise(bodies[0], bodies[1], EW.SUM)
    mix.name = "mix"
    with pytest.raises(trt.Error, match="layer 'mix' reads values computed inside two different loops"):
        build_plan(builder, net)
