/* py_builder.c -- trtlite.Builder and IOptimizationProfile (IBuilderConfig: py_builder_config.c). */
#include <string.h>

#include "python/py_builder.h"
#include "python/py_engine.h"
#include "python/sink.h"
#include "python/py_timing_cache.h"

typedef struct TrtlBuilder {
    PyObject_HEAD
    PyObject *logger;
    PyObject *int8_calibrator;
    int32_t max_batch_size;
    uint64_t max_workspace_size;
    int fp16_mode, int8_mode, strict_type_constraints, debug_sync;
} TrtlBuilder;

/* ---- build callbacks: logger, progress monitor, Ctrl-C (GIL taken) ------------------------- */

/* What a build's callbacks reach: the logger (in the sink) and the user's monitor (NULL if none).
 * The progress callbacks are installed for every build, monitor or not: each step checks for
 * signals (Ctrl-C arrives while the GIL is released) and cancels the build when the logger, the
 * monitor or a signal handler raised something that is not an Exception (KeyboardInterrupt). */
typedef struct build_cb {
    trtl_py_sink sink;
    PyObject *monitor;
} build_cb;

static void pm_phase_start(void *user, const char *phase, const char *parent, int32_t n)
{
    build_cb *b = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (b->monitor && !b->sink.exc) {
        PyObject *r = PyObject_CallMethod(b->monitor, "phase_start", "szi", phase, parent, (int)n);
        if (!r)
            trtl_py_keep_interrupt(&b->sink, b->monitor);
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
}

static int pm_step(void *user, const char *phase, int32_t step)
{
    build_cb *b = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!b->sink.exc && PyErr_CheckSignals() < 0)
        trtl_py_keep_interrupt(&b->sink, b->monitor ? b->monitor : Py_None);
    int keep_going = !b->sink.exc;
    if (keep_going && b->monitor) {
        PyObject *r = PyObject_CallMethod(b->monitor, "step_complete", "si", phase, (int)step);
        if (!r)
            keep_going = !trtl_py_keep_interrupt(&b->sink, b->monitor);
        else if (r != Py_None) {
            int t = PyObject_IsTrue(r);
            if (t < 0)
                keep_going = !trtl_py_keep_interrupt(&b->sink, b->monitor);
            else
                keep_going = t != 0;
        }
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
    return keep_going;
}

static void pm_phase_finish(void *user, const char *phase)
{
    build_cb *b = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (b->monitor && !b->sink.exc) {
        PyObject *r = PyObject_CallMethod(b->monitor, "phase_finish", "s", phase);
        if (!r)
            trtl_py_keep_interrupt(&b->sink, b->monitor);
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
}

static const trtl_progress_monitor py_progress = {pm_phase_start, pm_step, pm_phase_finish};

/* ---- OptimizationProfile ------------------------------------------------------------------- */

static void profile_dealloc(TrtlProfile *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->shapes);
    Py_CLEAR(self->values);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int profile_traverse(TrtlProfile *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->shapes);
    Py_VISIT(self->values);
    return 0;
}

static PyObject *profile_set_shape(TrtlProfile *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"input", "min", "opt", "max", NULL};
    const char *name;
    PyObject *mn, *op, *mx;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOO:set_shape", kw, &name, &mn, &op, &mx))
        return NULL;
    trtl_dims d[3];
    char what[3][128];
    const char *w[3] = {"min", "opt", "max"};
    PyObject *src[3] = {mn, op, mx};
    for (int i = 0; i < 3; i++) {
        snprintf(what[i], sizeof what[i], "profile shape '%s' %s", name, w[i]);
        if (trtl_py_to_dims(st, src[i], &d[i], what[i]) < 0)
            return NULL;
    }
    trtl_status s = trtl_profile_check_shapes(name, &d[0], &d[1], &d[2]);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    PyObject *t = PyTuple_New(3);
    for (int i = 0; t && i < 3; i++) {
        PyObject *x = trtl_py_from_dims(st, &d[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    if (!t || PyDict_SetItemString(self->shapes, name, t) < 0) {
        Py_XDECREF(t);
        return NULL;
    }
    Py_DECREF(t);
    Py_RETURN_NONE;
}

static PyObject *profile_get_shape(TrtlProfile *self, PyObject *args, PyObject *kwargs)
{
    return trtl_py_profile_get_values(self->shapes, args, kwargs, "s:get_shape");
}

static PyObject *profile_set_shape_input(TrtlProfile *self, PyObject *args, PyObject *kwargs)
{
    return trtl_py_profile_set_values(TRTL_STATE(self), self->values, args, kwargs);
}

static PyObject *profile_get_shape_input(TrtlProfile *self, PyObject *args, PyObject *kwargs)
{
    return trtl_py_profile_get_values(self->values, args, kwargs, "s:get_shape_input");
}

static int profile_bool(TrtlProfile *self) { return PyDict_Size(self->shapes) > 0 || PyDict_Size(self->values) > 0; }

static PyMethodDef profile_methods[] = {
    {"set_shape", (PyCFunction)(void (*)(void))profile_set_shape, METH_VARARGS | METH_KEYWORDS,
     "set_shape(input, min, opt, max) -> None\n\nShape range of a dynamic input for this profile."},
    {"get_shape", (PyCFunction)(void (*)(void))profile_get_shape, METH_VARARGS | METH_KEYWORDS,
     "get_shape(input) -> [min, opt, max]\n\nThe shapes set for `input` (empty list if none)."},
    {"set_shape_input", (PyCFunction)(void (*)(void))profile_set_shape_input, METH_VARARGS | METH_KEYWORDS,
     "set_shape_input(input, min, opt, max) -> None\n\nValue ranges of a shape-tensor input (INT32 values that "
     "decide shapes) for this profile."},
    {"get_shape_input", (PyCFunction)(void (*)(void))profile_get_shape_input, METH_VARARGS | METH_KEYWORDS,
     "get_shape_input(input) -> [min, opt, max]\n\nThe value ranges set for `input` (empty list if none)."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot profile_slots[] = {
    {Py_tp_dealloc, profile_dealloc},
    {Py_tp_traverse, profile_traverse},
    {Py_tp_methods, profile_methods},
    {Py_nb_bool, profile_bool},
    {Py_tp_doc, "Optimization profile (IOptimizationProfile): min/opt/max shapes of dynamic inputs."},
    {0, NULL}};

static PyType_Spec profile_spec = {"trtlite.IOptimizationProfile", sizeof(TrtlProfile), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   profile_slots};

/* ---- Builder -------------------------------------------------------------------------------- */

static PyObject *builder_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"logger", NULL};
    PyObject *logger = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Builder", kw, &logger))
        return NULL;
    TrtlBuilder *self = (TrtlBuilder *)tp->tp_alloc(tp, 0);
    if (!self)
        return NULL;
    self->logger = Py_NewRef(logger);
    self->max_batch_size = 1;
    self->max_workspace_size = (uint64_t)1 << 30;
    return (PyObject *)self;
}

static void builder_dealloc(TrtlBuilder *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->logger);
    Py_CLEAR(self->int8_calibrator);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int builder_traverse(TrtlBuilder *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->logger);
    Py_VISIT(self->int8_calibrator);
    return 0;
}

static int builder_clear(TrtlBuilder *self)
{
    Py_CLEAR(self->logger);
    Py_CLEAR(self->int8_calibrator);
    return 0;
}

static PyObject *builder_create_network(TrtlBuilder *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"flags", NULL};
    PyObject *flags = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:create_network", kw, &flags))
        return NULL;
    /* create_network() -> TensorRT 7 implicit batch; create_network(flags) -> explicit batch
     * (TensorRT 10 ignores the flag; TensorRT 8 scripts pass EXPLICIT_BATCH). */
    if (flags != Py_None) {
        long f = trtl_py_as_long(flags, "create_network(): flags");
        if (f == -1 && PyErr_Occurred())
            return NULL;
        /* A bit set of NetworkDefinitionCreationFlag: EXPLICIT_BATCH (bit 0), EXPLICIT_PRECISION (bit 1). */
        if (f < 0 || f >= 4)
            return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                                     "create_network(flags=%ld): flags is a bit set of NetworkDefinitionCreationFlag "
                                     "(1 << EXPLICIT_BATCH = 1, 1 << EXPLICIT_PRECISION = 2), so 0..3", f);
    }
    return trtl_py_network_new(TRTL_STATE(self), flags == Py_None);
}

