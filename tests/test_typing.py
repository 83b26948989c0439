"""The type stubs in CI (issue 13): `mypy --strict` accepts correct TensorRT-style scripts and the examples, flags
deliberate mistakes, and `python -m mypy.stubtest trtlite` finds the stubs faithful to the runtime.

tests/typing/positive.py must type-check with no error (and run); tests/typing/negative.py marks each deliberate
mistake with `# E: <mypy error code>`, and mypy's errors must be exactly those.  mypy and stubtest run once per
session, side by side, with mypy's cache in build/mypy_cache.  The package's own .py modules are not the subject
(errors there are ignored); the stubs (trtlite/*.pyi) and every script that uses them are, under --strict.
"""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPING = os.path.join(ROOT, "tests", "typing")
BUILD = os.path.join(ROOT, "build", "typing")

pytest.importorskip("mypy", reason="mypy is a test dependency (make deps-test)")

# Examples fully annotated: checked under --strict as they are.  Any other example (one added later, or one whose
# own helpers are not annotated yet) is checked under --strict less the three "untyped definitions" flags: the
# bodies of its functions are still checked against the stubs (check_untyped_defs), its own signatures are not.
EXAMPLES_STRICT = {"plugins.l2_normalize", "demo_common", "fashion_mnist", "network_api_mnist", "lenet.model",
                   "lenet.train", "addernet.model", "addernet.demo", "addernet.train", "caffe_lenet"}


def _example_modules():
    """Module names of the examples as mypy sees them (mypy_path = examples/, explicit package bases)."""
    root = os.path.join(ROOT, "examples")
    return sorted(os.path.relpath(os.path.join(d, f[:-3]), root).replace(os.sep, ".")
                  for d, _, files in os.walk(root) for f in files if f.endswith(".py"))


def _mypy_config() -> str:
    """strict everywhere; errors ignored inside the package's .py modules that have no stub (the stubs and the
    scripts are what is checked)."""
    pkg = os.path.join(ROOT, "trtlite")
    sources = []
    for d, _, files in os.walk(pkg):
        for f in files:
            if f.endswith(".py") and not os.path.exists(os.path.join(d, f[:-3] + ".pyi")):
                mod = os.path.relpath(os.path.join(d, f[:-3]), ROOT).replace(os.sep, ".")
                sources.append(mod[:-len(".__init__")] if mod.endswith(".__init__") else mod)
    relaxed = [m for m in _example_modules() if m not in EXAMPLES_STRICT]
    strict = [m for m in _example_modules() if m in EXAMPLES_STRICT]
    return "\n".join([
        "[mypy]", "strict = True", "explicit_package_bases = True", "namespace_packages = True",
        f"cache_dir = {os.path.join(ROOT, 'build', 'mypy_cache')}", f"mypy_path = {ROOT}:{os.path.join(ROOT, 'examples')}",
        "", f"[mypy-{','.join(sorted(sources))}]", "ignore_errors = True",
        # PyTorch is not the subject and analysing its inline types took ~19 of mypy's 25 s of CPU: the examples see
        # torch as Any, so their torch classes and returns are not held to subclassing-Any / returning-Any (the calls
        # into trtlite's stubs are checked as before)
        "", "[mypy-torch,torch.*,torchvision,torchvision.*]", "follow_imports = skip", "follow_imports_for_stubs = True",
    ] + [line for mods, extra in ((strict, []), (relaxed, ["allow_untyped_defs = True", "allow_incomplete_defs = True",
                                                           "allow_untyped_calls = True"])) if mods
         # one section a module (mypy takes one matching section, not a merge)
         for line in ["", f"[mypy-{','.join(mods)}]", "disallow_subclassing_any = False", "warn_return_any = False",
                      "warn_unused_ignores = False"] + extra] + [""])


@pytest.fixture(scope="session")
def checks():
    """Runs mypy (typing files and examples) and stubtest concurrently; returns {name: (rc, output)}."""
    os.makedirs(BUILD, exist_ok=True)
    cfg = os.path.join(BUILD, "mypy.ini")
    with open(cfg, "w") as f:
        f.write(_mypy_config())
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               MYPYPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "examples")]))
    examples = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(os.path.join(ROOT, "examples"))
                      for f in fs if f.endswith(".py"))
    cmds = {
        "mypy": [sys.executable, "-m", "mypy", "--config-file", cfg, "--no-error-summary", "--show-error-codes",
                 "tests/typing/positive.py", "tests/typing/negative.py"] + examples,
        "stubtest": [sys.executable, "-m", "mypy.stubtest", "trtlite", "--mypy-config-file", cfg,
                     "--allowlist", os.path.join(TYPING, "stubtest_allowlist.txt")],
    }
    procs = {k: subprocess.Popen(c, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for k, c in cmds.items()}
    out = {}
    for k, p in procs.items():
        text, _ = p.communicate(timeout=600)
        out[k] = (p.returncode, text)
    return out


def _errors(text: str, path: str) -> dict:
    """{line: [error codes]} of mypy's error lines for `path`."""
    found: dict = {}
    for m in re.finditer(r"^%s:(\d+): error: .*\[([a-z-]+)\]$" % re.escape(path), text, flags=re.M):
        found.setdefault(int(m.group(1)), []).append(m.group(2))
    return found


def test_correct_script_type_checks(checks):
    rc, text = checks["mypy"]
    assert _errors(text, "tests/typing/positive.py") == {}, text


def test_deliberate_mistakes_are_flagged(checks):
    _, text = checks["mypy"]
    with open(os.path.join(TYPING, "negative.py")) as f:
        expected = {i + 1: m.group(1) for i, line in enumerate(f) if (m := re.search(r"# E: ([a-z-]+)$", line))}
    assert len(expected) >= 20
    found = _errors(text, "tests/typing/negative.py")
    missed = {ln: code for ln, code in expected.items() if code not in found.get(ln, [])}
    unexpected = {ln: codes for ln, codes in found.items() if ln not in expected or set(codes) != {expected[ln]}}
    assert not missed, f"mypy missed deliberate mistakes: {missed}\n{text}"
    assert not unexpected, f"errors on lines not marked (or with other codes): {unexpected}\n{text}"


def test_examples_type_check(checks):
    rc, text = checks["mypy"]
    others = [ln for ln in text.splitlines() if ": error:" in ln and not ln.startswith("tests/typing/")]
    assert others == [], "\n".join(others)
    assert rc == 1  # the negative file's errors, and only those (the tests above)


def test_stubtest(checks):
    rc, text = checks["stubtest"]
    assert rc == 0 and "Success" in text, text


def test_correct_script_runs(tmp_path):
    """The positive file is a real script: it builds, serializes, loads and runs its network."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(TYPING, "positive.py")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
