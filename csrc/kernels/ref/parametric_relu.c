/* Reference parametric ReLU kernel: slopes broadcast to x (kernels/ref/broadcast.h). */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/broadcast.h"
#include "kernels/ref/strided.h"

typedef struct prelu_ctx {
    const float *x, *s;
    float *y;
} prelu_ctx;

static void row(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *st)
{
    const prelu_ctx *c = (const prelu_ctx *)ctx;
    const float *x = c->x + off[0], *s = c->s + off[1];
    float *y = c->y + out_off;
    int64_t sx = st[0], ss = st[1];
    for (int64_t i = 0; i < n; i++) {
        float v = x[i * sx];
        y[i] = v >= 0.0f ? v : s[i * ss] * v;
    }
}

trtl_status trtl_ref_parametric_relu(const trtl_kernel_args *a)
{
    if (a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': parametric ReLU needs FLOAT input and slopes", a->node->name);
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, TRTL_FLOAT));
    trtl_dims in[2] = {a->in[0].dims, a->in[1].dims};
    trtl_bcast b;
    TRTL_TRY(trtl_bcast_init(&b, a->node->name, &a->out[0].dims, 2, in));
    prelu_ctx c = {(const float *)a->in[0].data, (const float *)a->in[1].data, (float *)a->out[0].data};
    trtl_bcast_run(&b, row, &c);
    return TRTL_OK;
}
