/* fields.c -- encoding of plugin fields (layout in fields.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/fields.h"
#include "core/status.h"
#include "trtlite/trtlite.h"

size_t trtl_plugin_field_elem_size(int32_t type)
{
    static const size_t sizes[] = {2, 4, 8, 1, 2, 4, 1, sizeof(trtl_dims), 1};
    return (type >= 0 && type <= TRTL_PF_UNKNOWN) ? sizes[type] : 0;
}

static size_t data_bytes(const trtl_plugin_field *f)
{
    return f->length > 0 ? (size_t)f->length * trtl_plugin_field_elem_size(f->type) : 0;
}

trtl_status trtl_plugin_fields_check(const trtl_plugin_fields *f)
{
    if (f->nb_fields < 0 || f->nb_fields > TRTL_PLUGIN_FIELDS_MAX || (f->nb_fields > 0 && !f->fields))
        return trtl_error(TRTL_ERR_PLUGIN, "get_fields() reported %d fields%s (0..%d can be stored)", (int)f->nb_fields,
                          f->nb_fields > 0 && !f->fields ? " without a field array" : "", TRTL_PLUGIN_FIELDS_MAX);
    for (int32_t i = 0; i < f->nb_fields; i++) {
        const trtl_plugin_field *x = &f->fields[i];
        if (!x->name || !*x->name)
            return trtl_error(TRTL_ERR_PLUGIN, "get_fields(): field %d has no name", (int)i);
        /* names are read only this far (a plugin library is not trusted; see plugin.h) */
        size_t len = strnlen(x->name, 1025);
        if (len > 1024 || !trtl_utf8_valid(x->name, len))
            return trtl_error(TRTL_ERR_PLUGIN, "get_fields(): the name of field %d %s", (int)i,
                              len > 1024 ? "is longer than 1024 bytes (or has no terminating NUL)" : "is not UTF-8");
        if (x->type < 0 || x->type > TRTL_PF_UNKNOWN)
            return trtl_error(TRTL_ERR_PLUGIN, "get_fields(): field '%s' has type %d, which is not a PluginFieldType "
                              "(0..%d)", x->name, (int)x->type, (int)TRTL_PF_UNKNOWN);
        if (x->length < 0)
            return trtl_error(TRTL_ERR_PLUGIN, "get_fields(): field '%s' has a negative length %d", x->name,
                              (int)x->length);
        if (x->length > 0 && !x->data)
            return trtl_error(TRTL_ERR_PLUGIN, "get_fields(): field '%s' has length %d but no data", x->name,
                              (int)x->length);
    }
    return TRTL_OK;
}

size_t trtl_plugin_fields_size(const trtl_plugin_fields *f)
{
    size_t n = 4;
    for (int32_t i = 0; i < f->nb_fields; i++)
        n += 4 + (f->fields[i].name ? strlen(f->fields[i].name) : 0) + 4 + 4 + 8 + data_bytes(&f->fields[i]);
    return n;
}

void trtl_plugin_fields_write(const trtl_plugin_fields *f, uint8_t *dst)
{
    uint32_t nf = (uint32_t)(f->nb_fields > 0 ? f->nb_fields : 0);
    memcpy(dst, &nf, 4);
    dst += 4;
    for (uint32_t i = 0; i < nf; i++) {
        const trtl_plugin_field *x = &f->fields[i];
        uint32_t len = (uint32_t)(x->name ? strlen(x->name) : 0);
        uint64_t nb = data_bytes(x);
        memcpy(dst, &len, 4);
        memcpy(dst + 4, x->name, len);
        dst += 4 + len;
        memcpy(dst, &x->type, 4);
        memcpy(dst + 4, &x->length, 4);
        memcpy(dst + 8, &nb, 8);
        dst += 16;
        if (nb)
            memcpy(dst, x->data, (size_t)nb);
        dst += nb;
    }
}

