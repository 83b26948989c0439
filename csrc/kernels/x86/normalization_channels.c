/*
 * normalization_channels.c -- "normalization.channels": layer normalization over one axis that is not the last,
 * e.g. over the channels of an NCHW tensor (ConvNeXt's LayerNorm2d, which PyTorch exports as permute -> LayerNorm ->
 * permute back and the fold_transpose pass turns into one normalization over dim 1 of the NCHW tensor).
 *
 * x is [outer, C, inner] around the normalized axis a (num_groups 1, axes = {a}, a < rank - 1); scale and bias are
 * 1 in every dim but a (C or 1 there).  Each (outer index, pixel) is one normalized slice of C values inner floats
 * apart, so the statistics of 8 consecutive pixels fill one AVX2 vector: per block of up to 32 pixels, the mean
 * over the C channel rows (float sums, as "normalization.rows" sums its rows), the biased variance as the mean of
 * (x - mean)^2 (a second pass, no cancellation), rstd = 1 / sqrt(var + eps), then
 * y = (x - mean) * (rstd * s[c]) + b[c]; the block's C x 32 floats stay in L1 over the three passes.  Pixels past
 * the last whole vector and CPUs without AVX2 + FMA take the same formula one pixel at a time.  Items (outer index,
 * pixel block) are split over the pool.  NaN / Inf in a slice make its mean or variance NaN / Inf and its outputs
 * NaN, as the reference's arithmetic does.
 */
#include <immintrin.h>
#include <math.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define PB 32 /* pixels a block: 4 AVX2 vectors */

typedef struct nc_geom {
    int axis;
    int64_t outer, C, inner;
} nc_geom;

typedef struct nc_job {
    nc_geom g;
    const float *x, *s, *b;
    float *y;
    int64_t s_step, b_step; /* 1: per channel, 0: one value */
    int64_t blocks;         /* pixel blocks per outer index */
    float eps;
    int avx2;
} nc_job;

static int nc_geometry(const trtl_normalization_params *p, const trtl_dims *x, const trtl_dims *s, const trtl_dims *b,
                       nc_geom *g)
{
    const int r = x->nb_dims;
    if (p->num_groups > 1 || r < 2 || s->nb_dims != r || b->nb_dims != r || !p->axes || (p->axes & (p->axes - 1u)))
        return 0;
    int a = 0;
    while (!(p->axes >> a & 1u))
        a++;
    if (a >= r - 1)
        return 0; /* the last axis: contiguous rows ("normalization.rows") */
    for (int d = 0; d < r; d++) {
        if (x->d[d] < 0)
            return 0;
        if (d != a && (s->d[d] != 1 || b->d[d] != 1))
            return 0;
    }
    if ((s->d[a] != 1 && s->d[a] != x->d[a]) || (b->d[a] != 1 && b->d[a] != x->d[a]))
        return 0;
    g->axis = a;
    g->outer = trtl_volume_range(x, 0, a);
    g->C = x->d[a];
    g->inner = trtl_volume_range(x, a + 1, r);
    return 1;
}

/* One pixel: the slice x[c * inner], c < C. */
static void nc_pixel(const nc_job *j, const float *x, float *y)
{
    const int64_t C = j->g.C, in = j->g.inner;
    float sum = 0.0f;
    for (int64_t c = 0; c < C; c++)
        sum += x[c * in];
    const float mean = sum / (float)C;
    float sq = 0.0f;
    for (int64_t c = 0; c < C; c++) {
        const float t = x[c * in] - mean;
        sq += t * t;
    }
    const float rstd = 1.0f / sqrtf(sq / (float)C + j->eps);
    for (int64_t c = 0; c < C; c++)
        y[c * in] = (x[c * in] - mean) * (rstd * j->s[c * j->s_step]) + j->b[c * j->b_step];
}

