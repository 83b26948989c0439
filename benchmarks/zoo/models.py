"""The model zoo: >= 20 real architectures, built locally with seeded random weights (nothing is downloaded).

    models = <benchmarks/zoo/models.py, imported by path>   # run.py and export.py import it by path
    models.names()                                # registry order
    spec = models.ZOO["resnet18"]                 # Entry(name, pretty, family, source, shape, ...)
    net = models.build("resnet18", seed=0)        # eval-mode nn.Module with seeded weights

Sources: torchvision 0.28's classification and segmentation definitions (the architectures as their authors
wrote them; constructed with ``weights=None``, so nothing is fetched), the networks of ``nets.py`` written for
the zoo (U-Net, a YOLO-style detector, a BERT-base-style encoder, AdderNet in standard operators) and the
examples' LeNet (examples/lenet/model.py).

torchvision's compiled operators do not load with the CPU build of torch 2.13 (its ``_meta_registrations``
module fails on import), but the model definitions are plain Python: ``import_torchvision()`` puts an empty module
in ``sys.modules["torchvision._meta_registrations"]`` first.  No zoo model uses torchvision's C++ ops.

Every entry has one float input named "input" of shape (N,) + ``shape`` (N is dynamic in the exported ONNX file)
and one output named "output".  Segmentation models return their "out" map; GoogLeNet and Inception-V3 are built
without their auxiliary classifiers (which only run in training anyway).  Weights: the constructor's own
initialisation from ``torch.manual_seed(seed)``, then benchmarks/models.py's ``_init`` (He-normal convolutions and
linears, small random biases, batch norm with non-trivial statistics), then LayerNorm affine parameters are
perturbed the same way, so that no normalisation is an identity and the agreement check means something.
"""
from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)


class TorchvisionMissing(ImportError):
    """torchvision is not installed (make bench-zoo installs it: pip install --no-deps torchvision==0.28.0)."""


def import_torchvision():
    """torchvision with its compiled-ops registration stubbed out (see the module doc)."""
    sys.modules.setdefault("torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations"))
    try:
        import torchvision
    except ImportError as e:
        raise TorchvisionMissing("torchvision is not installed: pip install --no-deps torchvision==0.28.0 pillow "
                                 f"({e})") from e
    return torchvision


@dataclass(frozen=True)
class Entry:
    """One zoo model: ``ctor()`` builds the bare module; ``shape`` is one sample's input shape."""
    name: str
    pretty: str
    family: str            # classification, segmentation, detection, transformer, small
    source: str            # torchvision, zoo (nets.py), examples
    ctor: callable = field(repr=False)
    shape: tuple = (3, 224, 224)
    input_kind: str = "normal"   # normal: standard normal; unit: uniform [0, 1) (image-like small nets)
    calibrate_bn: bool = False   # set batch-norm statistics from the seeded input (AdderNet: its raw sums are large)

    @property
    def needs_torchvision(self):
        """True for the entries built from torchvision's definitions."""
        return self.source == "torchvision"


def _tv(fn_name, **kw):
    def ctor():
        tv = import_torchvision()
        return getattr(tv.models, fn_name)(weights=None, **kw)
    return ctor


def _tv_seg(fn_name, **kw):
    def ctor():
        tv = import_torchvision()
        return _SegOut(getattr(tv.models.segmentation, fn_name)(weights=None, weights_backbone=None, aux_loss=False,
                                                                **kw))
    return ctor


def _load(path, modname):
    """Import the file ``path`` as module ``modname`` (once): benchmarks/models.py and this file are both
    "models", so neither is imported through sys.path."""
    if modname not in sys.modules:
        import importlib.util
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        spec.loader.exec_module(mod)
    return sys.modules[modname]


def _own(cls_name, **kw):
    def ctor():
        nets = _load(os.path.join(HERE, "nets.py"), "trtlite_zoo_nets")
        return getattr(nets, cls_name)(**kw)
    return ctor


def _lenet():
    ex = os.path.join(ROOT, "examples")
    if ex not in sys.path:
        sys.path.append(ex)
    import demo_common
    return demo_common.load_example("lenet").LeNet()


def _seg_out_class():
    import torch.nn as nn

    class SegOut(nn.Module):
        """A torchvision segmentation model returning its "out" map instead of a dict."""

        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x)["out"]
    return SegOut


def _SegOut(net):  # noqa: N802 -- builds the wrapper lazily (torch is imported only when a model is built)
    return _seg_out_class()(net)


