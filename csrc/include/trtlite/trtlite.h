/*
 * trtlite.h -- the public C API of trtlite, a CPU inference optimizer and runtime.
 *
 * Pipeline: network definition -> builder (passes, kernel choice, memory plan) -> engine
 * (immutable, shareable between threads) -> execution contexts (one per concurrent caller).
 *
 * Conventions (as SQLite's C API):
 *   - every call that can fail returns trtl_status; on failure trtl_last_error() returns a message
 *     for the calling thread naming the layer, tensor or field involved;
 *   - OUT parameters come last;
 *   - objects returned through `**out` are owned by the caller and freed with the matching
 *     *_destroy; pointers to layers and tensors are borrowed from their network;
 *   - no call aborts the process on bad input.  A NULL handle (or NULL for a required pointer
 *     argument) makes a call that returns trtl_status fail with TRTL_ERR_INVALID_ARGUMENT; the
 *     accessors, which return a value instead, give 0 for a NULL handle (NULL for pointers, and
 *     the exceptions noted at the call: -1 for indices, the _COUNT sentinel for enums);
 *     *_destroy and trtl_engine_retain ignore NULL.  (Handles that were destroyed cannot be
 *     detected: using one is undefined, as with free().)
 *
 * Thread-safety: a network and a builder config are used by one thread at a time.  An engine is
 * immutable after build/deserialize and may be used by any number of threads; each thread uses
 * its own execution context.
 */
#ifndef TRTLITE_H
#define TRTLITE_H

#include "trtlite/types.h"
#include "trtlite/ops.h"
#include "trtlite/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRTL_VERSION_MAJOR 0
#define TRTL_VERSION_MINOR 1
#define TRTL_VERSION_PATCH 0

typedef struct trtl_network trtl_network;
typedef struct trtl_tensor trtl_tensor;
typedef struct trtl_layer trtl_layer;
typedef struct trtl_builder_config trtl_builder_config;
typedef struct trtl_engine trtl_engine;
typedef struct trtl_context trtl_context;

/* ---- errors, logging, memory ----------------------------------------------------------------- */

/* Message of the last failed call on this thread ("" if none). */
const char *trtl_last_error(void);
trtl_status trtl_last_status(void);
const char *trtl_status_name(trtl_status s);
const char *trtl_version(void);
/* Sets this thread's last error (message copied, truncated to trtlite's message size) and returns
 * `s`: for plugin callbacks that have no message argument (get_fields) and language bindings
 * reporting through them.  NULL msg: TRTL_ERR_INVALID_ARGUMENT. */
trtl_status trtl_set_error(trtl_status s, const char *msg);
/* Process-wide log sink for messages outside a build (plugin registry, plan loading).
 * fn NULL: messages at WARNING or worse go to stderr. */
void trtl_set_log_callback(trtl_log_fn fn, void *user);
/* Frees memory trtlite returned to the caller (serialized plans, lists). */
void trtl_free(void *p);
/* Bytes of one element of `t` (0 for a value outside trtl_dtype) and its name ("FLOAT", ...;
 * "UNKNOWN" outside trtl_dtype). */
size_t trtl_dtype_size(trtl_dtype t);
const char *trtl_dtype_name(trtl_dtype t);
/* Bit set of TRTL_CPU_* features of this machine. */
uint32_t trtl_cpu_features(void);
/* The optimized kernels of this build (reference kernels not included), i = 0..count-1: name (as plans and the
 * engine inspector show it), its op, and the TRTL_CPU_* features it needs (it is a candidate on this machine
 * when trtl_cpu_features() has them all).  Out of range: name NULL and TRTL_ERR_INVALID_ARGUMENT. */
int32_t trtl_kernel_count(void);
trtl_status trtl_kernel_info(int32_t i, const char **name, trtl_op *op, uint32_t *cpu_features);
#define TRTL_CPU_SSE41 (1u << 0)
#define TRTL_CPU_AVX (1u << 1)
#define TRTL_CPU_AVX2 (1u << 2)
#define TRTL_CPU_FMA (1u << 3)
#define TRTL_CPU_F16C (1u << 4)
#define TRTL_CPU_AVX512F (1u << 5)
#define TRTL_CPU_AVX512BW (1u << 6)
#define TRTL_CPU_AVX512VNNI (1u << 7)
#define TRTL_CPU_AVX512BF16 (1u << 9) /* vdpbf16ps, vcvtne2ps2bf16 (AVX512_BF16) */
#define TRTL_CPU_AVXVNNI (1u << 8) /* VEX-encoded vpdpbusd on ymm (AVX-VNNI) */
/* Intel AMX: tile registers (and the Linux permission to use them, asked for at detection), tdpbf16ps, tdpbusd */
#define TRTL_CPU_AMX_TILE (1u << 10)
#define TRTL_CPU_AMX_BF16 (1u << 11)
#define TRTL_CPU_AMX_INT8 (1u << 12)

