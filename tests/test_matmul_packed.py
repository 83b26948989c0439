"""matrix_multiply.packed (csrc/kernels/x86/matmul_packed.c: batched activation x activation matrix multiply on the
packed GEMM micro-kernels) at layer level: add_matrix_multiply with MatrixOperation NONE / TRANSPOSE / VECTOR on
either side, broadcast batch dims, sizes with tails of the 6 x 16 / 12 x 32 tiles, column and row chunks, depth blocks
(a dynamic depth run past the opt shape's), then a residual add and an activation (fused into the kernel's tiles), built with timing, at
optimization level 0 (reference kernels) and with a timing cache forged so that selection keeps
matrix_multiply.packed (the inspector shows it ran), each compared with float64 numpy.  Also the AVX2 variant
(TRTL_CPU_MASK without AVX-512, in a subprocess)."""
import numpy as np
import pytest

import trtlite as trt

from conftest import assert_close
import test_conv_pixel_gemm as pg

KERNEL = "matrix_multiply.packed"
M_ = trt.MatrixOperation


def _stored(batch, op, rows, cols, which):
    """Stored dims of an operand whose op(X) is rows x cols (A: M x K, B: K x N)."""
    if op == "VECTOR":
        return tuple(batch) + ((cols,) if which == 0 else (rows,))
    return tuple(batch) + ((cols, rows) if op == "TRANSPOSE" else (rows, cols))


def _as_matrix(x, op, which):
    """float64 op(X) with the vector ops as a 1-row (A) / 1-column (B) matrix."""
    x = x.astype(np.float64)
    if op == "VECTOR":
        return x[..., None, :] if which == 0 else x[..., :, None]
    return np.swapaxes(x, -1, -2) if op == "TRANSPOSE" else x


def _case(rng, abatch, bbatch, M, K, N, op0, op1, act, residual):
    """Network maker, inputs and float64 reference of act(op0(A) x op1(B) (+ R))."""
    a = rng.standard_normal(_stored(abatch, op0, M, K, 0)).astype(np.float32)
    b = rng.standard_normal(_stored(bbatch, op1, K, N, 1)).astype(np.float32)
    want = np.matmul(_as_matrix(a, op0, 0), _as_matrix(b, op1, 1))
    if op1 == "VECTOR":
        want = want[..., 0]
    if op0 == "VECTOR":
        want = want[..., 0, :] if op1 != "VECTOR" else want[..., 0]
    inputs = {"a": a, "b": b}
    if residual:
        inputs["r"] = rng.standard_normal(want.shape).astype(np.float32)
        want = want + inputs["r"]
    if act == "relu":
        want = np.maximum(want, 0)
    elif act == "sigmoid":
        want = 1 / (1 + np.exp(-want))

    def make(net):
        mm = net.add_matrix_multiply(net.add_input("a", trt.float32, a.shape), getattr(M_, op0),
                                     net.add_input("b", trt.float32, b.shape), getattr(M_, op1))
        out = mm.get_output(0)
        if residual:
            out = net.add_elementwise(out, net.add_input("r", trt.float32, want.shape),
                                      trt.ElementWiseOperation.SUM).get_output(0)
        if act:
            kind = trt.ActivationType.RELU if act == "relu" else trt.ActivationType.SIGMOID
            out = net.add_activation(out, kind).get_output(0)
        out.name = "y"
        net.mark_output(out)
    return make, inputs, want


SHAPES = [  # A batch, B batch, M, K, N, op0, op1, act, residual
    ((3,), (3,), 37, 29, 41, "NONE", "NONE", "relu", True),            # row and column tails of both variants
    ((2, 3), (1, 3), 49, 32, 49, "NONE", "TRANSPOSE", None, False),    # a Swin window's q x k^T, broadcast batch
    ((4,), (4,), 13, 19, 70, "TRANSPOSE", "NONE", "sigmoid", True),    # A stored transposed; a slow activation
    ((2,), (1,), 20, 200, 300, "TRANSPOSE", "TRANSPOSE", None, True),  # 2 column chunks (B blocks of 192 KiB)
    ((5,), (1,), 7, 33, 45, "NONE", "NONE", "relu", False),             # a stack over one B: one tall product
    ((3,), (3,), 1, 40, 50, "VECTOR", "TRANSPOSE", None, True),        # one row read in place
    ((2,), (2,), 130, 24, 9, "NONE", "NONE", None, True),              # 2 row blocks of 96 or chunks, a narrow B
]


