/* gather_slice.c -- a gather of constant indices in arithmetic progression is a slice.
 *
 *     x: [B, 3, 12, 128, 64];  q = gather(x, axis 1, [0])      (ONNX Split / Slice of a dynamic-batch model: the
 *     ==>  q = slice(x, start 0, size 1, stride 1 on axis 1)    importer slices static axes beside dynamic ones
 *                                                                with gathers)
 *
 * The slice copies without an index table and, where it is one contiguous block of its input, elide_slice (run
 * next) makes it a view.  Preconditions: a live default-mode gather without elementwise dims or epilogue; 1-D
 * constant INT32 / INT64 indices i_0 + j * step (step >= 1, or a single index), every one in range of the axis,
 * which is static at every profile point (negative indices count from its end); other dims may be dynamic (the
 * slice copies them: copy_mask). */
#include "builder/passes/passes.h"
#include "core/status.h"
#include "network/op_table.h"

static int index_at(const trtl_bg_tensor *t, int64_t j, int64_t *v)
{
    if (t->dtype == TRTL_INT32)
        *v = ((const int32_t *)t->data)[j];
    else if (t->dtype == TRTL_INT64)
        *v = ((const int64_t *)t->data)[j];
    else
        return 0;
    return 1;
}

/* The gather's indices as start / count / step along an axis of extent dim, or 0. */
static int progression(const trtl_bg_tensor *t, int64_t dim, int64_t *start, int64_t *count, int64_t *step)
{
    if (t->kind != TRTL_TK_CONSTANT || !t->data || t->dmax.nb_dims != 1 || t->dmax.d[0] < 1)
        return 0;
    const int64_t n = t->dmax.d[0];
    int64_t prev = 0;
    for (int64_t j = 0; j < n; j++) {
        int64_t v;
        if (!index_at(t, j, &v) || v < -dim || v >= dim)
            return 0;
        v = v < 0 ? v + dim : v;
        if (j == 0)
            *start = v;
        else if (j == 1)
            *step = v - prev;
        if (j >= 1 && (*step < 1 || v - prev != *step))
            return 0;
        prev = v;
    }
    *count = n;
    if (n == 1)
        *step = 1;
    return 1;
}

trtl_status trtl_pass_gather_slice(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "gathers as slices");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || g->n[i].fixed_kernel || n->op != TRTL_OP_GATHER || n->n_in != 2 || n->n_out != 1 ||
            n->p.gather.mode != TRTL_GATHER_DEFAULT || n->p.gather.num_elementwise_dims != 0 ||
            n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
            continue;
        const trtl_bg_tensor *x = &g->t[n->in[0]];
        const int32_t axis = n->p.gather.axis, r = x->dmax.nb_dims;
        if (axis < 0 || axis >= r || x->dmin.nb_dims != r || x->dmax.d[axis] < 1 ||
            x->dmin.d[axis] != x->dmax.d[axis] || x->dopt.d[axis] != x->dmax.d[axis])
            continue;
        int64_t start = 0, count = 0, step = 1;
        if (!progression(&g->t[n->in[1]], x->dmax.d[axis], &start, &count, &step))
            continue;
        trtl_params p;
        trtl_op_table[TRTL_OP_SLICE].init(&p);
        p.slice.start.nb_dims = p.slice.shape.nb_dims = p.slice.stride.nb_dims = r;
        for (int32_t d = 0; d < r; d++) {
            p.slice.start.d[d] = d == axis ? start : 0;
            p.slice.shape.d[d] = d == axis ? count : 0;
            p.slice.stride.d[d] = d == axis ? step : 1;
            if (d != axis)
                p.slice.copy_mask |= 1u << d;
        }
        n->op = TRTL_OP_SLICE;
        n->p = p;
        n->n_in = 1;
        trtl_pass_log_add(&log, "'%s': elements %lld + %lld j (j < %lld) of axis %d, a slice", n->name,
                          (long long)start, (long long)step, (long long)count, (int)axis);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
