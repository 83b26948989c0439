/*
 * registry.c -- the process-wide plugin registry, keyed by (namespace, name, version), and the
 * checked creation path shared by the network API and the plan reader.  All functions lock one
 * mutex; creators are borrowed (a library's creators live as long as the library, which is never
 * unloaded once loaded).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/trtlite.h"
#include "plugins/builtin/builtins.h"
#include "core/status.h"

/* Each registration is a registry-owned copy of the creator with its namespace filled in, so a
 * creator pointer (which plugin instances keep) implies exactly one (namespace, name, version),
 * also when the same creator is registered under several namespaces.  Copies are never freed:
 * plugins and engines may still point at a deregistered one. */
typedef struct entry {
    trtl_plugin_creator *creator; /* the copy */
    const trtl_plugin_creator *original;
    char *ns;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static int32_t n_entries, cap_entries;

static const char *field_type_name(int32_t t)
{
    static const char *const names[] = {"FLOAT16", "FLOAT32", "FLOAT64", "INT8", "INT16", "INT32", "CHAR", "DIMS", "UNKNOWN"};
    return (t >= 0 && t <= TRTL_PF_UNKNOWN) ? names[t] : "?";
}

static const char *nz(const char *s) { return s ? s : ""; }

/* Limits on what a plugin library hands over (see "Untrusted libraries" in plugin.h): names and
 * strings end within NAME_MAX_BYTES, and a library has at most MAX_LIBRARY_CREATORS creators. */
#define NAME_MAX_BYTES 1024
#define MAX_LIBRARY_CREATORS 4096

/* NULL when s is a NUL-terminated UTF-8 string of at most NAME_MAX_BYTES bytes, else why not.
 * Nothing past NAME_MAX_BYTES is read. */
static const char *bad_string(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strnlen(s, NAME_MAX_BYTES + 1);
    if (n > NAME_MAX_BYTES)
        return "is longer than 1024 bytes (or has no terminating NUL)";
    if (!trtl_utf8_valid(s, n))
        return "is not UTF-8";
    return NULL;
}

/* The creator's name for messages, once it is known to be printable. */
static const char *safe_name(const trtl_plugin_creator *c)
{
    if (c->struct_size < offsetof(trtl_plugin_creator, version) || !c->name || bad_string(c->name))
        return "?";
    return c->name;
}

/* ABI versions this trtlite accepts (plugin.h: version 2 only appends to version 1). */
static int abi_known(uint32_t v) { return v >= TRTL_PLUGIN_ABI_VERSION && v <= TRTL_PLUGIN_ABI_VERSION_MAX; }

/* The vtable size a version promises. */
static size_t vtable_size_of(uint32_t v)
{
    return v >= TRTL_PLUGIN_ABI_VERSION_2 ? sizeof(trtl_plugin_vtable_v2) : sizeof(trtl_plugin_vtable);
}

/* Whether trtlite may call destroy through vt (a layout it knows). */
static int vtable_usable(const trtl_plugin_vtable *vt)
{
    return vt && abi_known(vt->abi_version) && vt->struct_size >= vtable_size_of(vt->abi_version) && vt->destroy;
}

static trtl_status check_creator(const trtl_plugin_creator *c)
{
    if (!c)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "register_creator: no creator given");
    if (!abi_known(c->abi_version))
        return trtl_error(TRTL_ERR_PLUGIN,
                          "plugin creator '%s' was built for plugin ABI version %u; this trtlite supports version %u "
                          "to version %u (rebuild it against csrc/include/trtlite/plugin.h)",
                          safe_name(c), (unsigned)c->abi_version, (unsigned)TRTL_PLUGIN_ABI_VERSION,
                          (unsigned)TRTL_PLUGIN_ABI_VERSION_MAX);
    /* The name is read only where the creator's declared size covers it. */
    if (c->struct_size < sizeof(trtl_plugin_creator))
        return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s': struct size %u is smaller than this ABI's %zu",
                          safe_name(c), (unsigned)c->struct_size, sizeof(trtl_plugin_creator));
    /* Names reach every later message, the creator list and the logger: check them once, here. */
    const char *why;
    if ((why = bad_string(c->name)) != NULL)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin creator: its name %s", why);
    if ((why = bad_string(c->version)) != NULL)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s': its version string %s", c->name, why);
    if ((why = bad_string(c->plugin_namespace)) != NULL)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s': its namespace %s", c->name, why);
    if (!c->name || !*c->name || !c->version || !c->create || (c->nb_fields > 0 && !c->fields) || c->nb_fields < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "plugin creator '%s' is incomplete (name, version, create and fields "
                          "are required)", nz(c->name));
    if (c->nb_fields > MAX_LIBRARY_CREATORS)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s' describes %d fields (at most %d)", c->name,
                          (int)c->nb_fields, MAX_LIBRARY_CREATORS);
    /* trtl_plugin_create compares every given field's name with these and prints their types:
     * a bad entry here would crash there, long after the library was accepted. */
    for (int32_t k = 0; k < c->nb_fields; k++) {
        const trtl_plugin_field_desc *d = &c->fields[k];
        if (!d->name || !*d->name)
            return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s': field description %d has no name", c->name, (int)k);
        if ((why = bad_string(d->name)) != NULL)
            return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s': the name of field description %d %s", c->name,
                              (int)k, why);
        if (d->type < 0 || d->type > TRTL_PF_UNKNOWN)
            return trtl_error(TRTL_ERR_PLUGIN, "plugin creator '%s': field '%s' has type %d, which is not a "
                              "PluginFieldType (0..%d)", c->name, d->name, (int)d->type, (int)TRTL_PF_UNKNOWN);
    }
    return TRTL_OK;
}

