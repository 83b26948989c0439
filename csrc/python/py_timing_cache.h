/* py_timing_cache.h -- trtlite.ITimingCache and IBuilderConfig's timing-cache methods
 * (py_timing_cache.c). */
#ifndef TRTL_PYTHON_PY_TIMING_CACHE_H
#define TRTL_PYTHON_PY_TIMING_CACHE_H

#include "python/convert.h"

int trtl_py_init_timing_cache(PyObject *m, trtl_py_state *st);
/* IBuilderConfig.create_timing_cache / set_timing_cache / get_timing_cache (self: the config). */
PyObject *trtl_py_config_create_timing_cache(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_config_set_timing_cache(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_config_get_timing_cache(PyObject *self, PyObject *unused);

#endif
