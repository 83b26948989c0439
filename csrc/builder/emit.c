/* emit.c -- turns the optimized working graph into an engine: keeps the tensors live nodes use,
 * moves names, constants, weights and kernel state over, and finalizes the memory plan. */
#include <stdlib.h>
#include <string.h>

#include "builder/graph.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/dims.h"

static trtl_dims declared(const trtl_bg_tensor *t)
{
    trtl_dims d = t->dmax;
    for (int32_t k = 0; k < d.nb_dims; k++)
        if (t->dmin.d[k] != t->dmax.d[k] || t->corner_unknown)
            d.d[k] = -1;
    return d;
}

trtl_status trtl_emit_engine(trtl_bgraph *g, trtl_engine **out)
{
    trtl_engine *e = trtl_engine_alloc();
    int32_t *map = malloc(sizeof(int32_t) * (size_t)(g->nt ? g->nt : 1));
    if (!e || !map) {
        free(map);
        trtl_engine_destroy(e);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    e->implicit_batch = g->implicit_batch;
    e->max_batch_size = g->max_batch;
    e->refittable = (int32_t)((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u);
    /* Which tensors survive: I/O and whatever live nodes touch. */
    for (int32_t i = 0; i < g->nt; i++)
        map[i] = -1;
    for (int32_t i = 0; i < g->n_inputs; i++)
        map[g->inputs[i]] = 0;
    for (int32_t i = 0; i < g->n_outputs; i++)
        map[g->outputs[i]] = 0;
    for (int32_t i = 0; i < g->nn; i++) {
        for (int32_t j = 0; j < g->n[i].n.n_in; j++)
            map[g->n[i].n.in[j]] = 0;
        for (int32_t j = 0; j < g->n[i].n.n_out; j++)
            map[g->n[i].n.out[j]] = 0;
    }
    int32_t nt = 0;
    for (int32_t i = 0; i < g->nt; i++)
        if (map[i] == 0)
            map[i] = nt++;
    e->tensors = calloc((size_t)(nt ? nt : 1), sizeof *e->tensors);
    e->nodes = calloc((size_t)(g->nn ? g->nn : 1), sizeof *e->nodes);
    e->io = malloc(sizeof(int32_t) * (size_t)(g->n_inputs + g->n_outputs + 1));
    if (!e->tensors || !e->nodes || !e->io) {
        free(map);
        trtl_engine_destroy(e);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    for (int32_t i = 0; i < g->nt; i++) {
        if (map[i] < 0)
            continue;
        trtl_bg_tensor *s = &g->t[i];
        trtl_etensor *t = &e->tensors[map[i]];
        t->name = s->name;
        s->name = NULL;
        t->dtype = s->dtype;
        t->kind = s->kind;
        t->dims = declared(s);
        t->max_dims = s->dmax;
        t->data = s->data;
        s->data = NULL;
        int64_t v = trtl_volume(&s->dmax);
        t->max_bytes = (v > 0 ? v : 0) * (int64_t)trtl_dtype_size(s->dtype);
        t->first = t->last = -1;
    }
    e->n_tensors = nt;
    for (int32_t i = 0; i < g->n_inputs; i++)
        e->io[e->n_io++] = map[g->inputs[i]];
    e->n_inputs = g->n_inputs;
    for (int32_t i = 0; i < g->n_outputs; i++)
        e->io[e->n_io++] = map[g->outputs[i]];
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *n = &e->nodes[i];
        *n = g->n[i].n;
        memset(&g->n[i].n, 0, sizeof g->n[i].n);
        for (int32_t j = 0; j < n->n_in; j++)
            n->in[j] = map[n->in[j]];
        for (int32_t j = 0; j < n->n_out; j++)
            n->out[j] = map[n->out[j]];
        e->n_nodes++;
    }
    g->nn = 0;
    free(map);
    /* Profiles. */
    int32_t ni = g->n_inputs, np = g->n_profiles;
    e->n_profiles = np;
    e->profiles = calloc((size_t)(np ? np : 1), sizeof *e->profiles);
    e->env_min = calloc((size_t)(ni ? ni : 1), sizeof(trtl_dims));
    e->env_max = calloc((size_t)(ni ? ni : 1), sizeof(trtl_dims));
    if (!e->profiles || !e->env_min || !e->env_max) {
        trtl_engine_destroy(e);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    for (int32_t p = 0; p < np; p++) {
        trtl_profile *pr = &e->profiles[p];
        pr->min = malloc(sizeof(trtl_dims) * (size_t)(ni ? ni : 1));
        pr->opt = malloc(sizeof(trtl_dims) * (size_t)(ni ? ni : 1));
        pr->max = malloc(sizeof(trtl_dims) * (size_t)(ni ? ni : 1));
        pr->vmin = calloc((size_t)(ni ? ni : 1), sizeof(trtl_dims));
        pr->vopt = calloc((size_t)(ni ? ni : 1), sizeof(trtl_dims));
        pr->vmax = calloc((size_t)(ni ? ni : 1), sizeof(trtl_dims));
        if (!pr->min || !pr->opt || !pr->max || !pr->vmin || !pr->vopt || !pr->vmax) {
            trtl_engine_destroy(e);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        }
        for (int32_t i = 0; i < ni; i++) {
            pr->min[i] = g->pmin[p * ni + i];
            pr->opt[i] = g->popt[p * ni + i];
            pr->max[i] = g->pmax[p * ni + i];
            if (g->shape_input && g->shape_input[i]) {
                pr->vmin[i] = g->vmin[p * ni + i];
                pr->vopt[i] = g->vopt[p * ni + i];
                pr->vmax[i] = g->vmax[p * ni + i];
            }
        }
    }
    e->shape_input = calloc((size_t)(ni ? ni : 1), sizeof(int32_t));
    if (!e->shape_input) {
        trtl_engine_destroy(e);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    for (int32_t i = 0; g->shape_input && i < ni; i++)
        e->n_shape_inputs += (e->shape_input[i] = g->shape_input[i]);
    for (int32_t i = 0; i < ni; i++) {
        e->env_min[i] = g->pmin[i];
        e->env_max[i] = g->pmax[i];
        for (int32_t p = 1; p < np; p++)
            for (int32_t k = 0; k < e->env_min[i].nb_dims; k++) {
                if (g->pmin[p * ni + i].d[k] < e->env_min[i].d[k])
                    e->env_min[i].d[k] = g->pmin[p * ni + i].d[k];
                if (g->pmax[p * ni + i].d[k] > e->env_max[i].d[k])
                    e->env_max[i].d[k] = g->pmax[p * ni + i].d[k];
            }
    }
    /* Weights. */
    for (int32_t i = 0; i < g->n_owned; i++)
        if (!trtl_engine_own(e, g->owned[i])) {
            g->owned[i] = NULL;
            for (int32_t k = i + 1; k < g->n_owned; k++)
                trtl_aligned_free(g->owned[k]);
            g->n_owned = 0;
            trtl_engine_destroy(e);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        }
    g->n_owned = 0;
    trtl_status st = trtl_engine_finalize(e);
    if (st != TRTL_OK) {
        trtl_engine_destroy(e);
        return st;
    }
    *out = e;
    return TRTL_OK;
}
