/*
 * normalization.c -- "normalization.rows": the INormalizationLayer when every normalized slice
 * is one contiguous row of L floats:
 *   - layer norm: num_groups 1, axes a trailing block [first, rank);
 *   - instance norm: num_groups 1, axes [2, rank);
 *   - group norm: num_groups G > 1, axes covering [2, rank) (dim 1 splits into G groups of C/G
 *     channels, which join the row).
 * Per row: mean (vector partial sums), biased variance as the mean of (x - mean)^2 (a second pass,
 * so no cancellation), rstd = 1 / sqrt(var + eps) in double, then y = (x - mean) * (rstd * s) + b.
 * The affine part comes in two forms:
 *   - VEC: scale/bias vary only inside the row (layer norm's [1, .., 1, C]): expanded once per
 *     run into scratch as two L-float vectors;
 *   - CHAN: scale/bias vary only along dim 1 (per channel, or per group in TensorRT 8.6's form)
 *     and the row is rows of channels: one scalar pair per channel segment of the row.
 * Anything else -- statistics over non-contiguous axes, scale varying along other kept dims --
 * is left to the reference kernel (applies() says 0; run() on other shapes calls it).
 * AVX-512 and AVX2+FMA row loops are picked at run time; rows are split over the pool.
 * NaN/Inf: any NaN or Inf in a row makes its mean or variance NaN/Inf and its outputs NaN, as the
 * reference's arithmetic does.
 * Codes out (out_quant 2, builder/passes/norm_codes.c: a layer norm whose only reader was a QuantizeLinear): each
 * y is computed as above, by the same operations, and quantized in the register as quantize.simd does it (the IEEE
 * quotient y / scale, round half to even, the clamp with NaN to the lowest code, + zero point), so the codes are
 * those of "normalization.rows -> quantize.simd" bit for bit (the scalar tails through trtl_q_value, the
 * reference's quantizer); one pass writing a quarter of the bytes instead of two passes.
 */
#include <immintrin.h>
#include <math.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/ref/qdq_math.h"
#include "kernels/x86/q8_avx2.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

enum { ISA_C = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };
enum { MODE_NONE = 0, MODE_VEC = 1, MODE_CHAN = 2 };

typedef struct norm_geom {
    int mode;
    int first;        /* first normalized dim (G == 1), 2 for CHAN */
    int64_t rows, L;  /* rows of L contiguous floats */
    int64_t seg;      /* CHAN: floats per channel segment (L / seg channels a row) */
    int64_t C, cpr;   /* CHAN: channels, channels per row */
    int per_group_s, per_group_b;
    int64_t s1, b1;   /* CHAN: scale's / bias's dim 1 */
} norm_geom;

/* dims of p except `skip` are all 1, from `from` on */
static int ones_from(const trtl_dims *p, int from, int skip)
{
    for (int d = from; d < p->nb_dims; d++)
        if (d != skip && p->d[d] != 1)
            return 0;
    return 1;
}

