/*
 * convolution_tapwise.c -- "convolution.tapwise": 2-D (or 1-D) convolutions of one group whose
 * kernel taps read padding over much of the output -- dilated convolutions on small maps (the
 * ASPP of DeepLabV3: 3x3, dilation = padding = 12 / 24 / 36 on a 14x14 map, where at 24 and 36
 * only the centre tap ever reads the image) and kernels larger than their padded input.
 *
 * The convolution is computed tap by tap:
 *
 *     Y[K, P] = bias + sum over taps t = (kh, kw) of  W_t[K, C] x X_t[C, P]
 *
 * where X_t is the input shifted by tap t's offset.  Along each axis the output positions whose
 * input lies inside the image form an interval, so the positions where tap t reads the image
 * form a rectangle R_t (computed per run from the geometry, which may change with the input
 * size); elsewhere the tap reads padding and contributes 0 * w.  So each tap is one GEMM of K x
 * C x |R_t| on the packed SGEMM core (gemm_packed.h), and taps with an empty R_t are dropped.
 *
 * Exactness: 0 * w is 0 only for finite w.  prepare() records the taps holding a non-finite
 * weight; those are computed over the whole output with their padding read as zeros (0 * NaN =
 * NaN as in the reference).  The input's NaN / Inf reach exactly the outputs whose windows read
 * them, as in the reference, since every tap reads all of the image it reaches.
 *
 * State: the weights of every tap packed as A (rows: output channels), [kvol][K rounded to
 * mr][C][mr], so any input size can be run.  run(), per image:
 *   1. pack: slot s takes input channels [c0, c1) and writes their rows of every live tap's B
 *      (the tap's rectangle, pixels row-major, tiles of nr) into shared scratch;
 *   2. GEMM: slot s takes a run of output-channel row panels.  Taps whose rectangle is the whole
 *      map go first, straight into Y (the first writes with the bias, the others accumulate);
 *      a partial tap spanning whole rows accumulates into Y's rows, a narrower one computes into
 *      the slot's rows of a compact buffer that is then added into its sub-rectangle.  The
 *      epilogue (residual, activation) is fused into the last full tap's last depth block when
 *      every live tap is full, else applied to the slot's channels after the last tap.
 *   If no tap is full the slot's channels are first set to the bias.
 *
 * applies() takes a node only where some tap can be dropped or dilation > 1 (elsewhere the
 * other kernels do the same work with fewer passes); scratch() sizes for the shapes it is given
 * and a run with less scratch than its shapes need computes the reference and the epilogue pass.
 * The weights are held once, packed: unpack() reads them back exactly, the engine frees the plain
 * copy, the reference fallback rebuilds it in scratch (convolution_unpacked.h), and scratch() reads
 * the non-finite taps from the state once the plain copy is gone.
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/ref/ref.h"
#include "kernels/x86/convolution_unpacked.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/gemm_packed.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define TW_KC_MAX 512               /* depth block (as convolution.packed_gemm's KC_MAX) */
#define TW_MAX_TAPS 64              /* kernel taps at most (9 for 3x3; 7x7 = 49) */
#define TW_MAX_B_FLOATS (8 << 20)   /* packed B of one image at most 32 MiB */
#define TW_MAX_SLOTS 64
#define TW_B_BLOCK_BYTES (384 * 1024) /* a pixel panel's B block stays in L2 (as convolution.packed_gemm) */
#define TW_TILE_SKEW 16 /* B tiles kc*nr + skew floats apart (see convolution_gemm.c's TILE_SKEW) */

#define TW_MAGIC 0x54415057u /* "TAPW": scratch() recognises its own state on the node */

typedef struct tw_state {
    uint32_t magic;
    trtl_gemm_isa isa;
    int64_t K, C, kvol, tap_floats;
    float *a;                          /* tap t's packed weights at t * tap_floats */
    unsigned char nonfinite[TW_MAX_TAPS]; /* 1: tap t holds a NaN / Inf weight */
    size_t packed_bytes; /* of the packed weights (state_bytes) */
} tw_state;

