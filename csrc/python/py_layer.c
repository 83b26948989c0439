/*
 * py_layer.c -- trtlite.ILayer and one subclass per op (IConvolutionLayer, ...).
 *
 * The subclasses are generated at import from the attribute tables: each attribute becomes a
 * property whose closure is its descriptor, so a new layer attribute needs no binding code.
 */
#include <string.h>

#include "python/py_layer.h"
#include "python/py_tensor.h"

/* TensorRT's Python class, display name and trt.LayerType of each op, from the public op list. */
static const char *const op_py_class[TRTL_OP_COUNT] = {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) "trtlite." cls,
#include "trtlite/ops.def"
#undef TRTL_OP
};
static const char *const op_display[TRTL_OP_COUNT] = {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) disp,
#include "trtlite/ops.def"
#undef TRTL_OP
};

static const int op_layer_type[TRTL_OP_COUNT] = {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) lt,
#include "trtlite/ops.def"
#undef TRTL_OP
};

#define MAX_ATTRS 48


static void layer_dealloc(TrtlLayer *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->owner);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int layer_traverse(TrtlLayer *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->owner);
    return 0;
}

PyObject *trtl_py_layer_wrap(TrtlNetwork *owner, trtl_layer *l)
{
    if (!l)
        Py_RETURN_NONE;
    trtl_py_state *st = TRTL_STATE(owner);
    PyTypeObject *tp = st->layer_types[trtl_layer_op(l)];
    TrtlLayer *o = PyObject_GC_New(TrtlLayer, tp);
    if (!o)
        return NULL;
    Py_INCREF(owner);
    o->owner = owner;
    o->l = l;
    PyObject_GC_Track(o);
    return (PyObject *)o;
}

/* ---- attribute properties ----------------------------------------------------------------- */

/* The closure of each generated property: its op's attribute, from trtl_op_attr (the names are
 * the core's static strings). */
static PyObject *attr_get(TrtlLayer *self, void *closure)
{
    const char *name = closure;
    trtl_py_state *st = TRTL_STATE(self);
    trtl_attr_info a;
    trtl_status s = trtl_op_find_attr(trtl_layer_op(self->l), name, &a);
    int64_t i = 0;
    if (s == TRTL_OK && (a.kind == TRTL_ATTR_KIND_INT || a.kind == TRTL_ATTR_KIND_BOOL || a.kind == TRTL_ATTR_KIND_ENUM ||
                         a.kind == TRTL_ATTR_KIND_DTYPE || a.kind == TRTL_ATTR_KIND_AXES))
        s = trtl_layer_get_int(self->l, name, &i);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    switch (a.kind) {
    case TRTL_ATTR_KIND_INT:
    case TRTL_ATTR_KIND_AXES: return PyLong_FromLongLong(i);
    case TRTL_ATTR_KIND_BOOL: return PyBool_FromLong(i != 0);
    case TRTL_ATTR_KIND_ENUM: return trtl_py_enum(st, a.enum_name, (long)i);
    case TRTL_ATTR_KIND_DTYPE: return trtl_py_enum(st, "DataType", (long)i);
    case TRTL_ATTR_KIND_FLOAT: {
        double f;
        if ((s = trtl_layer_get_float(self->l, name, &f)) != TRTL_OK)
            return trtl_py_raise(st, s);
        return PyFloat_FromDouble(f);
    }
    case TRTL_ATTR_KIND_DIMS: {
        trtl_dims d;
        if ((s = trtl_layer_get_dims(self->l, name, &d)) != TRTL_OK)
            return trtl_py_raise(st, s);
        return trtl_py_from_dims(st, &d);
    }
    case TRTL_ATTR_KIND_FLOATS: {
        float v[64];
        int32_t n = 0;
        if (a.max_count > 64)
            return trtl_py_raise_msg(st, TRTL_ERR_INTERNAL, "attribute '%s' holds more values than expected", name);
        if ((s = trtl_layer_get_floats(self->l, name, v, &n)) != TRTL_OK)
            return trtl_py_raise(st, s);
        PyObject *l = PyList_New(n);
        for (int32_t k = 0; l && k < n; k++) {
            PyObject *f = PyFloat_FromDouble(v[k]);
            if (!f) {
                Py_DECREF(l);
                return NULL;
            }
            PyList_SET_ITEM(l, k, f);
        }
        return l;
    }
    case TRTL_ATTR_KIND_STRING: {
        const char *txt;
        if ((s = trtl_layer_get_string(self->l, name, &txt)) != TRTL_OK)
            return trtl_py_raise(st, s);
        return PyUnicode_FromString(txt);
    }
    case TRTL_ATTR_KIND_WEIGHTS: {
        PyObject *kept = trtl_py_kept(self->owner, self->l, name);
        if (!kept)
            Py_RETURN_NONE;
        /* (value, export) from trtl_py_to_weights: the value is the array the user gave. */
        return Py_NewRef(PyTuple_Check(kept) ? PyTuple_GET_ITEM(kept, 0) : kept);
    }
    }
    Py_RETURN_NONE;
}

