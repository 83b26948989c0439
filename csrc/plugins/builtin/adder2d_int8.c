/*
 * adder2d_int8.c -- Adder2d_TRT on int8 codes: packing, geometry, the AVX-512BW / AVX2 `vpsadbw`
 * tiles and the portable definition (see adder2d_int8.h for the math and the layout).
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "plugins/builtin/adder2d_int8.h"
#include "core/cpu.h"
#include "core/threadpool.h"

#define MAX_NC 3 /* pixel vectors per register tile (AVX-512; AVX2 uses 2) */
#define AVX512_MR 8
#define AVX2_MR 6

typedef enum path { PATH_PORTABLE, PATH_AVX2, PATH_AVX512 } path;

static path pick_path(void)
{
    if (trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX2))
        return PATH_AVX512;
    if (trtl_cpu_has(TRTL_CPU_AVX2))
        return PATH_AVX2;
    return PATH_PORTABLE;
}

const char *trtl_adder_q_path(void)
{
    static const char *const names[] = {"portable", "avx2", "avx512bw"};
    return names[pick_path()];
}

static int32_t blocks_of(int32_t C) { return (C + 7) / 8; }

/* Which bytes share a word: 8 channels of one tap (CHANNELS), or, where that would leave most of the
 * word empty (few channels: a first layer), 8 consecutive kernel columns of one channel and kernel row
 * (COLUMNS; the taps past the kernel's width are masked to 0 in x and are 0 in the weights).  The
 * cheaper in words per output pixel; G is that count. */
typedef enum layout { LAYOUT_CHANNELS, LAYOUT_COLUMNS } layout;

static layout layout_of(int32_t C, int32_t k, int64_t *G)
{
    const int64_t gc = (int64_t)blocks_of(C) * k * k, gw = (int64_t)C * k * ((k + 7) / 8);
    *G = gw < gc ? gw : gc;
    return gw < gc ? LAYOUT_COLUMNS : LAYOUT_CHANNELS;
}

/* Bytes of the `vdbpsadbw` weights (stride 1, k <= 8): per (channel, kernel row) and filter 16 bytes, taps
 * 0..3 twice, then taps 4..7 twice, 0 past the kernel. */
static size_t db_packed_bytes(int32_t F, int32_t C, int32_t k)
{
    return k <= 8 ? (size_t)C * (size_t)k * (size_t)F * 16u : 0u;
}

/* The vpsadbw packing's bytes (the `vdbpsadbw` weights follow them). */
static size_t sad_packed_bytes(int32_t F, int32_t C, int32_t k)
{
    int64_t G;
    layout_of(C, k, &G);
    return (size_t)G * (size_t)F * 8u;
}

size_t trtl_adder_q_packed_bytes(int32_t F, int32_t C, int32_t k)
{
    return sad_packed_bytes(F, C, k) + db_packed_bytes(F, C, k);
}

void trtl_adder_q_pack(const float *w, int32_t F, int32_t C, int32_t k, float scale, int8_t *wq, uint8_t *wpk)
{
    const int64_t kk = (int64_t)k * k, K = (int64_t)C * kk, jg = (k + 7) / 8;
    int64_t G;
    const layout lay = layout_of(C, k, &G);
    for (int64_t i = 0; i < F * K; i++) {
        /* the float32 quotient, rounded half to even, as QuantizeLinear quantizes the input */
        float v = nearbyintf(w[i] / scale);
        wq[i] = (int8_t)(v > 127.0f ? 127 : v < -127.0f ? -127 : (int)v);
    }
    memset(wpk, 0, (size_t)(G * F * 8));
    for (int32_t f = 0; f < F; f++)
        for (int32_t c = 0; c < C; c++)
            for (int64_t t = 0; t < kk; t++) {
                const int64_t i = t / k, j = t % k;
                /* CHANNELS: group (channel block, i, j), lane c % 8; COLUMNS: group (c, i, j / 8), lane j % 8 */
                const int64_t g = lay == LAYOUT_CHANNELS ? (c / 8) * kk + t : ((int64_t)c * k + i) * jg + j / 8;
                const int64_t lane = lay == LAYOUT_CHANNELS ? c % 8 : j % 8;
                wpk[(g * F + f) * 8 + lane] = (uint8_t)wq[(f * C + c) * kk + t] ^ 0x80u;
            }
    if (k > 8)
        return;
    uint8_t *db = wpk + sad_packed_bytes(F, C, k);
    for (int32_t c = 0; c < C; c++)
        for (int32_t i = 0; i < k; i++)
            for (int32_t f = 0; f < F; f++) {
                uint8_t *d = db + (((int64_t)c * k + i) * F + f) * 16;
                for (int32_t j = 0; j < 8; j++) {
                    uint8_t b = j < k ? (uint8_t)wq[((f * C + c) * kk) + i * k + j] ^ 0x80u : 0u;
                    d[(j / 4) * 8 + j % 4] = d[(j / 4) * 8 + 4 + j % 4] = b;
                }
            }
}

/* ---- geometry ------------------------------------------------------------------------------- */

typedef struct geom {
    int64_t N, H, W, OH, OW, G;   /* G: tap groups = blocks * k * k */
    int64_t cw;                    /* pixels per vector: 8 (zmm) or 4 (ymm) */
    int64_t hp, lp, row, plane;    /* padded rows; words per sub-row, per padded row, per block / channel */
    int64_t blocks;                /* channel blocks (CHANNELS) or channels (COLUMNS) */
    int64_t jg, wrow;              /* COLUMNS: words per kernel row; bytes of a padded row incl. slack */
    layout lay;
} geom;

static int64_t out_len(int64_t in, int32_t k, int32_t s, int32_t p) { return (in + 2 * (int64_t)p - k) / s + 1; }

