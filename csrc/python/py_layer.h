/* py_layer.h -- trtlite.ILayer and its per-op subclasses (py_layer.c). */
#ifndef TRTL_PYTHON_PY_LAYER_H
#define TRTL_PYTHON_PY_LAYER_H

#include "python/py_network.h"

typedef struct TrtlLayer {
    PyObject_HEAD
    TrtlNetwork *owner;
    trtl_layer *l;
} TrtlLayer;

int trtl_py_init_layers(PyObject *m, trtl_py_state *st);
PyObject *trtl_py_layer_wrap(TrtlNetwork *owner, trtl_layer *l);
/* Sets attribute `attr` of layer `l` from a Python object (type from the attribute table). */
int trtl_py_set_attr(TrtlNetwork *net, trtl_layer *l, const char *attr, PyObject *v);

#endif