static PyObject *builder_create_config(TrtlBuilder *self, PyObject *unused)
{
    (void)unused;
    return trtl_py_builder_config_new(TRTL_STATE(self));
}

static PyObject *builder_create_profile(TrtlBuilder *self, PyObject *unused)
{
    (void)unused;
    trtl_py_state *st = TRTL_STATE(self);
    TrtlProfile *p = PyObject_GC_New(TrtlProfile, st->ProfileType);
    if (!p)
        return NULL;
    p->shapes = PyDict_New();
    p->values = PyDict_New();
    if (!p->shapes || !p->values) {
        Py_DECREF(p);
        return NULL;
    }
    PyObject_GC_Track(p);
    return (PyObject *)p;
}

/* Builds with the GIL released (the logger and Python plugins take it back when called).  The
 * network and the config object (cfg_obj; NULL for build_cuda_engine's own config) are marked
 * busy for the length of the build, so that no thread changes them under it; a second build of
 * either is refused too (the build updates the network's shape caches).  The logger and monitor
 * are held here: the builder's or config's references may be replaced meanwhile.  Returns -1
 * with a Python exception set when refused, else 0 with the build's status in *status. */
static int do_build(TrtlBuilder *self, TrtlNetwork *net, TrtlBuilderConfigObj *cfg_obj, trtl_builder_config *cfg,
                    trtl_engine **out, trtl_status *status, void **plan, size_t *plan_size)
{
    trtl_status s;
    if (trtl_py_network_idle(net, "building it") < 0 ||
        (cfg_obj && trtl_py_config_idle(cfg_obj, "building with it") < 0))
        return -1;
    if (trtl_network_implicit_batch(net->net)) {
        s = trtl_builder_config_set_max_batch_size(cfg, self->max_batch_size);
        if (s != TRTL_OK) {
            *status = s;
            return 0;
        }
    }
    build_cb cb = {{TRTL_STATE(self), self->logger != Py_None ? Py_NewRef(self->logger) : NULL, NULL, 1},
                   cfg_obj && cfg_obj->progress_monitor && cfg_obj->progress_monitor != Py_None
                       ? Py_NewRef(cfg_obj->progress_monitor) : NULL};
    trtl_builder_config_set_logger(cfg, cb.sink.logger ? trtl_py_log_cb : NULL, cb.sink.logger ? &cb.sink : NULL);
    trtl_builder_config_set_progress(cfg, &py_progress, &cb);
    net->building = 1;
    if (cfg_obj)
        cfg_obj->building = 1;
    *out = NULL;
    Py_BEGIN_ALLOW_THREADS
    /* plan: build straight into a plan (no weight packing: the loader packs) */
    s = plan ? trtl_build_serialized(net->net, cfg, plan, plan_size) : trtl_build(net->net, cfg, out);
    Py_END_ALLOW_THREADS
    net->building = 0;
    if (cfg_obj)
        cfg_obj->building = 0;
    trtl_builder_config_set_logger(cfg, NULL, NULL);
    trtl_builder_config_set_progress(cfg, NULL, NULL);
    Py_XDECREF(cb.sink.logger);
    Py_XDECREF(cb.monitor);
    /* A KeyboardInterrupt (or SystemExit) from a callback or a signal wins over the build's own
     * result: the build was cancelled for it, or finished after it arrived. */
    if (trtl_py_sink_raise(&cb.sink) < 0) {
        if (s == TRTL_OK && plan) {
            trtl_free(*plan);
            *plan = NULL;
        } else if (s == TRTL_OK) {
            trtl_engine_destroy(*out);
        }
        *out = NULL;
        return -1;
    }
    *status = s;
    return 0;
}

