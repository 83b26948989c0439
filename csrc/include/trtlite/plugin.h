/*
 * trtlite/plugin.h -- the plugin ABI (version 1, and version 2: version 1's vtable extended with reduced precision).
 *
 * Untrusted libraries: a plugin library is code trtlite does not control, so everything it hands
 * over is checked where it crosses into trtlite, and a breach is an error naming the library,
 * creator or plugin layer -- never an over-read, a crash later, or a name that breaks the creator
 * list or the logger for every other user:
 *   - trtl_get_plugin_creators may report at most 4096 creators (a larger count is refused before
 *     any entry is read);
 *   - every string a creator points to (name, version, namespace, field names) must end with a
 *     NUL within 1024 bytes and be UTF-8; nothing past those 1024 bytes is read;
 *   - a creator describes at most 4096 fields, each with a name and a PluginFieldType;
 *   - `msg` buffers: trtlite terminates the buffer itself after every call (the last byte becomes
 *     NUL, so a plugin that fills the buffer gets msg_len - 1 bytes through) and replaces bytes
 *     that are not UTF-8 with '?';
 *   - `clone` must return a new instance: NULL, the instance itself (which would then be destroyed
 *     twice) or an instance without a valid vtable is refused (trtl_plugin_clone);
 *   - output shapes, output counts and workspace sizes are checked before they size anything.
 * What cannot be checked is trusted: a creator list shorter than its count, pointers into freed
 * memory, and enqueue writing outside its buffers.
 *
 * A plugin is a struct whose first member is `trtl_plugin`, pointing at a vtable.  A creator
 * describes the plugin's named, typed fields once: the same field list is used to create a plugin
 * and to serialize it (a plan stores the fields that `get_fields` returns; loading a plan calls
 * `create` again with them), so there is no separate serialize/deserialize code to keep in sync.
 *
 * Shapes: every tensor desc carries the full dims, batch included, also for implicit-batch
 * networks.  At build time a dim may be -1 (dynamic); `enqueue` always sees concrete dims.
 *
 * Threads: each execution context works on its own clone of the plugin (made with `clone`), so
 * `enqueue` never runs concurrently on one instance.  `output_desc`, `workspace_size`,
 * `get_fields` and `clone` must not modify the instance.
 *
 * Errors: functions returning int return 0 on success; on failure they write a message into
 * `msg` (at most msg_len bytes, NUL-terminated) and return nonzero.  trtlite turns that into an
 * error naming the plugin layer.  A plugin must never abort the process.
 *
 * ABI versioning: `struct_size` and `abi_version` are checked when a creator is registered and
 * when a library is loaded; a mismatch is refused with a message, not guessed at.  Versions only
 * extend: version 2 is trtl_plugin_vtable_v2, version 1's vtable (unchanged, first member) followed
 * by two optional slots (supports_format, configure: INT8 formats and per-tensor scales, TensorRT's
 * supportsFormatCombination / configurePlugin).  A version-2 plugin sets its instance's `vt` to
 * the first member and that member's abi_version to TRTL_PLUGIN_ABI_VERSION_2 and struct_size to
 * sizeof(trtl_plugin_vtable_v2).  Plugins, creators and libraries of version 1 build and run
 * unchanged (fp32 only); trtlite reads the version-2 slots only through trtl_plugin_vt2().
 */
#ifndef TRTLITE_PLUGIN_H
#define TRTLITE_PLUGIN_H

#include "trtlite/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRTL_PLUGIN_ABI_VERSION 1u   /* the base vtable below */
#define TRTL_PLUGIN_ABI_VERSION_2 2u /* trtl_plugin_vtable_v2 (reduced precision) */
#define TRTL_PLUGIN_ABI_VERSION_MAX TRTL_PLUGIN_ABI_VERSION_2 /* the newest this trtlite accepts */

/* Values equal trt.PluginFieldType. */
typedef enum trtl_plugin_field_type {
    TRTL_PF_FLOAT16 = 0,
    TRTL_PF_FLOAT32 = 1,
    TRTL_PF_FLOAT64 = 2,
    TRTL_PF_INT8 = 3,
    TRTL_PF_INT16 = 4,
    TRTL_PF_INT32 = 5,
    TRTL_PF_CHAR = 6,
    TRTL_PF_DIMS = 7, /* data points at trtl_dims values, length counts dims structs */
    TRTL_PF_UNKNOWN = 8
} trtl_plugin_field_type;

