/*
 * convolution_grouped.c -- "convolution.grouped_direct": 2-D grouped convolutions with few channels
 * per group (RegNet's 3x3 convolutions of group width 8, stride 1 and 2), computed directly, without
 * the im2col packing that convolution.packed_gemm does per group for an 8-row GEMM of depth 72.
 *
 * Per (image, group) item, in a slot's scratch:
 *   1. the group's Cg input planes are copied zero-padded and split into s x s phase planes (s the
 *      stride; one plane for stride 1): padded row r = s*i + a, column u = s*j + b go to phase plane
 *      (a, b) at (i, j), planes Wh = ceil(Wp / s) wide.  Output pixel (oh, ow) is then computed at
 *      q = oh*Wh + ow of a Wh-wide grid, and tap (kh, kw) reads phase plane (dh*kh % s, dw*kw % s)
 *      at q + (dh*kh / s)*Wh + dw*kw / s: every tap is a contiguous run of the grid, so a vector of
 *      consecutive q (crossing rows; the columns ow >= OW are computed and dropped) loads at once.
 *   2. for each block of 8 output channels of the group and each run of V vectors of q, 8 x V
 *      accumulators start at the bias and take, per tap (c, kh, kw), V input vectors times 8
 *      broadcast weights (pre-arranged in prepare() as [group][block][c, kh, kw][8], zero past Kg).
 *      AVX-512: V = 3 vectors of 16 (24 accumulators), AVX2: V = 1 of 8, portable: scalar.
 *   3. the grid rows' first OW columns go to the output (+ residual), then the activation over
 *      the group's channels.
 * Padding is read as zeros and multiplied like the image (0 * NaN = NaN, as the reference).
 * Items (image, group) are split over the pool's threads in contiguous runs.
 *
 * applies(): groups > 1 with 2..GD_MAX_CG input and 2..GD_MAX_KG output channels per group, 2-D;
 * scratch() sizes for the shapes it is given, and a run with less scratch than its shapes need
 * computes the reference and the epilogue pass.
 */
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/ref/ref.h"
#include "kernels/x86/convolution_unpacked.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/tap_tile.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define GD_MAX_CG 16
#define GD_MAX_KG 16
#define GD_KB 8            /* output channels per accumulator block */
#define GD_MAX_TAPS 512    /* Cg * kh * kw at most */
#define GD_MAX_SLOTS 64
#define GD_MAX_SLOT_FLOATS (8 << 20)

typedef enum gd_isa { GD_PORTABLE = 0, GD_AVX2 = 1, GD_AVX512 = 2 } gd_isa;

typedef struct gd_state {
    gd_isa isa;
    int vec; /* AVX2 + FMA: the vector row copies of steps 1 and 3 (also under the AVX-512 tile) */
    int64_t K, G, Cg, Kg, kvol, nkb;
    float *w; /* [G][nkb][Cg*kvol][GD_KB] */
    size_t packed_bytes; /* of the packed weights (state_bytes) */
} gd_state;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* The grid and plane sizes of geometry g. */
typedef struct gd_layout {
    int64_t s1, s2, hp, wp, hh, wh, q, plane, tmp, slot;
} gd_layout;

static void layout(const trtl_conv_geom *g, gd_layout *l)
{
    l->s1 = g->s[1];
    l->s2 = g->s[2];
    l->hp = (g->out[1] - 1) * g->s[1] + (g->k[1] - 1) * g->dl[1] + 1;
    l->wp = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) * g->dl[2] + 1;
    l->hh = ceil_div(l->hp, l->s1);
    l->wh = ceil_div(l->wp, l->s2);
    l->q = round_up(g->out[1] * l->wh, 48); /* whole runs of 3 x 16 */
    const int64_t maxoff = ((g->k[1] - 1) * g->dl[1] / l->s1) * l->wh + (g->k[2] - 1) * g->dl[2] / l->s2;
    l->plane = round_up((l->hh > ceil_div(l->q + maxoff, l->wh) ? l->hh : ceil_div(l->q + maxoff, l->wh)) * l->wh + 16,
                        16);
    l->tmp = GD_KB * l->q;
    l->slot = round_up(g->Cg * l->s1 * l->s2 * l->plane + l->tmp, 16);
}

static int fits(const trtl_conv_geom *g)
{
    if (g->G < 2 || g->Cg < 2 || g->Cg > GD_MAX_CG || g->Kg < 2 || g->Kg > GD_MAX_KG || !trtl_conv_geom_2d(g) ||
        g->Cg * g->kvol > GD_MAX_TAPS || g->P < 1)
        return 0;
    gd_layout l;
    layout(g, &l);
    return l.slot <= GD_MAX_SLOT_FLOATS;
}

