"""The benchmark models (random, seeded weights; nothing is downloaded).

Only `benchmarks/run.py`'s export and PyTorch workers import this (it needs torch); the other timing workers load the
exported ONNX file (trtlite, onnxruntime).

    model = build("resnet18")            # eval-mode nn.Module with seeded weights
    CONSTRUCTORS["resnet18"]()           # the bare module (the PyTorch worker loads the saved weights)

The networks are not defined here.  LeNet (the Caffe/TensorRT-sample LeNet that PERF.md's reference figure uses:
conv 1→20 k5, max-pool 2, conv 20→50 k5, max-pool 2, fc 800→500, relu, fc 500→10, softmax) is the examples' LeNet,
examples/lenet/model.py.  MobileNetV2 (width 1.0), ResNet-18 / ResNet-50 (stride on the 3×3, torchvision's layout)
and VGG-16 (configuration "D", no batch norm) are the ONNX parser tests' definitions, tests/onnx_torch_models.py,
so the networks the benchmark times are the ones the test suite checks.  What is the benchmark's own is the choice
of networks and their weights (`_init`).
"""
import os
import sys

import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _d in (os.path.join(ROOT, "tests"), os.path.join(ROOT, "examples")):
    if _d not in sys.path:
        sys.path.append(_d)  # appended: nothing there shadows an installed module

import demo_common  # noqa: E402
import onnx_torch_models as nets  # noqa: E402

# ---- seeded weights ------------------------------------------------------------------------------

CONSTRUCTORS = {
    "lenet": demo_common.load_example("lenet").LeNet,
    "mobilenetv2": nets.MobileNetV2,
    "resnet18": nets.ResNet18,
    "resnet50": nets.ResNet50,
    "vgg16": nets.VGG16,
}


def _init(model, seed):
    """He-normal convolutions/linears (activations keep their scale through deep stacks, so the
    outputs are not just the last bias and the agreement check means something), small random biases,
    and batch-norm layers with non-trivial statistics (so that folding them is exercised)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.05)
            elif isinstance(m, nn.BatchNorm2d):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(n, generator=g) * 0.5 + 0.5)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)
    return model.eval()


def build(name, seed=0):
    torch.manual_seed(seed)
    return _init(CONSTRUCTORS[name](), seed)