static void geom_init(const trtl_adder_q *q, int64_t H, int64_t W, int64_t cw, geom *g)
{
    g->H = H;
    g->W = W;
    g->OH = out_len(H, q->k, q->s, q->p);
    g->OW = out_len(W, q->k, q->s, q->p);
    g->lay = layout_of(q->C, q->k, &g->G);
    g->cw = cw;
    const int64_t s = q->s, wp = W + 2 * (int64_t)q->p, owr = (g->OW + cw - 1) / cw * cw;
    g->hp = H + 2 * (int64_t)q->p;
    if (g->lay == LAYOUT_COLUMNS) {
        /* word t of (channel, padded row, kernel-column group jg): padded columns t*s + 8 jg .. + 7 */
        g->blocks = q->C;
        g->jg = (q->k + 7) / 8;
        g->lp = owr;
        g->row = g->jg * g->lp;
        g->plane = g->hp * g->row;
        g->wrow = (owr - 1) * s + 8 * g->jg;
        if (g->wrow < wp)
            g->wrow = wp;
        return;
    }
    g->blocks = blocks_of(q->C);
    g->jg = g->wrow = 0;
    /* a vector of output columns x0..x0+cw-1 and tap j reads sub-row j % s at x + j / s <= owr - 1 + (k-1)/s */
    g->lp = (wp + s - 1) / s;
    if (owr + (q->k - 1) / s > g->lp)
        g->lp = owr + (q->k - 1) / s;
    g->row = s * g->lp;
    g->plane = g->hp * g->row;
}

/* One thread's laid-out sample (COLUMNS: and its scratch row). */
static size_t slot_bytes(const geom *g)
{
    size_t b = (size_t)(g->blocks * g->plane) * 8u + (g->lay == LAYOUT_COLUMNS ? (size_t)g->wrow : 0u);
    return (b + 63u) & ~(size_t)63u;
}

static int use_db(const trtl_adder_q *q, path pa);
static size_t db_workspace(const trtl_adder_q *q, int64_t H, int64_t W);

/* ---- output: float, or INT8 codes through a per-slot float sample ------------------------------ */

static size_t up64(size_t b) { return (b + 63u) & ~(size_t)63u; }

/* 8 weight codes as one 64-bit word: the packed rows start at any byte (memcpy: no misaligned int64_t load, which
 * UBSan reports on the AVX-512 host; one mov either way) */
static inline int64_t load8(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Bytes of one slot's float sample output (INT8 output only). */
static size_t codes_slot_bytes(const trtl_adder_q *q, int64_t OH, int64_t OW)
{
    return q->oa ? up64((size_t)((int64_t)q->F * OH * OW) * sizeof(float)) : 0u;
}

/* Where the paths' float results go: y [N][F][ohw], or (INT8 output) each thread's slot in scr, whose
 * sample the output stage turns into yq's codes. */
typedef struct sink {
    const trtl_adder_q *q;
    float *y;
    int8_t *yq;
    char *scr;
    size_t scr_slot;
    int64_t ohw;
} sink;

static void sink_init(sink *o, const trtl_adder_q *q, void *y, char *scr, int64_t OH, int64_t OW)
{
    o->q = q;
    o->ohw = OH * OW;
    o->y = q->oa ? NULL : (float *)y;
    o->yq = q->oa ? (int8_t *)y : NULL;
    o->scr = scr;
    o->scr_slot = codes_slot_bytes(q, OH, OW);
}

/* Sample n's float output, written by thread `thread`. */
static float *sink_sample(const sink *o, int64_t n, int thread)
{
    return o->yq ? (float *)(void *)(o->scr + (size_t)thread * o->scr_slot) : o->y + n * o->q->F * o->ohw;
}

/* Sample n is complete in sink_sample(n, thread): INT8 output writes its codes. */
static void sink_done(const sink *o, int64_t n, int thread)
{
    if (o->yq)
        trtl_adder_q_codes(o->q, sink_sample(o, n, thread), o->yq + n * o->q->F * o->ohw, o->ohw);
}

#define AVX2_CODES_FN __attribute__((target("avx2,fma")))

static inline int8_t code_of(float v, float a, float b)
{
    float t = fmaf(v, a, b);
    t = t >= -128.0f ? t : -128.0f; /* NaN too */
    t = t <= 127.0f ? t : 127.0f;
    return (int8_t)nearbyintf(t);
}

static AVX2_CODES_FN void codes_avx2(const float *src, int8_t *dst, int64_t n, float a, float b)
{
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b), lo = _mm256_set1_ps(-128.0f),
                 hi = _mm256_set1_ps(127.0f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        /* max(t, lo) is lo for a NaN t (the second operand is returned) */
        __m256 t0 = _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(_mm256_loadu_ps(src + i), va, vb), lo), hi);
        __m256 t1 = _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(_mm256_loadu_ps(src + i + 8), va, vb), lo), hi);
        __m256i p = _mm256_packs_epi32(_mm256_cvtps_epi32(t0), _mm256_cvtps_epi32(t1)); /* 0-3 8-11 4-7 12-15 */
        p = _mm256_permute4x64_epi64(p, 0xD8);
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
    }
    for (; i < n; i++)
        dst[i] = code_of(src[i], a, b);
}

void trtl_adder_q_codes(const trtl_adder_q *q, const float *src, int8_t *dst, int64_t ohw)
{
    const int simd = pick_path() != PATH_PORTABLE && trtl_cpu_has(TRTL_CPU_FMA);
    for (int32_t f = 0; f < q->F; f++) {
        if (simd) {
            codes_avx2(src + f * ohw, dst + f * ohw, ohw, q->oa[f], q->ob[f]);
            continue;
        }
        for (int64_t i = 0; i < ohw; i++)
            dst[f * ohw + i] = code_of(src[f * ohw + i], q->oa[f], q->ob[f]);
    }
}

