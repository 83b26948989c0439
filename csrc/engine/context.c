/*
 * context.c -- execution contexts.  A context owns its activation arena, scratch buffer, thread
 * pool and plugin clones; it is used by one thread at a time while any number of contexts run
 * the same engine concurrently.
 *
 * Shapes are resolved when inputs change (set_input_shape, or a new batch size for implicit-batch
 * engines): run-time shape inference, arena offsets (the build-time plan at max shapes, re-planned
 * only if some tensor outgrows it) and scratch sizes.  execute() then only walks the nodes: no
 * allocation, no shape work.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "kernels/kernel.h"
#include "core/status.h"
#include "core/dims.h"
#include "engine/control_flow.h"
#include "engine/data_dependent.h"

struct trtl_context {
    trtl_engine *e;
    int32_t profile;
    trtl_dims *in_set;   /* per engine input: full dims set by the user (explicit batch) */
    int32_t batch;       /* implicit batch: batch the shapes were resolved for */
    int shapes_ok;
    trtl_dims *dims;     /* per tensor, current */
    void **addr;         /* per I/O: user addresses */
    void **ptr;          /* per tensor: data pointer for this execution */
    char *arena;
    int64_t arena_cap;
    int64_t *offsets;    /* per tensor: current arena offsets */
    void *scratch;
    size_t scratch_cap;
    trtl_threadpool *pool;
    trtl_plugin **plugins; /* per node: the context's clone (plugin nodes) */
    trtl_tensor_view *vin, *vout;
    int32_t max_in, max_out;
    trtl_profiler_fn prof;
    void *prof_user;
    int prof_cpu; /* the profiler times the calling thread's CPU time (TRTL_PROFILE_CLOCK=thread) */
    trtl_dims *values;   /* per engine input: a shape-tensor input's values as last read from its address */
    int32_t *values_set;
    trtl_cf_ctx **cf;    /* per node: a control-flow step's bodies and buffers (engine/control_flow.h) */
    int borrowed_pool;   /* a body's context: the pool is its parent's */
    /* Data-dependent shapes (engine/data_dependent.h); dd_t NULL: the engine has no such step. */
    char *dd_t;          /* per tensor: its dims may depend on a data-dependent step's result */
    char *dd_kept;       /* per node: a data-dependent step that has run in this execution */
    trtl_dims *dims_ub;  /* per tensor: the dims resolved before execution (upper bounds) */
    int dd_ran;          /* dims hold the real extents of the last execution */
    trtl_output_allocator *alloc; /* per I/O: the output allocator (reallocate NULL: none) */
    void **alloc_last;   /* per I/O: what the allocator returned last */
    void **stage;        /* per I/O: where an output with an allocator is computed before the copy */
    size_t *stage_cap;
};

static trtl_status create_context(trtl_engine *e, trtl_threadpool *pool, trtl_context **out);

trtl_status trtl_context_create(trtl_engine *e, trtl_context **out)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    TRTL_TRY(trtl_engine_check_loaded(e, "creating an execution context"));
    return create_context(e, NULL, out);
}

trtl_status trtl_context_create_nested(trtl_engine *e, trtl_threadpool *pool, trtl_context **out)
{
    return create_context(e, pool, out);
}

