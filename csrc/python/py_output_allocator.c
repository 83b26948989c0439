/*
 * py_output_allocator.c -- TensorRT 10's IOutputAllocator from Python.  An allocator is any object with
 * reallocate_output_async(tensor_name, memory, size, alignment, stream) (trt.IOutputAllocator's default
 * calls reallocate_output(tensor_name, memory, size, alignment)) and notify_shape(tensor_name, shape).
 * The C context calls them after the steps have run, on the executing thread (the GIL is taken here):
 * reallocate may return an int address (trusted for `size` bytes, as TensorRT trusts a device pointer),
 * or an object with the writable buffer protocol (a numpy array) of at least `size` bytes, which this
 * slot keeps alive until the next call; None, 0 or a smaller buffer fails the execution with a message
 * naming the tensor.  An exception raised by either method is kept and raised from execute once it
 * returns (the execution fails if reallocate raised).
 */
#include <string.h>

#include "python/py_output_allocator.h"
#include "python/convert.h"

typedef struct slot {
    trtl_py_state *st;
    PyObject *alloc;   /* the user's allocator (strong) or NULL */
    PyObject *keep;    /* the buffer object it returned last */
    PyObject *exc;     /* an exception its methods raised during the current execution */
} slot;

struct trtl_py_allocs {
    int32_t n;
    slot *s;
};

trtl_py_allocs *trtl_py_allocs_new(trtl_py_state *st, int32_t n_io)
{
    trtl_py_allocs *a = PyMem_Calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->n = n_io;
    a->s = PyMem_Calloc((size_t)(n_io > 0 ? n_io : 1), sizeof *a->s);
    if (!a->s) {
        PyMem_Free(a);
        return NULL;
    }
    for (int32_t i = 0; i < n_io; i++)
        a->s[i].st = st;
    return a;
}

void trtl_py_allocs_free(trtl_py_allocs *a)
{
    if (!a)
        return;
    for (int32_t i = 0; i < a->n; i++) {
        Py_CLEAR(a->s[i].alloc);
        Py_CLEAR(a->s[i].keep);
        Py_CLEAR(a->s[i].exc);
    }
    PyMem_Free(a->s);
    PyMem_Free(a);
}

int trtl_py_allocs_traverse(trtl_py_allocs *a, visitproc visit, void *arg)
{
    for (int32_t i = 0; a && i < a->n; i++) {
        Py_VISIT(a->s[i].alloc);
        Py_VISIT(a->s[i].keep);
    }
    return 0;
}

