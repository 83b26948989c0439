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

#endif
