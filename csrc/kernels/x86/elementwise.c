/*
 * elementwise.c -- elementwise.simd: SUM, PROD, MAX, MIN, SUB and DIV on float32 for every
 * broadcast that reduces to at most three levels (outer, mid, inner), each operand either
 * advancing along a level or repeating over it.  Axes of output size 1 drop out and neighbouring
 * axes on which both operands behave alike merge, so this covers:
 *   same shape                      one level, both advance;
 *   one side a scalar               one level, that side repeats;
 *   [.., N] x [N] (bias rows)       (outer: b repeats) (inner: both advance);
 *   NCHW x [1,C,1,1] (SE multiply)  (N: b repeats) (C: both) (HW: b repeats);
 *   [N,1] x [1,M] (outer product)   (a advances, b repeats) (b advances, a repeats).
 * Each inner row is one vmath.h span (vector / broadcast-scalar operands); rows are cut in chunks
 * and split over the pool.  Other shapes run the reference kernel; POW, FLOOR_DIV, comparisons
 * and the logical ops keep the reference kernel (applies() refuses them).  A fused activation
 * (fuse_epilogue: add -> relu) is applied to each chunk while it is in cache; nodes with a
 * residual epilogue are refused.
 */
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/x86/vmath.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct ew_plan {
    int64_t size[3];   /* outer, mid, inner */
    int64_t sa[2], sb[2]; /* element strides of a, b along outer and mid (0: repeats) */
    int a_vec, b_vec;  /* operand advances along inner */
} ew_plan;

/* The three-level form of y = a op b, or 0 when the broadcast needs more levels. */
static int ew_plan_make(const trtl_dims *da, const trtl_dims *db, const trtl_dims *dy, ew_plan *p)
{
    int r = dy->nb_dims;
    if (da->nb_dims != r || db->nb_dims != r)
        return 0;
    int64_t sz[3];
    int fa[3], fb[3], ng = 0;
    for (int i = 0; i < r; i++) {
        int64_t d = dy->d[i];
        if (d == 1)
            continue;
        if ((da->d[i] != d && da->d[i] != 1) || (db->d[i] != d && db->d[i] != 1))
            return 0;
        int va = da->d[i] == d, vb = db->d[i] == d;
        if (ng > 0 && fa[ng - 1] == va && fb[ng - 1] == vb) {
            sz[ng - 1] *= d;
            continue;
        }
        if (ng == 3)
            return 0;
        sz[ng] = d;
        fa[ng] = va;
        fb[ng] = vb;
        ng++;
    }
    /* right-align into (outer, mid, inner); missing levels have size 1 */
    int64_t S[3] = {1, 1, 1};
    int A[3] = {0, 0, 0}, B[3] = {0, 0, 0};
    for (int g = 0; g < ng; g++) {
        S[3 - ng + g] = sz[g];
        A[3 - ng + g] = fa[g];
        B[3 - ng + g] = fb[g];
    }
    for (int k = 0; k < 3; k++)
        p->size[k] = S[k];
    int64_t ea = A[2] ? S[2] : 1, eb = B[2] ? S[2] : 1; /* elements of one inner run */
    p->sa[1] = A[1] ? ea : 0;
    p->sb[1] = B[1] ? eb : 0;
    p->sa[0] = A[0] ? ea * (A[1] ? S[1] : 1) : 0;
    p->sb[0] = B[0] ? eb * (B[1] ? S[1] : 1) : 0;
    p->a_vec = A[2];
    p->b_vec = B[2];
    return 1;
}

/* Output dims of a broadcast of equal-rank inputs (applies() has only the input dims). */
static int bcast_out(const trtl_dims *da, const trtl_dims *db, trtl_dims *dy)
{
    if (da->nb_dims != db->nb_dims)
        return 0;
    *dy = *da;
    for (int i = 0; i < da->nb_dims; i++)
        dy->d[i] = da->d[i] == 1 ? db->d[i] : da->d[i];
    return 1;
}

static int ew_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    trtl_dims y;
    ew_plan p;
    return n->n_in == 2 && !n->epi.has_residual && trtl_vm_binary_supported(n->p.ew.op) &&
           bcast_out(&in_dims[0], &in_dims[1], &y) &&
           ew_plan_make(&in_dims[0], &in_dims[1], &y, &p);
}

typedef struct ew_job {
    ew_plan p;
    const float *a, *b;
    float *y;
    int32_t op;
    const trtl_epilogue *epi; /* its activation is applied to each chunk while in cache */
} ew_job;

static void ew_row(void *ctx, int64_t row, int64_t begin, int64_t len)
{
    const ew_job *j = ctx;
    int64_t o = row / j->p.size[1], m = row % j->p.size[1];
    const float *a = j->a + o * j->p.sa[0] + m * j->p.sa[1] + (j->p.a_vec ? begin : 0);
    const float *b = j->b + o * j->p.sb[0] + m * j->p.sb[1] + (j->p.b_vec ? begin : 0);
    float *y = j->y + row * j->p.size[2] + begin;
    trtl_vm_binary(j->op, a, j->p.a_vec, b, j->p.b_vec, y, len);
    if (j->epi->act != TRTL_ACT_NONE)
        trtl_vm_act(j->epi->act, j->epi->alpha, j->epi->beta, y, y, len);
}

static trtl_status ew_run(const trtl_kernel_args *a)
{
    ew_job j;
    j.op = a->node->p.ew.op;
    j.epi = &a->node->epi;
    if (j.epi->has_residual)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': elementwise.simd cannot apply a residual "
                          "epilogue (the plan is corrupt: the builder never picks it for this layer)", a->node->name);
    if (!trtl_vm_binary_supported(j.op) || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT ||
        !ew_plan_make(&a->in[0].dims, &a->in[1].dims, &a->out[0].dims, &j.p)) {
        /* shapes of this run need the general broadcast: the reference, then the activation */
        TRTL_TRY(trtl_ref_elementwise(a));
        if (j.epi->act != TRTL_ACT_NONE && a->out[0].dtype == TRTL_FLOAT)
            trtl_vm_act(j.epi->act, j.epi->alpha, j.epi->beta, a->out[0].data, a->out[0].data,
                        trtl_volume(&a->out[0].dims));
        return TRTL_OK;
    }
    j.a = a->in[0].data;
    j.b = a->in[1].data;
    j.y = a->out[0].data;
    trtl_vm_rows(a->pool, j.p.size[0] * j.p.size[1], j.p.size[2], ew_row, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_elementwise_simd = {
    .name = "elementwise.simd",
    .op = TRTL_OP_ELEMENTWISE,
    .applies_epilogue = 1,
    .applies = ew_applies,
    .run = ew_run,
};
