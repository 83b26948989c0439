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
#include <string.h>

#include "plugins/builtin/common.h"

enum { F_AXIS, F_IGNORE_BATCH, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_AXIS] = {"axis", TRTL_PF_INT32, 0},
    [F_IGNORE_BATCH] = {"ignoreBatch", TRTL_PF_INT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 1, TRTL_MAX_DIMS, "[N, ...]"};

typedef struct flatten_concat {
    trtl_builtin h;
    int32_t axis, ignore_batch;
} flatten_concat;

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    flatten_concat *p = (flatten_concat *)h;
    p->axis = 1;
    if (trtl_field_scalar(r, &field_descs[F_AXIS], &p->axis) ||
        trtl_field_scalar(r, &field_descs[F_IGNORE_BATCH], &p->ignore_batch))
        return 1;
    if (p->axis < 1 || p->axis > 3)
        return trtl_field_fail(r, "field 'axis' must be 1, 2 or 3 (the output dim that holds the concatenation), got "
                               "%d", (int)p->axis);
    p->ignore_batch = p->ignore_batch != 0;
    trtl_builtin_field(h, &field_descs[F_AXIS], &p->axis, 1);
    trtl_builtin_field(h, &field_descs[F_IGNORE_BATCH], &p->ignore_batch, 1);
    return 0;
}

/* Checks the inputs; *batch gets the output batch (-1 when unknown), *total the sum (or -1). */
static int check_inputs(const flatten_concat *p, const trtl_plugin_tensor_desc *in, int32_t nb_in, int64_t *batch,
                        int64_t *total, char *msg, size_t msg_len)
{
    trtl_batch b = TRTL_BATCH_UNKNOWN;
    if (nb_in < 1)
        return trtl_plugin_fail(msg, msg_len, "takes at least one input, got %d", (int)nb_in);
    *total = 0;
    for (int32_t i = 0; i < nb_in; i++) {
        if (trtl_check_input(in, i, &input_spec, msg, msg_len) ||
            (!p->ignore_batch &&
             trtl_batch_merge(&b, in, i, " (set ignoreBatch for inputs without a batch)", msg, msg_len)))
            return 1;
        int64_t v = trtl_volume_from(&in[i].dims, 1);
        *total = (v < 0 || *total < 0) ? -1 : *total + v;
    }
    *batch = p->ignore_batch ? 1 : b.n;
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const flatten_concat *p = (const flatten_concat *)self;
    int64_t batch, total;
    if (trtl_check_output_index(index, 1, msg, msg_len) || check_inputs(p, in, nb_in, &batch, &total, msg, msg_len))
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
    if (check_inputs(p, in_desc, nb_in, &batch, &total, msg, msg_len) ||
        trtl_check_output_count(nb_out, 1, msg, msg_len))
        return 1;
    if (trtl_volume_from(&out_desc[0].dims, 0) != batch * total || out_desc[0].dtype != TRTL_FLOAT)
        return trtl_plugin_fail(msg, msg_len, "output must hold %lld x %lld float32 values", (long long)batch,
                                (long long)total);
    float *y = outputs[0];
    int64_t off = 0;
    for (int32_t i = 0; i < nb_in; i++) {
        const int64_t v = trtl_volume_from(&in_desc[i].dims, 1);
        const float *x = inputs[i];
        for (int64_t n = 0; n < batch; n++)
            memcpy(y + n * total + off, x + n * v, sizeof(float) * (size_t)v);
        off += v;
    }
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {.vt = &vtable, .size = sizeof(flatten_concat), .init = init};

const trtl_plugin_creator trtl_creator_flatten_concat = TRTL_BUILTIN_CREATOR("FlattenConcat_TRT", field_descs, cls);
