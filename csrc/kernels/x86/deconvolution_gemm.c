/*
 * deconvolution_gemm.c -- "deconvolution.packed_gemm": transposed convolution (1-3 spatial dims,
 * groups, strides, dilations, every padding mode) on trtlite's own SGEMM (gemm_packed.h), with
 * bias + residual + activation applied once per output element.  Needs AVX2 + FMA (AVX-512 tiles
 * when present).
 *
 * For image n and group g:  Col[Kg*kvol, in_sp] = W^T[Kg*kvol, Cg] x X[Cg, in_sp]
 * Row (k, kk) of Col, column i (an input pixel) belongs at output pixel o = i*s - pad + kk*dl,
 * which is the gather of the reference kernel turned around (col2im).  W^T is the packed A operand
 * (packed once in prepare(); deconvolution weights are [C, Kg, kvol], so A(row, c) reads with row
 * stride 1 and column stride Kg*kvol), X is B, packed per pixel panel into a slot's scratch.
 *
 * Work items are (image, group, channel chunk[, pixel panel]).  A chunk is a whole number of
 * `units` of output channels, a unit being the fewest channels whose Col rows fill whole A panels
 * (unit*kvol a multiple of mr), so a chunk's rows start at a panel of the packed A and no two
 * items write the same output channel.  Two ways to put Col in place:
 *   direct   kernel == stride along every axis (dilation 1, no negative padding): every output
 *            pixel receives exactly one Col value, so Col goes straight into place as
 *            act(col + bias + residual) -- the U-Net 2x2 stride-2 up-sampling.  Pixel panels are
 *            items too (their outputs are disjoint).  2-wide stride-2 rows interleave in
 *            registers.
 *   scatter  otherwise: the chunk's output planes are set to bias + residual, every panel's Col
 *            is added in place, then the activation runs over the planes (once per element).
 */
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/x86/gemm_packed.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/shape.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define KC_MAX 512                 /* depth block (A micro-panel in L1) */
#define SLOT_BYTES (256 * 1024)    /* a slot's B panel + Col block stay in L2 */
#define ROWS_TARGET 96             /* Col rows per item (A panels sharing one packed B panel) */
#define MAX_SLOTS 64
#define ALIGN_FLOATS 16
#define TILE_SKEW 16

typedef struct dc_geom {
    int64_t N, C, K, G, Cg, Kg;
    int64_t in[3], out[3], k[3], s[3], dl[3], pad[3];
    int64_t in_sp, out_sp, kvol;
    int direct;
} dc_geom;

