/*
 * adder2d.c -- Adder2d_TRT: the adder layer of AdderNet (Chen et al., CVPR 2020).
 *
 *   Y[n, f, y, x] = - sum_{c, i, j} | Xp[n, c, y*s + i, x*s + j] - W[f, c, i, j] |
 *
 * Xp is X zero-padded by p on every side, so a padded position still contributes |0 - W| = |W|.
 * Input [N, C, H, W] (C from the input, checked against nbInputChannels / the weight count),
 * output [N, F, (H + 2p - k)/s + 1, (W + 2p - k)/s + 1], float32, every sample of the batch.
 *
 * Two paths, chosen from the CPU features (trtl_cpu_has: __builtin_cpu_supports, cached; the
 * TRTL_CPU_MASK environment variable clears bits so tests can force the reference).
 * workspace_size and enqueue make the same choice, so only the AVX2 path asks for scratch.
 *
 * - reference: the definition above, |x - w| one tap at a time, accumulated per output row;
 *   padded positions add |w|.  Portable C, no scratch.
 *
 * - AVX2+FMA, using |x - w| = x + w - 2 min(x, w) (PERF.md technique 8):
 *       Y = 2 * sum min(x, w) - sum x - sum w
 *   sum w per filter is computed once at create; sum x is a box sum per output pixel shared by
 *   every filter; the inner loop is one min and one add per |x - w|.  Zero padding needs no special
 *   case: a padded x = 0 gives 0 + w - 2 min(0, w) = |w|, exactly the definition.
 *
 *   Each sample is first copied into a zero-bordered, "phase-split" plane in the workspace: padded
 *   row r is stored as s sub-rows, sub-row q holding padded columns q, q + s, q + 2s, ...  Output
 *   pixel (y, x), tap (c, i, j) then reads sub-row (j % s) of padded row y*s + i at index
 *   x + j/s, so 8 consecutive output columns of one row are 8 consecutive floats for every stride:
 *   the "im2col panel" is never materialized, a table of K = C*k*k offsets indexes the plane.
 *   A register tile is 16 pixels (two 8-pixel chunks, each from any output row) x MR <= 6 filters
 *   (12 accumulators); packed weights hold each filter group as [K][MR] so the MR broadcasts of
 *   one tap are adjacent.  Filters are split into ceil(F/6) groups of nearly equal size (20 ->
 *   4 x 5, 50 -> 5 x 6 + 4 x 5), so no lanes are wasted on padding filters.  The epilogue
 *   (2*acc - sum x - sum w) is fused into the tile's store; a row's last chunk stores with a mask.
 *   Threads: the running context's pool (trtl_current_pool): samples in parallel at batch > 1, output
 *   chunks at batch 1; each thread pads into its own workspace slot.  The enqueue allocates nothing.
 *
 *   Accuracy: the identity cancels sum x + sum w against 2 sum min in float32, so its absolute
 *   error scales with sum(|x| + |w|) rather than with the result; for AdderNet-style layers
 *   (outputs of the same magnitude as those sums) the two paths agree to ~1e-6 relative.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "plugins/builtin/common.h"
#include "plugins/builtin/adder2d_int8.h"
#include "core/threadpool.h"
#include "core/cpu.h"

#define MAX_MR 6  /* filters per register tile */
#define CHUNK 8   /* output columns per AVX2 vector */

enum { F_WEIGHTS, F_NB_WEIGHTS, F_NB_INPUT_CHANNELS, F_FILTER_SIZE, F_NB_FILTERS, F_STRIDE, F_PADDING, F_INT8_SCALE,
       F_OUT_SCALE, F_OUT_CH_SCALE, F_OUT_CH_SHIFT, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_WEIGHTS] = {"weights", TRTL_PF_FLOAT32, 1},
    [F_NB_WEIGHTS] = {"nbWeights", TRTL_PF_INT32, 0},
    [F_NB_INPUT_CHANNELS] = {"nbInputChannels", TRTL_PF_INT32, 0},
    [F_FILTER_SIZE] = {"filterSize", TRTL_PF_INT32, 1},
    [F_NB_FILTERS] = {"nbFilters", TRTL_PF_INT32, 1},
    [F_STRIDE] = {"stride", TRTL_PF_INT32, 0},
    [F_PADDING] = {"padding", TRTL_PF_INT32, 0},
    /* the shared scale of input and weight codes (int8 path): set by the builder through `configure`
     * under BuilderFlag.INT8 and kept in plans; absent: fp32 only */
    [F_INT8_SCALE] = {"int8Scale", TRTL_PF_FLOAT32, 0},
    /* INT8 output (set by the builder pass plugin_int8_out, kept in plans; needs int8Scale): the output is
     * the INT8 codes saturate(round_half_even((outputChannelScale[f] * Y + outputChannelShift[f]) / outputScale))
     * of a folded per-channel scale (batch norm) and the next layer's quantizer; the two arrays (nbFilters
     * values each) default to 1 and 0 */
    [F_OUT_SCALE] = {"outputScale", TRTL_PF_FLOAT32, 0},
    [F_OUT_CH_SCALE] = {"outputChannelScale", TRTL_PF_FLOAT32, 0},
    [F_OUT_CH_SHIFT] = {"outputChannelShift", TRTL_PF_FLOAT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 4, 4, "[N, C, H, W]"};

typedef struct adder2d {
    trtl_builtin h;
    int32_t F, C, k, s, p, nb_weights; /* nb_weights = F*C*k*k */
    float *w;                          /* [F][C][k][k] as given (get_fields, reference path) */
    float *wpack;                      /* filter groups, each [K][mr] (AVX2 path) */
    float *wsum;                       /* [F]: sum of each filter's weights */
    float int8_scale;                  /* > 0: the int8 path is configured (input INT8 codes of this scale) */
    float out_scale;                   /* > 0: INT8 output codes of this scale (needs int8_scale) */
    float *och_scale, *och_shift;      /* [F] each: the folded per-channel scale and shift (fields) */
    float *oa, *ob;                    /* [F] each: och_scale / out_scale, och_shift / out_scale */
    int8_t *wq;                        /* [F][C][k][k] weight codes (int8 path) */
    uint8_t *wpk;                      /* packed weight codes (adder2d_int8.h) */
} adder2d;