/* ---- network definition ---------------------------------------------------------------------- */

/* implicit_batch != 0: TensorRT 7 semantics, shapes exclude the batch dimension. */
trtl_status trtl_network_create(int implicit_batch, trtl_network **out);
void trtl_network_destroy(trtl_network *net);
int trtl_network_implicit_batch(const trtl_network *net);
trtl_status trtl_network_set_name(trtl_network *net, const char *name);
const char *trtl_network_name(const trtl_network *net);

trtl_status trtl_network_add_input(trtl_network *net, const char *name, trtl_dtype type,
                                   const trtl_dims *dims, trtl_tensor **out);
trtl_status trtl_network_mark_output(trtl_network *net, trtl_tensor *t);
trtl_status trtl_network_unmark_output(trtl_network *net, trtl_tensor *t);

int32_t trtl_network_num_layers(const trtl_network *net);
int32_t trtl_network_num_inputs(const trtl_network *net);
int32_t trtl_network_num_outputs(const trtl_network *net);
trtl_layer *trtl_network_layer(const trtl_network *net, int32_t i);   /* NULL if out of range */
trtl_tensor *trtl_network_input(const trtl_network *net, int32_t i);
trtl_tensor *trtl_network_output(const trtl_network *net, int32_t i);

/* Generic layer creation: `op` with default attributes; set attributes by name (below), then
 * call trtl_layer_validate() to check shapes now (as TensorRT's add_* does); build() checks
 * every layer again. */
trtl_status trtl_network_add_layer(trtl_network *net, trtl_op op, trtl_tensor *const *inputs,
                                   int32_t nb_inputs, trtl_layer **out);
/* Shape/dtype check of a layer against its inputs; the error names the layer. */
trtl_status trtl_layer_validate(trtl_layer *l);
/* Removes a layer whose outputs nothing uses (e.g. one that failed validation). */
trtl_status trtl_network_remove_layer(trtl_network *net, trtl_layer *l);
/* Plugin layer; on success the network owns `plugin` (validated like add_layer + validate). */
trtl_status trtl_network_add_plugin(trtl_network *net, trtl_tensor *const *inputs, int32_t nb_inputs,
                                    trtl_plugin *plugin, trtl_layer **out);
/* Same, with the name messages use for the plugin (NULL: its creator's name), for plugins made
 * without a registered creator (e.g. by language bindings). */
trtl_status trtl_network_add_named_plugin(trtl_network *net, trtl_tensor *const *inputs, int32_t nb_inputs,
                                          trtl_plugin *plugin, const char *plugin_name, trtl_layer **out);
/* Checks the shapes and types of every layer (as build does first); the error names the first
 * failing layer. */
trtl_status trtl_network_validate(trtl_network *net);

/* Convenience wrappers of the generic call for the common layers. */
trtl_status trtl_network_add_convolution(trtl_network *net, trtl_tensor *input, int32_t num_output_maps,
                                         const trtl_dims *kernel_size, trtl_weights kernel,
                                         trtl_weights bias, trtl_layer **out);
trtl_status trtl_network_add_activation(trtl_network *net, trtl_tensor *input, trtl_activation_type type,
                                        trtl_layer **out);
trtl_status trtl_network_add_pooling(trtl_network *net, trtl_tensor *input, trtl_pooling_type type,
                                     const trtl_dims *window, trtl_layer **out);
trtl_status trtl_network_add_fully_connected(trtl_network *net, trtl_tensor *input, int32_t num_outputs,
                                             trtl_weights kernel, trtl_weights bias, trtl_layer **out);
trtl_status trtl_network_add_elementwise(trtl_network *net, trtl_tensor *a, trtl_tensor *b,
                                         trtl_elementwise_op op, trtl_layer **out);
trtl_status trtl_network_add_softmax(trtl_network *net, trtl_tensor *input, trtl_layer **out);
trtl_status trtl_network_add_constant(trtl_network *net, const trtl_dims *shape, trtl_weights w,
                                      trtl_layer **out);

/* Layers. */
trtl_op trtl_layer_op(const trtl_layer *l);   /* TRTL_OP_COUNT for NULL */
const char *trtl_layer_name(const trtl_layer *l);
trtl_status trtl_layer_set_name(trtl_layer *l, const char *name);
int32_t trtl_layer_num_inputs(const trtl_layer *l);
int32_t trtl_layer_num_outputs(const trtl_layer *l);
trtl_tensor *trtl_layer_input(const trtl_layer *l, int32_t i);   /* NULL: unset or out of range */
trtl_tensor *trtl_layer_output(const trtl_layer *l, int32_t i);
trtl_status trtl_layer_set_input(trtl_layer *l, int32_t i, trtl_tensor *t);
trtl_status trtl_layer_set_precision(trtl_layer *l, trtl_dtype type);
trtl_status trtl_layer_set_output_type(trtl_layer *l, int32_t i, trtl_dtype type);
const trtl_plugin *trtl_layer_plugin(const trtl_layer *l);         /* plugin layers only */
/* The precision requested with trtl_layer_set_precision (TRTL_FLOAT when none was; the _COUNT
 * sentinel for NULL), whether one was, and forgetting it. */
