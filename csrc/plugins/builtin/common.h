/*
 * common.h -- what the built-in plugins share.  Internal to csrc/plugins/builtin/: not part of the
 * plugin ABI (an external plugin library sees only trtlite/plugin.h; examples/plugins/ shows one).
 *
 * Conventions of every helper here:
 *  - Failure: a helper that can fail writes a message into (msg, msg_len) -- always NUL-terminated,
 *    truncated to fit -- and returns nonzero (1), the ABI's failure value; the caller passes it on
 *    (`return 1`) without formatting again.  Success returns 0.
 *  - Messages name the field, input or output concerned, never the plugin or the layer: trtlite
 *    adds those around every plugin message ("plugin 'NAME' (layer 'LAYER'): ..." for create,
 *    "plugin layer 'LAYER' (NAME...): ..." for output_desc and enqueue), so what the user reads
 *    names all three.
 *  - Field text: "field 'NAME' ..."; input text: "input I ..." or "input I (ROLE) ...".
 *  - Nothing here allocates except trtl_builtin_create and trtl_builtin_clone (one block each,
 *    freed by trtl_builtin_destroy).
 */
#ifndef TRTL_PLUGINS_BUILTIN_COMMON_H
#define TRTL_PLUGINS_BUILTIN_COMMON_H

#include <stdint.h>

#include "trtlite/plugin.h"
#include "core/status.h" /* TRTL_PRINTF */

/* ---- messages -------------------------------------------------------------------------------- */

/* snprintf(msg, msg_len, fmt, ...) (nothing when msg is NULL or msg_len 0); returns 1, so a
 * failing path reads `return trtl_plugin_fail(msg, msg_len, "field 'x' must be ...", ...);`. */
int trtl_plugin_fail(char *msg, size_t msg_len, const char *fmt, ...) TRTL_PRINTF(3, 4);

/* "FLOAT32", "INT32", ... (the trt.PluginFieldType names); "?" for a value out of range. */
const char *trtl_field_type_name(int32_t type);

/* ---- reading a creator's fields ----------------------------------------------------------------
 * Fields are read by their creator's descriptor (`&field_descs[F_X]`), which gives the name, the
 * type and whether the field is required, so none of them is repeated at the call site.  The
 * registry has already checked names, types and presence of required fields; these helpers check
 * again (calls that bypass the registry) and check lengths, which the registry does not.
 *
 * Messages, exactly (TYPE from trtl_field_type_name, "value" singular for 1):
 *   "required field 'NAME' (TYPE) is missing"
 *   "field 'NAME' must be TYPE, got TYPE"
 *   "field 'NAME' must hold exactly N TYPE values, got L"       (min_len == max_len)
 *   "field 'NAME' must hold at least N TYPE values, got L"      (max_len == TRTL_FIELD_ANY_LENGTH)
 *   "field 'NAME' must hold N to M TYPE values, got L"          (otherwise)
 *   "field 'NAME': TYPE is not a scalar type"                   (trtl_field_scalar on another type: a bug)
 * The reader borrows everything it points to; nothing is copied or allocated. */

#define TRTL_FIELD_ANY_LENGTH INT32_MAX

typedef struct trtl_field_reader {
    const trtl_plugin_fields *fields; /* as given to create; NULL reads as no fields */
    char *msg;
    size_t msg_len;
    /* Scalar lengths.  0: a scalar field must hold exactly one value.  1: it must hold at least
     * one and the first is used -- what LReLU_TRT, Clip_TRT, L2Norm_Helper_TRT, SPP_TRT, Reorg_TRT,
     * ResizeNearest_TRT, InstanceNormalization_TRT and Adder2d_TRT have always accepted. */
    int first_of_many;
} trtl_field_reader;

/* trtl_plugin_fail into the reader's message buffer: how an init reports a field it refuses. */
int trtl_field_fail(const trtl_field_reader *r, const char *fmt, ...) TRTL_PRINTF(2, 3);

/* The first field called `name` (the registry keeps repeated names as given), or NULL.
 * NULL-safe: a NULL `fs` or a field without a name matches nothing. */
const trtl_plugin_field *trtl_field_find(const trtl_plugin_fields *fs, const char *name);

/* The field of descriptor `d` with min_len <= length <= max_len into *out; *out = NULL (and 0
 * returned) when it is absent and not required.  The data is borrowed from the caller's fields. */
int trtl_field_array(const trtl_field_reader *r, const trtl_plugin_field_desc *d, int32_t min_len, int32_t max_len,
                     const trtl_plugin_field **out);

/* One scalar of descriptor `d`, whose type must be FLOAT32 (`v` is a float *) or INT32 (an
 * int32_t *).  *v is left as it was (the caller's default) when the field is absent and optional. */
