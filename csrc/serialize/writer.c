/* writer.c -- engine -> plan bytes (format in plan.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serialize/plan.h"
#include "plugins/fields.h"
#include "engine/engine.h"
#include "engine/control_flow.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/alloc.h"

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wbuf;

static void put(wbuf *b, const void *src, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len > b->cap) {
        size_t nc = b->cap ? b->cap : 1 << 16;
        while (nc < b->n + len)
            nc *= 2;
        uint8_t *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    if (len && src) /* src NULL: reserves len bytes for the caller to fill */
        memcpy(b->p + b->n, src, len);
    b->n += len;
}

/* The host is little-endian (checked when loading); values are written as they are in memory. */
static void u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void i32(wbuf *b, int32_t v) { put(b, &v, 4); }
static void u64(wbuf *b, uint64_t v) { put(b, &v, 8); }
static void i64(wbuf *b, int64_t v) { put(b, &v, 8); }
static void f32(wbuf *b, float v) { put(b, &v, 4); }

static void str(wbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    u32(b, (uint32_t)n);
    put(b, s, n);
}

static void dims(wbuf *b, const trtl_dims *d)
{
    i32(b, d->nb_dims);
    for (int32_t i = 0; i < d->nb_dims && i < TRTL_MAX_DIMS; i++)
        i64(b, d->d[i]);
}

/* A control-flow step (plan.h, version 5): its structure, then each body as a nested plan. */
static trtl_status write_cf(wbuf *b, const trtl_node *n)
{
    const trtl_cf *cf = (const trtl_cf *)n->p.cf.cf;
    u32(b, (uint32_t)cf->is_loop);
    i32(b, cf->n_rec);
    i32(b, cf->n_iter);
    for (int32_t k = 0; k < cf->n_iter; k++) {
        i32(b, cf->iter_axis[k]);
        i32(b, cf->iter_rev[k]);
    }
    i32(b, cf->trip_in);
    i32(b, cf->cond_out);
    i64(b, cf->static_trip);
    u32(b, (uint32_t)cf->n_out);
    for (int32_t j = 0; j < cf->n_out; j++) {
        i32(b, cf->out[j].kind);
        i32(b, cf->out[j].axis);
        i32(b, cf->out[j].src);
        i64(b, cf->out[j].len);
    }
    u32(b, (uint32_t)cf->n_bodies);
    for (int bi = 0; bi < cf->n_bodies; bi++) {
        u32(b, (uint32_t)cf->n_body_in[bi]);
        for (int32_t k = 0; k < cf->n_body_in[bi]; k++)
            i32(b, cf->in_map[bi][k]);
        u32(b, (uint32_t)cf->n_body_out[bi]);
        void *data = NULL;
        size_t size = 0;
        trtl_status st = trtl_engine_serialize(cf->body[bi], &data, &size);
        if (st != TRTL_OK)
            return trtl_error_prefix("layer '%s'", n->name);
        u64(b, (uint64_t)size);
        put(b, data, size);
        free(data);
    }
    return TRTL_OK;
}

