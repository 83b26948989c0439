"""INT8 calibration through TensorRT's API: calibrator classes, the calibration run, TensorRT's cache format.

Calibration measures per-tensor ranges (MinMax: abs max; Entropy/Entropy2: KL search over a 2048-bin |x|
histogram; Legacy: a quantile), writes TensorRT's cache text and sets tensor.dynamic_range, leaving the network's
definition as it was; the INT8 build then quantizes the convolution and fully connected inputs with those ranges
(implicit INT8, checked against reference_int8).  References are numpy (float64 forward pass, an independent
implementation of the KL search).
"""
import struct

import numpy as np
import pytest

import trtlite as trt
from trtlite import calibration

N = 4                      # calibration batch
WC = np.random.default_rng(7).standard_normal((4, 1, 3, 3)).astype(np.float32)
BC = np.array([0.1, -0.2, 0.0, 0.3], np.float32)
WF = (np.random.default_rng(8).standard_normal((10, 64)) * 0.5).astype(np.float32)
BF = np.linspace(-1, 1, 10).astype(np.float32)
RELU = "(Unnamed Layer* 1) [Activation]_output"     # left unnamed: TensorRT's default name has spaces, brackets
NAMES = ["data", "conv1", RELU, "pool1", "fc1", "prob"]


def make_network(builder, explicit=True):
    """data -> conv 3x3 pad 1 -> relu -> maxpool 2x2 -> fully connected 10 -> softmax; outputs prob, fc1."""
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)) if explicit \
        else builder.create_network()
    x = net.add_input("data", trt.float32, (N, 1, 8, 8) if explicit else (1, 8, 8))
    conv = net.add_convolution_nd(input=x, num_output_maps=4, kernel_shape=(3, 3), kernel=WC, bias=BC)
    conv.padding_nd = (1, 1)
    conv.get_output(0).name = "conv1"
    relu = net.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    pool = net.add_pooling_nd(relu.get_output(0), trt.PoolingType.MAX, (2, 2))
    pool.stride_nd = (2, 2)
    pool.get_output(0).name = "pool1"
    fc = net.add_fully_connected(pool.get_output(0), 10, WF, BF)
    fc.get_output(0).name = "fc1"
    sm = net.add_softmax(fc.get_output(0))
    sm.get_output(0).name = "prob"
    net.mark_output(sm.get_output(0))
    net.mark_output(fc.get_output(0))
    return net


def _fq(v, scale, axis=None):
    """Symmetric int8 fake quantization in float64 (scale float32, per tensor or per row of axis 0)."""
    scale = np.asarray(scale, np.float32).astype(np.float64)
    if axis is not None:
        scale = scale.reshape((-1,) + (1,) * (np.ndim(v) - 1))
    return np.clip(np.rint(np.asarray(v, np.float64) / scale), -128, 127) * scale


def _wq(w):
    """Weights on their per-output-channel int8 grid (max |w| / 127), as the INT8 build puts them."""
    s = (np.abs(w.reshape(len(w), -1)).max(axis=1).astype(np.float64) / 127).astype(np.float32)
    return (np.rint(w.astype(np.float64) / s.astype(np.float64).reshape((-1,) + (1,) * (w.ndim - 1))) *
            s.astype(np.float64).reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32).astype(np.float64)


def reference_int8(x, net):
    """Implicit INT8 of make_network: the conv and fc inputs fake-quantized with their dynamic ranges / 127, the
    weights on the per-channel int8 grid; everything else float64."""
    def scale(name):
        t = [net.get_input(0)] + [net.get_layer(i).get_output(0) for i in range(net.num_layers)]
        lo, hi = next(u for u in t if u.name == name).dynamic_range
        return np.float32(max(abs(lo), abs(hi))) / np.float32(127)
    x = _fq(x, scale("data"))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((x.shape[0], 4, 8, 8))
    wc = _wq(WC)
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 8, j:j + 8], wc[:, :, i, j])
    conv += BC.reshape(1, -1, 1, 1)
    pool = np.maximum(conv, 0).reshape(-1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    fc = _fq(pool, scale("pool1")).reshape(len(x), -1) @ _wq(WF).T + BF
    e = np.exp(fc - fc.max(axis=1, keepdims=True))
    return {"fc1": fc, "prob": e / e.sum(axis=1, keepdims=True)}


def reference(x):
    """float64 activations of every tensor (batch first)."""
    x = np.asarray(x, np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((x.shape[0], 4, 8, 8))
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 8, j:j + 8], WC[:, :, i, j].astype(np.float64))
    conv += BC.reshape(1, -1, 1, 1)
    relu = np.maximum(conv, 0)
    pool = relu.reshape(-1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    fc = pool.reshape(len(x), -1) @ WF.T.astype(np.float64) + BF
    e = np.exp(fc - fc.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    return {"data": x, "conv1": conv, RELU: relu, "pool1": pool, "fc1": fc, "prob": prob}


def batches(seed, count=3):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((N, 1, 8, 8)) * (1 + k)).astype(np.float32) for k in range(count)]


