/* views.c -- repr, _repr_html_, to_dot and to_svg of the bindings' types, delegated to trtlite/_views.py. */
#include "python/views.h"

static PyObject *call_view(PyObject *self, const char *fn)
{
    PyObject *mod = PyImport_ImportModule("trtlite._views");
    if (!mod)
        return NULL;
    PyObject *r = PyObject_CallMethod(mod, fn, "O", self);
    Py_DECREF(mod);
    return r;
}

PyObject *trtl_py_view_repr(PyObject *self)
{
    PyObject *r = call_view(self, "repr");
    if (r || !PyErr_ExceptionMatches(PyExc_Exception))
        return r; /* a KeyboardInterrupt is not swallowed */
    PyErr_Clear();
    return PyUnicode_FromFormat("<%s object at %p>", Py_TYPE(self)->tp_name, (void *)self);
}

PyObject *trtl_py_view_html(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_view(self, "html");
}

PyObject *trtl_py_view_dot(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_view(self, "to_dot");
}

PyObject *trtl_py_view_svg(PyObject *self, PyObject *unused)
{
    (void)unused;
    return call_view(self, "to_svg");
}