/* Geometry of one enqueue (or workspace query). */
typedef struct geom {
    int64_t N, C, H, W, OH, OW, K;
    int64_t hp, lp, row, plane; /* padded rows; sub-row length; floats per padded row / channel */
    int64_t cw;                 /* output columns per vector: 8 (AVX2) or 16 (AVX-512) */
} geom;

/* ---- fields -------------------------------------------------------------------------------- */

/* The tail holds w, wpack (nb_weights each), wsum, och_scale, och_shift, oa, ob (F each) as floats, then the
 * int8 path's weight
 * codes (nb_weights bytes) and their packed forms (vpsadbw: at most 8 * nb_weights bytes, channels
 * rounded up to a multiple of 8; vdbpsadbw: 16 bytes per (filter, channel, kernel row), at most
 * 16 * nb_weights). */
static void relink(trtl_builtin *h)
{
    adder2d *a = (adder2d *)h;
    a->w = (float *)(a + 1);
    a->wpack = a->w + a->nb_weights;
    a->wsum = a->wpack + a->nb_weights;
    a->och_scale = a->wsum + a->F;
    a->och_shift = a->och_scale + a->F;
    a->oa = a->och_shift + a->F;
    a->ob = a->oa + a->F;
    a->wq = (int8_t *)(a->ob + a->F);
    a->wpk = (uint8_t *)(a->wq + a->nb_weights); /* unaligned: read by 8-byte broadcasts */
}

static size_t tail_bytes(int64_t n, int64_t F)
{
    return sizeof(float) * (size_t)(2 * n + 5 * F) + 25u * (size_t)n + 64u;
}

/* Exact for the fields init accepts (then nbFilters divides the weight count); 0 otherwise. */
static size_t tail(const trtl_plugin_fields *fs)
{
    const trtl_plugin_field *f = trtl_field_find(fs, "nbFilters");
    const int64_t n = trtl_field_length(fs, "weights");
    const int64_t F = f && f->type == TRTL_PF_INT32 && f->length > 0 ? *(const int32_t *)f->data : 0;
    return n <= INT32_MAX / 16 && F > 0 && F <= n ? tail_bytes(n, F) : 0;
}

/* Filter groups: ceil(F / MAX_MR) groups whose sizes differ by at most one, larger ones first. */
static int32_t group_count(int32_t F) { return (F + MAX_MR - 1) / MAX_MR; }

static void group_range(int32_t F, int32_t g, int32_t *f0, int32_t *mr)
{
    int32_t ng = group_count(F), base = F / ng, extra = F % ng;
    *mr = base + (g < extra);
    *f0 = g * base + (g < extra ? g : extra);
}

/* Packs weights per filter group as [K][mr] and sums each filter (in double: it is subtracted
 * from a float sum later, so it should carry no error of its own). */
static void pack_weights(adder2d *a)
{
    int64_t K = (int64_t)a->C * a->k * a->k;
    for (int32_t f = 0; f < a->F; f++) {
        double s = 0;
        for (int64_t q = 0; q < K; q++)
            s += a->w[f * K + q];
        a->wsum[f] = (float)s;
    }
    for (int32_t g = 0; g < group_count(a->F); g++) {
        int32_t f0, mr;
        group_range(a->F, g, &f0, &mr);
        float *dst = a->wpack + f0 * K;
        for (int64_t q = 0; q < K; q++)
            for (int32_t m = 0; m < mr; m++)
                dst[q * mr + m] = a->w[(f0 + m) * K + q];
    }
}

/* max |w| / 127 in float32: the smallest scale that keeps every weight code within +-127. */
static float weight_scale(const adder2d *a)
{
    float m = 0;
    for (int32_t i = 0; i < a->nb_weights; i++)
        m = fmaxf(m, fabsf(a->w[i]));
    return m / 127.0f;
}

/* Configures the int8 path with shared scale `scale` (checked) and packs the weight codes. */
static int set_int8_scale(adder2d *a, float scale, char *msg, size_t msg_len)
{
    const float ws = weight_scale(a);
    if (!(scale > 0) || !isfinite(scale))
        return trtl_plugin_fail(msg, msg_len, "field 'int8Scale' must be a positive finite scale, got %g",
                                (double)scale);
    if (scale < ws * (1.0f - 1e-6f))
        return trtl_plugin_fail(msg, msg_len, "field 'int8Scale' (%g) is smaller than max|weights| / 127 (%g): the "
                                "weights would clip", (double)scale, (double)ws);
    a->int8_scale = scale;
    trtl_adder_q_pack(a->w, a->F, a->C, a->k, scale, a->wq, a->wpk);
    return 0;
}

/* One per-filter array field of the INT8 output (absent: `dflt` for every filter). */
static int output_array(adder2d *a, const trtl_field_reader *r, int fi, float dflt, float *dst)
{
    const trtl_plugin_field *f;
    if (trtl_field_array(r, &field_descs[fi], a->F, a->F, &f)) /* nbFilters values */
        return 1;
    if (!f) {
        for (int32_t i = 0; i < a->F; i++)
            dst[i] = dflt;
        return 0;
    }
    memcpy(dst, f->data, sizeof(float) * (size_t)a->F);
    for (int32_t i = 0; i < a->F; i++)
        if (!isfinite(dst[i]))
            return trtl_field_fail(r, "field '%s' value %d is not finite (%g)", field_descs[fi].name, (int)i,
                                   (double)dst[i]);
    return 0;
}