static trtl_status create_context(trtl_engine *e, trtl_threadpool *pool, trtl_context **out)
{
    trtl_context *c = calloc(1, sizeof *c);
    if (!c)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "context: out of memory");
    trtl_engine_retain(e);
    c->e = e;
    int32_t nt = e->n_tensors ? e->n_tensors : 1;
    c->in_set = calloc((size_t)(e->n_inputs ? e->n_inputs : 1), sizeof *c->in_set);
    c->dims = calloc((size_t)nt, sizeof *c->dims);
    c->addr = calloc((size_t)(e->n_io ? e->n_io : 1), sizeof *c->addr);
    c->ptr = calloc((size_t)nt, sizeof *c->ptr);
    c->offsets = calloc((size_t)nt, sizeof *c->offsets);
    c->plugins = calloc((size_t)(e->n_nodes ? e->n_nodes : 1), sizeof *c->plugins);
    c->cf = calloc((size_t)(e->n_nodes ? e->n_nodes : 1), sizeof *c->cf);
    for (int32_t k = 0; k < e->n_nodes; k++) {
        if (e->nodes[k].n_in > c->max_in)
            c->max_in = e->nodes[k].n_in;
        if (e->nodes[k].n_out > c->max_out)
            c->max_out = e->nodes[k].n_out;
    }
    c->values = calloc((size_t)(e->n_inputs ? e->n_inputs : 1), sizeof *c->values);
    c->values_set = calloc((size_t)(e->n_inputs ? e->n_inputs : 1), sizeof *c->values_set);
    int dd_oom = 0;
    c->dd_t = trtl_dd_tensors(e, &dd_oom);
    if (c->dd_t) {
        c->dd_kept = calloc((size_t)(e->n_nodes ? e->n_nodes : 1), 1);
        c->dims_ub = calloc((size_t)nt, sizeof *c->dims_ub);
        dd_oom = !c->dd_kept || !c->dims_ub;
    }
    c->alloc = calloc((size_t)(e->n_io ? e->n_io : 1), sizeof *c->alloc);
    c->alloc_last = calloc((size_t)(e->n_io ? e->n_io : 1), sizeof *c->alloc_last);
    c->stage = calloc((size_t)(e->n_io ? e->n_io : 1), sizeof *c->stage);
    c->stage_cap = calloc((size_t)(e->n_io ? e->n_io : 1), sizeof *c->stage_cap);
    dd_oom |= !c->alloc || !c->alloc_last || !c->stage || !c->stage_cap;
    c->vin = calloc((size_t)(c->max_in + 1), sizeof *c->vin);
    c->vout = calloc((size_t)(c->max_out + 1), sizeof *c->vout);
    c->arena_cap = e->arena_bytes;
    c->arena = trtl_aligned_alloc((size_t)(c->arena_cap > 0 ? c->arena_cap : 64));
    if (!c->in_set || !c->dims || !c->addr || !c->ptr || !c->offsets || !c->plugins || !c->vin || !c->vout ||
        !c->arena || !c->values || !c->values_set || !c->cf || dd_oom) {
        trtl_context_destroy(c);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "context: out of memory (activation arena of %lld bytes)",
                          (long long)e->arena_bytes);
    }
    for (int32_t i = 0; i < e->n_inputs; i++)
        c->in_set[i] = e->tensors[e->io[i]].dims; /* -1 where the user must set it */
    for (int32_t k = 0; k < e->n_nodes; k++) {
        trtl_plugin *p = e->nodes[k].op == TRTL_OP_PLUGIN_V2 ? e->nodes[k].p.plugin.plugin : NULL;
        if (!p)
            continue;
        trtl_status cs = trtl_plugin_clone(p, e->nodes[k].name, &c->plugins[k]);
        if (cs != TRTL_OK) {
            trtl_context_destroy(c);
            return cs;
        }
    }
    trtl_status st = TRTL_OK;
    if (pool) {
        c->pool = pool;
        c->borrowed_pool = 1;
    } else {
        st = trtl_threadpool_create(e->num_threads, &c->pool);
    }
    for (int32_t k = 0; st == TRTL_OK && k < e->n_nodes; k++)
        if (e->nodes[k].op == TRTL_OP_CONTROL_FLOW)
            st = trtl_cf_ctx_create((const trtl_cf *)e->nodes[k].p.cf.cf, c->pool, &c->cf[k]);
    if (st != TRTL_OK) {
        trtl_context_destroy(c);
        return st;
    }
    *out = c;
    return TRTL_OK;
}

void trtl_context_destroy(trtl_context *c)
{
    if (!c)
        return;
    for (int32_t k = 0; c->plugins && k < c->e->n_nodes; k++)
        if (c->plugins[k])
            c->plugins[k]->vt->destroy(c->plugins[k]);
    for (int32_t k = 0; c->cf && k < c->e->n_nodes; k++)
        trtl_cf_ctx_destroy(c->cf[k]);
    free(c->cf);
    for (int32_t i = 0; c->stage && i < c->e->n_io; i++)
        trtl_aligned_free(c->stage[i]);
    free(c->stage);
    free(c->stage_cap);
    free(c->alloc);
    free(c->alloc_last);
    free(c->dd_t);
    free(c->dd_kept);
    free(c->dims_ub);
    if (!c->borrowed_pool)
        trtl_threadpool_destroy(c->pool);
    trtl_aligned_free(c->arena);
    trtl_aligned_free(c->scratch);
    free(c->plugins);
    free(c->in_set);
    free(c->values);
    free(c->values_set);
    free(c->dims);
    free(c->addr);
    free(c->ptr);
    free(c->offsets);
    free(c->vin);
    free(c->vout);
    trtl_engine_destroy(c->e);
    free(c);
}

static trtl_status io_lookup(const trtl_context *c, const char *name, int32_t *i)
{
    *i = trtl_engine_io_index(c->e, name);
    if (*i < 0)
        return trtl_error(TRTL_ERR_NOT_FOUND, "the engine has no input or output named '%s'", name ? name : "(null)");
    return TRTL_OK;
}

/* Shape-tensor inputs: their values are read from their addresses (host memory, as TensorRT reads
 * a shape input's values from its tensor address); a change invalidates the resolved shapes. */
static void refresh_values(trtl_context *c, void *const *addr)
{
    const trtl_engine *e = c->e;
    for (int32_t i = 0; e->n_shape_inputs && i < e->n_inputs; i++) {
        if (!e->shape_input[i] || !addr[i])
            continue;
        const trtl_dims *d = &e->tensors[e->io[i]].dims;
        trtl_dims v = {0};
        v.nb_dims = (int32_t)trtl_volume(d);
        for (int32_t k = 0; k < v.nb_dims; k++)
            v.d[k] = ((const int32_t *)addr[i])[k];
        if (!c->values_set[i] || !trtl_dims_equal(&v, &c->values[i])) {
            c->values[i] = v;
            c->values_set[i] = 1;
            c->shapes_ok = 0;
        }
    }
}

