/*
 * pooling_3d.c -- "pooling.3d": 3-D max and average pooling over [.., D, H, W] volumes (video CNNs: C3D / R3D /
 * I3D stems and stages; 3-D U-Nets of medical segmentation), the reference's bits (kernels/ref/pooling.c).
 *
 * MAX: the reference folds each window in raster order (d, h, w) with m = (v > m || NaN v) ? v : m from the first
 * element: the max where, among equal values (+0 / -0), the first wins and, among NaNs, the last.  That fold is
 * the max of a total order on (value, position), so it may be computed in parts as long as each part is folded in
 * order and later parts come later: per output row (od, oh) every input row of the window is first reduced along
 * w -- over a copy of the row padded with -inf (padding never changes the fold: -inf loses to every value and
 * equals only itself), 8 window starts at a time, the kw taps folded in order -- and those row results are folded
 * into the output row in (d, h) order.  A window without data gives -inf, as the reference.  NaNs leave quieted
 * (the reference passes them through double).  AVX2 folds 8 lanes (compare greater / unordered, blend), the
 * portable path the same per element; rows up to ROW_MAX floats, others run the reference.
 * AVERAGE (count with or without padding): each window summed in double in the reference's order (a different
 * order rounds differently), with the window's bounds clipped once per output instead of per element.
 * (d, planes) output rows go over the pool.  Blend pooling and INT8 codes run the reference.
 */
#include <math.h>
#include <string.h>
#include <immintrin.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/threadpool.h"

#define ROW_MAX 2048 /* floats of the padded row and window-start buffers (stack) */

typedef struct p3_job {
    const float *x;
    float *y;
    int64_t in[3], out[3], k[3], s[3], pre[3], post[3];
    int type, excl, avx2;
} p3_job;

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static inline float fold1(float m, float v) { return (v > m || v != v) ? v : m; }

static inline float quiet1(float v)
{
    if (v != v) {
        uint32_t u;
        memcpy(&u, &v, 4);
        u |= 0x00400000u;
        memcpy(&v, &u, 4);
    }
    return v;
}

/* ---- MAX: one output row ---------------------------------------------------------------------- */

/* m[j] = fold of pr[j * s .. j * s + k) for j < n (pr padded). */
static void wfold_portable(const float *pr, int64_t k, int64_t s, float *m, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        const float *p = pr + j * s;
        float v = p[0];
        for (int64_t t = 1; t < k; t++)
            v = fold1(v, p[t]);
        m[j] = v;
    }
}

static void rfold_portable(float *acc, const float *m, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        acc[j] = fold1(acc[j], m[j]);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static inline __m256 fold8(__m256 m, __m256 v)
{
    __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_ps(m, v, take);
}

/* Window folds at every start j < span of the padded row (stride 1), then the strided picks. */
__attribute__((target("avx2"))) static void wfold_avx2(const float *pr, int64_t k, int64_t s, float *m, int64_t n,
                                                       float *tmp)
{
    int64_t span = (n - 1) * s + 1, j = 0;
    float *dst = s == 1 ? m : tmp;
    for (; j + 8 <= span; j += 8) {
        __m256 v = _mm256_loadu_ps(pr + j);
        for (int64_t t = 1; t < k; t++)
            v = fold8(v, _mm256_loadu_ps(pr + j + t));
        _mm256_storeu_ps(dst + j, v);
    }
    wfold_portable(pr + j, k, 1, dst + j, span - j);
    int64_t o = 0;
    if (s == 2) /* the even lanes of two vectors */
        for (; o + 8 <= n && 2 * o + 16 <= span; o += 8) {
            __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(tmp + 2 * o), _mm256_loadu_ps(tmp + 2 * o + 8), 0x88);
            _mm256_storeu_ps(m + o, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8)));
        }
    if (s != 1)
        for (; o < n; o++)
            m[o] = tmp[o * s];
}

/* A bit per lane of y[0..8) that is +-0 or NaN. */
__attribute__((target("avx2"))) static int redo_mask8(const float *y)
{
    __m256 v = _mm256_loadu_ps(y);
    return _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_EQ_OQ),
                                           _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}

