/*
 * resize_tables.c -- "resize.tables": IResizeLayer with per-axis tables built once per run into scratch
 * (no allocation), for every mode, coordinate transformation, nearest rounding and single-pixel selector of
 * the reference kernel (kernels/ref/resize.c), whose coordinate formulas are repeated here exactly.
 *
 *   NEAREST  any rank: a table per axis of input offsets (index * input stride).  Each output row (all axes
 *            but the last) adds its axes' offsets once, then gathers the row through the last axis' table;
 *            an integer factor 2 along the row replicates pairs in registers, and an output row whose source
 *            row equals the previous one's is a copy of it (nearest up-sampling along H).
 *   LINEAR / CUBIC  separable with T = 2 or 4 taps, for tensors where only the last two axes change (the
 *            reference maps unchanged axes o -> o): per axis a table of T indices and T float weights;
 *            an output row is the T-row vertical blend of input rows interpolated along W (gathers), each
 *            interpolated row kept in a small per-thread ring so that up-sampling interpolates each input
 *            row once per band.  Shapes where another axis changes run the reference kernel.
 *
 * Results: NEAREST copies bit-exactly; LINEAR / CUBIC sum in float what the reference sums in double.
 */
#include <math.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define RING 4 /* interpolated rows kept per thread (>= the taps of the vertical blend) */

/* ---- coordinate math (the reference's, kernels/ref/resize.c) ---------------------------------------- */

static double src_coord(const trtl_resize_params *p, int64_t o, int64_t in, int64_t out, double scale, int use_scale)
{
    if (out == 1 && p->selector_for_single_pixel == TRTL_SELECT_UPPER)
        return 0.0;
    switch (p->coordinate_transformation) {
    case TRTL_COORD_ALIGN_CORNERS: return out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0.0;
    case TRTL_COORD_HALF_PIXEL:
        return use_scale ? ((double)o + 0.5) / scale - 0.5 : ((double)o + 0.5) * (double)in / (double)out - 0.5;
    default: return use_scale ? (double)o / scale : (double)o * (double)in / (double)out;
    }
}

static double snap_half(double x)
{
    double h = floor(2.0 * x + 0.5) * 0.5;
    return fabs(x - h) <= 1e-6 * fmax(1.0, fabs(x)) ? h : x;
}

static int64_t nearest_index(int32_t mode, double x, int64_t in)
{
    double r;
    x = snap_half(x);
    switch (mode) {
    case TRTL_ROUND_HALF_UP: r = floor(x + 0.5); break;
    case TRTL_ROUND_HALF_DOWN: r = ceil(x - 0.5); break;
    case TRTL_ROUND_CEIL: r = ceil(x); break;
    default: r = floor(x); break;
    }
    if (r < 0.0)
        return 0;
    if (r > (double)(in - 1))
        return in - 1;
    return (int64_t)r;
}

static double cubic_weight(double d, double A)
{
    d = fabs(d);
    if (d <= 1.0)
        return ((A + 2.0) * d - (A + 3.0)) * d * d + 1.0;
    if (d < 2.0)
        return ((A * d - 5.0 * A) * d + 8.0 * A) * d - 4.0 * A;
    return 0.0;
}

/* T taps (2 LINEAR, 4 CUBIC) of output coordinate o along one axis, the reference's taps in its order
 * (clamped edge taps included); an axis that does not change has one real tap, the rest is filler that
 * the blends never read (nth / ntw). */
static void axis_taps(const trtl_resize_params *p, int64_t o, int64_t in, int64_t out, double scale, int use_scale,
                      int32_t *idx, float *w)
{
    const int T = p->resize_mode == TRTL_RESIZE_LINEAR ? 2 : 4;
    for (int j = 0; j < T; j++) {
        idx[j] = (int32_t)(o < in ? o : in - 1);
        w[j] = 0.0f;
    }
    if (out == in) {
        idx[0] = (int32_t)o;
        w[0] = 1.0f;
        return;
    }
    double x = src_coord(p, o, in, out, scale, use_scale);
    if (T == 2) {
        if (x < 0.0)
            x = 0.0;
        if (x > (double)(in - 1))
            x = (double)(in - 1);
        double f = floor(x);
        int64_t i0 = (int64_t)f;
        idx[0] = (int32_t)i0;
        if (i0 + 1 >= in) {
            /* at the last input the reference has one tap; the table blends it with itself, 0.5 + 0.5, as
             * ONNX Runtime does (a tap of weight 0 there would turn an Inf into NaN) */
            idx[1] = (int32_t)i0;
            w[0] = w[1] = 0.5f;
            return;
        }
        idx[1] = (int32_t)(i0 + 1);
        w[1] = (float)(x - f);
        w[0] = (float)(1.0 - (x - f));
        return;
    }
    double f = floor(x), t = x - f, wd[4], sum = 0.0;
    for (int j = 0; j < 4; j++) {
        int64_t i = (int64_t)f - 1 + j;
        wd[j] = cubic_weight(t - (double)(j - 1), (double)p->cubic_coeff);
        if (i < 0 || i >= in) {
            if (p->exclude_outside)
                wd[j] = 0.0;
            i = i < 0 ? 0 : in - 1;
        }
        idx[j] = (int32_t)i;
        sum += wd[j];
    }
    for (int j = 0; j < 4; j++)
        w[j] = (float)(p->exclude_outside && sum != 0.0 ? wd[j] / sum : wd[j]);
}

