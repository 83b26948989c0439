/*
 * plugin_types.c -- the Python types of plugins:
 *
 *  - _C.PluginV2 owns a C plugin instance (built-in or from a library): serialize(), clone(), and
 *    lends clones to add_plugin_v2 through _trtl_clone_capsule();
 *  - _C.PluginCreator wraps a registered creator (built-in, from a library, or the adapter of a
 *    Python creator): create_plugin(), deserialize_plugin(), field_names, all through the
 *    registry's checked trtl_plugin_create.
 */
#include <string.h>

#include "python/plugin_types.h"
#include "python/plugin_adapter.h"
#include "python/py_plugin.h"

PyObject *trtl_py_creator_to_py(trtl_py_state *st, const trtl_plugin_creator *c)
{
    TrtlCreatorObj *o = PyObject_New(TrtlCreatorObj, trtl_py_creator_type(st));
    if (!o)
        return NULL;
    o->c = c;
    return (PyObject *)o;
}

/* ---- _C.PluginV2 ---------------------------------------------------------------------------- */

PyObject *trtl_py_plugin_obj_new(trtl_py_state *st, trtl_plugin *p, const char *name)
{
    TrtlPluginObj *o = PyObject_New(TrtlPluginObj, trtl_py_plugin_type(st));
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
    return PyObject_TypeCheck(obj, trtl_py_plugin_type(st)) ? ((TrtlPluginObj *)obj)->name : NULL;
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

/* serialize(): the plugin's fields as plans encode them; PluginError naming the plugin. */
static PyObject *encode_fields(trtl_py_state *st, const trtl_plugin *p, int size_only)
{
    void *data;
    size_t n;
    trtl_status s = trtl_plugin_encode_fields(p, &data, &n);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s == TRTL_ERR_OUT_OF_MEMORY ? s : TRTL_ERR_PLUGIN);
    PyObject *r = size_only ? PyLong_FromSize_t(n) : PyBytes_FromStringAndSize(data, (Py_ssize_t)n);
    trtl_free(data);
    return r;
}

static PyObject *plugin_serialize(TrtlPluginObj *self, PyObject *unused)
{
    (void)unused;
    return encode_fields(TRTL_STATE(self), self->p, 0);
}

static PyObject *plugin_clone(TrtlPluginObj *self, PyObject *unused)
{
    (void)unused;
    trtl_plugin *c = NULL;
    if (trtl_plugin_clone(self->p, NULL, &c) != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), trtl_last_status());
    return trtl_py_plugin_obj_new(TRTL_STATE(self), c, self->name);
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
    return encode_fields(TRTL_STATE(self), self->p, 1);
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
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION, plugin_slots};

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
    PyObject *obj = Py_NewRef(trtl_py_python_plugin_obj(p));
    p->vt->destroy(p);
    /* An IPluginV2DynamicExt / IPluginV3 adapter: the user gets their own object back. */
    PyObject *user = PyObject_HasAttrString(obj, "_trtl_user_plugin") ? PyObject_GetAttrString(obj, "_trtl_user_plugin")
                                                                        : NULL;
    PyErr_Clear();
    if (user)
        Py_SETREF(obj, user);
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
            return PyErr_ExceptionMatches(PyExc_Exception) ? trtl_py_raise_chained(st->PluginError, "%s", trtl_last_error())
                                                           : NULL;
        /* The registry's field checks fail with INVALID_ARGUMENT. */
        if (s == TRTL_ERR_INVALID_ARGUMENT) {
            PyErr_SetString(st->PluginFieldError, trtl_last_error());
            return NULL;
        }
        return trtl_py_raise(st, s);
    }
    if (trtl_py_python_plugin_obj(p))
        return python_plugin_result(c, p);
    return trtl_py_plugin_obj_new(st, p, name);
}