trtl_dtype trtl_layer_precision(const trtl_layer *l);
int trtl_layer_precision_is_set(const trtl_layer *l);
trtl_status trtl_layer_reset_precision(trtl_layer *l);
/* Whether trtl_layer_set_output_type was called for output i (0 for NULL or i out of range), and
 * forgetting it (i out of range: TRTL_ERR_INVALID_ARGUMENT). */
int trtl_layer_output_type_is_set(const trtl_layer *l, int32_t i);
trtl_status trtl_layer_reset_output_type(trtl_layer *l, int32_t i);

/* Attributes by their Python name ("stride_nd", "num_groups", "kernel", ...).  Enum and bool
 * attributes are ints; axes bitmasks are ints.  Errors name the layer and the attribute. */
trtl_status trtl_layer_set_int(trtl_layer *l, const char *attr, int64_t v);
trtl_status trtl_layer_get_int(const trtl_layer *l, const char *attr, int64_t *out);
trtl_status trtl_layer_set_float(trtl_layer *l, const char *attr, double v);
trtl_status trtl_layer_get_float(const trtl_layer *l, const char *attr, double *out);
trtl_status trtl_layer_set_dims(trtl_layer *l, const char *attr, const trtl_dims *v);
trtl_status trtl_layer_get_dims(const trtl_layer *l, const char *attr, trtl_dims *out);
/* Weights are borrowed until build (see trtl_weights). */
trtl_status trtl_layer_set_weights(trtl_layer *l, const char *attr, trtl_weights w);
trtl_status trtl_layer_get_weights(const trtl_layer *l, const char *attr, trtl_weights *out);
/* List-of-floats attributes (resize "scales"). */
trtl_status trtl_layer_set_floats(trtl_layer *l, const char *attr, const float *v, int32_t n);
trtl_status trtl_layer_get_floats(const trtl_layer *l, const char *attr, float *v, int32_t *n);
/* Text attributes (IEinsumLayer.equation): set copies `v` (too long: TRTL_ERR_INVALID_ARGUMENT);
 * get returns a pointer into the layer, valid until the attribute is set again or the layer dies. */
trtl_status trtl_layer_set_string(trtl_layer *l, const char *attr, const char *v);
trtl_status trtl_layer_get_string(const trtl_layer *l, const char *attr, const char **out);

/* The attributes each op has (the tables the by-name calls above use), e.g. to generate
 * bindings: a kind says which call sets and gets it. */
typedef enum trtl_attr_kind {
    TRTL_ATTR_KIND_INT = 0,     /* set_int / get_int */
    TRTL_ATTR_KIND_FLOAT = 1,   /* set_float / get_float */
    TRTL_ATTR_KIND_BOOL = 2,    /* set_int / get_int: 0 or 1 */
    TRTL_ATTR_KIND_ENUM = 3,    /* set_int / get_int: a value of the enum named by enum_name */
    TRTL_ATTR_KIND_AXES = 4,    /* set_int / get_int: a bitmask of axes */
    TRTL_ATTR_KIND_DIMS = 5,    /* set_dims / get_dims */
    TRTL_ATTR_KIND_WEIGHTS = 6, /* set_weights / get_weights */
    TRTL_ATTR_KIND_FLOATS = 7,  /* set_floats / get_floats: at most max_count values */
    TRTL_ATTR_KIND_DTYPE = 8,   /* set_int / get_int: a trtl_dtype */
    TRTL_ATTR_KIND_STRING = 9   /* set_string / get_string: text of at most max_count - 1 bytes */
} trtl_attr_kind;
typedef struct trtl_attr_info {
    const char *name;      /* static storage */
    trtl_attr_kind kind;
    const char *enum_name; /* ENUM: TensorRT's Python enum class ("ActivationType", ...); else NULL */
    int32_t max_count;     /* FLOATS: the values get_floats may write; else 0 */
} trtl_attr_info;
/* Number of attributes of `op` users see (0 for a value outside trtl_op). */
int32_t trtl_op_num_attrs(trtl_op op);
/* Attribute i (0..trtl_op_num_attrs(op)-1) of `op`. */
trtl_status trtl_op_attr(trtl_op op, int32_t i, trtl_attr_info *out);
/* Attribute `name` of `op`; TRTL_ERR_NOT_FOUND naming both if it has none of that name. */
trtl_status trtl_op_find_attr(trtl_op op, const char *name, trtl_attr_info *out);

