/* control_flow.c -- the CONTROL_FLOW step: shape inference of a compiled loop / conditional and its
 * execution over nested engines (contract in control_flow.h). */
#include <stdlib.h>
#include <string.h>

#include "engine/control_flow.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"

static trtl_status cf_infer(const trtl_cf_head *head, const char *name, int32_t n_in, const trtl_dims *in,
                            const trtl_dtype *in_t, int32_t n_out, trtl_dims *out, trtl_dtype *out_t);
static const trtl_cf_vtable cf_vt = {cf_infer};

trtl_cf *trtl_cf_alloc(void)
{
    trtl_cf *cf = calloc(1, sizeof *cf);
    if (!cf) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    cf->head.vt = &cf_vt;
    cf->trip_in = -1;
    cf->cond_out = -1;
    cf->static_trip = -1;
    return cf;
}

void trtl_cf_destroy(trtl_cf *cf)
{
    if (!cf)
        return;
    for (int b = 0; b < 2; b++) {
        trtl_engine_destroy(cf->body[b]);
        free(cf->in_map[b]);
        if (cf->build_net[b] && cf->build_free)
            cf->build_free(cf->build_net[b]);
    }
    free(cf->iter_axis);
    free(cf->iter_rev);
    free(cf->out);
    free(cf);
}

trtl_status trtl_cf_check(const trtl_cf *cf, const char *name, int32_t n_in, int32_t n_out)
{
#define BAD(...) return trtl_error(TRTL_ERR_INVALID_PLAN, __VA_ARGS__)
    if (cf->n_bodies != (cf->is_loop ? 1 : 2) || n_out != cf->n_out)
        BAD("plan is corrupt: control-flow step '%s' has %d bodies / %d outputs", name, (int)cf->n_bodies, (int)n_out);
    for (int b = 0; b < cf->n_bodies; b++) {
        const trtl_engine *e = cf->body[b];
        if (!e || e->n_inputs != cf->n_body_in[b] || e->n_io - e->n_inputs != cf->n_body_out[b] || e->n_shape_inputs ||
            e->implicit_batch)
            BAD("plan is corrupt: control-flow step '%s': body %d does not match its I/O lists", name, b);
        for (int32_t k = 0; k < cf->n_body_in[b]; k++)
            if (cf->in_map[b][k] < (cf->is_loop ? 0 : 1) || cf->in_map[b][k] >= n_in)
                BAD("plan is corrupt: control-flow step '%s': body input %d reads step input %d", name, (int)k,
                    (int)cf->in_map[b][k]);
        if (!cf->is_loop && cf->n_body_out[b] != n_out)
            BAD("plan is corrupt: conditional '%s': branch %d has %d outputs, the step %d", name, b,
                (int)cf->n_body_out[b], (int)n_out);
    }
    if (!cf->is_loop)
        return TRTL_OK;
    if (cf->n_rec < 0 || cf->n_iter < 0 || cf->n_rec + cf->n_iter > cf->n_body_in[0] || cf->n_rec > cf->n_body_out[0] ||
        cf->trip_in < -1 || cf->trip_in >= n_in || cf->cond_out < -1 || cf->cond_out >= cf->n_body_out[0] ||
        (cf->cond_out >= 0 && cf->cond_out < cf->n_rec) || cf->static_trip < -1)
        BAD("plan is corrupt: loop '%s': counts", name);
    if (cf->trip_in < 0 && cf->cond_out < 0 && cf->n_iter == 0)
        BAD("plan is corrupt: loop '%s' has no trip limit", name);
    for (int32_t k = 0; k < cf->n_iter; k++)
        if (cf->iter_axis[k] < 0 || cf->iter_axis[k] >= TRTL_MAX_DIMS || (cf->iter_rev[k] & ~1))
            BAD("plan is corrupt: loop '%s': iterator %d", name, (int)k);
    for (int32_t j = 0; j < n_out; j++) {
        const trtl_cf_out *o = &cf->out[j];
        if (o->kind < 0 || o->kind >= TRTL_LOOP_OUTPUT_COUNT || o->axis < 0 || o->axis >= TRTL_MAX_DIMS ||
            o->src < -cf->n_rec || o->src >= cf->n_body_out[0] || (o->src >= 0 && o->src < cf->n_rec) ||
            (o->src < 0 && o->kind != TRTL_LOOP_LAST_VALUE) || o->len < -1 || o->len > ((int64_t)1 << 40))
            BAD("plan is corrupt: loop '%s': output %d", name, (int)j);
    }
    return TRTL_OK;
#undef BAD
}

