/*
 * py_plugin.c -- plugins from Python.
 *
 *  - _C.PluginCreator wraps a registered creator (built-in, from a library, or the adapter of a
 *    Python creator): create_plugin(), deserialize_plugin(), field_names, all through the
 *    registry's checked trtl_plugin_create.
 *  - _C.PluginV2 owns a C plugin instance: serialize(), clone(), and lends clones to
 *    add_plugin_v2 through _trtl_clone_capsule().
 *  - Python creators (trt.IPluginCreator subclasses) are registered through an adapter C
 *    creator, and Python plugins (trt.IPluginV2 subclasses) run through an adapter C plugin whose
 *    vtable calls back into Python with the GIL taken (build and execute run without it); its
 *    enqueue() works on numpy arrays of its own, copied from and to the engine's buffers.  A
 *    Python plugin serializes as one opaque field "__data__" holding its serialize() bytes;
 *    the adapter creator routes that field to deserialize_plugin().
 *
 * Adapter creators live for the rest of the process once registered: plugin instances and
 * engines keep pointers to their creator.  The registry stores copies of creator structs, so an
 * adapter is always reached through `creator->user`.
 */
#include <stdarg.h>
#include <string.h>

#include "python/pytrtl.h"
#include "plugins/fields.h"
#include "core/dims.h"
#include "core/status.h"

#define DATA_FIELD "__data__"

typedef struct TrtlCreatorObj {
    PyObject_HEAD
    const trtl_plugin_creator *c;
} TrtlCreatorObj;

typedef struct TrtlPluginObj {
    PyObject_HEAD
    trtl_plugin *p;
    char name[64]; /* given to create_plugin / deserialize_plugin; layer messages name it */
} TrtlPluginObj;

static PyTypeObject *creator_type_of(trtl_py_state *st);
static PyTypeObject *plugin_type_of(trtl_py_state *st);

/* ---- small helpers -------------------------------------------------------------------------- */

/* "WHAT raised TYPE: TEXT" from the exception being handled, which is then cleared, or with
 * `keep` left set (normalized) for a caller that chains it. */
static void exception_msg(char *msg, size_t n, const char *what, int keep)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    PyObject *s = ev ? PyObject_Str(ev) : NULL;
    const char *text = s ? PyUnicode_AsUTF8(s) : NULL;
    snprintf(msg, n, "%s raised %s: %s", what, et ? ((PyTypeObject *)et)->tp_name : "an exception",
             text ? text : "?");
    Py_XDECREF(s);
    PyErr_Clear();
    if (keep && et) {
        if (ev && tb)
            PyException_SetTraceback(ev, tb);
        PyErr_Restore(et, ev, tb);
        return;
    }
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
}

static void msg_from_exception(char *msg, size_t n, const char *what) { exception_msg(msg, n, what, 0); }

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

static const char *np_tensor_dtype(trtl_dtype t)
{
    switch (t) {
    case TRTL_FLOAT: return "float32";
    case TRTL_HALF: return "float16";
    case TRTL_INT8: return "int8";
    case TRTL_INT32: return "int32";
    case TRTL_BOOL: return "bool";
    case TRTL_UINT8: return "uint8";
    default: return "uint8";
    }
}

/* Raises `type` with a formatted message whose __cause__ is the exception being handled (if
 * any), so the user still sees what their own code raised.  Returns NULL. */
static PyObject *raise_chained(PyObject *type, const char *fmt, ...)
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
        raise_chained(st->PluginFieldError, "plugin '%s': field '%s' has type %ld, which is not a PluginFieldType",
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
            raise_chained(st->PluginFieldError, "plugin '%s': field '%s': data cannot be converted to %s: %s", plugin,
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
            raise_chained(st->PluginFieldError, "plugin '%s': field '%s' holds %zu values; at most %d fit a field",
                          plugin, out->name, count, INT32_MAX);
            return -1;
        }
    }
    *keep = arr;
    *name_keep = name;
    return 0;
}