size_t trtl_adder_q_workspace(const trtl_adder_q *q, int64_t H, int64_t W)
{
    path pa = pick_path();
    if (pa == PATH_PORTABLE)
        return 0;
    if (use_db(q, pa))
        return db_workspace(q, H, W);
    geom g;
    geom_init(q, H, W, pa == PATH_AVX512 ? 8 : 4, &g);
    if (g.OH < 1 || g.OW < 1 || g.blocks * g.plane >= INT32_MAX / 2)
        return (size_t)-1;
    return (slot_bytes(&g) + codes_slot_bytes(q, g.OH, g.OW)) * (size_t)trtl_available_cpus() +
           up64((size_t)g.G * (sizeof(int32_t) + 8u) + 8u);
}

/* ---- layout of one sample ------------------------------------------------------------------- */

/* COLUMNS: x [C][H][W] codes -> per (channel, padded row) the words of 8 consecutive padded
 * columns from t*s + 8 jg; `prow` is a scratch row of g->wrow bytes (code 0 = 0x80 in the padding). */
static void pad_sample_columns(const trtl_adder_q *q, const geom *g, const int8_t *x, uint8_t *dst, uint8_t *prow)
{
    const int64_t s = q->s, p = q->p;
    for (int64_t c = 0; c < q->C; c++)
        for (int64_t r = 0; r < g->hp; r++) {
            const int64_t iy = r - p;
            memset(prow, 0x80, (size_t)g->wrow);
            if (iy >= 0 && iy < g->H) {
                const int8_t *src = x + (c * g->H + iy) * g->W;
                for (int64_t ix = 0; ix < g->W; ix++)
                    prow[ix + p] = (uint8_t)src[ix] ^ 0x80u;
            }
            uint8_t *words = dst + (c * g->plane + r * g->row) * 8;
            for (int64_t jg = 0; jg < g->jg; jg++)
                for (int64_t t = 0; t < g->lp; t++)
                    memcpy(words + (jg * g->lp + t) * 8, prow + t * s + 8 * jg, 8);
        }
}

/* x [C][H][W] codes -> the blocked, phase-split, zero-bordered words (see adder2d_int8.h).  A
 * padded position holds code 0 (0x80) in the channels < C; channels past C hold 0, as the weights. */
static void pad_sample(const trtl_adder_q *q, const geom *g, const int8_t *x, uint8_t *dst)
{
    const int64_t s = q->s, p = q->p;
    if (g->lay == LAYOUT_COLUMNS) {
        pad_sample_columns(q, g, x, dst, dst + g->blocks * g->plane * 8);
        return;
    }
    for (int64_t b = 0; b < g->blocks; b++) {
        uint8_t word[8];
        for (int l = 0; l < 8; l++)
            word[l] = b * 8 + l < q->C ? 0x80u : 0u;
        uint8_t *plane = dst + b * g->plane * 8;
        for (int64_t t = 0; t < g->plane; t++)
            memcpy(plane + t * 8, word, 8);
    }
    for (int64_t c = 0; c < q->C; c++) {
        uint8_t *plane = dst + (c / 8) * g->plane * 8 + c % 8;
        for (int64_t iy = 0; iy < g->H; iy++) {
            const int8_t *src = x + (c * g->H + iy) * g->W;
            uint8_t *r = plane + (iy + p) * g->row * 8;
            for (int64_t ix = 0; ix < g->W; ix++) {
                int64_t pc = ix + p;
                r[((pc % s) * g->lp + pc / s) * 8] = (uint8_t)src[ix] ^ 0x80u;
            }
        }
    }
}

/* Word offset of each tap group (block, i, j) / (channel, i, jg) from an output vector's base word, and
 * its lane mask (all ones but for COLUMNS' last group of a kernel row). */
static void make_offsets(const trtl_adder_q *q, const geom *g, int32_t *off, uint64_t *mask)
{
    const int64_t k = q->k, s = q->s;
    int64_t t = 0;
    if (g->lay == LAYOUT_COLUMNS) {
        for (int64_t c = 0; c < q->C; c++)
            for (int64_t i = 0; i < k; i++)
                for (int64_t jg = 0; jg < g->jg; jg++, t++) {
                    off[t] = (int32_t)(c * g->plane + i * g->row + jg * g->lp);
                    const int64_t n = k - 8 * jg >= 8 ? 8 : k - 8 * jg;
                    mask[t] = n >= 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * n)) - 1u);
                }
        return;
    }
    for (int64_t i = 0; i < g->G; i++)
        mask[i] = ~(uint64_t)0;
    for (int64_t b = 0; b < g->blocks; b++)
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < k; j++)
                off[t++] = (int32_t)(b * g->plane + i * g->row + (j % s) * g->lp + j / s);
}

/* Filter groups of at most `mr`, sizes differing by at most one. */
static void group_range(int32_t F, int32_t mr_max, int32_t gi, int32_t *f0, int32_t *mr)
{
    int32_t ng = (F + mr_max - 1) / mr_max, base = F / ng, extra = F % ng;
    *mr = base + (gi < extra);
    *f0 = gi * base + (gi < extra ? gi : extra);
}

/* One pixel vector of a tile: its base word, its output (filter f0), how many pixels to store. */
typedef struct vchunk {
    const uint64_t *x;
    float *y;
    int64_t cnt;
} vchunk;

static void chunk_at(const trtl_adder_q *q, const geom *g, const uint64_t *pad, float *yn, int64_t t, vchunk *c)
{
    const int64_t cpr = (g->OW + g->cw - 1) / g->cw, oy = t / cpr, ox = t % cpr * g->cw;
    c->x = pad + oy * q->s * g->row + ox;
    c->y = yn + oy * g->OW + ox;
    c->cnt = g->OW - ox < g->cw ? g->OW - ox : g->cw;
}

/* ---- AVX-512BW tile: NC x 8 pixels x MR filters ---------------------------------------------- */

#define AVX512_FN __attribute__((target("avx512f,avx512bw,avx2")))
#define AVX2_FN __attribute__((target("avx2")))