/* The shape-tensor inputs' values against the current profile's ranges. */
static trtl_status check_values(const trtl_context *c)
{
    const trtl_engine *e = c->e;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    for (int32_t i = 0; e->n_shape_inputs && i < e->n_inputs; i++) {
        if (!e->shape_input[i])
            continue;
        const char *nm = e->tensors[e->io[i]].name;
        if (!c->values_set[i])
            return trtl_error(TRTL_ERR_STATE, "input '%s' is a shape tensor and has no values: call "
                              "set_tensor_address('%s', array) with its values (host memory) before executing", nm, nm);
        const trtl_dims *mn = &e->profiles[c->profile].vmin[i], *mx = &e->profiles[c->profile].vmax[i];
        for (int32_t k = 0; k < c->values[i].nb_dims; k++)
            if (c->values[i].d[k] < mn->d[k] || c->values[i].d[k] > mx->d[k])
                return trtl_error(TRTL_ERR_SHAPE, "shape-tensor input '%s': values %s are outside optimization profile "
                                  "%d (min %s, max %s)", nm, trtl_dims_str(&c->values[i], s1, sizeof s1),
                                  (int)c->profile, trtl_dims_str(mn, s2, sizeof s2), trtl_dims_str(mx, s3, sizeof s3));
    }
    return TRTL_OK;
}

trtl_status trtl_context_set_input_shape(trtl_context *c, const char *name, const trtl_dims *dims)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(dims);
    trtl_clear_error();
    const trtl_engine *e = c->e;
    int32_t i;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    TRTL_TRY(io_lookup(c, name, &i));
    if (i >= e->n_inputs)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "'%s' is an output; only inputs take a shape", name);
    trtl_dims full = *dims;
    if (e->implicit_batch) {
        /* TensorRT 7 engines take the batch in execute(); a shape without it must match. */
        trtl_dims want = trtl_engine_io_dims(e, i);
        if (!trtl_dims_equal(&want, dims))
            return trtl_error(TRTL_ERR_SHAPE, "input '%s' of an implicit-batch engine is %s, got %s (the batch size "
                              "is given to execute())", name, trtl_dims_str(&want, s1, sizeof s1),
                              trtl_dims_str(dims, s2, sizeof s2));
        return TRTL_OK;
    }
    const trtl_dims *decl = &e->tensors[e->io[i]].dims;
    const trtl_dims *mn = &e->profiles[c->profile].min[i], *mx = &e->profiles[c->profile].max[i];
    if (full.nb_dims != decl->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "input '%s': shape %s has %d dims, the input has %d", name,
                          trtl_dims_str(&full, s1, sizeof s1), (int)full.nb_dims, (int)decl->nb_dims);
    for (int32_t k = 0; k < full.nb_dims; k++)
        if (full.d[k] < mn->d[k] || full.d[k] > mx->d[k])
            return trtl_error(TRTL_ERR_SHAPE,
                              "input '%s': shape %s is outside optimization profile %d (min %s, max %s)", name,
                              trtl_dims_str(&full, s1, sizeof s1), (int)c->profile, trtl_dims_str(mn, s2, sizeof s2),
                              trtl_dims_str(mx, s3, sizeof s3));
    if (!trtl_dims_equal(&c->in_set[i], &full)) {
        c->in_set[i] = full;
        c->shapes_ok = 0;
    }
    return TRTL_OK;
}

