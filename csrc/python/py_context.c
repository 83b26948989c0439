/*
 * py_context.c -- trtlite.IExecutionContext.
 *
 * Bindings are host addresses (ints) or objects with the buffer protocol (numpy arrays).  For
 * buffers the dtype is checked against the engine and the size against the current shape (a
 * larger buffer is accepted: TensorRT 7 scripts allocate for max_batch_size).  Buffers stay
 * exported while the engine runs with the GIL released.
 */
#include <string.h>

#include "python/py_context.h"
#include "python/views.h"
#include "python/py_output_allocator.h"

typedef struct TrtlContext {
    PyObject_HEAD
    trtl_context *c;
    TrtlEngine *engine;
    PyObject *addr_keep;  /* dict: name -> (buffer export, nbytes) of arrays bound with set_tensor_address */
    PyObject *profiler;
    PyObject *name;
    int debug_sync;
    /* Per-step times collected during execute (GIL released), reported afterwards. */
    const char **prof_names;
    float *prof_ms;
    int32_t prof_n, prof_cap;
    /* Threading contract: one call at a time.  `lock` is held for the whole of every call that
     * runs or changes the context (execute*, set_tensor_address, set_input_shape, the profile,
     * profiler and num_threads setters, shape queries, which may resolve shapes); `owner` is the
     * thread holding it (0: none), read and written with the GIL held. */
    PyThread_type_lock lock;
    unsigned long owner;
    trtl_py_allocs *allocs; /* IOutputAllocator objects per I/O (py_output_allocator.c) */
} TrtlContext;

/* Takes the context's lock for `what`.  Another thread's call is waited for with the GIL released
 * (it needs the GIL to finish, e.g. in a Python plugin's enqueue); a call from the thread that
 * already holds the lock can only come from inside that call (a Python plugin's enqueue, a
 * profiler, a logger), which would deadlock or run on the context's half-done state: refused. */