/* Python field collection -> C fields (arrays in *keep_list, a new list). */
static int fields_from_py(trtl_py_state *st, const char *plugin, PyObject *fc, trtl_plugin_field **out, int32_t *n,
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
static PyObject *fields_to_py(trtl_py_state *st, const trtl_plugin_field *f, int32_t n)
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

/* ---- Python plugin adapter ---------------------------------------------------------------- */

/* A numpy array enqueue() sees in place of an engine buffer (see stage_array). */
typedef struct py_stage {
    PyObject *arr; /* owns its data; NULL until first used */
    trtl_dims dims;
    trtl_dtype dtype;
} py_stage;

typedef struct py_plugin {
    trtl_plugin base;
    PyObject *obj;          /* the user's trt.IPluginV2 subclass instance */
    PyObject *ser;          /* bytes from the last serialize() (get_fields' data) */
    trtl_plugin_field field;
    py_stage *stage;        /* nb_in + nb_out arrays for enqueue, inputs first */
    int32_t n_stage;
} py_plugin;

static const trtl_plugin_vtable py_plugin_vt;

static trtl_plugin *py_plugin_wrap(PyObject *obj, const trtl_plugin_creator *creator)
{
    py_plugin *p = PyMem_RawCalloc(1, sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    p->base.vt = &py_plugin_vt;
    p->base.creator = creator;
    p->obj = Py_NewRef(obj);
    return &p->base;
}

static int32_t pyp_num_outputs(const trtl_plugin *self)
{
    const py_plugin *p = (const py_plugin *)self;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_GetAttrString(p->obj, "num_outputs");
    long n = r ? PyLong_AsLong(r) : -1;
    Py_XDECREF(r);
    if (PyErr_Occurred()) {
        PyErr_WriteUnraisable(p->obj);
        n = -1;
    }
    PyGILState_Release(g);
    return (int32_t)n;
}

static PyObject *dims_tuple(const trtl_dims *d)
{
    PyObject *t = PyTuple_New(d->nb_dims);
    for (int32_t i = 0; t && i < d->nb_dims; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(d->d[i]));
    return t;
}

static int pyp_output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                           trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const py_plugin *p = (const py_plugin *)self;
    int rc = 1;
    PyGILState_STATE g = PyGILState_Ensure();
    trtl_py_state *st = trtl_py_gstate;
    PyObject *shapes = PyList_New(nb_in), *dts = PyList_New(nb_in), *shape = NULL, *dt = NULL;
    for (int32_t i = 0; shapes && dts && i < nb_in; i++) {
        PyList_SET_ITEM(shapes, i, dims_tuple(&in[i].dims));
        PyList_SET_ITEM(dts, i, trtl_py_enum(st, "DataType", in[i].dtype));
    }
    if (!shapes || !dts)
        goto fail;
    shape = PyObject_CallMethod(p->obj, "get_output_shape", "iO", (int)index, shapes);
    if (!shape) {
        msg_from_exception(msg, msg_len, "get_output_shape()");
        goto done;
    }
    if (trtl_py_to_dims(st, shape, &out->dims, "get_output_shape() result") < 0) {
        msg_from_exception(msg, msg_len, "get_output_shape()");
        goto done;
    }
    dt = PyObject_CallMethod(p->obj, "get_output_dtype", "iO", (int)index, dts);
    if (!dt) {
        msg_from_exception(msg, msg_len, "get_output_dtype()");
        goto done;
    }
    long t = PyLong_AsLong(dt);
    if (t == -1 && PyErr_Occurred()) {
        msg_from_exception(msg, msg_len, "get_output_dtype()");
        goto done;
    }
    out->dtype = (trtl_dtype)t;
    rc = 0;
    goto done;
fail:
    msg_from_exception(msg, msg_len, "plugin");
done:
    Py_XDECREF(shapes);
    Py_XDECREF(dts);
    Py_XDECREF(shape);
    Py_XDECREF(dt);
    PyGILState_Release(g);
    return rc;
}

/* enqueue() gets numpy arrays that own their memory, not views of the engine's buffers: a plugin
 * may keep what it was given (numpy captures the data pointer, so no view of engine memory can be
 * revoked once handed out), and such arrays must stay valid after the context, its arena or the
 * caller's bindings are gone.  Inputs are copied in (and marked read-only), outputs copied out
 * after enqueue returns.  An instance reuses its arrays from call to call -- filling one costs a
 * memcpy -- unless the plugin kept a reference (refcount above ours), then it gets new ones and
 * keeps its old. */
static PyObject *stage_array(PyObject *np, py_stage *s, const trtl_plugin_tensor_desc *d, int writable)
{
    if (s->arr && Py_REFCNT(s->arr) == 1 && s->dtype == d->dtype && trtl_dims_equal(&s->dims, &d->dims))
        return s->arr;
    PyObject *shape = dims_tuple(&d->dims);
    PyObject *arr = shape ? PyObject_CallMethod(np, "empty", "Os", shape, np_tensor_dtype(d->dtype)) : NULL;
    Py_XDECREF(shape);
    if (arr && !writable) {
        PyObject *flags = PyObject_GetAttrString(arr, "flags");
        if (!flags || PyObject_SetAttrString(flags, "writeable", Py_False) < 0)
            Py_CLEAR(arr);
        Py_XDECREF(flags);
    }
    if (!arr)
        return NULL;
    Py_XSETREF(s->arr, arr);
    s->dims = d->dims;
    s->dtype = d->dtype;
    return arr;
}

/* memcpy between an engine buffer and a staged array (ours: written through its buffer even when
 * numpy shows the plugin a read-only array). */
static int stage_copy(PyObject *arr, void *engine, const trtl_plugin_tensor_desc *d, int to_engine)
{
    int64_t v = trtl_volume(&d->dims);
    size_t bytes = (size_t)(v > 0 ? v : 0) * trtl_dtype_size(d->dtype);
    if (!bytes)
        return 0;
    Py_buffer b;
    if (PyObject_GetBuffer(arr, &b, PyBUF_SIMPLE) < 0)
        return -1;
    if ((size_t)b.len < bytes) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_RuntimeError, "staged array is smaller than its tensor");
        return -1;
    }
    if (to_engine)
        memcpy(engine, b.buf, bytes);
    else
        memcpy(b.buf, engine, bytes);
    PyBuffer_Release(&b);
    return 0;
}