/* Tensors. */
const char *trtl_tensor_name(const trtl_tensor *t);
trtl_status trtl_tensor_set_name(trtl_tensor *t, const char *name);
/* Shape as the user sees it (without batch in implicit-batch networks); -1 for dynamic dims.
 * Fails with the offending layer's message if the graph's shapes do not check. */
trtl_status trtl_tensor_dims(const trtl_tensor *t, trtl_dims *out);
trtl_dtype trtl_tensor_dtype(const trtl_tensor *t);   /* TRTL_DTYPE_COUNT for NULL */
trtl_status trtl_tensor_set_dtype(trtl_tensor *t, trtl_dtype type);   /* network inputs only */
trtl_status trtl_tensor_set_dims(trtl_tensor *t, const trtl_dims *dims);  /* network inputs only */
int trtl_tensor_is_input(const trtl_tensor *t);
int trtl_tensor_is_output(const trtl_tensor *t);
trtl_status trtl_tensor_set_dynamic_range(trtl_tensor *t, float min, float max);
int trtl_tensor_dynamic_range(const trtl_tensor *t, float *min, float *max);   /* 0: none set */

/* ---- builder -------------------------------------------------------------------------------- */

/* Values equal trt.BuilderFlag. */
typedef enum trtl_builder_flag {
    TRTL_FLAG_FP16 = 0, TRTL_FLAG_INT8 = 1, TRTL_FLAG_DEBUG = 2, TRTL_FLAG_GPU_FALLBACK = 3,
    TRTL_FLAG_STRICT_TYPES = 4, TRTL_FLAG_REFIT = 5, TRTL_FLAG_DISABLE_TIMING_CACHE = 6,
    TRTL_FLAG_TF32 = 7, TRTL_FLAG_SPARSE_WEIGHTS = 8, TRTL_FLAG_SAFETY_SCOPE = 9,
    TRTL_FLAG_OBEY_PRECISION_CONSTRAINTS = 10, TRTL_FLAG_PREFER_PRECISION_CONSTRAINTS = 11,
    TRTL_FLAG_DIRECT_IO = 12, TRTL_FLAG_REJECT_EMPTY_ALGORITHMS = 13,
    TRTL_FLAG_BF16 = 18, /* BuilderFlag.BF16: bf16 kernels (vdpbf16ps) where the CPU has AVX512_BF16 */
    TRTL_FLAG_COUNT = 32
} trtl_builder_flag;

trtl_status trtl_builder_config_create(trtl_builder_config **out);
void trtl_builder_config_destroy(trtl_builder_config *cfg);
/* flag: 0..TRTL_FLAG_COUNT-1 (others: TRTL_ERR_INVALID_ARGUMENT). */
trtl_status trtl_builder_config_set_flag(trtl_builder_config *cfg, int flag, int on);
int trtl_builder_config_get_flag(const trtl_builder_config *cfg, int flag);
trtl_status trtl_builder_config_set_workspace(trtl_builder_config *cfg, uint64_t bytes);
uint64_t trtl_builder_config_workspace(const trtl_builder_config *cfg);
/* Implicit-batch networks only: the largest batch an engine will run (default 1). */
trtl_status trtl_builder_config_set_max_batch_size(trtl_builder_config *cfg, int32_t n);
int32_t trtl_builder_config_max_batch_size(const trtl_builder_config *cfg);
/* Timing iterations per candidate kernel during autotuning (0 disables timing; < 0 is an error). */
trtl_status trtl_builder_config_set_avg_timing_iterations(trtl_builder_config *cfg, int32_t n);
int32_t trtl_builder_config_avg_timing_iterations(const trtl_builder_config *cfg);
/* 0: no optimization passes (reference kernels, no fusion); 1..5: all passes (default 3); other
 * values are an error. */
trtl_status trtl_builder_config_set_optimization_level(trtl_builder_config *cfg, int32_t level);
int32_t trtl_builder_config_optimization_level(const trtl_builder_config *cfg);
/* Threads an execution context uses (0: what this process may run on; < 0 is an error). */
trtl_status trtl_builder_config_set_num_threads(trtl_builder_config *cfg, int32_t n);
int32_t trtl_builder_config_num_threads(const trtl_builder_config *cfg);
/* Build-time log sink. */
trtl_status trtl_builder_config_set_logger(trtl_builder_config *cfg, trtl_log_fn fn, void *user);
/* Build progress (TensorRT 10's IProgressMonitor): phases nest ("Building engine", 4 steps,
 * contains "Optimization passes", "Kernel selection" and "Weight packing"); step_complete
 * returning 0 cancels the build (TRTL_ERR_STATE). */
typedef struct trtl_progress_monitor {
    void (*phase_start)(void *user, const char *phase, const char *parent, int32_t num_steps);
    int (*step_complete)(void *user, const char *phase, int32_t step);
    void (*phase_finish)(void *user, const char *phase);
} trtl_progress_monitor;
trtl_status trtl_builder_config_set_progress(trtl_builder_config *cfg, const trtl_progress_monitor *m, void *user);
/* Optimization profiles: shapes for `input` in profile `profile` (profiles are added in order;
 * profile == count adds a new one). */
