"""The model zoo (benchmarks/zoo): its model list, that tiny members export with a dynamic batch and that trtlite
agrees with onnxruntime on them, the runner's check/breakdown pass end to end, and that its tables report
failures instead of dropping them.  The full zoo is `make bench-zoo`, never run here.

Without torchvision the torchvision member is skipped; the zoo's own networks need only torch.
"""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "benchmarks", "zoo")


def _load(name, path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


@pytest.fixture(scope="module")
def zoo_models():
    return _load("trtlite_zoo_models", os.path.join(ZOO, "models.py"))


@pytest.fixture(scope="module")
def zoo_run(zoo_models):
    return _load("trtlite_zoo_run", os.path.join(ZOO, "run.py"))


@pytest.fixture(scope="module")
def zoo_export(zoo_models):
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    return _load("trtlite_zoo_export", os.path.join(ZOO, "export.py"))


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory):
    """One export directory for the module: the end-to-end run reuses the LeNet exported by the export test."""
    return str(tmp_path_factory.mktemp("zoo"))


ISSUE_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "densenet121",
                "googlenet", "inception_v3", "squeezenet1_1", "shufflenet_v2", "mnasnet1_0", "regnet_y_400mf",
                "convnext_tiny", "vit_b_16", "swin_t", "fcn_resnet50", "deeplabv3_mobilenet_v3",
                "lraspp_mobilenet_v3", "bert_base", "unet", "yolo", "lenet", "addernet"]


def test_registry_has_the_issue_models(zoo_models):
    names = zoo_models.names()
    assert len(names) >= 22 and len(set(names)) == len(names)
    assert [m for m in ISSUE_MODELS if m not in names] == []
    fams = {e.family for e in zoo_models.ZOO.values()}
    assert fams <= {"small", "classification", "segmentation", "detection", "transformer"}
    assert {"classification", "segmentation", "detection", "transformer"} <= fams
    # the U-Net, the detector and the BERT encoder are the zoo's own; the rest come from torchvision / examples
    assert {n for n, e in zoo_models.ZOO.items() if e.source == "zoo"} >= {"unet", "yolo", "bert_base"}
    assert sum(e.source == "torchvision" for e in zoo_models.ZOO.values()) >= 15
    assert zoo_models.ZOO["bert_base"].shape == (128, 768)
    assert zoo_models.ZOO["inception_v3"].shape == (3, 299, 299)


def _trt_run(path, x, threads=1):
    import trtlite as trt
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    assert parser.parse(open(path, "rb").read()), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    assert tuple(network.get_input(0).shape)[0] == -1  # the batch dimension is dynamic in the exported file
    config = builder.create_builder_config()
    config.num_threads = threads
    config.avg_timing_iterations = 0  # no kernel timing: the first applicable optimized kernel (fast, deterministic)
    profile = builder.create_optimization_profile()
    profile.set_shape("input", x.shape, x.shape, x.shape)
    config.add_optimization_profile(profile)
    engine = trt.Runtime(logger).deserialize_cuda_engine(bytes(builder.build_serialized_network(network, config)))
    ctx = engine.create_execution_context()
    ctx.set_input_shape("input", x.shape)
    return ctx.infer({"input": x})["output"] if hasattr(ctx, "infer") else None


@pytest.mark.parametrize("name", ["lenet", "addernet", "mobilenet_v3_small"])
def test_tiny_models_export_and_agree_with_onnxruntime(name, zoo_models, zoo_export, zoo_run, zoo_dir):
    if zoo_models.ZOO[name].needs_torchvision and not zoo_models.torchvision_available():
        pytest.skip("torchvision is not installed (make bench-zoo installs it)")
    meta = zoo_export.export(name, zoo_dir, seed=0, force=True)
    assert meta["opset"] == 17 and not meta["cached"]
    # PyTorch and onnxruntime agree at batch 2 although the file was traced at batch 1
    tv = meta["torch_vs_ort_b2"]
    assert tv["shape_ok"] and tv["max_abs"] <= 1e-4 * max(1.0, tv["ref_max"])
    assert zoo_export.cached(name, zoo_dir, seed=0)["onnx_bytes"] == meta["onnx_bytes"]
    assert zoo_export.cached(name, zoo_dir, seed=1) is None  # another seed is another model
    path = os.path.join(zoo_dir, name + ".onnx")
    x = zoo_models.make_input(name, 3, seed=5)
    ref = zoo_export.ort_session(path).run(None, {"input": x})[0]
    got = _trt_run(path, x)
    assert got.shape == ref.shape and got.shape[0] == 3
    check = zoo_run.bench.verify(got, ref)
    assert check["ok"], check
    assert np.abs(ref).max() > 0 and np.isfinite(ref).all()
    # the samples differ (a batch handled as copies of sample 0 would pass a batch-1 check)
    assert np.abs(got[1] - got[0]).max() > 1e-6


