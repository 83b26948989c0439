/*
 * fuzz_plan.c -- libFuzzer harness for the plan reader (trtl_engine_deserialize, format in
 * csrc/serialize/plan.h), built by `make fuzz-build` with ASan+UBSan (docs/TESTING.md).
 *
 * Each input is a whole plan file.  Before loading, the harness rewrites the header fields that
 * only guard against accidents -- magic, version (unless it is one the reader loads), header size, payload size, CRC-32 and the CPU
 * feature bits (masked to this machine's) -- so that nearly every mutation reaches the structural
 * checks behind the checksum instead of stopping at "checksum mismatch".  Shapes are not limited
 * at load time: the reader's own overflow and size checks are what is being tested.
 *
 * A plan that loads is then used, so that a check the reader missed shows up as an ASan/UBSan
 * report instead of passing silently:
 *   - it is serialized again and the result must load again (the writer and the reader agree);
 *   - its layer information JSON is produced;
 *   - for every optimization profile (at most 4) a context is created, each input gets the
 *     profile's max shape (else twice opt within [min, max], else opt, else min: the first whose
 *     bytes fit FUZZ_CAP), every I/O
 *     tensor gets a zeroed buffer of exactly the size the engine reports for it, and the engine
 *     runs.  Engines whose activation memory exceeds FUZZ_CAP are only loaded.
 *
 * Findings are sanitizer reports, crashes, hangs (libFuzzer -timeout) and the aborts below:
 * TRTL_ERR_INTERNAL from any call, or a plan that loads but whose re-serialization does not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/trtlite.h"
#include "trtlite/plugin.h"
#include "core/dims.h"
#include "serialize/plan.h"

/* bytes: activation memory and each I/O buffer of a run (reference kernels under ASan on a few million
 * elements already take seconds; loading is not capped) */
#define FUZZ_CAP ((int64_t)4 << 20)
#define FUZZ_MAX_PROFILES 4

/* FUZZ_PLAN_VERBOSE=1: one line per input saying how far it got (load, runs), for the smoke test's
 * check that the seed plans load and execute -- a harness that never ran an engine would pass
 * vacuously. */
static int g_verbose;

static void finding(const char *what, trtl_status st)
{
    fprintf(stderr, "fuzz_plan finding: %s: status %s: %s\n", what, trtl_status_name(st), trtl_last_error());
    abort();
}

/* Any status is acceptable from these calls except an internal error. */
static trtl_status expect(trtl_status st, const char *what)
{
    if (st == TRTL_ERR_INTERNAL)
        finding(what, st);
    return st;
}

static int64_t bytes_of(const trtl_dims *d, trtl_dtype t)
{
    if (d->nb_dims < 0)
        return -1;
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (d->d[i] < 0 || __builtin_mul_overflow(v, d->d[i], &v) || v > FUZZ_CAP)
            return -1;
    }
    int64_t b = v * (int64_t)trtl_dtype_size(t);
    return b > FUZZ_CAP ? -1 : b;
}

/* Runs the engine once with profile `p`; returns quietly whenever a call refuses the request. */
static void run_profile(trtl_engine *e, int32_t p)
{
    trtl_context *c = NULL;
    int32_t nio = trtl_engine_num_io(e);
    void **bufs = calloc((size_t)(nio > 0 ? nio : 1), sizeof(void *));
    if (!bufs || expect(trtl_context_create(e, &c), "context_create") != TRTL_OK)
        goto done;
    trtl_context_set_num_threads(c, 1);
    if (expect(trtl_context_set_profile(c, p), "set_profile") != TRTL_OK)
        goto done;
    int has_shape_inputs = 0;
    for (int32_t i = 0; i < nio; i++)
        has_shape_inputs |= trtl_engine_io_is_input(e, i) && trtl_engine_io_is_shape(e, i);
    for (int32_t i = 0; i < nio; i++) {
        if (!trtl_engine_io_is_input(e, i))
            continue;
        const char *name = trtl_engine_io_name(e, i);
        trtl_dims mn, opt, mx;
        if (expect(trtl_engine_profile_shape(e, p, name, &mn, &opt, &mx), "profile_shape") != TRTL_OK)
            goto done;
        trtl_dtype t = trtl_engine_io_dtype(e, i);
        /* twice opt, kept inside [min, max]: a shape the profile allows that the engine's stored max
         * shapes (its memory plan) may not, when the loader failed to tie the two together */
        trtl_dims mid = opt;
        for (int32_t k = 0; k < mid.nb_dims && k < TRTL_MAX_DIMS; k++) {
            int64_t v = opt.d[k] > 0 && opt.d[k] < ((int64_t)1 << 40) ? 2 * opt.d[k] : opt.d[k];
            if (k < mx.nb_dims && v > mx.d[k])
                v = mx.d[k];
            if (k < mn.nb_dims && v < mn.d[k])
                v = mn.d[k];
            mid.d[k] = v;
        }
        /* with shape-tensor inputs (given their opt values below) the execution shapes must agree with them:
         * opt shapes first */
        const trtl_dims *cand_any[] = {&mx, &mid, &opt, &mn}, *cand_opt[] = {&opt, &mx, &mid, &mn}, *pick = NULL;
        const trtl_dims *const *cand = has_shape_inputs ? cand_opt : cand_any;
        for (int j = 0; j < 4 && !pick; j++)
            if (bytes_of(cand[j], t) >= 0)
                pick = cand[j];
        if (!pick)
            goto done;
        if (expect(trtl_context_set_input_shape(c, name, pick), "set_input_shape") != TRTL_OK)
            goto done;
        /* a shape-tensor input's values come from its address (host memory) and decide shapes when they are
         * resolved: the profile's opt values (int32, one per element) */
        if (trtl_engine_io_is_shape(e, i)) {
            trtl_dims vmn, vopt, vmx;
            if (expect(trtl_engine_profile_values(e, p, name, &vmn, &vopt, &vmx), "profile_values") != TRTL_OK ||
                vopt.nb_dims < 0)
                goto done;
            int32_t *vals = calloc((size_t)(vopt.nb_dims > 0 ? vopt.nb_dims : 1), sizeof(int32_t));
            if (!vals)
                goto done;
            for (int32_t k = 0; k < vopt.nb_dims && k < TRTL_MAX_DIMS; k++)
                vals[k] = (int32_t)vopt.d[k];
            bufs[i] = vals;
            if (expect(trtl_context_set_tensor_address(c, name, vals), "set_tensor_address") != TRTL_OK)
                goto done;
        }
    }
    int32_t batch = trtl_engine_implicit_batch(e) ? trtl_engine_max_batch_size(e) : 0;
    if (batch > 4)
        batch = 4;
    if (expect(trtl_context_resolve(c, batch), "resolve") != TRTL_OK)
        goto done;
    for (int32_t i = 0; i < nio; i++) {
        trtl_dims full;
        if (bufs[i]) /* a shape-tensor input's values, set above */
            continue;
        if (expect(trtl_context_io_dims(c, i, &full), "io_dims") != TRTL_OK)
            goto done;
        int64_t b = bytes_of(&full, trtl_engine_io_dtype(e, i));
        if (b < 0)
            goto done;
        /* exactly the engine's size (no slack), so an overrun by a kernel is an ASan report */
        bufs[i] = malloc(b ? (size_t)b : 1);
        if (!bufs[i])
            goto done;
        memset(bufs[i], 0, b ? (size_t)b : 1);
        if (expect(trtl_context_set_tensor_address(c, trtl_engine_io_name(e, i), bufs[i]), "set_tensor_address") !=
            TRTL_OK)
            goto done;
    }
    trtl_status st = expect(trtl_context_execute(c, batch), "execute");
    if (g_verbose)
        fprintf(stderr, "fuzz_plan: profile %d executed: %s\n", (int)p, trtl_status_name(st));
done:
    trtl_context_destroy(c);
    if (bufs)
        for (int32_t i = 0; i < nio; i++)
            free(bufs[i]);
    free(bufs);
}

