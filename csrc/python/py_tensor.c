/* py_tensor.c -- trtlite.ITensor: a handle on a network tensor (keeps its network alive). */
#include "python/py_tensor.h"
#include "python/py_layer.h"

static void tensor_dealloc(TrtlTensor *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->owner);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int tensor_traverse(TrtlTensor *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->owner);
    return 0;
}

PyObject *trtl_py_tensor_wrap(TrtlNetwork *owner, trtl_tensor *t)
{
    if (!t)
        Py_RETURN_NONE;
    trtl_py_state *st = TRTL_STATE(owner);
    TrtlTensor *o = PyObject_GC_New(TrtlTensor, st->TensorType);
    if (!o)
        return NULL;
    Py_INCREF(owner);
    o->owner = owner;
    o->t = t;
    PyObject_GC_Track(o);
    return (PyObject *)o;
}

static PyObject *get_name(TrtlTensor *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(trtl_tensor_name(self->t));
}

static int set_name(TrtlTensor *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || !PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "tensor name must be a str");
        return -1;
    }
    trtl_status s = trtl_tensor_set_name(self->t, PyUnicode_AsUTF8(v));
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *get_shape(TrtlTensor *self, void *c)
{
    (void)c;
    trtl_dims d;
    trtl_status s = trtl_tensor_dims(self->t, &d);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    return trtl_py_from_dims(TRTL_STATE(self), &d);
}

static int set_shape(TrtlTensor *self, PyObject *v, void *c)
{
    (void)c;
    trtl_dims d;
    trtl_py_state *st = TRTL_STATE(self);
    if (!v || trtl_py_to_dims(st, v, &d, "shape") < 0)
        return -1;
    trtl_status s = trtl_tensor_set_dims(self->t, &d);
    if (s != TRTL_OK) {
        trtl_py_raise(st, s);
        return -1;
    }
    return 0;
}

static PyObject *get_dtype(TrtlTensor *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "DataType", trtl_tensor_dtype(self->t));
}

static int set_dtype(TrtlTensor *self, PyObject *v, void *c)
{
    (void)c;
    int32_t dt;
    if (trtl_py_as_int32(v, "dtype", &dt) < 0)
        return -1;
    trtl_status s = trtl_tensor_set_dtype(self->t, (trtl_dtype)dt);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *get_is_input(TrtlTensor *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_tensor_is_input(self->t));
}

static PyObject *get_is_output(TrtlTensor *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_tensor_is_output(self->t));
}

static PyObject *get_dynamic_range(TrtlTensor *self, void *c)
{
    (void)c;
    float lo, hi;
    if (!trtl_tensor_dynamic_range(self->t, &lo, &hi))
        Py_RETURN_NONE;
    return Py_BuildValue("(dd)", (double)lo, (double)hi);
}

/* TensorRT's setter takes a (min, max) pair; any 2-sequence of numbers is accepted.  None (what
 * the getter gives when no range is set) is refused: there is no "unset" in TensorRT either. */
static int set_dynamic_range(TrtlTensor *self, PyObject *v, void *c)
{
    (void)c;
    double lo, hi;
    const char *name = trtl_tensor_name(self->t);
    if (!v) {
        PyErr_Format(PyExc_AttributeError, "tensor '%s': dynamic_range cannot be deleted", name);
        return -1;
    }
    PyObject *seq = v == Py_None || PyUnicode_Check(v) || PyBytes_Check(v) ? NULL : PySequence_Fast(v, "");
    if (!seq || PySequence_Fast_GET_SIZE(seq) != 2) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "tensor '%s': dynamic_range must be a (min, max) pair of floats, not %R", name, v);
        return -1;
    }
    lo = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, 0));
    hi = lo == -1.0 && PyErr_Occurred() ? 0.0 : PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, 1));
    Py_DECREF(seq);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "tensor '%s': dynamic_range must be a (min, max) pair of floats, not %R", name, v);
        return -1;
    }
    trtl_status s = trtl_tensor_set_dynamic_range(self->t, (float)lo, (float)hi);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

static PyObject *tensor_set_dynamic_range(TrtlTensor *self, PyObject *args)
{
    if (trtl_py_network_idle(self->owner, "set_dynamic_range()") < 0)
        return NULL;
    double lo, hi;
    if (!PyArg_ParseTuple(args, "dd", &lo, &hi))
        return NULL;
    trtl_status s = trtl_tensor_set_dynamic_range(self->t, (float)lo, (float)hi);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_TRUE;
}

static PyObject *get_false(TrtlTensor *self, void *c)
{
    (void)self;
    (void)c;
    Py_RETURN_FALSE;
}

static PyObject *get_location(TrtlTensor *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "TensorLocation", 1); /* HOST */
}

