/* engine.c -- engine lifetime, memory plan, shape inference at run time, and queries. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include "engine/engine.h"
#include "engine/data_dependent.h"
#include "engine/control_flow.h"
#include "engine/alias.h"
#include "kernels/inplace.h"
#include "core/alloc.h"
#include "network/op_table.h"
#include "network/shape_values.h"
#include "core/status.h"
#include "core/dims.h"
#include "kernels/registry.h"
#include "kernels/qlinear_fp32.h"

#define ALIGN 64 /* arena offsets: as core/alloc.c aligns buffers */

const char *trtl_version(void) { return "0.1.0"; }

trtl_engine *trtl_engine_alloc(void)
{
    trtl_engine *e = calloc(1, sizeof *e);
    if (e)
        atomic_init(&e->refcount, 1);
    return e;
}

int trtl_engine_own(trtl_engine *e, void *p)
{
    if (e->n_owned == e->cap_owned) {
        int32_t nc = e->cap_owned ? e->cap_owned * 2 : 64;
        void **no = realloc(e->owned, sizeof *no * (size_t)nc);
        if (!no) {
            trtl_aligned_free(p);
            return 0;
        }
        e->owned = no;
        e->cap_owned = nc;
    }
    e->owned[e->n_owned++] = p;
    return 1;
}

void trtl_engine_retain(trtl_engine *e)
{
    if (e)
        atomic_fetch_add(&e->refcount, 1);
}

void trtl_engine_destroy(trtl_engine *e)
{
    if (!e || atomic_fetch_sub(&e->refcount, 1) != 1)
        return;
    if (e->deferred)
        trtl_engine_forget_pending(e, 0); /* its pending buffers are the plan's, not the engine's */
    for (int32_t i = 0; i < e->n_nodes; i++) {
        trtl_node *n = &e->nodes[i];
        if (n->op == TRTL_OP_PLUGIN_V2 && n->p.plugin.plugin)
            n->p.plugin.plugin->vt->destroy(n->p.plugin.plugin);
        if (n->op == TRTL_OP_CONTROL_FLOW)
            trtl_cf_destroy((trtl_cf *)n->p.cf.cf);
        if (n->kernel && n->kernel->release && n->kstate)
            n->kernel->release(n->kstate);
        free(n->name);
        free(n->in);
        free(n->out);
    }
    for (int32_t i = 0; i < e->n_tensors; i++) {
        free(e->tensors[i].name);
        trtl_aligned_free(e->tensors[i].data);
    }
    for (int32_t p = 0; e->profiles && p < e->n_profiles; p++) {
        free(e->profiles[p].min);
        free(e->profiles[p].opt);
        free(e->profiles[p].max);
        free(e->profiles[p].vmin);
        free(e->profiles[p].vopt);
        free(e->profiles[p].vmax);
    }
    free(e->shape_input);
    for (int32_t i = 0; i < e->n_owned; i++)
        trtl_aligned_free(e->owned[i]);
    free(e->owned);
    free(e->profiles);
    free(e->env_min);
    free(e->env_max);
    free(e->tensors);
    free(e->nodes);
    free(e->io);
    free(e->name);
    free(e->weights_names);
    free(e);
}

int64_t trtl_memplan(int32_t n, const int64_t *bytes, const int32_t *first, const int32_t *last, int64_t *offsets)
{
    /* Largest first; each tensor goes to the lowest aligned offset free of every already placed
     * tensor whose live range overlaps its own. */
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int32_t *placed = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!idx || !placed) {
        free(idx);
        free(placed);
        return -1;
    }
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = -1;
        if (bytes[i] >= 0 && first[i] >= 0)
            idx[m++] = i;
    }
    for (int32_t i = 1; i < m; i++) {
        int32_t v = idx[i], j = i - 1;
        while (j >= 0 && bytes[idx[j]] < bytes[v]) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
    int64_t total = 0;
    int32_t np = 0;
    for (int32_t a = 0; a < m; a++) {
        int32_t t = idx[a];
        if (bytes[t] > INT64_MAX - ALIGN) {
            total = -1; /* more than int64 bytes: no plan (reported as out of memory) */
            break;
        }
        int64_t size = (bytes[t] + ALIGN - 1) / ALIGN * ALIGN, off = 0, end;
        int moved = 1;
        while (moved) {
            moved = 0;
            for (int32_t b = 0; b < np; b++) {
                int32_t u = placed[b];
                if (last[u] < first[t] || last[t] < first[u])
                    continue; /* lifetimes disjoint */
                int64_t usize = (bytes[u] + ALIGN - 1) / ALIGN * ALIGN;
                /* placed blocks end at or below `total` (no overflow); off + size may not exist */
                if (off < offsets[u] + usize && offsets[u] - size < off) {
                    off = offsets[u] + usize;
                    moved = 1;
                }
            }
        }
        if (__builtin_add_overflow(off, size, &end)) {
            total = -1;
            break;
        }
        offsets[t] = off;
        placed[np++] = t;
        if (end > total)
            total = end;
    }
    free(idx);
    free(placed);
    return total;
}