static int32_t find_locked(const char *name, const char *version, const char *ns)
{
    for (int32_t i = 0; i < n_entries; i++) {
        const trtl_plugin_creator *c = entries[i].creator;
        if (strcmp(c->name, name) == 0 && strcmp(c->version, version) == 0 && strcmp(entries[i].ns, nz(ns)) == 0)
            return i;
    }
    return -1;
}

trtl_status trtl_plugin_register(const trtl_plugin_creator *creator, const char *plugin_namespace, int *added)
{
    trtl_clear_error();
    if (added)
        *added = 0;
    TRTL_TRY(check_creator(creator));
    const char *why = bad_string(plugin_namespace);
    if (why)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "register_creator('%s'): the namespace %s", creator->name, why);
    const char *ns = plugin_namespace ? plugin_namespace : nz(creator->plugin_namespace);
    char *nsdup = malloc(strlen(ns) + 1);
    if (!nsdup)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    strcpy(nsdup, ns);
    pthread_mutex_lock(&lock);
    if (find_locked(creator->name, creator->version, ns) >= 0) {
        pthread_mutex_unlock(&lock);
        free(nsdup);
        trtl_log(TRTL_LOG_WARNING, "Plugin creator already registered - %s::%s version %s", ns, creator->name,
                 creator->version);
        return TRTL_OK;
    }
    trtl_plugin_creator *copy = malloc(sizeof *copy);
    if (n_entries == cap_entries) {
        int32_t nc = cap_entries ? cap_entries * 2 : 32;
        entry *ne = realloc(entries, sizeof *ne * (size_t)nc);
        if (!ne) {
            pthread_mutex_unlock(&lock);
            free(nsdup);
            free(copy);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        }
        entries = ne;
        cap_entries = nc;
    }
    if (!copy) {
        pthread_mutex_unlock(&lock);
        free(nsdup);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *copy = *creator;
    copy->plugin_namespace = nsdup;
    entries[n_entries].creator = copy;
    entries[n_entries].original = creator;
    entries[n_entries].ns = nsdup;
    n_entries++;
    pthread_mutex_unlock(&lock);
    if (added)
        *added = 1;
    return TRTL_OK;
}

trtl_status trtl_plugin_deregister(const trtl_plugin_creator *creator)
{
    trtl_clear_error();
    pthread_mutex_lock(&lock);
    for (int32_t i = 0; i < n_entries; i++)
        if (entries[i].creator == creator || entries[i].original == creator) {
            entries[i] = entries[--n_entries]; /* the copy and its namespace string stay allocated */
            pthread_mutex_unlock(&lock);
            return TRTL_OK;
        }
    pthread_mutex_unlock(&lock);
    return trtl_error(TRTL_ERR_NOT_FOUND, "deregister_creator: plugin creator '%s' is not registered",
                      creator ? nz(creator->name) : "(null)");
}

const trtl_plugin_creator *trtl_plugin_find(const char *name, const char *version, const char *plugin_namespace)
{
    if (!name || !version)
        return NULL;
    pthread_mutex_lock(&lock);
    int32_t i = find_locked(name, version, plugin_namespace);
    const trtl_plugin_creator *c = i >= 0 ? entries[i].creator : NULL;
    pthread_mutex_unlock(&lock);
    return c;
}

const char *trtl_plugin_registered_namespace(const trtl_plugin_creator *creator)
{
    /* Registered creators are the registry's copies, which carry their namespace. */
    return creator ? nz(creator->plugin_namespace) : NULL;
}