typedef struct gd_job {
    const trtl_conv_geom *g;
    const gd_state *st;
    const trtl_epilogue *epi;
    const float *x, *bias, *res;
    const float *x_end; /* past the input tensor */
    float *y, *base;
    gd_layout l;
    int32_t fast_act; /* the activation step 3 applies in registers (NONE: trtl_epi_act after it) */
    int exact;        /* the residual shares memory with the output: step 3 stores no whole partial vectors */
    float alpha, beta;
    int32_t off[GD_MAX_TAPS]; /* tap (c, kh, kw): its phase plane and offset from the plane base */
} gd_job;

/* Lanes i of a chunk starting at column u with lo <= u + i < hi (the two halves of 16 columns: m[0], m[1]). */
__attribute__((target("avx2,fma"))) static inline __m256i span_mask(int64_t u, int64_t lo, int64_t hi, int half)
{
    const __m256i lane = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(8 * half));
    const int64_t a = lo - u - 1 < -1 ? -1 : lo - u - 1, b = hi - u > 17 ? 17 : hi - u;
    return _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)a)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)b), lane));
}

/* Padded columns [lo, hi) of an input row (src: the address of padded column 0; only [lo, hi) is read) into a
 * plane row dst (column u at dst[u]), stride 1.  Whole vectors from lo, the last one loaded masked (its lanes past
 * hi read as zeros) and stored whole: up to 7 zeros land past dst[hi - 1], on the row's right padding and the
 * next plane rows (padding, or rows build_planes writes later) or the plane's 16 floats of slack. */
/* 8 floats at p with the lanes outside mask m zero: a plain load and an AND where all 8 lie inside [x0, x1) (the
 * input tensor: a masked load is far slower than a plain one when the line comes from memory, RegNetY's 28-wide
 * rows at batch 8), else a masked load (masked lanes are never read). */
__attribute__((target("avx2,fma"))) static inline __m256 load_masked(const float *p, __m256i m, const float *x0,
                                                                     const float *x1)
{
    if (p >= x0 && p + 8 <= x1)
        return _mm256_and_ps(_mm256_loadu_ps(p), _mm256_castsi256_ps(m));
    return _mm256_maskload_ps(p, m);
}

__attribute__((target("avx2,fma"))) static void row_copy(const float *src, int64_t lo, int64_t hi, float *dst,
                                                           const float *x0, const float *x1)
{
    int64_t u = lo;
    for (; u + 8 <= hi; u += 8)
        _mm256_storeu_ps(dst + u, _mm256_loadu_ps(src + u));
    if (u < hi)
        _mm256_storeu_ps(dst + u, load_masked(src + u, span_mask(u, lo, hi, 0), x0, x1));
}

/* The same for stride 2 in the width: padded column u to (u % 2 ? odd : even)[u / 2], odd = even + plane.  Chunks
 * of 16 columns from lo rounded down to even, lanes outside [lo, hi) loaded as zeros (masked, never read), split
 * by parity with two permutes and stored as whole vectors of 8: the zeros land on padding columns left of lo / 2
 * and, past the row's end, up to 8 floats on the next plane rows (padding or rows written later) or the slack. */
__attribute__((target("avx2,fma"))) static void row_phase2(const float *src, int64_t lo, int64_t hi, float *even,
                                                             int64_t plane, const float *x0, const float *x1)
{
    float *odd = even + plane;
    const __m256i perm = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    for (int64_t u = lo & ~(int64_t)1; u < hi; u += 16) {
        __m256 a, b;
        if (u >= lo && u + 16 <= hi) {
            a = _mm256_loadu_ps(src + u);
            b = _mm256_loadu_ps(src + u + 8);
        } else {
            a = load_masked(src + u, span_mask(u, lo, hi, 0), x0, x1);
            b = load_masked(src + u + 8, span_mask(u, lo, hi, 1), x0, x1);
        }
        a = _mm256_permutevar8x32_ps(a, perm); /* e0..e3 o0..o3 */
        b = _mm256_permutevar8x32_ps(b, perm); /* e4..e7 o4..o7 */
        _mm256_storeu_ps(even + u / 2, _mm256_permute2f128_ps(a, b, 0x20));
        _mm256_storeu_ps(odd + u / 2, _mm256_permute2f128_ps(a, b, 0x31));
    }
}

