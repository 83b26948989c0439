/* py_plugin.h -- plugins: the _C.PluginV2/_C.PluginCreator types, adapters, registry functions. */
#ifndef TRTL_PYTHON_PY_PLUGIN_H
#define TRTL_PYTHON_PY_PLUGIN_H

#include "python/convert.h"

int trtl_py_init_plugins(PyObject *m, trtl_py_state *st);
/* The name a C plugin object (trtlite.PluginV2) was created under; NULL for other objects. */
const char *trtl_py_plugin_name(trtl_py_state *st, PyObject *obj);

#endif
