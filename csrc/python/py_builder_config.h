/* py_builder_config.h -- trtlite.IBuilderConfig (py_builder_config.c), used by the builder (py_builder.c) and the
 * timing-cache methods (py_timing_cache.c). */
#ifndef TRTL_PYTHON_PY_BUILDER_CONFIG_H
#define TRTL_PYTHON_PY_BUILDER_CONFIG_H

#include "python/py_network.h"
#include "python/py_config_device.h"
#include "python/py_config_preview.h"
#include "python/views.h" /* the config's repr and _repr_html_ */

/* IBuilderConfig (py_builder_config.c; its timing-cache methods are py_timing_cache.c's). */
typedef struct TrtlBuilderConfigObj {
    PyObject_HEAD
    trtl_builder_config *cfg;
    PyObject *int8_calibrator;
    PyObject *progress_monitor;
    long profiling_verbosity;
    int building; /* a build uses this config: refused as the network is (trtl_py_network_idle) */
    long dla_core; /* DLA_core as set (-1: none); no layer can run on a DLA, so it is only remembered */
    PyObject *calibration_profile; /* set_calibration_profile's IOptimizationProfile, or NULL */
    unsigned long preview_features; /* set_preview_feature's bits (1 << PreviewFeature); only remembered */
} TrtlBuilderConfigObj;

/* IOptimizationProfile (its type is py_builder.c's; add_optimization_profile reads the shapes). */
typedef struct TrtlProfile {
    PyObject_HEAD
    PyObject *shapes; /* dict: input name -> (min, opt, max) tuples */
    PyObject *values; /* dict: shape-tensor input name -> (min, opt, max) value tuples */
} TrtlProfile;

/* 0 if no build uses the config; otherwise StateError naming `what`, -1. */
int trtl_py_config_idle(TrtlBuilderConfigObj *self, const char *what);

/* A new config with the defaults (Builder.create_builder_config); NULL with an exception set. */
PyObject *trtl_py_builder_config_new(trtl_py_state *st);

/* Adds the IBuilderConfig type (st->ConfigType) and the module function builder_passes(). */
int trtl_py_init_builder_config(PyObject *m, trtl_py_state *st);

/* Shape-tensor input values of a profile (py_profile_values.c): `values` is the profile's dict
 * {input name: (min, opt, max) value tuples}.  get: [min, opt, max] of the dict's entry for the `input`
 * argument, [] if none (`format` "s:<method name>"; also serves get_shape over the shapes dict). */
PyObject *trtl_py_profile_set_values(trtl_py_state *st, PyObject *values, PyObject *args, PyObject *kwargs);
PyObject *trtl_py_profile_get_values(PyObject *values, PyObject *args, PyObject *kwargs, const char *format);
/* Sets every entry of `values` on profile `idx` of cfg; -1 with an exception set on failure. */
int trtl_py_profile_push_values(trtl_py_state *st, trtl_builder_config *cfg, int32_t idx, PyObject *values);


#endif
