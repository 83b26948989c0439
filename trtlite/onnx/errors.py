"""The ONNX parser's errors: TensorRT's ErrorCode and IParserError (ParserError), and the exceptions an importer
raises to fail a node (Fail, Dynamic), which the model importer turns into ParserErrors."""
from __future__ import annotations

import enum
from typing import Any, List, Optional


class ErrorCode(enum.IntEnum):
    """TensorRT's ``trt.ErrorCode`` (the ONNX parser's error codes)."""
    SUCCESS = 0
    INTERNAL_ERROR = 1
    MEM_ALLOC_FAILED = 2
    MODEL_DESERIALIZE_FAILED = 3
    INVALID_VALUE = 4
    INVALID_GRAPH = 5
    INVALID_NODE = 6
    UNSUPPORTED_GRAPH = 7
    UNSUPPORTED_NODE = 8
    UNSUPPORTED_NODE_ATTR = 9
    UNSUPPORTED_NODE_INPUT = 10
    UNSUPPORTED_NODE_DATATYPE = 11
    UNSUPPORTED_NODE_DYNAMIC = 12
    UNSUPPORTED_NODE_SHAPE = 13
    REFIT_FAILED = 14


class ParserError:
    """One parser error, with TensorRT's IParserError accessors."""

    def __init__(self, code: ErrorCode, desc: str, node: int = -1, node_name: str = "", node_operator: str = "",
                 func: str = "") -> None:
        self._code = ErrorCode(code)
        self._desc = desc
        self._node = node
        self._node_name = as_text(node_name)
        self._node_operator = as_text(node_operator)
        self._func = func

    def code(self) -> ErrorCode:
        """The ErrorCode."""
        return self._code

    def desc(self) -> str:
        """What went wrong."""
        return self._desc

    def node(self) -> int:
        """Index of the failing node in the graph (-1 when the error is not about a node)."""
        return self._node

    def node_name(self) -> str:
        """The failing node's name ("" when the error is not about a node)."""
        return self._node_name

    def node_operator(self) -> str:
        """The failing node's op type ("" when the error is not about a node)."""
        return self._node_operator

    def file(self) -> str:
        """The source file that reported the error."""
        return __file__

    def func(self) -> str:
        """The step that reported it ("import<Op>" for a node's importer, "parse" for internal errors)."""
        return self._func

    def line(self) -> int:
        """0 (TensorRT's source line; not tracked)."""
        return 0

    def local_function_stack(self) -> List[str]:
        """[] (model-local functions are expanded before importing)."""
        return []

    def local_function_stack_size(self) -> int:
        """0 (see local_function_stack)."""
        return 0

    def __str__(self) -> str:
        if self._node >= 0:
            return "In node %d (name '%s', operator '%s'): %s: %s" % (
                self._node, self._node_name, self._node_operator, self._code.name, self._desc)
        return "%s: %s" % (self._code.name, self._desc)

    def __repr__(self) -> str:
        return "<ParserError %s>" % self


class Fail(Exception):
    """A node (or the graph) cannot be imported; becomes a ParserError."""

    def __init__(self, code: ErrorCode, msg: str) -> None:
        super().__init__(msg)
        self.code = code


def as_text(v: Any) -> str:
    """A protobuf string field as text.  protobuf hands back `bytes` for a string field that is not valid
    UTF-8; error messages must still be built from it (with the bad bytes shown as replacement chars)."""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return v if isinstance(v, str) else str(v)


def bad_name(v: Any) -> Optional[str]:
    """Why `v` cannot name a tensor, layer or op (None: it can).  trtlite's names are C strings: a name
    must be text (valid UTF-8) without NUL characters."""
    if not isinstance(v, str):
        return "%r is not valid UTF-8" % (bytes(v) if isinstance(v, (bytes, bytearray)) else v,)
    if "\0" in v:
        return "%r holds a NUL character" % (v,)
    return None


def unsupported(msg: str, code: ErrorCode = ErrorCode.UNSUPPORTED_NODE_ATTR) -> Fail:
    """A Fail with an UNSUPPORTED_* code (UNSUPPORTED_NODE_ATTR by default)."""
    return Fail(code, msg)


# The most elements of a constant an importer builds from a tensor's dims rather than from the model's data: index
# tables, class and position ranges, masks (64M elements: an 8192 x 8192 causal mask).  Static dims up to 2^31 - 1
# are valid, so without a bound a dim or attribute of 2^31 - 1 made Trilu, Hardmax (both fuzzed), ArgMax, OneHot, the
# losses, Slice, block DequantizeLinear, MaxPool's Indices, STFT, DeformConv, TensorScatter, RoiAlign and
# TfIdfVectorizer (probed, session 16: docs/TESTING.md) allocate 8-32 GiB while parsing.
DIMS_CONSTANT_MAX = 1 << 26


def bound_dims_constant(n: int, what: str) -> None:
    """Refuses (UNSUPPORTED_NODE_SHAPE) a constant of `n` elements computed from dims, past DIMS_CONSTANT_MAX, before
    it is built; `what` names it ("Hardmax along axis 1 of (1, 2147483647): its index range")."""
    if n > DIMS_CONSTANT_MAX:
        raise unsupported("%s would be a constant of %d elements (at most %d)" % (what, n, DIMS_CONSTANT_MAX),
                          ErrorCode.UNSUPPORTED_NODE_SHAPE)


class Dynamic(Fail):
    """A node needs a value that is known only at run time (UNSUPPORTED_NODE_DYNAMIC)."""
    def __init__(self, msg: str) -> None:
        super().__init__(ErrorCode.UNSUPPORTED_NODE_DYNAMIC, msg)