static int parse_build_args(TrtlBuilder *self, PyObject *args, PyObject *kwargs, const char *fmt, TrtlNetwork **net,
                            TrtlBuilderConfigObj **cfg)
{
    static char *kw[] = {"network", "config", NULL};
    trtl_py_state *st = TRTL_STATE(self);
    PyObject *n, *c;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw, &n, &c))
        return -1;
    if (!PyObject_TypeCheck(n, st->NetworkType)) {
        PyErr_Format(PyExc_TypeError, "network must be an INetworkDefinition, not %s", Py_TYPE(n)->tp_name);
        return -1;
    }
    if (!PyObject_TypeCheck(c, st->ConfigType)) {
        PyErr_Format(PyExc_TypeError, "config must be an IBuilderConfig, not %s", Py_TYPE(c)->tp_name);
        return -1;
    }
    *net = (TrtlNetwork *)n;
    *cfg = (TrtlBuilderConfigObj *)c;
    return 0;
}

static PyObject *builder_build_engine(TrtlBuilder *self, PyObject *args, PyObject *kwargs)
{
    TrtlNetwork *net;
    TrtlBuilderConfigObj *cfg;
    trtl_engine *e;
    trtl_status s;
    if (parse_build_args(self, args, kwargs, "OO:build_engine", &net, &cfg) < 0 ||
        do_build(self, net, cfg, cfg->cfg, &e, &s, NULL, NULL) < 0)
        return NULL;
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    return trtl_py_engine_wrap(TRTL_STATE(self), e);
}