class Calibrator:
    """A TensorRT-style calibrator: copies each batch into one host buffer and returns its address (or the array)."""

    def __init__(self, data, cache=None, as_address=True):
        super().__init__()
        self.data = list(data)
        self.cache = cache
        self.written = None
        self.as_address = as_address
        self.buffer = np.empty((N, 1, 8, 8), np.float32)
        self.calls = 0

    def get_batch_size(self):
        return N

    def get_batch(self, names):
        self.calls += 1
        assert names == ["data"]
        if not self.data:
            return None
        batch = self.data.pop(0)
        if not self.as_address:
            return [batch]
        np.copyto(self.buffer, batch.reshape(self.buffer.shape))
        return [int(self.buffer.ctypes.data)]

    def read_calibration_cache(self):
        return self.cache

    def write_calibration_cache(self, cache):
        self.written = bytes(cache)


class MinMax(Calibrator, trt.IInt8MinMaxCalibrator):
    pass


class Entropy2(Calibrator, trt.IInt8EntropyCalibrator2):
    pass


class Legacy(Calibrator, trt.IInt8LegacyCalibrator):
    quantile = 0.99

    def __init__(self, *a, histogram=None, **k):
        super().__init__(*a, **k)
        self.histogram = histogram
        self.histogram_written = None

    def get_quantile(self):
        return self.quantile

    def get_regression_cutoff(self):
        return 1.0

    def read_histogram_cache(self, length):
        return self.histogram

    def write_histogram_cache(self, data, length):
        assert len(data) == length
        self.histogram_written = bytes(data)


class Messages(trt.ILogger):
    def __init__(self):
        super().__init__()
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))

    def text(self, severity=None):
        return "\n".join(m for s, m in self.messages if severity is None or s == severity)


def decode(cache):
    """A TensorRT calibration cache -> (header, {tensor: scale}), decoding each hex float32 bit pattern."""
    lines = cache.decode().splitlines()
    scales = {}
    for line in lines[1:]:
        name, _, value = line.rpartition(": ")
        scales[name] = struct.unpack(">f", int(value, 16).to_bytes(4, "big"))[0]
    return lines[0], scales


def int8_build(cal, explicit=True, logger=None, method="serialized"):
    builder = trt.Builder(logger or trt.Logger(trt.Logger.ERROR))
    net = make_network(builder, explicit)
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0        # deterministic kernel choice: plans can be compared byte for byte
    config.set_flag(trt.BuilderFlag.INT8)
    config.int8_calibrator = cal
    if method == "serialized":
        built = builder.build_serialized_network(net, config)
    else:
        built = builder.build_engine(net, config)
    return builder, net, config, built


# ---- MinMax: cache scales are numpy's abs max / 127 -------------------------------------------------------------

@pytest.mark.parametrize("as_address", [True, False], ids=["addresses", "arrays"])
def test_minmax_cache_scales_are_abs_max_over_127(as_address):
    data = batches(1)
    cal = MinMax(data, as_address=as_address)
    _, net, _, plan = int8_build(cal)
    assert plan is not None and cal.calls == len(data) + 1
    header, scales = decode(cal.written)
    assert header == "TRT-8601-MinMaxCalibration"
    assert list(scales) == NAMES                              # inputs, then layer outputs in layer order
    refs = [reference(x) for x in data]
    tensors = {net.get_input(0).name: net.get_input(0)}
    for layer in net:
        tensors[layer.get_output(0).name] = layer.get_output(0)
    for name in NAMES:
        amax = max(np.abs(r[name]).max() for r in refs)
        np.testing.assert_allclose(scales[name], amax / 127, rtol=1e-5, err_msg=name)
        lo, hi = tensors[name].dynamic_range
        assert lo == -hi and hi == pytest.approx(amax, rel=1e-5), name
    # every line is "name: <IEEE bits in hex>", as TensorRT prints them
    for line in cal.written.decode().splitlines()[1:]:
        value = line.rpartition(": ")[2]
        assert value == format(struct.unpack(">I", struct.pack(">f", scales[line.rpartition(": ")[0]]))[0], "x")