static PyObject *creator_create_plugin(TrtlCreatorObj *self, PyObject *args, PyObject *kwargs)
{
    /* `phase` (TensorRT 10's IPluginCreatorV3One signature): creation from fields is for a build. */
    static char *kw[] = {"name", "field_collection", "phase", NULL};
    const char *name;
    PyObject *fc = NULL, *keep, *phase = NULL;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OO:create_plugin", kw, &name, &fc, &phase))
        return NULL;
    trtl_plugin_field *fields;
    int32_t n;
    if (trtl_py_fields_from_py(st, self->c->name, fc, &fields, &n, &keep) < 0) {
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
    if (trtl_py_python_creator_obj(self->c)) {
        /* A Python plugin's serialize() bytes are its own: they reach the creator's
         * deserialize_plugin() as the opaque data field, the way a plan hands them over. */
        if (b.len > INT32_MAX) {
            PyBuffer_Release(&b);
            return trtl_py_raise_msg(st, TRTL_ERR_PLUGIN, "deserialize_plugin('%s', ...) for %s: %zd bytes is too many",
                                     name, self->c->name, b.len);
        }
        trtl_plugin_field data = {TRTL_PY_DATA_FIELD, b.buf, TRTL_PF_CHAR, (int32_t)b.len};
        PyObject *r = create_from_fields(st, self->c, name, &data, 1);
        PyBuffer_Release(&b);
        return r;
    }
    trtl_plugin_fields fc;
    void *storage;
    trtl_status s = trtl_plugin_decode_fields(b.buf, (size_t)b.len, &fc, &storage);
    PyBuffer_Release(&b);
    if (s != TRTL_OK)
        return trtl_py_raise_msg(st, TRTL_ERR_PLUGIN, "deserialize_plugin('%s', ...) for %s: %s", name, self->c->name,
                                 trtl_last_error());
    PyObject *r = create_from_fields(st, self->c, name, fc.fields, fc.nb_fields);
    trtl_free(storage);
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
        if (trtl_py_python_creator_obj(self->c) && strcmp(self->c->fields[i].name, TRTL_PY_DATA_FIELD) == 0)
            continue; /* the adapter's own, not the user's */
        f[n].name = self->c->fields[i].name;
        f[n].type = self->c->fields[i].type;
        n++;
    }
    PyObject *r = trtl_py_fields_to_py(st, f, n);
    PyMem_Free(f);
    return r;
}

static PyObject *creator_repr(TrtlCreatorObj *self)
{
    PyObject *obj = trtl_py_python_creator_obj(self->c);
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
    else if (trtl_py_python_creator_obj(((TrtlCreatorObj *)a)->c))
        eq = trtl_py_python_creator_obj(((TrtlCreatorObj *)a)->c) == b;
    else
        Py_RETURN_NOTIMPLEMENTED;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* Consistent with equality to the user's object. */
static Py_hash_t creator_hash(TrtlCreatorObj *self)
{
    PyObject *obj = trtl_py_python_creator_obj(self->c);
    return obj ? PyObject_Hash(obj) : _Py_HashPointer((void *)self->c);
}

/* Attributes the wrapper does not have (a Python creator's own members) come from the user's
 * object, so code written for the object it registered keeps working on what lookups return. */
static PyObject *creator_getattro(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    PyObject *obj = trtl_py_python_creator_obj(((TrtlCreatorObj *)self)->c);
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
     "create_plugin(name, field_collection, phase=None) -> IPluginV2\n\nCreate a plugin; unknown fields are ignored with a warning, a "
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
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_DISALLOW_INSTANTIATION, creator_slots};

/* ---- registry functions (wrapped by trtlite/plugins.py) -------------------------------------- */

PyTypeObject *trtl_py_creator_type(trtl_py_state *st)
{
    return (PyTypeObject *)PyDict_GetItemString(st->plugin_hooks, "_creator_type");
}

PyTypeObject *trtl_py_plugin_type(trtl_py_state *st)
{
    return (PyTypeObject *)PyDict_GetItemString(st->plugin_hooks, "_plugin_type");
}


int trtl_py_init_plugin_types(PyObject *m, trtl_py_state *st)
{
    PyObject *ct = PyType_FromModuleAndSpec(m, &creator_spec, NULL);
    PyObject *pt = ct ? PyType_FromModuleAndSpec(m, &plugin_spec, NULL) : NULL;
    int r = 0;
    if (!pt || PyDict_SetItemString(st->plugin_hooks, "_creator_type", ct) < 0 ||
        PyDict_SetItemString(st->plugin_hooks, "_plugin_type", pt) < 0 ||
        PyModule_AddType(m, (PyTypeObject *)ct) < 0 || PyModule_AddType(m, (PyTypeObject *)pt) < 0)
        r = -1;
    Py_XDECREF(ct);
    Py_XDECREF(pt);
    return r;
}
