/* py_config_device.c -- IBuilderConfig's device placement calls (default_device_type, set_device_type,
 * DLA_core, can_run_on_DLA, ...).  TensorRT places layers on the GPU or a DLA core; trtlite runs every layer on
 * the CPU, which these calls report as DeviceType.GPU ("the default device"), so that scripts written for
 * TensorRT run unchanged.  Placing a layer on a DLA is refused with an error naming the reason, never silently
 * ignored; DLA_core (which TensorRT only reads for layers placed on a DLA) is remembered in the config object and
 * otherwise unused.  The other answers are the same for every config. */
#include "python/py_config_device.h"
#include "python/errors.h"
#include "python/py_layer.h"
#include "python/py_builder_config.h"

#define DEVICE_GPU 0
#define DEVICE_DLA 1

static int device_arg(PyObject *self, PyObject *v, const char *what)
{
    PyObject *idx = PyNumber_Index(v);
    if (!idx) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a trt.DeviceType, got %.100s", what, Py_TYPE(v)->tp_name);
        return -1;
    }
    long d = PyLong_AsLong(idx);
    Py_DECREF(idx);
    if (d == -1 && PyErr_Occurred())
        return -1;
    if (d == DEVICE_GPU)
        return 0;
    if (d == DEVICE_DLA)
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_UNSUPPORTED,
                          "%s: DeviceType.DLA: this machine has no DLA core (builder.num_DLA_cores == 0); trtlite "
                          "runs every layer on the CPU, which it reports as DeviceType.GPU", what);
    else
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT, "%s: %ld is not a trt.DeviceType", what, d);
    return -1;
}

static int layer_arg(PyObject *self, PyObject *layer, const char *what)
{
    if (!PyObject_TypeCheck(layer, TRTL_STATE(self)->LayerType)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a trt.ILayer, got %.100s", what, Py_TYPE(layer)->tp_name);
        return -1;
    }
    return 0;
}

PyObject *trtl_py_cfg_get_default_device(PyObject *self, void *c)
{
    (void)c;
    return trtl_py_enum(TRTL_STATE(self), "DeviceType", DEVICE_GPU);
}

int trtl_py_cfg_set_default_device(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "default_device_type cannot be deleted");
        return -1;
    }
    return device_arg(self, v, "IBuilderConfig.default_device_type");
}

PyObject *trtl_py_cfg_get_dla_core(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((TrtlBuilderConfigObj *)self)->dla_core);
}

int trtl_py_cfg_set_dla_core(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "DLA_core cannot be deleted");
        return -1;
    }
    long core = PyLong_AsLong(v);
    if (core == -1 && PyErr_Occurred())
        return -1;
    /* TensorRT takes any core number here and checks it only for layers placed on a DLA (torch2trt sets
     * DLA_core = 0 on every build, DLA or not); no layer can be placed on one here, so the value is kept and
     * never used. */
    if (core < -1) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "IBuilderConfig.DLA_core = %ld: a DLA core number is >= 0 (-1: none)", core);
        return -1;
    }
    ((TrtlBuilderConfigObj *)self)->dla_core = core;
    return 0;
}

PyObject *trtl_py_cfg_set_device_type(PyObject *self, PyObject *args)
{
    PyObject *layer, *dev;
    if (!PyArg_ParseTuple(args, "OO:set_device_type", &layer, &dev))
        return NULL;
    if (layer_arg(self, layer, "set_device_type()") < 0 || device_arg(self, dev, "set_device_type()") < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *trtl_py_cfg_get_device_type(PyObject *self, PyObject *layer)
{
    if (layer_arg(self, layer, "get_device_type()") < 0)
        return NULL;
    return trtl_py_enum(TRTL_STATE(self), "DeviceType", DEVICE_GPU);
}

PyObject *trtl_py_cfg_layer_false(PyObject *self, PyObject *layer)
{
    if (layer_arg(self, layer, "IBuilderConfig") < 0)
        return NULL;
    Py_RETURN_FALSE;
}

PyObject *trtl_py_cfg_reset_device_type(PyObject *self, PyObject *layer)
{
    if (layer_arg(self, layer, "reset_device_type()") < 0)
        return NULL;
    Py_RETURN_NONE;
}
