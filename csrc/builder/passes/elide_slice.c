/* elide_slice.c -- slice elision: a slice that is one contiguous block of its input becomes a view
 * of the input's bytes and copies nothing.
 *
 *     x: [1, 8, H, W];  a = x[:, 0:4];  b = x[:, 4:8]      (ONNX Split, ShuffleNet's channel split)
 *     ==>  a is bytes [0, |a|) of x, b bytes [|a|, |x|); the slices are no-ops
 *
 * The memory plan does the work (engine/alias.h); this pass gives the slices it elides the kernel
 * "slice.inplace".  Preconditions: explicit batch; one input (static start and size); stride 1 on
 * every dim, in range; input and output intermediate activations (no network input, output or
 * constant) of one dtype and static shape; an axis a with output dims 1 before it and whole input
 * dims after it (a channel slice at batch 1, a slice of the first axis).  A view is always
 * placeable (nothing else has placed the slice's output yet), so every such slice is elided.
 * Runs before elide_concat, which accounts for these views. */
#include "builder/passes/passes.h"
#include "builder/passes/elide.h"
#include "engine/alias.h"
#include "kernels/inplace.h"
#include "core/status.h"

int trtl_elide_static(const trtl_bg_tensor *t)
{
    if (t->kind != TRTL_TK_ACTIVATION || t->dmin.nb_dims != t->dmax.nb_dims)
        return 0;
    for (int32_t k = 0; k < t->dmax.nb_dims; k++)
        if (t->dmax.d[k] < 0 || t->dmin.d[k] != t->dmax.d[k])
            return 0;
    return 1;
}

int trtl_elide_slice_offset(const trtl_bgraph *g, int32_t i, int64_t *off)
{
    const trtl_node *n = &g->n[i].n;
    if (g->n[i].dead || n->op != TRTL_OP_SLICE || n->n_in != 1 || n->n_out != 1 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual)
        return 0;
    const trtl_bg_tensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]];
    return trtl_elide_static(x) && trtl_elide_static(y) && x->dtype == y->dtype &&
           trtl_inplace_slice_layout(&x->dmax, &y->dmax, &n->p.slice.start, &n->p.slice.stride,
                                     trtl_dtype_size(y->dtype), off);
}

trtl_status trtl_pass_elide_slice(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "slice elision");
    for (int32_t i = 0; i < g->nn && !g->implicit_batch; i++) {
        int64_t off;
        if (g->n[i].fixed_kernel == &trtl_kernel_slice_inplace)
            g->n[i].fixed_kernel = NULL;
        if (!trtl_elide_slice_offset(g, i, &off))
            continue;
        g->n[i].fixed_kernel = &trtl_kernel_slice_inplace;
        trtl_pass_log_add(&log, "'%s': its output is bytes %lld.. of '%s'", g->n[i].n.name, (long long)off,
                          g->t[g->n[i].n.in[0]].name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
