/* py_network.h -- trtlite.INetworkDefinition (py_network.c) and the network's threading contract. */
#ifndef TRTL_PYTHON_PY_NETWORK_H
#define TRTL_PYTHON_PY_NETWORK_H

#include "python/convert.h"

typedef struct TrtlNetwork {
    PyObject_HEAD
    trtl_network *net;
    PyObject *keep;  /* dict: (layer address, attr) -> object kept alive (weights, plugins) */
    int building;    /* a build uses the network (GIL released): every access through Python is refused */
} TrtlNetwork;

int trtl_py_init_network(PyObject *m, trtl_py_state *st);
/* Made by Builder.create_network(). */
PyObject *trtl_py_network_new(trtl_py_state *st, int implicit_batch);

/* Keep-alive registry of a network: object stored under (layer, key). */
int trtl_py_keep(TrtlNetwork *net, const void *layer, const char *key, PyObject *obj);
PyObject *trtl_py_kept(TrtlNetwork *net, const void *layer, const char *key); /* borrowed or NULL */

/* 0 if no build uses `net`; otherwise raises StateError naming the network and `what`, -1. */
int trtl_py_network_idle(TrtlNetwork *net, const char *what);
/* Attribute access of networks, layers and tensors (tp_getattro/tp_setattro): refused while a
 * build uses their network. */
PyObject *trtl_py_net_getattro(PyObject *self, PyObject *name);
int trtl_py_net_setattro(PyObject *self, PyObject *name, PyObject *v);

#endif
