/* scatter.c -- IScatterLayer: out = data, then the updates written where the INT32 indices point.
 *   ELEMENT (ONNX ScatterElements): indices and updates have data's rank and one shape, no larger
 *            than data's except along `axis`; update u at position p goes to p with p[axis] = indices[p].
 *   ND (ONNX ScatterND): indices [.., k] with 1 <= k <= rank(data) (k known at build time); updates
 *            = indices[:-1] + data[k:]; slice j of updates goes to data[indices[j]].
 * `reduction` (trtlite extension; TensorRT replaces) combines an update with the value in place:
 * NONE replaces (duplicates: the last in row-major order wins), SUM/PROD/MAX/MIN accumulate (FLOAT
 * and INT32 only).  Negative indices count from the end once; others out of range fail at run time.
 * Explicit batch only (TensorRT 10 has no implicit batch). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_scatter[] = {
    TRTL_A_ENUM("mode", scatter.mode, "ScatterMode", TRTL_SCATTER_COUNT),
    TRTL_A("axis", TRTL_ATTR_INT, scatter.axis),
    TRTL_A_ENUM("reduction", scatter.reduction, "ScatterReduction", TRTL_SCATTER_RED_COUNT),
};
TRTL_NATTRS(scatter);

void trtl_init_scatter(trtl_params *p)
{
    p->scatter.mode = TRTL_SCATTER_ELEMENT;
    p->scatter.axis = 0;
    p->scatter.reduction = TRTL_SCATTER_RED_NONE;
}

trtl_status trtl_lower_scatter(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': IScatterLayer needs an explicit-batch network",
                          c->layer_name);
    if (p->scatter.mode == TRTL_SCATTER_ELEMENT && c->n_in > 0 && c->in) {
        int32_t r = c->in[0].nb_dims, axis = p->scatter.axis;
        if (axis < -r || axis >= r)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for data of %d dims",
                              c->layer_name, (int)axis, (int)r);
        p->scatter.axis = axis < 0 ? axis + r : axis;
    }
    return TRTL_OK;
}

trtl_status trtl_infer_scatter(const trtl_infer_ctx *c)
{
    const trtl_scatter_params *s = &c->p->scatter;
    const char *L = c->layer_name;
    const trtl_dims *D = &c->in[0], *I = &c->in[1], *U = &c->in[2];
    char sd[TRTL_DIMS_STR_MAX], si[TRTL_DIMS_STR_MAX], su[TRTL_DIMS_STR_MAX];
    int32_t r = D->nb_dims, q = I->nb_dims;
    if (s->mode < 0 || s->mode >= TRTL_SCATTER_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown ScatterMode %d (mode)", L, (int)s->mode);
    if (s->reduction < 0 || s->reduction >= TRTL_SCATTER_RED_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown ScatterReduction %d (reduction)", L,
                          (int)s->reduction);
    if (c->in_type[1] != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': indices must be INT32, got %s", L, trtl_dtype_name(c->in_type[1]));
    if (c->in_type[2] != c->in_type[0])
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': updates must have the data's type %s, got %s", L,
                          trtl_dtype_name(c->in_type[0]), trtl_dtype_name(c->in_type[2]));
    if (s->reduction != TRTL_SCATTER_RED_NONE && c->in_type[0] != TRTL_FLOAT && c->in_type[0] != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': a scatter with a reduction needs FLOAT or INT32 data, got %s", L,
                          trtl_dtype_name(c->in_type[0]));
    if (r < 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': data must have at least 1 dim, got %s", L,
                          trtl_dims_str(D, sd, sizeof sd));
    trtl_dims_str(D, sd, sizeof sd);
    trtl_dims_str(I, si, sizeof si);
    trtl_dims_str(U, su, sizeof su);
    if (s->mode == TRTL_SCATTER_ELEMENT) {
        if (s->axis < 0 || s->axis >= r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis %d is out of range for data %s", L, (int)s->axis, sd);
        if (q != r || U->nb_dims != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ELEMENT mode needs data, indices and updates of one rank, got "
                              "%s, %s and %s", L, sd, si, su);
        for (int32_t i = 0; i < r; i++) {
            if (I->d[i] >= 0 && U->d[i] >= 0 && I->d[i] != U->d[i])
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ELEMENT mode needs updates of the indices' shape, got "
                                  "indices %s and updates %s", L, si, su);
            if (i != s->axis && I->d[i] >= 0 && D->d[i] >= 0 && I->d[i] > D->d[i])
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ELEMENT mode: indices %s exceed data %s in dimension %d "
                                  "(only the axis %d may)", L, si, sd, (int)i, (int)s->axis);
        }
    } else {
        if (q < 1)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND mode needs indices of at least 1 dim, got %s", L, si);
        int64_t k = I->d[q - 1];
        if (k < 0)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND mode needs the last dimension of indices %s known at build "
                              "time", L, si);
        if (k < 1 || k > r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND mode: the last dimension of indices %s is %lld, must be "
                              "1..%d (data %s)", L, si, (long long)k, (int)r, sd);
        int32_t ur = q - 1 + r - (int32_t)k;
        int ok = U->nb_dims == ur;
        for (int32_t i = 0; ok && i < ur; i++) {
            int64_t want = i < q - 1 ? I->d[i] : D->d[(int32_t)k + i - (q - 1)];
            ok = want < 0 || U->d[i] < 0 || U->d[i] == want;
        }
        if (!ok)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND mode needs updates of shape indices[:-1] + data[%lld:], got "
                              "data %s, indices %s and updates %s", L, (long long)k, sd, si, su);
    }
    c->out[0] = *D;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
