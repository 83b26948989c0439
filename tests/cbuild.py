"""Builds the C test programs (tests/c/*.c) against the library's C sources.

Each source is compiled once to an object under build/ctest/<flags>/ (in parallel, one job per CPU) and reused
while neither it nor a header it includes (gcc's -MMD dependency list) has changed; programs are then linked from
those objects.  The C kernel tests (test_kernels_c, test_precision_kernels_c, test_qconv_c) share the kernel
objects instead of each compiling every source serially, which was most of their time in `make test`.
"""
import concurrent.futures
import hashlib
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-Icsrc", "-Icsrc/include"]
LIBS = ["-lopenblas", "-lm", "-lpthread"]


def _paths(src, cflags):
    tag = hashlib.sha1("\0".join(cflags).encode()).hexdigest()[:10]
    base = os.path.join(ROOT, "build", "ctest", tag, src.replace("/", "__"))
    return base + ".o", base + ".d"


def _up_to_date(obj, dep):
    """Whether obj is newer than every file its dependency list names (and both exist)."""
    try:
        t = os.path.getmtime(obj)
        with open(dep) as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        return False
    _, _, deps = text.partition(":")
    for path in deps.split():
        try:
            if os.path.getmtime(os.path.join(ROOT, path)) > t:
                return False
        except OSError:
            return False
    return True


def _compile(src, cflags):
    obj, dep = _paths(src, cflags)
    if _up_to_date(obj, dep):
        return obj, None
    os.makedirs(os.path.dirname(obj), exist_ok=True)
    tmp = obj + ".%d.tmp" % os.getpid()
    cmd = ["gcc"] + cflags + ["-MMD", "-MF", dep + ".tmp", "-c", src, "-o", tmp]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        return obj, "%s\n%s" % (" ".join(cmd), r.stderr)
    os.replace(dep + ".tmp", dep)
    os.replace(tmp, obj)
    return obj, None


def build_program(exe, sources, cflags=CFLAGS, libs=LIBS):
    """Compiles `sources` (paths relative to the repository) to objects and links them into `exe`.

    Raises AssertionError with the compiler's messages when a source does not compile or the link fails."""
    jobs = max(1, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda s: _compile(s, cflags), sources))
    errors = [e for _, e in results if e]
    assert not errors, "compiling the C tests failed:\n" + "\n".join(errors)
    cmd = ["gcc"] + [o for o, _ in results] + ["-o", exe] + libs
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, "linking %s failed:\n%s" % (exe, r.stderr)
    return exe