/* One live tap: its output rectangle [oh0, oh1) x [ow0, ow1), input offsets, place in B. */
typedef struct tw_tap {
    int t;
    int full;    /* the rectangle is the whole output */
    int bounded; /* non-finite weights: the whole output, padding read as zeros */
    int64_t oh0, oh1, ow0, ow1, npix, offh, offw, boff;
} tw_tap;

/* The per-run plan: live taps in order (full ones first) and the scratch layout. */
typedef struct tw_plan {
    tw_tap tap[TW_MAX_TAPS];
    int nlive, nfull;
    int64_t ts;      /* B tile stride */
    int64_t b_total; /* floats of B */
    int64_t maxq;    /* pixels of the widest narrow partial tap (compact buffer columns) */
    int64_t ct;      /* offset of the compact buffer */
    int64_t total;   /* floats in all */
} tw_plan;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* flags[t] = 1 where tap t holds a NaN / Inf weight (W is [K][C][kvol]). */
static void find_nonfinite(const trtl_conv_params *p, int64_t K, int64_t C, int64_t kvol, unsigned char *flags)
{
    const float *w = (const float *)p->kernel.values;
    memset(flags, 0, (size_t)kvol);
    for (int64_t i = 0; i < K * C * kvol; i++)
        if (!isfinite(w[i]))
            flags[i % kvol] = 1;
}

extern const trtl_kernel trtl_kernel_conv_tapwise;

/* The non-finite taps of node nd for scratch(), which gets no state: from the plain weights while they
 * exist, else from the node's prepared state (the engine dropped the plain copy), else every tap (the
 * largest plan). */
static void nonfinite_of(const trtl_node *nd, const trtl_conv_geom *g, unsigned char *flags)
{
    const tw_state *st = nd->kstate;
    if (nd->p.conv.kernel.values) {
        find_nonfinite(&nd->p.conv, g->K, g->C, g->kvol, flags);
    } else if (st && (!nd->kernel || nd->kernel == &trtl_kernel_conv_tapwise) && st->magic == TW_MAGIC &&
               st->kvol == g->kvol) {
        memcpy(flags, st->nonfinite, (size_t)g->kvol);
    } else {
        memset(flags, 1, (size_t)g->kvol);
    }
}

static int shape_ok(const trtl_conv_geom *g)
{
    return g->G == 1 && trtl_conv_geom_2d(g) && g->kvol <= TW_MAX_TAPS && g->C >= 1 &&
           g->K >= 1;
}

/* The live taps of geometry g and the scratch layout for tile width nr / row panels mr.
 * nonfinite may be NULL (applies(): only the finite taps' rectangles matter there). */
static void make_plan(const trtl_conv_geom *g, const unsigned char *nonfinite, int64_t mr, int64_t nr, tw_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    const int64_t OH = g->out[1], OW = g->out[2];
    tw_tap full[TW_MAX_TAPS], part[TW_MAX_TAPS];
    int nf = 0, np = 0;
    for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
            tw_tap tp;
            memset(&tp, 0, sizeof tp);
            tp.t = (int)(kh * g->k[2] + kw);
            tp.offh = kh * g->dl[1] - g->pad[1];
            tp.offw = kw * g->dl[2] - g->pad[2];
            trtl_conv_row_span(tp.offh, g->s[1], g->in[1], OH, &tp.oh0, &tp.oh1);
            trtl_conv_row_span(tp.offw, g->s[2], g->in[2], OW, &tp.ow0, &tp.ow1);
            const int exact_full = tp.oh0 == 0 && tp.oh1 == OH && tp.ow0 == 0 && tp.ow1 == OW;
            if (nonfinite && nonfinite[tp.t] && !exact_full) {
                tp.bounded = 1;
                tp.oh0 = tp.ow0 = 0;
                tp.oh1 = OH;
                tp.ow1 = OW;
            }
            tp.npix = (tp.oh1 - tp.oh0) * (tp.ow1 - tp.ow0);
            if (tp.npix == 0)
                continue;
            tp.full = tp.npix == OH * OW;
            if (tp.full)
                full[nf++] = tp;
            else
                part[np++] = tp;
        }
    pl->ts = g->C * nr + TW_TILE_SKEW;
    for (int i = 0; i < nf; i++)
        pl->tap[pl->nlive++] = full[i];
    for (int i = 0; i < np; i++)
        pl->tap[pl->nlive++] = part[i];
    pl->nfull = nf;
    for (int i = 0; i < pl->nlive; i++) {
        tw_tap *tp = &pl->tap[i];
        tp->boff = pl->b_total;
        pl->b_total += round_up(ceil_div(tp->npix, nr) * pl->ts, 16);
        if (!tp->full && !(tp->ow0 == 0 && tp->ow1 == OW) && tp->npix > pl->maxq)
            pl->maxq = tp->npix;
    }
    pl->ct = pl->b_total;
    pl->total = pl->ct + round_up(round_up(g->K, mr) * pl->maxq, 16);
}

