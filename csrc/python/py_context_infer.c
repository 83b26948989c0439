/*
 * py_context_infer.c -- IExecutionContext.infer(): the numpy convenience around execute (inputs
 * converted to the engine's dtypes, dynamic shapes set from the arrays, outputs allocated at their
 * resolved shapes).  It goes through the context's own methods, so each step takes its lock.
 */
#include <string.h>
#include "python/py_context.h"

/* np.<fn>(arg, dtype=<dtype of I/O tensor i>[, order="C"]) */
static PyObject *np_call(PyObject *np, const char *fn, PyObject *arg, trtl_dtype dt, int order_c)
{
    PyObject *f = PyObject_GetAttrString(np, fn);
    const char *dtype = trtl_py_numpy_dtype(dt);
    PyObject *kw = f ? Py_BuildValue(order_c ? "{s:s,s:s}" : "{s:s}", "dtype", dtype, "order", "C") : NULL;
    PyObject *a = kw ? PyTuple_Pack(1, arg) : NULL;
    PyObject *r = a ? PyObject_Call(f, a, kw) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(kw);
    Py_XDECREF(f);
    return r;
}

/* An input of a storage type (FP8, INT4, ...) -> its code bytes as a C-contiguous uint8 array, from
 * an ml_dtypes array of that very type (onnx.numpy_helper's) or from uint8 / int8 codes; anything
 * else is refused, since converting numbers to codes is the network's job (a cast or quantize
 * layer), not the binding's. */
static PyObject *storage_input(PyObject *np, PyObject *v, trtl_dtype dt, const char *name)
{
    PyObject *arr = PyObject_CallMethod(np, "asarray", "O", v);
    PyObject *dtype = arr ? PyObject_GetAttrString(arr, "dtype") : NULL;
    PyObject *dname = dtype ? PyObject_GetAttrString(dtype, "name") : NULL;
    const char *dn = dname ? PyUnicode_AsUTF8(dname) : NULL;
    PyObject *r = NULL;
    if (dn) {
        if (strcmp(dn, trtl_py_ml_dtype(dt)) == 0 || strcmp(dn, "uint8") == 0 || strcmp(dn, "int8") == 0) {
            PyObject *c = PyObject_CallMethod(np, "ascontiguousarray", "O", arr);
            r = c ? PyObject_CallMethod(c, "view", "s", "uint8") : NULL;
            Py_XDECREF(c);
        } else {
            PyErr_Format(PyExc_TypeError, "infer(): input '%s' is %s: give an ml_dtypes %s array or its codes as "
                         "uint8 (one a byte), not %s values", name, trtl_dtype_name(dt), trtl_py_ml_dtype(dt), dn);
        }
    }
    Py_XDECREF(dname);
    Py_XDECREF(dtype);
    Py_XDECREF(arr);
    return r;
}

/* Output codes of a storage type as the ml_dtypes array of that type when ml_dtypes imports (onnx
 * >= 1.16 needs it), else the uint8 codes themselves. */
static PyObject *storage_output(PyObject *codes, trtl_dtype dt)
{
    PyObject *ml = PyImport_ImportModule("ml_dtypes");
    if (!ml) {
        PyErr_Clear();
        return Py_NewRef(codes);
    }
    PyObject *t = PyObject_GetAttrString(ml, trtl_py_ml_dtype(dt));
    Py_DECREF(ml);
    if (!t) {
        PyErr_Clear();
        return Py_NewRef(codes);
    }
    PyObject *r = PyObject_CallMethod(codes, "view", "O", t);
    Py_DECREF(t);
    return r;
}

/* BF16 I/O through trtlite._bf16 (numpy has no bfloat16): an input becomes its uint16 bit patterns
 * (from an ml_dtypes bfloat16 array, uint16 bit patterns, or numbers rounded to nearest even); an
 * output's bit patterns become an ml_dtypes bfloat16 array when ml_dtypes imports. */
static PyObject *bf16_call(const char *fn, PyObject *v, const char *name)
{
    PyObject *m = PyImport_ImportModule("trtlite._bf16");
    PyObject *r = m ? PyObject_CallMethod(m, fn, "Os", v, name) : NULL;
    Py_XDECREF(m);
    return r;
}

