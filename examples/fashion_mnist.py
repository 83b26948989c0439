"""Fashion-MNIST loader for the trtlite examples and tests.

Reads the idx files shipped by the Debian package ``dataset-fashion-mnist``
(``/usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz``)
and returns numpy arrays:

    images: float32, shape (N, 1, 28, 28), normalized as the example models expect:
            (pixel / 255 - MEAN) / STD
    labels: int64, shape (N,), class indices 0..9

Usage::

    from fashion_mnist import load
    x_test, y_test = load("test")           # 10000 images
    x_train, y_train = load("train", limit=5000)

The directory can be overridden with the environment variable FASHION_MNIST_DIR.
"""

import gzip
import os
from typing import Optional
import struct

import numpy as np
import numpy.typing as npt

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"

# Per-pixel statistics of the Fashion-MNIST training set (after scaling to [0, 1]).
MEAN = 0.2860
STD = 0.3530

CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


class DatasetMissingError(FileNotFoundError):
    """Raised when the Fashion-MNIST files are not installed."""


def data_dir() -> str:
    return os.environ.get("FASHION_MNIST_DIR", DEFAULT_DIR)


def _paths(split: str) -> tuple[str, ...]:
    if split in ("t10k", "val"):
        split = "test"
    if split not in _FILES:
        raise ValueError("split must be 'train' or 'test', got %r" % (split,))
    d = data_dir()
    return tuple(os.path.join(d, f) for f in _FILES[split])


def available(split: str = "test") -> bool:
    """True if the files of ``split`` are present."""
    return all(os.path.isfile(p) for p in _paths(split))


def _check(path: str) -> None:
    if not os.path.isfile(path):
        raise DatasetMissingError(
            "Fashion-MNIST file not found: %s\n"
            "Install the dataset with:  sudo apt-get install dataset-fashion-mnist\n"
            "(or point FASHION_MNIST_DIR at a directory holding the four *-ubyte.gz files)" % path)


def _read_idx(path: str) -> npt.NDArray[np.uint8]:
    """Parse an idx file (optionally gzip-compressed) into a numpy array."""
    _check(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise ValueError("%s: truncated idx file" % path)
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError("%s: not an unsigned-byte idx file (magic %02x%02x)" % (path, dtype_code, ndim))
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    offset = 4 + 4 * ndim
    count = int(np.prod(dims)) if dims else 1
    if len(data) - offset != count:
        raise ValueError("%s: expected %d bytes of data, found %d" % (path, count, len(data) - offset))
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(dims)


def normalize(images_u8: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """uint8 (N, 28, 28) or (N, 1, 28, 28) -> float32 (N, 1, 28, 28), normalized."""
    x = np.asarray(images_u8, dtype=np.float32)
    if x.ndim == 3:
        x = x[:, None, :, :]
    x = (x / np.float32(255.0) - np.float32(MEAN)) / np.float32(STD)
    return np.ascontiguousarray(x, dtype=np.float32)


def load_raw(split: str = "test") -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """Return (uint8 images (N, 28, 28), uint8 labels (N,))."""
    img_path, lbl_path = _paths(split)
    images = _read_idx(img_path)
    labels = _read_idx(lbl_path)
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError("unexpected idx shapes: images %s, labels %s" % (images.shape, labels.shape))
    return images, labels


def load(split: str = "test", limit: Optional[int] = None) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """Return (float32 images (N, 1, 28, 28), int64 labels (N,)).

    ``limit`` keeps only the first ``limit`` samples (the files are in a fixed order).
    """
    images, labels = load_raw(split)
    if limit is not None:
        images, labels = images[:limit], labels[:limit]
    return normalize(images), labels.astype(np.int64)


if __name__ == "__main__":
    for s in ("train", "test"):
        x, y = load(s)
        print("%-5s images %s %s  labels %s  mean %.4f std %.4f  classes %s"
              % (s, x.shape, x.dtype, y.shape, x.mean(), x.std(), np.bincount(y, minlength=10).tolist()))
