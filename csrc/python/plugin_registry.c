/* plugin_registry.c -- the plugin registry's functions (wrapped by trtlite/plugins.py) and the
 * log sink for messages outside builds. */
#include "python/py_plugin.h"
#include "python/plugin_types.h"
#include "python/plugin_adapter.h"
#include "python/sink.h"

static PyObject *reg_list(PyObject *m, PyObject *unused)
{
    (void)unused;
    trtl_py_state *st = PyModule_GetState(m);
    const trtl_plugin_creator **arr;
    int32_t n;
    trtl_status s = trtl_plugin_list(&arr, &n);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    PyObject *l = PyList_New(0);
    for (int32_t i = 0; l && i < n; i++) {
        PyObject *o = trtl_py_creator_to_py(st, arr[i]);
        if (!o || PyList_Append(l, o) < 0)
            Py_CLEAR(l);
        Py_XDECREF(o);
    }
    trtl_free(arr);
    return l;
}

static PyObject *reg_get(PyObject *m, PyObject *args)
{
    const char *type, *version, *ns = "";
    if (!PyArg_ParseTuple(args, "ss|s:get_plugin_creator", &type, &version, &ns))
        return NULL;
    const trtl_plugin_creator *c = trtl_plugin_find(type, version, ns);
    if (!c)
        Py_RETURN_NONE;
    return trtl_py_creator_to_py(PyModule_GetState(m), c);
}

static const trtl_plugin_creator *creator_of(trtl_py_state *st, PyObject *obj, int make)
{
    if (PyObject_TypeCheck(obj, trtl_py_creator_type(st)))
        return ((TrtlCreatorObj *)obj)->c;
    /* A Python creator registered before? */
    const trtl_plugin_creator **arr;
    int32_t n;
    const trtl_plugin_creator *found = NULL;
    if (trtl_plugin_list(&arr, &n) == TRTL_OK) {
        for (int32_t i = 0; i < n && !found; i++)
            if (trtl_py_python_creator_obj(arr[i]) == obj)
                found = arr[i];
        trtl_free(arr);
    }
    if (found || !make)
        return found;
    return trtl_py_creator_make(st, obj);
}

static PyObject *reg_register(PyObject *m, PyObject *args)
{
    PyObject *obj;
    const char *ns = NULL;
    trtl_py_state *st = PyModule_GetState(m);
    if (!PyArg_ParseTuple(args, "O|z:register_creator", &obj, &ns))
        return NULL;
    const trtl_plugin_creator *c = creator_of(st, obj, 1);
    if (!c)
        return NULL;
    int added = 0;
    trtl_status s = trtl_plugin_register(c, ns, &added);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return PyBool_FromLong(added);
}

