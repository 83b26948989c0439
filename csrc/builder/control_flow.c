/* control_flow.c -- loops and conditionals at build time (see control_flow.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/control_flow.h"
#include "engine/control_flow.h"
#include "core/dims.h"
#include "core/status.h"

static int is_entry(trtl_op op)
{
    return op == TRTL_OP_RECURRENCE || op == TRTL_OP_ITERATOR || op == TRTL_OP_CONDITIONAL_INPUT;
}

static int is_exit(trtl_op op)
{
    return op == TRTL_OP_LOOP_OUTPUT || op == TRTL_OP_TRIP_LIMIT || op == TRTL_OP_CONDITIONAL_OUTPUT ||
           op == TRTL_OP_CONDITION;
}

static int is_boundary(trtl_op op) { return is_entry(op) || is_exit(op); }

static int is_loop_op(trtl_op op)
{
    return op == TRTL_OP_RECURRENCE || op == TRTL_OP_ITERATOR || op == TRTL_OP_LOOP_OUTPUT || op == TRTL_OP_TRIP_LIMIT;
}

static int owner_of(const trtl_layer *l) { return is_boundary(l->op) ? l->p.cf.owner : -1; }

static const char *kind_name(int loop) { return loop ? "loop" : "conditional"; }

void trtl_cf_plan_free(trtl_cf_plan *pl)
{
    for (int32_t i = 0; pl->set && i < pl->n_owners; i++)
        free(pl->set[i]);
    free(pl->set);
    free(pl->all);
    free(pl->owner);
    free(pl->region);
    memset(pl, 0, sizeof *pl);
}

static int32_t owner_index(const trtl_cf_plan *pl, int32_t owner)
{
    for (int32_t i = 0; i < pl->n_owners; i++)
        if (pl->all[i] == owner)
            return i;
    return -1;
}

/* Adds to `set` every layer (not an exit of `self`) reading a tensor produced in the set, and every
 * boundary layer of a structure that has one in the set, until nothing changes. */
static void close_forward(const trtl_network *net, const trtl_cf_plan *pl, int32_t self, char *set)
{
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int32_t i = 0; i < net->n_layers; i++) {
            const trtl_layer *l = net->layers[i];
            if (set[i] || (is_exit(l->op) && l->p.cf.owner == self))
                continue;
            for (int32_t j = 0; j < l->n_in; j++) {
                const trtl_tensor *t = l->in[j];
                if (t && t->producer && set[t->producer->id]) {
                    set[i] = 1;
                    changed = 1;
                    break;
                }
            }
        }
        for (int32_t s = 0; s < pl->n_owners; s++) {
            int32_t o = pl->all[s];
            if (o == self)
                continue;
            int any = 0;
            for (int32_t i = 0; i < net->n_layers && !any; i++)
                any = set[i] && owner_of(net->layers[i]) == o;
            for (int32_t i = 0; any && i < net->n_layers; i++)
                if (!set[i] && owner_of(net->layers[i]) == o) {
                    set[i] = 1;
                    changed = 1;
                }
        }
    }
}

