/*
 * fully_connected_bf16.c -- "fully_connected.bf16_gemm": Y[M, K] = bf16(X)[M, D] x bf16(W)[K, D]^T
 * + bias, then the fused residual + activation, on the bf16 GEMM core (gemm_bf16.h): products of
 * bf16-rounded operands accumulated in fp32, epilogue in fp32.  Needs AVX512_BF16; chosen only
 * under BuilderFlag.BF16 (precision TRTL_BF16, see builder/select.c).
 *
 * The work split is fully_connected_gemm.c's: the weights (B) are packed once in prepare() into
 * bf16 tiles over the whole depth; each slot converts its rows of X (A) one depth block at a
 * time into its scratch; items are (row block, channel chunk), channel chunks at batch 1 so that
 * each thread streams its share of the weights (half the bytes of fp32) once.
 *
 * "fully_connected.amx_bf16" is the same on the Intel AMX core (gemm_amx_bf16.h): X's rows packed
 * into 32-row tile panels, depth blocks a multiple of 32, the weights' tiles zero past the depth up
 * to a whole tile.  A candidate only where the rows (at the profile's opt shape) fill a tile.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/gemm_bf16.h"
#include "kernels/x86/gemm_amx_bf16.h"
#include "core/cpu.h"
#include "kernels/x86/fc_rows.h"
#include "core/dims.h"
#include "core/status.h"

#define KC_MAX 768 /* depth block (even) */
#define MB 96      /* rows converted at a time: a multiple of TRTL_BF16_MR */
#define MAX_SLOTS 64
#define TILE_SKEW 32 /* elements between tiles beyond their size (see convolution_gemm.c) */

typedef struct fb_state {
    int64_t K, D, ts; /* ts: tile stride of the packed weights, in bf16 elements */
    uint16_t *b;
    int amx; /* fully_connected.amx_bf16 */
} fb_state;

typedef struct fb_job {
    const fb_state *st;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y;
    uint16_t *scratch;
    int64_t M, nmb, nnb, nb, slots, slot_elems;
} fb_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* bf16 elements of one slot: MB rows x one depth block (or the whole row at batch 1); AMX: MB rows
 * x a depth block of whole tiles. */
static int64_t slot_elems_of(int64_t D, int amx)
{
    int64_t kc = D < KC_MAX ? D : KC_MAX;
    if (amx)
        return MB * ceil_div(kc, 32) * 32 + 32;
    int64_t a = MB * (kc + 1), row = D + 1;
    return (a > row ? a : row) / 32 * 32 + 32;
}

static int64_t slot_elems(int64_t D) { return slot_elems_of(D, 0); }

/* Depth blocks of even length (the last may be odd); AMX: multiples of 32 (the last aside). */
static int64_t depth_block(int64_t D, int64_t M, int amx)
{
    if (M == 1 && !amx)
        return D; /* one row streams the weights once */
    int64_t kc = ceil_div(D, ceil_div(D, KC_MAX));
    return amx ? ceil_div(kc, 32) * 32 : (kc + 1) / 2 * 2;
}

static void fb_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const fb_job *j = ctx;
    const fb_state *st = j->st;
    const int64_t K = st->K, D = st->D, items = j->nmb * j->nnb, kcb = depth_block(D, j->M, st->amx);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        uint16_t *apack = j->scratch + s * j->slot_elems;
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
                if (st->amx) {
                    trtl_amx_bf16_pack_a(j->x + m0 * D + k0, D, rows, kc, apack);
                    trtl_amx_bf16_block(rows, cols, kc, apack, ceil_div(kc, 32) * 32 * TRTL_AMX_BF16_MR,
                                        st->b + (n0 / TRTL_BF16_NR) * st->ts + k0 * TRTL_BF16_NR, st->ts,
                                        j->y + m0 * K + n0, K, &e, flags);
                    continue;
                }
                if (rows > 1) {
                    trtl_bf16_pack_a(j->x + m0 * D + k0, D, rows, kc, apack);
                } else {
                    trtl_bf16_pack_row(j->x + m0 * D + k0, kc, apack);
                    flags |= TRTL_GEMM_A_ROW;
                }
                trtl_bf16_block(rows, cols, kc, apack, (kc + 1) / 2 * 2 * TRTL_BF16_MR,
                                st->b + (n0 / TRTL_BF16_NR) * st->ts + k0 * TRTL_BF16_NR, st->ts, j->y + m0 * K + n0,
                                K, &e, flags);
            }
        }
    }
}

static trtl_status fb_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const fb_state *st = a->state;
    if (!st)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': fully_connected.bf16_gemm run without its packed weights",
                          nd->name);
    const int64_t K = st->K, D = st->D;
    int64_t M;
    TRTL_TRY(trtl_fc_rows_shapes(a, K, D, &M));
    fb_job j;
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
    j.slot_elems = slot_elems_of(D, st->amx);
    void *aligned;
    int64_t avail = trtl_fc_rows_avail(a, j.slot_elems, sizeof(uint16_t), &aligned);
    if (avail < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed block",
                          nd->name, a->scratch_size);
    j.scratch = aligned;
    int64_t t = trtl_threads_for(a->pool, 2.0 * (double)M * (double)K * (double)D);
    if (t > avail)
        t = avail;
    trtl_fc_split sp = trtl_fc_rows_split(M, K, MB, TRTL_BF16_NR, t);
    j.nmb = sp.nmb;
    j.nnb = sp.nnb;
    j.nb = sp.nb;
    j.slots = sp.slots;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, fb_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t slot_bytes(int64_t D) { return (size_t)slot_elems(D) * sizeof(uint16_t); }

