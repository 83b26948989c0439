"""The timing cache (TensorRT's ITimingCache; csrc/builder/timing_cache.h, issue #10 item 3).

What a cache must do: a rebuild with a warm cache times nothing ("timed 0 candidates" in the build
log) and produces a byte-identical plan; its serialized form round-trips, survives no corruption
silently, and refuses timings from another CPU or thread count unless told to ignore the mismatch;
BuilderFlag.DISABLE_TIMING_CACHE reads and writes nothing; builds on two threads may share one.
Outputs of the engines built from cached timings are checked against numpy float64 references.
"""
import os
import random
import re
import struct
import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest

import trtlite as trt

import refs
from onnx_helpers import make_model, to_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = 32
TIMED = re.compile(r"timed (\d+) candidates")


class LogCapture(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.msgs = []

    def log(self, severity, msg):
        self.msgs.append(msg)

    def timed(self):
        """Candidates the last build timed (from its "kernel selection: timed N candidates" line)."""
        found = [int(m.group(1)) for m in map(TIMED.search, self.msgs) if m]
        assert found, "no kernel-selection summary in the build log:\n" + "\n".join(self.msgs)
        return found[-1]


# ---- networks (each has nodes with several applicable kernels, so builds time something) ------

def _rng(seed=0):
    return np.random.default_rng(seed)


def conv_net(network, rng=None):
    """conv3x3 8->16 + ReLU, two identical conv3x3 16->16 (one signature), conv1x1 16->8."""
    rng = rng or _rng(1)
    x = network.add_input("x", trt.float32, (1, 8, 20, 20))
    weights = []
    t = x
    for i, (cin, cout, k, act) in enumerate([(8, 16, 3, True), (16, 16, 3, True), (16, 16, 3, True), (16, 8, 1, False)]):
        w = (rng.standard_normal((cout, cin, k, k)) * (2.0 / (cin * k * k)) ** 0.5).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        weights.append((w, b, act))
        conv = network.add_convolution_nd(t, cout, (k, k), w, b)
        conv.padding_nd = (k // 2, k // 2)
        conv.name = "conv%d" % i
        t = conv.get_output(0)
        if act:
            t = network.add_activation(t, trt.ActivationType.RELU).get_output(0)
    t.name = "y"
    network.mark_output(t)

    def ref(xv):
        y = xv
        for w, b, act in weights:
            y = refs.convolution(y, w, b, pre_padding=(w.shape[2] // 2,) * 2, post_padding=(w.shape[2] // 2,) * 2)
            if act:
                y = np.maximum(y, 0)
        return y
    return {"x": (1, 8, 20, 20)}, ref


def mlp(network, rng=None):
    """x[4,64,1,1] -> fully connected 128 + ReLU (TensorRT 7's FC layer) -> 1x1 convolution 32.  The fully connected
    layer has one fp32 kernel of trtlite's own (OpenBLAS is a fallback, not timed against it): the 1x1 convolution
    is the step with candidates to time."""
    rng = rng or _rng(2)
    w1 = rng.standard_normal((128, 64)).astype(np.float32) * 0.1
    b1 = rng.standard_normal(128).astype(np.float32) * 0.1
    w2 = rng.standard_normal((32, 128)).astype(np.float32) * 0.1
    b2 = rng.standard_normal(32).astype(np.float32) * 0.1
    x = network.add_input("x", trt.float32, (4, 64, 1, 1))
    h = network.add_fully_connected(x, 128, w1, b1).get_output(0)
    h = network.add_activation(h, trt.ActivationType.RELU).get_output(0)
    y = network.add_convolution_nd(h, 32, (1, 1), w2.reshape(32, 128, 1, 1), b2).get_output(0)
    y.name = "y"
    network.mark_output(y)

    def ref(xv):
        h = np.maximum(xv.reshape(4, -1) @ w1.T.astype(np.float64) + b1, 0)
        return (h @ w2.T.astype(np.float64) + b2).reshape(4, 32, 1, 1)
    return {"x": (4, 64, 1, 1)}, ref


def onnx_model(network, logger):
    """ONNX: Conv 3x3 (4->8) + Relu + Conv 3x3 (8->8) + GlobalAveragePool + Flatten + Gemm, parsed by OnnxParser."""
    from onnx import helper
    rng = _rng(3)
    w1 = (rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    wg = (rng.standard_normal((8, 10)) * 0.3).astype(np.float32)
    bg = (rng.standard_normal(10) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c2"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "wg", "bg"], ["y"])]
    model = make_model(nodes, {"x": (1, 4, 16, 16)}, {"y": (1, 10)}, {"w1": w1, "w2": w2, "wg": wg, "bg": bg})
    parser = trt.OnnxParser(network, logger)
    assert parser.parse(to_bytes(model)), [str(parser.get_error(i)) for i in range(parser.num_errors)]

    def ref(xv):
        c1 = np.maximum(refs.convolution(xv, w1, None, pre_padding=(1, 1), post_padding=(1, 1)), 0)
        c2 = refs.convolution(c1, w2, None, pre_padding=(1, 1), post_padding=(1, 1))
        return c2.mean(axis=(2, 3)) @ wg + bg
    return {"x": (1, 4, 16, 16)}, ref


NETS = {"conv": lambda n, lg: conv_net(n), "mlp": lambda n, lg: mlp(n), "onnx": onnx_model}


def build(make, cache=None, ignore_mismatch=False, flags=(), threads=2, iterations=1):
    """Builds make's network with timing on; returns (plan bytes, logger, inputs, ref, config)."""
    logger = LogCapture()
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    inputs, ref = make(network, logger)
    config = builder.create_builder_config()
    config.num_threads = threads
    config.avg_timing_iterations = iterations
    for f in flags:
        config.set_flag(f)
    if cache is not None:
        assert config.set_timing_cache(cache, ignore_mismatch) is True
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    return bytes(plan), logger, inputs, ref, config


def run_plan(plan, inputs, seed=5):
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(plan)
    ctx = engine.create_execution_context()
    feeds = {n: _rng(seed).standard_normal(s).astype(np.float32) for n, s in inputs.items()}
    return feeds, ctx.infer(feeds)


def fresh(data=b""):
    return trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config().create_timing_cache(data)


# ---- the serialized format, parsed here independently (timing_cache.h's layout) ----------------

def parse_cache(data):
    magic, version, hsize, payload, crc, _ = struct.unpack_from("<8sIIQII", data, 0)
    assert (magic, version, hsize, payload) == (b"TRTLTCCH", 1, HEADER, len(data) - HEADER)
    assert crc == zlib.crc32(data[HEADER:]) & 0xFFFFFFFF
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
    assert off == len(data)
    return cpus, entries


def write_cache(cpus, entries):
    p = struct.pack("<I", len(cpus))
    for c in cpus:
        p += struct.pack("<I", len(c.encode())) + c.encode()
    p += struct.pack("<I", len(entries))
    for cpu, threads, key, ms in entries:
        p += struct.pack("<III", cpu, threads, len(key.encode())) + key.encode() + struct.pack("<d", ms)
    return struct.pack("<8sIIQII", b"TRTLTCCH", 1, HEADER, len(p), zlib.crc32(p) & 0xFFFFFFFF, 0) + p


# ---- API -----------------------------------------------------------------------------------------

def test_api_and_round_trip():
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()
    assert cfg.get_timing_cache() is None
    cache = cfg.create_timing_cache(b"")
    assert isinstance(cache, trt.ITimingCache) and cache.num_entries == 0
    empty = bytes(cache.serialize())
    assert parse_cache(empty) == ([], [])
    assert cfg.set_timing_cache(cache, False) is True
    assert cfg.get_timing_cache().num_entries == 0
    with pytest.raises(TypeError):
        cfg.set_timing_cache(b"", False)
    with pytest.raises(TypeError):
        trt.ITimingCache()
    assert cfg.set_timing_cache(None, False) is True and cfg.get_timing_cache() is None

    plan, log, inputs, ref, _ = build(NETS["conv"], cache)
    assert log.timed() > 0 and cache.num_entries > 0
    data = bytes(cache.serialize())
    cpus, entries = parse_cache(data)
    assert len(entries) == cache.num_entries and cpus == sorted(set(cpus))[:1] * len(cpus)
    assert all(threads == 2 and ms > 0 and key.startswith("convolution.") for _, threads, key, ms in entries)
    again = cfg.create_timing_cache(data)
    assert again.num_entries == cache.num_entries
    assert bytes(again.serialize()) == data  # deterministic: same entries, same order, same bytes
    assert cfg.create_timing_cache(bytearray(data)).num_entries == cache.num_entries  # any buffer
    assert cfg.create_timing_cache(memoryview(data)).num_entries == cache.num_entries
    assert cache.reset() is True and cache.num_entries == 0
    assert bytes(cache.serialize()) == empty


@pytest.mark.parametrize("name", sorted(NETS))
def test_warm_rebuild_times_nothing_and_is_byte_identical(name):
    cold_cache = fresh()
    plan_cold, log_cold, inputs, ref, _ = build(NETS[name], cold_cache)
    assert log_cold.timed() > 0
    # a new cache object from the serialized bytes, as another process would load it
    warm_cache = fresh(bytes(cold_cache.serialize()))
    plan_warm, log_warm, _, _, _ = build(NETS[name], warm_cache)
    assert log_warm.timed() == 0, log_warm.msgs
    assert warm_cache.num_entries == cold_cache.num_entries  # nothing new to record
    assert plan_warm == plan_cold
    feeds, outs = run_plan(plan_warm, inputs)
    np.testing.assert_allclose(outs["y"], ref(feeds["x"].astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_identical_nodes_reuse_timings_within_one_build():
    """conv_net's conv1 and conv2 share a signature: timed once with a cache, twice without one."""
    _, with_cache, *_ = build(NETS["conv"], fresh())
    _, without, *_ = build(NETS["conv"], fresh(), flags=[trt.BuilderFlag.DISABLE_TIMING_CACHE])
    assert 0 < with_cache.timed() < without.timed()


def test_disable_timing_cache_reads_and_writes_nothing():
    cache = fresh()
    plan1, log1, *_ = build(NETS["conv"], cache)
    n = cache.num_entries
    before = bytes(cache.serialize())
    _, log2, inputs, ref, _ = build(NETS["conv"], cache, flags=[trt.BuilderFlag.DISABLE_TIMING_CACHE])
    assert log2.timed() >= log1.timed() > 0  # every candidate timed again, the warm cache unread
    assert "timing cache, disabled" in " ".join(log2.msgs)
    assert cache.num_entries == n and bytes(cache.serialize()) == before  # and nothing written
    # the process-wide cache (no cache set) is not touched either: a second flagged build times again
    _, log3, *_ = build(NETS["mlp"], None, flags=[trt.BuilderFlag.DISABLE_TIMING_CACHE])
    _, log4, *_ = build(NETS["mlp"], None, flags=[trt.BuilderFlag.DISABLE_TIMING_CACHE])
    assert log3.timed() == log4.timed() > 0


def test_combine():
    a, b = fresh(), fresh()
    build(NETS["conv"], a)
    build(NETS["mlp"], b)
    na, nb = a.num_entries, b.num_entries
    assert na > 0 and nb > 0
    assert a.combine(b, False) is True
    assert a.num_entries == na + nb
    assert a.combine(b, False) is True and a.num_entries == na + nb  # conflicting entries are skipped
    assert a.combine(a, False) is True and a.num_entries == na + nb
    # a key present in both keeps this cache's value
    cpus, entries = parse_cache(bytes(b.serialize()))
    entries[0][3] = 12345.0
    assert a.combine(fresh(write_cache(cpus, entries)), False) is True
    assert dict((e[2], e[3]) for e in parse_cache(bytes(a.serialize()))[1])[entries[0][2]] != 12345.0
    for name in ("conv", "mlp"):
        _, log, *_ = build(NETS[name], a)
        assert log.timed() == 0
    with pytest.raises(TypeError):
        a.combine(b"", False)


def _foreign(data):
    """The same timings as if made on another CPU."""
    cpus, entries = parse_cache(data)
    return write_cache(["OtherVendor family 99 model 1 features sse4.1"] * len(cpus), entries)


def test_mismatch_other_cpu():
    own = fresh()
    build(NETS["conv"], own)
    foreign = fresh(_foreign(bytes(own.serialize())))  # loading is fine: the mismatch is decided on use
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()
    cfg.num_threads = 2
    with pytest.warns(RuntimeWarning, match="another CPU.*OtherVendor family 99"):
        assert cfg.set_timing_cache(foreign, False) is False
    assert cfg.get_timing_cache() is None  # refused: the config keeps what it had
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cfg.set_timing_cache(foreign, True) is True
    # ignore_mismatch: builds use only matching timings, so the foreign ones are not read ...
    n = foreign.num_entries
    _, log, inputs, ref, _ = build(NETS["conv"], foreign, ignore_mismatch=True)
    assert log.timed() > 0
    assert foreign.num_entries == 2 * n  # ... and this CPU's are added beside them
    _, log, *_ = build(NETS["conv"], foreign, ignore_mismatch=True)
    assert log.timed() == 0
    # combine: refused without ignore_mismatch (nothing added), merged with it
    target = fresh()
    with pytest.warns(RuntimeWarning, match="another CPU"):
        assert target.combine(fresh(_foreign(bytes(own.serialize()))), False) is False
    assert target.num_entries == 0
    assert target.combine(fresh(_foreign(bytes(own.serialize()))), True) is True
    assert target.num_entries == n


def test_mismatch_thread_count():
    cache = fresh()
    build(NETS["conv"], cache, threads=2)
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()
    cfg.num_threads = 1
    with pytest.warns(RuntimeWarning, match="2 threads.*1"):
        assert cfg.set_timing_cache(cache, False) is False
    cfg.num_threads = 2
    assert cfg.set_timing_cache(cache, False) is True
    # ignore_mismatch with 1 thread: the 2-thread timings are not read, 1-thread ones are added
    n = cache.num_entries
    _, log, *_ = build(NETS["conv"], cache, ignore_mismatch=True, threads=1)
    assert log.timed() > 0 and cache.num_entries == 2 * n
    # a cache holding both thread counts matches either
    for threads in (1, 2):
        _, log, *_ = build(NETS["conv"], cache, threads=threads)
        assert log.timed() == 0


def test_mismatch_cpu_features_in_a_subprocess(tmp_path):
    """A cache from a process whose kernels dispatch on fewer CPU features (TRTL_CPU_MASK) is another CPU's."""
    feats = trt.cpu_features()
    if "avx512f" in feats:
        mask, last = "1f", "f16c"  # AVX2 kernels stay (several candidates to time), AVX-512 goes
    elif "f16c" in feats and "avx2" in feats:
        mask, last = "0f", "f16c"  # this CPU's list (the message's second) still ends with f16c
    else:
        pytest.skip("needs AVX2 and AVX-512 or F16C to mask something off")
    out = tmp_path / "masked.cache"
    code = ("import sys; sys.path.insert(0, %r); import test_timing_cache as t; c = t.fresh(); "
            "t.build(t.NETS['conv'], c); open(%r, 'wb').write(bytes(c.serialize()))" % (os.path.dirname(__file__),
                                                                                          str(out)))
    env = dict(os.environ, TRTL_CPU_MASK=mask, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT, timeout=300)
    masked = fresh(out.read_bytes())
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()
    cfg.num_threads = 2
    assert masked.num_entries > 0
    with pytest.warns(RuntimeWarning, match="another CPU.*features sse4.1 avx avx2 fma.*%s'" % last):
        assert cfg.set_timing_cache(masked, False) is False
    _, log, *_ = build(NETS["conv"], masked, ignore_mismatch=True)
    assert log.timed() > 0


# ---- corrupt input -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def good_bytes():
    cache = fresh()
    build(NETS["mlp"], cache)
    build(NETS["conv"], cache)
    return bytes(cache.serialize())


def test_truncated_and_flipped_bytes_raise_plan_error(good_bytes):
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()
    for n in list(range(1, HEADER + 8)) + list(range(HEADER + 8, len(good_bytes), 7)):
        with pytest.raises(trt.PlanError, match="timing cache"):
            cfg.create_timing_cache(good_bytes[:n])
    with pytest.raises(trt.PlanError, match="padded"):
        cfg.create_timing_cache(good_bytes + b"\0")
    for i in range(len(good_bytes)):  # one flipped bit anywhere: header checks or the CRC catch it
        bad = bytearray(good_bytes)
        bad[i] ^= 1 << (i % 8)
        if 28 <= i < 32:
            continue  # reserved
        with pytest.raises(trt.PlanError, match="timing cache"):
            cfg.create_timing_cache(bytes(bad))
    with pytest.raises(trt.PlanError, match="bad magic"):
        cfg.create_timing_cache(b"TRTLPLAN" + good_bytes[8:])
    v2 = bytearray(good_bytes)
    struct.pack_into("<I", v2, 8, 2)
    with pytest.raises(trt.PlanError, match="format version 2.*version 1"):
        cfg.create_timing_cache(bytes(v2))


def test_forged_payloads_with_valid_checksums(good_bytes):
    """Contents checks behind a correct CRC: every count, index, length and value."""
    cpus, entries = parse_cache(good_bytes)
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()

    def expect(data, match):
        with pytest.raises(trt.PlanError, match=match):
            cfg.create_timing_cache(data)

    expect(write_cache(cpus, [[5] + e[1:] for e in entries]), "CPU index 5")
    expect(write_cache(cpus, [[e[0], 0] + e[2:] for e in entries]), "thread count 0")
    expect(write_cache(cpus, [[e[0], 100000] + e[2:] for e in entries]), "thread count 100000")
    expect(write_cache(cpus, [e[:3] + [float("nan")] for e in entries]), "not a timing")
    expect(write_cache(cpus, [e[:3] + [-5.0] for e in entries]), "not a timing")
    expect(write_cache(cpus, [e[:2] + [""] + e[3:] for e in entries]), "bad or truncated string")
    expect(write_cache(cpus, [e[:2] + ["k" * 5000] + e[3:] for e in entries]), "bad or truncated string")
    expect(write_cache(cpus * 2, entries), "repeats")
    big = bytearray(write_cache(cpus, entries))
    struct.pack_into("<I", big, HEADER, 0xFFFFFFFF)  # CPU count
    struct.pack_into("<I", big, 24, zlib.crc32(bytes(big[HEADER:])) & 0xFFFFFFFF)
    expect(bytes(big), "CPU identities")
    # entry count larger than what follows
    p = bytearray(write_cache(cpus, entries))
    off = HEADER + 4 + sum(4 + len(c.encode()) for c in cpus)
    struct.pack_into("<I", p, off, len(entries) + 1000)
    struct.pack_into("<I", p, 24, zlib.crc32(bytes(p[HEADER:])) & 0xFFFFFFFF)
    expect(bytes(p), "truncated")
    # a key that is not UTF-8
    raw = bytearray(write_cache(cpus, entries[:1]))
    k = raw.index(entries[0][2].encode())
    raw[k] = 0xFF
    struct.pack_into("<I", raw, 24, zlib.crc32(bytes(raw[HEADER:])) & 0xFFFFFFFF)
    expect(bytes(raw), "UTF-8")


def test_random_mutations_never_crash(good_bytes):
    """Mutated payloads with a recomputed CRC (so that the contents checks, not the CRC, see them):
    each either loads or raises PlanError."""
    cfg = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_builder_config()
    r = random.Random(1234)
    loaded = 0
    for _ in range(400):
        p = bytearray(good_bytes)
        for _ in range(r.randint(1, 4)):
            op = r.random()
            i = r.randrange(HEADER, len(p))
            if op < 0.5:
                p[i] = r.randrange(256)
            elif op < 0.75:
                del p[i:i + r.randint(1, 16)]
            else:
                p[i:i] = bytes(r.randrange(256) for _ in range(r.randint(1, 8)))
        struct.pack_into("<Q", p, 16, len(p) - HEADER)
        struct.pack_into("<I", p, 24, zlib.crc32(bytes(p[HEADER:])) & 0xFFFFFFFF)
        try:
            c = cfg.create_timing_cache(bytes(p))
        except trt.PlanError as e:
            assert "timing cache" in str(e)
        else:
            loaded += 1
            assert fresh(bytes(c.serialize())).num_entries == c.num_entries
    assert loaded < 400


# ---- trtlite-exec --timingCacheFile --------------------------------------------------------------

def test_exec_timing_cache_file(tmp_path):
    from onnx import helper
    rng = _rng(7)
    w = (rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32)
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
                       {"x": (1, 4, 16, 16)}, {"y": (1, 8, 16, 16)}, {"w": w})
    onnx_path, cache_path = tmp_path / "m.onnx", tmp_path / "sub" / "t.cache"
    onnx_path.write_bytes(to_bytes(model))
    os.makedirs(tmp_path / "sub")
    env = dict(os.environ, PYTHONPATH=ROOT)

    def run():
        p = subprocess.run([sys.executable, "-m", "trtlite.exec", "--onnx=%s" % onnx_path, "--iterations=1",
                            "--duration=0", "--warmUp=0", "--threads=2", "--verbose",
                            "--timingCacheFile=%s" % cache_path], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout + p.stderr

    out1 = run()
    assert cache_path.exists()
    first = cache_path.read_bytes()
    assert fresh(first).num_entries > 0
    assert int(TIMED.search(out1).group(1)) > 0
    out2 = run()
    assert int(TIMED.search(out2).group(1)) == 0  # loaded: nothing timed
    assert "timing cache" in out2.lower()
    assert cache_path.read_bytes() == first
    # a corrupt cache file is a clear error, not a crash
    cache_path.write_bytes(first[:-3])
    p = subprocess.run([sys.executable, "-m", "trtlite.exec", "--onnx=%s" % onnx_path, "--iterations=1",
                        "--duration=0", "--timingCacheFile=%s" % cache_path], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 1 and "timing cache" in (p.stdout + p.stderr), p.stdout + p.stderr
