"""The ONNX importer registry (trtlite/onnx/registry.py): every op with an importer states its restrictions and
opsets, the table the parser dispatches through is the one supported_ops() reports, and the package keeps its
layering (importers never import the parser)."""
import ast
import os

import pytest

onnx = pytest.importorskip("onnx")

import trtlite as trt  # noqa: E402
from trtlite import onnx as tonnx  # noqa: E402
from trtlite.onnx import registry  # noqa: E402

PKG = os.path.dirname(tonnx.__file__)


def test_every_registered_op_has_an_entry():
    assert len(registry.IMPORTERS) > 100
    assert set(registry.IMPORTERS) == set(registry.OP_INFO)
    for op in registry.IMPORTERS:
        info = registry.op_info(op)
        assert isinstance(info.restrictions, str) and info.restrictions.strip(), op
        lo, hi = info.opsets
        assert lo >= registry.MIN_OPSET and (hi is None or hi >= lo), (op, info.opsets)


def test_supported_ops_is_the_dispatch_table():
    ops = tonnx.supported_ops()
    assert [op for op, _ in ops] == sorted(registry.IMPORTERS)
    assert dict(ops)["Resize"] == registry.OP_INFO["Resize"].restrictions
    assert "dilations" in dict(ops)["LpPool"]
    network = trt.Builder(trt.Logger()).create_network(0)
    parser = trt.OnnxParser(network, trt.Logger())
    for op, _ in ops:
        assert parser.supports_operator(op), op
    assert registry.op_info("NoSuchOp") is None and not parser.supports_operator("NoSuchOp")


def test_registered_ops_are_onnx_ops():
    """A typo in a registration would make the op unreachable (and the generated documentation wrong)."""
    for op in registry.IMPORTERS:
        assert onnx.defs.has(op), op


def test_an_op_registers_once():
    with pytest.raises(ValueError, match="'Relu' has two importers"):
        registry.importer("Relu", restrictions="none")(lambda p, node, a: [])
    assert registry.IMPORTERS["Relu"].__module__ == "trtlite.onnx.ops_activation"


def _relative_imports(path):
    names = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module)
            else:
                names.update(a.name for a in node.names)
    return names


def test_layering():
    """Importers (ops_*) and the services below them import the context and the registry, never the parser or
    the model importer: the parser imports them (no cycles).  The refitter (trt.OnnxParserRefitter) sits beside
    the parser, on top: it parses the model again."""
    files = sorted(f for f in os.listdir(PKG) if f.endswith(".py") and f not in ("__init__.py", "parser.py",
                                                                                "refitter.py"))
    assert "ops_conv.py" in files and "context.py" in files
    for f in files:
        imported = _relative_imports(os.path.join(PKG, f))
        assert "parser" not in imported, f
        if f != "model_importer.py":
            assert "model_importer" not in imported, f


def test_package_is_listed_for_installation():
    """pyproject.toml lists packages explicitly: trtlite.onnx must be among them, or an installed trtlite has no
    ONNX parser (the tests run from the source tree, where it is found anyway)."""
    tomllib = pytest.importorskip("tomllib")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        packages = tomllib.load(f)["tool"]["setuptools"]["packages"]
    assert "trtlite.onnx" in packages and tonnx.__name__ == "trtlite.onnx"