static int pyp_enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                       int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                       void *workspace, char *msg, size_t msg_len)
{
    (void)workspace;
    py_plugin *p = (py_plugin *)self;
    int rc = 1;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *np = PyImport_ImportModule("numpy");
    PyObject *ins = PyList_New(nb_in), *outs = PyList_New(nb_out), *r = NULL;
    if (!np || !ins || !outs) {
        msg_from_exception(msg, msg_len, "plugin");
        goto done;
    }
    if (p->n_stage != nb_in + nb_out) {
        py_stage *ns = PyMem_RawCalloc((size_t)(nb_in + nb_out + 1), sizeof *ns);
        if (!ns) {
            snprintf(msg, msg_len, "out of memory");
            goto done;
        }
        for (int32_t k = 0; k < p->n_stage; k++)
            Py_XDECREF(p->stage[k].arr);
        PyMem_RawFree(p->stage);
        p->stage = ns;
        p->n_stage = nb_in + nb_out;
    }
    for (int32_t i = 0; i < nb_in; i++) {
        PyObject *a = stage_array(np, &p->stage[i], &in_desc[i], 0);
        if (!a || stage_copy(a, (void *)inputs[i], &in_desc[i], 0) < 0) {
            msg_from_exception(msg, msg_len, "making input arrays");
            goto done;
        }
        PyList_SET_ITEM(ins, i, Py_NewRef(a));
    }
    for (int32_t i = 0; i < nb_out; i++) {
        PyObject *a = stage_array(np, &p->stage[nb_in + i], &out_desc[i], 1);
        if (!a) {
            msg_from_exception(msg, msg_len, "making output arrays");
            goto done;
        }
        PyList_SET_ITEM(outs, i, Py_NewRef(a));
    }
    r = PyObject_CallMethod(p->obj, "enqueue", "OO", ins, outs);
    if (!r) {
        msg_from_exception(msg, msg_len, "enqueue()");
        goto done;
    }
    if (r != Py_None && PyLong_Check(r) && PyLong_AsLong(r) != 0) {
        snprintf(msg, msg_len, "enqueue() returned %ld", PyLong_AsLong(r));
        goto done;
    }
    /* From the arrays handed out, not from `outs`, which the plugin may have rebound. */
    for (int32_t i = 0; i < nb_out; i++)
        if (stage_copy(p->stage[nb_in + i].arr, outputs[i], &out_desc[i], 1) < 0) {
            msg_from_exception(msg, msg_len, "copying outputs");
            goto done;
        }
    rc = 0;
done:
    Py_XDECREF(r);
    Py_XDECREF(ins);
    Py_XDECREF(outs);
    Py_XDECREF(np);
    PyGILState_Release(g);
    return rc;
}

static int pyp_get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    py_plugin *p = (py_plugin *)self; /* caches the bytes: logically const */
    int rc = 1;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *b = PyObject_CallMethod(p->obj, "serialize", NULL);
    if (b && b != Py_None && !PyBytes_Check(b)) {
        PyObject *c = PyBytes_FromObject(b);
        Py_DECREF(b);
        b = c;
    }
    if (!b) {
        /* The writer names the layer around this (see serialize/writer.c). */
        char why[512];
        msg_from_exception(why, sizeof why, "serialize()");
        trtl_error(TRTL_ERR_PLUGIN, "%s", why);
    } else {
        if (b == Py_None) {
            Py_DECREF(b);
            b = PyBytes_FromStringAndSize(NULL, 0);
        }
        Py_XSETREF(p->ser, b);
        p->field.name = DATA_FIELD;
        p->field.type = TRTL_PF_CHAR;
        p->field.data = PyBytes_AS_STRING(p->ser);
        p->field.length = (int32_t)PyBytes_GET_SIZE(p->ser);
        out->nb_fields = 1;
        out->fields = &p->field;
        rc = 0;
    }
    PyGILState_Release(g);
    return rc;
}

static trtl_plugin *pyp_clone(const trtl_plugin *self)
{
    const py_plugin *p = (const py_plugin *)self;
    trtl_plugin *r = NULL;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *c = PyObject_CallMethod(p->obj, "clone", NULL);
    if (c)
        r = py_plugin_wrap(c, p->base.creator);
    if (!r)
        PyErr_WriteUnraisable(p->obj);
    Py_XDECREF(c);
    PyGILState_Release(g);
    return r;
}

static void pyp_destroy(trtl_plugin *self)
{
    py_plugin *p = (py_plugin *)self;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(p->obj);
    Py_XDECREF(p->ser);
    for (int32_t k = 0; k < p->n_stage; k++)
        Py_XDECREF(p->stage[k].arr);
    PyGILState_Release(g);
    PyMem_RawFree(p->stage);
    PyMem_RawFree(p);
}

static const trtl_plugin_vtable py_plugin_vt = {
    sizeof(trtl_plugin_vtable), TRTL_PLUGIN_ABI_VERSION, pyp_num_outputs, pyp_output_desc, NULL, pyp_enqueue,
    pyp_get_fields, pyp_clone, pyp_destroy};

/* ---- Python creator adapter ---------------------------------------------------------------- */

typedef struct py_creator {
    trtl_plugin_creator c;
    PyObject *obj;
    char *name, *version, *ns;
    trtl_plugin_field_desc *fields;
} py_creator;

