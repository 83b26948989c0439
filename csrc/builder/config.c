/* config.c -- the builder configuration object. */
#include <stdlib.h>
#include <string.h>

#include "builder/config.h"
#include "builder/passes/passes.h"
#include "core/status.h"
#include "core/dims.h"

trtl_status trtl_builder_config_create(trtl_builder_config **out)
{
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    trtl_builder_config *c = calloc(1, sizeof *c);
    if (!c)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    c->workspace = (uint64_t)1 << 30;
    c->max_batch_size = 1;
    c->avg_timing_iterations = 1;
    c->optimization_level = 3;
    *out = c;
    return TRTL_OK;
}

void trtl_builder_config_destroy(trtl_builder_config *cfg)
{
    if (!cfg)
        return;
    for (int32_t p = 0; p < cfg->n_profiles; p++) {
        for (int32_t i = 0; i < cfg->profiles[p].n; i++)
            free(cfg->profiles[p].entries[i].input);
        free(cfg->profiles[p].entries);
    }
    free(cfg->profiles);
    trtl_timing_cache_destroy(cfg->timing_cache);
    free(cfg);
}

trtl_status trtl_builder_config_set_flag(trtl_builder_config *cfg, int flag, int on)
{
    TRTL_CHECK_ARG(cfg);
    trtl_clear_error();
    if (flag < 0 || flag >= TRTL_FLAG_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "builder flag %d is not a BuilderFlag (0..%d)", flag,
                          TRTL_FLAG_COUNT - 1);
    if (on)
        cfg->flags |= 1u << flag;
    else
        cfg->flags &= ~(1u << flag);
    return TRTL_OK;
}

int trtl_builder_config_get_flag(const trtl_builder_config *cfg, int flag)
{
    TRTL_NULL_GIVES(cfg, 0);
    return flag >= 0 && flag < TRTL_FLAG_COUNT && (cfg->flags >> flag) & 1u;
}

trtl_status trtl_builder_config_set_workspace(trtl_builder_config *cfg, uint64_t bytes)
{
    TRTL_CHECK_ARG(cfg);
    cfg->workspace = bytes;
    return TRTL_OK;
}
uint64_t trtl_builder_config_workspace(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, 0);
    return cfg->workspace;
}

trtl_status trtl_builder_config_set_max_batch_size(trtl_builder_config *cfg, int32_t n)
{
    TRTL_CHECK_ARG(cfg);
    trtl_clear_error();
    if (n < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "max_batch_size must be >= 1, got %d", (int)n);
    cfg->max_batch_size = n;
    return TRTL_OK;
}

int32_t trtl_builder_config_max_batch_size(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, 0);
    return cfg->max_batch_size;
}

trtl_status trtl_builder_config_set_avg_timing_iterations(trtl_builder_config *cfg, int32_t n)
{
    TRTL_CHECK_ARG(cfg);
    trtl_clear_error();
    if (n < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "avg_timing_iterations must be >= 0 (0 disables timing), got %d",
                          (int)n);
    cfg->avg_timing_iterations = n;
    return TRTL_OK;
}
int32_t trtl_builder_config_avg_timing_iterations(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, 0);
    return cfg->avg_timing_iterations;
}

trtl_status trtl_builder_config_set_optimization_level(trtl_builder_config *cfg, int32_t level)
{
    TRTL_CHECK_ARG(cfg);
    trtl_clear_error();
    if (level < 0 || level > 5)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "builder_optimization_level must be in 0..5, got %d", (int)level);
    cfg->optimization_level = level;
    return TRTL_OK;
}
int32_t trtl_builder_config_optimization_level(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, 0);
    return cfg->optimization_level;
}

trtl_status trtl_builder_config_set_num_threads(trtl_builder_config *cfg, int32_t n)
{
    TRTL_CHECK_ARG(cfg);
    trtl_clear_error();
    if (n < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "num_threads must be >= 0 (0: every CPU this process may use), got %d",
                          (int)n);
    cfg->num_threads = n;
    return TRTL_OK;
}

/* Leaves the last error alone: bindings reset the logger after a failed build and report the
 * build's message afterwards. */
trtl_status trtl_builder_config_set_logger(trtl_builder_config *cfg, trtl_log_fn fn, void *user)
{
    TRTL_CHECK_ARG(cfg);
    cfg->log_fn = fn;
    cfg->log_user = user;
    return TRTL_OK;
}

