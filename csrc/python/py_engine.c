/* py_engine.c -- trtlite.Runtime, ICudaEngine, IHostMemory and EngineInspector. */
#include <string.h>

#include "python/py_engine.h"
#include "python/py_context.h"
#include "python/sink.h"
#include "python/views.h"


/* ---- IHostMemory: a serialized plan, exposed through the buffer protocol ------------------- */

static void hostmem_dealloc(TrtlHostMemory *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    trtl_free(self->data);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

PyObject *trtl_py_hostmem_new(trtl_py_state *st, void *data, size_t size)
{
    TrtlHostMemory *o = PyObject_New(TrtlHostMemory, st->HostMemoryType);
    if (!o) {
        trtl_free(data);
        return NULL;
    }
    o->data = data;
    o->size = size;
    o->exports = 0;
    return (PyObject *)o;
}

static int hostmem_getbuffer(TrtlHostMemory *self, Py_buffer *view, int flags)
{
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->data, (Py_ssize_t)self->size, 1, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void hostmem_releasebuffer(TrtlHostMemory *self, Py_buffer *view)
{
    (void)view;
    self->exports--;
}

static PyObject *hm_nbytes(TrtlHostMemory *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(self->size);
}

static PyObject *hm_dtype(TrtlHostMemory *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "DataType", TRTL_UINT8);
}

static Py_ssize_t hostmem_len(TrtlHostMemory *self) { return (Py_ssize_t)self->size; }

static PyGetSetDef hostmem_getset[] = {
    {"nbytes", (getter)hm_nbytes, NULL, "Size of the plan in bytes.", NULL},
    {"dtype", (getter)hm_dtype, NULL, "DataType.UINT8 (raw bytes).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* `with builder.build_serialized_network(...) as plan:` (polygraphy's convert); the plan stays valid after the
 * block, as TensorRT's does until it is released. */
static PyObject *hm_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *hm_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyMethodDef hostmem_methods[] = {
    {"__enter__", hm_enter, METH_NOARGS, "Context manager entry; returns the host memory."},
    {"__exit__", hm_exit, METH_VARARGS, "Context manager exit."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot hostmem_slots[] = {
    {Py_tp_dealloc, hostmem_dealloc},
    {Py_tp_getset, hostmem_getset},
    {Py_tp_methods, hostmem_methods},
    {Py_bf_getbuffer, hostmem_getbuffer},
    {Py_bf_releasebuffer, hostmem_releasebuffer},
    {Py_sq_length, hostmem_len},
    {Py_tp_doc, "Host memory holding a serialized plan (IHostMemory); use bytes(h) or f.write(h)."},
    {0, NULL}};

static PyType_Spec hostmem_spec = {"trtlite.IHostMemory", sizeof(TrtlHostMemory), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_DISALLOW_INSTANTIATION, hostmem_slots};

/* ---- ICudaEngine --------------------------------------------------------------------------- */

static void engine_dealloc(TrtlEngine *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    trtl_engine_destroy(self->e);
    Py_CLEAR(self->plan); /* after the engine, which pointed into it */
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

PyObject *trtl_py_engine_wrap(trtl_py_state *st, trtl_engine *e)
{
    TrtlEngine *o = PyObject_New(TrtlEngine, st->EngineType);
    if (!o) {
        trtl_engine_destroy(e);
        return NULL;
    }
    o->e = e;
    o->plan = NULL;
    return (PyObject *)o;
}

/* Runs with the GIL held, so that no other thread uses the engine or takes a reference to the plan
 * meanwhile: a plan whose only reference is the engine's can be read by no one else, and its pages are
 * given back to the system as they are read (the load then peaks at about one copy of the weights). */
int trtl_py_engine_ready(TrtlEngine *self)
{
    if (!self->plan)
        return 0;
    int discard = Py_REFCNT(self->plan) == 1;
    trtl_status s = trtl_engine_load_weights(self->e, discard);
    Py_CLEAR(self->plan);
    if (s != TRTL_OK) {
        trtl_py_raise(TRTL_STATE(self), s);
        return -1;
    }
    return 0;
}

/* An I/O index from an int or a tensor name; -1 with an exception set if invalid. */
static int32_t io_index(TrtlEngine *self, PyObject *o)
{
    trtl_py_state *st = TRTL_STATE(self);
    int32_t n = trtl_engine_num_io(self->e);
    if (PyUnicode_Check(o)) {
        int32_t i = trtl_engine_io_index(self->e, PyUnicode_AsUTF8(o));
        if (i < 0)
            trtl_py_raise_msg(st, TRTL_ERR_NOT_FOUND, "the engine has no input or output named '%s'", PyUnicode_AsUTF8(o));
        return i;
    }
    long i = trtl_py_as_long(o, "binding index");
    if (i == -1 && PyErr_Occurred())
        return -1;
    if (i < 0 || i >= n) {
        PyErr_Format(PyExc_IndexError, "binding index %ld out of range (the engine has %d)", i, (int)n);
        return -1;
    }
    return (int32_t)i;
}

static PyObject *eng_serialize(TrtlEngine *self, PyObject *unused)
{
    (void)unused;
    void *data;
    size_t size;
    trtl_py_state *st = TRTL_STATE(self);
    if (trtl_py_engine_ready(self) < 0)
        return NULL;
    trtl_status s = trtl_engine_serialize(self->e, &data, &size);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return trtl_py_hostmem_new(st, data, size);
}

static PyObject *eng_create_context(TrtlEngine *self, PyObject *unused)
{
    (void)unused;
    return trtl_py_context_new(TRTL_STATE(self), (PyObject *)self);
}

static PyObject *eng_get_tensor_name(TrtlEngine *self, PyObject *arg)
{
    long i = trtl_py_as_long(arg, "index");
    if (i == -1 && PyErr_Occurred())
        return NULL;
    const char *n = trtl_engine_io_name(self->e, (int32_t)i);
    if (!n)
        return PyErr_Format(PyExc_IndexError, "I/O tensor index %ld out of range (%d)", i, (int)trtl_engine_num_io(self->e));
    return PyUnicode_FromString(n);
}

static PyObject *eng_get_tensor_mode(TrtlEngine *self, PyObject *arg)
{
    int32_t i = io_index(self, arg);
    if (i < 0)
        return NULL;
    return trtl_py_enum(TRTL_STATE(self), "TensorIOMode", trtl_engine_io_is_input(self->e, i) ? 1 : 2);
}

static PyObject *eng_get_tensor_shape(TrtlEngine *self, PyObject *arg)
{
    int32_t i = io_index(self, arg);
    if (i < 0)
        return NULL;
    trtl_dims d = trtl_engine_io_dims(self->e, i);
    return trtl_py_from_dims(TRTL_STATE(self), &d);
}

static PyObject *eng_get_tensor_dtype(TrtlEngine *self, PyObject *arg)
{
    int32_t i = io_index(self, arg);
    if (i < 0)
        return NULL;
    return trtl_py_enum(TRTL_STATE(self), "DataType", trtl_engine_io_dtype(self->e, i));
}

static PyObject *eng_binding_is_input(TrtlEngine *self, PyObject *arg)
{
    int32_t i = io_index(self, arg);
    if (i < 0)
        return NULL;
    return PyBool_FromLong(trtl_engine_io_is_input(self->e, i));
}

static PyObject *eng_get_binding_index(TrtlEngine *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "get_binding_index(name): name must be a str");
    return PyLong_FromLong(trtl_engine_io_index(self->e, PyUnicode_AsUTF8(arg)));
}

static PyObject *eng_get_location(TrtlEngine *self, PyObject *arg)
{
    if (io_index(self, arg) < 0)
        return NULL;
    return trtl_py_enum(TRTL_STATE(self), "TensorLocation", 1);
}

/* The inspector always reports every step in full (names, kernels, shapes), whatever the config asked. */
static PyObject *e_profiling_verbosity(TrtlEngine *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "ProfilingVerbosity", 2 /* DETAILED */);
}

static PyObject *eng_get_tensor_format(TrtlEngine *self, PyObject *arg)
{
    if (io_index(self, arg) < 0)
        return NULL;
    return trtl_py_enum(TRTL_STATE(self), "TensorFormat", 0);
}

static PyObject *eng_get_profile_shape(TrtlEngine *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"profile_index", "binding", NULL};
    int profile;
    PyObject *b;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iO:get_profile_shape", kw, &profile, &b))
        return NULL;
    int32_t i = io_index(self, b);
    if (i < 0)
        return NULL;
    trtl_dims d[3];
    trtl_status s = trtl_engine_profile_shape(self->e, profile, trtl_engine_io_name(self->e, i), &d[0], &d[1], &d[2]);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    PyObject *l = PyList_New(3);
    for (int k = 0; l && k < 3; k++) {
        PyObject *x = trtl_py_from_dims(st, &d[k]);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, k, x);
    }
    return l;
}

static PyObject *eng_get_tensor_profile_shape(TrtlEngine *self, PyObject *args)
{
    PyObject *name;
    int profile;
    if (!PyArg_ParseTuple(args, "Oi:get_tensor_profile_shape", &name, &profile))
        return NULL;
    PyObject *a = Py_BuildValue("(iO)", profile, name);
    if (!a)
        return NULL;
    PyObject *r = eng_get_profile_shape(self, a, NULL);
    Py_DECREF(a);
    return r;
}

static PyObject *eng_is_shape_io(TrtlEngine *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "is_shape_inference_io(name): name must be a str");
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    int32_t i = trtl_engine_io_index(self->e, name);
    if (i < 0)
        return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_NOT_FOUND, "the engine has no input or output named '%s'",
                                 name);
    return PyBool_FromLong(trtl_engine_io_is_shape(self->e, i));
}

