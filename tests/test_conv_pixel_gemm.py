"""convolution.pixel_gemm (csrc/kernels/x86/convolution_pixel_gemm.c, issue #10) at layer level: small-map
convolutions + bias + residual add + activation built three ways -- with timing, with a timing cache forged so
that kernel selection keeps convolution.pixel_gemm (the engine inspector shows it ran), and at optimization
level 0 (reference kernels) -- each compared with a float64 numpy reference, NaN included.  Also the AVX2
variant (TRTL_CPU_MASK without AVX-512, in a subprocess) and a run at another input size than the opt shape
(the kernel's reference fallback)."""
import json
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import trtlite as trt

import refs
from conftest import assert_close

HEADER = 32
KERNEL = "convolution.pixel_gemm"


def _parse(data):
    """The timing cache's entries (layout of csrc/builder/timing_cache.h, as tests/test_timing_cache.py)."""
    off = HEADER
    (ncpu,), off = struct.unpack_from("<I", data, off), off + 4
    cpus = []
    for _ in range(ncpu):
        (n,), off = struct.unpack_from("<I", data, off), off + 4
        cpus.append(data[off:off + n].decode())
        off += n
    (nent,), off = struct.unpack_from("<I", data, off), off + 4
    entries = []
    for _ in range(nent):
        cpu, threads, n = struct.unpack_from("<III", data, off)
        off += 12
        key = data[off:off + n].decode()
        off += n
        (ms,), off = struct.unpack_from("<d", data, off), off + 8
        entries.append([cpu, threads, key, ms])
    return cpus, entries


def _write(cpus, entries):
    p = struct.pack("<I", len(cpus))
    for c in cpus:
        p += struct.pack("<I", len(c.encode())) + c.encode()
    p += struct.pack("<I", len(entries))
    for cpu, threads, key, ms in entries:
        p += struct.pack("<III", cpu, threads, len(key.encode())) + key.encode() + struct.pack("<d", ms)
    return struct.pack("<8sIIQII", b"TRTLTCCH", 1, HEADER, len(p), zlib.crc32(p) & 0xFFFFFFFF, 0) + p