static int ctx_acquire(TrtlContext *self, const char *what)
{
    unsigned long me = PyThread_get_thread_ident();
    if (self->owner == me) {
        PyErr_Format(TRTL_STATE(self)->StateError,
                     "%s: execution context '%U' is already running on this thread (called from inside its own "
                     "execution: a plugin's enqueue or a profiler); a context runs one call at a time, use another "
                     "execution context", what, self->name);
        return -1;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    self->owner = me;
    return 0;
}

static void ctx_release(TrtlContext *self)
{
    self->owner = 0;
    PyThread_release_lock(self->lock);
}

static void ctx_dealloc(TrtlContext *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    trtl_context_destroy(self->c);
    trtl_py_allocs_free(self->allocs);
    Py_CLEAR(self->engine);
    Py_CLEAR(self->addr_keep);
    Py_CLEAR(self->profiler);
    Py_CLEAR(self->name);
    PyMem_RawFree(self->prof_names);
    PyMem_RawFree(self->prof_ms);
    if (self->lock)
        PyThread_free_lock(self->lock);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int ctx_traverse(TrtlContext *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->engine);
    Py_VISIT(self->addr_keep);
    Py_VISIT(self->profiler);
    return trtl_py_allocs_traverse(self->allocs, visit, arg);
}

static int ctx_clear(TrtlContext *self)
{
    Py_CLEAR(self->addr_keep);
    Py_CLEAR(self->profiler);
    return 0;
}

PyObject *trtl_py_context_new(trtl_py_state *st, PyObject *engine)
{
    if (trtl_py_engine_ready((TrtlEngine *)engine) < 0)
        return NULL;
    TrtlContext *o = PyObject_GC_New(TrtlContext, st->ContextType);
    if (!o)
        return NULL;
    o->c = NULL;
    o->engine = (TrtlEngine *)Py_NewRef(engine);
    o->addr_keep = PyDict_New();
    o->profiler = NULL;
    o->name = PyUnicode_FromString("");
    o->debug_sync = 0;
    o->prof_names = NULL;
    o->prof_ms = NULL;
    o->prof_n = o->prof_cap = 0;
    o->owner = 0;
    o->lock = PyThread_allocate_lock();
    o->allocs = trtl_py_allocs_new(st, trtl_engine_num_io(((TrtlEngine *)engine)->e));
    PyObject_GC_Track(o);
    if (!o->addr_keep || !o->name || !o->lock || !o->allocs) {
        int no_lock = !o->lock || !o->allocs;
        Py_DECREF(o);
        return no_lock ? PyErr_NoMemory() : NULL;
    }
    trtl_status s = trtl_context_create(((TrtlEngine *)engine)->e, &o->c);
    if (s != TRTL_OK) {
        Py_DECREF(o);
        return trtl_py_raise(st, s);
    }
    return (PyObject *)o;
}

/* ---- profiler ------------------------------------------------------------------------------- */

/* Runs without the GIL: only records. */
static void prof_cb(void *user, const char *layer, float ms)
{
    TrtlContext *self = user;
    if (self->prof_n < self->prof_cap) {
        self->prof_names[self->prof_n] = layer;
        self->prof_ms[self->prof_n] = ms;
        self->prof_n++;
    }
}

static int prof_begin(TrtlContext *self)
{
    if (!self->profiler || self->profiler == Py_None) {
        trtl_context_set_profiler(self->c, NULL, NULL);
        return 0;
    }
    int32_t n = trtl_engine_num_layers(self->engine->e);
    if (n > self->prof_cap) {
        PyMem_RawFree(self->prof_names);
        PyMem_RawFree(self->prof_ms);
        self->prof_names = PyMem_RawMalloc(sizeof(char *) * (size_t)n);
        self->prof_ms = PyMem_RawMalloc(sizeof(float) * (size_t)n);
        if (!self->prof_names || !self->prof_ms) {
            self->prof_cap = 0;
            PyErr_NoMemory();
            return -1;
        }
        self->prof_cap = n;
    }
    self->prof_n = 0;
    trtl_context_set_profiler(self->c, prof_cb, self);
    return 0;
}

static int prof_end(TrtlContext *self)
{
    if (!self->profiler || self->profiler == Py_None)
        return 0;
    for (int32_t i = 0; i < self->prof_n; i++) {
        PyObject *r = PyObject_CallMethod(self->profiler, "report_layer_time", "sd", self->prof_names[i],
                                          (double)self->prof_ms[i]);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* ---- binding checks ------------------------------------------------------------------------- */

static int format_matches(const Py_buffer *v, trtl_dtype t)
{
    const char *f = v->format ? v->format : "B";
    char c = f[0];
    if (c == '<' || c == '=' || c == '@')
        c = f[1];
    if ((Py_ssize_t)trtl_dtype_size(t) != v->itemsize)
        return 0;
    switch (t) {
    case TRTL_FLOAT: return c == 'f';
    case TRTL_HALF: return c == 'e';
    case TRTL_BF16: return c == 'H'; /* bit patterns (numpy has no bfloat16; ml_dtypes' exports no buffer) */
    case TRTL_INT32: return c == 'i' || c == 'l';
    case TRTL_INT8: return c == 'b';
    case TRTL_UINT8: return c == 'B';
    case TRTL_BOOL: return c == '?' || c == 'B';
    case TRTL_INT64: return c == 'q' || c == 'l';
    default: return trtl_py_is_storage(t) && (c == 'B' || c == 'b'); /* code bytes */
    }
}

/* Bytes the I/O tensor needs for the resolved shapes. */
static Py_ssize_t needed_bytes(TrtlContext *self, int32_t i)
{
    trtl_dims d;
    if (trtl_context_io_dims(self->c, i, &d) != TRTL_OK)
        return 0;
    int64_t v = trtl_py_volume(&d);
    return (Py_ssize_t)(v < 0 ? 0 : v) * (Py_ssize_t)trtl_dtype_size(trtl_engine_io_dtype(self->engine->e, i));
}

/* Below this no host memory can be mapped (Linux's vm.mmap_min_addr is 4096..65536): an int
 * there is a size, an index or a flag passed by mistake, not an address. */
#define MIN_HOST_ADDRESS 65536u

/* An int binding of I/O tensor `i` -> address.  Addresses are unsigned: a negative int is a
 * mistake (often a pointer arithmetic slip), not a high address, and would crash the run; so are
 * bools (True is 1), ints below MIN_HOST_ADDRESS and addresses not aligned for the tensor's dtype.
 * 0 is "no buffer" (refused at execution if the tensor has elements). */
static int int_address(TrtlContext *self, PyObject *o, const char *name, int32_t i, void **ptr)
{
    if (PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "tensor '%s': a bool (%R) is not a host address (give an int address, e.g. "
                     "array.ctypes.data, or the array itself)", name, o);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(o);
        const char *rs = r ? PyUnicode_AsUTF8(r) : NULL;
        PyErr_Clear();
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "tensor '%s': %s is not a host address (give an int in 1..2**64-1, e.g. array.ctypes.data, "
                          "or the array itself)", name, rs ? rs : "the int");
        Py_XDECREF(r);
        return -1;
    }
    size_t align = trtl_dtype_size(trtl_engine_io_dtype(self->engine->e, i));
    if (v != 0 && v < MIN_HOST_ADDRESS) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "tensor '%s': %llu cannot be a host address (nothing is mapped below %u); give an int address, "
                          "e.g. array.ctypes.data, or the array itself", name, v, MIN_HOST_ADDRESS);
        return -1;
    }
    if (align > 1 && v % align != 0) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "tensor '%s': address 0x%llx is not aligned for its dtype %s (a multiple of %zu bytes)", name, v,
                          trtl_dtype_name(trtl_engine_io_dtype(self->engine->e, i)), align);
        return -1;
    }
    *ptr = (void *)(uintptr_t)v; /* x86-64: pointers are 64 bits */
    return 0;
}