/* Names of the engine's inputs not in `feed`, or keys of `feed` that are no input (which=1). */
static PyObject *name_list(PyObject *self, PyObject *feed, PyObject *keys, int which)
{
    trtl_engine *e = trtl_py_context_engine(self);
    PyObject *l = PyList_New(0);
    if (!l)
        return NULL;
    if (which == 1) {
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE(keys); k++) {
            PyObject *key = PyList_GET_ITEM(keys, k);
            const char *nm = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            int32_t i = nm ? trtl_engine_io_index(e, nm) : -1;
            PyErr_Clear();
            if ((i < 0 || !trtl_engine_io_is_input(e, i)) && PyList_Append(l, key) < 0)
                goto fail;
        }
        if (PyList_Sort(l) < 0) {
            PyErr_Clear(); /* keys of mixed types: keep their order */
        }
        return l;
    }
    for (int32_t i = 0; i < trtl_engine_num_io(e); i++) {
        if (!trtl_engine_io_is_input(e, i))
            continue;
        PyObject *nm = PyUnicode_FromString(trtl_engine_io_name(e, i));
        int has = nm ? PyMapping_HasKey(feed, nm) : 0;
        if (!nm || (!has && PyList_Append(l, nm) < 0)) {
            Py_XDECREF(nm);
            goto fail;
        }
        Py_DECREF(nm);
    }
    return l;
fail:
    Py_DECREF(l);
    return NULL;
}

static PyObject *input_names(PyObject *self)
{
    trtl_engine *e = trtl_py_context_engine(self);
    PyObject *l = PyList_New(0);
    for (int32_t i = 0; l && i < trtl_engine_num_io(e); i++) {
        if (!trtl_engine_io_is_input(e, i))
            continue;
        PyObject *nm = PyUnicode_FromString(trtl_engine_io_name(e, i));
        if (!nm || PyList_Append(l, nm) < 0)
            Py_CLEAR(l);
        Py_XDECREF(nm);
    }
    return l;
}

/* (batch,) + the engine's shape of I/O tensor i (implicit batch: the user view has no batch). */
static PyObject *batched_shape(PyObject *self, int32_t i, long batch)
{
    trtl_dims d = trtl_engine_io_dims(trtl_py_context_engine(self), i);
    PyObject *t = PyTuple_New(d.nb_dims + 1);
    if (!t)
        return NULL;
    PyTuple_SET_ITEM(t, 0, PyLong_FromLong(batch));
    for (int32_t k = 0; k < d.nb_dims; k++)
        PyTuple_SET_ITEM(t, k + 1, PyLong_FromLongLong(d.d[k]));
    for (int32_t k = 0; k <= d.nb_dims; k++)
        if (!PyTuple_GET_ITEM(t, k)) {
            Py_DECREF(t);
            return NULL;
        }
    return t;
}