/* The INT8 output's fields (outputScale and the per-channel arrays), checked; oa / ob from them. */
static int init_output_codes(adder2d *a, const trtl_field_reader *r)
{
    const int has = trtl_field_find(r->fields, "outputScale") != NULL;
    if (!has) {
        if (trtl_field_find(r->fields, "outputChannelScale") || trtl_field_find(r->fields, "outputChannelShift"))
            return trtl_field_fail(r, "fields 'outputChannelScale' / 'outputChannelShift' need 'outputScale' (the "
                                   "INT8 output's scale)");
        a->out_scale = 0;
        return 0;
    }
    if (!(a->out_scale > 0) || !isfinite(a->out_scale))
        return trtl_field_fail(r, "field 'outputScale' must be a positive finite scale, got %g", (double)a->out_scale);
    if (!(a->int8_scale > 0))
        return trtl_field_fail(r, "field 'outputScale' (INT8 output) needs 'int8Scale' (INT8 input codes)");
    if (output_array(a, r, F_OUT_CH_SCALE, 1.0f, a->och_scale) || output_array(a, r, F_OUT_CH_SHIFT, 0.0f, a->och_shift))
        return 1;
    for (int32_t f = 0; f < a->F; f++) {
        a->oa[f] = a->och_scale[f] / a->out_scale;
        a->ob[f] = a->och_shift[f] / a->out_scale;
        if (!isfinite(a->oa[f]) || !isfinite(a->ob[f]))
            return trtl_field_fail(r, "filter %d: outputChannelScale / outputScale or outputChannelShift / outputScale "
                                   "is not finite", (int)f);
    }
    return 0;
}

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    adder2d *a = (adder2d *)h;
    const trtl_plugin_field *wf;
    int32_t nbw = 0;
    a->s = 1;
    if (trtl_field_scalar(r, &field_descs[F_NB_WEIGHTS], &nbw) ||
        trtl_field_scalar(r, &field_descs[F_NB_INPUT_CHANNELS], &a->C) ||
        trtl_field_scalar(r, &field_descs[F_FILTER_SIZE], &a->k) ||
        trtl_field_scalar(r, &field_descs[F_NB_FILTERS], &a->F) ||
        trtl_field_scalar(r, &field_descs[F_STRIDE], &a->s) ||
        trtl_field_scalar(r, &field_descs[F_PADDING], &a->p) ||
        trtl_field_array(r, &field_descs[F_WEIGHTS], 0, TRTL_FIELD_ANY_LENGTH, &wf) ||
        trtl_field_scalar(r, &field_descs[F_INT8_SCALE], &a->int8_scale) ||
        trtl_field_scalar(r, &field_descs[F_OUT_SCALE], &a->out_scale))
        return 1;
    const int has_nbw = trtl_field_find(r->fields, "nbWeights") != NULL;
    const int has_c = trtl_field_find(r->fields, "nbInputChannels") != NULL;
    const int64_t count = wf->length;
    if (a->k < 1)
        return trtl_field_fail(r, "field 'filterSize' must be >= 1, got %d", (int)a->k);
    if (a->F < 1)
        return trtl_field_fail(r, "field 'nbFilters' must be >= 1, got %d", (int)a->F);
    if (a->s < 1)
        return trtl_field_fail(r, "field 'stride' must be >= 1, got %d", (int)a->s);
    if (a->p < 0)
        return trtl_field_fail(r, "field 'padding' must be >= 0, got %d", (int)a->p);
    if (has_c && a->C < 1)
        return trtl_field_fail(r, "field 'nbInputChannels' must be >= 1, got %d", (int)a->C);
    if (has_nbw && nbw != count)
        return trtl_field_fail(r, "field 'nbWeights' is %d but field 'weights' has %lld values", (int)nbw,
                               (long long)count);
    const int64_t per_channel = (int64_t)a->F * a->k * a->k;
    if (has_c && count != per_channel * a->C)
        return trtl_field_fail(r, "field 'weights' has %lld values; nbFilters*nbInputChannels*filterSize^2 = "
                               "%d*%d*%d*%d = %lld", (long long)count, (int)a->F, (int)a->C, (int)a->k, (int)a->k,
                               (long long)(per_channel * a->C));
    if (!has_c && (count < 1 || count % per_channel != 0))
        return trtl_field_fail(r, "field 'weights' has %lld values, not a positive multiple of nbFilters*filterSize^2 "
                               "= %lld (give nbInputChannels to say what was meant)", (long long)count,
                               (long long)per_channel);
    if (!has_c)
        a->C = (int32_t)(count / per_channel);
    if (count > INT32_MAX / 16)
        return trtl_field_fail(r, "field 'weights' is too large (%lld values)", (long long)count);
    if (h->size - sizeof *a < tail_bytes(count, a->F)) /* tail() is exact for the sizes above */
        return trtl_field_fail(r, "fields 'weights' (%lld values) and 'nbFilters' (%d) do not fit together",
                               (long long)count, (int)a->F);
    a->nb_weights = (int32_t)count;
    relink(h);
    memcpy(a->w, wf->data, sizeof(float) * (size_t)count);
    pack_weights(a);
    if (trtl_field_find(r->fields, "int8Scale") != NULL && set_int8_scale(a, a->int8_scale, r->msg, r->msg_len))
        return 1;
    if (init_output_codes(a, r))
        return 1;
    trtl_builtin_field(h, &field_descs[F_WEIGHTS], a->w, a->nb_weights);
    trtl_builtin_field(h, &field_descs[F_NB_WEIGHTS], &a->nb_weights, 1);
    trtl_builtin_field(h, &field_descs[F_NB_INPUT_CHANNELS], &a->C, 1);
    trtl_builtin_field(h, &field_descs[F_FILTER_SIZE], &a->k, 1);
    trtl_builtin_field(h, &field_descs[F_NB_FILTERS], &a->F, 1);
    trtl_builtin_field(h, &field_descs[F_STRIDE], &a->s, 1);
    trtl_builtin_field(h, &field_descs[F_PADDING], &a->p, 1);
    if (a->int8_scale > 0)
        trtl_builtin_field(h, &field_descs[F_INT8_SCALE], &a->int8_scale, 1);
    if (a->out_scale > 0) {
        trtl_builtin_field(h, &field_descs[F_OUT_SCALE], &a->out_scale, 1);
        trtl_builtin_field(h, &field_descs[F_OUT_CH_SCALE], a->och_scale, a->F);
        trtl_builtin_field(h, &field_descs[F_OUT_CH_SHIFT], a->och_shift, a->F);
    }
    return 0;
}

