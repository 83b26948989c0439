"""Structure-aware fuzzer of the ONNX front end (trt.OnnxParser), driven by atheris (libFuzzer for Python).

    python tests/fuzz/fuzz_onnx.py [libFuzzer flags] CORPUS_DIR [SEED_DIR...]
    python tests/fuzz/fuzz_onnx.py FILE...            # replay inputs (as libFuzzer does)

The custom mutator parses its input as an onnx.ModelProto and changes fields, then reserializes, so nearly
every input reaches the importers instead of failing protobuf decoding: node op_type (among the ops the ONNX
schema knows and the built-in plugin names), attribute values and types (0, -1, huge, NaN, wrong type, dropped,
added), input/output names (renamed, emptied, duplicated, dropped), graph input/output dims (0, -1, huge,
symbolic, rank changed) and element types, initializer dtypes, dims and raw_data lengths, opset versions, and
whole nodes (dropped, duplicated, reordered, copied from another seed).  One mutation in twenty is atheris's
byte-level one, for the protobuf decoder itself.

The test function parses with trt.OnnxParser.  A finding (an uncaught exception, so atheris saves the input) is:
  - the parser reporting an internal error (it catches every exception and records ErrorCode.INTERNAL_ERROR
    "a bug in trtlite's ONNX parser"); the logger captures the original traceback, which the finding shows;
  - parse() returning False with no error recorded, or raising anything;
  - for a model that parses into a small network: building or running it raising anything but trt.Error
    (trtlite's own exceptions: the builder and runtime refusing the network with a message).
Crashes (signals) of the C core are findings too; atheris reports them with the input.

Each finding prints one line "FUZZ-SIGNATURE: ..." (exception type and the innermost trtlite frame), which
tests/fuzz/run.py uses to group findings and to match the known ones (tests/fuzz/known_findings.txt).
"""
import os
import pkgutil
import random
import sys
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)

import atheris  # noqa: E402

# Coverage of the Python front end: every trtlite module (the ONNX parser is imported lazily by
# trt.OnnxParser, and may be a package of importer modules) is imported here, inside the hook.
with atheris.instrument_imports(include=["trtlite"]):
    import trtlite as trt  # noqa: E402
    for _mod in pkgutil.walk_packages(trt.__path__, "trtlite."):
        if _mod.name != "trtlite.__main__":
            __import__(_mod.name)
    trt.OnnxParser

warnings.simplefilter("ignore")  # numpy overflow warnings of folded constants: noise in the log

import onnx  # noqa: E402
from onnx import AttributeProto, TensorProto  # noqa: E402

EXPLICIT = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
MAX_LAYERS = 64          # networks above this are only parsed
MAX_ELEMENTS = 1 << 16   # per input, at the shape that is run
MAX_INPUT = 1 << 20      # bytes; larger inputs are reduced to a seed
MAX_ACTIVATIONS = 256 << 20  # bytes of engine activation memory (and of each output) for a run

# Control-flow ops (subgraph attributes) are left out of op_type mutations: a Scan without a body sends onnx's
# shape inference (called by the parser) into a multi-GiB, minutes-long blow-up that hangs the fuzzer in native
# code; it is a known finding with its regression input (tests/fuzz/regressions/onnx/).
CONTROL_FLOW = {"Scan", "Loop", "If", "SequenceMap"}
KNOWN_OPS = sorted(({s.name for s in onnx.defs.get_all_schemas() if s.domain == ""} - CONTROL_FLOW) |
                   {"LReLU_TRT", "Clip_TRT", "Reorg_TRT", "ResizeNearest_TRT", "Adder2d_TRT", "Normalize_TRT",
                    "InstanceNormalization_TRT", "SPP_TRT"})
COMMON_OPS = ["Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "Reshape", "Concat", "Slice", "Resize", "Transpose",
              "Gather", "Split", "Pad", "MaxPool", "AveragePool", "Softmax", "Flatten", "Squeeze", "Unsqueeze",
              "Expand", "Cast", "Where", "TopK", "ReduceMean", "Shape", "Constant", "ConvTranspose", "Clip",
              "BatchNormalization", "LayerNormalization", "InstanceNormalization", "Range", "Tile", "Identity"]
