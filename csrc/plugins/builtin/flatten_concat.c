/*
 * flatten_concat.c -- FlattenConcat_TRT: flatten every input per sample and concatenate them.
 *
 * Inputs: any number >= 1 of float32 tensors [N, ...] (SSD: the [N, C_i, H_i, W_i] box heads).
 * Each sample of input i is flattened to V_i = C_i*H_i*W_i values (its whole per-sample volume);
 * output sample n is in_0[n] ++ in_1[n] ++ ... , S = sum V_i values.
 * Output shape: `axis` (1, 2 or 3; default 1) says where S goes in a rank-4 result, the other
 * dims being 1: axis 1 -> [N, S, 1, 1], axis 2 -> [N, 1, S, 1], axis 3 -> [N, 1, 1, S].  The
 * memory layout is the same for every axis.
 * ignoreBatch != 0: the inputs do not carry a batch (e.g. priors): only sample 0 of each input is
 * used and the output is [1, ...]; otherwise all inputs must have the same batch N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

enum { F_AXIS, F_IGNORE_BATCH, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_AXIS] = {"axis", TRTL_PF_INT32, 0},
    [F_IGNORE_BATCH] = {"ignoreBatch", TRTL_PF_INT32, 0},
};

typedef struct flatten_concat {
    trtl_plugin base;
    int32_t axis, ignore_batch;
    trtl_plugin_field fields[F_COUNT];
} flatten_concat;

static const trtl_plugin_vtable vtable;

static const trtl_plugin_field *find_field(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; fs && i < fs->nb_fields; i++)
        if (fs->fields[i].name && strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

static int read_i32(const trtl_plugin_fields *fs, const char *name, int32_t *v, char *msg, size_t n)
{
    const trtl_plugin_field *f = find_field(fs, name);
    if (!f)
        return 0;
    if (f->length != 1) {
        snprintf(msg, n, "field '%s' must hold exactly one INT32 value, got %d", name, (int)f->length);
        return 1;
    }
    *v = *(const int32_t *)f->data;
    return 0;
}

static void destroy(trtl_plugin *self) { free(self); }

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    flatten_concat *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    p->base.vt = &vtable;
    p->base.creator = self;
    p->axis = 1;
    if (read_i32(fields, "axis", &p->axis, msg, msg_len) || read_i32(fields, "ignoreBatch", &p->ignore_batch, msg, msg_len))
        goto fail;
    if (p->axis < 1 || p->axis > 3) {
        snprintf(msg, msg_len, "field 'axis' must be 1, 2 or 3 (the output dim that holds the concatenation), got %d",
                 (int)p->axis);
        goto fail;
    }
    p->ignore_batch = p->ignore_batch != 0;
    p->fields[F_AXIS] = (trtl_plugin_field){"axis", &p->axis, TRTL_PF_INT32, 1};
    p->fields[F_IGNORE_BATCH] = (trtl_plugin_field){"ignoreBatch", &p->ignore_batch, TRTL_PF_INT32, 1};
    return &p->base;
fail:
    free(p);
    return NULL;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

/* Per-sample volume of a desc (-1 if any of those dims is unknown). */
static int64_t sample_volume(const trtl_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 1; i < d->nb_dims; i++) {
        if (d->d[i] < 0)
            return -1;
        v *= d->d[i];
    }
    return v;
}

/* Checks the inputs; *batch gets the output batch (-1 when unknown), *total the sum (or -1). */
static int check_inputs(const flatten_concat *p, const trtl_plugin_tensor_desc *in, int32_t nb_in, int64_t *batch,
                        int64_t *total, char *msg, size_t msg_len)
{
    if (nb_in < 1) {
        snprintf(msg, msg_len, "FlattenConcat_TRT needs at least one input");
        return 1;
    }
    *batch = p->ignore_batch ? 1 : in[0].dims.d[0];
    *total = 0;
    for (int32_t i = 0; i < nb_in; i++) {
        if (in[i].dtype != TRTL_FLOAT) {
            snprintf(msg, msg_len, "input %d must be float32", (int)i);
            return 1;
        }
        if (in[i].dims.nb_dims < 1) {
            snprintf(msg, msg_len, "input %d must have a batch dim", (int)i);
            return 1;
        }
        int64_t n = in[i].dims.d[0];
        if (!p->ignore_batch) {
            if (n >= 0 && *batch >= 0 && n != *batch) {
                snprintf(msg, msg_len, "input %d has batch %lld but input 0 has %lld (set ignoreBatch for inputs "
                         "without a batch)", (int)i, (long long)n, (long long)*batch);
                return 1;
            }
            if (*batch < 0)
                *batch = n;
        }
        int64_t v = sample_volume(&in[i].dims);
        *total = (v < 0 || *total < 0) ? -1 : *total + v;
    }
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const flatten_concat *p = (const flatten_concat *)self;
    int64_t batch, total;
    if (index != 0) {
        snprintf(msg, msg_len, "output %d does not exist (FlattenConcat_TRT has one)", (int)index);
        return 1;
    }
    if (check_inputs(p, in, nb_in, &batch, &total, msg, msg_len))
        return 1;
    memset(&out->dims, 0, sizeof out->dims);
    out->dims.nb_dims = 4;
    out->dims.d[0] = batch;
    for (int32_t k = 1; k < 4; k++)
        out->dims.d[k] = k == p->axis ? total : 1;
    out->dtype = TRTL_FLOAT;
    return 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    const flatten_concat *p = (const flatten_concat *)self;
    int64_t batch, total;
    (void)workspace;
    if (check_inputs(p, in_desc, nb_in, &batch, &total, msg, msg_len))
        return 1;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expected one output, got %d", (int)nb_out);
        return 1;
    }
    int64_t vol = 1;
    for (int32_t k = 0; k < out_desc[0].dims.nb_dims; k++)
        vol *= out_desc[0].dims.d[k];
    if (vol != batch * total || out_desc[0].dtype != TRTL_FLOAT) {
        snprintf(msg, msg_len, "output must hold %lld x %lld float32 values", (long long)batch, (long long)total);
        return 1;
    }
    float *y = outputs[0];
    int64_t off = 0;
    for (int32_t i = 0; i < nb_in; i++) {
        const int64_t v = sample_volume(&in_desc[i].dims);
        const float *x = inputs[i];
        for (int64_t n = 0; n < batch; n++)
            memcpy(y + n * total + off, x + n * v, sizeof(float) * (size_t)v);
        off += v;
    }
    return 0;
}

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    const flatten_concat *p = (const flatten_concat *)self;
    out->nb_fields = F_COUNT;
    out->fields = p->fields;
    return 0;
}

/* A clone is the instance recreated from its own fields. */
static trtl_plugin *clone(const trtl_plugin *self)
{
    const flatten_concat *p = (const flatten_concat *)self;
    char msg[256];
    trtl_plugin_fields fs = {F_COUNT, p->fields};
    return create(self->creator, "", &fs, msg, sizeof msg);
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

const trtl_plugin_creator trtl_creator_flatten_concat = {
    sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "FlattenConcat_TRT", "1", "", field_descs, F_COUNT, create,
    NULL};
