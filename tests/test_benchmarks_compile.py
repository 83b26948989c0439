"""The C benchmarks (benchmarks/*.c, not built by `make test`) keep compiling: each passes gcc's front end with the
project's warning flags.  Session 9's shared benchmarks/bench_util.h introduced a type named like a function in three
of them, and nothing noticed until a helper tried to run one."""
import glob
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "benchmarks", "*.c")))


def test_there_are_benchmarks():
    assert len(SOURCES) >= 10


@pytest.mark.parametrize("src", SOURCES)
def test_benchmark_compiles(src):
    cmd = ["gcc", "-std=c11", "-O0", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-Icsrc", "-Icsrc/include",
           "-fsyntax-only", src]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