/* The tensor is an activation of static shape (so its bytes are the same at every execution). */
static int static_activation(const trtl_etensor *t)
{
    if (t->kind != TRTL_TK_ACTIVATION || t->dims.nb_dims != t->max_dims.nb_dims)
        return 0;
    for (int32_t k = 0; k < t->dims.nb_dims; k++)
        if (t->dims.d[k] < 0 || t->dims.d[k] != t->max_dims.d[k])
            return 0;
    return 1;
}

/* Places the tensors of the in-place concatenations, slices and reshapes (kernels of kernels/inplace.h) as
 * engine/alias.h says, in node order, as the builder passes elide_slice, elide_concat and elide_reshape decided
 * (a loaded plan is checked the same way: a node whose tensors cannot be placed copies).  0, or -1
 * when out of memory. */
static int place_inplace(const trtl_engine *e, trtl_alias *al)
{
    if (e->implicit_batch)
        return 0; /* run-time batches below the maximum change every size */
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *nd = &e->nodes[k];
        if (!nd->kernel || nd->n_out != 1 || nd->n_in < 1 || nd->n_in > 64 || nd->epi.act != TRTL_ACT_NONE ||
            nd->epi.has_residual)
            continue;
        const trtl_etensor *o = &e->tensors[nd->out[0]];
        trtl_dims in[64];
        int64_t off[64];
        int ok = static_activation(o);
        for (int32_t j = 0; ok && j < nd->n_in; j++) {
            const trtl_etensor *x = &e->tensors[nd->in[j]];
            ok = static_activation(x) && x->dtype == o->dtype;
            in[j] = x->dims;
        }
        if (!ok)
            continue;
        size_t es = trtl_dtype_size(o->dtype);
        if (nd->op == TRTL_OP_CONCATENATION && strcmp(nd->kernel->name, TRTL_CONCAT_INPLACE_NAME) == 0 &&
            trtl_inplace_concat_layout(nd->p.concat.axis, &o->dims, in, nd->n_in, es, off)) {
            if (trtl_alias_concat(al, nd->out[0], nd->in, off, nd->n_in) < 0)
                return -1;
        } else if (nd->op == TRTL_OP_SLICE && nd->n_in == 1 && strcmp(nd->kernel->name, TRTL_SLICE_INPLACE_NAME) == 0 &&
                   trtl_inplace_slice_layout(&in[0], &o->dims, &nd->p.slice.start, &nd->p.slice.stride, es, off)) {
            trtl_alias_view(al, nd->out[0], nd->in[0], off[0]);
        } else if (nd->op == TRTL_OP_SHUFFLE && nd->n_in == 1 &&
                   strcmp(nd->kernel->name, TRTL_SHUFFLE_INPLACE_NAME) == 0 &&
                   trtl_inplace_shuffle_is_reshape(&nd->p.shuffle, &in[0], &o->dims)) {
            trtl_alias_view(al, nd->out[0], nd->in[0], 0);
        }
    }
    return 0;
}

