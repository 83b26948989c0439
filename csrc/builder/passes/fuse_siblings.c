/* fuse_siblings.c -- horizontal fusion: sibling convolutions that read the same tensor with the
 * same geometry become one convolution with their weights stacked along the output channels;
 * each former result is a channel slice of the stacked one (a view, by slice elision):
 *
 *     a = act(conv(x; Wa, ba)); b = act(conv(x; Wb, bb))     (Inception's 1x1 reductions)
 *     ==>  y = act(conv(x; [Wa; Wb], [ba; bb]));  a = y[:, :Ka];  b = y[:, Ka:]
 *
 * One larger GEMM instead of several small ones reads x once and keeps the micro-kernels busy.
 * Exact: every output channel is computed from the same weights, bias and epilogue as before.
 * Preconditions, per convolution: live, one input (constant weights, FLOAT), one group, a fused
 * activation but no residual; its result a FLOAT intermediate (no network output) of static
 * shape with batch 1 (so that its slice of the stacked result is one contiguous block, which
 * elide_slice makes a view) that feeds no concatenation (elide_concat writes producers into a
 * concatenation, which a slice view of a larger tensor cannot be); the siblings have the same
 * kernel size, strides, paddings, dilations, padding mode, activation and precision request.
 * The first sibling becomes the stacked convolution, the others and a new node become the
 * slices.  Runs after epilogue fusion (activations are part of the match) and before slice
 * elision. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/elide.h"
#include "network/op_table.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"

#define MAX_SIBLINGS 32

/* Convolution node i may be stacked (to_concat: per tensor, feeds a concatenation). */
static int stackable(const trtl_bgraph *g, int32_t i, const uint8_t *to_concat)
{
    const trtl_node *n = &g->n[i].n;
    if (g->n[i].dead || n->op != TRTL_OP_CONVOLUTION || n->n_in != 1 || n->n_out != 1 || n->epi.has_residual ||
        n->p.conv.num_groups != 1 || n->p.conv.kernel.type != TRTL_FLOAT || !n->p.conv.kernel.values ||
        (n->p.conv.bias.count &&
         (n->p.conv.bias.type != TRTL_FLOAT || !n->p.conv.bias.values || n->p.conv.bias.count != n->p.conv.num_output_maps)))
        return 0;
    const trtl_bg_tensor *y = &g->t[n->out[0]];
    if (!trtl_elide_static(y) || y->dtype != TRTL_FLOAT || y->dmax.nb_dims < 3 || y->dmax.d[0] != 1 ||
        g->t[n->in[0]].dtype != TRTL_FLOAT || n->p.conv.kernel.count % n->p.conv.num_output_maps != 0 ||
        y->dmax.d[1] != n->p.conv.num_output_maps || trtl_bg_is_output(g, n->out[0]))
        return 0;
    return !to_concat[n->out[0]];
}

static int same_dims(const trtl_dims *a, const trtl_dims *b) { return trtl_dims_equal(a, b); }

/* Nodes i and j compute the same geometry on the same input. */
static int siblings(const trtl_bgraph *g, int32_t i, int32_t j)
{
    const trtl_node *a = &g->n[i].n, *b = &g->n[j].n;
    const trtl_conv_params *p = &a->p.conv, *q = &b->p.conv;
    return a->in[0] == b->in[0] && same_dims(&p->kernel_size, &q->kernel_size) && same_dims(&p->stride, &q->stride) &&
           same_dims(&p->pre_padding, &q->pre_padding) && same_dims(&p->post_padding, &q->post_padding) &&
           same_dims(&p->dilation, &q->dilation) && p->padding_mode == q->padding_mode &&
           a->epi.act == b->epi.act && a->epi.alpha == b->epi.alpha && a->epi.beta == b->epi.beta &&
           p->kernel.count / p->num_output_maps == q->kernel.count / q->num_output_maps &&
           g->n[i].want_set == g->n[j].want_set && g->n[i].want_precision == g->n[j].want_precision;
}

/* Node k becomes the slice of channels [c0, c0 + its output channels) of tensor y. */
static void make_slice(trtl_bgraph *g, int32_t k, int32_t y, int64_t c0)
{
    trtl_node *n = &g->n[k].n;
    const trtl_dims *o = &g->t[n->out[0]].dmax;
    trtl_params p;
    trtl_op_table[TRTL_OP_SLICE].init(&p);
    p.slice.start.nb_dims = p.slice.shape.nb_dims = p.slice.stride.nb_dims = o->nb_dims;
    for (int32_t d = 0; d < o->nb_dims; d++) {
        p.slice.start.d[d] = d == 1 ? c0 : 0;
        p.slice.shape.d[d] = o->d[d];
        p.slice.stride.d[d] = 1;
    }
    n->op = TRTL_OP_SLICE;
    n->p = p;
    n->in[0] = y;
    n->n_in = 1;
    n->epi.act = TRTL_ACT_NONE;
    n->epi.alpha = n->epi.beta = 0.0f;
}

