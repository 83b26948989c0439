/*
 * convolution_1x1.c -- "convolution.1x1_direct": pointwise convolutions (1x1 window, stride 1, no
 * padding, one group), the expand / project layers of MobileNet-style networks:
 *
 *     Y[n][k][p] = sum_c W[k][c] X[n][c][p] + bias[k],   then the fused residual + activation,
 *
 * straight on the NCHW activations: the rows X[n][c][p0 .. p0+47] are the vector operand, loaded
 * where they are (no packing copy), and the weights, packed once in prepare() into panels of 8
 * output channels ([K/8][C][8], zero-padded), are broadcast.  A tile is 8 output channels x up to 3
 * pixel vectors (AVX-512: 24 zmm accumulators, 3 row loads + 8 broadcasts per input channel), so
 * its result is 8 output rows of contiguous pixels: bias, residual and activation (ReLU / clip /
 * leaky in registers, others by trtl_epi_act on the rows while they are in L1) are applied before
 * or right after its single store, and no transpose back to NCHW is needed.
 *
 * Small maps: a 7x7 map has 49 = 3 x 16 + 1 pixels.  Pixels past the last whole vector, when there
 * are at most 4 of them, are not a masked vector (1 lane used of 16) but "extra" columns computed
 * the other way round inside the last tile: the panel row W[c][k0..k0+7] is one 8-float vector and
 * the extra pixel's X[c][p] a broadcast, so pixel 49 of 8 channels costs one 8-lane FMA per input
 * channel.  Larger remainders are a masked vector.
 *
 * AVX2 + FMA (no AVX-512): tiles of 4 channels (half a panel) x up to 3 ymm pixel vectors (12
 * accumulators of the 16 registers), the last vector masked where the chunk ends in a partial one.
 * The tiles, chunks and the weight packing are shared with convolution.1x1_block (pw_tile.h).  CPUs without AVX2/FMA do not get
 * this kernel (cpu_features); the packed GEMM / BLAS kernels and the reference remain.
 *
 * applies() keeps it to maps of at most 32x32 pixels and, on maps of at most 8x8, to depths of 256 or more
 * (see there); run() computes any 1x1 stride-1 shape, so other run-time sizes need no fallback.
 *
 * Work split: items are (image, pixel chunk, channel group), channel group fastest, cut into
 * contiguous runs per thread of equal work (a chunk's cost by its vectors: pw_chunk_cost), four a thread where
 * the pool has no more threads than that (trtl_steal_runs: a thread that is done takes the others' runs not yet
 * started): on small maps (one or two chunks) that is a split over output channels, on large maps over pixel
 * chunks, each thread reusing its chunk's rows from L1/L2.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/pw_tile.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define PW_MAX_PIXELS 1024          /* applies(): output pixels an image at most (32x32) */
#define PW_SHORT_MAP 64             /* applies(): maps of at most 64 pixels (8x8) need ... */
#define PW_MIN_DEPTH_SHORT_MAP 256  /* ... at least this many input channels */

typedef struct pw_job {
    const pw_state *st;
    const float *x, *bias, *res;
    float *y;
    const trtl_epilogue *epi;
    int64_t P, nchunk, ngroup, items, slots; /* slots: the runs (trtl_runs_plan) */
    int wide; /* AVX-512 */
} pw_job;

/* ---- the work split ------------------------------------------------------------------------ */

/* Work of one tile of chunk q per input channel, in half cycles: its FMAs (channels x vectors, + one per extra
 * column) or, on short chunks, its loads (vectors + channel broadcasts), two of either a cycle.  On a 7x7 map (AVX2:
 * chunks of 3, 3 and 1 vectors) an even split of the items gave one thread 1.8x the other's work. */
static int64_t pw_chunk_cost(const pw_job *j, int64_t q)
{
    const int vl = j->wide ? 16 : 8, gr = j->wide ? PW_MR : 4;
    const pw_chunk ch = pw_chunk_at(j->P, vl, j->wide, j->P, q);
    const int64_t fma = (int64_t)gr * ch.nv + ch.ne, ld = ch.nv + gr + ch.ne;
    return fma > ld ? fma : ld;
}

/* The first item of slot s: slots get runs of items of equal work (items (n, q, g), g fastest, cost by chunk). */
static int64_t pw_slot_begin(const pw_job *j, int64_t s)
{
    if (s <= 0)
        return 0;
    if (s >= j->slots)
        return j->items;
    int64_t per_image = 0;
    for (int64_t q = 0; q < j->nchunk; q++)
        per_image += pw_chunk_cost(j, q) * j->ngroup;
    const int64_t total = per_image * (j->items / (j->nchunk * j->ngroup));
    const int64_t target = (int64_t)((double)total * (double)s / (double)j->slots); /* work before slot s */
    int64_t n = target / per_image, rem = target - n * per_image, it = n * j->nchunk * j->ngroup;
    for (int64_t q = 0; q < j->nchunk; q++, it += j->ngroup) {
        const int64_t w = pw_chunk_cost(j, q);
        if (rem < w * j->ngroup)
            return it + (rem + w - 1) / w;
        rem -= w * j->ngroup;
    }
    return it;
}