trtl_status trtl_builder_config_set_shape(trtl_builder_config *cfg, int32_t profile, const char *input,
                                          const trtl_dims *min, const trtl_dims *opt, const trtl_dims *max);
int32_t trtl_builder_config_num_profiles(const trtl_builder_config *cfg);
/* Builder passes (trtlite's own switches; TensorRT has none): the graph rewrites the builder
 * runs, in order, each when builder_optimization_level >= its min_level and switched on.  Every
 * pass is on by default; the environment variable TRTLITE_DISABLE_PASSES="a,b" (read at each
 * build; a name that is no pass fails the build with TRTL_ERR_INVALID_ARGUMENT) switches passes
 * off too.  An engine built with any pass off computes the same values.
 * trtl_builder_pass_info: pass i (0..count-1, others: TRTL_ERR_INVALID_ARGUMENT) as static strings.
 * set/get_pass_enabled: `pass` is a name from pass_info; another name gives TRTL_ERR_NOT_FOUND
 * with a message listing the valid names. */
int32_t trtl_builder_pass_count(void);
trtl_status trtl_builder_pass_info(int32_t i, const char **name, int32_t *min_level, const char **description);
trtl_status trtl_builder_config_set_pass_enabled(trtl_builder_config *cfg, const char *pass, int on);
trtl_status trtl_builder_config_get_pass_enabled(const trtl_builder_config *cfg, const char *pass, int *on);
/* The checks trtl_builder_config_set_shape applies to one input's (min, opt, max), without a
 * config: same rank, 0 <= min <= opt <= max, the element limit; errors name `input`. */
trtl_status trtl_profile_check_shapes(const char *input, const trtl_dims *min, const trtl_dims *opt,
                                      const trtl_dims *max);

/* Timing cache (TensorRT's ITimingCache): how long each candidate kernel took on each node
 * signature, so that a rebuild times nothing and picks the same kernels (byte-identical plans).
 * Entries are keyed by kernel, node signature (op, attributes, dims at the opt shape, epilogue),
 * thread count and CPU identity (vendor, family, model and the TRTL_CPU_* features kernels
 * dispatch on); a build reads only the entries of this CPU and its own thread count.  Format:
 * csrc/builder/timing_cache.h.  Reference counted (a config holds one reference); every call is
 * thread-safe, so builds on several threads may share one cache.
 * create: from serialized bytes (size 0: empty; data may then be NULL).  Corrupt or truncated
 *   bytes: TRTL_ERR_INVALID_PLAN; another format version: TRTL_ERR_VERSION (messages say which).
 * destroy drops one reference (NULL ignored).  serialize: free *data with trtl_free.
 * combine: adds other's entries to c (a key c has keeps c's value).  Without ignore_mismatch,
 *   entries from another CPU make it fail with TRTL_ERR_CPU and add nothing.
 * check: TRTL_ERR_CPU (naming both) if c holds entries from another CPU, or entries but none for
 *   `threads` threads (<= 0: threads not checked); the mismatch set_timing_cache refuses.
 * set_timing_cache: the cache builds with cfg read and fill (NULL: none; builds then share a
 *   process-wide cache).  Without ignore_mismatch, a mismatching cache (check, with cfg's thread
 *   count) is refused with TRTL_ERR_CPU and the config keeps its cache.  The flag
 *   TRTL_FLAG_DISABLE_TIMING_CACHE makes builds neither read nor write any cache.
 * builder_config_timing_cache: borrowed; NULL if none was set. */
typedef struct trtl_timing_cache trtl_timing_cache;
trtl_status trtl_timing_cache_create(const void *data, size_t size, trtl_timing_cache **out);
void trtl_timing_cache_retain(trtl_timing_cache *c);
void trtl_timing_cache_destroy(trtl_timing_cache *c);
trtl_status trtl_timing_cache_serialize(trtl_timing_cache *c, void **data, size_t *size);
trtl_status trtl_timing_cache_combine(trtl_timing_cache *c, trtl_timing_cache *other, int ignore_mismatch);
trtl_status trtl_timing_cache_reset(trtl_timing_cache *c);
int64_t trtl_timing_cache_num_entries(trtl_timing_cache *c);   /* 0 for NULL */
trtl_status trtl_timing_cache_check(trtl_timing_cache *c, int32_t threads);
trtl_status trtl_builder_config_set_timing_cache(trtl_builder_config *cfg, trtl_timing_cache *c, int ignore_mismatch);
trtl_timing_cache *trtl_builder_config_timing_cache(const trtl_builder_config *cfg);

/* Builds an engine.  The network is not modified and may be built again with another config. */
trtl_status trtl_build(const trtl_network *net, const trtl_builder_config *cfg, trtl_engine **out);

