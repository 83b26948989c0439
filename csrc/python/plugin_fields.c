/*
 * plugin_fields.c -- plugin fields between Python (trt.PluginField / PluginFieldCollection) and C
 * (trtl_plugin_field), with errors naming the plugin and the field.
 */
#include <stdarg.h>
#include <string.h>

#include "python/plugin_fields.h"

static const char *np_dtype_name(int32_t field_type)
{
    switch (field_type) {
    case TRTL_PF_FLOAT16: return "float16";
    case TRTL_PF_FLOAT32: return "float32";
    case TRTL_PF_FLOAT64: return "float64";
    case TRTL_PF_INT8: return "int8";
    case TRTL_PF_INT16: return "int16";
    case TRTL_PF_INT32: return "int32";
    case TRTL_PF_CHAR: return "uint8";
    default: return "uint8";
    }
}

PyObject *trtl_py_raise_chained(PyObject *type, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyObject *ct, *cause, *ctb;
    PyErr_Fetch(&ct, &cause, &ctb);
    PyErr_NormalizeException(&ct, &cause, &ctb);
    if (cause && ctb)
        PyException_SetTraceback(cause, ctb);
    Py_XDECREF(ct);
    Py_XDECREF(ctb);
    PyErr_SetString(type, buf);
    if (cause) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        PyException_SetContext(ev, Py_NewRef(cause));
        PyException_SetCause(ev, cause); /* steals */
        PyErr_Restore(et, ev, tb);
    }
    return NULL;
}

/* str() of the exception being handled, for messages (left set). */
static void current_exception_text(char *buf, size_t n)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    PyObject *s = ev ? PyObject_Str(ev) : NULL;
    const char *text = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!text)
        PyErr_Clear();
    snprintf(buf, n, "%s", text ? text : "?");
    Py_XDECREF(s);
    PyErr_Restore(et, ev, tb);
}

/* A PluginField-like Python object -> trtl_plugin_field whose data lives in `*keep` (a new
 * reference to a contiguous numpy array of the field's type).  Data is converted to the declared
 * type by trtlite.plugins._field_array, so PluginField("stride", np.array([2]), INT32) works
 * whatever numpy's default int is, while values that do not fit raise PluginFieldError naming
 * `plugin` and the field. */
static int field_from_py(trtl_py_state *st, const char *plugin, PyObject *f, trtl_plugin_field *out, PyObject **keep,
                         PyObject **name_keep)
{
    PyObject *name = PyObject_GetAttrString(f, "name");
    PyObject *data = name ? PyObject_GetAttrString(f, "data") : NULL;
    PyObject *type = data ? PyObject_GetAttrString(f, "type") : NULL;
    *keep = NULL;
    *name_keep = NULL;
    if (!type) {
        Py_XDECREF(name);
        Py_XDECREF(data);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "plugin '%s': field_collection entries must be trt.PluginField, not %s", plugin,
                     Py_TYPE(f)->tp_name);
        return -1;
    }
    long t = PyLong_AsLong(type);
    Py_DECREF(type);
    if (t == -1 && PyErr_Occurred()) {
        Py_DECREF(name);
        Py_DECREF(data);
        return -1;
    }
    if (!PyUnicode_Check(name)) {
        Py_DECREF(name);
        Py_DECREF(data);
        PyErr_Format(PyExc_TypeError, "plugin '%s': PluginField.name must be a str", plugin);
        return -1;
    }
    if (t < 0 || t > TRTL_PF_UNKNOWN) {
        trtl_py_raise_chained(st->PluginFieldError, "plugin '%s': field '%s' has type %ld, which is not a PluginFieldType",
                      plugin, PyUnicode_AsUTF8(name), t);
        Py_DECREF(name);
        Py_DECREF(data);
        return -1;
    }
    PyObject *arr = NULL;
    if (data != Py_None) {
        PyObject *conv = st->plugin_hooks ? PyDict_GetItemString(st->plugin_hooks, "_field_array") : NULL;
        arr = conv ? PyObject_CallFunction(conv, "Ol", data, t) : NULL;
        if (!arr) {
            char why[512];
            if (!conv)
                PyErr_SetString(PyExc_RuntimeError, "trtlite plugin classes are not registered (import trtlite first)");
            current_exception_text(why, sizeof why);
            trtl_py_raise_chained(st->PluginFieldError, "plugin '%s': field '%s': data cannot be converted to %s: %s", plugin,
                          PyUnicode_AsUTF8(name), np_dtype_name((int32_t)t), why);
            Py_DECREF(name);
            Py_DECREF(data);
            return -1;
        }
    }
    Py_DECREF(data);
    out->name = PyUnicode_AsUTF8(name);
    out->type = (int32_t)t;
    out->data = NULL;
    out->length = 0;
    if (arr) {
        Py_buffer v;
        if (PyObject_GetBuffer(arr, &v, PyBUF_C_CONTIGUOUS) < 0) {
            Py_DECREF(arr);
            Py_DECREF(name);
            return -1;
        }
        size_t es = trtl_plugin_field_elem_size((int32_t)t);
        if (t == TRTL_PF_DIMS || t == TRTL_PF_UNKNOWN)
            es = t == TRTL_PF_DIMS ? sizeof(trtl_dims) : 1;
        size_t count = es ? (size_t)v.len / es : 0;
        out->data = v.buf;
        out->length = (int32_t)(count > INT32_MAX ? INT32_MAX : count);
        PyBuffer_Release(&v);
        if (count > INT32_MAX) {
            Py_DECREF(arr);
            Py_DECREF(name);
            trtl_py_raise_chained(st->PluginFieldError, "plugin '%s': field '%s' holds %zu values; at most %d fit a field",
                          plugin, out->name, count, INT32_MAX);
            return -1;
        }
    }
    *keep = arr;
    *name_keep = name;
    return 0;
}

