/* py_builder.h -- trtlite.Builder and IOptimizationProfile (py_builder.c); IBuilderConfig is py_builder_config.h's. */
#ifndef TRTL_PYTHON_PY_BUILDER_H
#define TRTL_PYTHON_PY_BUILDER_H

#include "python/py_builder_config.h"

int trtl_py_init_builder(PyObject *m, trtl_py_state *st);

#endif
