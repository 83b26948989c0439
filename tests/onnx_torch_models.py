"""Small PyTorch definitions of well-known networks for the ONNX parser tests (random weights, no downloads).

Each builder (lower-case: resnet18(), vgg11(), ...) returns an eval-mode nn.Module; `randomize_bn` gives BatchNorm
layers non-trivial running statistics so that folding them is actually tested.

This module is also where benchmarks/models.py takes its networks from (MobileNetV2, ResNet18, ResNet50, VGG16: the
bare architectures, PyTorch's default initialization, train mode); the benchmark sets its own seeded weights.  A
change to a network here changes what the benchmark measures too."""
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def randomize_bn(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return model.eval()


# ---- LeNet-5 and an MNIST MLP -----------------------------------------------------------------------------

class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1 = nn.Linear(16 * 5 * 5, 120)
        self.f2 = nn.Linear(120, 84)
        self.f3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.c1(x)), 2)
        x = F.avg_pool2d(torch.tanh(self.c2(x)), 2)
        x = x.view(x.size(0), -1)
        x = torch.relu(self.f1(x))
        x = torch.sigmoid(self.f2(x))
        return F.softmax(self.f3(x), dim=1)


class MnistMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 64),
                                 nn.LeakyReLU(0.1), nn.Linear(64, 10))

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=-1)


# ---- ResNet -------------------------------------------------------------------------------------------------

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, c, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.down = None
        if stride != 1 or cin != c:
            self.down = nn.Sequential(nn.Conv2d(cin, c, 1, stride, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, c, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, stride, 1, bias=False)  # stride on the 3x3 (torchvision's "v1.5")
        self.bn2 = nn.BatchNorm2d(c)
        self.conv3 = nn.Conv2d(c, c * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(c * 4)
        self.down = None
        if stride != 1 or cin != c * 4:
            self.down = nn.Sequential(nn.Conv2d(cin, c * 4, 1, stride, bias=False), nn.BatchNorm2d(c * 4))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin = 64
        stages = []
        for i, (c, n) in enumerate(zip((64, 128, 256, 512), layers)):
            blocks = []
            for j in range(n):
                blocks.append(block(cin, c, 2 if (j == 0 and i > 0) else 1))
                cin = c * block.expansion
            stages.append(nn.Sequential(*blocks))
        self.layers = nn.Sequential(*stages)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


ResNet18 = functools.partial(ResNet, BasicBlock, [2, 2, 2, 2])
ResNet50 = functools.partial(ResNet, Bottleneck, [3, 4, 6, 3])


def resnet18():
    return randomize_bn(ResNet18())


def resnet50():
    return randomize_bn(ResNet50())


# ---- MobileNetV2 --------------------------------------------------------------------------------------------

class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hid = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hid, 1, bias=False), nn.BatchNorm2d(hid), nn.ReLU6()]
        layers += [nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False), nn.BatchNorm2d(hid), nn.ReLU6(),
                   nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
               (6, 320, 1, 1)]
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        cin = 32
        for t, c, n, s in cfg:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


def mobilenet_v2():
    return randomize_bn(MobileNetV2())


# ---- VGG (no batch norm) -----------------------------------------------------------------------------------

VGG_CFGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],                                # VGG-11
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],        # VGG-16
}


class VGG(nn.Module):
    """cfg: output channels of the 3x3 convolutions, "M" for a 2x2 max pool; `pool` is the side of the adaptive
    average pool before the classifier (7 at 224x224, where it is an identity), `hidden` the classifier's width."""

    def __init__(self, cfg, pool=7, hidden=4096, num_classes=1000):
        super().__init__()
        layers = []
        cin = 3
        for v in cfg:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU(inplace=True)]
                cin = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((pool, pool))
        self.classifier = nn.Sequential(nn.Linear(512 * pool * pool, hidden), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(hidden, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


VGG11 = functools.partial(VGG, VGG_CFGS["A"])
VGG16 = functools.partial(VGG, VGG_CFGS["D"])


def vgg11(size=224, hidden=4096):
    return VGG11(pool=size // 32, hidden=hidden).eval()


# ---- SqueezeNet 1.1 -----------------------------------------------------------------------------------------

class Fire(nn.Module):
    def __init__(self, cin, s, e1, e3):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, s, 1)
        self.e1 = nn.Conv2d(s, e1, 1)
        self.e3 = nn.Conv2d(s, e3, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.e1(x)), torch.relu(self.e3(x))], 1)


class SqueezeNet(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(512, num_classes, 1), nn.ReLU(),
                                        nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


def squeezenet():
    return SqueezeNet().eval()


# ---- ShuffleNetV2 (x1.0) ------------------------------------------------------------------------------------

def channel_shuffle(x, groups):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        bf = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                                         nn.Conv2d(cin, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU())
        b2in = cin if stride > 1 else bf
        self.branch2 = nn.Sequential(nn.Conv2d(b2in, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(),
                                     nn.Conv2d(bf, bf, 3, stride, 1, groups=bf, bias=False), nn.BatchNorm2d(bf),
                                     nn.Conv2d(bf, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU())

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), 1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), 1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 24, 3, 2, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU())
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        stages = []
        cin = 24
        for cout, n in zip((116, 232, 464), (4, 8, 4)):
            units = [ShuffleUnit(cin, cout, 2)] + [ShuffleUnit(cout, cout, 1) for _ in range(n - 1)]
            stages.append(nn.Sequential(*units))
            cin = cout
        self.stages = nn.Sequential(*stages)
        self.conv5 = nn.Sequential(nn.Conv2d(cin, 1024, 1, bias=False), nn.BatchNorm2d(1024), nn.ReLU())
        self.fc = nn.Linear(1024, num_classes)

    def forward(self, x):
        x = self.conv5(self.stages(self.maxpool(self.conv1(x))))
        return self.fc(x.mean([2, 3]))


