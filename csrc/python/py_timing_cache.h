/* py_timing_cache.h -- trtlite.ITimingCache and IBuilderConfig's timing-cache methods
 * (py_timing_cache.c).  The methods are entries of IBuilderConfig's method table (py_builder.c),
 * given here so that their code and documentation live with the cache. */
#ifndef TRTL_PYTHON_PY_TIMING_CACHE_H
#define TRTL_PYTHON_PY_TIMING_CACHE_H

#include "python/convert.h"

int trtl_py_init_timing_cache(PyObject *m, trtl_py_state *st);
/* IBuilderConfig.create_timing_cache / set_timing_cache / get_timing_cache (self: the config). */
PyObject *trtl_py_config_create_timing_cache(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_config_set_timing_cache(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_config_get_timing_cache(PyObject *self, PyObject *unused);

#define TRTL_PY_CONFIG_TIMING_CACHE_METHODS                                                                        \
    {"create_timing_cache", (PyCFunction)(void (*)(void))trtl_py_config_create_timing_cache,                      \
     METH_VARARGS | METH_KEYWORDS,                                                                                 \
     "create_timing_cache(serialized_timing_cache) -> ITimingCache\n\nA timing cache from ITimingCache.serialize() " \
     "bytes (any buffer; b'' for an empty cache).  Raises PlanError for truncated, corrupt or other-version "       \
     "bytes."},                                                                                                    \
    {"set_timing_cache", (PyCFunction)(void (*)(void))trtl_py_config_set_timing_cache,                            \
     METH_VARARGS | METH_KEYWORDS,                                                                                 \
     "set_timing_cache(cache, ignore_mismatch) -> bool\n\nBuilds with this config read and add timings to `cache` " \
     "(None: builds share a process-wide cache).  A cache holding timings from another CPU, or none for this "     \
     "config's num_threads (set it first), is a mismatch: without ignore_mismatch it is refused (False, with a "   \
     "RuntimeWarning saying why); with it only the matching timings are read.  BuilderFlag.DISABLE_TIMING_CACHE: " \
     "no cache is read or written."},                                                                              \
    {"get_timing_cache", (PyCFunction)trtl_py_config_get_timing_cache, METH_NOARGS,                               \
     "get_timing_cache() -> ITimingCache | None\n\nThe cache set with set_timing_cache (the same timings, a new "  \
     "handle), or None."},

#endif