trtl_status trtl_plugin_list(const trtl_plugin_creator ***creators, int32_t *count)
{
    pthread_mutex_lock(&lock);
    const trtl_plugin_creator **arr = malloc(sizeof *arr * (size_t)(n_entries ? n_entries : 1));
    if (!arr) {
        pthread_mutex_unlock(&lock);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int32_t i = 0; i < n_entries; i++)
        arr[i] = entries[i].creator;
    *count = n_entries;
    pthread_mutex_unlock(&lock);
    *creators = arr;
    return TRTL_OK;
}

trtl_status trtl_plugin_load_library(const char *path)
{
    trtl_clear_error();
    if (!path || !*path)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "load_library: empty path");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return trtl_error(TRTL_ERR_NOT_FOUND, "load_library('%s') failed: %s", path, why ? why : "unknown reason");
    }
    trtl_get_plugin_creators_fn fn;
    *(void **)&fn = dlsym(h, TRTL_PLUGIN_LIBRARY_ENTRY);
    if (!fn) {
        dlclose(h);
        return trtl_error(TRTL_ERR_PLUGIN, "load_library('%s'): the library does not export %s(), so it is not a "
                          "trtlite plugin library", path, TRTL_PLUGIN_LIBRARY_ENTRY);
    }
    int32_t count = 0;
    uint32_t abi = 0;
    const trtl_plugin_creator *const *list = fn(&count, &abi);
    if (!abi_known(abi)) {
        dlclose(h);
        return trtl_error(TRTL_ERR_PLUGIN, "load_library('%s'): the library was built for plugin ABI version %u; this "
                          "trtlite supports version %u to version %u", path, (unsigned)abi,
                          (unsigned)TRTL_PLUGIN_ABI_VERSION, (unsigned)TRTL_PLUGIN_ABI_VERSION_MAX);
    }
    if (!list || count < 0) {
        dlclose(h);
        return trtl_error(TRTL_ERR_PLUGIN, "load_library('%s'): the library returned no creators", path);
    }
    if (count > MAX_LIBRARY_CREATORS) {
        dlclose(h);
        return trtl_error(TRTL_ERR_PLUGIN, "load_library('%s'): the library reports %d creators (at most %d); its "
                          "creator list cannot be trusted", path, (int)count, MAX_LIBRARY_CREATORS);
    }
    for (int32_t i = 0; i < count; i++) {
        trtl_status st = check_creator(list[i]);
        if (st != TRTL_OK) {
            /* Nothing of this library is registered yet, so nothing can point into it. */
            dlclose(h);
            return trtl_error_prefix("load_library('%s')", path);
        }
    }
    for (int32_t i = 0; i < count; i++) {
        int added;
        TRTL_TRY(trtl_plugin_register(list[i], NULL, &added));
    }
    /* The handle stays open: registered creators point into the library. */
    trtl_log(TRTL_LOG_INFO, "loaded %d plugin creator(s) from %s", (int)count, path);
    return TRTL_OK;
}

trtl_status trtl_plugin_init_builtins(const char *plugin_namespace)
{
    trtl_clear_error();
    int32_t n = 0;
    const trtl_plugin_creator *const *list = trtl_builtin_plugin_creators(&n);
    const char *ns = plugin_namespace ? plugin_namespace : "";
    for (int32_t i = 0; i < n; i++) {
        int added;
        if (trtl_plugin_find(list[i]->name, list[i]->version, ns))
            continue; /* initializing twice is harmless, as in TensorRT */
        TRTL_TRY(trtl_plugin_register(list[i], ns, &added));
    }
    return TRTL_OK;
}

static trtl_status check_plugin(const trtl_plugin_creator *c, trtl_plugin *p)
{
    const trtl_plugin_vtable *vt = p->vt;
    if (!vt)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin '%s' returned an instance without a vtable", c->name);
    if (!abi_known(vt->abi_version))
        return trtl_error(TRTL_ERR_PLUGIN, "plugin '%s' returned an instance whose vtable has ABI version %u (expected "
                          "%u to %u)", c->name, (unsigned)vt->abi_version, (unsigned)TRTL_PLUGIN_ABI_VERSION,
                          (unsigned)TRTL_PLUGIN_ABI_VERSION_MAX);
    if (vt->struct_size < vtable_size_of(vt->abi_version))
        return trtl_error(TRTL_ERR_PLUGIN, "plugin '%s' returned an instance whose vtable struct size is %u, smaller "
                          "than this ABI's %zu for version %u (rebuild it against csrc/include/trtlite/plugin.h)", c->name,
                          (unsigned)vt->struct_size, vtable_size_of(vt->abi_version), (unsigned)vt->abi_version);
    if (!vt->num_outputs || !vt->output_desc || !vt->enqueue || !vt->get_fields || !vt->clone || !vt->destroy)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin '%s' returned an instance whose vtable is missing functions "
                          "(num_outputs, output_desc, enqueue, get_fields, clone and destroy are required)", c->name);
    return TRTL_OK;
}