/* Run s (trtl_runs_for): its items of equal work (pw_slot_begin, not the even [b, e)); no scratch. */
static void pw_items(void *ctx, int64_t slot, int64_t s, int64_t b, int64_t e)
{
    const pw_job *j = ctx;
    const pw_state *st = j->st;
    const int64_t P = j->P, C = st->C, K = st->K;
    const int vl = j->wide ? 16 : 8;
    (void)slot, (void)b, (void)e;
    for (int64_t it = pw_slot_begin(j, s), en = pw_slot_begin(j, s + 1); it < en; it++) {
        int64_t g = it % j->ngroup, col = it / j->ngroup, n = col / j->nchunk, q = col % j->nchunk;
        pw_chunk ch = pw_chunk_at(P, vl, j->wide, P, q);
        pw_chunk_groups(st, j->wide, &ch, g, g + 1, j->x + n * C * P + ch.p0, P, j->bias,
                        j->res ? j->res + n * K * P + ch.p0 : NULL, j->y + n * K * P + ch.p0, P, j->epi);
    }
}

/* ---- the kernel ---------------------------------------------------------------------------- */

static int pw_shape_ok(const trtl_conv_geom *g, const pw_state *st)
{
    return g->G == 1 && g->direct && g->C == st->C && g->K == st->K;
}

static trtl_status pw_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const pw_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!st || !pw_shape_ok(&g, st)) /* the builder only picks this kernel for such layers */
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': convolution.1x1_direct cannot compute this "
                          "convolution (the plan is corrupt)", nd->name);
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    pw_job j = {st, (const float *)a->in[0].data,
                nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL, res, (float *)a->out[0].data,
                &nd->epi, g.P, 0, 0, 0, 1, trtl_cpu_has(TRTL_CPU_AVX512F)};
    const int vl = j.wide ? 16 : 8, gr = j.wide ? PW_MR : 4;
    j.nchunk = pw_nchunks(g.P, vl, j.wide, g.P);
    j.ngroup = (g.K + gr - 1) / gr;
    j.items = g.N * j.nchunk * j.ngroup;
    const trtl_runs runs = trtl_runs_plan(
        a->pool, trtl_threads_for(a->pool, 2.0 * (double)g.N * (double)g.K * (double)g.C * (double)g.P), j.items);
    j.slots = runs.n;
    trtl_runs_for(a->pool, &runs, pw_items, &j);
    return TRTL_OK;
}

static int pw_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1)
        return 0;
    trtl_conv_geom g;
    if (!trtl_conv_float_applies(nd, &in_dims[0], &g))
        return 0;
    if (!g.direct || g.kvol != 1 || p->kernel.count != g.K * g.C)
        return 0;
    /* Where it loses (measured with the weights and activations coming from memory, as in a network, which the
     * builder's hot-cache timing does not see): maps past 32x32, whose C rows P apart stream from memory without
     * a hardware prefetch stream (the packed GEMM copies them into one), and 7x7-size maps with a short depth,
     * where every 8-channel tile streams its panel once for few FMAs. */
    return g.P <= PW_MAX_PIXELS && (g.P > PW_SHORT_MAP || g.C >= PW_MIN_DEPTH_SHORT_MAP);
}

void trtl_pw_release(void *state)
{
    pw_state *st = state;
    if (st)
        free(st->wp);
    free(st);
}

trtl_status trtl_pw_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    int64_t kvol = 1;
    for (int i = 0; i < p->kernel_size.nb_dims; i++)
        kvol *= p->kernel_size.d[i];
    if (p->num_groups != 1 || p->num_output_maps < 1 || kvol != 1 || p->kernel.type != TRTL_FLOAT ||
        p->kernel.count == 0 || p->kernel.count % p->num_output_maps)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit a 1x1 convolution of %d output maps",
                          nd->name, (long long)p->kernel.count, p->num_output_maps);
    pw_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->K = p->num_output_maps;
    st->C = p->kernel.count / st->K;
    int64_t panels = (st->K + PW_MR - 1) / PW_MR;
    size_t bytes = (size_t)(panels * st->C * PW_MR) * sizeof(float);
    st->packed_bytes = (bytes + 63) / 64 * 64;
    st->wp = aligned_alloc(64, st->packed_bytes);
    if (!st->wp) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    const float *w = (const float *)p->kernel.values;
    for (int64_t pb = 0; pb < panels; pb++)
        for (int64_t c = 0; c < st->C; c++)
            _Pragma("GCC unroll 8")
            for (int i = 0; i < PW_MR; i++) {
                int64_t k = pb * PW_MR + i;
                st->wp[(pb * st->C + c) * PW_MR + i] = k < st->K ? w[k * st->C + c] : 0.0f;
            }
    *state = st;
    return TRTL_OK;
}

void trtl_pw_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const pw_state *st = state;
    unsigned char *w = dst;
    (void)nd;
    for (int64_t k = 0; k < st->K; k++)
        for (int64_t c = 0; c < st->C; c++)
            memcpy(w + (size_t)(k * st->C + c) * sizeof(float), &st->wp[((k / PW_MR) * st->C + c) * PW_MR + k % PW_MR],
                   sizeof(float));
}

size_t trtl_pw_state_bytes(const void *state)
{
    const pw_state *st = state;
    return sizeof *st + st->packed_bytes;
}

const trtl_kernel trtl_kernel_conv_1x1_direct = {
    .name = "convolution.1x1_direct",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = pw_applies,
    .prepare = trtl_pw_prepare,
    .release = trtl_pw_release,
    .run = pw_run,
    .unpack = trtl_pw_unpack,
    .state_bytes = trtl_pw_state_bytes,
};
