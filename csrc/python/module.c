/* module.c -- trtlite._C: module state, exceptions, status mapping, value converters. */
#include <stdarg.h>
#include <string.h>

#include "python/pytrtl.h"
#include "core/status.h"
#include "core/dims.h"

trtl_py_state *trtl_py_state_of_type(PyTypeObject *tp)
{
    PyObject *m = PyType_GetModuleByDef(tp, &trtl_py_module_def);
    if (!m) {
        PyErr_Clear();
        return NULL;
    }
    return (trtl_py_state *)PyModule_GetState(m);
}

/* ---- errors -------------------------------------------------------------------------------- */

PyObject *trtl_py_exc_for(trtl_py_state *st, trtl_status s)
{
    switch (s) {
    case TRTL_ERR_SHAPE: return st->ShapeError;
    case TRTL_ERR_INVALID_ARGUMENT: return st->InvalidArgumentError;
    case TRTL_ERR_DTYPE: return st->DTypeError;
    case TRTL_ERR_NOT_FOUND: return st->NotFoundError;
    case TRTL_ERR_UNSUPPORTED: return st->UnsupportedError;
    case TRTL_ERR_INVALID_PLAN:
    case TRTL_ERR_VERSION:
    case TRTL_ERR_CPU: return st->PlanError;
    case TRTL_ERR_PLUGIN: return st->PluginError;
    case TRTL_ERR_STATE: return st->StateError;
    case TRTL_ERR_OUT_OF_MEMORY: return st->OutOfMemoryError;
    default: return st->Error;
    }
}

PyObject *trtl_py_raise(trtl_py_state *st, trtl_status s)
{
    /* A Python exception raised inside a callback (plugin, logger) wins: it is more precise. */
    if (PyErr_Occurred())
        return NULL;
    const char *msg = trtl_last_error();
    PyErr_SetString(trtl_py_exc_for(st, s), msg && *msg ? msg : trtl_status_name(s));
    return NULL;
}

PyObject *trtl_py_raise_msg(trtl_py_state *st, trtl_status s, const char *fmt, ...)
{
    char buf[TRTL_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyErr_SetString(trtl_py_exc_for(st, s), buf);
    return NULL;
}

/* ---- converters ---------------------------------------------------------------------------- */

long trtl_py_as_long(PyObject *o, const char *what)
{
    if (!o || o == Py_None || PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or an enum value, not %s", what,
                     o ? Py_TYPE(o)->tp_name : "nothing");
        return -1;
    }
    return PyLong_AsLong(o);
}