/* TensorRT scripts set `tensor.location = trt.TensorLocation.DEVICE` (or HOST) on inputs and outputs: both name
 * memory this process reads and writes directly, which is all trtlite uses, so any TensorLocation is accepted
 * and the tensor stays HOST.  Anything else is a TypeError / ValueError naming the tensor. */
static int set_location(TrtlTensor *self, PyObject *v, void *c)
{
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "location cannot be deleted");
        return -1;
    }
    PyObject *idx = PyNumber_Index(v);
    if (!idx) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "tensor '%s': location must be a trt.TensorLocation, got %.100s",
                     trtl_tensor_name(self->t), Py_TYPE(v)->tp_name);
        return -1;
    }
    long loc = PyLong_AsLong(idx);
    Py_DECREF(idx);
    if (loc == -1 && PyErr_Occurred())
        return -1;
    if (loc != 0 && loc != 1) {
        PyErr_Format(PyExc_ValueError, "tensor '%s': %ld is not a trt.TensorLocation (DEVICE 0, HOST 1)",
                     trtl_tensor_name(self->t), loc);
        return -1;
    }
    return 0;
}

static PyObject *tensor_repr(TrtlTensor *self)
{
    trtl_dims d;
    char s[TRTL_PY_DIMS_STR_MAX];
    if (trtl_tensor_dims(self->t, &d) != TRTL_OK)
        return PyUnicode_FromFormat("<ITensor '%s' (shape invalid)>", trtl_tensor_name(self->t));
    return PyUnicode_FromFormat("<ITensor '%s' shape=%s dtype=%s>", trtl_tensor_name(self->t),
                                trtl_py_dims_str(&d, s, sizeof s), trtl_dtype_name(trtl_tensor_dtype(self->t)));
}

static PyObject *tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(a) != Py_TYPE(b) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    int eq = ((TrtlTensor *)a)->t == ((TrtlTensor *)b)->t;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t tensor_hash(TrtlTensor *self) { return _Py_HashPointer(self->t); }

static PyObject *get_role(TrtlTensor *self, void *which)
{
    int sh = 0, ex = 0;
    trtl_status s = trtl_tensor_roles(self->t, &sh, &ex);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    return PyBool_FromLong(which ? sh : ex);
}

static PyGetSetDef tensor_getset[] = {
    {"name", (getter)get_name, (setter)set_name, "Tensor name (unique in its network).", NULL},
    {"shape", (getter)get_shape, (setter)set_shape,
     "Shape (without the batch in implicit-batch networks; -1 for dynamic dims).  Writable on inputs.", NULL},
    {"dtype", (getter)get_dtype, (setter)set_dtype, "trt.DataType of the tensor.", NULL},
    {"is_network_input", (getter)get_is_input, NULL, "True for tensors made by add_input.", NULL},
    {"is_network_output", (getter)get_is_output, NULL, "True for tensors marked with mark_output.", NULL},
    {"is_shape_tensor", (getter)get_role, NULL,
     "True when a shape position (a shuffle's reshape input, ...) reads the tensor's values, directly or through "
     "shape arithmetic computed on the host.", (void *)1},
    {"is_execution_tensor", (getter)get_role, NULL,
     "True when the tensor's data is read when the engine runs (a layer computing an execution tensor or a network "
     "output reads it).", NULL},
    {"dynamic_range", (getter)get_dynamic_range, (setter)set_dynamic_range,
     "(min, max) used for INT8 quantization, or None.", NULL},
    {"broadcast_across_batch", (getter)get_false, NULL, "Always False (TensorRT 7 attribute).", NULL},
    {"location", (getter)get_location, (setter)set_location,
     "TensorLocation.HOST: trtlite reads and writes host memory.  Assigning DEVICE or HOST (TensorRT scripts do) is "
     "accepted: both name memory this process uses directly.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef tensor_methods[] = {
    {"set_dynamic_range", (PyCFunction)tensor_set_dynamic_range, METH_VARARGS,
     "set_dynamic_range(min, max) -> bool\n\nSet the quantization range of this tensor."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot tensor_slots[] = {
    {Py_tp_dealloc, tensor_dealloc},
    {Py_tp_traverse, tensor_traverse},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {Py_tp_repr, tensor_repr},
    {Py_tp_richcompare, tensor_richcompare},
    {Py_tp_hash, tensor_hash},
    {Py_tp_getattro, trtl_py_net_getattro},
    {Py_tp_setattro, trtl_py_net_setattro},
    {Py_tp_doc, "A tensor of a network definition (ITensor)."},
    {0, NULL}};

static PyType_Spec tensor_spec = {"trtlite.ITensor", sizeof(TrtlTensor), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  tensor_slots};

int trtl_py_init_tensor(PyObject *m, trtl_py_state *st)
{
    st->TensorType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &tensor_spec, NULL);
    if (!st->TensorType)
        return -1;
    return PyModule_AddType(m, st->TensorType);
}