static PyObject *eng_get_profile_values(TrtlEngine *self, PyObject *args)
{
    int profile;
    const char *name;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTuple(args, "is:get_tensor_profile_values", &profile, &name))
        return NULL;
    trtl_dims d[3];
    trtl_status s = trtl_engine_profile_values(self->e, profile, name, &d[0], &d[1], &d[2]);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return Py_BuildValue("[NNN]", trtl_py_from_dims(st, &d[0]), trtl_py_from_dims(st, &d[1]),
                         trtl_py_from_dims(st, &d[2]));
}

static PyObject *eng_inspector(TrtlEngine *self, PyObject *unused);

static PyObject *eng_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *eng_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyObject *eng_subscript(TrtlEngine *self, PyObject *key)
{
    if (PyUnicode_Check(key)) {
        int32_t i = trtl_engine_io_index(self->e, PyUnicode_AsUTF8(key));
        if (i < 0)
            return trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_NOT_FOUND, "the engine has no binding named '%s'",
                                     PyUnicode_AsUTF8(key));
        return PyLong_FromLong(i);
    }
    return eng_get_tensor_name(self, key);
}

static Py_ssize_t eng_len(TrtlEngine *self) { return trtl_engine_num_io(self->e); }

/* `for name in engine` (TensorRT 7 / 8.0 scripts): the I/O tensor names in binding order, a snapshot list's
 * iterator (the engine is immutable). */