/* Step 3 on AVX2: one output channel's grid rows (src, wh apart) into its OH x OW plane y, + residual r (or NULL),
 * the fast activation act in registers.  A row's partial last vector is stored whole where that stays inside the
 * plane (its extra lanes land on the next rows, which are stored after it) unless `exact` (the residual shares the
 * output's memory: the next rows' residual must not be overwritten first), else masked. */
__attribute__((target("avx2,fma"))) static void store_channel(const float *src, int64_t wh, const float *r, float *y,
                                                                int64_t OH, int64_t OW, int32_t act, float a,
                                                                float b, int exact)
{
    const int64_t P = OH * OW;
    const __m256 alpha = _mm256_set1_ps(a), beta = _mm256_set1_ps(b);
    for (int64_t oh = 0; oh < OH; oh++, src += wh) {
        float *yr = y + oh * OW;
        const float *rr = r ? r + oh * OW : NULL;
        for (int64_t ow = 0; ow < OW; ow += 8) {
            __m256 v;
            if (ow + 8 <= OW || (!exact && oh * OW + ow + 8 <= P)) {
                v = _mm256_loadu_ps(src + ow);
                if (rr)
                    v = _mm256_add_ps(v, _mm256_loadu_ps(rr + ow));
                _mm256_storeu_ps(yr + ow, trtl_act8(v, act, alpha, beta));
            } else {
                const __m256i m = span_mask(ow, 0, OW, 0);
                v = _mm256_maskload_ps(src + ow, m);
                if (rr)
                    v = _mm256_add_ps(v, _mm256_maskload_ps(rr + ow, m));
                _mm256_maskstore_ps(yr + ow, m, trtl_act8(v, act, alpha, beta));
            }
        }
    }
}

/* Step 1: the group's input channels into zero-padded phase planes.  Every item writes the same (interior)
 * positions, and nothing but zeros anywhere else (the vector copies' spills), so the padding is zeroed only for a
 * slot's first item of a run of items (`zero`): later items find it still zero. */
static void build_planes(const gd_job *j, const float *xg, float *planes, int zero)
{
    const trtl_conv_geom *g = j->g;
    const gd_layout *l = &j->l;
    const int64_t H = g->in[1], W = g->in[2], pt = g->pad[1], pl = g->pad[2], s1 = l->s1, s2 = l->s2;
    if (zero)
        memset(planes, 0, (size_t)(g->Cg * s1 * s2 * l->plane) * sizeof(float));
    int64_t lo, hi; /* padded columns [lo, hi) are inside the rows */
    trtl_conv_row_span(-pl, 1, W, l->wp, &lo, &hi);
    /* padded rows r = ih + pt inside the image: [r0, r1); row r goes to phase plane r % s1, row r / s1 (counted
     * along, no division per row) */
    const int64_t r0 = pt > 0 ? pt : 0, r1 = H + pt < l->hp ? H + pt : l->hp;
    for (int64_t c = 0; c < g->Cg; c++) {
        const float *xc = xg + c * g->in_sp;
        float *pc = planes + c * s1 * s2 * l->plane;
        int64_t a = r0 % s1, i = r0 / s1;
        for (int64_t r = r0; r < r1; r++) {
            const float *row = xc + (r - pt) * W;
            float *dst = pc + a * s2 * l->plane + i * l->wh;
            if (s2 == 1 && j->st->vec) {
                row_copy(row - pl, lo, hi, dst, j->x, j->x_end);
            } else if (s2 == 1) {
                memcpy(dst + lo, row + lo - pl, (size_t)(hi - lo) * sizeof(float));
            } else if (s2 == 2 && j->st->vec) {
                row_phase2(row - pl, lo, hi, dst, l->plane, j->x, j->x_end);
            } else {
                /* column phase b takes padded columns u = b, b + s2, ... of [lo, hi) */
                for (int64_t b = 0; b < s2; b++) {
                    float *db = dst + b * l->plane;
                    int64_t u = lo + ((b - lo % s2) + s2) % s2, jd = u / s2;
                    for (const float *src = row + u - pl; u < hi; u += s2, src += s2, jd++)
                        db[jd] = *src;
                }
            }
            if (++a == s1) {
                a = 0;
                i++;
            }
        }
    }
}

