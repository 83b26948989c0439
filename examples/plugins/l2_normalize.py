"""l2_normalize rebuilt from the L2Norm_Helper_TRT plugin and a reduce:

    y = x / sqrt(max(sum(x^2 over axes), eps))
      = x * rsqrt(max(reduce_sum(x * x), eps))      -> elementwise PROD, reduce SUM,
                                                        L2Norm_Helper op 0 (max with eps),
                                                        L2Norm_Helper op 1 (rsqrt), PROD

TensorFlow exports tf.math.l2_normalize this way; the helper plugin supplies the two pieces
TensorRT's layers lack (max with a scalar, reciprocal square root).
"""
import os
import sys

import numpy as np

try:
    import trtlite as trt
except ImportError:  # run from a source checkout where trtlite is built in place, not installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import trtlite as trt


def _helper(network: trt.INetworkDefinition, x: trt.ITensor, op_type: int, eps: float = 1e-12) -> trt.ITensor:
    creator = trt.get_plugin_registry().get_plugin_creator("L2Norm_Helper_TRT", "1", "")
    if creator is None:
        raise RuntimeError("the built-in plugin L2Norm_Helper_TRT is not registered")
    fields = trt.PluginFieldCollection([
        trt.PluginField("op_type", np.array([op_type], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("eps", np.array([eps], np.float32), trt.PluginFieldType.FLOAT32)])
    plugin = creator.create_plugin(name=f"l2norm_helper_op{op_type}", field_collection=fields)
    return network.add_plugin_v2(inputs=[x], plugin=plugin).get_output(0)


def l2_normalize(network: trt.INetworkDefinition, x: trt.ITensor, axes: int, eps: float = 1e-12) -> trt.ITensor:
    """Adds layers computing x / sqrt(max(sum(x**2, axes), eps)); returns the output tensor.

    `axes` is a reduce bitmask (trt.ReduceOperation axes)."""
    square = network.add_elementwise(x, x, trt.ElementWiseOperation.PROD).get_output(0)
    sumsq = network.add_reduce(square, trt.ReduceOperation.SUM, axes, True).get_output(0)
    clamped = _helper(network, sumsq, 0, eps)
    inv_norm = _helper(network, clamped, 1)
    return network.add_elementwise(x, inv_norm, trt.ElementWiseOperation.PROD).get_output(0)


if __name__ == "__main__":
    trt.init_libnvinfer_plugins(trt.Logger(), "")
    builder = trt.Builder(trt.Logger())
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = network.add_input("x", trt.float32, (2, 8))
    network.mark_output(l2_normalize(network, x, axes=1 << 1))
    engine = builder.build_engine(network, builder.create_builder_config())
    data = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    y = list(engine.create_execution_context().infer({"x": data}).values())[0]
    print(y, np.linalg.norm(y, axis=1))
