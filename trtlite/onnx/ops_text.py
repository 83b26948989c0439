"""TfIdfVectorizer over integer tokens (session 11): n-gram counts of a constant pool, composed from slices,
comparisons and sums, so no layer of its own is needed.

For pool n-gram g (length n, from min_gram_length to max_gram_length) and each skip distance d from 1 to
max_skip_count + 1 (unigrams only at d = 1, as ONNX's reference counts them once), the matches of g at the
positions i, i + d, ..., i + (n - 1) d of each row are the AND of n equalities of shifted slices of the row; their
sum over i and d is g's count.  A constant one-hot matrix maps the pool entries to their output columns
(ngram_indexes; entries sharing a column add up), after the IDF / TFIDF weighting of each pool n-gram by its
weight (the ONNX spec's and onnxruntime's reading; onnx's reference implementation indexes weights by output
column, which agrees where ngram_indexes is the identity).
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import DataType, ElementWiseOperation, MatrixOperation, ReduceOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail, bound_dims_constant, unsupported
from .registry import importer

E = ElementWiseOperation


def _pool(a: Dict[str, Any]) -> List[np.ndarray]:
    """The pool's n-grams in order (ngram_counts[k] is where the (k + 1)-grams start)."""
    pool = np.asarray(a.get("pool_int64s", []), np.int64)
    counts = [int(c) for c in a.get("ngram_counts", [])]
    grams = []
    for k, start in enumerate(counts):
        end = counts[k + 1] if k + 1 < len(counts) else pool.size
        n = k + 1
        if (end - start) % n:
            raise Fail(ErrorCode.INVALID_NODE, "TfIdfVectorizer: pool entries %d..%d do not split into %d-grams"
                       % (start, end, n))
        grams.extend(pool[j:j + n] for j in range(start, end, n))
    return grams


@importer("TfIdfVectorizer",
          restrictions="integer tokens (pool_int64s; pool_strings: no string tensors); the row length static; "
                       "pool values within int32")
def _tfidf(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    x = p._tensor(node.input[0])
    if a.get("pool_strings"):
        raise unsupported("TfIdfVectorizer over strings (pool_strings): trtlite, like TensorRT, has no string "
                          "tensors", ErrorCode.UNSUPPORTED_NODE_DATATYPE)
    if x.dtype not in (DataType.INT32, DataType.INT64):
        raise unsupported("TfIdfVectorizer over %s tokens (integer tokens only)" % DataType(x.dtype).name,
                          ErrorCode.UNSUPPORTED_NODE_DATATYPE)
    r = len(x.shape)
    if r not in (1, 2):
        raise Fail(ErrorCode.INVALID_NODE, "TfIdfVectorizer's input must be [C] or [B, C], got shape %s"
                   % (tuple(x.shape),))
    C = int(x.shape[-1])
    if C < 0:
        raise unsupported("TfIdfVectorizer with a dynamic row length", ErrorCode.UNSUPPORTED_NODE_DYNAMIC)
    lo, hi, skip = int(a.get("min_gram_length", 1)), int(a.get("max_gram_length", 1)), int(a.get("max_skip_count", 0))
    mode = a.get("mode", "TF")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("TF", "IDF", "TFIDF") or lo < 1 or hi < lo or skip < 0:
        raise Fail(ErrorCode.INVALID_NODE, "TfIdfVectorizer: mode %s, gram lengths %d..%d, skip %d" % (mode, lo, hi,
                                                                                                       skip))
    grams = _pool(a)
    index = [int(v) for v in a.get("ngram_indexes", [])]
    if len(index) != len(grams) or (index and min(index) < 0):
        raise Fail(ErrorCode.INVALID_NODE, "TfIdfVectorizer: %d ngram_indexes for %d pool n-grams"
                   % (len(index), len(grams)))
    if not grams:
        raise unsupported("TfIdfVectorizer with an empty pool (an output of width 0)")
    width = max(index) + 1
    bound_dims_constant(len(grams) * width, "TfIdfVectorizer of %d n-grams into %d columns: its n-gram to column "
                        "matrix" % (len(grams), width))
    weights = np.asarray(a.get("weights", []), np.float32)
    if weights.size and weights.size != len(grams):  # ONNX: the weight of each pool n-gram
        raise Fail(ErrorCode.INVALID_NODE, "TfIdfVectorizer: %d weights for %d pool n-grams" % (weights.size,
                                                                                               len(grams)))
    if x.dtype != DataType.INT32:
        x = p._cast(x, DataType.INT32)
    ax = r - 1
    zero = np.zeros((1,) * r, np.float32)
    counts = []
    for g in grams:
        n = len(g)
        total = None
        for d in (range(1, skip + 2) if n > 1 else (1,)):
            m = C - (n - 1) * d  # positions i with i + (n - 1) d < C
            if n < lo or n > hi or m <= 0:
                continue
            hit = None
            for j in range(n):
                eq = p._ew_const(p._slice(x, {ax: (j * d, m, 1)}), np.array(int(g[j]), np.int32), E.EQUAL)
                hit = eq if hit is None else p._ew(hit, eq, E.AND)
            c = p._L(p.network.add_reduce(p._cast(hit, DataType.FLOAT), ReduceOperation.SUM, 1 << ax, True))
            total = c if total is None else p._ew(total, c, E.SUM)
        if total is None:  # never counted: 0, shaped [..., 1]
            total = p._ew_const(p._L(p.network.add_reduce(p._cast(x, DataType.FLOAT), ReduceOperation.SUM, 1 << ax,
                                                          True)), zero, E.PROD)
        counts.append(total)
    onehot = np.zeros((len(grams), width), np.float32)
    for k, col in enumerate(index):
        onehot[k, col] += 1.0
    cnt = p._concat_layer(counts, ax) if len(counts) > 1 else counts[0]  # [..., K]
    if mode == "IDF":  # per pool n-gram: its weight (or 1) where it occurs
        cnt = p._cast(p._ew_const(cnt, np.float32(0), E.GREATER), DataType.FLOAT)
    if mode != "TF" and weights.size:
        cnt = p._ew_const(cnt, weights, E.PROD)
    mat = p._const_tensor(onehot, DataType.FLOAT)
    if r == 1:
        y = p._L(p.network.add_matrix_multiply(cnt, MatrixOperation.VECTOR, mat, MatrixOperation.NONE))
    else:
        y = p._L(p.network.add_matrix_multiply(cnt, MatrixOperation.NONE, mat, MatrixOperation.NONE))
    return [y]
