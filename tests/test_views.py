"""Text, HTML and DOT views of networks, configs, engines, inspectors, contexts and profiler results
(trtlite/_views.py, reached through the C types' repr/_repr_html_/to_dot slots)."""
import html
import json
import re

import numpy as np
import pytest

import trtlite as trt
from trtlite import _views

EVIL = '<script>alert("x")</script> & \\ "q"'


def make_network(evil=True):
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    net.name = "views_net"
    x = net.add_input("x", trt.float32, (-1, 3, 8, 8))
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
    conv = net.add_convolution_nd(x, 4, (3, 3), w)
    conv.name = EVIL if evil else "conv"
    relu = net.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    relu.name = "relu"
    pool = net.add_pooling_nd(relu.get_output(0), trt.PoolingType.MAX, (2, 2))
    pool.name = "pool"
    pool.get_output(0).name = "y"
    net.mark_output(pool.get_output(0))
    return builder, net


def build(builder, net, **cfg_flags):
    cfg = builder.create_builder_config()
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 3, 8, 8), (2, 3, 8, 8), (4, 3, 8, 8))
    cfg.add_optimization_profile(prof)
    return builder.build_engine(net, cfg)


def test_network_text_and_html_list_every_layer():
    _, net = make_network()
    text = repr(net)
    assert text.startswith("<INetworkDefinition 'views_net': 3 layers")
    for i, (name, typ) in enumerate([(EVIL, "CONVOLUTION"), ("relu", "ACTIVATION"), ("pool", "POOLING")]):
        row = [line for line in text.splitlines() if line.strip().startswith(f"{i}  ")]
        assert len(row) == 1 and name in row[0] and typ in row[0], text
    assert "x -1x3x8x8 FLOAT -> " in text and "-> y -1x4x5x5 FLOAT" in text
    page = net._repr_html_()
    assert "<script>" not in page and html.escape(EVIL, quote=True) in page
    for name in ("relu", "pool", "POOLING", "ACTIVATION", "CONVOLUTION"):
        assert f"<td>{name}</td>" in page
    assert page.count("<tr>") == 1 + net.num_layers  # header + one row per layer


def test_layer_type_column_is_the_layer_type_not_the_pooling_type():
    _, net = make_network()
    rows = _views.network_rows(net)
    assert [r["type"] for r in rows] == ["CONVOLUTION", "ACTIVATION", "POOLING"]
    assert rows[0]["outputs"][0][1:] == ("-1x4x6x6", "FLOAT")


def test_network_dot_has_one_node_per_layer_and_escapes_names():
    _, net = make_network()
    dot = net.to_dot()
    assert dot.startswith("digraph network {") and dot.rstrip().endswith("}")
    assert len(re.findall(r"^\s+l\d+ \[label=", dot, re.M)) == 3
    edges = re.findall(r"^\s+(\w+) -> (\w+)", dot, re.M)
    assert edges == [("in0", "l0"), ("l0", "l1"), ("l1", "l2"), ("l2", "out0")]
    # the name's quote and backslash are escaped inside the DOT string
    assert 'l0 [label="<script>alert(\\"x\\")</script> & \\\\ \\"q\\"\\nCONVOLUTION"];' in dot


def test_engine_views_show_fused_steps_kernels_and_io():
    builder, net = make_network(evil=False)
    engine = build(builder, net)
    info = json.loads(engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON))
    steps = info["layers"]
    assert len(steps) == engine.num_layers == 2  # conv + relu fused
    text = repr(engine)
    assert text.startswith("<ICudaEngine 'views_net': 2 steps")
    assert "conv + relu" in text and "activation RELU" in text
    for s in steps:
        assert s["kernel"] in text
    assert "input   x -1x3x8x8 FLOAT" in text and "output  y -1x4x5x5 FLOAT" in text
    page = engine._repr_html_()
    for s in steps:
        assert f"<td>{html.escape(s['name'])}</td>" in page and f"<td>{s['kernel']}</td>" in page
    insp = engine.create_engine_inspector()
    assert "conv + relu" in repr(insp) and "<td>pool</td>" in insp._repr_html_()
    dot = engine.to_dot()
    assert re.findall(r"^\s+(\w+) -> (\w+)", dot, re.M) == [("in0", "s0"), ("s0", "s1"), ("s1", "out0")]


