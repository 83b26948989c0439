/* common.c -- the helpers the built-in plugins share (contracts in common.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/common.h"
#include "core/dims.h"

/* ---- messages -------------------------------------------------------------------------------- */

static void vfail(char *msg, size_t msg_len, const char *fmt, va_list ap)
{
    if (msg && msg_len)
        vsnprintf(msg, msg_len, fmt, ap);
}

int trtl_plugin_fail(char *msg, size_t msg_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(msg, msg_len, fmt, ap);
    va_end(ap);
    return 1;
}

int trtl_field_fail(const trtl_field_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(r->msg, r->msg_len, fmt, ap);
    va_end(ap);
    return 1;
}

const char *trtl_field_type_name(int32_t type)
{
    static const char *const names[] = {"FLOAT16", "FLOAT32", "FLOAT64", "INT8", "INT16", "INT32", "CHAR", "DIMS",
                                        "UNKNOWN"};
    return (type >= 0 && type <= TRTL_PF_UNKNOWN) ? names[type] : "?";
}

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* ---- fields ---------------------------------------------------------------------------------- */

const trtl_plugin_field *trtl_field_find(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; fs && i < fs->nb_fields; i++)
        if (fs->fields[i].name && strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

int trtl_field_array(const trtl_field_reader *r, const trtl_plugin_field_desc *d, int32_t min_len, int32_t max_len,
                     const trtl_plugin_field **out)
{
    const char *tn = trtl_field_type_name(d->type);
    const trtl_plugin_field *f = trtl_field_find(r->fields, d->name);
    const int32_t n = f ? f->length : 0;
    *out = NULL;
    if (!f)
        return d->required ? trtl_field_fail(r, "required field '%s' (%s) is missing", d->name, tn) : 0;
    if (f->type != d->type)
        return trtl_field_fail(r, "field '%s' must be %s, got %s", d->name, tn, trtl_field_type_name(f->type));
    if (n < min_len || n > max_len) {
        if (min_len == max_len)
            return trtl_field_fail(r, "field '%s' must hold exactly %d %s value%s, got %d", d->name, (int)min_len, tn,
                                   plural(min_len), (int)n);
        if (max_len == TRTL_FIELD_ANY_LENGTH)
            return trtl_field_fail(r, "field '%s' must hold at least %d %s value%s, got %d", d->name, (int)min_len, tn,
                                   plural(min_len), (int)n);
        return trtl_field_fail(r, "field '%s' must hold %d to %d %s values, got %d", d->name, (int)min_len,
                               (int)max_len, tn, (int)n);
    }
    *out = f;
    return 0;
}

int trtl_field_scalar(const trtl_field_reader *r, const trtl_plugin_field_desc *d, void *v)
{
    const trtl_plugin_field *f;
    if (d->type != TRTL_PF_FLOAT32 && d->type != TRTL_PF_INT32)
        return trtl_field_fail(r, "field '%s': %s is not a scalar type", d->name, trtl_field_type_name(d->type));
    if (trtl_field_array(r, d, 1, r->first_of_many ? TRTL_FIELD_ANY_LENGTH : 1, &f))
        return 1;
    if (f)
        memcpy(v, f->data, 4); /* a float or an int32_t, as the type says */
    return 0;
}

/* ---- instances ------------------------------------------------------------------------------- */

int32_t trtl_field_length(const trtl_plugin_fields *fs, const char *name)
{
    const trtl_plugin_field *f = trtl_field_find(fs, name);
    return f && f->length > 0 ? f->length : 0;
}

trtl_plugin *trtl_builtin_create(const trtl_plugin_creator *self, const char *layer_name,
                                 const trtl_plugin_fields *fields, char *msg, size_t msg_len)
{
    (void)layer_name; /* trtlite prefixes the plugin and layer names to the message */
    const trtl_builtin_class *cls = self->user;
    const trtl_field_reader r = {fields, msg, msg_len, cls->first_of_many};
    const size_t size = cls->size + (cls->tail ? cls->tail(fields) : 0);
    trtl_builtin *h = calloc(1, size);
    if (!h) {
        trtl_plugin_fail(msg, msg_len, "out of memory (%zu bytes)", size);
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory"); /* trtl_plugin_create reports it as such */
        return NULL;
    }
    h->base.vt = cls->vt;
    h->base.creator = self;
    h->cls = cls;
    h->size = size;
    if (cls->init(h, &r)) {
        free(h);
        return NULL;
    }
    return &h->base;
}

void trtl_builtin_field(trtl_builtin *h, const trtl_plugin_field_desc *d, const void *data, int32_t length)
{
    if (h->nb_fields < TRTL_BUILTIN_MAX_FIELDS)
        h->fields[h->nb_fields++] = (trtl_plugin_field){d->name, data, d->type, length};
}

int trtl_builtin_get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    const trtl_builtin *h = (const trtl_builtin *)self;
    out->nb_fields = h->nb_fields;
    out->fields = h->fields;
    return 0;
}

trtl_plugin *trtl_builtin_clone(const trtl_plugin *self)
{
    const trtl_builtin *src = (const trtl_builtin *)self;
    trtl_builtin *c = malloc(src->size);
    if (!c)
        return NULL;
    memcpy(c, src, src->size);
    /* Field data inside the source block moves to the same offset in the copy (compared as
     * integers: the pointers may belong to other objects; one past the end counts as inside, an
     * empty array at the end of the tail). */
    for (int32_t i = 0; i < c->nb_fields; i++) {
        uintptr_t off = (uintptr_t)c->fields[i].data - (uintptr_t)src;
        if (c->fields[i].data && off <= src->size)
            c->fields[i].data = (const char *)c + off;
    }
    if (c->cls->relink)
        c->cls->relink(c);
    return &c->base;
}

