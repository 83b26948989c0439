"""Serialized engines ("plans"): two configs -> two engines, loading in a new process, and every way a plan can be
broken (format in csrc/serialize/plan.h: 64-byte header with magic, version, header size, payload size, CRC-32 of
the payload, CPU features, producer string; then the payload).

A broken plan must raise trt.PlanError (a ValueError and a trt.Error) naming what is wrong -- never crash the
process.  The worst cases and a 200-corruption fuzz (single bytes changed, CRC recomputed with zlib.crc32 so that
the structural checks behind the checksum are reached) run in subprocesses: a crash shows up as a negative return
code there instead of killing the test run.
"""
import json
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(trt.__file__)))
HEADER = 64
N, C, H, W, K, CLASSES = 2, 3, 8, 8, 4, 10


def run_python(code, *args, timeout=120):
    """Runs `code` in a fresh interpreter that imports this trtlite; returns the CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-c", code] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def describe(proc):
    return "returncode %d\nstdout: %s\nstderr (tail): %s" % (proc.returncode, proc.stdout[-2000:],
                                                              proc.stderr[-3000:])


def fix_crc(buf):
    """Recomputes the header CRC (standard IEEE CRC-32 of the payload, offset 24)."""
    buf = bytearray(buf)
    struct.pack_into("<I", buf, 24, zlib.crc32(bytes(buf[HEADER:])) & 0xFFFFFFFF)
    return bytes(buf)


def parse_tensors(plan):
    """The tensor table of a plan (payload: u32 implicit, i32 max batch, i32 threads, str engine name, u32 n, then
    per tensor str name, u32 dtype, u32 kind, dims, dims, u64 n_bytes + bytes).  Returns dicts with field offsets."""
    off = HEADER + 12
    (n,) = struct.unpack_from("<I", plan, off)
    off += 4 + n
    (count,) = struct.unpack_from("<I", plan, off)
    off += 4
    tensors = []
    for _ in range(count):
        (n,) = struct.unpack_from("<I", plan, off)
        rec = {"name_off": off + 4, "name": plan[off + 4:off + 4 + n].decode()}
        off += 4 + n
        rec["dtype_off"], rec["kind_off"] = off, off + 4
        rec["dtype"], rec["kind"] = struct.unpack_from("<II", plan, off)
        off += 8
        for _ in range(2):
            (nd,) = struct.unpack_from("<i", plan, off)
            off += 4 + 8 * max(nd, 0)
        (nb,) = struct.unpack_from("<Q", plan, off)
        off += 8 + nb
        tensors.append(rec)
    return tensors


def patch_u32(plan, off, value):
    buf = bytearray(plan)
    struct.pack_into("<I", buf, off, value)
    return bytes(buf)


# ------------------------------------------------------------------------------------------------------------
# the network (with fusable layers) and its float64 reference
# ------------------------------------------------------------------------------------------------------------

class Model:
    def __init__(self, seed=3):
        rng = np.random.default_rng(seed)
        self.conv_w = (rng.standard_normal((K, C, 3, 3)) * 0.5).astype(np.float32)
        self.conv_b = rng.standard_normal(K).astype(np.float32)
        self.scale = rng.uniform(0.5, 1.5, K).astype(np.float32)
        self.shift = rng.standard_normal(K).astype(np.float32)
        self.fc_w = (rng.standard_normal((K * H * W // 4, CLASSES)) * 0.3).astype(np.float32)
        self.fc_b = rng.standard_normal((1, CLASSES)).astype(np.float32)

    def define(self, network):
        x = network.add_input("x", trt.float32, (N, C, H, W))
        conv = network.add_convolution_nd(x, K, (3, 3), self.conv_w, self.conv_b)
        conv.padding_nd = (1, 1)
        conv.name = "conv"
        bn = network.add_scale(conv.get_output(0), trt.ScaleMode.CHANNEL, shift=self.shift, scale=self.scale)
        bn.name = "bn"
        relu = network.add_activation(bn.get_output(0), trt.ActivationType.RELU)
        relu.name = "relu"
        pool = network.add_pooling_nd(relu.get_output(0), trt.PoolingType.MAX, (2, 2))
        pool.stride_nd = (2, 2)
        flat = network.add_shuffle(pool.get_output(0))
        flat.reshape_dims = (N, -1)
        wc = network.add_constant(self.fc_w.shape, self.fc_w)
        mm = network.add_matrix_multiply(flat.get_output(0), trt.MatrixOperation.NONE, wc.get_output(0),
                                         trt.MatrixOperation.NONE)
        bc = network.add_constant(self.fc_b.shape, self.fc_b)
        add = network.add_elementwise(mm.get_output(0), bc.get_output(0), trt.ElementWiseOperation.SUM)
        sm = network.add_softmax(add.get_output(0))
        sm.axes = 2
        sm.get_output(0).name = "prob"
        network.mark_output(sm.get_output(0))

    def reference(self, x):
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        y = np.zeros((x.shape[0], K, H, W))
        for i in range(3):
            for j in range(3):
                y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + H, j:j + W], self.conv_w[:, :, i, j].astype(np.float64))
        y += self.conv_b.reshape(1, -1, 1, 1)
        y = np.maximum(y * self.scale.reshape(1, -1, 1, 1) + self.shift.reshape(1, -1, 1, 1), 0.0)
        y = y.reshape(N, K, H // 2, 2, W // 2, 2).max(axis=(3, 5)).reshape(N, -1)
        y = y @ self.fc_w.astype(np.float64) + self.fc_b
        e = np.exp(y - y.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


MODEL = Model()


def build_plan(level=None):
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    MODEL.define(network)
    config = builder.create_builder_config()
    if level is not None:
        config.builder_optimization_level = level
    return bytes(builder.build_serialized_network(network, config))


@pytest.fixture(scope="module")
def plans():
    return {"level0": build_plan(0), "default": build_plan()}


@pytest.fixture(scope="module")
def plan(plans):
    return plans["default"]


def load(buf, logger=None):
    return trt.Runtime(logger or trt.Logger(trt.Logger.INTERNAL_ERROR)).deserialize_cuda_engine(buf)


def engine_info(engine):
    return json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))


def x_input(seed=0):
    return np.random.default_rng(seed).standard_normal((N, C, H, W)).astype(np.float32)


# ------------------------------------------------------------------------------------------------------------
# two configs, two engines
# ------------------------------------------------------------------------------------------------------------

def test_two_configs_give_two_correct_engines(plans):
    assert plans["level0"] != plans["default"]
    e0, e3 = load(plans["level0"]), load(plans["default"])
    x = x_input(1)
    ref = MODEL.reference(x)
    for e in (e0, e3):
        assert_close(e.create_execution_context().infer({"x": x})["prob"], ref)
    l0, l3 = engine_info(e0)["layers"], engine_info(e3)["layers"]
    names0, names3 = [layer["name"] for layer in l0], [layer["name"] for layer in l3]
    # level 0: no fusion, reference kernels; default: scale and activation folded into the convolution
    assert not any(" + " in n for n in names0)
    assert {"conv", "bn", "relu"} <= set(names0)
    assert all(layer["kernel"].endswith(".ref") for layer in l0), [layer["kernel"] for layer in l0]
    assert "conv + bn + relu" in names3
    assert len(l3) < len(l0) and e3.num_layers < e0.num_layers
    kernels0 = {layer["name"]: layer["kernel"] for layer in l0}
    kernels3 = {layer["name"]: layer["kernel"] for layer in l3}
    assert kernels0["conv"] != kernels3["conv + bn + relu"]


def test_building_twice_with_one_network():
    """The network is not modified by a build: building it again (another config) works and agrees."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(EXPLICIT)
    MODEL.define(network)
    layers_before = [layer.name for layer in network]
    c0 = builder.create_builder_config()
    c0.builder_optimization_level = 0
    e_a = builder.build_engine(network, builder.create_builder_config())
    e_b = builder.build_engine(network, c0)
    e_c = builder.build_engine(network, builder.create_builder_config())
    assert [layer.name for layer in network] == layers_before
    x = x_input(2)
    outs = [e.create_execution_context().infer({"x": x})["prob"] for e in (e_a, e_b, e_c)]
    for o in outs:
        assert_close(o, MODEL.reference(x))
    np.testing.assert_array_equal(outs[0], outs[2])