int trtl_py_set_attr(TrtlNetwork *net, trtl_layer *l, const char *attr, PyObject *v)
{
    trtl_py_state *st = TRTL_STATE(net);
    trtl_attr_info a;
    char what[160];
    trtl_status s = TRTL_OK;
    if (trtl_op_find_attr(trtl_layer_op(l), attr, &a) != TRTL_OK) {
        trtl_py_raise_msg(st, TRTL_ERR_NOT_FOUND, "layer '%s' has no attribute '%s'", trtl_layer_name(l), attr);
        return -1;
    }
    if (!v) {
        PyErr_Format(PyExc_AttributeError, "layer attribute '%s' cannot be deleted", attr);
        return -1;
    }
    snprintf(what, sizeof what, "layer '%s': %s", trtl_layer_name(l), attr);
    switch (a.kind) {
    case TRTL_ATTR_KIND_INT:
    case TRTL_ATTR_KIND_ENUM:
    case TRTL_ATTR_KIND_AXES:
    case TRTL_ATTR_KIND_DTYPE: {
        long x = trtl_py_as_long(v, what);
        if (x == -1 && PyErr_Occurred())
            return -1;
        s = trtl_layer_set_int(l, attr, x);
        break;
    }
    case TRTL_ATTR_KIND_BOOL: {
        int b = PyObject_IsTrue(v);
        if (b < 0)
            return -1;
        s = trtl_layer_set_int(l, attr, b);
        break;
    }
    case TRTL_ATTR_KIND_FLOAT: {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred())
            return -1;
        s = trtl_layer_set_float(l, attr, x);
        break;
    }
    case TRTL_ATTR_KIND_DIMS: {
        trtl_dims dd;
        if (trtl_py_to_dims(st, v, &dd, what) < 0)
            return -1;
        s = trtl_layer_set_dims(l, attr, &dd);
        break;
    }
    case TRTL_ATTR_KIND_STRING: {
        const char *txt = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!txt) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s must be a str, not %s", what, Py_TYPE(v)->tp_name);
            return -1;
        }
        s = trtl_layer_set_string(l, attr, txt);
        break;
    }
    case TRTL_ATTR_KIND_FLOATS: {
        float vals[64];
        int32_t cap = a.max_count < 64 ? a.max_count : 64;
        PyObject *seq = PySequence_Fast(v, "");
        if (!seq) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be a sequence of floats", what);
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n > cap) {
            Py_DECREF(seq);
            trtl_py_raise_msg(st, TRTL_ERR_INVALID_ARGUMENT, "%s takes at most %d values", what, (int)cap);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            vals[i] = (float)PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
            if (PyErr_Occurred()) {
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
        s = trtl_layer_set_floats(l, attr, vals, (int32_t)n);
        break;
    }
    case TRTL_ATTR_KIND_WEIGHTS: {
        trtl_weights w;
        PyObject *keep;
        if (trtl_py_to_weights(st, v, &w, &keep, what) < 0)
            return -1;
        s = trtl_layer_set_weights(l, attr, w);
        if (s == TRTL_OK && trtl_py_keep(net, l, attr, keep ? keep : Py_None) < 0) {
            Py_XDECREF(keep);
            return -1;
        }
        Py_XDECREF(keep);
        break;
    }
    }
    if (s != TRTL_OK) {
        trtl_py_raise(st, s);
        return -1;
    }
    return 0;
}

static int attr_set(TrtlLayer *self, PyObject *v, void *closure)
{
    return trtl_py_set_attr(self->owner, self->l, (const char *)closure, v);
}

/* ---- base ILayer ---------------------------------------------------------------------------- */

static PyObject *get_name(TrtlLayer *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(trtl_layer_name(self->l));
}

