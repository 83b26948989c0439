/*
 * matmul_packed.c -- "matrix_multiply.packed": C = op0(A) x op1(B) over broadcast batch dims, then the fused
 * residual + activation, on trtlite's own SGEMM (gemm_packed.h).  Needs AVX2 + FMA.
 *
 * Both operands are activations (nothing is packed at build time): each work item packs its B block (depth block x
 * its columns) into the micro-kernels' tiles, then for each block of at most MC rows packs A's rows (a single row is
 * read in place, TRTL_GEMM_A_ROW) and runs trtl_gemm_block, whose tiles apply the residual and the activation
 * before their one store.  Any operation of either operand packs through the strided trtl_gemm_pack_a / _pack_b
 * (their transposed-storage paths: TRANSPOSE A copies contiguous depth rows, TRANSPOSE B goes through 8x8 register
 * transposes).  Shapes, broadcast and the fold of a stack of A over a shared B into one tall product:
 * kernels/matmul_shape.h.
 *
 * Work items are (batch, row chunk, column chunk): columns in chunks whose packed B block holds at most B_BYTES
 * (whole tiles), rows whole; when there are fewer items than twice the threads, the larger side (in tiles / panels)
 * is cut further, so that every thread gets work on a single product (batch-1 attention heads are usually enough
 * items already).  Each thread packs into its own slot of the scratch (trtl_runs_for); nothing is allocated.
 *
 * applies(): not a matrix x vector product (one column of B would use 1 of a tile's 16 / 32 columns; SGEMV in
 * matrix_multiply.sgemm does it without waste), and a depth below APPLIES_K_MAX at the optimization profile's
 * shapes (benchmarks/matmul_ab.c: attention shapes of depth 32..197 1.0-1.3x OpenBLAS's thread CPU time, deeper
 * products 3-13% slower: A packed again for each column chunk, B for each row block).  run() takes any depth
 * (dynamic shapes): equal depth blocks of at most KC, C accumulated between them.
 */
#include <string.h>

#include "kernels/blas/blas_common.h"
#include "kernels/matmul_shape.h"
#include "kernels/x86/fc_rows.h"
#include "kernels/x86/gemm_packed.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define KC 192 /* depth block (deeper products: equal blocks of at most this) */
#define KC_WHOLE 256 /* depth up to this: one block */
#define NC 256        /* columns a work item at most */
#ifndef B_BYTES
#define B_BYTES (192 * 1024) /* a packed B block at most (whole 32-column tiles, at least one): in L2 beside A and C */
#endif
#define MC 96         /* rows packed at a time: a multiple of both variants' mr */
#define MAX_SLOTS 64
#define APPLIES_K_MAX 256 /* applies() below this depth (see there) */
#define TILE_SKEW 16  /* packed B tiles kc*nr + 16 floats apart (no 4 KiB aliasing between tiles) */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t depth_block(int64_t K) { return K <= KC_WHOLE ? K : ceil_div(K, ceil_div(K, KC)); }

/* Columns a work item at most for depth block kcb: a multiple of 32 (both variants' nr divide it). */
static int64_t cols_max(int64_t kcb)
{
    int64_t n = B_BYTES / ((int64_t)sizeof(float) * kcb) / 32 * 32;
    return n < 32 ? 32 : n > NC ? NC : n;
}

/* Floats of the B block of a slot: kcb x ncs packed in tiles of nr, TILE_SKEW apart (nr >= 16: at most ncs skews),
 * rounded up to 64 bytes; the A block follows it. */
static int64_t b_block_floats(int64_t kcb, int64_t ncs) { return (kcb * ncs + ncs + 15) / 16 * 16; }

/* Floats of a scratch slot for these shapes, for either variant: a B block of at most NC columns (whole tiles of
 * nr <= 32), then an A block of at most MC rows (whole panels of mr <= 12). */
static int64_t slot_floats(const trtl_mm_shape *s)
{
    const int64_t kcb = depth_block(s->K), ncm = cols_max(kcb), ncs = ((s->N < ncm ? s->N : ncm) + 31) / 32 * 32;
    const int64_t mcs = ((s->M < MC ? s->M : MC) + 11) / 12 * 12;
    return b_block_floats(kcb, ncs) + mcs * kcb;
}