@pytest.mark.parametrize("shape", SHAPES)
def test_matmul_packed_layer(shape, rng):
    """Timed, reference and forced builds match float64 numpy; the forced one ran matrix_multiply.packed."""
    make, inputs, want = _case(rng, *shape)
    pg._check_timed_ref_forced(make, inputs, want, KERNEL)


def test_matmul_packed_not_for_matrix_vector(rng):
    """A matrix x vector product (one column of B) is left to matrix_multiply.sgemm (SGEMV): the packed kernel is no
    candidate, and the build matches numpy."""
    make, inputs, want = _case(rng, (3,), (3,), 20, 30, 1, "NONE", "VECTOR", None, False)
    engine, kernels, _ = pg._build(make)
    assert KERNEL not in kernels and "matrix_multiply.sgemm" in kernels, kernels
    assert_close(pg._run(engine, inputs), want)


def test_matmul_packed_deep_products_left_to_sgemm(rng):
    """A depth of 256 or more at the opt shape is left to matrix_multiply.sgemm (OpenBLAS measured faster there)."""
    make, inputs, want = _case(rng, (2,), (2,), 30, 300, 40, "NONE", "NONE", None, False)
    engine, kernels, _ = pg._build(make)
    assert KERNEL not in kernels and "matrix_multiply.sgemm" in kernels, kernels
    assert_close(pg._run(engine, inputs), want)


def test_matmul_packed_run_time_depths(rng):
    """Built with a dynamic depth (opt 64: matrix_multiply.packed chosen), run at depth 600 (3 depth blocks of 200
    accumulated in C, the residual and activation on the last), 257 and 5: every run matches float64 numpy."""
    M, N = 21, 45

    def make(net):
        a = net.add_input("a", trt.float32, (2, M, -1))
        b = net.add_input("b", trt.float32, (2, N, -1))
        mm = net.add_matrix_multiply(a, M_.NONE, b, M_.TRANSPOSE)
        out = net.add_elementwise(mm.get_output(0), net.add_input("r", trt.float32, (2, M, N)),
                                  trt.ElementWiseOperation.SUM).get_output(0)
        out = net.add_activation(out, trt.ActivationType.RELU).get_output(0)
        out.name = "y"
        net.mark_output(out)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    make(network)
    config = builder.create_builder_config()
    config.num_threads = 2
    p = builder.create_optimization_profile()
    p.set_shape("a", (2, M, 1), (2, M, 64), (2, M, 700))
    p.set_shape("b", (2, N, 1), (2, N, 64), (2, N, 700))
    config.add_optimization_profile(p)
    engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(
        bytes(builder.build_serialized_network(network, config)))
    info = engine.create_engine_inspector().get_engine_information(trt.LayerInformationFormat.JSON)
    if KERNEL not in info:
        pytest.skip("matrix_multiply.packed is no candidate on this CPU")
    for K in (600, 257, 5):
        a = rng.standard_normal((2, M, K)).astype(np.float32)
        b = rng.standard_normal((2, N, K)).astype(np.float32)
        r = rng.standard_normal((2, M, N)).astype(np.float32)
        want = np.maximum(np.matmul(a.astype(np.float64), np.swapaxes(b.astype(np.float64), 1, 2)) + r, 0)
        assert_close(pg._run(engine, {"a": a, "b": b, "r": r}), want)


def test_matmul_packed_avx2_variant():
    """The AVX2 variant (6 x 16 tiles), forced the same way, in a subprocess with AVX-512 (and AMX) masked off by
    TRTL_CPU_MASK; on a CPU without AVX-512 this is the same run as above."""
    pg.check_forced_without_avx512("test_matmul_packed", [SHAPES[1], SHAPES[3]], 5)
