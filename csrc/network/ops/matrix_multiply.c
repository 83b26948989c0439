/* matrix_multiply.c -- IMatrixMultiplyLayer: batched, broadcasting matrix product.
 * Per input: NONE -> the last two dims are the matrix, TRANSPOSE -> the same, swapped, VECTOR -> the
 * last dim is a vector.  The remaining leading dims are batch dims: same count on both inputs, each
 * pair equal or 1.  Output: broadcast batch + [M, N], M dropped for a VECTOR op0, N for a VECTOR op1. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_matrix_multiply[] = {
    TRTL_A_ENUM("op0", matmul.op0, "MatrixOperation", TRTL_MATOP_COUNT),
    TRTL_A_ENUM("op1", matmul.op1, "MatrixOperation", TRTL_MATOP_COUNT),
};
TRTL_NATTRS(matrix_multiply);

void trtl_init_matrix_multiply(trtl_params *p)
{
    p->matmul.op0 = TRTL_MATOP_NONE;
    p->matmul.op1 = TRTL_MATOP_NONE;
}

static trtl_status check_ops(const trtl_matmul_params *p, const char *layer)
{
    if (p->op0 < TRTL_MATOP_NONE || p->op0 > TRTL_MATOP_VECTOR)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown op0 %d", layer, (int)p->op0);
    if (p->op1 < TRTL_MATOP_NONE || p->op1 > TRTL_MATOP_VECTOR)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown op1 %d", layer, (int)p->op1);
    return TRTL_OK;
}

trtl_status trtl_lower_matrix_multiply(trtl_params *p, const trtl_lower_ctx *c)
{
    return check_ops(&p->matmul, c->layer_name);
}

static int mm_unknown(int64_t a, int64_t b) { return a < 0 || b < 0; }

trtl_status trtl_infer_matrix_multiply(const trtl_infer_ctx *c)
{
    const trtl_matmul_params *p = &c->p->matmul;
    const trtl_dims *A = &c->in[0], *B = &c->in[1];
    char sa[TRTL_DIMS_STR_MAX], sb[TRTL_DIMS_STR_MAX];
    static const char *const opn[] = {"NONE", "TRANSPOSE", "VECTOR"};
    TRTL_TRY(check_ops(p, c->layer_name));
    /* FLOAT (16-bit floats are computed as FLOAT: network/half_compute.c), or INT32 / INT64 (both inputs
     * of one type; wrapping integer math, the reference kernel) */
    trtl_dtype t0 = c->in_type[0];
    if ((t0 != TRTL_FLOAT && t0 != TRTL_INT32 && t0 != TRTL_INT64) || c->in_type[1] != t0)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': matrix multiply needs FLOAT inputs (or two INT32 or two INT64 "
                          "inputs), got %s and %s", c->layer_name, trtl_dtype_name(t0),
                          trtl_dtype_name(c->in_type[1]));
    const trtl_dims *in[2] = {A, B};
    int32_t op[2] = {p->op0, p->op1};
    for (int i = 0; i < 2; i++) {
        int need = op[i] == TRTL_MATOP_VECTOR ? 1 : 2;
        if (in[i]->nb_dims < need)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d %s has %d dims; op%d %s needs at least %d",
                              c->layer_name, i, trtl_dims_str(in[i], sa, sizeof sa), (int)in[i]->nb_dims, i,
                              opn[op[i]], need);
    }
    int32_t ra = A->nb_dims - (p->op0 == TRTL_MATOP_VECTOR ? 1 : 2);
    int32_t rb = B->nb_dims - (p->op1 == TRTL_MATOP_VECTOR ? 1 : 2);
    if (ra != rb)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': inputs %s (op0 %s) and %s (op1 %s) have %d and %d batch dims; they must have the same number",
                          c->layer_name, trtl_dims_str(A, sa, sizeof sa), opn[p->op0], trtl_dims_str(B, sb, sizeof sb),
                          opn[p->op1], (int)ra, (int)rb);
    /* A as [M, K], B as [K, N] */
    int64_t M, Ka, Kb, N;
    if (p->op0 == TRTL_MATOP_VECTOR) {
        M = 1;
        Ka = A->d[ra];
    } else {
        M = A->d[ra + (p->op0 == TRTL_MATOP_TRANSPOSE)];
        Ka = A->d[ra + (p->op0 != TRTL_MATOP_TRANSPOSE)];
    }
    if (p->op1 == TRTL_MATOP_VECTOR) {
        N = 1;
        Kb = B->d[rb];
    } else {
        Kb = B->d[rb + (p->op1 == TRTL_MATOP_TRANSPOSE)];
        N = B->d[rb + (p->op1 != TRTL_MATOP_TRANSPOSE)];
    }
    if (!mm_unknown(Ka, Kb) && Ka != Kb)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': inner dimensions differ: input 0 %s (op0 %s) gives K = %lld, input 1 %s (op1 %s) gives K = %lld",
                          c->layer_name, trtl_dims_str(A, sa, sizeof sa), opn[p->op0], (long long)Ka,
                          trtl_dims_str(B, sb, sizeof sb), opn[p->op1], (long long)Kb);
    trtl_dims ba = *A, bb = *B, o;
    ba.nb_dims = ra;
    bb.nb_dims = rb;
    for (int32_t i = 0; i < ra; i++) {
        int64_t x = ba.d[i], y = bb.d[i];
        if (x >= 0 && y >= 0 && x != y && x != 1 && y != 1)
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': batch dim %d cannot broadcast: %s and %s (each pair must be equal or 1)",
                              c->layer_name, (int)i, trtl_dims_str(A, sa, sizeof sa), trtl_dims_str(B, sb, sizeof sb));
    }
    TRTL_TRY(trtl_broadcast_dims(c->layer_name, &ba, &bb, &o));
    if (p->op0 != TRTL_MATOP_VECTOR)
        o.d[o.nb_dims++] = M;
    if (p->op1 != TRTL_MATOP_VECTOR)
        o.d[o.nb_dims++] = N;
    c->out[0] = o;
    c->out_type[0] = t0;
    return TRTL_OK;
}
