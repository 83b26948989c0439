"""Every code block of README.md and docs/*.md is run (issue 13), and the generated documents are current.

A ```python block runs as it is, in a subprocess, in a fresh temporary directory, with this checkout's trtlite
importable.  A block preceded by `<!-- continues -->` runs after the block before it (in one script), so a guide
can build step by step.  A block preceded by `<!-- skip: reason -->` is not run: it needs what a test cannot
have (a GPU, a user's model file); each skip must give its reason, and they are counted.  Blocks in other
languages are shell commands, C sources or text: each must be fenced as ```sh, ```c or ```text (a bare ``` fence
fails), and none is run here (the C plugin of the guide is examples/plugins/scaled_tanh_plugin.c, which
tests/test_plugins_examples.py builds and loads).
"""
import glob
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
NOT_RUN = {"sh", "c", "text"}
MAX_SKIPPED = 3  # skips are exceptions: raising this needs a reason in the document

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def blocks(path):
    """[(index, language, code, marker)] where marker is "", "continues" or "skip: reason"."""
    text = open(path).read()
    out = []
    for i, m in enumerate(FENCE.finditer(text)):
        before = text[:m.start()].rstrip().splitlines()
        prev = before[-1].strip() if before else ""
        marker = ""
        mm = re.match(r"<!--\s*(continues|skip:.*?)\s*-->$", prev)
        if mm:
            marker = mm.group(1).strip()
        line = text[:m.start()].count("\n") + 1
        out.append((i, m.group(1), m.group(2), marker, line))
    return out


def scripts():
    """{(doc, line): code} of the python blocks to run, continuation blocks joined to their predecessors."""
    out = {}
    for path in DOCS:
        rel = os.path.relpath(path, ROOT)
        chain = ""
        for _, lang, code, marker, line in blocks(path):
            if lang != "python" or marker.startswith("skip"):
                chain = ""
                continue
            chain = (chain + "\n" + code) if marker == "continues" else code
            out[(rel, line)] = chain
    return out


SCRIPTS = scripts()


@pytest.fixture(scope="session")
def results(tmp_path_factory):
    """Runs every block (two at a time); {(doc, line): (rc, output)}."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")

    # the directories are made here, not in the threads: mktemp from two threads at once can race
    dirs = {key: tmp_path_factory.mktemp("doc") for key in SCRIPTS}

    def run(item):
        key, code = item
        d = dirs[key]
        r = subprocess.run([sys.executable, "-c", code], cwd=d, env=env, capture_output=True, text=True,
                           timeout=300)
        return key, (r.returncode, r.stdout + r.stderr)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(run, SCRIPTS.items()))


@pytest.mark.parametrize("key", sorted(SCRIPTS), ids=lambda k: f"{k[0]}:{k[1]}")
def test_python_block_runs(results, key):
    rc, out = results[key]
    assert rc == 0, f"{key[0]} line {key[1]}:\n{SCRIPTS[key]}\n---\n{out}"


def test_every_block_is_run_or_declared():
    skipped, bad = [], []
    for path in DOCS:
        rel = os.path.relpath(path, ROOT)
        for _, lang, _, marker, line in blocks(path):
            if lang == "python":
                if marker.startswith("skip"):
                    if not marker[len("skip:"):].strip():
                        bad.append(f"{rel}:{line}: skip without a reason")
                    skipped.append(f"{rel}:{line}")
            elif lang not in NOT_RUN:
                bad.append(f"{rel}:{line}: fence language {lang!r} (python, or one of {sorted(NOT_RUN)})")
    assert not bad, bad
    assert len(skipped) <= MAX_SKIPPED, skipped
    assert len(SCRIPTS) >= 15  # README + user guide + porting guide + plugin table


def test_readme_first_block_is_a_complete_script():
    """The README's first Python sample is one that runs as written (no `...`, no undefined names)."""
    first = [b for b in blocks(os.path.join(ROOT, "README.md")) if b[1] == "python"][0]
    assert first[3] == "" and "..." not in first[2]


@pytest.mark.parametrize("tool", ["gen_api_doc.py", "gen_plugin_doc.py"])
def test_generated_docs_are_current(tool):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", tool), "--check"], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