static inline __attribute__((always_inline)) AVX512_FN void tile512(const int NC, const int MR, const vchunk *ch,
                                                                    const int32_t *off, const uint64_t *mask,
                                                                    int64_t G, const uint8_t *w,
                                                                    int64_t wstride, float nscale, int64_t ohw)
{
    __m512i acc[MAX_NC][AVX512_MR];
#pragma GCC unroll 3
    for (int c = 0; c < NC; c++)
#pragma GCC unroll 8
        for (int m = 0; m < MR; m++)
            acc[c][m] = _mm512_setzero_si512();
    for (int64_t t = 0; t < G; t++) {
        __m512i xv[MAX_NC];
        const __m512i mk = _mm512_set1_epi64((int64_t)mask[t]);
#pragma GCC unroll 3
        for (int c = 0; c < NC; c++)
            xv[c] = _mm512_and_si512(_mm512_loadu_si512((const void *)(ch[c].x + off[t])), mk);
#pragma GCC unroll 8
        for (int m = 0; m < MR; m++) {
            __m512i wv = _mm512_set1_epi64(load8(w + m * 8));
#pragma GCC unroll 3
            for (int c = 0; c < NC; c++)
                acc[c][m] = _mm512_add_epi64(acc[c][m], _mm512_sad_epu8(xv[c], wv));
        }
        w += wstride;
    }
    const __m256 ns = _mm256_set1_ps(nscale);
#pragma GCC unroll 3
    for (int c = 0; c < NC; c++) {
        if (ch[c].cnt <= 0)
            continue;
        const __mmask8 mk = (__mmask8)((1u << ch[c].cnt) - 1u);
#pragma GCC unroll 8
        for (int m = 0; m < MR; m++) {
            __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm512_cvtepi64_epi32(acc[c][m])), ns);
            _mm512_mask_storeu_ps(ch[c].y + m * ohw, (__mmask16)mk, _mm512_castps256_ps512(v));
        }
    }
}

#define TILE512(MR)                                                                                                   \
    static AVX512_FN void tile512_##MR(const vchunk *ch, const int32_t *off, const uint64_t *mask, int64_t G,         \
                                       const uint8_t *w, int64_t ws, float ns, int64_t ohw)                           \
    {                                                                                                                 \
        tile512(3, MR, ch, off, mask, G, w, ws, ns, ohw);                                                             \
    }
TILE512(1)
TILE512(2)
TILE512(3)
TILE512(4)
TILE512(5)
TILE512(6)
TILE512(7)
TILE512(8)
#undef TILE512

/* ---- AVX2 tile: 2 x 4 pixels x MR filters ---------------------------------------------------- */

static inline __attribute__((always_inline)) AVX2_FN void tile256(const int NC, const int MR, const vchunk *ch,
                                                                  const int32_t *off, const uint64_t *mask,
                                                                  int64_t G, const uint8_t *w,
                                                                  int64_t wstride, float nscale, int64_t ohw)
{
    __m256i acc[MAX_NC][AVX2_MR];
#pragma GCC unroll 3
    for (int c = 0; c < NC; c++)
#pragma GCC unroll 6
        for (int m = 0; m < MR; m++)
            acc[c][m] = _mm256_setzero_si256();
    for (int64_t t = 0; t < G; t++) {
        __m256i xv[MAX_NC];
        const __m256i mk = _mm256_set1_epi64x((int64_t)mask[t]);
#pragma GCC unroll 3
        for (int c = 0; c < NC; c++)
            xv[c] = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(ch[c].x + off[t])), mk);
#pragma GCC unroll 6
        for (int m = 0; m < MR; m++) {
            __m256i wv = _mm256_set1_epi64x(load8(w + m * 8));
#pragma GCC unroll 3
            for (int c = 0; c < NC; c++)
                acc[c][m] = _mm256_add_epi64(acc[c][m], _mm256_sad_epu8(xv[c], wv));
        }
        w += wstride;
    }
    const __m128 ns = _mm_set1_ps(nscale);
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
#pragma GCC unroll 3
    for (int c = 0; c < NC; c++) {
        if (ch[c].cnt <= 0)
            continue;
        const __m128i mk = _mm_cmpgt_epi32(_mm_set1_epi32((int)ch[c].cnt), _mm_setr_epi32(0, 1, 2, 3));
#pragma GCC unroll 6
        for (int m = 0; m < MR; m++) {
            __m128i lo = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(acc[c][m], even));
            __m128 v = _mm_mul_ps(_mm_cvtepi32_ps(lo), ns);
            _mm_maskstore_ps(ch[c].y + m * ohw, mk, v);
        }
    }
}

#define TILE256(MR)                                                                                                   \
    static AVX2_FN void tile256_##MR(const vchunk *ch, const int32_t *off, const uint64_t *mask, int64_t G,           \
                                     const uint8_t *w, int64_t ws, float ns, int64_t ohw)                             \
    {                                                                                                                 \
        tile256(2, MR, ch, off, mask, G, w, ws, ns, ohw);                                                             \
    }
TILE256(1)
TILE256(2)
TILE256(3)
TILE256(4)
TILE256(5)
TILE256(6)
#undef TILE256

typedef void (*tile_fn)(const vchunk *, const int32_t *, const uint64_t *, int64_t, const uint8_t *, int64_t, float,
                        int64_t);

static const tile_fn tiles512[AVX512_MR + 1] = {NULL,       tile512_1, tile512_2, tile512_3, tile512_4,
                                                tile512_5, tile512_6, tile512_7, tile512_8};
static const tile_fn tiles256[AVX2_MR + 1] = {NULL, tile256_1, tile256_2, tile256_3, tile256_4, tile256_5, tile256_6};

typedef struct job {
    const trtl_adder_q *q;
    const geom *g;
    path pa;
    const int8_t *x;
    sink out;
    char *slots;
    const int32_t *off;
    const uint64_t *mask;
} job;

