"""What the Fashion-MNIST examples share: the LeNet and AdderNet demos (network_api_mnist.py, addernet/demo.py),
their training scripts (lenet/train.py, addernet/train.py) and their tests (tests/test_lenet.py,
tests/test_addernet.py).

    import demo_common as common            # examples/ on sys.path (every user puts it there)
    lenet = common.load_example("lenet")    # examples/lenet/model.py, imported as module "lenet_model"
    trt = common.import_trtlite()           # trtlite, from the source checkout when it is not installed

Loading:   load_module, load_example, import_trtlite, fashion_mnist (the dataset module).
Demos:     demo_arg_parser, available_cpus, load_test_set_and_weights, build_save_and_load, load_engine,
           torch_predict, predict_batched, median_latency_ms, compare_predictions, print_report.
Training:  add_training_args, deterministic_torch, evaluate, fit, exit_if_dataset_missing.

Importing this module imports neither torch nor trtlite: the training scripts do not need trtlite, and the demos
import torch only once their arguments are parsed.
"""

import argparse
import importlib.util
import os
import statistics
import sys
import time
import types
from typing import Any, Callable, Optional, Sequence

import numpy as np
import numpy.typing as npt

EXAMPLES = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(EXAMPLES)
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)

import fashion_mnist as fashion_mnist  # noqa: E402  (re-exported for the demos)


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------