/* ---- geometry ------------------------------------------------------------------------------------------ */

typedef struct rs_geom {
    int r, use_scale, T;
    int64_t in[TRTL_MAX_DIMS], out[TRTL_MAX_DIMS], ist[TRTL_MAX_DIMS];
    int64_t rows;      /* output rows: product of all output dims but the last */
    int separable;     /* LINEAR / CUBIC: only the last two axes change */
} rs_geom;

static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, rs_geom *g)
{
    const trtl_resize_params *p = &nd->p.resize;
    memset(g, 0, sizeof *g);
    g->r = xd->nb_dims;
    g->use_scale = p->shape.nb_dims == 0 && p->nb_scales > 0;
    if (g->r < 1 || yd->nb_dims != g->r || (g->use_scale && p->nb_scales != g->r))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': resize rank mismatch", nd->name);
    g->T = p->resize_mode == TRTL_RESIZE_NEAREST ? 1 : (p->resize_mode == TRTL_RESIZE_LINEAR ? 2 : 4);
    int64_t st = 1;
    for (int d = g->r - 1; d >= 0; d--) {
        g->in[d] = xd->d[d];
        g->out[d] = yd->d[d];
        g->ist[d] = st;
        st *= g->in[d];
    }
    g->rows = 1;
    for (int d = 0; d < g->r - 1; d++)
        g->rows *= g->out[d];
    g->separable = g->T > 1;
    for (int d = 0; d < g->r - 2; d++)
        if (g->in[d] != g->out[d])
            g->separable = 0;
    return TRTL_OK;
}

static double rs_flops(const rs_geom *g)
{
    double n = (double)g->rows * (double)g->out[g->r - 1];
    return n * (g->T == 1 ? 1.0 : 2.0 * g->T + 2.0 * g->T);
}

/* Scratch layout (floats / int32, 64-byte aligned pieces). */
static int64_t align16(int64_t n) { return (n + 15) & ~(int64_t)15; }

typedef struct rs_layout {
    int64_t tab;        /* NEAREST: int64 offsets of every axis (2 floats each); else the two axes' tables */
    int64_t ring;       /* per-thread ring of RING rows of out[W] floats + their row ids */
    int64_t slot;       /* floats of one thread's ring */
    int64_t threads;
} rs_layout;

static void layout(const rs_geom *g, int64_t threads, rs_layout *l)
{
    memset(l, 0, sizeof *l);
    if (g->T == 1) {
        int64_t n = 0;
        for (int d = 0; d < g->r; d++)
            n += g->out[d];
        l->tab = align16(2 * n);
        return;
    }
    int64_t OH = g->r >= 2 ? g->out[g->r - 2] : 1, OW = g->out[g->r - 1];
    l->tab = 2 * align16(g->T * OH) + 2 * align16(g->T * OW);
    l->slot = RING * align16(OW);
    l->threads = threads;
    l->ring = l->slot * threads;
}

static int64_t max_threads(const rs_geom *g)
{
    return trtl_scratch_slots(rs_flops(g), 64);
}

/* ---- NEAREST ------------------------------------------------------------------------------------------- */

typedef struct rs_job {
    const rs_geom *g;
    const trtl_resize_params *p;
    const float *x;
    float *y;
    const int64_t *off[TRTL_MAX_DIMS]; /* NEAREST: input offset of each output index, per axis */
    /* separable: */
    const int32_t *hi, *wi; /* [OH][T], [OW][T] */
    const float *hw, *ww;
    float *ring;
    int64_t slot, slots, OH, OW, IH, IW, planes, bands, band_rows;
    int nth, ntw; /* real taps per output along H and W: T, or 1 where that axis does not change */
    int avx2, avx512;
} rs_job;

