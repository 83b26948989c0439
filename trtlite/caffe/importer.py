"""The model importer: network inputs, then every layer of the deploy file in order (Caffe's TEST-phase rules
decide which layers exist), each through its importer (registry.IMPORTERS) or the plugin factory."""
from __future__ import annotations

from typing import Any, List

from .. import _enums
from .context import ImportContext, Layer
from .registry import IMPORTERS
from . import layers_conv, layers_norm, layers_pointwise, layers_shape, layers_ssd  # noqa: F401  (fill IMPORTERS)
from . import schema

TEST = 1  # caffe.Phase


def _rule_matches(rule: Any) -> bool:
    """Caffe's NetStateRule against the deploy state (phase TEST, level 0, no stages)."""
    if rule.HasField("phase") and rule.phase != TEST:
        return False
    if rule.HasField("min_level") and 0 < rule.min_level:
        return False
    if rule.HasField("max_level") and 0 > rule.max_level:
        return False
    return not len(rule.stage)


def included(proto: Any) -> bool:
    """Whether a layer exists in the TEST phase (include rules: one must match; exclude rules: none may)."""
    if len(proto.include):
        return any(_rule_matches(r) for r in proto.include)
    return not any(_rule_matches(r) for r in proto.exclude)


def _add_input(ctx: ImportContext, name: str, dims: List[int], where: str) -> None:
    if not dims or any(d < 1 for d in dims):
        raise ctx.fail("input '%s': %s gives the shape %s; every dim must be >= 1" % (name, where, dims))
    if name in ctx.blobs:
        raise ctx.fail("input '%s' is declared twice" % name)
    shape = dims[1:] if ctx.implicit else dims
    t = ctx.network.add_input(name, _enums.DataType.FLOAT, tuple(shape))
    ctx.blobs[name] = t
    ctx.input_names.add(name)


def import_net(ctx: ImportContext, net: Any) -> None:
    """Fills ctx.network from the NetParameter `net` (raises CaffeParserError)."""
    if len(net.input_shape) and len(net.input_dim):
        raise ctx.fail("the net gives both input_shape and input_dim")
    for i, name in enumerate(net.input):
        if len(net.input_shape):
            if len(net.input_shape) != len(net.input):
                raise ctx.fail("%d inputs but %d input_shape entries" % (len(net.input), len(net.input_shape)))
            _add_input(ctx, name, [int(d) for d in net.input_shape[i].dim], "input_shape")
        else:
            if len(net.input_dim) != 4 * len(net.input):
                raise ctx.fail("%d inputs need %d input_dim values (4 each), got %d"
                               % (len(net.input), 4 * len(net.input), len(net.input_dim)))
            _add_input(ctx, name, [int(d) for d in net.input_dim[4 * i:4 * i + 4]], "input_dim")
    if len(net.layer) and len(net.layers):
        raise ctx.fail("the net mixes new-style 'layer' and V1 'layers' entries")
    v1 = bool(len(net.layers))
    for proto in (net.layers if v1 else net.layer):
        if not included(proto):
            continue
        ltype = schema.V1_TYPE_BY_NUMBER.get(proto.type, str(proto.type)) if v1 else proto.type
        layer = Layer(proto, ltype)
        ctx.start(layer)
        _import_layer(ctx, layer)
    ctx.layer = None


def _import_layer(ctx: ImportContext, L: Layer) -> None:
    if L.type == "Input":
        shapes = L.param("input_param").shape
        if len(shapes) not in (1, len(L.tops)):
            raise ctx.fail("input_param has %d shapes for %d tops" % (len(shapes), len(L.tops)))
        for i, top in enumerate(L.tops):
            _add_input(ctx, top, [int(d) for d in shapes[i if len(shapes) > 1 else 0].dim], "input_param.shape")
        return
    factory = ctx.plugin_factory
    if factory is not None and factory.is_plugin_v2(L.name):
        weights = list(ctx.weights[L.name][1]) if L.name in ctx.weights else []
        plugin = factory.create_plugin(L.name, weights, ctx.plugin_namespace)
        if plugin is None:
            raise ctx.fail("plugin_factory_v2.create_plugin returned None")
        layer = ctx.named(ctx.network.add_plugin_v2(ctx.bottoms(), plugin))
        outs = [layer.get_output(i) for i in range(layer.num_outputs)]
    else:
        fn = IMPORTERS.get(L.type)
        if fn is None:
            raise ctx.fail("layer type '%s' is not supported by trtlite's Caffe parser (supported: "
                           "trtlite.caffe.supported_layers(); custom layers: plugin_factory_v2)" % L.type)
        outs = fn(ctx, L)
    if len(outs) < len(L.tops):
        raise ctx.fail("has %d tops; the layer makes %d outputs" % (len(L.tops), len(outs)))
    names = list(L.tops) + ["%s_%s" % (L.tops[-1] if L.tops else L.name, "keep_count" if L.type ==
                                       "DetectionOutput" else "out%d" % i) for i in range(len(L.tops), len(outs))]
    for name, t in zip(names, outs):
        ctx.set_top(name, t)
