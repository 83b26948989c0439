"""Hostile inputs (project issue #9): plans written by hand that break an invariant the builder guarantees, C plugin
libraries that break the plugin contract, and allocation failures injected at every allocation point.

Each case must end in a trt exception naming what is wrong -- never a crash, an over-read, a silently unwritten
output or a "corrupt plan" for what was really out of memory.  Cases that crashed before their fix run in a
subprocess, so a regression shows up as a failed test, not a dead test run.

Plans are written here from scratch by `PlanWriter` (format: csrc/serialize/plan.h); a well-formed one is checked to
load and compute, so that each refused variant differs from a good plan in exactly the broken invariant.
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import trtlite as trt

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(trt.__file__)))  # the package's root (build/asan/pkg too)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # the sources
UNDER_ASAN = bool(os.environ.get("TRTLITE_UNDER_ASAN"))


def _op_numbers():
    """trtl_op values: the row order of ops.def."""
    ops = {}
    with open(os.path.join(REPO, "csrc", "include", "trtlite", "ops.def")) as f:
        for line in f:
            if line.startswith("TRTL_OP("):
                ops[line[len("TRTL_OP("):].split(",")[0].strip()] = len(ops)
    return ops


OPS = _op_numbers()
FLOAT, INPUT, OUTPUT, ACTIVATION, CONSTANT = 0, 0, 1, 2, 3


def _str(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<I", len(b)) + b


def _dims(d):
    return struct.pack("<i", len(d)) + b"".join(struct.pack("<q", v) for v in d)


class PlanWriter:
    """Writes a version-3 plan from tensors, I/O, profiles and nodes given directly (only ops whose params are
    known here: IDENTITY none, CONCATENATION i32 axis)."""

    def __init__(self):
        self.tensors, self.io_in, self.io_out, self.profiles, self.nodes = [], [], [], [], []

    def tensor(self, name, kind, dims, max_dims=None):
        self.tensors.append((name, kind, tuple(dims), tuple(max_dims if max_dims is not None else dims)))
        idx = len(self.tensors) - 1
        if kind == INPUT:
            self.io_in.append(idx)
        elif kind == OUTPUT:
            self.io_out.append(idx)
        return idx

    def profile(self, *shapes):
        """One (min, opt, max) per input."""
        self.profiles.append(shapes)

    def node(self, op, name, ins, outs, params=b""):
        self.nodes.append((OPS[op], name, op.lower() + ".ref", list(ins), list(outs), params))

    def identity(self, name, src, dst):
        self.node("IDENTITY", name, [src], [dst])

    def bytes(self):
        p = struct.pack("<Iii", 0, 1, 1) + _str("handmade")
        p += struct.pack("<I", len(self.tensors))
        for name, kind, dims, max_dims in self.tensors:
            p += _str(name) + struct.pack("<II", FLOAT, kind) + _dims(dims) + _dims(max_dims) + struct.pack("<Q", 0)
        io = self.io_in + self.io_out
        p += struct.pack("<II", len(io), len(self.io_in)) + b"".join(struct.pack("<I", i) for i in io)
        profiles = self.profiles or [tuple((self.tensors[i][2],) * 3 for i in self.io_in)]
        p += struct.pack("<I", len(profiles))
        for pr in profiles:
            for mn, opt, mx in pr:
                p += _dims(mn) + _dims(opt) + _dims(mx)
        p += struct.pack("<I", len(self.nodes))
        for op, name, kernel, ins, outs, params in self.nodes:
            p += struct.pack("<I", op) + _str(name) + _str(kernel) + struct.pack("<i", 0)  # precision: FLOAT
            p += struct.pack("<iffI", -1, 0.0, 0.0, 0)
            p += struct.pack("<I", len(ins)) + b"".join(struct.pack("<I", i) for i in ins)
            p += struct.pack("<I", len(outs)) + b"".join(struct.pack("<I", i) for i in outs) + params
        header = bytearray(64)
        header[0:8] = b"TRTLPLAN"
        struct.pack_into("<IIQII", header, 8, 3, 64, len(p), zlib.crc32(p) & 0xFFFFFFFF, 0)
        header[32:37] = b"0.1.0"
        return bytes(header) + p


def load(plan):
    return trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)


def run_python(code, *args, env=None, timeout=300):
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["TRTL_TESTS_DIR"] = os.path.join(REPO, "tests")
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=e, cwd=ROOT)


def describe(proc):
    return "returncode %d\nstdout: %s\nstderr (tail): %s" % (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])


LOAD_IN_SUBPROCESS = r"""
import sys
import trtlite as trt
plan = open(sys.argv[1], "rb").read()
try:
    trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    print("LOADED")