static int geom(const trtl_normalization_params *p, const trtl_dims *x, const trtl_dims *s, const trtl_dims *b,
                norm_geom *g)
{
    int r = x->nb_dims;
    int64_t G = p->num_groups;
    g->mode = MODE_NONE;
    if (r < 1 || s->nb_dims != r || b->nb_dims != r)
        return 0;
    for (int d = 0; d < r; d++)
        if (x->d[d] < 0)
            return 0;
    if (G <= 1) {
        uint32_t axes = p->axes;
        if (!axes || axes >> r)
            return 0;
        int first = 0;
        while (!(axes >> first & 1u))
            first++;
        if (axes != ((1u << r) - 1) - ((1u << first) - 1))
            return 0;
        g->first = first;
        g->rows = trtl_volume_range(x, 0, first);
        g->L = trtl_volume_range(x, first, r);
        for (int d = first; d < r; d++) /* scale/bias broadcast inside the row */
            if ((s->d[d] != 1 && s->d[d] != x->d[d]) || (b->d[d] != 1 && b->d[d] != x->d[d]))
                return 0;
        int kept_ones = 1;
        for (int d = 0; d < first; d++)
            kept_ones &= s->d[d] == 1 && b->d[d] == 1;
        if (kept_ones) {
            g->mode = MODE_VEC;
            return 1;
        }
        if (first != 2 || s->d[0] != 1 || b->d[0] != 1 || !ones_from(s, 2, -1) || !ones_from(b, 2, -1) ||
            (s->d[1] != 1 && s->d[1] != x->d[1]) || (b->d[1] != 1 && b->d[1] != x->d[1]))
            return 0;
        g->C = x->d[1];
        g->cpr = 1;
        g->seg = g->L;
        g->per_group_s = g->per_group_b = 0;
        g->s1 = s->d[1];
        g->b1 = b->d[1];
        g->mode = MODE_CHAN;
        return 1;
    }
    /* group norm: [2, rank) normalized, bit 0 not */
    if (r < 2 || (p->axes & 1u) || p->axes >> r || x->d[1] % G)
        return 0;
    for (int d = 2; d < r; d++)
        if (!(p->axes >> d & 1u))
            return 0;
    g->C = x->d[1];
    g->per_group_s = s->d[1] == G && G != g->C;
    g->per_group_b = b->d[1] == G && G != g->C;
    if (s->d[0] != 1 || b->d[0] != 1 || !ones_from(s, 2, -1) || !ones_from(b, 2, -1) ||
        (s->d[1] != 1 && s->d[1] != g->C && !g->per_group_s) || (b->d[1] != 1 && b->d[1] != g->C && !g->per_group_b))
        return 0;
    g->first = 2;
    g->s1 = s->d[1];
    g->b1 = b->d[1];
    g->cpr = g->C / G;
    g->seg = trtl_volume_range(x, 2, r);
    g->rows = x->d[0] * G;
    g->L = g->cpr * g->seg;
    g->mode = MODE_CHAN;
    return 1;
}

/* ---- row loops ------------------------------------------------------------------------------- */

/* sum of x (sq == 0) or of (x - m)^2 (sq == 1), portable */
static float red_c(const float *x, int64_t n, float m, int sq)
{
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            float t = x[i + k] - m;
            s[k] += sq ? t * t : x[i + k];
        }
    float acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) {
        float t = x[i] - m;
        acc += sq ? t * t : x[i];
    }
    return acc;
}

__attribute__((target("avx2,fma"))) static float red_avx2(const float *x, int64_t n, float m, int sq)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, mv = _mm256_set1_ps(m);
    int64_t i = 0;
    if (sq) {
        for (; i + 32 <= n; i += 32) {
            __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv), t1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mv);
            __m256 t2 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 16), mv),
                   t3 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 24), mv);
            a0 = _mm256_fmadd_ps(t0, t0, a0);
            a1 = _mm256_fmadd_ps(t1, t1, a1);
            a2 = _mm256_fmadd_ps(t2, t2, a2);
            a3 = _mm256_fmadd_ps(t3, t3, a3);
        }
        for (; i + 8 <= n; i += 8) {
            __m256 t = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv);
            a0 = _mm256_fmadd_ps(t, t, a0);
        }
    } else {
        for (; i + 32 <= n; i += 32) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
        }
        for (; i + 8 <= n; i += 8)
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    }
    __m256 a = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    float acc = _mm_cvtss_f32(h);
    for (; i < n; i++) {
        float t = x[i] - m;
        acc += sq ? t * t : x[i];
    }
    return acc;
}

