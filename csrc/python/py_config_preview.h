/* py_config_preview.h -- IBuilderConfig.set_preview_feature / get_preview_feature (py_config_preview.c), put
 * into the config type's method table by py_builder_config.c. */
#ifndef TRTL_PYTHON_PY_CONFIG_PREVIEW_H
#define TRTL_PYTHON_PY_CONFIG_PREVIEW_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The bits a new config starts with: PROFILE_SHARING_0806 (TensorRT 10: on, cannot be turned off). */
#define TRTL_PY_PREVIEW_DEFAULT 1UL

PyObject *trtl_py_cfg_set_preview_feature(PyObject *self, PyObject *args);
PyObject *trtl_py_cfg_get_preview_feature(PyObject *self, PyObject *feature);

#define TRTL_PY_CFG_PREVIEW_METHODS \
    {"set_preview_feature", (PyCFunction)trtl_py_cfg_set_preview_feature, METH_VARARGS,                         \
     "set_preview_feature(feature, enable) -> None\n\nRemember whether a trt.PreviewFeature is enabled "         \
     "(get_preview_feature answers it); no feature changes what trtlite builds: ALIASED_PLUGIN_IO_10_03's "      \
     "aliased plugin outputs are always allowed, PROFILE_SHARING_0806 is always on."},                          \
    {"get_preview_feature", (PyCFunction)trtl_py_cfg_get_preview_feature, METH_O,                               \
     "get_preview_feature(feature) -> bool\n\nWhether set_preview_feature enabled it (PROFILE_SHARING_0806: "    \
     "True, as in TensorRT 10)."},

#endif