/* A plugin object returned by Python code -> a C plugin instance (new). */
static trtl_plugin *plugin_from_py(trtl_py_state *st, PyObject *obj, const trtl_plugin_creator *creator)
{
    if (PyObject_TypeCheck(obj, plugin_type_of(st))) {
        trtl_plugin *q = NULL;
        if (trtl_plugin_clone(((TrtlPluginObj *)obj)->p, NULL, &q) != TRTL_OK)
            trtl_py_raise(st, trtl_last_status());
        return q;
    }
    if (!PyObject_HasAttrString(obj, "enqueue") || !PyObject_HasAttrString(obj, "get_output_shape")) {
        PyErr_Format(PyExc_TypeError, "expected a trt.IPluginV2 (with get_output_shape and enqueue), got %s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return py_plugin_wrap(obj, creator);
}

static trtl_plugin *pyc_create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                               char *msg, size_t msg_len)
{
    const py_creator *c = (const py_creator *)self->user; /* self may be the registry's copy */
    trtl_plugin *r = NULL;
    PyGILState_STATE g = PyGILState_Ensure();
    trtl_py_state *st = trtl_py_gstate;
    const trtl_plugin_field *data = NULL;
    for (int32_t i = 0; i < fields->nb_fields; i++)
        if (strcmp(fields->fields[i].name, DATA_FIELD) == 0)
            data = &fields->fields[i];
    PyObject *obj;
    if (data) {
        PyObject *b = PyBytes_FromStringAndSize(data->data, data->length);
        obj = b ? PyObject_CallMethod(c->obj, "deserialize_plugin", "sO", layer_name, b) : NULL;
        Py_XDECREF(b);
    } else {
        PyObject *fc = fields_to_py(st, fields->fields, fields->nb_fields);
        obj = fc ? PyObject_CallMethod(c->obj, "create_plugin", "sO", layer_name, fc) : NULL;
        Py_XDECREF(fc);
    }
    /* A caller that held the GIL is create_from_fields, which chains what the user's code raised
     * to its PluginError; others (plan loading, GIL released) only get the text. */
    int keep = g == PyGILState_LOCKED;
    if (!obj) {
        exception_msg(msg, msg_len, data ? "deserialize_plugin()" : "create_plugin()", keep);
    } else if (obj == Py_None) {
        snprintf(msg, msg_len, "%s returned None", data ? "deserialize_plugin()" : "create_plugin()");
    } else {
        r = plugin_from_py(st, obj, self);
        if (!r)
            exception_msg(msg, msg_len, data ? "deserialize_plugin() result" : "create_plugin() result", keep);
    }
    Py_XDECREF(obj);
    PyGILState_Release(g);
    return r;
}

static char *dup_utf8(PyObject *o)
{
    const char *s = o ? PyUnicode_AsUTF8(o) : NULL;
    if (!s)
        return NULL;
    char *r = PyMem_RawMalloc(strlen(s) + 1);
    if (r)
        strcpy(r, s);
    return r;
}

static PyObject *attr_str(PyObject *obj, const char *attr, const char *dflt)
{
    PyObject *v = PyObject_GetAttrString(obj, attr);
    if (!v) {
        PyErr_Clear();
        return PyUnicode_FromString(dflt);
    }
    if (!PyUnicode_Check(v)) {
        Py_DECREF(v);
        return PyErr_Format(PyExc_TypeError, "plugin creator attribute '%s' must be a str", attr);
    }
    return v;
}

/* Builds (never frees: see the file comment) an adapter creator for a Python creator. */
static const trtl_plugin_creator *py_creator_make(trtl_py_state *st, PyObject *obj)
{
    (void)st;
    PyObject *name = attr_str(obj, "name", ""), *ver = name ? attr_str(obj, "plugin_version", "1") : NULL;
    PyObject *ns = ver ? attr_str(obj, "plugin_namespace", "") : NULL;
    py_creator *c = NULL;
    if (!ns)
        goto fail;
    if (PyUnicode_GetLength(name) == 0) {
        PyErr_SetString(PyExc_ValueError, "register_creator: the creator has no name");
        goto fail;
    }
    c = PyMem_RawCalloc(1, sizeof *c);
    if (!c) {
        PyErr_NoMemory();
        goto fail;
    }
    c->name = dup_utf8(name);
    c->version = dup_utf8(ver);
    c->ns = dup_utf8(ns);
    /* Fields: the creator's field_names (types enforced when given) plus the opaque data field. */
    PyObject *fn = PyObject_GetAttrString(obj, "field_names");
    PyObject *seq = fn && fn != Py_None ? PySequence_Fast(fn, "field_names must be a list of PluginField") : NULL;
    Py_XDECREF(fn);
    PyErr_Clear();
    Py_ssize_t nf = seq ? PySequence_Fast_GET_SIZE(seq) : 0;
    c->fields = PyMem_RawCalloc((size_t)nf + 1, sizeof *c->fields);
    if (!c->name || !c->version || !c->ns || !c->fields) {
        Py_XDECREF(seq);
        PyErr_NoMemory();
        goto fail;
    }
    int32_t k = 0;
    for (Py_ssize_t i = 0; i < nf; i++) {
        PyObject *f = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *fname = PyObject_GetAttrString(f, "name"), *ftype = PyObject_GetAttrString(f, "type");
        if (fname && PyUnicode_Check(fname)) {
            c->fields[k].name = dup_utf8(fname);
            c->fields[k].type = ftype ? (int32_t)PyLong_AsLong(ftype) : TRTL_PF_UNKNOWN;
            if (PyErr_Occurred() || c->fields[k].type < 0 || c->fields[k].type > TRTL_PF_UNKNOWN)
                c->fields[k].type = TRTL_PF_UNKNOWN;
            c->fields[k].required = 0;
            if (c->fields[k].name)
                k++;
        }
        PyErr_Clear();
        Py_XDECREF(fname);
        Py_XDECREF(ftype);
    }
    Py_XDECREF(seq);
    c->fields[k].name = DATA_FIELD;
    c->fields[k].type = TRTL_PF_CHAR;
    c->fields[k].required = 0;
    k++;
    c->c.struct_size = sizeof(trtl_plugin_creator);
    c->c.abi_version = TRTL_PLUGIN_ABI_VERSION;
    c->c.name = c->name;
    c->c.version = c->version;
    c->c.plugin_namespace = c->ns;
    c->c.fields = c->fields;
    c->c.nb_fields = k;
    c->c.create = pyc_create;
    c->c.user = c;
    c->obj = Py_NewRef(obj);
    Py_DECREF(name);
    Py_DECREF(ver);
    Py_DECREF(ns);
    return &c->c;
fail:
    Py_XDECREF(name);
    Py_XDECREF(ver);
    Py_XDECREF(ns);
    if (c) {
        PyMem_RawFree(c->name);
        PyMem_RawFree(c->version);
        PyMem_RawFree(c->ns);
        PyMem_RawFree(c->fields);
        PyMem_RawFree(c);
    }
    return NULL;
}

/* The Python object standing for a registered creator: a _C.PluginCreator around the registry's
 * entry, also for creators written in Python, so that creating a plugin through the registry
 * always takes the registry's checked path (field types, unknown fields, errors naming the
 * plugin, the namespace registered under).  The user's own object stays plain Python. */
static PyObject *creator_to_py(trtl_py_state *st, const trtl_plugin_creator *c)
{
    TrtlCreatorObj *o = PyObject_New(TrtlCreatorObj, creator_type_of(st));
    if (!o)
        return NULL;
    o->c = c;
    return (PyObject *)o;
}

/* ---- _C.PluginV2 ---------------------------------------------------------------------------- */

static PyObject *plugin_obj_new(trtl_py_state *st, trtl_plugin *p, const char *name)
{
    TrtlPluginObj *o = PyObject_New(TrtlPluginObj, plugin_type_of(st));
    if (!o) {
        p->vt->destroy(p);
        return NULL;
    }
    o->p = p;
    snprintf(o->name, sizeof o->name, "%s", name ? name : "");
    return (PyObject *)o;
}

const char *trtl_py_plugin_name(trtl_py_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, plugin_type_of(st)) ? ((TrtlPluginObj *)obj)->name : NULL;
}

