"""Fuzzing that stays (docs/TESTING.md): the seed corpora load and run, the regression inputs of earlier findings
run clean, the triage recognises a real bug, and each fuzzer (plan reader under libFuzzer+ASan+UBSan, ONNX front
end under atheris) runs a fixed number of inputs from a fixed seed without a new finding.

The harnesses are built by `make fuzz-build` (a dependency of `make test`); these tests build it too when run on
their own.  Without clang/libFuzzer or atheris they fail -- a fuzz smoke that silently did not fuzz would pass
vacuously.  Under `make asan` they are skipped: the fuzzers are sanitizer builds of their own (clang's runtime)
and cannot run inside the gcc-ASan-preloaded interpreter; `make test` runs them.
"""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "fuzz"))

import run as fuzzrun  # noqa: E402  (tests/fuzz/run.py)

# A smoke run is a fixed number of inputs from a fixed seed (FUZZ_SMOKE_RUNS overrides), the same sequence on every
# machine: what passes here passes in CI.  (It used to run for a fixed time, and a fast CI machine got further into
# the sequence than any run before it and found new inputs: a red CI that no one had seen.)  FUZZ_SMOKE_TIME is a
# cap for a very slow machine, which then runs a prefix of the sequence.  The executions a quiet 2-core machine does
# in ~15-20 s each (the ONNX harness: 30000 took 37 s in session 13's CI, so 15000, a prefix of the same sequence);
# the long runs are `make fuzz`.
SMOKE_RUNS = {"plan": 100000, "onnx": 15000}
if os.environ.get("FUZZ_SMOKE_RUNS"):
    SMOKE_RUNS = {k: int(os.environ["FUZZ_SMOKE_RUNS"]) for k in SMOKE_RUNS}
SMOKE_TIME = int(os.environ.get("FUZZ_SMOKE_TIME", "150"))
# Executions a smoke run must reach to count as fuzzing, even when cut by the time cap.
MIN_EXECS = {"plan": 2000, "onnx": 1000}

pytestmark = pytest.mark.skipif(os.environ.get("TRTLITE_UNDER_ASAN") == "1",
                                reason="the fuzzers bring their own sanitizer runtime; make test runs them")