/* Address of binding `i` from an int or a buffer (then `view` is filled and must be released). */
static int binding_ptr(TrtlContext *self, int32_t i, PyObject *o, Py_buffer *view, int *has_view, void **ptr)
{
    trtl_py_state *st = TRTL_STATE(self);
    trtl_engine *e = self->engine->e;
    const char *name = trtl_engine_io_name(e, i);
    int is_input = trtl_engine_io_is_input(e, i);
    *has_view = 0;
    if (PyLong_Check(o)) {
        if (int_address(self, o, name, i, ptr) < 0)
            return -1;
        if (!*ptr && needed_bytes(self, i) > 0) {
            trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "binding '%s' is a NULL address", name);
            return -1;
        }
        return 0;
    }
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (is_input ? 0 : PyBUF_WRITABLE);
    if (PyObject_GetBuffer(o, view, flags) != 0) {
        PyErr_Clear();
        if (!is_input && PyObject_CheckBuffer(o))
            PyErr_Format(PyExc_TypeError, "output binding '%s' must be a writable, C-contiguous array", name);
        else if (PyObject_CheckBuffer(o))
            PyErr_Format(PyExc_TypeError, "binding '%s' must be C-contiguous (use numpy.ascontiguousarray)", name);
        else
            PyErr_Format(PyExc_TypeError, "binding '%s' must be an int address or an array, not %s", name,
                         Py_TYPE(o)->tp_name);
        return -1;
    }
    *has_view = 1;
    trtl_dtype dt = trtl_engine_io_dtype(e, i);
    if (!format_matches(view, dt)) {
        trtl_py_raise_msg(st, TRTL_ERR_DTYPE, "binding '%s': array of format '%s' (%zd-byte items) does not match the "
                          "engine's %s (numpy %s)", name, view->format ? view->format : "B", view->itemsize,
                          trtl_dtype_name(dt), trtl_py_numpy_dtype(dt));
        return -1;
    }
    Py_ssize_t need = needed_bytes(self, i);
    if (view->len < need) {
        trtl_dims d;
        char s[TRTL_PY_DIMS_STR_MAX];
        trtl_context_io_dims(self->c, i, &d);
        trtl_py_raise_msg(st, TRTL_ERR_SHAPE, "binding '%s': buffer holds %zd elements but shape %s needs %zd", name,
                          view->len / (view->itemsize ? view->itemsize : 1), trtl_py_dims_str(&d, s, sizeof s),
                          need / (Py_ssize_t)trtl_dtype_size(dt));
        return -1;
    }
    *ptr = view->buf;
    return 0;
}

static PyObject *run_locked(TrtlContext *self, int32_t batch, PyObject *bindings)
{
    trtl_py_state *st = TRTL_STATE(self);
    trtl_engine *e = self->engine->e;
    int32_t n = trtl_engine_num_io(e);
    /* Heap arrays: an engine may have any number of I/O tensors (INT8 calibration marks every
     * float tensor of the network as an output, hundreds for a ResNet-50). */
    size_t nn = n > 0 ? (size_t)n : 1;
    Py_buffer *views = PyMem_Calloc(nn, sizeof *views);
    int *has = PyMem_Calloc(nn, sizeof *has);
    void **ptrs = PyMem_Calloc(nn, sizeof *ptrs);
    PyObject *seq = NULL, *result = NULL;
    trtl_status s;
    if (!views || !has || !ptrs) {
        PyErr_NoMemory();
        goto done;
    }
    s = trtl_context_resolve(self->c, batch);
    if (s != TRTL_OK) {
        trtl_py_raise(st, s);
        goto done;
    }
    if (bindings) {
        seq = PySequence_Fast(bindings, "bindings must be a list of addresses or arrays");
        if (!seq)
            return NULL;
        if (PySequence_Fast_GET_SIZE(seq) != n) {
            PyObject *names = PyList_New(0);
            for (int32_t i = 0; names && i < n; i++) {
                PyObject *nm = PyUnicode_FromString(trtl_engine_io_name(e, i));
                if (nm)
                    PyList_Append(names, nm);
                Py_XDECREF(nm);
            }
            trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "expected %d bindings (inputs then outputs), got %zd",
                              (int)n, PySequence_Fast_GET_SIZE(seq));
            if (names) {
                PyObject *et, *ev, *tb;
                PyErr_Fetch(&et, &ev, &tb);
                PyObject *msg = PyUnicode_FromFormat("%S: %R", ev, names);
                Py_XDECREF(ev);
                PyErr_Restore(et, msg, tb);
                Py_DECREF(names);
            }
            goto done;
        }
        for (int32_t i = 0; i < n; i++)
            if (binding_ptr(self, i, PySequence_Fast_GET_ITEM(seq, i), &views[i], &has[i], &ptrs[i]) < 0)
                goto done;
    } else {
        /* execute_async_v3: addresses from set_tensor_address; re-check sizes of arrays. */
        for (int32_t i = 0; i < n; i++) {
            const char *name = trtl_engine_io_name(e, i);
            PyObject *kept = PyDict_GetItemString(self->addr_keep, name);
            if (kept && PyTuple_Check(kept)) {
                Py_ssize_t nbytes = PyLong_AsSsize_t(PyTuple_GET_ITEM(kept, 1));
                if (nbytes < needed_bytes(self, i)) {
                    trtl_py_raise_msg(st, TRTL_ERR_SHAPE, "tensor '%s': the array set with set_tensor_address holds %zd "
                                      "bytes, the current shape needs %zd", name, nbytes, needed_bytes(self, i));
                    goto done;
                }
            }
        }
    }
    if (prof_begin(self) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    s = bindings ? trtl_context_execute_bindings(self->c, batch, ptrs) : trtl_context_execute(self->c, batch);
    Py_END_ALLOW_THREADS
    if (trtl_py_allocs_raise_pending(self->allocs))
        goto done; /* an output allocator raised: that exception */
    if (s != TRTL_OK) {
        trtl_py_raise(st, s);
        goto done;
    }
    if (prof_end(self) < 0)
        goto done;
    result = Py_NewRef(Py_True);
done:
    for (int32_t i = 0; has && i < n; i++)
        if (has[i])
            PyBuffer_Release(&views[i]);
    PyMem_Free(views);
    PyMem_Free(has);
    PyMem_Free(ptrs);
    Py_XDECREF(seq);
    return result;
}