def _case(rng, N, C, K, H, W, k, stride, pad, act):
    """Network maker and float64 reference of conv(k x k, stride, pad) + bias + skip, then act."""
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    x[N - 1, C // 2, H // 2, W // 2] = np.nan
    w = (rng.standard_normal((K, C, k, k)) / np.sqrt(C * k * k)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (stride, stride),
                            (pad, pad), (pad, pad))
    skip = rng.standard_normal(conv.shape).astype(np.float32)
    y = conv + skip
    want = np.where(y > 0, y, 0.0) if act == "relu" else y
    want[np.isnan(y)] = np.nan

    def make(network):
        t = network.add_input("x", trt.float32, x.shape)
        s = network.add_input("s", trt.float32, skip.shape)
        layer = network.add_convolution_nd(t, K, (k, k), w, b)
        layer.stride_nd = (stride, stride)
        layer.padding_nd = (pad, pad)
        out = network.add_elementwise(layer.get_output(0), s, trt.ElementWiseOperation.SUM).get_output(0)
        if act == "relu":
            out = network.add_activation(out, trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    return make, {"x": x, "s": skip}, want


def _build(make, level=None, cache=None, threads=2, profile=None):
    """Builds the network `make` fills (timing cache `cache`, optional (name, min, opt, max) profile); returns the
    engine, its layers' kernels and the timing cache's bytes.  Shared by the forced-kernel layer tests
    (test_conv_1x1_direct, test_conv_tapwise, test_conv_grouped_direct)."""
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    config.num_threads = threads
    config.avg_timing_iterations = 1
    if level is not None:
        config.builder_optimization_level = level
    if profile:
        p = builder.create_optimization_profile()
        p.set_shape(*profile)
        config.add_optimization_profile(p)
    tc = config.create_timing_cache(cache or b"")
    assert config.set_timing_cache(tc, False) is True
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(plan))
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    return engine, [layer["kernel"] for layer in info["layers"]], bytes(tc.serialize())


def _run(engine, inputs):
    ctx = engine.create_execution_context()
    for k, v in inputs.items():
        ctx.set_input_shape(k, v.shape)
    out = np.full(tuple(ctx.get_tensor_shape("y")), 77, np.float32)
    arrays = dict(inputs, y=out)
    assert ctx.execute_v2([arrays[engine.get_tensor_name(i)] for i in range(engine.num_io_tensors)])
    return out


def _forced(make, kernel=KERNEL, profile=None, family="convolution."):
    """Builds with timing, then again from the cache with every other kernel of `family` (name prefix) made slow;
    None where `kernel` was no candidate (a CPU without its features).  A kernel that was the only candidate (nothing
    timed: e.g. the portable stem, OpenBLAS being a fallback) is already the first build's choice."""
    first = _build(make, profile=profile)
    cpus, entries = _parse(first[2])
    if not any(e[2].startswith(kernel + "|") for e in entries):
        return first if kernel in first[1] else None
    for e in entries:
        if e[2].startswith(family):
            e[3] = 1e-6 if e[2].startswith(kernel + "|") else 1e3
    return _build(make, cache=_write(cpus, entries), profile=profile)


def _check_timed_ref_forced(make, inputs, want, kernel, required=False):
    """The timed build and the reference build (optimization level 0: every layer a .ref kernel) match `want`; so does
    the build with `kernel` forced (test_conv_1x1_direct, test_conv_tapwise, test_conv_grouped_direct,
    test_conv_depthwise_plane512).  Where `kernel` is no candidate on this CPU: a failure if `required`, else a skip."""
    for level in (None, 0):
        engine, kernels, _ = _build(make, level)
        assert_close(_run(engine, inputs), want)
        if level == 0:
            assert all(k.endswith(".ref") for k in kernels), kernels
    forced = _forced(make, kernel)
    if forced is None:
        assert not required, f"{kernel} must be a candidate on every CPU"
        pytest.skip(f"{kernel} is no candidate on this CPU")
    engine, kernels, _ = forced
    assert kernel in kernels, kernels
    assert_close(_run(engine, inputs), want)


def _residual_act_output(network, out, skip_shape, act):
    """out (+ an input "s" of skip_shape when given), then ReLU6 ("relu6", as CLIP 0..6) or sigmoid, marked as "y"."""
    if skip_shape is not None:
        s = network.add_input("s", trt.float32, skip_shape)
        out = network.add_elementwise(out, s, trt.ElementWiseOperation.SUM).get_output(0)
    if act == "relu6":
        a = network.add_activation(out, trt.ActivationType.CLIP)
        a.alpha, a.beta = 0.0, 6.0
    else:
        a = network.add_activation(out, trt.ActivationType.SIGMOID)
    out = a.get_output(0)
    out.name = "y"
    network.mark_output(out)


SHAPES = [  # N, C, K, H, W, k, stride, pad, act
    (1, 48, 70, 7, 7, 3, 1, 1, "relu"),    # 49 pixels in 5 panels, K = 2 x 32 + 6
    (2, 24, 40, 14, 14, 3, 2, 1, "none"),  # batch of 2, stride 2
    (1, 96, 64, 7, 7, 1, 1, 0, "relu"),    # 1x1
]


@pytest.mark.parametrize("shape", SHAPES)
def test_pixel_gemm_layer(shape, rng):
    """Timed, forced and reference builds all match float64 numpy; the forced one ran convolution.pixel_gemm."""
    make, inputs, want = _case(rng, *shape)
    for level in (None, 0):
        engine, kernels, _ = _build(make, level)
        assert_close(_run(engine, inputs), want)
        if level == 0:
            assert all(k.endswith(".ref") for k in kernels), kernels
    forced = _forced(make)
    if forced is None:
        pytest.skip("convolution.pixel_gemm is no candidate on this CPU")
    engine, kernels, _ = forced
    assert KERNEL in kernels, kernels
    assert_close(_run(engine, inputs), want)


def test_pixel_gemm_layer_avx2_variant():
    """The AVX2 variant (6 x 16 tiles, scalar panel packing), forced the same way, in a subprocess with AVX-512
    (and AMX) masked off by TRTL_CPU_MASK; on a CPU without AVX-512 this is the same run as above."""
    code = (
        "import sys, numpy as np; sys.path.insert(0, %r); import test_conv_pixel_gemm as t\n"
        "from conftest import assert_close\n"
        "make, inputs, want = t._case(np.random.default_rng(3), 2, 20, 40, 7, 7, 3, 1, 1, 'relu')\n"
        "forced = t._forced(make)\n"
        "if forced is None: print('ok'); sys.exit(0)\n"
        "engine, kernels, _ = forced\n"
        "assert t.KERNEL in kernels, kernels\n"
        "assert_close(t._run(engine, inputs), want)\n"
        "print('ok')\n" % os.path.dirname(os.path.abspath(__file__)))
    run_without_avx512(code)


def test_pixel_gemm_other_input_size(rng):
    """Built for 7x7 with dynamic H/W, run at 7x7 and at 20x20 (past the kernel's map limit: its reference
    fallback); both match numpy."""
    K, C = 32, 16
    w = (rng.standard_normal((K, C, 3, 3)) / 12).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)

    def make(network):
        t = network.add_input("x", trt.float32, (1, C, -1, -1))
        layer = network.add_convolution_nd(t, K, (3, 3), w, b)
        layer.padding_nd = (1, 1)
        out = network.add_activation(layer.get_output(0), trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        network.mark_output(out)

    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, C, 5, 5), (1, C, 7, 7), (1, C, 20, 20))
    config.add_optimization_profile(profile)
    tc = config.create_timing_cache(b"")
    config.set_timing_cache(tc, False)
    assert builder.build_serialized_network(network, config) is not None
    cpus, entries = _parse(bytes(tc.serialize()))
    if not any(e[2].startswith(KERNEL + "|") for e in entries):
        pytest.skip("convolution.pixel_gemm does not apply on this CPU")
    for e in entries:
        if e[2].startswith("convolution."):
            e[3] = 1e-6 if e[2].startswith(KERNEL + "|") else 1e3
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    config.set_timing_cache(config.create_timing_cache(_write(cpus, entries)), False)
    plan = builder.build_serialized_network(network, config)
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(bytes(plan))
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    assert KERNEL in [layer["kernel"] for layer in info["layers"]], info
    ctx = engine.create_execution_context()
    for hw in (7, 20):
        x = rng.standard_normal((1, C, hw, hw)).astype(np.float32)
        conv = refs.convolution(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), (1, 1), (1, 1),
                                (1, 1))
        out = ctx.infer({"x": x})
        assert_close(list(out.values())[0], np.maximum(conv, 0))