/* One field value.  `length` counts elements of `type`, not bytes. */
typedef struct trtl_plugin_field {
    const char *name;
    const void *data;
    int32_t type; /* trtl_plugin_field_type */
    int32_t length;
} trtl_plugin_field;

typedef struct trtl_plugin_fields {
    int32_t nb_fields;
    const trtl_plugin_field *fields;
} trtl_plugin_fields;

/* A field the creator understands.  Fields given at creation that are not listed are ignored with
 * a warning; a listed field given with another type is an error. */
typedef struct trtl_plugin_field_desc {
    const char *name;
    int32_t type;     /* trtl_plugin_field_type */
    int32_t required; /* 1: creation fails without it */
} trtl_plugin_field_desc;

typedef struct trtl_plugin_tensor_desc {
    trtl_dims dims;
    trtl_dtype dtype;
} trtl_plugin_tensor_desc;

typedef struct trtl_plugin trtl_plugin;
typedef struct trtl_plugin_creator trtl_plugin_creator;

/* A tensor's format as `configure` (version 2) sees it. */
typedef struct trtl_plugin_quant_desc {
    trtl_dtype dtype;
    float scale; /* TRTL_INT8: real value = code * scale; 0 otherwise */
} trtl_plugin_quant_desc;

typedef struct trtl_plugin_vtable {
    uint32_t struct_size; /* sizeof(trtl_plugin_vtable) as the plugin was compiled */
    uint32_t abi_version; /* TRTL_PLUGIN_ABI_VERSION */

    /* Number of outputs (constant for an instance). */
    int32_t (*num_outputs)(const trtl_plugin *self);

    /* Output `index`'s dims and dtype from the inputs'.  Also where the plugin rejects inputs it
     * cannot handle (wrong rank or dtype). */
    int (*output_desc)(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in,
                       int32_t nb_in, trtl_plugin_tensor_desc *out, char *msg, size_t msg_len);

    /* Scratch bytes enqueue needs for these concrete shapes.  Optional (NULL: none). */
    size_t (*workspace_size)(const trtl_plugin *self, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             const trtl_plugin_tensor_desc *out, int32_t nb_out);

    /* Compute.  Buffers are contiguous, row-major, of the desc's dtype. */
    int (*enqueue)(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs,
                   int32_t nb_out, void *workspace, char *msg, size_t msg_len);

    /* The fields that recreate this instance through its creator.  The returned pointers stay
     * valid until the instance is destroyed. */
    int (*get_fields)(const trtl_plugin *self, trtl_plugin_fields *out);

    /* Deep copy; NULL on failure. */
    trtl_plugin *(*clone)(const trtl_plugin *self);

    void (*destroy)(trtl_plugin *self);
} trtl_plugin_vtable;

/* Version 2: reduced precision. */
typedef struct trtl_plugin_vtable_v2 {
    trtl_plugin_vtable base; /* struct_size = sizeof(trtl_plugin_vtable_v2), abi_version = TRTL_PLUGIN_ABI_VERSION_2 */

    /* ---- reduced precision.  Both optional (NULL: the plugin takes and
     * gives FLOAT only, as in version 1).  Build time only: a plan stores what `configure` decided
     * through `get_fields`, so loading a plan creates the configured plugin again. ---- */

    /* Can tensor `pos` (inputs 0..nb_in-1, then outputs) have `desc[pos].dtype`, given the dtypes
     * of desc[0..pos-1]?  1 yes, 0 no.  trtlite asks for TRTL_INT8 inputs under BuilderFlag.INT8
     * (implicit quantization) where the tensor has a dynamic range. */
    int32_t (*supports_format)(const trtl_plugin *self, int32_t pos, const trtl_plugin_tensor_desc *desc,
                               int32_t nb_in, int32_t nb_out);

    /* The chosen formats, once: each tensor's dtype and, for TRTL_INT8 tensors, the scale of its
     * symmetric quantization (real = code * scale, zero point 0); 0 for float tensors.  trtlite
     * proposes the calibrated range / 127 for an INT8 input; the plugin may raise it (never lower
     * it, which would clip the calibrated range) to share one scale with its weights, and
     * trtlite quantizes the input with the scale left in in[i].scale.  Called on the builder's
     * own instance before any clone; the plugin keeps what it needs in its fields.  0, or nonzero
     * + msg (an error naming the layer). */
    int (*configure)(trtl_plugin *self, trtl_plugin_quant_desc *in, int32_t nb_in, trtl_plugin_quant_desc *out,
                     int32_t nb_out, char *msg, size_t msg_len);
} trtl_plugin_vtable_v2;

