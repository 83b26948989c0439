/* py_engine.h -- ICudaEngine, IHostMemory, Runtime, EngineInspector (py_engine.c). */
#ifndef TRTL_PYTHON_PY_ENGINE_H
#define TRTL_PYTHON_PY_ENGINE_H

#include "python/convert.h"

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

int trtl_py_init_engine(PyObject *m, trtl_py_state *st);
PyObject *trtl_py_engine_wrap(trtl_py_state *st, trtl_engine *e);
PyObject *trtl_py_hostmem_new(trtl_py_state *st, void *data, size_t size);

#endif
