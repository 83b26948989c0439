/* py_output_allocator.h -- IOutputAllocator objects set on an execution context (py_output_allocator.c). */
#ifndef TRTL_PYTHON_PY_OUTPUT_ALLOCATOR_H
#define TRTL_PYTHON_PY_OUTPUT_ALLOCATOR_H

#include "python/py_engine.h"

/* A context's Python output allocators, one slot per I/O tensor. */
typedef struct trtl_py_allocs trtl_py_allocs;

trtl_py_allocs *trtl_py_allocs_new(trtl_py_state *st, int32_t n_io);
void trtl_py_allocs_free(trtl_py_allocs *a);
int trtl_py_allocs_traverse(trtl_py_allocs *a, visitproc visit, void *arg);
/* set_output_allocator(name, allocator) on context c (allocator None clears); True or NULL (raised). */
PyObject *trtl_py_allocs_set(trtl_py_allocs *a, trtl_context *c, trtl_engine *e, PyObject *args, PyObject *kwargs);
/* get_output_allocator(name): the allocator or None. */
PyObject *trtl_py_allocs_get(trtl_py_allocs *a, trtl_engine *e, PyObject *name);
/* After an execution: 1 with the exception an allocator raised during it set (the first), else 0. */
int trtl_py_allocs_raise_pending(trtl_py_allocs *a);

#endif
