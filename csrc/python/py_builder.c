/* py_builder.c -- trtlite.Builder, IBuilderConfig and IOptimizationProfile. */
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

/* 0 if no build uses the config; otherwise StateError naming `what`, -1. */
static int config_idle(TrtlBuilderConfigObj *self, const char *what)
{
    if (!self->building)
        return 0;
    PyErr_Format(TRTL_STATE(self)->StateError,
                 "builder config: %s is refused while a build uses this config (build_engine or "
                 "build_serialized_network, on another thread or calling this from its logger or progress monitor); "
                 "wait for the build to return", what);
    return -1;
}

static PyObject *config_getattro(PyObject *self, PyObject *name)
{
    if (((TrtlBuilderConfigObj *)self)->building) {
        const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        char what[128];
        snprintf(what, sizeof what, "reading IBuilderConfig.%s", n ? n : "?");
        PyErr_Clear();
        config_idle((TrtlBuilderConfigObj *)self, what);
        return NULL;
    }
    return PyObject_GenericGetAttr(self, name);
}

static int config_setattro(PyObject *self, PyObject *name, PyObject *v)
{
    if (((TrtlBuilderConfigObj *)self)->building) {
        const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        char what[128];
        snprintf(what, sizeof what, "setting IBuilderConfig.%s", n ? n : "?");
        PyErr_Clear();
        return config_idle((TrtlBuilderConfigObj *)self, what);
    }
    return PyObject_GenericSetAttr(self, name, v);
}

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

typedef struct TrtlProfile {
    PyObject_HEAD
    PyObject *shapes; /* dict: input name -> (min, opt, max) tuples */
    PyObject *values; /* dict: shape-tensor input name -> (min, opt, max) value tuples */
} TrtlProfile;

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

/* ---- BuilderConfig ------------------------------------------------------------------------- */

static void config_dealloc(TrtlBuilderConfigObj *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->int8_calibrator);
    Py_CLEAR(self->progress_monitor);
    trtl_builder_config_destroy(self->cfg);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int config_traverse(TrtlBuilderConfigObj *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->int8_calibrator);
    Py_VISIT(self->progress_monitor);
    return 0;
}

/* A BuilderFlag argument, range-checked (so that get_flag(99) does not answer False). */
static int flag_arg(TrtlBuilderConfigObj *self, PyObject *arg, int32_t *f)
{
    if (trtl_py_as_int32(arg, "flag", f) < 0)
        return -1;
    if (*f < 0 || *f >= TRTL_FLAG_COUNT) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "flag %d is not a BuilderFlag (0..%d)", (int)*f,
                          TRTL_FLAG_COUNT - 1);
        return -1;
    }
    return 0;
}

static PyObject *config_set_flag(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (config_idle(self, "set_flag()") < 0)
        return NULL;
    int32_t f;
    if (flag_arg(self, arg, &f) < 0)
        return NULL;
    trtl_status s = trtl_builder_config_set_flag(self->cfg, (int)f, 1);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_NONE;
}

static PyObject *config_clear_flag(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (config_idle(self, "clear_flag()") < 0)
        return NULL;
    int32_t f;
    if (flag_arg(self, arg, &f) < 0)
        return NULL;
    trtl_status s = trtl_builder_config_set_flag(self->cfg, (int)f, 0);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_NONE;
}

static PyObject *config_get_flag(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (config_idle(self, "get_flag()") < 0)
        return NULL;
    int32_t f;
    if (flag_arg(self, arg, &f) < 0)
        return NULL;
    return PyBool_FromLong(trtl_builder_config_get_flag(self->cfg, (int)f));
}

/* trt.MemoryPoolType: WORKSPACE (0) limits scratch; the DLA/tactic pools (1..4) are accepted for
 * scripts' sake and have no CPU meaning. */
#define POOL_COUNT 5

static int pool_arg(TrtlBuilderConfigObj *self, PyObject *arg, long *p)
{
    *p = trtl_py_as_long(arg, "pool");
    if (*p == -1 && PyErr_Occurred())
        return -1;
    if (*p < 0 || *p >= POOL_COUNT) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "pool %ld is not a MemoryPoolType (0..%d)", *p,
                          POOL_COUNT - 1);
        return -1;
    }
    return 0;
}