static PyObject *run(TrtlContext *self, int32_t batch, PyObject *bindings, const char *what)
{
    if (ctx_acquire(self, what) < 0)
        return NULL;
    PyObject *r = run_locked(self, batch, bindings);
    ctx_release(self);
    return r;
}

/* ---- methods -------------------------------------------------------------------------------- */

/* stream_handle arguments: TensorRT takes an int (a CUDA stream handle).  The CPU has no streams,
 * so the value is ignored, but its type is checked so that a misplaced argument is noticed. */
static int stream_arg(PyObject *o, const char *method)
{
    if (!o || o == Py_None || (PyLong_Check(o) && !PyBool_Check(o)))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s(): stream_handle must be an int or None, not %s", method, Py_TYPE(o)->tp_name);
    return -1;
}

/* The *_v2 calls have no batch size: on an implicit-batch engine the batch is missing, which
 * the core can only report as "batch size 0 is outside 1..N". */
static int explicit_batch_only(TrtlContext *self, const char *method)
{
    if (!trtl_engine_implicit_batch(self->engine->e))
        return 0;
    trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                      "%s(): this engine has an implicit batch dimension (TensorRT 7 network, max_batch_size %d); "
                      "run it with execute(batch_size, bindings) or execute_async(batch_size, bindings)", method,
                      (int)trtl_engine_max_batch_size(self->engine->e));
    return -1;
}

static PyObject *ctx_execute_v2(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"bindings", NULL};
    PyObject *b;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:execute_v2", kw, &b) || explicit_batch_only(self, "execute_v2") < 0)
        return NULL;
    return run(self, 0, b, "execute_v2()");
}

static PyObject *ctx_execute_async_v2(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"bindings", "stream_handle", "input_consumed", NULL};
    PyObject *b, *stream = NULL, *consumed = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:execute_async_v2", kw, &b, &stream, &consumed) ||
        stream_arg(stream, "execute_async_v2") < 0 || explicit_batch_only(self, "execute_async_v2") < 0)
        return NULL;
    return run(self, 0, b, "execute_async_v2()");
}

static int batch_arg(TrtlContext *self, PyObject *o, int32_t *batch)
{
    int32_t b = 1;
    if (o && trtl_py_as_int32(o, "batch_size", &b) < 0)
        return -1;
    if (!trtl_engine_implicit_batch(self->engine->e) && b != 1) {
        /* TensorRT 8 accepted execute() only on implicit-batch engines. */
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "execute(batch_size=%d): this engine has an explicit batch dimension; use execute_v2(bindings)", (int)b);
        return -1;
    }
    *batch = (int32_t)b;
    return 0;
}

static PyObject *ctx_execute(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"batch_size", "bindings", NULL};
    PyObject *bo = NULL, *b = NULL;
    int32_t batch;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:execute", kw, &bo, &b))
        return NULL;
    if (!b)
        return PyErr_Format(PyExc_TypeError, "execute() missing required argument 'bindings'");
    if (batch_arg(self, bo, &batch) < 0)
        return NULL;
    return run(self, batch, b, "execute()");
}

static PyObject *ctx_execute_async(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"batch_size", "bindings", "stream_handle", "input_consumed", NULL};
    PyObject *bo = NULL, *b = NULL, *stream = NULL, *consumed = NULL;
    int32_t batch;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOO:execute_async", kw, &bo, &b, &stream, &consumed) ||
        stream_arg(stream, "execute_async") < 0)
        return NULL;
    if (!b)
        return PyErr_Format(PyExc_TypeError, "execute_async() missing required argument 'bindings'");
    if (batch_arg(self, bo, &batch) < 0)
        return NULL;
    return run(self, batch, b, "execute_async()");
}

static PyObject *ctx_execute_async_v3(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"stream_handle", NULL};
    PyObject *stream = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:execute_async_v3", kw, &stream) ||
        stream_arg(stream, "execute_async_v3") < 0)
        return NULL;
    return run(self, trtl_engine_implicit_batch(self->engine->e) ? trtl_engine_max_batch_size(self->engine->e) : 0,
               NULL, "execute_async_v3()");
}