/* ---- shapes -------------------------------------------------------------------------------- */

/* One spatial output size; -1 stays -1.  Nonzero when the input is too small. */
static int out_size(const adder2d *a, int64_t in, int64_t *out)
{
    if (in < 0) {
        *out = -1;
        return 0;
    }
    if (in + 2 * (int64_t)a->p < a->k)
        return 1;
    *out = (in + 2 * (int64_t)a->p - a->k) / a->s + 1;
    return 0;
}

/* The int8 path's view of the instance. */
static trtl_adder_q int8_view(const adder2d *a)
{
    trtl_adder_q q = {a->F, a->C, a->k, a->s, a->p, a->int8_scale, a->wq, a->wpk, NULL, NULL};
    if (a->out_scale > 0) {
        q.oa = a->oa;
        q.ob = a->ob;
    }
    return q;
}

static int float_output_desc(const adder2d *a, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             trtl_plugin_tensor_desc *out, char *msg, size_t msg_len);

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const adder2d *a = (const adder2d *)self;
    if (nb_in == 1 && in[0].dtype == TRTL_INT8) {
        if (!(a->int8_scale > 0))
            return trtl_plugin_fail(msg, msg_len, "input 0 is INT8, but the plugin has no 'int8Scale' (the builder "
                                    "sets it under BuilderFlag.INT8 with a dynamic range for the input)");
        trtl_plugin_tensor_desc f = in[0];
        f.dtype = TRTL_FLOAT; /* the checks are the float input's */
        if (float_output_desc(a, index, &f, 1, out, msg, msg_len))
            return 1;
        if (a->out_scale > 0)
            out->dtype = TRTL_INT8;
        return 0;
    }
    if (a->out_scale > 0 && nb_in == 1 && in[0].dtype == TRTL_FLOAT)
        return trtl_plugin_fail(msg, msg_len, "the plugin writes INT8 codes (field 'outputScale') and reads INT8 "
                                "codes, but input 0 is FLOAT");
    return float_output_desc(a, index, in, nb_in, out, msg, msg_len);
}

/* The output of a FLOAT input: shape checks, [N, F, OH, OW] FLOAT. */
static int float_output_desc(const adder2d *a, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    if (trtl_check_single_io(index, in, nb_in, &input_spec, msg, msg_len))
        return 1;
    const trtl_dims *d = &in[0].dims;
    if (d->d[1] >= 0 && d->d[1] != a->C)
        return trtl_plugin_fail(msg, msg_len, "input has %lld channels but the filters have nbInputChannels = %d",
                                (long long)d->d[1], (int)a->C);
    int64_t oh, ow;
    if (out_size(a, d->d[2], &oh) || out_size(a, d->d[3], &ow))
        return trtl_plugin_fail(msg, msg_len, "input %lldx%lld (H x W) with padding %d is smaller than filterSize %d",
                                (long long)d->d[2], (long long)d->d[3], (int)a->p, (int)a->k);
    out->dtype = TRTL_FLOAT;
    out->dims.nb_dims = 4;
    out->dims.d[0] = d->d[0];
    out->dims.d[1] = a->F;
    out->dims.d[2] = oh;
    out->dims.d[3] = ow;
    return 0;
}

static int use_512(void) { return trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA); }

/* Geometry of the AVX2 path for concrete input dims.  Nonzero when the shape is unusable. */
static int geom_init(const adder2d *a, const trtl_dims *d, geom *g)
{
    if (d->nb_dims != 4 || d->d[1] != a->C)
        return 1;
    g->N = d->d[0];
    g->C = d->d[1];
    g->H = d->d[2];
    g->W = d->d[3];
    if (g->N < 0 || g->H < 0 || g->W < 0 || out_size(a, g->H, &g->OH) || out_size(a, g->W, &g->OW))
        return 1;
    g->K = g->C * a->k * a->k;
    int64_t s = a->s, wp = g->W + 2 * (int64_t)a->p;
    /* 16-column vectors where they do more work than 8-column ones: not on rows of 8 or fewer (AdderNet's
     * 8x8 maps would leave half of every vector empty) */
    const int64_t r8 = (g->OW + 7) / 8 * 8, r16 = (g->OW + 15) / 16 * 16;
    g->cw = use_512() && 2 * r8 > r16 ? 16 : CHUNK;
    int64_t owr = (g->OW + g->cw - 1) / g->cw * g->cw;
    /* Chunk x0..x0+7 of tap j reads sub-row j % s at indices x + j/s <= owr - 1 + (k-1)/s. */
    g->lp = (wp + s - 1) / s;
    if (owr + (a->k - 1) / s > g->lp)
        g->lp = owr + (a->k - 1) / s;
    g->hp = g->H + 2 * (int64_t)a->p;
    g->row = s * g->lp;
    g->plane = g->hp * g->row;
    return 0;
}

/* The AVX2 path indexes the plane with int32 offsets; beyond that the reference runs. */
static int fast_ok(const geom *g) { return g->C * g->plane < INT32_MAX / 2; }

static int use_fast(void) { return trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA); }

/* Workspace: [padded plane of one sample: C * plane floats][K int32 offsets], 64-byte aligned. */
static size_t ws_plane_bytes(const geom *g) { return ((size_t)(g->C * g->plane) * sizeof(float) + 63) & ~(size_t)63; }

