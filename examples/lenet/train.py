"""Train the example LeNet on Fashion-MNIST (CPU, 2 threads, deterministic) and save
examples/lenet/lenet_fashion_mnist.npz.

    python examples/lenet/train.py [--epochs 6] [--out PATH]
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


_model = _load_module("lenet_model", os.path.join(HERE, "model.py"))
CHECKPOINT, LeNet, save_npz = _model.CHECKPOINT, _model.LeNet, _model.save_npz


def evaluate(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = model.logits(torch.from_numpy(x[i:i + batch]))
            correct += int((out.argmax(1).numpy() == y[i:i + batch]).sum())
    return correct / len(x)


def train(epochs=6, batch_size=64, lr=1e-3, seed=1234, threads=2, out=CHECKPOINT, log=print):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False    # no NaN-filling of scratch buffers
    rng = np.random.RandomState(seed)

    x_train, y_train = fashion_mnist.load("train")
    x_test, y_test = fashion_mnist.load("test")
    xt = torch.from_numpy(x_train)
    yt = torch.from_numpy(y_train)

    model = LeNet()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = len(x_train) // batch_size
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps_per_epoch)

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
        acc = evaluate(model, x_test, y_test)
        log("epoch %d/%d  loss %.4f  test acc %.2f%%  (%.0fs)"
            % (epoch + 1, epochs, total / steps_per_epoch, 100 * acc, time.perf_counter() - t0))
    train_time = time.perf_counter() - t0

    save_npz(model, out)
    acc = evaluate(model, x_test, y_test)
    log("saved %s (%.2f MB)  test accuracy %.2f%%  training time %.0fs"
        % (out, os.path.getsize(out) / 1e6, 100 * acc, train_time))
    return model, acc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=CHECKPOINT)
    a = p.parse_args()
    try:
        train(a.epochs, a.batch_size, a.lr, a.seed, a.threads, a.out)
    except fashion_mnist.DatasetMissingError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