static PyObject *set_tensor_address_locked(TrtlContext *self, const char *name, PyObject *mem)
{
    trtl_py_state *st = TRTL_STATE(self);
    int32_t i = trtl_engine_io_index(self->engine->e, name);
    if (i < 0)
        return trtl_py_raise_msg(st, TRTL_ERR_NOT_FOUND, "set_tensor_address: the engine has no input or output named '%s'", name);
    void *ptr = NULL;
    PyObject *entry = NULL; /* (export, nbytes) stored for arrays */
    if (PyLong_Check(mem)) {
        if (int_address(self, mem, name, i, &ptr) < 0)
            return NULL;
    } else {
        Py_buffer *v;
        int is_input = trtl_engine_io_is_input(self->engine->e, i);
        PyObject *hold = trtl_py_buffer_hold(mem, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (is_input ? 0 : PyBUF_WRITABLE), &v);
        if (!hold) {
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError, "set_tensor_address('%s'): need an int address or a C-contiguous%s array",
                                name, is_input ? "" : " writable");
        }
        trtl_dtype dt = trtl_engine_io_dtype(self->engine->e, i);
        if (!format_matches(v, dt)) {
            trtl_py_raise_msg(st, TRTL_ERR_DTYPE, "set_tensor_address('%s'): array format '%s' does not match the "
                              "engine's %s (numpy %s)", name, v->format ? v->format : "B", trtl_dtype_name(dt),
                              trtl_py_numpy_dtype(dt));
            Py_DECREF(hold);
            return NULL;
        }
        ptr = v->buf;
        /* The export stays held until the address is replaced or the context is freed: while it
         * is, the array cannot be resized or freed under the context (array.array raises
         * BufferError; numpy refuses resize() of a referenced array). */
        entry = Py_BuildValue("(Nn)", hold, v->len);
        if (!entry)
            return NULL;
    }
    trtl_status s = trtl_context_set_tensor_address(self->c, name, ptr);
    if (s != TRTL_OK) {
        Py_XDECREF(entry);
        return trtl_py_raise(st, s);
    }
    /* Only now is the previous array (if any) no longer used: replacing the entry releases it. */
    if (entry) {
        int r = PyDict_SetItemString(self->addr_keep, name, entry);
        Py_DECREF(entry);
        if (r < 0) { /* out of memory: the export is gone, so the context must not keep its address */
            trtl_context_set_tensor_address(self->c, name, NULL);
            return NULL;
        }
    } else if (PyDict_DelItemString(self->addr_keep, name) < 0) {
        PyErr_Clear(); /* no array was bound to this name */
    }
    Py_RETURN_TRUE;
}

static PyObject *ctx_set_tensor_address(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "memory", NULL};
    const char *name;
    PyObject *mem;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO:set_tensor_address", kw, &name, &mem) ||
        ctx_acquire(self, "set_tensor_address()") < 0)
        return NULL;
    PyObject *r = set_tensor_address_locked(self, name, mem);
    ctx_release(self);
    return r;
}

static PyObject *ctx_get_tensor_address(TrtlContext *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "get_tensor_address(name): name must be a str");
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name || ctx_acquire(self, "get_tensor_address()") < 0)
        return NULL;
    void *p = trtl_context_tensor_address(self->c, name);
    ctx_release(self);
    return PyLong_FromVoidPtr(p);
}

static PyObject *ctx_set_input_shape(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "shape", NULL};
    const char *name;
    PyObject *shape;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO:set_input_shape", kw, &name, &shape))
        return NULL;
    trtl_dims d;
    if (trtl_py_to_dims(st, shape, &d, "set_input_shape(): shape") < 0 || ctx_acquire(self, "set_input_shape()") < 0)
        return NULL;
    trtl_status s = trtl_context_set_input_shape(self->c, name, &d);
    ctx_release(self);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_TRUE;
}

static PyObject *ctx_set_binding_shape(TrtlContext *self, PyObject *args)
{
    int idx;
    PyObject *shape;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTuple(args, "iO:set_binding_shape", &idx, &shape))
        return NULL;
    const char *name = trtl_engine_io_name(self->engine->e, idx);
    if (!name)
        return PyErr_Format(PyExc_IndexError, "binding index %d out of range", idx);
    trtl_dims d;
    if (trtl_py_to_dims(st, shape, &d, "set_binding_shape(): shape") < 0 ||
        ctx_acquire(self, "set_binding_shape()") < 0)
        return NULL;
    trtl_status s = trtl_context_set_input_shape(self->c, name, &d);
    ctx_release(self);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_TRUE;
}

static int has_dynamic(const trtl_dims *d)
{
    for (int32_t k = 0; k < d->nb_dims; k++)
        if (d->d[k] < 0)
            return 1;
    return 0;
}

/* Whether every input of an explicit-batch engine has a concrete shape (so outputs can be resolved). */
static int inputs_specified(TrtlContext *self)
{
    trtl_engine *e = self->engine->e;
    for (int32_t i = 0; i < trtl_engine_num_io(e); i++) {
        trtl_dims d;
        if (trtl_engine_io_is_input(e, i) &&
            (trtl_context_tensor_shape(self->c, trtl_engine_io_name(e, i), &d) != TRTL_OK || has_dynamic(&d)))
            return 0;
    }
    return 1;
}

static PyObject *shape_of(TrtlContext *self, const char *name, const char *what)
{
    trtl_dims d;
    trtl_engine *e = self->engine->e;
    int32_t i = trtl_engine_io_index(e, name);
    if (ctx_acquire(self, what) < 0)
        return NULL;
    /* Once every input shape is set, an output's shape is the resolved one: a failure to resolve
     * (a shape error between the inputs, no memory for the activations) is the answer, not the
     * build-time shape with its -1s. */
    trtl_status s = TRTL_OK;
    if (i >= 0 && !trtl_engine_io_is_input(e, i) && !trtl_engine_implicit_batch(e) && inputs_specified(self))
        s = trtl_context_resolve(self->c, 0);
    if (s == TRTL_OK)
        s = trtl_context_tensor_shape(self->c, name, &d);
    ctx_release(self);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    return trtl_py_from_dims(TRTL_STATE(self), &d);
}