LOADER = r"""
import sys
import numpy as np
import trtlite as trt
x = np.load(sys.argv[1])
for path in sys.argv[2:]:
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(open(path, "rb").read())
    ctx = engine.create_execution_context()
    y = np.empty(tuple(ctx.get_tensor_shape("prob")), np.float32)
    ctx.execute_v2([x, y])
    np.save(path + ".out.npy", y)
    print(path, engine.num_layers, engine.num_io_tensors)
"""


def test_plan_loads_in_a_new_process_bit_identical(plans, tmp_path):
    x = x_input(3)
    np.save(tmp_path / "x.npy", x)
    paths = []
    for name, buf in plans.items():
        p = tmp_path / (name + ".plan")
        p.write_bytes(buf)
        paths.append(p)
    proc = run_python(LOADER, tmp_path / "x.npy", *paths)
    assert proc.returncode == 0, describe(proc)
    for name, p in zip(plans, paths):
        engine = load(plans[name])
        here = engine.create_execution_context().infer({"x": x})["prob"]
        there = np.load(str(p) + ".out.npy")
        assert there.dtype == np.float32 and there.shape == here.shape
        np.testing.assert_array_equal(there.view(np.uint32), here.view(np.uint32))
        assert_close(there, MODEL.reference(x))
        assert "%s %d 2" % (p, engine.num_layers) in proc.stdout