trtl_status trtl_config_check_profile_shapes(const char *input, const trtl_dims *min, const trtl_dims *opt,
                                             const trtl_dims *max)
{
    char b[TRTL_DIMS_STR_MAX];
    if (min->nb_dims != opt->nb_dims || min->nb_dims != max->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "optimization profile for '%s': min, opt and max must have the same rank",
                          input);
    if (min->nb_dims < 0 || min->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_SHAPE, "optimization profile for '%s': %d dims (at most %d)", input,
                          (int)min->nb_dims, TRTL_MAX_DIMS);
    for (int32_t i = 0; i < min->nb_dims; i++)
        if (min->d[i] < 0 || min->d[i] > opt->d[i] || opt->d[i] > max->d[i])
            return trtl_error(TRTL_ERR_SHAPE,
                              "optimization profile for '%s': need 0 <= min <= opt <= max in every dimension "
                              "(dimension %d: %lld, %lld, %lld)",
                              input, (int)i, (long long)min->d[i], (long long)opt->d[i], (long long)max->d[i]);
    /* The same limit as for a network input's own shape (add_input): activations are planned at
     * the max shapes, so a larger max would only fail later, at context creation. */
    if (trtl_volume_too_large(max))
        return trtl_error(TRTL_ERR_SHAPE, "optimization profile for '%s': max shape %s has more than 2^40 elements%s",
                          input, trtl_dims_str(max, b, sizeof b),
                          trtl_volume(max) < 0 ? " (its volume overflows 64 bits)" : "");
    return TRTL_OK;
}

static trtl_status profile_entry(trtl_builder_config *cfg, int32_t profile, const char *input,
                                 trtl_profile_entry **out);

/* The input name and profile index checks set_shape and set_shape_values share (the NULL checks stay in
 * each, so their messages name the public function). */
static trtl_status check_profile_input(const trtl_builder_config *cfg, int32_t profile, const char *input)
{
    if (!input || !*input)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "optimization profile: input name is empty");
    if (profile < 0 || profile > cfg->n_profiles)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "optimization profile index %d out of range (have %d)",
                          (int)profile, (int)cfg->n_profiles);
    return TRTL_OK;
}

trtl_status trtl_builder_config_set_shape(trtl_builder_config *cfg, int32_t profile, const char *input,
                                          const trtl_dims *min, const trtl_dims *opt, const trtl_dims *max)
{
    TRTL_CHECK_ARG(cfg);
    TRTL_CHECK_ARG(min);
    TRTL_CHECK_ARG(opt);
    TRTL_CHECK_ARG(max);
    trtl_clear_error();
    TRTL_TRY(check_profile_input(cfg, profile, input));
    TRTL_TRY(trtl_config_check_profile_shapes(input, min, opt, max));
    trtl_profile_entry *e;
    TRTL_TRY(profile_entry(cfg, profile, input, &e));
    e->min = *min;
    e->opt = *opt;
    e->max = *max;
    e->has_shape = 1;
    return TRTL_OK;
}

trtl_status trtl_builder_config_set_shape_values(trtl_builder_config *cfg, int32_t profile, const char *input,
                                                 const trtl_dims *min, const trtl_dims *opt, const trtl_dims *max)
{
    TRTL_CHECK_ARG(cfg);
    TRTL_CHECK_ARG(min);
    TRTL_CHECK_ARG(opt);
    TRTL_CHECK_ARG(max);
    trtl_clear_error();
    TRTL_TRY(check_profile_input(cfg, profile, input));
    if (min->nb_dims != opt->nb_dims || min->nb_dims != max->nb_dims || min->nb_dims < 0 ||
        min->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "optimization profile: shape-input values for '%s': min, opt and "
                          "max must have the same number of values (0 to %d)", input, TRTL_MAX_DIMS);
    for (int32_t i = 0; i < min->nb_dims; i++)
        if (min->d[i] > opt->d[i] || opt->d[i] > max->d[i] || min->d[i] < INT32_MIN || max->d[i] > INT32_MAX)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "optimization profile: shape-input values for '%s': need "
                              "min <= opt <= max (INT32) for every value, value %d is %lld, %lld, %lld", input, (int)i,
                              (long long)min->d[i], (long long)opt->d[i], (long long)max->d[i]);
    trtl_profile_entry *e;
    TRTL_TRY(profile_entry(cfg, profile, input, &e));
    e->vmin = *min;
    e->vopt = *opt;
    e->vmax = *max;
    e->has_values = 1;
    return TRTL_OK;
}

