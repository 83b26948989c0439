/* config.h -- builder configuration (internal layout). */
#ifndef TRTL_BUILDER_CONFIG_H
#define TRTL_BUILDER_CONFIG_H

#include "trtlite/trtlite.h"

typedef struct trtl_profile_entry {
    char *input;
    trtl_dims min, opt, max; /* user view */
    int has_shape;           /* min/opt/max were set (set_shape) */
    int has_values;          /* a shape-tensor input's value ranges were set (set_shape_input) */
    trtl_dims vmin, vopt, vmax;
} trtl_profile_entry;

typedef struct trtl_config_profile {
    trtl_profile_entry *entries;
    int32_t n, cap;
} trtl_config_profile;

struct trtl_builder_config {
    uint32_t flags;
    uint64_t workspace;
    int32_t max_batch_size;
    int32_t avg_timing_iterations;
    int32_t optimization_level;
    int32_t num_threads;
    trtl_log_fn log_fn;
    void *log_user;
    const trtl_progress_monitor *progress;
    void *progress_user;
    trtl_config_profile *profiles;
    int32_t n_profiles;
    uint64_t passes_off; /* bit i: builder pass i (passes/passes.h) switched off */
    trtl_timing_cache *timing_cache; /* one reference held (builder/timing_cache.c), or NULL */
};

/* min/opt/max of one input of an optimization profile: same rank, 0 <= min <= opt <= max, and at
 * most 2^40 elements at max.  The error names the input.  (Also used by the Python profile's
 * set_shape, so that a bad shape fails where it is given.) */
trtl_status trtl_config_check_profile_shapes(const char *input, const trtl_dims *min, const trtl_dims *opt,
                                             const trtl_dims *max);

/* Progress reporting helpers (no-ops without a monitor); step returns 0 when cancelled. */
void trtl_progress_start(const trtl_builder_config *cfg, const char *phase, const char *parent, int32_t n);
int trtl_progress_step(const trtl_builder_config *cfg, const char *phase, int32_t step);
void trtl_progress_finish(const trtl_builder_config *cfg, const char *phase);

#endif
