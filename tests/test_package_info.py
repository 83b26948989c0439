"""`python -m trtlite` (versions, CPU features, kernels), trtlite.get_include() for C plugin authors, and the
headers an installed package carries (setup.py's build_py copies them into trtlite/include)."""
import os
import shutil
import subprocess
import sys

import pytest

import trtlite as trt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_python_m_trtlite_reports_versions_features_and_kernels():
    p = subprocess.run([sys.executable, "-m", "trtlite"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert trt.trtlite_version in out and "TensorRT API level " + trt.__version__ in out
    for f in trt._C.cpu_features():
        assert f in out
    kernels = trt._C.kernels()
    assert len(kernels) >= 20
    for name, kind, need, usable in kernels:
        assert name in out
        assert usable == (set(need) <= set(trt._C.cpu_features()))
    assert "C headers: " + trt.get_include() in out


def test_python_m_trtlite_with_arguments_is_trtlite_exec():
    p = subprocess.run([sys.executable, "-m", "trtlite", "--help"], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert p.returncode == 0 and "--onnx" in p.stdout


def test_get_include_compiles_a_c_plugin(tmp_path):
    inc = trt.get_include()
    assert os.path.isfile(os.path.join(inc, "trtlite", "plugin.h"))
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler: make deps installs gcc")
    src = os.path.join(ROOT, "examples", "plugins", "scaled_tanh_plugin.c")
    p = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-Wall", "-Werror", "-I" + inc, src], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def test_build_py_installs_the_public_headers(tmp_path):
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = sorted(os.listdir(tmp_path / "trtlite" / "include" / "trtlite"))
    want = sorted(f for f in os.listdir(os.path.join(ROOT, "csrc", "include", "trtlite")) if f.endswith((".h", ".def")))
    assert got == want and "plugin.h" in got