/* NV vectors of 8 consecutive pixels. */
__attribute__((target("avx2,fma"), always_inline)) static inline void nc_vec(const nc_job *j, const float *x, float *y,
                                                                              const int NV)
{
    const int64_t C = j->g.C, in = j->g.inner;
    __m256 acc[4], mean[4], rstd[4];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++)
        acc[v] = _mm256_setzero_ps();
    for (int64_t c = 0; c < C; c++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            acc[v] = _mm256_add_ps(acc[v], _mm256_loadu_ps(x + c * in + 8 * v));
    const __m256 rc = _mm256_set1_ps((float)C);
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
        mean[v] = _mm256_div_ps(acc[v], rc);
        acc[v] = _mm256_setzero_ps();
    }
    for (int64_t c = 0; c < C; c++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            const __m256 t = _mm256_sub_ps(_mm256_loadu_ps(x + c * in + 8 * v), mean[v]);
            acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(t, t));
        }
    const __m256 one = _mm256_set1_ps(1.0f), eps = _mm256_set1_ps(j->eps);
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++)
        rstd[v] = _mm256_div_ps(one, _mm256_sqrt_ps(_mm256_add_ps(_mm256_div_ps(acc[v], rc), eps)));
    for (int64_t c = 0; c < C; c++) {
        const __m256 s = _mm256_set1_ps(j->s[c * j->s_step]), b = _mm256_set1_ps(j->b[c * j->b_step]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            const __m256 t = _mm256_sub_ps(_mm256_loadu_ps(x + c * in + 8 * v), mean[v]);
            _mm256_storeu_ps(y + c * in + 8 * v, _mm256_add_ps(_mm256_mul_ps(t, _mm256_mul_ps(rstd[v], s)), b));
        }
    }
}

__attribute__((target("avx2,fma"))) static void nc_block_avx2(const nc_job *j, const float *x, float *y, int64_t n)
{
    int64_t p = 0;
    for (; p + 32 <= n; p += 32)
        nc_vec(j, x + p, y + p, 4);
    if (p + 16 <= n) {
        nc_vec(j, x + p, y + p, 2);
        p += 16;
    }
    if (p + 8 <= n) {
        nc_vec(j, x + p, y + p, 1);
        p += 8;
    }
    for (; p < n; p++)
        nc_pixel(j, x + p, y + p);
}

static void nc_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const nc_job *j = ctx;
    const int64_t in = j->g.inner;
    for (int64_t it = begin; it < end; it++) {
        const int64_t o = it / j->blocks, p0 = (it % j->blocks) * PB, n = in - p0 < PB ? in - p0 : PB;
        const float *x = j->x + o * j->g.C * in + p0;
        float *y = j->y + o * j->g.C * in + p0;
        if (j->avx2) {
            nc_block_avx2(j, x, y, n);
        } else {
            for (int64_t p = 0; p < n; p++)
                nc_pixel(j, x + p, y + p);
        }
    }
}

static int nc_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    nc_geom g; /* (float output only: the codes output of norm_codes is normalization.rows') */
    return n->n_in == 3 && n->p.norm.out_quant == 0 &&
           nc_geometry(&n->p.norm, &in_dims[0], &in_dims[1], &in_dims[2], &g);
}

static trtl_status nc_run(const trtl_kernel_args *a)
{
    nc_job j;
    if (a->node->n_in != 3 || a->node->p.norm.out_quant != 0 ||
        !nc_geometry(&a->node->p.norm, &a->in[0].dims, &a->in[1].dims, &a->in[2].dims, &j.g))
        return trtl_ref_normalization(a);
    if (j.g.outer == 0 || j.g.C == 0 || j.g.inner == 0)
        return TRTL_OK;
    j.x = a->in[0].data;
    j.s = a->in[1].data;
    j.b = a->in[2].data;
    j.y = a->out[0].data;
    j.s_step = a->in[1].dims.d[j.g.axis] == 1 ? 0 : 1;
    j.b_step = a->in[2].dims.d[j.g.axis] == 1 ? 0 : 1;
    j.eps = a->node->p.norm.epsilon;
    j.avx2 = trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA);
    j.blocks = (j.g.inner + PB - 1) / PB;
    const int64_t per = PB * j.g.C, grain = per >= 8192 ? 1 : 8192 / per;
    trtl_parallel_for(a->pool, j.g.outer * j.blocks, grain, nc_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_normalization_channels = {
    .name = "normalization.channels",
    .op = TRTL_OP_NORMALIZATION,
    .applies = nc_applies,
    .run = nc_run,
};
