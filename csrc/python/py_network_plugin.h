/* py_network_plugin.h -- INetworkDefinition.add_plugin_v3 / add_plugin (py_network_plugin.c). */
#ifndef TRTL_PYTHON_PY_NETWORK_PLUGIN_H
#define TRTL_PYTHON_PY_NETWORK_PLUGIN_H

#include "python/state.h"

/* Methods of INetworkDefinition implemented in Python (trtlite/plugins_dynamic.py, trtlite/plugin.py): they
 * call the function the package installed in the module state's plugin_hooks under "_add_plugin_v3" /
 * "_add_plugin", with the network first. */
PyObject *trtl_py_network_add_plugin_v3(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_network_add_plugin(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
