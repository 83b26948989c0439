"""The expected-failure list of the ONNX backend suite (expected_failures.txt) and the pass-rate report.

expected_failures.txt: one case a line, ``name<TAB>reason``; '#' starts a comment line.  The reason says why the
case fails: an op trtlite has no importer for, a TensorRT restriction trtlite shares (no string or complex tensors;
float8 / float4 / int4 / int2 are storage types since issue #12), or a known bug with its issue.

    python tests/onnx_backend/expected.py --update     # run the suite, rewrite the list
    python tests/onnx_backend/expected.py --report     # pass rates: trtlite and onnxruntime, overall and on the
                                                       # ops onnx-tensorrt lists as supported
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "expected_failures.txt")
OTRT_OPS = os.path.join(HERE, "onnx_tensorrt_ops.txt")
sys.path.insert(0, HERE)

import run_cases  # noqa: E402

_HEADER = """\
# Cases of the ONNX backend suite (onnx.backend.test, tests/onnx_backend/run_cases.py) that trtlite fails, with
# why.  tests/test_onnx_backend.py fails on a failing case that is not listed and on a listed case that passes.
# Regenerate with `python tests/onnx_backend/expected.py --update`: the reasons come from the failure messages, or
# from expected.py's OVERRIDES (write a reason there, not here: this file is rewritten).
# Reason prefixes: "op:" an op without an importer (issue #12 lists the ones to add); "restriction:" a limit
# TensorRT has too (onnx-tensorrt's docs/operators.md names it) or trtlite's own stated limit; "bug:" a known
# wrong result or refusal, with its issue.
"""

# onnx element types trtlite (like TensorRT outside quantization) has no tensors of
_NARROW = {"17": "float8e4m3fn", "18": "float8e4m3fnuz", "19": "float8e5m2", "20": "float8e5m2fnuz",
           "21": "uint4", "22": "int4", "23": "float4e2m1", "24": "float8e8m0", "25": "uint2", "26": "int2",
           "8": "string", "14": "complex64", "15": "complex128"}


# Reasons written by hand, for cases whose failure message alone would mislead: (case-name regex, reason).
OVERRIDES = [
    (r"^test_split_to_sequence_",
     "restriction: sequence / optional / map values (TensorRT has none): the graph's output is a sequence "
     "(trtlite's sequences exist only while parsing; simple/test_sequence_model6-8 split to sequences that end "
     "inside the graph and pass)"),
    (r"^test_training_dropout(_default|_mask|_default_mask)?$",
     "restriction: Dropout in training mode draws its mask from trtlite's seeded generator (an IFillLayer "
     "RANDOM_UNIFORM), not numpy's, so the dropped elements differ from the reference's (the zero-ratio cases "
     "pass; tests/test_onnx_ops_coverage2.py checks the kept fraction and scaling)"),
    (r"^test_bernoulli",
     "restriction: Bernoulli / RandomUniformLike draw from trtlite's seeded generator (IFillLayer RANDOM_UNIFORM), "
     "not numpy's, so the draws differ from the reference's (tests/test_onnx_ops_coverage2.py checks the "
     "statistics)"),
    (r"^test_bitcast_(float64_to_int64|int64_to_float64)$",
     "restriction: BitCast of 64-bit types (trtlite carries int64 / double in 32 bits, as TensorRT does)"),
    (r"^test_bitcast_(2d_|scalar_)?(float32_to_int32|int32_to_float32)$",
     "restriction: BitCast between floating-point and integer bits (no reinterpreting layer; same-width "
     "integer BitCasts are imported)"),
    (r"^test_loop11$",
     "restriction: a scan output of a Loop whose trip count M is a run-time input (its length is not known before "
     "the loop runs; TensorRT needs it too), and the body slices by the iteration number (dynamic slice size)"),
    (r"^test_range_.*_expanded$",
     "restriction: Range's expanded form is a Loop whose scan output is as long as a trip count computed at run "
     "time from the inputs (TensorRT needs a concatenating loop output's length before the loop runs too)"),
    (r"^test_affine_grid_3d_align_corners_expanded$",
     "restriction: an If whose branches give outputs of different shapes (TensorRT's IIfConditional needs equal "
     "ones)"),
    (r"^test_affine_grid_2d(_align_corners)?_expanded$",
     "restriction: Squeeze without axes on dims known only at run time keeps them (trtlite warns; onnx-tensorrt "
     "refuses): the expanded 2-D AffineGrid squeezes theta after an Expand to a run-time shape [N, 2, 3], so its "
     "rank comes out one too high and a later Transpose is refused"),
    (r"^test_if_opt$", "restriction: sequence / optional / map values (TensorRT has none)"),
    (r"^test_if_seq$", "restriction: sequence / optional / map values (TensorRT has none)"),
    (r"^test_dft_inverse(_opset19)?$",
     "restriction: tolerance -- the expected output holds numpy's float32 FFT rounding noise (1.9e-7 where the "
     "exact value, which trtlite gives, is 0), past atol 1e-7 (onnxruntime fails every DFT case likewise)"),
    (r"^pytorch-operator/test_operator_add",
     "restriction: double inputs holding values outside float32's range (uninitialised memory in the case's "
     "data); trtlite, like TensorRT, computes double as FLOAT"),
]


def load(path: str = LIST) -> Dict[str, str]:
    """{case name: reason} from the list."""
    out: Dict[str, str] = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, _, reason = line.partition("\t")
            out[name.strip()] = reason.strip()
    return out


def diff(results: Dict[str, Tuple[str, str]], listed: Dict[str, str]) -> Tuple[List[str], List[str], List[str]]:
    """(failing but not listed, listed but passing, listed but not a case)."""
    fail = sorted(n for n, (st, _) in results.items() if st != "PASS" and n not in listed)
    passed = sorted(n for n, (st, _) in results.items() if st == "PASS" and n in listed)
    unknown = sorted(n for n in listed if n not in results)
    return fail, passed, unknown


def classify(name: str, status: str, why: str) -> str:
    """A reason for a failure, from OVERRIDES or the runner's message."""
    for pattern, reason in OVERRIDES:
        if re.search(pattern, name):
            return reason
    if status != "FAIL":
        return "bug: %s (%s)" % (status.lower(), why)
    m = re.search(r"unsupported type (\d+)|Cast to ONNX type (\d+)", why)
    if m:
        t = m.group(1) or m.group(2)
        return "restriction: %s tensors (trtlite, like TensorRT, has none)" % _NARROW.get(t, "type %s" % t)
    if "is not a tensor" in why:
        return "restriction: sequence / optional / map values (TensorRT has none)"
    if "imports no opset of the default ONNX domain" in why or "no built-in mapping for domain" in why:
        m = re.search(r"domain '([^']+)'", why)
        return "op: an op of domain %s (training / ML / preview ops)" % (m.group(1) if m else "ai.onnx.ml")
    m = re.search(r"no built-in mapping for op '([^']+)'", why)
    if m:
        return "op: %s has no importer (issue #12)" % m.group(1)
    m = re.search(r"operator '([^']+)'\): UNSUPPORTED_NODE_INPUT: (.*?) '([^']+)' must be a constant", why)
    if m:
        return ("restriction: %s's %s is a graph input fed at run time; trtlite needs it known while parsing "
                "(no shape tensors / tensor weights: issue #12)" % (m.group(1), m.group(2)))
    m = re.search(r"operator '([^']+)'\): UNSUPPORTED_NODE_DYNAMIC: (.*)", why)
    if m:
        return "restriction: %s: %s (no shape tensors: issue #12)" % (m.group(1), m.group(2)[:140])
    m = re.search(r"operator '([^']+)'\): INVALID_NODE: DTypeError: .*needs FLOAT or INT32 inputs, got (U?INT8)",
                  why)
    if m:
        return "restriction: %s over %s (TensorRT's INT8 is a quantized type, no integer arithmetic)" \
            % (m.group(1), m.group(2))
    m = re.search(r"operator '([^']+)'\): (UNSUPPORTED_NODE\w*): (.*)", why)
    if m:
        return "restriction: %s: %s" % (m.group(1), m.group(3)[:160])
    if why.startswith("wrong result"):
        return "bug: %s" % why[:200]
    return "bug: %s" % why[:200]


