"""Runs a fuzzer for a while and triages what it finds (used by `make fuzz`, `make fuzz-smoke` and
tests/test_fuzz_smoke.py; docs/TESTING.md).

    python tests/fuzz/run.py fuzz plan|onnx --time SECONDS [--runs N] [--seed N] [--workdir DIR]
    python tests/fuzz/run.py replay plan|onnx FILE...

fuzz: runs the harness (build/fuzz/fuzz_plan, or tests/fuzz/fuzz_onnx.py under atheris) on WORKDIR/corpus plus
the committed seeds, crash artifacts into WORKDIR/artifacts/.  libFuzzer stops at the first finding, so after
one the run is triaged and restarted (next seed, same corpus) until the time is spent.  Each artifact is
replayed to get its signature -- the sanitizer's or exception's kind and the innermost frame in trtlite's code
-- and matched against tests/fuzz/known_findings.txt (bugs already reported and being fixed elsewhere).
Prints executions, corpus size and findings grouped by signature; exits 1 if any finding is not known.

replay: prints the signature of each input ("-" when it runs clean).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLAN_BIN = os.path.join(ROOT, "build", "fuzz", "fuzz_plan")
ONNX_PY = os.path.join(HERE, "fuzz_onnx.py")
KNOWN = os.path.join(HERE, "known_findings.txt")
KNOWN_FAILING = os.path.join(HERE, "regressions", "KNOWN_FAILING")

# The runtime options of docs/TESTING.md: allocations over 1 GiB fail (NULL) instead of being made, so
# the out-of-memory paths are what is tested; leaks are not findings.
SAN_ENV = {"ASAN_OPTIONS": "allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=0:"
                           "abort_on_error=0:handle_abort=1",
           "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
TIMEOUT_S = 30      # one input
# SSE4.1, AVX, AVX2, FMA, F16C (TRTL_CPU_* bits 0-4): the AVX2 baseline every machine we fuzz on has (the Zen 3 VM
# of sessions 10-15 has no AVX-512; CI's Zen 4 and the lent Xeon have it)
FUZZ_CPU_MASK = 0x1F
RSS_MB = 4096
SLOW_S = 5          # a replayed ONNX input still running after this long dumps its Python stack


def env():
    e = dict(os.environ)
    for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
        e.pop(k, None)  # e.g. `make asan` preloads gcc's ASan runtime; the fuzzers bring clang's
    e.update(SAN_ENV)
    e["PYTHONHASHSEED"] = "0"  # set iteration order is part of the ONNX harness's coverage: fixed, runs repeat
    # Kernel dispatch is part of the coverage too: a CI machine with other CPU features (Zen 4 has no AVX-VNNI, the
    # Xeon has; the Zen 3 VM has no AVX-512) takes other branches, keeps other inputs and walks another sequence from
    # the same seed -- it found inputs no local run had tried (session 15: a parse timeout on CI's Zen 4 that no run
    # here could reach).  The fuzzers see one feature set everywhere: what all of them have.  The AVX-512 kernels
    # are fuzzed by `make fuzz` with FUZZ's TRTL_CPU_MASK set by hand, on a machine that has them.
    e.setdefault("TRTL_CPU_MASK", "0x%x" % FUZZ_CPU_MASK)
    e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def harness_cmd(harness):
    if harness == "plan":
        if not os.path.exists(PLAN_BIN):
            raise SystemExit("%s is not built: run `make fuzz-build`" % PLAN_BIN)
        return [PLAN_BIN]
    return [sys.executable, ONNX_PY]


def seed_dir(harness):
    return os.path.join(HERE, "corpus", harness)


# ---------------------------------------------------------------------------------------------------------------
# signatures
# ---------------------------------------------------------------------------------------------------------------

FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (\S+) \S*?((?:csrc|tests/fuzz)/[^:\s]+)")
PYFRAME = re.compile(r'File "([^"]+)", line \d+,? in (\S+)')


def _norm(text):
    text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[+-]?\d+)?", "N", text)
    return text.strip()


def signature_of_output(out):
    """Signature of a finding from a harness's output; None when the output shows no finding."""
    m = re.search(r"FUZZ-SIGNATURE: (.*)", out)
    if m:
        return m.group(1).strip()
    m = re.search(r"fuzz_plan finding: ([^:]*)", out)
    if m:
        return "finding: " + m.group(1)
    kind = None
    m = re.search(r"runtime error: (.*)", out)
    if m:
        kind = "ubsan " + _norm(m.group(1).split(": ")[0])[:80]
    else:
        m = re.search(r"ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer): ([\w-]+)", out)
        if m:
            kind = "%s %s" % ({"AddressSanitizer": "asan", "libFuzzer": "libfuzzer"}.get(m.group(1), m.group(1)),
                              m.group(2))
        elif "Uncaught Python exception" in out or "Fatal Python error" in out:
            kind = "python " + (re.findall(r"^(\w+(?:Error|Exception)\w*)", out, re.M) or ["crash"])[-1]
    if kind is None:
        return None
    frames = FRAME.findall(out)
    frames = [f for f in frames if "fuzz_plan.c" not in f[1]] or frames
    if frames:
        return "%s in %s (%s)" % (kind, frames[0][0], frames[0][1])
    py = [(f, fn) for f, fn in PYFRAME.findall(out) if "/trtlite/" in f.replace(os.sep, "/")]
    if py:
        f, fn = py[-1]
        f = f.replace(os.sep, "/")
        return "%s at %s:%s" % (kind, f[f.rindex("/trtlite/") + 1:], fn)
    return kind