/* ---- engine --------------------------------------------------------------------------------- */

/* Serialized plan (format in csrc/serialize/plan.h); free *data with trtl_free. */
trtl_status trtl_engine_serialize(const trtl_engine *e, void **data, size_t *size);
/* Loads a plan; plugins are looked up in the registry. */
trtl_status trtl_engine_deserialize(const void *data, size_t size, trtl_engine **out);
/* A plan load in two halves, so that a caller who gives up its plan buffer peaks at one copy of the
 * weights instead of two: trtl_engine_deserialize_deferred checks the whole plan (checksum, structure,
 * shapes, kernels, plugins) as trtl_engine_deserialize does but leaves the weights and large constants
 * in `data`, which must stay alive and unchanged until trtl_engine_load_weights (or the engine's
 * destruction).  trtl_engine_load_weights copies them out node by node, prepares (packs) each node's
 * kernel and drops the plain copies as trtl_engine_deserialize does; with discard != 0 it also gives
 * every page of `data` it has read back to the system (madvise DONTNEED: the caller's buffer then
 * reads as zeros there and must not be used again).  Until it has run the engine cannot create
 * contexts, serialize, report layer information or refit (TRTL_ERR_STATE); after a failure it reports that
 * failure again.  trtl_engine_deserialize is both halves without discarding. */
trtl_status trtl_engine_deserialize_deferred(const void *data, size_t size, trtl_engine **out);
trtl_status trtl_engine_load_weights(trtl_engine *e, int discard);
/* 1 while trtl_engine_load_weights has not run on a deferred load; bytes of the plan it discarded. */
int trtl_engine_weights_pending(const trtl_engine *e);
uint64_t trtl_engine_plan_discarded(const trtl_engine *e);
/* Engines are reference counted so that contexts keep theirs alive. */
void trtl_engine_retain(trtl_engine *e);
void trtl_engine_destroy(trtl_engine *e);

/* The name of the network it was built from (trtl_network_name), kept in plans. */
const char *trtl_engine_name(const trtl_engine *e);
int trtl_engine_implicit_batch(const trtl_engine *e);
int32_t trtl_engine_max_batch_size(const trtl_engine *e);
int32_t trtl_engine_num_io(const trtl_engine *e);
const char *trtl_engine_io_name(const trtl_engine *e, int32_t i);
int32_t trtl_engine_io_index(const trtl_engine *e, const char *name);  /* -1 if absent (or e NULL) */
int trtl_engine_io_is_input(const trtl_engine *e, int32_t i);
/* Build-time shape (user view; -1 dynamic). */
trtl_dims trtl_engine_io_dims(const trtl_engine *e, int32_t i);
trtl_dtype trtl_engine_io_dtype(const trtl_engine *e, int32_t i);  /* TRTL_FLOAT if i is out of range */
trtl_status trtl_engine_profile_shape(const trtl_engine *e, int32_t profile, const char *input,
                                      trtl_dims *min, trtl_dims *opt, trtl_dims *max);
int32_t trtl_engine_num_profiles(const trtl_engine *e);
/* Engine steps after fusion: name (fused layer names joined by " + "), op, kernel name. */
int32_t trtl_engine_num_layers(const trtl_engine *e);
const char *trtl_engine_layer_name(const trtl_engine *e, int32_t i);
const char *trtl_engine_layer_kernel(const trtl_engine *e, int32_t i);
/* The precision step i computes in: a trtl_dtype, or TRTL_BF16 (-1 for i out of range). */
int32_t trtl_engine_layer_precision(const trtl_engine *e, int32_t i);
trtl_op trtl_engine_layer_op(const trtl_engine *e, int32_t i);   /* TRTL_OP_COUNT if out of range */
/* JSON description of every step (inputs, outputs, shapes, fused epilogue, kernel); trtl_free. */
trtl_status trtl_engine_layer_info_json(const trtl_engine *e, char **json);
uint64_t trtl_engine_device_memory_size(const trtl_engine *e);  /* activation bytes at max shapes */

/* ---- execution context ------------------------------------------------------------------------ */

trtl_status trtl_context_create(trtl_engine *e, trtl_context **out);
void trtl_context_destroy(trtl_context *c);
/* Selects the optimization profile whose ranges set_input_shape checks (default 0). */
trtl_status trtl_context_set_profile(trtl_context *c, int32_t profile);
int32_t trtl_context_profile(const trtl_context *c);   /* -1 for NULL */
/* Concrete shape of a dynamic input (user view). */
trtl_status trtl_context_set_input_shape(trtl_context *c, const char *name, const trtl_dims *dims);
/* Shape of any I/O tensor for the current inputs (user view). */
trtl_status trtl_context_tensor_shape(trtl_context *c, const char *name, trtl_dims *out);
/* Host address of an I/O tensor; must hold volume(shape) elements of the tensor's dtype. */
trtl_status trtl_context_set_tensor_address(trtl_context *c, const char *name, void *addr);
void *trtl_context_tensor_address(const trtl_context *c, const char *name);
/* Resolves shapes, activation memory and scratch for the current inputs (and batch size for
 * implicit-batch engines) without running; execute() does it too when needed. */