trtl_status trtl_engine_finalize(trtl_engine *e)
{
    int32_t n = e->n_tensors;
    int64_t *bytes = calloc((size_t)(n ? n : 1), sizeof(int64_t));
    int32_t *first = calloc((size_t)(n ? n : 1), sizeof(int32_t));
    int32_t *last = calloc((size_t)(n ? n : 1), sizeof(int32_t));
    int64_t *off = calloc((size_t)(n ? n : 1), sizeof(int64_t));
    if (!bytes || !first || !last || !off) {
        free(bytes);
        free(first);
        free(last);
        free(off);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "engine: out of memory");
    }
    for (int32_t k = 0; k < e->n_nodes; k++)
        trtl_engine_drop_plain_weights(e, k);
    for (int32_t i = 0; i < n; i++) {
        e->tensors[i].first = e->tensors[i].last = -1;
        e->tensors[i].offset = -1;
    }
    e->cpu_features = 0;
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *nd = &e->nodes[k];
        if (nd->kernel)
            e->cpu_features |= nd->kernel->cpu_features;
        for (int32_t j = 0; j < nd->n_out; j++) {
            trtl_etensor *t = &e->tensors[nd->out[j]];
            if (t->first < 0)
                t->first = k;
            if (t->last < k)
                t->last = k;
        }
        for (int32_t j = 0; j < nd->n_in; j++) {
            trtl_etensor *t = &e->tensors[nd->in[j]];
            if (t->last < k)
                t->last = k;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        const trtl_etensor *t = &e->tensors[i];
        bytes[i] = t->kind == TRTL_TK_ACTIVATION ? t->max_bytes : -1;
        first[i] = t->first;
        last[i] = t->last;
    }
    int64_t total = -1;
    trtl_alias al;
    if (trtl_alias_init(&al, n, bytes) == TRTL_OK) {
        if (place_inplace(e, &al) == 0)
            total = trtl_alias_memplan(&al, bytes, first, last, off);
        trtl_alias_free(&al);
    }
    if (total >= 0)
        for (int32_t i = 0; i < n; i++)
            e->tensors[i].offset = off[i];
    free(bytes);
    free(first);
    free(last);
    free(off);
    if (total < 0)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "engine: out of memory");
    e->arena_bytes = total;
    return TRTL_OK;
}

/* Output j of node n, inferred for the current inputs, against what the engine was built for.
 * A static dimension is a promise: user buffers are sized from the engine's shapes, so a
 * plugin that answers differently at run time than at build would have enqueue write past
 * them.  Dynamic dimensions of built-in ops are exact functions of the inputs, possibly not
 * monotonic, so they may exceed the profile-derived max (the context re-plans its arena and
 * bindings are checked against the shapes resolved here); a plugin's may not, as the plugin was
 * asked for its shape at the profile's max when the engine was planned. */
static trtl_status check_planned(const trtl_engine *e, const trtl_node *n, int32_t j, const trtl_dims *got)
{
    const trtl_etensor *t = &e->tensors[n->out[j]];
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], label[200], lb[208] = "";
    int is_plugin = n->op == TRTL_OP_PLUGIN_V2;
    if (is_plugin)
        snprintf(lb, sizeof lb, " (%s)", trtl_plugin_label(&n->p.plugin, label, sizeof label));
    int ok = got->nb_dims == t->dims.nb_dims, over_max = 0;
    for (int32_t k = 0; ok && k < got->nb_dims; k++) {
        if (got->d[k] < 0 || (t->dims.d[k] >= 0 && got->d[k] != t->dims.d[k]))
            ok = 0;
        else if (is_plugin && got->d[k] > t->max_dims.d[k])
            ok = 0, over_max = 1;
    }
    if (ok)
        return TRTL_OK;
    if (over_max)
        return trtl_error(TRTL_ERR_PLUGIN, "layer '%s'%s: output %d (tensor '%s') is inferred as %s, larger than the "
                          "maximum %s the engine was planned for (its optimization profiles' max shapes)",
                          n->name, lb, (int)j, t->name, trtl_dims_str(got, s1, sizeof s1),
                          trtl_dims_str(&t->max_dims, s2, sizeof s2));
    return trtl_error(is_plugin ? TRTL_ERR_PLUGIN : TRTL_ERR_SHAPE, "layer '%s'%s: output %d (tensor '%s') is "
                      "inferred as %s for these input shapes, but the engine was built for %s", n->name, lb, (int)j, t->name, trtl_dims_str(got, s1, sizeof s1),
                      trtl_dims_str(&t->dims, s2, sizeof s2));
}

/* Shape values of the tensors that carry them (INT32/BOOL), one TRTL_SV_MAX slot each. */
typedef struct sv_store {
    int32_t *slot;   /* per tensor: slot index or -1 */
    int64_t *v;      /* slots */
    char *known;     /* per slot */
} sv_store;

static void sv_free(sv_store *s)
{
    free(s->slot);
    free(s->v);
    free(s->known);
}