static PyObject *eng_iter(TrtlEngine *self)
{
    int32_t n = trtl_engine_num_io(self->e);
    PyObject *names = PyList_New(n);
    if (!names)
        return NULL;
    for (int32_t i = 0; i < n; i++) {
        PyObject *idx = PyLong_FromLong(i);
        PyObject *name = idx ? eng_get_tensor_name(self, idx) : NULL;
        Py_XDECREF(idx);
        if (!name) {
            Py_DECREF(names);
            return NULL;
        }
        PyList_SET_ITEM(names, i, name);
    }
    PyObject *it = PyObject_GetIter(names);
    Py_DECREF(names);
    return it;
}

static PyObject *e_num_io(TrtlEngine *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_engine_num_io(self->e));
}
static PyObject *e_num_layers(TrtlEngine *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_engine_num_layers(self->e));
}
static PyObject *e_max_batch(TrtlEngine *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_engine_max_batch_size(self->e));
}
static PyObject *e_implicit(TrtlEngine *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_engine_implicit_batch(self->e));
}
static PyObject *e_num_profiles(TrtlEngine *self, void *c)
{
    (void)c;
    return PyLong_FromLong(trtl_engine_num_profiles(self->e));
}
static PyObject *e_memsize(TrtlEngine *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(trtl_engine_device_memory_size(self->e));
}
static PyObject *e_name(TrtlEngine *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(trtl_engine_name(self->e));
}
static PyObject *e_refittable(TrtlEngine *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_engine_refittable(self->e));
}

