/* py_network_plugin.c -- INetworkDefinition.add_plugin_v3 / add_plugin: both turn the plugin into one that
 * add_plugin_v2 takes (an IPluginV3 through its adapter, trtlite/plugins_dynamic.py), so the work is done in
 * Python; the network type is immutable, so these forwarders are its methods. */
#include "python/py_network_plugin.h"

static PyObject *forward(PyObject *self, PyObject *args, PyObject *kwargs, const char *hook, const char *what)
{
    trtl_py_state *st = TRTL_STATE(self);
    PyObject *f = st->plugin_hooks ? PyDict_GetItemString(st->plugin_hooks, hook) : NULL; /* borrowed */
    if (!f)
        return PyErr_Format(PyExc_RuntimeError, "%s(): trtlite's plugin module is not initialized", what);
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

PyObject *trtl_py_network_add_plugin_v3(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return forward(self, args, kwargs, "_add_plugin_v3", "add_plugin_v3");
}

PyObject *trtl_py_network_add_plugin(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return forward(self, args, kwargs, "_add_plugin", "add_plugin");
}
