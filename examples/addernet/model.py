"""PyTorch reference for AdderNet (Chen et al., "AdderNet: Do We Really Need Multiplications in Deep
Learning?", CVPR 2020) and the small AdderNet used by the trtlite examples.

Adder layer
-----------
An adder layer replaces the convolution's cross-correlation by a negative L1 distance:

    Y[n, f, y, x] = - sum_{c, i, j} | Xp[n, c, y*s + i, x*s + j] - W[f, c, i, j] |

where Xp is X zero-padded by p on each side of H and W.  Padding is applied to X *first*, so every
padded position still contributes |0 - W[f, c, i, j]| = |W[f, c, i, j]| (this matches trtlite's
``Adder2d_TRT`` plugin).  There is no bias.  Output size: (H + 2p - k) // s + 1.

Gradients
---------
``Adder2d(..., full_precision_grad=True)`` (the default) uses AdderNet's full-precision gradients:

    dY/dX = HardTanh(W - X)        (instead of sign(W - X))
    dY/dW = X - W                  (instead of sign(X - W))

(the paper's adaptive per-layer learning rate is left to the optimizer; Adam is scale-invariant per
parameter anyway).  ``full_precision_grad=False`` uses plain autograd of -|X - W| (sign gradients).
Both are computed on the unfolded input, chunked over filters to bound memory.

Network
-------
AdderNetMnist: adder 1->20 k5, BN, maxpool 2/2, adder 20->50 k5, BN, maxpool 2/2, fc 800->500, relu,
fc 500->10, softmax at inference (``forward``; ``logits`` for training).

Checkpoint (.npz, float32): adder1.weight (20,1,5,5), bn1.{weight,bias,running_mean,running_var} (20,),
adder2.weight (50,20,5,5), bn2.* (50,), fc1.weight (500,800), fc1.bias, fc2.weight (10,500), fc2.bias,
plus bn_eps (1,) -- the BatchNorm epsilon.
"""

import math
import os
from typing import Any, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKPOINT = os.path.join(HERE, "addernet_fashion_mnist.npz")

INPUT_SHAPE = (1, 28, 28)
NUM_CLASSES = 10
BN_EPS = 1e-5

# Elements of the (N_chunk, F_chunk, D, L) scratch buffer: 4 MB of float32, small enough to stay in cache.
_CHUNK_ELEMS = 1 << 20


