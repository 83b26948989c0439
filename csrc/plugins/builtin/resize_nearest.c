/*
 * resize_nearest.c -- ResizeNearest_TRT: nearest-neighbour resize of the last two dims by `scale`
 * (Mask R-CNN's FPN upsampling), float32, rank >= 2, the leading dims untouched.
 *   out = (int)(in * scale)                    (float product, truncated, as TensorRT's plugin)
 *   src = min((int)(dst / scale), in - 1)      (float quotient, truncated; the clamp only matters
 *                                               for scales whose rounding would step past the edge)
 * Field: scale (FLOAT32, required, > 0; the output must not be empty).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"scale", TRTL_PF_FLOAT32, 1},
};

typedef struct resize {
    trtl_plugin base;
    float scale;
    trtl_plugin_field fields[1]; /* points into this instance */
} resize;

static const trtl_plugin_vtable vtable;

static resize *new_instance(const trtl_plugin_creator *cr, float scale)
{
    resize *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base.vt = &vtable;
    r->base.creator = cr;
    r->scale = scale;
    r->fields[0] = (trtl_plugin_field){"scale", &r->scale, TRTL_PF_FLOAT32, 1};
    return r;
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    const trtl_plugin_field *f = NULL;
    for (int32_t i = 0; i < fields->nb_fields; i++)
        if (strcmp(fields->fields[i].name, "scale") == 0)
            f = &fields->fields[i];
    if (!f || f->length < 1) {
        snprintf(msg, msg_len, "field 'scale' is empty (expected one FLOAT32)");
        return NULL;
    }
    float scale = *(const float *)f->data;
    if (!(scale > 0) || scale > 65536.0f) {
        snprintf(msg, msg_len, "field 'scale' must be > 0 and <= 65536, got %g", (double)scale);
        return NULL;
    }
    resize *r = new_instance(self, scale);
    if (!r)
        snprintf(msg, msg_len, "out of memory");
    return r ? &r->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const resize *r = (const resize *)self;
    resize *c = new_instance(r->base.creator, r->scale);
    return c ? &c->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 1;
    out->fields = ((const resize *)self)->fields;
    return 0;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

static int64_t out_size(int64_t in, float scale) { return in < 0 ? -1 : (int64_t)((float)in * scale); }

static int64_t src_index(int64_t dst, float scale, int64_t in)
{
    int64_t s = (int64_t)((float)dst / scale);
    return s < in - 1 ? s : in - 1;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const resize *r = (const resize *)self;
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
    if (d->nb_dims < 2) {
        snprintf(msg, msg_len, "input must have rank >= 2 (the last two dims are resized), got rank %d",
                 (int)d->nb_dims);
        return 1;
    }
    *out = in[0];
    for (int32_t k = d->nb_dims - 2; k < d->nb_dims; k++) {
        out->dims.d[k] = out_size(d->d[k], r->scale);
        if (d->d[k] > 0 && out->dims.d[k] < 1) {
            snprintf(msg, msg_len, "field 'scale' = %g turns input dim %d (%lld) into an empty output", (double)r->scale,
                     (int)k, (long long)d->d[k]);
            return 1;
        }
    }
    return 0;
}

/* Scratch: the source column of every output column. */
static size_t workspace_size(const trtl_plugin *self, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             const trtl_plugin_tensor_desc *out, int32_t nb_out)
{
    (void)self;
    (void)in;
    (void)nb_in;
    if (nb_out < 1 || out[0].dims.nb_dims < 2)
        return 0;
    int64_t ow = out[0].dims.d[out[0].dims.nb_dims - 1];
    return ow > 0 ? (size_t)ow * sizeof(int64_t) : 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    const resize *r = (const resize *)self;
    trtl_plugin_tensor_desc want;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expects 1 output, got %d", (int)nb_out);
        return 1;
    }
    if (output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int32_t nd = d->nb_dims;
    const int64_t H = d->d[nd - 2], W = d->d[nd - 1], OH = want.dims.d[nd - 2], OW = want.dims.d[nd - 1];
    if (out_desc[0].dims.d[nd - 2] != OH || out_desc[0].dims.d[nd - 1] != OW) {
        snprintf(msg, msg_len, "output buffer is %lldx%lld, expected %lldx%lld",
                 (long long)out_desc[0].dims.d[nd - 2], (long long)out_desc[0].dims.d[nd - 1], (long long)OH,
                 (long long)OW);
        return 1;
    }
    int64_t planes = 1;
    for (int32_t k = 0; k < nd - 2; k++)
        planes *= d->d[k];
    if (planes == 0 || OH == 0 || OW == 0)
        return 0;
    if (!workspace) {
        snprintf(msg, msg_len, "no workspace for the column table");
        return 1;
    }
    int64_t *col = workspace;
    for (int64_t ox = 0; ox < OW; ox++)
        col[ox] = src_index(ox, r->scale, W);
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *yp = y + p * OH * OW;
        int64_t prev = -1;
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t iy = src_index(oy, r->scale, H);
            float *yr = yp + oy * OW;
            if (iy == prev) { /* upsampling: the row above reads the same source row */
                memcpy(yr, yr - OW, sizeof(float) * (size_t)OW);
                continue;
            }
            const float *xr = xp + iy * W;
            for (int64_t ox = 0; ox < OW; ox++)
                yr[ox] = xr[col[ox]];
            prev = iy;
        }
    }
    return 0;
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

const trtl_plugin_creator trtl_creator_resize_nearest = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "ResizeNearest_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 1,
    .create = create,
    .user = NULL,
};
