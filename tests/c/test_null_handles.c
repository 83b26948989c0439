/*
 * test_null_handles.c -- every function of the public C API (trtlite.h) given a NULL handle or a
 * NULL required pointer: calls that return trtl_status fail with TRTL_ERR_INVALID_ARGUMENT and a
 * message naming the function, accessors return the fallback trtlite.h documents, nothing
 * crashes.  Built against build/libtrtlite.so only (public header) by tests/test_c_api.py, which
 * also checks that every function declared in trtlite.h is called here.
 *
 * Prints one line per failed check and "OK" at the end when all passed; exit status 1 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "trtlite/trtlite.h"

static int failures;

/* A status call must fail with TRTL_ERR_INVALID_ARGUMENT and a message naming the function. */
static void expect_invalid(trtl_status s, const char *fn, const char *call)
{
    const char *msg = trtl_last_error();
    if (s != TRTL_ERR_INVALID_ARGUMENT) {
        printf("FAIL %s: status %s, expected INVALID_ARGUMENT\n", call, trtl_status_name(s));
        failures++;
    } else if (!msg || !strstr(msg, fn)) {
        printf("FAIL %s: message '%s' does not name %s\n", call, msg ? msg : "(null)", fn);
        failures++;
    }
}

static void expect_true(int ok, const char *call)
{
    if (!ok) {
        printf("FAIL %s\n", call);
        failures++;
    }
}

#define INVALID(fn, ...) expect_invalid(fn(__VA_ARGS__), #fn, #fn "(" #__VA_ARGS__ ")")
#define GIVES(expr, value) expect_true((expr) == (value), #expr " == " #value)

static void noop_log(void *user, trtl_severity sev, const char *msg)
{
    (void)user;
    (void)sev;
    (void)msg;
}

static void noop_prof(void *user, const char *layer, float ms)
{
    (void)user;
    (void)layer;
    (void)ms;
}

