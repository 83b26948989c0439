"""Circular padding as a Python plugin, three ways: IPluginV2DynamicExt, IPluginV3 and the trtlite.plugin
(``tensorrt.plugin``) decorators -- the structure of NVIDIA's ``python_plugin`` sample (circ_pad_plugin_*.py and
the quickly-deployable-plugins sample), written for trtlite: the plugins get host addresses instead of CUDA
pointers, so the CuPy/CUDA calls become numpy views of host memory and PyTorch runs on the CPU.

    python examples/plugins/circ_pad_plugin.py [--precision fp32|fp16]

Checks each variant against ``np.pad(..., mode="wrap")``.
"""
from __future__ import annotations

import argparse
import ctypes
import json
from typing import Any, Tuple

import numpy as np
import numpy.typing as npt

import trtlite as trt
import trtlite.plugin as trtp

try:  # the V2DynamicExt variant pads with torch like NVIDIA's sample; numpy does it when torch is missing
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]


def volume(d) -> int:
    return int(np.prod(d))


def host_array(address: int, shape, dtype) -> np.ndarray:
    """A numpy view of `volume(shape)` elements of `dtype` at a host address (what cp.ndarray(memptr=...) is to
    a CUDA pointer)."""
    dtype = np.dtype(dtype)
    n = volume(shape) * dtype.itemsize
    buf = (ctypes.c_char * n).from_address(address)
    return np.frombuffer(buf, dtype).reshape(tuple(shape))


