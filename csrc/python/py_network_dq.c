/* py_network_dq.c -- INetworkDefinition.add_dynamic_quantize(_v2): the layer is composed in Python from existing
 * layers (trtlite/dynamic_quantize.py); the network type is immutable, so these forwarders are its methods. */
#include "python/py_network_dq.h"

static PyObject *forward(PyObject *self, PyObject *args, PyObject *kwargs, const char *hook)
{
    trtl_py_state *st = TRTL_STATE(self);
    PyObject *f = st->plugin_hooks ? PyDict_GetItemString(st->plugin_hooks, hook) : NULL;
    if (!f)
        return PyErr_Format(PyExc_RuntimeError, "%s(): trtlite.dynamic_quantize is not imported", hook + 1);
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *a = PyTuple_New(n + 1);
    if (!a)
        return NULL;
    PyTuple_SET_ITEM(a, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(a, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    PyObject *r = PyObject_Call(f, a, kwargs);
    Py_DECREF(a);
    return r;
}

PyObject *trtl_py_network_add_dynamic_quantize(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return forward(self, args, kwargs, "_add_dynamic_quantize");
}

PyObject *trtl_py_network_add_dynamic_quantize_v2(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return forward(self, args, kwargs, "_add_dynamic_quantize_v2");
}