int main(void)
{
    trtl_dims d = {2, {2, 3}};
    trtl_dims out_dims;
    int out_i = 0;
    trtl_weights w = {TRTL_FLOAT, NULL, 0};
    trtl_tensor *t = NULL;
    trtl_layer *l = NULL;
    trtl_engine *e = NULL;
    trtl_context *c = NULL;
    trtl_builder_config *cfg = NULL;
    trtl_network *net = NULL;
    int64_t i64;
    double f64;
    float f32[8], lo, hi;
    int32_t n32;
    void *data;
    size_t size;
    char *json;
    const char *name;
    int on;

    /* Calls without a handle still behave. */
    expect_true(trtl_last_error() != NULL && trtl_status_name(TRTL_ERR_INVALID_ARGUMENT) != NULL &&
                    trtl_version() != NULL, "trtl_last_error/trtl_status_name/trtl_version");
    (void)trtl_last_status();
    (void)trtl_cpu_features();
    {
        const char *kname = "x";
        trtl_op kop;
        uint32_t kneed;
        INVALID(trtl_kernel_info, -1, &kname, &kop, &kneed);
        expect_true(kname == NULL, "trtl_kernel_info(-1) clears the name");
        INVALID(trtl_kernel_info, trtl_kernel_count(), NULL, NULL, NULL);
        expect_true(trtl_kernel_count() > 0 && trtl_kernel_info(0, &kname, &kop, &kneed) == TRTL_OK && kname != NULL,
                    "trtl_kernel_info(0)");
    }
    trtl_set_log_callback(noop_log, NULL);
    trtl_set_log_callback(NULL, NULL);
    trtl_free(NULL);
    INVALID(trtl_set_error, TRTL_ERR_STATE, NULL);
    expect_true(trtl_set_error(TRTL_ERR_STATE, "why") == TRTL_ERR_STATE && strcmp(trtl_last_error(), "why") == 0,
                "trtl_set_error sets the message");
    GIVES(trtl_plugin_field_elem_size(-1), 0);
    INVALID(trtl_plugin_encode_fields, NULL, &data, &size);
    {
        trtl_plugin_fields pf;
        void *storage;
        INVALID(trtl_plugin_decode_fields, NULL, 4, &pf, &storage);
        INVALID(trtl_plugin_decode_fields, "abcd", 4, NULL, &storage);
        INVALID(trtl_plugin_decode_fields, "abcd", 4, &pf, NULL);
    }
    GIVES(trtl_dtype_size(TRTL_DTYPE_COUNT), 0);
    expect_true(strcmp(trtl_dtype_name(TRTL_DTYPE_COUNT), "UNKNOWN") == 0 && trtl_dtype_size(TRTL_FLOAT) == 4 &&
                    strcmp(trtl_dtype_name(TRTL_INT8), "INT8") == 0,
                "trtl_dtype_size/trtl_dtype_name");

    /* ---- network ---- */
    INVALID(trtl_network_create, 0, NULL);
    trtl_network_destroy(NULL);
    GIVES(trtl_network_implicit_batch(NULL), 0);
    INVALID(trtl_network_set_name, NULL, "n");
    GIVES(trtl_network_name(NULL), NULL);
    INVALID(trtl_network_add_input, NULL, "x", TRTL_FLOAT, &d, &t);
    INVALID(trtl_network_mark_output, NULL, t);
    INVALID(trtl_network_unmark_output, NULL, t);
    GIVES(trtl_network_num_layers(NULL), 0);
    GIVES(trtl_network_num_inputs(NULL), 0);
    GIVES(trtl_network_num_outputs(NULL), 0);
    GIVES(trtl_network_layer(NULL, 0), NULL);
    GIVES(trtl_network_input(NULL, 0), NULL);
    GIVES(trtl_network_output(NULL, 0), NULL);
    INVALID(trtl_network_add_layer, NULL, TRTL_OP_ACTIVATION, &t, 1, &l);
    INVALID(trtl_layer_validate, NULL);
    INVALID(trtl_network_remove_layer, NULL, l);
    INVALID(trtl_network_add_plugin, NULL, &t, 1, NULL, &l);
    INVALID(trtl_network_add_named_plugin, NULL, &t, 1, NULL, "p", &l);
    INVALID(trtl_network_validate, NULL);
    INVALID(trtl_network_add_convolution, NULL, t, 1, &d, w, w, &l);
    INVALID(trtl_network_add_activation, NULL, t, TRTL_ACT_RELU, &l);
    INVALID(trtl_network_add_pooling, NULL, t, TRTL_POOL_MAX, &d, &l);
    INVALID(trtl_network_add_fully_connected, NULL, t, 1, w, w, &l);
    INVALID(trtl_network_add_elementwise, NULL, t, t, TRTL_EW_SUM, &l);
    INVALID(trtl_network_add_softmax, NULL, t, &l);
    INVALID(trtl_network_add_constant, NULL, &d, w, &l);

    /* ---- layers ---- */
    GIVES(trtl_layer_op(NULL), TRTL_OP_COUNT);
    GIVES(trtl_layer_name(NULL), NULL);
    INVALID(trtl_layer_set_name, NULL, "l");
    GIVES(trtl_layer_num_inputs(NULL), 0);
    GIVES(trtl_layer_num_outputs(NULL), 0);
    GIVES(trtl_layer_input(NULL, 0), NULL);
    GIVES(trtl_layer_output(NULL, 0), NULL);
    INVALID(trtl_layer_set_input, NULL, 0, t);
    INVALID(trtl_layer_set_precision, NULL, TRTL_FLOAT);
    INVALID(trtl_layer_set_output_type, NULL, 0, TRTL_FLOAT);
    GIVES(trtl_layer_plugin(NULL), NULL);
    GIVES(trtl_layer_precision(NULL), TRTL_DTYPE_COUNT);
    GIVES(trtl_layer_precision_is_set(NULL), 0);
    INVALID(trtl_layer_reset_precision, NULL);
    GIVES(trtl_layer_output_type_is_set(NULL, 0), 0);
    INVALID(trtl_layer_reset_output_type, NULL, 0);
    INVALID(trtl_layer_set_int, NULL, "num_groups", 1);
    INVALID(trtl_layer_get_int, NULL, "num_groups", &i64);
    INVALID(trtl_layer_set_float, NULL, "alpha", 1.0);
    INVALID(trtl_layer_get_float, NULL, "alpha", &f64);
    INVALID(trtl_layer_set_dims, NULL, "stride_nd", &d);
    INVALID(trtl_layer_get_dims, NULL, "stride_nd", &out_dims);
    INVALID(trtl_layer_set_weights, NULL, "kernel", w);
    INVALID(trtl_layer_get_weights, NULL, "kernel", &w);
    INVALID(trtl_layer_set_floats, NULL, "scales", f32, 1);
    INVALID(trtl_layer_get_floats, NULL, "scales", f32, &n32);
    {
        const char *txt;
        INVALID(trtl_layer_set_string, NULL, "equation", "ij->ji");
        INVALID(trtl_layer_get_string, NULL, "equation", &txt);
    }
    {
        trtl_attr_info info;
        GIVES(trtl_op_num_attrs(TRTL_OP_COUNT), 0);
        INVALID(trtl_op_attr, TRTL_OP_CONVOLUTION, 0, NULL);
        INVALID(trtl_op_find_attr, TRTL_OP_CONVOLUTION, NULL, &info);
        INVALID(trtl_op_find_attr, TRTL_OP_CONVOLUTION, "stride_nd", NULL);
        expect_true(trtl_op_num_attrs(TRTL_OP_CONVOLUTION) > 0 && trtl_op_attr(TRTL_OP_CONVOLUTION, 0, &info) == TRTL_OK &&
                        trtl_op_find_attr(TRTL_OP_CONVOLUTION, "stride_nd", &info) == TRTL_OK &&
                        info.kind == TRTL_ATTR_KIND_DIMS,
                    "trtl_op_attr / trtl_op_find_attr on a real op");
    }

    /* ---- tensors ---- */
    GIVES(trtl_tensor_name(NULL), NULL);
    INVALID(trtl_tensor_set_name, NULL, "t");
    INVALID(trtl_tensor_dims, NULL, &out_dims);
    GIVES(trtl_tensor_dtype(NULL), TRTL_DTYPE_COUNT);
    INVALID(trtl_tensor_set_dtype, NULL, TRTL_FLOAT);
    INVALID(trtl_tensor_set_dims, NULL, &d);
    GIVES(trtl_tensor_is_input(NULL), 0);
    GIVES(trtl_tensor_is_output(NULL), 0);
    INVALID(trtl_tensor_set_dynamic_range, NULL, -1.0f, 1.0f);
    GIVES(trtl_tensor_dynamic_range(NULL, &lo, &hi), 0);

    /* ---- builder config ---- */
    INVALID(trtl_builder_config_create, NULL);
    trtl_builder_config_destroy(NULL);
    INVALID(trtl_builder_config_set_flag, NULL, TRTL_FLAG_FP16, 1);
    GIVES(trtl_builder_config_get_flag(NULL, TRTL_FLAG_FP16), 0);
    INVALID(trtl_builder_config_set_workspace, NULL, 1);
    GIVES(trtl_builder_config_workspace(NULL), 0);
    INVALID(trtl_builder_config_set_max_batch_size, NULL, 1);
    GIVES(trtl_builder_config_max_batch_size(NULL), 0);
    INVALID(trtl_builder_config_set_avg_timing_iterations, NULL, 1);
    GIVES(trtl_builder_config_avg_timing_iterations(NULL), 0);
    INVALID(trtl_builder_config_set_optimization_level, NULL, 1);
    GIVES(trtl_builder_config_optimization_level(NULL), 0);
    INVALID(trtl_builder_config_set_num_threads, NULL, 1);
    INVALID(trtl_builder_config_set_logger, NULL, noop_log, NULL);
    INVALID(trtl_builder_config_set_progress, NULL, NULL, NULL);
    INVALID(trtl_builder_config_set_shape, NULL, 0, "x", &d, &d, &d);
    GIVES(trtl_builder_config_num_profiles(NULL), 0);
    INVALID(trtl_builder_config_set_pass_enabled, NULL, "fold_scale", 0);
    INVALID(trtl_builder_config_get_pass_enabled, NULL, "fold_scale", &on);
    GIVES(trtl_builder_pass_count() > 0, 1);
    INVALID(trtl_builder_pass_info, 0, NULL, &n32, &name);
    INVALID(trtl_builder_pass_info, 0, &name, NULL, &name);
    INVALID(trtl_builder_pass_info, 0, &name, &n32, NULL);
    GIVES(trtl_builder_config_num_threads(NULL), 0);
    INVALID(trtl_profile_check_shapes, NULL, &d, &d, &d);
    INVALID(trtl_profile_check_shapes, "x", NULL, &d, &d);
    INVALID(trtl_profile_check_shapes, "x", &d, NULL, &d);
    INVALID(trtl_profile_check_shapes, "x", &d, &d, NULL);
    INVALID(trtl_build, NULL, NULL, &e);

    /* ---- engine ---- */
    INVALID(trtl_engine_serialize, NULL, &data, &size);
    INVALID(trtl_engine_deserialize, NULL, 16, &e);
    INVALID(trtl_engine_deserialize_deferred, NULL, 16, &e);
    INVALID(trtl_engine_load_weights, NULL, 0);
    GIVES(trtl_engine_weights_pending(NULL), 0);
    GIVES(trtl_engine_plan_discarded(NULL), 0);
    trtl_engine_retain(NULL);
    trtl_engine_destroy(NULL);
    GIVES(trtl_engine_name(NULL), NULL);
    GIVES(trtl_engine_implicit_batch(NULL), 0);
    GIVES(trtl_engine_max_batch_size(NULL), 0);
    GIVES(trtl_engine_num_io(NULL), 0);
    GIVES(trtl_engine_io_name(NULL, 0), NULL);
    GIVES(trtl_engine_io_index(NULL, "x"), -1);
    GIVES(trtl_engine_io_is_input(NULL, 0), 0);
    GIVES(trtl_engine_io_dims(NULL, 0).nb_dims, 0);
    GIVES(trtl_engine_io_dtype(NULL, 0), TRTL_FLOAT);
    INVALID(trtl_engine_profile_shape, NULL, 0, "x", &out_dims, &out_dims, &out_dims);
    GIVES(trtl_engine_num_profiles(NULL), 0);
    GIVES(trtl_engine_io_is_shape(NULL, 0), 0);
    INVALID(trtl_engine_profile_values, NULL, 0, "x", &out_dims, &out_dims, &out_dims);
    INVALID(trtl_tensor_roles, NULL, &out_i, &out_i);
    INVALID(trtl_builder_config_set_shape_values, NULL, 0, "x", &d, &d, &d);
    GIVES(trtl_engine_num_layers(NULL), 0);
    GIVES(trtl_engine_layer_name(NULL, 0), NULL);
    GIVES(trtl_engine_layer_kernel(NULL, 0), NULL);
    GIVES(trtl_engine_layer_precision(NULL, 0), -1);
    GIVES(trtl_engine_layer_op(NULL, 0), TRTL_OP_COUNT);
    INVALID(trtl_engine_layer_info_json, NULL, &json);
    GIVES(trtl_engine_device_memory_size(NULL), 0);

    /* ---- context ---- */
    INVALID(trtl_context_create, NULL, &c);
    trtl_context_destroy(NULL);
    INVALID(trtl_context_set_profile, NULL, 0);
    GIVES(trtl_context_profile(NULL), -1);
    INVALID(trtl_context_set_input_shape, NULL, "x", &d);
    INVALID(trtl_context_tensor_shape, NULL, "x", &out_dims);
    INVALID(trtl_context_set_tensor_address, NULL, "x", f32);
    GIVES(trtl_context_tensor_address(NULL, "x"), NULL);
    INVALID(trtl_context_resolve, NULL, 1);
    INVALID(trtl_context_io_dims, NULL, 0, &out_dims);
    INVALID(trtl_context_execute, NULL, 1);
    INVALID(trtl_context_execute_bindings, NULL, 1, NULL);
    INVALID(trtl_context_set_profiler, NULL, noop_prof, NULL);
    INVALID(trtl_context_set_num_threads, NULL, 1);
    GIVES(trtl_context_num_threads(NULL), 0);
    {
        uint64_t arena_b = 0, scratch_b = 0;
        INVALID(trtl_context_memory_size, NULL, &arena_b, &scratch_b);
    }

    /* ---- valid handles, NULL required pointers ---- */
    expect_true(trtl_network_create(0, &net) == TRTL_OK, "trtl_network_create");
    expect_true(trtl_network_add_input(net, "x", TRTL_FLOAT, &d, &t) == TRTL_OK, "trtl_network_add_input");
    INVALID(trtl_network_add_layer, net, TRTL_OP_ACTIVATION, &t, 1, NULL);
    INVALID(trtl_network_add_convolution, net, t, 1, NULL, w, w, &l);
    INVALID(trtl_network_add_pooling, net, t, TRTL_POOL_MAX, NULL, &l);
    INVALID(trtl_network_add_constant, net, NULL, w, &l);
    INVALID(trtl_tensor_dims, t, NULL);
    INVALID(trtl_tensor_set_dims, t, NULL);
    GIVES(trtl_tensor_dynamic_range(t, NULL, NULL), 0);
    expect_true(trtl_network_add_activation(net, t, TRTL_ACT_RELU, &l) == TRTL_OK, "trtl_network_add_activation");
    INVALID(trtl_layer_get_int, l, "type", NULL);
    INVALID(trtl_layer_set_dims, l, "type", NULL);
    expect_true(trtl_network_mark_output(net, trtl_layer_output(l, 0)) == TRTL_OK, "trtl_network_mark_output");
    expect_true(trtl_builder_config_create(&cfg) == TRTL_OK, "trtl_builder_config_create");
    INVALID(trtl_builder_config_set_shape, cfg, 0, "x", NULL, &d, &d);
    INVALID(trtl_builder_config_set_pass_enabled, cfg, NULL, 0);
    INVALID(trtl_builder_config_get_pass_enabled, cfg, NULL, &on);
    INVALID(trtl_builder_config_get_pass_enabled, cfg, "fold_scale", NULL);
    INVALID(trtl_build, net, cfg, NULL);
    {
        void *plan;
        size_t plan_size;
        INVALID(trtl_build_serialized, NULL, cfg, &plan, &plan_size);
        INVALID(trtl_build_serialized, net, NULL, &plan, &plan_size);
        INVALID(trtl_build_serialized, net, cfg, NULL, &plan_size);
        INVALID(trtl_build_serialized, net, cfg, &plan, NULL);
    }
    expect_true(trtl_build(net, cfg, &e) == TRTL_OK, "trtl_build");
    INVALID(trtl_engine_serialize, e, NULL, &size);
    INVALID(trtl_engine_serialize, e, &data, NULL);
    INVALID(trtl_engine_layer_info_json, e, NULL);
    INVALID(trtl_engine_profile_shape, e, 0, "x", NULL, NULL, NULL);
    INVALID(trtl_context_create, e, NULL);
    expect_true(trtl_context_create(e, &c) == TRTL_OK, "trtl_context_create");
    INVALID(trtl_context_execute_bindings, c, 1, NULL);
    INVALID(trtl_context_set_input_shape, c, "x", NULL);
    INVALID(trtl_context_tensor_shape, c, "x", NULL);
    INVALID(trtl_context_io_dims, c, 0, NULL);
    /* the context still runs */
    {
        float in[6] = {-1, 2, -3, 4, -5, 6}, out[6] = {0};
        void *b[2] = {in, out};
        expect_true(trtl_context_execute_bindings(c, 1, b) == TRTL_OK && out[0] == 0.0f && out[1] == 2.0f,
                    "trtl_context_execute_bindings after the refused calls");
    }
    trtl_context_destroy(c);
    trtl_engine_destroy(e);
    trtl_builder_config_destroy(cfg);
    trtl_network_destroy(net);

    /* ---- timing cache ---- */
    {
        trtl_timing_cache *tc = NULL, *tc2 = NULL;
        trtl_builder_config *tcfg = NULL;
        void *bytes = NULL;
        size_t nbytes = 0;
        INVALID(trtl_timing_cache_create, NULL, 0, NULL);
        INVALID(trtl_timing_cache_create, NULL, 4, &tc);
        trtl_timing_cache_retain(NULL);
        trtl_timing_cache_destroy(NULL);
        INVALID(trtl_timing_cache_serialize, NULL, &bytes, &nbytes);
        INVALID(trtl_timing_cache_combine, NULL, NULL, 0);
        INVALID(trtl_timing_cache_reset, NULL);
        GIVES(trtl_timing_cache_num_entries(NULL), 0);
        INVALID(trtl_timing_cache_check, NULL, 1);
        INVALID(trtl_builder_config_set_timing_cache, NULL, NULL, 0);
        GIVES(trtl_builder_config_timing_cache(NULL), NULL);
        /* and working: empty cache -> bytes -> cache; a truncated copy is a corrupt-plan error */
        expect_true(trtl_timing_cache_create(NULL, 0, &tc) == TRTL_OK, "trtl_timing_cache_create(empty)");
        INVALID(trtl_timing_cache_serialize, tc, NULL, &nbytes);
        INVALID(trtl_timing_cache_combine, tc, NULL, 0);
        expect_true(trtl_timing_cache_serialize(tc, &bytes, &nbytes) == TRTL_OK && nbytes == 40,
                    "trtl_timing_cache_serialize(empty): header + two counts");
        expect_true(trtl_timing_cache_create(bytes, nbytes, &tc2) == TRTL_OK, "trtl_timing_cache_create(bytes)");
        expect_true(trtl_timing_cache_combine(tc, tc2, 0) == TRTL_OK && trtl_timing_cache_num_entries(tc) == 0,
                    "trtl_timing_cache_combine");
        trtl_timing_cache_destroy(tc2);
        tc2 = NULL;
        expect_true(trtl_timing_cache_create(bytes, nbytes - 1, &tc2) == TRTL_ERR_INVALID_PLAN && tc2 == NULL,
                    "trtl_timing_cache_create(truncated)");
        expect_true(trtl_builder_config_create(&tcfg) == TRTL_OK &&
                        trtl_builder_config_set_timing_cache(tcfg, tc, 0) == TRTL_OK &&
                        trtl_builder_config_timing_cache(tcfg) == tc,
                    "trtl_builder_config_set_timing_cache");
        trtl_timing_cache_destroy(tc); /* the config keeps its own reference */
        expect_true(trtl_timing_cache_reset(trtl_builder_config_timing_cache(tcfg)) == TRTL_OK &&
                        trtl_timing_cache_check(trtl_builder_config_timing_cache(tcfg), 4) == TRTL_OK,
                    "the config's reference");
        trtl_builder_config_destroy(tcfg);
        trtl_free(bytes);
    }

    /* refit (engine/refit.c) */
    {
        char lname[8];
        int32_t role;
        int64_t count;
        trtl_weights w = {TRTL_FLOAT, NULL, 0};
        GIVES(trtl_engine_refittable(NULL), 0);
        GIVES(trtl_engine_refit_count(NULL), 0);
        INVALID(trtl_engine_refit_info, NULL, 0, lname, sizeof lname, &role, &count);
        INVALID(trtl_engine_refit_check, NULL, "l", 0, 1);
        INVALID(trtl_engine_refit, NULL, "l", 0, &w);
        GIVES(trtl_engine_weights_names(NULL), NULL);
        INVALID(trtl_network_add_weights_name, NULL, "l", 0, "w");
    }
    /* control flow (builder/control_flow.c) */
    {
        int32_t id;
        INVALID(trtl_network_new_control_flow, NULL, &id);
        INVALID(trtl_network_new_control_flow, net, NULL);
    }
    /* data-dependent shapes (engine/context.c) */
    {
        int64_t bytes;
        INVALID(trtl_context_set_output_allocator, NULL, "y", NULL);
        INVALID(trtl_context_max_output_size, NULL, "y", &bytes);
        GIVES(trtl_engine_io_is_data_dependent(NULL, 0), 0);
    }

    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