except trt.PlanError as e:
    print("PlanError:", e)
"""


def load_in_subprocess(tmp_path, plan):
    path = tmp_path / "case.plan"
    path.write_bytes(plan)
    proc = run_python(LOAD_IN_SUBPROCESS, path)
    assert proc.returncode == 0, describe(proc)
    return proc.stdout


# ---- the hand-written plans ------------------------------------------------------------------------------------

def chain_plan():
    """x -> identity -> t -> identity -> y, all (2, 3)."""
    w = PlanWriter()
    x = w.tensor("x", INPUT, (2, 3))
    t = w.tensor("t", ACTIVATION, (2, 3))
    y = w.tensor("y", OUTPUT, (2, 3))
    return w, x, t, y


def test_hand_written_plan_loads_and_computes():
    w, x, t, y = chain_plan()
    w.identity("first", x, t)
    w.identity("second", t, y)
    engine = load(w.bytes())
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    np.testing.assert_array_equal(engine.create_execution_context().infer({"x": xv})["y"], xv)


def test_concatenation_of_65_inputs_is_refused(tmp_path):
    # The network API takes at most 64 inputs a layer; the loader used to take 1024 and overflow a 64-entry array.
    w = PlanWriter()
    x = w.tensor("x", INPUT, (1, 3))
    y = w.tensor("y", OUTPUT, (65, 3))
    w.node("CONCATENATION", "cat65", [x] * 65, [y], struct.pack("<i", 0))
    out = load_in_subprocess(tmp_path, w.bytes())
    assert "PlanError" in out and "cat65" in out and "65 inputs" in out, out
    # 64 is fine
    w = PlanWriter()
    x = w.tensor("x", INPUT, (1, 3))
    y = w.tensor("y", OUTPUT, (64, 3))
    w.node("CONCATENATION", "cat64", [x] * 64, [y], struct.pack("<i", 0))
    xv = np.array([[1, 2, 3]], np.float32)
    np.testing.assert_array_equal(load(w.bytes()).create_execution_context().infer({"x": xv})["y"],
                                  np.repeat(xv, 64, axis=0))


def _refused(plan, *parts):
    with pytest.raises(trt.PlanError) as ei:
        load(plan)
    for part in parts:
        assert part in str(ei.value), str(ei.value)


def test_output_without_producer_is_refused():
    w, x, t, y = chain_plan()
    w.identity("first", x, t)
    _refused(w.bytes(), "'y'", "not produced")


def test_step_writing_its_own_input_is_refused():
    w, x, t, y = chain_plan()
    w.identity("first", x, t)
    w.identity("loop", t, t)
    w.identity("second", t, y)
    _refused(w.bytes(), "'loop'", "'t'")


def test_tensor_used_before_it_is_produced_is_refused():
    w, x, t, y = chain_plan()
    w.identity("second", t, y)
    w.identity("first", x, t)
    _refused(w.bytes(), "'second'", "'t'", "before")


def test_tensor_produced_twice_is_refused():
    w, x, t, y = chain_plan()
    w.identity("first", x, t)
    w.identity("again", x, t)
    w.identity("second", t, y)
    _refused(w.bytes(), "'again'", "'t'", "twice")


def test_one_step_with_an_output_twice_is_refused():
    w = PlanWriter()
    x = w.tensor("x", INPUT, (2, 3))
    y = w.tensor("y", OUTPUT, (2, 3))
    w.node("IDENTITY", "dup", [x], [y, y])
    with pytest.raises(trt.PlanError):
        load(w.bytes())


def test_unused_internal_tensor_without_producer_is_refused():
    w, x, t, y = chain_plan()
    w.tensor("orphan", ACTIVATION, (4,))
    w.identity("first", x, t)
    w.identity("second", t, y)
    _refused(w.bytes(), "'orphan'", "not produced")


def test_tensor_beyond_2_40_elements_is_refused():
    w = PlanWriter()
    x = w.tensor("x", INPUT, (1 << 21, 1 << 20))
    y = w.tensor("y", OUTPUT, (1 << 21, 1 << 20))
    w.identity("big", x, y)
    _refused(w.bytes(), "'x'")


def dynamic_plan(profile_max, max_dims=(4, 3)):
    w = PlanWriter()
    x = w.tensor("x", INPUT, (-1, 3), max_dims)
    y = w.tensor("y", OUTPUT, (-1, 3), max_dims)
    w.identity("copy", x, y)
    w.profile(((1, 3), (2, 3), profile_max))
    return w.bytes()


def test_dynamic_hand_written_plan_runs_within_its_profile():
    engine = load(dynamic_plan((4, 3)))
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", (3, 3))
    xv = np.arange(9, dtype=np.float32).reshape(3, 3)
    np.testing.assert_array_equal(ctx.infer({"x": xv})["y"], xv)


@pytest.mark.parametrize("profile_max,what", [
    ((1 << 61, 3), "2^40"),                 # volume overflows: was accepted, then a 1-element array passed
    ((1 << 40, 3), "2^40"),                 # beyond the builder's bound
    ((8, 3), "max"),                        # beyond the tensor's planned max shape
    ((4, 5), "3"),                          # contradicts the static dimension
    ((4,), "rank"),
])
def test_profile_the_builder_would_refuse_is_refused(profile_max, what):
    _refused(dynamic_plan(profile_max), "'x'", what)


def test_profile_min_above_max_is_refused():
    w = PlanWriter()
    x = w.tensor("x", INPUT, (-1, 3), (4, 3))
    y = w.tensor("y", OUTPUT, (-1, 3), (4, 3))
    w.identity("copy", x, y)
    w.profile(((4, 3), (2, 3), (3, 3)))
    _refused(w.bytes(), "'x'", "min <= opt <= max")


HUGE_SHAPE = r"""
import struct, sys
import numpy as np
import trtlite as trt
plan = open(sys.argv[1], "rb").read()
try:
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
except trt.PlanError as e:
    print("PlanError:", e)
    sys.exit(0)
