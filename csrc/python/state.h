/*
 * state.h -- the bindings' base header: the module state of trtlite._C.
 *
 * The bindings' headers are layered, each including only those below it (no circle):
 *   state.h   <- errors.h <- convert.h <- py_network.h <- py_layer.h, py_tensor.h, py_builder.h
 *   state.h   <- sink.h                   convert.h <- py_engine.h <- py_context.h
 *   state.h   <- views.h (included by the type files that have views)
 *                                         convert.h <- py_plugin.h
 *                                         convert.h <- py_timing_cache.h
 * They use only trtlite's public C API (trtlite/trtlite.h, types.h, plugin.h).
 *
 * Multi-phase init; every type is a heap type created with PyType_FromModuleAndSpec and found
 * through the module state (no C globals hold Python objects or module data).  Enum classes and
 * the Dims tuple class are defined in Python (trtlite/_enums.py, _types.py) and registered into
 * the state by trtlite/__init__.py via _C._register(); until then ints and tuples are returned.
 */
#ifndef TRTL_PYTHON_STATE_H
#define TRTL_PYTHON_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "trtlite/trtlite.h"

typedef struct trtl_py_sink trtl_py_sink;

typedef struct trtl_py_state {
    PyObject *module; /* borrowed: the module owning this state (C callbacks keep a reference to it) */
    /* exceptions */
    PyObject *Error, *ShapeError, *InvalidArgumentError, *DTypeError, *NotFoundError, *UnsupportedError,
        *PlanError, *PluginError, *StateError, *OutOfMemoryError,
        *PluginFieldError; /* PluginError and InvalidArgumentError: a plugin field is wrong */
    /* types */
    PyTypeObject *NetworkType, *LayerType, *TensorType, *BuilderType, *ConfigType, *ProfileType, *RuntimeType,
        *EngineType, *ContextType, *HostMemoryType, *InspectorType, *TimingCacheType;
    PyTypeObject *layer_types[TRTL_OP_COUNT];
    /* registered from Python */
    PyObject *enums;        /* dict: enum class name -> class */
    PyObject *dims_cls;     /* trtlite.Dims (tuple subclass) or NULL */
    PyObject *plugin_hooks; /* dict of Python-side plugin helpers */
    trtl_py_sink *log_sink; /* the process-wide log sink this module installed (PyMem_Raw), or NULL */
    /* Tables the types point into (PyMem; freed with the module, after its types): the generated
     * properties of each layer type, the methods of INetworkDefinition. */
    PyGetSetDef *layer_getsets;
    PyMethodDef *network_methods;
} trtl_py_state;

extern PyModuleDef trtl_py_module_def;

/* State of the module that defined `tp` (works for subclasses too). */
trtl_py_state *trtl_py_state_of_type(PyTypeObject *tp);
#define TRTL_STATE(self) trtl_py_state_of_type(Py_TYPE(self))

#endif