typedef struct dc_state {
    trtl_gemm_isa isa;
    int64_t K, G, Kg, Cg, kvol, unit, group_floats;
    float *a;
} dc_state;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
static int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, dc_geom *g)
{
    const trtl_conv_params *p = &nd->p.conv;
    int nsp = p->kernel_size.nb_dims, off = 3 - nsp;
    char s1[TRTL_DIMS_STR_MAX];
    if (nsp < 1 || nsp > 3 || xd->nb_dims != nsp + 2 || p->stride.nb_dims != nsp || p->dilation.nb_dims != nsp ||
        p->pre_padding.nb_dims != nsp || p->post_padding.nb_dims != nsp)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not fit a %dD deconvolution", nd->name,
                          trtl_dims_str(xd, s1, sizeof s1), nsp);
    memset(g, 0, sizeof *g);
    g->direct = 1;
    for (int i = 0; i < 3; i++)
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->dl[i] = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t o, pre, post, kk = p->kernel_size.d[i], dd = p->dilation.d[i], keff;
        if (kk < 1 || dd < 1 || trtl_dilated_kernel(kk, dd, &keff) != TRTL_OK ||
            trtl_deconv_out(xd->d[2 + i], keff, p->stride.d[i], p->pre_padding.d[i], p->post_padding.d[i],
                            p->padding_mode, &o, &pre, &post) != TRTL_OK)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not fit the deconvolution", nd->name,
                              trtl_dims_str(xd, s1, sizeof s1));
        if (yd && (yd->nb_dims != xd->nb_dims || yd->d[2 + i] != o))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not match the deconvolution", nd->name,
                              trtl_dims_str(yd, s1, sizeof s1));
        g->in[off + i] = xd->d[2 + i];
        g->out[off + i] = o;
        g->k[off + i] = kk;
        g->s[off + i] = p->stride.d[i];
        g->dl[off + i] = dd;
        g->pad[off + i] = pre;
        if (kk != p->stride.d[i] || (kk > 1 && dd != 1) || pre < 0 || post < 0)
            g->direct = 0;
    }
    g->N = xd->d[0];
    g->C = xd->d[1];
    g->K = p->num_output_maps;
    g->G = p->num_groups;
    if (g->G < 1 || g->C < 1 || g->K < 1 || g->C % g->G || g->K % g->G)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld input / %lld output channels do not split into %lld groups",
                          nd->name, (long long)g->C, (long long)g->K, (long long)g->G);
    g->Cg = g->C / g->G;
    g->Kg = g->K / g->G;
    g->in_sp = g->in[0] * g->in[1] * g->in[2];
    g->out_sp = g->out[0] * g->out[1] * g->out[2];
    g->kvol = g->k[0] * g->k[1] * g->k[2];
    if (yd && (yd->d[0] != g->N || yd->d[1] != g->K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not have %lld images of %lld channels",
                          nd->name, trtl_dims_str(yd, s1, sizeof s1), (long long)g->N, (long long)g->K);
    if (p->kernel.count != g->C * g->Kg * g->kvol || (p->bias.count && p->bias.count != g->K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights / %lld biases do not fit the deconvolution",
                          nd->name, (long long)p->kernel.count, (long long)p->bias.count);
    return TRTL_OK;
}

/* ---- work split --------------------------------------------------------------------------------- */

typedef struct dc_plan {
    int64_t unit, nunits;     /* channels per unit, units per group */
    int64_t cu, nchunks;      /* units per chunk, chunks per group */
    int64_t pw, npanels;      /* pixel panel width (a multiple of nr) and count */
    int64_t ts, slot_floats;  /* B tile stride; floats of a slot (B panel + Col block) */
    int64_t items, slots;
} dc_plan;

static double dc_flops(const dc_geom *g) { return 2.0 * (double)(g->N * g->C * g->Kg * g->kvol * g->in_sp); }

static int64_t unit_of(trtl_gemm_isa isa, int64_t kvol)
{
    int64_t mr = trtl_gemm_mr(isa);
    return mr / gcd64(mr, kvol);
}

/* Geometry of the split for `threads` threads; the slot size does not depend on threads. */
static void make_plan(const dc_geom *g, trtl_gemm_isa isa, int64_t threads, dc_plan *pl)
{
    const int64_t nr = trtl_gemm_nr(isa);
    memset(pl, 0, sizeof *pl);
    pl->unit = unit_of(isa, g->kvol);
    pl->nunits = ceil_div(g->Kg, pl->unit);
    int64_t cu_max = ROWS_TARGET / (pl->unit * g->kvol);
    if (cu_max < 1)
        cu_max = 1;
    if (cu_max > pl->nunits)
        cu_max = pl->nunits;
    int64_t rows = cu_max * pl->unit * g->kvol;
    /* B panel: Cg x pw (all depth), Col block: rows x pw */
    int64_t per_col = g->Cg + rows;
    int64_t pw = SLOT_BYTES / (int64_t)sizeof(float) / per_col / nr * nr;
    if (pw < nr)
        pw = nr;
    if (pw > round_up(g->in_sp, nr))
        pw = round_up(g->in_sp, nr);
    pl->ts = g->Cg * nr + TILE_SKEW;
    pl->slot_floats = round_up(pw / nr * pl->ts, ALIGN_FLOATS) + round_up(rows * pw, ALIGN_FLOATS);
    /* fewer units per chunk when there are fewer chunks than threads */
    int64_t ng = g->N * g->G, cu = cu_max;
    while (cu > 1 && ng * ceil_div(pl->nunits, cu) < threads)
        cu--;
    pl->cu = cu;
    pl->nchunks = ceil_div(pl->nunits, cu);
    pl->npanels = 1;
    pl->pw = pw;
    if (g->direct) {
        /* direct: panels are items too; panels of equal width so that threads get even shares */
        int64_t np = ceil_div(g->in_sp, pw);
        while (ng * pl->nchunks * np < threads && np < ceil_div(g->in_sp, nr))
            np++;
        pl->pw = round_up(ceil_div(g->in_sp, np), nr);
        pl->npanels = ceil_div(g->in_sp, pl->pw);
    } else {
        pl->npanels = ceil_div(g->in_sp, pw);
    }
    pl->items = ng * pl->nchunks * (g->direct ? pl->npanels : 1);
    pl->slots = threads < pl->items ? threads : pl->items;
    if (pl->slots < 1)
        pl->slots = 1;
}

static int64_t max_threads(const dc_geom *g)
{
    return trtl_scratch_slots(dc_flops(g), MAX_SLOTS);
}

/* ---- col2im ------------------------------------------------------------------------------------- */

typedef struct dc_job {
    const dc_geom *g;
    const dc_state *st;
    const dc_plan *pl;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    float *y, *scratch;
} dc_job;

/* Input pixels [p0, p0 + pw) as runs along the innermost axis: calls fn for each run. */
typedef struct dc_run {
    int64_t id, ih, iw0, iw1, col; /* input row (id, ih), columns [iw0, iw1), Col column of iw0 */
} dc_run;

static int64_t runs_of(const dc_geom *g, int64_t p0, int64_t pw, dc_run *r, int64_t max)
{
    int64_t n = 0, p = p0, end = p0 + pw;
    while (p < end && n < max) {
        int64_t row = p / g->in[2], iw = p % g->in[2];
        int64_t len = g->in[2] - iw < end - p ? g->in[2] - iw : end - p;
        r[n].id = row / g->in[1];
        r[n].ih = row % g->in[1];
        r[n].iw0 = iw;
        r[n].iw1 = iw + len;
        r[n].col = p - p0;
        n++;
        p += len;
    }
    return n;
}

/* Valid input columns [lo, hi) of a run for tap kw: output column iw*s - pad + kw*dl in [0, out). */
static void tap_span(const dc_geom *g, const dc_run *r, int64_t kw, int64_t *lo, int64_t *hi)
{
    int64_t base = kw * g->dl[2] - g->pad[2], s = g->s[2];
    int64_t l = base >= 0 ? 0 : ceil_div(-base, s);
    int64_t h = g->out[2] - 1 - base < 0 ? 0 : (g->out[2] - 1 - base) / s + 1;
    *lo = l > r->iw0 ? l : r->iw0;
    *hi = h < r->iw1 ? h : r->iw1;
}

/* Output row (od, oh) of run r for taps (kd, kh), or -1 if it falls in the cropped padding. */
static int64_t out_row(const dc_geom *g, const dc_run *r, int64_t kd, int64_t kh)
{
    int64_t od = r->id * g->s[0] - g->pad[0] + kd * g->dl[0], oh = r->ih * g->s[1] - g->pad[1] + kh * g->dl[1];
    if (od < 0 || od >= g->out[0] || oh < 0 || oh >= g->out[1])
        return -1;
    return od * g->out[1] + oh;
}

/* scatter: plane[o] += col[i] for every valid (run, tap). */
__attribute__((target("avx2,fma"))) static void scatter_add(const dc_geom *g, const float *col, int64_t ldc,
                                                             int64_t nch, float *yc, const dc_run *runs, int64_t nruns)
{
    const int64_t s2 = g->s[2], dl2 = g->dl[2];
    for (int64_t c = 0; c < nch; c++) {
        float *plane = yc + c * g->out_sp;
        for (int64_t kk = 0; kk < g->kvol; kk++) {
            const int64_t kd = kk / (g->k[1] * g->k[2]), kh = (kk / g->k[2]) % g->k[1], kw = kk % g->k[2];
            const float *crow = col + (c * g->kvol + kk) * ldc;
            for (int64_t ri = 0; ri < nruns; ri++) {
                const dc_run *r = &runs[ri];
                int64_t orow = out_row(g, r, kd, kh), lo, hi;
                if (orow < 0)
                    continue;
                tap_span(g, r, kw, &lo, &hi);
                float *yrow = plane + orow * g->out[2];
                const int64_t ob = kw * dl2 - g->pad[2], cb = r->col - r->iw0;
                if (s2 == 1) {
                    for (int64_t iw = lo; iw < hi; iw++)
                        yrow[iw + ob] += crow[iw + cb];
                } else {
                    for (int64_t iw = lo; iw < hi; iw++)
                        yrow[iw * s2 + ob] += crow[iw + cb];
                }
            }
        }
    }
}

/* One output column o of a direct run. */
static inline void direct_one(const float *crow0, int64_t ldc, int64_t cb, int64_t k2, int64_t pad2, float bias,
                              const float *rrow, float *yrow, int32_t act8, const trtl_epilogue *e, int64_t o)
{
    int64_t t = o + pad2, iw = t / k2, kw = t % k2;
    float v = crow0[kw * ldc + iw + cb] + bias;
    if (rrow)
        v += rrow[o];
    yrow[o] = act8 != TRTL_ACT_NONE ? trtl_activation_eval(act8, e->alpha, e->beta, v) : v;
}

/* direct: every output pixel of these runs receives exactly one Col value. */
__attribute__((target("avx2,fma"))) static void scatter_direct(const dc_job *j, const float *col, int64_t ldc,
                                                                int64_t n, int64_t ch0, int64_t nch,
                                                                const dc_run *runs, int64_t nruns)
{
    const dc_geom *g = j->g;
    const trtl_epilogue *e = j->epi;
    const int fast = trtl_act_is_fast(e->act);
    const __m256 va = _mm256_set1_ps(e->alpha), vb = _mm256_set1_ps(e->beta);
    const int32_t act8 = fast ? e->act : TRTL_ACT_NONE;
    const int64_t k2 = g->k[2], pad2 = g->pad[2];
    for (int64_t c = 0; c < nch; c++) {
        const int64_t ch = ch0 + c, poff = (n * g->K + ch) * g->out_sp;
        float *plane = j->y + poff;
        const float *rplane = j->res ? j->res + poff : NULL;
        const float bias = j->bias ? j->bias[ch] : 0.0f;
        const __m256 vbias = _mm256_set1_ps(bias);
        for (int64_t kdh = 0; kdh < g->k[0] * g->k[1]; kdh++) {
            const int64_t kd = kdh / g->k[1], kh = kdh % g->k[1];
            const float *crow0 = col + (c * g->kvol + kdh * k2) * ldc;
            for (int64_t ri = 0; ri < nruns; ri++) {
                const dc_run *r = &runs[ri];
                int64_t orow = out_row(g, r, kd, kh);
                if (orow < 0)
                    continue;
                const int64_t ob = orow * g->out[2];
                float *yrow = plane + ob;
                const float *rrow = rplane ? rplane + ob : NULL;
                /* output columns [o0, o1) of this run: iw*k2 + kw - pad2 */
                int64_t o0 = r->iw0 * k2 - pad2, o1 = r->iw1 * k2 - pad2;
                if (o0 < 0)
                    o0 = 0;
                if (o1 > g->out[2])
                    o1 = g->out[2];
                const int64_t cb = r->col - r->iw0;
                int64_t o = o0;
                if (k2 == 2) {
                    /* 8 input columns -> 16 output columns: interleave tap rows 0 and 1 */
                    if (o < o1 && ((o + pad2) & 1))
                        direct_one(crow0, ldc, cb, k2, pad2, bias, rrow, yrow, act8, e, o++);
                    for (; o + 16 <= o1; o += 16) {
                        int64_t iw = ((o + pad2) >> 1) + cb;
                        __m256 a = _mm256_loadu_ps(crow0 + iw), b = _mm256_loadu_ps(crow0 + ldc + iw);
                        __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
                        __m256 v0 = _mm256_add_ps(_mm256_permute2f128_ps(lo, hi, 0x20), vbias);
                        __m256 v1 = _mm256_add_ps(_mm256_permute2f128_ps(lo, hi, 0x31), vbias);
                        if (rrow) {
                            v0 = _mm256_add_ps(v0, _mm256_loadu_ps(rrow + o));
                            v1 = _mm256_add_ps(v1, _mm256_loadu_ps(rrow + o + 8));
                        }
                        _mm256_storeu_ps(yrow + o, trtl_act8(v0, act8, va, vb));
                        _mm256_storeu_ps(yrow + o + 8, trtl_act8(v1, act8, va, vb));
                    }
                }
                for (; o < o1; o++)
                    direct_one(crow0, ldc, cb, k2, pad2, bias, rrow, yrow, act8, e, o);
                if (!fast)
                    trtl_epi_act(e, yrow + o0, o1 - o0);
            }
        }
    }
}

/* ---- run ---------------------------------------------------------------------------------------- */

/* Col rows of chunk [ch0, ch0 + nch) (group-local channels) for input pixels [p0, p0 + pw). */
static void chunk_gemm(const dc_job *j, int64_t n, int64_t grp, int64_t lch0, int64_t nch, int64_t p0, int64_t pw,
                       float *bbuf, float *col)
{
    const dc_geom *g = j->g;
    const dc_state *st = j->st;
    const trtl_gemm_isa isa = st->isa;
    const int64_t mr = trtl_gemm_mr(isa), nr = trtl_gemm_nr(isa), ts = j->pl->ts;
    const int64_t rows = nch * g->kvol, r0 = lch0 * g->kvol;
    const float *xg = j->x + (n * g->C + grp * g->Cg) * g->in_sp + p0;
    for (int64_t c = 0; c < g->Cg; c++)
        trtl_gemm_pack_b_row(isa, xg + c * g->in_sp, pw, bbuf + c * nr, ts);
    const float *a = st->a + grp * st->group_floats + (r0 / mr) * g->Cg * mr;
    for (int64_t k0 = 0; k0 < g->Cg; k0 += KC_MAX) {
        int64_t kc = g->Cg - k0 < KC_MAX ? g->Cg - k0 : KC_MAX;
        trtl_gemm_block(isa, rows, pw, kc, a + k0 * mr, g->Cg * mr, bbuf + k0 * nr, ts, col, pw, NULL,
                        k0 > 0 ? TRTL_GEMM_ACC : 0);
    }
}

#define MAX_RUNS 256

static void dc_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const dc_job *j = ctx;
    const dc_geom *g = j->g;
    const dc_plan *pl = j->pl;
    const int64_t nr = trtl_gemm_nr(j->st->isa);
    (void)thread;
    dc_run runs[MAX_RUNS];
    for (int64_t s = sb; s < se; s++) {
        float *bbuf = j->scratch + s * pl->slot_floats;
        float *col = bbuf + round_up(pl->pw / nr * pl->ts, ALIGN_FLOATS);
        for (int64_t it = s * pl->items / pl->slots, end = (s + 1) * pl->items / pl->slots; it < end; it++) {
            int64_t rest = it, panel = 0;
            if (g->direct) {
                panel = rest % pl->npanels;
                rest /= pl->npanels;
            }
            int64_t chunk = rest % pl->nchunks, grp = (rest / pl->nchunks) % g->G, n = rest / pl->nchunks / g->G;
            int64_t lch0 = chunk * pl->cu * pl->unit, nch = pl->cu * pl->unit;
            if (lch0 + nch > g->Kg)
                nch = g->Kg - lch0;
            const int64_t ch0 = grp * g->Kg + lch0;
            float *yc = j->y + (n * g->K + ch0) * g->out_sp;
            if (!g->direct)
                for (int64_t c = 0; c < nch; c++)
                    trtl_epi_prefill(yc + c * g->out_sp, j->res ? j->res + (n * g->K + ch0 + c) * g->out_sp : NULL,
                                     j->bias ? j->bias[ch0 + c] : 0.0f, NULL, g->out_sp);
            int64_t pb = g->direct ? panel : 0, pe = g->direct ? panel + 1 : pl->npanels;
            for (int64_t pi = pb; pi < pe; pi++) {
                int64_t p0 = pi * pl->pw, pw = g->in_sp - p0 < pl->pw ? g->in_sp - p0 : pl->pw;
                chunk_gemm(j, n, grp, lch0, nch, p0, pw, bbuf, col);
                /* runs in groups of MAX_RUNS (a panel spans at most pw / in[2] + 2 rows) */
                for (int64_t q = p0; q < p0 + pw;) {
                    int64_t nrun = runs_of(g, q, p0 + pw - q, runs, MAX_RUNS);
                    for (int64_t ri = 0; ri < nrun; ri++)
                        runs[ri].col += q - p0;
                    if (g->direct)
                        scatter_direct(j, col, pw, n, ch0, nch, runs, nrun);
                    else
                        scatter_add(g, col, pw, nch, yc, runs, nrun);
                    q = p0 + runs[nrun - 1].col + (runs[nrun - 1].iw1 - runs[nrun - 1].iw0);
                }
            }
            if (!g->direct)
                trtl_epi_act(j->epi, yc, nch * g->out_sp);
        }
    }
}

