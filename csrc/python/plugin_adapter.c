/*
 * plugin_adapter.c -- Python plugins and creators seen by the C core as plugin.h objects.
 *
 * Python creators (trt.IPluginCreator subclasses) are registered through an adapter C creator,
 * and Python plugins (trt.IPluginV2 subclasses) run through an adapter C plugin whose vtable
 * calls back into Python with the GIL taken (build and execute run without it); its enqueue()
 * works on numpy arrays of its own, copied from and to the engine's buffers.  A Python plugin
 * serializes as one opaque field "__data__" holding its serialize() bytes; the adapter creator
 * routes that field to deserialize_plugin().  Each adapter keeps a reference to the module that
 * made it, whose state it uses (enum classes, exceptions).
 *
 * Adapter creators live for the rest of the process once registered: plugin instances and
 * engines keep pointers to their creator.  The registry stores copies of creator structs, so an
 * adapter is always reached through `creator->user`.
 */
#include <string.h>

#include "python/plugin_adapter.h"
#include "python/plugin_types.h"

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

static const char *np_tensor_dtype(trtl_dtype t)
{
    switch (t) {
    case TRTL_FLOAT: return "float32";
    case TRTL_HALF: return "float16";
    case TRTL_BF16: return "uint16"; /* bit patterns */
    case TRTL_INT8: return "int8";
    case TRTL_INT32: return "int32";
    case TRTL_INT64: return "int64";
    case TRTL_BOOL: return "bool";
    case TRTL_UINT8: return "uint8";
    default: return "uint8";
    }
}

/* Raises `type` with a formatted message whose __cause__ is the exception being handled (if
 * any), so the user still sees what their own code raised.  Returns NULL. */
/* ---- Python plugin adapter ---------------------------------------------------------------- */

