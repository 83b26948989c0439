/* build.c -- the build driver: network -> working graph -> passes -> kernels -> engine. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "builder/data_dependent.h"
#include "engine/data_dependent.h"
#include "engine/refit_names.h"
#include "builder/graph.h"
#include "builder/control_flow.h"
#include "builder/passes/passes.h"
#include "builder/quantize_implicit.h"
#include "builder/half_casts.h"
#include "core/alloc.h"
#include "network/network.h"
#include "core/status.h"
#include "core/dims.h"

/* Copies weights into an engine-owned buffer: float32 for every op's weights, except constants,
 * which keep INT32/BOOL/INT8/UINT8/INT64 values and storage-type codes (HALF becomes FLOAT). */
static trtl_status convert_weights(trtl_weights *w, int keep_ints, void **buf_out, const char *layer,
                                   const char *attr)
{
    *buf_out = NULL;
    if (w->count == 0) {
        w->values = NULL;
        w->type = TRTL_FLOAT;
        return TRTL_OK;
    }
    trtl_dtype to = TRTL_FLOAT;
    if (keep_ints && (w->type == TRTL_INT32 || w->type == TRTL_BOOL || w->type == TRTL_INT8 || w->type == TRTL_UINT8 ||
                      w->type == TRTL_INT64 || trtl_dtype_is_storage(w->type)))
        to = w->type;
    void *buf = trtl_aligned_alloc((size_t)w->count * trtl_dtype_size(to));
    if (!buf)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory copying %s", layer, attr);
    if (to == w->type) {
        memcpy(buf, w->values, (size_t)w->count * trtl_dtype_size(to));
    } else {
        float *f = buf;
        for (int64_t i = 0; i < w->count; i++) {
            switch (w->type) {
            case TRTL_HALF: f[i] = trtl_half_to_float(((const uint16_t *)w->values)[i]); break;
            case TRTL_BF16: f[i] = trtl_bf16_to_float(((const uint16_t *)w->values)[i]); break;
            case TRTL_INT32: f[i] = (float)((const int32_t *)w->values)[i]; break;
            case TRTL_INT8: f[i] = (float)((const int8_t *)w->values)[i]; break;
            case TRTL_BOOL:
            case TRTL_UINT8: f[i] = (float)((const uint8_t *)w->values)[i]; break;
            default: f[i] = ((const float *)w->values)[i]; break;
            }
        }
    }
    w->values = buf;
    w->type = to;
    *buf_out = buf;
    return TRTL_OK;
}

static trtl_status own_weights(trtl_bgraph *g, trtl_node *n, const char *layer)
{
    const trtl_op_info *info = &trtl_op_table[n->op];
    for (int32_t i = 0; i < *info->nattrs; i++) {
        const trtl_attr_desc *d = &info->attrs[i];
        if (d->type != TRTL_ATTR_WEIGHTS || (d->flags & TRTL_ATTRF_ALIAS))
            continue;
        trtl_weights *w = (trtl_weights *)((char *)&n->p + d->offset);
        void *buf;
        TRTL_TRY(convert_weights(w, n->op == TRTL_OP_CONSTANT, &buf, layer, d->name));
        if (buf && !trtl_bg_own(g, buf))
            return trtl_last_status();
    }
    return TRTL_OK;
}

/* Shape-tensor inputs (network inputs whose values decide shapes, see network/shape_values.h):
 * INT32 with a static shape of at most TRTL_MAX_DIMS values, and value ranges in every profile.
 * Fills g->shape_input and g->vmin/vopt/vmax (with the envelope over profiles after them). */
