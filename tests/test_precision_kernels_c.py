"""The bf16 kernels (convolution.bf16_gemm, fully_connected.bf16_gemm) against a float64 reference of the bf16-rounded
math: compiles tests/c/test_kernels_bf16.c against the C sources (as tests/test_kernels_c.py does) and runs it on fixed
and random shapes with tails, with no pool and 2- and 3-thread pools; then again with AVX512_BF16 masked off
(TRTL_CPU_MASK), where both kernels must refuse in prepare with a message naming the feature.

The tolerance is derived in the C file's header: (depth + 4) * 2^-24 * sum|x_i w_i| (fp32 accumulation of exact
bf16 products), doubled for the activation, plus 4e-6 relative for the vector math.
"""
import os
import subprocess

import pytest

import trtlite as trt
from cbuild import build_program
from test_kernels_c import ROOT, _sources

HAS_BF16 = "avx512bf16" in trt.cpu_features()


@pytest.fixture(scope="module")
def bf16_binary(tmp_path_factory):
    src = ["tests/c/test_kernels_bf16.c"] + [s for s in _sources() if s != "tests/c/test_kernels.c"]
    return build_program(str(tmp_path_factory.mktemp("bf16") / "test_kernels_bf16"), src)


def _run(exe, args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, "bf16 kernel mismatch (exit %d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr[-4000:])
    return r.stdout


def test_bf16_kernels_match_rounded_float64_reference(bf16_binary):
    seed = os.environ.get("TRTL_KERNEL_TEST_SEED", "20241125")
    out = _run(bf16_binary, [seed, "60"])
    assert " 0 failures" in out
    if HAS_BF16:
        assert "only the refusal" not in out
        cases = int(out.split(" cases,")[0].split()[-1])
        assert cases >= 2 * 60 + 10, out
    if HAS_BF16 and "amx_bf16" in trt.cpu_features():  # convolution.amx_bf16 ran the convolution cases too
        assert "convolution.amx_bf16 checked, 0 failures" in out, out
        assert "fully_connected.amx_bf16 checked, 0 failures" in out, out


def test_bf16_kernels_refuse_without_the_feature(bf16_binary):
    mask = "%x" % (0xFFFFFFFF & ~(1 << 9))  # TRTL_CPU_AVX512BF16
    out = _run(bf16_binary, ["7", "3"], {"TRTL_CPU_MASK": mask})
    assert "only the refusal is checked" in out and " 0 failures" in out
