/* errors.h -- trtlite's exception classes and the one mapping of trtl_status to them (errors.c). */
#ifndef TRTL_PYTHON_ERRORS_H
#define TRTL_PYTHON_ERRORS_H

#include "python/state.h"

/* Creates the exception classes into the state and the module. */
int trtl_py_init_errors(PyObject *m, trtl_py_state *st);
/* The exception class (borrowed) for status `s`. */
PyObject *trtl_py_exc_for(trtl_py_state *st, trtl_status s);
/* Raises the exception for status `s` with trtl_last_error(); returns NULL.  An exception already
 * set (by a callback into Python) is kept instead: it is more precise. */
PyObject *trtl_py_raise(trtl_py_state *st, trtl_status s);
/* Same as trtl_py_raise with an explicit message. */
PyObject *trtl_py_raise_msg(trtl_py_state *st, trtl_status s, const char *fmt, ...);

#endif
