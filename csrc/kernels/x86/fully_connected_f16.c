/*
 * fully_connected_f16.c -- "fully_connected.f16_gemm": Y[M, K] = X[M, D] x f16(W)[K, D]^T + bias,
 * then the fused residual + activation, on the fp16-storage GEMM core (gemm_f16.h): weights
 * stored as fp16 (rounded once in prepare()), widened on load, fp32 arithmetic.  Needs AVX-512
 * and F16C; a candidate only under BuilderFlag.FP16 (precision TRTL_HALF, see builder/select.c),
 * kept only where timing finds it faster than the fp32 kernels (batch-1 layers, whose time is
 * streaming the weights).
 *
 * The work split is fully_connected_gemm.c's: items are (row block, channel chunk), channel
 * chunks at batch 1 so that each thread streams its share of the weights once.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/gemm_f16.h"
#include "core/cpu.h"
#include "kernels/x86/fc_rows.h"
#include "core/dims.h"
#include "core/status.h"

#define KC_MAX 384 /* depth block */
#define MB 96      /* rows packed at a time: a multiple of TRTL_F16_MR */
#define MAX_SLOTS 64
#define TILE_SKEW 32 /* elements between tiles beyond their size (see convolution_gemm.c) */

typedef struct fh_state {
    int64_t K, D, ts; /* ts: tile stride of the packed weights, in fp16 elements */
    uint16_t *b;
} fh_state;

typedef struct fh_job {
    const fh_state *st;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y;
    float *scratch;
    int64_t M, nmb, nnb, nb, slots, slot_elems;
} fh_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* floats of one slot: MB rows x one depth block of packed A. */
static int64_t slot_elems(int64_t D)
{
    int64_t kc = D < KC_MAX ? D : KC_MAX;
    return (MB * kc + 15) / 16 * 16;
}

static int64_t depth_block(int64_t D, int64_t M)
{
    return M == 1 ? D : ceil_div(D, ceil_div(D, KC_MAX)); /* one row streams the weights once */
}

static void fh_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const fh_job *j = ctx;
    const fh_state *st = j->st;
    const int64_t K = st->K, D = st->D, items = j->nmb * j->nnb, kcb = depth_block(D, j->M);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        float *apack = j->scratch + s * j->slot_elems;
        for (int64_t it = s * items / j->slots, end = (s + 1) * items / j->slots; it < end; it++) {
            int64_t mb = it / j->nnb, nbi = it % j->nnb;
            int64_t m0 = mb * MB, rows = j->M - m0 < MB ? j->M - m0 : MB;
            int64_t n0 = nbi * j->nb, cols = K - n0 < j->nb ? K - n0 : j->nb;
            if (cols <= 0)
                continue;
            trtl_gemm_epi e = {NULL, j->bias ? j->bias + n0 : NULL, j->res ? j->res + m0 * K + n0 : NULL, K,
                               j->epi->act, j->epi->alpha, j->epi->beta};
            for (int64_t k0 = 0; k0 < D; k0 += kcb) {
                int64_t kc = D - k0 < kcb ? D - k0 : kcb;
                int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= D ? TRTL_GEMM_LAST : 0);
                const float *ap = j->x + m0 * D + k0; /* one row: read in place */
                if (rows > 1) {
                    trtl_gemm_pack_a(TRTL_GEMM_AVX512, ap, D, 1, rows, kc, apack);
                    ap = apack;
                } else {
                    flags |= TRTL_GEMM_A_ROW;
                }
                trtl_f16_block(rows, cols, kc, ap, kc * TRTL_F16_MR,
                                st->b + (n0 / TRTL_F16_NR) * st->ts + k0 * TRTL_F16_NR, st->ts, j->y + m0 * K + n0,
                                K, &e, flags);
            }
        }
    }
}

static trtl_status fh_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const fh_state *st = a->state;
    if (!st)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': fully_connected.f16_gemm run without its packed weights",
                          nd->name);
    const int64_t K = st->K, D = st->D;
    int64_t M;
    TRTL_TRY(trtl_fc_rows_shapes(a, K, D, &M));
    fh_job j;
    memset(&j, 0, sizeof j);
    j.st = st;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.fc.bias.count ? (const float *)nd->p.fc.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    j.M = M;
    TRTL_TRY(trtl_epi_residual(a, M * K, &j.res));
    if (M == 0)
        return TRTL_OK;
    j.slot_elems = slot_elems(D);
    void *aligned;
    int64_t avail = trtl_fc_rows_avail(a, j.slot_elems, sizeof(float), &aligned);
    if (avail < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed block",
                          nd->name, a->scratch_size);
    j.scratch = aligned;
    int64_t t = trtl_threads_for(a->pool, 2.0 * (double)M * (double)K * (double)D);
    if (t > avail)
        t = avail;
    trtl_fc_split sp = trtl_fc_rows_split(M, K, MB, TRTL_F16_NR, t);
    j.nmb = sp.nmb;
    j.nnb = sp.nnb;
    j.nb = sp.nb;
    j.slots = sp.slots;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, fh_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t slot_bytes(int64_t D) { return (size_t)slot_elems(D) * sizeof(float); }

static size_t fh_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    return trtl_fc_rows_scratch(nd, in, MAX_SLOTS, slot_bytes);
}

static void fh_release(void *state)
{
    fh_state *st = state;
    if (st)
        free(st->b);
    free(st);
}

static trtl_status fh_prepare(const trtl_node *nd, void **state)
{
    const trtl_fc_params *p = &nd->p.fc;
    *state = NULL;
    if (!trtl_f16_available() || trtl_gemm_mr(TRTL_GEMM_AVX512) != TRTL_F16_MR)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': fully_connected.f16_gemm needs AVX-512 and F16C", nd->name);
    int64_t K, D;
    TRTL_TRY(trtl_fc_rows_params(nd, &K, &D));
    fh_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->K = K;
    st->D = D;
    st->ts = st->D * TRTL_F16_NR + TILE_SKEW;
    size_t bytes = (size_t)(ceil_div(st->K, TRTL_F16_NR) * st->ts) * sizeof(uint16_t);
    st->b = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!st->b) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    /* B(d, n) = W[n, d] */
    trtl_f16_pack_b((const float *)p->kernel.values, 1, st->D, st->D, st->K, st->b, st->ts);
    *state = st;
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_fc_f16_gemm = {
    .name = "fully_connected.f16_gemm",
    .op = TRTL_OP_FULLY_CONNECTED,
    .cpu_features = TRTL_F16_CPU,
    .applies_epilogue = 1,
    .applies = trtl_fc_rows_applies,
    .prepare = fh_prepare,
    .release = fh_release,
    .scratch = fh_scratch,
    .run = fh_run,
    .precision = TRTL_HALF,
};