static PyObject *e_weights_pending(TrtlEngine *self, void *c)
{
    (void)c;
    return PyBool_FromLong(trtl_engine_weights_pending(self->e));
}
static PyObject *e_plan_discarded(TrtlEngine *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(trtl_engine_plan_discarded(self->e));
}

static PyGetSetDef engine_getset[] = {
    {"num_io_tensors", (getter)e_num_io, NULL, "Number of inputs and outputs.", NULL},
    {"profiling_verbosity", (getter)e_profiling_verbosity, NULL,
     "ProfilingVerbosity.DETAILED: the engine inspector always reports every step in full.", NULL},
    {"num_bindings", (getter)e_num_io, NULL, "Number of bindings (inputs then outputs).", NULL},
    {"num_layers", (getter)e_num_layers, NULL, "Number of steps after fusion.", NULL},
    {"max_batch_size", (getter)e_max_batch, NULL, "Largest batch (implicit-batch engines; 1 otherwise).", NULL},
    {"has_implicit_batch_dimension", (getter)e_implicit, NULL, "True for engines of TensorRT 7 style networks.", NULL},
    {"num_optimization_profiles", (getter)e_num_profiles, NULL, "Number of optimization profiles.", NULL},
    {"device_memory_size", (getter)e_memsize, NULL, "Activation memory per context, in bytes, at max shapes.", NULL},
    {"name", (getter)e_name, NULL, "Name of the network the engine was built from (kept in plans).", NULL},
    {"refittable", (getter)e_refittable, NULL, "Built with BuilderFlag.REFIT (trt.Refitter can replace its weights).",
     NULL},
    {"_weights_pending", (getter)e_weights_pending, NULL,
     "True while a plan loaded from bytes has not copied its weights out yet (they are, at the engine's first "
     "context, serialize, inspector or refit).", NULL},
    {"_plan_bytes_discarded", (getter)e_plan_discarded, NULL,
     "Bytes of the plan's bytes object given back to the system while the weights were loaded (nonzero only when "
     "the engine held the plan's only reference).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef engine_methods[] = {
    {"serialize", (PyCFunction)eng_serialize, METH_NOARGS, "serialize() -> IHostMemory\n\nThe versioned, checksummed plan."},
    {"create_execution_context", (PyCFunction)eng_create_context, METH_NOARGS,
     "create_execution_context() -> IExecutionContext\n\nA context with its own activation memory."},
    {"create_execution_context_without_device_memory", (PyCFunction)eng_create_context, METH_NOARGS,
     "Same as create_execution_context() on the CPU."},
    {"get_tensor_name", (PyCFunction)eng_get_tensor_name, METH_O, "get_tensor_name(index) -> str\n\nName of I/O tensor `index`."},
    {"get_tensor_mode", (PyCFunction)eng_get_tensor_mode, METH_O, "get_tensor_mode(name) -> TensorIOMode\n\nINPUT or OUTPUT."},
    {"get_tensor_shape", (PyCFunction)eng_get_tensor_shape, METH_O,
     "get_tensor_shape(name) -> Dims\n\nBuild-time shape (-1 for dynamic dims)."},
    {"get_tensor_dtype", (PyCFunction)eng_get_tensor_dtype, METH_O, "get_tensor_dtype(name) -> DataType\n\nI/O tensor dtype."},
    {"get_tensor_location", (PyCFunction)eng_get_location, METH_O, "get_tensor_location(name) -> TensorLocation.HOST"},
    {"get_tensor_format", (PyCFunction)eng_get_tensor_format, METH_O, "get_tensor_format(name) -> TensorFormat.LINEAR"},
    {"get_tensor_profile_shape", (PyCFunction)eng_get_tensor_profile_shape, METH_VARARGS,
     "get_tensor_profile_shape(name, profile_index) -> [min, opt, max]"},
    {"is_shape_inference_io", (PyCFunction)eng_is_shape_io, METH_O,
     "is_shape_inference_io(name) -> bool\n\nTrue for a shape-tensor input: its values (host memory at its tensor "
     "address) decide shapes."},
    {"get_tensor_profile_values", (PyCFunction)eng_get_profile_values, METH_VARARGS,
     "get_tensor_profile_values(profile_index, name) -> [min, opt, max]\n\nValue ranges of a shape-tensor input."},
    {"get_binding_name", (PyCFunction)eng_get_tensor_name, METH_O, "get_binding_name(index) -> str"},
    {"get_binding_index", (PyCFunction)eng_get_binding_index, METH_O, "get_binding_index(name) -> int (-1 if absent)"},
    {"binding_is_input", (PyCFunction)eng_binding_is_input, METH_O, "binding_is_input(index or name) -> bool"},
    {"get_binding_shape", (PyCFunction)eng_get_tensor_shape, METH_O,
     "get_binding_shape(index or name) -> Dims\n\nWithout the batch for implicit-batch engines."},
    {"get_binding_dtype", (PyCFunction)eng_get_tensor_dtype, METH_O, "get_binding_dtype(index or name) -> DataType"},
    {"get_location", (PyCFunction)eng_get_location, METH_O, "get_location(index) -> TensorLocation.HOST"},
    {"get_profile_shape", (PyCFunction)(void (*)(void))eng_get_profile_shape, METH_VARARGS | METH_KEYWORDS,
     "get_profile_shape(profile_index, binding) -> [min, opt, max]"},
    {"create_engine_inspector", (PyCFunction)eng_inspector, METH_NOARGS,
     "create_engine_inspector() -> EngineInspector\n\nReports fused layers and chosen kernels."},
    {"__enter__", eng_enter, METH_NOARGS, "Context manager entry."},
    {"__exit__", eng_exit, METH_VARARGS, "Context manager exit."},
    {"_repr_html_", trtl_py_view_html, METH_NOARGS, TRTL_PY_VIEW_HTML_DOC},
    {"to_dot", trtl_py_view_dot, METH_NOARGS, TRTL_PY_VIEW_DOT_DOC},
    {"to_svg", trtl_py_view_svg, METH_NOARGS, TRTL_PY_VIEW_SVG_DOC},
    {NULL, NULL, 0, NULL}};

static PyType_Slot engine_slots[] = {
    {Py_tp_dealloc, engine_dealloc},
    {Py_tp_getset, engine_getset},
    {Py_tp_methods, engine_methods},
    {Py_mp_subscript, eng_subscript},
    {Py_mp_length, eng_len},
    {Py_tp_iter, eng_iter},
    {Py_tp_repr, trtl_py_view_repr},
    {Py_tp_doc, "A built engine (ICudaEngine): immutable, shareable by many execution contexts."},
    {0, NULL}};

static PyType_Spec engine_spec = {"trtlite.ICudaEngine", sizeof(TrtlEngine), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION, engine_slots};

/* ---- EngineInspector ------------------------------------------------------------------------ */

typedef struct TrtlInspector {
    PyObject_HEAD
    PyObject *engine;
    PyObject *context;
} TrtlInspector;

static void insp_dealloc(TrtlInspector *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->engine);
    Py_CLEAR(self->context);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int insp_traverse(TrtlInspector *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->engine);
    Py_VISIT(self->context);
    return 0;
}

