"""Builder pass fuse_chain (csrc/builder/passes/fuse_chain.c) and the PW_CHAIN step (kernels/x86/pw_chain.c,
kernels/ref/pw_chain.c): a run of pointwise steps over one shape becomes one step running their ops as a program.

Random chains (2-8 steps of unary ops, activations, fake quantization, elementwise ops with constants of every
broadcast kind and with other input tensors, either operand order, shapes with tails and batch dims) are built with
the pass on and off: the results must be equal bit for bit (the fused step calls the same vector spans), equal bit for
bit to a numpy float32 step model where every op is exact, and close to a float64 model otherwise.  Runs whose
intermediate is read twice or is a network output are not fused; plans round-trip and corrupt programs are refused;
the AVX2 and portable paths rerun under TRTL_CPU_MASK; the QDQ BERT's GELU chains fuse and the model's output is the
pass-off engine's."""
import json
import math
import os
import struct
import zlib

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close, rerun_with_cpu_mask

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
E = trt.ElementWiseOperation
U = trt.UnaryOperation
A = trt.ActivationType
BERT = "/work/zoo-s19/precision/bert_base_4l.qdq.onnx"


def fq(v, scale, signed=True, zp=0):
    """DequantizeLinear(QuantizeLinear(v)) in float32 exactly as ONNX defines them (tests/test_fold_fake_quant.py)."""
    v = np.asarray(v, np.float32)
    s = np.float32(scale)
    lo, hi = (-128, 127) if signed else (0, 255)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r = np.rint(v / s).astype(np.float64)
    r = np.where(np.isnan(r), lo - zp, r)
    return ((np.clip(r + zp, lo, hi) - zp) * np.float64(s)).astype(np.float32)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


# op name -> (numpy model in float64, exact in float32?)
UNARY = {"abs": (U.ABS, np.abs, True), "neg": (U.NEG, np.negative, True), "floor": (U.FLOOR, np.floor, True),
         "ceil": (U.CEIL, np.ceil, True), "round": (U.ROUND, np.rint, True), "sign": (U.SIGN, np.sign, True),
         "erf": (U.ERF, _erf, False), "exp": (U.EXP, lambda v: np.exp(np.clip(v, -80, 80)), False),
         "sqrt_abs": (U.SQRT, None, False)}
ACTS = {"relu": (A.RELU, 0, 0, lambda v: np.maximum(v, 0), True),
        "sigmoid": (A.SIGMOID, 0, 0, lambda v: 1 / (1 + np.exp(-v)), False),
        "tanh": (A.TANH, 0, 0, np.tanh, False),
        "leaky": (A.LEAKY_RELU, 0.125, 0, lambda v: np.where(v >= 0, v, 0.125 * v), True),
        "clip": (A.CLIP, -1.5, 2.25, lambda v: np.clip(v, -1.5, 2.25), True),
        "elu": (A.ELU, 0.5, 0, lambda v: np.where(v >= 0, v, 0.5 * (np.exp(np.minimum(v, 0)) - 1)), False),
        "softplus": (A.SOFTPLUS, 1, 1, lambda v: np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0), False),
        "gelu": (A.GELU_ERF, 0, 0, lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2))), False)}
BINARY = {"sum": (E.SUM, np.add), "sub": (E.SUB, np.subtract), "prod": (E.PROD, np.multiply),
          "div": (E.DIV, np.divide), "max": (E.MAX, np.maximum), "min": (E.MIN, np.minimum)}
OPERAND_KINDS = ["scalar", "channel", "last", "full", "input_full", "input_bcast", "head"]