ctx = engine.create_execution_context()
try:
    ctx.set_input_shape("x", (1 << 61, 3))
    x = np.ones(1, np.float32)
    y = np.ones(1, np.float32)
    ctx.execute_v2([x.ctypes.data, y.ctypes.data])
    print("RAN")
except trt.Error as e:
    print(type(e).__name__, e)
"""


def test_huge_profile_max_never_reaches_a_kernel(tmp_path):
    path = tmp_path / "huge.plan"
    path.write_bytes(dynamic_plan((1 << 61, 3), max_dims=(1 << 61, 3)))
    proc = run_python(HUGE_SHAPE, path)
    assert proc.returncode == 0 and "PlanError" in proc.stdout and "2^40" in proc.stdout, describe(proc)


def test_memory_plan_that_overflows_int64_fails_instead_of_wrapping():
    # A plan may list millions of tensors of up to 2^40 elements; their live-together sum must not wrap around
    # (signed overflow, found with UBSan) to a small arena.  Two overlapping 2^62-byte tensors end at 2^63.
    import ctypes
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    subprocess.run(["make", "-s", "build/libtrtlite.so"], cwd=REPO, check=True)
    lib = ctypes.CDLL(os.path.join(REPO, "build", "libtrtlite.so"))
    lib.trtl_memplan.restype = ctypes.c_int64
    plan = lib.trtl_memplan

    def run(sizes):
        n = len(sizes)
        i64, i32 = ctypes.c_int64 * n, ctypes.c_int32 * n
        offsets = i64()
        total = plan(ctypes.c_int32(n), i64(*sizes), i32(*[0] * n), i32(*[1] * n), offsets)
        return total, list(offsets)
    assert run([1 << 40, 1 << 40]) == ((1 << 41), [0, 1 << 40])
    assert run([1 << 62, 1 << 62])[0] == -1
    assert run([(1 << 63) - 1])[0] == -1


# ---- C plugin libraries breaking the contract (tests/c/misbehaving_plugin.c) --------------------------------

MISBEHAVING_SRC = os.path.join(REPO, "tests", "c", "misbehaving_plugin.c")


def compile_lib(src, out_dir, name, *defines):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    lib = os.path.join(str(out_dir), name)
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{REPO}/csrc/include",
                    *defines, src, "-o", lib], check=True)
    return lib


@pytest.fixture(scope="module")
def misbehaving(tmp_path_factory):
    lib = compile_lib(MISBEHAVING_SRC, tmp_path_factory.mktemp("mb"), "libmisbehaving_rel.so")
    reg = trt.get_plugin_registry()
    assert reg.load_library(lib)
    return reg.get_plugin_creator("Misbehaving_TEST", "1", "")


def mb_plugin(creator, mode):
    fc = trt.PluginFieldCollection([trt.PluginField("mode", np.array([mode], np.int32), trt.PluginFieldType.INT32)])
    return creator.create_plugin("mb", fc)


def mb_network(creator, mode):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_plugin_v2([x], mb_plugin(creator, mode))
    layer.name = "mb_layer"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    return builder, net


def mb_engine(creator, mode):
    builder, net = mb_network(creator, mode)
    return builder.build_engine(net, builder.create_builder_config())


def test_enqueue_message_without_nul_is_cut_at_the_buffer(misbehaving):
    ctx = mb_engine(misbehaving, 7).create_execution_context()
    for _ in range(3):
        with pytest.raises(trt.PluginError) as ei:
            ctx.infer({"x": np.ones((2, 3), np.float32)})
        msg = str(ei.value)
        assert "mb_layer" in msg and msg.endswith(": " + "A" * 511), msg[-80:]


def test_enqueue_message_that_is_not_utf8_is_repaired(misbehaving):
    ctx = mb_engine(misbehaving, 8).create_execution_context()
    with pytest.raises(trt.PluginError) as ei:
        ctx.infer({"x": np.ones((2, 3), np.float32)})
    msg = str(ei.value)
    assert "mb_layer" in msg and "bad " in msg and " bytes" in msg, msg


def test_output_desc_message_without_nul_is_cut_at_the_buffer(misbehaving):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 3))
    with pytest.raises(trt.PluginError) as ei:
        net.add_plugin_v2([x], mb_plugin(misbehaving, 9))
    msg = str(ei.value)
    assert msg.endswith("B" * 511) and "B" * 512 not in msg, msg[-80:]


def test_create_message_without_nul_and_not_utf8(misbehaving):
    with pytest.raises(trt.PluginError) as ei:
        mb_plugin(misbehaving, 12)
    msg = str(ei.value)
    assert "Misbehaving_TEST" in msg and msg.endswith("C" * 509) and "C" * 510 not in msg, msg[-80:]


def test_field_name_that_is_not_utf8_fails_the_build(misbehaving):
    builder, net = mb_network(misbehaving, 13)
    with pytest.raises(trt.PluginError, match="mb_layer.*the name of field 0 is not UTF-8"):
        builder.build_serialized_network(net, builder.create_builder_config())


CLONE_MODES = [(10, "clone() returned the instance itself"), (11, "the plugin's clone() failed")]


CLONE_AT_ADD = r"""
import sys
import numpy as np
import trtlite as trt
import os
sys.path.insert(0, os.environ["TRTL_TESTS_DIR"])
from test_reliability import mb_plugin, EXPLICIT
reg = trt.get_plugin_registry()
assert reg.load_library(sys.argv[1])
creator = reg.get_plugin_creator("Misbehaving_TEST", "1", "")
mode = int(sys.argv[2])
for attempt in range(3):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(EXPLICIT)
    x = net.add_input("x", trt.float32, (2, 3))
    try:
        net.add_plugin_v2([x], mb_plugin(creator, mode))
        print("ACCEPTED")
    except trt.PluginError as e:
        print("PluginError:", e)
    try:
        mb_plugin(creator, mode).clone()
        print("ACCEPTED")
    except trt.PluginError as e:
        print("PluginError:", e)
    del net, builder