static trtl_status sv_init(const trtl_engine *e, const trtl_dims *dims, const trtl_dims *values, sv_store *s)
{
    int32_t n = 0;
    size_t nslots;
    memset(s, 0, sizeof *s);
    s->slot = malloc(sizeof(int32_t) * (e->n_tensors > 0 ? (size_t)e->n_tensors : 1u));
    if (!s->slot)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "engine: out of memory");
    for (int32_t i = 0; i < e->n_tensors; i++)
        s->slot[i] = (e->tensors[i].dtype == TRTL_INT32 || e->tensors[i].dtype == TRTL_BOOL) ? n++ : -1;
    nslots = n > 0 ? (size_t)n : 1u;
    s->v = malloc(sizeof(int64_t) * TRTL_SV_MAX * nslots);
    s->known = calloc(nslots, 1);
    if (!s->v || !s->known) {
        sv_free(s);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "engine: out of memory");
    }
    for (int32_t i = 0; i < e->n_tensors; i++) {
        const trtl_etensor *t = &e->tensors[i];
        int32_t k = s->slot[i];
        if (k < 0)
            continue;
        if (t->kind == TRTL_TK_CONSTANT && t->data && trtl_sv_carriable(&t->max_dims, t->dtype)) {
            trtl_sv_from_data(t->data, t->dtype, trtl_volume(&t->max_dims), s->v + (int64_t)k * TRTL_SV_MAX);
            s->known[k] = 1;
        }
    }
    for (int32_t i = 0; values && e->shape_input && i < e->n_inputs; i++) {
        int32_t k = s->slot[e->io[i]];
        if (!e->shape_input[i] || k < 0 || values[i].nb_dims != trtl_volume(&dims[e->io[i]]))
            continue;
        for (int32_t j = 0; j < values[i].nb_dims; j++)
            s->v[(int64_t)k * TRTL_SV_MAX + j] = values[i].d[j];
        s->known[k] = 1;
    }
    return TRTL_OK;
}

static trtl_status infer_nodes(const trtl_engine *e, trtl_dims *dims, sv_store *sv, char *corner, const char *kept);

trtl_status trtl_engine_infer(const trtl_engine *e, trtl_dims *dims, const trtl_dims *values)
{
    return trtl_engine_infer_corner(e, dims, values, NULL);
}

trtl_status trtl_engine_infer_corner(const trtl_engine *e, trtl_dims *dims, const trtl_dims *values, char *corner)
{
    for (int32_t i = 0; i < e->n_tensors; i++)
        if (e->tensors[i].kind == TRTL_TK_CONSTANT)
            dims[i] = e->tensors[i].max_dims;
    sv_store sv;
    TRTL_TRY(sv_init(e, dims, values, &sv));
    trtl_status st = infer_nodes(e, dims, &sv, corner, NULL);
    sv_free(&sv);
    return st;
}

/* engine/data_dependent.h */
trtl_status trtl_engine_infer_kept(const trtl_engine *e, trtl_dims *dims, const trtl_dims *values, const char *kept)
{
    for (int32_t i = 0; i < e->n_tensors; i++)
        if (e->tensors[i].kind == TRTL_TK_CONSTANT)
            dims[i] = e->tensors[i].max_dims;
    sv_store sv;
    TRTL_TRY(sv_init(e, dims, values, &sv));
    trtl_status st = infer_nodes(e, dims, &sv, NULL, kept);
    sv_free(&sv);
    return st;
}