trtl_status trtl_cf_analyze(trtl_network *net, trtl_cf_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    int32_t nl = net->n_layers;
    pl->region = malloc(sizeof(int32_t) * (size_t)(nl ? nl : 1));
    pl->all = malloc(sizeof(int32_t) * (size_t)(nl ? nl : 1));
    if (!pl->region || !pl->all)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t i = 0; i < nl; i++) {
        pl->region[i] = -1;
        int32_t o = owner_of(net->layers[i]);
        if (o >= 0 && owner_index(pl, o) < 0)
            pl->all[pl->n_owners++] = o;
    }
    if (pl->n_owners == 0)
        return TRTL_OK;
    if (net->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "loops and conditionals need an explicit-batch network");
    pl->set = calloc((size_t)pl->n_owners, sizeof(char *));
    pl->owner = malloc(sizeof(int32_t) * (size_t)pl->n_owners);
    if (!pl->set || !pl->owner)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    /* Boundary checks, per structure. */
    for (int32_t s = 0; s < pl->n_owners; s++) {
        int32_t o = pl->all[s];
        int loop = -1, n_count = 0, n_while = 0, n_cond = 0, n_out = 0;
        const trtl_layer *first = NULL;
        for (int32_t i = 0; i < nl; i++) {
            const trtl_layer *l = net->layers[i];
            if (owner_of(l) != o)
                continue;
            if (!first)
                first = l;
            int lp = is_loop_op(l->op);
            if (loop >= 0 && lp != loop)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s' is a %s layer of %s %d, which has %s layers "
                                  "('%s')", l->name, kind_name(lp), kind_name(loop), (int)o, kind_name(loop), first->name);
            loop = lp;
            if (l->op == TRTL_OP_RECURRENCE && (l->n_in < 2 || !l->in[1]))
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "recurrence layer '%s' has no next value: call "
                                  "set_input(1, tensor) with the value of the next iteration", l->name);
            if (l->op == TRTL_OP_TRIP_LIMIT) {
                n_count += l->p.cf.kind == TRTL_TRIP_COUNT;
                n_while += l->p.cf.kind == TRTL_TRIP_WHILE;
            }
            n_cond += l->op == TRTL_OP_CONDITION;
            n_out += l->op == TRTL_OP_CONDITIONAL_OUTPUT || l->op == TRTL_OP_LOOP_OUTPUT;
        }
        if (loop && n_count + n_while == 0)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "loop %d (layer '%s') has no trip limit: call "
                              "loop.add_trip_limit(tensor, TripLimit.COUNT or WHILE)", (int)o, first->name);
        if (loop && (n_count > 1 || n_while > 1))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "loop %d (layer '%s') has %d COUNT and %d WHILE trip limits "
                              "(at most one of each)", (int)o, first->name, n_count, n_while);
        if (!loop && n_cond != 1)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "conditional %d (layer '%s') has %s: call "
                              "set_condition(tensor) once", (int)o, first->name, n_cond ? "several conditions" : "no condition");
        if (n_out == 0)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s %d (layer '%s') has no outputs: call %s", kind_name(loop),
                              (int)o, first->name, loop ? "add_loop_output" : "add_output");
        pl->set[s] = calloc((size_t)(nl ? nl : 1), 1);
        if (!pl->set[s])
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        for (int32_t i = 0; i < nl; i++)
            pl->set[s][i] = is_entry(net->layers[i]->op) && owner_of(net->layers[i]) == o;
        close_forward(net, pl, o, pl->set[s]);
    }
    /* Top level: structures none of whose boundary layers lies in another's set. */
    for (int32_t s = 0; s < pl->n_owners; s++) {
        int nested = 0;
        for (int32_t u = 0; u < pl->n_owners && !nested; u++)
            for (int32_t i = 0; u != s && i < nl && !nested; i++)
                nested = pl->set[u][i] && owner_of(net->layers[i]) == pl->all[s];
        if (nested)
            continue;
        int32_t top = pl->n;
        int loop = 0;
        pl->owner[pl->n++] = pl->all[s];
        for (int32_t i = 0; i < nl; i++)
            loop |= owner_of(net->layers[i]) == pl->all[s] && is_loop_op(net->layers[i]->op);
        for (int32_t i = 0; i < nl; i++) {
            const trtl_layer *l = net->layers[i];
            int mine = pl->set[s][i] || owner_of(l) == pl->all[s];
            if (!mine)
                continue;
            if (pl->region[i] >= 0)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s' reads values computed inside two different "
                                  "loops or conditionals (%d and %d): take them out through loop / conditional outputs",
                                  l->name, (int)pl->owner[pl->region[i]], (int)pl->all[s]);
            pl->region[i] = top;
            for (int32_t j = 0; pl->set[s][i] && j < l->n_out; j++)
                if (l->out[j]->is_output)
                    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "tensor '%s' is computed inside %s %d (by layer '%s') "
                                      "and marked as a network output: take it out through %s", l->out[j]->name,
                                      kind_name(loop), (int)pl->all[s], l->name,
                                      loop ? "a loop output (add_loop_output)" : "a conditional output (add_output)");
        }
    }
    /* A count trip limit must not depend on the loop (it is read once, before the first iteration). */
    for (int32_t i = 0; i < nl; i++) {
        const trtl_layer *l = net->layers[i];
        if (l->op != TRTL_OP_TRIP_LIMIT || l->p.cf.kind != TRTL_TRIP_COUNT || !l->in[0] || !l->in[0]->producer)
            continue;
        int32_t s = owner_index(pl, l->p.cf.owner);
        if (pl->set[s][l->in[0]->producer->id])
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "trip limit layer '%s': a COUNT trip limit must be computed "
                              "outside the loop (tensor '%s' depends on the loop's recurrences or iterators)", l->name,
                              l->in[0]->name);
    }
    return TRTL_OK;
}