def test_engine_step_memory_matches_output_shapes():
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3, 5))
    a = net.add_activation(x, trt.ActivationType.SIGMOID)
    net.mark_output(a.get_output(0))
    engine = builder.build_engine(net, builder.create_builder_config())
    doc = _views.engine_steps(engine.create_engine_inspector().get_engine_information())
    assert doc["layers"][0]["bytes"] == 2 * 3 * 5 * 4
    assert doc["layers"][0]["precision"] == "FLOAT"
    assert "120 B" in repr(engine)


def test_config_view_lists_flags_pools_profiles():
    builder, _ = make_network()
    cfg = builder.create_builder_config()
    cfg.set_flag(trt.BuilderFlag.FP16)
    cfg.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 3 << 20)
    cfg.builder_optimization_level = 1
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 3, 8, 8), (2, 3, 8, 8), (4, 3, 8, 8))
    cfg.add_optimization_profile(prof)
    text = repr(cfg)
    assert "flags: FP16" in text and "WORKSPACE=3.0 MiB" in text
    assert "optimization profiles: 1" in text and "builder_optimization_level: 1" in text
    page = cfg._repr_html_()
    assert "<td>FP16</td>" in page and "<td>WORKSPACE=3.0 MiB</td>" in page


def test_context_view_shows_resolved_shapes():
    builder, net = make_network(evil=False)
    ctx = build(builder, net).create_execution_context()
    assert "input   x -1x3x8x8" in repr(ctx)
    ctx.set_input_shape("x", (3, 3, 8, 8))
    text = repr(ctx)
    assert "input   x 3x3x8x8 FLOAT" in text and "output  y 3x4x5x5 FLOAT" in text
    assert "<td>3x4x5x5</td>" in ctx._repr_html_()


def test_layer_profiler_sorts_and_shares():
    prof = trt.LayerProfiler()
    for a, b, c in [(1.0, 3.0, 0.5), (2.0, 3.0, 1.5), (3.0, 6.0, 1.0)]:
        prof.report_layer_time("a", a)
        prof.report_layer_time("<b>", b)
        prof.report_layer_time("c", c)
    rows = prof.rows()
    assert [r["name"] for r in rows] == ["<b>", "a", "c"]
    assert [r["timeMs"] for r in rows] == [12.0, 6.0, 3.0]
    assert [r["medianMs"] for r in rows] == [3.0, 2.0, 1.0]
    assert [round(r["percentage"], 6) for r in rows] == [round(100 * 12 / 21, 6), round(100 * 6 / 21, 6),
                                                         round(100 * 3 / 21, 6)]
    assert prof.runs == 3
    lines = repr(prof).splitlines()
    assert lines[0] == "<LayerProfiler: 3 steps, 3 runs, total 21.0000 ms"
    assert lines[2].split()[-1] == "<b>" and "57.1%" in lines[2]
    assert "&lt;b&gt;" in prof._repr_html_() and "<b><" not in prof._repr_html_().replace("<b>LayerProfiler", "")


def test_layer_profiler_on_a_real_context():
    builder, net = make_network(evil=False)
    engine = build(builder, net)
    ctx = engine.create_execution_context()
    prof = trt.LayerProfiler()
    ctx.profiler = prof
    for _ in range(4):
        ctx.infer({"x": np.ones((2, 3, 8, 8), np.float32)})
    rows = prof.rows()
    assert sorted(r["name"] for r in rows) == ["conv + relu", "pool"]
    times = [r["timeMs"] for r in rows]
    assert times == sorted(times, reverse=True)
    assert abs(sum(r["percentage"] for r in rows) - 100.0) < 1e-9
    assert prof.runs == 4 and "profiler: LayerProfiler" in repr(ctx)


def test_repr_falls_back_when_the_view_fails(monkeypatch):
    _, net = make_network()

    def boom(obj):
        raise RuntimeError("broken view")

    monkeypatch.setattr(_views, "repr", boom)
    assert re.fullmatch(r"<trtlite\.INetworkDefinition object at 0x[0-9a-f]+>", repr(net))


def test_to_svg_needs_graphviz():
    _, net = make_network()
    try:
        import graphviz  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install graphviz"):
            net.to_svg()
    else:  # pragma: no cover - depends on the machine
        try:
            svg = net.to_svg()
        except RuntimeError:
            pytest.skip("graphviz installed without the dot program")
        assert "<svg" in svg and "relu" in svg
