/* py_context.h -- trtlite.IExecutionContext (py_context.c). */
#ifndef TRTL_PYTHON_PY_CONTEXT_H
#define TRTL_PYTHON_PY_CONTEXT_H

#include "python/py_engine.h"

int trtl_py_init_context(PyObject *m, trtl_py_state *st);
/* A new context of `engine` (a TrtlEngine). */
PyObject *trtl_py_context_new(trtl_py_state *st, PyObject *engine);
/* The engine a context (an IExecutionContext) runs (borrowed; lives as long as the context). */
trtl_engine *trtl_py_context_engine(PyObject *ctx);
/* IExecutionContext.infer (py_context_infer.c). */
PyObject *trtl_py_context_infer(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