static size_t workspace_size(const trtl_plugin *self, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             const trtl_plugin_tensor_desc *out, int32_t nb_out)
{
    (void)out;
    (void)nb_out;
    const adder2d *a = (const adder2d *)self;
    geom g;
    if (nb_in != 1 || geom_init(a, &in[0].dims, &g))
        return 0;
    if (in[0].dtype == TRTL_INT8) {
        trtl_adder_q q = int8_view(a);
        size_t b = a->int8_scale > 0 ? trtl_adder_q_workspace(&q, g.H, g.W) : 0;
        return b == (size_t)-1 ? 0 : b;
    }
    if (!fast_ok(&g) || !use_fast())
        return 0;
    /* one padded-sample slot per thread that may run (trtl_current_pool()), then the offsets */
    return ws_plane_bytes(&g) * (size_t)trtl_available_cpus() + (size_t)g.K * sizeof(int32_t);
}

/* ---- reference ----------------------------------------------------------------------------- */

/* Output columns [*lo, *hi) of tap j read inside the input row; the others read padding. */
static void valid_cols(int64_t j, int64_t s, int64_t p, int64_t W, int64_t OW, int64_t *lo, int64_t *hi)
{
    int64_t l = p - j <= 0 ? 0 : (p - j + s - 1) / s, t = W - 1 + p - j, h = t < 0 ? 0 : t / s + 1;
    *lo = l < OW ? l : OW;
    *hi = h < *lo ? *lo : (h < OW ? h : OW);
}

/* The definition, one output row at a time (the row loops vectorize without intrinsics). */
static void adder_ref(const adder2d *a, const geom *g, const float *x, float *y)
{
    const int64_t k = a->k, s = a->s, p = a->p, K = g->K, OW = g->OW;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t f = 0; f < a->F; f++)
            for (int64_t oy = 0; oy < g->OH; oy++) {
                float *yr = y + ((n * a->F + f) * g->OH + oy) * OW;
                for (int64_t ox = 0; ox < OW; ox++)
                    yr[ox] = 0;
                for (int64_t c = 0; c < g->C; c++)
                    for (int64_t i = 0; i < k; i++) {
                        const int64_t iy = oy * s + i - p;
                        const int row_ok = iy >= 0 && iy < g->H;
                        const float *xr = row_ok ? x + ((n * g->C + c) * g->H + iy) * g->W : x;
                        for (int64_t j = 0; j < k; j++) {
                            const float wv = a->w[f * K + (c * k + i) * k + j], aw = wv < 0 ? -wv : wv;
                            int64_t lo = 0, hi = 0; /* [0, 0): the whole row is padding */
                            if (row_ok)
                                valid_cols(j, s, p, g->W, OW, &lo, &hi);
                            for (int64_t ox = 0; ox < lo; ox++)
                                yr[ox] += aw; /* |0 - w| */
                            for (int64_t ox = lo; ox < hi; ox++) {
                                float d = xr[ox * s + j - p] - wv;
                                yr[ox] += d < 0 ? -d : d;
                            }
                            for (int64_t ox = hi; ox < OW; ox++)
                                yr[ox] += aw;
                        }
                    }
                for (int64_t ox = 0; ox < OW; ox++)
                    yr[ox] = -yr[ox];
            }
}

/* ---- AVX2 path ----------------------------------------------------------------------------- */

/* Copies sample x [C][H][W] into the zero-bordered phase-split plane (see the top comment). */
static void pad_sample(const adder2d *a, const geom *g, const float *x, float *dst)
{
    const int64_t s = a->s, p = a->p;
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t r = 0; r < g->hp; r++) {
            float *row = dst + c * g->plane + r * g->row;
            int64_t iy = r - p;
            if (iy < 0 || iy >= g->H) {
                memset(row, 0, sizeof(float) * (size_t)g->row);
                continue;
            }
            const float *src = x + (c * g->H + iy) * g->W;
            for (int64_t q = 0; q < s; q++) {
                /* sub[t] = padded column t*s + q = input column t*s + q - p, zero outside [0, W). */
                float *sub = row + q * g->lp;
                int64_t lo, hi;
                valid_cols(q, s, p, g->W, g->lp, &lo, &hi);
                memset(sub, 0, sizeof(float) * (size_t)lo);
                if (s == 1)
                    memcpy(sub + lo, src + lo - p, sizeof(float) * (size_t)(hi - lo));
                else
                    for (int64_t t = lo; t < hi; t++)
                        sub[t] = src[t * s + q - p];
                memset(sub + hi, 0, sizeof(float) * (size_t)(g->lp - hi));
            }
        }
}

static void make_offsets(const adder2d *a, const geom *g, int32_t *off)
{
    const int64_t k = a->k, s = a->s;
    int64_t q = 0;
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < k; j++)
                off[q++] = (int32_t)(c * g->plane + i * g->row + (j % s) * g->lp + j / s);
}

#define AVX2_FN __attribute__((target("avx2,fma")))

/* One output chunk of a register tile: where its 8 (or fewer) pixels go, and their box sum. */
typedef struct chunk {
    const float *x; /* the chunk's first pixel in the padded plane, tap (0, 0, 0) */
    float *y;       /* output of the group's first filter; filter m at y + m * ohw */
    int64_t cnt;    /* pixels to store: 8, fewer for the last chunk of a row, 0 for none */
    __m256 sx;      /* sum of x over the window, per pixel */
} chunk;

/* y = 2 * acc - (sx + wsum): |x - w| summed, negated.  Full chunks store 8 floats, a row's last
 * chunk stores cnt with a mask (the unused lanes computed padding columns). */
static inline __attribute__((always_inline)) AVX2_FN void store_row(const chunk *c, float *y, __m256 mask, __m256 acc,
                                                                    float wsum)
{
    __m256 v = _mm256_fmsub_ps(_mm256_set1_ps(2.0f), acc, _mm256_add_ps(c->sx, _mm256_set1_ps(wsum)));
    if (c->cnt == CHUNK)
        _mm256_storeu_ps(y, v);
    else if (c->cnt > 0)
        _mm256_maskstore_ps(y, _mm256_castps_si256(mask), v);
}

