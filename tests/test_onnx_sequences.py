"""ONNX sequences while parsing (trtlite/onnx/ops_sequence.py): SequenceEmpty / Construct / Insert / Erase / At /
Length, SplitToSequence and ConcatFromSequence become ordinary layers when every position is a constant and no
sequence enters or leaves the graph; optionals of plain tensors.  Checked against onnxruntime on random shapes;
what cannot be imported is refused naming the tensor."""
import numpy as np
import onnx
import pytest

from onnx_helpers import ParseFailed, helper, make_model, ort_run, parse, trt_build

I64 = np.int64


def run(m, feeds):
    eng, _ = trt_build(m, feeds)
    got = eng.create_execution_context().infer(feeds)
    want = ort_run(m, feeds)
    for k, v in want.items():
        np.testing.assert_array_equal(got[k].astype(v.dtype), v)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sequence_ops_match_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    r, c = int(rng.integers(1, 5)), int(rng.integers(2, 7))
    n = int(rng.integers(2, 5))
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s0"]),
             helper.make_node("SequenceInsert", ["s0", "c", "front"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "a"], ["s2"]),             # appended
             helper.make_node("SequenceErase", ["s2", "one"], ["s3"]),            # [c, b, a]
             helper.make_node("SequenceAt", ["s3", "minus1"], ["last"]),
             helper.make_node("SequenceLength", ["s3"], ["len"]),
             helper.make_node("ConcatFromSequence", ["s3"], ["cat"], axis=1),
             helper.make_node("ConcatFromSequence", ["s3"], ["stack"], axis=-1, new_axis=1),
             helper.make_node("SplitToSequence", ["cat", "chunk"], ["pieces"], axis=1),
             helper.make_node("SequenceAt", ["pieces", "one"], ["piece1"]),
             helper.make_node("SplitToSequence", ["a"], ["rows"], axis=0, keepdims=0),
             helper.make_node("SequenceEmpty", [], ["e"], dtype=1),
             helper.make_node("SequenceInsert", ["e", "b"], ["e1"]),
             helper.make_node("SequenceAt", ["rows", "zero"], ["row0"]),
             helper.make_node("SequenceAt", ["e1", "zero"], ["b_again"])]
    inits = {"front": np.array(0, I64), "one": np.array(1, I64), "minus1": np.array(-1, I64),
             "chunk": np.array(n, I64), "zero": np.array(0, I64)}
    outs = {k: None for k in ("last", "cat", "stack", "piece1", "row0", "b_again")}
    outs["len"] = ((), I64)
    m = make_model(nodes, {k: (r, c) for k in "abc"}, outs, inits, opset=17)
    feeds = {k: rng.standard_normal((r, c)).astype(np.float32) for k in "abc"}
    run(m, feeds)


def test_optional_of_a_tensor():
    nodes = [helper.make_node("OptionalHasElement", ["x"], ["has"]),
             helper.make_node("OptionalHasElement", [], ["none"]),
             helper.make_node("OptionalGetElement", ["x"], ["y"])]
    m = make_model(nodes, {"x": (2, 3)}, {"has": ((), np.bool_), "none": ((), np.bool_), "y": None}, opset=18)
    run(m, {"x": np.arange(6, dtype=np.float32).reshape(2, 3)})


def test_sequence_refusals_name_the_tensor():
    nodes = [helper.make_node("SequenceConstruct", ["a", "a"], ["s"])]
    m = make_model(nodes, {"a": (2, 2)}, {"s": None})
    with pytest.raises(ParseFailed, match="graph output 's' is a sequence"):
        parse(m)
    seq_in = helper.make_tensor_sequence_value_info("s", onnx.TensorProto.FLOAT, [2, 2])
    graph = helper.make_graph([helper.make_node("SequenceAt", ["s", "zero"], ["y"])], "g", [seq_in],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                              [helper.make_tensor("zero", onnx.TensorProto.INT64, [], [0])])
    with pytest.raises(ParseFailed, match="graph input 's' is not a tensor but a sequence: sequences exist only"):
        parse(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    nodes = [helper.make_node("SequenceConstruct", ["a", "a"], ["s"]),
             helper.make_node("SequenceAt", ["s", "pos"], ["y"])]
    m = make_model(nodes, {"a": (2, 2), "pos": ((), I64)}, {"y": None})
    with pytest.raises(ParseFailed, match="position 'pos' must be a constant"):
        parse(m)
    nodes = [helper.make_node("SequenceAt", ["a", "zero"], ["y"])]
    m = make_model(nodes, {"a": (2, 2)}, {"y": None}, {"zero": np.array(0, I64)})
    with pytest.raises(ParseFailed, match="input 'a' must be a sequence"):
        parse(m)
    nodes = [helper.make_node("SequenceConstruct", ["a"], ["s"]),
             helper.make_node("SequenceAt", ["s", "five"], ["y"])]
    m = make_model(nodes, {"a": (2, 2)}, {"y": None}, {"five": np.array(5, I64)})
    with pytest.raises(ParseFailed, match="position 5 is out of range for a sequence of 1 tensors"):
        parse(m)
