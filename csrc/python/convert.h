/* convert.h -- Python values <-> C values: ints, enums, dims, weights, buffer exports (convert.c). */
#ifndef TRTL_PYTHON_CONVERT_H
#define TRTL_PYTHON_CONVERT_H

#include "python/errors.h"

/* Python sequence of ints (tuple, list, Dims, trt.Dims) -> dims.  `what` names it in errors. */
int trtl_py_to_dims(trtl_py_state *st, PyObject *o, trtl_dims *out, const char *what);
/* dims -> trt.Dims (registered) or tuple. */
PyObject *trtl_py_from_dims(trtl_py_state *st, const trtl_dims *d);
/* int (or IntEnum) -> enum instance of class `enum_name` (plain int if not registered or not a
 * value of the enum; other errors, e.g. KeyboardInterrupt, are raised). */
PyObject *trtl_py_enum(trtl_py_state *st, const char *enum_name, long v);
/* Enum or int -> long, with a type check naming `what`.  Returns -1 with an exception set on error
 * (check PyErr_Occurred). */
long trtl_py_as_long(PyObject *o, const char *what);
/* Same, also checking it fits int32 (OverflowError otherwise).  0 on success. */
int trtl_py_as_int32(PyObject *o, const char *what, int32_t *out);
/* Exports o's buffer (PyObject_GetBuffer with `flags`) into a new capsule that releases the export
 * when freed; *view stays valid as long as the capsule lives.  NULL with an exception on failure. */
PyObject *trtl_py_buffer_hold(PyObject *o, int flags, Py_buffer **view);
/* numpy array / buffer / trt.Weights / None -> weights.  `*keep` receives what must be stored
 * while the weights are used (a new reference, or NULL for empty weights): a tuple (value, export)
 * where value is what the layer attribute reads back and export (None when the values were
 * copied) holds the buffer export that keeps w->values valid; dropping the tuple releases it. */
/* numpy's name of a dtype ("float32", ...; "?" outside trtl_dtype). */
const char *trtl_py_numpy_dtype(trtl_dtype t);
/* The ml_dtypes name of a storage type (FP8 "float8_e4m3fn", INT4 "int4", ...; NULL for the others).
 * Host buffers of these types hold one code a byte (uint8 / int8 arrays, or ml_dtypes arrays given
 * to infer()). */
const char *trtl_py_ml_dtype(trtl_dtype t);
int trtl_py_is_storage(trtl_dtype t);
/* Shapes in messages: "(2, 3)"; the number of elements (-1 if a dimension is unknown). */
#define TRTL_PY_DIMS_STR_MAX 160
const char *trtl_py_dims_str(const trtl_dims *d, char *buf, size_t n);
int64_t trtl_py_volume(const trtl_dims *d);
int trtl_py_to_weights(trtl_py_state *st, PyObject *o, trtl_weights *w, PyObject **keep, const char *what);

#endif