/* The register tile: 16 pixels (chunks a, b) x MR filters.  For every tap q, one load per chunk,
 * MR broadcasts of w[q][m], 2*MR min + 2*MR add into 2*MR accumulators.  Inlined into one
 * function per MR so that the accumulators stay in registers (checked: no spills at MR = 6). */
static inline __attribute__((always_inline)) AVX2_FN void tile_mr(const int MR, const chunk *a, const chunk *b,
                                                                  const int32_t *off, int64_t K, const float *w,
                                                                  const float *wsum, int64_t ohw)
{
    __m256 a0[MAX_MR], a1[MAX_MR];
    const float *xa = a->x, *xb = b->x;
#pragma GCC unroll 6
    for (int m = 0; m < MR; m++) {
        a0[m] = _mm256_setzero_ps();
        a1[m] = _mm256_setzero_ps();
    }
    for (int64_t q = 0; q < K; q++) {
        __m256 va = _mm256_loadu_ps(xa + off[q]);
        __m256 vb = _mm256_loadu_ps(xb + off[q]);
#pragma GCC unroll 6
        for (int m = 0; m < MR; m++) {
            __m256 vw = _mm256_broadcast_ss(w + m);
            a0[m] = _mm256_add_ps(a0[m], _mm256_min_ps(va, vw));
            a1[m] = _mm256_add_ps(a1[m], _mm256_min_ps(vb, vw));
        }
        w += MR;
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 ma = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)a->cnt), lane));
    const __m256 mb = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)b->cnt), lane));
#pragma GCC unroll 6
    for (int m = 0; m < MR; m++) {
        store_row(a, a->y + m * ohw, ma, a0[m], wsum[m]);
        store_row(b, b->y + m * ohw, mb, a1[m], wsum[m]);
    }
}

#define TILE_FN(MR)                                                                                                   \
    static AVX2_FN void tile_##MR(const chunk *a, const chunk *b, const int32_t *off, int64_t K, const float *w,     \
                                  const float *wsum, int64_t ohw)                                                     \
    {                                                                                                                 \
        tile_mr(MR, a, b, off, K, w, wsum, ohw);                                                                      \
    }
TILE_FN(1)
TILE_FN(2)
TILE_FN(3)
TILE_FN(4)
TILE_FN(5)
TILE_FN(6)
#undef TILE_FN

typedef void (*tile_fn)(const chunk *, const chunk *, const int32_t *, int64_t, const float *, const float *, int64_t);

/* Sum of the K taps of one chunk: the box sum of x shared by every filter. */
static AVX2_FN __m256 box_sum(const float *x, const int32_t *off, int64_t K)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t q = 0;
    for (; q + 1 < K; q += 2) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + off[q]));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + off[q + 1]));
    }
    if (q < K)
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + off[q]));
    return _mm256_add_ps(s0, s1);
}

/* Chunk t of a sample: output row t / cpr, columns from (t % cpr) * 8. */
static AVX2_FN void chunk_at(const adder2d *a, const geom *g, const float *pad, float *yn, int64_t t, const int32_t *off,
                             chunk *c)
{
    const int64_t cpr = (g->OW + CHUNK - 1) / CHUNK, oy = t / cpr, ox = t % cpr * CHUNK;
    c->x = pad + oy * a->s * g->row + ox;
    c->y = yn + oy * g->OW + ox;
    c->cnt = g->OW - ox < CHUNK ? g->OW - ox : CHUNK;
    c->sx = box_sum(c->x, off, g->K);
}

/* All output chunks [t0, t1) (pairs start at even t) of one padded sample. */
static AVX2_FN void sample_chunks(const adder2d *a, const geom *g, const float *pad, float *yn, const int32_t *off,
                                  int64_t t0, int64_t t1)
{
    static const tile_fn tiles[MAX_MR + 1] = {NULL, tile_1, tile_2, tile_3, tile_4, tile_5, tile_6};
    const int64_t K = g->K, ohw = g->OH * g->OW, nch = g->OH * ((g->OW + g->cw - 1) / g->cw);
    const int32_t ng = group_count(a->F);
    for (int64_t t = t0; t < t1; t += 2) {
        chunk ca, cb;
        chunk_at(a, g, pad, yn, t, off, &ca);
        if (t + 1 < nch) {
            chunk_at(a, g, pad, yn, t + 1, off, &cb);
        } else { /* an odd last chunk: b recomputes a and stores nothing */
            cb = ca;
            cb.cnt = 0;
        }
        for (int32_t gi = 0; gi < ng; gi++) {
            int32_t f0, mr;
            group_range(a->F, gi, &f0, &mr);
            chunk ga = ca, gb = cb;
            ga.y += f0 * ohw;
            gb.y += f0 * ohw;
            tiles[mr](&ga, &gb, off, K, a->wpack + f0 * K, a->wsum + f0, ohw);
        }
    }
}

/* ---- AVX-512 path: the AVX2 tile with 16-column chunks (same weights, offsets and plane) ---------- */

#define AVX512_FN __attribute__((target("avx512f,avx2,fma")))

typedef struct chunk512 {
    const float *x;
    float *y;
    int64_t cnt; /* pixels to store: 16, fewer for a row's last chunk, 0 for none */
    __m512 sx;
} chunk512;