def test_cache_hex_is_the_float32_bit_pattern():
    cache = calibration.format_calibration_cache(trt.CalibrationAlgoType.ENTROPY_CALIBRATION_2,
                                                 [("data", np.float32(1.0) / np.float32(127)), ("x y", 2.0)])
    assert cache == b"TRT-8601-EntropyCalibration2\ndata: 3c010204\nx y: 40000000\n"
    version, algo, scales = calibration.parse_calibration_cache(cache)
    assert (version, algo) == ("8601", "EntropyCalibration2")
    assert scales == {"data": pytest.approx(1 / 127, rel=1e-7), "x y": 2.0}
    # a TensorRT 7 cache (no trailing newline, CRLF) parses too
    _, _, scales = calibration.parse_calibration_cache(b"TRT-7103-EntropyCalibration2\r\ndata_0: 4000889d")
    assert scales["data_0"] == pytest.approx(2.00833, rel=1e-5)


# ---- the network is left as it was; the engine quantizes with the ranges ------------------------------------------

@pytest.mark.parametrize("method", ["serialized", "engine"])
def test_network_unchanged_and_engine_is_int8(method):
    data = batches(2)
    builder, net, config, built = int8_build(MinMax(data), method=method)
    assert net.num_outputs == 2
    assert [net.get_output(i).name for i in range(net.num_outputs)] == ["prob", "fc1"]
    assert net.num_layers == 5 and net.num_inputs == 1
    assert not any(net.get_layer(i).get_output(0).is_network_output for i in range(3))
    config.clear_flag(trt.BuilderFlag.INT8)
    config.int8_calibrator = None
    plan32 = builder.build_serialized_network(net, config)
    if method == "serialized":
        assert bytes(built) != bytes(plan32)                # the INT8 build quantizes: another engine
        engine = trt.Runtime(trt.Logger()).deserialize_cuda_engine(built)
    else:
        engine = built
    engine32 = trt.Runtime(trt.Logger()).deserialize_cuda_engine(plan32)
    assert engine.num_io_tensors == 3
    info = engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.ONELINE)
    assert (info.count("[qlinear.int8]") + info.count("[qlinear.amx_int8]")) == 2, info              # the convolution and the fully connected layer
    x = batches(3, 1)[0]
    out = engine.create_execution_context().infer({"data": x})
    out32 = engine32.create_execution_context().infer({"data": x})
    ref8 = reference_int8(x, net)
    for name in ("prob", "fc1"):
        np.testing.assert_allclose(out32[name].reshape(N, 10), reference(x)[name], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out[name].reshape(N, 10), ref8[name], rtol=1e-4, atol=1e-5)
    # int8 is an approximation of the fp32 result: close, not equal
    assert 0 < np.abs(out["fc1"] - out32["fc1"]).max() < 0.05 * np.abs(out32["fc1"]).max()


# ---- Entropy2: TensorRT's KL search, checked against an independent numpy implementation ------------------------

def ref_histogram(arrays, bins=2048):
    """The documented binning: width = (first non-zero max) / 2048; a later batch beyond 2048 widths widens the
    bins by the smallest integer factor covering it (merging runs of that many bins); bin = floor(|x| / width)."""
    hist, width = np.zeros(bins, np.int64), 0.0
    for a in arrays:
        a = np.abs(np.asarray(a, np.float32)).ravel().astype(np.float64)
        m = a.max()
        if width == 0.0:
            if m == 0.0:
                hist[0] += a.size
                continue
            width = m / bins
        elif m > width * bins:
            k = int(np.ceil(m / (width * bins)))
            while width * bins * k < m:
                k += 1
            merged = np.add.reduceat(hist, np.arange(0, bins, k))
            hist = np.zeros(bins, np.int64)
            hist[:len(merged)] = merged
            width *= k
        hist += np.bincount(np.minimum(np.floor(a / width), bins - 1).astype(np.int64), minlength=bins)
    return hist, width