def update(results: Dict[str, Tuple[str, str]], path: str = LIST) -> None:
    """Rewrites the list: the failing cases of `results`, each with its reason (classify)."""
    with open(path, "w") as f:
        f.write(_HEADER)
        for name in sorted(results):
            st, why = results[name]
            if st == "PASS":
                continue
            f.write("%s\t%s\n" % (name, classify(name, st, why)))


def otrt_ops() -> set:
    with open(OTRT_OPS) as f:
        return set(w for line in f if not line.startswith("#") for w in line.split())


def report(trt_res: Dict[str, Tuple[str, str]], ort_res: Dict[str, Tuple[str, str]], cases: List) -> str:
    """Pass rates of trtlite and onnxruntime: all cases by kind, and the node cases whose ops are all on
    onnx-tensorrt's supported list."""
    import onnx
    ops = otrt_ops()
    node_ops: Dict[str, set] = {}
    for c in cases:
        if "/" not in c[0]:
            m = onnx.load_from_string(c[1])
            node_ops[c[0]] = {n.op_type for n in m.graph.node if n.domain in ("", "ai.onnx")} | \
                {"%s:%s" % (n.domain, n.op_type) for n in m.graph.node if n.domain not in ("", "ai.onnx")}
    groups = {
        "node (all)": [n for n in trt_res if "/" not in n],
        "node, onnx-tensorrt ops": [n for n, o in node_ops.items() if o and o <= ops],
    }
    for kind in run_cases.KINDS[1:]:
        groups[kind] = [n for n in trt_res if n.startswith(kind + "/")]
    lines = ["%-26s %6s %16s %16s" % ("cases", "count", "trtlite", "onnxruntime")]
    for g, names in groups.items():
        t = sum(trt_res[n][0] == "PASS" for n in names)
        o = sum(ort_res.get(n, ("", ""))[0] == "PASS" for n in names)
        k = max(1, len(names))
        lines.append("%-26s %6d %7d (%5.1f%%) %7d (%5.1f%%)" % (g, len(names), t, 100.0 * t / k, o, 100.0 * o / k))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", action="store_true", help="run the suite and rewrite expected_failures.txt")
    ap.add_argument("--report", action="store_true", help="run trtlite and onnxruntime, print pass rates")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    cases = run_cases.collect(run_cases.KINDS)
    t0 = time.monotonic()
    res = run_cases.run_all(cases, "trtlite", args.jobs, 120)
    print("trtlite: %d cases in %.1f s with %d jobs" % (len(cases), time.monotonic() - t0, args.jobs),
          file=sys.stderr)
    if args.update:
        update(res)
    if args.report:
        ort = run_cases.run_all(cases, "onnxruntime", args.jobs, 120)
        print(report(res, ort, cases))
    fail, passed, unknown = diff(res, load())
    print("not listed but failing: %d; listed but passing: %d; listed, no such case: %d"
          % (len(fail), len(passed), len(unknown)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