int trtl_py_as_int32(PyObject *o, const char *what, int32_t *out)
{
    long v = trtl_py_as_long(o, what);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s = %ld does not fit a 32-bit integer", what, v);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

int trtl_py_to_dims(trtl_py_state *st, PyObject *o, trtl_dims *out, const char *what)
{
    memset(out, 0, sizeof *out);
    if (PyLong_Check(o) && !PyBool_Check(o)) { /* a bare int is a 1-D dims */
        out->nb_dims = 1;
        out->d[0] = PyLong_AsLongLong(o);
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of ints (tuple, list or trt.Dims), not %s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > TRTL_MAX_DIMS) {
        Py_DECREF(seq);
        trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s has %zd dims; at most %d are supported", what, n,
                          TRTL_MAX_DIMS);
        return -1;
    }
    out->nb_dims = (int32_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyIndex_Check(v) || PyBool_Check(v)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be an int, not %s", what, i, Py_TYPE(v)->tp_name);
            return -1;
        }
        out->d[i] = PyLong_AsLongLong(v);
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

PyObject *trtl_py_from_dims(trtl_py_state *st, const trtl_dims *d)
{
    int32_t n = d->nb_dims < 0 ? 0 : d->nb_dims;
    PyObject *t = PyTuple_New(n);
    if (!t)
        return NULL;
    for (int32_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLongLong(d->d[i]);
        if (!v) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    if (!st || !st->dims_cls)
        return t;
    PyObject *r = PyObject_CallOneArg(st->dims_cls, t);
    Py_DECREF(t);
    return r;
}

PyObject *trtl_py_enum(trtl_py_state *st, const char *enum_name, long v)
{
    PyObject *cls = st && st->enums && enum_name ? PyDict_GetItemString(st->enums, enum_name) : NULL;
    if (!cls)
        return PyLong_FromLong(v);
    PyObject *r = PyObject_CallFunction(cls, "l", v);
    /* A value the enum does not know (ValueError): give the int.  Anything else, KeyboardInterrupt
     * from a signal handler run meanwhile above all, is the caller's to see. */
    if (!r && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        return PyLong_FromLong(v);
    }
    return r;
}

/* Buffer format -> dtype of weights; -1 if unsupported. */
static int format_dtype(const char *fmt, Py_ssize_t itemsize)
{
    char c = fmt ? fmt[0] : 'B';
    if (c == '<' || c == '=' || c == '@' || c == '!' || c == '>')
        c = fmt[1];
    switch (c) {
    case 'f': return TRTL_FLOAT;
    case 'e': return TRTL_HALF;
    case 'd': return 100; /* float64: converted */
    case 'b': return TRTL_INT8;
    case 'B': return TRTL_UINT8;
    case '?': return TRTL_BOOL;
    case 'i':
    case 'l':
    case 'q':
    case 'h':
    case 'I':
    case 'L':
    case 'Q':
    case 'H': return itemsize == 4 ? TRTL_INT32 : 101; /* other ints: converted to int32 */
    default: return -1;
    }
}

/* The capsule of trtl_py_buffer_hold: owns a Py_buffer export and releases it when freed. */
#define HOLD_NAME "trtlite._C.buffer_export"

static void hold_release(PyObject *cap)
{
    Py_buffer *v = PyCapsule_GetPointer(cap, HOLD_NAME);
    if (!v)
        return;
    PyBuffer_Release(v);
    PyMem_Free(v);
}

PyObject *trtl_py_buffer_hold(PyObject *o, int flags, Py_buffer **view)
{
    Py_buffer *v = PyMem_Malloc(sizeof *v);
    if (!v)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(o, v, flags) != 0) {
        PyMem_Free(v);
        return NULL;
    }
    PyObject *cap = PyCapsule_New(v, HOLD_NAME, hold_release);
    if (!cap) {
        PyBuffer_Release(v);
        PyMem_Free(v);
        return NULL;
    }
    *view = v;
    return cap;
}

int trtl_py_to_weights(trtl_py_state *st, PyObject *o, trtl_weights *w, PyObject **keep, const char *what)
{
    memset(w, 0, sizeof *w);
    w->type = TRTL_FLOAT;
    *keep = NULL;
    if (o == NULL || o == Py_None)
        return 0;
    /* trt.Weights wraps an array in `_array` (None for empty weights). */
    PyObject *inner = PyObject_GetAttrString(o, "_trtl_array");
    if (inner) {
        int r = trtl_py_to_weights(st, inner, w, keep, what);
        Py_DECREF(inner);
        return r;
    }
    PyErr_Clear();
    Py_buffer *view;
    PyObject *hold = trtl_py_buffer_hold(o, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, &view);
    if (!hold) {
        PyErr_Clear();
        /* Lists, scalars and non-contiguous arrays: let numpy make an array (imported lazily). */
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np)
            return -1;
        PyObject *arr = PyObject_CallMethod(np, "ascontiguousarray", "O", o);
        Py_DECREF(np);
        if (!arr) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be a numpy array or trt.Weights, not %s", what, Py_TYPE(o)->tp_name);
            return -1;
        }
        hold = trtl_py_buffer_hold(arr, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, &view);
        if (!hold) {
            Py_DECREF(arr);
            return -1;
        }
        o = arr; /* owned */
    } else {
        Py_INCREF(o);
    }
    int dt = format_dtype(view->format, view->itemsize);
    Py_ssize_t count = view->itemsize ? view->len / view->itemsize : 0;
    if (dt < 0) {
        trtl_py_raise_msg(st, TRTL_ERR_DTYPE, "%s: array dtype '%s' is not supported (use float32, float16, int32, int8 or bool)",
                          what, view->format ? view->format : "?");
        Py_DECREF(hold);
        Py_DECREF(o);
        return -1;
    }
    if (dt == 100 || dt == 101) { /* convert into a bytes object we keep alive */
        PyObject *b = PyBytes_FromStringAndSize(NULL, count * 4);
        if (!b) {
            Py_DECREF(hold);
            Py_DECREF(o);
            return -1;
        }
        char *dst = PyBytes_AS_STRING(b);
        for (Py_ssize_t i = 0; i < count; i++) {
            const char *src = (const char *)view->buf + i * view->itemsize;
            if (dt == 100) {
                double dv;
                memcpy(&dv, src, 8);
                float f = (float)dv;
                memcpy(dst + 4 * i, &f, 4);
            } else {
                long long v = 0;
                int is_signed = !(view->format && strchr("BHILQ", view->format[strlen(view->format) - 1]));
                switch (view->itemsize) {
                case 1: v = is_signed ? *(const int8_t *)src : *(const uint8_t *)src; break;
                case 2: v = is_signed ? *(const int16_t *)src : *(const uint16_t *)src; break;
                case 8: v = *(const int64_t *)src; break;
                default: break;
                }
                if (v < INT32_MIN || v > INT32_MAX) {
                    Py_DECREF(b);
                    Py_DECREF(hold);
                    Py_DECREF(o);
                    trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s: value %lld at index %zd does not fit int32",
                                      what, v, i);
                    return -1;
                }
                int32_t iv = (int32_t)v;
                memcpy(dst + 4 * i, &iv, 4);
            }
        }
        /* The weights point into our own copy: the caller's buffer is free again. */
        Py_DECREF(hold);
        Py_DECREF(o);
        w->type = dt == 100 ? TRTL_FLOAT : TRTL_INT32;
        w->values = dst;
        w->count = count;
        *keep = Py_BuildValue("(NO)", b, Py_None);
        return *keep ? 0 : -1;
    }
    w->type = (trtl_dtype)dt;
    w->values = view->buf;
    w->count = count;
    /* Holding the export (not just a reference) is what keeps view->buf valid: an exporter may
     * move or free its memory while unexported (array.array on resize), and refuses to while
     * exported (BufferError). */
    *keep = Py_BuildValue("(NN)", o, hold);
    return *keep ? 0 : -1;
}