typedef struct mp_job {
    const trtl_mm_shape *sh;
    trtl_gemm_isa isa;
    const trtl_epilogue *epi;
    const float *A, *B, *res;
    float *C, *scratch;
    int64_t slot_floats, kcb;
    int64_t mcs, ncs, nmc, nnc; /* rows / columns a chunk; chunks along M / N */
} mp_job;

/* Work item `it` on scratch slot `slot`. */
static void mp_item(const mp_job *j, int64_t it, float *slot)
{
    const trtl_mm_shape *s = j->sh;
    const trtl_gemm_isa isa = j->isa;
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa), M = s->M, N = s->N, K = s->K;
    const int64_t nci = it % j->nnc, mci = (it / j->nnc) % j->nmc, bat = it / j->nnc / j->nmc;
    const int64_t m0 = mci * j->mcs, n0 = nci * j->ncs;
    const int64_t rows = M - m0 < j->mcs ? M - m0 : j->mcs, cols = N - n0 < j->ncs ? N - n0 : j->ncs;
    if (rows <= 0 || cols <= 0)
        return;
    int64_t aoff, boff;
    trtl_mm_batch_offsets(s, bat, &aoff, &boff);
    const float *A = j->A + aoff, *B = j->B + boff + n0 * s->b_sn, *res = j->res ? j->res + bat * M * N : NULL;
    float *C = j->C + bat * M * N, *bp = slot, *ap = slot + b_block_floats(j->kcb, j->ncs);
    for (int64_t k0 = 0; k0 < K; k0 += j->kcb) {
        const int64_t kc = K - k0 < j->kcb ? K - k0 : j->kcb, ts = kc * nr + TILE_SKEW;
        const int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= K ? TRTL_GEMM_LAST : 0);
        trtl_gemm_pack_b(isa, B + k0 * s->b_sk, s->b_sk, s->b_sn, kc, cols, bp, ts);
        for (int64_t m = m0; m < m0 + rows; m += MC) {
            const int64_t mrows = m0 + rows - m < MC ? m0 + rows - m : MC;
            const float *a = A + m * s->a_sm + k0 * s->a_sk;
            int f = flags;
            if (mrows == 1 && s->a_sk == 1) {
                f |= TRTL_GEMM_A_ROW;
            } else {
                trtl_gemm_pack_a(isa, a, s->a_sm, s->a_sk, mrows, kc, ap);
                a = ap;
            }
            const trtl_gemm_epi e = {NULL, NULL, res ? res + m * N + n0 : NULL, N, j->epi->act, j->epi->alpha,
                                     j->epi->beta};
            trtl_gemm_block(isa, mrows, cols, kc, a, kc * mr, bp, ts, C + m * N + n0, N, &e, f);
        }
    }
}

/* Items [b, e) (trtl_runs_for) on scratch slot `slot`. */
static void mp_run_items(void *ctx, int64_t slot, int64_t r, int64_t b, int64_t e)
{
    const mp_job *j = ctx;
    (void)r;
    for (int64_t it = b; it < e; it++)
        mp_item(j, it, j->scratch + slot * j->slot_floats);
}

