/*
 * convolution_pixel_gemm.c -- "convolution.pixel_gemm": 2-D convolutions of one group on small maps
 * (ResNet's 7x7 and 14x14 stages, DenseNet's and GoogLeNet's last blocks) as the transposed product
 *
 *     Y^T[M, K] = Col^T[M, ckk] x W^T[ckk, K]          M = N * P output pixels of the batch,
 *
 * on the packed SGEMM core (gemm_packed.h) with the roles of convolution.packed_gemm swapped: the
 * output pixels are the broadcast operand (A, panels of mr pixels) and the output channels the
 * vector operand (B, tiles of nr channels, the weights packed once in prepare()).  Why: on a 7x7
 * map P = 49 is a poor vector axis (packed_gemm computes 32 + 16 + 1 columns, the 16-column tile at
 * about half the FMA rate since its 12 broadcasts then outnumber its FMAs' vector loads), while K =
 * 512 channels fill whole 32-wide tiles; 49 pixels are 4 full 12-row panels and one row.
 *
 * run(), per call:
 *   1. pack A: slot s takes input channels [c0, c1): it copies their planes of every image,
 *      zero-padded, into scratch ([N][C][Hp][Wp], the rows and columns the windows reach), then
 *      writes their depth rows (c, kh, kw) of every pixel panel by gathers at per-pixel offsets
 *      (computed once per call).  Slots write disjoint rows, so nothing else is shared.
 *   2. slot s takes a contiguous run of channel tiles; tile by tile (so each weight is read from
 *      memory once and reused by every pixel panel from L1/L2), for each depth block C^T (+)= A x
 *      B into scratch ([M][K], rows of pixels), the bias added on the last block; the tile's
 *      channels then go back to NCHW transposed, adding the residual, and the activation runs
 *      over the slot's (contiguous) channel rows of every image.
 * Both ISA variants of the core (AVX-512 12x32 tiles, AVX2 6x16) are used as prepare() found them.
 *
 * applies() sees the opt shapes; scratch() sizes for the shapes it is given.  A run whose shapes
 * need more scratch than it got (another input size at run time) computes the reference
 * convolution and the epilogue pass instead: the same values.
 */
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/ref/ref.h"
#include "kernels/x86/convolution_unpacked.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/gemm_packed.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#ifndef PG_KC
#define PG_KC 384 /* depth block: a slot's weight tiles (kc x its channels) stay in L2 */
#endif
#define PG_MAX_MAP 256                /* output pixels of one image at most: 16x16 (28x28 measured slower) */
#define PG_MAX_PIXELS 1024            /* M = N * P at most */
#define PG_MAX_A_FLOATS (4 << 20)     /* packed pixels at most 16 MiB */
#define PG_MAX_SLOTS 64
#define PG_TILE_SKEW 16 /* weight tiles kc*nr + skew floats apart (see convolution_gemm.c's TILE_SKEW) */

typedef struct pg_state {
    trtl_gemm_isa isa;
    int64_t K, ckk, tile_stride;
    float *wt; /* W^T as B tiles: tile t = [ckk][nr] at t * tile_stride */
    size_t packed_bytes; /* of the packed weights (state_bytes) */
} pg_state;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* The M pixels are cut into ceil(M / mr) panels of equal rows (+-1): 49 pixels are 5 panels of 9
 * or 10, not 4 x 12 + 1, whose one-row tile would run at the FMA latency's pace (2 chains). */
static int64_t panel_start(int64_t M, int64_t npan, int64_t i) { return M * i / npan; }

/* Input rows / columns the windows reach, from -pad on: the padded plane's size. */
static int64_t reach(const trtl_conv_geom *g, int d)
{
    return (g->out[d] - 1) * g->s[d] + (g->k[d] - 1) * g->dl[d] + 1;
}

/* The scratch layout (floats, each part 16-aligned): padded input, packed A, C^T, pixel offsets. */
typedef struct pg_layout {
    int64_t hp, wp, plane, xpad, a, ct, offs, total;
} pg_layout;

static void layout(const trtl_conv_geom *g, int mr, pg_layout *l)
{
    const int64_t M = g->N * g->P;
    l->hp = reach(g, 1);
    l->wp = reach(g, 2);
    l->plane = l->hp * l->wp;
    l->xpad = 0;
    l->a = round_up(l->xpad + g->N * g->C * l->plane + 16, 16); /* +16: a gather's masked lanes stay inside */
    l->ct = l->a + round_up(round_up(M, mr) * g->ckk, 16);
    l->offs = l->ct + round_up(M * g->K, 16);
    l->total = l->offs + round_up(round_up(M, mr), 16); /* int32 offsets, one a float slot */
}