/* ---- logging ------------------------------------------------------------------------------- */

int trtl_py_keep_interrupt(trtl_py_sink *sink, PyObject *who)
{
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_WriteUnraisable(who);
        return 0;
    }
    if (sink && sink->keep && !sink->exc) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        if (ev && tb)
            PyException_SetTraceback(ev, tb);
        sink->exc = ev ? ev : Py_NewRef(Py_None);
        Py_XDECREF(et);
        Py_XDECREF(tb);
    } else {
        /* Nowhere to take it (a process-wide sink, or one already cancelling): a signal is raised
         * again at the main thread's next check, other such exceptions are reported. */
        if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            PyErr_Clear();
            PyErr_SetInterrupt();
        } else {
            PyErr_WriteUnraisable(who);
        }
    }
    return 1;
}

int trtl_py_sink_raise(trtl_py_sink *sink)
{
    if (!sink->exc)
        return 0;
    PyObject *e = sink->exc;
    sink->exc = NULL;
    if (e == Py_None) {
        Py_DECREF(e);
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    } else {
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(e)), e, PyException_GetTraceback(e));
    }
    return -1;
}

void trtl_py_log_cb(void *user, trtl_severity sev, const char *msg)
{
    trtl_py_sink *sink = user;
    if (!sink)
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    /* Read with the GIL: the process-wide sink's logger may be replaced by another thread.  None
     * while cancelling: the logger (or the monitor) raised already. */
    PyObject *logger = sink->exc ? NULL : Py_XNewRef(sink->logger);
    if (!logger) {
        PyGILState_Release(g);
        return;
    }
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyObject *sev_obj = trtl_py_enum(sink->st, "Severity", sev);
    PyObject *r = sev_obj ? PyObject_CallMethod(logger, "log", "Os", sev_obj, msg) : NULL;
    if (!r)
        trtl_py_keep_interrupt(sink, logger);
    Py_XDECREF(r);
    Py_XDECREF(sev_obj);
    Py_DECREF(logger);
    PyErr_Restore(et, ev, etb);
    PyGILState_Release(g);
}

/* ---- module functions ---------------------------------------------------------------------- */

static PyObject *mod_register(PyObject *m, PyObject *args)
{
    PyObject *enums, *dims_cls;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &enums, &dims_cls))
        return NULL;
    trtl_py_state *st = PyModule_GetState(m);
    Py_INCREF(enums);
    Py_XSETREF(st->enums, enums);
    Py_INCREF(dims_cls);
    Py_XSETREF(st->dims_cls, dims_cls);
    Py_RETURN_NONE;
}

