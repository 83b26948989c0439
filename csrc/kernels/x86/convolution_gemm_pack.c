/*
 * convolution_gemm_pack.c -- builds B tiles of the im2col matrix for convolution.packed_gemm
 * (see convolution_gemm.h).  Needs AVX2 (the kernel does).
 *
 * Row r = (c, kd, kh, kw) of Col at output pixel (od, oh, ow) is the input at
 * (od*sd - pd + kd*dd, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw), or 0 in the padding.
 *
 * Windowed path (2-D and 1-D convolutions with stride 1 or 2 along W, the common case): the
 * input rows a pixel panel reads are first copied, zero-padded on every side, into a window
 * [channel][wh][wp].  In the window, pixel (oh, ow) of row (c, kh, kw) sits at
 *     base(c, kh, kw) + (oh - oh0)*sh*wp + ow*sw,     base = c*wh*wp + kh*dh*wp + kw*dw,
 * so the split of the panel's columns into runs (one per output row, cut at tile boundaries)
 * is the same for every Col row: it is computed once per panel (the "pieces") and each row is a
 * few vector copies (stride 1) or de-interleaving loads (stride 2) with no bounds checks.
 * Pieces are written with whole 8-float vectors where the overrun stays inside the tile row; the
 * next piece of the same row overwrites it (pieces run left to right), and every tile row ends
 * with a piece (the last tile's zero fill included), so nothing stale is left.
 *
 * Other convolutions (3-D, larger strides, windows too large) build each row from the input
 * with bounds checks, segment by segment.
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/x86/convolution_gemm.h"
#include "kernels/x86/vmath.h"

#define WINDOW_MAX_FLOATS (2 * 1024 * 1024) /* larger windows take the bounds-checked path */
#define WINDOW_SLACK 48                     /* vector overrun past the last window row */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
static int64_t align16(int64_t n) { return round_up(n, 16); }

/* Output rows a panel of pw pixels can touch, and the window it needs. */
static void window_dims(const trtl_conv_geom *g, int64_t pw, int64_t *wh, int64_t *wp)
{
    int64_t rows = (pw - 1) / g->out[2] + 2;
    if (rows > g->out[1])
        rows = g->out[1];
    *wh = (rows - 1) * g->s[1] + (g->k[1] - 1) * g->dl[1] + 1;
    *wp = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) * g->dl[2] + 1;
}

static int windowed(const trtl_conv_geom *g, int64_t pw, int64_t nch)
{
    if (g->direct || !trtl_conv_geom_2d(g) || (g->s[2] != 1 && g->s[2] != 2))
        return 0;
    int64_t wh, wp;
    window_dims(g, pw, &wh, &wp);
    return nch * wh * wp <= WINDOW_MAX_FLOATS;
}

int64_t trtl_cg_packer_floats(const trtl_conv_geom *g, int64_t pw, int64_t nch)
{
    int64_t f = align16(pw + 16); /* tmp row */
    if (windowed(g, pw, nch)) {
        int64_t wh, wp;
        window_dims(g, pw, &wh, &wp);
        f += align16(nch * wh * wp + WINDOW_SLACK);
        f += align16((pw + ceil_div(pw, 16) + 4) * (int64_t)(sizeof(trtl_cg_piece) / sizeof(float)));
    }
    return f;
}

/* Row r of the packer's numbering as a (c, kd, kh, kw) row of Col. */
static inline int64_t natural_row(const trtl_cg_packer *pk, int64_t r)
{
    return pk->tap_major ? (r % pk->g->Cg) * pk->g->kvol + r / pk->g->Cg : r;
}

/* ---- bounds-checked rows ------------------------------------------------------------------------ */

__attribute__((target("avx2,fma"))) static inline void copy_floats(float *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
    for (; i < n; i++)
        d[i] = s[i];
}

__attribute__((target("avx2,fma"))) static inline void zero_floats(float *d, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_setzero_ps());
    for (; i < n; i++)
        d[i] = 0.0f;
}

/* Columns [j, j + n) of a B row from src (NULL: zeros); column j is at dst[(j/NR)*ts + j%NR]. */
__attribute__((target("avx2,fma"), always_inline)) static inline void put_run(float *dst, int64_t ts, const int64_t NR,
                                                                               int64_t j, const float *src, int64_t n)
{
    while (n > 0) {
        int64_t off = j % NR, m = NR - off < n ? NR - off : n;
        float *d = dst + (j / NR) * ts + off;
        if (src) {
            copy_floats(d, src, m);
            src += m;
        } else {
            zero_floats(d, m);
        }
        j += m;
        n -= m;
    }
}