static PyObject *builder_build_serialized(TrtlBuilder *self, PyObject *args, PyObject *kwargs)
{
    TrtlNetwork *net;
    TrtlBuilderConfigObj *cfg;
    trtl_engine *e;
    trtl_py_state *st = TRTL_STATE(self);
    trtl_status s;
    void *data = NULL;
    size_t size = 0;
    if (parse_build_args(self, args, kwargs, "OO:build_serialized_network", &net, &cfg) < 0 ||
        do_build(self, net, cfg, cfg->cfg, &e, &s, &data, &size) < 0)
        return NULL;
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return trtl_py_hostmem_new(st, data, size);
}

static PyObject *builder_build_cuda_engine(TrtlBuilder *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"network", NULL};
    PyObject *n;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:build_cuda_engine", kw, &n))
        return NULL;
    if (!PyObject_TypeCheck(n, st->NetworkType))
        return PyErr_Format(PyExc_TypeError, "network must be an INetworkDefinition, not %s", Py_TYPE(n)->tp_name);
    trtl_builder_config *cfg;
    trtl_status s = trtl_builder_config_create(&cfg);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    trtl_builder_config_set_workspace(cfg, self->max_workspace_size);
    trtl_builder_config_set_flag(cfg, TRTL_FLAG_FP16, self->fp16_mode);
    trtl_builder_config_set_flag(cfg, TRTL_FLAG_INT8, self->int8_mode);
    trtl_engine *e;
    if (do_build(self, (TrtlNetwork *)n, NULL, cfg, &e, &s, NULL, NULL) < 0) {
        trtl_builder_config_destroy(cfg);
        return NULL;
    }
    trtl_builder_config_destroy(cfg);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return trtl_py_engine_wrap(st, e);
}

static PyObject *builder_is_supported(TrtlBuilder *self, PyObject *args, PyObject *kwargs)
{
    TrtlNetwork *net;
    TrtlBuilderConfigObj *cfg;
    if (parse_build_args(self, args, kwargs, "OO:is_network_supported", &net, &cfg) < 0 ||
        trtl_py_network_idle(net, "is_network_supported()") < 0)
        return NULL;
    int ok = trtl_network_validate(net->net) == TRTL_OK;
    return PyBool_FromLong(ok);
}

