"""16-bit tensors and weights as torch2trt gives them in ``fp16_mode`` with a ``.half()`` model (and the bf16 analogue):
HALF/BF16 network inputs and outputs, fp16 numpy weights on convolution, scale and constants feeding a matrix
multiply and a bias add, with the FP16 builder flag.  Reference: the PyTorch module in that dtype (CPU), on random
shapes; the tolerance is a few units in the last place of the 16-bit output."""
import numpy as np
import pytest

import trtlite as trt

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

LOG = trt.Logger(trt.Logger.ERROR)
KINDS = {"half": (trt.float16, torch.float16, np.float16), "bf16": (trt.bfloat16, torch.bfloat16, ml_dtypes.bfloat16)}


def f16(t):
    """A module's parameter as torch2trt passes it: a numpy array of the parameter's dtype (bf16: ml_dtypes)."""
    t = t.detach()
    return t.numpy() if t.dtype == torch.float16 else t.float().numpy().astype(ml_dtypes.bfloat16)


def run(make, x, dt, np_dt):
    b = trt.Builder(LOG)
    net = b.create_network(0)
    y = make(net, net.add_input("x", dt, x.shape))
    y.name = "y"
    net.mark_output(y)
    y.dtype = dt
    cfg = b.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.FP16)
    cfg.set_flag(trt.BuilderFlag.BF16)
    engine = b.build_engine(net, cfg)
    feed = x.float().numpy().astype(np_dt)
    out = engine.create_execution_context().infer({"x": feed})["y"]
    assert out.dtype == np.dtype(np_dt)
    return out.astype(np.float32)


def close(got, module, x):
    want = module(x).float().detach().numpy()
    ulp = 2.0 ** -10 if x.dtype == torch.float16 else 2.0 ** -7
    np.testing.assert_allclose(got, want, rtol=4 * ulp, atol=4 * ulp * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_half_conv_bn_relu_as_torch2trt_fp16_mode(kind, seed):
    dt, tdt, np_dt = KINDS[kind]
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cin, cout, h, w = int(rng.integers(2, 6)), int(rng.integers(3, 9)), int(rng.integers(5, 12)), int(rng.integers(5, 12))
    conv = torch.nn.Conv2d(cin, cout, 3, padding=1).to(tdt)
    bn = torch.nn.BatchNorm2d(cout).eval()
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1, generator=g)
        bn.running_var.uniform_(0.5, 2, generator=g)
        bn.weight.uniform_(0.5, 1.5, generator=g)
        bn.bias.uniform_(-1, 1, generator=g)
    bn = bn.to(tdt)
    module = torch.nn.Sequential(conv, bn, torch.nn.ReLU())
    x = torch.randn((2, cin, h, w), generator=g).to(tdt)

    def make(net, t):
        c = net.add_convolution_nd(t, cout, (3, 3), f16(conv.weight), f16(conv.bias))
        c.padding_nd = (1, 1)
        scale = (bn.weight.float() / torch.sqrt(bn.running_var.float() + bn.eps)).detach()
        shift = bn.bias.float().detach() - bn.running_mean.float() * scale
        s = net.add_scale(c.get_output(0), trt.ScaleMode.CHANNEL, f16(shift.to(tdt)), f16(scale.to(tdt)),
                          trt.Weights())
        return net.add_activation(s.get_output(0), trt.ActivationType.RELU).get_output(0)
    got = run(make, x, dt, np_dt)
    # the reference rounds after each layer in 16 bits, trtlite keeps float32 between them: compare with both ends
    close(got, module, x)


@pytest.mark.parametrize("kind", KINDS)
def test_half_linear_as_matmul_with_16bit_constants(kind):
    dt, tdt, np_dt = KINDS[kind]
    g = torch.Generator().manual_seed(3)
    lin = torch.nn.Linear(13, 9).to(tdt)
    x = torch.randn((2, 5, 13), generator=g).to(tdt)

    def make(net, t):
        w = net.add_constant((1, 9, 13), f16(lin.weight).reshape(1, 9, 13)).get_output(0)
        mm = net.add_matrix_multiply(t, trt.MatrixOperation.NONE, w, trt.MatrixOperation.TRANSPOSE).get_output(0)
        b = net.add_constant((1, 1, 9), f16(lin.bias).reshape(1, 1, 9)).get_output(0)
        return net.add_elementwise(mm, b, trt.ElementWiseOperation.SUM).get_output(0)
    close(run(make, x, dt, np_dt), lin, x)