static void plugin_dealloc(TrtlPluginObj *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->p)
        self->p->vt->destroy(self->p);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *plugin_capsule(TrtlPluginObj *self, PyObject *unused)
{
    (void)unused;
    trtl_plugin *c = NULL;
    if (trtl_plugin_clone(self->p, NULL, &c) != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), trtl_last_status());
    return PyCapsule_New(c, "trtlite.plugin", NULL);
}

/* The fields plugin p reports, checked as the plan writer checks them; -1 with PluginError set. */
static int serializable_fields(trtl_py_state *st, const trtl_plugin *p, trtl_plugin_fields *fc)
{
    const char *name = p->creator ? p->creator->name : "?";
    *fc = (trtl_plugin_fields){0, NULL};
    if (p->vt->get_fields(p, fc) != 0) {
        trtl_py_raise_msg(st, TRTL_ERR_PLUGIN, "plugin %s failed to report its fields", name);
        return -1;
    }
    if (trtl_plugin_fields_check(fc) != TRTL_OK) {
        trtl_error_prefix("plugin %s cannot be serialized", name);
        trtl_py_raise(st, TRTL_ERR_PLUGIN);
        return -1;
    }
    return 0;
}

static PyObject *encode_fields(trtl_py_state *st, const trtl_plugin *p)
{
    trtl_plugin_fields fc;
    if (serializable_fields(st, p, &fc) < 0)
        return NULL;
    size_t n = trtl_plugin_fields_size(&fc);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (b)
        trtl_plugin_fields_write(&fc, (uint8_t *)PyBytes_AS_STRING(b));
    return b;
}

static PyObject *plugin_serialize(TrtlPluginObj *self, PyObject *unused)
{
    (void)unused;
    return encode_fields(TRTL_STATE(self), self->p);
}

static PyObject *plugin_clone(TrtlPluginObj *self, PyObject *unused)
{
    (void)unused;
    trtl_plugin *c = NULL;
    if (trtl_plugin_clone(self->p, NULL, &c) != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), trtl_last_status());
    return plugin_obj_new(TRTL_STATE(self), c, self->name);
}

static PyObject *plugin_noop(TrtlPluginObj *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    Py_RETURN_NONE;
}

static PyObject *pg_num_outputs(TrtlPluginObj *self, void *c)
{
    (void)c;
    return PyLong_FromLong(self->p->vt->num_outputs(self->p));
}
static PyObject *pg_type(TrtlPluginObj *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->p->creator ? self->p->creator->name : "");
}
static PyObject *pg_version(TrtlPluginObj *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->p->creator ? self->p->creator->version : "");
}
static PyObject *pg_namespace(TrtlPluginObj *self, void *c)
{
    (void)c;
    const char *ns = self->p->creator ? trtl_plugin_registered_namespace(self->p->creator) : NULL;
    return PyUnicode_FromString(ns ? ns : (self->p->creator && self->p->creator->plugin_namespace ? self->p->creator->plugin_namespace : ""));
}
static PyObject *pg_ser_size(TrtlPluginObj *self, void *c)
{
    (void)c;
    trtl_plugin_fields fc;
    if (serializable_fields(TRTL_STATE(self), self->p, &fc) < 0)
        return NULL;
    return PyLong_FromSize_t(trtl_plugin_fields_size(&fc));
}