/* The shapes this kernel takes: 2-D (or 1-D), one group, small maps (where it can win). */
static int fits(const trtl_conv_geom *g)
{
    if (g->G != 1 || !trtl_conv_geom_2d(g))
        return 0;
    const int64_t M = g->N * g->P;
    if (M < 1 || g->P > PG_MAX_MAP || M > PG_MAX_PIXELS || g->K < 1 || g->ckk < 1 ||
        round_up(M, 12) * g->ckk > PG_MAX_A_FLOATS)
        return 0;
    pg_layout l;
    layout(g, 12, &l);
    return l.total < ((int64_t)1 << 31) && g->N * g->C * l.plane < ((int64_t)1 << 31);
}

typedef struct pg_job {
    const trtl_conv_geom *g;
    const pg_state *st;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y, *base;
    pg_layout l;
    int64_t slots;
} pg_job;

/* Phase 1, slot s: input channels [c0, c1) padded into scratch, then their rows of A. */
__attribute__((target("avx2,fma"))) static void pack_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const pg_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const pg_layout *l = &j->l;
    const int mr = trtl_gemm_mr(j->st->isa);
    const int64_t M = g->N * g->P, npan = ceil_div(M, mr), H = g->in[1], W = g->in[2];
    const int64_t kh_n = g->k[1], kw_n = g->k[2], kvol = kh_n * kw_n;
    float *xp = j->base + l->xpad, *A = j->base + l->a;
    const int32_t *offs = (const int32_t *)(j->base + l->offs);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        const int64_t c0 = s * g->C / j->slots, c1 = (s + 1) * g->C / j->slots;
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t c = c0; c < c1; c++) {
                const float *src = j->x + (n * g->C + c) * g->in_sp;
                float *dst = xp + (n * g->C + c) * l->plane;
                for (int64_t r = 0; r < l->hp; r++) {
                    const int64_t ih = r - g->pad[1];
                    float *d = dst + r * l->wp;
                    if (ih < 0 || ih >= H) {
                        memset(d, 0, (size_t)l->wp * sizeof(float));
                        continue;
                    }
                    int64_t lo, hi; /* padded columns [lo, hi) are inside the row */
                    trtl_conv_row_span(-g->pad[2], 1, W, l->wp, &lo, &hi);
                    if (lo > 0)
                        memset(d, 0, (size_t)lo * sizeof(float));
                    if (hi > lo)
                        memcpy(d + lo, src + ih * W + (lo - g->pad[2]), (size_t)(hi - lo) * sizeof(float));
                    if (l->wp > hi)
                        memset(d + hi, 0, (size_t)(l->wp - hi) * sizeof(float));
                }
            }
        /* rows d = c*kvol + kh*kw_n + kw of every panel: A[panel][d][mr] = xp[base(d) + offs[pixel]] */
        for (int64_t pan = 0; pan < npan; pan++) {
            const int32_t *o = offs + pan * mr;
            float *ap = A + pan * g->ckk * mr;
            const int rows = (int)(panel_start(M, npan, pan + 1) - panel_start(M, npan, pan));
            if (mr == 12) {
                const __m256i o0 = _mm256_loadu_si256((const __m256i *)o);
                const __m128i o1 = _mm_loadu_si128((const __m128i *)(o + 8));
                const __m256i m0 =
                    _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
                const __m128i m1 = _mm_cmpgt_epi32(_mm_set1_epi32(rows), _mm_setr_epi32(8, 9, 10, 11));
                for (int64_t c = c0; c < c1; c++)
                    for (int64_t kh = 0; kh < kh_n; kh++)
                        for (int64_t kw = 0; kw < kw_n; kw++) {
                            const float *b = xp + c * l->plane + kh * g->dl[1] * l->wp + kw * g->dl[2];
                            float *dp = ap + (c * kvol + kh * kw_n + kw) * mr;
                            _mm256_storeu_ps(dp, _mm256_mask_i32gather_ps(_mm256_setzero_ps(), b, o0,
                                                                          _mm256_castsi256_ps(m0), 4));
                            _mm_storeu_ps(dp + 8,
                                          _mm_mask_i32gather_ps(_mm_setzero_ps(), b, o1, _mm_castsi128_ps(m1), 4));
                        }
            } else {
                for (int64_t c = c0; c < c1; c++)
                    for (int64_t kh = 0; kh < kh_n; kh++)
                        for (int64_t kw = 0; kw < kw_n; kw++) {
                            const float *b = xp + c * l->plane + kh * g->dl[1] * l->wp + kw * g->dl[2];
                            float *dp = ap + (c * kvol + kh * kw_n + kw) * mr;
                            for (int r = 0; r < mr; r++)
                                dp[r] = r < rows ? b[o[r]] : 0.0f;
                        }
            }
        }
    }
}

