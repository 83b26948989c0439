/* graph.c -- the builder's working graph: construction, ordering, shape inference. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "builder/graph.h"
#include "engine/control_flow.h"
#include "core/alloc.h"
#include "network/op_table.h"
#include "network/shape_values.h"
#include "core/status.h"
#include "core/dims.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}

int32_t trtl_bg_add_tensor(trtl_bgraph *g, const char *name, trtl_dtype dtype, int32_t kind)
{
    if (g->nt == g->capt) {
        int32_t nc = g->capt ? g->capt * 2 : 64;
        trtl_bg_tensor *nt = realloc(g->t, sizeof *nt * (size_t)nc);
        if (!nt) {
            trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            return -1;
        }
        g->t = nt;
        g->capt = nc;
    }
    trtl_bg_tensor *t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    t->name = dup_str(name);
    if (!t->name) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    t->dtype = dtype;
    t->kind = kind;
    t->producer = -1;
    t->io_index = -1;
    return g->nt++;
}

int32_t trtl_bg_add_node(trtl_bgraph *g, trtl_op op, const char *name, const trtl_params *p, int32_t n_in,
                         const int32_t *in, int32_t n_out, const int32_t *out)
{
    if (g->nn == g->capn) {
        int32_t nc = g->capn ? g->capn * 2 : 64;
        trtl_bg_node *nn = realloc(g->n, sizeof *nn * (size_t)nc);
        if (!nn) {
            trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            return -1;
        }
        g->n = nn;
        g->capn = nc;
    }
    trtl_bg_node *b = &g->n[g->nn];
    memset(b, 0, sizeof *b);
    b->n.op = op;
    b->n.p = *p;
    b->n.epi.act = TRTL_ACT_NONE;
    b->n.n_in = n_in;
    b->n.n_out = n_out;
    b->n.name = dup_str(name);
    b->n.in = malloc(sizeof(int32_t) * (size_t)(n_in + 1)); /* +1: room for a fused residual */
    b->n.out = malloc(sizeof(int32_t) * (size_t)(n_out ? n_out : 1));
    if (!b->n.name || !b->n.in || !b->n.out) {
        free(b->n.name);
        free(b->n.in);
        free(b->n.out);
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    if (n_in)
        memcpy(b->n.in, in, sizeof(int32_t) * (size_t)n_in);
    if (n_out)
        memcpy(b->n.out, out, sizeof(int32_t) * (size_t)n_out);
    b->order = g->nn;
    for (int32_t i = 0; i < n_out; i++)
        g->t[out[i]].producer = g->nn;
    return g->nn++;
}

int32_t trtl_bg_add_activation(trtl_bgraph *g, const char *name, int32_t x, int32_t y, const trtl_activation_params *a)
{
    trtl_params p;
    memset(&p, 0, sizeof p);
    p.act = *a;
    return trtl_bg_add_node(g, TRTL_OP_ACTIVATION, name, &p, 1, &x, 1, &y);
}

int trtl_bg_own(trtl_bgraph *g, void *p)
{
    if (g->n_owned == g->cap_owned) {
        int32_t nc = g->cap_owned ? g->cap_owned * 2 : 64;
        void **no = realloc(g->owned, sizeof *no * (size_t)nc);
        if (!no) {
            trtl_aligned_free(p);
            trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            return 0;
        }
        g->owned = no;
        g->cap_owned = nc;
    }
    g->owned[g->n_owned++] = p;
    return 1;
}

int32_t trtl_bg_consumers(const trtl_bgraph *g, int32_t t, int32_t *only)
{
    int32_t count = 0, who = -1;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        for (int32_t j = 0; j < g->n[i].n.n_in; j++)
            if (g->n[i].n.in[j] == t) {
                count++;
                who = i;
            }
    }
    if (only)
        *only = count == 1 ? who : -1;
    return count;
}

int trtl_bg_is_output(const trtl_bgraph *g, int32_t t)
{
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t)
            return 1;
    return 0;
}

char *trtl_bg_join_names(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *r = malloc(la + lb + 4);
    if (!r)
        return NULL;
    memcpy(r, a, la);
    memcpy(r + la, " + ", 3);
    memcpy(r + la + 3, b, lb + 1);
    return r;
}

/* Frees a node's own allocations (not the tensors it names). */
static void free_node(trtl_node *n)
{
    if (n->op == TRTL_OP_PLUGIN_V2 && n->p.plugin.plugin)
        n->p.plugin.plugin->vt->destroy(n->p.plugin.plugin);
    if (n->op == TRTL_OP_CONTROL_FLOW)
        trtl_cf_destroy((trtl_cf *)n->p.cf.cf);
    if (n->kernel && n->kernel->release && n->kstate)
        n->kernel->release(n->kstate);
    free(n->name);
    free(n->in);
    free(n->out);
    memset(n, 0, sizeof *n);
}