NO_AVX512 = 0x20 | 0x40 | 0x80 | 0x200 | 0x1c00  # AVX512F, BW, VNNI, BF16, AMX (trtlite.h's TRTL_CPU_*)
NO_SIMD = NO_AVX512 | 0xc                         # ... and AVX2, FMA: the portable variants


def run_with_cpu_features_hidden(code, hidden):
    """Runs Python `code` in a subprocess (from the repository root) with the CPU features `hidden` masked off by
    TRTL_CPU_MASK, so that a kernel's AVX2 (or portable) variant is what runs; the code prints "ok" when its checks
    passed."""
    env = dict(os.environ, TRTL_CPU_MASK="%x" % (0xFFFFFFFF & ~hidden))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


def run_without_avx512(code):
    """run_with_cpu_features_hidden with AVX-512 and AMX hidden: the AVX2 variants run."""
    run_with_cpu_features_hidden(code, NO_AVX512)


def check_forced_without_avx512(module, shapes, seed):
    """In a subprocess with AVX-512 (and AMX) hidden: for each shape, test module `module`'s _case(rng(seed), *shape)
    forced onto its KERNEL through a forged timing cache ran that kernel and matches float64 numpy (its AVX2
    variant; on a CPU without AVX-512 the same run as in this process)."""
    code = ("import sys, numpy as np; sys.path.insert(0, %r); import %s as t, test_conv_pixel_gemm as pg\n"
            "from conftest import assert_close\n"
            "for shape in %r:\n"
            "    make, inputs, want = t._case(np.random.default_rng(%d), *shape)\n"
            "    forced = pg._forced(make, t.KERNEL)\n"
            "    if forced is None: print('ok'); sys.exit(0)\n"
            "    engine, kernels, _ = forced\n"
            "    assert t.KERNEL in kernels, kernels\n"
            "    assert_close(pg._run(engine, inputs), want)\n"
            "print('ok')\n" % (os.path.dirname(os.path.abspath(__file__)), module, [tuple(x) for x in shapes], seed))
    run_without_avx512(code)
