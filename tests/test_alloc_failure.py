"""Out of memory is a status, never a crash: tests/c/test_alloc_failure.c fails every aligned allocation of a build,
a plan round trip and two runs in turn (core/alloc.h's failure hook) and expects TRTL_ERR_OUT_OF_MEMORY naming it, or
the right outputs where the allocation was only an optimization."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_aligned_allocation_can_fail_cleanly(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    subprocess.run(["make", "-s", "build/libtrtlite.so"], cwd=ROOT, check=True)
    exe = str(tmp_path / "test_alloc_failure")
    # internal header (core/alloc.h) for the hook; the library exports it (the Makefile hides no symbol)
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-Icsrc", "-Icsrc/include",
                    "tests/c/test_alloc_failure.c", "-o", exe, "-Lbuild", "-ltrtlite", "-lm",
                    "-Wl,-rpath," + os.path.join(ROOT, "build")], cwd=ROOT, check=True)
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    assert r.stdout.strip().endswith("OK")