/* Whether the kernel takes geometry g: fits the limits, and some tap is dead or dilated. */
static int fits(const trtl_conv_geom *g)
{
    if (!shape_ok(g) || g->P < 1)
        return 0;
    tw_plan pl;
    make_plan(g, NULL, 14, 32, &pl);
    if (pl.b_total > TW_MAX_B_FLOATS || pl.total >= ((int64_t)1 << 31))
        return 0;
    return pl.nlive < g->kvol || g->dl[1] > 1 || g->dl[2] > 1;
}

typedef struct tw_job {
    const trtl_conv_geom *g;
    const tw_state *st;
    const tw_plan *pl;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y, *base;
    int64_t n, slots;
} tw_job;

/* Writes len floats of src (stride 1) as B columns j.. of row `bt` (tile 0 at bt, tiles ts apart). */
static void put_run(float *bt, int64_t ts, int64_t nr, int64_t j, const float *src, int64_t len)
{
    while (len > 0) {
        const int64_t lane = j % nr, n = len < nr - lane ? len : nr - lane;
        float *d = bt + (j / nr) * ts + lane;
        if (n >= 8)
            memcpy(d, src, (size_t)n * sizeof(float));
        else /* the few columns of a band or corner: a call would cost more than the copy */
            for (int64_t i = 0; i < n; i++)
                d[i] = src[i];
        j += n;
        src += n;
        len -= n;
    }
}

/* Row c of tap tp's B: the input channel plane xc read over the tap's rectangle. */
static void pack_row(const tw_job *j, const tw_tap *tp, const float *xc, float *bt)
{
    const trtl_conv_geom *g = j->g;
    const int64_t nr = trtl_gemm_nr(j->st->isa), ts = j->pl->ts, H = g->in[1], W = g->in[2];
    const int64_t sh = g->s[1], sw = g->s[2], rw = tp->ow1 - tp->ow0;
    int64_t q = 0;
    if (tp->bounded) {
        for (int64_t oh = tp->oh0; oh < tp->oh1; oh++) {
            const int64_t ih = oh * sh + tp->offh;
            for (int64_t ow = tp->ow0; ow < tp->ow1; ow++, q++) {
                const int64_t iw = ow * sw + tp->offw;
                bt[(q / nr) * ts + q % nr] = ih >= 0 && ih < H && iw >= 0 && iw < W ? xc[ih * W + iw] : 0.0f;
            }
        }
    } else if (sw == 1 && sh == 1 && rw == W) {
        /* whole input rows: the rectangle is one contiguous run of the plane */
        trtl_gemm_pack_b_row(j->st->isa, xc + (tp->oh0 + tp->offh) * W, tp->npix, bt, ts);
        return;
    } else if (sw == 1) {
        for (int64_t oh = tp->oh0; oh < tp->oh1; oh++, q += rw)
            put_run(bt, ts, nr, q, xc + (oh * sh + tp->offh) * W + tp->ow0 + tp->offw, rw);
    } else {
        for (int64_t oh = tp->oh0; oh < tp->oh1; oh++) {
            const float *row = xc + (oh * sh + tp->offh) * W + tp->offw;
            for (int64_t ow = tp->ow0; ow < tp->ow1; ow++, q++)
                bt[(q / nr) * ts + q % nr] = row[ow * sw];
        }
    }
    for (; q % nr; q++) /* the last tile's columns past the rectangle */
        bt[(q / nr) * ts + q % nr] = 0.0f;
}