/* Python field collection -> C fields (arrays in *keep_list, a new list). */
int trtl_py_fields_from_py(trtl_py_state *st, const char *plugin, PyObject *fc, trtl_plugin_field **out, int32_t *n,
                          PyObject **keep_list)
{
    *out = NULL;
    *n = 0;
    *keep_list = PyList_New(0);
    if (!*keep_list)
        return -1;
    if (fc == NULL || fc == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(fc, "field_collection must be a trt.PluginFieldCollection (a list of PluginField)");
    if (!seq)
        return -1;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    trtl_plugin_field *fields = PyMem_Calloc((size_t)(m ? m : 1), sizeof *fields);
    if (!fields) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *k, *nk;
        if (field_from_py(st, plugin, PySequence_Fast_GET_ITEM(seq, i), &fields[i], &k, &nk) < 0 ||
            (k && PyList_Append(*keep_list, k) < 0) || (nk && PyList_Append(*keep_list, nk) < 0)) {
            Py_XDECREF(k);
            Py_XDECREF(nk);
            PyMem_Free(fields);
            Py_DECREF(seq);
            return -1;
        }
        Py_XDECREF(k);
        Py_XDECREF(nk);
    }
    Py_DECREF(seq);
    *out = fields;
    *n = (int32_t)m;
    return 0;
}

/* C fields -> trt.PluginFieldCollection of trt.PluginField (registered classes). */
PyObject *trtl_py_fields_to_py(trtl_py_state *st, const trtl_plugin_field *f, int32_t n)
{
    PyObject *pf = st->plugin_hooks ? PyDict_GetItemString(st->plugin_hooks, "PluginField") : NULL;
    PyObject *pfc = st->plugin_hooks ? PyDict_GetItemString(st->plugin_hooks, "PluginFieldCollection") : NULL;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!pf || !pfc || !np) {
        Py_XDECREF(np);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "trtlite plugin classes are not registered (import trtlite first)");
        return NULL;
    }
    PyObject *list = PyList_New(0);
    for (int32_t i = 0; list && i < n; i++) {
        PyObject *arr;
        if (f[i].data && f[i].length > 0) {
            size_t es = trtl_plugin_field_elem_size(f[i].type);
            PyObject *b = PyBytes_FromStringAndSize(f[i].data, (Py_ssize_t)(es * (size_t)f[i].length));
            arr = b ? PyObject_CallMethod(np, "frombuffer", "Os", b, np_dtype_name(f[i].type)) : NULL;
            Py_XDECREF(b);
            if (arr) { /* a writable copy */
                PyObject *c = PyObject_CallMethod(arr, "copy", NULL);
                Py_DECREF(arr);
                arr = c;
            }
        } else {
            arr = PyObject_CallMethod(np, "zeros", "is", 0, np_dtype_name(f[i].type));
        }
        PyObject *type = arr ? trtl_py_enum(st, "PluginFieldType", f[i].type) : NULL;
        PyObject *field = type ? PyObject_CallFunction(pf, "sOO", f[i].name, arr, type) : NULL;
        Py_XDECREF(arr);
        Py_XDECREF(type);
        if (!field || PyList_Append(list, field) < 0) {
            Py_XDECREF(field);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(field);
    }
    Py_DECREF(np);
    if (!list)
        return NULL;
    PyObject *r = PyObject_CallOneArg(pfc, list);
    Py_DECREF(list);
    return r;
}

