/* activation.c -- activation.simd: every activation type (and the internal SILU / HARD_SWISH /
 * MISH codes of the fuse_pointwise pass) with the vector math of vmath.h, split over the pool. */
#include "kernels/kernel.h"
#include "kernels/x86/vmath.h"
#include "core/dims.h"

typedef struct act_job {
    const float *x;
    float *y;
    const trtl_activation_params *p;
} act_job;

static void act_chunk(void *ctx, int64_t row, int64_t begin, int64_t len)
{
    (void)row;
    const act_job *j = ctx;
    trtl_vm_act(j->p->type, j->p->alpha, j->p->beta, j->x + begin, j->y + begin, len);
}

static trtl_status act_run(const trtl_kernel_args *a)
{
    act_job j = {a->in[0].data, a->out[0].data, &a->node->p.act};
    trtl_vm_rows(a->pool, 1, trtl_volume(&a->in[0].dims), act_chunk, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_activation_simd = {
    .name = "activation.simd",
    .op = TRTL_OP_ACTIVATION,
    .run = act_run,
};