void trtl_builtin_destroy(trtl_plugin *self) { free(self); }

int32_t trtl_builtin_one_output(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

/* ---- inputs and outputs ---------------------------------------------------------------------- */

int trtl_check_input(const trtl_plugin_tensor_desc *in, int32_t i, const trtl_input_spec *spec, char *msg,
                     size_t msg_len)
{
    const char *open = spec->role ? " (" : "", *role = spec->role ? spec->role : "", *close = spec->role ? ")" : "";
    const int32_t r = in[i].dims.nb_dims;
    if (in[i].dtype != TRTL_FLOAT)
        return trtl_plugin_fail(msg, msg_len, "input %d%s%s%s must be float32 (FLOAT), got %s", (int)i, open, role,
                                close, trtl_dtype_name(in[i].dtype));
    if (r < spec->min_rank || r > spec->max_rank) {
        char rank[32];
        if (spec->min_rank == spec->max_rank)
            snprintf(rank, sizeof rank, "%d-D", (int)spec->min_rank);
        else if (spec->max_rank >= TRTL_MAX_DIMS)
            snprintf(rank, sizeof rank, "rank >= %d", (int)spec->min_rank);
        else
            snprintf(rank, sizeof rank, "rank %d to %d", (int)spec->min_rank, (int)spec->max_rank);
        return trtl_plugin_fail(msg, msg_len, "input %d%s%s%s must be %s (%s, batch included), got rank %d", (int)i,
                                open, role, close, spec->layout, rank, (int)r);
    }
    return 0;
}

int trtl_check_inputs(const trtl_plugin_tensor_desc *in, int32_t nb_in, const trtl_input_spec *specs, int32_t n_specs,
                      char *msg, size_t msg_len)
{
    if (nb_in != n_specs) {
        if (n_specs == 0)
            return trtl_plugin_fail(msg, msg_len, "takes no inputs, got %d", (int)nb_in);
        char roles[256] = "";
        size_t used = 0;
        int named = 1;
        for (int32_t i = 0; i < n_specs; i++)
            named &= specs[i].role != NULL;
        for (int32_t i = 0; named && i < n_specs && used < sizeof roles; i++)
            used += (size_t)snprintf(roles + used, sizeof roles - used, "%s%s%s", i ? ", " : " (", specs[i].role,
                                     i == n_specs - 1 ? ")" : "");
        return trtl_plugin_fail(msg, msg_len, "takes %d input%s%s, got %d", (int)n_specs, plural(n_specs), roles,
                                (int)nb_in);
    }
    for (int32_t i = 0; i < n_specs; i++)
        if (trtl_check_input(in, i, &specs[i], msg, msg_len))
            return 1;
    return 0;
}

int trtl_check_output_index(int32_t index, int32_t nb_outputs, char *msg, size_t msg_len)
{
    if (index < 0 || index >= nb_outputs)
        return trtl_plugin_fail(msg, msg_len, "output %d does not exist (it has %d output%s)", (int)index,
                                (int)nb_outputs, plural(nb_outputs));
    return 0;
}

int trtl_check_output_count(int32_t nb_out, int32_t want, char *msg, size_t msg_len)
{
    if (nb_out != want)
        return trtl_plugin_fail(msg, msg_len, "expects %d output buffer%s, got %d", (int)want, plural(want),
                                (int)nb_out);
    return 0;
}

int trtl_check_single_io(int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in, const trtl_input_spec *spec,
                         char *msg, size_t msg_len)
{
    return trtl_check_output_index(index, 1, msg, msg_len) || trtl_check_inputs(in, nb_in, spec, 1, msg, msg_len);
}

int trtl_same_shape_desc(int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in, const trtl_input_spec *spec,
                         trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    if (trtl_check_single_io(index, in, nb_in, spec, msg, msg_len))
        return 1;
    *out = in[0];
    return 0;
}

int trtl_batch_merge(trtl_batch *b, const trtl_plugin_tensor_desc *in, int32_t i, const char *hint, char *msg,
                     size_t msg_len)
{
    const int64_t n = in[i].dims.nb_dims > 0 ? in[i].dims.d[0] : -1;
    if (n >= 0 && b->n >= 0 && n != b->n)
        return trtl_plugin_fail(msg, msg_len, "inputs %d and %d have batches %lld and %lld%s", (int)b->from, (int)i,
                                (long long)b->n, (long long)n, hint ? hint : "");
    if (b->n < 0 && n >= 0) {
        b->n = n;
        b->from = i;
    }
    return 0;
}

int64_t trtl_volume_from(const trtl_dims *d, int32_t from)
{
    int64_t v = 1;
    for (int32_t i = from; i < d->nb_dims; i++) {
        if (d->d[i] < 0)
            return -1;
        v *= d->d[i];
    }
    return v;
}

/* ---- elementwise float32 plugins ------------------------------------------------------------- */

static const trtl_input_spec eltwise_input = {NULL, 0, TRTL_MAX_DIMS, "a tensor"};

static int eltwise_output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in,
                               int32_t nb_in, trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    (void)self;
    return trtl_same_shape_desc(index, in, nb_in, &eltwise_input, out, msg, msg_len);
}

static int eltwise_enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                           int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs,
                           int32_t nb_out, void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    if (nb_in != 1 || nb_out != 1)
        return trtl_plugin_fail(msg, msg_len, "expects 1 input and 1 output, got %d and %d", (int)nb_in, (int)nb_out);
    ((const trtl_builtin *)self)->cls->apply(self, inputs[0], outputs[0], trtl_volume_from(&in_desc[0].dims, 0));
    return 0;
}

const trtl_plugin_vtable trtl_eltwise_vtable =
    TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, eltwise_output_desc, NULL, eltwise_enqueue);
