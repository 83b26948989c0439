/* Reference select kernel: three-way broadcast (kernels/ref/broadcast.h), copies by element size. */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/broadcast.h"
#include "kernels/ref/strided.h"

typedef struct select_ctx {
    const uint8_t *cond, *t, *e;
    uint8_t *y;
    size_t es;
} select_ctx;

static void row(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s)
{
    const select_ctx *c = (const select_ctx *)ctx;
    size_t es = c->es;
    const uint8_t *cond = c->cond + off[0], *t = c->t + (size_t)off[1] * es, *e = c->e + (size_t)off[2] * es;
    uint8_t *y = c->y + (size_t)out_off * es;
    for (int64_t i = 0; i < n; i++, y += es) {
        const uint8_t *src = cond[i * s[0]] ? t + (size_t)(i * s[1]) * es : e + (size_t)(i * s[2]) * es;
        trtl_ref_copy_elem(y, src, es);
    }
}

trtl_status trtl_ref_select(const trtl_kernel_args *a)
{
    size_t es = trtl_dtype_size(a->out[0].dtype);
    if (a->in[0].dtype != TRTL_BOOL || a->in[1].dtype != a->in[2].dtype)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': select needs a BOOL condition and then/else of one type",
                          a->node->name);
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, a->in[1].dtype));
    trtl_dims in[3] = {a->in[0].dims, a->in[1].dims, a->in[2].dims};
    trtl_bcast b;
    TRTL_TRY(trtl_bcast_init(&b, a->node->name, &a->out[0].dims, 3, in));
    select_ctx c = {(const uint8_t *)a->in[0].data, (const uint8_t *)a->in[1].data, (const uint8_t *)a->in[2].data,
                    (uint8_t *)a->out[0].data, es};
    trtl_bcast_run(&b, row, &c);
    return TRTL_OK;
}
