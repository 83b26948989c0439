/* py_engine.h -- ICudaEngine, IHostMemory, Runtime, EngineInspector (py_engine.c). */
#ifndef TRTL_PYTHON_PY_ENGINE_H
#define TRTL_PYTHON_PY_ENGINE_H

#include "python/convert.h"

typedef struct TrtlEngine {
    PyObject_HEAD
    trtl_engine *e;
    PyObject *plan; /* a deferred load's plan (bytes) until trtl_py_engine_ready; else NULL */
} TrtlEngine;

typedef struct TrtlHostMemory {
    PyObject_HEAD
    void *data;
    size_t size;
    Py_ssize_t exports;
} TrtlHostMemory;

int trtl_py_init_engine(PyObject *m, trtl_py_state *st);
PyObject *trtl_py_engine_wrap(trtl_py_state *st, trtl_engine *e);
/* Loads a deferred plan load's weights (trtl_engine_load_weights) before the engine's first use that
 * needs them (contexts, serialize, inspector, refit); 0, or -1 with an exception set. */
int trtl_py_engine_ready(TrtlEngine *self);
PyObject *trtl_py_hostmem_new(trtl_py_state *st, void *data, size_t size);

#endif
