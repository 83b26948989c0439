/*
 * matrix_multiply.c -- "matrix_multiply.sgemm": C = op0(A) x op1(B) over broadcast batch dims,
 * then the fused residual + activation.
 *
 * Operands (TensorRT's MatrixOperation):
 *   A NONE [.., M, K]; TRANSPOSE [.., K, M]; VECTOR [.., K] (one row, M = 1)
 *   B NONE [.., K, N]; TRANSPOSE [.., N, K]; VECTOR [.., K] (one column, N = 1)
 * The batch dims (all but the matrix or vector dims) are right-aligned and broadcast (a dim of 1
 * or a missing dim repeats).  C is [batch.., M, N] with the vector dims dropped, which is the
 * same memory as [batch.., M, N] with M or N equal to 1, so the output dims are only checked for
 * their volume.
 *
 * When B has a single batch and A is a non-transposed, non-broadcast stack of matrices or vectors
 * (a constant weight applied to activations), the stack folds into one [batch*M, K] x op(B) GEMM.
 * Work items are (batch, row block, column block); blocks are only cut when there are fewer
 * batches than threads.  One-row / one-column products go to SGEMV, 1x1 to SDOT.
 */
#include <string.h>
#include <cblas.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct mm_operand {
    int op;            /* trtl_matrix_op */
    int nbatch;        /* number of batch dims */
    int64_t rows, cols; /* of op(X): A: M x K; B: K x N */
    int64_t mat;       /* elements per matrix */
} mm_operand;

typedef struct mm_job {
    const trtl_epilogue *epi;
    const float *A, *B, *res;
    float *C;
    int op0, op1;
    int64_t M, N, K;
    int nb;                         /* output batch dims */
    int64_t bdims[TRTL_MAX_DIMS];   /* output batch dims */
    int64_t astr[TRTL_MAX_DIMS], bstr[TRTL_MAX_DIMS]; /* per output batch dim, 0 when broadcast */
    int64_t mb, nbk, nmb, nnb;      /* row block, column block, blocks along M and N */
} mm_job;

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

/* Element strides of A(m, k) and B(k, n) in their stored matrices. */
static void a_strides(const mm_job *j, int64_t *sm, int64_t *sk)
{
    if (j->op0 == TRTL_MATOP_TRANSPOSE) { /* stored [K, M] */
        *sm = 1;
        *sk = j->M;
    } else { /* stored [M, K] (vector: M = 1) */
        *sm = j->K;
        *sk = 1;
    }
}

static void b_strides(const mm_job *j, int64_t *sk, int64_t *sn)
{
    if (j->op1 == TRTL_MATOP_NONE) { /* stored [K, N] */
        *sk = j->N;
        *sn = 1;
    } else { /* stored [N, K] (vector: N = 1) */
        *sk = 1;
        *sn = j->K;
    }
}