/* Resolves all tensor shapes, arena offsets and scratch for the current inputs. */
static trtl_status resolve_shapes(trtl_context *c, int32_t batch)
{
    const trtl_engine *e = c->e;
    char s1[TRTL_DIMS_STR_MAX];
    for (int32_t i = 0; i < e->n_inputs; i++) {
        trtl_dims d = c->in_set[i];
        if (e->implicit_batch)
            d.d[0] = batch;
        else if (trtl_dims_dynamic(&d))
            return trtl_error(TRTL_ERR_STATE, "input '%s' has dynamic shape %s: call set_input_shape('%s', shape) "
                              "before executing", e->tensors[e->io[i]].name, trtl_dims_str(&d, s1, sizeof s1),
                              e->tensors[e->io[i]].name);
        c->dims[e->io[i]] = d;
    }
    TRTL_TRY(check_values(c));
    TRTL_TRY(trtl_engine_infer(e, c->dims, c->values));
    if (e->implicit_batch) {
        /* every binding holds `batch` samples (trtl_context_io_dims); an output with another leading dim
         * (a constant with a batch of its own broadcast into it: a malformed plan) would overrun them */
        for (int32_t i = e->n_inputs; i < e->n_io; i++) {
            const trtl_dims *d = &c->dims[e->io[i]];
            if (d->nb_dims < 1 || (d->d[0] != batch && d->d[0] != 1))
                return trtl_error(TRTL_ERR_SHAPE, "output '%s' of an implicit-batch engine has shape %s at batch "
                                  "size %d: its leading dim must be the batch (or 1, broadcast)",
                                  e->tensors[e->io[i]].name, trtl_dims_str(d, s1, sizeof s1), (int)batch);
        }
    }
    /* Arena: keep the build-time plan unless some tensor outgrew it. */
    int replan = 0;
    int64_t *bytes = NULL;
    for (int32_t t = 0; t < e->n_tensors; t++) {
        const trtl_etensor *et = &e->tensors[t];
        int64_t v = trtl_volume(&c->dims[t]);
        if (et->kind == TRTL_TK_ACTIVATION && v * (int64_t)trtl_dtype_size(et->dtype) > et->max_bytes)
            replan = 1;
    }
    if (replan) {
        int32_t nt = e->n_tensors;
        bytes = malloc(sizeof(int64_t) * (size_t)nt);
        int32_t *first = malloc(sizeof(int32_t) * (size_t)nt), *last = malloc(sizeof(int32_t) * (size_t)nt);
        int64_t total = -1;
        if (bytes && first && last) {
            for (int32_t t = 0; t < nt; t++) {
                const trtl_etensor *et = &e->tensors[t];
                bytes[t] = et->kind == TRTL_TK_ACTIVATION ? trtl_volume(&c->dims[t]) * (int64_t)trtl_dtype_size(et->dtype) : -1;
                first[t] = et->first;
                last[t] = et->last;
            }
            total = trtl_memplan(nt, bytes, first, last, c->offsets);
        }
        free(bytes);
        free(first);
        free(last);
        if (total < 0)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "context: out of memory planning activations");
        if (total > c->arena_cap) {
            char *na = trtl_aligned_alloc((size_t)total);
            if (!na)
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "context: out of memory (arena of %lld bytes)", (long long)total);
            trtl_aligned_free(c->arena);
            c->arena = na;
            c->arena_cap = total;
        }
    } else {
        for (int32_t t = 0; t < e->n_tensors; t++)
            c->offsets[t] = e->tensors[t].offset;
    }
    for (int32_t t = 0; t < e->n_tensors; t++) {
        const trtl_etensor *et = &e->tensors[t];
        if (et->kind == TRTL_TK_ACTIVATION)
            c->ptr[t] = et->first >= 0 ? c->arena + c->offsets[t] : NULL;
        else if (et->kind == TRTL_TK_CONSTANT)
            c->ptr[t] = et->data;
    }
    /* Scratch: the largest any node needs at these shapes (`who` names it if that cannot be had), per-thread
     * slots sized for this context's pool (trtl_scratch_threads). */
    size_t need = 0;
    int32_t who = -1;
    trtl_threadpool *prev_pool = trtl_current_pool();
    trtl_set_current_pool(c->pool);
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        size_t s = 0;
        for (int32_t j = 0; j < n->n_in; j++) {
            c->vin[j].dims = c->dims[n->in[j]];
            c->vin[j].dtype = e->tensors[n->in[j]].dtype;
        }
        for (int32_t j = 0; j < n->n_out; j++) {
            c->vout[j].dims = c->dims[n->out[j]];
            c->vout[j].dtype = e->tensors[n->out[j]].dtype;
        }
        if (n->kernel && n->kernel->scratch)
            s = n->kernel->scratch(n, c->vin, c->vout);
        if (c->cf[k]) {
            trtl_status cs = trtl_cf_ctx_resolve(c->cf[k], n->name, n->n_in, c->vin);
            if (cs != TRTL_OK) {
                trtl_set_current_pool(prev_pool);
                return cs;
            }
        }
        if (n->op == TRTL_OP_PLUGIN_V2 && c->plugins[k] && c->plugins[k]->vt->workspace_size) {
            trtl_plugin_tensor_desc din[64], dout[16];
            int32_t ni = n->n_in < 64 ? n->n_in : 64, no = n->n_out < 16 ? n->n_out : 16;
            for (int32_t j = 0; j < ni; j++) {
                din[j].dims = c->vin[j].dims;
                din[j].dtype = c->vin[j].dtype;
            }
            for (int32_t j = 0; j < no; j++) {
                dout[j].dims = c->vout[j].dims;
                dout[j].dtype = c->vout[j].dtype;
            }
            size_t w = c->plugins[k]->vt->workspace_size(c->plugins[k], din, ni, dout, no);
            if (w > s)
                s = w;
        }
        if (s > need) {
            need = s;
            who = k;
        }
    }
    trtl_set_current_pool(prev_pool);
    if (need > c->scratch_cap || need < c->scratch_cap / 4 * 3) { /* grown, or a larger pool's left behind */
        void *ns = trtl_aligned_alloc(need);
        if (!ns)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "context: out of memory: layer '%s' needs a %s of %zu bytes, "
                              "which cannot be allocated", e->nodes[who].name,
                              e->nodes[who].op == TRTL_OP_PLUGIN_V2 ? "plugin workspace" : "scratch buffer", need);
        trtl_aligned_free(c->scratch);
        c->scratch = ns;
        c->scratch_cap = need;
    }
    c->batch = batch;
    c->shapes_ok = 1;
    c->dd_ran = 0;
    if (c->dims_ub)
        memcpy(c->dims_ub, c->dims, sizeof *c->dims * (size_t)e->n_tensors);
    return TRTL_OK;
}

