"""Train the example AdderNet on Fashion-MNIST (CPU, 2 threads, deterministic) and save
examples/addernet/addernet_fashion_mnist.npz (adder weights, BatchNorm parameters and running stats,
FC weights; float32, names as in the PyTorch state_dict).

Adder layers have no BLAS path, so this is much slower than the LeNet: the default (all 60000
images, 4 epochs) takes about 5 minutes on 2 quiet cores.  --train-size N trains on a fixed random
subset for a quicker checkpoint.

    python examples/addernet/train.py [--train-size 0] [--epochs 4]
"""

import argparse
import importlib.util
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)

import fashion_mnist  # noqa: E402


def _load_module(name, path):
    """Import a file under a unique module name (examples/lenet and examples/addernet both have model.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_model = _load_module("addernet_model", os.path.join(HERE, "model.py"))
CHECKPOINT, AdderNetMnist, save_npz = _model.CHECKPOINT, _model.AdderNetMnist, _model.save_npz


def evaluate(model, x, y, batch=500):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = model.logits(torch.from_numpy(x[i:i + batch]))
            correct += int((out.argmax(1).numpy() == y[i:i + batch]).sum())
    return correct / len(x)


def train(train_size=0, epochs=4, batch_size=64, lr=2e-3, seed=1234, threads=2,
          full_precision_grad=True, out=CHECKPOINT, log=print):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False    # no NaN-filling of scratch buffers
    rng = np.random.RandomState(seed)

    x_train, y_train = fashion_mnist.load("train")
    x_test, y_test = fashion_mnist.load("test")
    if train_size and train_size < len(x_train):
        keep = np.sort(rng.permutation(len(x_train))[:train_size])
        x_train, y_train = x_train[keep], y_train[keep]
    xt = torch.from_numpy(x_train)
    yt = torch.from_numpy(y_train)

    model = AdderNetMnist(full_precision_grad=full_precision_grad)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = len(x_train) // batch_size
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps_per_epoch)

    log("training AdderNet on %d images, %d epochs, batch %d, %d threads" % (len(x_train), epochs, batch_size, threads))
    t0 = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        perm = torch.from_numpy(rng.permutation(len(x_train)))
        total = 0.0
        for s in range(steps_per_epoch):
            idx = perm[s * batch_size:(s + 1) * batch_size]
            loss = F.cross_entropy(model.logits(xt[idx]), yt[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
            if (s + 1) % 200 == 0:
                log("  step %d/%d  loss %.4f  (%.0fs)" % (s + 1, steps_per_epoch, total / (s + 1), time.perf_counter() - t0))
        acc = evaluate(model, x_test[:2000], y_test[:2000])
        log("epoch %d/%d  loss %.4f  acc on 2000 test images %.2f%%  (%.0fs)"
            % (epoch + 1, epochs, total / steps_per_epoch, 100 * acc, time.perf_counter() - t0))
    train_time = time.perf_counter() - t0

    save_npz(model, out)
    t1 = time.perf_counter()
    acc = evaluate(model, x_test, y_test)
    log("saved %s (%.2f MB)  test accuracy %.2f%% (10000 images, %.0fs)  training time %.0fs"
        % (out, os.path.getsize(out) / 1e6, 100 * acc, time.perf_counter() - t1, train_time))
    return model, acc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-size", type=int, default=0, help="training images used (0: all 60000)")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--sign-grad", action="store_true", help="plain sign gradients instead of AdderNet's")
    p.add_argument("--out", default=CHECKPOINT)
    a = p.parse_args()
    try:
        train(a.train_size, a.epochs, a.batch_size, a.lr, a.seed, a.threads, not a.sign_grad, a.out)
    except fashion_mnist.DatasetMissingError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