class Chain:
    """A random run of pointwise layers built into a network, with its float64 / float32 step model."""

    def __init__(self, rng, shape, length, exact=False, smooth=False, qgrid=True):
        self.seed = int(rng.integers(1 << 30))
        self.shape, self.exact, self.smooth = shape, exact, smooth
        self.length, self.qgrid = length, qgrid
        self.make(trt.Builder(trt.Logger(trt.Logger.ERROR)).create_network(EXPLICIT))  # inputs and model

    def _start(self):
        """Every build draws the same chain: make() starts from the seed."""
        self.rng = rng = np.random.default_rng(self.seed)
        self.inputs = {"x": (rng.standard_normal(self.shape) * 3).astype(np.float32)}
        if self.exact:  # values on a grid: sums / products of them stay exact in float32
            self.inputs["x"] = np.round(self.inputs["x"] * 8) / 8
        self.n_tensors = 0

    def _value(self, shape):
        v = self.rng.standard_normal(shape).astype(np.float32)
        v = np.where(np.abs(v) < 0.25, np.float32(0.5), v)  # divisors away from 0
        return (np.round(v * 4) / 4).astype(np.float32) if self.exact else v

    def _operand(self, net, kind, head):
        r = len(self.shape)
        if kind == "head":
            return head[0], head[1]
        if kind.startswith("input"):
            shape = list(self.shape)
            if kind == "input_bcast":
                for a in range(r):
                    if self.rng.random() < 0.5:
                        shape[a] = 1
            name = "t%d" % self.n_tensors
            self.n_tensors += 1
            self.inputs[name] = self._value(tuple(shape))
            return net.add_input(name, trt.float32, tuple(shape)), self.inputs[name]
        shape = {"scalar": (1,) * r, "channel": tuple(self.shape[a] if a == 1 else 1 for a in range(r)),
                 "last": (1,) * (r - 1) + (self.shape[-1],), "full": tuple(self.shape)}[kind]
        v = self._value(shape)
        return net.add_constant(v.shape, v).get_output(0), v

    def make(self, net):
        self._start()
        rng = self.rng
        t = net.add_input("x", trt.float32, self.shape)
        head = (t, self.inputs["x"])
        v = self.inputs["x"].astype(np.float64)
        self.steps = []
        unary = [k for k, (_, f, ex) in UNARY.items() if (ex or not self.exact) and (not ex or not self.smooth)]
        acts = [k for k, a in ACTS.items() if a[4] or not self.exact]
        for i in range(self.length):
            kinds = ["unary", "act", "binary", "binary"] + (["qgrid"] if self.qgrid else [])
            k = kinds[rng.integers(len(kinds))]
            if k == "unary":
                name = unary[rng.integers(len(unary))]
                op, f, _ = UNARY[name]
                if name == "sqrt_abs":
                    t = net.add_unary(t, U.ABS).get_output(0)
                    self.steps.append("abs")
                    v = self._round(np.abs(v))
                    f = np.sqrt
                t = net.add_unary(t, op).get_output(0)
                v = f(v)
            elif k == "act":
                name = acts[rng.integers(len(acts))]
                op, al, be, f, _ = ACTS[name]
                layer = net.add_activation(t, op)
                layer.alpha, layer.beta = al, be
                t = layer.get_output(0)
                v = f(v)
            elif k == "qgrid":
                signed = bool(rng.integers(2))
                scale = [0.0371, 0.125, 0.01][rng.integers(3)]
                zp = 0 if signed else int(rng.integers(0, 256))
                s = net.add_constant((1,), np.array([scale], np.float32)).get_output(0)
                q = net.add_quantize(t, s, trt.int8 if signed else trt.uint8)
                dq = net.add_dequantize(q.get_output(0), s)
                if zp:
                    z = net.add_constant((1,), np.array([zp], np.uint8)).get_output(0)
                    q.set_input(2, z)
                    dq.set_input(2, z)
                t = dq.get_output(0)
                name = "qgrid"
                v = fq(v.astype(np.float32), scale, signed, zp).astype(np.float64)
            else:
                name = list(BINARY)[rng.integers(len(BINARY))]
                op, f = BINARY[name]
                kind = OPERAND_KINDS[rng.integers(len(OPERAND_KINDS))]
                if kind == "head" and (i == 0 or name == "div"):
                    kind = "scalar"
                o, ov = self._operand(net, kind, head)
                ov = ov.astype(np.float64)
                swap = bool(rng.integers(2)) and name != "div"
                t = net.add_elementwise(o, t, op).get_output(0) if swap else net.add_elementwise(t, o, op).get_output(0)
                v = f(ov, v) if swap else f(v, ov)
                name += "(%s%s)" % (kind, ", swapped" if swap else "")
            self.steps.append(name)
            v = self._round(v)
        t.name = "y"
        net.mark_output(t)
        self.ref = v

    def _round(self, v):
        """Each step writes float32."""
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