PyObject *trtl_py_context_infer(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"feed", NULL};
    PyObject *feed;
    trtl_py_state *st = TRTL_STATE(self);
    trtl_engine *e = trtl_py_context_engine(self);
    int32_t n = trtl_engine_num_io(e);
    int implicit = trtl_engine_implicit_batch(e);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:infer", kw, &feed))
        return NULL;
    if (!PyMapping_Check(feed) || PyList_Check(feed) || PyTuple_Check(feed))
        return PyErr_Format(PyExc_TypeError, "infer(): feed must be a dict {input name: array}, not %s",
                            Py_TYPE(feed)->tp_name);
    PyObject *np = NULL, *keys = NULL, *bad = NULL, *names = NULL, *bindings = NULL, *outs = NULL, *r = NULL;
    PyObject *held = NULL; /* output name -> the user's allocator, set aside during the call */
    PyObject *result = NULL;
    long batch = 1;
    if (!(keys = PyMapping_Keys(feed)) || !(bad = name_list(self, feed, keys, 1)))
        goto done;
    if (PyList_GET_SIZE(bad) > 0) {
        if ((names = input_names(self)))
            PyErr_Format(st->NotFoundError, "infer(): %R are not inputs of this engine (inputs: %R)", bad, names);
        goto done;
    }
    Py_CLEAR(bad);
    if (!(bad = name_list(self, feed, keys, 0)))
        goto done;
    if (PyList_GET_SIZE(bad) > 0) {
        PyErr_Format(st->InvalidArgumentError, "infer(): missing inputs %R", bad);
        goto done;
    }
    if (!(np = PyImport_ImportModule("numpy")) || !(bindings = PyList_New(n)) || !(outs = PyDict_New()))
        goto done;
    /* Inputs: converted to the engine's dtypes (np.asarray keeps 0-d arrays 0-d). */
    int first = 1;
    for (int32_t i = 0; i < n; i++) {
        if (!trtl_engine_io_is_input(e, i))
            continue;
        const char *name = trtl_engine_io_name(e, i);
        PyObject *v = PyMapping_GetItemString(feed, name);
        trtl_dtype idt = trtl_engine_io_dtype(e, i);
        PyObject *arr = !v ? NULL : trtl_py_is_storage(idt) ? storage_input(np, v, idt, name)
                                  : idt == TRTL_BF16        ? bf16_call("host_bits", v, name)
                                                             : np_call(np, "asarray", v, idt, 1);
        Py_XDECREF(v);
        PyObject *shape = arr ? PyObject_GetAttrString(arr, "shape") : NULL;
        if (!shape) {
            Py_XDECREF(arr);
            goto done;
        }
        PyList_SET_ITEM(bindings, i, arr);
        if (implicit) {
            if (first)
                batch = PyTuple_GET_SIZE(shape) ? PyLong_AsLong(PyTuple_GET_ITEM(shape, 0)) : 1;
            first = 0;
            PyObject *want = batched_shape(self, i, batch);
            int eq = want ? PyObject_RichCompareBool(shape, want, Py_EQ) : -1;
            if (eq == 0)
                PyErr_Format(st->ShapeError, "infer(): input '%s' has shape %R, expected %R (batch first, then the "
                             "engine's shape)", name, shape, want);
            Py_XDECREF(want);
            if (eq != 1) {
                Py_DECREF(shape);
                goto done;
            }
        } else {
            /* a shape-tensor input's values decide the output shapes below: bound now, as TensorRT reads them
             * from the tensor address */
            PyObject *ok = trtl_engine_io_is_shape(e, i) ? PyObject_CallMethod(self, "set_tensor_address", "sO", name, arr)
                                                         : PyObject_CallMethod(self, "set_input_shape", "sO", name, shape);
            if (!ok) {
                Py_DECREF(shape);
                goto done;
            }
            Py_DECREF(ok);
        }
        Py_DECREF(shape);
    }
    /* Outputs: allocated at the resolved shapes (a shape or memory error is raised here). */
    for (int32_t i = 0; i < n; i++) {
        if (trtl_engine_io_is_input(e, i))
            continue;
        const char *name = trtl_engine_io_name(e, i);
        /* data-dependent (NonZero, NMS): a flat buffer of the upper bound, cut to the real shape below */
        int dd = trtl_engine_io_is_data_dependent(e, i);
        PyObject *shape = implicit ? batched_shape(self, i, batch)
                          : dd ? PyObject_CallMethod(self, "get_max_output_size", "s", name)
                               : PyObject_CallMethod(self, "get_tensor_shape", "s", name);
        if (dd && shape) {
            long long nb = PyLong_AsLongLong(shape);
            Py_SETREF(shape, nb < 0 && PyErr_Occurred() ? NULL
                             : Py_BuildValue("(L)", nb / (long long)trtl_dtype_size(trtl_engine_io_dtype(e, i))));
        }
        PyObject *tup = shape ? PySequence_Tuple(shape) : NULL;
        Py_XDECREF(shape);
        PyObject *arr = tup ? np_call(np, "empty", tup, trtl_engine_io_dtype(e, i), 0) : NULL;
        if (!arr && tup && PyErr_ExceptionMatches(PyExc_ValueError)) {
            /* numpy refuses a shape whose dims' product overflows even where another dim is 0 (a fuzzed empty
             * [0, 2, 2^62] output raised numpy's ValueError, naming nothing) */
            PyErr_Clear();
            PyErr_Format(st->ShapeError, "infer(): output '%s' of shape %R: numpy cannot make an array of that "
                         "shape (its dims' product overflows); bind a buffer of your own", name, tup);
        }
        Py_XDECREF(tup);
        if (!arr || PyDict_SetItemString(outs, name, arr) < 0) {
            Py_XDECREF(arr);
            goto done;
        }
        PyList_SET_ITEM(bindings, i, arr);
    }
    /* infer() returns its own arrays: a user's output allocator is set aside for the call (else the data
     * would go only to the allocator's memory and the array returned would hold none of it) */
    if (!(held = PyDict_New()))
        goto done;
    for (int32_t i = 0; i < n && !implicit; i++) {
        if (trtl_engine_io_is_input(e, i))
            continue;
        const char *name = trtl_engine_io_name(e, i);
        PyObject *a = PyObject_CallMethod(self, "get_output_allocator", "s", name);
        PyObject *off = a && a != Py_None && PyDict_SetItemString(held, name, a) == 0
                            ? PyObject_CallMethod(self, "set_output_allocator", "sO", name, Py_None) : Py_NewRef(Py_None);
        Py_XDECREF(a);
        if (!a || !off)
            goto done;
        Py_DECREF(off);
    }
    r = implicit ? PyObject_CallMethod(self, "execute", "lO", batch, bindings)
                 : PyObject_CallMethod(self, "execute_v2", "O", bindings);
    for (int32_t i = 0; r && i < n; i++) {
        if (trtl_engine_io_is_input(e, i) || !trtl_engine_io_is_data_dependent(e, i))
            continue;
        const char *name = trtl_engine_io_name(e, i);
        PyObject *shape = PyObject_CallMethod(self, "get_tensor_shape", "s", name);
        PyObject *tup = shape ? PySequence_Tuple(shape) : NULL;
        Py_ssize_t vol = 1;
        for (Py_ssize_t k = 0; tup && k < PyTuple_GET_SIZE(tup); k++)
            vol *= PyLong_AsSsize_t(PyTuple_GET_ITEM(tup, k));
        PyObject *stop = tup ? PyLong_FromSsize_t(vol) : NULL;
        PyObject *sl = stop ? PySlice_New(NULL, stop, NULL) : NULL;
        Py_XDECREF(stop);
        PyObject *flat = sl ? PyObject_GetItem(PyList_GET_ITEM(bindings, i), sl) : NULL;
        PyObject *cut = flat ? PyObject_CallMethod(flat, "reshape", "O", tup) : NULL;
        Py_XDECREF(shape);
        Py_XDECREF(tup);
        Py_XDECREF(sl);
        Py_XDECREF(flat);
        if (!cut || PyDict_SetItemString(outs, name, cut) < 0)
            Py_CLEAR(r);
        Py_XDECREF(cut);
    }
    for (int32_t i = 0; r && i < n; i++) {
        trtl_dtype odt = trtl_engine_io_dtype(e, i);
        if (trtl_engine_io_is_input(e, i) || (!trtl_py_is_storage(odt) && odt != TRTL_BF16))
            continue;
        const char *name = trtl_engine_io_name(e, i);
        PyObject *typed = odt == TRTL_BF16 ? bf16_call("typed_output", PyDict_GetItemString(outs, name), name)
                                           : storage_output(PyDict_GetItemString(outs, name), odt);
        if (!typed || PyDict_SetItemString(outs, name, typed) < 0) {
            Py_XDECREF(typed);
            Py_CLEAR(r);
            break;
        }
        Py_DECREF(typed);
    }
    if (r)
        result = Py_NewRef(outs);
done:
    if (held) { /* the allocators go back, also after an error (keeping that error) */
        PyObject *et, *ev, *tb, *k, *v;
        Py_ssize_t pos = 0;
        PyErr_Fetch(&et, &ev, &tb);
        while (PyDict_Next(held, &pos, &k, &v)) {
            PyObject *back = PyObject_CallMethod(self, "set_output_allocator", "OO", k, v);
            if (!back)
                PyErr_Clear();
            Py_XDECREF(back);
        }
        PyErr_Restore(et, ev, tb);
        Py_DECREF(held);
    }
    Py_XDECREF(r);
    Py_XDECREF(np);
    Py_XDECREF(keys);
    Py_XDECREF(bad);
    Py_XDECREF(names);
    Py_XDECREF(bindings);
    Py_XDECREF(outs);
    return result;
}
