"""Train the example AdderNet on Fashion-MNIST (CPU, 2 threads, deterministic) and save
examples/addernet/addernet_fashion_mnist.npz (adder weights, BatchNorm parameters and running stats,
FC weights; float32, names as in the PyTorch state_dict).

Adder layers have no BLAS path, so this is much slower than the LeNet: the default (all 60000
images, 4 epochs) takes about 5 minutes on 2 quiet cores.  --train-size N trains on a fixed random
subset for a quicker checkpoint.

    python examples/addernet/train.py [--train-size 0] [--epochs 4]
"""

import argparse
from typing import Any, Callable
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)

import demo_common as common  # noqa: E402
from demo_common import fashion_mnist  # noqa: E402

_model = common.load_example("addernet")
CHECKPOINT, AdderNetMnist, save_npz = _model.CHECKPOINT, _model.AdderNetMnist, _model.save_npz
EVAL_BATCH = 500


def train(train_size: int = 0, epochs: int = 4, batch_size: int = 64, lr: float = 2e-3, seed: int = 1234,
          threads: int = 2, full_precision_grad: bool = True, out: str = CHECKPOINT,
          log: Callable[[str], Any] = print) -> tuple[Any, float]:
    rng = common.deterministic_torch(seed, threads)

    x_train, y_train = fashion_mnist.load("train")
    x_test, y_test = fashion_mnist.load("test")
    if train_size and train_size < len(x_train):
        keep = np.sort(rng.permutation(len(x_train))[:train_size])
        x_train, y_train = x_train[keep], y_train[keep]

    model = AdderNetMnist(full_precision_grad=full_precision_grad)
    log("training AdderNet on %d images, %d epochs, batch %d, %d threads" % (len(x_train), epochs, batch_size, threads))
    train_time = common.fit(model, x_train, y_train, x_test[:2000], y_test[:2000], epochs, batch_size, lr, rng, log,
                            eval_label="acc on 2000 test images", eval_batch=EVAL_BATCH, log_every=200)

    save_npz(model, out)
    t1 = time.perf_counter()
    acc = common.evaluate(model, x_test, y_test, EVAL_BATCH)
    log("saved %s (%.2f MB)  test accuracy %.2f%% (10000 images, %.0fs)  training time %.0fs"
        % (out, os.path.getsize(out) / 1e6, 100 * acc, time.perf_counter() - t1, train_time))
    return model, acc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-size", type=int, default=0, help="training images used (0: all 60000)")
    common.add_training_args(p, epochs=4, lr=2e-3)
    p.add_argument("--sign-grad", action="store_true", help="plain sign gradients instead of AdderNet's")
    p.add_argument("--out", default=CHECKPOINT)
    a = p.parse_args()
    common.exit_if_dataset_missing(train, a.train_size, a.epochs, a.batch_size, a.lr, a.seed, a.threads,
                                   not a.sign_grad, a.out)


if __name__ == "__main__":
    main()