trtl_status trtl_context_tensor_shape(trtl_context *c, const char *name, trtl_dims *out)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    const trtl_engine *e = c->e;
    int32_t i;
    TRTL_TRY(io_lookup(c, name, &i));
    int32_t t = e->io[i];
    trtl_dims d;
    refresh_values(c, c->addr);
    if (i < e->n_inputs) {
        d = c->in_set[i];
        if (e->implicit_batch)
            d.d[0] = c->shapes_ok ? c->batch : -1;
    } else if (!e->implicit_batch && !c->shapes_ok && resolve_shapes(c, 0) != TRTL_OK) {
        trtl_clear_error(); /* inputs not all set yet: report the build-time shape */
        d = e->tensors[t].dims;
    } else if (e->implicit_batch && !c->shapes_ok) {
        d = e->tensors[t].dims;
    } else if (c->dd_t && c->dd_t[t] && !c->dd_ran) {
        d = e->tensors[t].dims; /* data-dependent: -1 where the engine has it until an execution tells */
    } else {
        d = c->dims[t];
    }
    *out = e->implicit_batch ? trtl_dims_drop_front(&d) : d;
    return TRTL_OK;
}

trtl_status trtl_context_set_tensor_address(trtl_context *c, const char *name, void *addr)
{
    TRTL_CHECK_ARG(c);
    trtl_clear_error();
    int32_t i;
    TRTL_TRY(io_lookup(c, name, &i));
    c->addr[i] = addr;
    refresh_values(c, c->addr);
    return TRTL_OK;
}

void *trtl_context_tensor_address(const trtl_context *c, const char *name)
{
    TRTL_NULL_GIVES(c, NULL);
    int32_t i = trtl_engine_io_index(c->e, name);
    return i < 0 ? NULL : c->addr[i];
}

trtl_status trtl_context_set_profiler(trtl_context *c, trtl_profiler_fn fn, void *user)
{
    TRTL_CHECK_ARG(c);
    c->prof = fn;
    c->prof_user = user;
    const char *clk = getenv("TRTL_PROFILE_CLOCK");
    c->prof_cpu = clk && strcmp(clk, "thread") == 0;
    return TRTL_OK;
}

trtl_status trtl_context_set_profile(trtl_context *c, int32_t profile)
{
    TRTL_CHECK_ARG(c);
    trtl_clear_error();
    if (profile < 0 || profile >= c->e->n_profiles)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "optimization profile %d out of range (the engine has %d)",
                          (int)profile, (int)c->e->n_profiles);
    if (profile != c->profile) {
        c->profile = profile;
        c->shapes_ok = 0;
        /* Inputs keep their shapes only where the new profile allows them. */
        for (int32_t i = 0; i < c->e->n_inputs; i++) {
            const trtl_dims *mn = &c->e->profiles[profile].min[i], *mx = &c->e->profiles[profile].max[i];
            for (int32_t k = 0; k < c->in_set[i].nb_dims; k++)
                if (c->in_set[i].d[k] < mn->d[k] || c->in_set[i].d[k] > mx->d[k]) {
                    c->in_set[i] = c->e->tensors[c->e->io[i]].dims;
                    break;
                }
        }
    }
    return TRTL_OK;
}

int32_t trtl_context_profile(const trtl_context *c)
{
    TRTL_NULL_GIVES(c, -1);
    return c->profile;
}

trtl_status trtl_context_set_num_threads(trtl_context *c, int32_t n)
{
    TRTL_CHECK_ARG(c);
    trtl_threadpool *p = NULL;
    TRTL_TRY(trtl_threadpool_create(n, &p));
    trtl_threadpool_destroy(c->pool);
    trtl_context_set_pool_nested(c, p);
    c->shapes_ok = 0; /* scratch slots follow the pool's size (resolve_shapes) */
    return TRTL_OK;
}

/* The profiler's clock: wall time, or the calling thread's CPU time (cpu: TRTL_PROFILE_CLOCK=thread when
 * trtl_context_set_profiler ran -- the Python binding calls it at each execution with a profiler): per-layer
 * times of a one-thread context on a loaded machine, where wall time also counts other processes' turns. */
static double now_ms(int cpu)
{
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

trtl_status trtl_context_resolve(trtl_context *c, int32_t batch_size)
{
    TRTL_CHECK_ARG(c);
    const trtl_engine *e = c->e;
    if (e->implicit_batch) {
        if (batch_size < 1 || batch_size > e->max_batch_size)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "batch size %d is outside 1..%d (the engine's max_batch_size)",
                              (int)batch_size, (int)e->max_batch_size);
        if (batch_size != c->batch)
            c->shapes_ok = 0;
    }
    if (!c->shapes_ok)
        TRTL_TRY(resolve_shapes(c, batch_size));
    return TRTL_OK;
}

