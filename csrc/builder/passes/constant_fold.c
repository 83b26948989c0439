/* constant_fold.c -- evaluates, at build time, layers whose inputs are all constants, with the
 * reference kernels; their outputs become constants.  Nodes are visited in topological order so
 * chains fold in one sweep. */
#include <string.h>

#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "kernels/registry.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

#define FOLD_LIMIT_BYTES ((int64_t)64 << 20)

static int foldable(const trtl_bgraph *g, const trtl_bg_node *b)
{
    if (b->dead || b->n.op == TRTL_OP_PLUGIN_V2 || b->n.op == TRTL_OP_CONTROL_FLOW || b->n.n_in == 0 || b->n.n_out > 4)
        return 0;
    for (int32_t j = 0; j < b->n.n_in; j++)
        if (g->t[b->n.in[j]].kind != TRTL_TK_CONSTANT)
            return 0;
    for (int32_t j = 0; j < b->n.n_out; j++) {
        const trtl_bg_tensor *t = &g->t[b->n.out[j]];
        int64_t v = trtl_volume(&t->dmax);
        if (t->kind != TRTL_TK_ACTIVATION || v < 0 || v * (int64_t)trtl_dtype_size(t->dtype) > FOLD_LIMIT_BYTES ||
            !trtl_dims_equal(&t->dmin, &t->dmax))
            return 0;
    }
    return 1;
}

/* Bytes of constant t's values (its max shape). */
static size_t const_bytes(const trtl_bgraph *g, int32_t t)
{
    int64_t v = trtl_volume(&g->t[t].dmax);
    return v > 0 ? (size_t)v * trtl_dtype_size(g->t[t].dtype) : 0;
}

/* *freed: bytes released since the last trim; the heap goes back to the system every 32 MiB (glibc keeps freed
 * blocks below its grown mmap threshold, so BERT-base's folded weights piled up to 190 MiB within the pass). */
static int fold_one(trtl_bgraph *g, trtl_bg_node *b, size_t *freed, int *released)
{
    trtl_tensor_view in[16], out[4];
    if (b->n.n_in > 16)
        return 0;
    for (int32_t j = 0; j < b->n.n_in; j++) {
        const trtl_bg_tensor *t = &g->t[b->n.in[j]];
        in[j].data = t->data;
        in[j].dims = t->dmax;
        in[j].dtype = t->dtype;
    }
    for (int32_t j = 0; j < b->n.n_out; j++) {
        const trtl_bg_tensor *t = &g->t[b->n.out[j]];
        int64_t bytes = trtl_volume(&t->dmax) * (int64_t)trtl_dtype_size(t->dtype);
        out[j].data = trtl_aligned_alloc((size_t)(bytes > 0 ? bytes : 1));
        out[j].dims = t->dmax;
        out[j].dtype = t->dtype;
        if (!out[j].data) {
            for (int32_t k = 0; k < j; k++)
                trtl_aligned_free(out[k].data);
            return 0;
        }
    }
    trtl_kernel_args a = {&b->n, in, out, NULL, 0, NULL, NULL, NULL};
    trtl_status st = trtl_kernel_ref(b->n.op)->run(&a);
    if (st == TRTL_OK && (b->n.epi.act != TRTL_ACT_NONE || b->n.epi.has_residual) && out[0].dtype == TRTL_FLOAT)
        trtl_epilogue_apply(&b->n.epi, out[0].data, b->n.epi.has_residual ? in[b->n.n_in - 1].data : NULL,
                            trtl_volume(&out[0].dims));
    if (st != TRTL_OK) {
        trtl_log(TRTL_LOG_VERBOSE, "could not fold layer '%s' (%s); it runs at inference", b->n.name,
                 trtl_last_error());
        trtl_clear_error();
        for (int32_t j = 0; j < b->n.n_out; j++)
            trtl_aligned_free(out[j].data);
        return 0;
    }
    for (int32_t j = 0; j < b->n.n_out; j++) {
        trtl_bg_tensor *t = &g->t[b->n.out[j]];
        t->kind = TRTL_TK_CONSTANT;
        t->data = out[j].data;
        t->producer = -1;
    }
    b->dead = 1;
    /* inputs nothing else reads go now, not before kernel selection: a model whose weights are folded
     * (BERT-base's transposed MatMul weights) would otherwise hold them twice through the passes */
    for (int32_t j = 0; j < b->n.n_in; j++) {
        size_t bytes = const_bytes(g, b->n.in[j]);
        if (trtl_bg_release_constant(g, b->n.in[j])) {
            trtl_alloc_trim_after(freed, bytes);
            *released = 1;
        }
    }
    return 1;
}

trtl_status trtl_pass_constant_fold(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "constant folding");
    size_t freed = 0;
    int released = 0;
    for (int32_t i = 0; i < g->nn; i++)
        if (foldable(g, &g->n[i]) && fold_one(g, &g->n[i], &freed, &released))
            trtl_pass_log_add(&log, "evaluated layer '%s' at build time", g->n[i].n.name);
    trtl_pass_log_done(&log);
    if (released)
        trtl_alloc_trim(); /* the released inputs leave the resident set */
    return TRTL_OK;
}
