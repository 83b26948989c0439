/* py_builder.h -- trtlite.Builder, IBuilderConfig and IOptimizationProfile (py_builder.c). */
#ifndef TRTL_PYTHON_PY_BUILDER_H
#define TRTL_PYTHON_PY_BUILDER_H

#include "python/py_network.h"
#include "python/py_config_device.h"
#include "python/views.h" /* the config's repr and _repr_html_ */

/* IBuilderConfig (py_builder.c; its timing-cache methods are py_timing_cache.c's). */
typedef struct TrtlBuilderConfigObj {
    PyObject_HEAD
    trtl_builder_config *cfg;
    PyObject *int8_calibrator;
    PyObject *progress_monitor;
    long profiling_verbosity;
    int building; /* a build uses this config: refused as the network is (trtl_py_network_idle) */
} TrtlBuilderConfigObj;

int trtl_py_init_builder(PyObject *m, trtl_py_state *st);

/* Shape-tensor input values of a profile (py_profile_values.c): `values` is the profile's dict
 * {input name: (min, opt, max) value tuples}.  get: [min, opt, max] of the dict's entry for the `input`
 * argument, [] if none (`format` "s:<method name>"; also serves get_shape over the shapes dict). */
PyObject *trtl_py_profile_set_values(trtl_py_state *st, PyObject *values, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_profile_get_values(PyObject *values, PyObject *args, PyObject *kwargs, const char *format);
/* Sets every entry of `values` on profile `idx` of cfg; -1 with an exception set on failure. */
int trtl_py_profile_push_values(trtl_py_state *st, trtl_builder_config *cfg, int32_t idx, PyObject *values);

#endif