_ENTRIES = [
    # small networks (per-call overhead dominates)
    Entry("lenet", "LeNet 28²", "small", "examples", _lenet, (1, 28, 28), "unit"),
    Entry("addernet", "AdderNet 28² (std ops)", "small", "zoo", _own("AdderNetOnnx"), (1, 28, 28), "unit",
          calibrate_bn=True),
    # torchvision classification
    Entry("resnet18", "ResNet-18", "classification", "torchvision", _tv("resnet18")),
    Entry("resnet50", "ResNet-50", "classification", "torchvision", _tv("resnet50")),
    Entry("mobilenet_v2", "MobileNetV2", "classification", "torchvision", _tv("mobilenet_v2")),
    Entry("mobilenet_v3_large", "MobileNetV3-L", "classification", "torchvision", _tv("mobilenet_v3_large")),
    Entry("mobilenet_v3_small", "MobileNetV3-S", "classification", "torchvision", _tv("mobilenet_v3_small")),
    Entry("efficientnet_b0", "EfficientNet-B0", "classification", "torchvision", _tv("efficientnet_b0")),
    Entry("densenet121", "DenseNet-121", "classification", "torchvision", _tv("densenet121")),
    Entry("googlenet", "GoogLeNet", "classification", "torchvision",
          _tv("googlenet", aux_logits=False, init_weights=True)),
    Entry("inception_v3", "Inception-V3 299²", "classification", "torchvision",
          _tv("inception_v3", aux_logits=False, init_weights=True), (3, 299, 299)),
    Entry("squeezenet1_1", "SqueezeNet 1.1", "classification", "torchvision", _tv("squeezenet1_1")),
    Entry("shufflenet_v2", "ShuffleNetV2 1.0", "classification", "torchvision", _tv("shufflenet_v2_x1_0")),
    Entry("mnasnet1_0", "MNASNet 1.0", "classification", "torchvision", _tv("mnasnet1_0")),
    Entry("regnet_y_400mf", "RegNetY-400MF", "classification", "torchvision", _tv("regnet_y_400mf")),
    Entry("convnext_tiny", "ConvNeXt-T", "classification", "torchvision", _tv("convnext_tiny")),
    Entry("vit_b_16", "ViT-B/16", "transformer", "torchvision", _tv("vit_b_16")),
    Entry("swin_t", "Swin-T", "transformer", "torchvision", _tv("swin_t")),
    # torchvision segmentation (224² instead of the usual 520² to keep the run short)
    Entry("fcn_resnet50", "FCN-ResNet50 224²", "segmentation", "torchvision", _tv_seg("fcn_resnet50")),
    Entry("deeplabv3_mobilenet_v3", "DeepLabV3-MobileNetV3 224²", "segmentation", "torchvision",
          _tv_seg("deeplabv3_mobilenet_v3_large")),
    Entry("lraspp_mobilenet_v3", "LR-ASPP-MobileNetV3 224²", "segmentation", "torchvision",
          _tv_seg("lraspp_mobilenet_v3_large")),
    # written for the zoo (nets.py)
    Entry("unet", "U-Net 256²", "segmentation", "zoo", _own("UNet"), (3, 256, 256)),
    Entry("yolo", "YOLO-style 320²", "detection", "zoo", _own("YoloStyle"), (3, 320, 320)),
    Entry("bert_base", "BERT-base encoder, seq 128", "transformer", "zoo", _own("BertEncoder", layers=12),
          (128, 768)),
    Entry("bert_base_4l", "BERT-base 4 layers, seq 128", "transformer", "zoo", _own("BertEncoder", layers=4),
          (128, 768)),
]

ZOO = {e.name: e for e in _ENTRIES}


def names():
    """All zoo model names, in registry order (small nets first)."""
    return [e.name for e in _ENTRIES]


def torchvision_available():
    """Whether torchvision's definitions can be imported (through the shim)."""
    try:
        import_torchvision()
        return True
    except TorchvisionMissing:
        return False


def make_input(name, batch, seed=0):
    """The seeded input of ``name`` for ``batch`` samples (float32)."""
    import numpy as np
    e = ZOO[name]
    rng = np.random.default_rng(seed)
    shape = (batch,) + tuple(e.shape)
    if e.input_kind == "unit":
        return rng.random(shape, dtype=np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def _perturb_layernorms(model, seed):
    import torch
    import torch.nn as nn
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) * 0.5 + 0.75)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)


def _calibrate_bn(model, x):
    """Batch-norm running statistics from one forward pass over ``x`` (momentum 1), then eval mode."""
    import torch
    import torch.nn as nn
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = 1.0
    model.train()
    with torch.no_grad():
        model(x)
    for m in bns:
        m.momentum = 0.1
    return model.eval()


def build(name, seed=0):
    """The eval-mode module of zoo model ``name`` with seeded weights (see the module doc)."""
    import torch
    bench_models = _load(os.path.join(BENCH, "models.py"), "trtlite_bench_models")  # the shared initialiser
    e = ZOO[name]
    torch.manual_seed(seed)
    model = e.ctor()
    bench_models._init(model, seed)
    _perturb_layernorms(model, seed)
    if e.calibrate_bn:
        _calibrate_bn(model, torch.from_numpy(make_input(name, 8, seed + 7)))
    return model.eval()