ATTR_NAMES = ["axis", "axes", "perm", "pads", "strides", "kernel_shape", "dilations", "group", "keepdims", "to",
              "mode", "alpha", "beta", "epsilon", "transA", "transB", "value", "split", "ends", "starts",
              "output_padding", "auto_pad", "ceil_mode", "count_include_pad", "coordinate_transformation_mode",
              "largest", "sorted", "value_float", "value_ints", "noop_with_empty_axes", "allowzero", "shape"]
INTS = [0, 1, -1, 2, 3, -2, 7, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 40, 2 ** 62, -2 ** 63, 2 ** 63 - 1]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 1e30, 3.4e38, -3.4e38, float("nan"), float("inf"), float("-inf")]
DTYPES = [TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT16, TensorProto.BOOL,
          TensorProto.INT8, TensorProto.UINT8, TensorProto.DOUBLE, TensorProto.STRING, TensorProto.BFLOAT16,
          TensorProto.UNDEFINED, 99]
OPSETS = [1, 6, 7, 9, 10, 11, 12, 13, 17, 18, 21, 0, -1, 99, 2 ** 40]


def load_seeds():
    seeds = []
    d = os.path.join(HERE, "corpus", "onnx")
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            seeds.append(f.read())
    return seeds


SEEDS = load_seeds()


# ---------------------------------------------------------------------------------------------------------------
# the mutator
# ---------------------------------------------------------------------------------------------------------------

def _pick_int(r):
    return r.choice(INTS) if r.random() < 0.7 else r.randint(-10, 40)


def _all_value_infos(g):
    return list(g.input) + list(g.output) + list(g.value_info)


def _tensor_names(g):
    names = {vi.name for vi in _all_value_infos(g)} | {t.name for t in g.initializer}
    for n in g.node:
        names.update(n.input)
        names.update(n.output)
    names.discard("")
    return sorted(names)


def m_op_type(m, r):
    if m.graph.node:
        n = r.choice(m.graph.node)
        n.op_type = r.choice(COMMON_OPS if r.random() < 0.6 else KNOWN_OPS)


def m_attr_value(m, r):
    nodes = [n for n in m.graph.node if n.attribute]
    if not nodes:
        return m_attr_add(m, r)
    a = r.choice(r.choice(nodes).attribute)
    if a.type == AttributeProto.INT:
        a.i = _pick_int(r)
    elif a.type == AttributeProto.FLOAT:
        a.f = r.choice(FLOATS)
    elif a.type == AttributeProto.INTS:
        k = r.randrange(4)
        if k == 0 or not a.ints:
            a.ints.append(_pick_int(r))
        elif k == 1:
            del a.ints[r.randrange(len(a.ints))]
        elif k == 2:
            a.ints[r.randrange(len(a.ints))] = _pick_int(r)
        else:
            del a.ints[:]
    elif a.type == AttributeProto.FLOATS:
        a.floats.append(r.choice(FLOATS))
    elif a.type == AttributeProto.STRING:
        a.s = r.choice([b"", b"nearest", b"linear", b"cubic", b"constant", b"reflect", b"edge", b"SAME_UPPER",
                        b"VALID", b"half_pixel", b"asymmetric", b"\xff\xfe", b"x" * 300])
    elif a.type == AttributeProto.TENSOR:
        m_tensor(a.t, r)


def m_attr_type(m, r):
    nodes = [n for n in m.graph.node if n.attribute]
    if nodes:
        a = r.choice(r.choice(nodes).attribute)
        a.type = r.choice([AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.INTS, AttributeProto.FLOATS,
                           AttributeProto.STRING, AttributeProto.TENSOR, AttributeProto.GRAPH, 0])
        if r.random() < 0.5:  # a value of the new type, or leave the old one (type/value mismatch)
            a.i = _pick_int(r)
            a.ints.append(_pick_int(r))


