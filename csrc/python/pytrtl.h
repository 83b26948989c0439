/*
 * pytrtl.h -- shared declarations of the CPython bindings (module trtlite._C).
 *
 * Multi-phase init; every type is a heap type created with PyType_FromModuleAndSpec and found
 * through the module state (no C globals hold Python objects).  Enum classes and the Dims tuple
 * classes are defined in Python (trtlite/_enums.py) and registered into the state by
 * trtlite/__init__.py via _C._register(); until then ints and tuples are returned.
 */
#ifndef TRTL_PYTHON_PYTRTL_H
#define TRTL_PYTHON_PYTRTL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "trtlite/trtlite.h"
#include "network/network.h"

typedef struct trtl_py_state {
    PyObject *module; /* borrowed: the module owning this state (C callbacks keep a reference to it) */
    /* exceptions */
    PyObject *Error, *ShapeError, *InvalidArgumentError, *DTypeError, *NotFoundError, *UnsupportedError,
        *PlanError, *PluginError, *StateError, *OutOfMemoryError,
        *PluginFieldError; /* PluginError and InvalidArgumentError: a plugin field is wrong */
    /* types */
    PyTypeObject *NetworkType, *LayerType, *TensorType, *BuilderType, *ConfigType, *ProfileType, *RuntimeType,
        *EngineType, *ContextType, *HostMemoryType, *InspectorType;
    PyTypeObject *layer_types[TRTL_OP_COUNT];
    /* registered from Python */
    PyObject *enums;     /* dict: enum class name -> class */
    PyObject *dims_cls;  /* trtlite.Dims (tuple subclass) or NULL */
    PyObject *plugin_hooks; /* dict of Python-side plugin helpers (issue: plugins) */
    struct trtl_py_sink *log_sink; /* the process-wide log sink this module installed (PyMem_Raw), or NULL */
    /* Tables the types point into (PyMem; freed with the module, after its types): the generated
     * properties of each layer type and its name, the methods of INetworkDefinition. */
    PyGetSetDef *layer_getsets;
    char *layer_type_names;
    PyMethodDef *network_methods;
} trtl_py_state;

extern PyModuleDef trtl_py_module_def;


/* State of the module that defined `tp` (works for subclasses too). */
trtl_py_state *trtl_py_state_of_type(PyTypeObject *tp);
#define TRTL_STATE(self) trtl_py_state_of_type(Py_TYPE(self))

/* The exception class (borrowed) for status `s`. */
PyObject *trtl_py_exc_for(trtl_py_state *st, trtl_status s);
/* Raises the exception for status `s` with trtl_last_error(); returns NULL. */
PyObject *trtl_py_raise(trtl_py_state *st, trtl_status s);
/* Same as trtl_py_raise with an explicit message. */
PyObject *trtl_py_raise_msg(trtl_py_state *st, trtl_status s, const char *fmt, ...);

/* ---- objects ---- */

typedef struct TrtlNetwork {
    PyObject_HEAD
    trtl_network *net;
    PyObject *keep;  /* dict: (layer address, attr) -> object kept alive (weights, plugins) */
    int building;    /* a build uses the network (GIL released): every access through Python is refused */
} TrtlNetwork;

typedef struct TrtlLayer {
    PyObject_HEAD
    TrtlNetwork *owner;
    trtl_layer *l;
} TrtlLayer;

typedef struct TrtlTensor {
    PyObject_HEAD
    TrtlNetwork *owner;
    trtl_tensor *t;
} TrtlTensor;

typedef struct TrtlEngine {
    PyObject_HEAD
    trtl_engine *e;
} TrtlEngine;

typedef struct TrtlHostMemory {
    PyObject_HEAD
    void *data;
    size_t size;
    Py_ssize_t exports;
} TrtlHostMemory;

/* ---- converters ---- */

/* Python sequence of ints (tuple, list, Dims, trt.Dims) -> dims.  `what` names it in errors. */
int trtl_py_to_dims(trtl_py_state *st, PyObject *o, trtl_dims *out, const char *what);
/* dims -> trt.Dims (registered) or tuple. */
PyObject *trtl_py_from_dims(trtl_py_state *st, const trtl_dims *d);
/* int (or IntEnum) -> enum instance of class `enum_name` (plain int if not registered). */
PyObject *trtl_py_enum(trtl_py_state *st, const char *enum_name, long v);
/* Enum or int -> long, with a type check naming `what`.  Returns -1 with an exception set on error
 * (check PyErr_Occurred). */
