/*
 * region.c -- Region_TRT: the YOLOv2 region layer (TensorRT's regionPlugin without a softmax tree).
 *
 * Input and output [N, num * (coords + 1 + classes), H, W] float32.  Channels come in num groups,
 * one per anchor: (x, y, w, h, ..., objectness, class scores).  For every sample, anchor and
 * spatial position:
 *   channels 0 and 1 (x, y) and channel `coords` (objectness) go through 1 / (1 + exp(-v));
 *   channels 2 .. coords-1 (w, h, ...) are copied unchanged;
 *   the `classes` channels after the objectness become softmax(v) = exp(v - max) / sum.
 * With coords = 4 (YOLOv2) this is exactly TensorRT's layout (objectness at 4, classes from 5).
 * A softmax tree (field smTree, YOLO9000) is not supported: giving one is an error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

enum { F_NUM, F_COORDS, F_CLASSES, F_SMTREE, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_NUM] = {"num", TRTL_PF_INT32, 1},
    [F_COORDS] = {"coords", TRTL_PF_INT32, 0},
    [F_CLASSES] = {"classes", TRTL_PF_INT32, 1},
    [F_SMTREE] = {"smTree", TRTL_PF_INT32, 0},
};

typedef struct region {
    trtl_plugin base;
    int32_t num, coords, classes;
    trtl_plugin_field fields[3]; /* num, coords, classes (smTree is never stored) */
} region;

static const trtl_plugin_vtable vtable;

static const trtl_plugin_field *find_field(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; fs && i < fs->nb_fields; i++)
        if (fs->fields[i].name && strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

static int read_i32(const trtl_plugin_fields *fs, const char *name, int required, int32_t *v, char *msg, size_t n)
{
    const trtl_plugin_field *f = find_field(fs, name);
    if (!f) {
        if (required)
            snprintf(msg, n, "required field '%s' is missing", name);
        return required;
    }
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
    region *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    r->base.vt = &vtable;
    r->base.creator = self;
    r->coords = 4;
    int32_t tree = 0;
    if (read_i32(fields, "num", 1, &r->num, msg, msg_len) || read_i32(fields, "coords", 0, &r->coords, msg, msg_len) ||
        read_i32(fields, "classes", 1, &r->classes, msg, msg_len) || read_i32(fields, "smTree", 0, &tree, msg, msg_len))
        goto fail;
    if (tree != 0) {
        snprintf(msg, msg_len, "field 'smTree': softmax trees (YOLO9000) are not supported; leave it out or pass 0");
        goto fail;
    }
    if (r->num < 1 || r->num > 1 << 16) {
        snprintf(msg, msg_len, "field 'num' (anchors) must be in [1, 65536], got %d", (int)r->num);
        goto fail;
    }
    if (r->coords < 2 || r->coords > 1 << 16) {
        snprintf(msg, msg_len, "field 'coords' must be in [2, 65536] (x and y at least), got %d", (int)r->coords);
        goto fail;
    }
    if (r->classes < 1 || r->classes > 1 << 20) {
        snprintf(msg, msg_len, "field 'classes' must be in [1, 1048576], got %d", (int)r->classes);
        goto fail;
    }
    r->fields[0] = (trtl_plugin_field){"num", &r->num, TRTL_PF_INT32, 1};
    r->fields[1] = (trtl_plugin_field){"coords", &r->coords, TRTL_PF_INT32, 1};
    r->fields[2] = (trtl_plugin_field){"classes", &r->classes, TRTL_PF_INT32, 1};
    return &r->base;
fail:
    free(r);
    return NULL;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

static int check_input(const region *r, const trtl_plugin_tensor_desc *in, int32_t nb_in, char *msg, size_t msg_len)
{
    if (nb_in != 1) {
        snprintf(msg, msg_len, "Region_TRT takes one input, got %d", (int)nb_in);
        return 1;
    }
    if (in[0].dtype != TRTL_FLOAT) {
        snprintf(msg, msg_len, "input must be float32");
        return 1;
    }
    if (in[0].dims.nb_dims != 4) {
        snprintf(msg, msg_len, "input must be [N, C, H, W], got rank %d", (int)in[0].dims.nb_dims);
        return 1;
    }
    int64_t c = in[0].dims.d[1], want = (int64_t)r->num * (r->coords + 1 + r->classes);
    if (c >= 0 && c != want) {
        snprintf(msg, msg_len, "input has %lld channels; num * (coords + 1 + classes) = %d * (%d + 1 + %d) = %lld",
                 (long long)c, (int)r->num, (int)r->coords, (int)r->classes, (long long)want);
        return 1;
    }
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    if (index != 0) {
        snprintf(msg, msg_len, "output %d does not exist (Region_TRT has one)", (int)index);
        return 1;
    }
    if (check_input((const region *)self, in, nb_in, msg, msg_len))
        return 1;
    out->dims = in[0].dims;
    out->dtype = TRTL_FLOAT;
    return 0;
}

static float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    const region *r = (const region *)self;
    (void)workspace;
    (void)out_desc;
    if (check_input(r, in_desc, nb_in, msg, msg_len))
        return 1;
    if (nb_out != 1) {
        snprintf(msg, msg_len, "expected one output, got %d", (int)nb_out);
        return 1;
    }
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], hw = d->d[2] * d->d[3], group = (int64_t)(r->coords + 1 + r->classes) * hw;
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t g = 0; g < N * r->num; g++) {
        const float *xi = x + g * group;
        float *yo = y + g * group;
        for (int64_t i = 0; i < 2 * hw; i++)
            yo[i] = sigmoid(xi[i]);
        memmove(yo + 2 * hw, xi + 2 * hw, sizeof(float) * (size_t)((r->coords - 2) * hw));
        for (int64_t i = 0; i < hw; i++)
            yo[r->coords * hw + i] = sigmoid(xi[r->coords * hw + i]);
        const float *cls = xi + (r->coords + 1) * hw;
        float *ocl = yo + (r->coords + 1) * hw;
        for (int64_t i = 0; i < hw; i++) {
            float mx = cls[i];
            for (int32_t c = 1; c < r->classes; c++)
                mx = fmaxf(mx, cls[c * hw + i]);
            double sum = 0.0;
            for (int32_t c = 0; c < r->classes; c++) {
                float e = expf(cls[c * hw + i] - mx);
                ocl[c * hw + i] = e;
                sum += e;
            }
            const float inv = (float)(1.0 / sum);
            for (int32_t c = 0; c < r->classes; c++)
                ocl[c * hw + i] *= inv;
        }
    }
    return 0;
}

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    const region *r = (const region *)self;
    out->nb_fields = 3;
    out->fields = r->fields;
    return 0;
}

/* A clone is the instance recreated from its own fields. */
static trtl_plugin *clone(const trtl_plugin *self)
{
    const region *r = (const region *)self;
    char msg[256];
    trtl_plugin_fields fs = {3, r->fields};
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

const trtl_plugin_creator trtl_creator_region = {
    sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "Region_TRT", "1", "", field_descs, F_COUNT, create, NULL};
