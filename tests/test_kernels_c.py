"""Optimized C kernels vs their reference kernels: compiles tests/c/test_kernels.c against the C sources
directly (same flags as the project; objects shared with the other C tests, tests/cbuild.py) and runs it on random shapes; any mismatch fails with the program's output.

TRTL_KERNEL_TEST_SEED=<n> picks another seed (default: fixed, so failures reproduce).
"""
import glob
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from cbuild import build_program
from conftest import skip_if_mask_hides_nothing
SOURCES = [
    "tests/c/test_kernels.c",
    "csrc/core/cpu.c",
    "csrc/core/status.c",
    "csrc/core/dims.c",
    "csrc/core/threadpool.c",
    "csrc/core/shape.c",
    "csrc/core/axes_values.c",
    "csrc/kernels/epilogue.c",
    "csrc/kernels/conv_geometry.c",
    "csrc/kernels/ref/convolution.c",
    "csrc/kernels/ref/fully_connected.c",
    "csrc/kernels/ref/linear.c",
    "csrc/kernels/ref/quantize.c",
    "csrc/kernels/ref/dequantize.c",
    "csrc/kernels/ref/lowbit.c",
    "csrc/kernels/ref/matrix_multiply.c",
    "csrc/kernels/ref/pooling.c",
    "csrc/kernels/ref/reduce.c",
    "csrc/kernels/ref/softmax.c",
    "csrc/kernels/ref/normalization.c",
    "csrc/kernels/ref/shuffle.c",
    "csrc/kernels/ref/concatenation.c",
    "csrc/kernels/ref/slice.c",
    "csrc/kernels/ref/gather.c",
    "csrc/kernels/ref/cumulative.c",
    "csrc/kernels/ref/padding.c",
    "csrc/kernels/ref/strided.c",
    "csrc/kernels/ref/deconvolution.c",
    "csrc/kernels/ref/resize.c",
    "csrc/kernels/ref/elementwise.c",
    "csrc/kernels/ref/broadcast.c",
    "csrc/kernels/ref/unary.c",
    "csrc/kernels/ref/activation.c",
    "csrc/kernels/ref/scale.c",
    "csrc/kernels/ref/attention.c",
    "csrc/kernels/attention_geometry.c",
    "csrc/kernels/matmul_shape.c",  # matrix_multiply.sgemm / .packed (blas/, x86/)
    "csrc/kernels/ref/qlinear.c",   # qlinear.int8 (x86/qlinear_int8.c) vs its reference, on the int8 library:
    "csrc/kernels/qconv.c",
    "csrc/kernels/ref/qconv.c",
    "csrc/core/alloc.c",
    "csrc/kernels/ref/reduce_binary.c",
    "csrc/kernels/ref/nchwc_conv.c",
    "csrc/kernels/ref/pw_chain.c",  # pw_chain.simd (x86/pw_chain.c) vs the steps' reference kernels in turn
    "csrc/kernels/ref/select.c",     # select.bcast, parametric_relu.simd and cast.simd fall back to / share these
    "csrc/kernels/ref/cast.c",
    "csrc/kernels/ref/convert.c",
    "csrc/kernels/ref/grid_sample.c",
]


def _sources():
    extra = sorted(glob.glob(os.path.join(ROOT, "csrc/kernels/x86/*.c")) + glob.glob(os.path.join(ROOT, "csrc/kernels/blas/*.c")))
    return SOURCES + [os.path.relpath(p, ROOT) for p in extra]


