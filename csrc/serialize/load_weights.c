/*
 * load_weights.c -- the second half of a plan load: weights out of the plan bytes, kernels prepared.
 *
 * The reader (reader.c) checks a whole plan and leaves every node's weights and every large constant
 * in the plan bytes (trtl_pending_weights, in plan order: the tensor table's constants, then the
 * layers').  trtl_engine_load_weights walks them once, node by node: copy the node's buffers into
 * 64-byte aligned engine memory, prepare its kernel, drop the plain copy its packed state makes
 * redundant (engine/weights.c), and -- when the caller gave the plan up -- give the pages of the plan
 * read so far back to the system.  So a load whose plan is discarded peaks at about one copy of the
 * weights (the plan shrinking as the engine grows), and one whose caller keeps the plan at the plan
 * plus one copy.  The Python binding defers this half until the plan's bytes object is the engine's
 * alone (py_engine.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "core/alloc.h"
#include "core/status.h"

int trtl_engine_weights_pending(const trtl_engine *e) { return e && e->deferred; }

uint64_t trtl_engine_plan_discarded(const trtl_engine *e) { return e ? e->plan_discarded : 0; }

trtl_status trtl_engine_check_loaded(const trtl_engine *e, const char *what)
{
    if (e->load_status != TRTL_OK)
        return trtl_error(TRTL_ERR_STATE, "%s: loading this engine's weights failed earlier (%s); load the plan again",
                          what, trtl_status_name(e->load_status));
    if (e->deferred)
        return trtl_error(TRTL_ERR_STATE, "%s: the engine's weights are not loaded yet (trtl_engine_load_weights)", what);
    return TRTL_OK;
}

/* Pending buffers that were not copied point into the plan: clear them, so that nothing reads a
 * plan that may be discarded or gone and the engine's destruction frees only its own memory. */
void trtl_engine_forget_pending(trtl_engine *e, int32_t from)
{
    for (int32_t i = from; i < e->n_pending; i++) {
        const trtl_pending_weights *p = &e->pending[i];
        if (p->node < 0)
            e->tensors[p->tensor].data = NULL;
        else
            p->w->values = NULL;
    }
    free(e->pending);
    e->pending = NULL;
    e->n_pending = e->cap_pending = 0;
    e->plan = NULL;
    e->plan_size = 0;
    e->deferred = 0;
}

/* The C heap is trimmed every TRTL_ALLOC_TRIM_EVERY bytes of weights copied out: the peak of a load is the plan
 * left plus the engine plus at most this much freed-but-resident plain copies (ViT-B/16 plan load: 434 -> 388 MiB
 * peak; 11 trims). */

static trtl_status copy_out(trtl_engine *e, const trtl_pending_weights *p)
{
    void *buf = trtl_aligned_alloc(p->bytes);
    if (!buf)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory for %zu bytes of weights", p->bytes);
    memcpy(buf, e->plan + p->off, p->bytes);
    if (p->node < 0) {
        e->tensors[p->tensor].data = buf;
        return TRTL_OK;
    }
    if (!trtl_engine_own(e, buf))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory for the weights of layer '%s'",
                          e->nodes[p->node].name);
    p->w->values = buf;
    return TRTL_OK;
}

trtl_status trtl_engine_load_weights(trtl_engine *e, int discard)
{
    TRTL_CHECK_ARG(e);
    trtl_clear_error();
    if (e->load_status != TRTL_OK || !e->deferred)
        return e->load_status == TRTL_OK ? TRTL_OK : trtl_engine_check_loaded(e, "loading weights");
    trtl_status st = TRTL_OK;
    int32_t i = 0;
    size_t done = 0;   /* the plan's bytes [0, done) are discarded */
    size_t copied = 0; /* since the last trim */
    for (int32_t k = -1; k < e->n_nodes && st == TRTL_OK; k++) {
        while (st == TRTL_OK && i < e->n_pending && e->pending[i].node == k) {
            st = copy_out(e, &e->pending[i]);
            copied += e->pending[i].bytes; /* trimmed below, after this node's plain copy may be dropped */
            i += st == TRTL_OK; /* a failed entry still points into the plan: forgotten below */
        }
        trtl_node *n = k >= 0 ? &e->nodes[k] : NULL;
        if (st == TRTL_OK && n && n->kernel && n->kernel->prepare) {
            st = n->kernel->prepare(n, &n->kstate);
            if (st != TRTL_OK)
                n->kstate = NULL;
            else
                trtl_engine_drop_plain_weights(e, k); /* node by node: one copy beside what is left of the plan */
        }
        if (st == TRTL_OK && discard)
            e->plan_discarded += trtl_alloc_discard(e->plan, &done, i < e->n_pending ? e->pending[i].off : e->plan_size);
        trtl_alloc_trim_after(&copied, 0); /* glibc keeps the dropped plain copies (its mmap threshold grew) */
    }
    trtl_engine_forget_pending(e, i);
    trtl_alloc_trim(); /* the plain weights freed after packing */
    if (st != TRTL_OK)
        e->load_status = st;
    return st;
}