static PyObject *config_set_pool(TrtlBuilderConfigObj *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"pool", "pool_size", NULL};
    PyObject *pool, *size_obj;
    long p;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:set_memory_pool_limit", kw, &pool, &size_obj) ||
        config_idle(self, "set_memory_pool_limit()") < 0)
        return NULL;
    if (pool_arg(self, pool, &p) < 0)
        return NULL;
    /* Not the "K" format: it wraps -1 around to 2**64-1 without a word. */
    if (!PyLong_Check(size_obj) || PyBool_Check(size_obj))
        return PyErr_Format(PyExc_TypeError, "set_memory_pool_limit(): pool_size must be an int, not %s",
                            Py_TYPE(size_obj)->tp_name);
    unsigned long long size = PyLong_AsUnsignedLongLong(size_obj);
    if (size == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(size_obj);
        const char *rs = r ? PyUnicode_AsUTF8(r) : NULL;
        PyErr_Clear();
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "set_memory_pool_limit(): pool_size must be a byte count in 0..2**64-1, got %s", rs ? rs : "?");
        Py_XDECREF(r);
        return NULL;
    }
    if (p == 0) {
        trtl_status s = trtl_builder_config_set_workspace(self->cfg, size);
        if (s != TRTL_OK)
            return trtl_py_raise(TRTL_STATE(self), s);
    }
    Py_RETURN_NONE;
}

static PyObject *config_get_pool(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (config_idle(self, "get_memory_pool_limit()") < 0)
        return NULL;
    long p;
    if (pool_arg(self, arg, &p) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(p == 0 ? trtl_builder_config_workspace(self->cfg) : 0);
}

static PyObject *config_add_profile(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (config_idle(self, "add_optimization_profile()") < 0)
        return NULL;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyObject_TypeCheck(arg, st->ProfileType))
        return PyErr_Format(PyExc_TypeError, "add_optimization_profile(): expected an IOptimizationProfile, not %s",
                            Py_TYPE(arg)->tp_name);
    TrtlProfile *pr = (TrtlProfile *)arg;
    if (PyDict_Size(pr->shapes) == 0 && PyDict_Size(pr->values) == 0)
        return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT,
                                 "add_optimization_profile(): the profile has no shapes (call profile.set_shape first)");
    int32_t idx = trtl_builder_config_num_profiles(self->cfg);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(pr->shapes, &pos, &k, &v)) {
        trtl_dims d[3];
        for (int i = 0; i < 3; i++)
            if (trtl_py_to_dims(st, PyTuple_GET_ITEM(v, i), &d[i], "profile shape") < 0)
                return NULL;
        trtl_status s = trtl_builder_config_set_shape(self->cfg, idx, PyUnicode_AsUTF8(k), &d[0], &d[1], &d[2]);
        if (s != TRTL_OK)
            return trtl_py_raise(st, s);
    }
    if (trtl_py_profile_push_values(st, self->cfg, idx, pr->values) < 0)
        return NULL;
    return PyLong_FromLong(idx);
}

static PyObject *config_true(TrtlBuilderConfigObj *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_TRUE;
}

static PyObject *config_none(TrtlBuilderConfigObj *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_NONE;
}

static PyObject *config_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *config_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyObject *cfg_get_workspace(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(trtl_builder_config_workspace(self->cfg));
}
static int cfg_set_workspace(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    unsigned long long x = v ? PyLong_AsUnsignedLongLong(v) : 0;
    if (PyErr_Occurred())
        return -1;
    trtl_builder_config_set_workspace(self->cfg, x);
    return 0;
}
static PyObject *cfg_get_flags(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    unsigned long flags = 0;
    for (int f = 0; f < TRTL_FLAG_COUNT; f++)
        if (trtl_builder_config_get_flag(self->cfg, f))
            flags |= 1ul << f;
    return PyLong_FromUnsignedLong(flags);
}
static int cfg_set_flags(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    unsigned long x = v ? PyLong_AsUnsignedLong(v) : 0;
    if (PyErr_Occurred())
        return -1;
    for (int f = 0; f < TRTL_FLAG_COUNT; f++)
        trtl_builder_config_set_flag(self->cfg, f, (int)((x >> f) & 1u));
    return 0;
}

#define INT_PROP(getname, setname, getter_fn, setter_fn, pyname)          \
    static PyObject *getname(TrtlBuilderConfigObj *self, void *c)             \
    {                                                             \
        (void)c;                                                  \
        return PyLong_FromLong(getter_fn(self->cfg));             \
    }                                                             \
    static int setname(TrtlBuilderConfigObj *self, PyObject *v, void *c)      \
    {                                                             \
        (void)c;                                                  \
        int32_t x;                                                \
        if (trtl_py_as_int32(v, pyname, &x) < 0)                  \
            return -1;                                            \
        trtl_status s = setter_fn(self->cfg, (int32_t)x);         \
        if (s != TRTL_OK) {                                       \
            trtl_py_raise(TRTL_STATE(self), s);                   \
            return -1;                                            \
        }                                                         \
        return 0;                                                 \
    }
