/*
 * l2norm_helper.c -- L2Norm_Helper_TRT: the elementwise steps of an L2 normalization, on a float32
 * tensor of any shape (output shape = input shape):
 *   op_type 0: y = max(x, eps)      (guards the following rsqrt; NaN passes through)
 *   op_type 1: y = 1 / sqrt(x)
 *   op_type 2: y = sqrt(x)
 * Fields: op_type (INT32, required, 0..2), eps (FLOAT32, default 1e-12, used by op_type 0 only).
 */
#include <math.h>

#include "plugins/builtin/common.h"

enum { OP_MAX_EPS = 0, OP_RSQRT = 1, OP_SQRT = 2 };
enum { F_OP_TYPE, F_EPS };

static const trtl_plugin_field_desc field_descs[] = {
    [F_OP_TYPE] = {"op_type", TRTL_PF_INT32, 1},
    [F_EPS] = {"eps", TRTL_PF_FLOAT32, 0},
};

typedef struct l2h {
    trtl_builtin h;
    int32_t op;
    float eps;
} l2h;

static void apply(const trtl_plugin *self, const float *x, float *y, int64_t n)
{
    const l2h *l = (const l2h *)self;
    const float eps = l->eps;
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
}

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    l2h *l = (l2h *)h;
    l->op = -1;
    l->eps = 1e-12f;
    trtl_builtin_field(h, &field_descs[F_OP_TYPE], &l->op, 1);
    trtl_builtin_field(h, &field_descs[F_EPS], &l->eps, 1);
    if (trtl_field_scalar(r, &field_descs[F_OP_TYPE], &l->op))
        return 1;
    if (l->op != OP_MAX_EPS && l->op != OP_RSQRT && l->op != OP_SQRT)
        return trtl_plugin_fail(r->msg, r->msg_len, "field 'op_type' must be 0 (max(x, eps)), 1 (1/sqrt(x)) or 2 "
                                "(sqrt(x)), got %d", (int)l->op);
    if (trtl_field_scalar(r, &field_descs[F_EPS], &l->eps))
        return 1;
    if (!(l->eps >= 0))
        return trtl_field_fail(r, "field 'eps' must be >= 0, got %g", (double)l->eps);
    return 0;
}

static const trtl_builtin_class cls = {
    .vt = &trtl_eltwise_vtable, .size = sizeof(l2h), .first_of_many = 1, .init = init, .apply = apply};

const trtl_plugin_creator trtl_creator_l2norm_helper = TRTL_BUILTIN_CREATOR("L2Norm_Helper_TRT", field_descs, cls);
