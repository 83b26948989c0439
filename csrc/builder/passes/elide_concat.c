/* elide_concat.c -- concatenation elision: producers write directly into their slice of the
 * concatenated tensor and the concatenation copies nothing.
 *
 *     a = conv1(x); b = conv2(x); y = concat(a, b; axis 1)      (y: [1, Ca + Cb, H, W])
 *     ==>  a is bytes [0, |a|) of y, b bytes [|a|, |a| + |b|); the concatenation is a no-op
 *
 * The memory plan does the work (engine/alias.h): this pass only decides which concatenations get
 * the kernel "concatenation.inplace", by running the same placement the plan will run, so that it
 * can log what it elides.  Preconditions, per concatenation: explicit batch; no fused epilogue;
 * output and every input intermediate activations (no network input, output or constant) of one
 * dtype and static shape; the dims before the axis of volume 1 (a channel concatenation at batch
 * 1, or any concatenation along the first non-unit axis), so that each input is one contiguous
 * block of the output; no input placed elsewhere by an earlier elision at another offset (an
 * input of two concatenations is fine when they nest, as in DenseNet, where each concatenation's
 * output is a prefix of the next one's), no tensor twice.  Runs last, after elide_slice, whose
 * views it takes into account as the engine will: every other pass may change which tensors a
 * concatenation reads. */
#include <stdlib.h>

#include "builder/passes/passes.h"
#include "builder/passes/elide.h"
#include "engine/alias.h"
#include "kernels/inplace.h"
#include "core/dims.h"
#include "core/status.h"

#define MAX_PARTS 64

/* The inputs' byte offsets in the output when concatenation node i may be elided (before the
 * placement check). */
static int candidate(const trtl_bgraph *g, int32_t i, int64_t *off)
{
    const trtl_node *n = &g->n[i].n;
    if (g->n[i].dead || n->op != TRTL_OP_CONCATENATION || n->n_out != 1 || n->n_in < 1 || n->n_in > MAX_PARTS ||
        n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
        return 0;
    const trtl_bg_tensor *o = &g->t[n->out[0]];
    if (!trtl_elide_static(o))
        return 0;
    trtl_dims in[MAX_PARTS];
    for (int32_t j = 0; j < n->n_in; j++) {
        const trtl_bg_tensor *x = &g->t[n->in[j]];
        if (!trtl_elide_static(x) || x->dtype != o->dtype)
            return 0;
        in[j] = x->dmax;
    }
    return trtl_inplace_concat_layout(n->p.concat.axis, &o->dmax, in, n->n_in, trtl_dtype_size(o->dtype), off);
}

trtl_status trtl_pass_elide_concat(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "concatenation elision");
    if (g->implicit_batch) { /* run-time batches below the maximum change every size */
        trtl_pass_log_done(&log);
        return TRTL_OK;
    }
    TRTL_TRY(trtl_bg_sort(g)); /* the engine plans in this (topological) order */
    int64_t *bytes = malloc(sizeof(int64_t) * (size_t)(g->nt ? g->nt : 1));
    if (!bytes)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t t = 0; t < g->nt; t++)
        bytes[t] = g->t[t].kind == TRTL_TK_ACTIVATION && g->t[t].dmax.nb_dims >= 0
                       ? trtl_volume(&g->t[t].dmax) * (int64_t)trtl_dtype_size(g->t[t].dtype)
                       : -1;
    trtl_alias al;
    trtl_status st = trtl_alias_init(&al, g->nt, bytes);
    for (int32_t i = 0; i < g->nn && st == TRTL_OK; i++) {
        int64_t off[MAX_PARTS];
        const trtl_node *n = &g->n[i].n;
        if (g->n[i].fixed_kernel == &trtl_kernel_slice_inplace) { /* elide_slice's views come first */
            if (trtl_elide_slice_offset(g, i, off))
                trtl_alias_view(&al, n->out[0], n->in[0], off[0]);
            continue;
        }
        if (n->op == TRTL_OP_CONCATENATION)
            g->n[i].fixed_kernel = NULL;
        if (!candidate(g, i, off))
            continue;
        int r = trtl_alias_concat(&al, n->out[0], n->in, off, n->n_in);
        if (r < 0) {
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        } else if (r > 0) {
            g->n[i].fixed_kernel = &trtl_kernel_concat_inplace;
            trtl_pass_log_add(&log, "'%s': its %d inputs are written in place into '%s'", n->name, (int)n->n_in,
                              g->t[n->out[0]].name);
        } else {
            trtl_log(TRTL_LOG_VERBOSE, "concatenation elision: '%s' copies (an input is placed elsewhere)", n->name);
        }
    }
    trtl_alias_free(&al);
    free(bytes);
    if (st == TRTL_OK)
        trtl_pass_log_done(&log);
    return st;
}
