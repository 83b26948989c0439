/*
 * lrelu.c -- LReLU_TRT: leaky ReLU, y = x >= 0 ? x : negSlope * x, elementwise on a float32
 * tensor of any shape (output shape = input shape).  Field: negSlope (FLOAT32, required).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"negSlope", TRTL_PF_FLOAT32, 1},
};

typedef struct lrelu {
    trtl_plugin base;
    float neg_slope;
    trtl_plugin_field fields[1]; /* points into this instance */
} lrelu;

static const trtl_plugin_vtable vtable;

static lrelu *new_instance(const trtl_plugin_creator *cr, float neg_slope)
{
    lrelu *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->base.vt = &vtable;
    l->base.creator = cr;
    l->neg_slope = neg_slope;
    l->fields[0] = (trtl_plugin_field){"negSlope", &l->neg_slope, TRTL_PF_FLOAT32, 1};
    return l;
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    const trtl_plugin_field *f = NULL;
    for (int32_t i = 0; i < fields->nb_fields; i++)
        if (strcmp(fields->fields[i].name, "negSlope") == 0)
            f = &fields->fields[i];
    if (!f || f->length < 1) {
        snprintf(msg, msg_len, "field 'negSlope' is empty (expected one FLOAT32)");
        return NULL;
    }
    lrelu *l = new_instance(self, *(const float *)f->data);
    if (!l)
        snprintf(msg, msg_len, "out of memory");
    return l ? &l->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const lrelu *l = (const lrelu *)self;
    lrelu *c = new_instance(l->base.creator, l->neg_slope);
    return c ? &c->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 1;
    out->fields = ((const lrelu *)self)->fields;
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
    const float a = ((const lrelu *)self)->neg_slope;
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t n = 1;
    for (int32_t i = 0; i < in_desc[0].dims.nb_dims; i++)
        n *= in_desc[0].dims.d[i];
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] >= 0 ? x[i] : a * x[i];
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

const trtl_plugin_creator trtl_creator_lrelu = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "LReLU_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 1,
    .create = create,
    .user = NULL,
};