__attribute__((target("avx512f"))) static float red_avx512(const float *x, int64_t n, float m, int sq)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, mv = _mm512_set1_ps(m);
    int64_t i = 0;
    if (sq) {
        for (; i + 64 <= n; i += 64) {
            __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), mv), t1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), mv);
            __m512 t2 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 32), mv),
                   t3 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 48), mv);
            a0 = _mm512_fmadd_ps(t0, t0, a0);
            a1 = _mm512_fmadd_ps(t1, t1, a1);
            a2 = _mm512_fmadd_ps(t2, t2, a2);
            a3 = _mm512_fmadd_ps(t3, t3, a3);
        }
        for (; i + 16 <= n; i += 16) {
            __m512 t = _mm512_sub_ps(_mm512_loadu_ps(x + i), mv);
            a0 = _mm512_fmadd_ps(t, t, a0);
        }
        if (i < n) {
            __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
            __m512 t = _mm512_maskz_sub_ps(k, _mm512_maskz_loadu_ps(k, x + i), mv);
            a1 = _mm512_fmadd_ps(t, t, a1);
        }
    } else {
        for (; i + 64 <= n; i += 64) {
            a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
            a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
            a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
            a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
        }
        for (; i + 16 <= n; i += 16)
            a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
        if (i < n)
            a1 = _mm512_add_ps(a1, _mm512_maskz_loadu_ps((__mmask16)((1u << (n - i)) - 1), x + i));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

/* y = ((x - m) * a0) * a[i] + c[i] (vectors a, c: a0 is rstd) or (x - m) * a0 + c0 (a == NULL: a0 is
 * rstd * scale) */
static void affine_c(const float *x, float *y, int64_t n, float m, const float *a, const float *c, float a0, float c0)
{
    if (a)
        for (int64_t i = 0; i < n; i++)
            y[i] = ((x[i] - m) * a0) * a[i] + c[i];
    else
        for (int64_t i = 0; i < n; i++)
            y[i] = (x[i] - m) * a0 + c0;
}

__attribute__((target("avx2,fma"))) static void affine_avx2(const float *x, float *y, int64_t n, float m,
                                                            const float *a, const float *c, float a0, float c0)
{
    __m256 mv = _mm256_set1_ps(m), av = _mm256_set1_ps(a0), cv = _mm256_set1_ps(c0);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 t = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv);
        if (a)
            _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_mul_ps(t, av), _mm256_loadu_ps(a + i), _mm256_loadu_ps(c + i)));
        else
            _mm256_storeu_ps(y + i, _mm256_fmadd_ps(t, av, cv));
    }
    for (; i < n; i++)
        y[i] = a ? ((x[i] - m) * a0) * a[i] + c[i] : (x[i] - m) * a0 + c0;
}

__attribute__((target("avx512f"))) static void affine_avx512(const float *x, float *y, int64_t n, float m,
                                                            const float *a, const float *c, float a0, float c0)
{
    __m512 mv = _mm512_set1_ps(m), av = _mm512_set1_ps(a0), cv = _mm512_set1_ps(c0);
    int64_t i = 0;
    for (; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mv);
        if (a)
            _mm512_mask_storeu_ps(y + i, k,
                                  _mm512_fmadd_ps(_mm512_mul_ps(t, av), _mm512_maskz_loadu_ps(k, a + i),
                                                  _mm512_maskz_loadu_ps(k, c + i)));
        else
            _mm512_mask_storeu_ps(y + i, k, _mm512_fmadd_ps(t, av, cv));
    }
}

/* ---- codes out: the affine forms above, each value quantized as quantize.simd does ---------------- */

typedef struct norm_q {
    float scale;
    int32_t zp, type; /* type: TRTL_INT8 / TRTL_UINT8 */
} norm_q;

static inline void store_code(void *q, int64_t i, float v, const norm_q *p)
{
    const int32_t c = trtl_q_value(v, p->scale, p->zp, p->type);
    if (p->type == TRTL_UINT8)
        ((uint8_t *)q)[i] = (uint8_t)c;
    else
        ((int8_t *)q)[i] = (int8_t)c;
}

static void affine_q_c(const float *x, void *q, int64_t n, float m, const float *a, const float *c, float a0, float c0,
                       const norm_q *p)
{
    for (int64_t i = 0; i < n; i++)
        store_code(q, i, a ? ((x[i] - m) * a0) * a[i] + c[i] : (x[i] - m) * a0 + c0, p);
}

