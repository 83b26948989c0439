/*
 * pooling_2d.c -- 2-D max / average / blend pooling over [.., H, W] planes.
 *
 * Same window semantics as the reference kernel (see kernels/ref/pooling.c): per dim a window
 * starting at o*stride - pre sees data in [0, in), padding in [-pre, 0) and [in, in + post), and
 * nothing past in + post.  Window bounds are clipped once per output row/column instead of per
 * element, the inner loop runs over contiguous floats, and planes are split over the pool.
 */
#include <math.h>

#include "kernels/kernel.h"
#include "core/shape.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/dims.h"

typedef struct pool_job {
    const trtl_pooling_params *p;
    const float *x;
    float *y;
    int64_t H, W, OH, OW, kh, kw, sh, sw, ph, pw, qh, qw; /* q*: effective post padding */
} pool_job;

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static void pool_planes(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const pool_job *j = ctx;
    const int type = j->p->type, excl = j->p->average_count_excludes_padding;
    const float blend = j->p->blend_factor;
    for (int64_t pl = begin; pl < end; pl++) {
        const float *xp = j->x + pl * j->H * j->W;
        float *yp = j->y + pl * j->OH * j->OW;
        for (int64_t oh = 0; oh < j->OH; oh++) {
            int64_t hs = oh * j->sh - j->ph, he = hs + j->kh;
            int64_t h0 = imax(hs, 0), h1 = imin(he, j->H);
            int64_t hpad = imax(imin(he, j->H + j->qh) - imax(hs, -j->ph), 0);
            for (int64_t ow = 0; ow < j->OW; ow++) {
                int64_t ws = ow * j->sw - j->pw, we = ws + j->kw;
                int64_t w0 = imax(ws, 0), w1 = imin(we, j->W);
                int64_t wpad = imax(imin(we, j->W + j->qw) - imax(ws, -j->pw), 0);
                float mx = -INFINITY, sum = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++) {
                    const float *row = xp + ih * j->W;
                    for (int64_t iw = w0; iw < w1; iw++) {
                        float v = row[iw];
                        mx = v > mx || v != v ? v : mx; /* a NaN wins and stays, as in the reference */
                        sum += v;
                    }
                }
                int64_t data = imax(h1 - h0, 0) * imax(w1 - w0, 0), cnt = excl ? data : hpad * wpad;
                float avg = cnt > 0 ? sum / (float)cnt : 0.0f;
                float r = type == TRTL_POOL_MAX ? mx
                          : type == TRTL_POOL_AVERAGE || blend >= 1.0f ? avg /* no (1 - 1) * -inf for empty windows */
                                                                       : (1.0f - blend) * mx + blend * avg;
                yp[oh * j->OW + ow] = r;
            }
        }
    }
}

static int pool_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_pooling_params *p = &n->p.pool;
    return p->window_size.nb_dims == 2 && in_dims[0].nb_dims >= 3 && p->type >= TRTL_POOL_MAX &&
           p->type <= TRTL_POOL_MAX_AVERAGE_BLEND;
}

static trtl_status pool_run(const trtl_kernel_args *a)
{
    const trtl_pooling_params *p = &a->node->p.pool;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    int r = xd->nb_dims;
    pool_job j = {p, a->in[0].data, a->out[0].data, xd->d[r - 2], xd->d[r - 1], yd->d[r - 2], yd->d[r - 1],
                  p->window_size.d[0], p->window_size.d[1], p->stride.d[0], p->stride.d[1], 0, 0, 0, 0};
    int64_t oh, ow;
    if (trtl_spatial_out(j.H, j.kh, j.sh, p->pre_padding.d[0], p->post_padding.d[0], p->padding_mode, 1, &oh, &j.ph,
                         &j.qh) != TRTL_OK ||
        trtl_spatial_out(j.W, j.kw, j.sw, p->pre_padding.d[1], p->post_padding.d[1], p->padding_mode, 1, &ow, &j.pw,
                         &j.qw) != TRTL_OK)
        return trtl_error_prefix("layer '%s'", a->node->name);
    if (oh != j.OH || ow != j.OW)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %lldx%lld, expected %lldx%lld", a->node->name,
                          (long long)j.OH, (long long)j.OW, (long long)oh, (long long)ow);
    int64_t planes = trtl_volume_range(xd, 0, r - 2);
    /* ~32k window reads per task keeps threading worthwhile on small maps */
    int64_t per_plane = j.OH * j.OW * j.kh * j.kw, grain = per_plane > 32768 ? 1 : 32768 / (per_plane + 1) + 1;
    trtl_parallel_for(a->pool, planes, grain, pool_planes, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_pooling_2d = {
    .name = "pooling.2d",
    .op = TRTL_OP_POOLING,
    .applies = pool_applies,
    .run = pool_run,
};