static PyObject *ctx_get_tensor_shape(TrtlContext *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "get_tensor_shape(name): name must be a str");
    const char *name = PyUnicode_AsUTF8(arg);
    return name ? shape_of(self, name, "get_tensor_shape()") : NULL;
}

static PyObject *ctx_get_binding_shape(TrtlContext *self, PyObject *arg)
{
    long i = trtl_py_as_long(arg, "binding index");
    if (i == -1 && PyErr_Occurred())
        return NULL;
    const char *name = trtl_engine_io_name(self->engine->e, (int32_t)i);
    if (!name)
        return PyErr_Format(PyExc_IndexError, "binding index %ld out of range", i);
    return shape_of(self, name, "get_binding_shape()");
}

static PyObject *ctx_set_profile(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"profile_index", "stream_handle", NULL};
    int idx;
    PyObject *stream = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|O:set_optimization_profile_async", kw, &idx, &stream) ||
        stream_arg(stream, "set_optimization_profile_async") < 0 ||
        ctx_acquire(self, "set_optimization_profile_async()") < 0)
        return NULL;
    trtl_status s = trtl_context_set_profile(self->c, idx);
    ctx_release(self);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_TRUE;
}

/* ---- output allocators (TensorRT 10; py_output_allocator.c) --------------------------------- */

static PyObject *ctx_set_output_allocator(TrtlContext *self, PyObject *args, PyObject *kwargs)
{
    if (ctx_acquire(self, "set_output_allocator()") < 0)
        return NULL;
    PyObject *r = trtl_py_allocs_set(self->allocs, self->c, self->engine->e, args, kwargs);
    ctx_release(self);
    return r;
}

static PyObject *ctx_get_output_allocator(TrtlContext *self, PyObject *name)
{
    return trtl_py_allocs_get(self->allocs, self->engine->e, name);
}

static PyObject *ctx_get_max_output_size(TrtlContext *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "get_max_output_size(name): name must be a str");
    int64_t bytes = 0;
    if (ctx_acquire(self, "get_max_output_size()") < 0)
        return NULL;
    trtl_status s = trtl_context_max_output_size(self->c, PyUnicode_AsUTF8(arg), &bytes);
    ctx_release(self);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    return PyLong_FromLongLong(bytes);
}

/* The context's activation arena and scratch bytes for its current shapes (trtl_context_memory_size); -1 with the
 * exception set on error.  `what` names the calling method. */