/* ---- shapes ------------------------------------------------------------------------------------- */

static trtl_status body_dims(const trtl_cf *cf, int b, const char *name, const trtl_dims *bin, const trtl_dtype *in_t,
                             trtl_dims *bout, trtl_dtype *bout_t)
{
    if (cf->build_net[b])
        return cf->build_infer(cf->build_net[b], bin, bout, bout_t);
    const trtl_engine *e = cf->body[b];
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX], s3[TRTL_DIMS_STR_MAX];
    for (int32_t i = 0; i < e->n_inputs; i++) {
        /* the step copies and slices its inputs into the body's by the body's element size */
        if (e->tensors[e->io[i]].dtype != in_t[cf->in_map[b][i]])
            return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': its body input '%s' is %s but reads a %s tensor", name,
                              e->tensors[e->io[i]].name, trtl_dtype_name(e->tensors[e->io[i]].dtype),
                              trtl_dtype_name(in_t[cf->in_map[b][i]]));
        const trtl_dims *mn = &e->env_min[i], *mx = &e->env_max[i];
        int ok = bin[i].nb_dims == mx->nb_dims;
        for (int32_t k = 0; ok && k < mx->nb_dims; k++)
            ok = bin[i].d[k] >= mn->d[k] && bin[i].d[k] <= mx->d[k];
        if (!ok)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': its body input '%s' is %s, outside the shapes %s..%s the "
                              "body was built for", name, e->tensors[e->io[i]].name, trtl_dims_str(&bin[i], s1, sizeof s1),
                              trtl_dims_str(mn, s2, sizeof s2), trtl_dims_str(mx, s3, sizeof s3));
    }
    trtl_dims *d = calloc((size_t)e->n_tensors + 1, sizeof *d);
    if (!d)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t i = 0; i < e->n_inputs; i++)
        d[e->io[i]] = bin[i];
    trtl_status st = trtl_engine_infer(e, d, NULL);
    for (int32_t j = 0; st == TRTL_OK && j < e->n_io - e->n_inputs; j++) {
        bout[j] = d[e->io[e->n_inputs + j]];
        bout_t[j] = e->tensors[e->io[e->n_inputs + j]].dtype;
    }
    free(d);
    return st == TRTL_OK ? st : trtl_error_prefix("layer '%s'", name);
}

/* A loop body's input dims from the step's (iterators drop their axis). */
static trtl_status loop_body_in(const trtl_cf *cf, const char *name, const trtl_dims *in, trtl_dims *bin,
                                int64_t *iter_len)
{
    *iter_len = -1;
    for (int32_t k = 0; k < cf->n_body_in[0]; k++) {
        const trtl_dims *d = &in[cf->in_map[0][k]];
        if (k < cf->n_rec || k >= cf->n_rec + cf->n_iter) {
            bin[k] = *d;
            continue;
        }
        int32_t a = cf->iter_axis[k - cf->n_rec];
        if (a >= d->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "loop '%s': iterator axis %d is out of range for an input of %d dims",
                              name, (int)a, (int)d->nb_dims);
        trtl_dims o = {0};
        for (int32_t i = 0; i < d->nb_dims; i++)
            if (i != a)
                o.d[o.nb_dims++] = d->d[i];
        bin[k] = o;
        if (*iter_len < 0 || d->d[a] < *iter_len)
            *iter_len = d->d[a];
    }
    return TRTL_OK;
}