__attribute__((target("avx2"))) static void rfold_avx2(float *acc, const float *m, int64_t n)
{
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(acc + j, fold8(_mm256_loadu_ps(acc + j), _mm256_loadu_ps(m + j)));
    rfold_portable(acc + j, m + j, n - j);
}
#endif

/* The reference's fold of window (od, oh, ow) in raster order, from -inf, NaN quieted. */
static float max_exact(const p3_job *j, const float *xp, int64_t od, int64_t oh, int64_t ow)
{
    int64_t st[3] = {od * j->s[0] - j->pre[0], oh * j->s[1] - j->pre[1], ow * j->s[2] - j->pre[2]}, lo[3], hi[3];
    for (int d = 0; d < 3; d++) {
        lo[d] = imax(st[d], 0);
        hi[d] = imin(st[d] + j->k[d], j->in[d]);
    }
    float m = -INFINITY;
    for (int64_t id = lo[0]; id < hi[0]; id++)
        for (int64_t ih = lo[1]; ih < hi[1]; ih++) {
            const float *r = xp + (id * j->in[1] + ih) * j->in[2];
            for (int64_t iw = lo[2]; iw < hi[2]; iw++)
                m = fold1(m, r[iw]);
        }
    return quiet1(m);
}

/* Output row (od, oh) of plane xp into y: the window's rows folded column-wise into a -inf padded row (any order
 * gives the max's value), its windows along w folded, 8 starts at a time; an output that is +-0 or NaN -- where
 * the order picks the sign or the payload -- is redone by max_exact. */
static void max_row(const p3_job *j, const float *xp, int64_t od, int64_t oh, float *y)
{
    const int64_t W = j->in[2], OW = j->out[2], kw = j->k[2], sw = j->s[2], pw = j->pre[2];
    float pr[ROW_MAX + 16], tmp[ROW_MAX + 16];
    int64_t len = (OW - 1) * sw + kw; /* padded row floats the windows read */
    int64_t d0 = od * j->s[0] - j->pre[0], h0 = oh * j->s[1] - j->pre[1];
    int64_t dlo = imax(d0, 0), dhi = imin(d0 + j->k[0], j->in[0]), hlo = imax(h0, 0), hhi = imin(h0 + j->k[1], j->in[1]);
    int64_t a = imin(pw, len), b = imin(pw + W, len); /* the data's part of the padded row */
    for (int64_t i = 0; i < len + 16; i++)
        pr[i] = -INFINITY;
    for (int64_t id = dlo; id < dhi; id++)
        for (int64_t ih = hlo; ih < hhi; ih++) {
            const float *row = xp + (id * j->in[1] + ih) * W + (a - pw);
#if defined(__x86_64__) || defined(__i386__)
            if (j->avx2) {
                rfold_avx2(pr + a, row, b - a);
                continue;
            }
#endif
            rfold_portable(pr + a, row, b - a);
        }
#if defined(__x86_64__) || defined(__i386__)
    if (j->avx2)
        wfold_avx2(pr, kw, sw, y, OW, tmp);
    else
#endif
        wfold_portable(pr, kw, sw, y, OW);
    int64_t o = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (j->avx2)
        for (; o + 8 <= OW; o += 8)
            for (int bits = redo_mask8(y + o); bits; bits &= bits - 1)
                y[o + __builtin_ctz((unsigned)bits)] = max_exact(j, xp, od, oh, o + __builtin_ctz((unsigned)bits));
#endif
    for (; o < OW; o++)
        if (y[o] == 0.0f || y[o] != y[o])
            y[o] = max_exact(j, xp, od, oh, o);
}

/* ---- AVERAGE: one output row -------------------------------------------------------------------- */