static size_t fb_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    return trtl_fc_rows_scratch(nd, in, MAX_SLOTS, slot_bytes);
}

static void fb_release(void *state)
{
    fb_state *st = state;
    if (st)
        free(st->b);
    free(st);
}

static trtl_status fb_prepare_of(const trtl_node *nd, void **state, int amx)
{
    const trtl_fc_params *p = &nd->p.fc;
    *state = NULL;
    if (!trtl_bf16_available())
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': fully_connected.bf16_gemm needs AVX512_BF16", nd->name);
    if (amx && !trtl_amx_bf16_available())
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': fully_connected.amx_bf16 needs AMX-BF16", nd->name);
    int64_t K, D;
    TRTL_TRY(trtl_fc_rows_params(nd, &K, &D));
    fb_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->K = K;
    st->D = D;
    st->amx = amx;
    st->ts = (amx ? ceil_div(st->D, 32) * 32 : (st->D + 1) / 2 * 2) * TRTL_BF16_NR + TILE_SKEW;
    size_t bytes = (size_t)(ceil_div(st->K, TRTL_BF16_NR) * st->ts) * sizeof(uint16_t);
    st->b = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!st->b) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    /* B(d, n) = W[n, d] */
    trtl_bf16_pack_b((const float *)p->kernel.values, 1, st->D, st->D, st->K, st->b, st->ts);
    if (amx) /* the last depth block reads whole tiles */
        trtl_amx_bf16_zero_b_tail(st->b, st->D, ceil_div(st->K, TRTL_BF16_NR), st->ts);
    *state = st;
    return TRTL_OK;
}

static trtl_status fb_prepare(const trtl_node *nd, void **state) { return fb_prepare_of(nd, state, 0); }

const trtl_kernel trtl_kernel_fc_bf16_gemm = {
    .name = "fully_connected.bf16_gemm",
    .op = TRTL_OP_FULLY_CONNECTED,
    .cpu_features = TRTL_BF16_CPU,
    .applies_epilogue = 1,
    .applies = trtl_fc_rows_applies,
    .prepare = fb_prepare,
    .release = fb_release,
    .scratch = fb_scratch,
    .run = fb_run,
    .precision = TRTL_BF16,
};

static trtl_status fa_prepare(const trtl_node *nd, void **state) { return fb_prepare_of(nd, state, 1); }

static size_t fa_slot_bytes(int64_t D) { return (size_t)slot_elems_of(D, 1) * sizeof(uint16_t); }

static size_t fa_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    return trtl_fc_rows_scratch(nd, in, MAX_SLOTS, fa_slot_bytes);
}

/* At least one 16-row tile of rows at the opt shape (fewer: a GEMV, bound by the weights' bytes). */
static int fa_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    if (!trtl_fc_rows_applies(nd, in_dims))
        return 0;
    int64_t K, D;
    if (trtl_fc_rows_params(nd, &K, &D) != TRTL_OK || D < 1)
        return 0;
    return trtl_volume(&in_dims[0]) / D >= 16;
}

const trtl_kernel trtl_kernel_fc_amx_bf16 = {
    .name = "fully_connected.amx_bf16",
    .op = TRTL_OP_FULLY_CONNECTED,
    .cpu_features = TRTL_AMX_BF16_CPU,
    .applies_epilogue = 1,
    .applies = fa_applies,
    .prepare = fa_prepare,
    .release = fb_release,
    .scratch = fa_scratch,
    .run = fb_run,
    .precision = TRTL_BF16,
};

/* The internal LINEAR op (passes/fuse_linear.c) has FULLY_CONNECTED's params and row semantics: the same
 * kernels run it. */
const trtl_kernel trtl_kernel_linear_amx_bf16 = {
    .name = "linear.amx_bf16",
    .op = TRTL_OP_LINEAR,
    .cpu_features = TRTL_AMX_BF16_CPU,
    .applies_epilogue = 1,
    .applies = fa_applies,
    .prepare = fa_prepare,
    .release = fb_release,
    .scratch = fa_scratch,
    .run = fb_run,
    .precision = TRTL_BF16,
};

const trtl_kernel trtl_kernel_linear_bf16_gemm = {
    .name = "linear.bf16_gemm",
    .op = TRTL_OP_LINEAR,
    .cpu_features = TRTL_BF16_CPU,
    .applies_epilogue = 1,
    .applies = trtl_fc_rows_applies,
    .prepare = fb_prepare,
    .release = fb_release,
    .scratch = fb_scratch,
    .run = fb_run,
    .precision = TRTL_BF16,
};
