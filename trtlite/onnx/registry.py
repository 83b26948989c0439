"""The importer registry: ONNX op name -> the function that imports it, with what it supports.

Each ops_* module registers its importers with the ``importer`` decorator, stating the op's restrictions (what
the importer refuses or needs known while parsing) and, where it supports fewer opsets than ONNX defines the op
in, its opset range.  The parser dispatches through IMPORTERS; ``supported_ops`` and ``op_info`` read the same
table, so a supported-operators document generated from them cannot drift from the code.

An importer is ``f(p, node, a) -> [output, ...]``: `p` the ImporterContext, `node` the NodeProto, `a` its
attributes as Python values; each output is an ITensor or a numpy array (a value computed while parsing).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

# Opsets of the default ONNX domain the parser accepts: from MIN_OPSET to the installed onnx package's newest.
MIN_OPSET = 7

Importer = Callable[[Any, Any, Dict[str, Any]], List[Any]]


class OpInfo(NamedTuple):
    """What the registry says about one op: its restrictions (human-readable text) and the opsets its importer
    handles, (first, last) with last None for "up to the newest"; ONNX's own definition of the op may start
    later or end earlier."""
    restrictions: str
    opsets: Tuple[int, Optional[int]]


# op -> importer; op -> OpInfo.  Filled when the ops_* modules are imported (trtlite.onnx imports them all).
IMPORTERS: Dict[str, Importer] = {}
OP_INFO: Dict[str, OpInfo] = {}


def importer(*ops: str, restrictions: Union[str, Dict[str, str]],
             opsets: Tuple[int, Optional[int]] = (MIN_OPSET, None)) -> Callable[[Importer], Importer]:
    """Registers the decorated function as the importer of `ops`.  `restrictions`: one text for all of them, or
    {op: text}; "none" where the importer takes everything ONNX allows."""
    def deco(f: Importer) -> Importer:
        for op in ops:
            if op in IMPORTERS:
                raise ValueError("ONNX op %r has two importers (%s and %s)" % (op, IMPORTERS[op].__name__, f.__name__))
            text = restrictions[op] if isinstance(restrictions, dict) else restrictions
            IMPORTERS[op] = f
            OP_INFO[op] = OpInfo(text, opsets)
        return f
    return deco


def supported_ops() -> List[Tuple[str, str]]:
    """[(op, restrictions)] for every op of the default ONNX domain with an importer, sorted by op name.  Ops
    without one are still computed while parsing when all their inputs are constants (onnx's reference
    implementation), or become plugin layers when a plugin creator named after them is registered."""
    return [(op, OP_INFO[op].restrictions) for op in sorted(IMPORTERS)]


def op_info(op: str) -> Optional[OpInfo]:
    """The registry's entry for `op` (None: no importer)."""
    return OP_INFO.get(op)