/* Tiles [t0, t1) (in units of NC pixel vectors) of one laid-out sample. */
static void sample_tiles(const job *j, const uint64_t *pad, float *yn, int64_t t0, int64_t t1)
{
    const trtl_adder_q *q = j->q;
    const geom *g = j->g;
    const int nc = j->pa == PATH_AVX512 ? 3 : 2, mr_max = j->pa == PATH_AVX512 ? AVX512_MR : AVX2_MR;
    const tile_fn *tiles = j->pa == PATH_AVX512 ? tiles512 : tiles256;
    const int64_t ohw = g->OH * g->OW, nv = g->OH * ((g->OW + g->cw - 1) / g->cw);
    const int32_t ng = (q->F + mr_max - 1) / mr_max;
    for (int64_t t = t0; t < t1; t++) {
        vchunk ch[MAX_NC];
        for (int c = 0; c < nc; c++) {
            int64_t v = t * nc + c;
            if (v < nv) {
                chunk_at(q, g, pad, yn, v, &ch[c]);
            } else { /* past the last vector: recompute the first one of the tile, store nothing */
                ch[c] = ch[0];
                ch[c].cnt = 0;
            }
        }
        for (int32_t gi = 0; gi < ng; gi++) {
            int32_t f0, mr;
            group_range(q->F, mr_max, gi, &f0, &mr);
            vchunk cg[MAX_NC];
            for (int c = 0; c < nc; c++) {
                cg[c] = ch[c];
                cg[c].y += f0 * ohw;
            }
            tiles[mr](cg, j->off, j->mask, g->G, q->wpk + f0 * 8, (int64_t)q->F * 8, -q->scale, ohw);
        }
    }
}

static int64_t tile_count(const job *j)
{
    const int nc = j->pa == PATH_AVX512 ? 3 : 2;
    const int64_t nv = j->g->OH * ((j->g->OW + j->g->cw - 1) / j->g->cw);
    return (nv + nc - 1) / nc;
}

static void sample_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    const job *j = ctx;
    const geom *g = j->g;
    uint64_t *pad = (uint64_t *)(void *)(j->slots + (size_t)thread * slot_bytes(g));
    for (int64_t n = begin; n < end; n++) {
        pad_sample(j->q, g, j->x + n * j->q->C * g->H * g->W, (uint8_t *)pad);
        sample_tiles(j, pad, sink_sample(&j->out, n, thread), 0, tile_count(j));
        sink_done(&j->out, n, thread);
    }
}

static void tile_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const job *j = ctx;
    sample_tiles(j, (const uint64_t *)(const void *)j->slots, sink_sample(&j->out, 0, 0), begin, end);
}

/* ---- AVX-512BW, stride 1, k <= 8: `vdbpsadbw` ------------------------------------------------- */
/*
 * vdbpsadbw(a, b, imm) gives per 64-bit lane four 16-bit sums of |a - b| over 4 bytes: words 0, 1 pair
 * a's bytes 0..3 with b's bytes 0..3 and 1..4, words 2, 3 pair a's bytes 4..7 with b's bytes 2..5 and
 * 3..6, where b's 8 bytes are two dwords of its 128-bit lane chosen by imm.  With b's lane holding 16
 * consecutive padded columns x[c0 .. c0 + 15] of one input row and a = 4 weight taps twice, word p is
 * sum_t |w_t - x[c0 + p + t]|, output pixel c0 + p over those 4 taps: imm 0x94 (dwords 0,1 | 1,2) makes
 * the lane's 8 words output pixels c0 .. c0 + 7 over taps 0..3, imm 0xE9 (dwords 1,2 | 2,3) the same
 * pixels over taps 4..7.  A zmm is 4 rows x 8 columns of output pixels (the 4 lanes are 4 input rows:
 * the sample is laid out [C][column segment][row][16 bytes], so 4 rows are one 64-byte load), 128
 * |x - w| per instruction against vpsadbw's 64, and no channel padding (one instruction covers one
 * channel).  Taps past the kernel (k % 4 != 0) carry weight byte 0: they add the input's unsigned code
 * x ^ 0x80 there, a sum over the input alone, computed once per sample (`corr`) and subtracted.  The
 * 16-bit sums are widened into int32 after at most 64 instructions (64 * 4 * 255 < 65536).
 */

#define DB_NV 2  /* pixel vectors (4 x 8 pixels each) per register tile */
#define DB_MR 12 /* filters per register tile */

static int use_db(const trtl_adder_q *q, path pa) { return pa == PATH_AVX512 && q->s == 1 && q->k <= 8; }

typedef struct dgeom {
    int64_t H, W, OH, OW, Hp, Wp;
    int64_t nseg, nrb, R, Wc, CW, nq; /* column segments of 8, row blocks of 4, rows and columns laid out */
    size_t seg, pl, rw, corr, prow;   /* byte offsets inside a slot */
    size_t slot;
} dgeom;

static void dgeom_init(const trtl_adder_q *q, int64_t H, int64_t W, dgeom *d)
{
    d->H = H;
    d->W = W;
    d->OH = out_len(H, q->k, 1, q->p);
    d->OW = out_len(W, q->k, 1, q->p);
    d->Hp = H + 2 * (int64_t)q->p;
    d->Wp = W + 2 * (int64_t)q->p;
    d->nq = q->k <= 4 ? 1 : 2;
    d->nseg = d->OW > 0 ? (d->OW + 7) / 8 : 0;
    d->nrb = d->OH > 0 ? (d->OH + 3) / 4 : 0;
    d->R = 4 * d->nrb + q->k - 1; /* >= Hp; rows past Hp are 0 and feed only unstored pixels */
    d->Wc = 8 * d->nseg + 8;      /* > Wp; columns past Wp are 0 (in the layout and in corr alike) */
    d->CW = 8 * d->nseg;
    d->seg = 0;
    d->pl = up64((size_t)((int64_t)q->C * d->nseg * d->R * 16));
    d->rw = d->pl + up64((size_t)(d->R * d->Wc) * 4u);
    d->corr = d->rw + up64((size_t)(d->R * d->CW) * 4u);
    d->prow = d->corr + up64((size_t)(d->OH * d->CW) * 4u);
    d->slot = d->prow + up64((size_t)d->Wc);
}

