/* sink_concat.c -- a concatenation that copies moves below the layer that reads it:
 *
 *     z = pool(concat(a, b; axis 1))        ==>   z = concat(pool(a), pool(b); axis 1)
 *     z = act(conv1x1(concat(a, b); W, c))  ==>   z = act(conv1x1(b; W[:, Ca:]) + conv1x1(a; W[:, :Ca], c))
 *
 * Where concatenation elision cannot place the inputs in their output (batch > 1: each input is N blocks of the
 * output, not one), the concatenation copies every byte of its output.  Pooling (max, average, blend; its fused
 * activation too) works on each channel's plane alone, so the pieces are pooled and the pooled results, a quarter of
 * the bytes after a 3x3 s2 pool, concatenated (SqueezeNet's pools after its Fire modules, GoogLeNet's between
 * Inception stages).  A 1x1 convolution (stride 1, no padding, one group) sums over the channels, so it becomes one
 * convolution per piece with that piece's columns of W, chained by the residual input (the first takes the bias,
 * the last the activation): nothing is concatenated, and the chain writes and reads n - 1 results of K channels
 * instead of copying the C channels, so only where 2 (n - 1) K <= C (SqueezeNet's squeeze convolutions; not its
 * classifier, 512 -> 1000).  The sums' order changes (rounding only).  Not under BuilderFlag.REFIT (the weights
 * stay as given, where refit finds them).
 * Preconditions: explicit batch; a live concatenation without epilogue along an axis before the pooling's window
 * dims (the channel axis for a convolution), of FLOAT tensors of static shape whose dims before the axis have a
 * volume above 1 (at volume 1 elide_concat makes it free and this would only add steps), no empty piece; its output no network
 * output, read only by one live pooling or convolution with one input and no residual.  Pooling: the
 * concatenation's output tensor becomes the first piece's pooled result (the pooling node pools the first input),
 * a new pooling node and tensor take each other input, and the concatenation writes the pooling's former output.
 * Convolution: new nodes and tensors for the pieces but the last, which the convolution node computes into its own
 * output; the concatenation is dead.  Runs before the elisions (the pieces may be views or placements of their own). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/elide.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"

/* A 1x1 convolution over whole channels (stride 1, no padding, one group) with plain FLOAT weights for C input
 * channels, whose chain over n pieces moves fewer bytes than the copy: 2 (n - 1) K <= C. */