static PyObject *builder_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *builder_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyObject *builder_reset(TrtlBuilder *self, PyObject *unused)
{
    (void)unused;
    self->max_batch_size = 1;
    Py_RETURN_NONE;
}

static PyObject *b_get_mbs(TrtlBuilder *self, void *c)
{
    (void)c;
    return PyLong_FromLong(self->max_batch_size);
}
static int b_set_mbs(TrtlBuilder *self, PyObject *v, void *c)
{
    (void)c;
    long x = trtl_py_as_long(v, "max_batch_size");
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < 1 || x > (1L << 20)) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "max_batch_size must be in 1..%ld, got %ld", 1L << 20, x);
        return -1;
    }
    self->max_batch_size = (int32_t)x;
    return 0;
}
static PyObject *b_get_ws(TrtlBuilder *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(self->max_workspace_size);
}
static int b_set_ws(TrtlBuilder *self, PyObject *v, void *c)
{
    (void)c;
    unsigned long long x = v ? PyLong_AsUnsignedLongLong(v) : 0;
    if (PyErr_Occurred())
        return -1;
    self->max_workspace_size = x;
    return 0;
}

#define BOOL_PROP(field)                                            \
    static PyObject *b_get_##field(TrtlBuilder *self, void *c)        \
    {                                                               \
        (void)c;                                                    \
        return PyBool_FromLong(self->field);                        \
    }                                                               \
    static int b_set_##field(TrtlBuilder *self, PyObject *v, void *c) \
    {                                                               \
        (void)c;                                                    \
        int b = v ? PyObject_IsTrue(v) : 0;                         \
        if (b < 0)                                                  \
            return -1;                                              \
        self->field = b;                                            \
        return 0;                                                   \
    }
BOOL_PROP(fp16_mode)
BOOL_PROP(int8_mode)
BOOL_PROP(strict_type_constraints)
BOOL_PROP(debug_sync)

static PyObject *b_false(TrtlBuilder *self, void *c)
{
    (void)self;
    (void)c;
    Py_RETURN_FALSE;
}
static PyObject *b_zero(TrtlBuilder *self, void *c)
{
    (void)self;
    (void)c;
    return PyLong_FromLong(0);
}
static PyObject *b_one(TrtlBuilder *self, void *c)
{
    (void)self;
    (void)c;
    return PyLong_FromLong(1);
}
static PyObject *b_get_logger(TrtlBuilder *self, void *c)
{
    (void)c;
    return Py_NewRef(self->logger);
}
static PyObject *b_get_calib(TrtlBuilder *self, void *c)
{
    (void)c;
    return Py_NewRef(self->int8_calibrator ? self->int8_calibrator : Py_None);
}
static int b_set_calib(TrtlBuilder *self, PyObject *v, void *c)
{
    (void)c;
    Py_XINCREF(v);
    Py_XSETREF(self->int8_calibrator, v);
    return 0;
}

