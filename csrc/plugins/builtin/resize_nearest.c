/*
 * resize_nearest.c -- ResizeNearest_TRT: nearest-neighbour resize of the last two dims by `scale`
 * (Mask R-CNN's FPN upsampling), float32, rank >= 2, the leading dims untouched.
 *   out = (int)(in * scale)                    (float product, truncated, as TensorRT's plugin)
 *   src = min((int)(dst / scale), in - 1)      (float quotient, truncated; the clamp only matters
 *                                               for scales whose rounding would step past the edge)
 * Field: scale (FLOAT32, required, > 0; the output must not be empty).
 */
#include <string.h>

#include "plugins/builtin/common.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"scale", TRTL_PF_FLOAT32, 1},
};

static const trtl_input_spec input_spec = {NULL, 2, TRTL_MAX_DIMS, "[..., H, W]"};

typedef struct resize {
    trtl_builtin h;
    float scale;
} resize;

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    resize *z = (resize *)h;
    trtl_builtin_field(h, &field_descs[0], &z->scale, 1);
    if (trtl_field_scalar(r, &field_descs[0], &z->scale))
        return 1;
    if (!(z->scale > 0) || z->scale > 65536.0f)
        return trtl_field_fail(r, "field 'scale' must be > 0 and <= 65536, got %g", (double)z->scale);
    return 0;
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
    if (trtl_same_shape_desc(index, in, nb_in, &input_spec, out, msg, msg_len))
        return 1;
    const trtl_dims *d = &in[0].dims;
    for (int32_t k = d->nb_dims - 2; k < d->nb_dims; k++) {
        out->dims.d[k] = out_size(d->d[k], r->scale);
        if (d->d[k] > 0 && out->dims.d[k] < 1)
            return trtl_plugin_fail(msg, msg_len, "field 'scale' = %g turns input dim %d (%lld) into an empty output",
                                    (double)r->scale, (int)k, (long long)d->d[k]);
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
    if (trtl_check_output_count(nb_out, 1, msg, msg_len) || output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int32_t nd = d->nb_dims;
    const int64_t H = d->d[nd - 2], W = d->d[nd - 1], OH = want.dims.d[nd - 2], OW = want.dims.d[nd - 1];
    if (out_desc[0].dims.d[nd - 2] != OH || out_desc[0].dims.d[nd - 1] != OW)
        return trtl_plugin_fail(msg, msg_len, "output buffer is %lldx%lld, expected %lldx%lld",
                                (long long)out_desc[0].dims.d[nd - 2], (long long)out_desc[0].dims.d[nd - 1],
                                (long long)OH, (long long)OW);
    int64_t planes = 1;
    for (int32_t k = 0; k < nd - 2; k++)
        planes *= d->d[k];
    if (planes == 0 || OH == 0 || OW == 0)
        return 0;
    if (!workspace)
        return trtl_plugin_fail(msg, msg_len, "no workspace for the column table");
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

static const trtl_plugin_vtable vtable =
    TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, workspace_size, enqueue);
static const trtl_builtin_class cls = {.vt = &vtable, .size = sizeof(resize), .first_of_many = 1, .init = init};

const trtl_plugin_creator trtl_creator_resize_nearest = TRTL_BUILTIN_CREATOR("ResizeNearest_TRT", field_descs, cls);
