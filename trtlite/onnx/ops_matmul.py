"""Importers of matrix products: Gemm, MatMul, Einsum, DFT, STFT; and Det."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._enums import DataType, ElementWiseOperation, MatrixOperation, ReduceOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .registry import importer
from .shape_eval import axes_mask


@importer("Gemm",
          restrictions="A and B must be 2-D")
def _gemm(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    ta, tb = int(a.get("transA", 0)), int(a.get("transB", 0))
    A = p._float(p._tensor(node.input[0]))
    if len(A.shape) != 2:
        raise Fail(ErrorCode.INVALID_NODE, "A must be 2-D, got %s" % (tuple(A.shape),))
    M = MatrixOperation
    bn = node.input[1]
    if p._is_const(bn):
        b = p._cval(bn).astype(np.float32)
        if b.ndim != 2:
            raise Fail(ErrorCode.INVALID_NODE, "B must be 2-D, got %s" % (b.shape,))
        if alpha != 1.0:
            b = b * np.float32(alpha)
            alpha = 1.0
        # keep the weights as stored ([N, K] with transB: the usual fully-connected layout)
        B = p._const_tensor(np.ascontiguousarray(b), DataType.FLOAT, bn if alpha == 1.0 and
                            float(a.get("alpha", 1.0)) == 1.0 else None)
    else:
        B = p._float(p._tensor(bn))
    y = p._L(p.network.add_matrix_multiply(A, M.TRANSPOSE if ta else M.NONE, B, M.TRANSPOSE if tb else M.NONE))
    if alpha != 1.0:
        y = p._ew_const(y, np.float32(alpha), ElementWiseOperation.PROD)
    cn = p._inp(node, 2)
    if cn is not None and beta != 0.0:
        if p._is_const(cn):
            c = p._cval(cn).astype(np.float32) * np.float32(beta)
            c = c.reshape((1,) * (2 - c.ndim) + c.shape)
            C = p._const_tensor(c, DataType.FLOAT)
        else:
            C = p._unsqueeze_to(p._float(p._tensor(cn)), 2)
            if beta != 1.0:
                C = p._ew_const(C, np.float32(beta), ElementWiseOperation.PROD)
        y = p._ew(y, C, ElementWiseOperation.SUM)
    return [y]


def _int_operands(p: ImporterContext, names: List[str]) -> Optional[List[Any]]:
    """Integer MatMul operands as one type (INT64 where an operand is carried INT64, else INT32: the integer math
    wraps as numpy's), or None when an operand is floating-point."""
    ints = (DataType.INT32, DataType.INT64)
    if any((p._tensors[n].dtype not in ints) if n in p._tensors else p._cval(n).dtype.kind not in "iu"
           for n in names):
        return None
    dt = DataType.INT64 if any(n in p._tensors and p._tensors[n].dtype == DataType.INT64 for n in names) \
        else DataType.INT32
    ts = [p._tensors[n] if n in p._tensors else p._tensor(n, dt) for n in names]
    return [t if t.dtype == dt else p._cast(t, dt) for t in ts]


@importer("MatMul",
          restrictions="floating-point, int32 or int64 operands (int64 computed as INT64 where the int64 chain is "
                       "kept wide, else as INT32)")
def _matmul(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    an, bn = node.input[:2]
    ints = _int_operands(p, [an, bn])
    if ints is not None:
        A, B = ints
    else:
        A = p._float(p._tensor(an))
        B = p._float(p._tensor(bn, DataType.FLOAT))
    ra, rb = len(A.shape), len(B.shape)
    M = MatrixOperation
    op0 = M.VECTOR if ra == 1 else M.NONE
    op1 = M.VECTOR if rb == 1 else M.NONE
    ba = ra - (1 if ra == 1 else 2)
    bb = rb - (1 if rb == 1 else 2)
    if ba < bb:
        A = _unsqueezed(p, an, A, ra + bb - ba)
    elif bb < ba:
        B = _unsqueezed(p, bn, B, rb + ba - bb)
    return [p._L(p.network.add_matrix_multiply(A, op0, B, op1))]


def _unsqueezed(p: ImporterContext, name: str, t: Any, rank: int) -> Any:
    """`t` with leading 1-dims up to `rank`; a constant operand (x @ W with W an initializer) is made a constant of
    that shape directly, so that the engine keeps the initializer's values as they are (refit by its name) instead
    of a shuffle of a constant that the builder folds into another."""
    v = p._consts.get(name)
    if v is None or v.dtype.kind not in "fiu" or tuple(v.shape) != tuple(t.shape):
        return p._unsqueeze_to(t, rank)
    return p._const_tensor(v.reshape((1,) * (rank - v.ndim) + v.shape), t.dtype)


def _einsum_terms(eq: str, ranks: List[int]) -> Tuple[List[str], str]:
    """The equation's input terms and output term, each a string of one letter per dim ('...' expanded to
    upper-case letters the equation does not use); the implicit output is the letters seen once, sorted."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise Fail(ErrorCode.INVALID_NODE, "equation '%s' has %d operands, the node %d" % (eq, len(terms), len(ranks)))
    free = [c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in eq]
    n_ell = max([r - (len(t) - 3) for t, r in zip(terms, ranks) if "..." in t] or [0])
    ell = "".join(free[:n_ell])[::-1]
    out_terms = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            k = r - (len(t) - 3)
            t = t.replace("...", ell[len(ell) - k:] if k else "")
        if len(t) != r or not all(c.isalpha() for c in t):
            raise Fail(ErrorCode.INVALID_NODE, "term '%s' of equation '%s' does not fit a rank-%d operand" % (t, eq, r))
        out_terms.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        seen = "".join(out_terms)
        out = ell + "".join(sorted(c for c in set(seen) if seen.count(c) == 1 and c not in ell))
    return out_terms, out


def _einsum_matmul(p: ImporterContext, ts: List[Any], terms: List[str], out: str) -> Optional[Any]:
    """A two-operand contraction as one batched matrix multiply, or None where it is not one: letters in both operands
    and the output are batch dims (equal sizes), letters of one operand and the output its free dims, letters of
    both but not the output the contracted dims (equal sizes); no letter summed within one operand, static dims.
    A -> [batch, M, K], B -> [batch, K, N] (a shuffle each: transpose + reshape), C = A B, then one shuffle to the
    output's dims and order.  ("bij,bjk->bik", attention's "bhqd,bhkd->bhqk": a GEMM instead of the broadcast
    product [b, i, j, k] and its reduction.)"""
    ta, tb = terms
    shape: Dict[str, int] = {}
    for t, term in zip(ts, terms):
        for c, d in zip(term, t.shape):
            if d < 0 or shape.setdefault(c, d) != d:
                return None  # dynamic, or broadcast between the operands: the general path
    both = set(ta) & set(tb)
    if any((c not in out) and (c not in both) for c in ta + tb) or set(out) - set(ta + tb):
        return None
    contracted = [c for c in ta if c in both and c not in out]
    if not contracted:
        return None  # an outer or elementwise product: the general path is one broadcast product already
    batch = [c for c in out if c in both]
    m = [c for c in out if c in ta and c not in both]
    n = [c for c in out if c in tb and c not in both]

    def vol(cs: List[str]) -> int:
        return int(np.prod([shape[c] for c in cs], dtype=np.int64))
    pre = [vol(batch)] if batch else []
    A = p._shuffle(ts[0], first=[ta.index(c) for c in batch + m + contracted],
                   reshape=pre + [vol(m), vol(contracted)], zero_is_placeholder=False)
    B = p._shuffle(ts[1], first=[tb.index(c) for c in batch + contracted + n],
                   reshape=pre + [vol(contracted), vol(n)], zero_is_placeholder=False)
    C = p._L(p.network.add_matrix_multiply(A, MatrixOperation.NONE, B, MatrixOperation.NONE))
    order = batch + m + n
    if not order:  # a full contraction: the scalar
        return p._shuffle(C, reshape=[], zero_is_placeholder=False)
    return p._shuffle(C, reshape=[shape[c] for c in order], second=[order.index(c) for c in out],
                      zero_is_placeholder=False)


@importer("Einsum",
          restrictions="static dims where letters broadcast; an index repeated within one operand (a diagonal or "
                       "trace) runs on IEinsumLayer's reference kernel, in FLOAT")
def _einsum(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Every operand transposed to one order of all letters (missing ones as 1-dims), multiplied with numpy
    broadcasting, summed over the letters the output lacks, then transposed to the output's order."""
    ts = [p._tensor(n) for n in node.input]
    dtype = ts[0].dtype
    ts = [p._cast(t, dtype) for t in ts]
    terms, out = _einsum_terms(str(a["equation"]), [len(t.shape) for t in ts])
    if any(len(set(t)) != len(t) for t in terms):  # diagonals / traces: IEinsumLayer
        if dtype not in (DataType.FLOAT, DataType.HALF):
            raise unsupported("Einsum with a repeated index on %s inputs (FLOAT only)" % DataType(dtype),
                              ErrorCode.UNSUPPORTED_NODE_DATATYPE)
        ts = [p._float(t) for t in ts]
        return [p._L(p.network.add_einsum(ts, ",".join(terms) + "->" + out))]
    if len(ts) == 2 and dtype in (DataType.FLOAT, DataType.HALF):
        y = _einsum_matmul(p, ts, terms, out)
        if y is not None:
            return [y]
    letters = list(out) + sorted(set("".join(terms)) - set(out))
    acc = None
    for t, term in zip(ts, terms):
        perm = sorted(range(len(term)), key=lambda i: letters.index(term[i]))
        if perm != list(range(len(term))):
            t = p._transpose(t, perm)
        placed = [term[i] for i in perm]
        missing = [i for i, c in enumerate(letters) if c not in placed]
        if missing:
            t = p._unsqueeze(t, missing)
        acc = t if acc is None else p._ew(acc, t, ElementWiseOperation.PROD)
    summed = list(range(len(out), len(letters)))
    if summed:
        acc = p._L(p.network.add_reduce(acc, ReduceOperation.SUM, axes_mask(summed), False))
    if not out and not summed:
        acc = p._L(p.network.add_identity(acc))
    return [acc]


# The DFT importers multiply by n x n constant matrices: lengths up to 4096 (STFTs use 256-2048; a fuzzed length of
# 2^20 asked for an 8 TiB matrix).
DFT_MAX = 4096


def _dft_matrices(n_in: int, length: int, inverse: bool, onesided: bool,
                  complex_in: bool) -> Tuple[List[List[Optional[np.ndarray]]], int]:
    """[[real <- real, real <- imag], [imag <- real, imag <- imag]] matrices (n_in, K) of the transform (None:
    zero), and K.  Samples past `length` are dropped, missing ones are zeros (numpy's fft(x, n))."""
    if max(n_in, length) > DFT_MAX:
        raise unsupported("DFT over %d samples of length %d: its matrices would be constants of that size squared "
                          "(at most %d)" % (n_in, length, DFT_MAX), ErrorCode.UNSUPPORTED_NODE_SHAPE)
    n = np.arange(n_in)[:, None].astype(np.float64)
    live = (n < length).astype(np.float64)
    if inverse and onesided:  # irfft: n_in = length // 2 + 1 half-spectrum bins in, `length` real samples out
        k = np.arange(n_in)[:, None].astype(np.float64)
        t = np.arange(length)[None, :].astype(np.float64)
        w = np.where((k == 0) | ((length % 2 == 0) & (k == length // 2)), 1.0, 2.0) / length
        ang = 2 * np.pi * k * t / length
        return [[w * np.cos(ang), -w * np.sin(ang)]], length
    k_out = length // 2 + 1 if onesided else length
    k = np.arange(k_out)[None, :].astype(np.float64)
    ang = 2 * np.pi * n * k / length
    c, s = np.cos(ang) * live, np.sin(ang) * live
    if inverse:  # x = 1/L sum Y e^{+i...}: re = (Yr c - Yi s) / L, im = (Yr s + Yi c) / L
        c, s = c / length, s / length
        m = [[c, -s], [s, c]]
    else:  # Y = sum X e^{-i...}: re = Xr c + Xi s, im = -Xr s + Xi c
        m = [[c, s], [-s, c]]
    return [[row[0], row[1] if complex_in else None] for row in m], k_out


@importer("DFT",
          restrictions="dft_length a constant; an axis given at run time is computed along every candidate axis whose "
                       "output has the node's shape and selected by the value (asserted to be one of them); the "
                       "signal axis static; computed as matrix multiplies by the transform matrix (O(n^2))")
def _dft(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._float(p._tensor(node.input[0]))
    xs = tuple(x.shape)
    r = len(xs)
    if r < 3 or xs[-1] not in (1, 2):
        raise Fail(ErrorCode.INVALID_NODE, "input of shape %s must end in a real/imaginary dim of 1 or 2" % (xs,))
    an = p._inp(node, 2) if p._opset >= 20 else None
    if an is not None and not p._is_const(an):
        return [_dft_runtime_axis(p, node, a, x, an)]
    if p._opset >= 20:
        axis = int(np.asarray(p._cval(an, "axis")).reshape(-1)[0]) if an else -2
    else:
        axis = int(a.get("axis", 1))
    return [_dft_along(p, node, a, x, p._norm_axis(axis, r))]


def _dft_runtime_axis(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, an: str) -> Any:
    """DFT whose axis is a run-time value: the transform along each axis whose result has the node's output shape
    (ONNX shape inference's, else the shape all candidates share), picked by select layers; an assertion stops
    execution when the value names another axis."""
    r = len(x.shape)
    cands = []
    for k in range(r - 1):
        try:
            cands.append((k, _dft_along(p, node, a, x, k)))
        except Fail:
            continue
    want = p._sym_dims(node.output[0])
    if want is not None and all(isinstance(d, int) for d in want):
        cands = [(k, y) for k, y in cands if tuple(y.shape) == tuple(want)]
    elif len(set(tuple(y.shape) for _, y in cands)) > 1:
        cands = []
    if not cands:
        raise unsupported("DFT whose axis is given at run time, where the transforms along the possible axes give "
                          "outputs of different shapes", ErrorCode.UNSUPPORTED_NODE_INPUT)
    axis = p._tensor(an)
    if axis.dtype != DataType.INT32:
        axis = p._cast(axis, DataType.INT32)
    axis = p._reshape(axis, [1] * r, zero_is_placeholder=False)
    E = ElementWiseOperation
    hits = [p._ew(p._ew_const(axis, np.int32(k), E.EQUAL), p._ew_const(axis, np.int32(k - r), E.EQUAL), E.OR)
            for k, _ in cands]
    ok = hits[0]
    for h in hits[1:]:
        ok = p._ew(ok, h, E.OR)
    assertion = p.network.add_assertion(p._reshape(ok, [], zero_is_placeholder=False),
                                        "DFT '%s': the axis value must be one of %s (the axes whose transform has "
                                        "the output's shape)" % (node.name, [k for k, _ in cands]))
    p._name_layer(assertion, "assert")
    y = cands[0][1]
    for (_, yk), h in zip(cands[1:], hits[1:]):
        y = p._L(p.network.add_select(h, yk, y))
    return y


def _dft_along(p: ImporterContext, node: Any, a: Dict[str, Any], x: Any, axis: int) -> Any:
    """The DFT of x along `axis` (normalized) as matrix multiplies."""
    xs = tuple(x.shape)
    r = len(xs)
    if axis == r - 1:
        raise Fail(ErrorCode.INVALID_NODE, "axis %d is the real/imaginary dim" % axis)
    n_in = xs[axis]
    if n_in < 0:
        raise unsupported("DFT along a dynamic axis", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    inverse, onesided = bool(int(a.get("inverse", 0))), bool(int(a.get("onesided", 0)))
    ln = p._inp(node, 1)
    if ln is not None:
        length = int(np.asarray(p._cval(ln, "dft_length")).reshape(-1)[0])
    else:
        length = 2 * (n_in - 1) if inverse and onesided else n_in
    if length <= 0:
        raise Fail(ErrorCode.INVALID_NODE, "dft_length %d" % length)
    return _dft_matmul(p, x, axis, length, inverse, onesided)


def _dft_matmul(p: ImporterContext, x: Any, axis: int, length: int, inverse: bool, onesided: bool) -> Any:
    """The DFT of x (..., 1 or 2 for real / complex) along `axis` as matrix multiplies by the transform matrices."""
    xs = tuple(x.shape)
    r = len(xs)
    n_in = xs[axis]
    complex_in = xs[-1] == 2
    mats, k_out = _dft_matrices(n_in, length, inverse, onesided, complex_in)
    perm = [i for i in range(r - 1) if i != axis] + [axis]  # the signal axis last
    parts = [p._transpose(p._squeeze(p._gather_axis(x, r - 1, np.array([c])), [r - 1]), perm)
             for c in range(2 if complex_in else 1)]
    outs = []
    for row in mats:
        acc = None
        for part, m in zip(parts, row):
            if m is None:
                continue
            mt = p._const_tensor(m.astype(np.float32).reshape((1,) * (r - 3) + m.shape), DataType.FLOAT)
            y = p._L(p.network.add_matrix_multiply(part, MatrixOperation.NONE, mt, MatrixOperation.NONE))
            acc = y if acc is None else p._ew(acc, y, ElementWiseOperation.SUM)
        outs.append(p._unsqueeze(acc, [r - 1]))
    y = outs[0] if len(outs) == 1 else p._concat_layer(outs, r - 1)  # (..., K, 1 or 2) in perm's order
    inv = [perm.index(i) for i in range(r - 1)] + [r - 1]
    del k_out
    return p._transpose(y, inv)


@importer("STFT",
          restrictions="frame_step and frame_length constants, the signal length static; frames gathered, windowed and "
                       "transformed by matrix multiplies (O(n^2) per frame)",
          opsets=(17, None))
def _stft(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """Frame f holds samples f * frame_step .. + frame_length - 1 of each signal (a gather along the signal axis),
    times the window, then its DFT (one-sided by default): output (B, frames, bins, 2)."""
    x = p._float(p._tensor(node.input[0]), "STFT's signal")
    xs = tuple(x.shape)
    if len(xs) != 3 or xs[2] not in (1, 2):
        raise Fail(ErrorCode.INVALID_NODE, "STFT's signal must be (batch, length, 1 or 2), got %s" % (xs,))
    n = xs[1]
    if n < 0:
        raise unsupported("STFT of a signal of dynamic length", ErrorCode.UNSUPPORTED_NODE_SHAPE)
    step = int(np.asarray(p._cval(p._inp(node, 1), "frame_step")).reshape(-1)[0])
    wn, fln = p._inp(node, 2), p._inp(node, 3)
    window = p._float(p._tensor(wn), "STFT's window") if wn else None
    if window is not None and (len(window.shape) != 1 or window.shape[0] < 0):
        raise Fail(ErrorCode.INVALID_NODE, "STFT's window must be 1-D and static, got %s" % (tuple(window.shape),))
    length = int(np.asarray(p._cval(fln, "frame_length")).reshape(-1)[0]) if fln else None
    if length is None:
        if window is None:
            raise Fail(ErrorCode.INVALID_NODE, "STFT needs a window or a frame_length")
        length = int(window.shape[0])
    if window is not None and int(window.shape[0]) != length:
        raise Fail(ErrorCode.INVALID_NODE, "STFT's window has %d values for frame_length %d"
                   % (window.shape[0], length))
    if step <= 0 or length <= 0 or length > n:
        raise Fail(ErrorCode.INVALID_NODE, "STFT with frame_step %d and frame_length %d of a signal of length %d"
                   % (step, length, n))
    frames = 1 + (n - length) // step
    bound_dims_constant(frames * length, "STFT of %d frames of %d samples: its frame index table" % (frames, length))
    idx = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
    fr = p._gather_axis(x, 1, idx)  # (B, frames, length, 1 or 2)
    if window is not None:
        fr = p._ew(fr, p._reshape(window, [1, 1, length, 1], zero_is_placeholder=False), ElementWiseOperation.PROD)
    return [_dft_matmul(p, fr, 2, length, False, bool(int(a.get("onesided", 1))))]


_DET_MAX = 5  # Leibniz terms: n! (120 at n = 5)


@importer("Det",
          restrictions="the matrix size N static and at most %d (Leibniz expansion over the N! permutations); "
                       "batch dims any" % _DET_MAX)
def _det(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    """det(X) over the last two dims: sum over the permutations s of sign(s) * prod_i X[i, s(i)], as one gather of
    X's flattened N*N entries per row i (all permutations at once), their product, the signs, and a sum."""
    import itertools
    x = p._float(p._tensor(node.input[0]), "Det's input")
    r = len(x.shape)
    if r < 2 or x.shape[-1] != x.shape[-2]:
        raise Fail(ErrorCode.INVALID_NODE, "Det needs square matrices in the last two dims, got shape %s"
                   % (tuple(x.shape),))
    n = int(x.shape[-1])
    if n < 1 or n > _DET_MAX:
        raise unsupported("Det of %s matrices (N static, from 1 to %d)" % ("dynamic" if n < 0 else "%dx%d" % (n, n),
                                                                           _DET_MAX))
    batch = list(x.shape[:-2])
    flat = p._reshape(x, [0] * len(batch) + [n * n])
    perms = list(itertools.permutations(range(n)))
    signs = np.array([(-1) ** sum(1 for i in range(n) for j in range(i + 1, n) if s[i] > s[j]) for s in perms],
                     np.float32)
    prod = None
    for i in range(n):
        t = p._gather_axis(flat, len(batch), np.array([i * n + s[i] for s in perms], np.int32))
        prod = t if prod is None else p._ew(prod, t, ElementWiseOperation.PROD)
    terms = p._ew_const(prod, signs, ElementWiseOperation.PROD)
    return [p._L(p.network.add_reduce(terms, ReduceOperation.SUM, 1 << len(batch), False))]