static trtl_status cf_infer(const trtl_cf_head *head, const char *name, int32_t n_in, const trtl_dims *in,
                            const trtl_dtype *in_t, int32_t n_out, trtl_dims *out, trtl_dtype *out_t)
{
    const trtl_cf *cf = (const trtl_cf *)head;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    (void)n_in;
    int32_t nbi = cf->n_body_in[0] > cf->n_body_in[1] ? cf->n_body_in[0] : cf->n_body_in[1];
    int32_t nbo = cf->n_body_out[0] > cf->n_body_out[1] ? cf->n_body_out[0] : cf->n_body_out[1];
    trtl_dims *bin = calloc((size_t)nbi + 1, sizeof *bin), *bout = calloc(2 * ((size_t)nbo + 1), sizeof *bout);
    trtl_dtype *bt = calloc(2 * ((size_t)nbo + 1), sizeof *bt);
    trtl_status st = TRTL_OK;
    if (!bin || !bout || !bt) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (!cf->is_loop) {
        if (in_t[0] != TRTL_BOOL || in[0].nb_dims != 0) {
            st = trtl_error(TRTL_ERR_SHAPE, "conditional '%s': the condition must be a 0-d BOOL tensor, got %s %s", name,
                            trtl_dtype_name(in_t[0]), trtl_dims_str(&in[0], s1, sizeof s1));
            goto done;
        }
        for (int b = 0; b < 2 && st == TRTL_OK; b++) {
            for (int32_t k = 0; k < cf->n_body_in[b]; k++)
                bin[k] = in[cf->in_map[b][k]];
            st = body_dims(cf, b, name, bin, in_t, bout + b * (nbo + 1), bt + b * (nbo + 1));
        }
        for (int32_t j = 0; st == TRTL_OK && j < n_out; j++) {
            const trtl_dims *a = &bout[j], *c = &bout[nbo + 1 + j];
            if (!trtl_dims_equal(a, c) || bt[j] != bt[nbo + 1 + j]) {
                st = trtl_error(TRTL_ERR_SHAPE, "conditional '%s': output %d is %s %s in the true branch and %s %s in "
                                "the false branch (both branches must give the same shapes and types)", name, (int)j,
                                trtl_dtype_name(bt[j]), trtl_dims_str(a, s1, sizeof s1),
                                trtl_dtype_name(bt[nbo + 1 + j]), trtl_dims_str(c, s2, sizeof s2));
                break;
            }
            out[j] = *a;
            out_t[j] = bt[j];
        }
        goto done;
    }
    int64_t trip = -1;
    st = loop_body_in(cf, name, in, bin, &trip);
    if (st != TRTL_OK)
        goto done;
    if (cf->trip_in >= 0 && (in_t[cf->trip_in] != TRTL_INT32 || in[cf->trip_in].nb_dims != 0)) {
        st = trtl_error(TRTL_ERR_SHAPE, "loop '%s': the COUNT trip limit must be a 0-d INT32 tensor, got %s %s", name,
                        trtl_dtype_name(in_t[cf->trip_in]), trtl_dims_str(&in[cf->trip_in], s1, sizeof s1));
        goto done;
    }
    if (cf->static_trip >= 0 && (trip < 0 || cf->static_trip < trip))
        trip = cf->static_trip;
    st = body_dims(cf, 0, name, bin, in_t, bout, bt);
    for (int32_t r = 0; st == TRTL_OK && r < cf->n_rec; r++)
        if (!trtl_dims_equal(&bout[r], &bin[r]) || bt[r] != in_t[cf->in_map[0][r]])
            st = trtl_error(TRTL_ERR_SHAPE, "loop '%s': recurrence %d starts as %s %s but its next value is %s %s (the "
                            "shapes and types of carried values must not change from one iteration to the next)", name,
                            (int)r, trtl_dtype_name(in_t[cf->in_map[0][r]]), trtl_dims_str(&bin[r], s1, sizeof s1),
                            trtl_dtype_name(bt[r]), trtl_dims_str(&bout[r], s2, sizeof s2));
    if (st == TRTL_OK && cf->cond_out >= 0 && (bt[cf->cond_out] != TRTL_BOOL || bout[cf->cond_out].nb_dims != 0))
        st = trtl_error(TRTL_ERR_SHAPE, "loop '%s': the WHILE trip limit must be a 0-d BOOL tensor, got %s %s", name,
                        trtl_dtype_name(bt[cf->cond_out]), trtl_dims_str(&bout[cf->cond_out], s1, sizeof s1));
    for (int32_t j = 0; st == TRTL_OK && j < n_out; j++) {
        const trtl_cf_out *o = &cf->out[j];
        trtl_dims v = o->src < 0 ? bin[-1 - o->src] : bout[o->src];
        out_t[j] = o->src < 0 ? in_t[cf->in_map[0][-1 - o->src]] : bt[o->src];
        if (o->kind == TRTL_LOOP_LAST_VALUE) {
            out[j] = v;
            continue;
        }
        int64_t len = o->len >= 0 ? o->len : trip;
        if (len < 0) {
            st = trtl_error(TRTL_ERR_SHAPE, "loop '%s': output %d concatenates its iterations, but the trip count is "
                            "not known before the loop runs: give the loop a constant COUNT trip limit or an iterator, "
                            "or the loop output a constant length (set_input(1, length))", name, (int)j);
            break;
        }
        if (o->axis > v.nb_dims || v.nb_dims >= TRTL_MAX_DIMS) {
            st = trtl_error(TRTL_ERR_SHAPE, "loop '%s': output %d: axis %d is out of range for a value of %d dims", name,
                            (int)j, (int)o->axis, (int)v.nb_dims);
            break;
        }
        trtl_dims w = {0};
        for (int32_t k = 0; k <= v.nb_dims; k++)
            w.d[w.nb_dims++] = k == o->axis ? len : v.d[k < o->axis ? k : k - 1];
        out[j] = w;
    }
done:
    free(bin);
    free(bout);
    free(bt);
    return st;
}

