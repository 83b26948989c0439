"""ImportContext: the state of one parse -- the network, the blob-name -> tensor map, the weights -- and the helpers
the layer importers share (Caffe shapes and axes, weight blobs checked against their expected shapes, constants,
reshapes).

Shapes.  Caffe blobs are [N, C, ...].  In an explicit-batch network a tensor's shape is the Caffe shape; in an
implicit-batch network (TensorRT 7's create_network()) it lacks N.  Importers reason on the Caffe shape
(`full_shape`: N is BATCH there in implicit mode) and convert axes with `trt_axis`; an implicit network cannot touch
the batch axis (an error names the layer)."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from .errors import CaffeParserError

BATCH = -1  # the batch dimension of an implicit-batch network in a Caffe shape


class Layer:
    """One Caffe layer (new LayerParameter or V1LayerParameter) as the importers see it."""

    def __init__(self, proto: Any, ltype: str) -> None:
        self.proto = proto
        self.name: str = proto.name
        self.type = ltype
        self.bottoms: List[str] = list(proto.bottom)
        self.tops: List[str] = list(proto.top)

    def param(self, field: str) -> Any:
        """The layer's `field` parameter message (its defaults when absent, or in a V1 layer that has no such field)."""
        try:
            return getattr(self.proto, field)
        except AttributeError:
            from . import schema
            return getattr(schema.LayerParameter(), field)

    def has(self, field: str) -> bool:
        try:
            return bool(self.proto.HasField(field))
        except ValueError:
            return False

    def __str__(self) -> str:
        return "layer '%s' (%s)" % (self.name, self.type)


