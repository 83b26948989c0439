/*
 * matmul_shape.c -- operand shapes and batch broadcast of matrix_multiply (see matmul_shape.h).
 */
#include <string.h>

#include "kernels/matmul_shape.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct mm_operand {
    int op;             /* trtl_matrix_op */
    int nbatch;         /* number of batch dims */
    int64_t rows, cols; /* of op(X): A: M x K; B: K x N */
    int64_t mat;        /* elements per matrix */
} mm_operand;

static trtl_status operand(const trtl_node *nd, const trtl_dims *d, int op, int which, mm_operand *o)
{
    char s1[TRTL_DIMS_STR_MAX];
    int need = op == TRTL_MATOP_VECTOR ? 1 : 2;
    if (op < TRTL_MATOP_NONE || op > TRTL_MATOP_VECTOR || d->nb_dims < need)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d %s cannot be used with matrix operation %d",
                          nd->name, which, trtl_dims_str(d, s1, sizeof s1), op);
    int r = d->nb_dims;
    o->op = op;
    o->nbatch = r - need;
    if (op == TRTL_MATOP_VECTOR) {
        /* A vector is one row of A or one column of B */
        o->rows = which == 0 ? 1 : d->d[r - 1];
        o->cols = which == 0 ? d->d[r - 1] : 1;
        o->mat = d->d[r - 1];
    } else {
        int tr = op == TRTL_MATOP_TRANSPOSE;
        o->rows = tr ? d->d[r - 1] : d->d[r - 2];
        o->cols = tr ? d->d[r - 2] : d->d[r - 1];
        o->mat = d->d[r - 1] * d->d[r - 2];
    }
    return TRTL_OK;
}

int trtl_mm_shape_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    int n0 = nd->p.matmul.op0 == TRTL_MATOP_VECTOR ? 1 : 2, n1 = nd->p.matmul.op1 == TRTL_MATOP_VECTOR ? 1 : 2;
    return nd->n_in >= 2 && in_dims[0].nb_dims >= n0 && in_dims[1].nb_dims >= n1;
}

trtl_status trtl_mm_shape_of(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out,
                             const char *kernel, trtl_mm_shape *s)
{
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    memset(s, 0, sizeof *s);
    if (nd->n_in < 2 || in[0].dtype != TRTL_FLOAT || in[1].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s needs two FLOAT inputs", nd->name, kernel);
    const trtl_dims *ad = &in[0].dims, *bd = &in[1].dims;
    mm_operand oa, ob;
    TRTL_TRY(operand(nd, ad, nd->p.matmul.op0, 0, &oa));
    TRTL_TRY(operand(nd, bd, nd->p.matmul.op1, 1, &ob));
    if (oa.cols != ob.rows)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': inner dimensions differ: %s (op %d) x %s (op %d)", nd->name,
                          trtl_dims_str(ad, s1, sizeof s1), oa.op, trtl_dims_str(bd, s2, sizeof s2), ob.op);
    s->op0 = oa.op;
    s->op1 = ob.op;
    s->M = oa.rows;
    s->K = oa.cols;
    s->N = ob.cols;
    s->nb = oa.nbatch > ob.nbatch ? oa.nbatch : ob.nbatch;
    /* right-aligned broadcast of the batch dims; strides in elements */
    int64_t sa = oa.mat, sb = ob.mat, nbat = 1, abat = 1, bbat = 1;
    for (int d = s->nb - 1; d >= 0; d--) {
        int ia = d - (s->nb - oa.nbatch), ib = d - (s->nb - ob.nbatch);
        int64_t da = ia >= 0 ? ad->d[ia] : 1, db = ib >= 0 ? bd->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': batch dims of %s and %s do not broadcast", nd->name,
                              trtl_dims_str(ad, s1, sizeof s1), trtl_dims_str(bd, s2, sizeof s2));
        s->bdims[d] = da > db ? da : db;
        if (da == 0 || db == 0)
            s->bdims[d] = 0;
        s->astr[d] = da == 1 ? 0 : sa;
        s->bstr[d] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        nbat *= s->bdims[d];
        abat *= da;
        bbat *= db;
    }
    s->nbat = nbat;
    if (trtl_volume(&out[0].dims) != nbat * s->M * s->N)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not hold %lld products of %lld x %lld", nd->name,
                          trtl_dims_str(&out[0].dims, s1, sizeof s1), (long long)nbat, (long long)s->M,
                          (long long)s->N);
    /* A weight shared by a stack of plain matrices or vectors: one tall product */
    if (bbat == 1 && abat == nbat && oa.op != TRTL_MATOP_TRANSPOSE && nbat > 1) {
        s->M *= nbat;
        s->nb = 0;
        s->nbat = 1;
    }
    if (s->op0 == TRTL_MATOP_TRANSPOSE) { /* stored [K, M] */
        s->a_sm = 1;
        s->a_sk = s->M;
    } else { /* stored [M, K] (vector: M = 1) */
        s->a_sm = s->K;
        s->a_sk = 1;
    }
    if (s->op1 == TRTL_MATOP_NONE) { /* stored [K, N] */
        s->b_sk = s->N;
        s->b_sn = 1;
    } else { /* stored [N, K] (vector: N = 1) */
        s->b_sk = 1;
        s->b_sn = s->K;
    }
    return TRTL_OK;
}

void trtl_mm_batch_offsets(const trtl_mm_shape *s, int64_t bat, int64_t *aoff, int64_t *boff)
{
    int64_t a = 0, b = 0, rem = bat;
    for (int d = s->nb - 1; d >= 0; d--) {
        int64_t idx = rem % s->bdims[d];
        rem /= s->bdims[d];
        a += idx * s->astr[d];
        b += idx * s->bstr[d];
    }
    *aoff = a;
    *boff = b;
}