/* ---- sub-networks -------------------------------------------------------------------------------- */

typedef struct tlist {
    const trtl_tensor **t;
    int32_t n;
} tlist;

static int32_t tl_find(const tlist *l, const trtl_tensor *t)
{
    for (int32_t i = 0; i < l->n; i++)
        if (l->t[i] == t)
            return i;
    return -1;
}

/* Appends t unless present (capacity: the network's tensor count, allocated by the caller). */
static int32_t tl_add(tlist *l, const trtl_tensor *t)
{
    int32_t i = tl_find(l, t);
    if (i >= 0)
        return i;
    l->t[l->n] = t;
    return l->n++;
}

static void free_net(void *n) { trtl_network_destroy(n); }

static trtl_status net_infer(void *vnet, const trtl_dims *in, trtl_dims *out, trtl_dtype *out_t)
{
    trtl_network *bn = vnet;
    for (int32_t i = 0; i < bn->n_inputs; i++)
        bn->inputs[i]->dims = in[i];
    trtl_network_touch(bn);
    TRTL_TRY(trtl_network_infer(bn));
    for (int32_t j = 0; j < bn->n_outputs; j++) {
        out[j] = bn->outputs[j]->dims;
        out_t[j] = bn->outputs[j]->dtype;
    }
    return TRTL_OK;
}

/* A network of the layers in `set` (topological order), with `ins` as its inputs and `outs` as its
 * outputs (an input or a repeated tensor is output through an identity layer). */
