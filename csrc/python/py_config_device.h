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

/* Their entries in the config type's method and property tables. */
#define TRTL_PY_CFG_DEVICE_METHODS \
    {"set_device_type", (PyCFunction)trtl_py_cfg_set_device_type, METH_VARARGS,                                  \
     "set_device_type(layer, device_type) -> None\n\nDeviceType.GPU is accepted (every layer runs on the CPU, "  \
     "reported as GPU); DeviceType.DLA raises UnsupportedError (no DLA core)."},                                 \
    {"get_device_type", (PyCFunction)trtl_py_cfg_get_device_type, METH_O,                                        \
     "get_device_type(layer) -> DeviceType\n\nAlways DeviceType.GPU: trtlite runs every layer on the CPU."},     \
    {"is_device_type_set", (PyCFunction)trtl_py_cfg_layer_false, METH_O,                                         \
     "is_device_type_set(layer) -> bool\n\nFalse: every layer runs on the default device."},                     \
    {"reset_device_type", (PyCFunction)trtl_py_cfg_reset_device_type, METH_O,                                    \
     "reset_device_type(layer) -> None\n\nNo effect: every layer runs on the default device."},                  \
    {"can_run_on_DLA", (PyCFunction)trtl_py_cfg_layer_false, METH_O,                                             \
     "can_run_on_DLA(layer) -> bool\n\nFalse: this machine has no DLA."},
#define TRTL_PY_CFG_DEVICE_GETSET \
    {"default_device_type", (getter)trtl_py_cfg_get_default_device, (setter)trtl_py_cfg_set_default_device,   \
     "DeviceType.GPU (trtlite runs every layer on the CPU); DeviceType.DLA raises UnsupportedError.", NULL},  \
    {"DLA_core", (getter)trtl_py_cfg_get_dla_core, (setter)trtl_py_cfg_set_dla_core,                          \
     "-1 (no DLA core); assigning a core >= 0 raises UnsupportedError.", NULL},

#endif