INT_PROP(cfg_get_timing, cfg_set_timing, trtl_builder_config_avg_timing_iterations,
         trtl_builder_config_set_avg_timing_iterations, "avg_timing_iterations")
INT_PROP(cfg_get_level, cfg_set_level, trtl_builder_config_optimization_level, trtl_builder_config_set_optimization_level,
         "builder_optimization_level")

static PyObject *cfg_get_threads(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_builder_config_num_threads(self->cfg));
}
static int cfg_set_threads(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    int32_t x;
    if (trtl_py_as_int32(v, "num_threads", &x) < 0)
        return -1;
    trtl_status s = trtl_builder_config_set_num_threads(self->cfg, (int32_t)x);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}
static PyObject *cfg_get_nprof(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_builder_config_num_profiles(self->cfg));
}
static PyObject *cfg_get_calib(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    return Py_NewRef(self->int8_calibrator ? self->int8_calibrator : Py_None);
}
static int cfg_set_calib(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    Py_XINCREF(v);
    Py_XSETREF(self->int8_calibrator, v);
    return 0;
}
static PyObject *cfg_get_progress(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    return Py_NewRef(self->progress_monitor ? self->progress_monitor : Py_None);
}
static int cfg_set_progress(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    if (v && v != Py_None && !PyObject_HasAttrString(v, "step_complete")) {
        PyErr_SetString(PyExc_TypeError, "progress_monitor must be a trt.IProgressMonitor (phase_start, step_complete, "
                        "phase_finish)");
        return -1;
    }
    Py_XINCREF(v);
    Py_XSETREF(self->progress_monitor, v);
    return 0;
}
static PyObject *cfg_get_verbosity(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "ProfilingVerbosity", self->profiling_verbosity);
}
static int cfg_set_verbosity(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    long x = trtl_py_as_long(v, "profiling_verbosity");
    if (x == -1 && PyErr_Occurred())
        return -1;
    self->profiling_verbosity = x;
    return 0;
}

/* ---- builder pass switches (trtlite's own; TensorRT has none) ---------------------------- */

/* The name argument of the pass switches: a str. */
static const char *pass_name_arg(PyObject *o, const char *fn)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): the pass name must be a str, not %s", fn, Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(o, &len);
    if (s && strlen(s) != (size_t)len) {
        PyErr_Format(PyExc_ValueError, "%s(): the pass name contains a NUL character", fn);
        return NULL;
    }
    return s;
}

static PyObject *config_set_pass_enabled(TrtlBuilderConfigObj *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "enabled", NULL};
    PyObject *name_obj;
    int on;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Op:set_pass_enabled", kw, &name_obj, &on))
        return NULL;
    const char *name = pass_name_arg(name_obj, "set_pass_enabled");
    if (!name)
        return NULL;
    trtl_status s = trtl_builder_config_set_pass_enabled(self->cfg, name, on);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_NONE;
}

static PyObject *config_get_pass_enabled(TrtlBuilderConfigObj *self, PyObject *arg)
{
    const char *name = pass_name_arg(arg, "get_pass_enabled");
    int on = 0;
    if (!name)
        return NULL;
    trtl_status s = trtl_builder_config_get_pass_enabled(self->cfg, name, &on);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    return PyBool_FromLong(on);
}

static PyObject *cfg_get_disabled_passes(TrtlBuilderConfigObj *self, void *c)
{
    (void)c;
    PyObject *l = PyList_New(0);
    for (int32_t i = 0; l && i < trtl_builder_pass_count(); i++) {
        const char *name, *desc;
        int32_t level;
        int on = 1;
        if (trtl_builder_pass_info(i, &name, &level, &desc) != TRTL_OK ||
            trtl_builder_config_get_pass_enabled(self->cfg, name, &on) != TRTL_OK || on)
            continue;
        PyObject *s = PyUnicode_FromString(name);
        if (!s || PyList_Append(l, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(l);
            break;
        }
        Py_DECREF(s);
    }
    return l;
}

/* Assigning a list of names switches exactly those passes off (all names are checked first). */
static int cfg_set_disabled_passes(TrtlBuilderConfigObj *self, PyObject *v, void *c)
{
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_TypeError, "disabled_passes cannot be deleted (assign [] to enable every pass)");
        return -1;
    }
    if (PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "disabled_passes must be a list of pass names, not a str");
        return -1;
    }
    PyObject *seq = PySequence_Fast(v, "disabled_passes must be a list of pass names");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int ret = 0, on;
    for (Py_ssize_t k = 0; ret == 0 && k < n; k++) {
        const char *name = pass_name_arg(PySequence_Fast_GET_ITEM(seq, k), "disabled_passes");
        trtl_status s = name ? trtl_builder_config_get_pass_enabled(self->cfg, name, &on) : TRTL_OK;
        if (!name || (s != TRTL_OK && !trtl_py_raise(TRTL_STATE(self), s)))
            ret = -1;
    }
    for (int32_t i = 0; ret == 0 && i < trtl_builder_pass_count(); i++) {
        const char *name, *desc;
        int32_t level;
        int off = 0;
        if (trtl_builder_pass_info(i, &name, &level, &desc) != TRTL_OK)
            continue;
        for (Py_ssize_t k = 0; k < n; k++)
            off |= strcmp(PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, k)), name) == 0;
        trtl_builder_config_set_pass_enabled(self->cfg, name, !off);
    }
    Py_DECREF(seq);
    return ret;
}