trtl_status trtl_plugin_create(const trtl_plugin_creator *c, const char *layer_name, const trtl_plugin_fields *fields,
                               trtl_plugin **out)
{
    trtl_clear_error();
    TRTL_TRY(check_creator(c));
    int32_t nf = fields ? fields->nb_fields : 0;
    trtl_plugin_field *kept = malloc(sizeof *kept * (size_t)(nf ? nf : 1));
    if (!kept)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t nk = 0;
    for (int32_t i = 0; i < nf; i++) {
        const trtl_plugin_field *f = &fields->fields[i];
        const trtl_plugin_field_desc *d = NULL;
        for (int32_t k = 0; k < c->nb_fields; k++)
            if (f->name && strcmp(c->fields[k].name, f->name) == 0)
                d = &c->fields[k];
        if (!d) {
            trtl_log(TRTL_LOG_WARNING, "plugin '%s' (layer '%s'): ignoring unknown field '%s'", c->name, nz(layer_name),
                     nz(f->name));
            continue;
        }
        if (d->type != TRTL_PF_UNKNOWN && f->type != d->type) {
            free(kept);
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "plugin '%s' (layer '%s'): field '%s' must be %s, got %s", c->name,
                              nz(layer_name), d->name, field_type_name(d->type), field_type_name(f->type));
        }
        if (f->length < 0 || (f->length > 0 && !f->data)) {
            free(kept);
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "plugin '%s' (layer '%s'): field '%s' has no data", c->name,
                              nz(layer_name), d->name);
        }
        kept[nk++] = *f;
    }
    for (int32_t k = 0; k < c->nb_fields; k++) {
        if (!c->fields[k].required)
            continue;
        int present = 0;
        for (int32_t i = 0; i < nk; i++)
            present |= strcmp(kept[i].name, c->fields[k].name) == 0;
        if (!present) {
            free(kept);
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "plugin '%s' (layer '%s'): required field '%s' (%s) is missing",
                              c->name, nz(layer_name), c->fields[k].name, field_type_name(c->fields[k].type));
        }
    }
    char msg[512] = "";
    trtl_plugin_fields fc = {nk, kept};
    trtl_plugin *p = c->create(c, nz(layer_name), &fc, msg, sizeof msg);
    msg[sizeof msg - 1] = '\0'; /* a plugin may fill the buffer without terminating it */
    free(kept);
    if (!p)
        /* trtlite's own plugins leave TRTL_ERR_OUT_OF_MEMORY as the thread's status when that is why */
        return trtl_error(trtl_last_status() == TRTL_ERR_OUT_OF_MEMORY ? TRTL_ERR_OUT_OF_MEMORY : TRTL_ERR_PLUGIN,
                          "plugin '%s' (layer '%s'): %s", c->name, nz(layer_name), msg[0] ? msg : "create_plugin failed");
    trtl_status st = check_plugin(c, p);
    if (st != TRTL_OK) {
        /* Where the layout is not ours, `destroy` is not where we would read it: leak instead. */
        if (vtable_usable(p->vt))
            p->vt->destroy(p);
        return st;
    }
    if (!p->creator)
        p->creator = c;
    *out = p;
    return TRTL_OK;
}

trtl_status trtl_plugin_clone(const trtl_plugin *p, const char *layer_name, trtl_plugin **out)
{
    TRTL_CHECK_ARG(p);
    TRTL_CHECK_ARG(out);
    *out = NULL;
    const trtl_plugin_creator *c = p->creator;
    char who[1200];
    snprintf(who, sizeof who, "%s%s%splugin '%s'", layer_name ? "layer '" : "", layer_name ? layer_name : "",
             layer_name ? "' (" : "", c ? c->name : "?");
    if (layer_name)
        strcat(who, ")");
    trtl_plugin *q = p->vt->clone(p);
    if (!q)
        return trtl_error(TRTL_ERR_PLUGIN, "%s: the plugin's clone() failed", who);
    /* Every clone is destroyed on its own: handing back the instance itself would destroy it twice. */
    if (q == p)
        return trtl_error(TRTL_ERR_PLUGIN, "%s: clone() returned the instance itself; a clone must be a new instance "
                          "(it is destroyed separately)", who);
    trtl_status st = check_plugin(c ? c : &(trtl_plugin_creator){.name = "?"}, q);
    if (st != TRTL_OK) {
        if (vtable_usable(q->vt))
            q->vt->destroy(q);
        return trtl_error_prefix("%s: clone()", who);
    }
    if (!q->creator)
        q->creator = c;
    *out = q;
    return TRTL_OK;
}
