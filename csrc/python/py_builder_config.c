/* py_builder_config.c -- trtlite.IBuilderConfig (and the module function builder_passes()); its timing-cache
 * methods are py_timing_cache.c's, its device-type methods py_config_device.c's. */
#include <string.h>

#include "python/py_builder_config.h"
#include "python/py_timing_cache.h"
int trtl_py_config_idle(TrtlBuilderConfigObj *self, const char *what)
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
        trtl_py_config_idle((TrtlBuilderConfigObj *)self, what);
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
        return trtl_py_config_idle((TrtlBuilderConfigObj *)self, what);
    }
    return PyObject_GenericSetAttr(self, name, v);
}

/* ---- BuilderConfig ------------------------------------------------------------------------- */

static void config_dealloc(TrtlBuilderConfigObj *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->int8_calibrator);
    Py_CLEAR(self->progress_monitor);
    Py_CLEAR(self->calibration_profile);
    trtl_builder_config_destroy(self->cfg);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int config_traverse(TrtlBuilderConfigObj *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->int8_calibrator);
    Py_VISIT(self->progress_monitor);
    Py_VISIT(self->calibration_profile);
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
    if (trtl_py_config_idle(self, "set_flag()") < 0)
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
    if (trtl_py_config_idle(self, "clear_flag()") < 0)
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
    if (trtl_py_config_idle(self, "get_flag()") < 0)
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
        trtl_py_config_idle(self, "set_memory_pool_limit()") < 0)
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
    if (trtl_py_config_idle(self, "get_memory_pool_limit()") < 0)
        return NULL;
    long p;
    if (pool_arg(self, arg, &p) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(p == 0 ? trtl_builder_config_workspace(self->cfg) : 0);
}

static PyObject *config_add_profile(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (trtl_py_config_idle(self, "add_optimization_profile()") < 0)
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

/* The profile whose opt shapes INT8 calibration feeds (trtlite/calibration.py reads it back); None clears. */
static PyObject *config_set_calib_profile(TrtlBuilderConfigObj *self, PyObject *arg)
{
    if (trtl_py_config_idle(self, "set_calibration_profile()") < 0)
        return NULL;
    if (arg != Py_None && !PyObject_TypeCheck(arg, TRTL_STATE(self)->ProfileType))
        return PyErr_Format(PyExc_TypeError, "set_calibration_profile(): expected an IOptimizationProfile, not %s",
                            Py_TYPE(arg)->tp_name);
    Py_XSETREF(self->calibration_profile, arg == Py_None ? NULL : Py_NewRef(arg));
    Py_RETURN_TRUE;
}

static PyObject *config_get_calib_profile(TrtlBuilderConfigObj *self, PyObject *noargs)
{
    (void)noargs;
    return Py_NewRef(self->calibration_profile ? self->calibration_profile : Py_None);
}

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
    TRTL_PY_CFG_PREVIEW_METHODS
    {"_repr_html_", trtl_py_view_html, METH_NOARGS, TRTL_PY_VIEW_HTML_DOC},
    TRTL_PY_CONFIG_TIMING_CACHE_METHODS
    {"set_calibration_profile", (PyCFunction)config_set_calib_profile, METH_O,
     "set_calibration_profile(profile) -> bool\n\nINT8 calibration runs the calibrator's batches at this profile's opt "
     "shapes (inputs with dynamic dimensions whose get_batch() entries are addresses need it); None clears."},
    {"get_calibration_profile", (PyCFunction)config_get_calib_profile, METH_NOARGS,
     "get_calibration_profile() -> IOptimizationProfile\n\nThe profile set by set_calibration_profile, or None."},
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

PyObject *trtl_py_builder_config_new(trtl_py_state *st)
{
    TrtlBuilderConfigObj *c = PyObject_GC_New(TrtlBuilderConfigObj, st->ConfigType);
    if (!c)
        return NULL;
    c->cfg = NULL;
    c->int8_calibrator = NULL;
    c->progress_monitor = NULL;
    c->profiling_verbosity = 0;
    c->building = 0;
    c->dla_core = -1;
    c->calibration_profile = NULL;
    c->preview_features = TRTL_PY_PREVIEW_DEFAULT;
    trtl_status s = trtl_builder_config_create(&c->cfg);
    if (s != TRTL_OK) {
        Py_DECREF(c);
        return trtl_py_raise(st, s);
    }
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

int trtl_py_init_builder_config(PyObject *m, trtl_py_state *st)
{
    st->ConfigType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &config_spec, NULL);
    if (!st->ConfigType || PyModule_AddType(m, st->ConfigType) < 0)
        return -1;
    return PyModule_AddFunctions(m, builder_pass_functions);
}