def test_runner_check_and_breakdown_end_to_end(tmp_path, zoo_export, zoo_dir):
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, os.path.join(ZOO, "run.py"), "--check-only", "--breakdown", "--models",
                        "lenet", "--batch", "2", "--threads", "1", "--engines", "trtlite", "--dir", zoo_dir,
                        "--out", str(out), "--markdown"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    d = json.loads(out.read_text())
    (row,) = d["results"]
    assert row["status"] == "ok" and row["batch"] == 2
    v = row["engines"]["trtlite"]["verify"]
    assert v["ok"] and v["max_abs"] < 1e-4
    bd = row["breakdown"]
    assert abs(sum(k["share"] for k in bd["kinds"].values()) - 1.0) < 1e-6
    # LeNet: two 5x5 convolutions, two fully connected layers, two max pools (fused or not, they are charged here)
    assert {"conv 5x5 s1", "fully connected", "MaxPool"} <= set(bd["kinds"])
    assert "| LeNet 28² |" in p.stdout and "Where trtlite's time goes" in p.stdout


def _row(model, status, trt=None, ort=None, ov=None, error=None):
    def eng(ms):
        if ms is None:
            return None
        if ms == "missing":
            return {"ok": False, "not_installed": True, "error": "not installed"}
        return {"ok": True, "verify": {"ok": True, "max_abs": 1e-6, "max_rel": 1e-5, "ref_max": 1.0},
                "stats": {"median_ms": ms, "p90_ms": ms * 1.1}, "peak_rss_kib": 1024, "setup_s": 0.1}
    e = {k: v for k, v in (("trtlite", eng(trt)), ("onnxruntime", eng(ort)), ("openvino", eng(ov))) if v}
    r = {"model": model, "batch": 1, "threads": 2, "status": status, "engines": e,
         "build": {"ok": status == "ok", "parse_s": 0.1, "build_s": 0.2}}
    if error:
        r["error"] = error
    return r


def test_tables_report_failures_and_geomeans(zoo_run):
    res = [_row("resnet18", "ok", trt=10.0, ort=20.0, ov=5.0),
           _row("resnet50", "ok", trt=10.0, ort=5.0, ov="missing"),
           _row("swin_t", "parse failed", ort=3.0, error="Roll: unsupported op"),
           _row("vit_b_16", "build failed", ort=3.0, error="no kernel for MatMul")]
    md = zoo_run.correctness_table(res, {})
    assert "**parse failed**: Roll: unsupported op" in md and "**build failed**: no kernel for MatMul" in md
    assert md.count("| yes |") == 2
    sp = zoo_run.speed_table(res, {})
    assert "not installed" in sp and "2.00×" in sp and "0.50×" in sp
    # geometric mean of the onnxruntime ratios 2.0 and 0.5 is 1.00; OpenVINO only ran resnet18 (0.5)
    assert "| 1 | 2 | 1.00× | 0.50× | 2 / 1 |" in sp
    assert "parse failed" in sp.split("\n")[4] and "build failed" in sp.split("\n")[5]


def test_verify_in_slices_judges_as_a_whole(zoo_run):
    """bench.verify works over float64 slices (so its copies do not set the workers' peak RSS): any slicing gives
    the whole-array answer; a value off tolerance or a NaN in the last slice fails."""
    verify = zoo_run.bench.verify
    rng = np.random.default_rng(5)
    ref = rng.standard_normal((2, 3, 17, 19)).astype(np.float32)
    got = ref + (rng.standard_normal(ref.shape) * 1e-6).astype(np.float32)
    whole = verify(got, ref, chunk=ref.size)
    assert whole["ok"] and whole["max_abs"] > 0
    for chunk in (1, 7, 100, 1000):
        assert verify(got, ref, chunk=chunk) == whole
    for bad in (np.nan, ref.reshape(-1)[-1] + 1.0):
        g = got.copy()
        g.reshape(-1)[-1] = bad
        assert not verify(g, ref, chunk=100)["ok"]
    want = float(np.abs(got.astype(np.float64) - ref).max())
    assert whole["max_abs"] == want