trtl_status trtl_context_resolve(trtl_context *c, int32_t batch_size);
/* Full current dims of I/O tensor `i` (batch included) after resolve(). */
trtl_status trtl_context_io_dims(const trtl_context *c, int32_t i, trtl_dims *out);
/* Runs with the addresses set above.  batch_size: implicit-batch engines (<= max batch); ignored
 * (pass 0) for explicit-batch ones. */
trtl_status trtl_context_execute(trtl_context *c, int32_t batch_size);
/* Runs with bindings in engine I/O order, for this call only (set_tensor_address addresses are
 * left as they were). */
trtl_status trtl_context_execute_bindings(trtl_context *c, int32_t batch_size, void *const *bindings);
/* Per-step timing callback (ms), called after each step when set.  Wall time, or the calling thread's CPU time
 * when the environment has TRTL_PROFILE_CLOCK=thread as set_profiler runs (one-thread profiles on a loaded machine). */
typedef void (*trtl_profiler_fn)(void *user, const char *layer_name, float ms);
trtl_status trtl_context_set_profiler(trtl_context *c, trtl_profiler_fn fn, void *user);
/* Replaces the context's thread pool: n threads (the caller included), 0 for what this process
 * may run on; at most TRTL_MAX_THREADS are started.  Not while the context executes (one caller
 * at a time: the pool in use would be destroyed). */
trtl_status trtl_context_set_num_threads(trtl_context *c, int32_t n);
#define TRTL_MAX_THREADS 256
/* Threads of the context's pool, the caller included (0 for NULL). */
int32_t trtl_context_num_threads(const trtl_context *c);
/* Bytes the context holds for an execution at the current input shapes (resolving them first): its activation
 * arena and its scratch buffer (kernels' per-thread slots, sized for the context's pool; plugin workspace).
 * TRTL_ERR_STATE while an input shape is not set. */
trtl_status trtl_context_memory_size(trtl_context *c, uint64_t *arena_bytes, uint64_t *scratch_bytes);

/* ---- plugin fields (the encoding plans use; IPluginV2.serialize()) --------------------------- */

/* Bytes of one element of a field of type `type` (trtl_plugin_field_type; 0 for other values). */
size_t trtl_plugin_field_elem_size(int32_t type);
/* The fields plugin `p` reports (get_fields), checked as a plan writer checks them and encoded as
 * plans store them; free *data with trtl_free.  Errors name the plugin by its creator. */
trtl_status trtl_plugin_encode_fields(const trtl_plugin *p, void **data, size_t *size);
/* Decodes trtl_plugin_encode_fields bytes (bounds-checked; trailing bytes ignored).  `out` points
 * into *storage, one allocation to free with trtl_free. */
trtl_status trtl_plugin_decode_fields(const void *data, size_t size, trtl_plugin_fields *out, void **storage);

/* ---- refit (engines built with TRTL_FLAG_REFIT; engine/refit.c) -------------------------------
 * Such an engine keeps every weighted layer's weights where the layer put them (the builder skips
 * the passes that fold or quantize weights: fold_scale, fuse_qdq), and takes new values for them.
 * Roles equal trt.WeightsRole: 0 KERNEL (convolution, deconvolution, fully connected), 1 BIAS
 * (same layers, when built with one), 2 SHIFT and 3 SCALE (scale layers, when built non-empty), 4 CONSTANT
 * (a FLOAT constant tensor of more than one element that a layer reads; `layer` is the tensor's name).
 * Not thread-safe with execution: no context of the engine may run during trtl_engine_refit (as
 * TensorRT requires); contexts see the new weights from their next run. */
int trtl_engine_refittable(const trtl_engine *e);
/* Number of refittable weights (0 for a non-refittable engine). */
int32_t trtl_engine_refit_count(const trtl_engine *e);
/* The i-th refittable weights: the layer's name (copied into `layer`, at most layer_cap bytes with
 * the NUL), role and element count. */
trtl_status trtl_engine_refit_info(const trtl_engine *e, int32_t i, char *layer, size_t layer_cap, int32_t *role,
                                   int64_t *count);
/* Checks that `layer` has refittable weights of `role` holding `count` elements (an error naming
 * the layer, the role and what it has otherwise); nothing changes. */
trtl_status trtl_engine_refit_check(const trtl_engine *e, const char *layer, int32_t role, int64_t count);
/* Replaces them with `w` (FLOAT, the built count) and re-runs the kernel's weight preparation
 * (packing); on failure the engine keeps its old weights. */