# ------------------------------------------------------------------------------------------------------------
# broken plans
# ------------------------------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02\x00\x00\x00" + bytes(200)
TEXT = b"# not an engine\n" + b"name: resnet50\nbatch: 8\nprecision: fp16\n" * 8


def plan_version(plan):
    """The format version in a plan's header (u32 at byte 8); the dummy plans of CASE_NAMES count as 1."""
    return max(1, int.from_bytes(plan[8:12], "little"))


def corruptions(plan):
    """name -> (bytes, substrings of which the PlanError message must contain one)."""
    half = HEADER + (len(plan) - HEADER) // 2
    flipped = bytearray(plan)
    flipped[half] ^= 0x5A
    magic = bytearray(plan)
    magic[0:8] = b"TRTLPLAX"
    trt_like = bytes(4) + b"ftrt" + bytes(56) + plan[HEADER:]     # a TensorRT-engine-like start
    cases = {
        "empty": (b"", ["header", "not a trtlite plan"]),
        "one_byte": (plan[:1], ["header"]),
        "cut_in_header": (plan[:40], ["header"]),
        "header_only": (plan[:HEADER], ["truncated"]),
        "cut_after_header": (plan[:HEADER + 5], ["truncated"]),
        "cut_in_middle": (plan[:half], ["truncated"]),
        "cut_last_byte": (plan[:-1], ["truncated"]),
        "flipped_payload_byte": (bytes(flipped), ["checksum"]),
        "wrong_magic": (bytes(magic), ["magic", "not a trtlite plan"]),
        "version_next": (patch_u32(plan, 8, plan_version(plan) + 1), ["version %d" % (plan_version(plan) + 1)]),
        # the newest version no longer read (version 3 readers also read version 2 plans)
        "version_previous": (patch_u32(plan, 8, 1), ["version 1"]),
        "version_0": (patch_u32(plan, 8, 0), ["version 0"]),
        "header_size": (patch_u32(plan, 12, 32), ["header size"]),
        "png_file": (PNG, ["not a trtlite plan"]),
        "text_file": (TEXT, ["not a trtlite plan"]),
        "tensorrt_like": (trt_like, ["not a trtlite plan"]),
        "trailing_garbage": (plan + b"\x00garbage", ["padded", "trailing"]),
        "plan_twice": (plan + plan, ["padded", "trailing"]),
        "payload_size_lies": (fix_crc(patch_u32(plan, 16, len(plan))), ["truncated", "padded"]),
        "cpu_features": (patch_u32(plan, 28, 0xFFFFFF00), ["CPU"]),
    }
    return cases


CASE_NAMES = list(corruptions(b"\x00" * 200).keys())


