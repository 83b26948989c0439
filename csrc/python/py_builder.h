/* py_builder.h -- trtlite.Builder, IBuilderConfig and IOptimizationProfile (py_builder.c). */
#ifndef TRTL_PYTHON_PY_BUILDER_H
#define TRTL_PYTHON_PY_BUILDER_H

#include "python/py_network.h"

int trtl_py_init_builder(PyObject *m, trtl_py_state *st);
/* The C config of IBuilderConfig `self`, or NULL with StateError while a build uses it (`what`
 * names the refused call). */
trtl_builder_config *trtl_py_config_handle(PyObject *self, const char *what);

#endif