static trtl_status infer_nodes(const trtl_engine *e, trtl_dims *dims, sv_store *sv, char *corner, const char *kept)
{
    trtl_dims in[64], out[16];
    trtl_dtype in_t[64], out_t[16];
    const int64_t *in_v[64];
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        if (kept && kept[k])
            continue; /* a data-dependent step that ran: its outputs keep their real dims (values unknown) */
        int32_t n_in = n->n_in - (n->epi.has_residual ? 1 : 0);
        if (n_in > 64 || n->n_out > 16)
            return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': %d inputs / %d outputs (at most 64 / 16)", n->name,
                              (int)n_in, (int)n->n_out);
        for (int32_t j = 0; j < n_in; j++) {
            in[j] = dims[n->in[j]];
            in_t[j] = e->tensors[n->in[j]].dtype;
        }
        for (int32_t j = 0; j < n_in; j++) {
            int32_t sl = sv->slot[n->in[j]];
            in_v[j] = (sl >= 0 && sv->known[sl]) ? sv->v + (int64_t)sl * TRTL_SV_MAX : NULL;
        }
        for (int32_t j = 0; j < n->n_out; j++)
            out_t[j] = e->tensors[n->out[j]].dtype;
        trtl_infer_ctx ic = {n->name, &n->p, n_in, in, in_t, in_v, n->n_out, out, out_t, 1};
        trtl_status ist = trtl_op_table[n->op].infer(&ic);
        if (corner) { /* as the builder (graph.c): invalid value / shape combinations at a profile corner */
            int c = 0;
            for (int32_t j = 0; j < n_in; j++)
                c |= corner[n->in[j]] || trtl_sv_shape_input(n->op, j);
            int any_in = 0;
            for (int32_t j = 0; j < n_in; j++)
                any_in |= corner[n->in[j]];
            if (ist != TRTL_OK && c && ist != TRTL_ERR_OUT_OF_MEMORY) {
                trtl_clear_error();
                for (int32_t j = 0; j < n->n_out; j++) {
                    dims[n->out[j]] = e->tensors[n->out[j]].max_dims;
                    corner[n->out[j]] = 1;
                }
                continue;
            }
            for (int32_t j = 0; ist == TRTL_OK && j < n->n_out; j++)
                corner[n->out[j]] |= (char)any_in;
        }
        TRTL_TRY(ist);
        int32_t os = n->n_out == 1 ? sv->slot[n->out[0]] : -1;
        if (os >= 0) {
            int done = 0;
            TRTL_TRY(trtl_sv_eval(n->op, &n->p, n->name, n_in, in, in_t, in_v, &out[0], out_t[0],
                                  sv->v + (int64_t)os * TRTL_SV_MAX, &done));
            sv->known[os] = (char)done;
        }
        for (int32_t j = 0; j < n->n_out; j++) {
            if (corner && corner[n->out[j]]) {
                dims[n->out[j]] = e->tensors[n->out[j]].max_dims;
                continue;
            }
            TRTL_TRY(check_planned(e, n, j, &out[j]));
            /* Run-time shapes may outgrow the planned ones (see check_planned), never the bound every
             * size computation downstream relies on. */
            if (trtl_volume_too_large(&out[j]))
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %d (tensor '%s') would have more than 2^40 "
                                  "elements for these input shapes", n->name, (int)j, e->tensors[n->out[j]].name);
            dims[n->out[j]] = out[j];
        }
        if (n->epi.has_residual && !trtl_dims_equal(&dims[n->in[n_in]], &out[0])) {
            char a[TRTL_DIMS_STR_MAX], b[TRTL_DIMS_STR_MAX];
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': residual input %s does not match the output %s", n->name,
                              trtl_dims_str(&dims[n->in[n_in]], a, sizeof a), trtl_dims_str(&out[0], b, sizeof b));
        }
    }
    return TRTL_OK;
}

trtl_status trtl_engine_check_dtypes(const trtl_engine *e)
{
    trtl_dims in[64], out[16];
    trtl_dtype in_t[64], out_t[16];
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        int32_t n_in = n->n_in - (n->epi.has_residual ? 1 : 0);
        if (n->op == TRTL_OP_IDENTITY || n_in > 64 || n->n_out > 16)
            continue; /* identity converts to whatever its output is */
        for (int32_t j = 0; j < n_in; j++) {
            in[j] = e->tensors[n->in[j]].max_dims;
            in_t[j] = e->tensors[n->in[j]].dtype;
        }
        for (int32_t j = 0; j < n->n_out; j++)
            out_t[j] = e->tensors[n->out[j]].dtype;
        trtl_infer_ctx ic = {n->name, &n->p, n_in, in, in_t, NULL, n->n_out, out, out_t, 0};
        TRTL_TRY(trtl_op_table[n->op].infer(&ic));
        for (int32_t j = 0; j < n->n_out; j++)
            if (out_t[j] != e->tensors[n->out[j]].dtype)
                return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s' produces %s but tensor '%s' is stored as %s", n->name,
                                  trtl_dtype_name(out_t[j]), e->tensors[n->out[j]].name,
                                  trtl_dtype_name(e->tensors[n->out[j]].dtype));
        if (n->epi.has_residual && e->tensors[n->in[n_in]].dtype != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s' has a non-FLOAT residual input", n->name);
        /* pooling of INT8 / UINT8 codes runs on the reference kernel or a codes kernel (precision INT8:
         * pooling.codes_max), FLOAT on the others (builder/select.c keeps them apart) */
        if (n->op == TRTL_OP_POOLING && n_in && n->kernel && n->kernel != trtl_kernel_ref(n->op) &&
            (in_t[0] == TRTL_INT8 || in_t[0] == TRTL_UINT8) != (n->kernel->precision == TRTL_INT8))
            return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': kernel '%s' cannot pool %s %s", n->name,
                              n->kernel->name, trtl_dtype_name(in_t[0]), in_t[0] == TRTL_FLOAT ? "values" : "codes");
        if ((n->epi.act != TRTL_ACT_NONE || n->epi.has_residual) && n->n_out && e->tensors[n->out[0]].dtype != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s' has a fused epilogue on a non-FLOAT output", n->name);
    }
    return TRTL_OK;
}

/* ---- queries ------------------------------------------------------------------------------- */

const char *trtl_engine_name(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, NULL);
    return e->name ? e->name : "";
}