__attribute__((target("avx2,fma"))) static void affine_q_avx2(const float *x, void *q, int64_t n, float m,
                                                              const float *a, const float *c, float a0, float c0,
                                                              const norm_q *p)
{
    const __m256 mv = _mm256_set1_ps(m), av = _mm256_set1_ps(a0), cv = _mm256_set1_ps(c0);
    const __m256 vs = _mm256_set1_ps(p->scale), lo = _mm256_set1_ps((float)(trtl_q_min(p->type) - p->zp)),
                 hi = _mm256_set1_ps((float)(trtl_q_max(p->type) - p->zp));
    const __m256i vz = _mm256_set1_epi32(p->zp);
    const int u8 = p->type == TRTL_UINT8;
    uint8_t *qb = q;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 t = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv), v;
        if (a)
            v = _mm256_fmadd_ps(_mm256_mul_ps(t, av), _mm256_loadu_ps(a + i), _mm256_loadu_ps(c + i));
        else
            v = _mm256_fmadd_ps(t, av, cv);
        __m256i k = trtl_q8_codes_avx2(v, vs, lo, hi, vz); /* codes in range: pack to bytes */
        __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(k), _mm256_extracti128_si256(k, 1));
        h = u8 ? _mm_packus_epi16(h, h) : _mm_packs_epi16(h, h);
        _mm_storel_epi64((__m128i *)(void *)(qb + i), h);
    }
    affine_q_c(x + i, qb + i, n - i, m, a ? a + i : NULL, a ? c + i : NULL, a0, c0, p); /* one-byte codes */
}

__attribute__((target("avx512f"))) static void affine_q_avx512(const float *x, void *q, int64_t n, float m,
                                                              const float *a, const float *c, float a0, float c0,
                                                              const norm_q *p)
{
    const __m512 mv = _mm512_set1_ps(m), av = _mm512_set1_ps(a0), cv = _mm512_set1_ps(c0);
    const __m512 vs = _mm512_set1_ps(p->scale), lo = _mm512_set1_ps((float)(trtl_q_min(p->type) - p->zp)),
                 hi = _mm512_set1_ps((float)(trtl_q_max(p->type) - p->zp));
    const __m512i vz = _mm512_set1_epi32(p->zp);
    uint8_t *qb = q;
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mv), v;
        if (a)
            v = _mm512_fmadd_ps(_mm512_mul_ps(t, av), _mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, c + i));
        else
            v = _mm512_fmadd_ps(t, av, cv);
        __m512 r = _mm512_roundscale_ps(_mm512_div_ps(v, vs), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        r = _mm512_min_ps(_mm512_max_ps(r, lo), hi); /* max(NaN, lo) is lo */
        /* codes in range: the low byte is the code (int8 or uint8 bits) */
        _mm512_mask_cvtepi32_storeu_epi8(qb + i, k, _mm512_add_epi32(_mm512_cvtps_epi32(r), vz));
    }
}

/* ---- driver ---------------------------------------------------------------------------------- */

typedef struct norm_job {
    const float *x, *s, *b; /* s, b: VEC: expanded L-vectors; CHAN: the input tensors */
    void *y;                /* floats, or codes (codes) */
    norm_geom g;
    double eps;
    int isa;
    int codes;              /* out_quant 2: y holds codes of q */
    norm_q q;
} norm_job;

static float reduce_row(int isa, const float *x, int64_t n, float m, int sq)
{
    return isa == ISA_AVX512 ? red_avx512(x, n, m, sq) : isa == ISA_AVX2 ? red_avx2(x, n, m, sq) : red_c(x, n, m, sq);
}

static void affine_row(const norm_job *j, const float *x, int64_t o, int64_t n, float m, const float *a,
                       const float *c, float a0, float c0)
{
    const int isa = j->isa;
    if (j->codes) {
        void *q = (uint8_t *)j->y + o;
        if (isa == ISA_AVX512)
            affine_q_avx512(x, q, n, m, a, c, a0, c0, &j->q);
        else if (isa == ISA_AVX2)
            affine_q_avx2(x, q, n, m, a, c, a0, c0, &j->q);
        else
            affine_q_c(x, q, n, m, a, c, a0, c0, &j->q);
        return;
    }
    float *y = (float *)j->y + o;
    if (isa == ISA_AVX512)
        affine_avx512(x, y, n, m, a, c, a0, c0);
    else if (isa == ISA_AVX2)
        affine_avx2(x, y, n, m, a, c, a0, c0);
    else
        affine_c(x, y, n, m, a, c, a0, c0);
}

