#!/usr/bin/env python3
"""Export the zoo's models to ONNX (opset 17, seeded random weights, dynamic batch) into a cache directory.

    python3 benchmarks/zoo/export.py                       # every model into build/zoo/
    python3 benchmarks/zoo/export.py --models resnet18,unet --out /tmp/zoo --force

Each model becomes ``<out>/<name>.onnx`` (input "input", output "output", dimension 0 named "N") and
``<out>/<name>.json`` (export settings, sizes, and PyTorch vs onnxruntime at batch 2: that both checks that the
batch dimension really is dynamic and gives the size of fp32 rounding differences between two independent engines).
An existing file is reused when its .json records the same seed, opset and source hash (``--force`` re-exports).
The TorchScript exporter is used (``dynamo=False``): the new exporter needs onnxscript and traces differently.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DIR = os.path.join(ROOT, "build", "zoo")
OPSET = 17



def _load_zoo_models():
    """benchmarks/zoo/models.py, imported by path under its own name (benchmarks/models.py is "models" too)."""
    import importlib.util
    name = "trtlite_zoo_models"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "models.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


models = _load_zoo_models()


def source_hash():
    """Hash of the files that define the zoo's networks and weights (a change invalidates the cache)."""
    h = hashlib.sha256()
    for p in (os.path.join(HERE, "models.py"), os.path.join(HERE, "nets.py"),
              os.path.join(ROOT, "benchmarks", "models.py")):
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def paths(name, out_dir=DEFAULT_DIR):
    """(onnx path, metadata path) of model ``name`` in ``out_dir``."""
    return os.path.join(out_dir, name + ".onnx"), os.path.join(out_dir, name + ".json")


def cached(name, out_dir=DEFAULT_DIR, seed=0, opset=OPSET):
    """The metadata of an up-to-date export of ``name``, or None."""
    onnx_path, meta_path = paths(name, out_dir)
    if not (os.path.exists(onnx_path) and os.path.exists(meta_path)):
        return None
    with open(meta_path) as f:
        meta = json.load(f)
    if meta.get("seed") != seed or meta.get("opset") != opset or meta.get("source") != source_hash():
        return None
    return meta


def ort_session(path, threads=1):
    """An onnxruntime CPU session (all graph optimizations, ``threads`` intra-op threads, sequential)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def export(name, out_dir=DEFAULT_DIR, seed=0, opset=OPSET, force=False, check=True):
    """Export ``name`` (if not cached) and return its metadata dict."""
    meta = None if force else cached(name, out_dir, seed, opset)
    if meta is not None:
        meta["cached"] = True
        return meta
    import numpy as np
    import torch
    os.makedirs(out_dir, exist_ok=True)
    onnx_path, meta_path = paths(name, out_dir)
    t0 = time.perf_counter()
    model = models.build(name, seed)
    x1 = torch.from_numpy(models.make_input(name, 1, seed))
    tmp = onnx_path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # grad mode on: under no_grad nn.MultiheadAttention (ViT) takes its fused fast path, which has no ONNX export
        torch.onnx.export(model, (x1,), tmp, opset_version=opset, dynamo=False, do_constant_folding=True,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"}, "output": {0: "N"}})
    os.replace(tmp, onnx_path)
    meta = {"model": name, "seed": seed, "opset": opset, "source": source_hash(),
            "onnx_bytes": os.path.getsize(onnx_path), "export_s": time.perf_counter() - t0,
            "params": int(sum(p.numel() for p in model.parameters()))}
    if check:
        x2 = models.make_input(name, 2, seed + 1)
        with torch.inference_mode():
            ty = model(torch.from_numpy(x2)).numpy()
        oy = ort_session(onnx_path).run(None, {"input": x2})[0]
        meta["out_shape_b2"] = list(oy.shape)
        meta["torch_vs_ort_b2"] = {"max_abs": float(np.abs(ty.astype(np.float64) - oy).max()) if ty.shape == oy.shape
                                   else None, "ref_max": float(np.abs(oy).max()), "shape_ok": ty.shape == oy.shape}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    meta["cached"] = False
    return meta


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=None, help="comma list (default: all): " + ",".join(models.names()))
    p.add_argument("--out", default=DEFAULT_DIR, help="cache directory (default build/zoo)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--opset", type=int, default=OPSET)
    p.add_argument("--force", action="store_true", help="re-export even when cached")
    p.add_argument("--json", action="store_true", help="print one JSON line per model (for run.py)")
    a = p.parse_args(argv)
    names = a.models.split(",") if a.models else models.names()
    bad = [n for n in names if n not in models.ZOO]
    if bad:
        p.error("unknown model(s) " + ", ".join(bad))
    if any(cached(n, a.out, a.seed, a.opset) is None for n in names) or a.force:
        import torch
        torch.set_num_threads(1)  # export and the batch-2 check only; torch is not imported when all is cached
    rc = 0
    for n in names:
        try:
            meta = export(n, a.out, a.seed, a.opset, a.force)
        except Exception as e:  # noqa: BLE001 -- reported per model, the others still export
            meta = {"model": n, "error": f"{type(e).__name__}: {e}"[:500]}
            rc = 1
        if a.json:
            print("@@EXPORT " + json.dumps(meta), flush=True)
        elif "error" in meta:
            print(f"{n}: export FAILED: {meta['error']}", flush=True)
        else:
            tv = meta.get("torch_vs_ort_b2", {})
            print(f"{n}: {meta['onnx_bytes'] / 2**20:.1f} MiB, {meta['params'] / 1e6:.2f} M params"
                  + (" (cached)" if meta["cached"] else f", exported in {meta['export_s']:.1f} s")
                  + (f", PyTorch vs onnxruntime at batch 2: max |diff| {tv.get('max_abs', 0):.2e}"
                     f" (max |ref| {tv.get('ref_max', 0):.2e})" if tv else ""), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