@pytest.mark.parametrize("case", CASE_NAMES)
def test_broken_plan_raises_plan_error(plan, case):
    buf, words = corruptions(plan)[case]
    with pytest.raises(trt.PlanError) as ei:
        load(buf)
    err = ei.value
    assert isinstance(err, ValueError) and isinstance(err, trt.Error)
    msg = str(err)
    assert any(w in msg for w in words), "message %r mentions none of %r" % (msg, words)


def test_version_error_mentions_both_versions(plan):
    with pytest.raises(trt.PlanError) as ei:
        load(patch_u32(plan, 8, 77))
    msg = str(ei.value)
    assert "version 77" in msg and "version %d" % plan_version(plan) in msg


def test_plan_error_is_logged_to_the_runtime_logger(plan):
    class Rec(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.messages = []

        def log(self, severity, msg):
            self.messages.append((int(severity), msg))

    logger = Rec()
    with pytest.raises(trt.PlanError) as ei:
        load(plan[:-3], logger)
    assert (int(trt.ILogger.Severity.ERROR), str(ei.value)) in logger.messages


def test_a_good_plan_still_loads_after_errors(plan):
    for buf, _ in corruptions(plan).values():
        with pytest.raises(trt.PlanError):
            load(buf)
    x = x_input(4)
    assert_close(load(plan).create_execution_context().infer({"x": x})["prob"], MODEL.reference(x))


def test_not_a_buffer_is_a_type_error():
    runtime = trt.Runtime(trt.Logger(trt.Logger.ERROR))
    for bad in (None, "TRTLPLAN", 42):
        with pytest.raises(TypeError):
            runtime.deserialize_cuda_engine(bad)


WORST = r"""
import os, sys
import trtlite as trt
runtime = trt.Runtime(None)
for path in sorted(os.listdir(sys.argv[1])):
    try:
        runtime.deserialize_cuda_engine(open(os.path.join(sys.argv[1], path), "rb").read())
        print(path, "LOADED")
    except trt.PlanError as e:
        print(path, "PlanError", str(e).replace("\n", " ")[:120])
    except Exception as e:
        print(path, "OTHER", type(e).__name__, e)
    sys.stdout.flush()
"""


def test_broken_plans_in_a_subprocess(plan, tmp_path):
    cases = corruptions(plan)
    rng = np.random.default_rng(0)
    # valid header and CRC around a random payload: the structural checks have to catch it
    for i in range(5):
        payload = rng.integers(0, 256, len(plan) - HEADER, dtype=np.uint8).tobytes()
        cases["random_payload_%d" % i] = (fix_crc(plan[:HEADER] + payload), [])
    for name, (buf, _) in cases.items():
        (tmp_path / name).write_bytes(buf)
    proc = run_python(WORST, tmp_path)
    assert proc.returncode == 0, describe(proc)
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert set(lines) == set(cases), describe(proc)
    for name, result in lines.items():
        assert result.startswith("PlanError"), "%s: %s" % (name, result)


# ------------------------------------------------------------------------------------------------------------
# fuzz: single-byte corruptions with the CRC recomputed
# ------------------------------------------------------------------------------------------------------------

def structural_plan():
    """A plan that is mostly structure (tiny weights): dynamic input with a profile, fused and unfused layers,
    a constant, two outputs."""
    rng = np.random.default_rng(0)
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (-1, 2, 4, 4))
    conv = net.add_convolution_nd(x, 2, (1, 1), rng.standard_normal((2, 2, 1, 1)).astype(np.float32))
    relu = net.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    add = net.add_elementwise(relu.get_output(0), x, trt.ElementWiseOperation.SUM)
    pool = net.add_pooling_nd(add.get_output(0), trt.PoolingType.AVERAGE, (2, 2))
    pool.stride_nd = (2, 2)
    flat = net.add_shuffle(pool.get_output(0))
    flat.reshape_dims = (-1, 8)
    wc = net.add_constant((8, 3), rng.standard_normal((8, 3)).astype(np.float32))
    mm = net.add_matrix_multiply(flat.get_output(0), trt.MatrixOperation.NONE, wc.get_output(0),
                                 trt.MatrixOperation.NONE)
    cat = net.add_concatenation([mm.get_output(0), mm.get_output(0)])
    cat.axis = 1
    sm = net.add_softmax(cat.get_output(0))
    sm.axes = 2
    sm.get_output(0).name = "prob"
    rd = net.add_reduce(cat.get_output(0), trt.ReduceOperation.MAX, 2, True)
    rd.get_output(0).name = "mx"
    net.mark_output(sm.get_output(0))
    net.mark_output(rd.get_output(0))
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0      # no timing: the same kernels (and bytes) every time on this machine
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 2, 4, 4), (2, 2, 4, 4), (3, 2, 4, 4))
    config.add_optimization_profile(profile)
    return bytes(builder.build_serialized_network(net, config))