static void avg_row(const p3_job *j, const float *xp, int64_t od, int64_t oh, float *y)
{
    int64_t st[3], lo[3], hi[3], pad[3];
    st[0] = od * j->s[0] - j->pre[0];
    st[1] = oh * j->s[1] - j->pre[1];
    for (int d = 0; d < 2; d++) {
        int64_t e = st[d] + j->k[d];
        lo[d] = imax(st[d], 0);
        hi[d] = imin(e, j->in[d]);
        pad[d] = imax(imin(e, j->in[d] + j->post[d]) - imax(st[d], -j->pre[d]), 0);
    }
    const int64_t W = j->in[2], H = j->in[1];
    for (int64_t ow = 0; ow < j->out[2]; ow++) {
        int64_t s2 = ow * j->s[2] - j->pre[2], e2 = s2 + j->k[2];
        lo[2] = imax(s2, 0);
        hi[2] = imin(e2, W);
        pad[2] = imax(imin(e2, W + j->post[2]) - imax(s2, -j->pre[2]), 0);
        double sum = 0.0;
        for (int64_t id = lo[0]; id < hi[0]; id++)
            for (int64_t ih = lo[1]; ih < hi[1]; ih++) {
                const float *r = xp + (id * H + ih) * W;
                for (int64_t iw = lo[2]; iw < hi[2]; iw++)
                    sum += r[iw];
            }
        int64_t count = imax(hi[0] - lo[0], 0) * imax(hi[1] - lo[1], 0) * imax(hi[2] - lo[2], 0);
        int64_t div = j->excl ? count : pad[0] * pad[1] * pad[2];
        y[ow] = (float)(div > 0 ? sum / (double)div : 0.0);
    }
}

static void p3_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const p3_job *j = ctx;
    const int64_t OD = j->out[0], OH = j->out[1], OW = j->out[2];
    for (int64_t it = begin; it < end; it++) { /* it: (plane, od) */
        int64_t pl = it / OD, od = it % OD;
        const float *xp = j->x + pl * j->in[0] * j->in[1] * j->in[2];
        float *y = j->y + ((pl * OD + od) * OH) * OW;
        for (int64_t oh = 0; oh < OH; oh++, y += OW) {
            if (j->type == TRTL_POOL_MAX)
                max_row(j, xp, od, oh, y);
            else
                avg_row(j, xp, od, oh, y);
        }
    }
}

static int p3_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_pooling_params *p = &n->p.pool;
    return p->window_size.nb_dims == 3 && in_dims[0].nb_dims >= 4 &&
           (p->type == TRTL_POOL_MAX || p->type == TRTL_POOL_AVERAGE);
}

static trtl_status p3_run(const trtl_kernel_args *a)
{
    const trtl_pooling_params *p = &a->node->p.pool;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    int r = xd->nb_dims;
    if (p->window_size.nb_dims != 3 || r < 4 || yd->nb_dims != r || a->in[0].dtype != TRTL_FLOAT ||
        a->out[0].dtype != TRTL_FLOAT || (p->type != TRTL_POOL_MAX && p->type != TRTL_POOL_AVERAGE))
        return trtl_ref_pooling(a);
    p3_job j;
    memset(&j, 0, sizeof j);
    j.x = a->in[0].data;
    j.y = a->out[0].data;
    j.type = p->type;
    j.excl = p->average_count_excludes_padding;
    j.avx2 = trtl_cpu_has(TRTL_CPU_AVX2);
    for (int i = 0; i < 3; i++) {
        int64_t o;
        j.in[i] = xd->d[r - 3 + i];
        j.out[i] = yd->d[r - 3 + i];
        j.k[i] = p->window_size.d[i];
        j.s[i] = p->stride.d[i];
        if (trtl_spatial_out(j.in[i], j.k[i], j.s[i], p->pre_padding.d[i], p->post_padding.d[i], p->padding_mode, 1,
                             &o, &j.pre[i], &j.post[i]) != TRTL_OK || o != j.out[i] || j.k[i] < 1 || j.s[i] < 1 ||
            j.pre[i] < 0)
            return trtl_ref_pooling(a); /* words the error */
    }
    if (j.type == TRTL_POOL_MAX && (j.out[2] - 1) * j.s[2] + j.k[2] > ROW_MAX)
        return trtl_ref_pooling(a);
    int64_t planes = trtl_volume_range(xd, 0, r - 3), items = planes * j.out[0];
    if (items == 0 || j.out[1] == 0 || j.out[2] == 0)
        return TRTL_OK;
    double per = (double)j.out[1] * (double)j.out[2] * (double)(j.k[0] * j.k[1]) * (double)j.k[2];
    trtl_parallel_for(a->pool, items, per > 32768 ? 1 : 32768 / ((int64_t)per + 1) + 1, p3_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_pooling_3d = {
    .name = "pooling.3d",
    .op = TRTL_OP_POOLING,
    .applies = p3_applies,
    .run = p3_run,
};