/* Row `row` of Col for pixels [p0, p0 + pw) into B (tile width NR, a constant at the call). */
__attribute__((target("avx2,fma"), always_inline)) static inline void
checked_row(const trtl_cg_packer *pk, int64_t row, float *dst, const int64_t NR)
{
    const trtl_conv_geom *g = pk->g;
    const int64_t kw = row % g->k[2], kh = (row / g->k[2]) % g->k[1], kd = (row / g->k[2] / g->k[1]) % g->k[0];
    const float *xc = pk->xg + (row / g->kvol) * g->in_sp;
    const int64_t hw = g->out[1] * g->out[2], sw = g->s[2], in2 = g->in[2], ts = pk->ts, pw = pk->pw;
    const int64_t woff = kw * g->dl[2] - g->pad[2];
    int64_t od = pk->p0 / hw, oh = (pk->p0 % hw) / g->out[2], ow = pk->p0 % g->out[2];
    for (int64_t j = 0; j < pw;) {
        int64_t seg = g->out[2] - ow < pw - j ? g->out[2] - ow : pw - j;
        int64_t id = od * g->s[0] - g->pad[0] + kd * g->dl[0], ih = oh * g->s[1] - g->pad[1] + kh * g->dl[1];
        if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
            put_run(dst, ts, NR, j, NULL, seg);
        } else {
            const float *src = xc + (id * g->in[1] + ih) * in2;
            int64_t iw0 = ow * sw + woff;
            int64_t lo, hi; /* t in [lo, hi) reads inside the row */
            trtl_conv_row_span(iw0, sw, in2, seg, &lo, &hi);
            put_run(dst, ts, NR, j, NULL, lo);
            if (sw == 1) {
                put_run(dst, ts, NR, j + lo, src + iw0 + lo, hi - lo);
            } else {
                const float *sp = src + iw0;
                for (int64_t t = lo; t < hi; t++)
                    pk->tmp[t - lo] = sp[t * sw];
                put_run(dst, ts, NR, j + lo, pk->tmp, hi - lo);
            }
            put_run(dst, ts, NR, j + hi, NULL, seg - hi);
        }
        j += seg;
        ow = 0;
        if (++oh == g->out[1]) {
            oh = 0;
            od++;
        }
    }
    put_run(dst, ts, NR, pw, NULL, round_up(pw, NR) - pw);
}

__attribute__((target("avx2,fma"))) static void checked_rows(const trtl_cg_packer *pk, int64_t r0, int64_t r1,
                                                              float *dst)
{
    for (int64_t r = r0; r < r1; r++) {
        if (pk->nr == 32)
            checked_row(pk, natural_row(pk, r), dst + (r - r0) * 32, 32);
        else
            checked_row(pk, natural_row(pk, r), dst + (r - r0) * 16, 16);
    }
}

/* ---- windowed rows ------------------------------------------------------------------------------ */

/* Copies the input rows of channels [c0, c1) the panel reads into the zero-padded window. */
__attribute__((target("avx2,fma"))) static void build_window(trtl_cg_packer *pk)
{
    const trtl_conv_geom *g = pk->g;
    const int64_t ih0 = pk->p0 / g->out[2] * g->s[1] - g->pad[1], pl = g->pad[2], W = g->in[2];
    /* window columns [a, b) hold input columns [a - pl, b - pl); the rest is padding */
    int64_t a = pl < 0 ? 0 : pl, b = pl + W;
    if (a > pk->wp)
        a = pk->wp;
    if (b > pk->wp)
        b = pk->wp;
    if (b < a)
        b = a;
    for (int64_t c = pk->c0; c < pk->c1; c++)
        for (int64_t r = 0; r < pk->wh; r++) {
            float *d = pk->win + ((c - pk->c0) * pk->wh + r) * pk->wp;
            int64_t ih = ih0 + r;
            if (ih < 0 || ih >= g->in[1]) {
                zero_floats(d, pk->wp);
                continue;
            }
            const float *src = pk->xg + c * g->in_sp + ih * W;
            zero_floats(d, a);
            copy_floats(d + a, src + (a - pl), b - a);
            zero_floats(d + b, pk->wp - b);
        }
    memset(pk->win + (pk->c1 - pk->c0) * pk->wh * pk->wp, 0, WINDOW_SLACK * sizeof(float));
}