def replay(harness, path, timeout=TIMEOUT_S):
    """(signature or None, output) of running one input, or a list of inputs in one process (as libFuzzer and
    atheris replay several files: each under the per-input timeout; the first finding ends the run, so a caller
    that needs to know which input failed replays them one by one)."""
    paths = list(path) if isinstance(path, (list, tuple)) else [path]
    if harness == "plan":
        cmd = [PLAN_BIN, "-timeout=%d" % timeout, "-rss_limit_mb=%d" % RSS_MB] + paths
    else:
        # a Python stack for hangs and memory blow-ups: faulthandler dumps it on the timeout, and an
        # address-space limit turns runaway allocation into MemoryError (or an abort faulthandler reports)
        code = ("import faulthandler, resource, runpy, sys\n"
                "faulthandler.enable()\n"
                "resource.setrlimit(resource.RLIMIT_AS, (%d << 20, %d << 20))\n"
                "sys.argv = [%r, '-rss_limit_mb=0', '-timeout=%d'] + %r\n"
                "runpy.run_path(%r, run_name='__main__')\n" % (RSS_MB, RSS_MB, ONNX_PY, 2 * timeout, paths, ONNX_PY))
        cmd = [sys.executable, "-c", code]
    e = env()
    e["FUZZ_ONNX_STACK_AFTER"] = str(SLOW_S)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout * 3 * len(paths) + 30,
                           env=e, cwd=ROOT)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace"), -9
    sig = signature_of_output(out)
    if sig is None and "Timeout (" in out:
        py = [(f, fn) for f, fn in PYFRAME.findall(out) if "/trtlite/" in f.replace(os.sep, "/")]
        leaf = PYFRAME.findall(out)[:1]
        where = ("%s:%s" % (py[0][0][py[0][0].rindex("/trtlite/") + 1:], py[0][1])) if py else "?"
        sig = "python slow (>%ds) at %s -> %s" % (SLOW_S, where, leaf[0][1] if leaf else "?")
    if sig is None and rc != 0:
        sig = "exit status %d" % rc
    return sig, out


def load_known():
    """{signature: reason} from known_findings.txt ("harness | signature | reason" lines)."""
    known = {}
    if os.path.exists(KNOWN):
        for line in open(KNOWN, encoding="utf-8"):
            if line.strip() and not line.startswith("#"):
                parts = [p.strip() for p in line.split("|")]
                if len(parts) >= 3:
                    known[(parts[0], parts[1])] = parts[2]
    return known


def known_failing():
    """{"harness/file": reason} of regression inputs that still fail on this branch."""
    out = {}
    if os.path.exists(KNOWN_FAILING):
        for line in open(KNOWN_FAILING, encoding="utf-8"):
            if line.strip() and not line.startswith("#"):
                name, _, reason = line.partition(" ")
                out[name.strip()] = reason.strip()
    return out


# ---------------------------------------------------------------------------------------------------------------
# fuzzing
# ---------------------------------------------------------------------------------------------------------------