/* ---- execution ---------------------------------------------------------------------------------- */

struct trtl_cf_ctx {
    const trtl_cf *cf;
    trtl_context *sub[2];
    void **bind[2];          /* per body I/O */
    trtl_dims *bin;          /* loop body input dims */
    void **cur, **nxt;       /* per recurrence */
    void **iterbuf;          /* per iterator */
    void **obuf;             /* per loop body output (next values excepted) */
    size_t *cap;             /* bytes of each buffer above: [2 * n_rec + n_iter + n_body_out] */
    size_t *rec_bytes, *iter_bytes, *out_bytes;
    int64_t *out_vol;        /* elements of each body output (per iteration) */
};

trtl_status trtl_cf_ctx_create(const trtl_cf *cf, struct trtl_threadpool *pool, trtl_cf_ctx **out)
{
    trtl_cf_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    x->cf = cf;
    int32_t nr = cf->n_rec, ni = cf->n_iter, no = cf->n_body_out[0];
    size_t nbuf = (size_t)(2 * nr + ni + no) + 1;
    x->bin = calloc((size_t)cf->n_body_in[0] + 1, sizeof *x->bin);
    x->cur = calloc(nbuf, sizeof(void *));
    x->cap = calloc(nbuf, sizeof(size_t));
    x->rec_bytes = calloc((size_t)nr + 1, sizeof(size_t));
    x->iter_bytes = calloc((size_t)ni + 1, sizeof(size_t));
    x->out_bytes = calloc((size_t)no + 1, sizeof(size_t));
    x->out_vol = calloc((size_t)no + 1, sizeof(int64_t));
    trtl_status st = TRTL_OK;
    if (!x->bin || !x->cur || !x->cap || !x->rec_bytes || !x->iter_bytes || !x->out_bytes || !x->out_vol)
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == TRTL_OK) {
        x->nxt = x->cur + nr;
        x->iterbuf = x->cur + 2 * nr;
        x->obuf = x->cur + 2 * nr + ni;
    }
    for (int b = 0; st == TRTL_OK && b < cf->n_bodies; b++) {
        x->bind[b] = calloc((size_t)cf->body[b]->n_io + 1, sizeof(void *));
        if (!x->bind[b])
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        else
            st = trtl_context_create_nested(cf->body[b], pool, &x->sub[b]);
    }
    if (st != TRTL_OK) {
        trtl_cf_ctx_destroy(x);
        return st;
    }
    *out = x;
    return TRTL_OK;
}

void trtl_cf_ctx_destroy(trtl_cf_ctx *x)
{
    if (!x)
        return;
    for (int b = 0; b < 2; b++) {
        trtl_context_destroy(x->sub[b]);
        free(x->bind[b]);
    }
    int32_t nbuf = x->cf ? 2 * x->cf->n_rec + x->cf->n_iter + x->cf->n_body_out[0] : 0;
    for (int32_t i = 0; x->cur && i < nbuf; i++)
        trtl_aligned_free(x->cur[i]);
    free(x->cur);
    free(x->cap);
    free(x->bin);
    free(x->rec_bytes);
    free(x->iter_bytes);
    free(x->out_bytes);
    free(x->out_vol);
    free(x);
}

static trtl_status ensure(trtl_cf_ctx *x, int32_t i, size_t bytes)
{
    if (bytes <= x->cap[i] && x->cur[i])
        return TRTL_OK;
    size_t n = bytes > 64 ? bytes : 64;
    void *p = trtl_aligned_alloc(n);
    if (!p)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory (loop buffer of %zu bytes)", n);
    trtl_aligned_free(x->cur[i]);
    x->cur[i] = p;
    x->cap[i] = n;
    return TRTL_OK;
}

static trtl_status set_shapes(trtl_context *sub, const trtl_engine *e, const trtl_dims *bin)
{
    for (int32_t i = 0; i < e->n_inputs; i++)
        TRTL_TRY(trtl_context_set_input_shape(sub, e->tensors[e->io[i]].name, &bin[i]));
    return trtl_context_resolve(sub, 1);
}