static void add_piece(trtl_cg_packer *pk, int64_t j, int64_t src, int64_t len)
{
    int64_t lane = j % pk->nr;
    trtl_cg_piece *p = &pk->pc[pk->npc++];
    p->dst = (j / pk->nr) * pk->ts + lane;
    p->src = src;
    p->len = (int32_t)len;
    p->nvec = (int32_t)(lane + round_up(len, 8) <= pk->nr ? ceil_div(len, 8) : len / 8);
}

/* The panel's runs: one per output row, cut at tile boundaries, then the last tile's zero fill. */
static void build_pieces(trtl_cg_packer *pk)
{
    const trtl_conv_geom *g = pk->g;
    const int64_t OW = g->out[2], oh0 = pk->p0 / OW;
    int64_t oh = oh0, ow = pk->p0 % OW;
    pk->npc = 0;
    for (int64_t j = 0; j < pk->pw;) {
        int64_t seg = OW - ow < pk->pw - j ? OW - ow : pk->pw - j;
        while (seg > 0) {
            int64_t m = pk->nr - j % pk->nr < seg ? pk->nr - j % pk->nr : seg;
            add_piece(pk, j, (oh - oh0) * g->s[1] * pk->wp + ow * g->s[2], m);
            j += m;
            ow += m;
            seg -= m;
        }
        ow = 0;
        oh++;
    }
    if (pk->pw % pk->nr)
        add_piece(pk, pk->pw, -1, pk->nr - pk->pw % pk->nr);
}

/* SW: stride along W (1 or 2), a constant at the call. */
__attribute__((target("avx2,fma"), always_inline)) static inline void window_rows(const trtl_cg_packer *pk, int64_t r0,
                                                                                  int64_t r1, float *dst, const int SW)
{
    const trtl_conv_geom *g = pk->g;
    const int64_t KW = g->k[2], KH = g->k[1], plane = pk->wh * pk->wp;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t rn = natural_row(pk, r), c = rn / g->kvol, kk = rn % g->kvol, kh = kk / KW % KH, kw = kk % KW;
        const float *base = pk->win + (c - pk->c0) * plane + kh * g->dl[1] * pk->wp + kw * g->dl[2];
        float *drow = dst + (r - r0) * pk->nr;
        for (int64_t i = 0; i < pk->npc; i++) {
            const trtl_cg_piece *p = &pk->pc[i];
            float *d = drow + p->dst;
            int v = 0;
            if (p->src < 0) {
                for (; v < p->nvec; v++)
                    _mm256_storeu_ps(d + 8 * v, _mm256_setzero_ps());
                for (int t = 8 * v; t < p->len; t++)
                    d[t] = 0.0f;
                continue;
            }
            const float *s = base + p->src;
            if (SW == 1) {
                for (; v < p->nvec; v++)
                    _mm256_storeu_ps(d + 8 * v, _mm256_loadu_ps(s + 8 * v));
                for (int t = 8 * v; t < p->len; t++)
                    d[t] = s[t];
            } else {
                for (; v < p->nvec; v++) {
                    __m256 lo = _mm256_loadu_ps(s + 16 * v), hi = _mm256_loadu_ps(s + 16 * v + 8);
                    __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)); /* 0 2 8 10 | 4 6 12 14 */
                    _mm256_storeu_ps(d + 8 * v, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8)));
                }
                for (int t = 8 * v; t < p->len; t++)
                    d[t] = s[2 * t];
            }
        }
    }
}

__attribute__((target("avx2,fma"))) static void window_rows_s1(const trtl_cg_packer *pk, int64_t r0, int64_t r1,
                                                                float *dst)
{
    window_rows(pk, r0, r1, dst, 1);
}

__attribute__((target("avx2,fma"))) static void window_rows_s2(const trtl_cg_packer *pk, int64_t r0, int64_t r1,
                                                                float *dst)
{
    window_rows(pk, r0, r1, dst, 2);
}

/* ---- entry points ------------------------------------------------------------------------------- */