static int conv_sinkable(const trtl_bgraph *g, const trtl_node *r, int64_t C, int32_t n)
{
    const trtl_conv_params *cp = &r->p.conv;
    if (r->op != TRTL_OP_CONVOLUTION || cp->num_groups != 1 || cp->kernel.type != TRTL_FLOAT || !cp->kernel.values ||
        cp->kernel.count != (int64_t)cp->num_output_maps * C || (cp->bias.count && cp->bias.type != TRTL_FLOAT) ||
        (cp->bias.count && !cp->bias.values) || 2 * (int64_t)(n - 1) * cp->num_output_maps > C ||
        ((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u))
        return 0;
    for (int32_t k = 0; k < cp->kernel_size.nb_dims; k++)
        if (cp->kernel_size.d[k] != 1 || cp->stride.d[k] != 1 || cp->pre_padding.d[k] || cp->post_padding.d[k])
            return 0;
    return cp->padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_DOWN || cp->padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_UP;
}

/* The pooling or convolution node reading concatenation node i's output alone, when the move applies; else -1. */
static int32_t sinkable(const trtl_bgraph *g, int32_t i)
{
    const trtl_node *c = &g->n[i].n;
    if (g->n[i].dead || c->op != TRTL_OP_CONCATENATION || c->n_out != 1 || c->n_in < 2 ||
        c->epi.act != TRTL_ACT_NONE || c->epi.has_residual)
        return -1;
    const int32_t y = c->out[0];
    const trtl_bg_tensor *o = &g->t[y];
    int32_t pi;
    if (!trtl_elide_static(o) || o->dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) ||
        trtl_bg_consumers(g, y, &pi) != 1)
        return -1;
    const trtl_node *p = &g->n[pi].n;
    if (p->n_in != 1 || p->n_out != 1 || p->in[0] != y || p->epi.has_residual || g->t[p->out[0]].dtype != TRTL_FLOAT)
        return -1;
    const int32_t axis = c->p.concat.axis, rank = o->dmax.nb_dims;
    if (axis < 0 || axis >= rank || trtl_volume_range(&o->dmax, 0, axis) < 2)
        return -1;
    for (int32_t j = 0; j < c->n_in; j++) /* (an empty piece would make an empty convolution) */
        if (g->t[c->in[j]].dtype != TRTL_FLOAT || !trtl_dims_equal(&g->t[c->in[j]].dmin, &g->t[c->in[j]].dmax) ||
            trtl_volume(&g->t[c->in[j]].dmax) < 1)
            return -1;
    if (p->op == TRTL_OP_POOLING)
        return axis < rank - p->p.pool.window_size.nb_dims ? pi : -1;
    return axis == 1 && rank == 2 + p->p.conv.kernel_size.nb_dims && conv_sinkable(g, p, o->dmax.d[1], c->n_in)
               ? pi
               : -1;
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

/* A node like node `like` (op, params pp, order, precision wishes) computing part j: new tensor "<z> (part j)" from
 * inputs ins; the node's index in *k and its output in *t. */
static trtl_status add_part(trtl_bgraph *g, int32_t like, int32_t z, int32_t j, const trtl_params *pp, int32_t nin,
                            const int32_t *ins, int32_t *k, int32_t *t)
{
    char *tname = part_name(g->t[z].name, j);
    *t = tname ? trtl_bg_add_tensor(g, tname, TRTL_FLOAT, TRTL_TK_ACTIVATION) : -1;
    free(tname);
    char *pname = *t >= 0 ? part_name(g->n[like].n.name, j) : NULL;
    if (!pname)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    trtl_params p = *pp;
    *k = trtl_bg_add_node(g, g->n[like].n.op, pname, &p, nin, ins, 1, t);
    free(pname);
    if (*k < 0)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    g->n[*k].order = g->n[like].order;
    g->n[*k].want_set = g->n[like].want_set;
    g->n[*k].want_precision = g->n[like].want_precision;
    return TRTL_OK;
}

static trtl_status sink_pool(trtl_bgraph *g, int32_t ci, int32_t pi, trtl_pass_log *log)
{
    const int32_t y = g->n[ci].n.out[0], z = g->n[pi].n.out[0], nin = g->n[ci].n.n_in;
    char *yname = part_name(g->t[z].name, 0);
    if (!yname)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    free(g->t[y].name);
    g->t[y].name = yname;
    for (int32_t j = 1; j < nin; j++) {
        const int32_t in = g->n[ci].n.in[j];
        int32_t k, t;
        TRTL_TRY(add_part(g, pi, z, j, &g->n[pi].n.p, 1, &in, &k, &t));
        g->n[k].n.epi = g->n[pi].n.epi;
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

/* Piece j's columns [off, off + Cj) of the K x C weights, in a buffer the graph owns; NULL when out of memory. */
static float *columns(trtl_bgraph *g, const float *w, int64_t K, int64_t C, int64_t off, int64_t Cj)
{
    float *v = trtl_aligned_alloc((size_t)(K * Cj) * sizeof(float));
    if (!v || !trtl_bg_own(g, v))
        return NULL;
    for (int64_t k = 0; k < K; k++)
        memcpy(v + k * Cj, w + k * C + off, (size_t)Cj * sizeof(float));
    return v;
}

static trtl_status sink_conv(trtl_bgraph *g, int32_t ci, int32_t ri, trtl_pass_log *log)
{
    const int32_t nin = g->n[ci].n.n_in, z = g->n[ri].n.out[0];
    const int64_t K = g->n[ri].n.p.conv.num_output_maps, C = g->t[g->n[ci].n.out[0]].dmax.d[1];
    const float *w = g->n[ri].n.p.conv.kernel.values;
    int32_t prev = -1; /* the previous piece's result: the next one's residual */
    int64_t off = 0;
    for (int32_t j = 0; j < nin; j++) {
        const int32_t in = g->n[ci].n.in[j];
        const int64_t Cj = g->t[in].dmax.d[1];
        float *wj = columns(g, w, K, C, off, Cj);
        if (!wj)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        off += Cj;
        trtl_params pp = g->n[ri].n.p;
        pp.conv.kernel = (trtl_weights){TRTL_FLOAT, wj, K * Cj};
        if (j > 0) /* the bias once, in the first piece */
            pp.conv.bias = (trtl_weights){TRTL_FLOAT, NULL, 0};
        const int32_t ins[2] = {in, prev};
        int32_t k = ri;
        if (j < nin - 1) {
            int32_t t;
            TRTL_TRY(add_part(g, ri, z, j, &pp, j ? 2 : 1, ins, &k, &t));
            g->n[k].n.epi.has_residual = j > 0;
            prev = t;
        } else { /* the convolution node: the last piece, its activation and output */
            g->n[ri].n.p = pp;
            g->n[ri].n.in[0] = in;
            g->n[ri].n.in[1] = prev;
            g->n[ri].n.n_in = 2;
            g->n[ri].n.epi.has_residual = 1;
        }
    }
    g->n[ci].dead = 1;
    trtl_bg_release_weights(g, w); /* the pieces hold their columns */
    trtl_pass_log_add(log, "'%s' reads the %d inputs of '%s' as a chain of %d convolutions", g->n[ri].n.name,
                      (int)nin, g->n[ci].n.name, (int)nin);
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
    /* one move at a time, then the order and shapes again (the pooled pieces' dims): a concatenation moved below a
     * pooling may move again below the pooling's reader (SqueezeNet: the next squeeze convolution); each move takes
     * it further down, so this ends */
    for (;;) {
        int32_t ci = -1, pi = -1;
        for (int32_t i = 0; i < g->nn && ci < 0; i++)
            if ((pi = sinkable(g, i)) >= 0)
                ci = i;
        if (ci < 0)
            break;
        TRTL_TRY(g->n[pi].n.op == TRTL_OP_POOLING ? sink_pool(g, ci, pi, &log) : sink_conv(g, ci, pi, &log));
        TRTL_TRY(trtl_bg_sort(g));
        TRTL_TRY(trtl_bg_infer(g));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