def ref_kl_divergences(hist, levels=128):
    """divergence[i] for i kept bins: P = hist[:i] + clipped mass in the last bin; Q = hist[:i] merged into 128
    groups (i // 128 bins each, the last takes the rest), each group spread over its non-empty bins."""
    hist = hist.astype(np.float64)
    div = np.full(len(hist), np.inf)
    for i in range(levels, len(hist)):
        p = hist[:i].copy()
        p[-1] += hist[i:].sum()
        starts = np.arange(levels) * (i // levels)
        lengths = np.diff(np.append(starts, i))
        nonzero = hist[:i] > 0
        sums = np.add.reduceat(hist[:i], starts)
        counts = np.add.reduceat(nonzero.astype(np.float64), starts)
        q = np.repeat(np.where(counts > 0, sums / np.maximum(counts, 1), 0), lengths) * nonzero
        if q.sum() == 0:
            continue
        p, q = p / p.sum(), q / q.sum()
        keep = p > 0
        if np.any(q[keep] == 0):
            continue
        div[i] = np.sum(p[keep] * np.log(p[keep] / q[keep]))
    return div


def activations(data):
    """trtlite's own fp32 activations of every tensor (the calibration engine computes the same values)."""
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = make_network(builder)
    for layer in net:
        if not layer.get_output(0).is_network_output:
            net.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    ctx = builder.build_engine(net, config).create_execution_context()
    outs = [ctx.infer({"data": x}) for x in data]
    for o, x in zip(outs, data):
        o["data"] = x
    return outs


def test_entropy2_thresholds_match_numpy_kl_search():
    data = batches(4)
    data[1][0, 0, 0, 0] = 40.0            # one outlier: the KL search must clip it
    cal = Entropy2(data)
    _, net, _, _ = int8_build(cal)
    header, scales = decode(cal.written)
    assert header == "TRT-8601-EntropyCalibration2" and list(scales) == NAMES
    acts = activations(data)
    for name in NAMES:
        hist, width = ref_histogram([a[name] for a in acts])
        amax = max(np.abs(a[name]).max() for a in acts)
        div = ref_kl_divergences(hist)
        best = int(np.argmin(div))
        want = min((best + 0.5) * width, amax)
        got = scales[name] * 127
        assert 0 < got <= amax * (1 + 1e-6), name
        if got != pytest.approx(want, rel=1e-5):              # only a numerical tie may pick another bin
            chosen = int(round(got / width - 0.5))
            assert div[chosen] == pytest.approx(div[best], rel=1e-9, abs=1e-12), name
    # the outlier is clipped: the input's threshold is far below its abs max
    assert scales["data"] * 127 < 20.0
    # the module's function agrees on one histogram directly
    hist, width = ref_histogram([a["conv1"] for a in acts])
    assert calibration.entropy_threshold(hist, width) == pytest.approx(
        (int(np.argmin(ref_kl_divergences(hist))) + 0.5) * width, rel=1e-12)
    lo, hi = net.get_layer(0).get_output(0).dynamic_range
    assert hi == pytest.approx(scales["conv1"] * 127, rel=1e-6) and lo == -hi


def test_entropy_and_legacy_headers_and_algorithms():
    assert trt.IInt8EntropyCalibrator2().get_algorithm() == trt.CalibrationAlgoType.ENTROPY_CALIBRATION_2
    assert trt.IInt8EntropyCalibrator().get_algorithm() == trt.CalibrationAlgoType.ENTROPY_CALIBRATION
    assert trt.IInt8MinMaxCalibrator().get_algorithm() == trt.CalibrationAlgoType.MINMAX_CALIBRATION
    assert trt.IInt8LegacyCalibrator().get_algorithm() == trt.CalibrationAlgoType.LEGACY_CALIBRATION
    assert issubclass(trt.IInt8EntropyCalibrator2, trt.IInt8Calibrator)

    class Entropy(Calibrator, trt.IInt8EntropyCalibrator):
        pass

    cal = Entropy(batches(5, 2))
    int8_build(cal)
    assert cal.written.startswith(b"TRT-8601-EntropyCalibration\n")


def test_legacy_quantile_and_histogram_cache():
    data = batches(6)
    cal = Legacy(data)
    int8_build(cal)
    header, scales = decode(cal.written)
    assert header == "TRT-8601-LegacyCalibration"
    acts = activations(data)
    for name in NAMES:
        hist, width = ref_histogram([a[name] for a in acts])
        b = int(np.searchsorted(np.cumsum(hist), 0.99 * hist.sum()))
        amax = max(np.abs(a[name]).max() for a in acts)
        assert scales[name] * 127 == pytest.approx(min((b + 1) * width, amax), rel=1e-5), name
    # with the histogram cache, another quantile needs no batches
    again = Legacy([], histogram=cal.histogram_written)
    again.quantile = 1.0
    int8_build(again)
    assert again.calls == 0
    _, full = decode(again.written)
    for name in NAMES:
        amax = max(np.abs(a[name]).max() for a in acts)
        assert full[name] * 127 == pytest.approx(amax, rel=1e-5), name
        assert full[name] >= scales[name]


# ---- cache reuse ------------------------------------------------------------------------------------------------

def test_second_build_reads_the_cache_without_batches():
    first = Entropy2(batches(9))
    _, net1, _, plan1 = int8_build(first)
    log = Messages()
    second = Entropy2(batches(9), cache=first.written)
    _, net2, _, plan2 = int8_build(second, logger=log)
    assert second.calls == 0 and second.written is None
    assert bytes(plan1) == bytes(plan2)
    for i in range(net1.num_layers):
        r1 = net1.get_layer(i).get_output(0).dynamic_range
        r2 = net2.get_layer(i).get_output(0).dynamic_range
        assert r2 == pytest.approx(r1, rel=1e-6)
    assert net2.get_input(0).dynamic_range == pytest.approx(net1.get_input(0).dynamic_range, rel=1e-6)
    assert "Reading Calibration Cache" in log.text(trt.Logger.INFO)
    # a cache of another algorithm is not used: TensorRT warns and calibrates again
    log = Messages()
    third = MinMax(batches(9), cache=first.written)
    int8_build(third, logger=log)
    assert third.calls == 4 and third.written.startswith(b"TRT-8601-MinMaxCalibration\n")
    assert "does not match calibrator algorithm" in log.text(trt.Logger.WARNING)


def test_cache_missing_tensors_warns():
    cache = b"TRT-8601-MinMaxCalibration\ndata: 3c010204\nnot_in_this_network: 3c010204\n"
    log = Messages()
    cal = MinMax([], cache=cache)
    _, net, _, _ = int8_build(cal, logger=log)
    assert net.get_input(0).dynamic_range == pytest.approx((-1.0, 1.0))
    assert net.get_layer(0).get_output(0).dynamic_range is None
    assert "Missing scale for tensor conv1" in log.text(trt.Logger.WARNING)


# ---- TensorRT 7: builder.int8_mode / int8_calibrator, implicit batch --------------------------------------------

def test_trt7_implicit_batch_build_cuda_engine():
    log = Messages()
    builder = trt.Builder(log)
    builder.max_batch_size = 2                  # smaller than the calibration batch: calibration still runs N
    net = make_network(builder, explicit=False)
    assert net.has_implicit_batch_dimension
    data = batches(10)
    cal = MinMax(data)
    builder.int8_mode = True
    builder.int8_calibrator = cal
    engine = builder.build_cuda_engine(net)
    assert builder.max_batch_size == 2 and engine.max_batch_size == 2
    assert [net.get_output(i).name for i in range(net.num_outputs)] == ["prob", "fc1"]
    header, scales = decode(cal.written)
    assert header == "TRT-8601-MinMaxCalibration" and list(scales) == NAMES
    refs = [reference(x) for x in data]
    for name in NAMES:
        np.testing.assert_allclose(scales[name], max(np.abs(r[name]).max() for r in refs) / 127, rtol=1e-5)
    text = log.text(trt.Logger.INFO)
    assert "Starting Calibration with batch size 4" in text
    assert "Calibrated batch 2 in " in text and "Writing Calibration Cache for calibrator: TRT-8601-MinMax" in text
    x = data[0][:2]
    out = engine.create_execution_context().infer({"data": x})
    np.testing.assert_allclose(out["prob"], reference_int8(x, net)["prob"].reshape(2, 10, 1, 1), rtol=1e-4,
                               atol=1e-6)
    # int8_mode off: no calibration
    builder.int8_mode = False
    again = MinMax(batches(10))
    builder.int8_calibrator = again
    builder.build_cuda_engine(net)
    assert again.calls == 0 and again.written is None


def test_builder_subclass_keeps_the_c_api():
    with trt.Builder(trt.Logger()) as builder:
        assert isinstance(builder, trt.Builder) and isinstance(builder, trt._C.Builder)
        assert trt.Builder.__doc__ == trt._C.Builder.__doc__
        assert trt.Builder.build_serialized_network.__doc__.startswith("build_serialized_network(network, config)")
        assert builder.platform_has_fast_int8 is ('avx512vnni' in trt.cpu_features())
        config = builder.create_builder_config()
        net = make_network(builder)
        with pytest.raises(TypeError):
            builder.build_serialized_network(config, net)
        # INT8 without a calibrator: nothing to calibrate, the fp32 build as before
        config.set_flag(trt.BuilderFlag.INT8)
        assert builder.build_engine(network=net, config=config) is not None


# ---- errors: trt.Error naming the calibrator method or tensor, network restored ---------------------------------

def expect_error(cal, exc, *words):
    log = Messages()
    builder = trt.Builder(log)
    net = make_network(builder)
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.INT8)
    config.int8_calibrator = cal
    with pytest.raises(exc) as info:
        builder.build_serialized_network(net, config)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    assert [net.get_output(i).name for i in range(net.num_outputs)] == ["prob", "fc1"]
    assert str(info.value) in log.text(trt.Logger.ERROR)
    return info.value


