"""The zoo's own networks (written here in plain PyTorch; the rest of the zoo comes from torchvision).

* ``UNet``: the encoder-decoder of Ronneberger et al. (2015) with same-padded 3x3 convolutions, batch norm and
  ReLU, four 2x2 max-pool downsamplings, 2x2 stride-2 transposed convolutions up and skip concatenations.
* ``YoloStyle``: a small YOLOv5/v8-like detector: a CSP-darknet backbone (Conv-BN-SiLU, C3 blocks with residual
  bottlenecks, SPPF with three 5x5 max pools), an FPN + PAN neck (nearest Upsample x2, Concat, C3, stride-2
  convolutions back down) and 1x1 convolution heads on strides 8/16/32 (3 anchors x (5 + 80 classes)).  The
  output is the three heads flattened and concatenated: (N, 255, sum of H*W).
* ``BertEncoder``: a BERT-base encoder stack from the embedding output on: per layer a fused QKV linear, 12-head
  scaled dot-product attention (Softmax over keys, no mask), output projection, residual + LayerNorm (post-norm, as
  BERT), a 768 -> 3072 -> 768 feed-forward with exact (erf) GELU, residual + LayerNorm.  Input (N, 128, 768).
* ``AdderNetOnnx``: the examples' AdderNet (examples/addernet/model.py; adder 1->20 k5, BN, max-pool, adder
  20->50 k5, BN, max-pool, fc 800->500, ReLU, fc 500->10, softmax) written with standard ONNX operators so that
  every engine runs the same graph: the window extraction is a convolution with one-hot filters (im2col as a
  Conv), then Y = -ReduceSum(|cols - W|).  What is timed is therefore that decomposition, not trtlite's
  Adder2d_TRT plugin kernel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- U-Net -----------------------------------------------------------------------------------------

class _DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """U-Net, ``base`` channels at full resolution doubling per level (4 levels down), ``classes`` output maps."""

    def __init__(self, in_channels=3, classes=2, base=32):
        super().__init__()
        ch = [base * 2 ** i for i in range(5)]
        self.inc = _DoubleConv(in_channels, ch[0])
        self.downs = nn.ModuleList(_DoubleConv(ch[i], ch[i + 1]) for i in range(4))
        self.ups = nn.ModuleList(nn.ConvTranspose2d(ch[i + 1], ch[i], 2, stride=2) for i in reversed(range(4)))
        self.dec = nn.ModuleList(_DoubleConv(2 * ch[i], ch[i]) for i in reversed(range(4)))
        self.head = nn.Conv2d(ch[0], classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for up, dec in zip(self.ups, self.dec):
            x = dec(torch.cat([skips.pop(), up(x)], dim=1))
        return self.head(x)


# ---- YOLO-style detector ---------------------------------------------------------------------------

class _Conv(nn.Sequential):
    """Conv-BN-SiLU."""

    def __init__(self, cin, cout, k=1, s=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU(inplace=True))


class _Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1 = _Conv(c, c, 1)
        self.cv2 = _Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class _C3(nn.Module):
    """CSP bottleneck with three convolutions: two 1x1 branches, n bottlenecks on one, concat, 1x1."""

    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        c = cout // 2
        self.cv1 = _Conv(cin, c, 1)
        self.cv2 = _Conv(cin, c, 1)
        self.m = nn.Sequential(*(_Bottleneck(c, shortcut) for _ in range(n)))
        self.cv3 = _Conv(2 * c, cout, 1)

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], dim=1))


class _SPPF(nn.Module):
    def __init__(self, cin, cout, k=5):
        super().__init__()
        c = cin // 2
        self.cv1 = _Conv(cin, c, 1)
        self.cv2 = _Conv(4 * c, cout, 1)
        self.pool = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], dim=1))


class YoloStyle(nn.Module):
    """CSP-darknet backbone (width ``w``), FPN/PAN neck, 1x1 heads at strides 8, 16, 32."""

    def __init__(self, w=32, classes=80, anchors=3):
        super().__init__()
        c = [w, 2 * w, 4 * w, 8 * w, 16 * w]
        self.stem = _Conv(3, c[0], 3, 2)                                  # /2  (YOLOv5 v6: 6x6 s2; 3x3 here)
        self.s2 = nn.Sequential(_Conv(c[0], c[1], 3, 2), _C3(c[1], c[1], 1))   # /4
        self.s3 = nn.Sequential(_Conv(c[1], c[2], 3, 2), _C3(c[2], c[2], 2))   # /8  -> P3
        self.s4 = nn.Sequential(_Conv(c[2], c[3], 3, 2), _C3(c[3], c[3], 3))   # /16 -> P4
        self.s5 = nn.Sequential(_Conv(c[3], c[4], 3, 2), _C3(c[4], c[4], 1), _SPPF(c[4], c[4]))  # /32 -> P5
        self.lat5 = _Conv(c[4], c[3], 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.td4 = _C3(2 * c[3], c[3], 1, shortcut=False)
        self.lat4 = _Conv(c[3], c[2], 1)
        self.td3 = _C3(2 * c[2], c[2], 1, shortcut=False)                    # out P3
        self.down3 = _Conv(c[2], c[2], 3, 2)
        self.bu4 = _C3(2 * c[2], c[3], 1, shortcut=False)                    # out P4
        self.down4 = _Conv(c[3], c[3], 3, 2)
        self.bu5 = _C3(2 * c[3], c[4], 1, shortcut=False)                    # out P5
        no = anchors * (5 + classes)
        self.heads = nn.ModuleList(nn.Conv2d(ch, no, 1) for ch in (c[2], c[3], c[4]))

    def forward(self, x):
        p3 = self.s3(self.s2(self.stem(x)))
        p4 = self.s4(p3)
        p5 = self.s5(p4)
        l5 = self.lat5(p5)
        t4 = self.td4(torch.cat([self.up(l5), p4], dim=1))
        l4 = self.lat4(t4)
        o3 = self.td3(torch.cat([self.up(l4), p3], dim=1))
        o4 = self.bu4(torch.cat([self.down3(o3), l4], dim=1))
        o5 = self.bu5(torch.cat([self.down4(o4), l5], dim=1))
        outs = [h(o).flatten(2) for h, o in zip(self.heads, (o3, o4, o5))]
        return torch.cat(outs, dim=2)


# ---- BERT-style encoder ----------------------------------------------------------------------------

class _BertLayer(nn.Module):
    def __init__(self, d=768, heads=12, ff=3072, eps=1e-12):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=eps)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=eps)

    def forward(self, x):
        n, s, d = x.shape
        q, k, v = self.qkv(x).reshape(n, s, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)   # each (n, h, s, dh)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.dh ** -0.5, dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).reshape(n, s, d)
        x = self.ln1(x + self.proj(ctx))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BertEncoder(nn.Module):
    """``layers`` BERT layers (d=768, 12 heads, FFN 3072) on the embedding output (N, seq, 768)."""

    def __init__(self, layers=12, d=768, heads=12, ff=3072):
        super().__init__()
        self.layers = nn.Sequential(*(_BertLayer(d, heads, ff) for _ in range(layers)))

    def forward(self, x):
        return self.layers(x)


# ---- AdderNet in standard ONNX operators -----------------------------------------------------------

class _AdderAsOps(nn.Module):
    """Y = -sum_{c,i,j} |Xpad[c, y+i, x+j] - W[f, c, i, j]|, stride 1, as Conv(one-hot) -> Sub -> Abs -> ReduceSum."""

    def __init__(self, cin, cout, k):
        super().__init__()
        self.k, self.cout = k, cout
        self.weight = nn.Parameter(torch.empty(cout, cin, k, k))
        nn.init.normal_(self.weight, 0.0, (2.0 / (cin * k * k)) ** 0.5)
        eye = torch.eye(cin * k * k).reshape(cin * k * k, cin, k, k)   # filter j picks element j of the window
        self.register_buffer("onehot", eye)

    def forward(self, x):
        cols = F.conv2d(x, self.onehot)                                  # (N, C*k*k, Ho, Wo)
        w = self.weight.reshape(1, self.cout, -1, 1, 1)                  # (1, F, C*k*k, 1, 1)
        return -torch.abs(cols.unsqueeze(1) - w).sum(dim=2)               # (N, F, Ho, Wo)


class AdderNetOnnx(nn.Module):
    """The examples' AdderNetMnist layout with adder layers as standard operators (see the module doc)."""

    def __init__(self):
        super().__init__()
        self.adder1 = _AdderAsOps(1, 20, 5)
        self.bn1 = nn.BatchNorm2d(20)
        self.adder2 = _AdderAsOps(20, 50, 5)
        self.bn2 = nn.BatchNorm2d(50)
        self.fc1 = nn.Linear(800, 500)
        self.fc2 = nn.Linear(500, 10)

    def forward(self, x):
        x = F.max_pool2d(self.bn1(self.adder1(x)), 2, 2)
        x = F.max_pool2d(self.bn2(self.adder2(x)), 2, 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.softmax(self.fc2(x), dim=1)
