/* py_profile_values.c -- IOptimizationProfile's shape-tensor input values (set_shape_input / get_shape_input)
 * and their transfer to the builder config (add_optimization_profile); the profile type is py_builder.c's. */
#include <string.h>

#include "python/py_builder.h"

PyObject *trtl_py_profile_set_values(trtl_py_state *st, PyObject *values, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"input", "min", "opt", "max", NULL};
    const char *name;
    PyObject *src[3];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOO:set_shape_input", kw, &name, &src[0], &src[1], &src[2]))
        return NULL;
    trtl_dims d[3];
    const char *w[3] = {"min", "opt", "max"};
    for (int i = 0; i < 3; i++) {
        char what[160];
        snprintf(what, sizeof what, "set_shape_input('%s') %s values", name, w[i]);
        if (trtl_py_to_dims(st, src[i], &d[i], what) < 0)
            return NULL;
    }
    int ok = d[0].nb_dims == d[1].nb_dims && d[0].nb_dims == d[2].nb_dims;
    for (int32_t k = 0; ok && k < d[0].nb_dims; k++)
        ok = d[0].d[k] <= d[1].d[k] && d[1].d[k] <= d[2].d[k] && d[0].d[k] >= INT32_MIN && d[2].d[k] <= INT32_MAX;
    if (!ok)
        return trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "set_shape_input('%s'): min, opt and max need the same "
                                 "number of values and min <= opt <= max (INT32) for each", name);
    PyObject *t = Py_BuildValue("(NNN)", trtl_py_from_dims(st, &d[0]), trtl_py_from_dims(st, &d[1]),
                                trtl_py_from_dims(st, &d[2]));
    if (!t || PyDict_SetItemString(values, name, t) < 0) {
        Py_XDECREF(t);
        return NULL;
    }
    Py_DECREF(t);
    Py_RETURN_NONE;
}

PyObject *trtl_py_profile_get_values(PyObject *values, PyObject *args, PyObject *kwargs, const char *format)
{
    static char *kw[] = {"input", NULL};
    const char *name;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kw, &name))
        return NULL;
    PyObject *t = PyDict_GetItemString(values, name);
    if (!t)
        return PyList_New(0);
    return PySequence_List(t);
}

int trtl_py_profile_push_values(trtl_py_state *st, trtl_builder_config *cfg, int32_t idx, PyObject *values)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(values, &pos, &k, &v)) {
        trtl_dims d[3];
        for (int i = 0; i < 3; i++)
            if (trtl_py_to_dims(st, PyTuple_GET_ITEM(v, i), &d[i], "profile shape-input values") < 0)
                return -1;
        trtl_status s = trtl_builder_config_set_shape_values(cfg, idx, PyUnicode_AsUTF8(k), &d[0], &d[1], &d[2]);
        if (s != TRTL_OK) {
            trtl_py_raise(st, s);
            return -1;
        }
    }
    return 0;
}
