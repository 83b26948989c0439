"""trtlite-exec: build, inspect and benchmark trtlite engines from the command line.

Modelled on TensorRT's ``trtexec`` and spelled the same way::

    trtlite-exec --onnx=model.onnx --shapes=input:8x3x224x224 --saveEngine=model.plan
    trtlite-exec --loadEngine=model.plan --shapes=input:1x3x224x224 --dumpProfile --duration=5
    python -m trtlite.exec --onnx=model.onnx --dumpLayerInfo --exportOutput=out.json

It builds an engine from an ONNX model (``--onnx``) or loads a serialized one (``--loadEngine``),
runs it on seeded random data (or ``--loadInputs``) and reports build time, plan size, I/O shapes,
first-inference latency, latency statistics over the timed iterations, throughput and peak RSS.

Timing follows trtexec: ``--warmUp`` milliseconds of warm-up, then at least ``--iterations`` runs
and at least ``--duration`` seconds.  Per-layer profiling (``--dumpProfile``/``--exportProfile``)
runs as a separate pass after timing, so the latency figures do not include profiler overhead.

Output files follow trtexec's JSON formats: ``--exportOutput`` ([{"name", "dimensions", "values"}];
a name ending in .npz writes numpy arrays instead), ``--exportTimes`` (one row per timed iteration:
startEnqMs ... latencyMs, endToEndMs), ``--exportProfile`` ([{"count"}, {"name", "timeMs",
"averageMs", "medianMs", "percentage"}, ...]).  ``--calib=FILE`` takes INT8 dynamic ranges from a
calibration cache.  CUDA-only options (``--useCudaGraph``, ``--device``, ``--streams``, ...) are
accepted with a note that they do not apply; ``--noDataTransfers`` and ``--useSpinWait`` likewise.
A progress bar (trtlite.ProgressBar: tqdm when installed) covers parsing, calibration, the build,
serialization and loading on terminals.

Exit status: 0 on success, 1 on errors (missing or corrupt files, parse or build failures, shape
mismatches), 2 on usage errors, 130 when interrupted (Ctrl-C cancels a build cleanly).  As trtexec,
the last line is ``&&&& PASSED ...`` or ``&&&& FAILED ...`` with the command line.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import signal
import sys
import threading
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

PROG = "trtlite-exec"
Shape = Tuple[int, ...]


class CliError(Exception):
    """A failure reported as one line (plus optional detail lines) and an exit status."""

    def __init__(self, msg: str, status: int = 1, details: Sequence[str] = ()) -> None:
        super().__init__(msg)
        self.status = status
        self.details = list(details)


# ---- argument parsing ------------------------------------------------------------------------


def _split_items(text: str) -> List[str]:
    """Split 'a:1x2,b:3' at commas outside single or double quotes."""
    items, cur, quote = [], [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == ",":
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quote:
        raise argparse.ArgumentTypeError(f"unbalanced quote in '{text}'")
    items.append("".join(cur))
    return [i.strip() for i in items]


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        return name[1:-1]
    return name


def parse_shapes(text: str) -> Dict[str, Shape]:
    """'input:1x3x224x224,other:4' -> {'input': (1, 3, 224, 224), 'other': (4,)}.

    The name is everything before the item's last ':' (so 'input:0:1x3' names 'input:0'); it may be
    quoted ('name,with,commas':1x3).  An empty dims part ('scalar:') is a 0-d shape."""
    shapes: Dict[str, Shape] = {}
    for item in _split_items(text):
        if not item:
            raise argparse.ArgumentTypeError(f"empty entry in '{text}' (expected name:AxBxC,...)")
        name, sep, dims = item.rpartition(":")
        name = _unquote(name)
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"'{item}' is not name:AxBxC (e.g. input:1x3x224x224)")
        try:
            shape = tuple(int(d) for d in dims.split("x")) if dims.strip() else ()
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{item}': dims must be integers separated by 'x' "
                                             f"(e.g. {name}:1x3x224x224)") from None
        if any(d < 0 for d in shape):
            raise argparse.ArgumentTypeError(f"'{item}': dims must be >= 0")
        if name in shapes:
            raise argparse.ArgumentTypeError(f"input '{name}' given twice in '{text}'")
        shapes[name] = shape
    return shapes


def parse_load_inputs(text: str) -> List[Tuple[str, str]]:
    """'a:file.npy,b:raw.bin' -> [('a:file.npy', ...)] kept as raw items; names are resolved against
    the engine's inputs later (names and paths may both contain ':')."""
    items = _split_items(text)
    for item in items:
        if ":" not in item or item.startswith(":") or item.endswith(":"):
            raise argparse.ArgumentTypeError(f"'{item}' is not name:file (e.g. input:data.npy)")
    return [(item, item) for item in items]


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {v}")
    return v


def _nonneg_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return v


def _opt_level(text: str) -> int:
    v = _nonneg_int(text)
    if v > 5:
        raise argparse.ArgumentTypeError(f"must be 0..5, got {v}")
    return v


def _pool_size(text: str) -> int:
    """--memPoolSize=workspace:N with N in MiB, or with a K/M/G suffix."""
    pool, sep, size = text.partition(":")
    if not sep or pool.strip().lower() != "workspace":
        raise argparse.ArgumentTypeError(f"'{text}': expected workspace:N (MiB, or with a K/M/G suffix); "
                                         "other pools are GPU-only")
    size = size.strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:].upper(), 0)
    try:
        value = float(size[:-1] if scale else size)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': bad size '{size}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': size must be > 0")
    return int(value * (scale or (1 << 20)))


#: trtexec options that only mean something on a GPU: accepted (with or without a value), each noted
#: once at start-up as not applying.
CUDA_ONLY_FLAGS = ("--useCudaGraph", "--device", "--streams", "--infStreams", "--useDLACore", "--allowGPUFallback",
                   "--exposeDMA", "--useManagedMemory", "--directIO", "--noTF32", "--tacticSources",
                   "--persistentCacheRatio", "--inputIOFormats", "--outputIOFormats", "--sparsity",
                   "--restricted", "--safe", "--consistency", "--useRuntime", "--leanDLLPath", "--maxAuxStreams",
                   "--idleTime")


