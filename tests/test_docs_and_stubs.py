"""Every binding has a docstring, and the committed type stubs match the extension."""
import inspect
import os
import subprocess
import sys

import trtlite as trt
import trtlite._C as C

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_type_method_and_property_has_a_docstring():
    missing = []
    for name, obj in vars(C).items():
        if not isinstance(obj, type) or issubclass(obj, BaseException):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        for attr, value in vars(obj).items():
            if attr.startswith("__") and attr not in ("__enter__", "__exit__"):
                continue
            if (callable(value) or inspect.isgetsetdescriptor(value)) and not (value.__doc__ or "").strip():
                missing.append(f"{name}.{attr}")
    for name, obj in vars(C).items():
        if inspect.isbuiltin(obj) and not (obj.__doc__ or "").strip():
            missing.append(name)
    assert not missing, missing


def test_signature_docstrings_name_the_method():
    # The stub generator relies on "name(args) -> Ret" first lines; check the add_* family.
    for name in dir(trt.INetworkDefinition):
        if name.startswith("add_"):
            first = getattr(trt.INetworkDefinition, name).__doc__.splitlines()[0]
            assert first.startswith(name + "("), first


def test_stubs_are_current(tmp_path):
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_stubs.py"), str(tmp_path)], check=True,
                   capture_output=True)
    for name in ("_C.pyi", "__init__.pyi"):
        with open(os.path.join(ROOT, "trtlite", name)) as f:
            committed = f.read()
        assert committed == (tmp_path / name).read_text(), f"trtlite/{name} is stale: run `make stubs`"