int trtl_engine_implicit_batch(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, 0);
    return e->implicit_batch;
}
int32_t trtl_engine_max_batch_size(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, 0);
    return e->max_batch_size;
}
int32_t trtl_engine_num_io(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, 0);
    return e->n_io;
}

const char *trtl_engine_io_name(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, NULL);
    return (i >= 0 && i < e->n_io) ? e->tensors[e->io[i]].name : NULL;
}

int32_t trtl_engine_io_index(const trtl_engine *e, const char *name)
{
    TRTL_NULL_GIVES(e, -1);
    for (int32_t i = 0; name && i < e->n_io; i++)
        if (strcmp(e->tensors[e->io[i]].name, name) == 0)
            return i;
    return -1;
}

int trtl_engine_io_is_input(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, 0);
    return i >= 0 && i < e->n_inputs;
}

trtl_dims trtl_engine_io_dims(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, (trtl_dims){0});
    trtl_dims d = {0};
    if (i < 0 || i >= e->n_io)
        return d;
    d = e->tensors[e->io[i]].dims;
    return e->implicit_batch ? trtl_dims_drop_front(&d) : d;
}

trtl_dtype trtl_engine_io_dtype(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, TRTL_FLOAT);
    return (i >= 0 && i < e->n_io) ? e->tensors[e->io[i]].dtype : TRTL_FLOAT;
}

int32_t trtl_engine_num_profiles(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, 0);
    return e->n_profiles;
}

trtl_status trtl_engine_profile_shape(const trtl_engine *e, int32_t profile, const char *input, trtl_dims *min,
                                      trtl_dims *opt, trtl_dims *max)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(min);
    TRTL_CHECK_ARG(opt);
    TRTL_CHECK_ARG(max);
    trtl_clear_error();
    int32_t i = trtl_engine_io_index(e, input);
    if (i < 0 || i >= e->n_inputs)
        return trtl_error(TRTL_ERR_NOT_FOUND, "engine has no input named '%s'", input ? input : "(null)");
    if (profile < 0 || profile >= e->n_profiles)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "profile %d out of range (engine has %d)", (int)profile,
                          (int)e->n_profiles);
    *min = e->profiles[profile].min[i];
    *opt = e->profiles[profile].opt[i];
    *max = e->profiles[profile].max[i];
    if (e->implicit_batch) {
        *min = trtl_dims_drop_front(min);
        *opt = trtl_dims_drop_front(opt);
        *max = trtl_dims_drop_front(max);
    }
    return TRTL_OK;
}

int trtl_engine_io_is_shape(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, 0);
    return i >= 0 && i < e->n_inputs && e->shape_input && e->shape_input[i];
}

trtl_status trtl_engine_profile_values(const trtl_engine *e, int32_t profile, const char *input, trtl_dims *min,
                                       trtl_dims *opt, trtl_dims *max)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(min);
    TRTL_CHECK_ARG(opt);
    TRTL_CHECK_ARG(max);
    trtl_clear_error();
    int32_t i = trtl_engine_io_index(e, input);
    if (i < 0 || i >= e->n_inputs)
        return trtl_error(TRTL_ERR_NOT_FOUND, "engine has no input named '%s'", input ? input : "(null)");
    if (!trtl_engine_io_is_shape(e, i))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "input '%s' is not a shape-tensor input (it has shapes, not "
                          "values: use get_tensor_profile_shape)", input);
    if (profile < 0 || profile >= e->n_profiles)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "profile %d out of range (engine has %d)", (int)profile,
                          (int)e->n_profiles);
    *min = e->profiles[profile].vmin[i];
    *opt = e->profiles[profile].vopt[i];
    *max = e->profiles[profile].vmax[i];
    return TRTL_OK;
}

int32_t trtl_engine_num_layers(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, 0);
    return e->n_nodes;
}
const char *trtl_engine_layer_name(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, NULL);
    return (i >= 0 && i < e->n_nodes) ? e->nodes[i].name : NULL;
}
const char *trtl_engine_layer_kernel(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, NULL);
    return (i >= 0 && i < e->n_nodes && e->nodes[i].kernel) ? e->nodes[i].kernel->name : NULL;
}
trtl_op trtl_engine_layer_op(const trtl_engine *e, int32_t i)
{
    TRTL_NULL_GIVES(e, TRTL_OP_COUNT);
    return (i >= 0 && i < e->n_nodes) ? e->nodes[i].op : TRTL_OP_COUNT;
}
uint64_t trtl_engine_device_memory_size(const trtl_engine *e)
{
    TRTL_NULL_GIVES(e, 0);
    return (uint64_t)e->arena_bytes;
}