trtl_status trtl_cf_ctx_resolve(trtl_cf_ctx *x, const char *name, int32_t n_in, const trtl_tensor_view *in)
{
    const trtl_cf *cf = x->cf;
    if (!cf->is_loop) {
        for (int b = 0; b < 2; b++) {
            trtl_dims *bin = calloc((size_t)cf->n_body_in[b] + 1, sizeof *bin);
            if (!bin)
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
            for (int32_t k = 0; k < cf->n_body_in[b]; k++)
                bin[k] = in[cf->in_map[b][k]].dims;
            trtl_status st = set_shapes(x->sub[b], cf->body[b], bin);
            free(bin);
            if (st != TRTL_OK)
                return trtl_error_prefix("conditional '%s', %s branch", name, b == 0 ? "true" : "false");
        }
        return TRTL_OK;
    }
    trtl_dims *full = calloc((size_t)n_in + 1, sizeof *full);
    if (!full)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t k = 0; k < n_in; k++)
        full[k] = in[k].dims;
    int64_t len;
    trtl_status st = loop_body_in(cf, name, full, x->bin, &len);
    free(full);
    TRTL_TRY(st);
    if (set_shapes(x->sub[0], cf->body[0], x->bin) != TRTL_OK)
        return trtl_error_prefix("loop '%s'", name);
    const trtl_engine *e = cf->body[0];
    int32_t nr = cf->n_rec, ni = cf->n_iter;
    for (int32_t r = 0; r < nr; r++) {
        x->rec_bytes[r] = (size_t)trtl_volume(&x->bin[r]) * trtl_dtype_size(e->tensors[e->io[r]].dtype);
        TRTL_TRY(ensure(x, r, x->rec_bytes[r]));
        TRTL_TRY(ensure(x, nr + r, x->rec_bytes[r]));
    }
    for (int32_t k = 0; k < ni; k++) {
        x->iter_bytes[k] = (size_t)trtl_volume(&x->bin[nr + k]) * trtl_dtype_size(e->tensors[e->io[nr + k]].dtype);
        TRTL_TRY(ensure(x, 2 * nr + k, x->iter_bytes[k]));
    }
    for (int32_t j = nr; j < cf->n_body_out[0]; j++) {
        trtl_dims od;
        TRTL_TRY(trtl_context_io_dims(x->sub[0], e->n_inputs + j, &od));
        x->out_vol[j] = trtl_volume(&od);
        x->out_bytes[j] = (size_t)x->out_vol[j] * trtl_dtype_size(e->tensors[e->io[e->n_inputs + j]].dtype);
        TRTL_TRY(ensure(x, 2 * nr + ni + j, x->out_bytes[j]));
    }
    return TRTL_OK;
}

/* Slice `idx` of src (dims d) along axis a into dst. */
static void take_slice(char *dst, const char *src, const trtl_dims *d, int32_t a, int64_t idx, size_t es)
{
    int64_t outer = 1, inner = 1;
    for (int32_t k = 0; k < a; k++)
        outer *= d->d[k];
    for (int32_t k = a + 1; k < d->nb_dims; k++)
        inner *= d->d[k];
    size_t row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++)
        memcpy(dst + (size_t)o * row, src + ((size_t)o * (size_t)d->d[a] + (size_t)idx) * row, row);
}

/* Writes one iteration's value (dims: the output's without `a`) into slot `slot` of dst (dims d). */
static void put_slot(char *dst, const char *src, const trtl_dims *d, int32_t a, int64_t slot, size_t es)
{
    int64_t outer = 1, inner = 1;
    for (int32_t k = 0; k < a; k++)
        outer *= d->d[k];
    for (int32_t k = a + 1; k < d->nb_dims; k++)
        inner *= d->d[k];
    size_t row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++)
        memcpy(dst + ((size_t)o * (size_t)d->d[a] + (size_t)slot) * row, src + (size_t)o * row, row);
}