static trtl_status make_body(trtl_network *net, const char *set, const tlist *ins, const tlist *outs,
                             trtl_network **out)
{
    trtl_network *bn = NULL;
    int32_t *order = NULL, n_rec = 0;
    trtl_tensor **tmap = calloc((size_t)net->n_tensors + 1, sizeof *tmap);
    trtl_layer **rec = calloc((size_t)net->n_layers + 1, sizeof *rec); /* nested recurrences, next set last */
    const trtl_layer **rec_src = calloc((size_t)net->n_layers + 1, sizeof *rec_src);
    if (!tmap || !rec || !rec_src) {
        free(tmap);
        free(rec);
        free(rec_src);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    trtl_status st = trtl_network_create(0, &bn);
    if (st == TRTL_OK) {
        bn->next_layer_number = net->next_layer_number + 1000000;
        bn->next_control_flow = net->next_control_flow;
        st = trtl_network_topo_order(net, &order);
    }
    for (int32_t i = 0; st == TRTL_OK && i < ins->n; i++)
        st = trtl_network_add_input(bn, ins->t[i]->name, ins->t[i]->dtype, &ins->t[i]->dims, &tmap[ins->t[i]->id]);
    for (int32_t k = 0; st == TRTL_OK && k < net->n_layers; k++) {
        const trtl_layer *l = net->layers[order[k]];
        if (!set[l->id])
            continue;
        trtl_tensor *in[64];
        if (l->n_in > 64) {
            st = trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': too many inputs", l->name);
            break;
        }
        for (int32_t j = 0; st == TRTL_OK && j < l->n_in; j++) {
            if (l->op == TRTL_OP_RECURRENCE && j == 1) { /* a nested loop's next value: computed later, set below */
                in[j] = NULL;
                continue;
            }
            in[j] = l->in[j] ? tmap[l->in[j]->id] : NULL;
            if (l->in[j] && !in[j])
                st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s' inside a loop or conditional reads tensor '%s', "
                                "which is computed after it", l->name, l->in[j]->name);
        }
        trtl_layer *nl = NULL;
        if (st == TRTL_OK)
            st = trtl_network_copy_layer(bn, l, in, &nl);
        for (int32_t j = 0; st == TRTL_OK && j < l->n_out; j++)
            tmap[l->out[j]->id] = nl->out[j];
        if (st == TRTL_OK && l->op == TRTL_OP_RECURRENCE) {
            rec_src[n_rec] = l;
            rec[n_rec++] = nl;
        }
    }
    for (int32_t r = 0; st == TRTL_OK && r < n_rec; r++) {
        const trtl_layer *src = rec_src[r];
        trtl_tensor *nx = src->n_in > 1 && src->in[1] ? tmap[src->in[1]->id] : NULL;
        if (!nx)
            st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "recurrence layer '%s' has no next value inside its loop",
                            rec[r]->name);
        else
            st = trtl_layer_set_input(rec[r], 1, nx);
    }
    for (int32_t j = 0; st == TRTL_OK && j < outs->n; j++) {
        trtl_tensor *t = tmap[outs->t[j]->id];
        if (!t) {
            st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "tensor '%s' is not computed in its loop or conditional",
                            outs->t[j]->name);
            break;
        }
        if (t->is_input || t->is_output) {
            trtl_layer *id = NULL;
            st = trtl_network_add_layer(bn, TRTL_OP_IDENTITY, &t, 1, &id);
            if (st == TRTL_OK)
                t = id->out[0];
        }
        if (st == TRTL_OK)
            st = trtl_network_mark_output(bn, t);
    }
    free(order);
    free(tmap);
    free(rec);
    free(rec_src);
    if (st != TRTL_OK) {
        trtl_network_destroy(bn);
        return st;
    }
    *out = bn;
    return TRTL_OK;
}

/* ---- lowering ------------------------------------------------------------------------------------ */

trtl_status trtl_cf_premap(trtl_bgraph *g, trtl_network *net, const trtl_cf_plan *pl, int32_t *map)
{
    for (int32_t i = 0; pl->n && i < net->n_layers; i++) {
        const trtl_layer *l = net->layers[i];
        if (pl->region[i] < 0 || (l->op != TRTL_OP_LOOP_OUTPUT && l->op != TRTL_OP_CONDITIONAL_OUTPUT) ||
            l->p.cf.owner != pl->owner[pl->region[i]])
            continue;
        int32_t id = trtl_bg_add_tensor(g, l->out[0]->name, l->out[0]->dtype, TRTL_TK_ACTIVATION);
        if (id < 0)
            return trtl_last_status();
        map[l->out[0]->id] = id;
    }
    return TRTL_OK;
}

/* Build-time value of a 0-d INT32 tensor: a constant's, or known shape values; -1 otherwise. */
static int64_t known_value(const trtl_network *net, const trtl_tensor *t)
{
    if (!t || t->dims.nb_dims != 0)
        return -1;
    for (int32_t i = 0; i < net->n_layers; i++) {
        const trtl_layer *l = net->layers[i];
        if (l->op == TRTL_OP_CONSTANT && l->out[0] == t && l->p.constant.weights.type == TRTL_INT32 &&
            l->p.constant.weights.count == 1 && l->p.constant.weights.values)
            return *(const int32_t *)l->p.constant.weights.values;
    }
    return t->has_sv && t->sv ? t->sv[0] : -1;
}