__attribute__((target("avx2"))) static void gather_row_avx2(const float *src, const int64_t *tab, float *dst,
                                                            int64_t n, int dup2)
{
    int64_t i = 0;
    if (dup2) {
        /* dst[2k] = dst[2k+1] = src[k] */
        for (; i + 16 <= n; i += 16) {
            __m256 a = _mm256_loadu_ps(src + i / 2);
            __m256 lo = _mm256_unpacklo_ps(a, a), hi = _mm256_unpackhi_ps(a, a);
            _mm256_storeu_ps(dst + i, _mm256_permute2f128_ps(lo, hi, 0x20));
            _mm256_storeu_ps(dst + i + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        }
        for (; i + 8 <= n; i += 8) { /* the row's tail: 4 sources, then at most 7 floats one by one */
            __m128 a = _mm_loadu_ps(src + i / 2);
            _mm_storeu_ps(dst + i, _mm_unpacklo_ps(a, a));
            _mm_storeu_ps(dst + i + 4, _mm_unpackhi_ps(a, a));
        }
    }
    for (; i < n; i++)
        dst[i] = src[tab[i]];
}

static void nearest_rows(void *ctx, int64_t b, int64_t e, int thread)
{
    const rs_job *j = ctx;
    const rs_geom *g = j->g;
    const int64_t OW = g->out[g->r - 1];
    const int64_t *tab = j->off[g->r - 1];
    (void)thread;
    /* replicate pairs when the last axis is an exact 2x up-sampling */
    int dup2 = OW >= 2;
    for (int64_t i = 0; i < OW && dup2; i++)
        dup2 = tab[i] == i / 2;
    /* the output row's index along each leading axis, advanced as an odometer (no divisions per row) */
    const int lead = g->r - 1;
    int64_t idx[TRTL_MAX_DIMS], src = 0, prev = -1;
    {
        int64_t r = b;
        for (int d = lead - 1; d >= 0; d--) {
            idx[d] = r % g->out[d];
            r /= g->out[d];
            src += j->off[d][idx[d]];
        }
    }
    for (int64_t row = b; row < e; row++) {
        if (row > b) {
            for (int d = lead - 1; d >= 0; d--) {
                src -= j->off[d][idx[d]];
                if (++idx[d] < g->out[d]) {
                    src += j->off[d][idx[d]];
                    break;
                }
                idx[d] = 0;
                src += j->off[d][0];
            }
        }
        float *dst = j->y + row * OW;
        if (src == prev) {
            memcpy(dst, dst - OW, (size_t)OW * sizeof(float));
            continue;
        }
        prev = src;
        if (j->avx2)
            gather_row_avx2(j->x + src, tab, dst, OW, dup2);
        else
            for (int64_t i = 0; i < OW; i++)
                dst[i] = j->x[src + tab[i]];
    }
}

/* ---- LINEAR / CUBIC ------------------------------------------------------------------------------------- */

/* dst[ow] = sum_{t < nt} x[wi[ow][t]] * ww[ow][t] (tables of T taps per output).  Every real tap is
 * multiplied, weight 0 included, so that a NaN or Inf there propagates (0 * Inf = NaN) as in ONNX Runtime
 * and the reference; nt = 1 on an axis that does not change (its other taps are filler). */
__attribute__((target("avx2,fma"))) static void hrow_avx2(const float *x, const int32_t *wi, const float *ww, int T,
                                                         int nt, float *dst, int64_t OW)
{
    int64_t o = 0;
    const __m256i lane = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(T));
    const __m256 zero = _mm256_setzero_ps();
    for (; o + 8 <= OW; o += 8) {
        __m256 acc = zero;
        for (int t = 0; t < nt; t++) {
            __m256i id = _mm256_i32gather_epi32((const int *)(wi + o * T + t), lane, 4);
            __m256 wv = _mm256_i32gather_ps(ww + o * T + t, lane, 4);
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_i32gather_ps(x, id, 4), wv));
        }
        _mm256_storeu_ps(dst + o, acc);
    }
    for (; o < OW; o++) {
        float acc = 0.0f;
        for (int t = 0; t < nt; t++)
            acc += x[wi[o * T + t]] * ww[o * T + t];
        dst[o] = acc;
    }
}

