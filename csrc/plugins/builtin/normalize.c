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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

enum { F_WEIGHTS, F_ACROSS_SPATIAL, F_CHANNEL_SHARED, F_NB_WEIGHTS, F_EPS, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_WEIGHTS] = {"weights", TRTL_PF_FLOAT32, 1},
    [F_ACROSS_SPATIAL] = {"acrossSpatial", TRTL_PF_INT32, 0},
    [F_CHANNEL_SHARED] = {"channelShared", TRTL_PF_INT32, 0},
    [F_NB_WEIGHTS] = {"nbWeights", TRTL_PF_INT32, 0},
    [F_EPS] = {"eps", TRTL_PF_FLOAT32, 0},
};

typedef struct normalize {
    trtl_plugin base;
    int32_t across_spatial, channel_shared, nb_weights, n_scale;
    float eps;
    float *scale; /* n_scale */
    trtl_plugin_field fields[F_COUNT];
} normalize;

static const trtl_plugin_vtable vtable;

static const trtl_plugin_field *find_field(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; fs && i < fs->nb_fields; i++)
        if (fs->fields[i].name && strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

/* One value of a scalar field (INT32 or FLOAT32, 4 bytes), left unchanged when absent. */
static int read_scalar(const trtl_plugin_fields *fs, const char *name, void *v, char *msg, size_t n)
{
    const trtl_plugin_field *f = find_field(fs, name);
    if (!f)
        return 0;
    if (f->length != 1) {
        snprintf(msg, n, "field '%s' must hold exactly one value, got %d", name, (int)f->length);
        return 1;
    }
    memcpy(v, f->data, 4);
    return 0;
}

static void destroy(trtl_plugin *self)
{
    normalize *p = (normalize *)self;
    if (!p)
        return;
    free(p->scale);
    free(p);
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    normalize *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    p->base.vt = &vtable;
    p->base.creator = self;
    p->nb_weights = 1;
    p->eps = 1e-10f; /* Caffe's default */
    if (read_scalar(fields, "acrossSpatial", &p->across_spatial, msg, msg_len) ||
        read_scalar(fields, "channelShared", &p->channel_shared, msg, msg_len) ||
        read_scalar(fields, "nbWeights", &p->nb_weights, msg, msg_len) || read_scalar(fields, "eps", &p->eps, msg, msg_len))
        goto fail;
    p->across_spatial = p->across_spatial != 0;
    p->channel_shared = p->channel_shared != 0;
    if (p->nb_weights != 1) {
        snprintf(msg, msg_len, "field 'nbWeights' counts weight arrays and must be 1, got %d", (int)p->nb_weights);
        goto fail;
    }
    if (!(p->eps >= 0.0f) || !isfinite(p->eps)) {
        snprintf(msg, msg_len, "field 'eps' must be finite and >= 0, got %g", p->eps);
        goto fail;
    }
    const trtl_plugin_field *w = find_field(fields, "weights");
    if (!w || w->length < 1) {
        snprintf(msg, msg_len, "field 'weights' must hold at least one value");
        goto fail;
    }
    if (p->channel_shared && w->length != 1) {
        snprintf(msg, msg_len, "field 'weights' must hold 1 value when channelShared is set, got %d", (int)w->length);
        goto fail;
    }
    p->n_scale = w->length;
    p->scale = malloc(sizeof(float) * (size_t)p->n_scale);
    if (!p->scale) {
        snprintf(msg, msg_len, "out of memory");
        goto fail;
    }
    memcpy(p->scale, w->data, sizeof(float) * (size_t)p->n_scale);
    p->fields[F_WEIGHTS] = (trtl_plugin_field){"weights", p->scale, TRTL_PF_FLOAT32, p->n_scale};
    p->fields[F_ACROSS_SPATIAL] = (trtl_plugin_field){"acrossSpatial", &p->across_spatial, TRTL_PF_INT32, 1};
    p->fields[F_CHANNEL_SHARED] = (trtl_plugin_field){"channelShared", &p->channel_shared, TRTL_PF_INT32, 1};
    p->fields[F_NB_WEIGHTS] = (trtl_plugin_field){"nbWeights", &p->nb_weights, TRTL_PF_INT32, 1};
    p->fields[F_EPS] = (trtl_plugin_field){"eps", &p->eps, TRTL_PF_FLOAT32, 1};
    return &p->base;
fail:
    destroy(&p->base);
    return NULL;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

static int check_input(const normalize *p, const trtl_plugin_tensor_desc *in, int32_t nb_in, char *msg, size_t msg_len)
{
    if (nb_in != 1) {
        snprintf(msg, msg_len, "Normalize_TRT takes one input, got %d", (int)nb_in);
        return 1;
    }
    if (in[0].dtype != TRTL_FLOAT) {
        snprintf(msg, msg_len, "input must be float32");
        return 1;
    }
    if (in[0].dims.nb_dims < 2) {
        snprintf(msg, msg_len, "input must be [N, C, ...], got rank %d", (int)in[0].dims.nb_dims);
        return 1;
    }
    int64_t c = in[0].dims.d[1];
    if (!p->channel_shared && c >= 0 && c != p->n_scale) {
        snprintf(msg, msg_len, "field 'weights' holds %d values but the input has %lld channels (one weight per channel "
                 "unless channelShared)", (int)p->n_scale, (long long)c);
        return 1;
    }
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    if (index != 0) {
        snprintf(msg, msg_len, "output %d does not exist (Normalize_TRT has one)", (int)index);
        return 1;
    }
    if (check_input((const normalize *)self, in, nb_in, msg, msg_len))
        return 1;
    out->dims = in[0].dims;
    out->dtype = TRTL_FLOAT;
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
    if (check_input(p, in_desc, nb_in, msg, msg_len))
        return 1;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expected one output, got %d", (int)nb_out);
        return 1;
    }
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
            if (!ss) {
                snprintf(msg, msg_len, "no workspace given (%lld bytes needed)", (long long)(S * 8));
                return 1;
            }
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

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    const normalize *p = (const normalize *)self;
    out->nb_fields = F_COUNT;
    out->fields = p->fields;
    return 0;
}

/* A clone is the instance recreated from its own fields. */
static trtl_plugin *clone(const trtl_plugin *self)
{
    const normalize *p = (const normalize *)self;
    char msg[256];
    trtl_plugin_fields fs = {F_COUNT, p->fields};
    return create(self->creator, "", &fs, msg, sizeof msg);
}

static const trtl_plugin_vtable vtable = {
    .struct_size = sizeof(trtl_plugin_vtable),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .num_outputs = num_outputs,
    .output_desc = output_desc,
    .workspace_size = workspace_size,
    .enqueue = enqueue,
    .get_fields = get_fields,
    .clone = clone,
    .destroy = destroy,
};

const trtl_plugin_creator trtl_creator_normalize = {
    sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "Normalize_TRT", "1", "", field_descs, F_COUNT, create, NULL};
