"""The blocked channel layout's grouped path (issue #10, session 19): grouped convolutions whose groups have a multiple
of 8 input and output channels (RegNetY's 3x3 layers) as candidates of the `nchwc` pass (csrc/builder/passes/nchwc.c,
only with TRTLITE_NCHWC_GROUPED=1 at the build) on nchwc_conv.avx2's grouped path (csrc/kernels/x86/nchwc_grouped.c),
squeeze-and-excitation folded around them (se_fold), on a small RegNetY-like network against float64 numpy with the
pass on and off.  The kernel against the reference kernel on random shapes: tests/c/test_kernels.c
(test_nchwc_grouped)."""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
from test_nchwc import _build, _run  # (make, off=passes, ...) -> engine, its layers; (engine, x) -> y
from test_nchwc_se import _Se  # conv(t, ref, K, k, stride, groups, act name) on the network and in float64

AVX2 = {"avx2", "fma"} <= set(trt.cpu_features())


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


class _RegNet(_Se):
    """RegNetY-style blocks on the network and the float64 reference beside it: 1x1 + ReLU, grouped 3x3 (group width
    `gw`) / stride + ReLU, squeeze-and-excitation (mean, 1x1 + ReLU, 1x1 + sigmoid, multiply), 1x1, + the shortcut
    (a 1x1 stride-2 projection where the shape changes), ReLU."""

    def __init__(self, network, x):
        super().__init__(network, np.random.default_rng(5), x, False)

    def conv(self, t, ref, K, k, stride, groups, relu):
        return super().conv(t, ref, K, k, stride, groups, "relu" if relu else "none")

    def block(self, K, stride, gw):
        t, ref = self.t, self.ref
        h, hr = self.conv(t, ref, K, 1, 1, 1, True)
        h, hr = self.conv(h, hr, K, 3, stride, K // gw, True)
        pool = self.net.add_reduce(h, trt.ReduceOperation.AVG, 0b1100, True).get_output(0)
        pr = hr.mean(axis=(2, 3), keepdims=True)
        s, sr = self.conv(pool, pr, max(K // 4, 1), 1, 1, 1, True)
        s, sr = self.conv(s, sr, K, 1, 1, 1, False)
        s = self.net.add_activation(s, trt.ActivationType.SIGMOID).get_output(0)
        h = self.net.add_elementwise(h, s, trt.ElementWiseOperation.PROD).get_output(0)
        hr = hr * _sigmoid(sr)
        h, hr = self.conv(h, hr, K, 1, 1, 1, False)
        if stride != 1 or K != ref.shape[1]:
            t, ref = self.conv(t, ref, K, 1, stride, 1, False)
        h = self.net.add_elementwise(h, t, trt.ElementWiseOperation.SUM).get_output(0)
        self.t = self.net.add_activation(h, trt.ActivationType.RELU).get_output(0)
        self.ref = np.maximum(hr + ref, 0.0)

    def done(self):
        self.t.name = "y"
        self.net.mark_output(self.t)


def _make(x, blocks):
    holder = {}

    def make(network):
        m = _RegNet(network, x)
        for K, stride, gw in blocks:
            m.block(K, stride, gw)
        m.done()
        holder["ref"] = m.ref

    make(trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(0))
    return make, holder["ref"]


# (output channels, stride, group width) a block: RegNetY-400MF's group width 8 (stride 2 with a projection, then
# stride 1 with the identity), group width 16, and 24 channels of group width 8 on an odd map
BLOCKS = [((24, 2, 8), (24, 1, 8)), ((32, 1, 16), (32, 2, 8)), ((48, 2, 8), (48, 1, 24))]


@pytest.mark.parametrize("case", range(len(BLOCKS)))
@pytest.mark.parametrize("N", [1, 2])
def test_regnet_blocks_on_and_off(case, N, monkeypatch):
    """With TRTLITE_NCHWC_GROUPED=1 the grouped 3x3 layers are NCHWC_CONV on nchwc_conv.avx2 (AVX2 + FMA machines),
    each computing its squeeze-and-excitation pool (the REDUCE and the multiply folded: se_fold), the 1x1 layers
    between them blocked too; unset, none of them is; on and off all match float64 numpy."""
    rng = np.random.default_rng(case)
    x = rng.standard_normal((N, 16, 15 + case, 17)).astype(np.float32)
    make, want = _make(x, BLOCKS[case])
    monkeypatch.setenv("TRTLITE_NCHWC_GROUPED", "1")
    on, layers_on = _build(make)
    off, layers_off = _build(make, off=("nchwc",))
    monkeypatch.delenv("TRTLITE_NCHWC_GROUPED")
    default, layers_default = _build(make)
    assert not [lay for lay in layers_off if lay["type"] == "NCHWC_CONV"]
    for engine in (on, off, default):
        assert_close(_run(engine, x), want)
    kinds = lambda layers: [(lay["name"], lay["type"], lay["kernel"]) for lay in layers]
    # the grouped layers: the ones that took their squeeze-and-excitation pool ("... [Reduce]" in the name)
    folded = lambda layers: [lay for lay in layers if lay["type"] == "NCHWC_CONV" and "[Reduce]" in lay["name"]]
    count = lambda layers, t: sum(lay["type"] == t for lay in layers)
    assert count(layers_off, "REDUCE") == 2 and count(layers_default, "REDUCE") == 2, kinds(layers_default)
    assert not folded(layers_default), kinds(layers_default)
    if AVX2:
        assert len(folded(layers_on)) == 2 and not count(layers_on, "REDUCE"), kinds(layers_on)
        assert all(lay["kernel"] == "nchwc_conv.avx2" for lay in folded(layers_on)), kinds(layers_on)
        # the multiply went into the projection reading the grouped layer's blocked output; its 1x1 reader blocked
        assert count(layers_on, "ELEMENTWISE") == count(layers_off, "ELEMENTWISE") - 2, kinds(layers_on)
        assert count(layers_on, "NCHWC_CONV") >= 6, kinds(layers_on)  # the blocks' 1x1 and grouped layers
    else:
        assert not count(layers_on, "NCHWC_CONV")