trtl_status trtl_bg_sort(trtl_bgraph *g)
{
    int32_t live = 0;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead) {
            free_node(&g->n[i].n);
            continue;
        }
        g->n[live++] = g->n[i];
    }
    g->nn = live;
    int32_t n = g->nn;
    if (n == 0)
        return TRTL_OK;
    char *ready_t = calloc((size_t)g->nt, 1);
    char *placed = calloc((size_t)n, 1);
    trtl_bg_node *sorted = malloc(sizeof *sorted * (size_t)n);
    int32_t *by_order = malloc(sizeof(int32_t) * (size_t)n);
    if (!ready_t || !placed || !sorted || !by_order) {
        free(ready_t);
        free(placed);
        free(sorted);
        free(by_order);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    /* Visit nodes by their original position so that sorting is stable. */
    for (int32_t i = 0; i < n; i++)
        by_order[i] = i;
    for (int32_t i = 1; i < n; i++) { /* insertion sort by order (n is small, mostly sorted) */
        int32_t v = by_order[i], j = i - 1;
        while (j >= 0 && g->n[by_order[j]].order > g->n[v].order) {
            by_order[j + 1] = by_order[j];
            j--;
        }
        by_order[j + 1] = v;
    }
    for (int32_t i = 0; i < g->nt; i++)
        if (g->t[i].producer < 0 || g->n[g->t[i].producer].dead)
            ready_t[i] = 1;
    int32_t k = 0, progress = 1;
    while (progress) {
        progress = 0;
        for (int32_t oi = 0; oi < n; oi++) {
            int32_t i = by_order[oi];
            if (placed[i])
                continue;
            int ok = 1;
            for (int32_t j = 0; j < g->n[i].n.n_in && ok; j++)
                ok = ready_t[g->n[i].n.in[j]];
            if (!ok)
                continue;
            placed[i] = 1;
            sorted[k++] = g->n[i];
            for (int32_t j = 0; j < g->n[i].n.n_out; j++)
                ready_t[g->n[i].n.out[j]] = 1;
            progress = 1;
            break; /* restart from the lowest original position */
        }
    }
    free(ready_t);
    free(placed);
    free(by_order);
    if (k != n) {
        free(sorted);
        return trtl_error(TRTL_ERR_INTERNAL, "builder: the graph has a cycle after optimization");
    }
    memcpy(g->n, sorted, sizeof *sorted * (size_t)n);
    free(sorted);
    for (int32_t i = 0; i < g->nt; i++)
        if (g->t[i].kind != TRTL_TK_CONSTANT && g->t[i].kind != TRTL_TK_INPUT)
            g->t[i].producer = -1;
    for (int32_t i = 0; i < n; i++) {
        g->n[i].order = i;
        if (g->n[i].dead)
            continue;
        for (int32_t j = 0; j < g->n[i].n.n_out; j++)
            g->t[g->n[i].n.out[j]].producer = i;
    }
    return TRTL_OK;
}

/* Runs shape inference over live nodes (in order) for one set of input dims.  which: 0 min,
 * 1 opt, 2 max. */
static int any_unknown_input(const trtl_bgraph *g, const trtl_node *n, int32_t n_in)
{
    for (int32_t j = 0; j < n_in; j++)
        if (g->t[n->in[j]].corner_unknown)
            return 1;
    return 0;
}

