/* elide_reshape.c -- reshape elision: a shuffle that only reshapes becomes a view of its input's bytes and
 * copies nothing.
 *
 *     x: [1, 116, 28, 28];  r = reshape(x, [1, 2, 58, 28, 28])      (ShuffleNet's channel shuffle, before and
 *     ==>  r is bytes [0, |x|) of x; the reshape is a no-op           after its transpose)
 *
 * The memory plan does the work (engine/alias.h); this pass gives the shuffles it elides the kernel
 * "shuffle.inplace".  Preconditions: explicit batch; one input (no reshape dims tensor); both transposes absent
 * or identities; no epilogue; input and output intermediate activations (no network input, output or constant)
 * of one dtype and static shape, of equal volume.  A view is always placeable (nothing else has placed the
 * reshape's output yet).  Runs last, after concatenation elision: an elided concatenation's output may be
 * reshaped, and the reshape's view joins that group. */
#include "builder/passes/passes.h"
#include "builder/passes/elide.h"
#include "kernels/inplace.h"
#include "core/status.h"

trtl_status trtl_pass_elide_reshape(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "reshape elision");
    for (int32_t i = 0; i < g->nn && !g->implicit_batch; i++) {
        if (g->n[i].fixed_kernel == &trtl_kernel_shuffle_inplace)
            g->n[i].fixed_kernel = NULL;
        const trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || g->n[i].fixed_kernel || n->op != TRTL_OP_SHUFFLE || n->n_in != 1 || n->n_out != 1 ||
            n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
            continue;
        const trtl_bg_tensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]];
        if (!trtl_elide_static(x) || !trtl_elide_static(y) || x->dtype != y->dtype ||
            !trtl_inplace_shuffle_is_reshape(&n->p.shuffle, &x->dmax, &y->dmax))
            continue;
        g->n[i].fixed_kernel = &trtl_kernel_shuffle_inplace;
        trtl_pass_log_add(&log, "'%s': its output is the bytes of '%s'", n->name, x->name);
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