static trtl_status write_params(wbuf *b, const trtl_node *n)
{
    if (n->op == TRTL_OP_CONTROL_FLOW)
        return write_cf(b, n);
    if (n->op == TRTL_OP_PLUGIN_V2) {
        const trtl_plugin *pl = n->p.plugin.plugin;
        const trtl_plugin_creator *cr = pl ? pl->creator : NULL;
        if (!cr)
            return trtl_error(TRTL_ERR_PLUGIN, "layer '%s': the plugin has no creator, so it cannot be serialized", n->name);
        trtl_plugin_fields fc = {0, NULL};
        /* get_fields has no message argument in the ABI; trtlite's own adapters (Python plugins)
         * leave the reason as the thread's last error, which is cleared first so that it is this
         * call's. */
        trtl_clear_error();
        if (!pl->vt->get_fields || pl->vt->get_fields(pl, &fc) != 0) {
            char why[TRTL_MSG_MAX];
            snprintf(why, sizeof why, "%s", trtl_last_error());
            return trtl_error(TRTL_ERR_PLUGIN, "layer '%s': plugin %s failed to report its fields for serialization%s%s",
                              n->name, cr->name, why[0] ? ": " : "", why);
        }
        /* What the reader would refuse must fail here, at build, not as a plan that cannot load. */
        if (trtl_plugin_fields_check(&fc) != TRTL_OK)
            return trtl_error_prefix("layer '%s': plugin %s v%s cannot be serialized", n->name, cr->name, cr->version);
        const char *ns = trtl_plugin_registered_namespace(cr);
        str(b, ns ? ns : (cr->plugin_namespace ? cr->plugin_namespace : ""));
        str(b, cr->name);
        str(b, cr->version);
        size_t nb = trtl_plugin_fields_size(&fc);
        uint8_t *enc = malloc(nb);
        if (!enc)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "serialize: out of memory");
        trtl_plugin_fields_write(&fc, enc);
        put(b, enc, nb);
        free(enc);
        return TRTL_OK;
    }
    const trtl_op_info *info = &trtl_op_table[n->op];
    const char *base = (const char *)&n->p;
    for (int32_t i = 0; i < *info->nattrs; i++) {
        const trtl_attr_desc *d = &info->attrs[i];
        if (d->flags & TRTL_ATTRF_ALIAS)
            continue;
        const char *f = base + d->offset;
        switch (d->type) {
        case TRTL_ATTR_INT:
        case TRTL_ATTR_BOOL:
        case TRTL_ATTR_ENUM:
        case TRTL_ATTR_DTYPE: i32(b, *(const int32_t *)f); break;
        case TRTL_ATTR_AXES: u32(b, *(const uint32_t *)f); break;
        case TRTL_ATTR_FLOAT: f32(b, *(const float *)f); break;
        case TRTL_ATTR_DIMS:
        case TRTL_ATTR_DIMS_SYM: dims(b, (const trtl_dims *)f); break;
        case TRTL_ATTR_FLOATS: {
            int32_t cnt = *(const int32_t *)f;
            i32(b, cnt);
            put(b, base + d->offset2, sizeof(float) * (size_t)(cnt > 0 ? cnt : 0));
            break;
        }
        case TRTL_ATTR_STRING: {
            size_t len = strnlen(f, d->offset2);
            u32(b, (uint32_t)len);
            put(b, f, len);
            break;
        }
        case TRTL_ATTR_WEIGHTS: {
            const trtl_weights *w = (const trtl_weights *)f;
            size_t nb = (size_t)w->count * trtl_dtype_size(w->type);
            u32(b, (uint32_t)w->type);
            i64(b, w->count);
            if (w->values || !nb) {
                put(b, w->values, nb);
            } else if (n->kernel && n->kernel->unpack && n->kstate &&
                       w == trtl_node_packed_weights((trtl_node *)(uintptr_t)n)) {
                /* held packed only (engine/weights.c): the kernel writes the plain values back */
                size_t at = b->n;
                put(b, NULL, nb);
                if (!b->oom)
                    n->kernel->unpack(n, n->kstate, b->p + at);
            } else {
                return trtl_error(TRTL_ERR_INTERNAL, "serialize: layer '%s' has no values for its weights '%s'",
                                  n->name, d->name);
            }
            break;
        }
        }
    }
    return TRTL_OK;
}