static trtl_status infer_pass(trtl_bgraph *g, int which)
{
    trtl_dims in[64], out[16];
    trtl_dtype in_t[64], out_t[16];
    const int64_t *in_v[64];
    /* Shape values (network/shape_values.h): constants, shape-tensor inputs at this end of their
     * profiles' value ranges, then whatever the nodes compute from them. */
    int64_t *sv = malloc(sizeof(int64_t) * TRTL_SV_MAX * (size_t)(g->nt ? g->nt : 1));
    char *known = calloc((size_t)(g->nt ? g->nt : 1), 1);
    if (!sv || !known) {
        free(sv);
        free(known);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    for (int32_t i = 0; i < g->nt; i++) {
        const trtl_bg_tensor *t = &g->t[i];
        if (t->kind == TRTL_TK_CONSTANT && t->data && trtl_sv_carriable(&t->dmax, t->dtype)) {
            trtl_sv_from_data(t->data, t->dtype, trtl_volume(&t->dmax), sv + (int64_t)i * TRTL_SV_MAX);
            known[i] = 1;
        }
    }
    for (int32_t k = 0; g->shape_input && k < g->n_inputs; k++) {
        if (!g->shape_input[k])
            continue;
        int32_t e = g->n_profiles * g->n_inputs + k; /* the envelope over profiles (opt: profile 0's) */
        const trtl_dims *v = which == 0 ? &g->vmin[e] : which == 1 ? &g->vopt[k] : &g->vmax[e];
        for (int32_t j = 0; j < v->nb_dims; j++)
            sv[(int64_t)g->inputs[k] * TRTL_SV_MAX + j] = v->d[j];
        known[g->inputs[k]] = 1;
    }
    trtl_status st = TRTL_OK;
    for (int32_t i = 0; i < g->nn && st == TRTL_OK; i++) {
        trtl_bg_node *b = &g->n[i];
        if (b->dead)
            continue;
        const trtl_node *n = &b->n;
        int32_t n_in = n->n_in - (n->epi.has_residual ? 1 : 0);
        if (n_in > 64 || n->n_out > 16) {
            st = trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': too many inputs/outputs", n->name);
            break;
        }
        for (int32_t j = 0; j < n_in; j++) {
            const trtl_bg_tensor *t = &g->t[n->in[j]];
            in[j] = which == 0 ? t->dmin : which == 1 ? t->dopt : t->dmax;
            in_t[j] = t->dtype;
            in_v[j] = known[n->in[j]] ? sv + (int64_t)n->in[j] * TRTL_SV_MAX : NULL;
        }
        for (int32_t j = 0; j < n->n_out; j++)
            out_t[j] = g->t[n->out[j]].dtype;
        /* need_values 2 at the min corner: data-dependent extents (NonZero, NMS) at their lower bound */
        trtl_infer_ctx ic = {n->name, &n->p, n_in, in, in_t, in_v, n->n_out, out, out_t, which == 0 ? 2 : 1};
        st = trtl_op_table[n->op].infer(&ic);
        /* At the min / max corner, shape values of one input and shapes of another may not fit together (a
         * reshape of x to the values of shape input s, both at their maximum): the opt shapes stand in and
         * the dims are declared dynamic; at run time the real shapes decide. */
        int corner = 0;
        for (int32_t j = 0; which != 1 && j < n_in; j++)
            corner |= g->t[n->in[j]].corner_unknown || trtl_sv_shape_input(n->op, j);
        if (st != TRTL_OK && corner && st != TRTL_ERR_OUT_OF_MEMORY) {
            trtl_clear_error();
            st = TRTL_OK;
            for (int32_t j = 0; j < n->n_out; j++) {
                out[j] = g->t[n->out[j]].dopt;
                g->t[n->out[j]].corner_unknown = 1;
            }
        } else if (corner) {
            int unb = trtl_sv_dims_unbounded(n->op, n_in) && g->t[n->in[1]].kind != TRTL_TK_CONSTANT;
            for (int32_t j = 0; j < n->n_out; j++)
                g->t[n->out[j]].corner_unknown |= (int32_t)(st == TRTL_OK && (unb || any_unknown_input(g, n, n_in)));
        }
        if (st == TRTL_OK && n->n_out == 1) {
            int done = 0;
            st = trtl_sv_eval(n->op, &n->p, n->name, n_in, in, in_t, in_v, &out[0], out_t[0],
                              sv + (int64_t)n->out[0] * TRTL_SV_MAX, &done);
            known[n->out[0]] = (char)done;
        }
        if (st != TRTL_OK)
            break;
        for (int32_t j = 0; j < n->n_out; j++) {
            trtl_bg_tensor *t = &g->t[n->out[j]];
            if (which == 0)
                t->dmin = out[j];
            else if (which == 1)
                t->dopt = out[j];
            else
                t->dmax = out[j];
        }
    }
    free(sv);
    free(known);
    return st;
}

trtl_status trtl_bg_infer(trtl_bgraph *g)
{
    static const int order[3] = {1, 0, 2}; /* opt first: it stands in where a corner has no valid shapes */
    for (int32_t i = 0; i < g->nt; i++)
        g->t[i].corner_unknown = 0;
    for (int k = 0; k < 3; k++)
        TRTL_TRY(infer_pass(g, order[k]));
    return TRTL_OK;
}

void trtl_bg_free(trtl_bgraph *g)
{
    for (int32_t i = 0; i < g->nt; i++) {
        free(g->t[i].name);
        trtl_aligned_free(g->t[i].data);
    }
    for (int32_t i = 0; i < g->nn; i++)
        free_node(&g->n[i].n);
    for (int32_t i = 0; i < g->n_owned; i++)
        trtl_aligned_free(g->owned[i]);
    free(g->owned);
    free(g->t);
    free(g->n);
    free(g->inputs);
    free(g->outputs);
    free(g->pmin);
    free(g->popt);
    free(g->pmax);
    free(g->vmin);
    free(g->vopt);
    free(g->vmax);
    free(g->shape_input);
    memset(g, 0, sizeof *g);
}
