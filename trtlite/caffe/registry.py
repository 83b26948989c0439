"""Caffe layer type -> importer.  An importer takes (ctx, layer) and returns the tensors of the layer's tops, in
order (a tensor may be the bottom itself: Split, Dropout).  `supported_layers()` lists the types."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, TypeVar

Importer = Callable[[Any, Any], List[Any]]
IMPORTERS: Dict[str, Importer] = {}
_F = TypeVar("_F", bound=Importer)


def importer(*types: str) -> Callable[[_F], _F]:
    """Registers the decorated function for the Caffe layer `types`."""
    def register(fn: _F) -> _F:
        for t in types:
            IMPORTERS[t] = fn
        return fn
    return register


def supported_layers() -> List[str]:
    """The Caffe layer types trt.CaffeParser imports (beyond them: plugin_factory_v2)."""
    from . import layers_conv, layers_norm, layers_pointwise, layers_shape, layers_ssd  # noqa: F401  (fill IMPORTERS)
    return sorted(IMPORTERS)
