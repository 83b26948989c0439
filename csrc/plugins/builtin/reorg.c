/*
 * reorg.c -- Reorg_TRT: YOLOv2's reorg layer with Darknet's semantics (reorg_cpu(..., forward = 0)
 * called with the input's w, h, c, as Darknet's reorg layer and TensorRT's plugin do).
 *
 * Input [N, C, H, W] float32, output [N, C*s*s, H/s, W/s] (H, W divisible by s; C divisible by
 * s*s, which the mapping below needs to stay inside the sample).  The output has the same number
 * of elements per sample, and the mapping is NOT space-to-depth: with C' = C / (s*s),
 *
 *   output flat index  L = (k*H + j)*W + i          k < C, j < H, i < W (the INPUT's dims)
 *   c2 = k % C',  off = k / C',  h2 = j*s + off / s,  w2 = i*s + off % s
 *   out[n][L] = in[n][(c2*(H*s) + h2)*(W*s) + w2]    (the input read as if it were [C', H*s, W*s])
 *
 * The output buffer is then simply read as [C*s*s, H/s, W/s].
 * Field: stride (INT32, default 2, >= 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"stride", TRTL_PF_INT32, 0},
};

typedef struct reorg {
    trtl_plugin base;
    int32_t s;
    trtl_plugin_field fields[1]; /* points into this instance */
} reorg;

static const trtl_plugin_vtable vtable;

static reorg *new_instance(const trtl_plugin_creator *cr, int32_t s)
{
    reorg *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base.vt = &vtable;
    r->base.creator = cr;
    r->s = s;
    r->fields[0] = (trtl_plugin_field){"stride", &r->s, TRTL_PF_INT32, 1};
    return r;
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    int32_t s = 2;
    for (int32_t i = 0; i < fields->nb_fields; i++)
        if (strcmp(fields->fields[i].name, "stride") == 0) {
            if (fields->fields[i].length < 1) {
                snprintf(msg, msg_len, "field 'stride' is empty (expected one INT32)");
                return NULL;
            }
            s = *(const int32_t *)fields->fields[i].data;
        }
    if (s < 1 || s > 4096) {
        snprintf(msg, msg_len, "field 'stride' must be between 1 and 4096, got %d", (int)s);
        return NULL;
    }
    reorg *r = new_instance(self, s);
    if (!r)
        snprintf(msg, msg_len, "out of memory");
    return r ? &r->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const reorg *r = (const reorg *)self;
    reorg *c = new_instance(r->base.creator, r->s);
    return c ? &c->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 1;
    out->fields = ((const reorg *)self)->fields;
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
    const int64_t s = ((const reorg *)self)->s;
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
    if ((d->d[2] >= 0 && d->d[2] % s) || (d->d[3] >= 0 && d->d[3] % s)) {
        snprintf(msg, msg_len, "input H x W = %lld x %lld is not divisible by field 'stride' = %lld", (long long)d->d[2],
                 (long long)d->d[3], (long long)s);
        return 1;
    }
    if (d->d[1] >= 0 && d->d[1] % (s * s)) {
        snprintf(msg, msg_len, "input channels C = %lld must be divisible by stride^2 = %lld (field 'stride' = %lld; "
                 "Darknet's reorg mapping needs it)", (long long)d->d[1], (long long)(s * s), (long long)s);
        return 1;
    }
    out->dtype = TRTL_FLOAT;
    out->dims.nb_dims = 4;
    out->dims.d[0] = d->d[0];
    out->dims.d[1] = d->d[1] < 0 ? -1 : d->d[1] * s * s;
    out->dims.d[2] = d->d[2] < 0 ? -1 : d->d[2] / s;
    out->dims.d[3] = d->d[3] < 0 ? -1 : d->d[3] / s;
    return 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    const int64_t s = ((const reorg *)self)->s;
    trtl_plugin_tensor_desc want;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expects 1 output, got %d", (int)nb_out);
        return 1;
    }
    if (output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1], H = d->d[2], W = d->d[3], C2 = C / (s * s);
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t n = 0; n < N; n++) {
        const float *xn = x + n * C * H * W;
        float *yn = y + n * C * H * W;
        for (int64_t k = 0; k < C; k++) {
            const int64_t c2 = k % C2, off = k / C2, dy = off / s, dx = off % s;
            for (int64_t j = 0; j < H; j++) {
                const float *src = xn + (c2 * H * s + j * s + dy) * W * s + dx;
                for (int64_t i = 0; i < W; i++)
                    *yn++ = src[i * s];
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

const trtl_plugin_creator trtl_creator_reorg = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "Reorg_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 1,
    .create = create,
    .user = NULL,
};