import gc; gc.collect()
print("DONE")
"""


@pytest.mark.parametrize("mode,what", CLONE_MODES)
def test_bad_clone_is_refused_when_the_plugin_is_added(tmp_path, mode, what):
    lib = compile_lib(MISBEHAVING_SRC, tmp_path, "libmb_clone.so")
    proc = run_python(CLONE_AT_ADD, lib, mode)
    assert proc.returncode == 0 and "DONE" in proc.stdout and "ACCEPTED" not in proc.stdout, describe(proc)
    assert proc.stdout.count("PluginError: plugin 'Misbehaving_TEST': " + what) == 6, describe(proc)


def plan_with_mode(creator, mode):
    """A plan of mb_network whose stored plugin field 'mode' is rewritten (the build itself clones)."""
    builder, net = mb_network(creator, 0)
    plan = bytearray(builder.build_serialized_network(net, builder.create_builder_config()))
    at = plan.index(b"mode" + struct.pack("<iiQ", 5, 1, 4)) + 4 + 16
    struct.pack_into("<i", plan, at, mode)
    struct.pack_into("<I", plan, 24, zlib.crc32(bytes(plan[64:])) & 0xFFFFFFFF)
    return bytes(plan)


CLONE_AT_CONTEXT = r"""
import sys
import trtlite as trt
import os
sys.path.insert(0, os.environ["TRTL_TESTS_DIR"])
from test_reliability import plan_with_mode
reg = trt.get_plugin_registry()
assert reg.load_library(sys.argv[1])
creator = reg.get_plugin_creator("Misbehaving_TEST", "1", "")
plan = plan_with_mode(creator, int(sys.argv[2]))
for attempt in range(3):
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    try:
        ctx = engine.create_execution_context()
        del ctx
        print("ACCEPTED")
    except trt.PluginError as e:
        print("PluginError:", e)
    del engine