static float *align_floats(void *p)
{
    uintptr_t u = ((uintptr_t)p + 63) & ~(uintptr_t)63;
    return (float *)u;
}

static trtl_status dc_run_kernel(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const dc_state *st = a->state;
    dc_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    if (!st || st->K != g.K || st->G != g.G || st->Cg != g.Cg || st->kvol != g.kvol)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': deconvolution.packed_gemm run without its packed weights",
                          nd->name);
    dc_job j;
    memset(&j, 0, sizeof j);
    j.g = &g;
    j.st = st;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j.y = (float *)a->out[0].data;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.out_sp, &j.res));
    if (g.N == 0 || g.out_sp == 0)
        return TRTL_OK;
    if (g.in_sp == 0) {
        /* an empty input still has an output (its size is set by the kernel and padding): bias + epilogue */
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t k = 0; k < g.K; k++) {
                float *yc = j.y + (n * g.K + k) * g.out_sp;
                trtl_epi_prefill(yc, j.res ? j.res + (n * g.K + k) * g.out_sp : NULL, j.bias ? j.bias[k] : 0.0f,
                                 NULL, g.out_sp);
                trtl_epi_act(j.epi, yc, g.out_sp);
            }
        return TRTL_OK;
    }
    size_t avail = a->scratch && a->scratch_size > 64 ? (a->scratch_size - 64) / sizeof(float) : 0;
    dc_plan pl;
    make_plan(&g, st->isa, trtl_threads_for(a->pool, dc_flops(&g)), &pl);
    if ((size_t)(pl.slots * pl.slot_floats) > avail)
        pl.slots = (int64_t)(avail / (size_t)pl.slot_floats);
    if (pl.slots < 1)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one packed panel",
                          nd->name, a->scratch_size);
    j.pl = &pl;
    j.scratch = align_floats(a->scratch);
    if (pl.slots == 1)
        dc_slots(&j, 0, 1, 0);
    else
        trtl_parallel_for(a->pool, pl.slots, 1, dc_slots, &j);
    return TRTL_OK;
}