static void mm_items(void *ctx, int64_t b, int64_t e, int thread)
{
    const mm_job *j = ctx;
    (void)thread;
    int64_t asm_, ask, bsk, bsn;
    a_strides(j, &asm_, &ask);
    b_strides(j, &bsk, &bsn);
    /* stored transposed: A [K, M], B [N, K] (strides alone are ambiguous when K == 1) */
    const int ta = j->op0 == TRTL_MATOP_TRANSPOSE, tb = j->op1 != TRTL_MATOP_NONE;
    for (int64_t it = b; it < e; it++) {
        int64_t nbi = it % j->nnb, mbi = (it / j->nnb) % j->nmb, bat = it / j->nnb / j->nmb;
        /* batch offsets of A and B (broadcast dims have stride 0) */
        int64_t aoff = 0, boff = 0, rem = bat;
        for (int d = j->nb - 1; d >= 0; d--) {
            int64_t idx = rem % j->bdims[d];
            rem /= j->bdims[d];
            aoff += idx * j->astr[d];
            boff += idx * j->bstr[d];
        }
        int64_t m0 = mbi * j->mb, n0 = nbi * j->nbk;
        int64_t mm = j->M - m0 < j->mb ? j->M - m0 : j->mb, nn = j->N - n0 < j->nbk ? j->N - n0 : j->nbk;
        const float *A = j->A + aoff + m0 * asm_, *B = j->B + boff + n0 * bsn;
        float *C = j->C + bat * j->M * j->N + m0 * j->N + n0;
        const int K = (int)j->K, ldc = (int)j->N;
        /* residual prefilled into C, BLAS accumulates onto it */
        const float *rt = j->res ? j->res + (C - j->C) : NULL;
        for (int64_t m = 0; rt && m < mm; m++)
            trtl_epi_prefill(C + m * j->N, rt + m * j->N, 0.0f, NULL, nn);
        if (!rt && (mm == 1 || nn == 1)) /* SGEMV's beta = 0 may keep NaNs of the old contents in some BLAS */
            for (int64_t m = 0; m < mm; m++)
                memset(C + m * j->N, 0, (size_t)nn * sizeof(float));
        const float beta = rt || mm == 1 || nn == 1 ? 1.0f : 0.0f;
        if (j->K == 0) {
            for (int64_t m = 0; !rt && m < mm; m++)
                memset(C + m * j->N, 0, (size_t)nn * sizeof(float));
        } else if (mm == 1 && nn == 1) {
            C[0] += cblas_sdot(K, A, (int)ask, B, (int)bsk);
        } else if (mm == 1) {
            /* c[n] = sum_k a[k] B(k, n) */
            if (!tb)
                cblas_sgemv(CblasRowMajor, CblasTrans, K, (int)nn, 1.0f, B, (int)bsk, A, (int)ask, beta, C, 1);
            else
                cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)nn, K, 1.0f, B, (int)bsn, A, (int)ask, beta, C, 1);
        } else if (nn == 1) {
            /* c[m] = sum_k A(m, k) b[k] */
            if (!ta)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)mm, K, 1.0f, A, (int)asm_, B, (int)bsk, beta, C, ldc);
            else
                cblas_sgemv(CblasRowMajor, CblasTrans, K, (int)mm, 1.0f, A, (int)ask, B, (int)bsk, beta, C, ldc);
        } else {
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)mm,
                        (int)nn, K, 1.0f, A, (int)(ta ? ask : asm_), B, (int)(tb ? bsn : bsk), beta, C, ldc);
        }
        if (j->epi->act != TRTL_ACT_NONE)
            for (int64_t m = 0; m < mm; m++)
                trtl_epi_act(j->epi, C + m * j->N, nn);
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static trtl_status mm_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const trtl_dims *ad = &a->in[0].dims, *bd = &a->in[1].dims;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    if (nd->n_in < 2 || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': matrix_multiply.sgemm needs two FLOAT inputs", nd->name);
    mm_operand oa, ob;
    TRTL_TRY(operand(nd, ad, nd->p.matmul.op0, 0, &oa));
    TRTL_TRY(operand(nd, bd, nd->p.matmul.op1, 1, &ob));
    if (oa.cols != ob.rows)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': inner dimensions differ: %s (op %d) x %s (op %d)", nd->name,
                          trtl_dims_str(ad, s1, sizeof s1), oa.op, trtl_dims_str(bd, s2, sizeof s2), ob.op);
    mm_job j;
    memset(&j, 0, sizeof j);
    j.epi = &nd->epi;
    j.A = (const float *)a->in[0].data;
    j.B = (const float *)a->in[1].data;
    j.C = (float *)a->out[0].data;
    j.op0 = oa.op;
    j.op1 = ob.op;
    j.M = oa.rows;
    j.K = oa.cols;
    j.N = ob.cols;
    j.nb = oa.nbatch > ob.nbatch ? oa.nbatch : ob.nbatch;
    /* right-aligned broadcast of the batch dims; strides in elements */
    int64_t sa = oa.mat, sb = ob.mat, nbat = 1, abat = 1, bbat = 1;
    for (int d = j.nb - 1; d >= 0; d--) {
        int ia = d - (j.nb - oa.nbatch), ib = d - (j.nb - ob.nbatch);
        int64_t da = ia >= 0 ? ad->d[ia] : 1, db = ib >= 0 ? bd->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': batch dims of %s and %s do not broadcast", nd->name,
                              trtl_dims_str(ad, s1, sizeof s1), trtl_dims_str(bd, s2, sizeof s2));
        j.bdims[d] = da > db ? da : db;
        if (da == 0 || db == 0)
            j.bdims[d] = 0;
        j.astr[d] = da == 1 ? 0 : sa;
        j.bstr[d] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        nbat *= j.bdims[d];
        abat *= da;
        bbat *= db;
    }
    if (trtl_volume(&a->out[0].dims) != nbat * j.M * j.N)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not hold %lld products of %lld x %lld", nd->name,
                          trtl_dims_str(&a->out[0].dims, s1, sizeof s1), (long long)nbat, (long long)j.M,
                          (long long)j.N);
    TRTL_TRY(trtl_epi_residual(a, nbat * j.M * j.N, &j.res));
    if (nbat == 0 || j.M == 0 || j.N == 0)
        return TRTL_OK;
    /* A weight shared by a stack of plain matrices or vectors: one tall GEMM */
    if (bbat == 1 && abat == nbat && oa.op != TRTL_MATOP_TRANSPOSE && nbat > 1) {
        j.M *= nbat;
        j.nb = 0;
        nbat = 1;
    }
    if (j.M > TRTL_BLAS_MAX_DIM || j.N > TRTL_BLAS_MAX_DIM || j.K > TRTL_BLAS_MAX_DIM)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': too large for 32-bit BLAS sizes", nd->name);
    trtl_blas_init();

    int t = trtl_threads_for(a->pool, 2.0 * (double)nbat * (double)j.M * (double)j.N * (double)j.K);
    j.nmb = j.nnb = 1;
    if (t > 1 && nbat < 2 * t) {
        /* Blocks wanted per batch.  Each thread's BLAS call repacks the whole operand it does
         * not split, so split the larger side (rows of A or columns of B). */
        int64_t per = ceil_div(t, nbat);
        if (j.N >= j.M && j.N >= 16 * per)
            j.nnb = per;
        else if (j.M >= 8 * per)
            j.nmb = per;
        else if (j.N >= 16 * per)
            j.nnb = per;
        else
            j.nmb = j.M < per ? j.M : per;
    }
    j.mb = ceil_div(j.M, j.nmb);
    j.nbk = ceil_div(j.N, j.nnb);
    if (j.nnb > 1)
        j.nbk = (j.nbk + 15) & ~(int64_t)15;
    j.nmb = ceil_div(j.M, j.mb);
    j.nnb = ceil_div(j.N, j.nbk);
    trtl_parallel_for(a->pool, nbat * j.nmb * j.nnb, 1, mm_items, &j);
    return TRTL_OK;
}

static trtl_status mm_prepare(const trtl_node *nd, void **state)
{
    (void)nd;
    trtl_blas_init();
    *state = NULL;
    return TRTL_OK;
}

static int mm_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    int n0 = nd->p.matmul.op0 == TRTL_MATOP_VECTOR ? 1 : 2, n1 = nd->p.matmul.op1 == TRTL_MATOP_VECTOR ? 1 : 2;
    return nd->n_in >= 2 && in_dims[0].nb_dims >= n0 && in_dims[1].nb_dims >= n1;
}

const trtl_kernel trtl_kernel_matmul_sgemm = {
    .name = "matrix_multiply.sgemm",
    .op = TRTL_OP_MATRIX_MULTIPLY,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .fallback = 1,
    .applies = mm_applies,
    .prepare = mm_prepare,
    .release = NULL,
    .scratch = NULL,
    .run = mm_run,
};