static PyObject *eng_inspector(TrtlEngine *self, PyObject *unused)
{
    (void)unused;
    trtl_py_state *st = TRTL_STATE(self);
    TrtlInspector *o = PyObject_GC_New(TrtlInspector, st->InspectorType);
    if (!o)
        return NULL;
    o->engine = Py_NewRef(self);
    o->context = NULL;
    PyObject_GC_Track(o);
    return (PyObject *)o;
}

static PyObject *engine_json(TrtlInspector *self)
{
    char *json;
    if (trtl_py_engine_ready((TrtlEngine *)self->engine) < 0)
        return NULL;
    trtl_status s = trtl_engine_layer_info_json(((TrtlEngine *)self->engine)->e, &json);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    PyObject *r = PyUnicode_FromString(json);
    trtl_free(json);
    return r;
}

/* A step's compute precision as the inspector writes it (the JSON's "precision"). */
static const char *precision_name(int32_t p) { return p == TRTL_BF16 ? "BF16" : trtl_dtype_name((trtl_dtype)p); }

/* format: LayerInformationFormat.ONELINE (0) or JSON (1). */
static PyObject *insp_engine_info(TrtlInspector *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"format", NULL};
    PyObject *fmt = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:get_engine_information", kw, &fmt))
        return NULL;
    long f = fmt ? trtl_py_as_long(fmt, "format") : 1;
    if (f == -1 && PyErr_Occurred())
        return NULL;
    if (f == 1)
        return engine_json(self);
    trtl_engine *e = ((TrtlEngine *)self->engine)->e;
    PyObject *lines = PyList_New(0);
    for (int32_t i = 0; lines && i < trtl_engine_num_layers(e); i++) {
        PyObject *l = PyUnicode_FromFormat("%s [%s] %s", trtl_engine_layer_name(e, i), trtl_engine_layer_kernel(e, i),
                                           precision_name(trtl_engine_layer_precision(e, i)));
        if (!l || PyList_Append(lines, l) < 0) {
            Py_XDECREF(l);
            Py_DECREF(lines);
            return NULL;
        }
        Py_DECREF(l);
    }
    if (!lines)
        return NULL;
    PyObject *sep = PyUnicode_FromString("\n");
    PyObject *r = sep ? PyUnicode_Join(sep, lines) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(lines);
    return r;
}

