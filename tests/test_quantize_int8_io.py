"""int8 between int8 layers (builder pass qdq_int8_io): a fused int8 layer whose output Q -> DQ feeds only int8
layers writes int8 / uint8 codes, and they read them, instead of a fake-quantized fp32 tensor.  Each network is
built with the pass on and off (same outputs, to the bit: the consumers see the same integers) and compared with
a numpy float64 model of the quantized math; the inspector shows the int8 tensors and the steps' precision.  At
model level: a QDQ ResNet-18-like network from onnxruntime's quantize_static against onnxruntime on the same
file."""
import json
import os
import struct
import zlib

import numpy as np
import pytest

import trtlite as trt

from conftest import Net, rerun_with_cpu_mask
from test_quantize_fuse import _fq, _int8_weights, conv2d_np, q_np


# the int8 convolution / GEMM kernels: the AMX one is listed first where the CPU has AMX-INT8
INT8_CONV_KERNELS = ("qlinear.int8", "qlinear.amx_int8")


def _build(make, x, io=True, extra_outputs=()):
    n = Net()
    if not io:
        n.config.set_pass_enabled("qdq_int8_io", False)
    xin = n.network.add_input("x", trt.float32, x.shape)
    outs = make(n.network, xin)
    for name, t in outs:
        t.name = name
        n.network.mark_output(t)
    eng = n.build()
    layers = json.loads(eng.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    return eng, eng.create_execution_context().infer({"x": x}), layers


def _dtypes(layers):
    """{tensor name: dtype} of every step's outputs."""
    return {o["name"]: o["dtype"] for l in layers for o in l["outputs"]}


S0, Z0 = 0.02, 128           # input: uint8
S1, Z1 = 0.03, 0             # after conv1 + relu: uint8 (asymmetric range starting at 0)
S2 = 0.05                    # after conv2: int8 (zero point -3) or uint8 (zero point 7)


def _chain(rng, out_type2=trt.int8, mark_mid=False):
    q1, s1, w1 = _int8_weights(rng, (7, 5, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (6, 7, 1, 1), per_channel=False)
    q3, s3, w3 = _int8_weights(rng, (4, 6, 3, 3))
    b1 = rng.standard_normal(7).astype(np.float32) * 0.2
    z2 = -3 if out_type2 == trt.int8 else 7

    def make(net, xin):
        c1 = net.add_convolution_nd(_fq(net, xin, S0, Z0), 7, (3, 3), w1, b1)
        c1.padding_nd = (1, 1)
        r1 = net.add_activation(c1.get_output(0), trt.ActivationType.RELU).get_output(0)
        y1 = _fq(net, r1, S1, Z1, trt.uint8)
        c2 = net.add_convolution_nd(y1, 6, (1, 1), w2)
        y2 = _fq(net, c2.get_output(0), S2, z2, out_type2)
        c3 = net.add_convolution_nd(y2, 4, (3, 3), w3)
        c3.stride_nd = (2, 2)
        outs = [("y", c3.get_output(0))]
        if mark_mid:
            outs.append(("mid", y1))
        return outs

    def model(x):
        xq = q_np(x, S0, Z0, 0, 255) - Z0
        a1 = conv2d_np(xq, q1.astype(np.float64), pad=1) * np.float64(np.float32(S0))
        v1 = np.maximum(a1 * s1.astype(np.float64).reshape(1, -1, 1, 1) + b1.reshape(1, -1, 1, 1), 0)
        c1 = q_np(v1, S1, Z1, 0, 255) - Z1
        v2 = conv2d_np(c1, q2.astype(np.float64)) * np.float64(np.float32(S1)) * np.float64(s2[0])
        lo, hi = (-128, 127) if out_type2 == trt.int8 else (0, 255)
        c2 = q_np(v2, S2, z2, lo, hi) - z2
        y = conv2d_np(c2, q3.astype(np.float64), stride=2) * np.float64(np.float32(S2))
        return y * s3.astype(np.float64).reshape(1, -1, 1, 1), c1 * np.float64(np.float32(S1))
    step = np.float32(S2) * np.abs(q3).reshape(4, -1).sum(1).max() * s3.max()  # one LSB of c2 through conv3
    return make, model, step


def _check(got, ref, step):
    d = np.abs(got.astype(np.float64) - ref)
    assert d.max() <= step * 1.0001, d.max() / step
    assert np.mean(d > 1e-4 * max(1.0, np.abs(ref).max())) < 0.02


@pytest.mark.parametrize("out_type2", [trt.int8, trt.uint8])
def test_chain_keeps_int8_between_layers(out_type2, rng):
    x = (rng.standard_normal((2, 5, 9, 11)) * 1.5).astype(np.float32)
    make, model, step = _chain(rng, out_type2)
    _, on, layers = _build(make, x)
    _, off, layers_off = _build(make, x, io=False)
    assert [l["kernel"] in ("qlinear.int8", "qlinear.amx_int8") for l in layers] == [True] * 3, layers
    assert all(l["precision"] == "INT8" for l in layers)
    # the two tensors between the three int8 steps are int8 codes; the network input and output stay FLOAT
    assert [l["inputs"][0]["dtype"] for l in layers] == ["FLOAT", "UINT8", trt.DataType(out_type2).name]
    assert [l["outputs"][0]["dtype"] for l in layers] == ["UINT8", trt.DataType(out_type2).name, "FLOAT"]
    assert set(_dtypes(layers_off).values()) == {"FLOAT"}
    # where int8 meets FLOAT (the inspector's "reformat"): only at the chain's ends with the pass, at every
    # layer without it
    t = trt.DataType(out_type2).name
    assert [l["reformat"] for l in layers] == [["input FLOAT->UINT8"], [], ["output INT32->FLOAT"]]
    assert [l["reformat"] for l in layers_off] == [["input FLOAT->UINT8", "output UINT8->FLOAT"],
                                                   ["input FLOAT->UINT8", "output %s->FLOAT" % t],
                                                   ["input FLOAT->%s" % t, "output INT32->FLOAT"]]
    np.testing.assert_array_equal(on["y"], off["y"])  # the same integers reach every layer
    _check(on["y"], model(x)[0], step)


def test_float_consumer_keeps_float_tensor(rng):
    """A fake-quantized tensor that is also a network output stays FLOAT (the reformat back to float is the fused
    output Q -> DQ of its producer); the other edge still becomes int8."""
    x = rng.standard_normal((1, 5, 8, 6)).astype(np.float32)
    make, model, step = _chain(rng, mark_mid=True)
    _, on, layers = _build(make, x)
    _, off, _ = _build(make, x, io=False)
    assert [l["outputs"][0]["dtype"] for l in layers] == ["FLOAT", "INT8", "FLOAT"], layers
    for k in ("y", "mid"):
        np.testing.assert_array_equal(on[k], off[k])
    ref_y, ref_mid = model(x)
    _check(on["y"], ref_y, step)
    assert np.abs(on["mid"] - ref_mid).max() <= S1 * 1.0001


@pytest.mark.parametrize("io", [True, False])
def test_max_pooling_between_int8_layers_pools_codes(io, rng):
    """conv -> Q -> DQ -> max pool (padded) -> Q -> DQ (same parameters) -> conv: the pooling reads and writes
    int8 codes (reference kernel), the max of the codes being the code of the max."""
    x = rng.standard_normal((2, 3, 10, 9)).astype(np.float32)
    q1, s1, w1 = _int8_weights(rng, (6, 3, 3, 3))
    q2, s2, w2 = _int8_weights(rng, (4, 6, 1, 1))

    def make(net, xin):
        c1 = net.add_convolution_nd(_fq(net, xin, S0, Z0), 6, (3, 3), w1)
        y1 = _fq(net, c1.get_output(0), S2, -3, trt.int8)
        p = net.add_pooling_nd(y1, trt.PoolingType.MAX, (3, 3))
        p.stride_nd = (2, 2)
        p.padding_nd = (1, 1)
        c2 = net.add_convolution_nd(_fq(net, p.get_output(0), S2, -3, trt.int8), 4, (1, 1), w2)
        return [("y", c2.get_output(0))]
    _, out, layers = _build(make, x, io=io)
    assert [l["type"] for l in layers] == ["QLINEAR", "POOLING", "QLINEAR"], layers
    assert [l["outputs"][0]["dtype"] for l in layers] == (["INT8", "INT8", "FLOAT"] if io else ["FLOAT"] * 3)
    assert [l["precision"] for l in layers] == ["INT8", "INT8" if io else "FLOAT", "INT8"]
    xq = q_np(x, S0, Z0, 0, 255) - Z0
    v1 = conv2d_np(xq, q1.astype(np.float64)) * np.float64(np.float32(S0)) * s1.astype(np.float64).reshape(1, -1, 1, 1)
    c1 = q_np(v1, S2, -3, -128, 127)
    cp = np.pad(c1, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-1000)
    oh, ow = (8 + 2 - 3) // 2 + 1, (7 + 2 - 3) // 2 + 1
    pooled = np.max([cp[:, :, i:i + 2 * oh:2, j:j + 2 * ow:2] for i in range(3) for j in range(3)], axis=0) + 3
    y = conv2d_np(pooled, q2.astype(np.float64)) * np.float64(np.float32(S2)) * s2.astype(np.float64).reshape(1, -1, 1, 1)
    _check(out["y"], y, np.float32(S2) * np.abs(q2).reshape(4, -1).sum(1).max() * s2.max())


def test_plan_naming_a_float_kernel_for_int8_pooling_is_refused(rng):
    """A plan whose int8 max pooling names the fp32 optimized kernel (which would read 4 bytes an element) does
    not load."""
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    _, _, w1 = _int8_weights(rng, (4, 3, 3, 3))
    _, _, w2 = _int8_weights(rng, (2, 4, 1, 1))

    def make(net, xin):
        c1 = net.add_convolution_nd(_fq(net, xin, S0, Z0), 4, (3, 3), w1)
        p = net.add_pooling_nd(_fq(net, c1.get_output(0), S2, -3, trt.int8), trt.PoolingType.MAX, (2, 2))
        c2 = net.add_convolution_nd(_fq(net, p.get_output(0), S2, -3, trt.int8), 2, (1, 1), w2)
        return [("y", c2.get_output(0))]
    eng, out, layers = _build(make, x)
    assert layers[1]["kernel"] == "pooling.codes_max" and layers[1]["outputs"][0]["dtype"] == "INT8", layers
    plan = bytes(eng.serialize())
    # the kernel name and the precision recorded after it (INT8 = 2 -> the fp32 kernel's 0)
    old = struct.pack("<I", 17) + b"pooling.codes_max" + struct.pack("<i", 2)
    new = struct.pack("<I", 10) + b"pooling.2d" + struct.pack("<i", 0)
    assert plan.count(old) == 1
    bad = bytearray(plan.replace(old, new))
    struct.pack_into("<Q", bad, 16, len(bad) - 64)
    struct.pack_into("<I", bad, 24, zlib.crc32(bytes(bad[64:])) & 0xFFFFFFFF)
    runtime = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR))
    with pytest.raises(trt.PlanError, match="cannot pool INT8 codes"):
        runtime.deserialize_cuda_engine(bytes(bad))
    np.testing.assert_array_equal(runtime.deserialize_cuda_engine(plan).create_execution_context().infer({"x": x})["y"],
                                  out["y"])