@pytest.fixture(scope="module")
def plan_fuzzer():
    p = subprocess.run(["make", "-s", "fuzz-build"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, "make fuzz-build failed:\n" + p.stdout[-3000:] + p.stderr[-3000:]
    assert os.path.exists(fuzzrun.PLAN_BIN)
    return fuzzrun.PLAN_BIN


def test_atheris_is_installed():
    import atheris  # noqa: F401  (make deps-fuzz installs it; no fallback fuzzer)


def test_plan_seeds_load_and_execute(plan_fuzzer):
    """Every seed plan loads through the harness's header fix-up and runs every profile: the harness reaches
    execution, so the fuzzing below tests more than the loader's first checks."""
    seeds = fuzzrun.seed_dir("plan")
    n = len(os.listdir(seeds))
    assert n >= 30
    e = fuzzrun.env()
    e["FUZZ_PLAN_VERBOSE"] = "1"
    p = subprocess.run([plan_fuzzer, "-runs=0", seeds], capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    loads = [ln for ln in p.stderr.splitlines() if ln.startswith("fuzz_plan: load:")]
    bad = [ln for ln in loads if ln != "fuzz_plan: load: OK"]
    assert not bad and len(loads) >= n, bad or loads
    runs = [ln for ln in p.stderr.splitlines() if ln.startswith("fuzz_plan: profile")]
    assert len(runs) > n and all(ln.endswith("executed: OK") for ln in runs), runs  # two_profiles runs twice


def test_onnx_seeds_parse_and_run():
    seeds = fuzzrun.seed_dir("onnx")
    n = len(os.listdir(seeds))
    assert n >= 15
    e = fuzzrun.env()
    e["FUZZ_ONNX_VERBOSE"] = "1"
    p = subprocess.run([sys.executable, fuzzrun.ONNX_PY, "-runs=0", seeds], capture_output=True, text=True, env=e,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    ran = [ln for ln in p.stderr.splitlines() if ln == "fuzz_onnx: parsed, ran"]
    assert len(ran) == n, [ln for ln in p.stderr.splitlines() if ln.startswith("fuzz_onnx:")]


def _regressions(harness):
    d = os.path.join(HERE, "fuzz", "regressions", harness)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if not f.startswith(".")) if os.path.isdir(d) else []


@pytest.mark.parametrize("harness", ["plan", "onnx"])
def test_regression_inputs_run_clean(harness, request):
    """Inputs of fixed findings must stay fixed.  Those whose fix is not merged yet are listed, with the reason, in
    tests/fuzz/regressions/KNOWN_FAILING and are checked by the next test instead."""
    if harness == "plan":
        request.getfixturevalue("plan_fuzzer")
    failing = fuzzrun.known_failing()
    paths = [p for p in _regressions(harness) if "%s/%s" % (harness, os.path.basename(p)) not in failing]
    assert paths
    # All in one process first (one interpreter start instead of one an input: ~70 s of make test); on a finding,
    # one by one, which names every failing input.
    sig, out = fuzzrun.replay(harness, paths)
    if sig is None:
        ran = [ln for ln in out.splitlines() if ln.startswith("Executed ")]
        assert len(ran) == len(paths), out[-3000:]  # every input ran (libFuzzer's line per replayed file)
        return
    bad = []
    for path in paths:
        sig, out = fuzzrun.replay(harness, path)
        if sig is not None:
            bad.append("%s: %s\n%s" % (path, sig, out[-1500:]))
    assert bad, "the inputs failed together (%s) but none alone: state carried between inputs?\n%s" % (sig, out[-3000:])
    assert not bad, "\n\n".join(bad)


@pytest.mark.parametrize("harness", ["plan", "onnx"])
def test_known_failing_inputs_still_fail_as_listed(harness, request):
    """The harness and triage catch real bugs: each regression input listed as still failing reproduces with a
    signature listed in known_findings.txt.  When its fix is merged this test fails on purpose: remove the input
    from KNOWN_FAILING so that the previous test keeps it fixed."""
    if harness == "plan":
        request.getfixturevalue("plan_fuzzer")
    known = fuzzrun.load_known()
    listed = [k.split("/", 1)[1] for k in fuzzrun.known_failing() if k.startswith(harness + "/")]
    if not listed:
        pytest.skip("no %s regression input is listed as still failing" % harness)
    for name in listed:
        path = os.path.join(HERE, "fuzz", "regressions", harness, name)
        sig, out = fuzzrun.replay(harness, path)
        assert sig is not None, "%s no longer fails: take it out of tests/fuzz/regressions/KNOWN_FAILING" % path
        assert (harness, sig) in known, "%s fails with an unlisted signature %r:\n%s" % (path, sig, out[-2000:])


def test_signature_of_sanitizer_reports():
    ubsan = ("csrc/kernels/ref/slice.c:15:17: runtime error: -1.66153e+35 is outside the range of representable "
             "values of type 'int'\n    #0 0x557d3c8d1e17 in trtl_ref_slice /x/csrc/kernels/ref/slice.c:15:17\n")
    assert fuzzrun.signature_of_output(ubsan) == ("ubsan N is outside the range of representable values of type "
                                                  "'int' in trtl_ref_slice (csrc/kernels/ref/slice.c)")
    asan = ("==1==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x7ff\n"
            "    #0 0x55 in __asan_memcpy (/b/fuzz_plan+0x1)\n"
            "    #1 0x56 in trtl_infer_concatenation /w/csrc/network/ops/concatenation.c:40:5\n")
    assert fuzzrun.signature_of_output(asan) == ("asan stack-buffer-overflow in trtl_infer_concatenation "
                                                 "(csrc/network/ops/concatenation.c)")
    assert fuzzrun.signature_of_output("#38 DONE cov: 2182\nDone 38 runs in 0 second(s)\n") is None


@pytest.mark.parametrize("harness", ["plan", "onnx"])
def test_fuzzer_runs_without_new_findings(harness, tmp_path, request):
    """SMOKE_RUNS inputs of fuzzing from seed 1; any finding not in known_findings.txt fails, with its signature
    and the saved input (tmp_path/artifacts)."""
    if harness == "plan":
        request.getfixturevalue("plan_fuzzer")
    res = fuzzrun.fuzz(harness, SMOKE_TIME, seed=1, workdir=str(tmp_path), log=lambda s: None,
                       max_execs=SMOKE_RUNS[harness])
    text = fuzzrun.summary(harness, SMOKE_TIME, res)
    print(text)
    assert res["execs"] >= MIN_EXECS[harness], text
    assert not [f for f in res["findings"] if f[2] is None], text
