"""tensorrtx's mobilenet_v3.py (-t small) network, written out in PyTorch from the script's own layer calls (its
weights named as the script reads them), so the engine the script builds can be checked against PyTorch.  Note what
the script builds: its SE block returns h_swish(fc2(relu(fc1(avgpool(x))))) in place of the features (it does not
multiply them), as written there."""
from collections import OrderedDict

import torch
import torch.nn.functional as F

EPS = 1e-5
SMALL = [  # lname, inch, outch, s, hidden, k, use_se, use_hs, w  (the script's create_engine_small)
    ("features.1.", 16, 16, 2, 16, 3, 1, 0, 56), ("features.2.", 16, 24, 2, 72, 3, 0, 0, 28),
    ("features.3.", 24, 24, 1, 88, 3, 0, 0, 28), ("features.4.", 24, 40, 2, 96, 5, 1, 1, 14),
    ("features.5.", 40, 40, 1, 240, 5, 1, 1, 14), ("features.6.", 40, 40, 1, 240, 5, 1, 1, 14),
    ("features.7.", 40, 48, 1, 120, 5, 1, 1, 14), ("features.8.", 48, 48, 1, 144, 5, 1, 1, 14),
    ("features.9.", 48, 96, 2, 288, 5, 1, 1, 7), ("features.10.", 96, 96, 1, 576, 5, 1, 1, 7),
    ("features.11.", 96, 96, 1, 576, 5, 1, 1, 7)]


class Mbv3SmallTx:
    def __init__(self):
        self.sd = OrderedDict()
        g = torch.Generator().manual_seed(0)

        def conv(name, cout, cin, k):
            self.sd[name + ".weight"] = torch.randn(cout, cin, k, k, generator=g) * (2.0 / (cin * k * k)) ** 0.5

        def bn(name, c):
            self.sd[name + ".weight"] = 1 + 0.1 * torch.randn(c, generator=g)
            self.sd[name + ".bias"] = 0.1 * torch.randn(c, generator=g)
            self.sd[name + ".running_mean"] = torch.rand(c, generator=g) * 0.2 - 0.1
            self.sd[name + ".running_var"] = torch.rand(c, generator=g) + 0.5

        def fc(name, cout, cin):
            self.sd[name + ".weight"] = torch.randn(cout, cin, generator=g) * (1.0 / cin) ** 0.5
            self.sd[name + ".bias"] = 0.1 * torch.randn(cout, generator=g)

        conv("features.0.0", 16, 3, 3); bn("features.0.1", 16)
        for ln, inch, outch, s, hid, k, se, hs, w in SMALL:
            p = ln + "conv."
            if inch == hid:
                conv(p + "0", hid, 1, k); bn(p + "1", hid)
                if se:
                    fc(p + "3.fc.0", hid // 4, hid); fc(p + "3.fc.2", hid, hid // 4)
                conv(p + "4", outch, hid, 1); bn(p + "5", outch)
            else:
                conv(p + "0", hid, inch, 1); bn(p + "1", hid)
                conv(p + "3", hid, 1, k); bn(p + "4", hid)
                if se:
                    fc(p + "5.fc.0", hid // 4, hid); fc(p + "5.fc.2", hid, hid // 4)
                conv(p + "7", outch, hid, 1); bn(p + "8", outch)
        conv("conv.0.0", 576, 96, 1); bn("conv.0.1", 576)
        fc("conv.1.fc.0", 144, 576); fc("conv.1.fc.2", 576, 144)
        fc("classifier.0", 1280, 576); bn("classifier.1", 1280)
        fc("classifier.3", 1000, 1280); bn("classifier.4", 1000)

    def eval(self):
        return self

    def modules(self):
        return []

    def state_dict(self):
        return self.sd

    def __call__(self, x):
        sd = self.sd
        hsw = lambda t: t * torch.clamp(t / 6 + 0.5, 0, 1)  # noqa: E731  (TensorRT HARD_SIGMOID alpha 1/6, beta .5)
        act = lambda t, hs: hsw(t) if hs else torch.relu(t)  # noqa: E731

        def bn(t, n):
            sh = (1, -1) + (1,) * (t.dim() - 2)
            scale = sd[n + ".weight"] / torch.sqrt(sd[n + ".running_var"] + EPS)
            return t * scale.view(sh) + (sd[n + ".bias"] - sd[n + ".running_mean"] * scale).view(sh)

        def conv(t, n, s=1, groups=1):
            wt = sd[n + ".weight"]
            return F.conv2d(t, wt, None, s, (wt.shape[-1] - 1) // 2, 1, groups)

        def fc(t, n):  # add_fully_connected: flattens C, H, W; output (N, K, 1, 1)
            return F.linear(t.flatten(1), sd[n + ".weight"], sd[n + ".bias"])[:, :, None, None]

        def se(t, n, w):
            y = F.avg_pool2d(t, w, w)
            return hsw(fc(torch.relu(fc(y, n + "fc.0")), n + "fc.2"))

        x = hsw(bn(conv(x, "features.0.0", 2), "features.0.1"))
        for ln, inch, outch, s, hid, k, use_se, hs, w in SMALL:
            p, inp = ln + "conv.", x
            if inch == hid:
                t = act(bn(conv(x, p + "0", s, hid), p + "1"), hs)
                if use_se:
                    t = se(t, p + "3.", w)
                t = bn(conv(t, p + "4"), p + "5")
            else:
                t = act(bn(conv(x, p + "0"), p + "1"), hs)
                t = bn(conv(t, p + "3", s, hid), p + "4")
                if use_se:
                    t = se(t, p + "5.", w)
                t = bn(conv(act(t, hs), p + "7"), p + "8")
            x = inp + t if (s == 1 and inch == outch) else t
        x = se(hsw(bn(conv(x, "conv.0.0"), "conv.0.1")), "conv.1.", 7)
        x = hsw(F.avg_pool2d(x, 7, 7))
        x = hsw(bn(fc(x, "classifier.0"), "classifier.1"))
        return hsw(bn(fc(x, "classifier.3"), "classifier.4"))