static PyObject *mod_cpu_features(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    uint32_t f = trtl_cpu_features();
    static const struct { uint32_t bit; const char *name; } names[] = {
        {TRTL_CPU_SSE41, "sse4.1"}, {TRTL_CPU_AVX, "avx"}, {TRTL_CPU_AVX2, "avx2"}, {TRTL_CPU_FMA, "fma"},
        {TRTL_CPU_F16C, "f16c"}, {TRTL_CPU_AVX512F, "avx512f"}, {TRTL_CPU_AVX512BW, "avx512bw"},
        {TRTL_CPU_AVX512VNNI, "avx512vnni"}};
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < sizeof names / sizeof names[0]; i++)
        if (f & names[i].bit) {
            PyObject *s = PyUnicode_FromString(names[i].name);
            if (!s || PyList_Append(l, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(l);
                return NULL;
            }
            Py_DECREF(s);
        }
    return l;
}

static PyMethodDef module_methods[] = {
    {"_register", mod_register, METH_VARARGS,
     "_register(enums: dict, dims_cls) -> None\n\nInstall the Python enum classes and the Dims class used for return values."},
    {"cpu_features", mod_cpu_features, METH_NOARGS,
     "cpu_features() -> list[str]\n\nCPU features detected at run time (kernels are chosen by them)."},
    {NULL, NULL, 0, NULL}};

/* ---- init ---------------------------------------------------------------------------------- */

static int add_exc(PyObject *m, PyObject **slot, const char *name, PyObject *bases, const char *doc)
{
    char full[128];
    snprintf(full, sizeof full, "trtlite.%s", name);
    *slot = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    if (!*slot)
        return -1;
    return PyModule_AddObjectRef(m, name, *slot);
}

static int make_exceptions(PyObject *m, trtl_py_state *st)
{
    if (add_exc(m, &st->Error, "Error", PyExc_RuntimeError, "Base class of every error trtlite raises.") < 0)
        return -1;
    struct { PyObject **slot; const char *name; PyObject *base2; const char *doc; } list[] = {
        {&st->ShapeError, "ShapeError", PyExc_ValueError, "Tensor shapes do not fit a layer, binding or profile."},
        {&st->InvalidArgumentError, "InvalidArgumentError", PyExc_ValueError, "A value passed is out of range or malformed."},
        {&st->DTypeError, "DTypeError", PyExc_TypeError, "A data type is not supported where it is used."},
        {&st->NotFoundError, "NotFoundError", PyExc_LookupError, "A named tensor, layer, plugin or file does not exist."},
        {&st->UnsupportedError, "UnsupportedError", PyExc_NotImplementedError, "A valid request this build cannot do."},
        {&st->PlanError, "PlanError", PyExc_ValueError, "A serialized plan is truncated, corrupt, foreign or of another version."},
        {&st->PluginError, "PluginError", NULL, "A plugin failed or is missing."},
        {&st->StateError, "StateError", NULL, "A call was made in the wrong state (e.g. input shapes not set)."},
        {&st->OutOfMemoryError, "OutOfMemoryError", PyExc_MemoryError, "Memory could not be allocated."},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
        PyObject *bases = list[i].base2 ? PyTuple_Pack(2, st->Error, list[i].base2) : PyTuple_Pack(1, st->Error);
        if (!bases)
            return -1;
        int r = add_exc(m, list[i].slot, list[i].name, bases, list[i].doc);
        Py_DECREF(bases);
        if (r < 0)
            return -1;
    }
    /* Both: it is a plugin's error, and code written against the field checks' earlier
     * InvalidArgumentError keeps catching it. */
    PyObject *bases = PyTuple_Pack(2, st->PluginError, st->InvalidArgumentError);
    if (!bases)
        return -1;
    int r = add_exc(m, &st->PluginFieldError, "PluginFieldError", bases,
                    "A plugin field is unknown to its creator's type, of the wrong type, missing, or holds values "
                    "that do not fit its type.");
    Py_DECREF(bases);
    return r;
}