/* Phase 1, slot s: input channels [c0, c1) of image j->n into every live tap's B. */
static void pack_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const tw_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const int64_t nr = trtl_gemm_nr(j->st->isa);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        const int64_t c0 = s * g->C / j->slots, c1 = (s + 1) * g->C / j->slots;
        for (int i = 0; i < j->pl->nlive; i++) {
            const tw_tap *tp = &j->pl->tap[i];
            for (int64_t c = c0; c < c1; c++)
                pack_row(j, tp, j->x + (j->n * g->C + c) * g->in_sp, j->base + tp->boff + c * nr);
        }
    }
}

/* Phase 2, slot s: output channels [m0, m1) of image j->n over every live tap. */
static void gemm_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const tw_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const tw_state *st = j->st;
    const tw_plan *pl = j->pl;
    const int64_t mr = trtl_gemm_mr(st->isa), nr = trtl_gemm_nr(st->isa), npan = ceil_div(g->K, mr);
    const int64_t P = g->P, OW = g->out[2], C = g->C;
    const int fused = pl->nfull > 0 && pl->nfull == pl->nlive;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        const int64_t m0 = s * npan / j->slots * mr, m1e = (s + 1) * npan / j->slots * mr;
        const int64_t m1 = m1e < g->K ? m1e : g->K;
        if (m0 >= m1)
            continue;
        float *yk = j->y + (j->n * g->K + m0) * P;
        const float *rk = j->res ? j->res + (j->n * g->K + m0) * P : NULL;
        const float *bias = j->bias ? j->bias + m0 : NULL;
        if (pl->nfull == 0)
            for (int64_t k = m0; k < m1; k++)
                trtl_epi_prefill(yk + (k - m0) * P, NULL, bias ? bias[k - m0] : 0.0f, NULL, P);
        for (int i = 0; i < pl->nlive; i++) {
            const tw_tap *tp = &pl->tap[i];
            const float *a = st->a + tp->t * st->tap_floats + (m0 / mr) * C * mr;
            const float *b = j->base + tp->boff;
            const int rows_whole = tp->ow0 == 0 && tp->ow1 == OW;
            float *c;
            int64_t ldc;
            if (rows_whole) {
                c = yk + tp->oh0 * OW;
                ldc = P;
            } else {
                c = j->base + pl->ct + m0 * pl->maxq; /* the slot's rows, whatever the tap's width */
                ldc = tp->npix;
            }
            trtl_gemm_epi e = {NULL, NULL, NULL, P, TRTL_ACT_NONE, 0.0f, 0.0f};
            if (tp->full && i == 0)
                e.row_bias = bias;
            if (fused && i == pl->nlive - 1) {
                e.res = rk;
                e.act = j->epi->act;
                e.alpha = j->epi->alpha;
                e.beta = j->epi->beta;
            }
            const int64_t kc0 = ceil_div(C, ceil_div(C, TW_KC_MAX));
            int64_t pw = TW_B_BLOCK_BYTES / (kc0 * (int64_t)sizeof(float)) / nr * nr;
            pw = pw < 4 * nr ? 4 * nr : pw;
            /* pixel panels of pw (B block kc0 x pw in L2), each over the depth blocks */
            for (int64_t p0 = 0; p0 < tp->npix; p0 += pw) {
                const int64_t cols = tp->npix - p0 < pw ? tp->npix - p0 : pw;
                trtl_gemm_epi ep = e;
                ep.res = e.res ? e.res + p0 : NULL;
                for (int64_t k0 = 0; k0 < C; k0 += kc0) {
                    const int64_t kc = C - k0 < kc0 ? C - k0 : kc0;
                    /* into Y: accumulate unless this is the first full tap's first block; into the
                     * compact buffer: accumulate over the depth blocks */
                    const int acc = k0 > 0 || (rows_whole && !(tp->full && i == 0));
                    const int flags = (acc ? TRTL_GEMM_ACC : 0) | (k0 + kc >= C ? TRTL_GEMM_LAST : 0);
                    trtl_gemm_block(st->isa, m1 - m0, cols, kc, a + k0 * mr, C * mr, b + (p0 / nr) * pl->ts + k0 * nr,
                                    pl->ts, c + p0, ldc, &ep, flags);
                }
            }
            if (!rows_whole) { /* the compact rows into Y's sub-rectangle */
                const int64_t rw = tp->ow1 - tp->ow0;
                for (int64_t k = 0; k < m1 - m0; k++) {
                    const float *src = c + k * ldc;
                    float *dst = yk + k * P + tp->oh0 * OW + tp->ow0;
                    for (int64_t oh = tp->oh0; oh < tp->oh1; oh++, src += rw, dst += OW)
                        for (int64_t q = 0; q < rw; q++)
                            dst[q] += src[q];
                }
            }
        }
        if (!fused) {
            if (rk)
                for (int64_t q = 0; q < (m1 - m0) * P; q++)
                    yk[q] += rk[q];
            trtl_epi_act(j->epi, yk, (m1 - m0) * P);
        }
    }
}