/* Adds to `set` the layers of `region` that `t` depends on (and whole nested structures). */
static void close_backward(const trtl_network *net, const trtl_cf_plan *pl, const char *within, const trtl_tensor *t,
                           char *set)
{
    if (!t || !t->producer || !within[t->producer->id] || set[t->producer->id])
        return;
    set[t->producer->id] = 1;
    const trtl_layer *l = t->producer;
    for (int32_t j = 0; j < l->n_in; j++)
        close_backward(net, pl, within, l->in[j], set);
    int32_t o = owner_of(l);
    if (o < 0)
        return;
    /* a nested structure comes whole */
    for (int32_t i = 0; i < net->n_layers; i++) {
        const trtl_layer *m = net->layers[i];
        int32_t s = owner_index(pl, o);
        if (within[i] && !set[i] && (owner_of(m) == o || (s >= 0 && pl->set[s][i]))) {
            set[i] = 1;
            for (int32_t j = 0; j < m->n_in; j++)
                close_backward(net, pl, within, m->in[j], set);
        }
    }
}

static trtl_status lower_one(trtl_bgraph *g, trtl_network *net, const trtl_cf_plan *pl, int32_t top, const int32_t *map)
{
    int32_t nl = net->n_layers, o = pl->owner[top];
    const char *set = pl->set[owner_index(pl, o)];
    trtl_status st = TRTL_OK;
    size_t cap = (size_t)net->n_tensors + 8;
    tlist ins[2] = {{calloc(cap, sizeof(void *)), 0}, {calloc(cap, sizeof(void *)), 0}};
    tlist outs[2] = {{calloc(cap, sizeof(void *)), 0}, {calloc(cap, sizeof(void *)), 0}};
    tlist node_in = {calloc(cap * 2, sizeof(void *)), 0}; /* node inputs, as network tensors */
    char *bset[2] = {calloc((size_t)nl + 1, 1), calloc((size_t)nl + 1, 1)};
    const trtl_layer **exits = calloc((size_t)nl + 1, sizeof *exits);
    trtl_cf *cf = trtl_cf_alloc();
    int32_t n_exits = 0, loop = 0;
    char name[96];
    if (!ins[0].t || !ins[1].t || !outs[0].t || !outs[1].t || !node_in.t || !bset[0] || !bset[1] || !exits || !cf) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < nl; i++) {
        const trtl_layer *l = net->layers[i];
        if (owner_of(l) != o)
            continue;
        loop |= is_loop_op(l->op);
        if (l->op == TRTL_OP_LOOP_OUTPUT || l->op == TRTL_OP_CONDITIONAL_OUTPUT)
            exits[n_exits++] = l;
    }
    cf->is_loop = loop;
    cf->n_bodies = loop ? 1 : 2;
    cf->n_out = n_exits;
    cf->out = calloc((size_t)n_exits + 1, sizeof *cf->out);
    if (!cf->out) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        goto done;
    }
    if (loop) {
        const trtl_layer *count = NULL, *wh = NULL;
        /* inputs: recurrences, iterators, then outer tensors */
        for (int pass = 0; pass < 2; pass++)
            for (int32_t i = 0; i < nl; i++) {
                const trtl_layer *l = net->layers[i];
                if (owner_of(l) == o && l->op == (pass == 0 ? TRTL_OP_RECURRENCE : TRTL_OP_ITERATOR)) {
                    tl_add(&ins[0], l->out[0]);
                    if (pass == 0)
                        cf->n_rec++;
                    else
                        cf->n_iter++;
                }
            }
        /* node inputs: one per recurrence / iterator (a tensor may start several) */
        for (int32_t k = 0; k < ins[0].n; k++)
            node_in.t[node_in.n++] = ins[0].t[k]->producer->in[0];
        cf->iter_axis = calloc((size_t)cf->n_iter + 1, sizeof(int32_t));
        cf->iter_rev = calloc((size_t)cf->n_iter + 1, sizeof(int32_t));
        if (!cf->iter_axis || !cf->iter_rev) {
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            goto done;
        }
        for (int32_t k = 0; k < cf->n_iter; k++) {
            const trtl_layer *it = ins[0].t[cf->n_rec + k]->producer;
            cf->iter_axis[k] = it->p.cf.axis;
            cf->iter_rev[k] = it->p.cf.reverse != 0;
            int32_t r = it->in[0]->dims.nb_dims;
            if (it->p.cf.axis < 0 || it->p.cf.axis >= r) {
                st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "iterator layer '%s': axis %d is out of range for an input "
                                "of %d dims", it->name, (int)it->p.cf.axis, (int)r);
                goto done;
            }
        }
        for (int32_t i = 0; i < nl; i++) {
            const trtl_layer *l = net->layers[i];
            if (owner_of(l) == o && l->op == TRTL_OP_TRIP_LIMIT)
                *(l->p.cf.kind == TRTL_TRIP_COUNT ? &count : &wh) = l;
        }
        /* outputs: next values, the WHILE condition, then what the loop outputs read */
        for (int32_t r = 0; r < cf->n_rec; r++)
            outs[0].t[outs[0].n++] = ins[0].t[r]->producer->in[1];
        if (wh) {
            cf->cond_out = outs[0].n;
            outs[0].t[outs[0].n++] = wh->in[0];
        }
        for (int32_t j = 0; j < n_exits; j++) {
            const trtl_layer *x = exits[j];
            trtl_cf_out *co = &cf->out[j];
            co->kind = x->p.cf.kind;
            co->axis = x->p.cf.axis;
            co->len = -1;
            int32_t r = tl_find(&ins[0], x->in[0]);
            if (r >= 0 && r < cf->n_rec && co->kind == TRTL_LOOP_LAST_VALUE) {
                co->src = -1 - r;
            } else {
                co->src = outs[0].n;
                outs[0].t[outs[0].n++] = x->in[0];
            }
            if (co->kind != TRTL_LOOP_LAST_VALUE && x->n_in > 1 && x->in[1]) {
                co->len = known_value(net, x->in[1]);
                if (co->len < 0) {
                    st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "loop output layer '%s': its length (input 1, tensor "
                                    "'%s') must be a 0-d INT32 build-time constant", x->name, x->in[1]->name);
                    goto done;
                }
            }
            if (co->axis < 0 || co->axis > (x->in[0]->dims.nb_dims < 0 ? TRTL_MAX_DIMS : x->in[0]->dims.nb_dims)) {
                st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "loop output layer '%s': axis %d is out of range", x->name,
                                (int)co->axis);
                goto done;
            }
        }
        /* outer tensors: read by body layers or by the outputs, produced outside the body */
        for (int32_t i = 0; i < nl; i++) {
            const trtl_layer *l = net->layers[i];
            if (!set[i] || (is_entry(l->op) && owner_of(l) == o))
                continue;
            for (int32_t j = 0; j < l->n_in; j++) {
                const trtl_tensor *t = l->in[j];
                if (t && (!t->producer || !set[t->producer->id]) && tl_find(&ins[0], t) < 0) {
                    tl_add(&ins[0], t);
                    node_in.t[node_in.n++] = t;
                }
            }
        }
        for (int32_t j = 0; j < outs[0].n; j++) {
            const trtl_tensor *t = outs[0].t[j];
            if ((!t->producer || !set[t->producer->id]) && tl_find(&ins[0], t) < 0) {
                tl_add(&ins[0], t);
                node_in.t[node_in.n++] = t;
            }
        }
        if (count) {
            cf->trip_in = node_in.n;
            node_in.t[node_in.n++] = count->in[0];
            cf->static_trip = known_value(net, count->in[0]);
        }
        memcpy(bset[0], set, (size_t)nl);
        for (int32_t i = 0; i < nl; i++)
            if (is_entry(net->layers[i]->op) && owner_of(net->layers[i]) == o)
                bset[0][i] = 0;
        cf->n_body_in[0] = ins[0].n;
        cf->in_map[0] = malloc(sizeof(int32_t) * ((size_t)ins[0].n + 1));
        if (!cf->in_map[0]) {
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            goto done;
        }
        for (int32_t k = 0; k < ins[0].n; k++)
            cf->in_map[0][k] = k;
    } else {
        const trtl_layer *cond = NULL;
        for (int32_t i = 0; i < nl; i++)
            if (owner_of(net->layers[i]) == o && net->layers[i]->op == TRTL_OP_CONDITION)
                cond = net->layers[i];
        if (cond->in[0]->producer && set[cond->in[0]->producer->id]) {
            st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "condition layer '%s': the condition is computed inside its own "
                            "conditional", cond->name);
            goto done;
        }
        node_in.t[node_in.n++] = cond->in[0];
        for (int b = 0; b < 2; b++) {
            for (int32_t j = 0; j < n_exits; j++) {
                const trtl_tensor *src = exits[j]->in[b];
                close_backward(net, pl, set, src, bset[b]);
                outs[b].t[outs[b].n++] = src;
            }
            for (int32_t i = 0; i < nl; i++)
                if (is_entry(net->layers[i]->op) && owner_of(net->layers[i]) == o)
                    bset[b][i] = 0;
            /* inputs: conditional inputs' outputs and outer tensors read by the branch */
            for (int32_t i = 0; i <= nl; i++) {
                const trtl_layer *l = i < nl ? net->layers[i] : NULL;
                int32_t n = l ? l->n_in : outs[b].n;
                if (l && !bset[b][i])
                    continue;
                for (int32_t j = 0; j < n; j++) {
                    const trtl_tensor *t = l ? l->in[j] : outs[b].t[j];
                    if (t && (!t->producer || !bset[b][t->producer->id]))
                        tl_add(&ins[b], t);
                }
            }
            cf->n_body_in[b] = ins[b].n;
            cf->in_map[b] = malloc(sizeof(int32_t) * ((size_t)ins[b].n + 1));
            if (!cf->in_map[b]) {
                st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
                goto done;
            }
            for (int32_t k = 0; k < ins[b].n; k++) {
                const trtl_tensor *t = ins[b].t[k];
                const trtl_tensor *src = t->producer && t->producer->op == TRTL_OP_CONDITIONAL_INPUT &&
                                                 owner_of(t->producer) == o ? t->producer->in[0] : t;
                cf->in_map[b][k] = tl_add(&node_in, src);
            }
        }
    }
    for (int b = 0; b < cf->n_bodies; b++) {
        trtl_network *bn = NULL;
        st = make_body(net, bset[b], &ins[b], &outs[b], &bn);
        if (st != TRTL_OK)
            goto done;
        cf->build_net[b] = bn;
        cf->n_body_out[b] = outs[b].n;
    }
    cf->build_infer = net_infer;
    cf->build_free = free_net;
    {
        int32_t in[256], out[16];
        if (node_in.n > 64 || n_exits > 16) {
            st = trtl_error(TRTL_ERR_UNSUPPORTED, "%s %d (layer '%s') reads %d outer tensors and has %d outputs (at "
                            "most 64 and 16)", kind_name(loop), (int)o, exits[0]->name, (int)node_in.n, (int)n_exits);
            goto done;
        }
        for (int32_t k = 0; k < node_in.n; k++) {
            in[k] = map[node_in.t[k]->id];
            if (in[k] < 0) {
                st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s %d reads tensor '%s', which is not available before it",
                                kind_name(loop), (int)o, node_in.t[k]->name);
                goto done;
            }
        }
        for (int32_t j = 0; j < n_exits; j++)
            out[j] = map[exits[j]->out[0]->id];
        snprintf(name, sizeof name, "%s %d", loop ? "Loop" : "Conditional", (int)o);
        trtl_params p;
        trtl_op_table[TRTL_OP_CONTROL_FLOW].init(&p);
        p.cf.cf = &cf->head;
        int32_t ni = trtl_bg_add_node(g, TRTL_OP_CONTROL_FLOW, name, &p, node_in.n, in, n_exits, out);
        if (ni < 0) {
            st = trtl_last_status();
            goto done;
        }
        cf = NULL; /* the node owns it */
    }
