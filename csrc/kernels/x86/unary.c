/* unary.c -- unary.simd: EXP, LOG, SQRT, RECIP, ABS, NEG, CEIL, FLOOR, ROUND, ERF and SIGN on
 * float32 with the vector math of vmath.h, split over the pool; the other ops (trigonometric,
 * hyperbolic, NOT, ISINF) keep the reference kernel (applies() refuses them). */
#include "kernels/kernel.h"
#include "kernels/x86/vmath.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct unary_job {
    const float *x;
    float *y;
    int32_t op;
} unary_job;

static void unary_chunk(void *ctx, int64_t row, int64_t begin, int64_t len)
{
    (void)row;
    const unary_job *j = ctx;
    trtl_vm_unary(j->op, j->x + begin, j->y + begin, len);
}

static int unary_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    (void)in_dims;
    return trtl_vm_unary_supported(n->p.unary.op);
}

static trtl_status unary_run(const trtl_kernel_args *a)
{
    if (!trtl_vm_unary_supported(a->node->p.unary.op) || a->in[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': unary.simd cannot compute op %d / a non-float input "
                          "(the plan is corrupt: the builder never picks it for this layer)", a->node->name,
                          (int)a->node->p.unary.op);
    unary_job j = {a->in[0].data, a->out[0].data, a->node->p.unary.op};
    trtl_vm_rows(a->pool, 1, trtl_volume(&a->in[0].dims), unary_chunk, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_unary_simd = {
    .name = "unary.simd",
    .op = TRTL_OP_UNARY,
    .applies = unary_applies,
    .run = unary_run,
};