class _CudaOnly(argparse.Action):
    """Records a CUDA-only flag (its value, if any, is ignored)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        seen = list(getattr(namespace, self.dest, None) or [])
        if option_string and option_string not in seen:
            seen.append(option_string)
        setattr(namespace, self.dest, seen)


def banner(trt: Any) -> str:
    """'trtlite-exec [trtlite X.Y.Z]': what the &&&& RUNNING/PASSED/FAILED lines name."""
    return f"{PROG} [trtlite {getattr(trt, 'trtlite_version', getattr(trt, '__version__', '?'))}]"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, then exit 2 (argparse prints the whole usage)
        sys.stderr.write(f"{PROG}: error: {message} (see {PROG} --help)\n")
        sys.exit(2)


def make_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Build, inspect and benchmark trtlite engines (modelled on TensorRT's trtexec).",
                epilog="examples:\n"
                       f"  {PROG} --onnx=model.onnx --saveEngine=model.plan\n"
                       f"  {PROG} --loadEngine=model.plan --shapes=input:4x3x224x224 --dumpProfile\n"
                       f"  {PROG} --onnx=dyn.onnx --minShapes=x:1x3x64x64 --optShapes=x:4x3x64x64 "
                       "--maxShapes=x:8x3x64x64\n"
                       "CUDA-only trtexec options are accepted and ignored with a note: "
                       + " ".join(CUDA_ONLY_FLAGS) + "\n"
                       "exit status: 0 ok, 1 error, 2 usage error, 130 interrupted; the last line is "
                       "&&&& PASSED or &&&& FAILED")
    g = p.add_argument_group("model and engine")
    g.add_argument("--onnx", metavar="PATH", help="build an engine from this ONNX model")
    g.add_argument("--loadEngine", metavar="PATH", help="load a serialized engine (plan) instead of building")
    g.add_argument("--saveEngine", metavar="PATH", help="write the built engine (plan) to this file")
    g.add_argument("--plugins", "--dynamicPlugins", "--staticPlugins", metavar="LIB.so", action="append", default=[],
                   dest="plugins", help="load a plugin library (repeatable); built-in plugins are always registered")
    g.add_argument("--skipInference", "--buildOnly", action="store_true", dest="skip_inference",
                   help="build (and save) or load the engine, then stop")

    g = p.add_argument_group("build options")
    g.add_argument("--fp16", action="store_true", help="allow fp16 kernels (trtlite computes in fp32 on CPUs "
                                                       "without fast fp16)")
    g.add_argument("--int8", action="store_true", help="allow int8 kernels (trtlite computes in fp32 on CPUs "
                                                       "without fast int8)")
    g.add_argument("--best", action="store_true", help="same as --fp16 --int8")
    g.add_argument("--bf16", action="store_true", help="allow bf16 kernels (BuilderFlag.BF16; CPUs with "
                                                       "AVX512_BF16 / AMX-BF16, fp32 elsewhere)")
    g.add_argument("--minShapes", type=parse_shapes, metavar="SPEC", help="optimization profile minimum shapes "
                   "(name:AxBxC,...); defaults to the opt shapes")
    g.add_argument("--optShapes", type=parse_shapes, metavar="SPEC", help="optimization profile opt shapes; "
                   "defaults to --shapes")
    g.add_argument("--maxShapes", type=parse_shapes, metavar="SPEC", help="optimization profile maximum shapes; "
                   "defaults to the opt shapes")
    g.add_argument("--builderOptimizationLevel", type=_opt_level, metavar="N",
                   help="0: reference kernels, no fusion; 1-5: all optimizations (default 3)")
    g.add_argument("--avgTiming", type=_nonneg_int, metavar="N",
                   help="timed runs per candidate kernel when autotuning (0 disables timing)")
    g.add_argument("--noBuilderCache", action="store_true",
                   help="set BuilderFlag.DISABLE_TIMING_CACHE: every candidate kernel is timed, no timing cache "
                        "is read or written (--timingCacheFile included)")
    g.add_argument("--timingCacheFile", metavar="PATH", help="kernel timing cache: loaded if the file exists, "
                   "saved after the build (a rebuild with it times nothing)")
    g.add_argument("--memPoolSize", type=_pool_size, metavar="workspace:N",
                   help="workspace (scratch) limit, in MiB unless suffixed K/M/G")
    g.add_argument("--profilingVerbosity", choices=["layer_names_only", "detailed", "none"],
                   help="engine inspector detail (informational in trtlite)")
    g.add_argument("--workspace", type=_positive_int, metavar="N",
                   help="workspace limit in MiB (trtexec's older spelling of --memPoolSize=workspace:N)")
    g.add_argument("--calib", metavar="FILE",
                   help="INT8 calibration cache (TensorRT's text format) to take the tensors' dynamic ranges from, "
                        "with --int8 or --best")

    g = p.add_argument_group("inference options")
    g.add_argument("--shapes", type=parse_shapes, metavar="SPEC",
                   help="input shapes to run with, name:AxBxC,... (also the build profile when no "
                        "--min/opt/maxShapes are given)")
    g.add_argument("--batch", type=_positive_int, metavar="N", help="batch size for implicit-batch engines")
    g.add_argument("--iterations", type=_positive_int, default=10, metavar="N",
                   help="run at least N timed inferences (default 10)")
    g.add_argument("--warmUp", type=_nonneg_float, default=200.0, metavar="MS",
                   help="warm up for MS milliseconds before timing (default 200)")
    g.add_argument("--duration", type=_nonneg_float, default=3.0, metavar="S",
                   help="time for at least S seconds (default 3)")
    g.add_argument("--avgRuns", type=_positive_int, default=10, metavar="N",
                   help="also report averages over N consecutive runs (default 10)")
    g.add_argument("--threads", type=_nonneg_int, metavar="N",
                   help="threads per execution context (0 or unset: the CPUs this process may use)")
    g.add_argument("--seed", type=int, default=1, help="seed of the random input data (default 1)")
    g.add_argument("--loadInputs", type=parse_load_inputs, metavar="SPEC",
                   help="input data, name:file,... (.npy files, or raw bytes in the input's dtype)")
    g.add_argument("--dumpOutput", action="store_true", help="print the outputs of the first inference")
    g.add_argument("--exportOutput", metavar="FILE",
                   help="write the outputs of the first inference as JSON in trtexec's format ([{name, dimensions, "
                        "values}]); a FILE ending in .npz gets one numpy array per output name instead")
    g.add_argument("--noDataTransfers", action="store_true",
                   help="accepted: trtlite works on host memory, so there are no transfers to leave out")
    g.add_argument("--useSpinWait", action="store_true",
                   help="accepted: execution is synchronous on the calling thread (no event to wait on)")

    g = p.add_argument_group("reporting")
    g.add_argument("--dumpProfile", action="store_true", help="print per-layer times (a separate profiled pass)")
    g.add_argument("--exportProfile", metavar="FILE.json", help="write per-layer times as JSON")
    g.add_argument("--separateProfileRun", action="store_true",
                   help="accepted for compatibility: profiling always runs as a separate pass")
    g.add_argument("--dumpLayerInfo", action="store_true", help="print fused layers and chosen kernels (JSON)")
    g.add_argument("--exportLayerInfo", metavar="FILE.json", help="write fused layers and chosen kernels as JSON")
    g.add_argument("--exportTimes", metavar="FILE.json",
                   help="write every timed iteration as JSON in trtexec's format (startEnqMs, ..., latencyMs)")
    g.add_argument("--verbose", "-v", action="store_true", help="verbose logging; tracebacks on errors")

    g = p.add_argument_group("CUDA-only options (accepted, with a note that they do not apply)")
    for flag in CUDA_ONLY_FLAGS:
        g.add_argument(flag, nargs="?", action=_CudaOnly, dest="cuda_only", metavar="ARG", help=argparse.SUPPRESS)
    p.set_defaults(cuda_only=[])
    return p


# ---- logging ---------------------------------------------------------------------------------


def _make_logger(trt: Any, verbose: bool) -> Any:
    """A logger that prints warnings at once but holds errors back until the step that logged them
    succeeds: a failing step's errors reach the user once, as the exception's message."""

    class CliLogger(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)
            self.printer = trt.Logger(trt.Logger.VERBOSE if verbose else trt.Logger.WARNING)
            self.min_severity = self.printer.min_severity
            self.pending: List[Tuple[Any, str]] = []
            self.bar: Any = None

        def log(self, severity: Any, msg: str) -> None:
            if not verbose and int(severity) <= int(trt.Logger.ERROR):
                self.pending.append((severity, msg))
                return
            if int(severity) <= int(self.printer.min_severity):
                if self.bar is not None:
                    self.bar.clear()
                self.printer.log(severity, msg)

        def flush(self) -> None:
            pending, self.pending = self.pending, []
            for sev, msg in pending:
                self.printer.log(sev, msg)

        def discard(self) -> None:
            self.pending = []

    return CliLogger()


# ---- build progress and per-layer profiles -------------------------------------------------


def _progress_bar(stream: Any = None, delay: float = 0.5, interval: float = 0.1, use_tqdm: Optional[bool] = False,
                  clock: Callable[[], float] = time.perf_counter) -> Any:
    """trtlite.ProgressBar as trtlite-exec draws it: only on terminals, after `delay` seconds."""
    import trtlite as trt
    return trt.ProgressBar(stream if stream is not None else sys.stderr, use_tqdm=use_tqdm, only_tty=True,
                           delay=delay, interval=interval, clock=clock)


def __getattr__(name: str) -> Any:
    """`ProgressBar` (trtlite-exec's defaults for trtlite.ProgressBar: terminals only, a plain line)
    and `LayerTimes` (trtlite.LayerProfiler), kept for scripts that used them from here."""
    if name == "ProgressBar":
        return _progress_bar
    if name == "LayerTimes":
        import trtlite as trt
        return trt.LayerProfiler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- small helpers ---------------------------------------------------------------------------


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024.0
    return f"{n:.2f} GiB"  # pragma: no cover


def _fmt_value(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(int(v))


def _json_value(v: Any) -> Any:
    """A JSON number (NaN and infinities as trtexec prints them: strings "nan", "inf", "-inf")."""
    if isinstance(v, float) and not np.isfinite(v):
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    return float(v) if isinstance(v, float) else int(v)


def times_trace(starts: Sequence[float], latencies: Sequence[float]) -> List[Dict[str, float]]:
    """--exportTimes rows in trtexec's fields (milliseconds from the timing loop's start).  On the
    CPU an inference is one synchronous call: enqueue and compute span it, and the host/device copies
    take no time (they are zero-length at its ends)."""
    rows = []
    for s, v in zip(starts, latencies):
        start, end, ms = s * 1e3, (s + v) * 1e3, v * 1e3
        rows.append({"startEnqMs": start, "endEnqMs": end, "startH2dMs": start, "endH2dMs": start,
                     "startComputeMs": start, "endComputeMs": end, "startD2hMs": end, "endD2hMs": end,
                     "h2dMs": 0.0, "computeMs": ms, "d2hMs": 0.0, "latencyMs": ms, "endToEndMs": ms})
    return rows


def fmt_seconds(s: float) -> str:
    return f"{s:.3f} s" if s >= 1.0 else f"{s * 1e3:.2f} ms"


def peak_rss_bytes() -> int:
    """This process's peak resident set size.  On Linux from /proc/self/status (VmHWM): getrusage's
    ru_maxrss survives exec(), so a trtlite-exec started by a big process (a test runner with torch
    loaded) would report its parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r) if sys.platform == "darwin" else int(r) * 1024