def load_module(name: str, path: str) -> types.ModuleType:
    """Import the file `path` as module `name` (examples/lenet and examples/addernet both have a model.py, so they
    cannot both be imported as "model").  A module already imported under `name` is returned as it is."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_example(which: str) -> types.ModuleType:
    """examples/<which>/model.py ("lenet" or "addernet") as module "<which>_model"."""
    return load_module(which + "_model", os.path.join(EXAMPLES, which, "model.py"))


def import_trtlite() -> types.ModuleType:
    """The trtlite package: the installed one, else the one built in place in this source checkout."""
    try:
        import trtlite
    except ImportError:  # running from a source checkout that is not installed
        sys.path.insert(0, ROOT)
        import trtlite
    return trtlite


# ----------------------------------------------------------------------------------------------
# Demos
# ----------------------------------------------------------------------------------------------

def available_cpus() -> int:
    """CPUs this process may use (what trtlite's thread pool sizes itself to)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def demo_arg_parser(description: str, model_label: str, weights: str, plan: str) -> argparse.ArgumentParser:
    """The options every demo has: --quick, --weights (default `weights`), --plan (default `plan`); the demo adds
    its own after these."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="evaluate on 1000 test images (for tests)")
    p.add_argument("--weights", default=weights, help="%s .npz checkpoint" % model_label)
    p.add_argument("--plan", default=plan, help="where to write the serialized engine")
    return p


def load_test_set_and_weights(which: str, weights_path: str, limit: Optional[int] = None,
                              train_if_missing: bool = False) -> tuple[npt.NDArray[Any], npt.NDArray[Any], Any]:
    """(x_test, y_test, weights) for examples/<which>: the first `limit` Fashion-MNIST test images (all with None)
    and the checkpoint at weights_path, read with the model module's load_weights.  A missing checkpoint is trained
    first with examples/<which>/train.py when train_if_missing, else the script exits saying how to train it; a
    missing dataset makes it exit with the dataset module's message."""
    model = load_example(which)
    train_script = os.path.join(EXAMPLES, which, "train.py")
    try:
        x_test, y_test = fashion_mnist.load("test", limit=limit)
        if not os.path.exists(weights_path):
            if not train_if_missing:
                sys.exit("%s not found: train it with  python %s" % (weights_path, os.path.relpath(train_script, ROOT)))
            print("%s not found: training it first (a few minutes on CPU)..." % os.path.relpath(weights_path))
            load_module(which + "_train", train_script).train(out=weights_path)
    except fashion_mnist.DatasetMissingError as e:
        sys.exit(str(e))
    return x_test, y_test, model.load_weights(weights_path)


def load_engine(runtime: Any, plan_path: str) -> Any:
    with open(plan_path, "rb") as f:
        engine = runtime.deserialize_cuda_engine(f.read())
    if engine is None:
        raise RuntimeError("could not deserialize %s" % plan_path)
    return engine


def build_save_and_load(build: Callable[[], Any], plan_path: str, logger: Any) -> tuple[Any, Any, float]:
    """Build, serialize to a file, and load back as a deployment would.

    build() returns the serialized engine (TensorRT 8+: build_serialized_network) or an engine to serialize
    (TensorRT 7: build_cuda_engine); its time is measured.  The plan is written to plan_path (directories created)
    and deserialized by a new trt.Runtime(logger).  Returns (runtime, engine, build_seconds): keep the runtime alive
    as long as the engine."""
    trt = import_trtlite()
    t0 = time.perf_counter()
    built = build()
    build_s = time.perf_counter() - t0
    plan = built.serialize() if isinstance(built, trt.ICudaEngine) else built
    os.makedirs(os.path.dirname(os.path.abspath(plan_path)), exist_ok=True)
    with open(plan_path, "wb") as f:
        f.write(plan)
    del built, plan
    runtime = trt.Runtime(logger)
    return runtime, load_engine(runtime, plan_path), build_s


def torch_predict(model: Any, x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The PyTorch model's output for the float32 images x (numpy in, numpy out), without autograd."""
    import torch
    with torch.inference_mode():
        out: npt.NDArray[Any] = model(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).numpy()
        return out


def predict_batched(fn: Callable[[npt.NDArray[Any]], npt.NDArray[Any]], x: npt.NDArray[Any],
                    batch: int) -> npt.NDArray[Any]:
    return np.concatenate([fn(x[i:i + batch]) for i in range(0, len(x), batch)])


def median_latency_ms(fn: Callable[[], Any], warmup: int, runs: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def compare_predictions(p_torch: npt.NDArray[Any], p_trt: npt.NDArray[Any],
                        labels: npt.NDArray[Any]) -> tuple[float, float, int, float]:
    """(PyTorch accuracy, trtlite accuracy, images where both predict the same class, max |probability diff|)."""
    acc_torch = float((p_torch.argmax(1) == labels).mean())
    acc_trt = float((p_trt.argmax(1) == labels).mean())
    same_pred = int((p_torch.argmax(1) == p_trt.argmax(1)).sum())
    max_diff = float(np.abs(p_torch - p_trt).max())
    return acc_torch, acc_trt, same_pred, max_diff


def print_report(title: str, header: str, row: str, torch_cells: Sequence[Any], trt_cells: Sequence[Any],
                 summary: str) -> None:
    """The demos' result table: a blank line, the title, the header line, a PyTorch row and a trtlite row
    (row % (engine label,) + cells), then the summary line."""
    import torch
    print()
    print(title)
    print(header)
    print(row % (("PyTorch " + torch.__version__.split("+")[0],) + tuple(torch_cells)))
    print(row % (("trtlite",) + tuple(trt_cells)))
    print(summary)


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------

def add_training_args(p: argparse.ArgumentParser, epochs: int, lr: float) -> None:
    """--epochs, --batch-size, --lr, --seed, --threads with a training script's defaults."""
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2)


def exit_if_dataset_missing(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs); a missing Fashion-MNIST ends the script with the dataset module's message."""
    try:
        return fn(*args, **kwargs)
    except fashion_mnist.DatasetMissingError as e:
        sys.exit(str(e))


def deterministic_torch(seed: int, threads: int) -> np.random.RandomState:
    """Seeds PyTorch and makes it deterministic on `threads` threads; returns numpy's RandomState(seed), which orders
    the training data (a training run is then repeatable to the bit on the same machine)."""
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]  # no NaN-filling
    return np.random.RandomState(seed)


def evaluate(model: Any, x: npt.NDArray[Any], y: npt.NDArray[Any], batch: int) -> float:
    """Accuracy of model.logits on images x, labels y, in batches of `batch`; leaves the model in eval mode."""
    import torch
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = model.logits(torch.from_numpy(x[i:i + batch]))
            correct += int((out.argmax(1).numpy() == y[i:i + batch]).sum())
    return correct / len(x)


def fit(model: Any, x_train: npt.NDArray[Any], y_train: npt.NDArray[Any], x_eval: npt.NDArray[Any],
        y_eval: npt.NDArray[Any], epochs: int, batch_size: int, lr: float, rng: np.random.RandomState,
        log: Callable[[str], Any], eval_label: str, eval_batch: int, log_every: int = 0) -> float:
    """Trains model.logits with cross-entropy: Adam, one-cycle learning rate peaking at lr, `epochs` passes over
    len(x_train) // batch_size batches in an order drawn from rng each epoch.  Every `log_every` steps (0: never)
    logs the running mean loss; after each epoch logs the epoch's mean loss and the accuracy on (x_eval, y_eval),
    labelled eval_label.  Returns the training time in seconds."""
    import torch
    import torch.nn.functional as F
    xt = torch.from_numpy(x_train)
    yt = torch.from_numpy(y_train)
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
            loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
            opt.step()
            sched.step()
            total += loss.item()
            if log_every and (s + 1) % log_every == 0:
                log("  step %d/%d  loss %.4f  (%.0fs)" % (s + 1, steps_per_epoch, total / (s + 1), time.perf_counter() - t0))
        acc = evaluate(model, x_eval, y_eval, eval_batch)
        log("epoch %d/%d  loss %.4f  %s %.2f%%  (%.0fs)"
            % (epoch + 1, epochs, total / steps_per_epoch, eval_label, 100 * acc, time.perf_counter() - t0))
    return time.perf_counter() - t0
