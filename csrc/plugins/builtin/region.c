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
#include <string.h>

#include "plugins/builtin/common.h"

enum { F_NUM, F_COORDS, F_CLASSES, F_SMTREE, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_NUM] = {"num", TRTL_PF_INT32, 1},
    [F_COORDS] = {"coords", TRTL_PF_INT32, 0},
    [F_CLASSES] = {"classes", TRTL_PF_INT32, 1},
    [F_SMTREE] = {"smTree", TRTL_PF_INT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 4, 4, "[N, C, H, W]"};

typedef struct region {
    trtl_builtin h; /* fields: num, coords, classes (smTree is never stored) */
    int32_t num, coords, classes;
} region;

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    region *g = (region *)h;
    int32_t tree = 0;
    g->coords = 4;
    if (trtl_field_scalar(r, &field_descs[F_NUM], &g->num) ||
        trtl_field_scalar(r, &field_descs[F_COORDS], &g->coords) ||
        trtl_field_scalar(r, &field_descs[F_CLASSES], &g->classes) ||
        trtl_field_scalar(r, &field_descs[F_SMTREE], &tree))
        return 1;
    if (tree != 0)
        return trtl_field_fail(r, "field 'smTree': softmax trees (YOLO9000) are not supported; leave it out or pass 0");
    if (g->num < 1 || g->num > 1 << 16)
        return trtl_field_fail(r, "field 'num' (anchors) must be in [1, 65536], got %d", (int)g->num);
    if (g->coords < 2 || g->coords > 1 << 16)
        return trtl_field_fail(r, "field 'coords' must be in [2, 65536] (x and y at least), got %d", (int)g->coords);
    if (g->classes < 1 || g->classes > 1 << 20)
        return trtl_field_fail(r, "field 'classes' must be in [1, 1048576], got %d", (int)g->classes);
    trtl_builtin_field(h, &field_descs[F_NUM], &g->num, 1);
    trtl_builtin_field(h, &field_descs[F_COORDS], &g->coords, 1);
    trtl_builtin_field(h, &field_descs[F_CLASSES], &g->classes, 1);
    return 0;
}

static int check_input(const region *r, const trtl_plugin_tensor_desc *in, int32_t nb_in, char *msg, size_t msg_len)
{
    if (trtl_check_inputs(in, nb_in, &input_spec, 1, msg, msg_len))
        return 1;
    int64_t c = in[0].dims.d[1], want = (int64_t)r->num * (r->coords + 1 + r->classes);
    if (c >= 0 && c != want)
        return trtl_plugin_fail(msg, msg_len, "input has %lld channels; num * (coords + 1 + classes) = %d * (%d + 1 + "
                                "%d) = %lld", (long long)c, (int)r->num, (int)r->coords, (int)r->classes,
                                (long long)want);
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    if (trtl_check_output_index(index, 1, msg, msg_len) || check_input((const region *)self, in, nb_in, msg, msg_len))
        return 1;
    *out = in[0];
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
    if (check_input(r, in_desc, nb_in, msg, msg_len) || trtl_check_output_count(nb_out, 1, msg, msg_len))
        return 1;
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

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {.vt = &vtable, .size = sizeof(region), .init = init};

const trtl_plugin_creator trtl_creator_region = TRTL_BUILTIN_CREATOR("Region_TRT", field_descs, cls);