static inline __attribute__((always_inline)) AVX512_FN void tile512_mr(const int MR, const chunk512 *a,
                                                                       const chunk512 *b, const int32_t *off,
                                                                       int64_t K, const float *w, const float *wsum,
                                                                       int64_t ohw)
{
    __m512 a0[MAX_MR], a1[MAX_MR];
    const float *xa = a->x, *xb = b->x;
#pragma GCC unroll 6
    for (int m = 0; m < MR; m++) {
        a0[m] = _mm512_setzero_ps();
        a1[m] = _mm512_setzero_ps();
    }
    for (int64_t q = 0; q < K; q++) {
        __m512 va = _mm512_loadu_ps(xa + off[q]);
        __m512 vb = _mm512_loadu_ps(xb + off[q]);
#pragma GCC unroll 6
        for (int m = 0; m < MR; m++) {
            __m512 vw = _mm512_set1_ps(w[m]);
            a0[m] = _mm512_add_ps(a0[m], _mm512_min_ps(va, vw)); /* operand order as the AVX2 tile (NaN) */
            a1[m] = _mm512_add_ps(a1[m], _mm512_min_ps(vb, vw));
        }
        w += MR;
    }
    const __mmask16 ma = (__mmask16)((1u << a->cnt) - 1u), mb = (__mmask16)((1u << b->cnt) - 1u);
#pragma GCC unroll 6
    for (int m = 0; m < MR; m++) {
        __m512 ws = _mm512_set1_ps(wsum[m]), two = _mm512_set1_ps(2.0f);
        _mm512_mask_storeu_ps(a->y + m * ohw, ma, _mm512_fmsub_ps(two, a0[m], _mm512_add_ps(a->sx, ws)));
        _mm512_mask_storeu_ps(b->y + m * ohw, mb, _mm512_fmsub_ps(two, a1[m], _mm512_add_ps(b->sx, ws)));
    }
}

#define TILE512_FN(MR)                                                                                                \
    static AVX512_FN void tile512_##MR(const chunk512 *a, const chunk512 *b, const int32_t *off, int64_t K,         \
                                       const float *w, const float *wsum, int64_t ohw)                               \
    {                                                                                                                 \
        tile512_mr(MR, a, b, off, K, w, wsum, ohw);                                                                   \
    }
TILE512_FN(1)
TILE512_FN(2)
TILE512_FN(3)
TILE512_FN(4)
TILE512_FN(5)
TILE512_FN(6)
#undef TILE512_FN

typedef void (*tile512_fn)(const chunk512 *, const chunk512 *, const int32_t *, int64_t, const float *, const float *,
                           int64_t);

static AVX512_FN __m512 box_sum512(const float *x, const int32_t *off, int64_t K)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int64_t q = 0;
    for (; q + 1 < K; q += 2) {
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + off[q]));
        s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + off[q + 1]));
    }
    if (q < K)
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + off[q]));
    return _mm512_add_ps(s0, s1);
}

static AVX512_FN void chunk_at512(const adder2d *a, const geom *g, const float *pad, float *yn, int64_t t,
                                  const int32_t *off, chunk512 *c)
{
    const int64_t cpr = (g->OW + 15) / 16, oy = t / cpr, ox = t % cpr * 16;
    c->x = pad + oy * a->s * g->row + ox;
    c->y = yn + oy * g->OW + ox;
    c->cnt = g->OW - ox < 16 ? g->OW - ox : 16;
    c->sx = box_sum512(c->x, off, g->K);
}

static AVX512_FN void sample_chunks512(const adder2d *a, const geom *g, const float *pad, float *yn,
                                       const int32_t *off, int64_t t0, int64_t t1)
{
    static const tile512_fn tiles[MAX_MR + 1] = {NULL,         tile512_1, tile512_2, tile512_3,
                                                 tile512_4, tile512_5, tile512_6};
    const int64_t K = g->K, ohw = g->OH * g->OW, nch = g->OH * ((g->OW + 15) / 16);
    const int32_t ng = group_count(a->F);
    for (int64_t t = t0; t < t1; t += 2) {
        chunk512 ca, cb;
        chunk_at512(a, g, pad, yn, t, off, &ca);
        if (t + 1 < nch) {
            chunk_at512(a, g, pad, yn, t + 1, off, &cb);
        } else {
            cb = ca;
            cb.cnt = 0;
        }
        for (int32_t gi = 0; gi < ng; gi++) {
            int32_t f0, mr;
            group_range(a->F, gi, &f0, &mr);
            chunk512 ga = ca, gb = cb;
            ga.y += f0 * ohw;
            gb.y += f0 * ohw;
            tiles[mr](&ga, &gb, off, K, a->wpack + f0 * K, a->wsum + f0, ohw);
        }
    }
}

typedef struct adder_job {
    const adder2d *a;
    const geom *g;
    const float *x;
    float *y;
    char *slots;          /* per-thread padded samples */
    const int32_t *off;
} adder_job;

/* Batch > 1: whole samples per task, each thread padding into its own slot. */
static AVX2_FN void sample_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    const adder_job *j = ctx;
    const geom *g = j->g;
    float *pad = (float *)(j->slots + (size_t)thread * ws_plane_bytes(g));
    const int64_t ohw = g->OH * g->OW, nch = g->OH * ((g->OW + g->cw - 1) / g->cw);
    for (int64_t n = begin; n < end; n++) {
        pad_sample(j->a, g, j->x + n * g->C * g->H * g->W, pad);
        if (g->cw == 16)
            sample_chunks512(j->a, g, pad, j->y + n * j->a->F * ohw, j->off, 0, nch);
        else
            sample_chunks(j->a, g, pad, j->y + n * j->a->F * ohw, j->off, 0, nch);
    }
}

/* Batch 1: pairs of output chunks per task over one shared padded sample. */
static AVX2_FN void chunk_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const adder_job *j = ctx;
    if (j->g->cw == 16)
        sample_chunks512(j->a, j->g, (const float *)j->slots, j->y, j->off, 2 * begin, 2 * end);
    else
        sample_chunks(j->a, j->g, (const float *)j->slots, j->y, j->off, 2 * begin, 2 * end);
}

