"""The thread pool (csrc/core/threadpool.c): compiles tests/c/test_threadpool.c with the pool's sources and runs it,
plainly and under ThreadSanitizer where the compiler has it.  The program checks that every index of a parallel_for
runs exactly once on a valid thread index for pools of 1..5 threads (more threads than CPUs included), grains and
sizes with tails, each yield policy (TRTL_POOL_YIELD unset / 0 / 2), held and not, across pauses longer than the
spin limits, two held pools driven from two threads at once, nested calls inline; and that the counters of
trtl_threadpool_stats agree with the calls made.  About 1 s of CPU plainly, a few seconds under TSan."""
import os
import shutil
import subprocess

import pytest

from cbuild import CFLAGS, build_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = ["tests/c/test_threadpool.c", "csrc/core/threadpool.c", "csrc/core/status.c"]


def _run(exe, args):
    r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "thread pool test failed (exit %d):\n%s\n%s" % (r.returncode, r.stdout[-8000:],
                                                                            r.stderr[-4000:])
    assert r.stdout.splitlines()[-1] == "0 failures", r.stdout
    return r


def test_threadpool(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    _run(build_program(str(tmp_path / "test_threadpool"), SOURCES, libs=["-lm", "-lpthread"]), ["6"])


def test_threadpool_under_thread_sanitizer(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    flags = CFLAGS + ["-fsanitize=thread", "-g", "-O1"]
    try:
        exe = build_program(str(tmp_path / "test_threadpool_tsan"), SOURCES, cflags=flags,
                            libs=["-lm", "-lpthread"], ldflags=["-fsanitize=thread"])
    except AssertionError as e:  # no libtsan
        pytest.skip("no ThreadSanitizer: %s" % e)
    r = _run(exe, ["2", "nopolicy"])  # races only: the yield policy's timing checks run in the plain test
    assert "WARNING: ThreadSanitizer" not in r.stderr, r.stderr[-8000:]