def percentile(sorted_vals: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending sequence (an observed value, as trtexec reports)."""
    n = len(sorted_vals)
    k = max(0, min(n - 1, int(np.ceil(p / 100.0 * n)) - 1))
    return float(sorted_vals[k])


def pretty_json(obj: Any, indent: int = 2, width: int = 120, _level: int = 0) -> str:
    """JSON with one line per value that fits in `width` columns (tensors, small lists) and nested
    blocks for the rest: readable in a terminal, still valid JSON."""
    flat = json.dumps(obj)
    pad = " " * (indent * _level)
    if not isinstance(obj, (dict, list)) or not obj or len(pad) + len(flat) <= width:
        return flat
    inner = " " * (indent * (_level + 1))
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {pretty_json(v, indent, width, _level + 1).lstrip()}"
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [inner + pretty_json(v, indent, width, _level + 1).lstrip() for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def _kv(label: str, value: str) -> None:
    print(f"  {label:<20} {value}")


def _section(title: str) -> None:
    print(f"=== {title} ===")


def _one_line(msg: str) -> str:
    return " | ".join(s.strip() for s in str(msg).strip().splitlines() if s.strip()) or "unknown error"


def _write_file(path: str, data: Any, what: str) -> None:
    try:
        mode = "w" if isinstance(data, str) else "wb"
        with open(path, mode) as f:
            f.write(data)
    except OSError as e:
        raise CliError(f"cannot write {what} '{path}': {e.strerror or e}") from e


def _read_file(path: str, what: str) -> bytes:
    if not os.path.exists(path):
        raise CliError(f"{what} '{path}' does not exist")
    if os.path.isdir(path):
        raise CliError(f"{what} '{path}' is a directory")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise CliError(f"cannot read {what} '{path}': {e.strerror or e}") from e


# ---- the tool --------------------------------------------------------------------------------


class Exec:
    """One run of trtlite-exec: build or load, set up I/O, time, report."""

    def __init__(self, args: argparse.Namespace, trt: Any, argv: Sequence[str] = ()) -> None:
        self.a = args
        self.argv = list(argv)
        self.trt = trt
        self.logger = _make_logger(trt, args.verbose)
        self.engine: Any = None
        self.plan: Optional[bytes] = None
        self.network_layers: Optional[int] = None
        self.build_profile: Dict[str, Tuple[Shape, Shape, Shape]] = {}
        # One progress bar (terminals only) over parsing, calibration, the build, serialization and
        # loading; tqdm draws it when installed.
        self.bar = self.make_bar()
        self.logger.bar = self.bar

    #: Seconds a stage must run before the bar appears (short runs print no bar).
    BAR_DELAY = 0.5

    def make_bar(self) -> Any:
        """The progress bar of this run: trtlite.ProgressBar on stderr, terminals only."""
        return self.trt.ProgressBar(sys.stderr, only_tty=True, delay=self.BAR_DELAY)

    # -- steps that may log errors: flush them on success, drop them on failure --
    def _step(self, fn: Callable[[], Any]) -> Any:
        try:
            r = fn()
        except BaseException:
            self.logger.discard()
            raise
        self.logger.flush()
        return r

    def run(self) -> int:
        a, trt = self.a, self.trt
        print(f"&&&& RUNNING {banner(trt)} # {self.cmdline()}")
        self._notes()
        self._step(lambda: trt.init_libnvinfer_plugins(self.logger, ""))
        for lib in a.plugins:
            self._load_plugin(lib)
        self.bar.start()
        try:
            if a.onnx:
                self._build()
            else:
                self._load()
        finally:
            self.bar.stop()
        self._report_engine()
        if a.dumpLayerInfo or a.exportLayerInfo:
            self._layer_info()
        if a.skip_inference:
            _kv("Peak RSS", fmt_bytes(peak_rss_bytes()))
        else:
            self._infer()
        print(f"&&&& PASSED {banner(trt)} # {self.cmdline()}")
        return 0

    def cmdline(self) -> str:
        """The command line as trtexec echoes it after '#'."""
        return shlex.join([PROG] + self.argv)

    def _notes(self) -> None:
        """One line per accepted flag that does not apply on the CPU."""
        a = self.a
        for flag in a.cuda_only:
            print(f"Note: {flag} is a CUDA option and does not apply to trtlite (CPU); ignored")
        if a.noDataTransfers:
            print("Note: --noDataTransfers: trtlite runs on host memory, there are no host/device transfers to "
                  "skip; timings never include any")
        if a.useSpinWait:
            print("Note: --useSpinWait: trtlite's execution is synchronous on the calling thread, there is no "
                  "event to wait on; ignored")
        if a.calib and not (a.int8 or a.best):
            print("Note: --calib applies with --int8 (or --best); ignored")

    def _load_plugin(self, lib: str) -> None:
        if not os.path.exists(lib):
            raise CliError(f"plugin library '{lib}' does not exist")
        try:
            ok = self._step(lambda: self.trt.get_plugin_registry().load_library(lib))
        except self.trt.Error as e:
            raise CliError(f"cannot load plugin library '{lib}': {_one_line(e)}") from e
        if ok is False:
            raise CliError(f"cannot load plugin library '{lib}'")
        print(f"Loaded plugin library {lib}")

    # -- build --
    def _build(self) -> None:
        a = self.a
        if a.batch is not None:
            raise CliError("--batch is for implicit-batch engines; ONNX models have an explicit batch "
                           "dimension: use --shapes", 2)
        builder, network = self._parse_onnx(a.onnx)
        config = builder.create_builder_config()
        self._configure(builder, network, config)
        cache = self._load_timing_cache(config) if a.timingCacheFile else None
        plan, build_s = self._build_plan(builder, network, config)
        if cache is not None:
            _write_file(a.timingCacheFile, cache.serialize(), "timing cache file")
            _kv("Timing cache", f"saved {cache.num_entries} timings to {a.timingCacheFile}")
        self.plan = plan
        _section("Build")
        _kv("Build time", fmt_seconds(build_s))
        if a.saveEngine:
            _write_file(a.saveEngine, plan, "engine file")
            _kv("Saved engine", a.saveEngine)
        self._deserialize(plan, "the built engine")

    def _load_timing_cache(self, config: Any) -> Any:
        """--timingCacheFile: the cache from the file (empty if there is none yet), set on `config`.
        Timings from another CPU or thread count are kept in the file but not used (with a warning)."""
        path = self.a.timingCacheFile
        data = _read_file(path, "timing cache file") if os.path.exists(path) else b""
        try:
            cache = config.create_timing_cache(data)
        except self.trt.Error as e:
            raise CliError(f"cannot load timing cache file '{path}': {_one_line(e)}") from e
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if not config.set_timing_cache(cache, False):
                print(f"Warning: {caught[-1].message if caught else 'timing cache mismatch'}; "
                      "using only its matching timings")
                config.set_timing_cache(cache, True)
        _kv("Timing cache", f"loaded {cache.num_entries} timings from {path}" if data else f"new ({path})")
        return cache

    def _parse_onnx(self, path: str) -> Tuple[Any, Any]:
        """An explicit-batch network from the ONNX model at `path`; parser errors become a CliError."""
        trt = self.trt
        if not os.path.exists(path):
            raise CliError(f"ONNX model '{path}' does not exist")
        if os.path.isdir(path):
            raise CliError(f"ONNX model '{path}' is a directory")
        if not hasattr(trt, "OnnxParser"):
            raise CliError("this trtlite has no ONNX parser (trt.OnnxParser)")
        builder = trt.Builder(self.logger)
        network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        parser = trt.OnnxParser(network, self.logger)
        t0 = time.perf_counter()
        try:
            with self.bar.phase("Parsing ONNX model"):
                ok = parser.parse_from_file(path)
        except ImportError as e:  # the onnx package is missing
            self.logger.discard()
            raise CliError(_one_line(e)) from e
        parse_s = time.perf_counter() - t0
        if not ok or parser.num_errors:
            self.logger.discard()  # the parser logged each error; they are reported here, once
            errors = [self._describe_parser_error(parser.get_error(i)) for i in range(parser.num_errors)]
            if len(errors) <= 1:
                raise CliError(f"cannot parse ONNX model '{path}': {errors[0] if errors else 'unknown error'}")
            raise CliError(f"cannot parse ONNX model '{path}': {len(errors)} errors",
                           details=[f"  [{i + 1}] {e}" for i, e in enumerate(errors)])
        self.logger.flush()
        self.network_layers = network.num_layers
        _section("Model")
        _kv("ONNX model", f"{path} ({fmt_bytes(os.path.getsize(path))})")
        _kv("Parsed in", f"{fmt_seconds(parse_s)} -> {network.num_layers} network layers")
        for i in range(network.num_inputs):
            t = network.get_input(i)
            _kv(f"Input {i}", f"'{t.name}' {trt.DataType(t.dtype).name} {fmt_shape(t.shape)}")
        for i in range(network.num_outputs):
            t = network.get_output(i)
            _kv(f"Output {i}", f"'{t.name}' {trt.DataType(t.dtype).name} {fmt_shape(t.shape)}")
        return builder, network

    def _build_plan(self, builder: Any, network: Any, config: Any) -> Tuple[bytes, float]:
        """build_serialized_network with a progress bar (terminals only) and Ctrl-C cancelling the
        build through the progress monitor; returns (plan, seconds)."""
        trt = self.trt
        bar = self.bar
        monitored = self._attach_monitor(config, bar)
        interrupted: List[bool] = []

        def on_sigint(signum: int, frame: Any) -> None:
            interrupted.append(True)
            bar.cancel = True  # the next step_complete() returns False

        old_handler = None
        if monitored:
            try:
                old_handler = signal.signal(signal.SIGINT, on_sigint)
            except ValueError:  # not the main thread: leave Ctrl-C alone
                old_handler = None
        t0 = time.perf_counter()
        try:
            plan = self._step(lambda: builder.build_serialized_network(network, config))
        except trt.Error as e:
            if interrupted:
                raise CliError("build cancelled (interrupted)", status=130) from e
            raise CliError(f"build failed: {_one_line(e)}") from e
        finally:
            build_s = time.perf_counter() - t0
            bar.cancel = False
            config.progress_monitor = None
            if old_handler is not None:
                signal.signal(signal.SIGINT, old_handler)
        if interrupted:  # the build finished before the cancel was seen
            raise CliError("interrupted", status=130)
        if plan is None:
            raise CliError("build failed (the builder returned no engine; rerun with --verbose)")
        return bytes(plan), build_s

    @staticmethod
    def _describe_parser_error(err: Any) -> str:
        if err is None:
            return "unknown error"

        def call(name: str, default: Any = None) -> Any:
            f = getattr(err, name, None)
            try:
                return f() if callable(f) else (f if f is not None else default)
            except Exception:
                return default

        node, name, op, desc = call("node", -1), call("node_name", ""), call("node_operator", ""), call("desc", "")
        code = call("code")
        code = getattr(code, "name", code)
        if desc == "" and not name:
            return _one_line(str(err))
        where = ""
        if node is not None and int(node) >= 0:
            where = f"node {node}" + (f" '{name}'" if name else "") + (f" ({op})" if op else "") + ": "
        elif name or op:
            where = (f"'{name}'" if name else "") + (f" ({op})" if op else "") + ": "
        return where + (f"{code}: " if code else "") + _one_line(desc)

    def _attach_monitor(self, config: Any, bar: Any) -> bool:
        if not hasattr(self.trt, "IProgressMonitor"):
            return False
        try:
            config.progress_monitor = bar
            return True
        except (AttributeError, TypeError):
            return False

    def _configure(self, builder: Any, network: Any, config: Any) -> None:
        a, trt = self.a, self.trt
        if a.best:
            a.fp16 = a.int8 = True
        if a.fp16:
            config.set_flag(trt.BuilderFlag.FP16)
            if not builder.platform_has_fast_fp16:
                print("Note: --fp16 accepted; this CPU has no fast fp16 arithmetic, so trtlite computes in fp32 "
                      "(fully connected weights may be stored as fp16 where that is faster)")
        if a.bf16:
            config.set_flag(trt.BuilderFlag.BF16)
        if a.int8:
            config.set_flag(trt.BuilderFlag.INT8)
            if not builder.platform_has_fast_int8:
                print("Note: --int8 accepted; this CPU has no fast int8, so trtlite computes in fp32")
        if a.noBuilderCache:
            config.set_flag(trt.BuilderFlag.DISABLE_TIMING_CACHE)
        if a.builderOptimizationLevel is not None:
            config.builder_optimization_level = a.builderOptimizationLevel
        if a.avgTiming is not None:
            config.avg_timing_iterations = a.avgTiming
        if a.threads is not None:
            config.num_threads = a.threads
        if a.memPoolSize is not None:
            config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, a.memPoolSize)
        elif a.workspace is not None:
            config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, a.workspace << 20)
        if a.calib and a.int8:
            config.int8_calibrator = self._cache_calibrator(a.calib)
        if a.profilingVerbosity:
            config.profiling_verbosity = {"layer_names_only": trt.ProfilingVerbosity.LAYER_NAMES_ONLY,
                                          "none": trt.ProfilingVerbosity.NONE,
                                          "detailed": trt.ProfilingVerbosity.DETAILED}[a.profilingVerbosity]

        inputs = {network.get_input(i).name: tuple(network.get_input(i).shape) for i in range(network.num_inputs)}
        for opt_name in ("shapes", "minShapes", "optShapes", "maxShapes"):
            self._check_names(getattr(a, opt_name), inputs, opt_name)
        profile = None
        for name, decl in inputs.items():
            given = {k: (getattr(a, k) or {}).get(name) for k in ("shapes", "minShapes", "optShapes", "maxShapes")}
            if -1 not in decl:
                for k, s in given.items():
                    if s is not None:
                        self._check_against(name, decl, s, f"--{k}")
                continue
            opt = given["optShapes"] or given["shapes"]
            if opt is None:
                opt = tuple(1 if d == -1 else d for d in decl)
                print(f"Warning: input '{name}' is dynamic ({fmt_shape(decl)}) and no shape was given; using "
                      f"{fmt_shape(opt)} (set it with --shapes={name}:{fmt_shape(opt)})")
            mn = given["minShapes"] or opt
            mx = given["maxShapes"] or opt
            for k, s in (("minShapes", mn), ("optShapes", opt), ("maxShapes", mx)):
                self._check_against(name, decl, s, f"--{k}")
            if given["shapes"] is not None and not all(lo <= d <= hi for lo, d, hi in zip(mn, given["shapes"], mx)):
                raise CliError(f"--shapes: {name}:{fmt_shape(given['shapes'])} is outside the profile "
                               f"[{fmt_shape(mn)} .. {fmt_shape(mx)}]")
            if not all(lo <= o <= hi for lo, o, hi in zip(mn, opt, mx)):
                raise CliError(f"input '{name}': profile needs min <= opt <= max, got min {fmt_shape(mn)}, "
                               f"opt {fmt_shape(opt)}, max {fmt_shape(mx)}")
            if profile is None:
                profile = builder.create_optimization_profile()
            profile.set_shape(name, mn, opt, mx)
            self.build_profile[name] = (mn, opt, mx)
        if profile is not None:
            config.add_optimization_profile(profile)

    def _cache_calibrator(self, path: str) -> Any:
        """An INT8 calibrator that only reads the calibration cache at `path` (--calib), with the
        algorithm its header names; a cache that does not parse is an error here."""
        from trtlite import calibration
        data = _read_file(path, "calibration cache (--calib)")
        try:
            _, algo_name, scales = calibration.parse_calibration_cache(data)
        except self.trt.Error as e:
            raise CliError(f"--calib: '{path}' is not a calibration cache: {_one_line(e)}") from e
        algo = calibration._ALGO_BY_NAME[algo_name]
        bases = {self.trt.CalibrationAlgoType.ENTROPY_CALIBRATION_2: self.trt.IInt8EntropyCalibrator2,
                 self.trt.CalibrationAlgoType.ENTROPY_CALIBRATION: self.trt.IInt8EntropyCalibrator,
                 self.trt.CalibrationAlgoType.MINMAX_CALIBRATION: self.trt.IInt8MinMaxCalibrator,
                 self.trt.CalibrationAlgoType.LEGACY_CALIBRATION: self.trt.IInt8LegacyCalibrator}

        class CacheCalibrator(bases[algo]):  # type: ignore[misc, valid-type]
            def get_batch_size(self) -> int:
                return 1

            def get_batch(self, names: List[str]) -> None:
                return None

            def read_calibration_cache(self) -> bytes:
                return data

            def write_calibration_cache(self, cache: memoryview) -> None:
                pass

        print(f"Calibration cache: {path} ({algo_name}, {len(scales)} tensors)")
        return CacheCalibrator()

    @staticmethod
    def _check_names(spec: Optional[Dict[str, Any]], inputs: Dict[str, Any], option: str) -> None:
        if not spec:
            return
        for name in spec:
            if name not in inputs:
                raise CliError(f"--{option}: '{name}' is not an input of the model (inputs: "
                               f"{', '.join(inputs) or 'none'})")

    @staticmethod
    def _check_against(name: str, decl: Sequence[int], shape: Sequence[int], option: str) -> None:
        if len(decl) != len(shape) or any(d != -1 and d != s for d, s in zip(decl, shape)):
            raise CliError(f"{option}: input '{name}' has shape {fmt_shape(decl)}; {fmt_shape(shape)} does not "
                           "match it")

    # -- load --
    def _load(self) -> None:
        a = self.a
        if a.saveEngine:
            raise CliError("--saveEngine needs --onnx (it saves the engine that is built)", 2)
        for k in ("minShapes", "optShapes", "maxShapes"):
            if getattr(a, k):
                print(f"Warning: --{k} only applies when building; ignored with --loadEngine")
        data = _read_file(a.loadEngine, "engine file")
        self.plan = data
        _section("Engine file")
        _kv("Loaded", f"{a.loadEngine} ({fmt_bytes(len(data))})")
        self._deserialize(data, f"engine file '{a.loadEngine}'")

    def _deserialize(self, data: bytes, what: str) -> None:
        trt = self.trt
        t0 = time.perf_counter()
        try:
            with self.bar.phase("Loading engine"):
                self.engine = self._step(lambda: trt.Runtime(self.logger).deserialize_cuda_engine(data))
        except trt.Error as e:
            raise CliError(f"cannot load {what}: {_one_line(e)}") from e
        if self.engine is None:
            raise CliError(f"cannot load {what} (rerun with --verbose)")
        _kv("Deserialized in", fmt_seconds(time.perf_counter() - t0))

    # -- engine report --
    def io_names(self) -> List[str]:
        e = self.engine
        return [e.get_tensor_name(i) for i in range(e.num_io_tensors)]

    def is_input(self, name: str) -> bool:
        return self.engine.get_tensor_mode(name) == self.trt.TensorIOMode.INPUT

    def _report_engine(self) -> None:
        e, trt = self.engine, self.trt
        _section("Engine")
        layers = f"{e.num_layers}"
        if self.network_layers is not None:
            layers += f" (from {self.network_layers} network layers)"
        _kv("Layers", layers)
        _kv("Plan size", fmt_bytes(len(self.plan or b"")))
        _kv("Activation memory", f"{fmt_bytes(e.device_memory_size)} per context (at max shapes)")
        if e.has_implicit_batch_dimension:
            _kv("Batch", f"implicit, max batch {e.max_batch_size}")
        else:
            _kv("Batch", f"explicit, {e.num_optimization_profiles} optimization profile(s)")
        for name in self.io_names():
            mode = "input " if self.is_input(name) else "output"
            shape = tuple(e.get_tensor_shape(name))
            text = f"{mode} '{name}' {trt.DataType(e.get_tensor_dtype(name)).name} {fmt_shape(shape)}"
            if self.is_input(name) and -1 in shape and e.num_optimization_profiles:
                mn, opt, mx = e.get_tensor_profile_shape(name, 0)
                text += f"  profile 0: min {fmt_shape(mn)} opt {fmt_shape(opt)} max {fmt_shape(mx)}"
            _kv("I/O", text)

    def _layer_info(self) -> None:
        trt, a = self.trt, self.a
        inspector = self.engine.create_engine_inspector()
        raw = self._step(lambda: inspector.get_engine_information(trt.LayerInformationFormat.JSON))
        try:
            text = pretty_json(json.loads(raw))
        except ValueError:
            text = raw.strip()
        if a.dumpLayerInfo:
            _section("Layer information (fused layers and kernels)")
            try:
                layers = json.loads(raw).get("layers", [])
                kw = max([len("Kernel")] + [len(str(layer.get("kernel", ""))) for layer in layers])
                print(f"  {'#':>3}  {'Kernel':<{kw}}  Layer")
                for i, layer in enumerate(layers):
                    print(f"  {i:>3}  {str(layer.get('kernel', '')):<{kw}}  {layer.get('name', '')}")
            except (ValueError, AttributeError):
                pass
            print(text)
        if a.exportLayerInfo:
            _write_file(a.exportLayerInfo, text + "\n", "layer information file")
            print(f"Wrote layer information to {a.exportLayerInfo}")

    # -- inference --
    def _resolve_load_inputs(self, inputs: List[str]) -> Dict[str, str]:
        files: Dict[str, str] = {}
        for item, _ in self.a.loadInputs or []:
            match = None
            if item[0] in "'\"":
                end = item.find(item[0], 1)
                if end > 0 and item[end + 1:end + 2] == ":":
                    match = (item[1:end], item[end + 2:])
            if match is None:
                names = [n for n in inputs if item.startswith(n + ":")]
                if names:
                    n = max(names, key=len)
                    match = (n, item[len(n) + 1:])
                else:
                    n, _, _ = item.partition(":")
                    raise CliError(f"--loadInputs: '{n}' is not an input of the engine (inputs: "
                                   f"{', '.join(inputs) or 'none'})")
            if match[0] in files:
                raise CliError(f"--loadInputs: input '{match[0]}' given twice")
            files[match[0]] = match[1]
        return files

    def _load_array(self, name: str, path: str, dtype: Any, shape: Optional[Shape]) -> np.ndarray:
        if not os.path.exists(path):
            raise CliError(f"--loadInputs: file '{path}' for input '{name}' does not exist")
        try:
            if path.endswith(".npy"):
                arr = np.load(path, allow_pickle=False)
            else:
                if shape is None:
                    raise CliError(f"--loadInputs: raw file '{path}' for dynamic input '{name}' needs its shape "
                                   f"in --shapes (or use a .npy file)")
                arr = np.fromfile(path, dtype=dtype)
                if arr.size != int(np.prod(shape, dtype=np.int64)):
                    raise CliError(f"--loadInputs: '{path}' holds {arr.size} {np.dtype(dtype).name} values; input "
                                   f"'{name}' of shape {fmt_shape(shape)} needs {int(np.prod(shape))}")
                arr = arr.reshape(shape)
        except (OSError, ValueError) as e:
            raise CliError(f"--loadInputs: cannot read '{path}': {_one_line(e)}") from e
        if arr.dtype != np.dtype(dtype):
            if not np.can_cast(arr.dtype, dtype, casting="same_kind"):
                raise CliError(f"--loadInputs: '{path}' holds {arr.dtype}, input '{name}' is "
                               f"{np.dtype(dtype).name}")
            arr = arr.astype(dtype)
        return np.ascontiguousarray(arr)

    def _random(self, rng: np.random.Generator, dtype: Any, shape: Shape) -> np.ndarray:
        dt = np.dtype(dtype)
        if dt.kind == "f":
            return rng.uniform(-1.0, 1.0, size=shape).astype(dt)
        if dt.kind == "b":
            return rng.integers(0, 2, size=shape).astype(dt)
        if dt == np.int8:
            return rng.integers(-128, 128, size=shape).astype(dt)
        if dt == np.uint8:
            return rng.integers(0, 256, size=shape).astype(dt)
        if dt == np.uint16:  # BF16 bit patterns (trt.nptype(BF16)): numbers in [-1, 1) as bfloat16
            from ._bf16 import bits_from_float
            return bits_from_float(rng.uniform(-1.0, 1.0, size=shape))
        return rng.integers(0, 2, size=shape).astype(dt)  # int32: small values, safe as indices

    def _infer(self) -> None:
        a, trt, e = self.a, self.trt, self.engine
        names = self.io_names()
        inputs = [n for n in names if self.is_input(n)]
        outputs = [n for n in names if not self.is_input(n)]
        implicit = bool(e.has_implicit_batch_dimension)
        self._check_names(a.shapes, {n: None for n in inputs}, "shapes")
        files = self._resolve_load_inputs(inputs)
        context = self._step(lambda: e.create_execution_context())
        if a.threads is not None:
            context.num_threads = a.threads
        if implicit:
            arrays, sources, batch = self._implicit_inputs(inputs, files)
            out_shapes = {n: (batch,) + tuple(e.get_tensor_shape(n)) for n in outputs}
        else:
            arrays, sources, batch = self._explicit_inputs(context, inputs, files)
            try:
                out_shapes = {n: tuple(context.get_tensor_shape(n)) for n in outputs}
            except trt.Error as ex:
                raise CliError(_one_line(ex)) from ex
        for n in outputs:
            arrays[n] = np.empty(out_shapes[n], dtype=trt.nptype(e.get_tensor_dtype(n)))

        _section("Inference setup")
        ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        _kv("Threads", str(a.threads) if a.threads else f"default ({ncpu} CPUs available)")
        how = " (implicit)" if implicit else (f" (first dim of '{inputs[0]}')" if inputs else "")
        _kv("Batch", f"{batch}{how}")
        for n in inputs:
            _kv("Input", f"'{n}' {fmt_shape(arrays[n].shape)} {arrays[n].dtype.name} <- {sources[n]}")
        for n in outputs:
            _kv("Output", f"'{n}' {fmt_shape(arrays[n].shape)} {arrays[n].dtype.name}")

        # Raw addresses: no buffer checks per call, so the timing is the engine's.  `arrays` keeps
        # the memory alive and the shapes were checked above.
        ptrs = [arrays[n].ctypes.data for n in names]
        if implicit:
            def run_once() -> None:
                context.execute(batch, ptrs)
        else:
            def run_once() -> None:
                context.execute_v2(ptrs)

        t0 = time.perf_counter()
        try:
            self._step(run_once)
        except trt.Error as ex:
            raise CliError(f"inference failed: {_one_line(ex)}") from ex
        first_ms = (time.perf_counter() - t0) * 1e3
        if a.dumpOutput:
            _section("Output tensors")
            for n in outputs:
                print(f"{n}: ({fmt_shape(arrays[n].shape)})")
                print(" ".join(_fmt_value(v) for v in arrays[n].reshape(-1).tolist()))
        if a.exportOutput:
            self._export_output(a.exportOutput, {n: arrays[n] for n in outputs})

        timing = self._time(run_once)
        self._report_perf(timing, first_ms, batch)
        if a.exportOutput:
            print(f"Wrote outputs to {a.exportOutput} ({', '.join(outputs)}; the first inference)")
        if a.exportTimes:
            _write_file(a.exportTimes, json.dumps(times_trace(timing["starts"], timing["latencies"]), indent=1)
                        + "\n", "times file")
            print(f"Wrote iteration times to {a.exportTimes}")
        if a.dumpProfile or a.exportProfile:
            self._profile(context, run_once, len(timing["latencies"]))

    def _export_output(self, path: str, outputs: Dict[str, np.ndarray]) -> None:
        """--exportOutput: trtexec's JSON ([{"name", "dimensions": "AxB", "values": [...]}]), or an .npz."""
        try:
            if path.endswith(".npz"):
                with open(path, "wb") as f:
                    np.savez(f, **outputs)
            else:
                doc = [{"name": n, "dimensions": fmt_shape(v.shape) if v.ndim else "",
                        "values": [_json_value(x) for x in v.reshape(-1).tolist()]} for n, v in outputs.items()]
                with open(path, "w") as f:
                    json.dump(doc, f, indent=1, allow_nan=False)
                    f.write("\n")
        except OSError as ex:
            raise CliError(f"cannot write output file '{path}': {ex.strerror or ex}") from ex

    def _time(self, run_once: Callable[[], None]) -> Dict[str, Any]:
        """trtexec's loop: warm up for --warmUp ms, then run until both --iterations runs and
        --duration seconds are done.  Latencies and start times (from the loop's start) in seconds."""
        a, pc = self.a, time.perf_counter
        warm_n, t_start = 0, pc()
        while pc() - t_start < a.warmUp / 1e3:
            run_once()
            warm_n += 1
        warm_s = pc() - t_start
        lat: List[float] = []
        starts: List[float] = []
        t_start = pc()
        while True:
            t0 = pc()
            run_once()
            t1 = pc()
            starts.append(t0 - t_start)
            lat.append(t1 - t0)
            if len(lat) >= a.iterations and t1 - t_start >= a.duration:
                break
        return {"latencies": lat, "starts": starts, "wall": pc() - t_start, "warm_n": warm_n, "warm_s": warm_s}

    def _implicit_inputs(self, inputs: List[str], files: Dict[str, str]) -> Tuple[Dict[str, np.ndarray],
                                                                                   Dict[str, str], int]:
        """Input arrays of an implicit-batch engine: (--batch,) + the engine's shape."""
        a, trt, e = self.a, self.trt, self.engine
        if a.shapes:
            raise CliError("--shapes is for explicit-batch engines; this engine has an implicit batch: use --batch", 2)
        batch = a.batch or 1
        if batch > e.max_batch_size:
            raise CliError(f"--batch={batch} exceeds the engine's max batch size {e.max_batch_size}")
        rng = np.random.default_rng(a.seed)
        arrays: Dict[str, np.ndarray] = {}
        sources: Dict[str, str] = {}
        for n in inputs:
            shape = (batch,) + tuple(e.get_tensor_shape(n))
            dtype = trt.nptype(e.get_tensor_dtype(n))
            if n in files:
                arr = self._load_array(n, files[n], dtype, shape)
                if arr.shape != shape:
                    raise CliError(f"--loadInputs: '{files[n]}' has shape {fmt_shape(arr.shape)}; input '{n}' "
                                   f"at batch {batch} is {fmt_shape(shape)}")
                arrays[n], sources[n] = arr, files[n]
            else:
                arrays[n], sources[n] = self._random(rng, dtype, shape), f"random (seed {a.seed})"
        return arrays, sources, batch

    def _explicit_inputs(self, context: Any, inputs: List[str], files: Dict[str, str]) -> Tuple[
            Dict[str, np.ndarray], Dict[str, str], int]:
        """Input arrays of an explicit-batch engine; dynamic inputs get their shape from --shapes, else
        the loaded array, else the build profile's opt shape, and are set on the context."""
        a, trt, e = self.a, self.trt, self.engine
        if a.batch is not None:
            raise CliError("--batch is for implicit-batch engines; this engine has an explicit batch "
                           "dimension: use --shapes", 2)
        rng = np.random.default_rng(a.seed)
        arrays: Dict[str, np.ndarray] = {}
        sources: Dict[str, str] = {}
        for n in inputs:
            decl = tuple(e.get_tensor_shape(n))
            dtype = trt.nptype(e.get_tensor_dtype(n))
            want = (a.shapes or {}).get(n)
            if want is not None:
                self._check_against(n, decl, want, "--shapes")
            elif -1 not in decl:
                want = decl
            arr = None
            if n in files:
                arr = self._load_array(n, files[n], dtype, want)
                if want is not None and arr.shape != tuple(want):
                    raise CliError(f"--loadInputs: '{files[n]}' has shape {fmt_shape(arr.shape)}; input '{n}' "
                                   f"runs with {fmt_shape(want)}")
                self._check_against(n, decl, arr.shape, "--loadInputs")
                want = arr.shape
            if want is None:
                if n in self.build_profile:
                    want = self.build_profile[n][1]
                else:
                    want = tuple(e.get_tensor_profile_shape(n, 0)[1])
                    print(f"Note: input '{n}' is dynamic ({fmt_shape(decl)}); running with the profile's opt "
                          f"shape {fmt_shape(want)} (set it with --shapes)")
            want = tuple(int(d) for d in want)
            if -1 in decl:
                try:
                    self._step(lambda: context.set_input_shape(n, want))
                except trt.Error as ex:
                    raise CliError(_one_line(ex)) from ex
            if arr is None:
                arr, sources[n] = self._random(rng, dtype, want), f"random (seed {a.seed})"
            else:
                sources[n] = files[n]
            arrays[n] = arr
        first = arrays[inputs[0]].shape if inputs else ()
        return arrays, sources, (int(first[0]) if len(first) else 1)

    def _report_perf(self, timing: Dict[str, Any], first_ms: float, batch: int) -> None:
        a = self.a
        lat, wall = timing["latencies"], timing["wall"]
        ms = sorted(v * 1e3 for v in lat)
        n = len(ms)
        _section(f"Performance ({n} timed iterations in {wall:.3f} s)")
        _kv("First inference", f"{first_ms:.4f} ms")
        _kv("Warm-up", f"{timing['warm_n']} iterations in {timing['warm_s'] * 1e3:.1f} ms")
        _kv("Latency min", f"{ms[0]:.4f} ms")
        _kv("Latency mean", f"{sum(ms) / n:.4f} ms")
        _kv("Latency median", f"{percentile(ms, 50):.4f} ms")
        _kv("Latency p90", f"{percentile(ms, 90):.4f} ms")
        _kv("Latency p95", f"{percentile(ms, 95):.4f} ms")
        _kv("Latency p99", f"{percentile(ms, 99):.4f} ms")
        _kv("Latency max", f"{ms[-1]:.4f} ms")
        if n > 1:
            std = float(np.std(ms))
            _kv("Latency stddev", f"{std:.4f} ms ({100.0 * std / (sum(ms) / n):.1f}% of mean)")
        groups = [lat[i:i + a.avgRuns] for i in range(0, n - a.avgRuns + 1, a.avgRuns)]
        if groups:
            avgs = [sum(g) / len(g) * 1e3 for g in groups]
            _kv(f"Avg of {a.avgRuns} runs", f"min {min(avgs):.4f} ms, max {max(avgs):.4f} ms "
                                           f"({len(avgs)} groups)")
            if a.verbose:
                for i, v in enumerate(avgs):
                    print(f"    Average on {a.avgRuns} runs #{i + 1}: {v:.4f} ms")
        qps = n / wall if wall > 0 else float("inf")
        _kv("Throughput", f"{qps:.2f} inferences/s, {qps * batch:.2f} samples/s (batch {batch})")
        _kv("Peak RSS", fmt_bytes(peak_rss_bytes()))

    def _profile(self, context: Any, run_once: Callable[[], None], timed: int) -> None:
        a = self.a
        runs = max(a.iterations, min(timed, 1000))
        prof = self.trt.LayerProfiler()
        context.profiler = prof
        try:
            for _ in range(runs):
                run_once()
        finally:
            context.profiler = None
        rows = prof.rows()
        total = sum(r["timeMs"] for r in rows)
        if a.dumpProfile:
            _section(f"Profile ({runs} profiled iterations, a separate pass)")
            print(f"  {'Time(ms)':>10} {'Avg(ms)':>10} {'Median(ms)':>11} {'Time(%)':>8}  Layer")
            for r in rows:
                print(f"  {r['timeMs']:10.3f} {r['averageMs']:10.4f} {r['medianMs']:11.4f} {r['percentage']:8.1f}  "
                      f"{r['name']}")
            print(f"  {total:10.3f} {total / runs:10.4f} {'':>11} {100.0 if rows else 0.0:8.1f}  Total")
        if a.exportProfile:
            doc = [{"count": runs}] + rows
            _write_file(a.exportProfile, json.dumps(doc, indent=2) + "\n", "profile file")
            print(f"Wrote profile to {a.exportProfile}")


def _validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if bool(args.onnx) == bool(args.loadEngine):
        parser.error("give exactly one of --onnx=MODEL.onnx or --loadEngine=ENGINE.plan")


def _failed(argv: Sequence[str], trt: Any = None) -> None:
    """trtexec's last line on any failure: '&&&& FAILED <tool> [<version>] # <command line>' (stdout)."""
    try:
        print(f"&&&& FAILED {banner(trt) if trt is not None else PROG} # {shlex.join([PROG] + list(argv))}",
              flush=True)
    except (OSError, ValueError):  # stdout closed or a broken pipe: the exit status still says it
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of trtlite-exec and python -m trtlite.exec; returns the exit status.

    Like trtexec, a run prints '&&&& RUNNING ...' first and ends with '&&&& PASSED ...' (status 0) or
    '&&&& FAILED ...' (any other status: usage errors, bad files, build or inference failures,
    interruption), each followed by '# ' and the command line."""
    parser = make_parser()
    argv_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv_list)
        _validate(args, parser)
    except SystemExit as e:  # --help, or a usage error already reported
        status = int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
        if status != 0:
            _failed(argv_list)
        return status
    status = _run(args, argv_list)
    if status != 0:
        _failed(argv_list, sys.modules.get("trtlite"))
    return status


def _run(args: argparse.Namespace, argv_list: List[str]) -> int:
    verbose = args.verbose
    try:
        import trtlite as trt
    except Exception as e:  # the extension is not built, or the wrong Python
        sys.stderr.write(f"{PROG}: error: cannot import trtlite: {_one_line(e)}\n")
        if verbose:
            traceback.print_exc()
        return 1
    tool = Exec(args, trt, argv_list)
    try:
        status = tool.run()
        sys.stdout.flush()
        return status
    except CliError as e:
        sys.stdout.flush()
        if verbose:
            traceback.print_exc()
        sys.stderr.write(f"{PROG}: error: {e}\n")
        for d in e.details:
            sys.stderr.write(d + "\n")
        return e.status
    except KeyboardInterrupt:
        sys.stdout.flush()
        if verbose:
            traceback.print_exc()
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. piped into head
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as e:  # anything unexpected: still one line unless --verbose
        sys.stdout.flush()
        if verbose:
            traceback.print_exc()
        sys.stderr.write(f"{PROG}: error: {type(e).__name__}: {_one_line(e)}"
                         + ("" if verbose else " (rerun with --verbose for details)") + "\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