static int dims_equal(const trtl_dims *a, const trtl_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

/* A numpy array enqueue() sees in place of an engine buffer (see stage_array). */
typedef struct py_stage {
    PyObject *arr; /* owns its data; NULL until first used */
    trtl_dims dims;
    trtl_dtype dtype;
} py_stage;

typedef struct py_plugin {
    trtl_plugin base;
    PyObject *module;       /* the trtlite._C module it was made by (its state: enums, exceptions) */
    PyObject *obj;          /* the user's trt.IPluginV2 subclass instance */
    PyObject *ser;          /* bytes from the last serialize() (get_fields' data) */
    trtl_plugin_field field;
    py_stage *stage;        /* nb_in + nb_out arrays for enqueue, inputs first */
    int32_t n_stage;
} py_plugin;

static const trtl_plugin_vtable py_plugin_vt;

static trtl_plugin *py_plugin_wrap(trtl_py_state *st, PyObject *obj, const trtl_plugin_creator *creator)
{
    py_plugin *p = PyMem_RawCalloc(1, sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    p->base.vt = &py_plugin_vt;
    p->base.creator = creator;
    p->obj = Py_NewRef(obj);
    p->module = Py_NewRef(st->module);
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
    trtl_py_state *st = PyModule_GetState(p->module);
    PyObject *shapes = PyList_New(nb_in), *dts = PyList_New(nb_in), *shape = NULL, *dt = NULL;
    for (int32_t i = 0; shapes && dts && i < nb_in; i++) {
        PyList_SET_ITEM(shapes, i, dims_tuple(&in[i].dims));
        PyList_SET_ITEM(dts, i, trtl_py_enum(st, "DataType", in[i].dtype));
    }
    if (!shapes || !dts)
        goto fail;
    /* The IPluginV2DynamicExt/IPluginV3 adapter answers both at once: (shape, dtype). */
    if (PyObject_HasAttrString(p->obj, "_trtl_output_desc")) {
        PyObject *r = PyObject_CallMethod(p->obj, "_trtl_output_desc", "iOO", (int)index, shapes, dts);
        if (!r || !PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
            if (r && !PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_trtl_output_desc() must return (shape, dtype)");
            Py_XDECREF(r);
            msg_from_exception(msg, msg_len, "the plugin");
            goto done;
        }
        shape = Py_NewRef(PyTuple_GET_ITEM(r, 0));
        dt = Py_NewRef(PyTuple_GET_ITEM(r, 1));
        Py_DECREF(r);
        if (trtl_py_to_dims(st, shape, &out->dims, "output shape") < 0) {
            msg_from_exception(msg, msg_len, "the plugin");
            goto done;
        }
    } else {
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
    if (s->arr && Py_REFCNT(s->arr) == 1 && s->dtype == d->dtype && dims_equal(&s->dims, &d->dims))
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
    int64_t v = trtl_py_volume(&d->dims);
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
        trtl_set_error(TRTL_ERR_PLUGIN, why);
    } else {
        if (b == Py_None) {
            Py_DECREF(b);
            b = PyBytes_FromStringAndSize(NULL, 0);
        }
        Py_XSETREF(p->ser, b);
        p->field.name = TRTL_PY_DATA_FIELD;
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
        r = py_plugin_wrap(PyModule_GetState(p->module), c, p->base.creator);
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
    Py_XDECREF(p->module);
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
    PyObject *module; /* the trtlite._C module that registered it */
    PyObject *obj;
    char *name, *version, *ns;
    trtl_plugin_field_desc *fields;
} py_creator;

/* A plugin object returned by Python code -> a C plugin instance (new). */
trtl_plugin *trtl_py_plugin_from_py(trtl_py_state *st, PyObject *obj, const trtl_plugin_creator *creator)
{
    if (PyObject_TypeCheck(obj, trtl_py_plugin_type(st))) {
        trtl_plugin *q = NULL;
        if (trtl_plugin_clone(((TrtlPluginObj *)obj)->p, NULL, &q) != TRTL_OK)
            trtl_py_raise(st, trtl_last_status());
        return q;
    }
    /* IPluginV2DynamicExt and IPluginV3 objects run through a Python adapter speaking IPluginV2
     * (trtlite/plugins_dynamic.py). */
    if (!PyObject_HasAttrString(obj, "get_output_shape") && PyObject_HasAttrString(obj, "_trtl_adapter")) {
        PyObject *a = PyObject_CallMethod(obj, "_trtl_adapter", NULL);
        if (!a)
            return NULL;
        trtl_plugin *r = PyObject_HasAttrString(a, "get_output_shape") ? py_plugin_wrap(st, a, creator) : NULL;
        if (!r && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s._trtl_adapter() did not return an adapter", Py_TYPE(obj)->tp_name);
        Py_DECREF(a);
        return r;
    }
    if (!PyObject_HasAttrString(obj, "enqueue") || !PyObject_HasAttrString(obj, "get_output_shape")) {
        PyErr_Format(PyExc_TypeError, "expected a trt.IPluginV2 (with get_output_shape and enqueue), got %s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return py_plugin_wrap(st, obj, creator);
}

static trtl_plugin *pyc_create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                               char *msg, size_t msg_len)
{
    const py_creator *c = (const py_creator *)self->user; /* self may be the registry's copy */
    trtl_plugin *r = NULL;
    PyGILState_STATE g = PyGILState_Ensure();
    trtl_py_state *st = PyModule_GetState(c->module);
    const trtl_plugin_field *data = NULL;
    for (int32_t i = 0; i < fields->nb_fields; i++)
        if (strcmp(fields->fields[i].name, TRTL_PY_DATA_FIELD) == 0)
            data = &fields->fields[i];
    PyObject *obj;
    if (data) {
        PyObject *b = PyBytes_FromStringAndSize(data->data, data->length);
        obj = b ? PyObject_CallMethod(c->obj, "deserialize_plugin", "sO", layer_name, b) : NULL;
        Py_XDECREF(b);
    } else {
        PyObject *fc = trtl_py_fields_to_py(st, fields->fields, fields->nb_fields);
        /* An IPluginCreatorV3One creates for TensorRTPhase.BUILD (trtlite/plugins_dynamic.py). */
        const char *how = PyObject_HasAttrString(c->obj, "_trtl_v3_create") ? "_trtl_v3_create" : "create_plugin";
        obj = fc ? PyObject_CallMethod(c->obj, how, "sO", layer_name, fc) : NULL;
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
        r = trtl_py_plugin_from_py(st, obj, self);
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

PyObject *trtl_py_attr_str(PyObject *obj, const char *attr, const char *dflt)
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
const trtl_plugin_creator *trtl_py_creator_make(trtl_py_state *st, PyObject *obj)
{
    PyObject *name = trtl_py_attr_str(obj, "name", ""), *ver = name ? trtl_py_attr_str(obj, "plugin_version", "1") : NULL;
    PyObject *ns = ver ? trtl_py_attr_str(obj, "plugin_namespace", "") : NULL;
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
    c->fields[k].name = TRTL_PY_DATA_FIELD;
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
    c->module = Py_NewRef(st->module);
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

PyObject *trtl_py_python_creator_obj(const trtl_plugin_creator *c)
{
    return c && c->create == pyc_create ? ((const py_creator *)c->user)->obj : NULL;
}

PyObject *trtl_py_python_plugin_obj(const trtl_plugin *p)
{
    return p && p->vt == &py_plugin_vt ? ((const py_plugin *)p)->obj : NULL;
}