static int ctx_memory(TrtlContext *self, const char *what, uint64_t *arena, uint64_t *scratch)
{
    *arena = *scratch = 0;
    if (ctx_acquire(self, what) < 0)
        return -1;
    trtl_status s = trtl_context_memory_size(self->c, arena, scratch);
    ctx_release(self);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *ctx_update_memory_size(TrtlContext *self, PyObject *unused)
{
    (void)unused;
    uint64_t arena, scratch;
    if (ctx_memory(self, "update_device_memory_size_for_shapes()", &arena, &scratch) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(arena + scratch);
}

static PyObject *ctx_memory_report(TrtlContext *self, PyObject *unused)
{
    (void)unused;
    uint64_t arena, scratch;
    if (ctx_memory(self, "memory_report()", &arena, &scratch) < 0)
        return NULL;
    return Py_BuildValue("{sKsK}", "activation_bytes", (unsigned long long)arena, "scratch_bytes",
                         (unsigned long long)scratch);
}

static PyObject *ctx_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *ctx_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyObject *c_engine(TrtlContext *self, void *c)
{
    (void)c;
    return Py_NewRef((PyObject *)self->engine);
}

static PyObject *c_all_specified(TrtlContext *self, void *c)
{
    (void)c;
    trtl_engine *e = self->engine->e;
    int all = 1;
    if (ctx_acquire(self, "all_binding_shapes_specified") < 0)
        return NULL;
    for (int32_t i = 0; all && i < trtl_engine_num_io(e); i++) {
        if (!trtl_engine_io_is_input(e, i))
            continue;
        trtl_dims d;
        if (trtl_context_tensor_shape(self->c, trtl_engine_io_name(e, i), &d) != TRTL_OK || has_dynamic(&d))
            all = 0;
    }
    ctx_release(self);
    return PyBool_FromLong(all);
}

static PyObject *c_true(TrtlContext *self, void *c)
{
    (void)self;
    (void)c;
    Py_RETURN_TRUE;
}

static PyObject *c_get_profiler(TrtlContext *self, void *c)
{
    (void)c;
    return Py_NewRef(self->profiler ? self->profiler : Py_None);
}

static int c_set_profiler(TrtlContext *self, PyObject *v, void *c)
{
    (void)c;
    if (v && v != Py_None && !PyObject_HasAttrString(v, "report_layer_time")) {
        PyErr_SetString(PyExc_TypeError, "profiler must have a report_layer_time(layer_name, ms) method (trt.IProfiler)");
        return -1;
    }
    if (ctx_acquire(self, "profiler setter") < 0)
        return -1;
    PyObject *old = self->profiler;
    self->profiler = Py_XNewRef(v);
    ctx_release(self);
    Py_XDECREF(old); /* after the release: freeing it may run Python code */
    return 0;
}

static PyObject *c_get_debug(TrtlContext *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->debug_sync);
}

static int c_set_debug(TrtlContext *self, PyObject *v, void *c)
{
    (void)c;
    int b = v ? PyObject_IsTrue(v) : 0;
    if (b < 0)
        return -1;
    self->debug_sync = b;
    return 0;
}

static PyObject *c_get_profile(TrtlContext *self, void *c)
{
    (void)c;
    if (ctx_acquire(self, "active_optimization_profile") < 0)
        return NULL;
    int32_t p = trtl_context_profile(self->c);
    ctx_release(self);
    return PyLong_FromLong(p);
}

static int c_set_profile(TrtlContext *self, PyObject *v, void *c)
{
    (void)c;
    int32_t x;
    if (trtl_py_as_int32(v, "active_optimization_profile", &x) < 0 ||
        ctx_acquire(self, "active_optimization_profile setter") < 0)
        return -1;
    trtl_status s = trtl_context_set_profile(self->c, x);
    ctx_release(self);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *c_get_name(TrtlContext *self, void *c)
{
    (void)c;
    return Py_NewRef(self->name);
}

static int c_set_name(TrtlContext *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || !PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "name must be a str");
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(self->name, v);
    return 0;
}

static int c_set_threads(TrtlContext *self, PyObject *v, void *c)
{
    (void)c;
    int32_t x;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "num_threads cannot be deleted");
        return -1;
    }
    if (trtl_py_as_int32(v, "num_threads", &x) < 0)
        return -1;
    if (x < 0 || x > TRTL_MAX_THREADS) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "execution context '%s': num_threads must be in "
                          "0..%d (0: every CPU this process may use), got %d", PyUnicode_AsUTF8(self->name),
                          TRTL_MAX_THREADS, (int)x);
        return -1;
    }
    /* The lock waits for a running execute: the pool it uses is replaced only afterwards. */
    if (ctx_acquire(self, "num_threads setter") < 0)
        return -1;
    trtl_status s = trtl_context_set_num_threads(self->c, (int32_t)x);
    ctx_release(self);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *c_get_threads(TrtlContext *self, void *c)
{
    (void)c;
    if (ctx_acquire(self, "num_threads") < 0)
        return NULL;
    int32_t n = trtl_context_num_threads(self->c);
    ctx_release(self);
    return PyLong_FromLong(n);
}