import gc; gc.collect()
print("DONE")
"""


@pytest.mark.parametrize("mode,what", CLONE_MODES)
def test_bad_clone_is_refused_naming_the_layer_when_a_context_is_made(tmp_path, mode, what):
    # loading a plan creates the plugin afresh; the context's clone is where clone() is first called
    lib = compile_lib(MISBEHAVING_SRC, tmp_path, "libmb_clone.so")
    proc = run_python(CLONE_AT_CONTEXT, lib, mode)
    assert proc.returncode == 0 and "DONE" in proc.stdout and "ACCEPTED" not in proc.stdout, describe(proc)
    assert proc.stdout.count("PluginError: layer 'mb_layer' (plugin 'Misbehaving_TEST'): " + what) == 3, describe(proc)


LOAD_LIB = r"""
import sys
import trtlite as trt
reg = trt.get_plugin_registry()
try:
    reg.load_library(sys.argv[1])
    print("LOADED")
except trt.Error as e:
    print(type(e).__name__ + ":", e)
names = [c.name for c in reg.plugin_creator_list]   # still works for everyone
logger = trt.Logger(trt.Logger.VERBOSE)
print("LISTED", len(names))
"""


@pytest.mark.parametrize("bad,what", [
    (1, "1073741824 creators"),
    (2, "not UTF-8"),
    (3, "not UTF-8"),
    (4, "longer than"),
    (5, "not UTF-8"),
    (6, "returned no creators"),
])
def test_plugin_library_breaking_the_loading_contract_is_refused(tmp_path, bad, what):
    lib = compile_lib(MISBEHAVING_SRC, tmp_path, f"libbadlib{bad}.so", f"-DBAD_LIB={bad}")
    proc = run_python(LOAD_LIB, lib)
    assert proc.returncode == 0 and "PluginError:" in proc.stdout and what in proc.stdout, describe(proc)
    assert "LISTED" in proc.stdout and f"libbadlib{bad}.so" in proc.stdout, describe(proc)
    with open("/proc/self/maps") as f:
        assert lib not in f.read()


# ---- allocation failures (tests/c/failing_alloc.c, LD_PRELOAD) -------------------------------------------------

FAILING_ALLOC_SRC = os.path.join(REPO, "tests", "c", "failing_alloc.c")


@pytest.fixture(scope="module")
def failing_alloc(tmp_path_factory):
    if UNDER_ASAN:
        pytest.skip("AddressSanitizer owns malloc; the LD_PRELOAD shim cannot run beside it")
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    lib = str(tmp_path_factory.mktemp("failalloc") / "libfailing_alloc.so")
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", FAILING_ALLOC_SRC,
                    "-o", lib, "-ldl"], check=True)
    return lib


OOM_PRELUDE = r"""
import ctypes, sys
import numpy as np
import trtlite as trt
shim = ctypes.CDLL(None)
shim.failalloc_count.restype = ctypes.c_long
EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)