static trtl_status stack(trtl_bgraph *g, const int32_t *sib, int32_t ns, trtl_pass_log *log)
{
    int32_t first = sib[0];
    int64_t per = g->n[first].n.p.conv.kernel.count / g->n[first].n.p.conv.num_output_maps, K = 0;
    for (int32_t s = 0; s < ns; s++)
        K += g->n[sib[s]].n.p.conv.num_output_maps;
    float *w = trtl_aligned_alloc((size_t)(K * per) * sizeof(float));
    float *b = w ? trtl_aligned_alloc((size_t)K * sizeof(float)) : NULL;
    if (!w || !trtl_bg_own(g, w) || !b || !trtl_bg_own(g, b))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory stacking convolutions");
    char *name = trtl_bg_join_names(g->n[sib[0]].n.name, g->n[sib[1]].n.name);
    for (int32_t s = 2; s < ns && name; s++) {
        char *nm = trtl_bg_join_names(name, g->n[sib[s]].n.name);
        free(name);
        name = nm;
    }
    char tname[256];
    snprintf(tname, sizeof tname, "%.200s (stacked)", g->t[g->n[first].n.out[0]].name);
    int32_t y = name ? trtl_bg_add_tensor(g, tname, TRTL_FLOAT, TRTL_TK_ACTIVATION) : -1;
    if (y < 0) {
        free(name);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory stacking convolutions");
    }
    int64_t at = 0;
    for (int32_t s = 0; s < ns; s++) {
        const trtl_conv_params *p = &g->n[sib[s]].n.p.conv;
        int64_t k = p->num_output_maps;
        memcpy(w + at * per, p->kernel.values, (size_t)(k * per) * sizeof(float));
        for (int64_t c = 0; c < k; c++)
            b[at + c] = p->bias.count ? ((const float *)p->bias.values)[c] : 0.0f;
        at += k;
    }
    /* y: the first sibling's result with K channels */
    const trtl_bg_tensor *o = &g->t[g->n[first].n.out[0]];
    g->t[y].dmin = o->dmin;
    g->t[y].dopt = o->dopt;
    g->t[y].dmax = o->dmax;
    g->t[y].dmin.d[1] = g->t[y].dopt.d[1] = g->t[y].dmax.d[1] = K;
    /* a new slice node for the first sibling's result, right after it */
    int32_t out0 = g->n[first].n.out[0], in0 = g->n[first].n.in[0];
    trtl_params cp = g->n[first].n.p;
    int32_t sl = trtl_bg_add_node(g, TRTL_OP_CONVOLUTION, g->n[first].n.name, &cp, 1, &in0, 1, &out0);
    if (sl < 0) {
        free(name);
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    }
    g->n[sl].order = g->n[first].order;
    g->n[sl].n.epi = g->n[first].n.epi;
    trtl_pass_log_add(log, "stacked %d convolutions reading '%s' into one of %lld output channels '%s'", (int)ns,
                      g->t[in0].name, (long long)K, name);
    at = 0;
    for (int32_t s = 0; s < ns; s++) {
        int32_t k = s == 0 ? sl : sib[s];
        int64_t kk = g->n[sib[s]].n.p.conv.num_output_maps;
        make_slice(g, k, y, at);
        at += kk;
    }
    trtl_node *f = &g->n[first].n;
    free(f->name);
    f->name = name;
    f->p.conv.num_output_maps = (int32_t)K;
    f->p.conv.kernel = (trtl_weights){TRTL_FLOAT, w, K * per};
    f->p.conv.bias = (trtl_weights){TRTL_FLOAT, b, K};
    f->out[0] = y;
    g->t[y].producer = first;
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_siblings(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "horizontal fusion");
    int32_t nn = g->nn; /* nodes added here are slices */
    uint8_t *to_concat = calloc((size_t)(g->nt ? g->nt : 1), 1);
    if (!to_concat)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t k = 0; k < nn; k++)
        if (!g->n[k].dead && g->n[k].n.op == TRTL_OP_CONCATENATION)
            for (int32_t j = 0; j < g->n[k].n.n_in; j++)
                to_concat[g->n[k].n.in[j]] = 1;
    trtl_status st = TRTL_OK;
    for (int32_t i = 0; i < nn && st == TRTL_OK; i++) {
        if (!stackable(g, i, to_concat))
            continue;
        int32_t sib[MAX_SIBLINGS], ns = 1;
        sib[0] = i;
        for (int32_t j = i + 1; j < nn && ns < MAX_SIBLINGS; j++)
            if (stackable(g, j, to_concat) && siblings(g, i, j))
                sib[ns++] = j;
        if (ns >= 2)
            st = stack(g, sib, ns, &log);
    }
    free(to_concat);
    if (st == TRTL_OK)
        trtl_pass_log_done(&log);
    return st;
}