trtl_status trtl_context_memory_size(trtl_context *c, uint64_t *arena_bytes, uint64_t *scratch_bytes)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(arena_bytes);
    TRTL_CHECK_ARG(scratch_bytes);
    if (!c->shapes_ok)
        TRTL_TRY(resolve_shapes(c, c->e->implicit_batch ? c->e->max_batch_size : 0));
    *arena_bytes = (uint64_t)c->arena_cap;
    *scratch_bytes = (uint64_t)c->scratch_cap;
    return TRTL_OK;
}

trtl_status trtl_context_io_dims(const trtl_context *c, int32_t i, trtl_dims *out)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(out);
    if (i < 0 || i >= c->e->n_io)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "I/O index %d out of range", (int)i);
    if (!c->shapes_ok)
        return trtl_error(TRTL_ERR_STATE, "shapes are not resolved yet");
    *out = c->dims_ub ? c->dims_ub[c->e->io[i]] : c->dims[c->e->io[i]]; /* buffers hold the upper bound */
    /* implicit batch: every binding holds `batch` samples -- an output computed from constants alone has
     * a batch of 1 inside the engine and is broadcast into all of them (broadcast_constant_outputs) */
    if (c->e->implicit_batch && out->nb_dims >= 1)
        out->d[0] = c->batch;
    return TRTL_OK;
}

/* Implicit batch: an output that does not depend on the inputs (computed from constants) has a
 * batch of 1; TensorRT broadcasts it, so copy sample 0 to the others. */
static void broadcast_constant_outputs(trtl_context *c, int32_t batch)
{
    const trtl_engine *e = c->e;
    for (int32_t i = e->n_inputs; i < e->n_io; i++) {
        const trtl_dims *d = &c->dims[e->io[i]];
        if (d->nb_dims < 1 || d->d[0] != 1)
            continue;
        size_t bytes = (size_t)trtl_volume(d) * trtl_dtype_size(e->tensors[e->io[i]].dtype);
        char *p = c->ptr[e->io[i]];
        for (int32_t b = 1; b < batch && bytes; b++)
            memcpy(p + (size_t)b * bytes, p, bytes);
    }
}

static trtl_status run_steps(trtl_context *c, int32_t batch_size, void *const *addr);

/* ---- data-dependent shapes and output allocators (engine/data_dependent.h) -------------------- */

static int is_dd_io(const trtl_context *c, int32_t i)
{
    const trtl_etensor *t = &c->e->tensors[c->e->io[i]];
    if (!c->dd_t || !c->dd_t[c->e->io[i]])
        return 0;
    for (int32_t k = 0; k < t->dims.nb_dims; k++)
        if (t->dims.d[k] < 0)
            return 1;
    return 0;
}

int trtl_engine_io_is_data_dependent(const trtl_engine *e, int32_t i)
{
    if (!e || i < e->n_inputs || i >= e->n_io)
        return 0;
    int oom = 0;
    char *dd = trtl_dd_tensors(e, &oom);
    const trtl_etensor *t = &e->tensors[e->io[i]];
    int r = 0;
    for (int32_t k = 0; dd && dd[e->io[i]] && k < t->dims.nb_dims; k++)
        r |= t->dims.d[k] < 0;
    free(dd);
    return r;
}

trtl_status trtl_context_set_output_allocator(trtl_context *c, const char *name, const trtl_output_allocator *a)
{
    TRTL_CHECK_ARG(c);
    trtl_clear_error();
    int32_t i;
    TRTL_TRY(io_lookup(c, name, &i));
    if (i < c->e->n_inputs)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "'%s' is an input; output allocators are for outputs", name);
    if (c->e->implicit_batch && a)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "output '%s': output allocators need an explicit-batch engine", name);
    if (a && !a->reallocate)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "output '%s': the output allocator has no reallocate function",
                          name);
    if (a)
        c->alloc[i] = *a;
    else
        memset(&c->alloc[i], 0, sizeof c->alloc[i]);
    c->alloc_last[i] = NULL;
    return TRTL_OK;
}

trtl_status trtl_context_max_output_size(trtl_context *c, const char *name, int64_t *bytes)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(bytes);
    trtl_clear_error();
    int32_t i;
    trtl_dims d;
    TRTL_TRY(io_lookup(c, name, &i));
    TRTL_TRY(trtl_context_resolve(c, c->batch > 0 ? c->batch : 1));
    TRTL_TRY(trtl_context_io_dims(c, i, &d));
    *bytes = trtl_volume(&d) * (int64_t)trtl_dtype_size(c->e->tensors[c->e->io[i]].dtype);
    return TRTL_OK;
}