static size_t dc_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    dc_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK)
        return 0;
    if (g.N == 0 || g.in_sp == 0 || g.out_sp == 0)
        return 0; /* run() packs nothing (see dc_run_kernel) */
    int64_t need = 0, t = max_threads(&g);
    for (int isa = TRTL_GEMM_AVX2; isa <= TRTL_GEMM_AVX512; isa++) {
        dc_plan pl;
        make_plan(&g, (trtl_gemm_isa)isa, t, &pl);
        if (pl.slots * pl.slot_floats > need)
            need = pl.slots * pl.slot_floats;
    }
    return (size_t)need * sizeof(float) + 64;
}

static int dc_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    int nsp = p->kernel_size.nb_dims;
    if (nsp < 1 || nsp > 3 || in_dims[0].nb_dims != nsp + 2 || p->num_groups < 1 || p->num_output_maps < 1 ||
        p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT))
        return 0;
    int64_t C = in_dims[0].d[1], kvol = 1;
    for (int i = 0; i < nsp; i++)
        kvol *= p->kernel_size.d[i];
    return C > 0 && C % p->num_groups == 0 && p->num_output_maps % p->num_groups == 0 &&
           p->kernel.count == C * (p->num_output_maps / p->num_groups) * kvol;
}

static void dc_release(void *state)
{
    dc_state *st = state;
    if (st)
        free(st->a);
    free(st);
}