static PyObject *insp_layer_info(TrtlInspector *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"layer_index", "format", NULL};
    int idx;
    PyObject *fmt = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|O:get_layer_information", kw, &idx, &fmt))
        return NULL;
    trtl_engine *e = ((TrtlEngine *)self->engine)->e;
    if (idx < 0 || idx >= trtl_engine_num_layers(e))
        return PyErr_Format(PyExc_IndexError, "layer index %d out of range (%d)", idx, (int)trtl_engine_num_layers(e));
    long f = fmt ? trtl_py_as_long(fmt, "format") : 1;
    if (f == -1 && PyErr_Occurred())
        return NULL;
    if (f != 1)
        return PyUnicode_FromFormat("%s [%s] %s", trtl_engine_layer_name(e, idx), trtl_engine_layer_kernel(e, idx),
                                    precision_name(trtl_engine_layer_precision(e, idx)));
    /* One element of the engine JSON's "layers" list. */
    PyObject *full = engine_json(self);
    if (!full)
        return NULL;
    PyObject *json = PyImport_ImportModule("json");
    PyObject *obj = json ? PyObject_CallMethod(json, "loads", "O", full) : NULL;
    Py_DECREF(full);
    PyObject *layers = obj ? PyDict_GetItemString(obj, "layers") : NULL;
    PyObject *one = layers ? PyList_GetItem(layers, idx) : NULL;
    PyObject *r = one ? PyObject_CallMethod(json, "dumps", "O", one) : NULL;
    Py_XDECREF(obj);
    Py_XDECREF(json);
    return r;
}

static PyObject *insp_get_ctx(TrtlInspector *self, void *c)
{
    (void)c;
    return Py_NewRef(self->context ? self->context : Py_None);
}

static int insp_set_ctx(TrtlInspector *self, PyObject *v, void *c)
{
    (void)c;
    Py_XINCREF(v);
    Py_XSETREF(self->context, v);
    return 0;
}

