/*
 * clip.c -- Clip_TRT: y = min(max(x, clipMin), clipMax), elementwise on a float32 tensor of any
 * shape (output shape = input shape; NaN passes through).  Fields: clipMin, clipMax (FLOAT32,
 * both required, clipMin <= clipMax).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"clipMin", TRTL_PF_FLOAT32, 1},
    {"clipMax", TRTL_PF_FLOAT32, 1},
};

typedef struct clip {
    trtl_plugin base;
    float lo, hi;
    trtl_plugin_field fields[2]; /* point into this instance */
} clip;

static const trtl_plugin_vtable vtable;

static clip *new_instance(const trtl_plugin_creator *cr, float lo, float hi)
{
    clip *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base.vt = &vtable;
    c->base.creator = cr;
    c->lo = lo;
    c->hi = hi;
    c->fields[0] = (trtl_plugin_field){"clipMin", &c->lo, TRTL_PF_FLOAT32, 1};
    c->fields[1] = (trtl_plugin_field){"clipMax", &c->hi, TRTL_PF_FLOAT32, 1};
    return c;
}

/* The single FLOAT32 value of a (required, type-checked) field; nonzero + msg when empty. */
static int float_field(const trtl_plugin_fields *fs, const char *name, float *v, char *msg, size_t n)
{
    for (int32_t i = 0; i < fs->nb_fields; i++)
        if (strcmp(fs->fields[i].name, name) == 0) {
            if (fs->fields[i].length < 1)
                break;
            *v = *(const float *)fs->fields[i].data;
            return 0;
        }
    snprintf(msg, n, "field '%s' is empty (expected one FLOAT32)", name);
    return 1;
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    float lo, hi;
    if (float_field(fields, "clipMin", &lo, msg, msg_len) || float_field(fields, "clipMax", &hi, msg, msg_len))
        return NULL;
    if (!(lo <= hi)) {
        snprintf(msg, msg_len, "field 'clipMin' (%g) must be <= field 'clipMax' (%g)", (double)lo, (double)hi);
        return NULL;
    }
    clip *c = new_instance(self, lo, hi);
    if (!c)
        snprintf(msg, msg_len, "out of memory");
    return c ? &c->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const clip *c = (const clip *)self;
    clip *d = new_instance(c->base.creator, c->lo, c->hi);
    return d ? &d->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 2;
    out->fields = ((const clip *)self)->fields;
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
    (void)self;
    if (index != 0 || nb_in != 1) {
        snprintf(msg, msg_len, "expects 1 input and has 1 output (got %d inputs, output index %d)", (int)nb_in,
                 (int)index);
        return 1;
    }
    if (in[0].dtype != TRTL_FLOAT) {
        snprintf(msg, msg_len, "input must be FLOAT (float32), got dtype %d", (int)in[0].dtype);
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
    if (nb_in != 1 || nb_out != 1) {
        snprintf(msg, msg_len, "expects 1 input and 1 output, got %d and %d", (int)nb_in, (int)nb_out);
        return 1;
    }
    const clip *c = (const clip *)self;
    const float lo = c->lo, hi = c->hi, *x = inputs[0];
    float *y = outputs[0];
    int64_t n = 1;
    for (int32_t i = 0; i < in_desc[0].dims.nb_dims; i++)
        n *= in_desc[0].dims.d[i];
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
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

const trtl_plugin_creator trtl_creator_clip = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "Clip_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 2,
    .create = create,
    .user = NULL,
};
