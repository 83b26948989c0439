/* convert.c -- Python values <-> C values: ints, enums, dims, weights and buffer exports. */
#include <stdio.h>
#include <string.h>

#include "python/convert.h"

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

/* trt.Weights' `_dtype` as a value (-1 if absent). */
static long weights_dtype(PyObject *o)
{
    PyObject *d = PyObject_GetAttrString(o, "_dtype");
    long v = d ? PyLong_AsLong(d) : -1;
    Py_XDECREF(d);
    PyErr_Clear();
    return v;
}

/* Weights exported as they are, of a type numpy's format does not say: BF16 (trt.Weights holds their bit
 * patterns as a C-contiguous uint16 array: numpy has no bfloat16) and INT64 (values beyond int32, which
 * trt.Weights keeps as int64 instead of narrowing them). */
static int exact_weights(trtl_py_state *st, PyObject *arr, trtl_weights *w, PyObject **keep, const char *what,
                         trtl_dtype type)
{
    Py_buffer *view;
    PyObject *hold = trtl_py_buffer_hold(arr, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, &view);
    if (!hold)
        return -1;
    Py_ssize_t size = type == TRTL_BF16 ? 2 : 8;
    if (view->itemsize != size) {
        Py_DECREF(hold);
        trtl_py_raise_msg(st, TRTL_ERR_DTYPE, "%s: %s weights must hold %d-byte values", what,
                          type == TRTL_BF16 ? "BF16" : "INT64", (int)size);
        return -1;
    }
    w->type = type;
    w->values = view->buf;
    w->count = view->len / size;
    *keep = Py_BuildValue("(ON)", arr, hold);
    return *keep ? 0 : -1;
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
        long wt = inner != Py_None ? weights_dtype(o) : -1;
        if (wt == TRTL_BF16 || wt == TRTL_INT64) { /* uint16 bit patterns / int64 values, kept as they are */
            int r = exact_weights(st, inner, w, keep, what, (trtl_dtype)wt);
            Py_DECREF(inner);
            return r;
        }
        int r = trtl_py_to_weights(st, inner, w, keep, what);
        Py_DECREF(inner);
        if (r == 0 && w->type == TRTL_UINT8) { /* the codes of a storage type (Weights of an ml_dtypes array) */
            PyObject *d = PyObject_GetAttrString(o, "_dtype");
            long v = d ? PyLong_AsLong(d) : -1;
            Py_XDECREF(d);
            PyErr_Clear();
            if (v >= 0 && v < TRTL_DTYPE_COUNT && trtl_py_is_storage((trtl_dtype)v))
                w->type = (trtl_dtype)v;
        }
        return r;
    }
    PyErr_Clear();
    Py_buffer *view;
    PyObject *hold = trtl_py_buffer_hold(o, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, &view);
    if (!hold && PyObject_HasAttrString(o, "dtype")) {
        /* An array numpy cannot export (ml_dtypes' bfloat16, float8, int4: no buffer format): as trt.Weights
         * of it, which keeps their bit patterns typed (what torch2trt passes for a bf16 model's weights). */
        PyErr_Clear();
        PyObject *types = PyImport_ImportModule("trtlite._types");
        PyObject *wo = types ? PyObject_CallMethod(types, "Weights", "O", o) : NULL;
        Py_XDECREF(types);
        if (wo) {
            int r = trtl_py_to_weights(st, wo, w, keep, what);
            Py_DECREF(wo);
            return r;
        }
    }
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
                if ((v < INT32_MIN || v > INT32_MAX) && view->itemsize == 8 && is_signed) {
                    /* int64 values beyond int32: INT64 weights as they are (constant layers only) */
                    Py_DECREF(b);
                    w->type = TRTL_INT64;
                    w->values = view->buf;
                    w->count = count;
                    *keep = Py_BuildValue("(NN)", o, hold);
                    return *keep ? 0 : -1;
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


const char *trtl_py_dims_str(const trtl_dims *d, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int32_t i = 0; i < d->nb_dims && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)d->d[i]);
    if (k < n)
        snprintf(buf + k, n - k, d->nb_dims == 1 ? ",)" : ")");
    return buf;
}

int64_t trtl_py_volume(const trtl_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (d->d[i] < 0)
            return -1;
        if (d->d[i] && v > INT64_MAX / d->d[i])
            return -1;
        v *= d->d[i];
    }
    return v;
}

const char *trtl_py_numpy_dtype(trtl_dtype t)
{
    switch (t) {
    case TRTL_FLOAT: return "float32";
    case TRTL_HALF: return "float16";
    case TRTL_BF16: return "uint16"; /* bit patterns */
    case TRTL_INT8: return "int8";
    case TRTL_INT32: return "int32";
    case TRTL_BOOL: return "bool";
    case TRTL_UINT8: return "uint8";
    case TRTL_INT64: return "int64";
    default: return trtl_py_is_storage(t) ? "uint8" : "?"; /* storage types: their code bytes */
    }
}

int trtl_py_is_storage(trtl_dtype t)
{
    return trtl_py_ml_dtype(t) != NULL;
}

const char *trtl_py_ml_dtype(trtl_dtype t)
{
    switch (t) {
    case TRTL_FP8: return "float8_e4m3fn";
    case TRTL_FP8E5M2: return "float8_e5m2";
    case TRTL_FP8E4M3FNUZ: return "float8_e4m3fnuz";
    case TRTL_FP8E5M2FNUZ: return "float8_e5m2fnuz";
    case TRTL_E8M0: return "float8_e8m0fnu";
    case TRTL_FP4: return "float4_e2m1fn";
    case TRTL_INT4: return "int4";
    case TRTL_UINT4: return "uint4";
    case TRTL_INT2: return "int2";
    case TRTL_UINT2: return "uint2";
    default: return NULL;
    }
}