/* Phase 2, slot s: its channel tiles over every pixel, then back to NCHW with the epilogue. */
static void gemm_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const pg_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const pg_state *st = j->st;
    const int64_t mr = trtl_gemm_mr(st->isa), nr = trtl_gemm_nr(st->isa);
    const int64_t M = g->N * g->P, ntiles = ceil_div(g->K, nr), npan = ceil_div(M, mr);
    const float *A = j->base + j->l.a;
    float *ct = j->base + j->l.ct;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        const int64_t n0 = s * ntiles / j->slots * nr, n1e = (s + 1) * ntiles / j->slots * nr;
        const int64_t n1 = n1e < g->K ? n1e : g->K;
        if (n0 >= n1)
            continue;
        const int64_t nkb = ceil_div(g->ckk, PG_KC), kc0 = ceil_div(g->ckk, nkb);
        /* tile by tile (its weights are read from memory once, each depth block of them reused by
         * every pixel panel from L1/L2), the tile's C^T columns accumulated over the depth blocks */
        for (int64_t t0 = n0; t0 < n1; t0 += nr) {
            const int64_t cols = n1 - t0 < nr ? n1 - t0 : nr;
            trtl_gemm_epi e = {NULL, j->bias ? j->bias + t0 : NULL, NULL, 0, TRTL_ACT_NONE, 0.0f, 0.0f};
            for (int64_t k0 = 0; k0 < g->ckk; k0 += kc0) {
                const int64_t kc = g->ckk - k0 < kc0 ? g->ckk - k0 : kc0;
                const int flags = (k0 > 0 ? TRTL_GEMM_ACC : 0) | (k0 + kc >= g->ckk ? TRTL_GEMM_LAST : 0);
                /* the weights read next (this tile's next depth block, else the next tile's first),
                 * prefetched into L2 a share per pixel panel: the first panel would otherwise wait
                 * on L3 for every line of the block, the others find it in L2 anyway */
                const float *next = NULL;
                int64_t next_bytes = 0;
                if (k0 + kc < g->ckk) {
                    next = st->wt + (t0 / nr) * st->tile_stride + (k0 + kc) * nr;
                    next_bytes = (g->ckk - k0 - kc < kc0 ? g->ckk - k0 - kc : kc0) * nr * (int64_t)sizeof(float);
                } else if (t0 + nr < n1) {
                    next = st->wt + (t0 / nr + 1) * st->tile_stride;
                    next_bytes = (g->ckk < kc0 ? g->ckk : kc0) * nr * (int64_t)sizeof(float);
                }
                for (int64_t pan = 0; pan < npan; pan++) {
                    const int64_t m0 = panel_start(M, npan, pan), m1 = panel_start(M, npan, pan + 1);
                    const int64_t b0 = next_bytes * pan / npan / 64 * 64, b1 = next_bytes * (pan + 1) / npan / 64 * 64;
                    trtl_gemm_block_pf(st->isa, m1 - m0, cols, kc, A + pan * g->ckk * mr + k0 * mr, g->ckk * mr,
                                       st->wt + (t0 / nr) * st->tile_stride + k0 * nr, st->tile_stride,
                                       ct + m0 * g->K + t0, g->K, &e, flags, next ? (const char *)next + b0 : NULL,
                                       pan + 1 == npan ? next_bytes - b0 : b1 - b0);
                }
            }
            /* C^T[n*P + p][k] -> y[n][k][p] (+ residual) while the tile's columns are in cache */
            for (int64_t n = 0; n < g->N; n++) {
                float *yn = j->y + n * g->K * g->P;
                const float *rn = j->res ? j->res + n * g->K * g->P : NULL;
                for (int64_t p = 0; p < g->P; p++) {
                    const float *src = ct + (n * g->P + p) * g->K;
                    if (rn)
                        for (int64_t k = t0; k < t0 + cols; k++)
                            yn[k * g->P + p] = src[k] + rn[k * g->P + p];
                    else
                        for (int64_t k = t0; k < t0 + cols; k++)
                            yn[k * g->P + p] = src[k];
                }
            }
        }
        for (int64_t n = 0; n < g->N; n++)
            trtl_epi_act(j->epi, j->y + (n * g->K + n0) * g->P, (n1 - n0) * g->P);
    }
}

static void pg_unpack(const trtl_node *nd, const void *state, void *dst);