static void rows_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const norm_job *j = ctx;
    const int64_t L = j->g.L;
    for (int64_t k = begin; k < end; k++) {
        const float *x = j->x + k * L;
        float mean = (float)((double)reduce_row(j->isa, x, L, 0.0f, 0) / (double)L);
        double var = (double)reduce_row(j->isa, x, L, mean, 1) / (double)L;
        float rstd = (float)(1.0 / sqrt(var + j->eps));
        if (j->g.mode == MODE_VEC) {
            affine_row(j, x, k * L, L, mean, j->s, j->b, rstd, 0.0f);
        } else {
            int64_t grp = k % (j->g.C / j->g.cpr);
            for (int64_t c = 0; c < j->g.cpr; c++) {
                int64_t ch = grp * j->g.cpr + c;
                float sv = j->s[j->g.per_group_s ? grp : j->g.s1 == 1 ? 0 : ch];
                float bv = j->b[j->g.per_group_b ? grp : j->g.b1 == 1 ? 0 : ch];
                affine_row(j, x + c * j->g.seg, k * L + c * j->g.seg, j->g.seg, mean, NULL, NULL, rstd * sv, bv);
            }
        }
    }
}

/* Expands a scale/bias tensor that broadcasts inside the row into L floats. */
static void expand(const float *p, const trtl_dims *pd, const trtl_dims *x, int first, float *out)
{
    int r = x->nb_dims;
    int64_t st[TRTL_MAX_DIMS], s = 1;
    for (int d = r - 1; d >= 0; d--) {
        st[d] = pd->d[d] == 1 ? 0 : s;
        s *= pd->d[d];
    }
    int64_t L = trtl_volume_range(x, first, r);
    for (int64_t i = 0; i < L; i++) {
        int64_t rem = i, off = 0;
        for (int d = r - 1; d >= first; d--) {
            off += (rem % x->d[d]) * st[d];
            rem /= x->d[d];
        }
        out[i] = p[off];
    }
}

static int norm_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    norm_geom g;
    return n->n_in == 3 && geom(&n->p.norm, &in_dims[0], &in_dims[1], &in_dims[2], &g);
}

static size_t norm_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    norm_geom g;
    if (!geom(&n->p.norm, &in[0].dims, &in[1].dims, &in[2].dims, &g) || g.mode != MODE_VEC)
        return 0;
    return (size_t)(2 * g.L) * sizeof(float); /* expanded scale and bias */
}

static trtl_status norm_run(const trtl_kernel_args *a)
{
    norm_job j;
    if (!geom(&a->node->p.norm, &a->in[0].dims, &a->in[1].dims, &a->in[2].dims, &j.g))
        return trtl_ref_normalization(a);
    if (j.g.rows == 0 || j.g.L == 0)
        return TRTL_OK;
    const trtl_normalization_params *np = &a->node->p.norm;
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.eps = (double)np->epsilon;
    j.codes = np->out_quant == 2;
    j.q = (norm_q){np->out_scale, np->out_zero_point, np->out_type};
    if (j.codes && a->out[0].dtype != (trtl_dtype)np->out_type)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': the codes output is not %s (the plan is corrupt)",
                          a->node->name, trtl_dtype_name((trtl_dtype)np->out_type));
    j.isa = trtl_cpu_has(TRTL_CPU_AVX512F) ? ISA_AVX512 : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? ISA_AVX2 : ISA_C;
    if (j.g.mode == MODE_VEC) {
        float *sc = a->scratch;
        if (!sc || a->scratch_size < (size_t)(2 * j.g.L) * sizeof(float))
            return trtl_ref_normalization(a); /* shapes beyond those the scratch was sized for */
        expand(a->in[1].data, &a->in[1].dims, &a->in[0].dims, j.g.first, sc);
        expand(a->in[2].data, &a->in[2].dims, &a->in[0].dims, j.g.first, sc + j.g.L);
        j.s = sc;
        j.b = sc + j.g.L;
    } else {
        j.s = a->in[1].data;
        j.b = a->in[2].data;
    }
    int64_t grain = j.g.L >= 8192 ? 1 : 8192 / j.g.L;
    trtl_parallel_for(a->pool, j.g.rows, grain, rows_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_normalization_rows = {
    .name = "normalization.rows",
    .op = TRTL_OP_NORMALIZATION,
    .applies = norm_applies,
    .scratch = norm_scratch,
    .run = norm_run,
};