long trtl_py_as_long(PyObject *o, const char *what);
/* Same, also checking it fits int32 (OverflowError otherwise).  0 on success. */
int trtl_py_as_int32(PyObject *o, const char *what, int32_t *out);
/* numpy array / buffer / trt.Weights / None -> weights.  `*keep` receives what must be stored
 * while the weights are used (a new reference, or NULL for empty weights): a tuple (value, export)
 * where value is what the layer attribute reads back and export (None when the values were
 * copied) holds the buffer export that keeps w->values valid; dropping the tuple releases it. */
/* Exports o's buffer (PyObject_GetBuffer with `flags`) into a new capsule that releases the export
 * when freed; *view stays valid as long as the capsule lives.  NULL with an exception on failure. */
PyObject *trtl_py_buffer_hold(PyObject *o, int flags, Py_buffer **view);
int trtl_py_to_weights(trtl_py_state *st, PyObject *o, trtl_weights *w, PyObject **keep, const char *what);

/* The name a C plugin object (trtlite.PluginV2) was created under; NULL for other objects. */
const char *trtl_py_plugin_name(trtl_py_state *st, PyObject *obj);

/* Wrappers. */
PyObject *trtl_py_layer_wrap(TrtlNetwork *owner, trtl_layer *l);
PyObject *trtl_py_tensor_wrap(TrtlNetwork *owner, trtl_tensor *t);
PyObject *trtl_py_engine_wrap(trtl_py_state *st, trtl_engine *e);
PyObject *trtl_py_hostmem_new(trtl_py_state *st, void *data, size_t size);

/* Keep-alive registry of a network: object stored under (layer, key). */
int trtl_py_keep(TrtlNetwork *net, const void *layer, const char *key, PyObject *obj);
PyObject *trtl_py_kept(TrtlNetwork *net, const void *layer, const char *key); /* borrowed or NULL */

/* 0 if no build uses `net`; otherwise raises StateError naming the network and `what`, -1. */
int trtl_py_network_idle(TrtlNetwork *net, const char *what);
/* Attribute access of networks, layers and tensors (tp_getattro/tp_setattro): refused while a
 * build uses their network. */
PyObject *trtl_py_net_getattro(PyObject *self, PyObject *name);
int trtl_py_net_setattro(PyObject *self, PyObject *name, PyObject *v);

/* Sets attribute `attr` of layer `l` from a Python object (type from the attribute table). */
int trtl_py_set_attr(TrtlNetwork *net, trtl_layer *l, const char *attr, PyObject *v);

/* Where C callbacks of one operation (a build, a plan load, the registry) deliver to Python: the
 * module state, the user's logger (owned, or NULL) and an exception that must not be lost
 * (KeyboardInterrupt, SystemExit: not an Exception) raised by a callback, kept to cancel the
 * operation and raised when it returns. */
struct trtl_py_sink {
    trtl_py_state *st;
    PyObject *logger;
    PyObject *exc;
    int keep; /* 1: keep such an exception in exc for the caller to raise; 0 (process-wide sink): re-signal */
};
typedef struct trtl_py_sink trtl_py_sink;

/* Log callback (trtl_log_fn): user is a trtl_py_sink.  Takes the GIL. */
void trtl_py_log_cb(void *user, trtl_severity sev, const char *msg);
/* With an exception set by a callback into Python made for `sink`: an Exception is reported
 * (unraisable, 0 returned); anything else is moved into sink->exc (1 returned: cancel) or, if the
 * sink holds one already or is NULL, a KeyboardInterrupt is re-signalled.  Clears the error. */
int trtl_py_keep_interrupt(trtl_py_sink *sink, PyObject *who);
/* If the sink kept an exception, sets it as the current one and returns -1; else 0. */
int trtl_py_sink_raise(trtl_py_sink *sink);

/* Type creation (one function per file). */
int trtl_py_init_network(PyObject *m, trtl_py_state *st);
int trtl_py_init_layers(PyObject *m, trtl_py_state *st);
int trtl_py_init_tensor(PyObject *m, trtl_py_state *st);
int trtl_py_init_builder(PyObject *m, trtl_py_state *st);
int trtl_py_init_engine(PyObject *m, trtl_py_state *st);
int trtl_py_init_context(PyObject *m, trtl_py_state *st);
int trtl_py_init_plugins(PyObject *m, trtl_py_state *st);

#endif
