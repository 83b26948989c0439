"""Probes the ONNX importers with absurd sizes: one small model per case (a dim, a depth, an attribute of 2^31 - 1),
each parsed under a 3 GiB address-space limit.  Prints one line per case: "!!" where the parser ran out of memory
(MEM_ALLOC_FAILED), failed internally, raised, or took more than 5 s; the error or "ok" otherwise.  Session 16
found 13 importers this way that built constants or unrolled loops from such sizes (docs/TESTING.md); the fixed ones
are cases of tests/test_onnx_ops.py.  Run it after adding an importer (one core, about a minute):

    taskset -c 1 python tests/fuzz/probe_sizes.py [CASE...]

A case that hangs stops the run: run the remaining ones by name under `timeout`.
"""
import os
import resource
import sys
import time

resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))
import numpy as np  # noqa: E402
from onnx_helpers import helper, make_model  # noqa: E402
import trtlite as trt  # noqa: E402
B = 2 ** 31 - 1
I64 = np.int64
H = helper.make_node
# name -> (nodes, graph inputs {name: (shape, dtype)}, initializers)
CASES = {
    "hardmax": ([H("Hardmax", ["x"], ["y"], axis=1)], {"x": ((1, B), np.float32)}, {}),
    "argmax_last": ([H("ArgMax", ["x"], ["y"], axis=1, select_last_index=1)], {"x": ((1, B), np.float32)}, {}),
    "slice_dyn_gather": ([H("Slice", ["x", "s", "e", "a"], ["y"])], {"x": (("N", B), np.float32)},
        {"s": np.array([0], I64), "e": np.array([B - 1], I64), "a": np.array([1], I64)}),
    "slice_dyn_step2": ([H("Slice", ["x", "s", "e", "a", "t"], ["y"])], {"x": (("N", B), np.float32)},
        {"s": np.array([0], I64), "e": np.array([B], I64), "a": np.array([1], I64),
         "t": np.array([2], I64)}),
    "slice_dynaxis": ([H("Slice", ["x", "s", "e", "a"], ["y"])], {"x": ((2, "N"), np.float32)},
        {"s": np.array([0], I64), "e": np.array([B - 1], I64), "a": np.array([1], I64)}),
    "pad_reflect_dyn": ([H("Pad", ["x", "p"], ["y"], mode="reflect")], {"x": (("N", B), np.float32)},
        {"p": np.array([0, 1, 0, 1], I64)}),
    "nll": ([H("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])],
        {"x": ((2, B), np.float32), "t": ((2,), np.int64)}, {}),
    "softmaxce": ([H("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"])],
        {"x": ((2, B), np.float32), "t": ((2,), np.int64)}, {}),
    "dq_block": ([H("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)],
        {"x": ((1, B), np.int8), "s": ((1, B // 2 + 1), np.float32)}, {}),
    "reverse_seq": ([H("ReverseSequence", ["x", "l"], ["y"], batch_axis=0, time_axis=1)],
        {"x": ((2, B), np.float32), "l": ((2,), np.int64)}, {}),
    "cumsum_rev": ([H("CumSum", ["x", "a"], ["y"], reverse=1)], {"x": ((1, B), np.float32)}, {"a": np.array(1, I64)}),
    "onehot": ([H("OneHot", ["i", "d", "v"], ["y"])],
        {"i": ((2,), np.int64)}, {"d": np.array(B, I64), "v": np.array([0, 1], np.float32)}),
    "range": ([H("Range", ["a", "b", "c"], ["y"])], {},
        {"a": np.array(0, I64), "b": np.array(B, I64), "c": np.array(1, I64)}),
    "topk_big": ([H("TopK", ["x", "k"], ["y", "i"])], {"x": ((1, B), np.float32)}, {"k": np.array([B], I64)}),
    "maxpool_idx": ([H("MaxPool", ["x"], ["y", "i"], kernel_shape=[1, 2])], {"x": ((1, 1, 1, B), np.float32)}, {}),
    "resize_linear": ([H("Resize", ["x", "", "sc"], ["y"], mode="linear")], {"x": ((1, 1, 1, B), np.float32)},
        {"sc": np.array([1, 1, 1, 1.0], np.float32)}),
    "gridsample": ([H("GridSample", ["x", "g"], ["y"])],
        {"x": ((1, 1, 2, 2), np.float32), "g": ((1, 1, B, 2), np.float32)}, {}),
    "eyelike_k": ([H("EyeLike", ["x"], ["y"], k=3)], {"x": ((4, B), np.float32)}, {}),
    "trilu": ([H("Trilu", ["x"], ["y"])], {"x": ((4, B), np.float32)}, {}),
    "depthtospace": ([H("DepthToSpace", ["x"], ["y"], blocksize=2)], {"x": ((1, 4, 1, B), np.float32)}, {}),
    "gather_elements": ([H("GatherElements", ["x", "i"], ["y"], axis=1)],
        {"x": ((1, B), np.float32), "i": ((1, 2), np.int64)}, {}),
    "scatter_elements": ([H("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
        {"x": ((1, B), np.float32), "i": ((1, 2), np.int64), "u": ((1, 2), np.float32)}, {}),
    "scatternd": ([H("ScatterND", ["x", "i", "u"], ["y"])],
        {"x": ((B, 2), np.float32), "i": ((1, 1), np.int64), "u": ((1, 2), np.float32)}, {}),
    "compress": ([H("Compress", ["x", "c"], ["y"], axis=1)], {"x": ((1, B), np.float32), "c": ((B,), np.bool_)}, {}),
    "lrn": ([H("LRN", ["x"], ["y"], size=3)], {"x": ((1, B, 1, 1), np.float32)}, {}),
    "instnorm": ([H("InstanceNormalization", ["x", "s", "b"], ["y"])],
        {"x": ((1, 2, B), np.float32)}, {"s": np.ones(2, np.float32), "b": np.zeros(2, np.float32)}),
    "groupnorm": ([H("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=1)],
        {"x": ((1, 2, B), np.float32)}, {"s": np.ones(2, np.float32), "b": np.zeros(2, np.float32)}),
    "stft": ([H("STFT", ["x", "st", "", "fl"], ["y"])],
        {"x": ((1, B, 1), np.float32)}, {"st": np.array(1, I64), "fl": np.array(4, I64)}),
    "meanvarnorm": ([H("MeanVarianceNormalization", ["x"], ["y"])], {"x": ((1, 2, B), np.float32)}, {}),
    "col2im": ([H("Col2Im", ["x", "is", "bs"], ["y"])],
        {"x": ((1, 4, B), np.float32)}, {"is": np.array([2, B], I64), "bs": np.array([2, 2], I64)}),
    "center_crop": ([H("CenterCropPad", ["x", "s"], ["y"])], {"x": ((3, B), np.float32)}, {"s": np.array([3, 5], I64)}),
    "affinegrid": ([H("AffineGrid", ["t", "s"], ["y"])],
        {"t": ((1, 2, 3), np.float32)}, {"s": np.array([1, 1, B, 2], I64)}),
    "roialign": ([H("RoiAlign", ["x", "r", "b"], ["y"], output_height=B, output_width=1)],
        {"x": ((1, 1, 4, 4), np.float32), "r": ((1, 4), np.float32), "b": ((1,), np.int64)}, {}),
    "einsum_diag": ([H("Einsum", ["x"], ["y"], equation="ii->i")], {"x": ((B, B), np.float32)}, {}),
    "unique": ([H("Unique", ["x"], ["y"])], {"x": ((B,), np.float32)}, {}),
    "nonzero": ([H("NonZero", ["x"], ["y"])], {"x": ((B,), np.float32)}, {}),
    "maxunpool": ([H("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2])],
        {"x": ((1, 1, B // 2), np.float32), "i": ((1, 1, B // 2), np.int64)}, {}),
    "avgpool_ceil": ([H("AveragePool", ["x"], ["y"], kernel_shape=[1, 3], ceil_mode=1, strides=[1, 2])],
        {"x": ((1, 1, 1, B), np.float32)}, {}),
    "lppool": ([H("LpPool", ["x"], ["y"], kernel_shape=[1, 2])], {"x": ((1, 1, 1, B), np.float32)}, {}),
    "dft": ([H("DFT", ["x"], ["y"], axis=1)], {"x": ((1, 4096, 1), np.float32)}, {}),
    "window": ([H("HannWindow", ["n"], ["y"])], {}, {"n": np.array(B, I64)}),
    "bernoulli": ([H("Bernoulli", ["x"], ["y"])], {"x": ((B,), np.float32)}, {}),
    "randn": ([H("RandomNormal", [], ["y"], shape=[B])], {}, {}),
    "attn_causal": ([H("Attention", ["q", "k", "v"], ["y"], is_causal=1)],
        {"q": ((1, 1, B, 4), np.float32), "k": ((1, 1, B, 4), np.float32), "v": ((1, 1, B, 4), np.float32)}, {}),
    "attn_causal2": ([H("Attention", ["q", "k", "v"], ["y"], is_causal=1)],
        {"q": ((1, 1, 4, 4), np.float32), "k": ((1, 1, B, 4), np.float32), "v": ((1, 1, B, 4), np.float32)}, {}),
    "deformconv": ([H("DeformConv", ["x", "w", "o"], ["y"], kernel_shape=[1, 1])],
        {"x": ((1, 1, 2, 2), np.float32), "w": ((1, 1, 1, 1), np.float32), "o": ((1, 2, B, 1), np.float32)}, {}),
    "tensorscatter": ([H("TensorScatter", ["c", "u"], ["y"], axis=1)],
        {"c": ((1, B, 2), np.float32), "u": ((1, B, 2), np.float32)}, {}),
    "rotary": ([H("RotaryEmbedding", ["x", "c", "s", "p"], ["y"])],
        {"x": ((1, 1, B, 4), np.float32), "c": ((B, 2), np.float32), "s": ((B, 2), np.float32),
         "p": ((1, B), np.int64)},
        {}),
    "gather_nd": ([H("GatherND", ["x", "i"], ["y"])], {"x": ((B, 2), np.float32), "i": ((1, 1), np.int64)}, {}),
    "resize_nearest_big": ([H("Resize", ["x", "", "", "sz"], ["y"], mode="nearest")],
        {"x": ((1, 1, 1, 2), np.float32)}, {"sz": np.array([1, 1, 1, B], I64)}),
    "resize_cubic_big": ([H("Resize", ["x", "", "", "sz"], ["y"], mode="cubic")],
        {"x": ((1, 1, 1, 2), np.float32)}, {"sz": np.array([1, 1, 1, B], I64)}),
    "upsample": ([H("Upsample", ["x", "sc"], ["y"], mode="linear")],
        {"x": ((1, 1, 1, 2), np.float32)}, {"sc": np.array([1, 1, 1, B / 2], np.float32)}),
    "spacetodepth": ([H("SpaceToDepth", ["x"], ["y"], blocksize=2)], {"x": ((1, 1, 2, B - 1), np.float32)}, {}),
    "convtr_big": ([H("ConvTranspose", ["x", "w"], ["y"], strides=[B], output_padding=[0])],
        {"x": ((1, 1, 3), np.float32)}, {"w": np.ones((1, 1, 1), np.float32)}),
    "conv_dil": ([H("Conv", ["x", "w"], ["y"], dilations=[B // 2])],
        {"x": ((1, 1, B), np.float32)}, {"w": np.ones((1, 1, 2), np.float32)}),
    "lstm": ([H("LSTM", ["x", "w", "r"], ["y"], hidden_size=1)],
        {"x": ((B, 1, 1), np.float32)}, {"w": np.ones((1, 4, 1), np.float32), "r": np.ones((1, 4, 1), np.float32)}),
    "cumsum_excl": ([H("CumSum", ["x", "a"], ["y"], exclusive=1)],
        {"x": ((1, B), np.float32)}, {"a": np.array(1, I64)}),
    "reducelogsumexp": ([H("ReduceLogSumExp", ["x"], ["y"])], {"x": ((2, B), np.float32)}, {}),
    "det": ([H("Det", ["x"], ["y"])], {"x": ((B, 2, 2), np.float32)}, {}),
    "maxroipool": ([H("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[1, B])],
        {"x": ((1, 1, 4, 4), np.float32), "r": ((1, 5), np.float32)}, {}),
    "gru": ([H("GRU", ["x", "w", "r"], ["y"], hidden_size=1)],
        {"x": ((B, 1, 1), np.float32)}, {"w": np.ones((1, 3, 1), np.float32), "r": np.ones((1, 3, 1), np.float32)}),
    "nms": ([H("NonMaxSuppression", ["b", "s", "m"], ["y"])],
        {"b": ((1, 4, 4), np.float32), "s": ((1, 1, 4), np.float32)}, {"m": np.array([B], I64)}),
    "multinomial": ([H("Multinomial", ["x"], ["y"], sample_size=B)], {"x": ((1, 4), np.float32)}, {}),
    "melweight": ([H("MelWeightMatrix", ["n", "d", "r", "lo", "hi"], ["y"])], {},
        {"n": np.array(B, I64), "d": np.array(16, I64), "r": np.array(8000, I64),
         "lo": np.array(0, np.float32), "hi": np.array(4000, np.float32)}),
    "melweight2": ([H("MelWeightMatrix", ["n", "d", "r", "lo", "hi"], ["y"])], {},
        {"n": np.array(4, I64), "d": np.array(B, I64), "r": np.array(8000, I64),
         "lo": np.array(0, np.float32), "hi": np.array(4000, np.float32)}),
    "roialign2": ([H("RoiAlign", ["x", "r", "b"], ["y"], output_height=B, output_width=1, sampling_ratio=1)],
        {"x": ((1, 1, 4, 4), np.float32), "r": ((1, 4), np.float32), "b": ((1,), np.int64)}, {}),
    "roialign3": ([H("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=2, sampling_ratio=B)],
        {"x": ((1, 1, 4, 4), np.float32), "r": ((1, 4), np.float32), "b": ((1,), np.int64)}, {}),
    "tfidf2": ([H("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                             ngram_counts=[0], ngram_indexes=[B], pool_int64s=[1])],
        {"x": ((1, 4), np.int64)}, {}),
    "einsum_matmul": ([H("Einsum", ["x", "y2"], ["y"], equation="ij,jk->ik")],
        {"x": ((2, B), np.float32), "y2": ((B, 2), np.float32)}, {}),
    "gridsample_big": ([H("GridSample", ["x", "g"], ["y"], mode="cubic")],
        {"x": ((1, 1, B, 2), np.float32), "g": ((1, 1, 2, 2), np.float32)}, {}),
    "centercrop_big": ([H("CenterCropPad", ["x", "s"], ["y"])],
        {"x": ((3, 5), np.float32)}, {"s": np.array([3, B], I64)}),
    "col2im_big": ([H("Col2Im", ["x", "is", "bs"], ["y"])],
        {"x": ((1, 4, 1), np.float32)}, {"is": np.array([2, 2], I64), "bs": np.array([2, 2], I64), }),
    "col2im_str": ([H("Col2Im", ["x", "is", "bs"], ["y"], strides=[B, 1])],
        {"x": ((1, 4, 1), np.float32)}, {"is": np.array([2, 2], I64), "bs": np.array([2, 2], I64), }),
    "lppool_big": ([H("LpPool", ["x"], ["y"], kernel_shape=[1, B])], {"x": ((1, 1, 1, B), np.float32)}, {}),
    "avgpool_big": ([H("AveragePool", ["x"], ["y"], kernel_shape=[1, B], pads=[0, B, 0, B])],
        {"x": ((1, 1, 1, 4), np.float32)}, {}),
    "maxunpool_big": ([H("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[B], strides=[B])],
        {"x": ((1, 1, 2), np.float32), "i": ((1, 1, 2), np.int64)}, {}),
    "convtr_pads": ([H("ConvTranspose", ["x", "w"], ["y"], output_shape=[B])],
        {"x": ((1, 1, 3), np.float32)}, {"w": np.ones((1, 1, 1), np.float32)}),
    "reduce_many": ([H("ReduceSum", ["x", "a"], ["y"])],
        {"x": ((2, 2), np.float32)}, {"a": np.arange(64, dtype=I64) % 2}),
    "depthtospace_block": ([H("DepthToSpace", ["x"], ["y"], blocksize=B)], {"x": ((1, 4, 1, 1), np.float32)}, {}),
    "spacetodepth2": ([H("SpaceToDepth", ["x"], ["y"], blocksize=B)], {"x": ((1, 1, B, B), np.float32)}, {}),
    "lrn_big": ([H("LRN", ["x"], ["y"], size=B)], {"x": ((1, 3, 2, 2), np.float32)}, {}),
    "gathernd_b": ([H("GatherND", ["x", "i"], ["y"], batch_dims=1)],
        {"x": ((B, 2), np.float32), "i": ((B, 1), np.int64)}, {}),
    "deform_group": ([H("DeformConv", ["x", "w", "o"], ["y"], kernel_shape=[1, 1], group=B)],
        {"x": ((1, B, 1, 1), np.float32), "w": ((B, 1, 1, 1), np.float32), "o": ((1, 2, 1, 1), np.float32)}, {}),
    "resize_aa": ([H("Resize", ["x", "", "sc"], ["y"], mode="linear", antialias=1)],
        {"x": ((1, 1, 1, B), np.float32)}, {"sc": np.array([1, 1, 1, 1e-9], np.float32)}),
    "resize_aa2": ([H("Resize", ["x", "", "", "sz"], ["y"], mode="cubic", antialias=1)],
        {"x": ((1, 1, 1, B), np.float32)}, {"sz": np.array([1, 1, 1, 1], I64)}),
    "convgroups": ([H("Conv", ["x", "w"], ["y"], group=B)],
        {"x": ((1, B, 1), np.float32), "w": ((B, 1, 1), np.float32)}, {}),
    "convtr_groups": ([H("ConvTranspose", ["x", "w"], ["y"], group=B)],
        {"x": ((1, B, 1), np.float32), "w": ((B, 1, 1), np.float32)}, {}),
    "constofshape_small": ([H("ConstantOfShape", ["s"], ["y"])], {}, {"s": np.array([B, B], I64)}),
}


def main():
    """Parses each case named on the command line (all by default) and prints what happened."""
    names = sys.argv[1:] or list(CASES)
    for name in names:
        nodes, ins, inits = CASES[name]
        outs = {o: (None, np.float32) for o in nodes[-1].output}
        t0 = time.time()
        try:
            m = make_model(nodes, ins, outs, inits, opset=21)
        except Exception as e:
            print("   %-18s model: %s" % (name, e))
            continue
        b = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
        n = b.create_network(1)
        p = trt.OnnxParser(n, trt.Logger(trt.Logger.INTERNAL_ERROR))
        try:
            ok = p.parse(m.SerializeToString())
            err = str(p.get_error(0)) if not ok else "ok (%d layers)" % n.num_layers
        except BaseException as e:
            err = "RAISED %r" % e
        secs = time.time() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
        bad = "MEM_ALLOC" in err or "INTERNAL" in err or "RAISED" in err or secs > 5
        print("%s %-18s %5.1fs %5d MiB  %s" % ("!!" if bad else "  ", name, secs, rss, err[:170]), flush=True)


if __name__ == "__main__":
    main()