static trtl_status setup_shape_inputs(trtl_bgraph *g, trtl_network *net, const trtl_builder_config *cfg)
{
    int32_t ni = net->n_inputs, np = g->n_profiles;
    char s1[TRTL_DIMS_STR_MAX];
    g->shape_input = calloc((size_t)ni + 1, sizeof(int32_t));
    g->vmin = calloc((size_t)((np + 1) * ni + 1), sizeof(trtl_dims));
    g->vopt = calloc((size_t)((np + 1) * ni + 1), sizeof(trtl_dims));
    g->vmax = calloc((size_t)((np + 1) * ni + 1), sizeof(trtl_dims));
    if (!g->shape_input || !g->vmin || !g->vopt || !g->vmax)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t i = 0; i < ni; i++) {
        const trtl_tensor *t = net->inputs[i];
        int sh = 0, ex = 0;
        TRTL_TRY(trtl_network_tensor_roles(net, t, &sh, &ex));
        for (int32_t p = 0; p < np; p++) {
            const trtl_profile_entry *e = NULL;
            for (int32_t k = 0; p < cfg->n_profiles && k < cfg->profiles[p].n; k++)
                if (strcmp(cfg->profiles[p].entries[k].input, t->name) == 0 && cfg->profiles[p].entries[k].has_values)
                    e = &cfg->profiles[p].entries[k];
            if (!sh) {
                if (e)
                    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "optimization profile %d gives values for input '%s' "
                                      "(set_shape_input), but it is not a shape tensor: no shape position reads it",
                                      (int)p, t->name);
                continue;
            }
            int64_t vol = trtl_volume(&t->dims);
            if (net->implicit_batch)
                return trtl_error(TRTL_ERR_UNSUPPORTED, "input '%s' is a shape tensor: shape tensors need an "
                                  "explicit-batch network", t->name);
            if (t->dtype != TRTL_INT32 || trtl_dims_dynamic(&t->dims) || vol > TRTL_MAX_DIMS || t->dims.nb_dims > 1)
                return trtl_error(TRTL_ERR_SHAPE, "input '%s' is a shape tensor (its values decide shapes), so it must "
                                  "be INT32 with a static shape of 0 or 1 dims and at most %d values; it is %s %s",
                                  t->name, TRTL_MAX_DIMS, trtl_dtype_name(t->dtype),
                                  trtl_dims_str(&t->dims, s1, sizeof s1));
            if (!e)
                return trtl_error(TRTL_ERR_SHAPE, "input '%s' is a shape tensor but optimization profile %d gives no "
                                  "values for it: call profile.set_shape_input('%s', min, opt, max) with %lld values each",
                                  t->name, (int)p, t->name, (long long)vol);
            if (e->vmin.nb_dims != vol)
                return trtl_error(TRTL_ERR_SHAPE, "optimization profile %d: shape-input values for '%s' have %d values, "
                                  "the input holds %lld", (int)p, t->name, (int)e->vmin.nb_dims, (long long)vol);
            g->shape_input[i] = 1;
            g->vmin[p * ni + i] = e->vmin;
            g->vopt[p * ni + i] = e->vopt;
            g->vmax[p * ni + i] = e->vmax;
            trtl_dims *lo = &g->vmin[np * ni + i], *hi = &g->vmax[np * ni + i];
            for (int32_t k = 0; k < e->vmin.nb_dims; k++) {
                lo->d[k] = (p == 0 || e->vmin.d[k] < lo->d[k]) ? e->vmin.d[k] : lo->d[k];
                hi->d[k] = (p == 0 || e->vmax.d[k] > hi->d[k]) ? e->vmax.d[k] : hi->d[k];
            }
            lo->nb_dims = hi->nb_dims = e->vmin.nb_dims;
        }
    }
    return TRTL_OK;
}

