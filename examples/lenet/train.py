"""Train the example LeNet on Fashion-MNIST (CPU, 2 threads, deterministic) and save
examples/lenet/lenet_fashion_mnist.npz.

    python examples/lenet/train.py [--epochs 6] [--out PATH]
"""

import argparse
from typing import Any, Callable
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)

import demo_common as common  # noqa: E402
from demo_common import fashion_mnist  # noqa: E402

_model = common.load_example("lenet")
CHECKPOINT, LeNet, save_npz = _model.CHECKPOINT, _model.LeNet, _model.save_npz
EVAL_BATCH = 1000


def train(epochs: int = 6, batch_size: int = 64, lr: float = 1e-3, seed: int = 1234, threads: int = 2,
          out: str = CHECKPOINT, log: Callable[[str], Any] = print) -> tuple[Any, float]:
    rng = common.deterministic_torch(seed, threads)

    x_train, y_train = fashion_mnist.load("train")
    x_test, y_test = fashion_mnist.load("test")

    model = LeNet()
    train_time = common.fit(model, x_train, y_train, x_test, y_test, epochs, batch_size, lr, rng, log,
                            eval_label="test acc", eval_batch=EVAL_BATCH)

    save_npz(model, out)
    acc = common.evaluate(model, x_test, y_test, EVAL_BATCH)
    log("saved %s (%.2f MB)  test accuracy %.2f%%  training time %.0fs"
        % (out, os.path.getsize(out) / 1e6, 100 * acc, train_time))
    return model, acc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_training_args(p, epochs=6, lr=1e-3)
    p.add_argument("--out", default=CHECKPOINT)
    a = p.parse_args()
    common.exit_if_dataset_missing(train, a.epochs, a.batch_size, a.lr, a.seed, a.threads, a.out)


if __name__ == "__main__":
    main()