def fuzz(harness, seconds, seed=1, workdir=None, log=print, max_execs=None):
    """Fuzzes for `seconds`, or until `max_execs` inputs have run (then `seconds` is only a cap: from a fixed seed
    and an empty work corpus the inputs are the same sequence on every machine, so a run that stops early at the
    cap tried a prefix of it); returns a dict: execs, runs, corpus, findings [(signature, artifact, known
    reason)]."""
    workdir = workdir or os.path.join(ROOT, "build", "fuzz", harness)
    corpus = os.path.join(workdir, "corpus")
    arts = os.path.join(workdir, "artifacts")
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(arts, exist_ok=True)
    known = load_known()
    deadline = time.time() + seconds
    execs, runs, findings, slow_units = 0, 0, [], []
    logf = open(os.path.join(workdir, "fuzz.log"), "a")
    while True:
        left = int(deadline - time.time())
        if left < 3 or (max_execs is not None and execs >= max_execs):
            break
        before = set(os.listdir(arts))
        limit = ["-runs=%d" % (max_execs - execs)] if max_execs is not None else []
        cmd = harness_cmd(harness) + limit + ["-seed=%d" % (seed + runs), "-max_total_time=%d" % left,
                                      "-timeout=%d" % TIMEOUT_S, "-rss_limit_mb=%d" % RSS_MB,
                                      "-max_len=65536", "-print_final_stats=1",
                                      "-artifact_prefix=" + arts + os.sep, corpus, seed_dir(harness)]
        logf.write("\n$ %s\n" % " ".join(cmd))
        logf.flush()
        try:
            p = subprocess.run(cmd, stdout=logf, stderr=subprocess.PIPE, text=True, errors="replace", env=env(),
                               cwd=ROOT, timeout=left + 3 * TIMEOUT_S + 60)
            err, rc = p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            # the fuzzer itself hung (e.g. its timeout handler deadlocked in native code): no artifact to triage
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            rc = 0
            slow_units.append("fuzzer process hung and was killed (see %s)" % os.path.join(workdir, "fuzz.log"))
        logf.write(err)
        logf.flush()
        runs += 1
        counts = [int(x) for x in re.findall(r"^#(\d+)\t", err, re.M)]
        m = re.search(r"stat::number_of_executed_units: (\d+)", err)
        execs += int(m.group(1)) if m else (max(counts) if counts else 0)
        new = sorted(set(os.listdir(arts)) - before)
        slow = [a for a in new if a.startswith("slow-unit-")]  # > 10 s but under the timeout: noted only
        new = [a for a in new if a not in slow]
        slow_units.extend(os.path.join(arts, a) for a in slow)
        for a in new:
            path = os.path.join(arts, a)
            sig, _ = replay(harness, path)
            if sig is None and a.startswith(("timeout-", "oom-")):
                # ran clean and in time when replayed alone: the machine was busy (CI shares it); noted only
                slow_units.append(path)
                continue
            if sig is None:
                sig = signature_of_output(err) or "flaky (does not reproduce): " + a.split("-")[0]
            findings.append((sig, path, known.get((harness, sig))))
            log("[%s] finding %s: %s%s" % (harness, a, sig, " (known)" if known.get((harness, sig)) else " (NEW)"))
        if rc == 0 or not new:
            if rc != 0:
                raise RuntimeError("%s exited %d without an artifact:\n%s" % (harness, rc, err[-3000:]))
            break
    logf.close()
    return {"execs": execs, "runs": runs, "corpus": len(os.listdir(corpus)), "findings": findings,
            "slow": slow_units}


def summary(harness, seconds, res):
    lines = ["%s: %d s, %d executions in %d run(s), corpus %d inputs (+ %d seeds)" % (
        harness, seconds, res["execs"], res["runs"], res["corpus"], len(os.listdir(seed_dir(harness))))]
    groups = {}
    for sig, path, reason in res["findings"]:
        groups.setdefault(sig, []).append((path, reason))
    for sig, items in sorted(groups.items()):
        reason = items[0][1]
        lines.append("  %s x%d: %s\n      e.g. %s" % ("known" if reason else "NEW  ", len(items), sig, items[0][0]))
        if reason:
            lines.append("      (%s)" % reason)
    if not groups:
        lines.append("  no findings")
    if res.get("slow"):
        lines.append("  %d slow input(s) (over 10 s, or over the %d s timeout or memory limit but not when "
                     "replayed alone), e.g. %s" % (len(res["slow"]), TIMEOUT_S, res["slow"][0]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fuzz")
    f.add_argument("harness", choices=["plan", "onnx"])
    f.add_argument("--time", type=int, default=60)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--workdir")
    f.add_argument("--runs", type=int, help="stop after this many inputs (--time is then a cap)")
    r = sub.add_parser("replay")
    r.add_argument("harness", choices=["plan", "onnx"])
    r.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "replay":
        for path in a.files:
            for p in sorted(glob.glob(os.path.join(path, "*"))) if os.path.isdir(path) else [path]:
                print("%s: %s" % (p, replay(a.harness, p)[0] or "-"))
        return 0
    res = fuzz(a.harness, a.time, a.seed, a.workdir, max_execs=a.runs)
    print(summary(a.harness, a.time, res))
    return 1 if any(reason is None for _, _, reason in res["findings"]) else 0


if __name__ == "__main__":
    sys.exit(main())