static void hrow_plain(const float *x, const int32_t *wi, const float *ww, int T, int nt, float *dst, int64_t OW)
{
    for (int64_t o = 0; o < OW; o++) {
        float acc = 0.0f;
        for (int t = 0; t < nt; t++)
            acc += x[wi[o * T + t]] * ww[o * T + t];
        dst[o] = acc;
    }
}

/* The ring slot holding input row ih interpolated along W, computing it if absent into a slot that the
 * current output row does not use (bit s of *used), preferring the lowest row id (rows only increase). */
static const float *ring_row(const rs_job *j, float *ring, int64_t *ids, unsigned *used, const float *plane, int64_t ih)
{
    for (int s = 0; s < RING; s++)
        if (ids[s] == ih) {
            *used |= 1u << s;
            return ring + s * align16(j->OW);
        }
    int s = -1;
    for (int t = 0; t < RING; t++)
        if (!(*used & (1u << t)) && (s < 0 || ids[t] < ids[s]))
            s = t;
    *used |= 1u << s;
    ids[s] = ih;
    float *dst = ring + s * align16(j->OW);
    if (j->avx2)
        hrow_avx2(plane + ih * j->IW, j->wi, j->ww, j->g->T, j->ntw, dst, j->OW);
    else
        hrow_plain(plane + ih * j->IW, j->wi, j->ww, j->g->T, j->ntw, dst, j->OW);
    return dst;
}

__attribute__((target("avx2,fma"))) static void vblend_avx2(const float *const *rows, const float *w, int T, float *y,
                                                           int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(rows[0] + i), _mm256_set1_ps(w[0]));
        for (int t = 1; t < T; t++)
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(rows[t] + i), _mm256_set1_ps(w[t]), acc);
        _mm256_storeu_ps(y + i, acc);
    }
    for (; i < n; i++) {
        float acc = rows[0][i] * w[0];
        for (int t = 1; t < T; t++)
            acc += rows[t][i] * w[t];
        y[i] = acc;
    }
}

/* Slot s of the pool split: its contiguous run of (plane, band) items, with its own ring. */
static void sep_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const rs_job *j = ctx;
    const int T = j->g->T;
    const int64_t items = j->planes * j->bands;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        float *ring = j->ring + s * j->slot;
        for (int64_t it = s * items / j->slots, end = (s + 1) * items / j->slots; it < end; it++) {
            int64_t band = it % j->bands, plane = it / j->bands;
            int64_t oh0 = band * j->band_rows, oh1 = oh0 + j->band_rows < j->OH ? oh0 + j->band_rows : j->OH;
            const float *xp = j->x + plane * j->IH * j->IW;
            int64_t ids[RING] = {-1, -1, -1, -1};
            for (int64_t oh = oh0; oh < oh1; oh++) {
                const float *rows[4];
                float w[4];
                int n = 0;
                unsigned used = 0;
                /* every real tap, weight 0 included (NaN / Inf there propagate, as in the reference) */
                for (int t = 0; t < j->nth; t++) {
                    rows[n] = ring_row(j, ring, ids, &used, xp, j->hi[oh * T + t]);
                    w[n++] = j->hw[oh * T + t];
                }
                float *y = j->y + (plane * j->OH + oh) * j->OW;
                if (j->avx2)
                    vblend_avx2(rows, w, n, y, j->OW);
                else
                    for (int64_t i = 0; i < j->OW; i++) {
                        float acc = rows[0][i] * w[0];
                        for (int t = 1; t < n; t++)
                            acc += rows[t][i] * w[t];
                        y[i] = acc;
                    }
            }
        }
    }
}

/* ---- run ------------------------------------------------------------------------------------------------ */