done:
    trtl_cf_destroy(cf);
    for (int b = 0; b < 2; b++) {
        free(ins[b].t);
        free(outs[b].t);
        free(bset[b]);
    }
    free(node_in.t);
    free(exits);
    return st;
}

trtl_status trtl_cf_lower(trtl_bgraph *g, trtl_network *net, const trtl_cf_plan *pl, const int32_t *map)
{
    for (int32_t s = 0; s < pl->n; s++)
        TRTL_TRY(lower_one(g, net, pl, s, map));
    return TRTL_OK;
}

/* ---- compiling the bodies -------------------------------------------------------------------------- */

static trtl_status compile_body(trtl_bgraph *g, trtl_cf *cf, int b, const trtl_dims *mn, const trtl_dims *op,
                                const trtl_dims *mx, const char *name)
{
    trtl_network *bn = cf->build_net[b];
    trtl_config_profile prof = {0};
    prof.entries = calloc((size_t)bn->n_inputs + 1, sizeof *prof.entries);
    if (!prof.entries)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t i = 0; i < bn->n_inputs; i++) {
        trtl_tensor *t = bn->inputs[i];
        trtl_dims d = mx[i];
        int dyn = 0;
        for (int32_t k = 0; k < d.nb_dims; k++)
            if (mn[i].d[k] != mx[i].d[k]) {
                d.d[k] = -1;
                dyn = 1;
            }
        t->dims = d;
        if (dyn) {
            trtl_profile_entry *e = &prof.entries[prof.n++];
            e->input = t->name;
            e->min = mn[i];
            e->opt = op[i];
            e->max = mx[i];
            e->has_shape = 1;
        }
    }
    trtl_network_touch(bn);
    trtl_builder_config sub = *g->cfg;
    sub.profiles = &prof;
    sub.n_profiles = 1;
    sub.progress = NULL;
    trtl_engine *e = NULL;
    trtl_status st = trtl_build(bn, &sub, &e);
    free(prof.entries);
    if (st != TRTL_OK)
        return trtl_error_prefix("%s, %s", name, cf->is_loop ? "loop body" : b == 0 ? "true branch" : "false branch");
    if (e->n_shape_inputs) {
        trtl_engine_destroy(e);
        return trtl_error(TRTL_ERR_UNSUPPORTED, "%s: a shape tensor computed outside it decides shapes inside it; "
                          "compute it inside or make it a constant", name);
    }
    cf->body[b] = e;
    trtl_network_destroy(bn);
    cf->build_net[b] = NULL;
    return TRTL_OK;
}