static void check_roundtrip(const trtl_engine *e)
{
    void *data = NULL;
    size_t size = 0;
    trtl_status st = trtl_engine_serialize(e, &data, &size);
    if (st == TRTL_ERR_OUT_OF_MEMORY)
        return;
    if (st != TRTL_OK)
        finding("a loaded plan cannot be serialized again", st);
    trtl_engine *again = NULL;
    st = trtl_engine_deserialize(data, size, &again);
    trtl_free(data);
    if (st == TRTL_ERR_OUT_OF_MEMORY)
        return;
    if (st != TRTL_OK)
        finding("a loaded plan, serialized again, does not load", st);
    trtl_engine_destroy(again);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *v = getenv("FUZZ_PLAN_VERBOSE");
    g_verbose = v && *v && *v != '0';
    /* plans with plugin layers need the built-in creators (as trt.init_libnvinfer_plugins does) */
    if (trtl_plugin_init_builtins("") != TRTL_OK) {
        fprintf(stderr, "fuzz_plan: cannot register the built-in plugins: %s\n", trtl_last_error());
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trtl_engine *e = NULL;
    if (size < TRTL_PLAN_HEADER_SIZE) { /* too short for a header: must be refused */
        if (expect(trtl_engine_deserialize(data, size, &e), "deserialize") == TRTL_OK)
            finding("a plan shorter than the header loaded", TRTL_OK);
        return 0;
    }
    uint8_t *buf = malloc(size);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    uint32_t version, hsize = TRTL_PLAN_HEADER_SIZE, cpu;
    memcpy(&version, buf + 8, 4); /* a readable older version stays (seeds written before a format change) */
    if (version < TRTL_PLAN_MIN_VERSION || version > TRTL_PLAN_VERSION)
        version = TRTL_PLAN_VERSION;
    uint64_t payload = size - TRTL_PLAN_HEADER_SIZE;
    memcpy(buf, TRTL_PLAN_MAGIC, 8);
    memcpy(buf + 8, &version, 4);
    memcpy(buf + 12, &hsize, 4);
    memcpy(buf + 16, &payload, 8);
    uint32_t crc = trtl_crc32(buf + TRTL_PLAN_HEADER_SIZE, (size_t)payload);
    memcpy(buf + 24, &crc, 4);
    memcpy(&cpu, buf + 28, 4);
    cpu &= trtl_cpu_features();
    memcpy(buf + 28, &cpu, 4);

    trtl_status st = expect(trtl_engine_deserialize(buf, size, &e), "deserialize");
    free(buf);
    if (g_verbose)
        fprintf(stderr, "fuzz_plan: load: %s%s%s\n", trtl_status_name(st), st ? ": " : "", st ? trtl_last_error() : "");
    if (st != TRTL_OK)
        return 0;
    check_roundtrip(e);
    char *json = NULL;
    if (expect(trtl_engine_layer_info_json(e, &json), "layer_info_json") == TRTL_OK)
        trtl_free(json);
    if ((int64_t)trtl_engine_device_memory_size(e) <= FUZZ_CAP) {
        int32_t np = trtl_engine_num_profiles(e);
        for (int32_t p = 0; p < np && p < FUZZ_MAX_PROFILES; p++)
            run_profile(e, p);
    }
    trtl_engine_destroy(e);
    return 0;
}