static void *align64(void *p) { return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

static trtl_status rs_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const trtl_resize_params *p = &nd->p.resize;
    rs_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    int64_t n = trtl_volume(&a->out[0].dims);
    if (n == 0)
        return TRTL_OK;
    if (trtl_volume(&a->in[0].dims) <= 0 || (g.T > 1 && !g.separable))
        return trtl_ref_resize(a); /* its errors and the shapes this kernel does not cut */
    rs_job j;
    memset(&j, 0, sizeof j);
    j.g = &g;
    j.p = p;
    j.x = (const float *)a->in[0].data;
    j.y = (float *)a->out[0].data;
    j.avx2 = trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA);
    int64_t threads = trtl_threads_for(a->pool, rs_flops(&g));
    rs_layout l;
    layout(&g, threads, &l);
    if (!a->scratch || a->scratch_size < (size_t)(l.tab + l.ring) * sizeof(float) + 64) {
        threads = 1;
        layout(&g, 1, &l);
        if (!a->scratch || a->scratch_size < (size_t)(l.tab + l.ring) * sizeof(float) + 64)
            return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': resize scratch of %zu bytes is too small", nd->name,
                              a->scratch_size);
    }
    float *s = align64(a->scratch);
    if (g.T == 1) {
        int64_t *t = (int64_t *)s;
        for (int d = 0; d < g.r; d++) {
            double sc = g.use_scale ? (double)p->scales[d] : 1.0;
            for (int64_t o = 0; o < g.out[d]; o++)
                t[o] = nearest_index(p->nearest_rounding, src_coord(p, o, g.in[d], g.out[d], sc, g.use_scale),
                                     g.in[d]) * g.ist[d];
            j.off[d] = t;
            t += g.out[d];
        }
        int64_t rows_per = g.rows / (threads * 4) > 0 ? g.rows / (threads * 4) : 1;
        if (threads <= 1)
            nearest_rows(&j, 0, g.rows, 0);
        else
            trtl_parallel_for(a->pool, g.rows, rows_per, nearest_rows, &j);
        return TRTL_OK;
    }
    const int T = g.T, r = g.r;
    j.IW = g.in[r - 1];
    j.OW = g.out[r - 1];
    j.IH = r >= 2 ? g.in[r - 2] : 1;
    j.OH = r >= 2 ? g.out[r - 2] : 1;
    if (j.IW * j.IH > 0x7fffffff)
        return trtl_ref_resize(a); /* int32 gather indices */
    int32_t *hi = (int32_t *)s;
    float *hw = s + align16(T * j.OH);
    int32_t *wi = (int32_t *)(s + 2 * align16(T * j.OH));
    float *ww = s + 2 * align16(T * j.OH) + align16(T * j.OW);
    for (int64_t o = 0; o < j.OH; o++) {
        if (r >= 2)
            axis_taps(p, o, j.IH, j.OH, g.use_scale ? (double)p->scales[r - 2] : 1.0, g.use_scale, hi + o * T,
                      hw + o * T);
        else
            for (int t = 0; t < T; t++) {
                hi[t] = 0;
                hw[t] = t == 0 ? 1.0f : 0.0f;
            }
    }
    for (int64_t o = 0; o < j.OW; o++)
        axis_taps(p, o, j.IW, j.OW, g.use_scale ? (double)p->scales[r - 1] : 1.0, g.use_scale, wi + o * T, ww + o * T);
    j.nth = r >= 2 && j.IH != j.OH ? T : 1;
    j.ntw = j.IW != j.OW ? T : 1;
    j.hi = hi;
    j.hw = hw;
    j.wi = wi;
    j.ww = ww;
    j.ring = s + l.tab;
    j.slot = l.slot;
    j.planes = g.rows / j.OH;
    j.slots = (int64_t)(((a->scratch_size - 64) / sizeof(float) - (size_t)l.tab) / (size_t)l.slot);
    if (j.slots > threads)
        j.slots = threads;
    j.bands = 1;
    if (j.planes < 2 * j.slots) {
        j.bands = (2 * j.slots + j.planes - 1) / j.planes;
        if (j.bands > j.OH)
            j.bands = j.OH;
    }
    j.band_rows = (j.OH + j.bands - 1) / j.bands;
    j.bands = (j.OH + j.band_rows - 1) / j.band_rows;
    if (j.slots > j.planes * j.bands)
        j.slots = j.planes * j.bands;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, sep_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t rs_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    rs_geom g;
    if (!out || geom_init(nd, &in[0].dims, &out[0].dims, &g) != TRTL_OK)
        return 0;
    rs_layout l;
    layout(&g, max_threads(&g), &l);
    return (size_t)(l.tab + l.ring) * sizeof(float) + 64;
}

static int rs_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_resize_params *p = &nd->p.resize;
    return in_dims[0].nb_dims >= 1 && (p->resize_mode == TRTL_RESIZE_NEAREST || p->resize_mode == TRTL_RESIZE_LINEAR ||
                                       p->resize_mode == TRTL_RESIZE_CUBIC);
}

const trtl_kernel trtl_kernel_resize_tables = {
    .name = "resize.tables",
    .op = TRTL_OP_RESIZE,
    .cpu_features = 0,
    .applies_epilogue = 0,
    .applies = rs_applies,
    .prepare = NULL,
    .release = NULL,
    .scratch = rs_scratch,
    .run = rs_run,
};