static trtl_status dc_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    trtl_gemm_isa isa = trtl_gemm_isa_best();
    if (isa == TRTL_GEMM_NONE)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': deconvolution.packed_gemm needs AVX2 and FMA", nd->name);
    int64_t kvol = 1;
    for (int i = 0; i < p->kernel_size.nb_dims; i++)
        kvol *= p->kernel_size.d[i];
    if (p->num_groups < 1 || p->num_output_maps < 1 || p->num_output_maps % p->num_groups || kvol < 1 ||
        p->kernel.type != TRTL_FLOAT || p->kernel.count % ((p->num_output_maps / p->num_groups) * kvol) ||
        (p->kernel.count / ((p->num_output_maps / p->num_groups) * kvol)) % p->num_groups)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit %d output maps in %d groups", nd->name,
                          (long long)p->kernel.count, p->num_output_maps, p->num_groups);
    dc_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->isa = isa;
    st->K = p->num_output_maps;
    st->G = p->num_groups;
    st->Kg = st->K / st->G;
    st->kvol = kvol;
    st->Cg = p->kernel.count / (st->Kg * kvol) / st->G;
    st->unit = unit_of(isa, kvol);
    st->group_floats = trtl_gemm_packed_a_size(isa, st->Kg * kvol, st->Cg);
    size_t bytes = (size_t)(st->group_floats * st->G) * sizeof(float);
    st->a = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!st->a) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights", nd->name,
                          bytes);
    }
    /* A(row = k*kvol + kk, c) = w[(g*Cg + c)*Kg*kvol + row] */
    const float *w = (const float *)p->kernel.values;
    for (int64_t grp = 0; grp < st->G; grp++)
        trtl_gemm_pack_a(isa, w + grp * st->Cg * st->Kg * kvol, 1, st->Kg * kvol, st->Kg * kvol, st->Cg,
                         st->a + grp * st->group_floats);
    *state = st;
    return TRTL_OK;
}