static AVX2_FN void adder_avx2(const adder2d *a, const geom *g, const float *x, float *y, void *workspace)
{
    trtl_threadpool *pool = trtl_current_pool();
    int nthreads = trtl_threadpool_size(pool);
    if (nthreads > trtl_available_cpus()) /* more threads than workspace slots: run here */
        pool = NULL;
    int32_t *off = (int32_t *)((char *)workspace + ws_plane_bytes(g) * (size_t)trtl_available_cpus());
    const int64_t nch = g->OH * ((g->OW + g->cw - 1) / g->cw);
    make_offsets(a, g, off);
    adder_job job = {a, g, x, y, workspace, off};
    if (g->N > 1 || !pool) {
        trtl_parallel_for(pool, g->N, 1, sample_task, &job);
    } else {
        pad_sample(a, g, x, workspace);
        /* ~16 pairs a task keeps the per-task overhead small on LeNet-sized maps */
        trtl_parallel_for(pool, (nch + 1) / 2, 16, chunk_task, &job);
    }
}

/* ---- enqueue ------------------------------------------------------------------------------- */

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    const adder2d *a = (const adder2d *)self;
    trtl_plugin_tensor_desc want;
    geom g;
    if (trtl_check_output_count(nb_out, 1, msg, msg_len) || output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    if (geom_init(a, &in_desc[0].dims, &g))
        return trtl_plugin_fail(msg, msg_len, "input dims are not concrete");
    if (out_desc[0].dims.nb_dims != 4 || out_desc[0].dims.d[0] != g.N || out_desc[0].dims.d[1] != a->F ||
        out_desc[0].dims.d[2] != g.OH || out_desc[0].dims.d[3] != g.OW)
        return trtl_plugin_fail(msg, msg_len, "output buffer dims do not match [%lld, %d, %lld, %lld]", (long long)g.N,
                                (int)a->F, (long long)g.OH, (long long)g.OW);
    if (g.N == 0 || g.OH == 0 || g.OW == 0)
        return 0;
    if (out_desc[0].dtype != want.dtype)
        return trtl_plugin_fail(msg, msg_len, "output buffer is %s, expected %s", trtl_dtype_name(out_desc[0].dtype),
                                trtl_dtype_name(want.dtype));
    if (in_desc[0].dtype == TRTL_INT8) {
        trtl_adder_q q = int8_view(a);
        trtl_adder_q_run(&q, inputs[0], g.N, g.H, g.W, outputs[0], workspace);
        return 0;
    }
    if (use_fast() && fast_ok(&g) && workspace)
        adder_avx2(a, &g, inputs[0], outputs[0], workspace);
    else
        adder_ref(a, &g, inputs[0], outputs[0]);
    return 0;
}

/* ---- reduced precision (plugin ABI version 2) ----------------------------------------------- */

/* Input 0 may be INT8 codes; the output is FLOAT, or INT8 codes once 'outputScale' is set (with INT8 input). */
static int32_t supports_format(const trtl_plugin *self, int32_t pos, const trtl_plugin_tensor_desc *desc, int32_t nb_in,
                               int32_t nb_out)
{
    const adder2d *a = (const adder2d *)self;
    if (nb_in != 1 || nb_out != 1 || pos < 0 || pos > 1)
        return 0;
    if (pos == 1 && a->out_scale > 0)
        return desc[1].dtype == TRTL_INT8 && desc[0].dtype == TRTL_INT8;
    return desc[pos].dtype == TRTL_FLOAT || (pos == 0 && desc[pos].dtype == TRTL_INT8);
}

/* An INT8 input: the shared scale is the larger of the proposed one (calibrated range / 127) and
 * max|W| / 127, written back so that the builder quantizes the input with it. */
static int configure(trtl_plugin *self, trtl_plugin_quant_desc *in, int32_t nb_in, trtl_plugin_quant_desc *out,
                     int32_t nb_out, char *msg, size_t msg_len)
{
    adder2d *a = (adder2d *)self;
    if (nb_in != 1 || nb_out != 1)
        return trtl_plugin_fail(msg, msg_len, "expects 1 input and 1 output, got %d and %d", (int)nb_in, (int)nb_out);
    if (out[0].dtype != TRTL_FLOAT)
        return trtl_plugin_fail(msg, msg_len, "the output must be FLOAT, got %s", trtl_dtype_name(out[0].dtype));
    if (in[0].dtype == TRTL_FLOAT)
        return 0;
    if (in[0].dtype != TRTL_INT8)
        return trtl_plugin_fail(msg, msg_len, "input 0 must be FLOAT or INT8, got %s", trtl_dtype_name(in[0].dtype));
    if (!(in[0].scale > 0) || !isfinite(in[0].scale))
        return trtl_plugin_fail(msg, msg_len, "input 0's INT8 scale must be positive and finite, got %g",
                                (double)in[0].scale);
    const float scale = fmaxf(in[0].scale, weight_scale(a));
    const int had = a->int8_scale > 0;
    if (set_int8_scale(a, scale, msg, msg_len))
        return 1;
    if (!had)
        trtl_builtin_field(&a->h, &field_descs[F_INT8_SCALE], &a->int8_scale, 1);
    in[0].scale = scale;
    return 0;
}

static const trtl_plugin_vtable_v2 vtable2 = {
    .base =
        {
            .struct_size = sizeof(trtl_plugin_vtable_v2),
            .abi_version = TRTL_PLUGIN_ABI_VERSION_2,
            .num_outputs = trtl_builtin_one_output,
            .output_desc = output_desc,
            .workspace_size = workspace_size,
            .enqueue = enqueue,
            .get_fields = trtl_builtin_get_fields,
            .clone = trtl_builtin_clone,
            .destroy = trtl_builtin_destroy,
        },
    .supports_format = supports_format,
    .configure = configure,
};
static const trtl_builtin_class cls = {
    .vt = &vtable2.base, .size = sizeof(adder2d), .first_of_many = 1, .tail = tail, .init = init, .relink = relink};

const trtl_plugin_creator trtl_creator_adder2d = TRTL_BUILTIN_CREATOR("Adder2d_TRT", field_descs, cls);
