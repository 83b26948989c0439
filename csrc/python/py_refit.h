/* py_refit.h -- the refit functions behind trtlite.Refitter (py_refit.c, trtlite/refit.py). */
#ifndef TRTL_PYTHON_PY_REFIT_H
#define TRTL_PYTHON_PY_REFIT_H

#include "python/py_engine.h"

/* Adds _refit_info, _refit_check and _refit_apply to the module. */
int trtl_py_init_refit(PyObject *m, trtl_py_state *st);

#endif