def m_attr_add(m, r):
    if not m.graph.node:
        return
    n = r.choice(m.graph.node)
    if n.attribute and r.random() < 0.3:
        del n.attribute[r.randrange(len(n.attribute))]
        return
    a = n.attribute.add()
    a.name = r.choice(ATTR_NAMES)
    k = r.randrange(4)
    if k == 0:
        a.type, a.i = AttributeProto.INT, _pick_int(r)
    elif k == 1:
        a.type = AttributeProto.INTS
        a.ints.extend(_pick_int(r) for _ in range(r.randrange(0, 9)))
    elif k == 2:
        a.type, a.f = AttributeProto.FLOAT, r.choice(FLOATS)
    else:
        a.type, a.s = AttributeProto.STRING, r.choice([b"nearest", b"constant", b"", b"linear"])


def m_names(m, r):
    g = m.graph
    if not g.node:
        return
    n = r.choice(g.node)
    names = _tensor_names(g)
    k = r.randrange(6)
    lst = n.input if (k < 4 and n.input) or not n.output else n.output
    if k == 0 and lst:
        lst[r.randrange(len(lst))] = r.choice(names) if names else "t"
    elif k == 1 and lst:
        lst[r.randrange(len(lst))] = ""
    elif k == 2 and lst:
        lst.append(r.choice(list(lst)))
    elif k == 3 and lst:
        del lst[r.randrange(len(lst))]
    elif k == 4:
        lst.append(r.choice(names + ["new_%d" % r.randrange(5)]) if names else "x")
    else:
        vis = [vi for vi in list(g.input) + list(g.output)]
        if vis:
            r.choice(vis).name = r.choice(names + ["", "dup"]) if names else ""


def m_dims(m, r):
    vis = _all_value_infos(m.graph)
    if not vis:
        return
    vi = r.choice(vis)
    tt = vi.type.tensor_type
    k = r.randrange(5)
    if k == 0:
        tt.elem_type = r.choice(DTYPES)
    elif k == 1 or not tt.shape.dim:
        tt.shape.dim.add().dim_value = r.choice([0, 1, 2, 3, 2 ** 31, 2 ** 40])
    elif k == 2:
        del tt.shape.dim[r.randrange(len(tt.shape.dim))]
    elif k == 3:
        tt.shape.dim[r.randrange(len(tt.shape.dim))].dim_param = r.choice(["N", "M", "", "batch"])
    else:
        d = tt.shape.dim[r.randrange(len(tt.shape.dim))]
        d.dim_value = r.choice([0, -1, 1, 2, 5, 2 ** 20, 2 ** 31, 2 ** 40, 2 ** 62])


def m_tensor(t, r):
    k = r.randrange(6)
    if k == 0:
        t.data_type = r.choice(DTYPES)
    elif k == 1:
        raw = bytes(t.raw_data)
        if raw and r.random() < 0.5:
            t.raw_data = raw[:r.randrange(len(raw))]
        else:
            t.raw_data = raw + bytes(r.randrange(1, 17))
    elif k == 2 and t.dims:
        t.dims[r.randrange(len(t.dims))] = r.choice([0, -1, 1, 2, 2 ** 31, 2 ** 40, 2 ** 62])
    elif k == 3:
        if t.dims and r.random() < 0.5:
            del t.dims[r.randrange(len(t.dims))]
        else:
            t.dims.append(r.choice([1, 2, 0]))
    elif k == 4:  # values in the typed field instead of raw_data
        n = max(1, int(np.prod(list(t.dims))) if t.dims and all(0 <= d < 64 for d in t.dims) else 1)
        t.ClearField("raw_data")
        if r.random() < 0.5:
            t.int64_data.extend(_pick_int(r) for _ in range(n))
        else:
            t.float_data.extend(r.choice(FLOATS) for _ in range(n))
    else:
        raw = bytearray(t.raw_data)
        if raw:
            i = r.randrange(len(raw))
            raw[i] = r.randrange(256)
            t.raw_data = bytes(raw)


def m_initializer(m, r):
    g = m.graph
    if not g.initializer:
        return m_dims(m, r)
    k = r.randrange(5)
    if k == 0:
        del g.initializer[r.randrange(len(g.initializer))]
    elif k == 1:
        g.initializer.add().CopyFrom(r.choice(g.initializer))
    else:
        m_tensor(r.choice(g.initializer), r)


