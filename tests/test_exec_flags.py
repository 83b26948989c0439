"""trtlite-exec's trtexec parity (issue #13): &&&& PASSED/FAILED lines and exit status, trtexec's JSON
files (--exportOutput, --exportTimes, --exportProfile), --dumpOutput, --calib, and the accepted
CUDA-only / no-op flags.  Most runs call trtlite.exec.main() in-process (fast); one runs the module."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt
from trtlite import calibration
from trtlite import exec as trtexec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST = ["--warmUp=0", "--duration=0"]
TIME_KEYS = {"startEnqMs", "endEnqMs", "startH2dMs", "endH2dMs", "startComputeMs", "endComputeMs", "startD2hMs",
             "endD2hMs", "h2dMs", "computeMs", "d2hMs", "latencyMs", "endToEndMs"}

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover
    onnx = None

RNG = np.random.default_rng(5)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def reference(x):
    """conv 3x3 (no padding) + bias + relu in float64."""
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))
    return np.maximum(np.einsum("nchwij,ocij->nohw", win, W.astype(np.float64)) + B.reshape(1, -1, 1, 1), 0.0)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("exec_flags")
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3, 8, 8))
    conv = net.add_convolution_nd(x, 4, (3, 3), W, B)
    relu = net.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    relu.get_output(0).name = "y"
    net.mark_output(relu.get_output(0))
    (d / "m.plan").write_bytes(bytes(builder.build_serialized_network(net, builder.create_builder_config())))
    xin = RNG.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)
    np.save(d / "x.npy", xin)
    (d / "corrupt.plan").write_bytes(bytes(RNG.integers(0, 256, 300, dtype=np.uint8)))
    f = {"dir": d, "plan": d / "m.plan", "x": d / "x.npy", "xin": xin, "corrupt": d / "corrupt.plan"}
    if onnx is not None and hasattr(trt, "OnnxParser"):
        g = helper.make_graph(
            [helper.make_node("Conv", ["input", "W", "B"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")], "flags",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [2, 3, 8, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 6, 6])],
            [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, str(d / "m.onnx"))
        f["onnx"] = d / "m.onnx"
    return f


def run(capsys, *args):
    rc = trtexec.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def direct_outputs(plan_path, x):
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan_path.read_bytes())
    return engine.create_execution_context().infer({"x": x})


def test_json_outputs_match_a_direct_run(files, capsys):
    d = files["dir"]
    rc, out, err = run(capsys, f"--loadEngine={files['plan']}", f"--loadInputs=x:{files['x']}",
                       f"--exportOutput={d / 'out.json'}", f"--exportTimes={d / 'times.json'}",
                       f"--exportProfile={d / 'prof.json'}", "--iterations=4", "--avgRuns=2", *FAST)
    assert rc == 0, err
    direct = direct_outputs(files["plan"], files["xin"])["y"]
    doc = json.loads((d / "out.json").read_text())
    assert [o["name"] for o in doc] == ["y"] and doc[0]["dimensions"] == "2x4x6x6"
    values = np.asarray(doc[0]["values"], np.float32).reshape(2, 4, 6, 6)
    np.testing.assert_array_equal(values, direct)  # JSON floats round-trip float32 exactly
    np.testing.assert_allclose(values, reference(files["xin"]), rtol=1e-5, atol=1e-5)

    times = json.loads((d / "times.json").read_text())
    assert len(times) >= 4 and all(set(t) == TIME_KEYS for t in times)
    for t in times:
        assert t["latencyMs"] == t["computeMs"] == t["endToEndMs"] > 0
        assert abs(t["endComputeMs"] - t["startComputeMs"] - t["latencyMs"]) < 1e-6
        assert t["h2dMs"] == t["d2hMs"] == 0.0
    assert [t["startComputeMs"] for t in times] == sorted(t["startComputeMs"] for t in times)

    prof = json.loads((d / "prof.json").read_text())
    assert set(prof[0]) == {"count"} and prof[0]["count"] >= 4
    rows = prof[1:]
    assert rows and all(set(r) == {"name", "timeMs", "averageMs", "medianMs", "percentage"} for r in rows)
    assert [r["timeMs"] for r in rows] == sorted((r["timeMs"] for r in rows), reverse=True)
    assert abs(sum(r["percentage"] for r in rows) - 100.0) < 1e-6
    last = out.rstrip().splitlines()[-1]
    assert last.startswith(f"&&&& PASSED trtlite-exec [trtlite {trt.trtlite_version}] # trtlite-exec --loadEngine=")


def test_dump_output_prints_the_values(files, capsys):
    rc, out, err = run(capsys, f"--loadEngine={files['plan']}", f"--loadInputs=x:{files['x']}", "--dumpOutput",
                       "--iterations=1", *FAST)
    assert rc == 0, err
    lines = out.splitlines()
    i = lines.index("y: (2x4x6x6)")
    printed = np.array([float(v) for v in lines[i + 1].split()], np.float64)
    direct = direct_outputs(files["plan"], files["xin"])["y"].reshape(-1)
    assert printed.size == direct.size
    np.testing.assert_allclose(printed, direct, rtol=1e-5, atol=1e-6)


def test_cuda_only_and_no_op_flags_are_accepted_with_a_note(files, capsys):
    rc, out, err = run(capsys, f"--loadEngine={files['plan']}", "--useCudaGraph", "--device=0", "--streams", "2",
                       "--noDataTransfers", "--useSpinWait", "--separateProfileRun", "--iterations=2", *FAST)
    assert rc == 0, err
    for flag in ("--useCudaGraph", "--device", "--streams"):
        assert f"Note: {flag} is a CUDA option and does not apply" in out
    assert "Note: --noDataTransfers" in out and "Note: --useSpinWait" in out
    assert out.count("is a CUDA option") == 3


@pytest.mark.parametrize("case", ["corrupt plan", "missing plan", "usage", "bad flag value"])
def test_failures_print_failed_and_exit_nonzero(files, capsys, case):
    args = {"corrupt plan": [f"--loadEngine={files['corrupt']}"],
            "missing plan": [f"--loadEngine={files['dir'] / 'nope.plan'}"],
            "usage": ["--iterations=3"],
            "bad flag value": [f"--loadEngine={files['plan']}", "--iterations=zero"]}[case]
    rc, out, err = run(capsys, *args, *FAST)
    assert rc == (2 if case in ("usage", "bad flag value") else 1)
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("&&&& FAILED trtlite-exec") and last.endswith("# trtlite-exec " + " ".join(args + FAST))
    assert "&&&& PASSED" not in out


def test_failed_line_and_status_from_the_module(files):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "trtlite.exec", f"--loadEngine={files['corrupt']}"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0].startswith("&&&& RUNNING trtlite-exec")
    assert p.stdout.splitlines()[-1].startswith("&&&& FAILED trtlite-exec [trtlite ")
    assert "cannot load engine file" in p.stderr and "Traceback" not in p.stderr


needs_onnx = pytest.mark.skipif("onnx is None or not hasattr(trt, 'OnnxParser')")


@needs_onnx
def test_bad_onnx_model_fails(files, capsys, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    rc, out, err = run(capsys, f"--onnx={bad}", *FAST)
    assert rc == 1 and out.rstrip().splitlines()[-1].startswith("&&&& FAILED")
    assert "cannot parse ONNX model" in err


@needs_onnx
def test_calib_cache_sets_ranges(files, capsys, tmp_path):
    cache = tmp_path / "calib.cache"
    cache.write_bytes(calibration.format_calibration_cache(
        trt.CalibrationAlgoType.MINMAX_CALIBRATION, [("input", np.float32(1 / 127)), ("c", np.float32(0.05)),
                                                     ("y", np.float32(0.05))]))
    rc, out, err = run(capsys, f"--onnx={files['onnx']}", "--int8", f"--calib={cache}", "--verbose",
                       f"--exportOutput={tmp_path / 'o.json'}", "--iterations=1", *FAST)
    assert rc == 0, err
    assert "Calibration cache: " in out and "(MinMaxCalibration, 3 tensors)" in out
    assert "Reading Calibration Cache for calibrator: MinMaxCalibration" in err
    values = np.asarray(json.loads((tmp_path / "o.json").read_text())[0]["values"]).reshape(2, 4, 6, 6)
    assert values.shape == (2, 4, 6, 6)  # trtlite computes in fp32: the ranges are recorded, not applied
    # a file that is not a calibration cache is an error, not a silent fp32 build
    bad = tmp_path / "bad.cache"
    bad.write_text("hello\n")
    rc, out, err = run(capsys, f"--onnx={files['onnx']}", "--int8", f"--calib={bad}", "--skipInference")
    assert rc == 1 and "--calib" in err and "is not a calibration cache" in err
    assert out.rstrip().splitlines()[-1].startswith("&&&& FAILED")
    rc, out, err = run(capsys, f"--onnx={files['onnx']}", f"--calib={cache}", "--skipInference")
    assert rc == 0 and "Note: --calib applies with --int8" in out


@needs_onnx
def test_workspace_flag_and_npz_export(files, capsys, tmp_path):
    rc, out, err = run(capsys, f"--onnx={files['onnx']}", "--workspace=16", f"--exportOutput={tmp_path / 'o.npz'}",
                       "--iterations=1", *FAST)
    assert rc == 0, err
    assert np.load(tmp_path / "o.npz")["y"].shape == (2, 4, 6, 6)


def test_times_trace_fields():
    rows = trtexec.times_trace([0.0, 0.002], [0.001, 0.0015])
    assert rows[1]["startEnqMs"] == 2.0 and rows[1]["endComputeMs"] == 3.5 and rows[1]["latencyMs"] == 1.5
    assert all(set(r) == TIME_KEYS for r in rows)


class FakeTTY:
    def __init__(self):
        self.parts = []

    def write(self, s):
        self.parts.append(s)

    def flush(self):
        pass

    def isatty(self):
        return True

    def fileno(self):
        raise OSError("no fd")

    def getvalue(self):
        return "".join(self.parts)


@needs_onnx
def test_progress_bar_covers_parse_build_serialize_and_load(files, capsys, monkeypatch, tmp_path):
    tty = FakeTTY()
    monkeypatch.setattr(trtexec.Exec, "BAR_DELAY", 0.0)
    monkeypatch.setattr(trt.progress, "_load_tqdm", lambda: None)  # the plain line, tqdm installed or not
    monkeypatch.setattr(sys, "stderr", tty)
    rc = trtexec.main([f"--onnx={files['onnx']}", "--skipInference", f"--saveEngine={tmp_path / 'e.plan'}"])
    assert rc == 0
    frames = [f for f in tty.getvalue().split("\r") if f.strip()]
    labels = []
    for f in frames:
        for label in ("Parsing ONNX model", "Building engine > Optimization passes", "Building engine > Kernel selection",
                      "Building engine > Weight packing", "Serializing engine", "Loading engine"):
            if label in f and (not labels or labels[-1] != label):
                labels.append(label)
    assert labels == ["Parsing ONNX model", "Building engine > Optimization passes",
                      "Building engine > Kernel selection", "Building engine > Weight packing", "Serializing engine",
                      "Loading engine"], frames
    assert frames[0].startswith("[") and "0%  Parsing ONNX model  0/1" in frames[0]
