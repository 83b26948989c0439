/* py_config_preview.c -- IBuilderConfig's preview-feature switches.  TensorRT gates a few newer behaviours
 * behind trt.PreviewFeature flags (polygraphy's CreateConfig sets or clears every member of the enum on each
 * build; NVIDIA's quickly_deployable_plugins sample enables ALIASED_PLUGIN_IO_10_03).  None of them changes
 * what trtlite builds, so the config only remembers the bits for get_preview_feature. */
#include "python/py_config_preview.h"
#include "python/errors.h"
#include "python/py_builder_config.h"

/* PreviewFeature values are 0..NFEATURES-1 (TensorRT 10.10: PROFILE_SHARING_0806, ALIASED_PLUGIN_IO_10_03,
 * RUNTIME_ACTIVATION_RESIZE_10_10). */
#define NFEATURES 3

static int feature_arg(PyObject *self, PyObject *v, const char *method, long *out)
{
    PyObject *idx = PyNumber_Index(v);
    if (!idx) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "IBuilderConfig.%s: expected a trt.PreviewFeature, got %.100s", method,
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    long f = PyLong_AsLong(idx);
    Py_DECREF(idx);
    if (f == -1 && PyErr_Occurred())
        return -1;
    if (f < 0 || f >= NFEATURES) {
        trtl_py_raise_msg(TRTL_STATE(self), TRTL_ERR_INVALID_ARGUMENT,
                          "IBuilderConfig.%s: %ld is not a trt.PreviewFeature (0..%d)", method, f, NFEATURES - 1);
        return -1;
    }
    *out = f;
    return 0;
}

PyObject *trtl_py_cfg_set_preview_feature(PyObject *self, PyObject *args)
{
    PyObject *feature;
    int enable;
    long f;
    if (!PyArg_ParseTuple(args, "Op:set_preview_feature", &feature, &enable))
        return NULL;
    if (feature_arg(self, feature, "set_preview_feature", &f) < 0)
        return NULL;
    TrtlBuilderConfigObj *c = (TrtlBuilderConfigObj *)self;
    if (f == 0) /* PROFILE_SHARING_0806: deprecated in TensorRT 10, always on there */
        Py_RETURN_NONE;
    if (enable)
        c->preview_features |= 1UL << f;
    else
        c->preview_features &= ~(1UL << f);
    Py_RETURN_NONE;
}

PyObject *trtl_py_cfg_get_preview_feature(PyObject *self, PyObject *feature)
{
    long f;
    if (feature_arg(self, feature, "get_preview_feature", &f) < 0)
        return NULL;
    return PyBool_FromLong((long)((((TrtlBuilderConfigObj *)self)->preview_features >> f) & 1UL));
}