def test_error_get_batch_raises():
    class Broken(MinMax):
        def get_batch(self, names):
            if self.calls == 1:                 # the second batch fails
                raise RuntimeError("camera unplugged")
            return super().get_batch(names)

    err = expect_error(Broken(batches(11)), trt.Error, "Broken.get_batch()", "RuntimeError", "camera unplugged")
    assert isinstance(err.__cause__, RuntimeError)


def test_error_wrong_batch_shape():
    bad = [np.zeros((N, 1, 8, 7), np.float32)]
    expect_error(MinMax(bad, as_address=False), trt.ShapeError, "get_batch()", "'data'", "(4, 1, 8, 7)")


def test_error_wrong_number_of_inputs_and_types():
    class TwoBuffers(MinMax):
        def get_batch(self, names):
            return [np.zeros((N, 1, 8, 8), np.float32)] * 2

    expect_error(TwoBuffers([]), trt.Error, "get_batch()", "2 entries", "1 inputs")

    class Text(MinMax):
        def get_batch(self, names):
            return ["data"]

    expect_error(Text([]), trt.Error, "get_batch()", "'data'", "str")


@pytest.mark.parametrize("cache", [b"\x89PNG\r\n\x1a\n\x00\x00", b"hello world\n", b"TRT-8601-Foo\n",
                                   b"TRT-8601-MinMaxCalibration\nconv1 3c01\n",
                                   b"TRT-8601-MinMaxCalibration\nconv1: xyz\n"])
