"""Adder2d_TRT's int8 path (issue #11) and plugin ABI version 2 (supports_format / configure with INT8 scales).

Under BuilderFlag.INT8 with a dynamic range on the plugin's input, the builder proposes the scale range / 127, the
plugin raises it to max|W| / 127 where that is larger (one scale shared by input and weight codes), and the input
reaches the plugin as QuantizeLinear codes.  Reference: numpy float64 of the quantized math,
-s * sum |qx - qw| with qx = clip(rint(x / s)) (the float32 quotient, half to even), qw = rint(w / s), code 0 in
the padding; the int32 sums are exact, so outputs agree to float32 rounding.  The AVX2 and portable paths run
again in subprocesses under TRTL_CPU_MASK."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGGER = trt.Logger(trt.Logger.ERROR)

# (C, F, k, stride, padding, H, W, N): channel-word layout (C >= 8 or k small) and column-word layout (few
# channels), strides 1-3, padding, odd sizes (vector tails), batch 1 (work split over output tiles) and > 1
SHAPES = [
    (20, 50, 5, 1, 0, 12, 12, 3),   # AdderNet's adder2
    (1, 20, 5, 1, 0, 28, 28, 2),    # AdderNet's adder1 (column words)
    (3, 7, 3, 2, 1, 11, 13, 2),
    (2, 9, 9, 2, 1, 30, 29, 1),     # column words, 2 words a kernel row
    (9, 13, 3, 1, 2, 9, 10, 2),     # 2 channel blocks, the second one partial
    (1, 3, 11, 3, 2, 17, 19, 1),
    # stride 1, k <= 8 (AVX-512BW: vdbpsadbw on 4 x 8 pixel vectors): k = 4 and 8 (no taps past the kernel), 7 and
    # 1; rows not a multiple of 4, columns past a segment of 8, channels over several 16-bit widenings, batch 1
    (3, 14, 4, 1, 1, 13, 21, 1),
    (17, 25, 7, 1, 3, 10, 19, 2),
    (2, 3, 8, 1, 0, 9, 26, 1),
    (70, 4, 1, 1, 0, 6, 5, 2),
]


def adder_plugin(w, stride, padding, **extra):
    trt.init_libnvinfer_plugins(LOGGER, "")
    F, C, k, _ = w.shape
    kv = dict(weights=(w, trt.PluginFieldType.FLOAT32), nbFilters=(np.int32(F), trt.PluginFieldType.INT32),
              nbInputChannels=(np.int32(C), trt.PluginFieldType.INT32),
              filterSize=(np.int32(k), trt.PluginFieldType.INT32), stride=(np.int32(stride), trt.PluginFieldType.INT32),
              padding=(np.int32(padding), trt.PluginFieldType.INT32))
    for name, v in extra.items():
        kv[name] = (np.float32(v), trt.PluginFieldType.FLOAT32)
    fields = [trt.PluginField(n, np.ascontiguousarray(np.atleast_1d(v)).ravel(), t) for n, (v, t) in kv.items()]
    c = trt.get_plugin_registry().get_plugin_creator("Adder2d_TRT", "1", "")
    return c.create_plugin("adder", trt.PluginFieldCollection(fields))


def build(w, stride, padding, shape, r=None, int8=True, explicit_scale=None):
    """Engine of one Adder2d layer on input `x` of `shape` (INT8 flag with dynamic range r, or an explicit
    QuantizeLinear of scale explicit_scale in front of a plugin created with that int8Scale); plan round trip."""
    builder = trt.Builder(LOGGER)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, shape)
    cfg = builder.create_builder_config()
    if explicit_scale is not None:
        s = net.add_constant((1,), np.array([explicit_scale], np.float32)).get_output(0)
        q = net.add_quantize(x, s, trt.int8).get_output(0)
        layer = net.add_plugin_v2([q], adder_plugin(w, stride, padding, int8Scale=explicit_scale))
    else:
        layer = net.add_plugin_v2([x], adder_plugin(w, stride, padding))
        if int8:
            cfg.set_flag(trt.BuilderFlag.INT8)
            if r is not None:
                x.dynamic_range = (-r, r)
    layer.name = "adder"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    plan = builder.build_serialized_network(net, cfg)
    assert plan is not None
    return trt.Runtime(LOGGER).deserialize_cuda_engine(plan)


def shared_scale(w, r):
    f32 = np.float32
    return max(f32(r) / f32(127), f32(np.abs(w).max()) / f32(127))


def reference(x, w, stride, padding, scale):
    """float64 -scale * sum |qx - qw| over the window, code 0 in the padding."""
    f32 = np.float32
    qx = np.clip(np.rint(x.astype(f32) / f32(scale)), -128, 127).astype(np.int64)
    qw = np.clip(np.rint(w.astype(f32) / f32(scale)), -127, 127).astype(np.int64)
    N, C, H, W = x.shape
    F, _, k, _ = w.shape
    p, s = padding, stride
    xp = np.pad(qx, ((0, 0), (0, 0), (p, p), (p, p)))
    OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
    acc = np.zeros((N, F, OH, OW), np.int64)
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + s * (OH - 1) + 1:s, j:j + s * (OW - 1) + 1:s]  # N, C, OH, OW
            acc += np.abs(patch[:, None] - qw[None, :, :, i, j, None, None]).sum(2)
    return -acc.astype(np.float64) * float(scale)


def layer_info(engine, name):
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return next(layer for layer in info["layers"] if layer["name"] == name)


def check_shape(C, F, k, s, p, H, W, N, seed=0, r=2.0):
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1.5, 1.5, (F, C, k, k)).astype(np.float32)
    x = rng.uniform(-2.5, 2.5, (N, C, H, W)).astype(np.float32)  # past the range: codes saturate
    e = build(w, s, p, x.shape, r=r)
    info = layer_info(e, "adder")
    assert info["precision"] == "INT8", info
    y = e.create_execution_context().infer({"x": x})["y"]
    want = reference(x, w, s, p, shared_scale(w, r))
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())
    return y


@pytest.mark.parametrize("shape", SHAPES)
def test_int8_adder_matches_float64_model_of_quantized_math(shape):
    check_shape(*shape)


def test_shared_scale_follows_the_larger_of_range_and_weights():
    # weights beyond the input's range: the weights set the scale; a wide range: the input does
    for r in (0.25, 6.0):
        check_shape(4, 5, 3, 1, 1, 7, 9, 2, seed=3, r=r)


@pytest.mark.parametrize("mask", ["1f", "0"])
def test_int8_adder_avx2_and_portable_paths(mask):
    code = ("import sys; sys.path.insert(0, %r); import test_adder2d_int8 as t\n"
            "for s in t.SHAPES: t.check_shape(*s)\n" % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TRTL_CPU_MASK=mask)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_explicit_quantize_in_front_of_a_plugin_with_int8_scale():
    rng = np.random.default_rng(5)
    w = rng.uniform(-1, 1, (6, 3, 3, 3)).astype(np.float32)
    x = rng.uniform(-2, 2, (2, 3, 8, 8)).astype(np.float32)
    scale = np.float32(2.0) / np.float32(127)
    e = build(w, 1, 1, x.shape, explicit_scale=scale)
    y = e.create_execution_context().infer({"x": x})["y"]
    np.testing.assert_allclose(y, reference(x, w, 1, 1, scale), rtol=1e-6, atol=1e-6 * np.abs(y).max())


def test_without_a_range_the_plugin_stays_fp32():
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, (4, 2, 3, 3)).astype(np.float32)
    x = rng.uniform(-1, 1, (1, 2, 6, 6)).astype(np.float32)
    e = build(w, 1, 0, x.shape, r=None)
    assert layer_info(e, "adder")["precision"] == "FLOAT"
    y = e.create_execution_context().infer({"x": x})["y"]
    want = -np.abs(np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))[:, None]
                   - w.astype(np.float64)[None, :, :, None, None]).sum(axis=(2, 5, 6))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_int8_scale_field_is_checked():
    w = np.full((2, 1, 3, 3), 1.27, np.float32)
    with pytest.raises(trt.PluginError, match="int8Scale.*smaller than max|weights"):
        adder_plugin(w, 1, 0, int8Scale=0.005)  # 1.27 / 0.005 = 254 would clip
    with pytest.raises(trt.PluginError, match="int8Scale.*positive finite"):
        adder_plugin(w, 1, 0, int8Scale=-1.0)


def test_int8_input_without_int8_scale_is_refused():
    w = np.ones((2, 1, 3, 3), np.float32)
    builder = trt.Builder(LOGGER)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (1, 1, 5, 5))
    q = net.add_quantize(x, net.add_constant((1,), np.array([0.1], np.float32)).get_output(0), trt.int8)
    with pytest.raises(trt.PluginError, match="input 0 is INT8, but the plugin has no 'int8Scale'"):
        net.add_plugin_v2([q.get_output(0)], adder_plugin(w, 1, 0))


V1_PLUGIN = r"""
#include <string.h>
#include "trtlite/plugin.h"
/* A version-1 plugin (y = 2x), written as before version 2 existed: positional vtable, ABI version 1. */
typedef struct { trtl_plugin base; } twice;
static int32_t nout(const trtl_plugin *s) { (void)s; return 1; }
static int odesc(const trtl_plugin *s, int32_t i, const trtl_plugin_tensor_desc *in, int32_t n,
                 trtl_plugin_tensor_desc *out, char *m, size_t l)
{ (void)s; (void)i; (void)n; (void)m; (void)l; *out = in[0]; return in[0].dtype != TRTL_FLOAT; }
static int enq(trtl_plugin *s, const trtl_plugin_tensor_desc *id, const void *const *in, int32_t ni,
               const trtl_plugin_tensor_desc *od, void *const *out, int32_t no, void *ws, char *m, size_t l)
{
    (void)s; (void)ni; (void)od; (void)no; (void)ws; (void)m; (void)l;
    long long n = 1;
    for (int i = 0; i < id[0].dims.nb_dims; i++) n *= id[0].dims.d[i];
    for (long long i = 0; i < n; i++) ((float *)out[0])[i] = 2.0f * ((const float *)in[0])[i];
    return 0;
}
static int gf(const trtl_plugin *s, trtl_plugin_fields *o) { (void)s; o->nb_fields = 0; o->fields = 0; return 0; }
static trtl_plugin *cl(const trtl_plugin *s);
static void de(trtl_plugin *s) { free(s); }
static const trtl_plugin_vtable vt = {sizeof(trtl_plugin_vtable), TRTL_PLUGIN_ABI_VERSION, nout, odesc, 0, enq, gf,
                                      cl, de};
