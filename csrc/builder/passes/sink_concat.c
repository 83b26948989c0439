/* sink_concat.c -- a concatenation that copies moves below the pooling that reads it:
 *
 *     y = concat(a, b; axis 1); z = pool(y)   ==>   z = concat(pool(a), pool(b); axis 1)
 *
 * Exact: pooling (max, average, blend; its fused activation too) works on each channel's plane alone, so pooling
 * the pieces and concatenating the results gives the same values.  Where concatenation elision cannot place the
 * inputs in their output (batch > 1: each input is N blocks of the output, not one), the concatenation copies, and
 * after the move it copies the pooled tensors instead (SqueezeNet's 3x3 s2 max pools after its Fire modules, a
 * quarter of the bytes; GoogLeNet's pools between Inception stages).  Preconditions: explicit batch; a live
 * concatenation without epilogue along an axis before the pooling's window dims, of FLOAT tensors of static shape
 * whose dims before the axis have a volume above 1 (at volume 1 elide_concat makes it free and this would only add
 * steps); its output no network output, read only by one live pooling with one input and no residual.  The
 * concatenation's output tensor becomes the first piece's pooled result (the pooling node pools the first input),
 * a new pooling node and tensor take each other input, and the concatenation writes the pooling's former output.
 * Runs before the elisions (the pooled pieces may be views or placements of their own). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/elide.h"
#include "core/dims.h"
#include "core/status.h"

/* The pooling node reading concatenation node i's output alone, when the move applies; else -1. */
static int32_t sinkable(const trtl_bgraph *g, int32_t i)
{
    const trtl_node *c = &g->n[i].n;
    if (g->n[i].dead || c->op != TRTL_OP_CONCATENATION || c->n_out != 1 || c->n_in < 1 ||
        c->epi.act != TRTL_ACT_NONE || c->epi.has_residual)
        return -1;
    const int32_t y = c->out[0];
    const trtl_bg_tensor *o = &g->t[y];
    int32_t pi;
    if (!trtl_elide_static(o) || o->dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) ||
        trtl_bg_consumers(g, y, &pi) != 1)
        return -1;
    const trtl_node *p = &g->n[pi].n;
    if (p->op != TRTL_OP_POOLING || p->n_in != 1 || p->n_out != 1 || p->in[0] != y || p->epi.has_residual ||
        g->t[p->out[0]].dtype != TRTL_FLOAT)
        return -1;
    const int32_t axis = c->p.concat.axis, rank = o->dmax.nb_dims;
    if (axis < 0 || axis >= rank - p->p.pool.window_size.nb_dims || trtl_volume_range(&o->dmax, 0, axis) < 2)
        return -1;
    for (int32_t j = 0; j < c->n_in; j++)
        if (g->t[c->in[j]].dtype != TRTL_FLOAT)
            return -1;
    return pi;
}

/* "<base> (part j)", malloc'd; NULL when out of memory. */
static char *part_name(const char *base, int32_t j)
{
    size_t n = strlen(base) + 32;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s (part %d)", base, (int)j);
    return s;
}

static trtl_status sink(trtl_bgraph *g, int32_t ci, int32_t pi, trtl_pass_log *log)
{
    const int32_t y = g->n[ci].n.out[0], z = g->n[pi].n.out[0], nin = g->n[ci].n.n_in;
    char *yname = part_name(g->t[z].name, 0);
    if (!yname)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    free(g->t[y].name);
    g->t[y].name = yname;
    for (int32_t j = 1; j < nin; j++) {
        char *tname = part_name(g->t[z].name, j);
        int32_t t = tname ? trtl_bg_add_tensor(g, tname, TRTL_FLOAT, TRTL_TK_ACTIVATION) : -1;
        free(tname);
        char *pname = t >= 0 ? part_name(g->n[pi].n.name, j) : NULL;
        if (!pname)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        trtl_params pp = g->n[pi].n.p;
        const int32_t in = g->n[ci].n.in[j];
        int32_t k = trtl_bg_add_node(g, TRTL_OP_POOLING, pname, &pp, 1, &in, 1, &t);
        free(pname);
        if (k < 0)
            return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
        g->n[k].order = g->n[pi].order;
        g->n[k].n.epi = g->n[pi].n.epi;
        g->n[k].want_set = g->n[pi].want_set;
        g->n[k].want_precision = g->n[pi].want_precision;
        g->n[ci].n.in[j] = t;
    }
    /* the pooling pools the first input into y; the concatenation writes z */
    g->n[pi].n.in[0] = g->n[ci].n.in[0];
    g->n[pi].n.out[0] = y;
    g->t[y].producer = pi;
    g->n[ci].n.in[0] = y;
    g->n[ci].n.out[0] = z;
    g->t[z].producer = ci;
    trtl_pass_log_add(log, "'%s' pools the %d inputs of '%s', which concatenates the pooled results", g->n[pi].n.name,
                      (int)nin, g->n[ci].n.name);
    return TRTL_OK;
}

trtl_status trtl_pass_sink_concat(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "concatenation sinking");
    if (g->implicit_batch) { /* run-time batches below the maximum: the batch-1 case elide_concat takes */
        trtl_pass_log_done(&log);
        return TRTL_OK;
    }
    const int32_t nn = g->nn; /* nodes added here are poolings */
    for (int32_t i = 0; i < nn; i++) {
        int32_t pi = sinkable(g, i);
        if (pi >= 0)
            TRTL_TRY(sink(g, i, pi, &log));
    }
    if (log.count) {
        TRTL_TRY(trtl_bg_sort(g));
        TRTL_TRY(trtl_bg_infer(g));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