int trtl_field_scalar(const trtl_field_reader *r, const trtl_plugin_field_desc *d, void *v);

/* ---- instances: one malloc'd block, made from a class ------------------------------------------
 * A built-in instance is one block: trtl_builtin, then the plugin's own members, then optionally
 * a tail of arrays whose sizes the members record.  It keeps the table of fields that get_fields
 * returns; a field's data points into the block (or to static storage).
 *
 * Creation: every built-in creator's `create` is trtl_builtin_create and its `user` points at the
 * plugin's trtl_builtin_class (TRTL_BUILTIN_CREATOR).  trtl_builtin_create allocates one zeroed
 * block of cls->size + cls->tail(fields) bytes, sets the header (vtable, creator, class, size) and
 * calls cls->init with a field reader; when init fails (or allocation: "out of memory (N bytes)")
 * the block is freed and NULL returned with init's message.
 * Clone: memcpy of the block; every field pointer that pointed into the source moves to the same
 * offset in the copy, then cls->relink (when set) re-points the plugin's own pointer members into
 * the copy.  Destroy: free().  Instances are never modified after create. */

#define TRTL_BUILTIN_MAX_FIELDS 16

typedef struct trtl_builtin trtl_builtin;

/* Elementwise plugins only (see below): y[i] = f(x[i]) for i < n. */
typedef void (*trtl_eltwise_fn)(const trtl_plugin *self, const float *x, float *y, int64_t n);

typedef struct trtl_builtin_class {
    const trtl_plugin_vtable *vt;
    size_t size;       /* sizeof the plugin's struct (which starts with trtl_builtin) */
    int first_of_many; /* the field reader's scalar policy, see trtl_field_reader */
    /* Bytes of arrays to allocate after the struct, from the fields as given, before init has
     * checked them: only lengths (trtl_field_length) and plain values may be used, and a size
     * init would refuse may be returned as 0.  NULL: no tail. */
    size_t (*tail)(const trtl_plugin_fields *fields);
    /* Sets defaults, reads and checks the fields, lays out the tail, fills the members and the
     * field table (trtl_builtin_field).  0, or nonzero + message in r->msg. */
    int (*init)(trtl_builtin *h, const trtl_field_reader *r);
    /* Re-points the plugin's own pointer members into `copy` after clone's memcpy (the block's
     * size and the members are the source's).  NULL: none. */
    void (*relink)(trtl_builtin *copy);
    trtl_eltwise_fn apply; /* elementwise plugins only */
} trtl_builtin_class;

struct trtl_builtin {
    trtl_plugin base; /* first: what trtlite sees */
    const trtl_builtin_class *cls;
    size_t size; /* bytes of the block */
    int32_t nb_fields;
    trtl_plugin_field fields[TRTL_BUILTIN_MAX_FIELDS];
};

/* The `create` of every built-in creator (self->user: its trtl_builtin_class). */
trtl_plugin *trtl_builtin_create(const trtl_plugin_creator *self, const char *layer_name,
                                 const trtl_plugin_fields *fields, char *msg, size_t msg_len);

/* Length of field `name` as given (0 when absent), for tail functions. */
int32_t trtl_field_length(const trtl_plugin_fields *fs, const char *name);

/* Appends the field {d->name, data, d->type, length} to the table get_fields returns (in call
 * order).  At most TRTL_BUILTIN_MAX_FIELDS; more are a bug in the plugin and are dropped. */
void trtl_builtin_field(trtl_builtin *h, const trtl_plugin_field_desc *d, const void *data, int32_t length);

/* vtable entries shared by every built-in plugin. */
int trtl_builtin_get_fields(const trtl_plugin *self, trtl_plugin_fields *out);
trtl_plugin *trtl_builtin_clone(const trtl_plugin *self); /* NULL when out of memory */
void trtl_builtin_destroy(trtl_plugin *self);             /* free(); NULL-safe */
int32_t trtl_builtin_one_output(const trtl_plugin *self);

#define TRTL_BUILTIN_VTABLE(NUM_OUTPUTS, OUTPUT_DESC, WORKSPACE_SIZE, ENQUEUE)                                      \
    {                                                                                                               \
        .struct_size = sizeof(trtl_plugin_vtable), .abi_version = TRTL_PLUGIN_ABI_VERSION,                          \
        .num_outputs = (NUM_OUTPUTS), .output_desc = (OUTPUT_DESC), .workspace_size = (WORKSPACE_SIZE),             \
        .enqueue = (ENQUEUE), .get_fields = trtl_builtin_get_fields, .clone = trtl_builtin_clone,                   \
        .destroy = trtl_builtin_destroy,                                                                            \
    }

