"""Packaging (issue 13): the CPU feature detection compiles with gcc and clang and agrees with libgcc's; a missing
OpenBLAS is one line saying what to install.  (The clang build of every C file is `make clang-check`, part of
`make test`; the wheel and auditwheel are `make wheel-check`: docs/user_guide.md, "Installing".)"""
import importlib.util
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The feature bits of trtlite.h (TRTL_CPU_*) beside gcc's names for them.
PROBE = r"""
#include <stdio.h>
#include "core/cpu.h"
int main(void)
{
    printf("%u\n", trtl_cpu_features());
#if defined(LIBGCC)
    __builtin_cpu_init();
    unsigned g = 0;
    if (__builtin_cpu_supports("sse4.1")) g |= TRTL_CPU_SSE41;
    if (__builtin_cpu_supports("avx")) g |= TRTL_CPU_AVX;
    if (__builtin_cpu_supports("avx2")) g |= TRTL_CPU_AVX2;
    if (__builtin_cpu_supports("fma")) g |= TRTL_CPU_FMA;
    if (__builtin_cpu_supports("f16c")) g |= TRTL_CPU_F16C;
    if (__builtin_cpu_supports("avx512f")) g |= TRTL_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw")) g |= TRTL_CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vnni")) g |= TRTL_CPU_AVX512VNNI;
    if (__builtin_cpu_supports("avx512bf16")) g |= TRTL_CPU_AVX512BF16;
    if (__builtin_cpu_supports("avxvnni")) g |= TRTL_CPU_AVXVNNI;
    /* AMX: libgcc checks CPUID and XCR0; trtlite also asks Linux for the tile state (granted here or both 0) */
    if (__builtin_cpu_supports("amx-tile")) g |= TRTL_CPU_AMX_TILE;
    if (__builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16")) g |= TRTL_CPU_AMX_BF16;
    if (__builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-int8")) g |= TRTL_CPU_AMX_INT8;
    printf("%u\n", g);
#endif
    return 0;
}
"""


def _probe(cc, tmp_path, libgcc):
    src = tmp_path / "probe.c"
    src.write_text(PROBE)
    exe = tmp_path / f"probe_{cc}"
    cmd = [cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I", os.path.join(ROOT, "csrc"),
           "-I", os.path.join(ROOT, "csrc", "include"), str(src), os.path.join(ROOT, "csrc", "core", "cpu.c"),
           "-o", str(exe)] + (["-DLIBGCC"] if libgcc else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = {k: v for k, v in os.environ.items() if k != "TRTL_CPU_MASK"}
    return [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True, env=env,
                                           check=True).stdout.split()]


def test_cpu_features_match_libgcc(tmp_path):
    """CPUID/XGETBV read directly give what gcc's __builtin_cpu_supports (which checks the OS's XSAVE state too)
    says, feature by feature."""
    ours, libgcc = _probe("gcc", tmp_path, True)
    assert ours == libgcc, f"{ours:#x} != libgcc's {libgcc:#x}"


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang not installed (make deps-fuzz installs it)")
def test_cpu_detection_compiles_with_clang(tmp_path):
    """clang 14 rejected __builtin_cpu_supports("f16c"); the detection now compiles with it, warnings as errors,
    and finds the same features."""
    (ours,) = _probe("clang", tmp_path, False)
    (gcc_ours, _) = _probe("gcc", tmp_path, True)
    assert ours == gcc_ours


def _setup_module():
    spec = importlib.util.spec_from_file_location("trtlite_setup", os.path.join(ROOT, "setup.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # setup() itself runs only as __main__
    return mod


def test_openblas_found_here():
    assert _setup_module().openblas_problem(["cc"]) is None


@pytest.mark.parametrize("what", ["header", "library"])
def test_missing_openblas_is_one_line_saying_what_to_install(what):
    setup = _setup_module()
    if what == "header":
        msg = setup.openblas_problem(["cc"], header="no_such_cblas.h")
    else:
        msg = setup.openblas_problem(["cc"], library="no_such_openblas")
    assert msg and "\n" not in msg
    assert "libopenblas-dev" in msg and ("no_such_cblas.h" in msg if what == "header" else "libno_such_openblas" in msg)


def test_build_without_openblas_stops_with_the_message(tmp_path):
    """`setup.py build_ext` where the linker finds no OpenBLAS: exit status 1 and the one line, before any
    compiler error (LDFLAGS pointing at an empty directory cannot hide the system library, so a wrapper compiler
    that fails on -lopenblas stands in for a machine without it)."""
    cc = tmp_path / "cc"
    cc.write_text('#!/bin/sh\nfor a in "$@"; do [ "$a" = -lopenblas ] && { echo "cannot find -lopenblas" >&2; '
                  'exit 1; }; done\nexec gcc "$@"\n')
    cc.chmod(0o755)
    env = dict(os.environ, CC=str(cc))
    r = subprocess.run(["python3", "setup.py", "build_ext", "--build-temp", str(tmp_path / "t"), "--build-lib",
                        str(tmp_path / "l")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("trtlite: the linker finds no libopenblas") and "libopenblas-dev" in last, r.stderr