/* Profiles: per input full min/opt/max for every profile. */
static trtl_status setup_profiles(trtl_bgraph *g, trtl_network *net, const trtl_builder_config *cfg)
{
    int32_t ni = net->n_inputs;
    int32_t np = net->implicit_batch ? 1 : (cfg->n_profiles > 0 ? cfg->n_profiles : 1);
    g->n_profiles = np;
    g->pmin = calloc((size_t)(np * ni + 1), sizeof(trtl_dims));
    g->popt = calloc((size_t)(np * ni + 1), sizeof(trtl_dims));
    g->pmax = calloc((size_t)(np * ni + 1), sizeof(trtl_dims));
    if (!g->pmin || !g->popt || !g->pmax)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    /* Every profile entry must name an input of this network. */
    for (int32_t p = 0; !net->implicit_batch && p < cfg->n_profiles; p++)
        for (int32_t k = 0; k < cfg->profiles[p].n; k++) {
            const char *nm = cfg->profiles[p].entries[k].input;
            int found = 0;
            for (int32_t i = 0; i < ni; i++)
                found |= strcmp(net->inputs[i]->name, nm) == 0;
            if (!found)
                return trtl_error(TRTL_ERR_NOT_FOUND, "optimization profile %d names '%s', which is not a network input",
                                  (int)p, nm);
        }
    for (int32_t p = 0; p < np; p++)
        for (int32_t i = 0; i < ni; i++) {
            const trtl_tensor *t = net->inputs[i];
            trtl_dims d = t->dims, *mn = &g->pmin[p * ni + i], *op = &g->popt[p * ni + i], *mx = &g->pmax[p * ni + i];
            if (net->implicit_batch) {
                *mn = *op = *mx = d;
                mn->d[0] = 1;
                op->d[0] = mx->d[0] = g->max_batch;
                continue;
            }
            const trtl_profile_entry *e = NULL;
            if (p < cfg->n_profiles)
                for (int32_t k = 0; k < cfg->profiles[p].n; k++)
                    if (strcmp(cfg->profiles[p].entries[k].input, t->name) == 0 && cfg->profiles[p].entries[k].has_shape)
                        e = &cfg->profiles[p].entries[k];
            if (!e) {
                if (trtl_dims_dynamic(&d))
                    return trtl_error(TRTL_ERR_SHAPE,
                                      "input '%s' has dynamic shape %s but optimization profile %d gives it no "
                                      "shapes: call profile.set_shape('%s', min, opt, max) and "
                                      "config.add_optimization_profile(profile)",
                                      t->name, trtl_dims_str(&d, s1, sizeof s1), (int)p, t->name);
                *mn = *op = *mx = d;
                continue;
            }
            if (e->min.nb_dims != d.nb_dims)
                return trtl_error(TRTL_ERR_SHAPE, "optimization profile %d: shapes for input '%s' have %d dims, the input has %d",
                                  (int)p, t->name, (int)e->min.nb_dims, (int)d.nb_dims);
            for (int32_t k = 0; k < d.nb_dims; k++)
                if (d.d[k] >= 0 && (e->min.d[k] != d.d[k] || e->max.d[k] != d.d[k]))
                    return trtl_error(TRTL_ERR_SHAPE,
                                      "optimization profile %d: input '%s' is %s but the profile allows %s..%s "
                                      "(fixed dimension %d differs)",
                                      (int)p, t->name, trtl_dims_str(&d, s1, sizeof s1),
                                      trtl_dims_str(&e->min, s2, sizeof s2), trtl_dims_str(&e->max, s3, sizeof s3),
                                      (int)k);
            *mn = e->min;
            *op = e->opt;
            *mx = e->max;
        }
    return setup_shape_inputs(g, net, cfg);
}

/* Input dims of the working graph: envelope over profiles for min/max, profile 0 for opt. */
static void set_input_dims(trtl_bgraph *g)
{
    int32_t ni = g->n_inputs;
    for (int32_t i = 0; i < ni; i++) {
        trtl_bg_tensor *t = &g->t[g->inputs[i]];
        t->dmin = g->pmin[i];
        t->dopt = g->popt[i];
        t->dmax = g->pmax[i];
        for (int32_t p = 1; p < g->n_profiles; p++)
            for (int32_t k = 0; k < t->dmin.nb_dims; k++) {
                if (g->pmin[p * ni + i].d[k] < t->dmin.d[k])
                    t->dmin.d[k] = g->pmin[p * ni + i].d[k];
                if (g->pmax[p * ni + i].d[k] > t->dmax.d[k])
                    t->dmax.d[k] = g->pmax[p * ni + i].d[k];
            }
    }
}

/* A constant INT32 tensor holding a slice's start (j 1), size (2) or stride (3) attribute, for a slice
 * whose other such inputs are shape tensors: engine nodes have no unset inputs.  Returns its id or -1. */
/* A fill layer's input j left unset while a later one is set (network/ops/fill.c): a constant holding the
 * attribute -- 0 the shape (INT32 [r]), 1 alpha (0-D), 2 beta (LINSPACE: [r], one delta per dim; else 0-D). */