FUZZ = r"""
import json, struct, sys, zlib
import numpy as np
import trtlite as trt
plan = open(sys.argv[1], "rb").read()
count, seed = int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(seed)
runtime = trt.Runtime(None)
x = np.ones((2, 2, 4, 4), np.float32)
res = {"loaded": 0, "ran": 0, "load_errors": 0, "run_errors": 0, "messages": [], "other": []}
for i in range(count):
    buf = bytearray(plan)
    pos = int(rng.integers(64, len(buf)))
    buf[pos] ^= int(rng.integers(1, 256))
    struct.pack_into("<I", buf, 24, zlib.crc32(bytes(buf[64:])) & 0xFFFFFFFF)
    sys.stderr.write("%d: byte %d -> 0x%02x\n" % (i, pos, buf[pos]))
    sys.stderr.flush()
    try:
        engine = runtime.deserialize_cuda_engine(bytes(buf))
    except trt.Error as e:
        res["load_errors"] += 1
        res["messages"].append(str(e)[:50])
        continue
    except Exception as e:
        res["other"].append("load, byte %d: %s: %s" % (pos, type(e).__name__, str(e)[:100]))
        continue
    res["loaded"] += 1
    try:
        names = [engine.get_tensor_name(k) for k in range(engine.num_io_tensors)]
        out = engine.create_execution_context().infer({"x": x})
        res["ran"] += 1
    except trt.Error as e:
        res["run_errors"] += 1
    except Exception as e:
        res["other"].append("run, byte %d: %s: %s" % (pos, type(e).__name__, str(e)[:100]))
print(json.dumps(res))
"""


@pytest.fixture(scope="module")
def fuzz_result(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "structural.plan"
    buf = structural_plan()
    path.write_bytes(buf)
    proc = run_python(FUZZ, path, 200, 2024, timeout=300)
    return proc, len(buf)


def test_fuzz_single_byte_corruptions_never_crash(fuzz_result):
    proc, size = fuzz_result
    assert proc.returncode == 0, describe(proc)     # a negative code is the signal that killed it
    res = json.loads(proc.stdout.splitlines()[-1])
    assert res["loaded"] + res["load_errors"] + len([o for o in res["other"] if o.startswith("load")]) == 200
    # the structural checks were reached: many distinct failures, and some corruptions are harmless
    assert res["load_errors"] >= 40, res
    assert len({m[:30] for m in res["messages"]}) >= 5, res["messages"]
    assert not any("checksum" in m for m in res["messages"])
    assert res["loaded"] >= 1 and res["ran"] >= 1, res


def test_fuzz_failures_are_all_trt_errors(fuzz_result):
    proc, _ = fuzz_result
    assert proc.returncode == 0, describe(proc)
    res = json.loads(proc.stdout.splitlines()[-1])
    assert res["other"] == []


TARGETED = r"""
import sys
import numpy as np
import trtlite as trt
try:
    engine = trt.Runtime(None).deserialize_cuda_engine(open(sys.argv[1], "rb").read())
except trt.Error as e:
    print("REJECTED", type(e).__name__, e)
    raise SystemExit(0)
print("LOADED", flush=True)
ctx = engine.create_execution_context()
x = np.ones((2, 6), np.float32)
dt = np.dtype(trt.nptype(engine.get_tensor_dtype("prob")))
need = 12 * dt.itemsize
guard = np.full(need + 64, 0x5A, np.uint8)       # the output buffer followed by 64 guard bytes
try:
    ctx.execute_v2([x, guard.ctypes.data])
except trt.Error as e:
    print("RUN_ERROR", e)
    raise SystemExit(0)
print("RAN guard_intact=%s" % bool((guard[need:] == 0x5A).all()))
"""


def small_plan():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 6))
    ex = net.add_unary(x, trt.UnaryOperation.EXP)
    ex.get_output(0).name = "r"
    sm = net.add_softmax(ex.get_output(0))
    sm.axes = 2
    sm.get_output(0).name = "prob"
    net.mark_output(sm.get_output(0))
    return bytes(builder.build_serialized_network(net, builder.create_builder_config()))


