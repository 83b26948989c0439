"""examples/precision_mnist.py (the precision experiment of `make demo`), reduced: LeNet and AdderNet on 1000
Fashion-MNIST test images, INT8 calibrated on 512 training images, must stay within 0.5 accuracy points of FP32,
with int8 steps in the engine; and the script's table runs end to end at every precision.  Skipped when the
dataset or the checkpoints are missing."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
pytest.importorskip("torch")
import demo_common as common  # noqa: E402
from demo_common import fashion_mnist  # noqa: E402

pm = common.load_module("precision_mnist", os.path.join(ROOT, "examples", "precision_mnist.py"))

needs_data = pytest.mark.skipif(
    not (fashion_mnist.available("test") and fashion_mnist.available("train") and
         os.path.exists(pm.lenet_demo.lenet.CHECKPOINT) and os.path.exists(pm.adder_demo.addernet.CHECKPOINT)),
    reason="Fashion-MNIST or the example checkpoints are not installed")


@needs_data
@pytest.mark.parametrize("which", ["lenet", "addernet"])
def test_int8_accuracy_within_half_a_point_of_fp32(which):
    x_test, y_test = fashion_mnist.load("test", limit=1000)
    x_cal, _ = fashion_mnist.load("train", limit=512)
    ckpt = pm.lenet_demo.lenet.CHECKPOINT if which == "lenet" else pm.adder_demo.addernet.CHECKPOINT
    weights = common.load_example(which).load_weights(ckpt)
    r = pm.evaluate(which, weights, x_test, y_test, x_cal, runs1=2, runs64=1, precisions=("FP32", "INT8"))
    assert r["FP32"]["accuracy"] > (0.9 if which == "lenet" else 0.8), r
    assert abs(r["INT8"]["accuracy"] - r["FP32"]["accuracy"]) <= 0.005 + 1e-9, r
    assert r["FP32"]["reduced"] == 0
    # LeNet: both convolutions, both fully connected layers and a pooling on int8 codes; AdderNet: its two adder
    # layers (the Adder2d_TRT plugin on int8 codes, plugin ABI version 2, writing int8 codes with the batch norms
    # folded: builder pass plugin_int8_out), both max poolings on those codes and its two fully connected layers
    # (an int8 convolution that timed faster on an fp32 kernel, builder pass int8_tactics, counts as FLOAT)
    assert r["INT8"]["reduced"] + r["INT8"]["fp32_tactics"] == (5 if which == "lenet" else 6), r


@needs_data
def test_script_reports_every_precision(capsys):
    failed, results = pm.main(["--limit", "200", "--calib", "128", "--runs", "2", "--models", "lenet"])
    assert failed == 0
    assert list(results["lenet"]) == ["FP32", "FP16", "BF16", "INT8"]
    out = capsys.readouterr().out
    for p in ("FP32", "FP16", "BF16", "INT8", "batch-64 img/s", "speed-up vs FP32"):
        assert p in out, out