static PyGetSetDef insp_getset[] = {
    {"execution_context", (getter)insp_get_ctx, (setter)insp_set_ctx, "Context to report shapes of (informational).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef insp_methods[] = {
    {"get_engine_information", (PyCFunction)(void (*)(void))insp_engine_info, METH_VARARGS | METH_KEYWORDS,
     "get_engine_information(format=LayerInformationFormat.JSON) -> str\n\nAll steps: fused layer names, kernels, shapes."},
    {"get_layer_information", (PyCFunction)(void (*)(void))insp_layer_info, METH_VARARGS | METH_KEYWORDS,
     "get_layer_information(layer_index, format=LayerInformationFormat.JSON) -> str\n\nOne step."},
    {"_repr_html_", trtl_py_view_html, METH_NOARGS, TRTL_PY_VIEW_HTML_DOC},
    {NULL, NULL, 0, NULL}};

static PyType_Slot insp_slots[] = {
    {Py_tp_dealloc, insp_dealloc},
    {Py_tp_traverse, insp_traverse},
    {Py_tp_methods, insp_methods},
    {Py_tp_getset, insp_getset},
    {Py_tp_repr, trtl_py_view_repr},
    {Py_tp_doc, "Engine inspector: which layers were fused and which kernel runs each step."},
    {0, NULL}};

static PyType_Spec insp_spec = {"trtlite.EngineInspector", sizeof(TrtlInspector), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                    Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, insp_slots};

/* ---- Runtime -------------------------------------------------------------------------------- */

typedef struct TrtlRuntime {
    PyObject_HEAD
    PyObject *logger;
    int max_threads;
} TrtlRuntime;

static PyObject *runtime_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"logger", NULL};
    PyObject *logger = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Runtime", kw, &logger))
        return NULL;
    TrtlRuntime *self = (TrtlRuntime *)tp->tp_alloc(tp, 0);
    if (!self)
        return NULL;
    self->logger = Py_NewRef(logger);
    return (PyObject *)self;
}

static void runtime_dealloc(TrtlRuntime *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->logger);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int runtime_traverse(TrtlRuntime *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->logger);
    return 0;
}

/* A bytes plan loads deferred: the engine keeps the bytes object and copies the weights out at its first
 * use (trtl_py_engine_ready), after the caller has had the chance to drop its reference -- as
 * deserialize_cuda_engine(f.read()) does -- so that the plan's pages can go as the engine fills.  Other
 * buffers (bytearray, IHostMemory, memoryview, numpy) may change or go, so they load at once. */
