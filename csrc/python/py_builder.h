/* py_builder.h -- trtlite.Builder, IBuilderConfig and IOptimizationProfile (py_builder.c). */
#ifndef TRTL_PYTHON_PY_BUILDER_H
#define TRTL_PYTHON_PY_BUILDER_H

#include "python/py_network.h"
#include "python/py_config_device.h"
#include "python/views.h" /* the config's repr and _repr_html_ */

int trtl_py_init_builder(PyObject *m, trtl_py_state *st);

#endif