static int module_exec(PyObject *m)
{
    trtl_py_state *st = PyModule_GetState(m);
    st->module = m;
    st->enums = PyDict_New();
    if (!st->enums)
        return -1;
    if (make_exceptions(m, st) < 0 || trtl_py_init_tensor(m, st) < 0 || trtl_py_init_layers(m, st) < 0 ||
        trtl_py_init_network(m, st) < 0 || trtl_py_init_builder(m, st) < 0 || trtl_py_init_engine(m, st) < 0 ||
        trtl_py_init_context(m, st) < 0 || trtl_py_init_plugins(m, st) < 0)
        return -1;
    if (PyModule_AddStringConstant(m, "__version__", trtl_version()) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    trtl_py_state *st = PyModule_GetState(m);
    if (!st)
        return 0;
    Py_VISIT(st->Error);
    Py_VISIT(st->ShapeError);
    Py_VISIT(st->InvalidArgumentError);
    Py_VISIT(st->DTypeError);
    Py_VISIT(st->NotFoundError);
    Py_VISIT(st->UnsupportedError);
    Py_VISIT(st->PlanError);
    Py_VISIT(st->PluginError);
    Py_VISIT(st->StateError);
    Py_VISIT(st->OutOfMemoryError);
    Py_VISIT(st->PluginFieldError);
    Py_VISIT(st->NetworkType);
    Py_VISIT(st->LayerType);
    Py_VISIT(st->TensorType);
    Py_VISIT(st->BuilderType);
    Py_VISIT(st->ConfigType);
    Py_VISIT(st->ProfileType);
    Py_VISIT(st->RuntimeType);
    Py_VISIT(st->EngineType);
    Py_VISIT(st->ContextType);
    Py_VISIT(st->HostMemoryType);
    Py_VISIT(st->InspectorType);
    for (int i = 0; i < TRTL_OP_COUNT; i++)
        Py_VISIT(st->layer_types[i]);
    Py_VISIT(st->enums);
    Py_VISIT(st->dims_cls);
    Py_VISIT(st->plugin_hooks);
    if (st->log_sink)
        Py_VISIT(st->log_sink->logger);
    return 0;
}

static int module_clear(PyObject *m)
{
    trtl_py_state *st = PyModule_GetState(m);
    if (!st)
        return 0;
    Py_CLEAR(st->Error);
    Py_CLEAR(st->ShapeError);
    Py_CLEAR(st->InvalidArgumentError);
    Py_CLEAR(st->DTypeError);
    Py_CLEAR(st->NotFoundError);
    Py_CLEAR(st->UnsupportedError);
    Py_CLEAR(st->PlanError);
    Py_CLEAR(st->PluginError);
    Py_CLEAR(st->StateError);
    Py_CLEAR(st->OutOfMemoryError);
    Py_CLEAR(st->PluginFieldError);
    Py_CLEAR(st->NetworkType);
    Py_CLEAR(st->LayerType);
    Py_CLEAR(st->TensorType);
    Py_CLEAR(st->BuilderType);
    Py_CLEAR(st->ConfigType);
    Py_CLEAR(st->ProfileType);
    Py_CLEAR(st->RuntimeType);
    Py_CLEAR(st->EngineType);
    Py_CLEAR(st->ContextType);
    Py_CLEAR(st->HostMemoryType);
    Py_CLEAR(st->InspectorType);
    for (int i = 0; i < TRTL_OP_COUNT; i++)
        Py_CLEAR(st->layer_types[i]);
    Py_CLEAR(st->enums);
    Py_CLEAR(st->dims_cls);
    Py_CLEAR(st->plugin_hooks);
    if (st->log_sink) {
        trtl_set_log_callback(NULL, NULL);
        Py_CLEAR(st->log_sink->logger);
        Py_CLEAR(st->log_sink->exc);
        PyMem_RawFree(st->log_sink);
        st->log_sink = NULL;
    }
    return 0;
}

/* After every type of the module is gone (each holds a reference to the module). */
static void module_free(void *m)
{
    module_clear((PyObject *)m);
    trtl_py_state *st = PyModule_GetState((PyObject *)m);
    if (!st)
        return;
    PyMem_Free(st->layer_getsets);
    PyMem_Free(st->layer_type_names);
    PyMem_Free(st->network_methods);
    st->layer_getsets = NULL;
    st->layer_type_names = NULL;
    st->network_methods = NULL;
}

/* Not for subinterpreters (Python >= 3.12 refuses the import there): the C library's plugin
 * registry and its log sink are process-wide and would hand one interpreter's Python creators and
 * logger to another, and callbacks from C take the GIL with PyGILState_Ensure, which knows only
 * the main interpreter.  Several instances of the module in one interpreter are fine: everything
 * else lives in the module state. */
static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL}};

PyModuleDef trtl_py_module_def = {
    PyModuleDef_HEAD_INIT,
    "trtlite._C",
    "trtlite's C core: network definition, builder, engine and execution context.",
    sizeof(trtl_py_state),
    module_methods,
    module_slots,
    module_traverse,
    module_clear,
    module_free};

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&trtl_py_module_def); }