/* w[(grp*Cg + c)*Kg*kvol + row] read back from A panel row / mr of its group (gemm_packed.h's layout, as
 * convolution.packed_gemm's): exact, the packing only moves floats.  dst: the plan writer's buffer (memcpy). */
static void dc_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const dc_state *st = state;
    const int64_t mr = trtl_gemm_mr(st->isa), rows = st->Kg * st->kvol;
    (void)nd;
    for (int64_t grp = 0; grp < st->G; grp++)
        for (int64_t r = 0; r < rows; r++) {
            const float *panel = st->a + grp * st->group_floats + (r / mr) * st->Cg * mr + r % mr;
            for (int64_t c = 0; c < st->Cg; c++)
                memcpy((char *)dst + (size_t)((grp * st->Cg + c) * rows + r) * sizeof(float), &panel[c * mr],
                       sizeof(float));
        }
}

static size_t dc_state_bytes(const void *state)
{
    const dc_state *st = state;
    return sizeof *st + (size_t)(st->group_floats * st->G) * sizeof(float);
}

const trtl_kernel trtl_kernel_deconv_packed_gemm = {
    .name = "deconvolution.packed_gemm",
    .op = TRTL_OP_DECONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = dc_applies,
    .prepare = dc_prepare,
    .release = dc_release,
    .state_bytes = dc_state_bytes,
    .unpack = dc_unpack,
    .scratch = dc_scratch,
    .run = dc_run_kernel,
};