def test_plan_round_trip_keeps_int8_tensors(rng):
    x = rng.standard_normal((1, 5, 7, 7)).astype(np.float32)
    make, _, _ = _chain(rng)
    eng, out, _ = _build(make, x)
    eng2 = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(eng.serialize())
    layers = json.loads(eng2.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))["layers"]
    assert [l["outputs"][0]["dtype"] for l in layers] == ["UINT8", "INT8", "FLOAT"]
    np.testing.assert_array_equal(eng2.create_execution_context().infer({"x": x})["y"], out["y"])


@pytest.mark.skipif(bool(os.environ.get("TRTL_CPU_MASK")), reason="runs only in the parent")
@pytest.mark.parametrize("mask", ["1f", "0"])
def test_chain_on_avx2_and_portable_paths(mask):
    """The chain tests again in a process whose TRTL_CPU_MASK hides AVX-512 and VNNI (1f: the exact AVX2 int16
    path) or every feature (0: the portable path); the features are read once per process."""
    rerun_with_cpu_mask(__file__, mask, 3, select="chain_keeps or float_consumer")


# ---- model level: onnxruntime's quantize_static ResNet-18-like network ----------------------------------------------

@pytest.mark.parametrize("act_type", ["uint8", "int8"])
def test_qdq_resnet_matches_onnxruntime(tmp_path, rng, act_type):
    from qdq_models import ort, ort_run_file, output_scale, qdq_model
    from onnx_helpers import parse
    from test_quantize_onnx import check_close
    path, shape = qdq_model(tmp_path, "resnet", per_channel=True, act_type=act_type)
    t = act_type.upper()  # int8 (symmetric): quantize_static keeps each ReLU between two Q/DQ pairs
    scale = output_scale(path)
    engines = {}
    for io in (True, False):
        logger = trt.Logger(trt.Logger.ERROR)
        builder, network, _ = parse(open(path, "rb").read(), logger)
        config = builder.create_builder_config()
        config.set_pass_enabled("int8_tactics", False)  # the int8 kernels (test_int8_tactics.py: the fp32 ones)
        if not io:
            config.set_pass_enabled("qdq_int8_io", False)
        engines[io] = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(network, config))
    layers = json.loads(engines[True].create_engine_inspector().get_engine_information(
        trt.LayerInformationFormat.JSON))["layers"]
    int8_steps = [l for l in layers if l["precision"] == "INT8"]
    convs = [l for l in int8_steps if l["kernel"] in INT8_CONV_KERNELS]
    assert len(convs) == 11, [l["name"] for l in layers]  # 10 convolutions (2 projections) and the Gemm
    assert all(l["kernel"] in INT8_CONV_KERNELS for l in convs)
    # the residual adds are fused into the second convolution of each block, which reads the skip as codes
    adds = [l for l in convs if "Add" in l["name"]]
    assert len(adds) == 4 and all(l["inputs"][1]["dtype"] == t for l in adds), [l["name"] for l in convs]
    assert not any(l["type"] in ("ELEMENTWISE", "QUANTIZE", "DEQUANTIZE", "ACTIVATION") for l in layers)
    # from the stem's output to the last block no tensor is FLOAT: no reformat inside the network
    body = layers[:[l["name"] for l in layers].index(adds[-1]["name"])]
    assert all(o["dtype"] == t for l in body for o in l["outputs"]), [(l["name"], l["outputs"]) for l in body]
    assert all(l["reformat"] == [] for l in body[1:]), [(l["name"], l["reformat"]) for l in body]
    # global average pooling on the codes, the flatten moving codes, the classifier reading them: every step is
    # int8 and the only reformats are the network's input and output
    assert [l["kernel"] for l in layers[-3:-1]] == ["qpool.int8", "shuffle.inplace"]  # the flatten is a view
    assert layers[-1]["kernel"] in INT8_CONV_KERNELS
    assert all(l["precision"] == "INT8" for l in layers), [(l["name"], l["precision"]) for l in layers]
    reformats = [(l["name"], r) for l in layers for r in l["reformat"]]
    assert [r for _, r in reformats] == ["input FLOAT->" + t, "output %s->FLOAT" % t], reformats
    ctxs = {io: e.create_execution_context() for io, e in engines.items()}
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32)
        ref = ort_run_file(path, {"x": x})["y"]
        got = ctxs[True].infer({"x": x})["y"]
        np.testing.assert_array_equal(got, ctxs[False].infer({"x": x})["y"])
        check_close(got, ref, scale)
    # top-1 agreement with the fp32 model the QDQ file was made from (onnxruntime fp32), on random inputs
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    fp32 = ort.InferenceSession(os.path.join(str(tmp_path), "resnet_fp32.onnx"), so, providers=["CPUExecutionProvider"])
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(24)]
    agree = np.mean([fp32.run(None, {"x": x})[0].argmax() == ctxs[True].infer({"x": x})["y"].argmax() for x in xs])
    assert agree >= 0.9, agree