/* ---- JSON layer information (engine inspector) ---------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + len + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        char esc[8];
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_put(b, esc, 6);
        } else {
            sb_put(b, s, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static void sb_fmt(sbuf *b, const char *fmt, ...) TRTL_PRINTF(2, 3);
static void sb_fmt(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0)
        sb_put(b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

static void sb_tensor(sbuf *b, const trtl_engine *e, int32_t id)
{
    const trtl_etensor *t = &e->tensors[id];
    static const char *const kinds[] = {"input", "output", "activation", "constant"};
    char d[TRTL_DIMS_STR_MAX];
    sb_put(b, "{\"name\": ", 9);
    sb_str(b, t->name);
    sb_fmt(b, ", \"dims\": \"%s\", \"dtype\": \"%s\", \"kind\": \"%s\"}", trtl_dims_str(&t->dims, d, sizeof d),
           trtl_dtype_name(t->dtype), kinds[t->kind]);
}

/* The precision a step computes in: its kernel's, except the internal int8 op, whose reference kernel
 * simulates the integer math too, a max pooling of int8 codes and a plugin reading int8 codes (-1 without a
 * kernel). */
static int32_t node_precision(const trtl_engine *e, const trtl_node *n)
{
    if (n->op == TRTL_OP_QLINEAR) /* FLOAT on an fp32 tactic (kernels/x86/qlinear_fp32.c) */
        return n->kernel && trtl_qlinear_fp32_inner(n->kernel) ? TRTL_FLOAT : TRTL_INT8;
    if ((n->op == TRTL_OP_POOLING || n->op == TRTL_OP_SHUFFLE || n->op == TRTL_OP_SLICE || n->op == TRTL_OP_PLUGIN_V2) &&
        n->n_in > 0 &&
        (e->tensors[n->in[0]].dtype == TRTL_INT8 || e->tensors[n->in[0]].dtype == TRTL_UINT8))
        return TRTL_INT8;
    return n->kernel ? n->kernel->precision : -1;
}

/* The step's conversions between FLOAT and int8 tensors (JSON "reformat"): a quantized layer
 * quantizing a FLOAT input or writing a FLOAT output, an unfused Q or DQ. */
static void sb_reformat(sbuf *b, const trtl_engine *e, const trtl_node *n)
{
    sb_put(b, ", \"reformat\": [", 15);
    if (n->n_in < 1 || n->n_out < 1)
        goto done;
    trtl_dtype in = e->tensors[n->in[0]].dtype, out = e->tensors[n->out[0]].dtype;
    if (n->op == TRTL_OP_QLINEAR) {
        const trtl_qlinear_params *q = &n->p.qlin;
        /* an fp32 tactic reading a FLOAT input on its grid converts nothing (passes/int8_regions.c) */
        const int conv_in = in == TRTL_FLOAT && !(q->in_grid && n->kernel && trtl_qlinear_fp32_inner(n->kernel));
        if (conv_in)
            sb_fmt(b, "\"input FLOAT->%s\"", trtl_dtype_name((trtl_dtype)q->in_type));
        if (out == TRTL_FLOAT)
            sb_fmt(b, "%s\"output %s->FLOAT\"", conv_in ? ", " : "",
                   q->out_quant ? trtl_dtype_name((trtl_dtype)q->out_type) : "INT32");
    } else if ((n->op == TRTL_OP_QUANTIZE || n->op == TRTL_OP_DEQUANTIZE) && in != out) {
        sb_fmt(b, "\"%s %s->%s\"", n->op == TRTL_OP_QUANTIZE ? "input" : "output", trtl_dtype_name(in),
               trtl_dtype_name(out));
    }
done:
    sb_put(b, "]", 1);
}

/* A PW_CHAIN step's program (JSON "program"), e.g. "div(in1) erf qgrid(0.0312) sum(in2) qgrid(0.0156) prod(in3)":
 * each op by name, its operand input in[k] (r: the chain's value on the right), an activation's alpha. */
