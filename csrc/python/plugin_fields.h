/* plugin_fields.h -- plugin fields between Python and C (plugin_fields.c). */
#ifndef TRTL_PYTHON_PLUGIN_FIELDS_H
#define TRTL_PYTHON_PLUGIN_FIELDS_H

#include "python/convert.h"

/* The one field a Python plugin serializes into: its serialize() bytes. */
#define TRTL_PY_DATA_FIELD "__data__"

/* Raises `type` with a formatted message whose __cause__ is the exception being handled (if
 * any), so the user still sees what their own code raised.  Returns NULL. */
PyObject *trtl_py_raise_chained(PyObject *type, const char *fmt, ...);
/* A PluginFieldCollection (or None) -> fields (PyMem_Free *out) whose data lives in *keep (a new
 * reference; drop it after use, also on failure); errors name `plugin` and the field. */
int trtl_py_fields_from_py(trtl_py_state *st, const char *plugin, PyObject *fc, trtl_plugin_field **out, int32_t *n,
                           PyObject **keep);
/* fields -> a trt.PluginFieldCollection of trt.PluginField (data copied into numpy arrays). */
PyObject *trtl_py_fields_to_py(trtl_py_state *st, const trtl_plugin_field *f, int32_t n);

#endif
