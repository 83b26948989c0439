/* gather.c -- IGatherLayer on data (rank r, any type) and INT32 indices (rank q).  The first
 * b = num_elementwise_dims dims of data and indices are paired (equal, or broadcast from 1).
 *   DEFAULT: out = paired + data[b:axis] + indices[b:] + data[axis+1:]   (rank r + q - 1 - b)
 *   ELEMENT: GatherElements along axis; q == r, out dims = indices dims (paired dims broadcast)
 *   ND:      GatherND (ONNX, batch_dims = b); k = indices[q-1] (known at build), 1 <= k <= r - b;
 *            out = paired + indices[b:q-1] + data[b+k:]
 * Negative indices count from the end once; other out-of-range indices fail at run time.
 * Lowered form (implicit batch): axis + 1, num_elementwise_dims + 1 (the batch is paired). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_gather[] = {
    TRTL_A("axis", TRTL_ATTR_INT, gather.axis),
    TRTL_A("num_elementwise_dims", TRTL_ATTR_INT, gather.num_elementwise_dims),
    TRTL_A_ENUM("mode", gather.mode, "GatherMode", TRTL_GATHER_COUNT),
};
TRTL_NATTRS(gather);

void trtl_init_gather(trtl_params *p)
{
    p->gather.axis = 0;
    p->gather.num_elementwise_dims = 0;
    p->gather.mode = TRTL_GATHER_DEFAULT;
}

trtl_status trtl_lower_gather(trtl_params *p, const trtl_lower_ctx *c)
{
    trtl_gather_params *g = &p->gather;
    const char *L = c->layer_name;
    int imp = c->implicit_batch ? 1 : 0;
    if (g->mode < TRTL_GATHER_DEFAULT || g->mode > TRTL_GATHER_ND)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown GatherMode %d (mode)", L, (int)g->mode);
    if (g->num_elementwise_dims < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_elementwise_dims %d must be >= 0", L,
                          (int)g->num_elementwise_dims);
    if (g->mode == TRTL_GATHER_ELEMENT && g->num_elementwise_dims != 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_elementwise_dims must be 0 in ELEMENT mode, got %d",
                          L, (int)g->num_elementwise_dims);
    if (g->mode != TRTL_GATHER_ND) {
        int32_t axis = g->axis;
        if (c->n_in > 0 && c->in) {
            int32_t rank = c->in[0].nb_dims - imp;
            if (axis < 0)
                axis += rank;
            if (axis < 0 || axis >= rank)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for data of %d dims",
                                  L, (int)g->axis, (int)rank);
        } else if (axis < 0) {
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is negative", L, (int)axis);
        }
        if (axis < g->num_elementwise_dims)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d must not be less than num_elementwise_dims %d",
                              L, (int)axis, (int)g->num_elementwise_dims);
        g->axis = axis + imp;
    }
    g->num_elementwise_dims += imp;
    return TRTL_OK;
}

trtl_status trtl_infer_gather(const trtl_infer_ctx *c)
{
    const trtl_gather_params *g = &c->p->gather;
    const char *L = c->layer_name;
    const trtl_dims *D = &c->in[0], *I = &c->in[1];
    char sd[TRTL_DIMS_STR_MAX], si[TRTL_DIMS_STR_MAX];
    int32_t r = D->nb_dims, q = I->nb_dims, b = g->num_elementwise_dims, axis = g->axis;
    if (g->mode < TRTL_GATHER_DEFAULT || g->mode > TRTL_GATHER_ND)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown GatherMode %d (mode)", L, (int)g->mode);
    if (c->in_type[1] != TRTL_INT32 && c->in_type[1] != TRTL_INT64)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': indices must be INT32 or INT64, got %s", L,
                          trtl_dtype_name(c->in_type[1]));
    if (r < 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': data must have at least 1 dim, got %s", L,
                          trtl_dims_str(D, sd, sizeof sd));
    if (b < 0 || b >= r || b > q)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': num_elementwise_dims %d needs data and indices of more dims, got data %s and "
                          "indices %s",
                          L, (int)b, trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si));
    trtl_dims o = {0};
    for (int32_t i = 0; i < b; i++) { /* paired dims broadcast */
        int64_t x = D->d[i], y = I->d[i];
        if (x == y || y == 1)
            o.d[i] = x;
        else if (x == 1)
            o.d[i] = y;
        else if (x < 0 || y < 0)
            o.d[i] = x < 0 ? y : x;
        else
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': data %s and indices %s differ in paired (elementwise) dimension %d", L,
                              trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si), (int)i);
    }
    int32_t n = b;
    if (g->mode != TRTL_GATHER_ND && (axis < b || axis >= r))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis %d is out of range for data %s (num_elementwise_dims %d)",
                          L, (int)axis, trtl_dims_str(D, sd, sizeof sd), (int)b);
    if (g->mode == TRTL_GATHER_DEFAULT) {
        if (r + q - 1 - b > TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output of data %s and indices %s would have %d dims (max %d)",
                              L, trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si), (int)(r + q - 1 - b),
                              TRTL_MAX_DIMS);
        for (int32_t i = b; i < axis; i++)
            o.d[n++] = D->d[i];
        for (int32_t i = b; i < q; i++)
            o.d[n++] = I->d[i];
        for (int32_t i = axis + 1; i < r; i++)
            o.d[n++] = D->d[i];
    } else if (g->mode == TRTL_GATHER_ELEMENT) {
        if (q != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ELEMENT mode needs indices of the data's rank, got data %s and indices %s",
                              L, trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si));
        for (int32_t i = b; i < r; i++) {
            if (i != axis && D->d[i] >= 0 && I->d[i] > D->d[i])
                return trtl_error(TRTL_ERR_SHAPE,
                                  "layer '%s': ELEMENT mode: indices %s exceed data %s in dimension %d (only the axis %d may)",
                                  L, trtl_dims_str(I, si, sizeof si), trtl_dims_str(D, sd, sizeof sd), (int)i, (int)axis);
            o.d[n++] = I->d[i];
        }
    } else {
        if (q < b + 1)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND mode needs indices of at least %d dims, got %s", L,
                              (int)b + 1, trtl_dims_str(I, si, sizeof si));
        int64_t k = I->d[q - 1];
        if (k < 0)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND mode needs the last dimension of indices %s known at build time",
                              L, trtl_dims_str(I, si, sizeof si));
        if (k < 1 || k > r - b)
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': ND mode: the last dimension of indices %s is %lld, must be 1..%d (data %s, "
                              "num_elementwise_dims %d)",
                              L, trtl_dims_str(I, si, sizeof si), (long long)k, (int)(r - b),
                              trtl_dims_str(D, sd, sizeof sd), (int)b);
        if (q - 1 + r - b - (int32_t)k > TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND output would have more than %d dims", L, TRTL_MAX_DIMS);
        for (int32_t i = b; i < q - 1; i++)
            o.d[n++] = I->d[i];
        for (int32_t i = b + (int32_t)k; i < r; i++)
            o.d[n++] = D->d[i];
    }
    o.nb_dims = n;
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