shim.failalloc_live.restype = ctypes.c_long

def each_failure(attempt, check, leak_check=False):
    # attempt() once counting, then once per allocation with that one failing; every outcome is success or
    # OutOfMemoryError, check() passes after each, and with leak_check every block trtlite allocated during the
    # attempt is freed again once its objects are gone.
    import gc
    shim.failalloc_arm(-1)
    attempt()
    total = shim.failalloc_count()
    shim.failalloc_disarm()
    gc.collect()
    assert not leak_check or shim.failalloc_live() == 0, "a successful attempt leaves %d blocks" % shim.failalloc_live()
    leaks = []
    assert total > 0, "no allocation was counted: is the shim preloaded?"
    outcomes = {}
    for k in range(total):
        shim.failalloc_arm(k)
        try:
            attempt()
            outcome = "ok"
        except trt.OutOfMemoryError:
            outcome = "OutOfMemoryError"
        except Exception as e:
            outcome = "%s: %s" % (type(e).__name__, e)
        shim.failalloc_disarm()
        gc.collect()
        if leak_check and shim.failalloc_live():
            leaks.append((k, shim.failalloc_live()))
        outcomes.setdefault(outcome, []).append(k)
        check()
    print("TOTAL", total)
    if leak_check:
        print("LEAKS", leaks[:20])
    for o, ks in outcomes.items():
        print("OUTCOME", len(ks), o[:300])
"""

OOM_LOAD = OOM_PRELUDE + r"""
plan = open(sys.argv[1], "rb").read()
trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")
runtime = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR))
x = np.linspace(-1, 1, 2 * 2 * 4 * 4, dtype=np.float32).reshape(2, 2, 4, 4)
ref_engine = runtime.deserialize_cuda_engine(plan)
ref_ctx = ref_engine.create_execution_context()
ref_ctx.set_input_shape("x", x.shape)
ref = ref_ctx.infer({"x": x})

def attempt():
    engine = runtime.deserialize_cuda_engine(plan)

def check():
    engine = runtime.deserialize_cuda_engine(plan)
    ctx = engine.create_execution_context()
    ctx.set_input_shape("x", x.shape)
    got = ctx.infer({"x": x})
    for k in ref:
        assert np.array_equal(got[k], ref[k]), k

