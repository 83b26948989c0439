/* py_config_device.h -- IBuilderConfig's device placement calls (py_config_device.c), put into the config type's
 * method and property tables by py_builder.c. */
#ifndef TRTL_PYTHON_PY_CONFIG_DEVICE_H
#define TRTL_PYTHON_PY_CONFIG_DEVICE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Methods set_device_type(layer, type), get_device_type(layer), reset_device_type(layer), and
 * is_device_type_set(layer) / can_run_on_DLA(layer) (both trtl_py_cfg_layer_false). */
PyObject *trtl_py_cfg_set_device_type(PyObject *self, PyObject *args);
PyObject *trtl_py_cfg_get_device_type(PyObject *self, PyObject *layer);
PyObject *trtl_py_cfg_reset_device_type(PyObject *self, PyObject *layer);
PyObject *trtl_py_cfg_layer_false(PyObject *self, PyObject *layer);
/* Properties default_device_type and DLA_core. */
PyObject *trtl_py_cfg_get_default_device(PyObject *self, void *c);
int trtl_py_cfg_set_default_device(PyObject *self, PyObject *v, void *c);
PyObject *trtl_py_cfg_get_dla_core(PyObject *self, void *c);
int trtl_py_cfg_set_dla_core(PyObject *self, PyObject *v, void *c);

#endif