static int32_t fill_attr_constant(trtl_bgraph *g, const char *layer, const trtl_fill_params *f, int32_t j)
{
    static const char *const what[3] = {"shape", "alpha", "beta"};
    char name[300];
    snprintf(name, sizeof name, "%s [%s]", layer, what[j]);
    trtl_dims d = {0};
    if (j == 0 || (j == 2 && f->op == TRTL_FILL_LINSPACE)) {
        d.nb_dims = 1;
        d.d[0] = f->shape.nb_dims;
    }
    trtl_dtype t = j == 0 ? TRTL_INT32 : (trtl_dtype)f->to_type;
    int32_t *v = trtl_aligned_alloc(sizeof(int32_t) * TRTL_MAX_DIMS);
    if (!v) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    for (int32_t i = 0; i < TRTL_MAX_DIMS; i++) {
        double x = j == 0 ? (double)(i < f->shape.nb_dims ? f->shape.d[i] : 0) : j == 1 ? f->alpha : f->beta;
        if (t == TRTL_INT32 && !(x >= -2147483648.0 && x < 2147483648.0)) {
            trtl_aligned_free(v);
            trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': fill %s %g does not fit INT32", layer, what[j], x);
            return -1;
        }
        if (t == TRTL_INT32)
            v[i] = (int32_t)x;
        else
            ((float *)v)[i] = (float)x;
    }
    int32_t id = trtl_bg_add_tensor(g, name, t, TRTL_TK_CONSTANT);
    if (id < 0) {
        trtl_aligned_free(v);
        return -1;
    }
    trtl_bg_tensor *bt = &g->t[id];
    bt->data = v;
    bt->producer = -1;
    bt->dmin = d;
    bt->dopt = bt->dmax = d;
    return id;
}

static int32_t slice_attr_constant(trtl_bgraph *g, const char *layer, const trtl_slice_params *s, int32_t j)
{
    const trtl_dims *a = j == 1 ? &s->start : j == 2 ? &s->shape : &s->stride;
    char name[300];
    snprintf(name, sizeof name, "%s [%s]", layer, j == 1 ? "start" : j == 2 ? "size" : "stride");
    int32_t *v = trtl_aligned_alloc(sizeof(int32_t) * TRTL_MAX_DIMS);
    if (!v) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    for (int32_t i = 0; i < a->nb_dims; i++) {
        if (a->d[i] < INT32_MIN || a->d[i] > INT32_MAX) {
            trtl_aligned_free(v);
            trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': slice attribute value %lld does not fit INT32", layer,
                       (long long)a->d[i]);
            return -1;
        }
        v[i] = (int32_t)a->d[i];
    }
    int32_t id = trtl_bg_add_tensor(g, name, TRTL_INT32, TRTL_TK_CONSTANT);
    if (id < 0) {
        trtl_aligned_free(v);
        return -1;
    }
    trtl_bg_tensor *t = &g->t[id];
    t->data = v;
    t->producer = -1;
    t->dmin.nb_dims = 1;
    t->dmin.d[0] = a->nb_dims;
    t->dopt = t->dmax = t->dmin;
    return id;
}