each_failure(attempt, check, leak_check=True)
"""


def structural_plan():
    """Dynamic input with a profile, fused and unfused layers, a constant, a concatenation, a built-in plugin, two
    outputs."""
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
    trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")
    creator = trt.get_plugin_registry().get_plugin_creator("LReLU_TRT", "1", "")
    lrelu = net.add_plugin_v2([rd.get_output(0)], creator.create_plugin("lrelu", trt.PluginFieldCollection(
        [trt.PluginField("negSlope", np.array([0.1], np.float32), trt.PluginFieldType.FLOAT32)])))
    lrelu.get_output(0).name = "mx"
    net.mark_output(sm.get_output(0))
    net.mark_output(lrelu.get_output(0))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 2, 4, 4), (2, 2, 4, 4), (3, 2, 4, 4))
    config.add_optimization_profile(profile)
    return bytes(builder.build_serialized_network(net, config))


def oom_outcomes(proc):
    assert proc.returncode == 0, describe(proc)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("OUTCOME")]
    bad = [ln for ln in lines if not (ln.endswith(" ok") or ln.endswith(" OutOfMemoryError"))]
    assert not bad, describe(proc)
    return proc.stdout


def test_every_allocation_failure_while_loading_is_out_of_memory(tmp_path, failing_alloc):
    path = tmp_path / "structural.plan"
    path.write_bytes(structural_plan())
    out = oom_outcomes(run_python(OOM_LOAD, path, env={"LD_PRELOAD": failing_alloc}))
    assert "OutOfMemoryError" in out and "LEAKS []" in out, out


OOM_NETWORK = OOM_PRELUDE + r"""
builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
net = builder.create_network(EXPLICIT)
x = net.add_input("x", trt.float32, (2, 3))
a = net.add_activation(x, trt.ActivationType.RELU)
b = net.add_elementwise(a.get_output(0), x, trt.ElementWiseOperation.SUM)
c = net.add_concatenation([b.get_output(0), a.get_output(0)])
c.axis = 0
net.mark_output(c.get_output(0))
shapes = iter([(2, 4), (3, 5)] * 1000)

def attempt():
    x.shape = next(shapes)          # a shape change makes the next query order and infer the whole network
    c.get_output(0).shape

def check():
    # the same query again, with nothing touched in between: it must not repeat a cached failure
    n, k = tuple(x.shape)
    assert tuple(c.get_output(0).shape) == (2 * n, k)
    assert tuple(b.get_output(0).shape) == (n, k)

each_failure(attempt, check)
shim.failalloc_arm(0)
try:
    c.get_output(0).shape
except trt.OutOfMemoryError:
    pass
shim.failalloc_disarm()
x.shape = (2, 3)
shim.failalloc_arm(0)
try:
    c.get_output(0).shape
except trt.OutOfMemoryError:
    print("FAILED ONCE")
shim.failalloc_disarm()
engine = builder.build_engine(net, builder.create_builder_config())
xv = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
a_ = np.maximum(xv, 0)
got = engine.create_execution_context().infer({"x": xv})
assert np.array_equal(list(got.values())[0], np.concatenate([a_ + xv, a_]))
print("BUILT")
"""


def test_failed_allocation_does_not_poison_the_network(failing_alloc):
    out = oom_outcomes(run_python(OOM_NETWORK, env={"LD_PRELOAD": failing_alloc}))
    assert "OutOfMemoryError" in out and "FAILED ONCE" in out and "BUILT" in out, out


def test_implicit_batch_constant_output_needs_a_full_batch_buffer():
    """An implicit-batch output computed from constants alone has a batch of 1 inside the engine and is broadcast
    into every sample of the binding; the binding check must ask for `batch` samples (it asked for one, and the
    broadcast wrote past a one-sample array: plan fuzz finding, heap-buffer-overflow in
    broadcast_constant_outputs)."""
    b = trt.Builder(trt.Logger(trt.Logger.ERROR))
    n = b.create_network()
    x = n.add_input("x", trt.float32, (2,))
    c = n.add_constant((2,), np.array([1.5, -2.0], np.float32))
    y = n.add_identity(c.get_output(0)).get_output(0)
    y.name = "y"
    n.mark_output(y)
    xo = n.add_activation(x, trt.ActivationType.RELU).get_output(0)
    xo.name = "xo"
    n.mark_output(xo)
    b.max_batch_size = 4
    e = b.build_cuda_engine(n)
    ctx = e.create_execution_context()
    xin = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    small = np.zeros((1, 2), np.float32)
    with pytest.raises(trt.ShapeError, match="binding 'y'"):
        ctx.execute(3, [xin, small, np.zeros((3, 2), np.float32)])
    ys, xs = np.full((3, 2), 77, np.float32), np.zeros((3, 2), np.float32)
    ctx.execute(3, [xin, ys, xs])
    np.testing.assert_array_equal(ys, np.tile([1.5, -2.0], (3, 1)))
    np.testing.assert_array_equal(xs, np.maximum(xin, 0))