trtl_status trtl_cf_ctx_run(trtl_cf_ctx *x, const char *name, int32_t n_in, const trtl_tensor_view *in, int32_t n_out,
                            const trtl_tensor_view *out)
{
    const trtl_cf *cf = x->cf;
    (void)n_in;
    if (!cf->is_loop) {
        int b = *(const uint8_t *)in[0].data ? 0 : 1;
        const trtl_engine *e = cf->body[b];
        for (int32_t k = 0; k < e->n_inputs; k++)
            x->bind[b][k] = in[cf->in_map[b][k]].data;
        for (int32_t j = 0; j < n_out; j++)
            x->bind[b][e->n_inputs + j] = out[j].data;
        trtl_status st = trtl_context_run_nested(x->sub[b], x->bind[b]);
        return st == TRTL_OK ? st : trtl_error_prefix("conditional '%s'", name);
    }
    const trtl_engine *e = cf->body[0];
    int32_t nr = cf->n_rec, ni = cf->n_iter;
    int64_t limit = INT64_MAX;
    if (cf->trip_in >= 0) {
        int32_t v = *(const int32_t *)in[cf->trip_in].data;
        limit = v < 0 ? 0 : v;
    }
    for (int32_t k = 0; k < ni; k++) {
        const trtl_dims *d = &in[cf->in_map[0][nr + k]].dims;
        if (d->d[cf->iter_axis[k]] < limit)
            limit = d->d[cf->iter_axis[k]];
    }
    for (int32_t j = 0; j < n_out; j++) {
        const trtl_cf_out *o = &cf->out[j];
        size_t bytes = (size_t)trtl_volume(&out[j].dims) * trtl_dtype_size(out[j].dtype);
        if (o->kind != TRTL_LOOP_LAST_VALUE && out[j].dims.d[o->axis] < limit)
            limit = out[j].dims.d[o->axis];
        if (o->src >= 0 && bytes)
            memset(out[j].data, 0, bytes);
    }
    for (int32_t r = 0; r < nr; r++)
        if (x->rec_bytes[r])
            memcpy(x->cur[r], in[cf->in_map[0][r]].data, x->rec_bytes[r]);
    for (int32_t k = nr + ni; k < e->n_inputs; k++)
        x->bind[0][k] = in[cf->in_map[0][k]].data;
    for (int32_t j = nr; j < cf->n_body_out[0]; j++)
        x->bind[0][e->n_inputs + j] = x->obuf[j];
    for (int64_t i = 0; i < limit; i++) {
        for (int32_t k = 0; k < ni; k++) {
            const trtl_tensor_view *src = &in[cf->in_map[0][nr + k]];
            int32_t a = cf->iter_axis[k];
            int64_t idx = cf->iter_rev[k] ? src->dims.d[a] - 1 - i : i;
            take_slice(x->iterbuf[k], src->data, &src->dims, a, idx, trtl_dtype_size(src->dtype));
            x->bind[0][nr + k] = x->iterbuf[k];
        }
        for (int32_t r = 0; r < nr; r++) {
            x->bind[0][r] = x->cur[r];
            x->bind[0][e->n_inputs + r] = x->nxt[r];
        }
        trtl_status st = trtl_context_run_nested(x->sub[0], x->bind[0]);
        if (st != TRTL_OK)
            return trtl_error_prefix("loop '%s', iteration %lld", name, (long long)i);
        if (cf->cond_out >= 0 && !*(const uint8_t *)x->obuf[cf->cond_out])
            break;
        for (int32_t r = 0; r < nr; r++) {
            void *t = x->cur[r];
            x->cur[r] = x->nxt[r];
            x->nxt[r] = t;
        }
        for (int32_t j = 0; j < n_out; j++) {
            const trtl_cf_out *o = &cf->out[j];
            if (o->src < 0)
                continue;
            if (o->kind == TRTL_LOOP_LAST_VALUE) {
                memcpy(out[j].data, x->obuf[o->src], x->out_bytes[o->src]);
                continue;
            }
            int64_t slots = out[j].dims.d[o->axis];
            put_slot(out[j].data, x->obuf[o->src], &out[j].dims, o->axis,
                     o->kind == TRTL_LOOP_REVERSE ? slots - 1 - i : i, trtl_dtype_size(out[j].dtype));
        }
    }
    for (int32_t j = 0; j < n_out; j++)
        if (cf->out[j].src < 0 && x->rec_bytes[-1 - cf->out[j].src])
            memcpy(out[j].data, x->cur[-1 - cf->out[j].src], x->rec_bytes[-1 - cf->out[j].src]);
    return TRTL_OK;
}

void trtl_cf_ctx_set_pool(trtl_cf_ctx *x, struct trtl_threadpool *pool)
{
    for (int b = 0; b < 2; b++)
        if (x->sub[b])
            trtl_context_set_pool_nested(x->sub[b], pool);
}