def shufflenet_v2():
    return randomize_bn(ShuffleNetV2())


# ---- a small U-Net ------------------------------------------------------------------------------------------

def _dconv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class SmallUNet(nn.Module):
    """Down path with max pooling; up path with a ConvTranspose, a bilinear Resize and a nearest Resize."""

    def __init__(self, cin=3, classes=2, w=8):
        super().__init__()
        self.d1, self.d2 = _dconv(cin, w), _dconv(w, 2 * w)
        self.d3, self.mid = _dconv(2 * w, 4 * w), _dconv(4 * w, 8 * w)
        self.up3 = nn.ConvTranspose2d(8 * w, 4 * w, 2, 2)
        self.u3 = _dconv(8 * w, 4 * w)
        self.red2 = nn.Conv2d(4 * w, 2 * w, 1)
        self.u2 = _dconv(4 * w, 2 * w)
        self.red1 = nn.Conv2d(2 * w, w, 1)
        self.u1 = _dconv(2 * w, w)
        self.out = nn.Conv2d(w, classes, 1)

    def forward(self, x):
        x1 = self.d1(x)
        x2 = self.d2(F.max_pool2d(x1, 2))
        x3 = self.d3(F.max_pool2d(x2, 2))
        m = self.mid(F.max_pool2d(x3, 2))
        y = self.u3(torch.cat([self.up3(m), x3], 1))
        y = F.interpolate(self.red2(y), scale_factor=2, mode="bilinear", align_corners=False)
        y = self.u2(torch.cat([y, x2], 1))
        y = F.interpolate(self.red1(y), scale_factor=2, mode="nearest")
        y = self.u1(torch.cat([y, x1], 1))
        return torch.sigmoid(self.out(y))


def unet():
    return randomize_bn(SmallUNet())


# ---- a transformer encoder block ----------------------------------------------------------------------------

class EncoderBlock(nn.Module):
    """Pre-norm multi-head self-attention + GELU MLP (MatMul, Softmax, LayerNormalization, Erf/Gelu)."""

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.h = heads
        self.d = d
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.reshape(b, t, self.h, d // self.h).transpose(1, 2)
        k = k.reshape(b, t, self.h, d // self.h).transpose(1, 2)
        v = v.reshape(b, t, self.h, d // self.h).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.h)
        att = att.masked_fill(mask == 0, -1e4)
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


def encoder_block():
    return EncoderBlock().eval()


class TorchEncoder(nn.Module):
    """torch.nn.TransformerEncoderLayer (post-norm, GELU)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d, heads, 64, dropout=0.0, activation="gelu", batch_first=True)

    def forward(self, x):
        return self.layer(x)


# ---- an SSD-like detection head -----------------------------------------------------------------------------

class SSDLite(nn.Module):
    """A small backbone with three feature maps, per-map box/class heads, permute + reshape + concat, softmax."""

    def __init__(self, classes=5, anchors=(4, 6, 6)):
        super().__init__()
        self.classes = classes
        self.b1 = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(),
                                nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU())
        self.b2 = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU())
        self.b3 = nn.Sequential(nn.Conv2d(64, 64, 3, 2, 1), nn.ReLU())
        chans = (32, 64, 64)
        self.loc = nn.ModuleList(nn.Conv2d(c, a * 4, 3, padding=1) for c, a in zip(chans, anchors))
        self.conf = nn.ModuleList(nn.Conv2d(c, a * classes, 3, padding=1) for c, a in zip(chans, anchors))

    def forward(self, x):
        f1 = self.b1(x)
        f2 = self.b2(f1)
        f3 = self.b3(f2)
        locs, confs = [], []
        for f, l, c in zip((f1, f2, f3), self.loc, self.conf):
            locs.append(l(f).permute(0, 2, 3, 1).contiguous().view(f.size(0), -1, 4))
            confs.append(c(f).permute(0, 2, 3, 1).contiguous().view(f.size(0), -1, self.classes))
        return torch.cat(locs, 1), torch.softmax(torch.cat(confs, 1), dim=-1)


def ssd_lite():
    return randomize_bn(SSDLite())


# ---- shapes that depend on the dynamic batch / sequence length ----------------------------------------------

class TokenOps(nn.Module):
    """What exporters write for shapes taken from the input at run time: a class token expanded to the batch
    (Shape -> ... -> Expand), zeros of the batch's size (ConstantOfShape), and slices of a dynamic sequence
    axis with constant bounds (x[:, 1:], x[:, :-1], x[:, -2:]).  x: (B, T, C)."""

    def __init__(self, c=8):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, c))
        self.proj = nn.Linear(c, c)

    def forward(self, x):
        b = x.shape[0]
        h = torch.cat([self.cls.expand(b, -1, -1), self.proj(x)], 1)  # (B, T + 1, C)
        h = h + torch.zeros(b, x.shape[2]).unsqueeze(1) + 1.0
        d = h[:, 1:] - 0.5 * h[:, :-1]  # (B, T, C)
        return torch.cat([d, h[:, -2:], h[:, :1]], 1)  # (B, T + 3, C)


def token_ops():
    torch.manual_seed(0)
    return TokenOps().eval()
