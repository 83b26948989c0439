/*
 * normalize.c -- Normalize_TRT: SSD's L2 normalization with a learned scale (Caffe's Normalize).
 *
 * Input and output [N, C, spatial...] float32 (usually [N, C, H, W]).  For each sample:
 *   acrossSpatial != 0: one norm over all C*H*W values,      y = x / sqrt(sum(x^2) + eps) * s_c
 *   acrossSpatial == 0: one norm per spatial position over C, y = x / sqrt(sum_c(x^2) + eps) * s_c
 * where s_c = weights[0] if channelShared != 0, else weights[c] (one per channel).
 * nbWeights counts weight arrays (TensorRT's meaning): it must be 1.  eps defaults to 1e-10.
 */
#include <math.h>
#include <string.h>

#include "plugins/builtin/common.h"

enum { F_WEIGHTS, F_ACROSS_SPATIAL, F_CHANNEL_SHARED, F_NB_WEIGHTS, F_EPS, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_WEIGHTS] = {"weights", TRTL_PF_FLOAT32, 1},
    [F_ACROSS_SPATIAL] = {"acrossSpatial", TRTL_PF_INT32, 0},
    [F_CHANNEL_SHARED] = {"channelShared", TRTL_PF_INT32, 0},
    [F_NB_WEIGHTS] = {"nbWeights", TRTL_PF_INT32, 0},
    [F_EPS] = {"eps", TRTL_PF_FLOAT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 2, TRTL_MAX_DIMS, "[N, C, ...]"};

typedef struct normalize {
    trtl_builtin h;
    int32_t across_spatial, channel_shared, nb_weights, n_scale;
    float eps;
    float *scale; /* n_scale, in the tail */
} normalize;

static void relink(trtl_builtin *h)
{
    normalize *p = (normalize *)h;
    p->scale = (float *)(p + 1);
}

static size_t tail(const trtl_plugin_fields *fs) { return sizeof(float) * (size_t)trtl_field_length(fs, "weights"); }

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    normalize *p = (normalize *)h;
    const trtl_plugin_field *w;
    p->nb_weights = 1;
    p->eps = 1e-10f; /* Caffe's default */
    if (trtl_field_scalar(r, &field_descs[F_ACROSS_SPATIAL], &p->across_spatial) ||
        trtl_field_scalar(r, &field_descs[F_CHANNEL_SHARED], &p->channel_shared) ||
        trtl_field_scalar(r, &field_descs[F_NB_WEIGHTS], &p->nb_weights) ||
        trtl_field_scalar(r, &field_descs[F_EPS], &p->eps))
        return 1;
    p->across_spatial = p->across_spatial != 0;
    p->channel_shared = p->channel_shared != 0;
    if (p->nb_weights != 1)
        return trtl_field_fail(r, "field 'nbWeights' counts weight arrays and must be 1, got %d", (int)p->nb_weights);
    if (!(p->eps >= 0.0f) || !isfinite(p->eps))
        return trtl_field_fail(r, "field 'eps' must be finite and >= 0, got %g", p->eps);
    if (trtl_field_array(r, &field_descs[F_WEIGHTS], 1, TRTL_FIELD_ANY_LENGTH, &w))
        return 1;
    if (p->channel_shared && w->length != 1)
        return trtl_field_fail(r, "field 'weights' must hold 1 value when channelShared is set, got %d",
                               (int)w->length);
    p->n_scale = w->length;
    relink(h);
    memcpy(p->scale, w->data, sizeof(float) * (size_t)p->n_scale);
    trtl_builtin_field(h, &field_descs[F_WEIGHTS], p->scale, p->n_scale);
    trtl_builtin_field(h, &field_descs[F_ACROSS_SPATIAL], &p->across_spatial, 1);
    trtl_builtin_field(h, &field_descs[F_CHANNEL_SHARED], &p->channel_shared, 1);
    trtl_builtin_field(h, &field_descs[F_NB_WEIGHTS], &p->nb_weights, 1);
    trtl_builtin_field(h, &field_descs[F_EPS], &p->eps, 1);
    return 0;
}

static int check_input(const normalize *p, const trtl_plugin_tensor_desc *in, int32_t nb_in, char *msg, size_t msg_len)
{
    if (trtl_check_inputs(in, nb_in, &input_spec, 1, msg, msg_len))
        return 1;
    int64_t c = in[0].dims.d[1];
    if (!p->channel_shared && c >= 0 && c != p->n_scale)
        return trtl_plugin_fail(msg, msg_len, "field 'weights' holds %d values but the input has %lld channels (one "
                                "weight per channel unless channelShared)", (int)p->n_scale, (long long)c);
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    if (trtl_check_output_index(index, 1, msg, msg_len) ||
        check_input((const normalize *)self, in, nb_in, msg, msg_len))
        return 1;
    *out = in[0];
    return 0;
}

/* Per-position sums of squares (one sample at a time) when the norm is not across spatial. */
static size_t workspace_size(const trtl_plugin *self, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             const trtl_plugin_tensor_desc *out, int32_t nb_out)
{
    const normalize *p = (const normalize *)self;
    (void)out;
    (void)nb_out;
    if (p->across_spatial || nb_in < 1)
        return 0;
    int64_t S = 1;
    for (int32_t i = 2; i < in[0].dims.nb_dims; i++)
        S *= in[0].dims.d[i] > 0 ? in[0].dims.d[i] : 1;
    return sizeof(double) * (size_t)S;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    const normalize *p = (const normalize *)self;
    (void)out_desc;
    if (check_input(p, in_desc, nb_in, msg, msg_len) || trtl_check_output_count(nb_out, 1, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1];
    int64_t S = 1;
    for (int32_t i = 2; i < d->nb_dims; i++)
        S *= d->d[i];
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t n = 0; n < N; n++) {
        const float *xs = x + n * C * S;
        float *ys = y + n * C * S;
        if (p->across_spatial) {
            double ss = 0.0;
            for (int64_t i = 0; i < C * S; i++)
                ss += (double)xs[i] * xs[i];
            const double inv = 1.0 / sqrt(ss + p->eps);
            for (int64_t c = 0; c < C; c++) {
                const double k = inv * p->scale[p->channel_shared ? 0 : c];
                for (int64_t s = 0; s < S; s++)
                    ys[c * S + s] = (float)(xs[c * S + s] * k);
            }
        } else {
            /* sums of squares per position, accumulated channel row by channel row (contiguous) */
            double *ss = workspace;
            if (!ss)
                return trtl_plugin_fail(msg, msg_len, "no workspace given (%lld bytes needed)", (long long)(S * 8));
            for (int64_t s = 0; s < S; s++)
                ss[s] = 0.0;
            for (int64_t c = 0; c < C; c++)
                for (int64_t s = 0; s < S; s++)
                    ss[s] += (double)xs[c * S + s] * xs[c * S + s];
            for (int64_t s = 0; s < S; s++)
                ss[s] = 1.0 / sqrt(ss[s] + p->eps);
            for (int64_t c = 0; c < C; c++) {
                const double k = p->scale[p->channel_shared ? 0 : c];
                for (int64_t s = 0; s < S; s++)
                    ys[c * S + s] = (float)(xs[c * S + s] * ss[s] * k);
            }
        }
    }
    return 0;
}

static const trtl_plugin_vtable vtable =
    TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, workspace_size, enqueue);
static const trtl_builtin_class cls = {
    .vt = &vtable, .size = sizeof(normalize), .tail = tail, .init = init, .relink = relink};

const trtl_plugin_creator trtl_creator_normalize = TRTL_BUILTIN_CREATOR("Normalize_TRT", field_descs, cls);