/* Output i has an allocator: it is computed into a staging buffer of its upper-bound size. */
static trtl_status stage_output(trtl_context *c, int32_t i)
{
    int32_t t = c->e->io[i];
    const trtl_dims *d = c->dims_ub ? &c->dims_ub[t] : &c->dims[t];
    size_t need = (size_t)trtl_volume(d) * trtl_dtype_size(c->e->tensors[t].dtype);
    if (need > c->stage_cap[i] || !c->stage[i]) {
        void *p = trtl_aligned_alloc(need ? need : 64);
        if (!p)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "output '%s': out of memory (%zu bytes)", c->e->tensors[t].name,
                              need);
        trtl_aligned_free(c->stage[i]);
        c->stage[i] = p;
        c->stage_cap[i] = need;
    }
    c->ptr[t] = c->stage[i];
    return TRTL_OK;
}

/* A data-dependent step (node k) ran: its outputs take the extents it reported, the later steps'
 * shapes are inferred again, and none may outgrow the buffer planned at the upper bound. */
static trtl_status dd_after_step(trtl_context *c, int32_t k)
{
    const trtl_engine *e = c->e;
    const trtl_node *n = &e->nodes[k];
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    for (int32_t j = 0; j < n->n_out; j++) {
        int32_t t = n->out[j];
        const trtl_dims *got = &c->vout[j].dims, *ub = &c->dims_ub[t];
        int ok = got->nb_dims == ub->nb_dims;
        for (int32_t q = 0; ok && q < got->nb_dims; q++)
            ok = got->d[q] >= 0 && got->d[q] <= ub->d[q];
        if (!ok)
            return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': output %d reported %s, outside its bound %s", n->name,
                              (int)j, trtl_dims_str(got, s1, sizeof s1), trtl_dims_str(ub, s2, sizeof s2));
        c->dims[t] = *got;
    }
    c->dd_kept[k] = 1;
    TRTL_TRY(trtl_engine_infer_kept(e, c->dims, c->values, c->dd_kept));
    for (int32_t t = 0; t < e->n_tensors; t++) {
        if (!c->dd_t[t] || e->tensors[t].kind == TRTL_TK_CONSTANT)
            continue;
        size_t es = trtl_dtype_size(e->tensors[t].dtype);
        int64_t v = trtl_volume(&c->dims[t]), vub = trtl_volume(&c->dims_ub[t]);
        if (v < 0 || v * (int64_t)es > vub * (int64_t)es)
            return trtl_error(TRTL_ERR_UNSUPPORTED, "tensor '%s': its data-dependent shape %s (after layer '%s') "
                              "is larger than the upper bound %s its buffer was planned for (a layer whose output "
                              "grows as a data-dependent input shrinks)", e->tensors[t].name,
                              trtl_dims_str(&c->dims[t], s1, sizeof s1), n->name,
                              trtl_dims_str(&c->dims_ub[t], s2, sizeof s2));
    }
    return TRTL_OK;
}

/* A step after a data-dependent one: its scratch at the real shapes (rarely above the upper bound's). */
static trtl_status dd_scratch(trtl_context *c, const trtl_node *n)
{
    if (!n->kernel || !n->kernel->scratch)
        return TRTL_OK;
    trtl_threadpool *prev_pool = trtl_current_pool();
    trtl_set_current_pool(c->pool);
    size_t s = n->kernel->scratch(n, c->vin, c->vout);
    trtl_set_current_pool(prev_pool);
    if (s <= c->scratch_cap)
        return TRTL_OK;
    void *ns = trtl_aligned_alloc(s);
    if (!ns)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory (scratch of %zu bytes)", n->name, s);
    trtl_aligned_free(c->scratch);
    c->scratch = ns;
    c->scratch_cap = s;
    return TRTL_OK;
}

/* After the steps: outputs with an allocator are copied to the memory it gives for their real size. */
static trtl_status hand_outputs(trtl_context *c)
{
    const trtl_engine *e = c->e;
    for (int32_t i = e->n_inputs; i < e->n_io; i++) {
        if (!c->alloc[i].reallocate)
            continue;
        int32_t t = e->io[i];
        const char *nm = e->tensors[t].name;
        uint64_t bytes = (uint64_t)trtl_volume(&c->dims[t]) * trtl_dtype_size(e->tensors[t].dtype);
        char msg[512] = "";
        void *p = c->alloc[i].reallocate(c->alloc[i].user, nm, c->alloc_last[i], bytes ? bytes : 1, 64, msg,
                                         sizeof msg);
        if (!p)
            return trtl_error(TRTL_ERR_STATE, "output '%s': the output allocator gave no memory for %llu bytes%s%s", nm,
                              (unsigned long long)bytes, msg[0] ? ": " : "", msg);
        c->alloc_last[i] = p;
        if (bytes)
            memcpy(p, c->stage[i], (size_t)bytes);
        if (c->alloc[i].notify_shape)
            c->alloc[i].notify_shape(c->alloc[i].user, nm, &c->dims[t]);
    }
    return TRTL_OK;
}