static PyObject *mod_builder_passes(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    PyObject *l = PyList_New(0);
    for (int32_t i = 0; l && i < trtl_builder_pass_count(); i++) {
        const char *name, *desc;
        int32_t level;
        if (trtl_builder_pass_info(i, &name, &level, &desc) != TRTL_OK)
            continue;
        PyObject *t = Py_BuildValue("(sis)", name, (int)level, desc);
        if (!t || PyList_Append(l, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(l);
            break;
        }
        Py_DECREF(t);
    }
    return l;
}

static PyMethodDef builder_pass_functions[] = {
    {"builder_passes", mod_builder_passes, METH_NOARGS,
     "builder_passes() -> list[tuple[str, int, str]]\n\nThe builder's optimization passes in run order, as (name, "
     "min_level, description): a pass runs when config.builder_optimization_level >= min_level and it is enabled "
     "(IBuilderConfig.set_pass_enabled; the environment variable TRTLITE_DISABLE_PASSES=\"a,b\", read at each build, "
     "switches passes off too).  trtlite's own API: TensorRT has no such switches."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef config_getset[] = {
    {"max_workspace_size", (getter)cfg_get_workspace, (setter)cfg_set_workspace, "Workspace limit in bytes.", NULL},
    {"flags", (getter)cfg_get_flags, (setter)cfg_set_flags, "BuilderFlag bitmask.", NULL},
    {"avg_timing_iterations", (getter)cfg_get_timing, (setter)cfg_set_timing,
     "Timed runs per candidate kernel when autotuning (0 disables timing).", NULL},
    {"builder_optimization_level", (getter)cfg_get_level, (setter)cfg_set_level,
     "0: reference kernels and no fusion; 1-5: all optimizations (default 3).", NULL},
    {"num_threads", (getter)cfg_get_threads, (setter)cfg_set_threads,
     "Threads of each execution context (0: the CPUs this process may use).", NULL},
    {"num_optimization_profiles", (getter)cfg_get_nprof, NULL, "Number of profiles added.", NULL},
    {"int8_calibrator", (getter)cfg_get_calib, (setter)cfg_set_calib, "INT8 calibrator object.", NULL},
    {"progress_monitor", (getter)cfg_get_progress, (setter)cfg_set_progress,
     "A trt.IProgressMonitor told about build phases and steps; step_complete() returning False cancels.", NULL},
    {"profiling_verbosity", (getter)cfg_get_verbosity, (setter)cfg_set_verbosity, "ProfilingVerbosity (informational).", NULL},
    {"disabled_passes", (getter)cfg_get_disabled_passes, (setter)cfg_set_disabled_passes,
     "Names of the builder passes this config switches off (trtlite's own; see trtlite.builder_passes()); assigning a "
     "list switches exactly those off.  Passes switched off by TRTLITE_DISABLE_PASSES are not listed.", NULL},
    TRTL_PY_CFG_DEVICE_GETSET
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef config_methods[] = {
    {"set_flag", (PyCFunction)config_set_flag, METH_O, "set_flag(flag) -> None\n\nEnable a BuilderFlag."},
    {"clear_flag", (PyCFunction)config_clear_flag, METH_O, "clear_flag(flag) -> None\n\nDisable a BuilderFlag."},
    {"get_flag", (PyCFunction)config_get_flag, METH_O, "get_flag(flag) -> bool\n\nWhether a BuilderFlag is set."},
    {"set_memory_pool_limit", (PyCFunction)(void (*)(void))config_set_pool, METH_VARARGS | METH_KEYWORDS,
     "set_memory_pool_limit(pool, pool_size) -> None\n\nMemoryPoolType.WORKSPACE limits scratch; others are GPU-only."},
    {"get_memory_pool_limit", (PyCFunction)config_get_pool, METH_O, "get_memory_pool_limit(pool) -> int\n\nThe limit set."},
    {"add_optimization_profile", (PyCFunction)config_add_profile, METH_O,
     "add_optimization_profile(profile) -> int\n\nAdd a profile; returns its index."},
    {"set_tactic_sources", (PyCFunction)config_true, METH_VARARGS, "set_tactic_sources(sources) -> True\n\nAccepted, no effect."},
    {"set_preview_feature", (PyCFunction)config_none, METH_VARARGS, "set_preview_feature(feature, enable)\n\nAccepted, no effect."},
    {"reset", (PyCFunction)config_none, METH_NOARGS, "reset() -> None\n\nNo effect (kept for compatibility)."},
    {"__enter__", config_enter, METH_NOARGS, "Context manager entry."},
    {"__exit__", config_exit, METH_VARARGS, "Context manager exit."},
    {"set_pass_enabled", (PyCFunction)(void (*)(void))config_set_pass_enabled, METH_VARARGS | METH_KEYWORDS,
     "set_pass_enabled(name, enabled) -> None\n\nSwitch builder pass `name` (see trtlite.builder_passes()) on or off "
     "for builds with this config; every pass is on by default.  An unknown name raises NotFoundError listing the "
     "passes.  trtlite's own API: TensorRT has no such switch."},
    {"get_pass_enabled", (PyCFunction)config_get_pass_enabled, METH_O,
     "get_pass_enabled(name) -> bool\n\nWhether this config leaves builder pass `name` on (TRTLITE_DISABLE_PASSES and "
     "builder_optimization_level are applied at build time and not reflected here)."},
    TRTL_PY_CFG_DEVICE_METHODS
    {"_repr_html_", trtl_py_view_html, METH_NOARGS, TRTL_PY_VIEW_HTML_DOC},
    TRTL_PY_CONFIG_TIMING_CACHE_METHODS
    {NULL, NULL, 0, NULL}};

static PyType_Slot config_slots[] = {
    {Py_tp_dealloc, config_dealloc},
    {Py_tp_traverse, config_traverse},
    {Py_tp_getset, config_getset},
    {Py_tp_methods, config_methods},
    {Py_tp_getattro, config_getattro},
    {Py_tp_setattro, config_setattro},
    {Py_tp_repr, trtl_py_view_repr},
    {Py_tp_doc, "Builder configuration (IBuilderConfig)."},
    {0, NULL}};

static PyType_Spec config_spec = {"trtlite.IBuilderConfig", sizeof(TrtlBuilderConfigObj), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  config_slots};

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
    trtl_py_state *st = TRTL_STATE(self);
    TrtlBuilderConfigObj *c = PyObject_GC_New(TrtlBuilderConfigObj, st->ConfigType);
    if (!c)
        return NULL;
    c->cfg = NULL;
    c->int8_calibrator = NULL;
    c->progress_monitor = NULL;
    c->profiling_verbosity = 0;
    c->building = 0;
    trtl_status s = trtl_builder_config_create(&c->cfg);
    if (s != TRTL_OK) {
        Py_DECREF(c);
        return trtl_py_raise(st, s);
    }
    PyObject_GC_Track(c);
    return (PyObject *)c;
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
                    trtl_engine **out, trtl_status *status)
{
    trtl_status s;
    if (trtl_py_network_idle(net, "building it") < 0 || (cfg_obj && config_idle(cfg_obj, "building with it") < 0))
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
    s = trtl_build(net->net, cfg, out);
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
        if (s == TRTL_OK)
            trtl_engine_destroy(*out);
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
        do_build(self, net, cfg, cfg->cfg, &e, &s) < 0)
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
    if (parse_build_args(self, args, kwargs, "OO:build_serialized_network", &net, &cfg) < 0 ||
        do_build(self, net, cfg, cfg->cfg, &e, &s) < 0)
        return NULL;
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    void *data;
    size_t size;
    s = trtl_engine_serialize(e, &data, &size);
    trtl_engine_destroy(e);
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
    if (do_build(self, (TrtlNetwork *)n, NULL, cfg, &e, &s) < 0) {
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
    st->ConfigType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &config_spec, NULL);
    if (!st->ConfigType || PyModule_AddType(m, st->ConfigType) < 0)
        return -1;
    st->BuilderType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &builder_spec, NULL);
    if (!st->BuilderType || PyModule_AddFunctions(m, builder_pass_functions) < 0)
        return -1;
    return PyModule_AddType(m, st->BuilderType);
}