static size_t db_workspace(const trtl_adder_q *q, int64_t H, int64_t W)
{
    dgeom d;
    dgeom_init(q, H, W, &d);
    if (d.OH < 1 || d.OW < 1 || (int64_t)q->C * d.nseg * d.R * 16 >= INT32_MAX / 2 || d.R * d.Wc >= INT32_MAX / 8)
        return (size_t)-1;
    return (d.slot + codes_slot_bytes(q, d.OH, d.OW)) * (size_t)trtl_available_cpus();
}

/* corr's row sums: rw[r][ox] = sum_{j = k .. ex - 1} pl[r][ox + j], then corr[oy][ox] = sum_i rw[oy + i][ox]
 * (CW a multiple of 8). */
static AVX512_FN void db_corr(const dgeom *d, int64_t k, int64_t ex, const int32_t *pl, int32_t *rw, int32_t *corr)
{
    const int64_t Wc = d->Wc, CW = d->CW;
    for (int64_t r = 0; r < d->Hp; r++)
        for (int64_t ox = 0; ox < CW; ox += 8) {
            __m256i sum = _mm256_setzero_si256();
            for (int64_t j = k; j < ex; j++)
                sum = _mm256_add_epi32(sum, _mm256_loadu_si256((const __m256i *)(const void *)(pl + r * Wc + ox + j)));
            _mm256_storeu_si256((__m256i *)(void *)(rw + r * CW + ox), sum);
        }
    for (int64_t oy = 0; oy < d->OH; oy++)
        for (int64_t ox = 0; ox < CW; ox += 8) {
            __m256i sum = _mm256_setzero_si256();
            for (int64_t i = 0; i < k; i++)
                sum = _mm256_add_epi32(sum,
                                       _mm256_loadu_si256((const __m256i *)(const void *)(rw + (oy + i) * CW + ox)));
            _mm256_storeu_si256((__m256i *)(void *)(corr + oy * CW + ox), sum);
        }
}

/* pl[col] += prow[col] for col < Wc (a multiple of 8). */
static AVX512_FN void db_add_row(int32_t *pl, const uint8_t *prow, int64_t Wc)
{
    for (int64_t col = 0; col < Wc; col += 8) {
        __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(prow + col));
        __m256i *o = (__m256i *)(void *)(pl + col);
        _mm256_storeu_si256(o, _mm256_add_epi32(_mm256_loadu_si256(o), _mm256_cvtepu8_epi32(b)));
    }
}

/* x [C][H][W] codes -> the segment layout (code ^ 0x80, 0x80 in the padding, 0 past it) and, where the
 * kernel's width is not a multiple of 4, corr[oy][ox] = the sum of the laid-out bytes under the taps past
 * the kernel (columns ox + k .. ox + 4 nq - 1 of rows oy .. oy + k - 1, over every channel). */
static void db_pad(const trtl_adder_q *q, const dgeom *d, const int8_t *x, char *slot)
{
    const int64_t k = q->k, p = q->p, R = d->R, Wc = d->Wc, ex = 4 * d->nq;
    uint8_t *seg = (uint8_t *)slot + d->seg, *prow = (uint8_t *)slot + d->prow;
    int32_t *pl = (int32_t *)(void *)(slot + d->pl);
    const int need_corr = k != ex;
    if (need_corr)
        memset(pl, 0, (size_t)(R * Wc) * 4u);
    for (int64_t c = 0; c < q->C; c++)
        for (int64_t r = 0; r < R; r++) {
            memset(prow, 0, (size_t)Wc);
            if (r < d->Hp) {
                memset(prow, 0x80, (size_t)d->Wp);
                const int64_t iy = r - p;
                if (iy >= 0 && iy < d->H) {
                    const int8_t *src = x + (c * d->H + iy) * d->W;
                    for (int64_t ix = 0; ix < d->W; ix++)
                        prow[ix + p] = (uint8_t)src[ix] ^ 0x80u;
                }
                if (need_corr)
                    db_add_row(pl + r * Wc, prow, Wc);
            }
            for (int64_t sg = 0; sg < d->nseg; sg++)
                memcpy(seg + ((c * d->nseg + sg) * R + r) * 16, prow + 8 * sg, 16);
        }
    if (need_corr)
        db_corr(d, k, ex, pl, (int32_t *)(void *)(slot + d->rw), (int32_t *)(void *)(slot + d->corr));
}

/* DB_NV pixel vectors x MR filters: acc32[m][v][32] (row-major 4 x 8 pixels) = the int32 sums over
 * every channel and tap (taps past the kernel included).  xb[v]: vector v's 16-byte rows of channel 0;
 * w: filter f0's weights at (channel 0, kernel row 0), F * 16 bytes a (channel, kernel row). */