static PyGetSetDef plugin_getset[] = {
    {"num_outputs", (getter)pg_num_outputs, NULL, "Number of outputs.", NULL},
    {"plugin_type", (getter)pg_type, NULL, "Creator name, e.g. 'Adder2d_TRT'.", NULL},
    {"plugin_version", (getter)pg_version, NULL, "Creator version.", NULL},
    {"plugin_namespace", (getter)pg_namespace, NULL, "Namespace the creator is registered under.", NULL},
    {"serialization_size", (getter)pg_ser_size, NULL, "Bytes serialize() returns.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef plugin_methods[] = {
    {"serialize", (PyCFunction)plugin_serialize, METH_NOARGS,
     "serialize() -> bytes\n\nThe plugin's fields, encoded; IPluginCreator.deserialize_plugin() recreates it."},
    {"clone", (PyCFunction)plugin_clone, METH_NOARGS, "clone() -> IPluginV2\n\nA deep copy."},
    {"destroy", (PyCFunction)plugin_noop, METH_NOARGS, "destroy() -> None\n\nNo effect: memory is freed with the object."},
    {"terminate", (PyCFunction)plugin_noop, METH_NOARGS, "terminate() -> None\n\nNo effect."},
    {"initialize", (PyCFunction)plugin_noop, METH_NOARGS, "initialize() -> None\n\nNo effect."},
    {"_trtl_clone_capsule", (PyCFunction)plugin_capsule, METH_NOARGS, "Internal: a C clone for add_plugin_v2."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot plugin_slots[] = {
    {Py_tp_dealloc, plugin_dealloc},
    {Py_tp_getset, plugin_getset},
    {Py_tp_methods, plugin_methods},
    {Py_tp_doc, "A plugin instance made by a C plugin creator (built-in or from a library)."},
    {0, NULL}};

static PyType_Spec plugin_spec = {"trtlite.PluginV2", sizeof(TrtlPluginObj), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, plugin_slots};

/* ---- _C.PluginCreator ------------------------------------------------------------------------ */

static void creator_dealloc(TrtlCreatorObj *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* A Python plugin made by a Python creator: the user's object, carrying the namespace its creator
 * was registered under (as TensorRT's creators set it on their plugins), so that a network
 * using it finds the creator again when serializing. */
static PyObject *python_plugin_result(const trtl_plugin_creator *c, trtl_plugin *p)
{
    PyObject *obj = Py_NewRef(((py_plugin *)p)->obj);
    p->vt->destroy(p);
    const char *ns = trtl_plugin_registered_namespace(c);
    PyObject *have = PyObject_GetAttrString(obj, "plugin_namespace");
    if (!have || !PyUnicode_Check(have) || strcmp(PyUnicode_AsUTF8(have), ns ? ns : "") != 0) {
        PyObject *want = PyUnicode_FromString(ns ? ns : "");
        if (!want || PyObject_SetAttrString(obj, "plugin_namespace", want) < 0)
            PyErr_Clear(); /* a read-only attribute: the plugin keeps its own */
        Py_XDECREF(want);
    }
    PyErr_Clear();
    Py_XDECREF(have);
    return obj;
}

static PyObject *create_from_fields(trtl_py_state *st, const trtl_plugin_creator *c, const char *name,
                                    const trtl_plugin_field *f, int32_t n)
{
    trtl_plugin_fields fc = {n, f};
    trtl_plugin *p = NULL;
    trtl_status s = trtl_plugin_create(c, name, &fc, &p);
    if (s != TRTL_OK) {
        /* What a Python creator raised (left set by pyc_create) becomes the __cause__; control
         * flow exceptions (KeyboardInterrupt, SystemExit) pass through as they are. */
        if (PyErr_Occurred())
            return PyErr_ExceptionMatches(PyExc_Exception) ? raise_chained(st->PluginError, "%s", trtl_last_error())
                                                           : NULL;
        /* The registry's field checks fail with INVALID_ARGUMENT. */
        if (s == TRTL_ERR_INVALID_ARGUMENT) {
            PyErr_SetString(st->PluginFieldError, trtl_last_error());
            return NULL;
        }
        return trtl_py_raise(st, s);
    }
    if (p->vt == &py_plugin_vt)
        return python_plugin_result(c, p);
    return plugin_obj_new(st, p, name);
}

static PyObject *creator_create_plugin(TrtlCreatorObj *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "field_collection", NULL};
    const char *name;
    PyObject *fc = NULL, *keep;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|O:create_plugin", kw, &name, &fc))
        return NULL;
    trtl_plugin_field *fields;
    int32_t n;
    if (fields_from_py(st, self->c->name, fc, &fields, &n, &keep) < 0) {
        Py_XDECREF(keep);
        return NULL;
    }
    PyObject *r = create_from_fields(st, self->c, name, fields, n);
    PyMem_Free(fields);
    Py_DECREF(keep);
    return r;
}

static PyObject *creator_deserialize(TrtlCreatorObj *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "serialized_plugin", NULL};
    const char *name;
    Py_buffer b;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sy*:deserialize_plugin", kw, &name, &b))
        return NULL;
    if (self->c->create == pyc_create) {
        /* A Python plugin's serialize() bytes are its own: they reach the creator's
         * deserialize_plugin() as the opaque data field, the way a plan hands them over. */
        if (b.len > INT32_MAX) {
            PyBuffer_Release(&b);
            return trtl_py_raise_msg(st, TRTL_ERR_PLUGIN, "deserialize_plugin('%s', ...) for %s: %zd bytes is too many",
                                     name, self->c->name, b.len);
        }
        trtl_plugin_field data = {DATA_FIELD, b.buf, TRTL_PF_CHAR, (int32_t)b.len};
        PyObject *r = create_from_fields(st, self->c, name, &data, 1);
        PyBuffer_Release(&b);
        return r;
    }
    trtl_plugin_fields fc;
    void *storage;
    size_t used;
    trtl_status s = trtl_plugin_fields_read(b.buf, (size_t)b.len, &used, &fc, &storage);
    PyBuffer_Release(&b);
    if (s != TRTL_OK)
        return trtl_py_raise_msg(st, TRTL_ERR_PLUGIN, "deserialize_plugin('%s', ...) for %s: %s", name, self->c->name,
                                 trtl_last_error());
    PyObject *r = create_from_fields(st, self->c, name, fc.fields, fc.nb_fields);
    free(storage);
    return r;
}

static PyObject *cg_name(TrtlCreatorObj *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->c->name);
}
static PyObject *cg_version(TrtlCreatorObj *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->c->version);
}
static PyObject *cg_namespace(TrtlCreatorObj *self, void *c)
{
    (void)c;
    const char *ns = trtl_plugin_registered_namespace(self->c);
    return PyUnicode_FromString(ns ? ns : (self->c->plugin_namespace ? self->c->plugin_namespace : ""));
}
static PyObject *cg_fields(TrtlCreatorObj *self, void *c)
{
    (void)c;
    trtl_py_state *st = TRTL_STATE(self);
    trtl_plugin_field *f = PyMem_Calloc((size_t)(self->c->nb_fields ? self->c->nb_fields : 1), sizeof *f);
    if (!f)
        return PyErr_NoMemory();
    int32_t n = 0;
    for (int32_t i = 0; i < self->c->nb_fields; i++) {
        if (self->c->create == pyc_create && strcmp(self->c->fields[i].name, DATA_FIELD) == 0)
            continue; /* the adapter's own, not the user's */
        f[n].name = self->c->fields[i].name;
        f[n].type = self->c->fields[i].type;
        n++;
    }
    PyObject *r = fields_to_py(st, f, n);
    PyMem_Free(f);
    return r;
}

/* The user's object behind a registered Python creator, else NULL (borrowed). */
static PyObject *python_creator_obj(const trtl_plugin_creator *c)
{
    return c->create == pyc_create ? ((const py_creator *)c->user)->obj : NULL;
}

static PyObject *creator_repr(TrtlCreatorObj *self)
{
    PyObject *obj = python_creator_obj(self->c);
    if (obj)
        return PyUnicode_FromFormat("<IPluginCreator %s v%s (Python %s)>", self->c->name, self->c->version,
                                    Py_TYPE(obj)->tp_name);
    return PyUnicode_FromFormat("<IPluginCreator %s v%s>", self->c->name, self->c->version);
}

/* Equal: the same registration, or the Python creator object that was registered (scripts that
 * compare what get_plugin_creator returns with their own creator). */
static PyObject *creator_richcompare(PyObject *a, PyObject *b, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    int eq;
    if (Py_TYPE(a) == Py_TYPE(b))
        eq = ((TrtlCreatorObj *)a)->c == ((TrtlCreatorObj *)b)->c;
    else if (python_creator_obj(((TrtlCreatorObj *)a)->c))
        eq = python_creator_obj(((TrtlCreatorObj *)a)->c) == b;
    else
        Py_RETURN_NOTIMPLEMENTED;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* Consistent with equality to the user's object. */
static Py_hash_t creator_hash(TrtlCreatorObj *self)
{
    PyObject *obj = python_creator_obj(self->c);
    return obj ? PyObject_Hash(obj) : _Py_HashPointer((void *)self->c);
}

/* Attributes the wrapper does not have (a Python creator's own members) come from the user's
 * object, so code written for the object it registered keeps working on what lookups return. */
static PyObject *creator_getattro(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    PyObject *obj = python_creator_obj(((TrtlCreatorObj *)self)->c);
    if (r || !obj || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(obj, name);
}

static PyGetSetDef creator_getset[] = {
    {"name", (getter)cg_name, NULL, "Plugin type name.", NULL},
    {"plugin_version", (getter)cg_version, NULL, "Plugin version.", NULL},
    {"plugin_namespace", (getter)cg_namespace, NULL, "Namespace it is registered under.", NULL},
    {"field_names", (getter)cg_fields, NULL, "PluginFieldCollection describing the fields (name, type).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef creator_methods[] = {
    {"create_plugin", (PyCFunction)(void (*)(void))creator_create_plugin, METH_VARARGS | METH_KEYWORDS,
     "create_plugin(name, field_collection) -> IPluginV2\n\nCreate a plugin; unknown fields are ignored with a warning, a "
     "field of the wrong type or a missing required field raises."},
    {"deserialize_plugin", (PyCFunction)(void (*)(void))creator_deserialize, METH_VARARGS | METH_KEYWORDS,
     "deserialize_plugin(name, serialized_plugin) -> IPluginV2\n\nRecreate a plugin from IPluginV2.serialize() bytes."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot creator_slots[] = {
    {Py_tp_dealloc, creator_dealloc},
    {Py_tp_getset, creator_getset},
    {Py_tp_methods, creator_methods},
    {Py_tp_repr, creator_repr},
    {Py_tp_richcompare, creator_richcompare},
    {Py_tp_hash, creator_hash},
    {Py_tp_getattro, creator_getattro},
    {Py_tp_doc, "A registered plugin creator, as the registry returns it: built-in, from a library, or written in "
                "Python (then its create_plugin/deserialize_plugin run through the registry's field checks, and other "
                "attributes are the Python object's)."},
    {0, NULL}};

static PyType_Spec creator_spec = {"trtlite.PluginCreator", sizeof(TrtlCreatorObj), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, creator_slots};

/* ---- registry functions (wrapped by trtlite/plugins.py) -------------------------------------- */

static PyTypeObject *creator_type_of(trtl_py_state *st)
{
    return (PyTypeObject *)PyDict_GetItemString(st->plugin_hooks, "_creator_type");
}

static PyTypeObject *plugin_type_of(trtl_py_state *st)
{
    return (PyTypeObject *)PyDict_GetItemString(st->plugin_hooks, "_plugin_type");
}

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
        PyObject *o = creator_to_py(st, arr[i]);
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
    return creator_to_py(PyModule_GetState(m), c);
}

static const trtl_plugin_creator *creator_of(trtl_py_state *st, PyObject *obj, int make)
{
    if (PyObject_TypeCheck(obj, creator_type_of(st)))
        return ((TrtlCreatorObj *)obj)->c;
    /* A Python creator registered before? */
    const trtl_plugin_creator **arr;
    int32_t n;
    const trtl_plugin_creator *found = NULL;
    if (trtl_plugin_list(&arr, &n) == TRTL_OK) {
        for (int32_t i = 0; i < n && !found; i++)
            if (arr[i]->create == pyc_create && ((const py_creator *)arr[i]->user)->obj == obj)
                found = arr[i];
        trtl_free(arr);
    }
    if (found || !make)
        return found;
    return py_creator_make(st, obj);
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
    PyObject *type = attr_str(obj, "plugin_type", ""), *ver = type ? attr_str(obj, "plugin_version", "1") : NULL;
    PyObject *ns = ver ? attr_str(obj, "plugin_namespace", "") : NULL;
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
    trtl_plugin *p = plugin_from_py(st, clone, c);
    Py_DECREF(clone);
    if (!p)
        return NULL;
    return PyCapsule_New(p, "trtlite.plugin", NULL);
}

static PyObject *set_logger(PyObject *m, PyObject *logger)
{
    trtl_py_state *st = PyModule_GetState(m);
    if (PyDict_SetItemString(st->plugin_hooks, "_logger", logger) < 0)
        return NULL;
    trtl_set_log_callback(logger == Py_None ? NULL : trtl_py_log_cb, logger == Py_None ? NULL : logger);
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

PyMethodDef trtl_py_plugin_functions[] = {
    {"_registry_list", reg_list, METH_NOARGS, "Registered creators."},
    {"_registry_get", reg_get, METH_VARARGS, "Creator by (type, version, namespace) or None."},
    {"_registry_register", reg_register, METH_VARARGS, "Register a creator; False for a duplicate."},
    {"_registry_deregister", reg_deregister, METH_O, "Deregister a creator; False if it was not registered."},
    {"_registry_load_library", reg_load_library, METH_O, "dlopen a plugin library and register its creators."},
    {"_init_builtins", reg_init_builtins, METH_VARARGS, "Register the built-in plugins under a namespace."},
    {"_python_plugin_capsule", py_plugin_capsule, METH_O, "A C adapter (capsule) around a Python plugin."},
    {"_set_logger", set_logger, METH_O, "Logger for messages outside builds (registry, plugins)."},
    {"_register_plugin_classes", register_plugin_classes, METH_VARARGS,
     "Install PluginField/PluginFieldCollection, the registry object (Runtime.get_plugin_registry) and the field "
     "data converter."},
    {NULL, NULL, 0, NULL}};

int trtl_py_init_plugins(PyObject *m, trtl_py_state *st)
{
    st->plugin_hooks = PyDict_New();
    if (!st->plugin_hooks)
        return -1;
    PyObject *ct = PyType_FromModuleAndSpec(m, &creator_spec, NULL);
    PyObject *pt = ct ? PyType_FromModuleAndSpec(m, &plugin_spec, NULL) : NULL;
    if (!pt || PyDict_SetItemString(st->plugin_hooks, "_creator_type", ct) < 0 ||
        PyDict_SetItemString(st->plugin_hooks, "_plugin_type", pt) < 0 ||
        PyModule_AddType(m, (PyTypeObject *)ct) < 0 || PyModule_AddType(m, (PyTypeObject *)pt) < 0) {
        Py_XDECREF(ct);
        Py_XDECREF(pt);
        return -1;
    }
    Py_DECREF(ct);
    Py_DECREF(pt);
        return PyModule_AddFunctions(m, trtl_py_plugin_functions);
}