static PyGetSetDef builder_getset[] = {
    {"max_batch_size", (getter)b_get_mbs, (setter)b_set_mbs, "Largest batch of implicit-batch engines (TensorRT 7).", NULL},
    {"max_workspace_size", (getter)b_get_ws, (setter)b_set_ws, "Workspace limit for build_cuda_engine (TensorRT 7).", NULL},
    {"fp16_mode", (getter)b_get_fp16_mode, (setter)b_set_fp16_mode, "Allow FP16 (TensorRT 7; fp32 kernels on the CPU).", NULL},
    {"int8_mode", (getter)b_get_int8_mode, (setter)b_set_int8_mode, "Allow INT8 (TensorRT 7).", NULL},
    {"strict_type_constraints", (getter)b_get_strict_type_constraints, (setter)b_set_strict_type_constraints,
     "Obey layer precisions (TensorRT 7).", NULL},
    {"debug_sync", (getter)b_get_debug_sync, (setter)b_set_debug_sync, "Kept for compatibility.", NULL},
    {"int8_calibrator", (getter)b_get_calib, (setter)b_set_calib, "INT8 calibrator (TensorRT 7).", NULL},
    {"platform_has_fast_fp16", (getter)b_false, NULL, "False: fp16 is not faster than fp32 on this CPU path.", NULL},
    {"platform_has_fast_int8", (getter)b_false, NULL, "False here; trtlite.Builder reports AVX512-VNNI.", NULL},
    {"platform_has_tf32", (getter)b_false, NULL, "False (GPU feature).", NULL},
    {"num_DLA_cores", (getter)b_zero, NULL, "0 (no DLA).", NULL},
    {"max_DLA_batch_size", (getter)b_one, NULL, "1 (no DLA).", NULL},
    {"logger", (getter)b_get_logger, NULL, "The logger this builder reports to.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef builder_methods[] = {
    {"create_network", (PyCFunction)(void (*)(void))builder_create_network, METH_VARARGS | METH_KEYWORDS,
     "create_network(flags=None) -> INetworkDefinition\n\nNo argument: TensorRT 7 implicit-batch network (shapes "
     "exclude N).  With flags (e.g. 1 << int(NetworkDefinitionCreationFlag.EXPLICIT_BATCH), or 0 as in TensorRT 10): "
     "explicit batch."},
    {"create_builder_config", (PyCFunction)builder_create_config, METH_NOARGS,
     "create_builder_config() -> IBuilderConfig\n\nA new configuration with defaults."},
    {"create_optimization_profile", (PyCFunction)builder_create_profile, METH_NOARGS,
     "create_optimization_profile() -> IOptimizationProfile\n\nA new, empty optimization profile."},
    {"build_engine", (PyCFunction)(void (*)(void))builder_build_engine, METH_VARARGS | METH_KEYWORDS,
     "build_engine(network, config) -> ICudaEngine\n\nBuild an engine (raises with the first error; also logged)."},
    {"build_serialized_network", (PyCFunction)(void (*)(void))builder_build_serialized, METH_VARARGS | METH_KEYWORDS,
     "build_serialized_network(network, config) -> IHostMemory\n\nBuild and serialize a plan (raises with the first error)."},
    {"build_cuda_engine", (PyCFunction)(void (*)(void))builder_build_cuda_engine, METH_VARARGS | METH_KEYWORDS,
     "build_cuda_engine(network) -> ICudaEngine\n\nTensorRT 7: build with the builder's max_batch_size/max_workspace_size."},
    {"is_network_supported", (PyCFunction)(void (*)(void))builder_is_supported, METH_VARARGS | METH_KEYWORDS,
     "is_network_supported(network, config) -> bool\n\nWhether every layer's shapes and types check."},
    {"reset", (PyCFunction)builder_reset, METH_NOARGS, "reset() -> None\n\nRestore builder defaults."},
    {"__enter__", builder_enter, METH_NOARGS, "Context manager entry."},
    {"__exit__", builder_exit, METH_VARARGS, "Context manager exit."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot builder_slots[] = {
    {Py_tp_new, builder_new},
    {Py_tp_dealloc, builder_dealloc},
    {Py_tp_traverse, builder_traverse},
    {Py_tp_clear, builder_clear},
    {Py_tp_getset, builder_getset},
    {Py_tp_methods, builder_methods},
    {Py_tp_doc, "Builder(logger): creates networks and configs and builds engines."},
    {0, NULL}};

static PyType_Spec builder_spec = {"trtlite.Builder", sizeof(TrtlBuilder), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE, builder_slots};

int trtl_py_init_builder(PyObject *m, trtl_py_state *st)
{
    st->ProfileType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &profile_spec, NULL);
    if (!st->ProfileType || PyModule_AddType(m, st->ProfileType) < 0)
        return -1;
    if (trtl_py_init_builder_config(m, st) < 0)
        return -1;
    st->BuilderType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &builder_spec, NULL);
    if (!st->BuilderType)
        return -1;
    return PyModule_AddType(m, st->BuilderType);
}
