/* py_tensor.h -- trtlite.ITensor (py_tensor.c). */
#ifndef TRTL_PYTHON_PY_TENSOR_H
#define TRTL_PYTHON_PY_TENSOR_H

#include "python/py_network.h"

typedef struct TrtlTensor {
    PyObject_HEAD
    TrtlNetwork *owner;
    trtl_tensor *t;
} TrtlTensor;

int trtl_py_init_tensor(PyObject *m, trtl_py_state *st);
PyObject *trtl_py_tensor_wrap(TrtlNetwork *owner, trtl_tensor *t);

#endif