static inline __attribute__((always_inline)) AVX512_FN void dtile(const int NQ, const int MR, const uint8_t *const *xb,
                                                                  const uint8_t *w, int64_t F, int32_t C, int32_t k,
                                                                  int64_t cstride, int32_t *acc32)
{
    const int32_t chunk = 64 / (k * NQ); /* channels per widening: k * NQ instructions each */
    for (int32_t c0 = 0; c0 < C; c0 += chunk) {
        const int32_t c1 = C - c0 < chunk ? C : c0 + chunk;
        __m512i acc[DB_NV][DB_MR];
#pragma GCC unroll 2
        for (int v = 0; v < DB_NV; v++)
#pragma GCC unroll 12
            for (int m = 0; m < MR; m++)
                acc[v][m] = _mm512_setzero_si512();
        for (int32_t c = c0; c < c1; c++)
            for (int32_t i = 0; i < k; i++) {
                const int64_t xo = c * cstride + (int64_t)i * 16;
                const uint8_t *wp = w + ((int64_t)c * k + i) * F * 16;
                __m512i xv[DB_NV];
#pragma GCC unroll 2
                for (int v = 0; v < DB_NV; v++)
                    xv[v] = _mm512_loadu_si512((const void *)(xb[v] + xo));
#pragma GCC unroll 12
                for (int m = 0; m < MR; m++) {
                    int64_t w0;
                    memcpy(&w0, wp + m * 16, 8);
                    const __m512i a0 = _mm512_set1_epi64(w0);
#pragma GCC unroll 2
                    for (int v = 0; v < DB_NV; v++)
                        acc[v][m] = _mm512_add_epi16(acc[v][m], _mm512_dbsad_epu8(a0, xv[v], 0x94));
                    if (NQ == 2) {
                        int64_t w1;
                        memcpy(&w1, wp + m * 16 + 8, 8);
                        const __m512i a1 = _mm512_set1_epi64(w1);
#pragma GCC unroll 2
                        for (int v = 0; v < DB_NV; v++)
                            acc[v][m] = _mm512_add_epi16(acc[v][m], _mm512_dbsad_epu8(a1, xv[v], 0xE9));
                    }
                }
            }
#pragma GCC unroll 12
        for (int m = 0; m < MR; m++)
#pragma GCC unroll 2
            for (int v = 0; v < DB_NV; v++) {
                int32_t *o = acc32 + (m * DB_NV + v) * 32;
                const __m512i lo = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(acc[v][m]));
                const __m512i hi = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(acc[v][m], 1));
                if (c0 == 0) {
                    _mm512_storeu_si512((void *)o, lo);
                    _mm512_storeu_si512((void *)(o + 16), hi);
                } else {
                    _mm512_storeu_si512((void *)o, _mm512_add_epi32(_mm512_loadu_si512((const void *)o), lo));
                    _mm512_storeu_si512((void *)(o + 16),
                                        _mm512_add_epi32(_mm512_loadu_si512((const void *)(o + 16)), hi));
                }
            }
    }
}

#define DTILE(NQ, MR)                                                                                                 \
    static AVX512_FN void dtile_##NQ##_##MR(const uint8_t *const *xb, const uint8_t *w, int64_t F, int32_t C,         \
                                            int32_t k, int64_t cs, int32_t *acc32)                                    \
    {                                                                                                                 \
        dtile(NQ, MR, xb, w, F, C, k, cs, acc32);                                                                     \
    }
#define DTILES(NQ)                                                                                                    \
    DTILE(NQ, 1) DTILE(NQ, 2) DTILE(NQ, 3) DTILE(NQ, 4) DTILE(NQ, 5) DTILE(NQ, 6) DTILE(NQ, 7) DTILE(NQ, 8)          \
    DTILE(NQ, 9) DTILE(NQ, 10) DTILE(NQ, 11) DTILE(NQ, 12)
DTILES(1)
DTILES(2)
#undef DTILES
#undef DTILE

typedef void (*dtile_fn)(const uint8_t *const *, const uint8_t *, int64_t, int32_t, int32_t, int64_t, int32_t *);

static const dtile_fn dtiles[2][DB_MR + 1] = {
    {NULL, dtile_1_1, dtile_1_2, dtile_1_3, dtile_1_4, dtile_1_5, dtile_1_6, dtile_1_7, dtile_1_8, dtile_1_9,
     dtile_1_10, dtile_1_11, dtile_1_12},
    {NULL, dtile_2_1, dtile_2_2, dtile_2_3, dtile_2_4, dtile_2_5, dtile_2_6, dtile_2_7, dtile_2_8, dtile_2_9,
     dtile_2_10, dtile_2_11, dtile_2_12},
};

/* y = -scale * (acc32 - corr) for the stored pixels of vector (rb, sg), filter rows yf. */
static AVX512_FN void db_store(const dgeom *d, const int32_t *acc, const int32_t *corr, int need_corr, float *yf,
                               int64_t rb, int64_t sg, float nscale)
{
    const int64_t ox = 8 * sg, cnt = d->OW - ox < 8 ? d->OW - ox : 8;
    const __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)cnt), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 ns = _mm256_set1_ps(nscale);
    for (int64_t l = 0; l < 4; l++) {
        const int64_t oy = 4 * rb + l;
        if (oy >= d->OH)
            break;
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(acc + l * 8));
        if (need_corr)
            a = _mm256_sub_epi32(a, _mm256_loadu_si256((const __m256i *)(const void *)(corr + oy * d->CW + ox)));
        _mm256_maskstore_ps(yf + oy * d->OW + ox, mk, _mm256_mul_ps(_mm256_cvtepi32_ps(a), ns));
    }
}

typedef struct djob {
    const trtl_adder_q *q;
    const dgeom *d;
    const int8_t *x;
    sink out;
    char *slots;
} djob;

static int64_t db_tile_count(const dgeom *d) { return (d->nseg * d->nrb + DB_NV - 1) / DB_NV; }