static int set_name(TrtlLayer *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || !PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "layer name must be a str");
        return -1;
    }
    trtl_status s = trtl_layer_set_name(self->l, PyUnicode_AsUTF8(v));
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *get_type(TrtlLayer *self, void *c)
{
    (void)c;
    trtl_op op = trtl_layer_op(self->l);
    return trtl_py_enum(TRTL_STATE(self), "LayerType", op < TRTL_OP_COUNT ? op_layer_type[op] : -1);
}

static PyObject *get_num_inputs(TrtlLayer *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_layer_num_inputs(self->l));
}

static PyObject *get_num_outputs(TrtlLayer *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_layer_num_outputs(self->l));
}

static PyObject *get_precision(TrtlLayer *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "DataType", trtl_layer_precision(self->l));
}

static int set_precision(TrtlLayer *self, PyObject *v, void *c)
{
    (void)c;
    int32_t dt;
    if (trtl_py_as_int32(v, "precision", &dt) < 0)
        return -1;
    trtl_status s = trtl_layer_set_precision(self->l, (trtl_dtype)dt);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *get_precision_is_set(TrtlLayer *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_layer_precision_is_set(self->l));
}

static PyObject *get_plugin(TrtlLayer *self, void *c)
{
    (void)c;
    PyObject *p = trtl_py_kept(self->owner, self->l, "plugin");
    if (!p)
        Py_RETURN_NONE;
    return Py_NewRef(p);
}

static PyObject *layer_get_input_fwd(TrtlLayer *self, PyObject *arg);
static PyObject *layer_set_input_fwd(TrtlLayer *self, PyObject *args);

/* IAttention.mask: input 3 (None when not set). */
static PyObject *get_mask(TrtlLayer *self, void *c)
{
    (void)c;
    if (trtl_layer_num_inputs(self->l) < 4)
        Py_RETURN_NONE;
    PyObject *i = PyLong_FromLong(3);
    PyObject *r = i ? layer_get_input_fwd(self, i) : NULL;
    Py_XDECREF(i);
    return r;
}

static int set_mask(TrtlLayer *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || v == Py_None) {
        PyErr_SetString(PyExc_TypeError, "IAttention.mask: give an ITensor (a mask cannot be removed)");
        return -1;
    }
    PyObject *args = Py_BuildValue("(iO)", 3, v);
    PyObject *r = args ? layer_set_input_fwd(self, args) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int index_arg(PyObject *arg, const char *what, long *out)
{
    *out = trtl_py_as_long(arg, what);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *layer_get_input(TrtlLayer *self, PyObject *arg)
{
    if (trtl_py_network_idle(self->owner, "get_input()") < 0)
        return NULL;
    long i;
    if (index_arg(arg, "index", &i) < 0)
        return NULL;
    if (i < 0 || i >= trtl_layer_num_inputs(self->l))
        return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "layer '%s': input index %ld out of range (%d inputs)",
                                 trtl_layer_name(self->l), i, (int)trtl_layer_num_inputs(self->l));
    return trtl_py_tensor_wrap(self->owner, trtl_layer_input(self->l, (int32_t)i));
}

static PyObject *layer_get_output(TrtlLayer *self, PyObject *arg)
{
    if (trtl_py_network_idle(self->owner, "get_output()") < 0)
        return NULL;
    long i;
    if (index_arg(arg, "index", &i) < 0)
        return NULL;
    if (i < 0 || i >= trtl_layer_num_outputs(self->l))
        return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "layer '%s': output index %ld out of range (%d outputs)",
                                 trtl_layer_name(self->l), i, (int)trtl_layer_num_outputs(self->l));
    return trtl_py_tensor_wrap(self->owner, trtl_layer_output(self->l, (int32_t)i));
}

static PyObject *layer_set_input(TrtlLayer *self, PyObject *args)
{
    if (trtl_py_network_idle(self->owner, "set_input()") < 0)
        return NULL;
    int i;
    PyObject *t;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTuple(args, "iO!", &i, st->TensorType, &t))
        return NULL;
    trtl_status s = trtl_layer_set_input(self->l, i, ((TrtlTensor *)t)->t);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_NONE;
}

static PyObject *layer_set_output_type(TrtlLayer *self, PyObject *args)
{
    if (trtl_py_network_idle(self->owner, "set_output_type()") < 0)
        return NULL;
    int i;
    PyObject *dto;
    if (!PyArg_ParseTuple(args, "iO", &i, &dto))
        return NULL;
    int32_t dt;
    if (trtl_py_as_int32(dto, "dtype", &dt) < 0)
        return NULL;
    trtl_status s = trtl_layer_set_output_type(self->l, i, (trtl_dtype)dt);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_NONE;
}

