/* py_refit.c -- the engine's refit calls (trtlite.h, engine/refit.c) for trtlite.Refitter, which keeps the
 * weights a user sets and applies them together in refit_cuda_engine (trtlite/refit.py). */
#include "python/py_refit.h"
#include "python/py_network.h"

static int engine_arg(trtl_py_state *st, PyObject *o, trtl_engine **e)
{
    if (!PyObject_TypeCheck(o, st->EngineType)) {
        PyErr_Format(PyExc_TypeError, "Refitter: engine must be an ICudaEngine, not %s", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (trtl_py_engine_ready((TrtlEngine *)o) < 0)
        return -1;
    *e = ((TrtlEngine *)o)->e;
    return 0;
}

static PyObject *refit_info(PyObject *m, PyObject *arg)
{
    trtl_py_state *st = PyModule_GetState(m);
    trtl_engine *e;
    if (engine_arg(st, arg, &e) < 0)
        return NULL;
    int32_t n = trtl_engine_refit_count(e);
    PyObject *l = PyList_New(n);
    for (int32_t i = 0; l && i < n; i++) {
        char name[1024];
        int32_t role;
        int64_t count;
        if (trtl_engine_refit_info(e, i, name, sizeof name, &role, &count) != TRTL_OK) {
            Py_DECREF(l);
            return trtl_py_raise(st, trtl_last_status());
        }
        PyObject *t = Py_BuildValue("(siL)", name, (int)role, (long long)count);
        if (!t)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, i, t);
    }
    return l;
}

static PyObject *refit_check(PyObject *m, PyObject *args)
{
    trtl_py_state *st = PyModule_GetState(m);
    PyObject *eo;
    const char *layer;
    int role;
    long long count;
    trtl_engine *e;
    if (!PyArg_ParseTuple(args, "OsiL:_refit_check", &eo, &layer, &role, &count) || engine_arg(st, eo, &e) < 0)
        return NULL;
    if (trtl_engine_refit_check(e, layer, role, count) != TRTL_OK)
        return trtl_py_raise(st, trtl_last_status());
    Py_RETURN_NONE;
}

/* values: a C-contiguous float32 buffer (trtlite/refit.py converts). */
static PyObject *refit_apply(PyObject *m, PyObject *args)
{
    trtl_py_state *st = PyModule_GetState(m);
    PyObject *eo;
    const char *layer;
    int role;
    Py_buffer b;
    trtl_engine *e;
    if (!PyArg_ParseTuple(args, "Osiy*:_refit_apply", &eo, &layer, &role, &b))
        return NULL;
    if (engine_arg(st, eo, &e) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    trtl_weights w = {TRTL_FLOAT, b.buf, (int64_t)(b.len / (Py_ssize_t)sizeof(float))};
    trtl_status s = trtl_engine_refit(e, layer, role, &w);
    PyBuffer_Release(&b);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_NONE;
}

/* _refit_names(engine) -> [(layer, role, name)]: the engine's weights names (plans keep them). */
static PyObject *refit_names(PyObject *m, PyObject *arg)
{
    trtl_py_state *st = PyModule_GetState(m);
    trtl_engine *e;
    if (engine_arg(st, arg, &e) < 0)
        return NULL;
    PyObject *text = PyUnicode_FromString(trtl_engine_weights_names(e));
    return text;
}

/* _network_add_weights_name(network, layer, role, name): a weights name the built engine keeps. */
static PyObject *network_add_weights_name(PyObject *m, PyObject *args)
{
    trtl_py_state *st = PyModule_GetState(m);
    PyObject *no;
    const char *layer, *name;
    int role;
    if (!PyArg_ParseTuple(args, "Osis:_network_add_weights_name", &no, &layer, &role, &name))
        return NULL;
    if (!PyObject_TypeCheck(no, st->NetworkType))
        return PyErr_Format(PyExc_TypeError, "set_weights_name: network must be an INetworkDefinition, not %s",
                            Py_TYPE(no)->tp_name);
    trtl_status s = trtl_network_add_weights_name(((TrtlNetwork *)no)->net, layer, role, name);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_NONE;
}

static PyMethodDef refit_functions[] = {
    {"_refit_names", refit_names, METH_O, "The engine's weights names: \"layer\\trole\\tname\\n\" lines."},
    {"_network_add_weights_name", network_add_weights_name, METH_VARARGS,
     "Record that weights `name` are (layer, role) of the network (kept in the engine and its plans)."},
    {"_refit_info", refit_info, METH_O, "[(layer, role, count)] of an engine's refittable weights."},
    {"_refit_check", refit_check, METH_VARARGS, "Raise unless (layer, role) has refittable weights of `count`."},
    {"_refit_apply", refit_apply, METH_VARARGS, "Replace (layer, role)'s weights with float32 values."},
    {NULL, NULL, 0, NULL}};

int trtl_py_init_refit(PyObject *m, trtl_py_state *st)
{
    (void)st;
    return PyModule_AddFunctions(m, refit_functions);
}