static PyObject *reg_deregister(PyObject *m, PyObject *obj)
{
    trtl_py_state *st = PyModule_GetState(m);
    const trtl_plugin_creator *c = creator_of(st, obj, 0);
    if (!c || trtl_plugin_deregister(c) != TRTL_OK)
        Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

static PyObject *reg_load_library(PyObject *m, PyObject *arg)
{
    trtl_py_state *st = PyModule_GetState(m);
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    trtl_status s;
    const char *p = PyBytes_AS_STRING(bytes);
    Py_BEGIN_ALLOW_THREADS
    s = trtl_plugin_load_library(p);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_TRUE;
}

static PyObject *reg_init_builtins(PyObject *m, PyObject *args)
{
    const char *ns = "";
    if (!PyArg_ParseTuple(args, "|s:init_libnvinfer_plugins", &ns))
        return NULL;
    trtl_status s = trtl_plugin_init_builtins(ns);
    if (s != TRTL_OK)
        return trtl_py_raise(PyModule_GetState(m), s);
    Py_RETURN_TRUE;
}

/* Capsule with a C adapter around a Python plugin object, for add_plugin_v2. */
static PyObject *py_plugin_capsule(PyObject *m, PyObject *obj)
{
    trtl_py_state *st = PyModule_GetState(m);
    PyObject *clone = PyObject_CallMethod(obj, "clone", NULL);
    if (!clone)
        return NULL;
    PyObject *type = trtl_py_attr_str(obj, "plugin_type", ""), *ver = type ? trtl_py_attr_str(obj, "plugin_version", "1") : NULL;
    PyObject *ns = ver ? trtl_py_attr_str(obj, "plugin_namespace", "") : NULL;
    const trtl_plugin_creator *c = NULL;
    if (ns)
        c = trtl_plugin_find(PyUnicode_AsUTF8(type), PyUnicode_AsUTF8(ver), PyUnicode_AsUTF8(ns));
    Py_XDECREF(type);
    Py_XDECREF(ver);
    Py_XDECREF(ns);
    if (PyErr_Occurred()) {
        Py_DECREF(clone);
        return NULL;
    }
    trtl_plugin *p = trtl_py_plugin_from_py(st, clone, c);
    Py_DECREF(clone);
    if (!p)
        return NULL;
    return PyCapsule_New(p, "trtlite.plugin", NULL);
}

/* The C library has one log sink for messages outside builds (process-wide); this module's sink
 * (in its state) carries the logger and the state to it.  Setting a logger replaces whatever
 * sink was installed; the module removes its own when freed. */
static PyObject *set_logger(PyObject *m, PyObject *logger)
{
    trtl_py_state *st = PyModule_GetState(m);
    if (PyDict_SetItemString(st->plugin_hooks, "_logger", logger) < 0)
        return NULL;
    if (!st->log_sink) {
        st->log_sink = PyMem_RawCalloc(1, sizeof *st->log_sink);
        if (!st->log_sink)
            return PyErr_NoMemory();
        st->log_sink->st = st;
    }
    trtl_set_log_callback(NULL, NULL);
    Py_XSETREF(st->log_sink->logger, logger == Py_None ? NULL : Py_NewRef(logger));
    if (st->log_sink->logger)
        trtl_set_log_callback(trtl_py_log_cb, st->log_sink);
    Py_RETURN_NONE;
}

static PyObject *register_plugin_classes(PyObject *m, PyObject *args)
{
    PyObject *pf, *pfc, *reg, *conv;
    if (!PyArg_ParseTuple(args, "OOOO", &pf, &pfc, &reg, &conv))
        return NULL;
    trtl_py_state *st = PyModule_GetState(m);
    if (PyDict_SetItemString(st->plugin_hooks, "PluginField", pf) < 0 ||
        PyDict_SetItemString(st->plugin_hooks, "PluginFieldCollection", pfc) < 0 ||
        PyDict_SetItemString(st->plugin_hooks, "_registry", reg) < 0 ||
        PyDict_SetItemString(st->plugin_hooks, "_field_array", conv) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Installs a Python helper the C side calls by name (network.add_plugin_v3 / add_plugin). */
static PyObject *set_plugin_hook(PyObject *m, PyObject *args)
{
    const char *name;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "sO:_set_plugin_hook", &name, &fn))
        return NULL;
    if (PyDict_SetItemString(((trtl_py_state *)PyModule_GetState(m))->plugin_hooks, name, fn) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef trtl_py_plugin_functions[] = {
    {"_registry_list", reg_list, METH_NOARGS, "Registered creators."},
    {"_registry_get", reg_get, METH_VARARGS, "Creator by (type, version, namespace) or None."},
    {"_registry_register", reg_register, METH_VARARGS, "Register a creator; False for a duplicate."},
    {"_registry_deregister", reg_deregister, METH_O, "Deregister a creator; False if it was not registered."},
    {"_registry_load_library", reg_load_library, METH_O, "dlopen a plugin library and register its creators."},
    {"_init_builtins", reg_init_builtins, METH_VARARGS, "Register the built-in plugins under a namespace."},
    {"_python_plugin_capsule", py_plugin_capsule, METH_O, "A C adapter (capsule) around a Python plugin."},
    {"_set_plugin_hook", set_plugin_hook, METH_VARARGS, "Install a Python helper the bindings call by name."},
    {"_set_logger", set_logger, METH_O, "Logger for messages outside builds (registry, plugins)."},
    {"_register_plugin_classes", register_plugin_classes, METH_VARARGS,
     "Install PluginField/PluginFieldCollection, the registry object (Runtime.get_plugin_registry) and the field "
     "data converter."},
    {NULL, NULL, 0, NULL}};

int trtl_py_init_plugins(PyObject *m, trtl_py_state *st)
{
    st->plugin_hooks = PyDict_New();
    if (!st->plugin_hooks || trtl_py_init_plugin_types(m, st) < 0)
        return -1;
    return PyModule_AddFunctions(m, trtl_py_plugin_functions);
}