static PyGetSetDef ctx_getset[] = {
    {"engine", (getter)c_engine, NULL, "The engine this context runs.", NULL},
    {"all_binding_shapes_specified", (getter)c_all_specified, NULL, "Whether every dynamic input has a shape.", NULL},
    {"all_shape_inputs_specified", (getter)c_true, NULL, "True (no shape tensors).", NULL},
    {"profiler", (getter)c_get_profiler, (setter)c_set_profiler,
     "An object with report_layer_time(layer_name, ms), called after each execution for every step.", NULL},
    {"debug_sync", (getter)c_get_debug, (setter)c_set_debug, "Kept for compatibility (execution is synchronous).", NULL},
    {"active_optimization_profile", (getter)c_get_profile, (setter)c_set_profile, "Optimization profile in use.", NULL},
    {"name", (getter)c_get_name, (setter)c_set_name, "Context name.", NULL},
    {"num_threads", (getter)c_get_threads, (setter)c_set_threads, "Threads this context runs on (the caller included); set 0..TRTL_MAX_THREADS (256), 0 for every CPU this "
     "process may use.  Setting waits for a running execute of this context.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef ctx_methods[] = {
    {"execute_v2", (PyCFunction)(void (*)(void))ctx_execute_v2, METH_VARARGS | METH_KEYWORDS,
     "execute_v2(bindings) -> bool\n\nRun with bindings in engine I/O order (int addresses or arrays).  Releases the GIL."},
    {"execute_async_v2", (PyCFunction)(void (*)(void))ctx_execute_async_v2, METH_VARARGS | METH_KEYWORDS,
     "execute_async_v2(bindings, stream_handle=0, input_consumed=None) -> bool\n\nSame as execute_v2 (synchronous on the CPU)."},
    {"execute", (PyCFunction)(void (*)(void))ctx_execute, METH_VARARGS | METH_KEYWORDS,
     "execute(batch_size=1, bindings) -> bool\n\nTensorRT 7: run an implicit-batch engine on `batch_size` samples."},
    {"execute_async", (PyCFunction)(void (*)(void))ctx_execute_async, METH_VARARGS | METH_KEYWORDS,
     "execute_async(batch_size=1, bindings, stream_handle=0, input_consumed=None) -> bool\n\nSame as execute."},
    {"execute_async_v3", (PyCFunction)(void (*)(void))ctx_execute_async_v3, METH_VARARGS | METH_KEYWORDS,
     "execute_async_v3(stream_handle=0) -> bool\n\nRun with the addresses given to set_tensor_address."},
    {"set_tensor_address", (PyCFunction)(void (*)(void))ctx_set_tensor_address, METH_VARARGS | METH_KEYWORDS,
     "set_tensor_address(name, memory) -> bool\n\nBind an I/O tensor to an int address or an array (kept alive)."},
    {"get_tensor_address", (PyCFunction)ctx_get_tensor_address, METH_O, "get_tensor_address(name) -> int"},
    {"set_input_shape", (PyCFunction)(void (*)(void))ctx_set_input_shape, METH_VARARGS | METH_KEYWORDS,
     "set_input_shape(name, shape) -> bool\n\nShape of a dynamic input (within the optimization profile)."},
    {"set_binding_shape", (PyCFunction)ctx_set_binding_shape, METH_VARARGS,
     "set_binding_shape(index, shape) -> bool\n\nTensorRT 8 form of set_input_shape."},
    {"get_tensor_shape", (PyCFunction)ctx_get_tensor_shape, METH_O,
     "get_tensor_shape(name) -> Dims\n\nShape for the current inputs (outputs resolved once inputs are set)."},
    {"get_binding_shape", (PyCFunction)ctx_get_binding_shape, METH_O, "get_binding_shape(index) -> Dims"},
    {"set_optimization_profile_async", (PyCFunction)(void (*)(void))ctx_set_profile, METH_VARARGS | METH_KEYWORDS,
     "set_optimization_profile_async(profile_index, stream_handle=0) -> bool"},
    {"infer", (PyCFunction)(void (*)(void))trtl_py_context_infer, METH_VARARGS | METH_KEYWORDS,
     "infer(feed) -> dict\n\nConvenience around execute: converts the inputs in `feed` ({input name: array}) to "
     "the engine's dtypes, sets dynamic input shapes from the arrays (for implicit-batch engines the arrays carry the "
     "batch as their first dimension), allocates the outputs at their resolved shapes and runs; returns {output name: "
     "array}.  Storage types (FP8, INT4, FP4, E8M0 and the extensions): inputs are ml_dtypes arrays of that type or "
     "uint8 / int8 codes (never numbers: a TypeError names the input); outputs are ml_dtypes arrays when ml_dtypes "
     "imports, else uint8 codes.  BF16: inputs are numbers (rounded to nearest even), ml_dtypes bfloat16 arrays or "
     "uint16 bit patterns; outputs are ml_dtypes bfloat16 arrays when ml_dtypes imports, else uint16 bit patterns."},
    {"set_output_allocator", (PyCFunction)(void (*)(void))ctx_set_output_allocator, METH_VARARGS | METH_KEYWORDS,
     "set_output_allocator(tensor_name, output_allocator) -> bool\n\nThe trt.IOutputAllocator that gives output "
     "`tensor_name` its memory once its size is known (needed by data-dependent outputs: NonZero, NMS); None "
     "clears it."},
    {"get_output_allocator", (PyCFunction)ctx_get_output_allocator, METH_O,
     "get_output_allocator(tensor_name) -> IOutputAllocator | None\n\nThe allocator set for the output, or None."},
    {"get_max_output_size", (PyCFunction)ctx_get_max_output_size, METH_O,
     "get_max_output_size(tensor_name) -> int\n\nBytes the output can need at the current input shapes (its "
     "upper bound when data-dependent): the size of a buffer bound to it without an allocator."},
    {"update_device_memory_size_for_shapes", (PyCFunction)ctx_update_memory_size, METH_NOARGS,
     "update_device_memory_size_for_shapes() -> int\n\nResolves the current input shapes and returns the bytes this "
     "context holds to execute at them: activation arena plus scratch (per-thread kernel slots, sized for "
     "num_threads).  Raises while a dynamic input has no shape."},
    {"memory_report", (PyCFunction)ctx_memory_report, METH_NOARGS,
     "memory_report() -> dict\n\n{'activation_bytes': ..., 'scratch_bytes': ...}: the context's memory at the "
     "current input shapes (resolved first), as update_device_memory_size_for_shapes() sums it."},
    {"__enter__", ctx_enter, METH_NOARGS, "Context manager entry."},
    {"__exit__", ctx_exit, METH_VARARGS, "Context manager exit."},
    {"_repr_html_", trtl_py_view_html, METH_NOARGS, TRTL_PY_VIEW_HTML_DOC},
    {NULL, NULL, 0, NULL}};

static PyType_Slot ctx_slots[] = {
    {Py_tp_dealloc, ctx_dealloc},
    {Py_tp_traverse, ctx_traverse},
    {Py_tp_clear, ctx_clear},
    {Py_tp_getset, ctx_getset},
    {Py_tp_repr, trtl_py_view_repr},
    {Py_tp_methods, ctx_methods},
    {Py_tp_doc, "An execution context (IExecutionContext): one per concurrent caller of an engine."},
    {0, NULL}};

static PyType_Spec ctx_spec = {"trtlite.IExecutionContext", sizeof(TrtlContext), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                   Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, ctx_slots};

trtl_engine *trtl_py_context_engine(PyObject *ctx)
{
    return ((TrtlContext *)ctx)->engine->e;
}

int trtl_py_init_context(PyObject *m, trtl_py_state *st)
{
    st->ContextType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &ctx_spec, NULL);
    if (!st->ContextType)
        return -1;
    return PyModule_AddType(m, st->ContextType);
}
