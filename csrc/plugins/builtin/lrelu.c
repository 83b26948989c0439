/*
 * lrelu.c -- LReLU_TRT: leaky ReLU, y = x >= 0 ? x : negSlope * x, elementwise on a float32
 * tensor of any shape (output shape = input shape).  Field: negSlope (FLOAT32, required).
 */
#include "plugins/builtin/common.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"negSlope", TRTL_PF_FLOAT32, 1},
};

typedef struct lrelu {
    trtl_builtin h;
    float neg_slope;
} lrelu;

static void apply(const trtl_plugin *self, const float *x, float *y, int64_t n)
{
    const float a = ((const lrelu *)self)->neg_slope;
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] >= 0 ? x[i] : a * x[i];
}

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    lrelu *l = (lrelu *)h;
    trtl_builtin_field(h, &field_descs[0], &l->neg_slope, 1);
    return trtl_field_scalar(r, &field_descs[0], &l->neg_slope);
}

static const trtl_builtin_class cls = {
    .vt = &trtl_eltwise_vtable, .size = sizeof(lrelu), .first_of_many = 1, .init = init, .apply = apply};

const trtl_plugin_creator trtl_creator_lrelu = TRTL_BUILTIN_CREATOR("LReLU_TRT", field_descs, cls);