def circ_pad_numpy(x: np.ndarray, pads) -> np.ndarray:
    """torch.nn.functional.pad(mode='circular') semantics: pads[2i], pads[2i+1] pad the i-th last dim."""
    width = [(0, 0)] * x.ndim
    for i in range(len(pads) // 2):
        width[x.ndim - i - 1] = (int(pads[2 * i]), int(pads[2 * i + 1]))
    return np.pad(x, width, mode="wrap")


def output_dims(inputs, pads, expr_builder):
    out = trt.DimsExprs(inputs[0])
    for i in range(np.size(pads) // 2):
        out[len(out) - i - 1] = expr_builder.operation(
            trt.DimensionOperation.SUM, inputs[0][len(out) - i - 1],
            expr_builder.constant(int(pads[i * 2] + pads[i * 2 + 1])))
    return out


# ---- IPluginV2DynamicExt + IPluginCreator ---------------------------------------------------------------------------

class CircPadPlugin(trt.IPluginV2DynamicExt):
    def __init__(self, fc=None):
        trt.IPluginV2DynamicExt.__init__(self)
        self.pads: Any = []
        self.X_shape = []
        self.num_outputs = 1
        self.plugin_namespace = ""
        self.plugin_type = "CircPadPlugin"
        self.plugin_version = "1"
        if fc is not None:
            assert fc[0].name == "pads"
            self.pads = fc[0].data

    def get_output_datatype(self, index, input_types):
        return input_types[0]

    def get_output_dimensions(self, output_index, inputs, exprBuilder):
        return output_dims(inputs, self.pads, exprBuilder)

    def serialize(self):
        return json.dumps({"pads": np.asarray(self.pads).tolist()})

    def configure_plugin(self, inp, out):
        self.X_shape = list(inp[0].desc.dims)

    def supports_format_combination(self, pos, in_out, num_inputs):
        assert num_inputs == 1
        desc = in_out[pos]
        if desc.format != trt.TensorFormat.LINEAR:
            return False
        if pos == 0:
            return desc.type == trt.DataType.FLOAT or desc.type == trt.DataType.HALF
        if pos == 1:
            return in_out[0].type == desc.type
        assert False

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        inp_dtype = trt.nptype(input_desc[0].type)
        a = host_array(inputs[0], input_desc[0].dims, inp_dtype)
        c = host_array(outputs[0], (volume(output_desc[0].dims),), inp_dtype)
        pads = np.asarray(self.pads).tolist()
        if torch is not None:
            out = torch.nn.functional.pad(torch.from_numpy(a.copy()), pads, mode="circular").numpy()
        else:
            out = circ_pad_numpy(a, pads)
        np.copyto(c, out.reshape(-1))
        return 0

    def clone(self):
        cloned = CircPadPlugin()
        cloned.__dict__.update(self.__dict__)
        return cloned


class CircPadPluginCreator(trt.IPluginCreator):
    def __init__(self):
        trt.IPluginCreator.__init__(self)
        self.name = "CircPadPlugin"
        self.plugin_namespace = ""
        self.plugin_version = "1"
        self.field_names = trt.PluginFieldCollection([trt.PluginField("pads", np.array([]), trt.PluginFieldType.INT32)])

    def create_plugin(self, name, fc):
        return CircPadPlugin(fc)

    def deserialize_plugin(self, name, data):
        j = json.loads(data)
        p = CircPadPlugin()
        p.pads = np.array(j["pads"], np.int32)
        return p


# ---- IPluginV3 + IPluginCreatorV3One --------------------------------------------------------------------------------

class CircPadPluginV3(trt.IPluginV3, trt.IPluginV3OneCore, trt.IPluginV3OneBuild, trt.IPluginV3OneRuntime):
    def __init__(self, fc=None, phase=None):
        trt.IPluginV3.__init__(self)
        trt.IPluginV3OneCore.__init__(self)
        trt.IPluginV3OneBuild.__init__(self)
        trt.IPluginV3OneRuntime.__init__(self)
        self.pads: Any = []
        self.X_shape = []
        self.num_outputs = 1
        self.plugin_namespace = ""
        self.plugin_name = "CircPadPluginV3"
        self.plugin_version = "1"
        self.timing_cache_id = ""
        if fc is not None:
            assert fc[0].name == "pads"
            self.pads = fc[0].data
        if phase is not None:
            self.phase = phase

    def get_capability_interface(self, type):
        return self

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, exprBuilder):
        return [output_dims(inputs, self.pads, exprBuilder)]

    def get_fields_to_serialize(self):
        return trt.PluginFieldCollection([trt.PluginField("pads", self.pads, trt.PluginFieldType.INT32)])

    def configure_plugin(self, inp, out):
        pass

    def on_shape_change(self, inp, out):
        self.X_shape = list(inp[0].dims)

    def supports_format_combination(self, pos, in_out, num_inputs):
        assert num_inputs == 1
        desc = in_out[pos].desc
        if desc.format != trt.TensorFormat.LINEAR:
            return False
        if pos == 0:
            return desc.type == trt.DataType.FLOAT or desc.type == trt.DataType.HALF
        if pos == 1:
            return in_out[0].desc.type == desc.type
        assert False

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        inp_dtype = trt.nptype(input_desc[0].type)
        a = host_array(inputs[0], input_desc[0].dims, inp_dtype)
        c = host_array(outputs[0], output_desc[0].dims, inp_dtype)
        c[...] = circ_pad_numpy(a, self.pads)

    def attach_to_context(self, context):
        return self.clone()

    def set_tactic(self, tactic):
        pass

    def clone(self):
        cloned = CircPadPluginV3()
        cloned.__dict__.update(self.__dict__)
        return cloned


class CircPadPluginV3Creator(trt.IPluginCreatorV3One):
    def __init__(self):
        trt.IPluginCreatorV3One.__init__(self)
        self.name = "CircPadPluginV3"
        self.plugin_namespace = ""
        self.plugin_version = "1"
        self.field_names = trt.PluginFieldCollection([trt.PluginField("pads", np.array([]), trt.PluginFieldType.INT32)])

    def create_plugin(self, name, fc, phase):
        return CircPadPluginV3(fc, phase)


# ---- trtlite.plugin (tensorrt.plugin) ------------------------------------------------------------------------------

@trtp.register("sample::circ_pad_plugin")
def circ_pad_plugin_desc(inp0: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
    ndim = inp0.ndim
    out_desc = inp0.like()
    for i in range(np.size(pads) // 2):
        out_desc.shape_expr[ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
    return out_desc


@trtp.impl("sample::circ_pad_plugin")
def circ_pad_plugin_impl(inp0: trtp.Tensor, pads: npt.NDArray[np.int32], outputs: Tuple[trtp.Tensor],
                         stream: int) -> None:
    if torch is not None:  # the sample's code, without device="cuda" and the CUDA stream
        inp_t = torch.as_tensor(inp0)
        out_t = torch.as_tensor(outputs[0])
        out = torch.nn.functional.pad(inp_t, pads.tolist(), mode="circular")
        out_t.copy_(out)
    else:
        np.asarray(outputs[0])[...] = circ_pad_numpy(np.asarray(inp0), pads.tolist())


# ---- building and running ------------------------------------------------------------------------------------------

def registered():
    reg = trt.get_plugin_registry()
    if reg.get_plugin_creator("CircPadPlugin", "1", "") is None:
        reg.register_creator(CircPadPluginCreator(), "")
    if reg.get_plugin_creator("CircPadPluginV3", "1", "") is None:
        reg.register_creator(CircPadPluginV3Creator(), "")
    return reg


def build_and_run(kind: str, X: np.ndarray, pads=(1, 1, 1, 1)) -> np.ndarray:
    """Builds a one-plugin network (`kind`: "v2dynext", "v3" or "trtp"), serializes it, loads the plan and runs X."""
    reg = registered()
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    dtype = trt.float32 if X.dtype == np.float32 else trt.float16
    x = network.add_input(name="X", dtype=dtype, shape=X.shape)
    fields = trt.PluginFieldCollection([trt.PluginField("pads", np.array(pads, np.int32), trt.PluginFieldType.INT32)])
    if kind == "v2dynext":
        plugin = reg.get_plugin_creator("CircPadPlugin", "1", "").create_plugin("CircPadPlugin", fields)
        layer = network.add_plugin_v2([x], plugin)
    elif kind == "v3":
        plugin = reg.get_creator("CircPadPluginV3", "1", "").create_plugin("CircPadPluginV3", fields,
                                                                           trt.TensorRTPhase.BUILD)
        layer = network.add_plugin_v3([x], [], plugin)
    else:
        layer = network.add_plugin(trtp.op.sample.circ_pad_plugin(x, pads=np.array(pads, np.int32)))
    layer.get_output(0).name = "Y"
    network.mark_output(layer.get_output(0))
    plan = builder.build_serialized_network(network, builder.create_builder_config())
    if plan is None:
        raise RuntimeError("build failed")
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    return engine.create_execution_context().infer({"X": X})["Y"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16"])
    args = parser.parse_args()
    precision = np.float32 if args.precision == "fp32" else np.float16
    X = np.random.default_rng(0).normal(size=(10, 3, 32, 32)).astype(precision)
    pads = (1, 1, 1, 1)
    Y_ref = np.pad(X, [[0, 0], [0, 0], [pads[0], pads[1]], [pads[2], pads[3]]], "wrap")
    ok = True
    for kind in ("v2dynext", "v3", "trtp"):
        Y = build_and_run(kind, X, pads)
        good = Y.shape == Y_ref.shape and np.allclose(Y, Y_ref)
        print(f"{kind}: inference result {'correct' if good else 'incorrect'}!")
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
