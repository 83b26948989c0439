"""PyTorch LeNet used by the trtlite examples and tests.

Layout (input N x 1 x 28 x 28, Fashion-MNIST normalized as examples/fashion_mnist.py does):

    conv1  1 -> 20, 5x5, stride 1         -> 20 x 24 x 24
    pool1  max 2x2, stride 2              -> 20 x 12 x 12
    conv2  20 -> 50, 5x5, stride 1        -> 50 x 8 x 8
    pool2  max 2x2, stride 2              -> 50 x 4 x 4   (800 features, flattened C,H,W)
    fc1    800 -> 500, relu
    fc2    500 -> 10
    softmax over the 10 classes (inference)

The checkpoint is a plain .npz of float32 arrays named like the PyTorch state_dict:
conv1.weight (20,1,5,5), conv1.bias (20,), conv2.weight (50,20,5,5), conv2.bias (50,),
fc1.weight (500,800), fc1.bias (500,), fc2.weight (10,500), fc2.bias (10,).
"""

import os

from typing import Any, Mapping

import numpy as np
import numpy.typing as npt
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKPOINT = os.path.join(HERE, "lenet_fashion_mnist.npz")

INPUT_SHAPE = (1, 28, 28)
NUM_CLASSES = 10

PARAM_SHAPES = {
    "conv1.weight": (20, 1, 5, 5),
    "conv1.bias": (20,),
    "conv2.weight": (50, 20, 5, 5),
    "conv2.bias": (50,),
    "fc1.weight": (500, 800),
    "fc1.bias": (500,),
    "fc2.weight": (10, 500),
    "fc2.bias": (10,),
}


class LeNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, kernel_size=5)
        self.conv2 = nn.Conv2d(20, 50, kernel_size=5)
        self.fc1 = nn.Linear(800, 500)
        self.fc2 = nn.Linear(500, 10)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(self.conv1(x), kernel_size=2, stride=2)
        x = F.max_pool2d(self.conv2(x), kernel_size=2, stride=2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        out: torch.Tensor = self.fc2(x)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class probabilities (softmax over dim 1): what the inference engines output."""
        return F.softmax(self.logits(x), dim=1)


def state_to_numpy(model: nn.Module) -> dict[str, npt.NDArray[np.float32]]:
    """model -> {name: float32 C-contiguous ndarray} with the names listed in PARAM_SHAPES."""
    return {k: np.ascontiguousarray(v.detach().cpu().numpy(), dtype=np.float32)
            for k, v in model.state_dict().items()}


def save_npz(model: nn.Module, path: str = CHECKPOINT) -> None:
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
    return weights


def model_from_weights(weights: Mapping[str, npt.NDArray[np.float32]]) -> LeNet:
    """Build an eval-mode LeNet from a {name: ndarray} dict."""
    model = LeNet()
    model.load_state_dict({k: torch.from_numpy(np.array(weights[k])) for k in PARAM_SHAPES})
    return model.eval()


def load_model(path: str = CHECKPOINT) -> LeNet:
    return model_from_weights(load_weights(path))


def random_model(seed: int = 0) -> LeNet:
    """A LeNet with PyTorch's default (seeded) random initialization, in eval mode."""
    gen_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = LeNet()
    finally:
        torch.random.set_rng_state(gen_state)
    return model.eval()
