/*
 * scaled_tanh_plugin.c -- an external trtlite plugin library, written only against the public
 * header trtlite/plugin.h (no trtlite internals, no link against trtlite).
 *
 * Plugin "ScaledTanh_EXAMPLE" v1:  y = alpha * tanh(beta * x), elementwise, float32, any shape.
 * Fields: alpha, beta (FLOAT32, default 1).
 *
 * Build:  cc -std=c11 -O2 -fPIC -shared -Icsrc/include examples/plugins/scaled_tanh_plugin.c \
 *             -o build/plugins/libscaled_tanh_plugin.so -lm        (make build/plugins/libscaled_tanh_plugin.so)
 * Use:    trt.get_plugin_registry().load_library("build/plugins/libscaled_tanh_plugin.so"), then
 *         registry.get_plugin_creator("ScaledTanh_EXAMPLE", "1", "").create_plugin(name, fields).
 *
 * What a library must provide: creators with static storage duration (the registry borrows them
 * and never unloads the library) and the entry point trtl_get_plugin_creators (bottom of this file).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/plugin.h"

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

static const trtl_plugin_field_desc field_descs[] = {
    {"alpha", TRTL_PF_FLOAT32, 0},
    {"beta", TRTL_PF_FLOAT32, 0},
};

typedef struct scaled_tanh {
    trtl_plugin base; /* first member: trtlite sees a trtl_plugin */
    float alpha, beta;
    trtl_plugin_field fields[2]; /* what get_fields returns; points into this instance */
} scaled_tanh;

static const trtl_plugin_vtable vtable;

static scaled_tanh *new_instance(const trtl_plugin_creator *cr, float alpha, float beta)
{
    scaled_tanh *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->base.vt = &vtable;
    t->base.creator = cr;
    t->alpha = alpha;
    t->beta = beta;
    t->fields[0] = (trtl_plugin_field){"alpha", &t->alpha, TRTL_PF_FLOAT32, 1};
    t->fields[1] = (trtl_plugin_field){"beta", &t->beta, TRTL_PF_FLOAT32, 1};
    return t;
}

/* Fields arrive checked by trtlite (known names, right types); values are ours to check. */
static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    float v[2] = {1.0f, 1.0f};
    for (int32_t i = 0; i < fields->nb_fields; i++) {
        const trtl_plugin_field *f = &fields->fields[i];
        int k = strcmp(f->name, "alpha") == 0 ? 0 : 1;
        if (f->length != 1) {
            snprintf(msg, msg_len, "field '%s' must hold exactly one FLOAT32, got %d", f->name, (int)f->length);
            return NULL;
        }
        v[k] = *(const float *)f->data;
        if (!isfinite(v[k])) {
            snprintf(msg, msg_len, "field '%s' must be finite", f->name);
            return NULL;
        }
    }
    scaled_tanh *t = new_instance(self, v[0], v[1]);
    if (!t)
        snprintf(msg, msg_len, "out of memory");
    return t ? &t->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const scaled_tanh *t = (const scaled_tanh *)self;
    scaled_tanh *c = new_instance(t->base.creator, t->alpha, t->beta);
    return c ? &c->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 2;
    out->fields = ((const scaled_tanh *)self)->fields;
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
    *out = in[0]; /* same dims, -1 (dynamic) included */
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
    const scaled_tanh *t = (const scaled_tanh *)self;
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t n = 1;
    for (int32_t i = 0; i < in_desc[0].dims.nb_dims; i++)
        n *= in_desc[0].dims.d[i]; /* concrete at enqueue; batch included */
    for (int64_t i = 0; i < n; i++)
        y[i] = t->alpha * tanhf(t->beta * x[i]);
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

static const trtl_plugin_creator creator = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "ScaledTanh_EXAMPLE",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 2,
    .create = create,
    .user = NULL,
};

static const trtl_plugin_creator *const creators[] = {&creator};

/* The library's entry point (TRTL_PLUGIN_LIBRARY_ENTRY): its creators and the ABI it was built for. */
EXPORT const trtl_plugin_creator *const *trtl_get_plugin_creators(int32_t *count, uint32_t *abi_version)
{
    *count = (int32_t)(sizeof creators / sizeof creators[0]);
    *abi_version = TRTL_PLUGIN_ABI_VERSION;
    return creators;
}