static PyObject *runtime_deserialize(TrtlRuntime *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"serialized_engine", NULL};
    PyObject *obj;
    Py_buffer buf;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:deserialize_cuda_engine", kw, &obj))
        return NULL;
    int deferred = PyBytes_CheckExact(obj);
    if (PyObject_GetBuffer(obj, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    trtl_engine *e = NULL;
    trtl_status s;
    Py_BEGIN_ALLOW_THREADS
    s = deferred ? trtl_engine_deserialize_deferred(buf.buf, (size_t)buf.len, &e)
                 : trtl_engine_deserialize(buf.buf, (size_t)buf.len, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (s != TRTL_OK) {
        if (self->logger != Py_None && !PyErr_Occurred()) {
            trtl_py_sink sink = {st, self->logger, NULL, 1};
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", trtl_last_error()); /* the logger may run trtlite calls */
            trtl_py_log_cb(&sink, TRTL_LOG_ERROR, msg);
            if (trtl_py_sink_raise(&sink) < 0)
                return NULL;
            PyErr_SetString(trtl_py_exc_for(st, s), msg);
            return NULL;
        }
        return trtl_py_raise(st, s);
    }
    PyObject *o = trtl_py_engine_wrap(st, e);
    if (o && deferred)
        ((TrtlEngine *)o)->plan = Py_NewRef(obj);
    return o;
}

static PyObject *runtime_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *runtime_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_FALSE;
}

static PyObject *rt_get_logger(TrtlRuntime *self, void *c)
{
    (void)c;
    return Py_NewRef(self->logger);
}

static PyObject *rt_get_threads(TrtlRuntime *self, void *c)
{
    (void)c;
    return PyLong_FromLong(self->max_threads);
}

static int rt_set_threads(TrtlRuntime *self, PyObject *v, void *c)
{
    (void)c;
    long x = trtl_py_as_long(v, "max_threads");
    if (x == -1 && PyErr_Occurred())
        return -1;
    self->max_threads = (int)x;
    return 0;
}

static PyGetSetDef runtime_getset[] = {
    {"logger", (getter)rt_get_logger, NULL, "The logger.", NULL},
    {"max_threads", (getter)rt_get_threads, (setter)rt_set_threads, "Kept for compatibility.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* The registry is process-wide and lives in Python (trtlite/plugins.py), which hands it over with
 * _register_plugin_classes; a runtime returns that same object. */
static PyObject *runtime_get_plugin_registry(PyObject *self, PyObject *unused)
{
    (void)unused;
    trtl_py_state *st = TRTL_STATE(self);
    PyObject *reg = st->plugin_hooks ? PyDict_GetItemString(st->plugin_hooks, "_registry") : NULL;
    if (!reg)
        return PyErr_Format(PyExc_RuntimeError, "the plugin registry is not set up (import trtlite first)");
    return Py_NewRef(reg);
}

static PyMethodDef runtime_methods[] = {
    {"deserialize_cuda_engine", (PyCFunction)(void (*)(void))runtime_deserialize, METH_VARARGS | METH_KEYWORDS,
     "deserialize_cuda_engine(serialized_engine) -> ICudaEngine\n\nLoad a plan (bytes, IHostMemory, or any buffer).  "
     "Raises PlanError for truncated, corrupt, foreign or other-version plans, PluginError for missing plugins.  "
     "A bytes plan's weights are copied out at the engine's first context, serialize(), inspector or Refitter "
     "call; when the engine then holds the bytes' only reference (deserialize_cuda_engine(f.read())) their memory "
     "is given back as it is read, so the load peaks at one copy of the weights."},
    {"deserialize_engine", (PyCFunction)(void (*)(void))runtime_deserialize, METH_VARARGS | METH_KEYWORDS,
     "deserialize_engine(serialized_engine) -> ICudaEngine\n\nAlias of deserialize_cuda_engine."},
    {"get_plugin_registry", runtime_get_plugin_registry, METH_NOARGS,
     "get_plugin_registry() -> IPluginRegistry\n\nThe process-wide plugin registry: the same object as "
     "trt.get_plugin_registry()."},
    {"__enter__", runtime_enter, METH_NOARGS, "Context manager entry."},
    {"__exit__", runtime_exit, METH_VARARGS, "Context manager exit."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot runtime_slots[] = {
    {Py_tp_new, runtime_new},
    {Py_tp_dealloc, runtime_dealloc},
    {Py_tp_traverse, runtime_traverse},
    {Py_tp_getset, runtime_getset},
    {Py_tp_methods, runtime_methods},
    {Py_tp_doc, "Runtime(logger): loads serialized plans."},
    {0, NULL}};

static PyType_Spec runtime_spec = {"trtlite.Runtime", sizeof(TrtlRuntime), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE, runtime_slots};

int trtl_py_init_engine(PyObject *m, trtl_py_state *st)
{
    st->HostMemoryType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &hostmem_spec, NULL);
    if (!st->HostMemoryType || PyModule_AddType(m, st->HostMemoryType) < 0)
        return -1;
    st->EngineType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &engine_spec, NULL);
    if (!st->EngineType || PyModule_AddType(m, st->EngineType) < 0)
        return -1;
    st->InspectorType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &insp_spec, NULL);
    if (!st->InspectorType || PyModule_AddType(m, st->InspectorType) < 0)
        return -1;
    st->RuntimeType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &runtime_spec, NULL);
    if (!st->RuntimeType)
        return -1;
    return PyModule_AddType(m, st->RuntimeType);
}