void trtl_cg_packer_begin(trtl_cg_packer *pk, const trtl_conv_geom *g, trtl_gemm_isa isa, float *work,
                          const float *xg, int64_t c0, int64_t c1, int64_t p0, int64_t pw, int64_t tile_stride)
{
    memset(pk, 0, sizeof *pk);
    pk->g = g;
    pk->isa = isa;
    pk->nr = trtl_gemm_nr(isa);
    pk->ts = tile_stride;
    pk->xg = xg;
    pk->p0 = p0;
    pk->pw = pw;
    pk->c0 = c0;
    pk->c1 = c1;
    pk->tmp = work;
    pk->windowed = windowed(g, pw, c1 - c0);
    if (!pk->windowed)
        return;
    window_dims(g, pw, &pk->wh, &pk->wp);
    pk->win = work + align16(pw + 16);
    pk->pc = (trtl_cg_piece *)(pk->win + align16((c1 - c0) * pk->wh * pk->wp + WINDOW_SLACK));
    /* a panel ending early in its last output row needs fewer window rows than the maximum */
    int64_t rows = (p0 + pw - 1) / g->out[2] - p0 / g->out[2] + 1;
    pk->wh = (rows - 1) * g->s[1] + (g->k[1] - 1) * g->dl[1] + 1;
    build_window(pk);
    build_pieces(pk);
}

int trtl_cg_tap_rows(const trtl_cg_packer *pk)
{
    const trtl_conv_geom *g = pk->g;
    return pk->tap_major && pk->windowed && g->k[2] == 1 && g->pad[2] == 0 && g->s[1] == 1 && g->s[2] == 1 &&
           g->dl[1] == 1 && g->in[2] == g->out[2] && pk->wp == g->out[2];
}

const float *trtl_cg_tap_row(const trtl_cg_packer *pk, int64_t t, int64_t c)
{
    return pk->win + ((c - pk->c0) * pk->wh + t) * pk->wp + pk->p0 % pk->g->out[2];
}

void trtl_cg_pack_rows(const trtl_cg_packer *pk, int64_t r0, int64_t r1, float *dst)
{
    const trtl_conv_geom *g = pk->g;
    if (trtl_cg_tap_rows(pk)) { /* each row a contiguous run of the window */
        for (int64_t r = r0; r < r1; r++)
            trtl_gemm_pack_b_row(pk->isa, trtl_cg_tap_row(pk, r / g->Cg, r % g->Cg), pk->pw, dst + (r - r0) * pk->nr,
                                 pk->ts);
    } else if (g->direct && pk->pre && pk->pre->clamp) { /* PREACT_CONV, affine and clamp: mapped as packed */
        const int64_t c = pk->pre_c0 + r0;
        const trtl_gemm_pre pre = {(const float *)pk->pre->p->in_scale.values + c,
                                   (const float *)pk->pre->p->in_shift.values + c, pk->pre->lo, pk->pre->hi};
        trtl_gemm_pack_b_pre(pk->isa, pk->xg + r0 * g->in_sp + pk->p0, g->in_sp, r1 - r0, pk->pw, dst, pk->ts, &pre);
    } else if (g->direct && pk->pre) { /* PREACT_CONV, other activations: each row mapped into tmp, then packed */
        const trtl_preact_conv_params *p = pk->pre->p;
        const float *sc = p->in_scale.count ? (const float *)p->in_scale.values + pk->pre_c0 : NULL;
        const float *sh = p->in_shift.count ? (const float *)p->in_shift.values + pk->pre_c0 : NULL;
        for (int64_t r = r0; r < r1; r++) {
            trtl_vm_fma(pk->xg + r * g->in_sp + pk->p0, pk->tmp, pk->pw, sc ? sc + r : NULL, 0, sh ? sh + r : NULL, 0);
            if (p->in_act != TRTL_ACT_NONE)
                trtl_vm_act(p->in_act, p->in_alpha, p->in_beta, pk->tmp, pk->tmp, pk->pw);
            trtl_gemm_pack_b_row(pk->isa, pk->tmp, pk->pw, dst + (r - r0) * pk->nr, pk->ts);
        }
    } else if (g->direct) {
        for (int64_t r = r0; r < r1; r++)
            trtl_gemm_pack_b_row(pk->isa, pk->xg + r * g->in_sp + pk->p0, pk->pw, dst + (r - r0) * pk->nr, pk->ts);
    } else if (pk->windowed) {
        if (g->s[2] == 1)
            window_rows_s1(pk, r0, r1, dst);
        else
            window_rows_s2(pk, r0, r1, dst);
    } else {
        checked_rows(pk, r0, r1, dst);
    }
}