static trtl_status pg_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const pg_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!st || st->K != g.K || st->ckk != g.ckk)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.pixel_gemm run without its packed weights",
                          nd->name);
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    pg_job j;
    memset(&j, 0, sizeof j);
    const int mr = trtl_gemm_mr(st->isa), nr = trtl_gemm_nr(st->isa);
    layout(&g, mr, &j.l);
    if (!fits(&g) || !a->scratch || a->scratch_size < (size_t)j.l.total * sizeof(float) + 64)
        return trtl_conv_reference_fallback(a, res, pg_unpack); /* a shape the packed path does not take */
    j.g = &g;
    j.st = st;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.res = res;
    j.y = (float *)a->out[0].data;
    j.base = (float *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    /* pixel offsets into the padded input by panel and row (rows past a panel's end: 0, masked) */
    const int64_t M = g.N * g.P, npan = ceil_div(M, mr);
    int32_t *offs = (int32_t *)(j.base + j.l.offs);
    for (int64_t pan = 0; pan < npan; pan++) {
        const int64_t m0 = panel_start(M, npan, pan), m1 = panel_start(M, npan, pan + 1);
        for (int64_t r = 0; r < mr; r++) {
            int64_t o = 0, m = m0 + r;
            if (m < m1) {
                const int64_t n = m / g.P, p = m % g.P, oh = p / g.out[2], ow = p % g.out[2];
                o = n * g.C * j.l.plane + oh * g.s[1] * j.l.wp + ow * g.s[2];
            }
            offs[pan * mr + r] = (int32_t)o;
        }
    }
    const double flops = 2.0 * (double)M * (double)g.K * (double)g.ckk;
    int64_t threads = trtl_threads_for(a->pool, flops), ntiles = ceil_div(g.K, nr);
    if (threads > PG_MAX_SLOTS)
        threads = PG_MAX_SLOTS;
    j.slots = threads < g.C ? threads : g.C;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, pack_slots, &j); /* a slot a thread; inline when 1 */
    j.slots = threads < ntiles ? threads : ntiles;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, gemm_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t pg_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (!fits(&g))
        return trtl_conv_unpacked_bytes(nd); /* the reference fallback rebuilds the plain weights there */
    pg_layout l;
    layout(&g, 12, &l); /* the AVX-512 panels (12 rows) round M up further than the AVX2 ones (6) */
    return (size_t)l.total * sizeof(float) + 64;
}

static int pg_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1 || p->kernel_size.nb_dims > 2)
        return 0;
    trtl_conv_geom g;
    if (!trtl_conv_float_applies(nd, &in_dims[0], &g))
        return 0;
    return fits(&g) && p->kernel.count == g.K * g.ckk && (!p->bias.count || p->bias.count == g.K);
}

static size_t pg_state_bytes(const void *state)
{
    const pg_state *st = state;
    return sizeof *st + st->packed_bytes;
}

static void pg_release(void *state)
{
    pg_state *st = state;
    if (st)
        free(st->wt);
    free(st);
}

static trtl_status pg_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    trtl_gemm_isa isa = trtl_gemm_isa_best();
    if (isa == TRTL_GEMM_NONE)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution.pixel_gemm needs AVX2 and FMA", nd->name);
    if (p->num_groups != 1 || p->num_output_maps < 1 || p->kernel.count % p->num_output_maps ||
        p->kernel.type != TRTL_FLOAT || p->kernel.count == 0)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit %d output maps in one group",
                          nd->name, (long long)p->kernel.count, p->num_output_maps);
    pg_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    const int64_t nr = trtl_gemm_nr(isa);
    st->isa = isa;
    st->K = p->num_output_maps;
    st->ckk = p->kernel.count / st->K;
    st->tile_stride = st->ckk * nr + PG_TILE_SKEW;
    size_t bytes = (size_t)(ceil_div(st->K, nr) * st->tile_stride) * sizeof(float);
    st->wt = aligned_alloc(64, (bytes + 63) / 64 * 64);
    st->packed_bytes = bytes;
    if (!st->wt) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    /* B(d, k) = W[k][d]: column k of B is output channel k's weights in (c, kh, kw) order */
    trtl_gemm_pack_b(isa, (const float *)p->kernel.values, 1, st->ckk, st->ckk, st->K, st->wt, st->tile_stride);
    *state = st;
    return TRTL_OK;
}

/* W[k][d] = B(d, k), read back from its tile (exact: the packing only moves floats); dst at any byte offset. */
static void pg_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const pg_state *st = state;
    const int64_t nr = trtl_gemm_nr(st->isa);
    unsigned char *w = dst;
    (void)nd;
    for (int64_t k = 0; k < st->K; k++) {
        const float *tile = st->wt + (k / nr) * st->tile_stride + k % nr;
        for (int64_t d = 0; d < st->ckk; d++)
            memcpy(w + (size_t)(k * st->ckk + d) * sizeof(float), &tile[d * nr], sizeof(float));
    }
}

const trtl_kernel trtl_kernel_conv_pixel_gemm = {
    .name = "convolution.pixel_gemm",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = pg_applies,
    .prepare = pg_prepare,
    .release = pg_release,
    .state_bytes = pg_state_bytes,
    .scratch = pg_scratch,
    .run = pg_run,
    .unpack = pg_unpack,
};