class ImportContext:
    """State of one CaffeParser.parse call."""

    def __init__(self, network: Any, weights: Dict[str, Tuple[str, List[np.ndarray]]],
                 warn: Callable[[str], None], plugin_factory: Any, plugin_namespace: str) -> None:
        self.network = network
        self.implicit = bool(network.has_implicit_batch_dimension)
        self.weights = weights
        self.warn = warn
        self.plugin_factory = plugin_factory
        self.plugin_namespace = plugin_namespace
        self.blobs: Dict[str, Any] = {}
        self.input_names: Set[str] = set()  # the network inputs' names (importer.add_input)
        self.layer: Optional[Layer] = None  # the layer being imported
        self._aux = 0

    # ---- errors ------------------------------------------------------------------------------------------------

    def fail(self, msg: str) -> CaffeParserError:
        """An error naming the layer being imported."""
        return CaffeParserError("%s: %s" % (self.layer, msg) if self.layer is not None else msg)

    # ---- blobs -------------------------------------------------------------------------------------------------

    def bottom(self, i: int) -> Any:
        L = self.layer
        assert L is not None
        if i >= len(L.bottoms):
            raise self.fail("needs at least %d bottom blob%s, has %d" % (i + 1, "s" if i else "", len(L.bottoms)))
        name = L.bottoms[i]
        if name not in self.blobs:
            raise self.fail("bottom blob '%s' is not produced by an earlier layer or a network input" % name)
        return self.blobs[name]

    def bottoms(self) -> List[Any]:
        L = self.layer
        assert L is not None
        return [self.bottom(i) for i in range(len(L.bottoms))]

    def set_top(self, top: str, tensor: Any) -> None:
        """Records `tensor` as blob `top` and names it so.  An in-place layer (top == an existing blob) gives the new
        tensor the blob's name; the previous tensor is renamed '<layer>/<top>_in' (a network input keeps its name
        and the new tensor is then '<layer>/<top>')."""
        if any(tensor is t for t in self.blobs.values()):  # an alias (Split, Dropout): the tensor keeps its name
            if tensor.is_network_input and top != tensor.name:  # ... but an input cannot be marked as an output
                tensor = self.named(self.network.add_identity(tensor)).get_output(0)
                tensor.name = top
            self.blobs[top] = tensor
            return
        layer = self.layer.name if self.layer else ""
        old = self.blobs.get(top)
        if top in self.input_names:  # the network input keeps its name
            tensor.name = "%s/%s" % (layer, top)
        else:
            if old is not None and old.name == top:
                old.name = "%s/%s_in" % (layer, top)
            tensor.name = top
        self.blobs[top] = tensor

    # ---- shapes and axes ---------------------------------------------------------------------------------------

    def full_shape(self, t: Any) -> List[int]:
        """Caffe's shape of tensor `t` (with BATCH first in an implicit-batch network)."""
        shape = [int(d) for d in t.shape]
        return [BATCH] + shape if self.implicit else shape

    def axis(self, a: int, ndim: int, field: str) -> int:
        """Caffe's axis `a` (negative counts from the end) of an `ndim`-D blob, checked."""
        if not -ndim <= a < ndim:
            raise self.fail("%s %d is out of range for a %d-D blob" % (field, a, ndim))
        return a + ndim if a < 0 else a

    def trt_axis(self, a: int, field: str) -> int:
        """The network axis of Caffe axis `a` (already normalized)."""
        if not self.implicit:
            return a
        if a == 0:
            raise self.fail("%s is the batch axis, which an implicit-batch network cannot address "
                            "(create the network with the EXPLICIT_BATCH flag)" % field)
        return a - 1

    def trt_shape(self, full: Sequence[int], what: str) -> Tuple[int, ...]:
        """The network shape of Caffe shape `full`."""
        if not self.implicit:
            return tuple(int(d) for d in full)
        if not full or full[0] != BATCH or BATCH in full[1:]:
            raise self.fail("%s would change the batch axis, which an implicit-batch network cannot do "
                            "(create the network with the EXPLICIT_BATCH flag)" % what)
        return tuple(int(d) for d in full[1:])

    # ---- layers ------------------------------------------------------------------------------------------------

    def named(self, layer: Any) -> Any:
        """Names a network layer after the Caffe layer (helper layers get '<name>/<n>'); returns it."""
        L = self.layer
        assert L is not None
        self._aux += 1
        layer.name = L.name if self._aux == 1 else "%s/%d" % (L.name, self._aux - 1)
        return layer

    def start(self, layer: Layer) -> None:
        self.layer = layer
        self._aux = 0

    def reshape(self, t: Any, full: Sequence[int], what: str = "the reshape") -> Any:
        """`t` reshaped to Caffe shape `full` (a shuffle layer), or `t` itself when the shape does not change."""
        dims = self.trt_shape(full, what)
        if tuple(int(d) for d in t.shape) == dims:
            return t
        s = self.named(self.network.add_shuffle(t))
        s.reshape_dims = dims
        return s.get_output(0)

    def constant(self, array: np.ndarray, full: Sequence[int]) -> Any:
        """A constant tensor holding `array` broadcastable as Caffe shape `full` (its leading 1 dropped in an
        implicit network, where the batch is implicit)."""
        full = [int(d) for d in full]
        dims = full[1:] if self.implicit else full
        if self.implicit and full[0] != 1:
            raise self.fail("a constant of shape %s spans the batch axis, which an implicit-batch network cannot "
                            "hold" % full)
        arr = np.ascontiguousarray(np.asarray(array, np.float32).reshape(dims))
        return self.named(self.network.add_constant(tuple(dims), arr)).get_output(0)

    # ---- weights -----------------------------------------------------------------------------------------------

    def blobs_of(self, count: Tuple[int, int], what: str) -> List[np.ndarray]:
        """The layer's weight blobs from the .caffemodel (or the prototxt's own `blobs`), `count` = (min, max)
        blobs; `what` describes them for the message ("weights and bias")."""
        L = self.layer
        assert L is not None
        if len(L.proto.blobs):
            from .reader import blob_array
            blobs = [blob_array(b, "%s blob %d" % (L, i)) for i, b in enumerate(L.proto.blobs)]
        elif L.name in self.weights:
            blobs = self.weights[L.name][1]
        else:
            raise self.fail("has no weights in the .caffemodel (a layer of that name with %s is needed)" % what)
        lo, hi = count
        if not lo <= len(blobs) <= hi:
            want = str(lo) if lo == hi else "%d to %d" % (lo, hi)
            raise self.fail("the .caffemodel holds %d weight blob%s for it; expected %s (%s)"
                            % (len(blobs), "" if len(blobs) == 1 else "s", want, what))
        return blobs

    def blob(self, blobs: List[np.ndarray], i: int, shape: Sequence[int], what: str) -> np.ndarray:
        """Blob `i` reshaped to `shape`; its element count must match (Caffe's legacy 4-D shapes such as
        [1, 1, K, N] for an InnerProduct are accepted)."""
        b = blobs[i]
        shape = [int(d) for d in shape]
        n = int(np.prod(shape, dtype=np.int64))
        if b.size != n:
            raise self.fail("weight blob %d (%s) has shape %s (%d values); expected %s (%d values)"
                            % (i, what, list(b.shape), b.size, shape, n))
        return np.ascontiguousarray(b.reshape(shape), np.float32)