static void tw_unpack(const trtl_node *nd, const void *state, void *dst);

static trtl_status tw_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const tw_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!st || st->K != g.K || st->C * st->kvol != g.ckk || st->kvol != g.kvol)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.tapwise run without its packed weights",
                          nd->name);
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    const int64_t mr = trtl_gemm_mr(st->isa), nr = trtl_gemm_nr(st->isa);
    tw_plan pl;
    if (shape_ok(&g))
        make_plan(&g, st->nonfinite, mr, nr, &pl);
    if (!shape_ok(&g) || pl.b_total > TW_MAX_B_FLOATS || !a->scratch ||
        a->scratch_size < (size_t)pl.total * sizeof(float) + 64) {
        /* another input size than the scratch was sized for: the reference and the epilogue pass */
        return trtl_conv_reference_fallback(a, res, tw_unpack);
    }
    tw_job j;
    memset(&j, 0, sizeof j);
    j.g = &g;
    j.st = st;
    j.pl = &pl;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.res = res;
    j.y = (float *)a->out[0].data;
    j.base = (float *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    int64_t work = 0;
    for (int i = 0; i < pl.nlive; i++)
        work += pl.tap[i].npix;
    const double flops = 2.0 * (double)g.K * (double)g.C * (double)(work > 0 ? work : 1);
    int64_t threads = trtl_threads_for(a->pool, flops);
    if (threads > TW_MAX_SLOTS)
        threads = TW_MAX_SLOTS;
    const int64_t npan = ceil_div(g.K, mr);
    for (j.n = 0; j.n < g.N; j.n++) {
        if (pl.nlive > 0) {
            j.slots = threads < g.C ? threads : g.C;
            if (j.slots < 1)
                j.slots = 1;
            trtl_parallel_for(a->pool, j.slots, 1, pack_slots, &j); /* a slot a thread; inline when 1 */
        }
        j.slots = threads < npan ? threads : npan;
        if (j.slots < 1)
            j.slots = 1;
        trtl_parallel_for(a->pool, j.slots, 1, gemm_slots, &j); /* a slot a thread; inline when 1 */
    }
    return TRTL_OK;
}

