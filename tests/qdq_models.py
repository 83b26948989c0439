"""QDQ models for the quantization tests: small torch networks exported to ONNX and quantized with
onnxruntime.quantization.quantize_static (QDQ format, calibrated on random data), written to a temporary
directory; and the tolerance their outputs are compared to onnxruntime with."""
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
from onnxruntime import quantization as oq  # noqa: E402

from onnx_helpers import export_torch  # noqa: E402

import trtlite as trt  # noqa: E402

nn = torch.nn


class SmallCNN(nn.Module):
    """conv-bn-relu, max pool, conv-relu, a residual block, concat of two branches, global pooling, linear."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, stride=1, padding=1)
        self.c3 = nn.Conv2d(16, 16, 3, padding=1)
        self.c4 = nn.Conv2d(16, 16, 1)
        self.b1 = nn.Conv2d(16, 8, 1)
        self.b2 = nn.Conv2d(16, 8, 3, padding=2, dilation=2)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.c1(x)))
        x = nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.c2(x))
        y = torch.relu(self.c3(x))
        x = torch.relu(self.c4(y) + x)
        x = torch.cat([self.b1(x), self.b2(x)], 1)
        x = torch.relu(self.dw(x))
        x = x.mean((2, 3))
        return self.fc(x)


class MatmulNet(nn.Module):
    """An MLP and an attention-like block: linear projections, q @ k^T, softmax, @ v, a residual, GELU."""

    def __init__(self, d=32, t=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.f1 = nn.Linear(d, 2 * d)
        self.f2 = nn.Linear(2 * d, d)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        a = torch.softmax(q @ k.transpose(-1, -2) / 5.0, -1)
        x = x + self.o(a @ v)
        return x + self.f2(nn.functional.gelu(self.f1(x)))


class _BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class TinyResNet(nn.Module):
    """ResNet-18's structure at small width and depth: 7x7/2 stem, max pool, basic blocks (two per stage, the first
    of a stage downsampling with a 1x1 projection), global average pooling, linear."""

    def __init__(self, widths=(8, 16), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [_BasicBlock(cin, w, 1 if i == 0 else 2), _BasicBlock(w, w, 1)]
            cin = w
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class TinyBert(nn.Module):
    """A BERT encoder layer at small width (tests/test_qlinear_bias.py): a qkv linear, multi-head attention (scaled
    scores, softmax), the output projection added to the input and layer-normed, the erf-GELU feed-forward block
    added and layer-normed; `layers` of them."""

    def __init__(self, d=64, heads=4, ff=128, layers=2):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
        self.ln1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.ff1 = nn.ModuleList(nn.Linear(d, ff) for _ in range(layers))
        self.ff2 = nn.ModuleList(nn.Linear(ff, d) for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))

    def forward(self, x):
        n, s, d = x.shape
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](x).reshape(n, s, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
            att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.dh ** -0.5, dim=-1)
            ctx = torch.matmul(att, v).transpose(1, 2).reshape(n, s, d)
            x = self.ln1[i](x + self.proj[i](ctx))
            x = self.ln2[i](x + self.ff2[i](nn.functional.gelu(self.ff1[i](x))))
        return x


class _Reader(oq.CalibrationDataReader):
    def __init__(self, name, shape, n, seed):
        rng = np.random.default_rng(seed)
        self.data = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.data, None)


def randomize(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model.eval()


def qdq_model(tmpdir, which, per_channel, act_type="uint8", opset=13, seed=0):
    """Path of the QDQ model: which 'cnn', 'resnet', 'bert' (with opset 17: LayerNormalization) or 'matmul';
    act_type 'uint8' (QUInt8 activations, asymmetric) or 'int8' (QInt8, symmetric); weights QInt8, per channel or
    per tensor."""
    torch.manual_seed(seed)
    if which == "cnn":
        model, shape = randomize(SmallCNN(), seed), (2, 3, 16, 16)
    elif which == "resnet":
        model, shape = randomize(TinyResNet(), seed), (1, 3, 32, 32)
    elif which == "bert":
        model, shape = TinyBert().eval(), (2, 16, 64)
    else:
        model, shape = MatmulNet().eval(), (2, 8, 32)
    fp32 = os.path.join(str(tmpdir), "%s_fp32.onnx" % which)
    with open(fp32, "wb") as f:
        f.write(export_torch(model, (torch.randn(*shape),), opset))
    out = os.path.join(str(tmpdir), "%s_%s_%s_%d.onnx" % (which, "pc" if per_channel else "pt", act_type, opset))
    oq.quantize_static(fp32, out, _Reader("x", shape, 8, seed), quant_format=oq.QuantFormat.QDQ,
                       per_channel=per_channel,
                       activation_type=oq.QuantType.QUInt8 if act_type == "uint8" else oq.QuantType.QInt8,
                       weight_type=oq.QuantType.QInt8, calibrate_method=oq.CalibrationMethod.MinMax,
                       extra_options={"ActivationSymmetric": act_type == "int8"})
    return out, shape


def output_scale(path):
    """The scale of the DequantizeLinear that produces the graph's (first) output, or None."""
    m = onnx.load(path)
    out = m.graph.output[0].name
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in m.graph.node:
        if out in n.output and n.op_type == "DequantizeLinear":
            return float(np.asarray(inits[n.input[1]]).reshape(-1)[0])
    return None


# whether onnxruntime's int8 kernels compute the quantized math exactly on this host (ort_run_file)
ORT_INT8_EXACT = bool({"avx512vnni", "avxvnni"} & set(trt.cpu_features()))


def ort_run_file(path, feeds):
    """onnxruntime's outputs for a QDQ model file, as a reference of the quantized math.  Its integer kernels are
    exact only where the host has VNNI: without it they multiply u8 x s8 pairs with vpmaddubsw, whose int16 sums
    saturate, and differ from the quantized math by more than rounding -- there its graph optimizations are turned
    off, so that the Q/DQ nodes run as written (the quantized math simulated in float)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    if not ORT_INT8_EXACT:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
