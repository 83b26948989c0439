/* scale.c -- scale.simd: y = x * scale + shift (uniform, per-channel or elementwise weights) with
 * one FMA per element, rows split over the pool.  Scales with a power other than all ones keep the
 * reference kernel (applies() refuses them): pow is computed in double there.  A power of ones (as
 * TensorRT batch-norm scripts write it: pow(v, 1) = v, NaN included) is no power.  A fused activation (fuse_epilogue:
 * batch norm -> relu) is applied to each chunk while it is in cache; residual epilogues are refused. */
#include "kernels/kernel.h"
#include "kernels/x86/vmath.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct scale_job {
    const float *x, *sc, *sh;
    float *y;
    int64_t row_len, per_row_w; /* row_len elements a row; weights advance by per_row_w a row */
    int64_t wrows;              /* weight rows before they repeat */
    int w_vec;                  /* weights advance along a row (ELEMENTWISE) */
    const trtl_epilogue *epi;   /* its activation is applied to each chunk while in cache */
} scale_job;

static void scale_row(void *ctx, int64_t row, int64_t begin, int64_t len)
{
    const scale_job *j = ctx;
    int64_t w = (row % j->wrows) * j->per_row_w + (j->w_vec ? begin : 0);
    int64_t at = row * j->row_len + begin;
    trtl_vm_fma(j->x + at, j->y + at, len, j->sc ? j->sc + w : NULL, j->w_vec, j->sh ? j->sh + w : NULL, j->w_vec);
    if (j->epi->act != TRTL_ACT_NONE)
        trtl_vm_act(j->epi->act, j->epi->alpha, j->epi->beta, j->y + at, j->y + at, len);
}

/* No power, or every power exactly 1. */
static int no_power(const trtl_scale_params *p)
{
    if (p->power.count == 0)
        return 1;
    if (p->power.type != TRTL_FLOAT || !p->power.values)
        return 0;
    for (int64_t i = 0; i < p->power.count; i++)
        if (((const float *)p->power.values)[i] != 1.0f)
            return 0;
    return 1;
}

static int scale_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_scale_params *p = &n->p.scale;
    return no_power(p) && !n->epi.has_residual &&
           (p->mode == TRTL_SCALE_UNIFORM || (p->channel_axis >= 0 && p->channel_axis < in_dims[0].nb_dims));
}

static trtl_status scale_run(const trtl_kernel_args *a)
{
    const trtl_scale_params *p = &a->node->p.scale;
    const trtl_dims *xd = &a->in[0].dims;
    if (!no_power(p) || a->node->epi.has_residual)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': scale.simd cannot apply a power or a residual "
                          "(the plan is corrupt: the builder never picks it for this layer)", a->node->name);
    scale_job j = {a->in[0].data, p->scale.count ? (const float *)p->scale.values : NULL,
                   p->shift.count ? (const float *)p->shift.values : NULL,
                   a->out[0].data, 0, 0, 1, 0, &a->node->epi};
    int64_t n = trtl_volume(xd), rows = 1, want = 1;
    j.row_len = n;
    if (p->mode != TRTL_SCALE_UNIFORM) {
        if (p->channel_axis < 0 || p->channel_axis >= xd->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': channel_axis %d out of range", a->node->name,
                              (int)p->channel_axis);
        int64_t inner = trtl_volume_range(xd, p->channel_axis + 1, xd->nb_dims);
        int64_t period = trtl_volume_range(xd, p->channel_axis, xd->nb_dims);
        if (p->mode == TRTL_SCALE_CHANNEL) { /* a row per (outer, channel): one weight each */
            want = xd->d[p->channel_axis];
            j.row_len = inner;
            j.per_row_w = 1;
            j.wrows = want;
        } else { /* a row per outer index: the weights advance along it */
            want = period;
            j.row_len = period;
            j.w_vec = 1;
        }
        rows = j.row_len ? n / j.row_len : 0;
    }
    if ((j.sh && p->shift.count != want) || (j.sc && p->scale.count != want))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': weight count does not match the input (expected %lld)",
                          a->node->name, (long long)want);
    if (j.wrows <= 0)
        j.wrows = 1;
    trtl_vm_rows(a->pool, rows, j.row_len, scale_row, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_scale_simd = {
    .name = "scale.simd",
    .op = TRTL_OP_SCALE,
    .applies_epilogue = 1,
    .applies = scale_applies,
    .run = scale_run,
};