static PyObject *layer_get_output_type(TrtlLayer *self, PyObject *arg)
{
    if (trtl_py_network_idle(self->owner, "get_output_type()") < 0)
        return NULL;
    long i;
    if (index_arg(arg, "index", &i) < 0)
        return NULL;
    trtl_tensor *t = trtl_layer_output(self->l, (int32_t)i);
    if (!t)
        return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "layer '%s': output index %ld out of range",
                                 trtl_layer_name(self->l), i);
    return trtl_py_enum(TRTL_STATE(self), "DataType", trtl_tensor_dtype(t));
}

static PyObject *layer_output_type_is_set(TrtlLayer *self, PyObject *arg)
{
    if (trtl_py_network_idle(self->owner, "output_type_is_set()") < 0)
        return NULL;
    long i;
    if (index_arg(arg, "index", &i) < 0)
        return NULL;
    if (i < 0 || i >= trtl_layer_num_outputs(self->l))
        return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "output index %ld out of range", i);
    return PyBool_FromLong(trtl_layer_output_type_is_set(self->l, (int32_t)i));
}

static PyObject *layer_reset_precision(TrtlLayer *self, PyObject *unused)
{
    if (trtl_py_network_idle(self->owner, "reset_precision()") < 0)
        return NULL;
    (void)unused;
    trtl_layer_reset_precision(self->l);
    Py_RETURN_NONE;
}

static PyObject *layer_reset_output_type(TrtlLayer *self, PyObject *arg)
{
    if (trtl_py_network_idle(self->owner, "reset_output_type()") < 0)
        return NULL;
    long i;
    if (index_arg(arg, "index", &i) < 0)
        return NULL;
    if (i >= 0 && i < trtl_layer_num_outputs(self->l))
        trtl_layer_reset_output_type(self->l, (int32_t)i);
    Py_RETURN_NONE;
}

static PyObject *layer_get_input_fwd(TrtlLayer *self, PyObject *arg) { return layer_get_input(self, arg); }
static PyObject *layer_set_input_fwd(TrtlLayer *self, PyObject *args) { return layer_set_input(self, args); }

static PyObject *layer_repr(TrtlLayer *self)
{
    return PyUnicode_FromFormat("<%s '%s'>", Py_TYPE(self)->tp_name, trtl_layer_name(self->l));
}

