"""Kernel selection's timing rounds (csrc/builder/select.c), driven by made-up timings through the test hook
builder/select_hook.h: tests/c/test_select_timing.c checks the alternation of candidates in rounds, the cut-offs,
the minimum over rounds, the near-tie rule (within 3%: registry order) and that a warm rebuild keeps the cold build's
choice.  Deterministic: no clock decides anything."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_timing_rounds_and_near_ties(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    subprocess.run(["make", "-s", "build/libtrtlite.so"], cwd=ROOT, check=True)
    exe = str(tmp_path / "test_select_timing")
    # internal header (builder/select_hook.h) for the hook; the library exports it (the Makefile hides no symbol)
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-Icsrc", "-Icsrc/include",
                    "tests/c/test_select_timing.c", "-o", exe, "-Lbuild", "-ltrtlite", "-lm",
                    "-Wl,-rpath," + os.path.join(ROOT, "build")], cwd=ROOT, check=True)
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    assert r.stdout.strip().endswith("OK")
