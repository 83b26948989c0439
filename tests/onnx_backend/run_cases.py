"""Runs the ONNX backend test suite that ships inside the installed onnx wheel against trtlite (or onnxruntime).

The cases (``onnx.backend.test``):
  * node     -- one model per case (a single node), generated in memory by onnx's own case modules
                (``onnx.backend.test.case.node``: the wheel no longer ships them as files), with the inputs and
                outputs onnx's reference implementation gives;
  * light    -- the ``data/light`` real models (AlexNet, ResNet-50, ...: real architectures, light weights),
                fed as onnx's runner feeds them (arange(n)/n in float32) and compared with the outputs stored
                beside them;
  * simple, pytorch-converted, pytorch-operator -- model folders in ``data/`` with test_data_set_*/.
The ``real`` kind needs downloads and is left out.

How a case is judged, as onnx's runner (onnx/backend/test/runner) judges it: the same number of outputs, each of
the expected shape, ``np.testing.assert_allclose(out, ref, rtol, atol)`` with the case's tolerances (rtol 1e-3,
atol 1e-7 unless its data.json says otherwise; NaN equals NaN).  One deviation, the one onnx-tensorrt's backend
makes too: outputs are cast to the dtype ONNX declares before the comparison, since trtlite (like TensorRT)
carries int64 as INT32 and double as FLOAT; a value that does not survive the cast back still fails.

Each case runs in a child process of a small pool (``--jobs``): a case that crashes the interpreter or runs past
``--timeout`` seconds kills only its worker, which is replaced, and is reported as CRASH / TIMEOUT.

Results: one line per case, ``name<TAB>status<TAB>reason`` (status PASS / FAIL / CRASH / TIMEOUT), sorted by name,
in ``--out`` (default: stdout).  ``--summary`` prints the pass rates.

    python tests/onnx_backend/run_cases.py --backend trtlite --jobs 2 --out build/onnx_backend/trtlite.tsv
    python tests/onnx_backend/run_cases.py --backend onnxruntime --jobs 2 --summary
"""
from __future__ import annotations

import argparse
import glob
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import re
import sys
import time
import traceback
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

# trtlite from this checkout (built in place), as the test suite imports it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

KINDS = ("node", "light", "simple", "pytorch-converted", "pytorch-operator")

# A case as sent to a worker: (name, model bytes, inputs, expected outputs, rtol, atol).  Inputs and outputs are
# lists of numpy arrays (or lists of arrays for sequence-typed values, which trtlite does not support).
Case = Tuple[str, bytes, List[Any], List[Any], float, float]


# ---- collecting the cases (parent process) -------------------------------------------------------------------

def _data_dir() -> str:
    import onnx.backend.test
    return os.path.join(os.path.dirname(onnx.backend.test.__file__), "data")


def _to_array(v: Any) -> Any:
    """A case value as numpy (TensorProto -> array; lists stay lists, for sequence inputs)."""
    from onnx import TensorProto, numpy_helper
    if isinstance(v, TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, (list, tuple)):
        return [_to_array(x) for x in v]
    if isinstance(v, np.generic):  # a few cases give 0-d inputs as numpy scalars
        return np.asarray(v)
    return v


def node_cases() -> Iterator[Case]:
    """onnx's node test cases, generated in memory (the same TestCase objects onnx's runner uses)."""
    from onnx.backend.test.loader import load_node_model_tests
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_node_model_tests()
    seen = set()
    for c in cases:
        if c.name in seen:  # defensive: a name must identify one case
            continue
        seen.add(c.name)
        assert c.model is not None and c.data_sets
        ins, outs = c.data_sets[0]
        yield (c.name, c.model.SerializeToString(), [_to_array(x) for x in ins], [_to_array(x) for x in outs],
               float(c.rtol), float(c.atol))


def _load_pb(path: str, type_proto: Any) -> Any:
    import onnx
    from onnx import numpy_helper
    with open(path, "rb") as f:
        data = f.read()
    if type_proto is not None and type_proto.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return numpy_helper.to_list(seq)
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def dir_cases(kind: str) -> Iterator[Case]:
    """The model-folder kinds (simple, pytorch-*) and the light models."""
    import json

    import onnx
    root = os.path.join(_data_dir(), kind)
    if kind == "light":
        for path in sorted(glob.glob(os.path.join(root, "light_*.onnx"))):
            model = onnx.load(path)
            inits = {i.name for i in model.graph.initializer}
            ins = []
            for x in model.graph.input:
                if x.name in inits:
                    continue
                shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
                n = int(np.prod(shape))
                ins.append((np.arange(n).reshape(shape) / n).astype(np.float32))  # onnx's runner's dummy data
            prefix = os.path.splitext(path)[0]
            outs = [_load_pb("%s_output_%d.pb" % (prefix, i), o.type) for i, o in enumerate(model.graph.output)]
            name = "test_" + os.path.basename(prefix)[len("light_"):]
            yield ("light/" + name, model.SerializeToString(), ins, outs, 1e-3, 1e-7)
        return
    for case_dir in sorted(glob.glob(os.path.join(root, "test_*"))):
        mpath = os.path.join(case_dir, "model.onnx")
        if not os.path.exists(mpath):
            continue
        rtol, atol = 1e-3, 1e-7
        if os.path.exists(os.path.join(case_dir, "data.json")):
            with open(os.path.join(case_dir, "data.json")) as f:
                data = json.load(f)
            rtol, atol = data.get("rtol", rtol), data.get("atol", atol)
        model = onnx.load(mpath)
        for k, ds in enumerate(sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))):
            n_in = len(glob.glob(os.path.join(ds, "input_*.pb")))
            n_out = len(glob.glob(os.path.join(ds, "output_*.pb")))
            ins = [_load_pb(os.path.join(ds, "input_%d.pb" % i), model.graph.input[i].type) for i in range(n_in)]
            outs = [_load_pb(os.path.join(ds, "output_%d.pb" % i), model.graph.output[i].type) for i in range(n_out)]
            suffix = "" if k == 0 else "#%d" % k
            yield ("%s/%s%s" % (kind, os.path.basename(case_dir), suffix), model.SerializeToString(), ins, outs,
                   rtol, atol)


