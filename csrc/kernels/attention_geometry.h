/*
 * attention_geometry.h -- the geometry of an ATTENTION node (params in core/params.h) as its
 * kernels see it (kernels/ref/attention.c, kernels/x86/attention.c).
 *
 * The output's batch dims (all but the last two) are flattened into nb "batches"; each operand
 * is addressed through per-dim element strides that are 0 where it broadcasts (a dim of 1), so
 * batch b reads Q at q_off(b), K at k_off(b), ...  The mask (rank r) is likewise broadcast over
 * all r dims: row i of batch b starts at m_off(b) + i * m_row and steps m_col (0 or 1) per key;
 * with mask_mode 2 its dim 0 repeats along the output's dim 0 (index taken modulo m_period0).
 * K and V batch dims that divide the output's (grouped-query attention) are read at index i / krep[d]
 * (i / vrep[d]): output head h reads key head h / (Hq / Hkv), as ONNX Attention repeats them.
 * A row's attendable keys are j < lim(i) = i + causal_off + 1 with causal (all Sk without), and, with a
 * BOOL mask (mask_bool), those whose mask value is nonzero.
 */
#ifndef TRTL_KERNELS_ATTENTION_GEOMETRY_H
#define TRTL_KERNELS_ATTENTION_GEOMETRY_H

#include <stdint.h>
#include "kernels/kernel.h"

typedef struct trtl_attn_geom {
    int64_t nb, Sq, Sk, D, Dv;
    int nbd;                                  /* batch dims */
    int64_t bdims[TRTL_MAX_DIMS];
    int64_t qs[TRTL_MAX_DIMS], ks[TRTL_MAX_DIMS], vs[TRTL_MAX_DIMS], ms[TRTL_MAX_DIMS]; /* batch strides */
    int64_t k_row, k_col;                     /* K(j, d) at k + j * k_row + d * k_col */
    int64_t m_row, m_col;                     /* mask(i, j) at m + i * m_row + j * m_col */
    int has_mask;
    int64_t m_period0;                        /* mask_mode 2: mask dim 0 (batch b reads b mod it); else 0 */
    float scale;
    int64_t krep[TRTL_MAX_DIMS], vrep[TRTL_MAX_DIMS]; /* grouped-query divisors (1: plain) */
    int mask_bool;                            /* the mask is BOOL (uint8): allowed where nonzero */
    int norm_none;                            /* norm_op NONE: the weights are the masked scores */
    int causal;                               /* keys j >= i + causal_off + 1 are masked out */
    int64_t causal_off;                       /* 0 (upper left) or Sk - Sq (lower right) */
    int empty_zero;                           /* a row without an attendable key: weights 0, not NaN */
} trtl_attn_geom;

/* Keys of query row i that causality leaves (all Sk without causality), in 0..Sk. */
static inline int64_t trtl_attn_limit(const trtl_attn_geom *g, int64_t i)
{
    if (!g->causal)
        return g->Sk;
    int64_t l = i + g->causal_off + 1;
    return l < 0 ? 0 : l > g->Sk ? g->Sk : l;
}

/* Geometry of node nd for its inputs (3 or 4 views) and output dims yd; checks every dim against
 * the others.  Fails with a message naming the layer. */
trtl_status trtl_attn_geom_init(const trtl_node *nd, const trtl_tensor_view *in, const trtl_dims *yd,
                                trtl_attn_geom *g);

/* Element offsets of batch b (0 <= b < g->nb) into Q, K, V and the mask. */
static inline void trtl_attn_offsets(const trtl_attn_geom *g, int64_t b, int64_t *q, int64_t *k, int64_t *v,
                                     int64_t *m)
{
    int64_t oq = 0, ok = 0, ov = 0, om = 0;
    for (int d = g->nbd - 1; d >= 0; d--) {
        int64_t i = b % g->bdims[d];
        b /= g->bdims[d];
        oq += i * g->qs[d];
        om += (d == 0 && g->m_period0 ? i % g->m_period0 : i) * g->ms[d];
        ok += i / g->krep[d] * g->ks[d];
        ov += i / g->vrep[d] * g->vs[d];
    }
    *q = oq;
    *k = ok;
    *v = ov;
    *m = om;
}

#endif