/* Tiles [t0, t1) of one laid-out sample (slot), output yn [F][OH][OW]. */
static void db_tiles(const djob *j, const char *slot, float *yn, int64_t t0, int64_t t1)
{
    const trtl_adder_q *q = j->q;
    const dgeom *d = j->d;
    const uint8_t *seg = (const uint8_t *)slot + d->seg, *wdb = q->wpk + sad_packed_bytes(q->F, q->C, q->k);
    const int32_t *corr = (const int32_t *)(const void *)(slot + d->corr);
    const int64_t nv = d->nseg * d->nrb, ohw = d->OH * d->OW, cstride = d->nseg * d->R * 16;
    const int32_t ng = (q->F + DB_MR - 1) / DB_MR;
    const int need_corr = q->k != 4 * d->nq;
    int32_t acc32[DB_MR * DB_NV * 32];
    for (int64_t t = t0; t < t1; t++) {
        const uint8_t *xb[DB_NV];
        int64_t vi[DB_NV];
        for (int v = 0; v < DB_NV; v++) {
            vi[v] = t * DB_NV + v < nv ? t * DB_NV + v : -1; /* past the last vector: recompute vector 0 */
            const int64_t e = vi[v] >= 0 ? vi[v] : t * DB_NV;
            xb[v] = seg + ((e % d->nseg) * d->R + 4 * (e / d->nseg)) * 16;
        }
        for (int32_t gi = 0; gi < ng; gi++) {
            int32_t f0, mr;
            group_range(q->F, DB_MR, gi, &f0, &mr);
            dtiles[d->nq - 1][mr](xb, wdb + (int64_t)f0 * 16, q->F, q->C, q->k, cstride, acc32);
            for (int32_t m = 0; m < mr; m++)
                for (int v = 0; v < DB_NV; v++)
                    if (vi[v] >= 0)
                        db_store(d, acc32 + (m * DB_NV + v) * 32, corr, need_corr, yn + (f0 + m) * ohw,
                                 vi[v] / d->nseg, vi[v] % d->nseg, -q->scale);
        }
    }
}

static void db_sample_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    const djob *j = ctx;
    const dgeom *d = j->d;
    char *slot = j->slots + (size_t)thread * d->slot;
    for (int64_t n = begin; n < end; n++) {
        db_pad(j->q, d, j->x + n * j->q->C * d->H * d->W, slot);
        db_tiles(j, slot, sink_sample(&j->out, n, thread), 0, db_tile_count(d));
        sink_done(&j->out, n, thread);
    }
}

static void db_tile_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const djob *j = ctx;
    db_tiles(j, j->slots, sink_sample(&j->out, 0, 0), begin, end);
}

static void db_run(const trtl_adder_q *q, const int8_t *x, int64_t N, int64_t H, int64_t W, void *y,
                   void *workspace, trtl_threadpool *pool)
{
    dgeom d;
    dgeom_init(q, H, W, &d);
    djob j = {q, &d, x, {0}, workspace};
    sink_init(&j.out, q, y, (char *)workspace + d.slot * (size_t)trtl_available_cpus(), d.OH, d.OW);
    if (N > 1 || !pool) {
        trtl_parallel_for(pool, N, 1, db_sample_task, &j);
    } else {
        db_pad(q, &d, x, workspace);
        trtl_parallel_for(pool, db_tile_count(&d), 2, db_tile_task, &j);
        sink_done(&j.out, 0, 0);
    }
}

/* ---- portable: the definition ------------------------------------------------------------------ */

static void adder_q_portable(const trtl_adder_q *q, const int8_t *x, int64_t N, int64_t H, int64_t W, void *y)
{
    const int64_t k = q->k, s = q->s, p = q->p, OH = out_len(H, q->k, q->s, q->p), OW = out_len(W, q->k, q->s, q->p);
    for (int64_t n = 0; n < N; n++)
        for (int64_t f = 0; f < q->F; f++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    int32_t acc = 0;
                    for (int64_t c = 0; c < q->C; c++)
                        for (int64_t i = 0; i < k; i++)
                            for (int64_t jj = 0; jj < k; jj++) {
                                const int64_t iy = oy * s + i - p, ix = ox * s + jj - p;
                                const int32_t xv = iy >= 0 && iy < H && ix >= 0 && ix < W
                                                       ? x[((n * q->C + c) * H + iy) * W + ix]
                                                       : 0;
                                const int32_t d = xv - q->wq[((f * q->C + c) * k + i) * k + jj];
                                acc += d < 0 ? -d : d;
                            }
                    const float v = (float)acc * -q->scale;
                    const int64_t at = ((n * q->F + f) * OH + oy) * OW + ox;
                    if (q->oa)
                        ((int8_t *)y)[at] = code_of(v, q->oa[f], q->ob[f]);
                    else
                        ((float *)y)[at] = v;
                }
}

void trtl_adder_q_run(const trtl_adder_q *q, const int8_t *x, int64_t N, int64_t H, int64_t W, void *y,
                      void *workspace)
{
    path pa = pick_path();
    size_t need = trtl_adder_q_workspace(q, H, W);
    if (pa == PATH_PORTABLE || !workspace || need == 0 || need == (size_t)-1) {
        adder_q_portable(q, x, N, H, W, y);
        return;
    }
    trtl_threadpool *pool = trtl_current_pool();
    if (trtl_threadpool_size(pool) > trtl_available_cpus()) /* more threads than workspace slots: run here */
        pool = NULL;
    if (use_db(q, pa)) {
        db_run(q, x, N, H, W, y, workspace, pool);
        return;
    }
    geom g;
    geom_init(q, H, W, pa == PATH_AVX512 ? 8 : 4, &g);
    g.N = N;
    char *tables = (char *)workspace + slot_bytes(&g) * (size_t)trtl_available_cpus();
    uint64_t *mask = (uint64_t *)(void *)tables; /* slots are multiples of 64 bytes: aligned */
    int32_t *off = (int32_t *)(void *)(mask + g.G);
    make_offsets(q, &g, off, mask);
    job j = {q, &g, pa, x, {0}, workspace, off, mask};
    sink_init(&j.out, q, y, tables + up64((size_t)g.G * (sizeof(int32_t) + 8u) + 8u), g.OH, g.OW);
    if (N > 1 || !pool) {
        trtl_parallel_for(pool, N, 1, sample_task, &j);
    } else {
        pad_sample(q, &g, x, workspace);
        trtl_parallel_for(pool, tile_count(&j), 8, tile_task, &j);
        sink_done(&j.out, 0, 0);
    }
}