static trtl_status execute_with(trtl_context *c, int32_t batch_size, void *const *addr)
{
    /* Workers stay hot between the steps of this inference, then may sleep. */
    trtl_threadpool_hold(c->pool, 1);
    trtl_status st = run_steps(c, batch_size, addr);
    trtl_threadpool_hold(c->pool, 0);
    return st;
}

static trtl_status run_steps(trtl_context *c, int32_t batch_size, void *const *addr)
{
    trtl_clear_error();
    const trtl_engine *e = c->e;
    refresh_values(c, addr);
    TRTL_TRY(trtl_context_resolve(c, batch_size));
    int dd_seen = 0;
    if (c->dd_t) { /* every execution starts from the upper bounds */
        memcpy(c->dims, c->dims_ub, sizeof *c->dims * (size_t)e->n_tensors);
        memset(c->dd_kept, 0, (size_t)e->n_nodes);
        c->dd_ran = 0;
    }
    for (int32_t i = 0; i < e->n_io; i++) {
        if (i >= e->n_inputs && c->alloc[i].reallocate) {
            TRTL_TRY(stage_output(c, i));
            continue;
        }
        if (!addr[i] && trtl_volume(&c->dims[e->io[i]]) != 0) {
            if (i >= e->n_inputs && is_dd_io(c, i))
                return trtl_error(TRTL_ERR_STATE, "output '%s' has a data-dependent shape (known only after execution) "
                                  "and no buffer: call set_output_allocator('%s', allocator), or bind a buffer of "
                                  "get_max_output_size('%s') bytes", e->tensors[e->io[i]].name,
                                  e->tensors[e->io[i]].name, e->tensors[e->io[i]].name);
            return trtl_error(TRTL_ERR_STATE, "%s '%s' has no buffer: pass it in the bindings or call "
                              "set_tensor_address('%s', array)", i < e->n_inputs ? "input" : "output",
                              e->tensors[e->io[i]].name, e->tensors[e->io[i]].name);
        }
        c->ptr[e->io[i]] = addr[i];
    }
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        for (int32_t j = 0; j < n->n_in; j++) {
            int32_t t = n->in[j];
            c->vin[j].data = c->ptr[t];
            c->vin[j].dims = c->dims[t];
            c->vin[j].dtype = e->tensors[t].dtype;
        }
        for (int32_t j = 0; j < n->n_out; j++) {
            int32_t t = n->out[j];
            c->vout[j].data = c->ptr[t];
            c->vout[j].dims = c->dims[t];
            c->vout[j].dtype = e->tensors[t].dtype;
        }
        if (dd_seen)
            TRTL_TRY(dd_scratch(c, n));
        trtl_kernel_args a = {n, c->vin, c->vout, c->scratch, c->scratch_cap, n->kstate, c->pool, c->plugins[k]};
        double t0 = c->prof ? now_ms(c->prof_cpu) : 0.0;
        trtl_status st = c->cf[k] ? trtl_cf_ctx_run(c->cf[k], n->name, n->n_in, c->vin, n->n_out, c->vout)
                                  : n->kernel->run(&a);
        if (st != TRTL_OK)
            return st;
        if (!n->kernel->applies_epilogue && (n->epi.act != TRTL_ACT_NONE || n->epi.has_residual))
            trtl_epilogue_apply(&n->epi, (float *)c->vout[0].data,
                                n->epi.has_residual ? (const float *)c->vin[n->n_in - 1].data : NULL,
                                trtl_volume(&c->vout[0].dims));
        if (c->dd_t && trtl_dd_op(n->op)) {
            TRTL_TRY(dd_after_step(c, k));
            dd_seen = 1;
        }
        if (c->prof)
            c->prof(c->prof_user, n->name, (float)(now_ms(c->prof_cpu) - t0));
    }
    if (e->implicit_batch && c->batch > 1)
        broadcast_constant_outputs(c, c->batch);
    c->dd_ran = c->dd_t != NULL;
    return hand_outputs(c);
}

trtl_status trtl_context_execute(trtl_context *c, int32_t batch_size)
{
    TRTL_CHECK_ARG(c);
    return execute_with(c, batch_size, c->addr);
}

/* The bindings are for this call only: addresses from set_tensor_address stay as they were. */
trtl_status trtl_context_execute_bindings(trtl_context *c, int32_t batch_size, void *const *bindings)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(bindings);
    return execute_with(c, batch_size, bindings);
}

int32_t trtl_context_num_threads(const trtl_context *c)
{
    TRTL_NULL_GIVES(c, 0);
    return trtl_threadpool_size(c->pool);
}

/* A body's context (engine/control_flow.c): runs inside its parent's execute, which holds the pool. */
trtl_status trtl_context_run_nested(trtl_context *c, void *const *bindings)
{
    return run_steps(c, 0, bindings);
}

void trtl_context_set_pool_nested(trtl_context *c, trtl_threadpool *pool)
{
    c->pool = pool;
    for (int32_t k = 0; k < c->e->n_nodes; k++)
        if (c->cf[k])
            trtl_cf_ctx_set_pool(c->cf[k], pool);
}
