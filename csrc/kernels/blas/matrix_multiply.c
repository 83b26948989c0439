/*
 * matrix_multiply.c -- "matrix_multiply.sgemm": C = op0(A) x op1(B) over broadcast batch dims,
 * then the fused residual + activation.
 *
 * Shapes, batch broadcast and the fold of a stack over a shared B: kernels/matmul_shape.h.
 * Work items are (batch, row block, column block); blocks are only cut when there are fewer
 * batches than threads.  One-row / one-column products go to SGEMV, 1x1 to SDOT.
 */
#include <string.h>
#include <cblas.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/matmul_shape.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct mm_job {
    const trtl_epilogue *epi;
    const trtl_mm_shape *sh;
    const float *A, *B, *res;
    float *C;
    int64_t M, N, K;
    int64_t mb, nbk, nmb, nnb;      /* row block, column block, blocks along M and N */
} mm_job;

static void mm_items(void *ctx, int64_t b, int64_t e, int thread)
{
    const mm_job *j = ctx;
    (void)thread;
    const int64_t asm_ = j->sh->a_sm, ask = j->sh->a_sk, bsk = j->sh->b_sk, bsn = j->sh->b_sn;
    /* stored transposed: A [K, M], B [N, K] (strides alone are ambiguous when K == 1) */
    const int ta = j->sh->op0 == TRTL_MATOP_TRANSPOSE, tb = j->sh->op1 != TRTL_MATOP_NONE;
    for (int64_t it = b; it < e; it++) {
        int64_t nbi = it % j->nnb, mbi = (it / j->nnb) % j->nmb, bat = it / j->nnb / j->nmb;
        /* batch offsets of A and B (broadcast dims have stride 0) */
        int64_t aoff, boff;
        trtl_mm_batch_offsets(j->sh, bat, &aoff, &boff);
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
    trtl_mm_shape sh;
    TRTL_TRY(trtl_mm_shape_of(nd, a->in, a->out, "matrix_multiply.sgemm", &sh));
    mm_job j;
    memset(&j, 0, sizeof j);
    j.epi = &nd->epi;
    j.sh = &sh;
    j.A = (const float *)a->in[0].data;
    j.B = (const float *)a->in[1].data;
    j.C = (float *)a->out[0].data;
    j.M = sh.M;
    j.K = sh.K;
    j.N = sh.N;
    const int64_t nbat = sh.nbat;
    TRTL_TRY(trtl_epi_residual(a, nbat * j.M * j.N, &j.res));
    if (nbat == 0 || j.M == 0 || j.N == 0)
        return TRTL_OK;
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

const trtl_kernel trtl_kernel_matmul_sgemm = {
    .name = "matrix_multiply.sgemm",
    .op = TRTL_OP_MATRIX_MULTIPLY,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .fallback = 1,
    .applies = trtl_mm_shape_applies,
    .prepare = mm_prepare,
    .release = NULL,
    .scratch = NULL,
    .run = mm_run,
};
