/*
 * fully_connected.c -- "fully_connected.sgemm": Y[M, K] = X[M, D] x W[K, D]^T + bias, then the
 * fused residual + activation, with D = kernel.count / num_output_channels and M = volume(input)
 * / D (the leading dims, batch included; the trailing C*H*W are flattened).
 *
 * M == 1 (batch 1) is a matrix-vector product: SGEMV over a block of output channels per
 * thread, memory-bound on the weights.  Larger M uses SGEMM, split over output channels unless X
 * is larger than the weights.  Each thread's output block is prefilled with bias +
 * residual, BLAS accumulates onto it (beta = 1), then the activation runs over the block.
 */
#include <string.h>
#include <cblas.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct fc_job {
    const trtl_epilogue *epi;
    const float *x, *w, *bias, *res;
    float *y;
    int64_t M, K, D, mb, kb, nkb; /* block sizes: mb rows, kb output channels; nkb blocks along K */
} fc_job;

static void fc_items(void *ctx, int64_t b, int64_t e, int thread)
{
    const fc_job *j = ctx;
    (void)thread;
    for (int64_t it = b; it < e; it++) {
        int64_t m0 = (it / j->nkb) * j->mb, k0 = (it % j->nkb) * j->kb;
        int64_t mm = j->M - m0 < j->mb ? j->M - m0 : j->mb, kk = j->K - k0 < j->kb ? j->K - k0 : j->kb;
        float *yt = j->y + m0 * j->K + k0;
        int prefill = j->bias || j->res;
        if (prefill)
            for (int64_t m = 0; m < mm; m++)
                trtl_epi_prefill(yt + m * j->K, j->res ? j->res + (m0 + m) * j->K + k0 : NULL, 0.0f,
                                 j->bias ? j->bias + k0 : NULL, kk);
        const float beta = prefill ? 1.0f : 0.0f;
        if (mm == 1 && !prefill) /* SGEMV's beta = 0 may keep NaNs of the old contents in some BLAS */
            memset(yt, 0, (size_t)kk * sizeof(float));
        if (mm == 1)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)kk, (int)j->D, 1.0f, j->w + k0 * j->D, (int)j->D,
                        j->x + m0 * j->D, 1, 1.0f, yt, 1);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)mm, (int)kk, (int)j->D, 1.0f,
                        j->x + m0 * j->D, (int)j->D, j->w + k0 * j->D, (int)j->D, beta, yt, (int)j->K);
        if (j->epi->act != TRTL_ACT_NONE)
            for (int64_t m = 0; m < mm; m++)
                trtl_epi_act(j->epi, yt + m * j->K, kk);
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static trtl_status fc_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const trtl_fc_params *p = &nd->p.fc;
    char s1[TRTL_DIMS_STR_MAX];
    int64_t K = p->num_output_channels, vol = trtl_volume(&a->in[0].dims);
    if (K < 1 || p->kernel.count % K || (p->bias.count && p->bias.count != K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights / %lld biases do not fit %lld output channels",
                          nd->name, (long long)p->kernel.count, (long long)p->bias.count, (long long)K);
    int64_t D = p->kernel.count / K;
    if (a->in[0].dtype != TRTL_FLOAT || D < 1 || vol < 0 || vol % D)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not split into rows of %lld values", nd->name,
                          trtl_dims_str(&a->in[0].dims, s1, sizeof s1), (long long)D);
    int64_t M = vol / D;
    if (trtl_volume(&a->out[0].dims) != M * K)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not hold %lld x %lld values", nd->name,
                          trtl_dims_str(&a->out[0].dims, s1, sizeof s1), (long long)M, (long long)K);
    if (D > TRTL_BLAS_MAX_DIM || K > TRTL_BLAS_MAX_DIM || M > TRTL_BLAS_MAX_DIM)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': too large for 32-bit BLAS sizes", nd->name);
    trtl_blas_init();
    fc_job j = {&nd->epi, (const float *)a->in[0].data, (const float *)p->kernel.values,
                p->bias.count ? (const float *)p->bias.values : NULL, NULL, (float *)a->out[0].data,
                M, K, D, M, K, 1};
    TRTL_TRY(trtl_epi_residual(a, M * K, &j.res));
    if (M == 0)
        return TRTL_OK;

    int t = trtl_threads_for(a->pool, 2.0 * (double)M * (double)K * (double)D);
    int64_t nmb = 1;
    if (t > 1) {
        /* Each thread's BLAS call repacks the whole operand it does not split: split the output
         * channels (each thread reads a share of the weights) unless X is the larger operand. */
        if (K >= M && K >= 16 * (int64_t)t)
            j.nkb = t;
        else if (M >= 4 * (int64_t)t)
            nmb = t;
        else if (K >= 16 * (int64_t)t)
            j.nkb = t;
        else
            nmb = M < t ? M : t;
    }
    j.mb = ceil_div(M, nmb);
    j.kb = ceil_div(K, j.nkb);
    if (j.nkb > 1)
        j.kb = (j.kb + 15) & ~(int64_t)15;
    j.nkb = ceil_div(K, j.kb);
    nmb = ceil_div(M, j.mb);
    trtl_parallel_for(a->pool, nmb * j.nkb, 1, fc_items, &j);
    return TRTL_OK;
}

static trtl_status fc_prepare(const trtl_node *nd, void **state)
{
    (void)nd;
    trtl_blas_init();
    *state = NULL;
    return TRTL_OK;
}

static int fc_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_fc_params *p = &nd->p.fc;
    int64_t vol = trtl_volume(&in_dims[0]);
    return p->num_output_channels > 0 && p->kernel.count > 0 && p->kernel.count % p->num_output_channels == 0 &&
           vol >= 0 && vol % (p->kernel.count / p->num_output_channels) == 0;
}

const trtl_kernel trtl_kernel_fc_sgemm = {
    .name = "fully_connected.sgemm",
    .op = TRTL_OP_FULLY_CONNECTED,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .fallback = 1,
    .applies = fc_applies,
    .prepare = fc_prepare,
    .release = NULL,
    .scratch = NULL,
    .run = fc_run,
};

/* The internal LINEAR op (passes/fuse_linear.c) has FULLY_CONNECTED's params and row semantics: the same
 * kernel runs it (the optimized LINEAR kernel of CPUs without AVX2 + FMA). */
const trtl_kernel trtl_kernel_linear_sgemm = {
    .name = "linear.sgemm",
    .op = TRTL_OP_LINEAR,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .fallback = 1,
    .applies = fc_applies,
    .prepare = fc_prepare,
    .release = NULL,
    .scratch = NULL,
    .run = fc_run,
};