/* Step 2, the three ISA variants: 8 output channels of grid positions [q0, q1) into tmp[8][Q]. */
__attribute__((target("avx512f"), always_inline)) static inline void tile512(const float *pl, const int32_t *off,
                                                                              int64_t ntaps, const float *w,
                                                                              const float *b8, float *o, int64_t ldo,
                                                                              const int V)
{
    __m512 acc[GD_KB][3];
    trtl_tap_tile16(pl, off, ntaps, w, GD_KB, b8, V, acc);
#pragma GCC unroll 8
    for (int k = 0; k < GD_KB; k++)
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            _mm512_storeu_ps(o + k * ldo + 16 * v, acc[k][v]);
}

__attribute__((target("avx512f"))) static void block512(const float *pl, const int32_t *off, int64_t ntaps,
                                                         const float *w, const float *b8, float *o, int64_t ldo,
                                                         int64_t nq)
{
    int64_t q = 0;
    for (; q + 48 <= nq; q += 48)
        tile512(pl + q, off, ntaps, w, b8, o + q, ldo, 3);
    if (nq - q > 16)
        tile512(pl + q, off, ntaps, w, b8, o + q, ldo, 2), q += 32;
    if (q < nq)
        tile512(pl + q, off, ntaps, w, b8, o + q, ldo, 1);
}

/* AVX2: 4 output channels (half h of the block of 8) x V vectors of 8 grid positions, 4 * V accumulators; per tap
 * V input loads and 4 broadcast weights for 4 * V FMAs (8 x 1 took 9 loads for 8). */
__attribute__((target("avx2,fma"), always_inline)) static inline void tile256(const float *pl, const int32_t *off,
                                                                              int64_t ntaps, const float *w,
                                                                              const float *b4, float *o, int64_t ldo,
                                                                              const int V)
{
    __m256 acc[4][3];
    trtl_tap_tile8(pl, off, ntaps, w, GD_KB, b4, V, acc);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
#pragma GCC unroll 3
        for (int v = 0; v < V; v++)
            _mm256_storeu_ps(o + k * ldo + 8 * v, acc[k][v]);
}

__attribute__((target("avx2,fma"))) static void block256(const float *pl, const int32_t *off, int64_t ntaps,
                                                          const float *w, const float *b8, float *o, int64_t ldo,
                                                          int64_t nq)
{
    for (int h = 0; h < GD_KB; h += 4) {
        int64_t q = 0;
        for (; q + 24 <= nq; q += 24)
            tile256(pl + q, off, ntaps, w + h, b8 + h, o + h * ldo + q, ldo, 3);
        if (nq - q > 8)
            tile256(pl + q, off, ntaps, w + h, b8 + h, o + h * ldo + q, ldo, 2), q += 16;
        if (q < nq)
            tile256(pl + q, off, ntaps, w + h, b8 + h, o + h * ldo + q, ldo, 1);
    }
}

static void block_portable(const float *pl, const int32_t *off, int64_t ntaps, const float *w, const float *b8,
                           float *o, int64_t ldo, int64_t nq)
{
    for (int64_t q = 0; q < nq; q++) {
        float acc[GD_KB];
        for (int k = 0; k < GD_KB; k++)
            acc[k] = b8[k];
        const float *wt = w;
        for (int64_t t = 0; t < ntaps; t++, wt += GD_KB) {
            const float xv = pl[q + off[t]];
            for (int k = 0; k < GD_KB; k++)
                acc[k] += xv * wt[k];
        }
        for (int k = 0; k < GD_KB; k++)
            o[k * ldo + q] = acc[k];
    }
}