static trtl_status mp_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    trtl_mm_shape sh;
    TRTL_TRY(trtl_mm_shape_of(nd, a->in, a->out, "matrix_multiply.packed", &sh));
    mp_job j;
    memset(&j, 0, sizeof j);
    j.sh = &sh;
    j.isa = trtl_gemm_isa_best();
    if (j.isa == TRTL_GEMM_NONE)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': matrix_multiply.packed needs AVX2 and FMA", nd->name);
    j.epi = &nd->epi;
    j.A = (const float *)a->in[0].data;
    j.B = (const float *)a->in[1].data;
    j.C = (float *)a->out[0].data;
    const int64_t M = sh.M, N = sh.N, K = sh.K, nbat = sh.nbat;
    TRTL_TRY(trtl_epi_residual(a, nbat * M * N, &j.res));
    if (nbat == 0 || M == 0 || N == 0)
        return TRTL_OK;
    if (K == 0) { /* empty sums: C = act(0 + residual) */
        memset(j.C, 0, (size_t)(nbat * M * N) * sizeof(float));
        trtl_epilogue_apply(j.epi, j.C, j.res, nbat * M * N);
        return TRTL_OK;
    }
    j.slot_floats = slot_floats(&sh);
    void *aligned;
    const int64_t avail = trtl_fc_rows_avail(a, j.slot_floats, sizeof(float), &aligned);
    if (avail < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed block",
                          nd->name, a->scratch_size);
    j.scratch = aligned;
    j.kcb = depth_block(K);
    const double flops = 2.0 * (double)nbat * (double)M * (double)N * (double)K;
    int64_t t = trtl_threads_for(a->pool, flops);
    t = t > avail ? avail : t;
    const int64_t mr = trtl_gemm_mr(j.isa), nr = trtl_gemm_nr(j.isa), ntiles = ceil_div(N, nr),
                  npanels = ceil_div(M, mr);
    j.nnc = ceil_div(N, cols_max(j.kcb));
    j.nmc = 1;
    if (nbat * j.nnc < 2 * t) { /* too few items: cut the larger side further */
        const int64_t need = ceil_div(2 * t, nbat * j.nnc);
        if (ntiles >= npanels)
            j.nnc = ntiles < j.nnc * need ? ntiles : j.nnc * need;
        else
            j.nmc = npanels < need ? npanels : need;
    }
    j.ncs = ceil_div(ntiles, j.nnc) * nr;
    j.nnc = ceil_div(N, j.ncs);
    j.mcs = ceil_div(npanels, j.nmc) * mr;
    j.nmc = ceil_div(M, j.mcs);
    const trtl_runs runs = trtl_runs_plan(a->pool, t, nbat * j.nmc * j.nnc);
    trtl_runs_for(a->pool, &runs, mp_run_items, &j);
    return TRTL_OK;
}

static size_t mp_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_mm_shape sh;
    if (trtl_mm_shape_of(nd, in, out, "matrix_multiply.packed", &sh) != TRTL_OK) {
        trtl_clear_error();
        return 0; /* run() reports the shapes */
    }
    if (sh.nbat * sh.M * sh.N == 0 || sh.K == 0)
        return 0;
    const double flops = 2.0 * (double)sh.nbat * (double)sh.M * (double)sh.N * (double)sh.K;
    return (size_t)trtl_scratch_slots(flops, MAX_SLOTS) * (size_t)slot_floats(&sh) * sizeof(float) + 64;
}

/* The shapes matrix_multiply.sgemm serves with more than one column of B (a matrix x vector product would use 1 of
 * a tile's 16 / 32 columns: SGEMV does it without waste) and a depth below APPLIES_K_MAX (attention's head
 * dimensions and window / sequence lengths; deeper products stay on OpenBLAS, measured 3-13% faster there). */
static int mp_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    if (!trtl_mm_shape_applies(nd, in_dims) || trtl_gemm_isa_best() == TRTL_GEMM_NONE)
        return 0;
    const trtl_dims *a = &in_dims[0], *b = &in_dims[1];
    const int op0 = nd->p.matmul.op0, op1 = nd->p.matmul.op1;
    const int64_t N = op1 == TRTL_MATOP_VECTOR ? 1 : op1 == TRTL_MATOP_TRANSPOSE ? b->d[b->nb_dims - 2]
                                                                                  : b->d[b->nb_dims - 1];
    const int64_t K = op0 == TRTL_MATOP_TRANSPOSE ? a->d[a->nb_dims - 2] : a->d[a->nb_dims - 1];
    return N > 1 && K < APPLIES_K_MAX;
}

const trtl_kernel trtl_kernel_matmul_packed = {
    .name = "matrix_multiply.packed",
    .op = TRTL_OP_MATRIX_MULTIPLY,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = mp_applies,
    .prepare = NULL,
    .release = NULL,
    .scratch = mp_scratch,
    .run = mp_run,
};