/* A built-in creator: version "1", default namespace, DESCS an array (not a pointer), CLASS a
 * static trtl_builtin_class (the registry's copy of the creator keeps pointing at it). */
#define TRTL_BUILTIN_CREATOR(NAME, DESCS, CLASS)                                                                    \
    {                                                                                                               \
        .struct_size = sizeof(trtl_plugin_creator), .abi_version = TRTL_PLUGIN_ABI_VERSION, .name = (NAME),         \
        .version = "1", .plugin_namespace = "", .fields = (DESCS),                                                  \
        .nb_fields = (int32_t)(sizeof(DESCS) / sizeof((DESCS)[0])), .create = trtl_builtin_create,                  \
        .user = (void *)&(CLASS),                                                                                   \
    }

/* ---- inputs and outputs --------------------------------------------------------------------------
 * What one input must be: float32, full rank (batch included) in [min_rank, max_rank].
 * Messages, exactly ("input I" followed by " (ROLE)" when `role` is set):
 *   "takes no inputs, got K" / "takes N input(s) (ROLE, ROLE, ...), got K" (roles when all have one)
 *   "input I (ROLE) must be float32 (FLOAT), got DTYPE"
 *   "input I (ROLE) must be LAYOUT (RANK, batch included), got rank R"
 *        RANK: "4-D" (min == max), "rank >= 3" (max == TRTL_MAX_DIMS), "rank 2 to 4"
 *   "output I does not exist (it has N output(s))"
 *   "expects N output buffer(s), got K"
 *   "expects 1 input and 1 output, got K and M"          (enqueue of the elementwise plugins) */

typedef struct trtl_input_spec {
    const char *role;   /* what the input is, e.g. "image"; NULL: nothing */
    int32_t min_rank;   /* full dims, batch included */
    int32_t max_rank;   /* TRTL_MAX_DIMS: no limit */
    const char *layout; /* the expected shape as text, e.g. "[N, C, H, W]" */
} trtl_input_spec;

int trtl_check_input(const trtl_plugin_tensor_desc *in, int32_t i, const trtl_input_spec *spec, char *msg,
                     size_t msg_len);
/* Exactly n_specs inputs, input i as specs[i]. */
int trtl_check_inputs(const trtl_plugin_tensor_desc *in, int32_t nb_in, const trtl_input_spec *specs, int32_t n_specs,
                      char *msg, size_t msg_len);
int trtl_check_output_index(int32_t index, int32_t nb_outputs, char *msg, size_t msg_len);
int trtl_check_output_count(int32_t nb_out, int32_t want, char *msg, size_t msg_len);

/* For output_desc of a plugin with one input and one output: index is 0, one input, as `spec`. */
int trtl_check_single_io(int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in, const trtl_input_spec *spec,
                         char *msg, size_t msg_len);

/* output_desc of a plugin with one input (trtl_check_single_io) and one output of the input's
 * shape and dtype (float32). */
int trtl_same_shape_desc(int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in, const trtl_input_spec *spec,
                         trtl_plugin_tensor_desc *out, char *msg, size_t msg_len);

/* The batch shared by several inputs: dim 0 of each, -1 when unknown.  Start from
 * TRTL_BATCH_UNKNOWN and merge the inputs one by one; an unknown batch on either side agrees with
 * anything, the first known one is kept.  Fails with
 *   "inputs I and J have batches A and B" + hint        (I: the input the kept batch came from) */
typedef struct trtl_batch {
    int64_t n;    /* -1: unknown so far */
    int32_t from; /* the input n came from (-1: none) */
} trtl_batch;
#define TRTL_BATCH_UNKNOWN ((trtl_batch){-1, -1})
int trtl_batch_merge(trtl_batch *b, const trtl_plugin_tensor_desc *in, int32_t i, const char *hint, char *msg,
                     size_t msg_len);

/* Product of d->d[from..nb_dims) (1 when empty); -1 when one of them is unknown (< 0). */
int64_t trtl_volume_from(const trtl_dims *d, int32_t from);

/* ---- elementwise float32 plugins ---------------------------------------------------------------
 * One float32 input of any shape, one output of the same shape, no workspace.  Such a plugin's
 * class has vt = &trtl_eltwise_vtable and apply = its function, which computes y[i] = f(x[i]) for
 * i < n (a whole buffer at a time, so that the loop vectorizes) and cannot fail; its init only
 * reads the fields.  Shapes, checks, enqueue, clone and destroy are shared. */
extern const trtl_plugin_vtable trtl_eltwise_vtable;

#endif
