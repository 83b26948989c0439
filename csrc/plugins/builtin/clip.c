/*
 * clip.c -- Clip_TRT: y = min(max(x, clipMin), clipMax), elementwise on a float32 tensor of any
 * shape (output shape = input shape; NaN passes through).  Fields: clipMin, clipMax (FLOAT32,
 * both required, clipMin <= clipMax).
 */
#include "plugins/builtin/common.h"

enum { F_CLIP_MIN, F_CLIP_MAX };

static const trtl_plugin_field_desc field_descs[] = {
    [F_CLIP_MIN] = {"clipMin", TRTL_PF_FLOAT32, 1},
    [F_CLIP_MAX] = {"clipMax", TRTL_PF_FLOAT32, 1},
};

typedef struct clip {
    trtl_builtin h;
    float lo, hi;
} clip;

static void apply(const trtl_plugin *self, const float *x, float *y, int64_t n)
{
    const float lo = ((const clip *)self)->lo, hi = ((const clip *)self)->hi;
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    clip *c = (clip *)h;
    trtl_builtin_field(h, &field_descs[F_CLIP_MIN], &c->lo, 1);
    trtl_builtin_field(h, &field_descs[F_CLIP_MAX], &c->hi, 1);
    if (trtl_field_scalar(r, &field_descs[F_CLIP_MIN], &c->lo) ||
        trtl_field_scalar(r, &field_descs[F_CLIP_MAX], &c->hi))
        return 1;
    if (!(c->lo <= c->hi))
        return trtl_field_fail(r, "field 'clipMin' (%g) must be <= field 'clipMax' (%g)", (double)c->lo, (double)c->hi);
    return 0;
}

static const trtl_builtin_class cls = {
    .vt = &trtl_eltwise_vtable, .size = sizeof(clip), .first_of_many = 1, .init = init, .apply = apply};

const trtl_plugin_creator trtl_creator_clip = TRTL_BUILTIN_CREATOR("Clip_TRT", field_descs, cls);