trtl_status trtl_plugin_fields_read(const uint8_t *src, size_t n, size_t *used, trtl_plugin_fields *out,
                                    void **storage)
{
    size_t off = 0;
    uint32_t nf;
    *storage = NULL;
    if (n < 4)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plugin fields are truncated");
    memcpy(&nf, src, 4);
    off = 4;
    if (nf > 4096)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plugin fields: %u fields is not plausible", nf);
    /* First pass: validate and size; second: copy into one block. */
    size_t need = sizeof(trtl_plugin_field) * (nf ? nf : 1);
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t len;
        int32_t type, length;
        uint64_t nb;
        if (n - off < 4)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plugin field %u is truncated", i);
        memcpy(&len, src + off, 4);
        if (len > n - off - 4 || n - off - 4 - len < 16)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plugin field %u is truncated", i);
        if (len == 0 || len > 1024 || !trtl_utf8_valid((const char *)src + off + 4, len))
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plugin field %u has an empty, overlong or non-UTF-8 name", i);
        off += 4 + len;
        memcpy(&type, src + off, 4);
        memcpy(&length, src + off + 4, 4);
        memcpy(&nb, src + off + 8, 8);
        off += 16;
        size_t es = trtl_plugin_field_elem_size(type);
        if (!es || length < 0 || nb != (uint64_t)length * es || nb > n - off)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plugin field %u has an inconsistent type/length", i);
        off += (size_t)nb;
        need += len + 1 + (size_t)nb + 8; /* + alignment slack */
    }
    uint8_t *block = malloc(need);
    if (!block)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    trtl_plugin_field *fields = (trtl_plugin_field *)block;
    uint8_t *p = block + sizeof(trtl_plugin_field) * (nf ? nf : 1);
    off = 4;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t len;
        uint64_t nb;
        memcpy(&len, src + off, 4);
        char *name = (char *)p;
        memcpy(name, src + off + 4, len);
        name[len] = '\0';
        p += len + 1;
        off += 4 + len;
        memcpy(&fields[i].type, src + off, 4);
        memcpy(&fields[i].length, src + off + 4, 4);
        memcpy(&nb, src + off + 8, 8);
        off += 16;
        p += (8 - ((uintptr_t)p & 7)) & 7; /* align data for its element type */
        memcpy(p, src + off, (size_t)nb);
        fields[i].name = name;
        fields[i].data = p;
        p += nb;
        off += (size_t)nb;
    }
    out->nb_fields = (int32_t)nf;
    out->fields = fields;
    *used = off;
    *storage = block;
    return TRTL_OK;
}

trtl_status trtl_plugin_encode_fields(const trtl_plugin *p, void **data, size_t *size)
{
    TRTL_CHECK_ARG(p);
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(size);
    const char *name = p->creator && p->creator->name ? p->creator->name : "?";
    trtl_plugin_fields fc = {0, NULL};
    /* get_fields has no message argument: trtlite's own adapters leave the reason as the
     * thread's last error, cleared first so that it is this call's. */
    trtl_clear_error();
    if (!p->vt || !p->vt->get_fields || p->vt->get_fields(p, &fc) != 0) {
        char why[TRTL_MSG_MAX];
        snprintf(why, sizeof why, "%s", trtl_last_error());
        return trtl_error(TRTL_ERR_PLUGIN, "plugin %s failed to report its fields%s%s", name, why[0] ? ": " : "", why);
    }
    if (trtl_plugin_fields_check(&fc) != TRTL_OK) {
        trtl_error_prefix("plugin %s cannot be serialized", name);
        return TRTL_ERR_PLUGIN;
    }
    size_t n = trtl_plugin_fields_size(&fc);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "plugin %s: out of memory encoding %zu bytes of fields", name, n);
    trtl_plugin_fields_write(&fc, buf);
    *data = buf;
    *size = n;
    return TRTL_OK;
}

trtl_status trtl_plugin_decode_fields(const void *data, size_t size, trtl_plugin_fields *out, void **storage)
{
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(out);
    TRTL_CHECK_ARG(storage);
    trtl_clear_error();
    size_t used;
    return trtl_plugin_fields_read(data, size, &used, out, storage);
}