def _pair(v: int | Sequence[int]) -> tuple[int, ...]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _chunks(cols: torch.Tensor, w2d: torch.Tensor) -> Any:
    """Yield (n0, n1, f0, f1, scratch) over blocks of the (N, F, D, L) difference tensor.

    scratch is a view of one reused buffer of shape (n1 - n0, f1 - f0, D, L).
    """
    n, d, l = cols.shape
    f = w2d.shape[0]
    per = d * l
    fc = max(1, min(f, _CHUNK_ELEMS // per))
    nc = max(1, min(n, _CHUNK_ELEMS // (per * fc)))
    buf = cols.new_empty((nc, fc, d, l))
    for n0 in range(0, n, nc):
        n1 = min(n, n0 + nc)
        for f0 in range(0, f, fc):
            f1 = min(f, f0 + fc)
            yield n0, n1, f0, f1, buf[:n1 - n0, :f1 - f0]


def adder_unfolded(cols: torch.Tensor, w2d: torch.Tensor) -> torch.Tensor:
    """-L1 distance between columns and filters.

    cols: (N, D, L) unfolded input (D = C*kh*kw, L = output positions); w2d: (F, D).
    Returns (N, F, L) with out[n, f, l] = -sum_d |cols[n, d, l] - w2d[f, d]|.
    """
    cols = cols.contiguous()
    out = cols.new_empty((cols.shape[0], w2d.shape[0], cols.shape[2]))
    for n0, n1, f0, f1, diff in _chunks(cols, w2d):
        torch.sub(cols[n0:n1].unsqueeze(1), w2d[f0:f1, :, None], out=diff)      # x - w
        out[n0:n1, f0:f1] = diff.abs_().sum(dim=2)
    return out.neg_()


class _AdderFullPrecisionGrad(torch.autograd.Function):
    """out = adder_unfolded(cols, w2d) with AdderNet's full-precision backward."""

    @staticmethod
    def forward(ctx: Any, cols: torch.Tensor, w2d: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(cols, w2d)
        with torch.no_grad():
            return adder_unfolded(cols, w2d)

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:  # grad_out: (N, F, L)
        cols, w2d = ctx.saved_tensors
        cols = cols.contiguous()
        grad_out = grad_out.contiguous()
        grad_cols = grad_w = None
        if ctx.needs_input_grad[1]:
            # sum_{n,l} g[n,f,l] * (cols[n,d,l] - w[f,d]): matrix products, no (N,F,D,L) temporary.
            g_x = torch.einsum("nfl,ndl->fd", grad_out, cols)
            grad_w = g_x - w2d * grad_out.sum(dim=(0, 2)).unsqueeze(1)
        if ctx.needs_input_grad[0]:
            grad_cols = torch.zeros_like(cols)
            for n0, n1, f0, f1, ht in _chunks(cols, w2d):
                torch.sub(w2d[f0:f1, :, None], cols[n0:n1].unsqueeze(1), out=ht)     # w - x
                ht.clamp_(-1.0, 1.0).mul_(grad_out[n0:n1, f0:f1, None, :])          # HardTanh(w - x) * g
                grad_cols[n0:n1] += ht.sum(dim=1)
        return grad_cols, grad_w


class _AdderSignGrad(torch.autograd.Function):
    """out = adder_unfolded(cols, w2d) with the exact (sign) gradients of -|x - w|."""

    @staticmethod
    def forward(ctx: Any, cols: torch.Tensor, w2d: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(cols, w2d)
        with torch.no_grad():
            return adder_unfolded(cols, w2d)

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        cols, w2d = ctx.saved_tensors
        cols = cols.contiguous()
        grad_out = grad_out.contiguous()
        grad_cols = torch.zeros_like(cols) if ctx.needs_input_grad[0] else None
        grad_w = torch.zeros_like(w2d) if ctx.needs_input_grad[1] else None
        for n0, n1, f0, f1, s in _chunks(cols, w2d):
            torch.sub(w2d[f0:f1, :, None], cols[n0:n1].unsqueeze(1), out=s)
            s.sign_().mul_(grad_out[n0:n1, f0:f1, None, :])                        # d out / d x
            if grad_cols is not None:
                grad_cols[n0:n1] += s.sum(dim=1)
            if grad_w is not None:
                grad_w[f0:f1] -= s.sum(dim=(0, 3))                                 # d out / d w = -(d out / d x)
        return grad_cols, grad_w


def adder2d(x: torch.Tensor, weight: torch.Tensor, stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
            full_precision_grad: bool = True) -> torch.Tensor:
    """Functional adder layer. x: (N, C, H, W); weight: (F, C, kh, kw). Returns (N, F, Ho, Wo)."""
    n, c, h, w_in = x.shape
    f, cw, kh, kw = weight.shape
    if c != cw:
        raise ValueError("input has %d channels, weight expects %d" % (c, cw))
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    ho = (h + 2 * ph - kh) // sh + 1
    wo = (w_in + 2 * pw - kw) // sw + 1
    cols = F.unfold(x, (kh, kw), padding=(ph, pw), stride=(sh, sw))     # zero padding -> |0 - w| counted
    fn = _AdderFullPrecisionGrad if full_precision_grad else _AdderSignGrad
    out: torch.Tensor = fn.apply(cols, weight.reshape(f, -1))  # type: ignore[no-untyped-call]  # untyped in torch
    return out.view(n, f, ho, wo)


def adder2d_reference(x_in: npt.ArrayLike, weight_in: npt.ArrayLike, stride: int | Sequence[int] = 1,
                      padding: int | Sequence[int] = 0) -> npt.NDArray[np.float64]:
    """Slow, direct transcription of the formula (numpy, float64) for checking implementations."""
    x = np.asarray(x_in, dtype=np.float64)
    weight = np.asarray(weight_in, dtype=np.float64)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    n, c, h, w_in = x.shape
    f, _, kh, kw = weight.shape
    xp = np.zeros((n, c, h + 2 * ph, w_in + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + w_in] = x
    ho = (h + 2 * ph - kh) // sh + 1
    wo = (w_in + 2 * pw - kw) // sw + 1
    y = np.zeros((n, f, ho, wo))
    for oy in range(ho):
        for ox in range(wo):
            patch = xp[:, :, oy * sh:oy * sh + kh, ox * sw:ox * sw + kw]          # (N, C, kh, kw)
            y[:, :, oy, ox] = -np.abs(patch[:, None] - weight[None]).sum(axis=(2, 3, 4))
    return y


class Adder2d(nn.Module):
    """Adder layer: Y = -sum |X - W| over each (zero-padded) window. No bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                 full_precision_grad: bool = True) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.full_precision_grad = full_precision_grad
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, *self.kernel_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        fan_in = self.in_channels * self.kernel_size[0] * self.kernel_size[1]
        nn.init.normal_(self.weight, 0.0, math.sqrt(2.0 / fan_in))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return adder2d(x, self.weight, self.stride, self.padding, self.full_precision_grad)

    def extra_repr(self) -> str:
        return "%d, %d, kernel_size=%s, stride=%s, padding=%s" % (
            self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding)


class AdderNetMnist(nn.Module):
    def __init__(self, full_precision_grad: bool = True) -> None:
        super().__init__()
        self.adder1 = Adder2d(1, 20, 5, full_precision_grad=full_precision_grad)
        self.bn1 = nn.BatchNorm2d(20, eps=BN_EPS)
        self.adder2 = Adder2d(20, 50, 5, full_precision_grad=full_precision_grad)
        self.bn2 = nn.BatchNorm2d(50, eps=BN_EPS)
        self.fc1 = nn.Linear(800, 500)
        self.fc2 = nn.Linear(500, 10)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(self.bn1(self.adder1(x)), kernel_size=2, stride=2)     # 20 x 12 x 12
        x = F.max_pool2d(self.bn2(self.adder2(x)), kernel_size=2, stride=2)     # 50 x 4 x 4
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        out: torch.Tensor = self.fc2(x)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class probabilities (softmax over dim 1)."""
        return F.softmax(self.logits(x), dim=1)


PARAM_SHAPES = {
    "adder1.weight": (20, 1, 5, 5),
    "bn1.weight": (20,), "bn1.bias": (20,), "bn1.running_mean": (20,), "bn1.running_var": (20,),
    "adder2.weight": (50, 20, 5, 5),
    "bn2.weight": (50,), "bn2.bias": (50,), "bn2.running_mean": (50,), "bn2.running_var": (50,),
    "fc1.weight": (500, 800), "fc1.bias": (500,),
    "fc2.weight": (10, 500), "fc2.bias": (10,),
}


def state_to_numpy(model: "AdderNetMnist") -> dict[str, npt.NDArray[np.float32]]:
    sd = model.state_dict()
    out = {k: np.ascontiguousarray(sd[k].detach().cpu().numpy(), dtype=np.float32) for k in PARAM_SHAPES}
    out["bn_eps"] = np.array([model.bn1.eps], dtype=np.float32)
    return out


def save_npz(model: "AdderNetMnist", path: str = CHECKPOINT) -> None:
    arrays: dict[str, Any] = dict(state_to_numpy(model))  # numpy's stub types **kwds loosely
    np.savez_compressed(path, **arrays)


def load_weights(path: str = CHECKPOINT) -> dict[str, npt.NDArray[np.float32]]:
    """Read a checkpoint into {name: float32 ndarray}, checking names and shapes."""
    with np.load(path) as f:
        weights = {k: np.ascontiguousarray(f[k], dtype=np.float32) for k in f.files}
    for name, shape in PARAM_SHAPES.items():
        if name not in weights:
            raise KeyError("%s: missing array %r" % (path, name))
        if weights[name].shape != shape:
            raise ValueError("%s: %s has shape %s, expected %s" % (path, name, weights[name].shape, shape))
    weights.setdefault("bn_eps", np.array([BN_EPS], dtype=np.float32))
    return weights


def _bn_eps(weights: Mapping[str, npt.NDArray[Any]]) -> float:
    return float(np.ravel(weights.get("bn_eps", BN_EPS))[0])


def model_from_weights(weights: Mapping[str, npt.NDArray[Any]]) -> "AdderNetMnist":
    model = AdderNetMnist()
    model.load_state_dict({k: torch.from_numpy(np.array(weights[k])) for k in PARAM_SHAPES}, strict=False)
    model.bn1.eps = model.bn2.eps = _bn_eps(weights)
    return model.eval()


def load_model(path: str = CHECKPOINT) -> "AdderNetMnist":
    return model_from_weights(load_weights(path))


def bn_as_scale(weights: Mapping[str, npt.NDArray[Any]],
                prefix: str) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Fold an inference BatchNorm into y = x * scale + shift (per channel): returns (scale, shift)."""
    eps = _bn_eps(weights)
    scale = weights[prefix + ".weight"] / np.sqrt(weights[prefix + ".running_var"] + eps)
    shift = weights[prefix + ".bias"] - weights[prefix + ".running_mean"] * scale
    return scale.astype(np.float32), shift.astype(np.float32)