def test_error_garbage_cache(cache):
    cal = MinMax(batches(12), cache=cache)
    expect_error(cal, trt.Error, "read_calibration_cache()")
    assert cal.calls == 0


def test_error_no_batches_and_not_implemented():
    expect_error(MinMax([]), trt.Error, "get_batch()", "no batch")

    class Lazy(trt.IInt8EntropyCalibrator2):
        pass

    expect_error(Lazy(), trt.Error, "get_batch_size()")

    class BadSize(MinMax):
        def get_batch_size(self):
            return "eight"

    expect_error(BadSize([]), trt.Error, "get_batch_size()", "'eight'")


def test_error_in_write_calibration_cache():
    class ReadOnly(MinMax):
        def write_calibration_cache(self, cache):
            raise PermissionError("read-only file system")

    expect_error(ReadOnly(batches(13)), trt.Error, "write_calibration_cache()", "read-only file system")


def test_dynamic_shapes_take_arrays():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (-1, 3))
    net.mark_output(net.add_activation(x, trt.ActivationType.RELU).get_output(0))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 3), (4, 3), (8, 3))
    config.add_optimization_profile(profile)
    config.set_flag(trt.BuilderFlag.INT8)
    data = [np.arange(3 * k, dtype=np.float32).reshape(k, 3) - 2 for k in (1, 5, 8)]

    class Dyn(MinMax):
        def get_batch(self, names):
            self.calls += 1
            return [self.data.pop(0)] if self.data else None

    config.int8_calibrator = cal = Dyn(data)
    builder.build_engine(net, config)
    assert decode(cal.written)[1]["x"] == pytest.approx(21 / 127, rel=1e-6)

    class DynAddress(Dyn):
        def get_batch(self, names):
            return [np.zeros((2, 3), np.float32).ctypes.data]

    config.int8_calibrator = DynAddress([])
    with pytest.raises(trt.ShapeError, match="dynamic shape"):
        builder.build_engine(net, config)