def collect(kinds: Sequence[str], pattern: Optional[str] = None) -> List[Case]:
    """The cases of `kinds`, names matching the regular expression `pattern` (None: all)."""
    out: List[Case] = []
    for kind in kinds:
        it = node_cases() if kind == "node" else dir_cases(kind)
        out.extend(c for c in it if pattern is None or re.search(pattern, c[0]))
    return out


# ---- running one case (worker process) -----------------------------------------------------------------------

def _input_names(model: Any) -> List[str]:
    inits = {i.name for i in model.graph.initializer}
    return [x.name for x in model.graph.input if x.name not in inits]


def run_trtlite(model_bytes: bytes, feeds: Dict[str, Any]) -> List[np.ndarray]:
    """Parses, builds and runs the model with trtlite; the outputs in the graph's order."""
    import onnx

    import trtlite as trt
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(model_bytes):
        raise RuntimeError("parse: " + "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors)))
    config = builder.create_builder_config()
    dynamic = [network.get_input(i) for i in range(network.num_inputs)
               if any(d < 0 for d in network.get_input(i).shape)]
    shape_inputs = [network.get_input(i) for i in range(network.num_inputs) if network.get_input(i).is_shape_tensor]
    if dynamic or shape_inputs:
        profile = builder.create_optimization_profile()
        for t in dynamic:
            shape = tuple(np.shape(feeds[t.name]))
            profile.set_shape(t.name, shape, shape, shape)
        for t in shape_inputs:  # values that decide shapes (TensorRT's shape-tensor inputs)
            values = tuple(int(v) for v in np.asarray(feeds[t.name]).reshape(-1))
            profile.set_shape_input(t.name, values, values, values)
        config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise RuntimeError("build failed")
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    ctx = engine.create_execution_context()
    got = ctx.infer({k: v for k, v in feeds.items() if k in {network.get_input(i).name
                                                             for i in range(network.num_inputs)}})
    model = onnx.load_from_string(model_bytes)
    return [got[o.name] for o in model.graph.output]


def run_onnxruntime(model_bytes: bytes, feeds: Dict[str, Any]) -> List[np.ndarray]:
    """The same with onnxruntime (CPU, one thread), for comparison."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    return list(sess.run(None, feeds))


BACKENDS = {"trtlite": run_trtlite, "onnxruntime": run_onnxruntime}


def compare(got: Sequence[Any], ref: Sequence[Any], rtol: float, atol: float) -> None:
    """onnx's runner's assert_similar_outputs, with outputs cast to the expected dtype first (see the header)."""
    if len(got) != len(ref):
        raise AssertionError("%d outputs, expected %d" % (len(got), len(ref)))
    for i, (g, r) in enumerate(zip(got, ref)):
        if isinstance(r, list):
            if not isinstance(g, list) or len(g) != len(r):
                raise AssertionError("output %d: expected a sequence of %d tensors" % (i, len(r)))
            compare(g, r, rtol, atol)
            continue
        g = np.asarray(g)
        r = np.asarray(r)
        if g.shape != r.shape:
            raise AssertionError("output %d: shape %s, expected %s" % (i, g.shape, r.shape))
        if r.dtype == object or r.dtype.kind in "SU":
            np.testing.assert_array_equal(g, r)
            continue
        if g.dtype != r.dtype:
            with np.errstate(all="ignore"):
                g = g.astype(r.dtype)
        if r.dtype.name == "bfloat16":
            np.testing.assert_allclose(g.astype(np.float32), r.astype(np.float32), rtol=max(rtol, 2 ** -6),
                                       atol=atol, err_msg="output %d" % i)
        elif r.dtype.kind in "fc" or r.dtype.itemsize >= 1 and r.dtype.kind in "iub":
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg="output %d" % i)
        else:  # float8 / int4 and other ml_dtypes
            np.testing.assert_allclose(g.astype(np.float32), r.astype(np.float32), rtol=rtol, atol=atol,
                                       err_msg="output %d" % i)


def _short(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


def run_case(backend: str, case: Case) -> Tuple[str, str]:
    """(status, reason) of one case: PASS, or FAIL with the first line of what went wrong."""
    import onnx
    name, model_bytes, ins, outs, rtol, atol = case
    try:
        model = onnx.load_from_string(model_bytes)
        names = _input_names(model)
        feeds = dict(zip(names, ins))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = BACKENDS[backend](model_bytes, feeds)
        compare(got, outs, rtol, atol)
        return "PASS", ""
    except AssertionError as e:
        msg = str(e).strip().splitlines()
        msg = [m for m in msg if m.strip()]
        return "FAIL", _short("wrong result: " + " | ".join(msg[:6]))
    except Exception as e:
        return "FAIL", _short("%s: %s" % (type(e).__name__, e))


def _worker(conn: Any, backend: str) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        if case is None:
            return
        try:
            res = run_case(backend, case)
        except BaseException:  # never let the worker die on a Python-level error
            res = ("FAIL", _short(traceback.format_exc()))
        conn.send(res)


# ---- the pool (parent process) -------------------------------------------------------------------------------

class _Slot:
    def __init__(self, ctx: Any, backend: str) -> None:
        self.ctx = ctx
        self.backend = backend
        self.proc: Any = None
        self.conn: Any = None
        self.case: Optional[Case] = None
        self.started = 0.0
        self.spawn()

    def spawn(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.backend), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def submit(self, case: Case) -> None:
        self.case = case
        self.started = time.monotonic()
        self.conn.send(case)

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.join(5)
        except Exception:
            pass
        self.conn.close()


def run_all(cases: Sequence[Case], backend: str, jobs: int, timeout: float,
            progress: bool = False) -> Dict[str, Tuple[str, str]]:
    """{case name: (status, reason)} for every case, `jobs` at a time in worker processes."""
    ctx = mp.get_context("fork")
    slots = [_Slot(ctx, backend) for _ in range(max(1, min(jobs, len(cases))))]
    todo = list(cases)[::-1]
    results: Dict[str, Tuple[str, str]] = {}
    try:
        for s in slots:
            if todo:
                s.submit(todo.pop())
        while any(s.case is not None for s in slots):
            busy = [s for s in slots if s.case is not None]
            now = time.monotonic()
            wait_s = max(0.05, min(s.started + timeout - now for s in busy))
            ready = mpc.wait([s.conn for s in busy] + [s.proc.sentinel for s in busy], timeout=wait_s)
            for s in busy:
                name = s.case[0]
                res: Optional[Tuple[str, str]] = None
                if s.conn in ready:
                    try:
                        res = s.conn.recv()
                    except (EOFError, OSError):
                        res = None
                if res is None and (s.proc.sentinel in ready or s.conn in ready):
                    s.proc.join(5)
                    res = ("CRASH", "worker died (exit code %s)" % s.proc.exitcode)
                    s.kill()
                    s.spawn()
                elif res is None and time.monotonic() - s.started > timeout:
                    res = ("TIMEOUT", "ran past %.0f s" % timeout)
                    s.kill()
                    s.spawn()
                if res is None:
                    continue
                results[name] = res
                if progress:
                    print("%5d/%d %-60s %s" % (len(results), len(cases), name, res[0]), file=sys.stderr)
                s.case = None
                if todo:
                    s.submit(todo.pop())
    finally:
        for s in slots:
            try:
                s.conn.send(None)
            except Exception:
                pass
            s.proc.join(2)
            if s.proc.is_alive():
                s.kill()
    return results


def write_results(results: Dict[str, Tuple[str, str]], out: Any) -> None:
    for name in sorted(results):
        st, why = results[name]
        out.write("%s\t%s\t%s\n" % (name, st, why))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=sorted(BACKENDS), default="trtlite")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, of %s" % ", ".join(KINDS))
    ap.add_argument("-k", "--pattern", default=None, help="only cases whose name matches this regular expression")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    ap.add_argument("--out", default=None, help="results file (default stdout)")
    ap.add_argument("--summary", action="store_true", help="print pass rates to stderr")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    t0 = time.monotonic()
    cases = collect(kinds, args.pattern)
    t1 = time.monotonic()
    results = run_all(cases, args.backend, args.jobs, args.timeout, args.progress)
    t2 = time.monotonic()
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            write_results(results, f)
    else:
        write_results(results, sys.stdout)
    if args.summary:
        for kind in kinds:
            sel = [n for n in results if (n.startswith(kind + "/") if kind != "node" else "/" not in n)]
            ok = sum(results[n][0] == "PASS" for n in sel)
            print("%-18s %4d / %4d pass (%.1f%%)" % (kind, ok, len(sel), 100.0 * ok / max(1, len(sel))),
                  file=sys.stderr)
        print("collect %.1f s, run %.1f s (%d jobs)" % (t1 - t0, t2 - t1, args.jobs), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