static trtl_status lower_network(trtl_bgraph *g, trtl_network *net, const trtl_cf_plan *cfp)
{
    int32_t *map = malloc(sizeof(int32_t) * (size_t)(net->n_tensors ? net->n_tensors : 1));
    int32_t *order = NULL;
    trtl_status st = TRTL_OK;
    if (!map)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t i = 0; i < net->n_tensors; i++)
        map[i] = -1;
    g->inputs = malloc(sizeof(int32_t) * (size_t)(net->n_inputs + 1));
    g->outputs = malloc(sizeof(int32_t) * (size_t)(net->n_outputs + 1));
    if (!g->inputs || !g->outputs) {
        free(map);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    for (int32_t i = 0; i < net->n_inputs; i++) {
        trtl_tensor *t = net->inputs[i];
        int32_t id = trtl_bg_add_tensor(g, t->name, t->dtype, TRTL_TK_INPUT);
        if (id < 0) {
            free(map);
            return trtl_last_status();
        }
        g->t[id].io_index = i;
        map[t->id] = id;
        g->inputs[g->n_inputs++] = id;
    }
    set_input_dims(g);
    st = trtl_network_topo_order(net, &order);
    if (st == TRTL_OK)
        st = trtl_cf_premap(g, net, cfp, map);
    for (int32_t k = 0; st == TRTL_OK && k < net->n_layers; k++) {
        trtl_layer *l = net->layers[order[k]];
        if (cfp->region[l->id] >= 0)
            continue; /* inside a loop or conditional: its CONTROL_FLOW step, below */
        int32_t in[64], out[16];
        trtl_dims dims[64];
        for (int32_t j = 0; j < l->n_in; j++) {
            if (!l->in[j]) { /* a slice's start/size/stride left to its attribute: made a constant below */
                in[j] = -1;
                dims[j].nb_dims = -1;
                continue;
            }
            in[j] = map[l->in[j]->id];
            dims[j] = l->in[j]->dims;
        }
        for (int32_t j = 0; j < l->n_out; j++) {
            trtl_tensor *t = l->out[j];
            out[j] = trtl_bg_add_tensor(g, t->name, t->dtype, TRTL_TK_ACTIVATION);
            if (out[j] < 0) {
                st = trtl_last_status();
                break;
            }
            map[t->id] = out[j];
        }
        if (st != TRTL_OK)
            break;
        trtl_params p = l->p;
        trtl_lower_ctx lc = {l->name, net->implicit_batch, l->n_in, dims};
        st = trtl_op_table[l->op].lower(&p, &lc);
        if (st != TRTL_OK)
            break;
        for (int32_t j = 1; st == TRTL_OK && l->op == TRTL_OP_SLICE && j < l->n_in && j < 4; j++)
            if (in[j] < 0 && (in[j] = slice_attr_constant(g, l->name, &p.slice, j)) < 0)
                st = trtl_last_status();
        for (int32_t j = 0; st == TRTL_OK && l->op == TRTL_OP_FILL && j < l->n_in; j++)
            if (in[j] < 0 && (in[j] = fill_attr_constant(g, l->name, &p.fill, j)) < 0)
                st = trtl_last_status();
        if (st != TRTL_OK)
            break;
        if (l->op == TRTL_OP_PLUGIN_V2) {
            st = trtl_plugin_clone(l->p.plugin.plugin, l->name, &p.plugin.plugin);
            if (st != TRTL_OK)
                break;
        }
        int32_t f16_orig[16]; /* 16-bit tensors on a float32 layer: casts around it (half_casts.h) */
        st = trtl_bg_f16_inputs(g, l->op, l->name, l->n_in, in);
        if (st == TRTL_OK)
            st = trtl_bg_f16_outputs(g, l->op, l->name, l->n_out, out, f16_orig);
        if (st != TRTL_OK) {
            if (l->op == TRTL_OP_PLUGIN_V2)
                p.plugin.plugin->vt->destroy(p.plugin.plugin);
            break;
        }
        int32_t ni = trtl_bg_add_node(g, l->op, l->name, &p, l->n_in, in, l->n_out, out);
        if (ni < 0) {
            if (l->op == TRTL_OP_PLUGIN_V2)
                p.plugin.plugin->vt->destroy(p.plugin.plugin);
            st = trtl_last_status();
            break;
        }
        if (l->has_precision || l->type_hint >= 0) {
            g->n[ni].want_set = 1;
            g->n[ni].want_precision = l->has_precision ? (int32_t)l->precision : l->type_hint;
        }
        st = own_weights(g, &g->n[ni].n, l->name);
        if (st == TRTL_OK)
            st = trtl_bg_f16_output_casts(g, l->name, l->n_out, out, f16_orig);
    }
    free(order);
    if (st == TRTL_OK && cfp->n)
        st = trtl_cf_lower(g, net, cfp, map);
    for (int32_t i = 0; st == TRTL_OK && i < net->n_outputs; i++) {
        int32_t id = map[net->outputs[i]->id];
        g->outputs[g->n_outputs++] = id;
    }
    free(map);
    return st;
}

/* Constant layers become constant tensors; outputs that are constants or that are already
 * another output get a copy.  Network inputs cannot be outputs (mark_output refuses). */