def run_targeted(tmp_path, buf):
    path = tmp_path / "targeted.plan"
    path.write_bytes(buf)
    proc = run_python(TARGETED, path)
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout
    assert "REJECTED PlanError" in out or "RUN_ERROR" in out or "RAN guard_intact=True" in out, describe(proc)
    return out


def test_targeted_harmless_rewrites(tmp_path):
    """Sanity of the targeted harness: the untouched plan runs, an input tensor made HALF is rejected."""
    buf = small_plan()
    assert "RAN guard_intact=True" in run_targeted(tmp_path, buf)
    x = [t for t in parse_tensors(buf) if t["name"] == "x"][0]
    assert "REJECTED PlanError" in run_targeted(tmp_path, fix_crc(patch_u32(buf, x["dtype_off"], 1)))


def test_intermediate_tensor_marked_output_is_rejected(tmp_path):
    buf = small_plan()
    r = [t for t in parse_tensors(buf) if t["name"] == "r"][0]
    assert r["kind"] == 2      # activation
    run_targeted(tmp_path, fix_crc(patch_u32(buf, r["kind_off"], 1)))


def test_output_dtype_contradicting_its_layer_is_rejected(tmp_path):
    buf = small_plan()
    prob = [t for t in parse_tensors(buf) if t["name"] == "prob"][0]
    assert prob["dtype"] == 0
    run_targeted(tmp_path, fix_crc(patch_u32(buf, prob["dtype_off"], 1)))


def non_utf8_cases(plan):
    cases = {}
    bad_version = bytearray(patch_u32(plan, 8, 9))
    bad_version[32:36] = b"\xff\xfe\x80\x81"          # producer string (not covered by the CRC)
    cases["producer_string"] = bytes(bad_version)
    kname = b"softmax."  # the softmax node's kernel name (softmax.simd or softmax.ref)
    i = plan.index(kname)
    kernel = bytearray(plan)
    kernel[i + 3] = 0xFF
    cases["kernel_name"] = fix_crc(kernel)
    prob = [t for t in parse_tensors(plan) if t["name"] == "prob"][0]
    tensor = bytearray(plan)
    tensor[prob["name_off"] + 1] = 0xFF
    cases["tensor_name"] = fix_crc(tensor)
    return cases


@pytest.mark.parametrize("case", ["producer_string", "kernel_name", "tensor_name"])
def test_non_utf8_bytes_in_plan(plan, case):
    buf = non_utf8_cases(plan)[case]
    try:
        engine = trt.Runtime(None).deserialize_cuda_engine(buf)
    except trt.PlanError:
        return
    # loaded: then every name must be readable
    for i in range(engine.num_io_tensors):
        assert isinstance(engine.get_tensor_name(i), str)


def test_what_the_builder_accepts_the_loader_accepts():
    builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
    network = builder.create_network(EXPLICIT)
    try:
        x = network.add_input("x", trt.float32, (1 << 21, 1 << 21, 1 << 4))  # 2**46 elements, never allocated
    except trt.ShapeError as e:
        assert "'x'" in str(e)
        return                       # refusing when the input is declared is fine too
    relu = network.add_activation(x, trt.ActivationType.RELU)
    relu.get_output(0).name = "y"
    network.mark_output(relu.get_output(0))
    try:
        plan = builder.build_serialized_network(network, builder.create_builder_config())
    except trt.Error:
        return                       # refusing at build time is fine too
    engine = load(bytes(plan))
    assert engine.get_tensor_shape("y") == (1 << 21, 1 << 21, 1 << 4)
