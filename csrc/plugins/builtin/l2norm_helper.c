/*
 * l2norm_helper.c -- L2Norm_Helper_TRT: the elementwise steps of an L2 normalization, on a float32
 * tensor of any shape (output shape = input shape):
 *   op_type 0: y = max(x, eps)      (guards the following rsqrt; NaN passes through)
 *   op_type 1: y = 1 / sqrt(x)
 *   op_type 2: y = sqrt(x)
 * Fields: op_type (INT32, required, 0..2), eps (FLOAT32, default 1e-12, used by op_type 0 only).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

enum { OP_MAX_EPS = 0, OP_RSQRT = 1, OP_SQRT = 2 };

static const trtl_plugin_field_desc field_descs[] = {
    {"op_type", TRTL_PF_INT32, 1},
    {"eps", TRTL_PF_FLOAT32, 0},
};

typedef struct l2h {
    trtl_plugin base;
    int32_t op;
    float eps;
    trtl_plugin_field fields[2]; /* point into this instance */
} l2h;

static const trtl_plugin_vtable vtable;

static l2h *new_instance(const trtl_plugin_creator *cr, int32_t op, float eps)
{
    l2h *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->base.vt = &vtable;
    l->base.creator = cr;
    l->op = op;
    l->eps = eps;
    l->fields[0] = (trtl_plugin_field){"op_type", &l->op, TRTL_PF_INT32, 1};
    l->fields[1] = (trtl_plugin_field){"eps", &l->eps, TRTL_PF_FLOAT32, 1};
    return l;
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
    const trtl_plugin_field *fo = find_field(fields, "op_type"), *fe = find_field(fields, "eps");
    if (!fo || fo->length < 1) {
        snprintf(msg, msg_len, "field 'op_type' is empty (expected one INT32)");
        return NULL;
    }
    int32_t op = *(const int32_t *)fo->data;
    if (op != OP_MAX_EPS && op != OP_RSQRT && op != OP_SQRT) {
        snprintf(msg, msg_len, "field 'op_type' must be 0 (max(x, eps)), 1 (1/sqrt(x)) or 2 (sqrt(x)), got %d", (int)op);
        return NULL;
    }
    float eps = 1e-12f;
    if (fe) {
        if (fe->length < 1) {
            snprintf(msg, msg_len, "field 'eps' is empty (expected one FLOAT32)");
            return NULL;
        }
        eps = *(const float *)fe->data;
    }
    if (!(eps >= 0)) {
        snprintf(msg, msg_len, "field 'eps' must be >= 0, got %g", (double)eps);
        return NULL;
    }
    l2h *l = new_instance(self, op, eps);
    if (!l)
        snprintf(msg, msg_len, "out of memory");
    return l ? &l->base : NULL;
}

static trtl_plugin *clone(const trtl_plugin *self)
{
    const l2h *l = (const l2h *)self;
    l2h *c = new_instance(l->base.creator, l->op, l->eps);
    return c ? &c->base : NULL;
}

static void destroy(trtl_plugin *self) { free(self); }

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    out->nb_fields = 2;
    out->fields = ((const l2h *)self)->fields;
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
    const l2h *l = (const l2h *)self;
    const float eps = l->eps, *x = inputs[0];
    float *y = outputs[0];
    int64_t n = 1;
    for (int32_t i = 0; i < in_desc[0].dims.nb_dims; i++)
        n *= in_desc[0].dims.d[i];
    switch (l->op) {
    case OP_MAX_EPS:
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] < eps ? eps : x[i];
        break;
    case OP_RSQRT:
        for (int64_t i = 0; i < n; i++)
            y[i] = 1.0f / sqrtf(x[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            y[i] = sqrtf(x[i]);
        break;
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

const trtl_plugin_creator trtl_creator_l2norm_helper = {
    .struct_size = sizeof(trtl_plugin_creator),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .name = "L2Norm_Helper_TRT",
    .version = "1",
    .plugin_namespace = "",
    .fields = field_descs,
    .nb_fields = 2,
    .create = create,
    .user = NULL,
};