@pytest.fixture(scope="module")
def test_binary(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    return build_program(str(tmp_path_factory.mktemp("kernels") / "test_kernels"), _sources())


def _run(exe, args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    # The whole kernel suite takes ~25 s on an idle 2-core machine; the limit only guards against a hang, so it
    # leaves room for a heavily loaded one (several builds running beside it took it past 120 s).
    r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, "kernel mismatch (exit %d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr[-4000:])
    return r.stdout


def test_optimized_kernels_match_reference(test_binary):
    seed = os.environ.get("TRTL_KERNEL_TEST_SEED", "20240601")
    out = _run(test_binary, [seed, "120"])
    assert " 0 failures" in out


def test_optimized_kernels_portable_paths(test_binary):
    """The same with every SIMD feature masked off: portable epilogue and im2col paths (the AVX2-only kernels
    are skipped, as the builder would skip them)."""
    seed = os.environ.get("TRTL_KERNEL_TEST_SEED", "20240602")
    out = _run(test_binary, [seed, "30"], {"TRTL_CPU_MASK": "0"})
    assert " 0 failures" in out


def test_every_optimized_kernel_has_a_reference_comparison():
    """Each kernel of the registry's optimized list is handed to a comparison in tests/c/test_kernels.c (run_opt or a
    test_* function taking the kernel's address), or in tests/c/test_kernels_bf16.c for the bf16 kernels (or
    tests/c/test_kernels_data.c for the bit-exact selection and conversion kernels), so a new
    kernel cannot be added untested."""
    with open(os.path.join(ROOT, "csrc/kernels/registry.c")) as f:
        registry = f.read()
    listed = re.findall(r"X\((trtl_kernel_\w+)\)", registry)
    tests = ""
    for name in ("tests/c/test_kernels.c", "tests/c/test_kernels_bf16.c", "tests/c/test_kernels_data.c"):
        with open(os.path.join(ROOT, name)) as f:
            tests += f.read()
    assert len(listed) >= 10, listed
    missing = [k for k in listed if not re.search(r"&%s\b" % k, tests)]
    # the qlinear.fp32 tactics: one list (kernels/qlinear_fp32.h), which the registry and the C test both expand
    with open(os.path.join(ROOT, "csrc/kernels/qlinear_fp32.h")) as f:
        tactics = re.findall(r"^\s*X\((\w+), (trtl_kernel_\w+),", f.read(), re.M)
    assert len(tactics) >= 10, tactics
    assert "TRTL_QLINEAR_FP32_TACTICS(X##_QF)" in registry
    assert re.search(r"qf_tactics\[\] = \{\s*#define QF_ADDR\(id, inner, feat\) &trtl_kernel_qlinear_fp32_##id,"
                     r"\s*TRTL_QLINEAR_FP32_TACTICS\(QF_ADDR\)", tests), "test_kernels.c's qf_tactics[] is not the list"
    missing += ["trtl_kernel_qlinear_fp32_" + t for t, inner in tactics
                if not re.search(r"&%s\b" % inner, tests)]  # and each inner fp32 kernel compared itself
    assert not missing, "optimized kernels without a comparison in tests/c/test_kernels.c: %s" % missing


def test_optimized_kernels_avx2_paths(test_binary):
    """The same with AVX-512 masked off (TRTL_CPU_MASK=1f: SSE4.1, AVX, AVX2, FMA, F16C): the AVX2 variants of the
    kernels that have both (packed GEMM tiles, Winograd transforms, the vector max pooling path)."""
    skip_if_mask_hides_nothing("1f")
    seed = os.environ.get("TRTL_KERNEL_TEST_SEED", "20240603")
    out = _run(test_binary, [seed, "40"], {"TRTL_CPU_MASK": "1f"})
    assert " 0 failures" in out


def test_every_op_fits_the_candidate_limit():
    """No op has more kernels than the builder's selection holds (kernels/registry.h TRTL_KERNELS_PER_OP_MAX):
    trtl_kernels_for stops at that many, so the last registered kernel of an op past it would never be a candidate
    (as happened once to convolution.depthwise_c8).  Counted through the library itself."""
    import ctypes
    with open(os.path.join(ROOT, "csrc/kernels/registry.h")) as f:
        limit = int(re.search(r"#define TRTL_KERNELS_PER_OP_MAX (\d+)", f.read()).group(1))
    lib = ctypes.CDLL(os.path.join(ROOT, "build", "libtrtlite.so"))
    lib.trtl_kernels_for.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    buf = (ctypes.c_void_p * 256)()
    counts = {op: lib.trtl_kernels_for(op, buf, 256) for op in range(200)}
    assert max(counts.values()) >= 10                       # the convolution's list is long: the count is real
    over = {op: n for op, n in counts.items() if n > limit}
    assert not over, "ops with more kernels than the selection holds (%d): %s" % (limit, over)