def build(make, off=False, threads=None, plan_trip=False, profile=None, logger=None):
    logger = logger or trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    net = builder.create_network(EXPLICIT)
    make(net)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    if threads:
        config.num_threads = threads
    if off:
        config.set_pass_enabled("fuse_chain", False)
    if profile:
        p = builder.create_optimization_profile()
        for name, shapes in profile.items():
            p.set_shape(name, *shapes)
        config.add_optimization_profile(p)
    if plan_trip:
        engine = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(net, config))
    else:
        engine = builder.build_engine(net, config)
    assert engine is not None
    layers = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, layers["layers"]


def run(engine, inputs, threads=None):
    ctx = engine.create_execution_context()
    if threads:
        ctx.num_threads = threads
    return ctx.infer(inputs)["y"]


def bits_equal(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


SHAPES = [(2, 3, 37), (1, 5, 7, 9), (3, 4, 2, 3, 5), (1, 8, 61), (2, 1, 19), (1, 3, 1029)]  # rows past a 512-float tile


@pytest.mark.parametrize("seed", range(32))
def test_random_chains_equal_the_pass_off_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    shape = SHAPES[seed % len(SHAPES)]
    c = Chain(rng, shape, int(rng.integers(2, 9)))
    on, lon = build(c.make)
    off, loff = build(c.make, off=True)
    assert "PW_CHAIN" not in [l["type"] for l in loff]
    if len(loff) > 1:  # (a step and its fake quantization alone are one step already)
        assert [l["type"] for l in lon] == ["PW_CHAIN"], (c.steps, lon)
    a, b = run(on, c.inputs), run(off, c.inputs)
    assert bits_equal(a, b), (c.steps, np.abs(a - b).max())


@pytest.mark.parametrize("seed", range(24))
def test_exact_chains_match_numpy_bit_for_bit(seed):
    """Chains of exact ops (sums, products, quotients, min / max, abs, rounding, ReLU, fake quantization) on values
    that keep them exact: the fused step equals the numpy float32 step model exactly."""
    rng = np.random.default_rng(1000 + seed)
    c = Chain(rng, SHAPES[seed % len(SHAPES)], int(rng.integers(2, 9)), exact=True)
    on, lon = build(c.make)
    assert len(lon) == 1, (c.steps, lon)  # one chain (or one step with its fake quantization)
    np.testing.assert_array_equal(run(on, c.inputs), c.ref.astype(np.float32), err_msg=str(c.steps))


@pytest.mark.parametrize("seed", range(24))
def test_smooth_chains_match_float64(seed):
    """Chains of transcendental ops (erf, exp, sigmoid, tanh, ELU, softplus, GELU) with the others, no fake
    quantization: within the vector math's tolerance of the float64 model."""
    rng = np.random.default_rng(2000 + seed)
    c = Chain(rng, SHAPES[seed % len(SHAPES)], int(rng.integers(2, 9)), smooth=True, qgrid=False)
    on, lon = build(c.make)
    assert len(lon) == 1, (c.steps, lon)  # one chain (or one step with its fake quantization)
    out = run(on, c.inputs)
    fin = np.isfinite(c.ref)
    assert np.array_equal(np.isfinite(out), fin), c.steps
    assert_close(out[fin], c.ref[fin].astype(np.float32), rtol=2e-4, atol=2e-4)


def _line(net, x, n_steps, name="s"):
    """n_steps pointwise layers x -> ... ; returns their outputs."""
    outs, t = [], x
    for i in range(n_steps):
        if i % 2:
            t = net.add_activation(t, A.TANH).get_output(0)
        else:
            r = len(t.shape)
            c = net.add_constant((1,) * r, np.full((1,) * r, 0.75, np.float32)).get_output(0)
            t = net.add_elementwise(t, c, E.PROD).get_output(0)
        net.get_layer(net.num_layers - 1).name = "%s%d" % (name, i)
        outs.append(t)
    return outs


def test_intermediate_read_twice_is_not_fused():
    """s2's output is read by s3 and by a second branch: chains end there (s0..s2 is one step, s3..s5 and the sum
    another; the branch's product and tanh are one elementwise step with its epilogue, fuse_epilogue)."""
    x = np.random.default_rng(3).standard_normal((4, 33)).astype(np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, x.shape)
        outs = _line(net, t, 6)
        br = _line(net, outs[2], 2, name="b")
        y = net.add_elementwise(outs[-1], br[-1], E.SUM).get_output(0)
        y.name = "y"
        net.mark_output(y)
    on, lon = build(make)
    off, loff = build(make, off=True)
    names = [l["name"] for l in lon if l["type"] == "PW_CHAIN"]
    assert len(names) == 2 and names[0] == "s0 + s1 + s2" and names[1].startswith("s3 + s4 + s5 + "), names
    assert [l["type"] for l in lon].count("ELEMENTWISE") == 1, lon
    assert bits_equal(run(on, {"x": x}), run(off, {"x": x}))


def test_intermediate_network_output_is_not_fused():
    x = np.random.default_rng(4).standard_normal((2, 3, 17)).astype(np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, x.shape)
        outs = _line(net, t, 5)
        outs[1].name = "mid"
        net.mark_output(outs[1])
        outs[-1].name = "y"
        net.mark_output(outs[-1])
    on, lon = build(make)
    off, _ = build(make, off=True)
    names = [l["name"] for l in lon if l["type"] == "PW_CHAIN"]
    assert names == ["s2 + s3 + s4"], names  # (s0 + s1: one elementwise step with its epilogue, writing mid)
    assert [l["name"] for l in lon if l["type"] == "ELEMENTWISE"] == ["s0 + s1"], lon
    a, b = on.create_execution_context().infer({"x": x}), off.create_execution_context().infer({"x": x})
    assert bits_equal(a["y"], b["y"]) and bits_equal(a["mid"], b["mid"])


def test_not_fused_where_an_operand_would_broadcast_the_chain():
    """x [4, 1] + c [1, 5] makes a bigger tensor: not a chain of x's shape; a same-shape run after it is."""
    x = np.random.default_rng(5).standard_normal((4, 1)).astype(np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, x.shape)
        c = net.add_constant((1, 5), np.arange(5, dtype=np.float32).reshape(1, 5)).get_output(0)
        t = net.add_elementwise(t, c, E.SUM).get_output(0)
        net.get_layer(net.num_layers - 1).name = "grow"
        t = _line(net, t, 3)[-1]
        t.name = "y"
        net.mark_output(t)
    on, lon = build(make)
    off, _ = build(make, off=True)
    assert [l["name"] for l in lon if l["type"] == "PW_CHAIN"] == ["grow + s0 + s1 + s2"] or \
        [l["name"] for l in lon if l["type"] == "PW_CHAIN"] == ["s0 + s1 + s2"]
    chain = next(l for l in lon if l["type"] == "PW_CHAIN")
    assert chain["inputs"][0]["dims"] == "(4, 5)", chain  # the head has the chain's dims
    assert bits_equal(run(on, {"x": x}), run(off, {"x": x}))


def test_dynamic_batch_and_broadcast_operands():
    """A dynamic batch (1..6): per-channel and per-row operands fuse; an input whose dim may be 1 where the chain's
    may be too does not join (it could broadcast the chain at run time)."""
    rng = np.random.default_rng(6)
    w = rng.standard_normal((1, 3, 1)).astype(np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, (-1, 3, 10))
        u = net.add_input("u", trt.float32, (-1, 3, 10))
        c = net.add_constant(w.shape, w).get_output(0)
        v = net.add_elementwise(t, c, E.PROD).get_output(0)
        v = net.add_unary(v, U.ABS).get_output(0)
        v = net.add_activation(v, A.TANH).get_output(0)
        v = net.add_elementwise(v, u, E.SUB).get_output(0)
        net.get_layer(net.num_layers - 1).name = "sub_u"
        v = net.add_unary(v, U.NEG).get_output(0)
        v = net.add_elementwise(v, c, E.SUM).get_output(0)
        v.name = "y"
        net.mark_output(v)
    prof = {"x": ((1, 3, 10), (4, 3, 10), (6, 3, 10)), "u": ((1, 3, 10), (4, 3, 10), (6, 3, 10))}
    on, lon = build(make, profile=prof)
    off, _ = build(make, off=True, profile=prof)
    chains = [l for l in lon if l["type"] == "PW_CHAIN"]
    # u's batch dim equals the chain's at every corner but may be 1: it stays a separate subtraction
    assert len(chains) == 2 and all(len(l["inputs"]) == 2 for l in chains), lon
    assert any(l["name"] == "sub_u" and l["type"] == "ELEMENTWISE" for l in lon), lon
    for n in (1, 5):
        inp = {"x": rng.standard_normal((n, 3, 10)).astype(np.float32),
               "u": rng.standard_normal((n, 3, 10)).astype(np.float32)}
        assert bits_equal(run(on, inp), run(off, inp))


def test_two_threads_and_long_rows_equal_one_thread():
    rng = np.random.default_rng(7)
    c = Chain(rng, (3, 5, 40000), 6)
    on, lon = build(c.make, threads=2)
    off, _ = build(c.make, off=True)
    assert any(l["type"] == "PW_CHAIN" for l in lon)
    assert bits_equal(run(on, c.inputs, threads=2), run(off, c.inputs))


def test_reference_kernel_and_level0():
    """builder_optimization_level 0 runs no fusion; the chain's reference kernel (pw_chain.ref, picked where no
    optimized kernel applies: here by a plan naming it) computes the steps' reference kernels' values."""
    rng = np.random.default_rng(8)
    c = Chain(rng, (2, 3, 37), 6, exact=True)
    on, lon = build(c.make, plan_trip=True)
    plan = bytes(on.serialize())
    old = struct.pack("<I", 13) + b"pw_chain.simd"
    assert plan.count(old) == 1
    bad = bytearray(plan.replace(old, struct.pack("<I", 12) + b"pw_chain.ref"))
    struct.pack_into("<Q", bad, 16, len(bad) - 64)
    struct.pack_into("<I", bad, 24, zlib.crc32(bytes(bad[64:])) & 0xFFFFFFFF)
    ref = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(bytes(bad))
    layers = json.loads(ref.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    assert [l["kernel"] for l in layers["layers"] if l["type"] == "PW_CHAIN"] == ["pw_chain.ref"]
    np.testing.assert_array_equal(run(ref, c.inputs), c.ref.astype(np.float32))
    np.testing.assert_array_equal(run(on, c.inputs), c.ref.astype(np.float32))


# ---- plans ---------------------------------------------------------------------------------------------------

def _plan_chain():
    """x / 1.5 -> erf -> Q/DQ -> + t -> * 0.5: ops div(in1) erf qgrid sum(in2) prod(in3)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 11)).astype(np.float32)
    tv = rng.standard_normal((1, 3, 11)).astype(np.float32)

    def make(net):
        t = net.add_input("x", trt.float32, x.shape)
        u = net.add_input("t", trt.float32, tv.shape)
        c = net.add_constant((1, 1, 1), np.array([1.5], np.float32).reshape(1, 1, 1)).get_output(0)
        v = net.add_unary(net.add_elementwise(t, c, E.DIV).get_output(0), U.ERF).get_output(0)
        s = net.add_constant((1,), np.array([0.05], np.float32)).get_output(0)
        v = net.add_dequantize(net.add_quantize(v, s, trt.int8).get_output(0), s).get_output(0)
        v = net.add_elementwise(v, u, E.SUM).get_output(0)
        h = net.add_constant((1, 1, 1), np.array([0.5], np.float32).reshape(1, 1, 1)).get_output(0)
        v = net.add_elementwise(v, h, E.PROD).get_output(0)
        v.name = "y"
        net.mark_output(v)
    return make, {"x": x, "t": tv}


def _program_words(ops):
    return b"".join(struct.pack("<3i", *o) for o in ops)


PROGRAM = [(2, int(E.DIV), 1), (0, int(U.ERF), 0), (1, 103, 0), (2, int(E.SUM), 2), (2, int(E.PROD), 3)]


def test_plan_round_trip_and_inspector():
    make, inputs = _plan_chain()
    eng, layers = build(make, plan_trip=True)
    off, _ = build(make, off=True)
    assert [l["type"] for l in layers] == ["PW_CHAIN"], layers
    assert layers[0]["program"] == "div(in1) erf qgrid(0.05) sum(in2) prod(in3)", layers[0]
    assert bits_equal(run(eng, inputs), run(off, inputs))
    assert _program_words(PROGRAM) in bytes(eng.serialize())


def _corrupt(plan, find, repl):
    assert plan.count(find) == 1
    bad = bytearray(plan.replace(find, repl))
    struct.pack_into("<I", bad, 24, zlib.crc32(bytes(bad[64:])) & 0xFFFFFFFF)
    return bytes(bad)


CORRUPT = {
    "kind": ([(7, int(E.DIV), 1)] + PROGRAM[1:], "pw_chain op 0 .*kind 7"),
    "unary_code": (PROGRAM[:1] + [(0, int(U.SIN), 0)] + PROGRAM[2:], "pw_chain op 1 .*code %d" % int(U.SIN)),
    "binary_code": ([(2, int(E.POW), 1)] + PROGRAM[1:], "pw_chain op 0 .*code %d" % int(E.POW)),
    "act_code": (PROGRAM[:2] + [(1, 99, 0)] + PROGRAM[3:], "pw_chain op 2 .*code 99"),
    "operand_range": (PROGRAM[:4] + [(2, int(E.PROD), 4)], "pw_chain op 4 .*operand 4 of 4 inputs"),
    "operand_zero": ([(2, int(E.DIV), 0)] + PROGRAM[1:], "pw_chain op 0 .*operand 0"),
    "unary_operand": (PROGRAM[:1] + [(0, int(U.ERF), 2)] + PROGRAM[2:], "pw_chain op 1 .*operand 2"),
    "unread_input": (PROGRAM[:4] + [(2, int(E.PROD), 2)], "reads not every one of its 3 operand inputs"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_program_is_refused(case):
    make, inputs = _plan_chain()
    eng, _ = build(make)
    plan = bytes(eng.serialize())
    ops, msg = CORRUPT[case]
    bad = _corrupt(plan, _program_words(PROGRAM), _program_words(ops))
    runtime = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR))
    with pytest.raises(trt.PlanError, match=msg):
        runtime.deserialize_cuda_engine(bad)
    np.testing.assert_array_equal(run(runtime.deserialize_cuda_engine(plan), inputs), run(eng, inputs))


def test_corrupt_program_sizes_and_scale_are_refused():
    make, _ = _plan_chain()
    plan = bytes(build(make)[0].serialize())
    runtime = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR))
    words = _program_words(PROGRAM)
    int32 = int(trt.int32)
    head = struct.pack("<Iq", int32, 15)
    # ops as FLOAT weights: refused by type
    with pytest.raises(trt.PlanError, match="pw_chain's program"):
        runtime.deserialize_cuda_engine(_corrupt(plan, head + words, struct.pack("<Iq", int(trt.float32), 15) + words))
    # 14 words (not 3 a op) with the byte count kept: the next attribute's bytes are misread -> refused
    with pytest.raises(trt.PlanError):
        runtime.deserialize_cuda_engine(_corrupt(plan, head + words, struct.pack("<Iq", int32, 14) + words))
    # the fake-quantize scale outside what the vector kernels compute exactly
    args = struct.pack("<2f", 0.05, 0.0)
    pos = plan.find(words) + len(words)
    bad_args = plan[pos:pos + 12 + 4 * 10]
    i = bad_args.find(struct.pack("<f", 0.05))
    assert i > 0, bad_args
    assert args[:4] in bad_args
    with pytest.raises(trt.PlanError, match="pw_chain op 2"):
        runtime.deserialize_cuda_engine(_corrupt(plan, bad_args, bad_args.replace(struct.pack("<f", 0.05),
                                                                                  struct.pack("<f", 1e-40))))


def test_plan_of_an_older_version_holding_a_chain_is_refused():
    make, _ = _plan_chain()
    plan = bytearray(build(make)[0].serialize())
    struct.pack_into("<I", plan, 8, 9)
    with pytest.raises(trt.PlanError, match="newer than the plan's format version 9"):
        trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR)).deserialize_cuda_engine(bytes(plan))


# ---- other ISAs --------------------------------------------------------------------------------------------

@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
@pytest.mark.parametrize("mask", ["1f", "0"])
def test_avx2_and_portable_paths(mask):
    """The random and exact chain tests again where TRTL_CPU_MASK hides AVX-512 (1f) or every feature (0: the
    portable spans)."""
    rerun_with_cpu_mask(__file__, mask, 32 + 24, select="equal_the_pass_off or exact_chains")


# ---- the QDQ BERT ------------------------------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists(BERT), reason="the zoo's QDQ BERT is not on this machine")
def test_bert_qdq_gelu_chains_fuse_and_match_the_pass_off():
    """quantize_static's BERT-base (4 layers): each layer's GELU (Div, Erf, Q/DQ, Add + Q/DQ, Mul + Q/DQ, Mul) is one
    chain; the output equals the pass-off engine's bit for bit."""
    x = np.random.default_rng(10).standard_normal((1, 128, 768)).astype(np.float32)
    outs, chains = [], None
    for off in ((), ("fuse_chain",)):  # (as benchmarks/zoo/layers_vs_ort.py's build_plan builds the zoo's models)
        logger = trt.Logger(trt.Logger.ERROR)
        builder = trt.Builder(logger)
        net = builder.create_network(EXPLICIT)
        parser = trt.OnnxParser(net, logger)
        assert parser.parse_from_file(BERT)
        config = builder.create_builder_config()
        config.num_threads = 1
        for p in off:
            config.set_pass_enabled(p, False)
        profile = builder.create_optimization_profile()
        profile.set_shape("input", x.shape, x.shape, x.shape)
        config.add_optimization_profile(profile)
        e = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(net, config))
        layers = json.loads(e.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
        if not off:
            chains = [l for l in layers["layers"] if l["type"] == "PW_CHAIN"]
        outs.append(e.create_execution_context().infer({"input": x})["output"])
    assert len(chains) == 4, [l["name"] for l in chains]
    for l in chains:
        assert l["program"].startswith("div(in1) erf qgrid(") and l["name"].count(" + ") >= 5, l
    assert bits_equal(outs[0], outs[1])
