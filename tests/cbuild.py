"""Builds the C test programs (tests/c/*.c) against the library's C sources.

Each source is compiled once to an object under build/ctest/<flags>/ (in parallel, one job per CPU) and reused
while neither it nor a header it includes (gcc's -MMD dependency list) has changed; programs are then linked from
those objects.  The C kernel tests (test_kernels_c, test_precision_kernels_c, test_qconv_c) share the kernel
objects instead of each compiling every source serially, which was most of their time in `make test`.  Library
sources reuse the Makefile's own objects (build/obj/, `make build`) when those are current, so in `make test` the
core is compiled once.
"""
import concurrent.futures
import functools
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


@functools.lru_cache(maxsize=None)
def _newest_header():
    """The newest mtime of csrc's headers (the Makefile rebuilds every build/obj object when any header changes)."""
    newest = 0.0
    for d, _, files in os.walk(os.path.join(ROOT, "csrc")):
        for f in files:
            if f.endswith((".h", ".def")):
                newest = max(newest, os.path.getmtime(os.path.join(d, f)))
    return newest


def _library_object(src, cflags):
    """The Makefile's object for a library source (build/obj/..., compiled by `make build` with the same flags plus
    -fPIC), when the C tests use the default flags and it is newer than its source and every header; else None."""
    if cflags != CFLAGS or not src.startswith("csrc/") or src.startswith("csrc/python/"):
        return None
    obj = os.path.join(ROOT, "build", "obj", src[len("csrc/"):-2] + ".o")
    try:
        t = os.path.getmtime(obj)
        if t < os.path.getmtime(os.path.join(ROOT, src)) or t < _newest_header():
            return None
    except OSError:
        return None
    return obj


def _compile(src, cflags):
    lib_obj = _library_object(src, cflags)
    if lib_obj:
        return lib_obj, None
    obj, dep = _paths(src, cflags)
    if _up_to_date(obj, dep):
        return obj, None
    os.makedirs(os.path.dirname(obj), exist_ok=True)
    tmp = obj + ".%d.tmp" % os.getpid()      # several pytest workers may compile the same file at once
    cmd = ["gcc"] + cflags + ["-MMD", "-MF", tmp + ".d", "-c", src, "-o", tmp]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        return obj, "%s\n%s" % (" ".join(cmd), r.stderr)
    os.replace(tmp + ".d", dep)
    os.replace(tmp, obj)
    return obj, None


def build_program(exe, sources, cflags=CFLAGS, libs=LIBS, plain=(), ldflags=()):
    """Compiles `sources` (paths relative to the repository) to objects and links them into `exe`; the sources in
    `plain` with the default flags (so the library's or earlier tests' objects serve), the others with `cflags`;
    `ldflags` go to the link (a sanitizer's runtime).

    Raises AssertionError with the compiler's messages when a source does not compile or the link fails."""
    jobs = max(1, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda s: _compile(s, CFLAGS if s in plain else cflags), sources))
    errors = [e for _, e in results if e]
    assert not errors, "compiling the C tests failed:\n" + "\n".join(errors)
    cmd = ["gcc"] + list(ldflags) + [o for o, _ in results] + ["-o", exe] + libs
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, "linking %s failed:\n%s" % (exe, r.stderr)
    return exe