static trtl_status materialize(trtl_bgraph *g)
{
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_bg_node *b = &g->n[i];
        if (b->n.op != TRTL_OP_CONSTANT)
            continue;
        trtl_bg_tensor *t = &g->t[b->n.out[0]];
        trtl_weights *w = &b->n.p.constant.weights;
        /* Move the buffer from the graph's owned list to the tensor. */
        for (int32_t k = 0; k < g->n_owned; k++)
            if (g->owned[k] == w->values) {
                g->owned[k] = g->owned[--g->n_owned];
                break;
            }
        t->data = (void *)w->values;
        if (!t->data) { /* an empty constant still needs an address */
            t->data = trtl_aligned_alloc(64);
            if (!t->data)
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        }
        w->values = NULL;
        w->count = 0;
        t->kind = TRTL_TK_CONSTANT;
        t->dmin = t->dopt = t->dmax = b->n.p.constant.shape;
        t->producer = -1;
        b->dead = 1;
    }
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t id = g->outputs[i];
        trtl_bg_tensor *t = &g->t[id];
        if (t->kind == TRTL_TK_INPUT) /* renaming the input for a copy would change the engine's inputs */
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "network input '%s' cannot also be an output", t->name);
        int needs_copy = t->kind == TRTL_TK_CONSTANT || t->kind == TRTL_TK_OUTPUT;
        if (!needs_copy) {
            t->kind = TRTL_TK_OUTPUT;
            t->io_index = i;
            continue;
        }
        /* The output keeps its name; the source gets a private one. */
        char *name = t->name;
        size_t len = strlen(name) + 16;
        char *priv = malloc(len);
        if (!priv)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        snprintf(priv, len, "%s__src%d", name, (int)i);
        int32_t nid = trtl_bg_add_tensor(g, name, g->t[id].dtype, TRTL_TK_OUTPUT);
        if (nid < 0) {
            free(priv);
            return trtl_last_status();
        }
        t = &g->t[id]; /* the array may have moved */
        t->name = priv;
        free(name);
        g->t[nid].io_index = i;
        g->t[nid].dmin = t->dmin;
        g->t[nid].dopt = t->dopt;
        g->t[nid].dmax = t->dmax;
        trtl_params p;
        trtl_op_table[TRTL_OP_IDENTITY].init(&p);
        if (trtl_bg_add_node(g, TRTL_OP_IDENTITY, g->t[nid].name, &p, 1, &id, 1, &nid) < 0)
            return trtl_last_status();
        g->n[g->nn - 1].order = g->nn - 1;
        g->outputs[i] = nid;
    }
    return TRTL_OK;
}

/* A plugin's outputs at the profiles' shapes against what it answered when its layer was added:
 * scripts size buffers from the network definition, so a static dimension that changes between
 * the two (a plugin whose shape depends on something other than its inputs' shapes) must stop
 * the build rather than produce an engine whose outputs outgrow those buffers.  Implicit-batch
 * networks carry a placeholder batch of 1 in dim 0, which is not compared. */
static trtl_status check_plugin_shapes(const trtl_bgraph *g, const trtl_network *net)
{
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], lb[256];
    for (int32_t i = 0; i < g->nn; i++) {
        const trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || n->op != TRTL_OP_PLUGIN_V2)
            continue;
        for (int32_t j = 0; j < n->n_out; j++) {
            const trtl_bg_tensor *t = &g->t[n->out[j]];
            const trtl_tensor *nt = trtl_network_find_tensor(net, t->name);
            if (!nt)
                continue;
            const trtl_dims *want = &nt->dims;
            int ok = want->nb_dims == t->dmin.nb_dims && want->nb_dims == t->dmax.nb_dims;
            for (int32_t k = net->implicit_batch ? 1 : 0; ok && k < want->nb_dims; k++)
                if (want->d[k] >= 0 && (t->dmin.d[k] != want->d[k] || t->dmax.d[k] != want->d[k]))
                    ok = 0;
            if (!ok)
                return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): output %d (tensor '%s') is %s at build "
                                  "time but was %s when the layer was added to the network: a plugin's output shape "
                                  "must depend only on its inputs' shapes", n->name,
                                  trtl_plugin_label(&n->p.plugin, lb, sizeof lb), (int)j, t->name,
                                  trtl_dims_str(trtl_dims_equal(&t->dmin, want) ? &t->dmax : &t->dmin, s1, sizeof s1),
                                  trtl_dims_str(want, s2, sizeof s2));
        }
    }
    return TRTL_OK;
}