/* The pending exception (GIL held) goes to the slot; its text to msg. */
static void keep_exception(slot *s, const char *what, char *msg, size_t len)
{
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (v && tb)
        PyException_SetTraceback(v, tb);
    PyObject *str = v ? PyObject_Str(v) : NULL;
    const char *m = str ? PyUnicode_AsUTF8(str) : NULL;
    if (!m)
        PyErr_Clear();
    if (msg)
        snprintf(msg, len, "%s raised %s: %s", what, t ? ((PyTypeObject *)t)->tp_name : "an exception", m ? m : "");
    Py_XDECREF(str);
    if (!s->exc)
        s->exc = v ? Py_NewRef(v) : NULL;
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

static void *c_reallocate(void *user, const char *tensor, void *current, uint64_t size, uint64_t alignment, char *msg,
                          size_t len)
{
    slot *s = user;
    void *out = NULL;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallMethod(s->alloc, "reallocate_output_async", "sKKKi", tensor,
                                      (unsigned long long)(uintptr_t)current, (unsigned long long)size,
                                      (unsigned long long)alignment, 0);
    if (!r) {
        keep_exception(s, "reallocate_output", msg, len);
    } else if (r == Py_None) {
        snprintf(msg, len, "reallocate_output returned None");
    } else if (PyLong_Check(r) && !PyBool_Check(r)) {
        unsigned long long v = PyLong_AsUnsignedLongLong(r);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            snprintf(msg, len, "reallocate_output returned an int that is not an address");
        } else if (v != 0 && v < 65536u) {
            snprintf(msg, len, "reallocate_output returned %llu, which cannot be a host address", v);
        } else {
            out = (void *)(uintptr_t)v;
            if (!out)
                snprintf(msg, len, "reallocate_output returned 0");
        }
    } else {
        Py_buffer view;
        if (PyObject_GetBuffer(r, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
            PyErr_Clear();
            snprintf(msg, len, "reallocate_output returned %s, neither an int address nor a writable C-contiguous "
                     "buffer", Py_TYPE(r)->tp_name);
        } else {
            if ((uint64_t)view.len < size) {
                snprintf(msg, len, "reallocate_output returned a buffer of %zd bytes, %llu needed", view.len,
                         (unsigned long long)size);
            } else {
                out = view.buf;
                Py_XSETREF(s->keep, Py_NewRef(r));
            }
            PyBuffer_Release(&view);
        }
    }
    Py_XDECREF(r);
    PyGILState_Release(g);
    return out;
}

static void c_notify(void *user, const char *tensor, const trtl_dims *dims)
{
    slot *s = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *d = trtl_py_from_dims(s->st, dims);
    PyObject *r = d ? PyObject_CallMethod(s->alloc, "notify_shape", "sO", tensor, d) : NULL;
    if (!r)
        keep_exception(s, "notify_shape", NULL, 0);
    Py_XDECREF(r);
    Py_XDECREF(d);
    PyGILState_Release(g);
}

PyObject *trtl_py_allocs_set(trtl_py_allocs *a, trtl_context *c, trtl_engine *e, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"tensor_name", "output_allocator", NULL};
    const char *name;
    PyObject *alloc;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO:set_output_allocator", kw, &name, &alloc))
        return NULL;
    int32_t i = trtl_engine_io_index(e, name);
    slot *s = i >= 0 && i < a->n ? &a->s[i] : NULL;
    if (alloc != Py_None && (!PyObject_HasAttrString(alloc, "reallocate_output_async") ||
                             !PyObject_HasAttrString(alloc, "notify_shape")))
        return PyErr_Format(PyExc_TypeError, "set_output_allocator('%s'): the allocator must be a trt.IOutputAllocator "
                            "(reallocate_output / notify_shape), not %s", name, Py_TYPE(alloc)->tp_name);
    trtl_output_allocator ca = {c_reallocate, c_notify, s};
    trtl_status st = trtl_context_set_output_allocator(c, name, alloc == Py_None ? NULL : &ca);
    if (st != TRTL_OK)
        return trtl_py_raise(a->s[0].st, st);
    Py_CLEAR(s->keep);
    Py_CLEAR(s->exc);
    Py_XSETREF(s->alloc, alloc == Py_None ? NULL : Py_NewRef(alloc));
    Py_RETURN_TRUE;
}

PyObject *trtl_py_allocs_get(trtl_py_allocs *a, trtl_engine *e, PyObject *name)
{
    if (!PyUnicode_Check(name))
        return PyErr_Format(PyExc_TypeError, "get_output_allocator(name): name must be a str");
    int32_t i = trtl_engine_io_index(e, PyUnicode_AsUTF8(name));
    if (i < 0 || i >= a->n || !a->s[i].alloc)
        Py_RETURN_NONE;
    return Py_NewRef(a->s[i].alloc);
}

int trtl_py_allocs_raise_pending(trtl_py_allocs *a)
{
    PyObject *first = NULL;
    for (int32_t i = 0; a && i < a->n; i++) {
        if (a->s[i].exc && !first)
            first = Py_NewRef(a->s[i].exc);
        Py_CLEAR(a->s[i].exc);
    }
    if (!first)
        return 0;
    PyErr_SetObject((PyObject *)Py_TYPE(first), first);
    Py_DECREF(first);
    return 1;
}