trtl_status trtl_cf_compile(trtl_bgraph *g)
{
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *bnode = &g->n[i];
        if (bnode->dead || bnode->n.op != TRTL_OP_CONTROL_FLOW)
            continue;
        trtl_node *n = &bnode->n;
        trtl_cf *cf = (trtl_cf *)n->p.cf.cf;
        for (int b = 0; b < cf->n_bodies; b++) {
            int32_t nb = cf->n_body_in[b];
            trtl_dims *d = calloc(3 * ((size_t)nb + 1), sizeof *d);
            if (!d)
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
            trtl_dims *mn = d, *op = d + nb + 1, *mx = d + 2 * ((size_t)nb + 1);
            for (int32_t k = 0; k < nb; k++) {
                const trtl_bg_tensor *t = &g->t[n->in[cf->in_map[b][k]]];
                mn[k] = t->dmin;
                op[k] = t->dopt;
                mx[k] = t->dmax;
                if (cf->is_loop && k >= cf->n_rec && k < cf->n_rec + cf->n_iter) {
                    int32_t a = cf->iter_axis[k - cf->n_rec];
                    trtl_dims *v[3] = {&mn[k], &op[k], &mx[k]};
                    for (int c = 0; c < 3; c++) {
                        for (int32_t x = a; x + 1 < v[c]->nb_dims; x++)
                            v[c]->d[x] = v[c]->d[x + 1];
                        v[c]->nb_dims--;
                    }
                }
            }
            trtl_status st = compile_body(g, cf, b, mn, op, mx, n->name);
            free(d);
            TRTL_TRY(st);
        }
    }
    return TRTL_OK;
}