static void sb_program(sbuf *b, const trtl_node *n)
{
    static const char *const act[TRTL_ACT_COUNT] = {"relu", "sigmoid", "tanh", "leaky_relu", "elu", "selu", "softsign",
                                                    "softplus", "clip", "hard_sigmoid", "scaled_tanh",
                                                    "thresholded_relu", "gelu_erf", "gelu_tanh"};
    static const char *const inner[] = {"silu", "hard_swish", "mish", "qgrid"};
    static const char *const ew[] = {"sum", "prod", "max", "min", "sub", "div"};
    static const char *const un[TRTL_UN_COUNT] = {
        [TRTL_UN_EXP] = "exp", [TRTL_UN_LOG] = "log", [TRTL_UN_SQRT] = "sqrt", [TRTL_UN_RECIP] = "recip",
        [TRTL_UN_ABS] = "abs", [TRTL_UN_NEG] = "neg", [TRTL_UN_CEIL] = "ceil", [TRTL_UN_FLOOR] = "floor",
        [TRTL_UN_ROUND] = "round", [TRTL_UN_ERF] = "erf", [TRTL_UN_SIGN] = "sign"};
    const trtl_pw_chain_params *p = &n->p.pwc;
    sb_put(b, ", \"program\": \"", 14);
    for (int32_t i = 0; i < trtl_pw_n_ops(p); i++) {
        const trtl_pw_op o = trtl_pw_op_get(p, i); /* codes checked by the builder / the plan reader */
        const char *sep = i ? " " : "";
        if (o.kind == TRTL_PW_UNARY && trtl_pw_unary_ok(o.code))
            sb_fmt(b, "%s%s", sep, un[o.code]);
        else if (o.kind == TRTL_PW_ACT && o.code >= 0 && o.code < TRTL_ACT_COUNT)
            sb_fmt(b, "%s%s(%g)", sep, act[o.code], (double)o.alpha);
        else if (o.kind == TRTL_PW_ACT && o.code >= TRTL_ACT_SILU && o.code < TRTL_ACT_INTERNAL_END)
            sb_fmt(b, "%s%s(%g)", sep, inner[o.code - TRTL_ACT_SILU], (double)o.alpha);
        else if ((o.kind == TRTL_PW_BINARY || o.kind == TRTL_PW_BINARY_R) && trtl_pw_binary_ok(o.code))
            sb_fmt(b, "%s%s(%sin%d)", sep, ew[o.code], o.kind == TRTL_PW_BINARY_R ? "r " : "", (int)o.operand);
        else
            sb_fmt(b, "%s?", sep);
    }
    sb_put(b, "\"", 1);
}

int32_t trtl_engine_layer_precision(const trtl_engine *e, int32_t i)
{
    return (e && i >= 0 && i < e->n_nodes) ? node_precision(e, &e->nodes[i]) : -1;
}

trtl_status trtl_engine_layer_info_json(const trtl_engine *e, char **json)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(json);
    TRTL_TRY(trtl_engine_check_loaded(e, "engine information"));
    sbuf b = {0};
    sb_fmt(&b, "{\"implicit_batch\": %s, \"max_batch_size\": %d, \"activation_bytes\": %lld, "
           "\"plain_weight_bytes\": %llu, \"packed_weight_bytes\": %llu, \"layers\": [",
           e->implicit_batch ? "true" : "false", (int)e->max_batch_size, (long long)e->arena_bytes,
           (unsigned long long)trtl_engine_plain_weight_bytes(e), (unsigned long long)trtl_engine_packed_weight_bytes(e));
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        sb_put(&b, k ? ",\n {" : "\n {", k ? 4 : 3);
        sb_put(&b, "\"name\": ", 8);
        sb_str(&b, n->name);
        sb_fmt(&b, ", \"type\": \"%s\", \"kernel\": \"%s\", \"inputs\": [", trtl_op_table[n->op].name,
               n->kernel ? n->kernel->name : "?");
        for (int32_t j = 0; j < n->n_in; j++) {
            if (j)
                sb_put(&b, ", ", 2);
            sb_tensor(&b, e, n->in[j]);
        }
        sb_put(&b, "], \"outputs\": [", 15);
        for (int32_t j = 0; j < n->n_out; j++) {
            if (j)
                sb_put(&b, ", ", 2);
            sb_tensor(&b, e, n->out[j]);
        }
        sb_fmt(&b, "], \"activation\": %d, \"residual\": %s, \"precision\": \"%s\"", (int)n->epi.act,
               n->epi.has_residual ? "true" : "false",
               node_precision(e, n) == TRTL_BF16 ? "BF16"
                                                 : trtl_dtype_name(node_precision(e, n) < 0 ? TRTL_FLOAT
                                                                                            : (trtl_dtype)node_precision(e, n)));
        sb_reformat(&b, e, n);
        if (n->op == TRTL_OP_PW_CHAIN)
            sb_program(&b, n);
        sb_put(&b, "}", 1);
    }
    sb_put(&b, "\n]}\n", 4);
    if (b.oom) {
        free(b.p);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *json = b.p;
    return TRTL_OK;
}
