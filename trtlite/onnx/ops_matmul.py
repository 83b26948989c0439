"""Importers of matrix products: Gemm, MatMul."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .._enums import DataType, ElementWiseOperation, MatrixOperation
from .context import ImporterContext
from .errors import ErrorCode, Fail
from .registry import importer


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


@importer("MatMul",
          restrictions="floating-point operands")
def _matmul(p: ImporterContext, node: Any, a: Dict[str, Any]) -> List[Any]:
    an, bn = node.input[:2]
    A = p._float(p._tensor(an))
    B = p._float(p._tensor(bn, DataType.FLOAT))
    ra, rb = len(A.shape), len(B.shape)
    M = MatrixOperation
    op0 = M.VECTOR if ra == 1 else M.NONE
    op1 = M.VECTOR if rb == 1 else M.NONE
    ba = ra - (1 if ra == 1 else 2)
    bb = rb - (1 if rb == 1 else 2)
    if ba < bb:
        A = p._unsqueeze_to(A, ra + bb - ba)
    elif bb < ba:
        B = p._unsqueeze_to(B, rb + ba - bb)
    return [p._L(p.network.add_matrix_multiply(A, op0, B, op1))]
