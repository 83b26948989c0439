/*
 * instance_norm.c -- InstanceNormalization_TRT: per (sample, channel) normalization over the
 * spatial dims (ONNX InstanceNormalization):
 *   y = (x - mean) / sqrt(var + epsilon) * scales[c] + bias[c]
 * with the biased variance (divided by the spatial size).  Input [N, C, spatial...] (rank >= 3),
 * float32, output of the same shape.  Statistics are accumulated in double, two passes.
 * Fields: epsilon (FLOAT32, default 1e-5, >= 0), scales and bias (FLOAT32[C], required; their
 * counts must equal the input's C, checked at build time when C is known, else at run time).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"epsilon", TRTL_PF_FLOAT32, 0},
    {"scales", TRTL_PF_FLOAT32, 1},
    {"bias", TRTL_PF_FLOAT32, 1},
};

typedef struct inorm {
    trtl_plugin base;
    float eps;
    int32_t C;
    float *scales, *bias;
    trtl_plugin_field fields[3]; /* point into this instance */
} inorm;

static const trtl_plugin_vtable vtable;

static void destroy(trtl_plugin *self)
{
    inorm *n = (inorm *)self;
    if (!n)
        return;
    free(n->scales);
    free(n->bias);
    free(n);
}

static inorm *new_instance(const trtl_plugin_creator *cr, float eps, int32_t C, const float *scales, const float *bias)
{
    inorm *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->base.vt = &vtable;
    n->base.creator = cr;
    n->eps = eps;
    n->C = C;
    n->scales = malloc(sizeof(float) * (size_t)C);
    n->bias = malloc(sizeof(float) * (size_t)C);
    if (!n->scales || !n->bias) {
        destroy(&n->base);
        return NULL;
    }
    memcpy(n->scales, scales, sizeof(float) * (size_t)C);
    memcpy(n->bias, bias, sizeof(float) * (size_t)C);
    n->fields[0] = (trtl_plugin_field){"epsilon", &n->eps, TRTL_PF_FLOAT32, 1};
    n->fields[1] = (trtl_plugin_field){"scales", n->scales, TRTL_PF_FLOAT32, C};
    n->fields[2] = (trtl_plugin_field){"bias", n->bias, TRTL_PF_FLOAT32, C};
    return n;
}

static const trtl_plugin_field *find_field(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; i < fs->nb_fields; i++)
        if (strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    const trtl_plugin_field *fe = find_field(fields, "epsilon"), *fs = find_field(fields, "scales"),
                            *fb = find_field(fields, "bias");
    float eps = 1e-5f;
    if (fe) {
        if (fe->length < 1) {
            snprintf(msg, msg_len, "field 'epsilon' is empty (expected one FLOAT32)");
            return NULL;
        }
        eps = *(const float *)fe->data;
    }
    if (!(eps >= 0)) {
        snprintf(msg, msg_len, "field 'epsilon' must be >= 0, got %g", (double)eps);
        return NULL;
    }
    if (!fs || fs->length < 1) {
        snprintf(msg, msg_len, "field 'scales' is empty (expected one FLOAT32 per channel)");
        return NULL;
    }
    if (!fb || fb->length != fs->length) {
        snprintf(msg, msg_len, "field 'bias' has %d values but field 'scales' has %d (one per channel each)",
                 fb ? (int)fb->length : 0, (int)fs->length);
        return NULL;
    }
    inorm *n = new_instance(self, eps, fs->length, fs->data, fb->data);
    if (!n)
        snprintf(msg, msg_len, "out of memory");
    return n ? &n->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const inorm *n = (const inorm *)self;
    inorm *c = new_instance(n->base.creator, n->eps, n->C, n->scales, n->bias);
    return c ? &c->base : NULL;
}

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 3;
    out->fields = ((const inorm *)self)->fields;
    return 0;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const inorm *n = (const inorm *)self;
    if (index != 0 || nb_in != 1) {
        snprintf(msg, msg_len, "expects 1 input and has 1 output (got %d inputs, output index %d)", (int)nb_in,
                 (int)index);
        return 1;
    }
    const trtl_dims *d = &in[0].dims;
    if (in[0].dtype != TRTL_FLOAT) {
        snprintf(msg, msg_len, "input must be FLOAT (float32), got dtype %d", (int)in[0].dtype);
        return 1;
    }
    if (d->nb_dims < 3) {
        snprintf(msg, msg_len, "input must be [N, C, spatial...] (rank >= 3, batch included), got rank %d",
                 (int)d->nb_dims);
        return 1;
    }
    if (d->d[1] >= 0 && d->d[1] != n->C) {
        snprintf(msg, msg_len, "input has %lld channels but fields 'scales' and 'bias' have %d values",
                 (long long)d->d[1], (int)n->C);
        return 1;
    }
    *out = in[0];
    return 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    const inorm *in = (const inorm *)self;
    trtl_plugin_tensor_desc want;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expects 1 output, got %d", (int)nb_out);
        return 1;
    }
    if (output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1];
    int64_t S = 1;
    for (int32_t k = 2; k < d->nb_dims; k++)
        S *= d->d[k];
    if (S == 0)
        return 0;
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t p = 0; p < N * C; p++) {
        const float *xp = x + p * S;
        float *yp = y + p * S;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < S; i++)
            sum += xp[i];
        const double mean = sum / (double)S;
        for (int64_t i = 0; i < S; i++) {
            double t = xp[i] - mean;
            sq += t * t;
        }
        const int64_t c = p % C;
        const double a = in->scales[c] / sqrt(sq / (double)S + in->eps), b = in->bias[c];
        /* (x - mean) first: folding mean into the bias would cancel badly when |mean| >> std. */
        for (int64_t i = 0; i < S; i++)
            yp[i] = (float)((xp[i] - mean) * a + b);
    }
    return 0;
}

static const trtl_plugin_vtable vtable = {
    .struct_size = sizeof(trtl_plugin_vtable),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .num_outputs = num_outputs,
    .output_desc = output_desc,
    .workspace_size = NULL,
    .enqueue = enqueue,
    .get_fields = get_fields,
    .clone = clone,
    .destroy = destroy,
};

const trtl_plugin_creator trtl_creator_instance_norm = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "InstanceNormalization_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 3,
    .create = create,
    .user = NULL,
};