static trtl_plugin *cl(const trtl_plugin *s) { twice *t = malloc(sizeof *t); if (t) *t = *(const twice *)s; return &t->base; }
static trtl_plugin *create(const trtl_plugin_creator *c, const char *n, const trtl_plugin_fields *f, char *m, size_t l)
{ (void)n; (void)f; (void)m; (void)l; twice *t = malloc(sizeof *t); if (!t) return 0; t->base.vt = &vt;
  t->base.creator = c; return &t->base; }
static const trtl_plugin_creator creator = {sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "TwiceV1_TEST", "1",
                                            "", 0, 0, create, 0};
static const trtl_plugin_creator *const list[] = {&creator};
const trtl_plugin_creator *const *trtl_get_plugin_creators(int32_t *count, uint32_t *abi_version)
{ *count = 1; *abi_version = TRTL_PLUGIN_ABI_VERSION; return list; }
"""


def test_version_1_plugin_still_loads_and_stays_fp32_under_int8(tmp_path):
    src = tmp_path / "twice.c"
    src.write_text("#include <stdlib.h>\n" + V1_PLUGIN)
    lib = tmp_path / "libtwice.so"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{ROOT}/csrc/include",
                    str(src), "-o", str(lib)], check=True)
    trt.get_plugin_registry().load_library(str(lib))
    c = trt.get_plugin_registry().get_plugin_creator("TwiceV1_TEST", "1", "")
    builder = trt.Builder(LOGGER)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (2, 3))
    x.dynamic_range = (-1, 1)
    layer = net.add_plugin_v2([x], c.create_plugin("twice", trt.PluginFieldCollection([])))
    layer.name = "twice"
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.INT8)
    e = trt.Runtime(LOGGER).deserialize_cuda_engine(builder.build_serialized_network(net, cfg))
    assert layer_info(e, "twice")["precision"] == "FLOAT"
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    np.testing.assert_array_equal(e.create_execution_context().infer({"x": xv})[layer.get_output(0).name], 2 * xv)


# ---- the fp32 path: AVX-512 (16-column vectors on rows wider than 8), AVX2 (8) -----------------------------------

FP32_SHAPES = [(3, 7, 3, 1, 1, 9, 30, 2), (2, 13, 5, 2, 2, 17, 37, 1), (4, 5, 3, 1, 0, 10, 10, 3), (1, 6, 5, 1, 0, 28, 28, 1)]


def check_fp32_shape(C, F, k, s, p, H, W, N, seed=2):
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, (F, C, k, k)).astype(np.float32)
    x = rng.uniform(-1, 1, (N, C, H, W)).astype(np.float32)
    y = build(w, s, p, x.shape, int8=False).create_execution_context().infer({"x": x})["y"]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]  # N C OH OW k k
    want = -np.abs(win[:, None] - w.astype(np.float64)[None, :, :, None, None]).sum(axis=(2, 5, 6))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("mask", [None, "1f"])
def test_fp32_adder_avx512_and_avx2_paths(mask):
    if mask is None:
        for shape in FP32_SHAPES:
            check_fp32_shape(*shape)
        return
    code = ("import sys; sys.path.insert(0, %r); import test_adder2d_int8 as t\n"
            "for s in t.FP32_SHAPES: t.check_fp32_shape(*s)\n" % os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, TRTL_CPU_MASK=mask), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_batch_norm_scale_with_power_ones_runs_the_simd_kernel():
    """AdderNet's batch norms are Scale layers with power = ones (TensorRT scripts write them so): scale.simd takes
    them (it had fallen back to scale.ref's double pow), with NaN and Inf as the reference."""
    builder = trt.Builder(LOGGER)
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("x", trt.float32, (2, 3, 4, 5))
    sc, sh = np.array([0.5, -2.0, 3.0], np.float32), np.array([0.25, 1.0, -1.5], np.float32)
    layer = net.add_scale(x, trt.ScaleMode.CHANNEL, sh, sc, np.ones(3, np.float32))
    layer.name = "bn"
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    e = trt.Runtime(LOGGER).deserialize_cuda_engine(builder.build_serialized_network(net, builder.create_builder_config()))
    assert layer_info(e, "bn")["kernel"] == "scale.simd"
    xv = np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)
    xv[0, 1, 2, 3], xv[1, 2, 0, 0] = np.nan, np.inf
    y = e.create_execution_context().infer({"x": xv})["y"]
    want = xv.astype(np.float64) * sc.reshape(1, 3, 1, 1) + sh.reshape(1, 3, 1, 1)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
