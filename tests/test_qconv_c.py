"""The int8 convolution library (csrc/kernels/qconv.h): compiles tests/c/test_qconv.c against the C sources it needs
(same flags as the project) and runs it.  The program checks every kernel this CPU has (avx512vnni, avxvnni, avx2,
portable; selected through the CPU feature mask) against a float64 model of the quantized math on random shapes with
tails: accumulators bit-exact, outputs within 1e-5 relative (fp32) or 1 LSB (fake-quantized), the quantizer exact on
ties, NaN and Inf, and bad descriptors refused.

TRTL_QCONV_TEST_SEED=<n> picks another seed (default: fixed, so failures reproduce).
"""
import os
import shutil
import subprocess

import pytest

from cbuild import CFLAGS, LIBS, build_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = [
    "tests/c/test_qconv.c",
    "csrc/core/cpu.c",
    "csrc/core/status.c",
    "csrc/core/dims.c",
    "csrc/core/threadpool.c",
    "csrc/core/alloc.c",
    "csrc/kernels/epilogue.c",
    "csrc/kernels/qconv.c",
    "csrc/kernels/ref/qconv.c",
    "csrc/kernels/x86/qconv_driver.c",
    "csrc/kernels/x86/qconv_vnni.c",
    "csrc/kernels/x86/qconv_avxvnni.c",
    "csrc/kernels/x86/qconv_avx2.c",
    "csrc/kernels/x86/qconv_dw_driver.c",
    "csrc/kernels/x86/fused_epilogue.c",
    "csrc/kernels/x86/vmath.c",
    "csrc/kernels/x86/vmath_avx2.c",
    "csrc/kernels/x86/vmath_avx512.c",
    "csrc/kernels/blas/blas_common.c",
]


@pytest.fixture(scope="module")
def qconv_binary(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    return build_program(str(tmp_path_factory.mktemp("qconv") / "test_qconv"), SOURCES)


def _run(exe, args):
    r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "qconv mismatch (exit %d):\n%s\n%s" % (r.returncode, r.stdout[-8000:], r.stderr[-4000:])
    return r.stdout


def test_qconv_every_kernel_matches_the_float64_model(qconv_binary):
    """All kernels of this CPU, 80 random convolution / gemm cases each, single-threaded and on a pool of 3."""
    out = _run(qconv_binary, [os.environ.get("TRTL_QCONV_TEST_SEED", "20261125"), "80"])
    assert "0 failures" in out.splitlines()[-1], out
    # each kernel this CPU has was run (and reported), the portable path always
    assert "portable: 0 failures" in out
    for name in ("amx", "avx512vnni", "avxvnni", "avx2"):
        assert ("%s: 0 failures" % name) in out or ("skip %s" % name) in out, out


def test_qconv_second_seed(qconv_binary):
    """Another seed, fewer cases: other shapes, zero points and activations."""
    out = _run(qconv_binary, ["7", "30"])
    assert "0 failures" in out.splitlines()[-1], out


def test_qconv_under_address_and_undefined_sanitizers(tmp_path):
    """The same program built with ASan + UBSan, few cases: out-of-bounds reads of the strip loads (the padded
    image's guards), misaligned scratch (it may come at any alignment) and signed overflow are errors."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    exe = str(tmp_path / "test_qconv_asan")
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    # the vector math is not what this checks (and took ~40% of the instrumented compile): the library's objects
    plain = [s for s in SOURCES if "/vmath" in s]
    try:
        build_program(exe, SOURCES, CFLAGS[0:1] + flags + CFLAGS[2:], plain=plain, ldflags=flags[2:3])
    except AssertionError as e:
        if "asan" in str(e).lower():
            pytest.skip("no sanitizer runtime: %s" % str(e)[-300:])
        raise
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1", UBSAN_OPTIONS="halt_on_error=1")
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([exe, "11", "16"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0 and "runtime error" not in p.stderr, p.stdout[-4000:] + p.stderr[-4000:]
    assert "0 failures" in p.stdout.splitlines()[-1], p.stdout