static size_t tw_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (!shape_ok(&g) || g.P < 1)
        return trtl_conv_unpacked_bytes(nd); /* the reference fallback rebuilds the plain weights there */
    /* the plan run() makes, for both variants' tiles (AVX-512 12 x 32, AVX2 6 x 16) */
    unsigned char nonfinite[TW_MAX_TAPS];
    nonfinite_of(nd, &g, nonfinite);
    int64_t total = 0;
    for (int v = 0; v < 2; v++) {
        tw_plan pl;
        make_plan(&g, nonfinite, v ? 6 : 12, v ? 16 : 32, &pl);
        if (pl.b_total > TW_MAX_B_FLOATS)
            return trtl_conv_unpacked_bytes(nd);
        if (pl.total > total)
            total = pl.total;
    }
    return (size_t)total * sizeof(float) + 64;
}

static int tw_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1 || p->kernel_size.nb_dims > 2)
        return 0;
    trtl_conv_geom g;
    if (!trtl_conv_float_applies(nd, &in_dims[0], &g))
        return 0;
    return fits(&g);
}

static size_t tw_state_bytes(const void *state)
{
    const tw_state *st = state;
    return sizeof *st + st->packed_bytes;
}

static void tw_release(void *state)
{
    tw_state *st = state;
    if (st)
        free(st->a);
    free(st);
}

static trtl_status tw_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    trtl_gemm_isa isa = trtl_gemm_isa_best();
    if (isa == TRTL_GEMM_NONE)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution.tapwise needs AVX2 and FMA", nd->name);
    int64_t kvol = 1;
    for (int i = 0; i < p->kernel_size.nb_dims; i++)
        kvol *= p->kernel_size.d[i];
    if (p->num_groups != 1 || p->num_output_maps < 1 || p->kernel.type != TRTL_FLOAT || kvol < 1 ||
        kvol > TW_MAX_TAPS || p->kernel.count == 0 || p->kernel.count % ((int64_t)p->num_output_maps * kvol))
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': %lld weights do not fit %d output maps of %lld taps in one group "
                          "(convolution.tapwise)",
                          nd->name, (long long)p->kernel.count, p->num_output_maps, (long long)kvol);
    tw_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->magic = TW_MAGIC;
    st->isa = isa;
    st->K = p->num_output_maps;
    st->kvol = kvol;
    st->C = p->kernel.count / st->K / kvol;
    st->tap_floats = round_up(trtl_gemm_packed_a_size(isa, st->K, st->C), 16);
    size_t bytes = (size_t)(st->tap_floats * kvol) * sizeof(float);
    st->a = aligned_alloc(64, (bytes + 63) / 64 * 64);
    st->packed_bytes = bytes;
    if (!st->a) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    /* W_t(k, c) = W[k][c][t] */
    const float *w = (const float *)p->kernel.values;
    for (int64_t t = 0; t < kvol; t++)
        trtl_gemm_pack_a(isa, w + t, st->C * kvol, kvol, st->K, st->C, st->a + t * st->tap_floats);
    find_nonfinite(p, st->K, st->C, kvol, st->nonfinite);
    *state = st;
    return TRTL_OK;
}

/* W[k][c][t] read back from tap t's A panels (gemm_packed.h: [K/mr][C][mr]): exact, the packing only moves
 * floats.  dst is the plan writer's buffer at any byte offset: stored with memcpy. */
static void tw_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const tw_state *st = state;
    const int64_t mr = trtl_gemm_mr(st->isa);
    unsigned char *w = dst;
    (void)nd;
    for (int64_t t = 0; t < st->kvol; t++)
        for (int64_t k = 0; k < st->K; k++) {
            const float *panel = st->a + t * st->tap_floats + (k / mr) * st->C * mr + k % mr;
            for (int64_t c = 0; c < st->C; c++)
                memcpy(w + (size_t)((k * st->C + c) * st->kvol + t) * sizeof(float), &panel[c * mr], sizeof(float));
        }
}

const trtl_kernel trtl_kernel_conv_tapwise = {
    .name = "convolution.tapwise",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = tw_applies,
    .prepare = tw_prepare,
    .release = tw_release,
    .state_bytes = tw_state_bytes,
    .scratch = tw_scratch,
    .run = tw_run,
    .unpack = tw_unpack,
};
