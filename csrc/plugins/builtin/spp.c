/*
 * spp.c -- SPP_TRT: spatial pyramid pooling (He et al., 2014).
 *
 * Input [N, C, H, W] of any H x W (dynamic H/W are fine: the output does not depend on them).
 * For each level n of pool_list the map is pooled adaptively to n x n bins, bin i covering rows
 * [floor(i*H/n), ceil((i+1)*H/n)) (columns likewise) -- the bins of torch's adaptive_max_pool2d /
 * adaptive_avg_pool2d, never empty, overlapping when H is not a multiple of n.  Each level is
 * flattened in (C, n, n) order and the levels are concatenated:
 *   output [N, C * sum(n^2), 1, 1]   (trailing 1, 1 so that a fully connected layer can follow)
 * Fields: pool_list (INT32 array, required, each >= 1), pool_type (INT32, 0 max (default),
 * 1 average).  Max pooling propagates NaN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

#define MAX_LEVELS 64
#define MAX_BINS 4096 /* per side */

static const trtl_plugin_field_desc field_descs[] = {
    {"pool_list", TRTL_PF_INT32, 1},
    {"pool_type", TRTL_PF_INT32, 0},
};

typedef struct spp {
    trtl_plugin base;
    int32_t nlev, type;
    int32_t levels[MAX_LEVELS];
    int64_t bins; /* sum of n^2 */
    trtl_plugin_field fields[2]; /* point into this instance */
} spp;

static const trtl_plugin_vtable vtable;

static spp *new_instance(const trtl_plugin_creator *cr, const int32_t *levels, int32_t nlev, int32_t type)
{
    spp *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->base.vt = &vtable;
    s->base.creator = cr;
    s->nlev = nlev;
    s->type = type;
    memcpy(s->levels, levels, sizeof(int32_t) * (size_t)nlev);
    for (int32_t l = 0; l < nlev; l++)
        s->bins += (int64_t)levels[l] * levels[l];
    s->fields[0] = (trtl_plugin_field){"pool_list", s->levels, TRTL_PF_INT32, nlev};
    s->fields[1] = (trtl_plugin_field){"pool_type", &s->type, TRTL_PF_INT32, 1};
    return s;
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
    const trtl_plugin_field *fl = find_field(fields, "pool_list"), *ft = find_field(fields, "pool_type");
    if (!fl || fl->length < 1 || fl->length > MAX_LEVELS) {
        snprintf(msg, msg_len, "field 'pool_list' must hold 1 to %d levels, got %d", MAX_LEVELS, fl ? (int)fl->length : 0);
        return NULL;
    }
    const int32_t *lv = fl->data;
    for (int32_t l = 0; l < fl->length; l++)
        if (lv[l] < 1 || lv[l] > MAX_BINS) {
            snprintf(msg, msg_len, "field 'pool_list'[%d] = %d: every level must be between 1 and %d", (int)l, (int)lv[l],
                     MAX_BINS);
            return NULL;
        }
    int32_t type = 0;
    if (ft) {
        if (ft->length < 1) {
            snprintf(msg, msg_len, "field 'pool_type' is empty (expected one INT32)");
            return NULL;
        }
        type = *(const int32_t *)ft->data;
        if (type != 0 && type != 1) {
            snprintf(msg, msg_len, "field 'pool_type' must be 0 (max) or 1 (average), got %d", (int)type);
            return NULL;
        }
    }
    spp *s = new_instance(self, lv, fl->length, type);
    if (!s)
        snprintf(msg, msg_len, "out of memory");
    return s ? &s->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const spp *s = (const spp *)self;
    spp *c = new_instance(s->base.creator, s->levels, s->nlev, s->type);
    return c ? &c->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 2;
    out->fields = ((const spp *)self)->fields;
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
    const spp *s = (const spp *)self;
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
    if (d->nb_dims != 4) {
        snprintf(msg, msg_len, "input must be 4-D [N, C, H, W] (batch included), got rank %d", (int)d->nb_dims);
        return 1;
    }
    if (d->d[2] == 0 || d->d[3] == 0) {
        snprintf(msg, msg_len, "input has an empty %lldx%lld map: there is nothing to pool", (long long)d->d[2],
                 (long long)d->d[3]);
        return 1;
    }
    out->dtype = TRTL_FLOAT;
    out->dims.nb_dims = 4;
    out->dims.d[0] = d->d[0];
    out->dims.d[1] = d->d[1] < 0 ? -1 : d->d[1] * s->bins;
    out->dims.d[2] = 1;
    out->dims.d[3] = 1;
    return 0;
}

/* One bin of one (n, c) plane: rows [y0, y1), columns [x0, x1). */
static float pool_bin(const float *plane, int64_t W, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int avg)
{
    if (avg) {
        double sum = 0;
        for (int64_t y = y0; y < y1; y++)
            for (int64_t x = x0; x < x1; x++)
                sum += plane[y * W + x];
        return (float)(sum / (double)((y1 - y0) * (x1 - x0)));
    }
    float m = plane[y0 * W + x0];
    for (int64_t y = y0; y < y1; y++)
        for (int64_t x = x0; x < x1; x++) {
            float v = plane[y * W + x];
            if (v > m || v != v)
                m = v;
        }
    return m;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    const spp *s = (const spp *)self;
    trtl_plugin_tensor_desc want;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expects 1 output, got %d", (int)nb_out);
        return 1;
    }
    if (output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1], H = d->d[2], W = d->d[3];
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t n = 0; n < N; n++) {
        float *yn = y + n * C * s->bins;
        for (int32_t l = 0; l < s->nlev; l++) {
            const int64_t b = s->levels[l];
            for (int64_t c = 0; c < C; c++) {
                const float *plane = x + (n * C + c) * H * W;
                for (int64_t i = 0; i < b; i++) {
                    int64_t y0 = i * H / b, y1 = ((i + 1) * H + b - 1) / b;
                    for (int64_t j = 0; j < b; j++) {
                        int64_t x0 = j * W / b, x1 = ((j + 1) * W + b - 1) / b;
                        *yn++ = pool_bin(plane, W, y0, y1, x0, x1, s->type == 1);
                    }
                }
            }
        }
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

const trtl_plugin_creator trtl_creator_spp = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "SPP_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 2,
    .create = create,
    .user = NULL,
};