#define PHASE_BUILD "Building engine"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static trtl_status do_build(trtl_network *net, const trtl_builder_config *cfg, trtl_engine **out, int plan_only)
{
    trtl_bgraph g;
    memset(&g, 0, sizeof g);
    g.cfg = cfg;
    g.plan_only = plan_only;
    g.implicit_batch = net->implicit_batch;
    g.max_batch = net->implicit_batch ? cfg->max_batch_size : 1;
    double t0 = now_ms();
    trtl_progress_start(cfg, PHASE_BUILD, NULL, 4);
    if (net->n_outputs == 0) {
        trtl_progress_finish(cfg, PHASE_BUILD);
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "network '%s' has no outputs: call network.mark_output(tensor) on the result", net->name);
    }
    trtl_cf_plan cfp;
    memset(&cfp, 0, sizeof cfp);
    trtl_status st = trtl_network_infer(net);
    if (st == TRTL_OK)
        st = trtl_cf_analyze(net, &cfp);
    for (int32_t i = 0; st == TRTL_OK && i < net->n_layers; i++)
        if (cfp.region && cfp.region[net->layers[i]->id] >= 0 && trtl_dd_op(net->layers[i]->op))
            st = trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': data-dependent layers (NonZero, NMS) cannot be inside "
                            "a loop or conditional", net->layers[i]->name);
    if (st == TRTL_OK)
        st = setup_profiles(&g, net, cfg);
    if (st == TRTL_OK)
        st = lower_network(&g, net, &cfp);
    trtl_cf_plan_free(&cfp);
    if (st == TRTL_OK)
        st = materialize(&g);
    if (st == TRTL_OK)
        st = trtl_bg_sort(&g);
    if (st == TRTL_OK)
        st = trtl_bg_infer(&g);
    if (st == TRTL_OK)
        st = check_plugin_shapes(&g, net);
    if (st == TRTL_OK)
        st = trtl_place_implicit_int8(&g, net);
    if (st == TRTL_OK && !trtl_progress_step(cfg, PHASE_BUILD, 0))
        st = trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    if (st == TRTL_OK)
        st = trtl_run_passes(&g);
    if (st == TRTL_OK)
        st = trtl_bg_sort(&g);
    if (st == TRTL_OK)
        st = trtl_bg_infer(&g);
    if (st == TRTL_OK && !trtl_progress_step(cfg, PHASE_BUILD, 1))
        st = trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    if (st == TRTL_OK)
        st = trtl_check_data_dependent(&g);
    if (st == TRTL_OK)
        st = trtl_cf_compile(&g);
    if (st == TRTL_OK) {
        trtl_bg_release_unused_constants(&g);
        st = trtl_select_kernels(&g);
    }
    if (st == TRTL_OK && !trtl_progress_step(cfg, PHASE_BUILD, 2))
        st = trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    if (st == TRTL_OK)
        st = trtl_emit_engine(&g, out);
    if (st == TRTL_OK && !trtl_progress_step(cfg, PHASE_BUILD, 3)) {
        trtl_engine_destroy(*out);
        st = trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    }
    trtl_progress_finish(cfg, PHASE_BUILD);
    if (st == TRTL_OK) {
        (*out)->num_threads = cfg->num_threads;
        (*out)->name = strdup(net->name ? net->name : ""); /* TensorRT: the engine is named after its network */
        if (!(*out)->name || trtl_engine_take_weights_names(*out, net) != TRTL_OK) {
            trtl_engine_destroy(*out);
            *out = NULL;
            trtl_bg_free(&g);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        }
        trtl_log(TRTL_LOG_INFO, "built engine: %d layers -> %d steps in %.1f ms", (int)net->n_layers,
                 (int)(*out)->n_nodes, now_ms() - t0);
    }
    trtl_bg_free(&g);
    trtl_alloc_trim(); /* the graph's copies go back to the system, not only to malloc's free lists */
    return st;
}

trtl_status trtl_build(const trtl_network *net, const trtl_builder_config *cfg, trtl_engine **out)
{
    trtl_clear_error();
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(cfg);
    TRTL_CHECK_ARG(out);
    trtl_log_sink prev = trtl_log_push(cfg->log_fn, cfg->log_user);
    /* Shape inference caches results on the network; building never changes what it defines. */
    trtl_status st = do_build((trtl_network *)net, cfg, out, 0);
    if (st != TRTL_OK)
        trtl_log(TRTL_LOG_ERROR, "%s", trtl_last_error());
    trtl_log_pop(prev);
    return st;
}

trtl_status trtl_build_serialized(const trtl_network *net, const trtl_builder_config *cfg, void **data, size_t *size)
{
    trtl_clear_error();
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(cfg);
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(size);
    *data = NULL;
    *size = 0;
    trtl_log_sink prev = trtl_log_push(cfg->log_fn, cfg->log_user);
    trtl_engine *e = NULL;
    /* The unpacked engine never leaves this function: it is serialized and destroyed. */
    trtl_status st = do_build((trtl_network *)net, cfg, &e, 1);
    if (st == TRTL_OK) {
        st = trtl_engine_serialize_consume(e, data, size); /* frees the weights as it writes them */
        trtl_engine_destroy(e);
        trtl_alloc_trim(); /* the engine's weights go back to the system, not only to malloc's free lists */
    }
    if (st != TRTL_OK)
        trtl_log(TRTL_LOG_ERROR, "%s", trtl_last_error());
    trtl_log_pop(prev);
    return st;
}
