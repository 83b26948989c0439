/* views.h -- notebook and text views of the bindings' objects, written in Python (views.c).
 *
 * The heap types are immutable, so trtlite/_views.py cannot attach methods to them: instead their
 * tp_repr slot and their _repr_html_ / to_dot / to_svg methods are these functions, which call
 * trtlite._views.<name>(self).  If that module cannot be imported (interpreter shutdown, a broken
 * install), repr falls back to the default "<trtlite.X object at 0x...>". */
#ifndef TRTL_PYTHON_VIEWS_H
#define TRTL_PYTHON_VIEWS_H

#include "python/state.h"

/* Py_tp_repr slot: trtlite._views.repr(self). */
PyObject *trtl_py_view_repr(PyObject *self);
/* METH_NOARGS methods: trtlite._views.html(self), .to_dot(self), .to_svg(self). */
PyObject *trtl_py_view_html(PyObject *self, PyObject *unused);
PyObject *trtl_py_view_dot(PyObject *self, PyObject *unused);
PyObject *trtl_py_view_svg(PyObject *self, PyObject *unused);

#define TRTL_PY_VIEW_HTML_DOC "_repr_html_() -> str\n\nAn HTML table of this object (Jupyter calls it; trtlite/_views.py)."
#define TRTL_PY_VIEW_DOT_DOC                                                                                       \
    "to_dot() -> str\n\nThe graph as Graphviz DOT text (layers or fused steps as nodes, tensors as edges labelled " \
    "with shape and dtype)."
#define TRTL_PY_VIEW_SVG_DOC                                                                                       \
    "to_svg() -> str\n\nThe graph as SVG, rendered by the `graphviz` package (pip install graphviz, plus the "     \
    "Graphviz `dot` program); ImportError/RuntimeError naming what is missing otherwise."

#endif
