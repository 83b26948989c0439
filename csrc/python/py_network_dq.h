/* py_network_dq.h -- INetworkDefinition.add_dynamic_quantize (py_network_dq.c). */
#ifndef TRTL_PYTHON_PY_NETWORK_DQ_H
#define TRTL_PYTHON_PY_NETWORK_DQ_H

#include "python/state.h"

/* Implemented in Python (trtlite/dynamic_quantize.py) over existing layers: calls the function installed in
 * the module state's plugin_hooks under "_add_dynamic_quantize", with the network first. */
PyObject *trtl_py_network_add_dynamic_quantize(PyObject *self, PyObject *args, PyObject *kwargs);
/* add_dynamic_quantize_v2(input, block_shape, output_type, scale_type): the same under "_add_dynamic_quantize_v2". */
PyObject *trtl_py_network_add_dynamic_quantize_v2(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