/* Items [it0, it1) (trtl_runs_for: (image, group)) on the phase planes of scratch slot `slot`. */
static void run_slots(void *ctx, int64_t slot, int64_t run, int64_t it0, int64_t it1)
{
    const gd_job *j = ctx;
    const trtl_conv_geom *g = j->g;
    const gd_state *st = j->st;
    const gd_layout *l = &j->l;
    const int64_t ntaps = g->Cg * g->kvol, OH = g->out[1], OW = g->out[2], P = g->P;
    const int64_t nq = g->out[1] * l->wh; /* grid positions up to the last output row's end */
    float *planes = j->base + slot * l->slot, *tmp = planes + g->Cg * l->s1 * l->s2 * l->plane;
    (void)run;
    for (int64_t it = it0; it < it1; it++) {
        const int64_t n = it / g->G, grp = it % g->G;
        build_planes(j, j->x + (n * g->C + grp * g->Cg) * g->in_sp, planes, it == it0);
        for (int64_t kb = 0; kb < st->nkb; kb++) {
            const int64_t k0 = kb * GD_KB, kn = g->Kg - k0 < GD_KB ? g->Kg - k0 : GD_KB;
            const float *w = st->w + (grp * st->nkb + kb) * ntaps * GD_KB;
            float b8[GD_KB] = {0};
            for (int64_t k = 0; k < kn; k++)
                b8[k] = j->bias ? j->bias[grp * g->Kg + k0 + k] : 0.0f;
            if (st->isa == GD_AVX512)
                block512(planes, j->off, ntaps, w, b8, tmp, l->q, nq);
            else if (st->isa == GD_AVX2)
                block256(planes, j->off, ntaps, w, b8, tmp, l->q, nq);
            else
                block_portable(planes, j->off, ntaps, w, b8, tmp, l->q, nq);
            /* step 3: the grid's valid columns into the output (+ residual), then the activation */
            const int64_t ch = n * g->K + grp * g->Kg + k0;
            if (st->vec) {
                for (int64_t k = 0; k < kn; k++)
                    store_channel(tmp + k * l->q, l->wh, j->res ? j->res + (ch + k) * P : NULL, j->y + (ch + k) * P,
                                  OH, OW, j->fast_act, j->alpha, j->beta, j->exact);
                if (j->fast_act == TRTL_ACT_NONE)
                    trtl_epi_act(j->epi, j->y + ch * P, kn * P);
                continue;
            }
            for (int64_t k = 0; k < kn; k++) {
                float *yk = j->y + (ch + k) * P;
                const float *rk = j->res ? j->res + (ch + k) * P : NULL;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const float *src = tmp + k * l->q + oh * l->wh;
                    if (rk)
                        for (int64_t ow = 0; ow < OW; ow++)
                            yk[oh * OW + ow] = src[ow] + rk[oh * OW + ow];
                    else
                        memcpy(yk + oh * OW, src, (size_t)OW * sizeof(float));
                }
            }
            trtl_epi_act(j->epi, j->y + ch * P, kn * P);
        }
    }
}

static int64_t max_slots(void) { return trtl_scratch_slots_all(GD_MAX_SLOTS); }

static void gd_unpack(const trtl_node *nd, const void *state, void *dst);

static trtl_status gd_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const gd_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!st || st->K != g.K || st->G != g.G || st->Cg != g.Cg || st->kvol != g.kvol)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': convolution.grouped_direct run without its weights",
                          nd->name);
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    gd_job *j = NULL;
    gd_layout l;
    int ok = fits(&g);
    if (ok)
        layout(&g, &l);
    const size_t job_bytes = (sizeof(gd_job) + 63) / 64 * 64;
    if (!ok || !a->scratch || a->scratch_size < job_bytes + (size_t)l.slot * sizeof(float) + 128)
        return trtl_conv_reference_fallback(a, res, gd_unpack); /* a shape the direct path does not take */
    /* the job (with its tap offsets) at the start of the scratch, the slots after it */
    j = (gd_job *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    memset(j, 0, sizeof *j);
    j->g = &g;
    j->st = st;
    j->l = l;
    j->epi = &nd->epi;
    j->x = (const float *)a->in[0].data;
    j->x_end = j->x + g.N * g.C * g.in_sp;
    j->bias = nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL;
    j->res = res;
    j->y = (float *)a->out[0].data;
    j->base = (float *)((char *)j + job_bytes);
    j->fast_act = trtl_act_is_fast(nd->epi.act) ? nd->epi.act : TRTL_ACT_NONE;
    const uintptr_t r0 = (uintptr_t)res, y0 = (uintptr_t)j->y, bytes = (uintptr_t)(g.N * g.K * g.P) * sizeof(float);
    j->exact = res && r0 < y0 + bytes && y0 < r0 + bytes;
    j->alpha = nd->epi.alpha;
    j->beta = nd->epi.beta;
    for (int64_t c = 0, t = 0; c < g.Cg; c++)
        for (int64_t kh = 0; kh < g.k[1]; kh++)
            for (int64_t kw = 0; kw < g.k[2]; kw++, t++) {
                const int64_t dh = kh * g.dl[1], dw = kw * g.dl[2];
                j->off[t] = (int32_t)((c * l.s1 * l.s2 + (dh % l.s1) * l.s2 + dw % l.s2) * l.plane +
                                      (dh / l.s1) * l.wh + dw / l.s2);
            }
    const size_t avail = (a->scratch_size - job_bytes - 128) / sizeof(float);
    int64_t slots = trtl_threads_for(a->pool, 2.0 * (double)g.N * (double)g.K * (double)g.Cg * (double)g.kvol *
                                                  (double)g.P);
    if ((int64_t)(avail / (size_t)l.slot) < slots)
        slots = (int64_t)(avail / (size_t)l.slot);
    const trtl_runs runs = trtl_runs_plan(a->pool, slots, g.N * g.G);
    trtl_runs_for(a->pool, &runs, run_slots, j);
    return TRTL_OK;
}