/* The entry of `input` in `profile` (a new zeroed one if none; profile == count adds a profile). */
static trtl_status profile_entry(trtl_builder_config *cfg, int32_t profile, const char *input,
                                 trtl_profile_entry **out)
{
    if (profile == cfg->n_profiles) {
        trtl_config_profile *np = realloc(cfg->profiles, sizeof *np * (size_t)(cfg->n_profiles + 1));
        if (!np)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        cfg->profiles = np;
        memset(&np[cfg->n_profiles], 0, sizeof *np);
        cfg->n_profiles++;
    }
    trtl_config_profile *p = &cfg->profiles[profile];
    for (int32_t i = 0; i < p->n; i++)
        if (strcmp(p->entries[i].input, input) == 0) {
            *out = &p->entries[i];
            return TRTL_OK;
        }
    if (p->n == p->cap) {
        int32_t nc = p->cap ? p->cap * 2 : 4;
        trtl_profile_entry *ne = realloc(p->entries, sizeof *ne * (size_t)nc);
        if (!ne)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        p->entries = ne;
        p->cap = nc;
    }
    trtl_profile_entry *e = &p->entries[p->n];
    memset(e, 0, sizeof *e);
    size_t len = strlen(input) + 1;
    e->input = malloc(len);
    if (!e->input)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(e->input, input, len);
    p->n++;
    *out = e;
    return TRTL_OK;
}

int32_t trtl_builder_config_num_profiles(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, 0);
    return cfg->n_profiles;
}

trtl_status trtl_builder_config_set_progress(trtl_builder_config *cfg, const trtl_progress_monitor *m, void *user)
{
    TRTL_CHECK_ARG(cfg);
    cfg->progress = m;
    cfg->progress_user = user;
    return TRTL_OK;
}

void trtl_progress_start(const trtl_builder_config *cfg, const char *phase, const char *parent, int32_t n)
{
    if (cfg->progress && cfg->progress->phase_start)
        cfg->progress->phase_start(cfg->progress_user, phase, parent, n);
}

int trtl_progress_step(const trtl_builder_config *cfg, const char *phase, int32_t step)
{
    if (cfg->progress && cfg->progress->step_complete)
        return cfg->progress->step_complete(cfg->progress_user, phase, step);
    return 1;
}

void trtl_progress_finish(const trtl_builder_config *cfg, const char *phase)
{
    if (cfg->progress && cfg->progress->phase_finish)
        cfg->progress->phase_finish(cfg->progress_user, phase);
}

/* ---- builder pass switches (table in passes/pass_table.c) ---- */

int32_t trtl_builder_pass_count(void)
{
    return TRTL_PASS_COUNT;
}

trtl_status trtl_builder_pass_info(int32_t i, const char **name, int32_t *min_level, const char **description)
{
    TRTL_CHECK_ARG(name);
    TRTL_CHECK_ARG(min_level);
    TRTL_CHECK_ARG(description);
    trtl_clear_error();
    if (i < 0 || i >= TRTL_PASS_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "builder pass index %d out of range (0..%d)", (int)i,
                          TRTL_PASS_COUNT - 1);
    *name = trtl_passes[i].name;
    *min_level = trtl_passes[i].min_level;
    *description = trtl_passes[i].description;
    return TRTL_OK;
}

trtl_status trtl_builder_config_set_pass_enabled(trtl_builder_config *cfg, const char *pass, int on)
{
    TRTL_CHECK_ARG(cfg);
    TRTL_CHECK_ARG(pass);
    trtl_clear_error();
    int32_t id = trtl_pass_find(pass);
    if (id < 0)
        return trtl_pass_unknown(TRTL_ERR_NOT_FOUND, "set_pass_enabled", pass);
    if (on)
        cfg->passes_off &= ~((uint64_t)1 << id);
    else
        cfg->passes_off |= (uint64_t)1 << id;
    return TRTL_OK;
}

trtl_status trtl_builder_config_get_pass_enabled(const trtl_builder_config *cfg, const char *pass, int *on)
{
    TRTL_CHECK_ARG(cfg);
    TRTL_CHECK_ARG(pass);
    TRTL_CHECK_ARG(on);
    trtl_clear_error();
    int32_t id = trtl_pass_find(pass);
    if (id < 0)
        return trtl_pass_unknown(TRTL_ERR_NOT_FOUND, "get_pass_enabled", pass);
    *on = !((cfg->passes_off >> id) & 1u);
    return TRTL_OK;
}

int32_t trtl_builder_config_num_threads(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, 0);
    return cfg->num_threads;
}

trtl_status trtl_profile_check_shapes(const char *input, const trtl_dims *min, const trtl_dims *opt,
                                      const trtl_dims *max)
{
    TRTL_CHECK_ARG(input);
    TRTL_CHECK_ARG(min);
    TRTL_CHECK_ARG(opt);
    TRTL_CHECK_ARG(max);
    trtl_clear_error();
    return trtl_config_check_profile_shapes(input, min, opt, max);
}
