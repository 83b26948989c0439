"""trtlite-exec (trtlite/exec.py) end to end: subprocesses of `python -m trtlite.exec`.

Models: a small ONNX model made here with onnx.helper (Conv + Relu + GlobalAveragePool + Flatten +
Gemm, static batch 2 and dynamic batch), and plans built here through the network API (an
implicit-batch TensorRT 7 style engine), so --loadEngine is covered even without the ONNX parser.
Outputs are compared with numpy references.  Runs that several tests look at are made once per
module (fixtures), and the error cases run concurrently, to keep the file fast.
"""
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt
from trtlite import exec as trtexec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover - onnx is a test dependency
    onnx = None

needs_onnx = pytest.mark.skipif(onnx is None or not hasattr(trt, "OnnxParser"),
                                reason="needs the onnx package and trt.OnnxParser")

STATS = ("min", "mean", "median", "p90", "p95", "p99", "max")
FAST = ["--warmUp=0", "--duration=0"]


# ---- helpers ---------------------------------------------------------------------------------


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def start(*args, module="trtlite.exec"):
    return subprocess.Popen([sys.executable, "-m", module, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)


class Result:
    def __init__(self, proc):
        self.out, self.err = proc.communicate(timeout=120)
        self.rc = proc.returncode

    def __repr__(self):
        return f"rc={self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def run(*args, module="trtlite.exec"):
    return Result(start(*args, module=module))


def ok(*args):
    r = run(*args)
    assert r.rc == 0, r
    assert "Traceback" not in r.err, r
    return r


def conv_ref(x, w, b, pad):
    """NCHW cross-correlation, stride 1, in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))  # N C H W k k
    return np.einsum("nchwij,ocij->nohw", win, w.astype(np.float64)) + b.reshape(1, -1, 1, 1)


def latency_stats(text):
    stats = {}
    for m in re.finditer(r"^\s*Latency (\w+)\s+([0-9.]+) ms", text, re.M):
        stats[m.group(1)] = float(m.group(2))
    return stats


# ---- models ----------------------------------------------------------------------------------


class Model:
    rng = np.random.default_rng(7)
    W = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    B = (rng.standard_normal(8) * 0.1).astype(np.float32)
    G = (rng.standard_normal((5, 8)) * 0.3).astype(np.float32)
    GB = (rng.standard_normal(5) * 0.1).astype(np.float32)

    @classmethod
    def onnx(cls, batch):
        nodes = [helper.make_node("Conv", ["input", "W", "B"], ["c"], pads=[1, 1, 1, 1], name="conv1"),
                 helper.make_node("Relu", ["c"], ["r"], name="relu1"),
                 helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
                 helper.make_node("Flatten", ["g"], ["f"], axis=1, name="flatten"),
                 helper.make_node("Gemm", ["f", "G", "GB"], ["logits"], transB=1, name="fc")]
        graph = helper.make_graph(
            nodes, "exec_cli", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 16, 16])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 5])],
            [numpy_helper.from_array(a, n) for a, n in ((cls.W, "W"), (cls.B, "B"), (cls.G, "G"), (cls.GB, "GB"))])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    @classmethod
    def reference(cls, x):
        r = np.maximum(conv_ref(x, cls.W, cls.B, 1), 0.0)
        return r.mean(axis=(2, 3)) @ cls.G.T.astype(np.float64) + cls.GB


def implicit_plan(path):
    """A TensorRT 7 style implicit-batch engine (max batch 4): conv 3->4 k3 + relu on 3x8x8."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    builder.max_batch_size = 4
    net = builder.create_network()
    x = net.add_input("data", trt.float32, (3, 8, 8))
    conv = net.add_convolution(x, 4, (3, 3), w, b)
    relu = net.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    relu.get_output(0).name = "prob"
    net.mark_output(relu.get_output(0))
    engine = builder.build_cuda_engine(net)
    with open(path, "wb") as f:
        f.write(engine.serialize())
    return lambda x: np.maximum(conv_ref(x, w, b, 0), 0.0)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("exec_cli")
    f = {"dir": d}
    rng = np.random.default_rng(11)
    for n in (2, 3, 5):
        f[f"x{n}"] = d / f"x{n}.npy"
        np.save(f[f"x{n}"], rng.uniform(-1, 1, (n, 3, 16, 16)).astype(np.float32))
    f["implicit"] = d / "implicit.plan"
    f["implicit_ref"] = implicit_plan(f["implicit"])
    f["xi"] = d / "xi.npy"
    np.save(f["xi"], rng.uniform(-1, 1, (3, 3, 8, 8)).astype(np.float32))
    f["corrupt"] = d / "corrupt.plan"
    f["corrupt"].write_bytes(bytes(rng.integers(0, 256, 400, dtype=np.uint8)))
    f["truncated"] = d / "truncated.plan"
    f["truncated"].write_bytes(f["implicit"].read_bytes()[:200])
    if onnx is not None:
        f["static"] = d / "static.onnx"
        onnx.save(Model.onnx(2), str(f["static"]))
        f["dyn"] = d / "dyn.onnx"
        onnx.save(Model.onnx("N"), str(f["dyn"]))
        bad = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")], "bad",
                                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
        m = helper.make_model(bad, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        f["unsupported"] = d / "unsupported.onnx"
        onnx.save(m, str(f["unsupported"]))
        # an op_type that is not valid UTF-8 (protobuf gives it back as bytes): once a raw TypeError
        m.graph.node[0].op_type = "Relu"
        m.graph.node[0].name = "badop"
        f["bad_utf8"] = d / "bad_utf8.onnx"
        f["bad_utf8"].write_bytes(m.SerializeToString().replace(b"Relu", b"Rel\xff"))
    return f


# ---- build from ONNX with everything on, once ------------------------------------------------


@pytest.fixture(scope="module")
def full_run(files):
    if onnx is None or not hasattr(trt, "OnnxParser"):
        pytest.skip("needs the onnx package and trt.OnnxParser")
    d = files["dir"]
    r = ok(f"--onnx={files['static']}", f"--saveEngine={d / 'static.plan'}", f"--loadInputs=input:{files['x2']}",
           f"--exportOutput={d / 'static_out.npz'}", "--dumpProfile", f"--exportProfile={d / 'profile.json'}",
           "--dumpLayerInfo", f"--exportLayerInfo={d / 'layers.json'}", "--iterations=25", *FAST)
    return r


@needs_onnx
def test_build_reports_model_build_engine_and_io(full_run, files):
    out = full_run.out
    assert re.search(r"Build time\s+[0-9.]+ m?s$", out, re.M), out
    assert re.search(r"Plan size\s+[0-9.]+ (B|KiB|MiB)", out), out
    assert re.search(r"Layers\s+\d+ \(from \d+ network layers\)", out), out
    assert "'input' FLOAT 2x3x16x16" in out and "'logits' FLOAT 2x5" in out
    assert "&&&& PASSED" in out
    plan = files["dir"] / "static.plan"
    assert plan.stat().st_size > 0
    size = re.search(r"Plan size\s+(.*)", out).group(1)
    assert size == trtexec.fmt_bytes(plan.stat().st_size)


@needs_onnx
def test_latency_statistics_are_numeric_and_ordered(full_run):
    out = full_run.out
    s = latency_stats(out)
    assert set(STATS) <= set(s), out
    assert s["min"] <= s["median"] <= s["p90"] <= s["p95"] <= s["p99"] <= s["max"]
    assert s["min"] <= s["mean"] <= s["max"]
    assert re.search(r"Performance \(25 timed iterations", out), out
    assert re.search(r"First inference\s+[0-9.]+ ms", out)
    m = re.search(r"Throughput\s+([0-9.]+) inferences/s, ([0-9.]+) samples/s \(batch 2\)", out)
    assert m and float(m.group(1)) > 0 and float(m.group(2)) == pytest.approx(2 * float(m.group(1)), rel=1e-3)
    assert re.search(r"Peak RSS\s+[0-9.]+ MiB", out)


def test_peak_rss_is_the_tools_own(files):
    """Peak RSS is the tool's, not its parent's: getrusage's ru_maxrss survives exec(), which made a
    trtlite-exec started from a big pytest process (torch loaded) print GiB."""
    ballast = np.ones(400 * 1024 * 1024 // 8)  # 400 MiB resident in this (parent) process
    r = ok(f"--loadEngine={files['implicit']}", "--iterations=2", *FAST)
    del ballast
    m = re.search(r"Peak RSS\s+([0-9.]+) (MiB|GiB)", r.out)
    assert m and m.group(2) == "MiB" and float(m.group(1)) < 300, r


@needs_onnx
def test_exported_outputs_match_numpy(full_run, files):
    out = np.load(files["dir"] / "static_out.npz")
    assert list(out.keys()) == ["logits"]
    ref = Model.reference(np.load(files["x2"]))
    np.testing.assert_allclose(out["logits"], ref, rtol=1e-4, atol=1e-5)


@needs_onnx
def test_layer_info_lists_fused_layers_and_kernels(full_run, files):
    info = json.loads((files["dir"] / "layers.json").read_text())
    layers = info["layers"]
    assert layers and all(layer["name"] and layer["kernel"] for layer in layers)
    assert any(layer["name"] == "conv1 + relu1" for layer in layers), layers  # relu fused into the conv
    # --dumpLayerInfo printed the same JSON (pretty) after a table of kernels
    text = full_run.out.split("=== Layer information", 1)[1]
    start = text.index("\n{")
    printed = json.JSONDecoder().raw_decode(text[start + 1:])[0]
    assert printed == info
    for layer in layers:
        assert re.search(rf"\d+\s+{re.escape(layer['kernel'])}\s+{re.escape(layer['name'])}$", text, re.M)


@needs_onnx
def test_profile_lists_every_engine_layer(full_run, files):
    names = [layer["name"] for layer in json.loads((files["dir"] / "layers.json").read_text())["layers"]]
    section = full_run.out.split("=== Profile", 1)[1]
    rows = {}
    for line in section.splitlines()[2:]:
        m = re.match(r"\s+([0-9.]+)\s+([0-9.]+)\s+(?:([0-9.]+)\s+)?([0-9.]+)\s+(.*)$", line)
        if not m:
            break
        rows[m.group(5)] = float(m.group(4))
    assert set(names) | {"Total"} == set(rows), section
    assert sum(v for k, v in rows.items() if k != "Total") == pytest.approx(100.0, abs=0.5)
    doc = json.loads((files["dir"] / "profile.json").read_text())
    assert doc[0]["count"] >= 25
    assert sorted(r["name"] for r in doc[1:]) == sorted(names)
    assert [r["timeMs"] for r in doc[1:]] == sorted((r["timeMs"] for r in doc[1:]), reverse=True)


@needs_onnx
def test_load_saved_engine_gives_the_same_outputs(full_run, files):
    d = files["dir"]
    r = ok(f"--loadEngine={d / 'static.plan'}", f"--loadInputs=input:{files['x2']}",
           f"--exportOutput={d / 'loaded_out.npz'}", "--threads=1", "--iterations=3",
           f"--exportTimes={d / 'times.json'}", *FAST)
    assert re.search(r"Threads\s+1$", r.out, re.M)
    assert set(STATS) <= set(latency_stats(r.out))
    times = json.loads((d / "times.json").read_text())
    assert len(times) == 3 and all(t["latencyMs"] > 0 for t in times)
    np.testing.assert_array_equal(np.load(d / "loaded_out.npz")["logits"], np.load(d / "static_out.npz")["logits"])


# ---- dynamic shapes ---------------------------------------------------------------------------


@needs_onnx
def test_shapes_build_profile_and_run(files):
    d = files["dir"]
    # with the build options too: reference kernels (level 0), fp16/int8 accepted (fp32 on this CPU)
    r = ok(f"--onnx={files['dyn']}", "--shapes=input:3x3x16x16", f"--loadInputs=input:{files['x3']}",
           f"--exportOutput={d / 'dyn3.npz'}", "--iterations=2", "--builderOptimizationLevel=0", "--avgTiming=1",
           "--noBuilderCache", "--memPoolSize=workspace:64", "--fp16", "--int8", *FAST)
    assert "'input' 3x3x16x16 float32" in r.out and "'logits' 3x5 float32" in r.out
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    assert ("no fast fp16" in r.out) == (not builder.platform_has_fast_fp16)
    assert ("no fast int8" in r.out) == (not builder.platform_has_fast_int8)
    np.testing.assert_allclose(np.load(d / "dyn3.npz")["logits"], Model.reference(np.load(files["x3"])),
                               rtol=1e-4, atol=1e-5)


@needs_onnx
def test_min_opt_max_shapes_then_run_loaded_engine_at_other_shapes(files):
    d = files["dir"]
    plan = d / "dyn.plan"
    r = ok(f"--onnx={files['dyn']}", "--minShapes=input:1x3x16x16", "--optShapes=input:2x3x16x16",
           "--maxShapes=input:8x3x16x16", f"--saveEngine={plan}", "--skipInference")
    assert "profile 0: min 1x3x16x16 opt 2x3x16x16 max 8x3x16x16" in r.out
    assert "Performance" not in r.out
    # --shapes picks the run shape; without it the shape comes from the loaded array
    r5 = start(f"--loadEngine={plan}", "--shapes=input:5x3x16x16", f"--loadInputs=input:{files['x5']}",
               f"--exportOutput={d / 'dyn5.npz'}", "--iterations=2", *FAST)
    r3 = start(f"--loadEngine={plan}", f"--loadInputs=input:{files['x3']}", f"--exportOutput={d / 'dyn3b.npz'}",
               "--iterations=2", *FAST)
    for p, n in ((r5, 5), (r3, 3)):
        res = Result(p)
        assert res.rc == 0, res
        assert f"'logits' {n}x5 float32" in res.out
        assert re.search(rf"samples/s \(batch {n}\)", res.out)
    np.testing.assert_allclose(np.load(d / "dyn5.npz")["logits"], Model.reference(np.load(files["x5"])),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.load(d / "dyn3b.npz")["logits"], Model.reference(np.load(files["x3"])),
                               rtol=1e-4, atol=1e-5)


# ---- engines built through the network API (no ONNX needed) -----------------------------------


def test_load_implicit_batch_engine_with_batch(files):
    d = files["dir"]
    r = ok(f"--loadEngine={files['implicit']}", "--batch=3", f"--loadInputs=data:{files['xi']}",
           f"--exportOutput={d / 'implicit_out.npz'}", "--dumpProfile", "--dumpLayerInfo", "--iterations=4", *FAST)
    assert re.search(r"Batch\s+implicit, max batch 4", r.out)
    assert "'prob' 3x4x6x6 float32" in r.out
    assert set(STATS) <= set(latency_stats(r.out))
    names = [layer["name"] for layer in json.loads(
        trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(files["implicit"].read_bytes())
        .create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]]
    profile = r.out.split("=== Profile", 1)[1]
    assert all(n in profile for n in names)
    out = np.load(d / "implicit_out.npz")["prob"]
    np.testing.assert_allclose(out, files["implicit_ref"](np.load(files["xi"])), rtol=1e-4, atol=1e-4)


# ---- errors: one line on stderr, no traceback, exit status 1 (2 for usage) ----------------------


def _error_cases(f):
    d = f["dir"]
    cases = {
        "no model": ((), 2, "exactly one of --onnx"),
        "both models": ((f"--onnx={d / 'a.onnx'}", f"--loadEngine={d / 'a.plan'}"), 2, "exactly one of"),
        "unknown option": ((f"--loadEngine={f['implicit']}", "--bogus"), 2, "unrecognized arguments"),
        "bad iterations": ((f"--loadEngine={f['implicit']}", "--iterations=0"), 2, "--iterations"),
        "bad opt level": ((f"--loadEngine={f['implicit']}", "--builderOptimizationLevel=9"), 2, "0..5"),
        "missing engine": ((f"--loadEngine={d / 'nope.plan'}",), 1, "does not exist"),
        "corrupt engine": ((f"--loadEngine={f['corrupt']}",), 1, "not a trtlite plan"),
        "truncated engine": ((f"--loadEngine={f['truncated']}",), 1, "truncated"),
        "bad shapes syntax": ((f"--loadEngine={f['implicit']}", "--shapes=data:3y8x8"), 2, "--shapes"),
        "shapes without name": ((f"--loadEngine={f['implicit']}", "--shapes=3x8x8"), 2, "name:AxBxC"),
        "batch too large": ((f"--loadEngine={f['implicit']}", "--batch=5"), 1, "max batch size 4"),
        "shapes on implicit": ((f"--loadEngine={f['implicit']}", "--shapes=data:3x8x8"), 2, "--batch"),
        "missing input file": ((f"--loadEngine={f['implicit']}", f"--loadInputs=data:{d / 'none.npy'}"), 1,
                               "does not exist"),
        "unknown loadInputs name": ((f"--loadEngine={f['implicit']}", f"--loadInputs=foo:{f['xi']}"), 1,
                                    "'foo' is not an input"),
        "missing plugin": ((f"--loadEngine={f['implicit']}", f"--plugins={d / 'libnope.so'}"), 1,
                           "does not exist"),
        "unwritable output": ((f"--loadEngine={f['implicit']}", f"--exportOutput={d / 'no' / 'dir' / 'o.npz'}",
                               "--iterations=1", *FAST), 1, "cannot write"),
    }
    if onnx is not None and hasattr(trt, "OnnxParser"):
        cases.update({
            "missing onnx": ((f"--onnx={d / 'nope.onnx'}",), 1, "does not exist"),
            "unknown name in shapes": ((f"--onnx={f['dyn']}", "--shapes=image:1x3x16x16"), 1,
                                       "'image' is not an input"),
            "shape mismatch": ((f"--onnx={f['static']}", "--shapes=input:1x3x16x16"), 1, "does not match"),
            "outside profile": ((f"--onnx={f['dyn']}", "--minShapes=input:1x3x16x16", "--maxShapes=input:4x3x16x16",
                                 "--shapes=input:6x3x16x16"), 1, "outside"),
            "not an onnx file": ((f"--onnx={f['corrupt']}",), 1, "cannot parse ONNX model"),
            "unsupported op": ((f"--onnx={f['unsupported']}",), 1, "cannot parse ONNX model"),
            "op not utf-8": ((f"--onnx={f['bad_utf8']}",), 1, "cannot parse ONNX model"),
            "batch with onnx": ((f"--onnx={f['static']}", "--batch=2"), 2, "--batch"),
        })
    return cases


@pytest.fixture(scope="module")
def error_results(files):
    cases = _error_cases(files)
    procs = {}
    results = {}
    names = list(cases)
    step = 8  # a few at a time: they are short, mostly Python start-up
    for i in range(0, len(names), step):
        batch = names[i:i + step]
        for n in batch:
            procs[n] = start(*cases[n][0])
        for n in batch:
            results[n] = Result(procs[n])
    return cases, results


class _AnyPath(dict):
    def __missing__(self, key):
        return pathlib.Path("/unused")


ERROR_NAMES = list(_error_cases(_AnyPath()))  # the case names, for parametrize


@pytest.mark.parametrize("case", ERROR_NAMES)
def test_error_exits(case, error_results):
    cases, results = error_results
    if case not in cases:
        pytest.skip("needs the onnx package and trt.OnnxParser")
    _, status, needle = cases[case]
    r = results[case]
    assert r.rc == status, r
    assert "Traceback" not in r.err, r
    lines = [line for line in r.err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("trtlite-exec: error:")]
    assert len(errors) == 1 and needle in errors[0], r
    assert len(lines) == 1, r  # nothing but the one error line
    if case == "unsupported op":  # the parser error names the node and its op
        assert "node 0 'mystery' (NoSuchOp)" in errors[0], r
    if case == "op not utf-8":
        assert "node 0 'badop' (Rel\ufffd)" in errors[0] and "not valid UTF-8" in errors[0], r


def test_verbose_error_shows_traceback(files):
    r = run(f"--loadEngine={files['corrupt']}", "--verbose")
    assert r.rc == 1 and "Traceback" in r.err and "trtlite-exec: error:" in r.err


def test_python_dash_m_trtlite_help():
    r = run("--help", module="trtlite")
    assert r.rc == 0, r
    for opt in ("--onnx", "--loadEngine", "--saveEngine", "--shapes", "--dumpProfile", "--exportOutput"):
        assert opt in r.out


# ---- in-process pieces -------------------------------------------------------------------------


def test_parse_shapes():
    assert trtexec.parse_shapes("input:1x3x224x224,other:4") == {"input": (1, 3, 224, 224), "other": (4,)}
    assert trtexec.parse_shapes("input:0:2x3") == {"input:0": (2, 3)}
    assert trtexec.parse_shapes("'a,b:c':5") == {"a,b:c": (5,)}
    assert trtexec.parse_shapes("s:") == {"s": ()}
    for bad in ("input", "input:1x-3", "input:1xa", ":1x2", "a:1,a:2", "a:1,,b:2", "'a:1"):
        with pytest.raises(Exception):
            trtexec.parse_shapes(bad)


def test_load_inputs_names_may_contain_colons_and_commas():
    args = trtexec.make_parser().parse_args(["--loadEngine=e.plan", "--loadInputs=input:0:/d/a.npy,'b,c':b.npy,x:y:z"])
    tool = trtexec.Exec(args, trt)
    assert tool._resolve_load_inputs(["input:0", "b,c", "x"]) == {"input:0": "/d/a.npy", "b,c": "b.npy", "x": "y:z"}
    with pytest.raises(trtexec.CliError, match="'input' is not an input"):
        tool._resolve_load_inputs(["in", "b,c", "x"])


def test_main_returns_status_instead_of_exiting(capsys):
    assert trtexec.main(["--loadEngine=e.plan", "--iterations=0"]) == 2
    assert trtexec.main(["--help"]) == 0
    assert "usage: trtlite-exec" in capsys.readouterr().out


def test_percentile_is_nearest_rank():
    v = list(range(1, 101))
    assert [trtexec.percentile(v, p) for p in (50, 90, 99, 100)] == [50, 90, 99, 100]
    assert trtexec.percentile([3.0], 99) == 3.0


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def _tiny_build(monitor):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (1, 3, 8, 8))
    conv = net.add_convolution_nd(x, 4, (3, 3), np.ones((4, 3, 3, 3), np.float32))
    net.mark_output(net.add_activation(conv.get_output(0), trt.ActivationType.RELU).get_output(0))
    config = builder.create_builder_config()
    config.progress_monitor = monitor
    return builder.build_serialized_network(net, config)


@pytest.mark.skipif(not hasattr(trt, "IProgressMonitor"), reason="needs trt.IProgressMonitor")
def test_progress_bar_draws_on_a_tty_and_clears():
    stream = FakeTTY()
    bar = trtexec.ProgressBar(stream, delay=0.0, interval=0.0)
    assert isinstance(bar, trt.IProgressMonitor)
    assert _tiny_build(bar).nbytes > 0
    text = stream.getvalue()
    assert "%" in text and "Kernel selection" in text and "100%" in text, text
    assert text.endswith("\r") and text.rstrip("\r").endswith(" ")  # the line is blanked at the end
    assert not bar.phases


@pytest.mark.skipif(not hasattr(trt, "IProgressMonitor"), reason="needs trt.IProgressMonitor")
def test_progress_bar_silent_when_not_a_tty_or_fast_and_cancels():
    stream = io.StringIO()
    _tiny_build(trtexec.ProgressBar(stream, delay=0.0, interval=0.0))
    assert stream.getvalue() == ""
    tty = FakeTTY()
    _tiny_build(trtexec.ProgressBar(tty, delay=60.0))  # builds faster than the delay: nothing drawn
    assert tty.getvalue() == ""
    bar = trtexec.ProgressBar(io.StringIO())
    bar.cancel = True
    with pytest.raises(trt.StateError, match="cancel"):
        _tiny_build(bar)


# ---- plugin libraries ----------------------------------------------------------------------------

PLUGIN_SRC = os.path.join(ROOT, "examples", "plugins", "scaled_tanh_plugin.c")

MAKE_PLUGIN_PLAN = """
import sys, numpy as np, trtlite as trt
lib, plan = sys.argv[1:]
assert trt.get_plugin_registry().load_library(lib)
creator = trt.get_plugin_registry().get_plugin_creator("ScaledTanh_EXAMPLE", "1", "")
fields = trt.PluginFieldCollection([trt.PluginField("alpha", np.array([2.0], np.float32), trt.PluginFieldType.FLOAT32),
                                    trt.PluginField("beta", np.array([0.5], np.float32), trt.PluginFieldType.FLOAT32)])
builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
net = builder.create_network(0)
x = net.add_input("x", trt.float32, (2, 6))
layer = net.add_plugin_v2(inputs=[x], plugin=creator.create_plugin(name="st", field_collection=fields))
layer.get_output(0).name = "y"
net.mark_output(layer.get_output(0))
open(plan, "wb").write(builder.build_serialized_network(net, builder.create_builder_config()))
"""


@pytest.mark.skipif(not os.path.exists(PLUGIN_SRC) or not shutil.which("cc"), reason="needs the example plugin and cc")
def test_plugins_option_loads_a_plugin_library(files):
    d = files["dir"]
    lib, plan = d / "libscaled_tanh.so", d / "plugin.plan"
    subprocess.run(["cc", "-std=c11", "-O2", "-fPIC", "-shared", "-I" + os.path.join(ROOT, "csrc", "include"),
                    PLUGIN_SRC, "-o", str(lib), "-lm"], check=True)
    subprocess.run([sys.executable, "-c", MAKE_PLUGIN_PLAN, str(lib), str(plan)], check=True, env=_env(), cwd=ROOT)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(2, 6)
    np.save(d / "xp.npy", x)
    without = start(f"--loadEngine={plan}", "--iterations=1", *FAST)
    r = ok(f"--loadEngine={plan}", f"--plugins={lib}", f"--loadInputs=x:{d / 'xp.npy'}",
           f"--exportOutput={d / 'plugin_out.npz'}", "--iterations=1", *FAST)
    np.testing.assert_allclose(np.load(d / "plugin_out.npz")["y"], 2.0 * np.tanh(0.5 * x), rtol=1e-5, atol=1e-6)
    assert f"Loaded plugin library {lib}" in r.out
    w = Result(without)
    assert w.rc == 1 and "Traceback" not in w.err, w
    assert len(w.err.strip().splitlines()) == 1 and "ScaledTanh_EXAMPLE" in w.err, w