def m_opset(m, r):
    if m.opset_import and r.random() < 0.8:
        op = r.choice(m.opset_import)
        op.version = r.choice(OPSETS)
        if r.random() < 0.2:
            op.domain = r.choice(["", "ai.onnx", "com.microsoft", "trt.plugins", "x"])
    else:
        op = m.opset_import.add()
        op.domain, op.version = r.choice(["", "ai.onnx", "trt.plugins"]), r.choice(OPSETS)
    if r.random() < 0.2:
        m.ir_version = r.choice([0, 1, 3, 7, 8, 9, 10, 99])


def m_nodes(m, r):
    g = m.graph
    k = r.randrange(4)
    if k == 0 and g.node:
        del g.node[r.randrange(len(g.node))]
    elif k == 1 and g.node:
        g.node.add().CopyFrom(r.choice(g.node))
    elif k == 2 and len(g.node) > 1:
        i, j = r.randrange(len(g.node)), r.randrange(len(g.node))
        a, b = onnx.NodeProto(), onnx.NodeProto()
        a.CopyFrom(g.node[i])
        b.CopyFrom(g.node[j])
        g.node[i].CopyFrom(b)
        g.node[j].CopyFrom(a)
    else:  # a node (and its initializers) from another seed
        other = onnx.ModelProto()
        other.ParseFromString(r.choice(SEEDS))
        if other.graph.node:
            n = r.choice(other.graph.node)
            g.node.add().CopyFrom(n)
            for t in other.graph.initializer:
                if t.name in n.input:
                    g.initializer.add().CopyFrom(t)


MUTATIONS = [m_op_type, m_attr_value, m_attr_value, m_attr_type, m_attr_add, m_names, m_names, m_dims, m_dims,
             m_initializer, m_initializer, m_opset, m_nodes, m_nodes]


def mutate_model(data, r):
    """One structure-aware mutation of serialized model `data` (a seed when it does not decode)."""
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
        ok = m.HasField("graph")
    except Exception:
        ok = False
    if not ok:
        m = onnx.ModelProto()
        m.ParseFromString(r.choice(SEEDS))
    for _ in range(1 + int(r.expovariate(1.0))):
        r.choice(MUTATIONS)(m, r)
    return m.SerializeToString()


def custom_mutator(data, max_size, seed):
    r = random.Random(seed)
    if r.random() < 0.05:
        return atheris.Mutate(data, max_size)
    try:
        out = mutate_model(data, r)
    except Exception:  # a mutation that protobuf refuses (e.g. a value out of range for the field)
        out = r.choice(SEEDS)
    return out if len(out) <= max_size else r.choice(SEEDS)[:max_size]


# ---------------------------------------------------------------------------------------------------------------
# the test
# ---------------------------------------------------------------------------------------------------------------

class Finding(Exception):
    pass


def _signature(kind, tb_list):
    """kind + the innermost frame inside trtlite/ (file relative to the repository, function)."""
    where = "?"
    for fr in tb_list:
        f = fr.filename.replace(os.sep, "/")
        if "/trtlite/" in f:
            where = "%s:%s" % (f[f.rindex("/trtlite/") + 1:], fr.name)
    return "%s at %s" % (kind, where)


class CaptureLogger(trt.ILogger):
    """Records the exception the parser was handling when it logged an internal error: the parser catches
    every exception, but logs its report from inside the except block, where sys.exc_info() still has it."""

    def __init__(self):
        super().__init__()
        self.internal = None

    def log(self, severity, msg):
        if self.internal is None and "bug in trtlite" in str(msg):
            et, ev, tb = sys.exc_info()
            if ev is not None:
                self.internal = (et, ev, traceback.extract_tb(tb), str(msg))


def report(sig, detail):
    sys.stderr.write("\nFUZZ-SIGNATURE: %s\n%s\n" % (sig, detail))
    sys.stderr.flush()
    raise Finding(sig)


VERBOSE = os.environ.get("FUZZ_ONNX_VERBOSE", "0") not in ("", "0")