/* Embed as the first member of a plugin instance. */
struct trtl_plugin {
    const trtl_plugin_vtable *vt;
    const trtl_plugin_creator *creator; /* set by the creator; identifies (namespace, name, version) */
};

struct trtl_plugin_creator {
    uint32_t struct_size; /* sizeof(trtl_plugin_creator) as compiled */
    uint32_t abi_version; /* TRTL_PLUGIN_ABI_VERSION */
    const char *name;
    const char *version;
    const char *plugin_namespace;
    const trtl_plugin_field_desc *fields;
    int32_t nb_fields;
    /* Make an instance from fields (already checked against `fields` by trtlite: unknown names
     * dropped, types verified, required ones present).  NULL + msg on failure. */
    trtl_plugin *(*create)(const trtl_plugin_creator *self, const char *layer_name,
                           const trtl_plugin_fields *fields, char *msg, size_t msg_len);
    void *user; /* free for the creator's own use */
};

/* The version-2 vtable of `p` (its slots may still be NULL), or NULL for a version-1 plugin. */
static inline const trtl_plugin_vtable_v2 *trtl_plugin_vt2(const trtl_plugin *p)
{
    return p && p->vt && p->vt->abi_version >= TRTL_PLUGIN_ABI_VERSION_2 &&
                   p->vt->struct_size >= sizeof(trtl_plugin_vtable_v2)
               ? (const trtl_plugin_vtable_v2 *)(const void *)p->vt
               : NULL;
}

/* ---- registry ---------------------------------------------------------------------------------
 * One process-wide registry keyed by (namespace, name, version).  All calls are thread-safe.
 * Registering stores a registry-owned copy of the creator struct whose plugin_namespace is the
 * namespace registered under; find/list return those copies.  What the creator points to
 * (strings, fields, `user`) is borrowed and must outlive the process's use of it. */

/* Adds a copy of `creator` under `plugin_namespace` (NULL: the creator's own).  *added = 0 for a duplicate
 * key (a warning is logged, TensorRT's behaviour); returns an error for a bad struct/ABI. */
trtl_status trtl_plugin_register(const trtl_plugin_creator *creator, const char *plugin_namespace,
                                 int *added);
/* `creator` may be the registered copy or the struct that was registered. */
trtl_status trtl_plugin_deregister(const trtl_plugin_creator *creator);
/* NULL when absent (no error set). */
const trtl_plugin_creator *trtl_plugin_find(const char *name, const char *version,
                                            const char *plugin_namespace);
/* Snapshot of the registered creators; caller frees the array with trtl_free. */
trtl_status trtl_plugin_list(const trtl_plugin_creator ***creators, int32_t *count);
/* The namespace a creator was registered under (NULL if not registered). */
const char *trtl_plugin_registered_namespace(const trtl_plugin_creator *creator);
/* dlopen `path` and register what its TRTL_PLUGIN_LIBRARY_ENTRY returns. */
trtl_status trtl_plugin_load_library(const char *path);
/* Registers the built-in plugins (Adder2d_TRT, ...) under `plugin_namespace` ("" default). */
trtl_status trtl_plugin_init_builtins(const char *plugin_namespace);

/* Creates a plugin through `creator`, validating fields first (unknown: warning; wrong type or
 * missing required: error naming the field). */
trtl_status trtl_plugin_create(const trtl_plugin_creator *creator, const char *layer_name,
                               const trtl_plugin_fields *fields, trtl_plugin **out);

/* A checked clone of `p` for layer `layer_name` (NULL: none): a NULL result, the instance itself
 * (which would be destroyed twice) or an instance with a bad vtable is an error naming the layer
 * and the plugin.  Everything in trtlite that clones a plugin goes through here. */
trtl_status trtl_plugin_clone(const trtl_plugin *p, const char *layer_name, trtl_plugin **out);

/* What an external plugin library exports:
 *   const trtl_plugin_creator *const *trtl_get_plugin_creators(int32_t *count, uint32_t *abi_version);
 */
#define TRTL_PLUGIN_LIBRARY_ENTRY "trtl_get_plugin_creators"
typedef const trtl_plugin_creator *const *(*trtl_get_plugin_creators_fn)(int32_t *count,
                                                                          uint32_t *abi_version);

#ifdef __cplusplus
}
#endif
#endif /* TRTLITE_PLUGIN_H */