/* consume: the engine being written (e itself), whose weights are freed once written (see plan.h), or NULL. */
static trtl_status write_plan(const trtl_engine *e, trtl_engine *consume, void **data, size_t *size)
{
    TRTL_TRY(trtl_engine_check_loaded(e, "serializing the engine"));
    size_t freed = 0; /* since the last trim of the C heap (core/alloc.h) */
    for (int32_t k = 0; consume && k < e->n_nodes; k++)
        if (e->nodes[k].op == TRTL_OP_CONTROL_FLOW)
            consume = NULL; /* written after the constants, a body may still read them: keep everything */
    wbuf b = {0};
    uint8_t header[TRTL_PLAN_HEADER_SIZE];
    memset(header, 0, sizeof header);
    put(&b, header, sizeof header); /* filled in at the end */
    u32(&b, (uint32_t)e->implicit_batch);
    i32(&b, e->max_batch_size);
    i32(&b, e->num_threads);
    str(&b, e->name ? e->name : "");
    u32(&b, (uint32_t)e->n_tensors);
    for (int32_t i = 0; i < e->n_tensors; i++) {
        const trtl_etensor *t = &e->tensors[i];
        str(&b, t->name);
        u32(&b, (uint32_t)t->dtype);
        u32(&b, (uint32_t)t->kind);
        dims(&b, &t->dims);
        dims(&b, &t->max_dims);
        uint64_t nb = t->kind == TRTL_TK_CONSTANT ? (uint64_t)t->max_bytes : 0;
        u64(&b, nb);
        put(&b, t->data, (size_t)nb);
        if (consume && !b.oom)
            trtl_alloc_trim_after(&freed, trtl_engine_release_written(consume, i, -1));
    }
    u32(&b, (uint32_t)e->n_io);
    u32(&b, (uint32_t)e->n_inputs);
    for (int32_t i = 0; i < e->n_io; i++)
        u32(&b, (uint32_t)e->io[i]);
    for (int32_t i = 0; i < e->n_inputs; i++)
        u32(&b, trtl_engine_io_is_shape(e, i) ? 1u : 0u);
    u32(&b, (uint32_t)e->n_profiles);
    for (int32_t p = 0; p < e->n_profiles; p++)
        for (int32_t i = 0; i < e->n_inputs; i++) {
            dims(&b, &e->profiles[p].min[i]);
            dims(&b, &e->profiles[p].opt[i]);
            dims(&b, &e->profiles[p].max[i]);
            if (trtl_engine_io_is_shape(e, i)) {
                dims(&b, &e->profiles[p].vmin[i]);
                dims(&b, &e->profiles[p].vopt[i]);
                dims(&b, &e->profiles[p].vmax[i]);
            }
        }
    u32(&b, (uint32_t)e->n_nodes);
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *n = &e->nodes[k];
        u32(&b, (uint32_t)n->op);
        str(&b, n->name);
        str(&b, n->kernel ? n->kernel->name : "");
        i32(&b, n->kernel ? n->kernel->precision : 0);
        i32(&b, n->epi.act);
        f32(&b, n->epi.alpha);
        f32(&b, n->epi.beta);
        u32(&b, (uint32_t)n->epi.has_residual);
        u32(&b, (uint32_t)n->n_in);
        for (int32_t j = 0; j < n->n_in; j++)
            u32(&b, (uint32_t)n->in[j]);
        u32(&b, (uint32_t)n->n_out);
        for (int32_t j = 0; j < n->n_out; j++)
            u32(&b, (uint32_t)n->out[j]);
        trtl_status st = write_params(&b, n);
        if (st != TRTL_OK) {
            free(b.p);
            return st;
        }
        if (consume && !b.oom)
            trtl_alloc_trim_after(&freed, trtl_engine_release_written(consume, -1, k));
    }
    str(&b, e->weights_names ? e->weights_names : ""); /* version 7 */
    if (b.oom) {
        free(b.p);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "serialize: out of memory");
    }
    uint64_t payload = b.n - TRTL_PLAN_HEADER_SIZE;
    uint32_t version = TRTL_PLAN_VERSION, hsize = TRTL_PLAN_HEADER_SIZE;
    uint32_t crc = trtl_crc32(b.p + TRTL_PLAN_HEADER_SIZE, (size_t)payload);
    memcpy(b.p, TRTL_PLAN_MAGIC, 8);
    memcpy(b.p + 8, &version, 4);
    memcpy(b.p + 12, &hsize, 4);
    memcpy(b.p + 16, &payload, 8);
    memcpy(b.p + 24, &crc, 4);
    memcpy(b.p + 28, &e->cpu_features, 4);
    strncpy((char *)b.p + 32, trtl_version(), 15);
    b.p[48] = e->refittable ? 1u : 0u; /* flags (plan.h) */
    *data = b.p;
    *size = b.n;
    return TRTL_OK;
}

trtl_status trtl_engine_serialize(const trtl_engine *e, void **data, size_t *size)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(size);
    trtl_clear_error();
    return write_plan(e, NULL, data, size);
}

trtl_status trtl_engine_serialize_consume(trtl_engine *e, void **data, size_t *size)
{
    TRTL_CHECK_ARG(e);
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(size);
    trtl_clear_error();
    return write_plan(e, e, data, size);
}