static size_t gd_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (!fits(&g))
        return trtl_conv_unpacked_bytes(nd); /* the reference fallback rebuilds the plain weights there */
    gd_layout l;
    layout(&g, &l);
    return (sizeof(gd_job) + 63) / 64 * 64 + (size_t)(max_slots() * l.slot) * sizeof(float) + 128;
}

static int gd_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups < 2 || p->kernel_size.nb_dims != 2)
        return 0;
    trtl_conv_geom g;
    if (!trtl_conv_float_applies(nd, &in_dims[0], &g))
        return 0;
    return fits(&g);
}

static size_t gd_state_bytes(const void *state)
{
    const gd_state *st = state;
    return sizeof *st + st->packed_bytes;
}

static void gd_release(void *state)
{
    gd_state *st = state;
    if (st)
        free(st->w);
    free(st);
}

static trtl_status gd_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    int64_t kvol = 1;
    for (int i = 0; i < p->kernel_size.nb_dims; i++)
        kvol *= p->kernel_size.d[i];
    if (p->num_groups < 1 || p->num_output_maps < 1 || p->num_output_maps % p->num_groups || kvol < 1 ||
        p->kernel.type != TRTL_FLOAT || p->kernel.count % ((int64_t)p->num_output_maps * kvol))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit %d output maps in %d groups",
                          nd->name, (long long)p->kernel.count, p->num_output_maps, p->num_groups);
    gd_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->isa = trtl_cpu_has(TRTL_CPU_AVX512F)              ? GD_AVX512
              : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? GD_AVX2
                                                           : GD_PORTABLE;
    st->vec = st->isa != GD_PORTABLE && trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA);
    st->K = p->num_output_maps;
    st->G = p->num_groups;
    st->Kg = st->K / st->G;
    st->kvol = kvol;
    st->Cg = p->kernel.count / st->K / kvol;
    st->nkb = ceil_div(st->Kg, GD_KB);
    const int64_t ntaps = st->Cg * kvol;
    const size_t bytes = (size_t)(st->G * st->nkb * ntaps * GD_KB) * sizeof(float);
    st->w = calloc(1, bytes ? bytes : 1);
    st->packed_bytes = bytes;
    if (!st->w) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory arranging %zu bytes of weights",
                          nd->name, bytes);
    }
    /* w[g][kb][t][k] = W[g*Kg + kb*8 + k][t], t = (c, kh, kw); zero past Kg */
    const float *w = (const float *)p->kernel.values;
    for (int64_t grp = 0; grp < st->G; grp++)
        for (int64_t k = 0; k < st->Kg; k++)
            for (int64_t t = 0; t < ntaps; t++)
                st->w[((grp * st->nkb + k / GD_KB) * ntaps + t) * GD_KB + k % GD_KB] =
                    w[(grp * st->Kg + k) * ntaps + t];
    *state = st;
    return TRTL_OK;
}

/* W[grp*Kg + k][t] read back from the arranged weights (exact: arranging only moves floats); dst at any
 * byte offset. */
static void gd_unpack(const trtl_node *nd, const void *state, void *dst)
{
    const gd_state *st = state;
    const int64_t ntaps = st->Cg * st->kvol;
    unsigned char *w = dst;
    (void)nd;
    for (int64_t grp = 0; grp < st->G; grp++)
        for (int64_t k = 0; k < st->Kg; k++)
            for (int64_t t = 0; t < ntaps; t++)
                memcpy(w + (size_t)((grp * st->Kg + k) * ntaps + t) * sizeof(float),
                       &st->w[((grp * st->nkb + k / GD_KB) * ntaps + t) * GD_KB + k % GD_KB], sizeof(float));
}

const trtl_kernel trtl_kernel_conv_grouped_direct = {
    .name = "convolution.grouped_direct",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .applies = gd_applies,
    .prepare = gd_prepare,
    .release = gd_release,
    .state_bytes = gd_state_bytes,
    .scratch = gd_scratch,
    .run = gd_run,
    .unpack = gd_unpack,
};