def run_network(builder, net):
    """Builds `net` (inputs' -1 dims run at 2) and runs it on zeros; trt.Error from either is accepted.
    Returns how far it got ("built", "ran" or why not), for FUZZ_ONNX_VERBOSE."""
    if net.num_layers > MAX_LAYERS:
        return "too many layers"
    config = builder.create_builder_config()
    config.avg_timing_iterations = 0
    profile = builder.create_optimization_profile()
    feeds = {}
    for i in range(net.num_inputs):
        t = net.get_input(i)
        shape = tuple(t.shape)
        run = tuple(2 if d == -1 else d for d in shape)
        # numpy refuses a shape whose non-zero dims overflow even when another dim is 0
        if any(d < 0 for d in run) or float(np.prod([max(d, 1) for d in run], dtype=np.float64)) > MAX_ELEMENTS:
            return "input too large"
        if -1 in shape:
            profile.set_shape(t.name, tuple(1 if d == -1 else d for d in shape), run, run)
        feeds[t.name] = np.zeros(run, trt.nptype(t.dtype))
    if profile:
        config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(net, config)
    if plan is None:
        return "build refused"
    engine = trt.Runtime(trt.Logger(trt.Logger.INTERNAL_ERROR)).deserialize_cuda_engine(plan)
    if engine.device_memory_size > MAX_ACTIVATIONS:
        return "built"
    ctx = engine.create_execution_context()
    for name in feeds:
        ctx.set_input_shape(name, feeds[name].shape)
    for i in range(engine.num_io_tensors):
        name = engine.get_tensor_name(i)
        shape = tuple(ctx.get_tensor_shape(name))
        if name not in feeds and float(np.prod(shape, dtype=np.float64)) * 4 > MAX_ACTIVATIONS:
            return "built"  # a legitimately huge output: numpy could not hold it
    ctx.infer(feeds)
    return "ran"


# FUZZ_ONNX_STACK_AFTER=S (set by run.py's replay): an input still running after S seconds dumps its Python stack,
# which names where a hang or a memory blow-up is.
STACK_AFTER = int(os.environ.get("FUZZ_ONNX_STACK_AFTER", "0"))


def test_one_input(data):
    if STACK_AFTER:
        import faulthandler
        faulthandler.dump_traceback_later(STACK_AFTER)
    builder = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR))
    net = builder.create_network(EXPLICIT)
    logger = CaptureLogger()
    parser = trt.OnnxParser(net, logger)
    try:
        ok = parser.parse(data)
    except Exception as e:
        report(_signature("parse() raised " + type(e).__name__, traceback.extract_tb(e.__traceback__)),
               traceback.format_exc())
    if logger.internal is not None:
        et, ev, tb, msg = logger.internal
        report(_signature("parser internal error " + et.__name__, tb),
               "%s\n%s%s: %s" % (msg, "".join(traceback.format_list(tb)), et.__name__, ev))
    if not ok:
        if parser.num_errors == 0:
            report("parse() returned False with no error", "")
        err = parser.get_error(0)
        if int(err.code()) == int(trt.ErrorCode.MEM_ALLOC_FAILED):
            # a model of at most MAX_INPUT bytes never needs gigabytes: the parser allocated from declared sizes
            # (under the replay's address-space limit that is a MemoryError; without a limit, 16-24 GiB and the
            # OOM killer -- session 15's Expand / Resize / Trilu findings)
            report("parser out of memory in %s" % (err.node_operator() or "the graph"), str(err))
        if VERBOSE:
            sys.stderr.write("fuzz_onnx: parse failed: %s\n" % parser.get_error(0))
        return
    try:
        how = run_network(builder, net)
    except trt.Error as e:
        how = "%s: %s" % (type(e).__name__, e)
    except Exception as e:
        report(_signature("build/run raised " + type(e).__name__, traceback.extract_tb(e.__traceback__)),
               traceback.format_exc())
    if VERBOSE:
        sys.stderr.write("fuzz_onnx: parsed, %s\n" % how)


def main():
    if not any(a.startswith("-max_len") for a in sys.argv):
        sys.argv.append("-max_len=%d" % MAX_INPUT)
    atheris.Setup(sys.argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