trtl_status trtl_engine_refit(trtl_engine *e, const char *layer, int32_t role, const trtl_weights *w);
/* Names of weights (TensorRT's set_weights_name; the ONNX parser names them after their initializers): records
 * that weights `name` are (layer, role) of the network; the builder copies the records into the engine and plans
 * keep them (version 7).  No tab or newline in any of the strings. */
trtl_status trtl_network_add_weights_name(trtl_network *net, const char *layer, int32_t role, const char *name);
/* The engine's records, one "layer\trole\tname\n" line each ("" when none; owned by the engine). */
const char *trtl_engine_weights_names(const trtl_engine *e);

/* ---- shape tensors (TensorRT 10's IShapeLayer and shape-tensor inputs) ----------------------- */

/* TensorRT's ITensor.is_shape_tensor / is_execution_tensor for t in its network's current graph. */
trtl_status trtl_tensor_roles(trtl_tensor *t, int *is_shape, int *is_execution);
/* Value ranges of a shape-tensor network input in optimization profile `profile` (as
 * trtl_builder_config_set_shape; values as a vector in a trtl_dims, nb_dims = the input's volume,
 * at most TRTL_MAX_DIMS): IOptimizationProfile.set_shape_input. */
trtl_status trtl_builder_config_set_shape_values(trtl_builder_config *cfg, int32_t profile, const char *input,
                                                 const trtl_dims *min, const trtl_dims *opt, const trtl_dims *max);
/* Is I/O i a shape-tensor input (its values, read from its tensor address in host memory when
 * shapes are resolved, decide other tensors' shapes)?  ICudaEngine.is_shape_inference_io. */
int trtl_engine_io_is_shape(const trtl_engine *e, int32_t i);
/* The value ranges of a shape-tensor input in a profile (get_tensor_profile_values). */
trtl_status trtl_engine_profile_values(const trtl_engine *e, int32_t profile, const char *input, trtl_dims *min,
                                       trtl_dims *opt, trtl_dims *max);

/* Control flow (ILoop / IIfConditional): a new loop or conditional id of this network.  Its boundary
 * layers (TRTL_OP_RECURRENCE, ITERATOR, TRIP_LIMIT, LOOP_OUTPUT; CONDITION, CONDITIONAL_INPUT,
 * CONDITIONAL_OUTPUT) are added with trtl_network_add_layer and name it in their "owner" attribute;
 * the layers between them belong to it by data flow (docs/ARCHITECTURE.md, "Control flow"). */
trtl_status trtl_network_new_control_flow(trtl_network *net, int32_t *id);

/* Builds as trtl_build does and serializes the engine into a plan (free *data with trtl_free); the kernels' weight
 * preparation (packing), which a plan does not store and trtl_engine_deserialize redoes, is skipped, so a build
 * whose timings all come from the timing cache does little more than lowering, passes and serializing
 * (builder.build_serialized_network). */
trtl_status trtl_build_serialized(const trtl_network *net, const trtl_builder_config *cfg, void **data, size_t *size);
/* ---- data-dependent output shapes (INonZeroLayer, INMSLayer; TensorRT 10's IOutputAllocator) ------- */

/* An output allocator (IOutputAllocator) for one output whose shape is known only after execution.
 * `reallocate` is called once per execution, after the steps ran, with the bytes the output needs
 * (`size`, at least 1 even for an empty tensor) and the address given last time (or NULL); it returns
 * host memory of at least `size` bytes aligned to `alignment`, or NULL with a message in msg (msg_len
 * bytes) to fail the execution.  The context copies the output there, then calls `notify_shape` with
 * the real dims (may be NULL).  Both run on the executing thread, inside trtl_context_execute*. */
typedef struct trtl_output_allocator {
    void *(*reallocate)(void *user, const char *tensor, void *current, uint64_t size, uint64_t alignment, char *msg,
                        size_t msg_len);
    void (*notify_shape)(void *user, const char *tensor, const trtl_dims *dims);
    void *user;
} trtl_output_allocator;
/* Sets (a copy of *a) or clears (a NULL) the allocator of output `name`.  Data-dependent outputs need
 * an allocator or a buffer of trtl_context_max_output_size bytes (set_tensor_address / bindings); other
 * outputs accept an allocator too (called with their resolved size). */
trtl_status trtl_context_set_output_allocator(trtl_context *c, const char *name, const trtl_output_allocator *a);
/* Does output i have a data-dependent shape (NonZero / NMS upstream: -1 in the engine's dims until
 * executed)? */
int trtl_engine_io_is_data_dependent(const trtl_engine *e, int32_t i);
/* Bytes output `name` can need at the current input shapes (the upper bound of a data-dependent one;
 * IExecutionContext.get_max_output_size). */
trtl_status trtl_context_max_output_size(trtl_context *c, const char *name, int64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif /* TRTLITE_H */