static PyObject *layer_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PyObject_TypeCheck(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    int eq = ((TrtlLayer *)a)->l == ((TrtlLayer *)b)->l;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t layer_hash(TrtlLayer *self) { return _Py_HashPointer(self->l); }

/* `layer.__class__ = trt.IConvolutionLayer`: TensorRT's Python API hands out layers as the base ILayer and
 * clients (polygraphy's network inspector) downcast them by assigning __class__.  trtlite already gives
 * every layer its concrete (immutable) class, so assigning that class or one of its bases is a no-op;
 * any other class is a TypeError naming the layer and both classes. */
static int layer_setattro(PyObject *self, PyObject *name, PyObject *v)
{
    if (v && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__class__") == 0) {
        if (PyType_Check(v) && PyObject_TypeCheck(self, (PyTypeObject *)v))
            return 0;
        PyErr_Format(PyExc_TypeError, "cannot change the class of layer '%s' from %s to %R: trtlite layers already "
                     "have their concrete class", trtl_layer_name(((TrtlLayer *)self)->l), Py_TYPE(self)->tp_name, v);
        return -1;
    }
    return trtl_py_net_setattro(self, name, v);
}

static PyGetSetDef layer_getset[] = {
    {"name", (getter)get_name, (setter)set_name, "Layer name (TensorRT-style default: '(Unnamed Layer* N) [Type]').", NULL},
    {"type", (getter)get_type, NULL, "trt.LayerType of this layer.", NULL},
    {"num_inputs", (getter)get_num_inputs, NULL, "Number of inputs.", NULL},
    {"num_outputs", (getter)get_num_outputs, NULL, "Number of outputs.", NULL},
    {"precision", (getter)get_precision, (setter)set_precision, "Requested computation precision (a hint on the CPU).", NULL},
    {"precision_is_set", (getter)get_precision_is_set, NULL, "Whether precision was set.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef layer_methods[] = {
    {"get_input", (PyCFunction)layer_get_input, METH_O, "get_input(index) -> ITensor\n\nThe layer's input `index`."},
    {"get_output", (PyCFunction)layer_get_output, METH_O, "get_output(index) -> ITensor\n\nThe layer's output `index`."},
    {"set_input", (PyCFunction)layer_set_input, METH_VARARGS,
     "set_input(index, tensor) -> None\n\nReplace input `index` (index == num_inputs appends)."},
    {"set_output_type", (PyCFunction)layer_set_output_type, METH_VARARGS,
     "set_output_type(index, dtype) -> None\n\nRequest the dtype of output `index` (identity/cast layers convert)."},
    {"get_output_type", (PyCFunction)layer_get_output_type, METH_O, "get_output_type(index) -> DataType\n\nDtype of output `index`."},
    {"output_type_is_set", (PyCFunction)layer_output_type_is_set, METH_O,
     "output_type_is_set(index) -> bool\n\nWhether set_output_type was called for `index`."},
    {"reset_precision", (PyCFunction)layer_reset_precision, METH_NOARGS, "reset_precision() -> None\n\nForget the precision request."},
    {"reset_output_type", (PyCFunction)layer_reset_output_type, METH_O,
     "reset_output_type(index) -> None\n\nForget the output type request of `index`."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot layer_slots[] = {
    {Py_tp_dealloc, layer_dealloc},
    {Py_tp_traverse, layer_traverse},
    {Py_tp_getset, layer_getset},
    {Py_tp_methods, layer_methods},
    {Py_tp_repr, layer_repr},
    {Py_tp_richcompare, layer_richcompare},
    {Py_tp_hash, layer_hash},
    {Py_tp_getattro, trtl_py_net_getattro},
    {Py_tp_setattro, layer_setattro},
    {Py_tp_doc, "Base class of network layers (ILayer)."},
    {0, NULL}};

static PyType_Spec layer_spec = {"trtlite.ILayer", sizeof(TrtlLayer), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                     Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC |
                                     Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                 layer_slots};

/* The properties of op `op`'s layer type (from its attribute list) into gs[0..MAX_ATTRS+1].  Kept
 * in the module state: the type points into it. */
static int fill_getsets(int op, PyGetSetDef *gs)
{
    int k = 0;
    for (int32_t i = 0; i < trtl_op_num_attrs((trtl_op)op) && k < MAX_ATTRS; i++) {
        trtl_attr_info a;
        if (trtl_op_attr((trtl_op)op, i, &a) != TRTL_OK) {
            PyErr_SetString(PyExc_RuntimeError, trtl_last_error());
            return -1;
        }
        gs[k].name = a.name;
        gs[k].get = (getter)attr_get;
        gs[k].set = (setter)attr_set;
        gs[k].doc = "Layer attribute (TensorRT semantics).";
        gs[k].closure = (void *)a.name;
        k++;
    }
    if (op == TRTL_OP_ATTENTION) {
        gs[k].name = "mask";
        gs[k].get = (getter)get_mask;
        gs[k].set = (setter)set_mask;
        gs[k].doc = "The optional mask (input 3): BOOL (true = may attend) or FLOAT (added to the scores).";
        k++;
    }
    if (op == TRTL_OP_PLUGIN_V2) {
        gs[k].name = "plugin";
        gs[k].get = (getter)get_plugin;
        gs[k].doc = "The plugin object of this layer.";
        k++;
    }
    memset(&gs[k], 0, sizeof gs[k]);
    return 0;
}

int trtl_py_init_layers(PyObject *m, trtl_py_state *st)
{
    st->LayerType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &layer_spec, NULL);
    if (!st->LayerType || PyModule_AddType(m, st->LayerType) < 0)
        return -1;
    st->layer_getsets = PyMem_Calloc((size_t)TRTL_OP_COUNT * (MAX_ATTRS + 2), sizeof(PyGetSetDef));
    if (!st->layer_getsets) {
        PyErr_NoMemory();
        return -1;
    }
    for (int op = 0; op < TRTL_OP_COUNT; op++) {
        PyGetSetDef *gs = st->layer_getsets + (size_t)op * (MAX_ATTRS + 2);
        if (fill_getsets(op, gs) < 0)
            return -1;
        PyType_Slot slots[] = {
            {Py_tp_getset, gs},
            {Py_tp_traverse, layer_traverse},
            {Py_tp_dealloc, layer_dealloc},
            {Py_tp_doc, (void *)op_display[op]},
            {0, NULL}};
        PyType_Spec spec = {op_py_class[op], sizeof(TrtlLayer), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
        st->layer_types[op] = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, (PyObject *)st->LayerType);
        if (!st->layer_types[op] || PyModule_AddType(m, st->layer_types[op]) < 0)
            return -1;
    }
    return 0;
}
