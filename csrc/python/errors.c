/* errors.c -- trtlite's exception classes and the one mapping of trtl_status to them. */
#include <stdarg.h>
#include <stdio.h>

#include "python/errors.h"

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
    char buf[1024]; /* as long as trtl_last_error() messages */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyErr_SetString(trtl_py_exc_for(st, s), buf);
    return NULL;
}

static int add_exc(PyObject *m, PyObject **slot, const char *name, PyObject *bases, const char *doc)
{
    char full[128];
    snprintf(full, sizeof full, "trtlite.%s", name);
    *slot = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    if (!*slot)
        return -1;
    return PyModule_AddObjectRef(m, name, *slot);
}

int trtl_py_init_errors(PyObject *m, trtl_py_state *st)
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

