/* plugin_adapter.h -- Python plugins and creators as plugin.h objects (plugin_adapter.c). */
#ifndef TRTL_PYTHON_PLUGIN_ADAPTER_H
#define TRTL_PYTHON_PLUGIN_ADAPTER_H

#include "python/plugin_fields.h"

/* A plugin object returned by Python code (a _C.PluginV2 or a trt.IPluginV2) -> a C plugin
 * instance (new; a clone for _C.PluginV2).  NULL with an exception set. */
trtl_plugin *trtl_py_plugin_from_py(trtl_py_state *st, PyObject *obj, const trtl_plugin_creator *creator);
/* An adapter creator for a Python creator object (lives for the rest of the process). */
const trtl_plugin_creator *trtl_py_creator_make(trtl_py_state *st, PyObject *obj);
/* The user's object behind an adapter creator / plugin, else NULL (borrowed). */
PyObject *trtl_py_python_creator_obj(const trtl_plugin_creator *c);
PyObject *trtl_py_python_plugin_obj(const trtl_plugin *p);
/* obj.<attr> as a str (new reference), `dflt` if absent; TypeError if not a str. */
PyObject *trtl_py_attr_str(PyObject *obj, const char *attr, const char *dflt);

#endif
