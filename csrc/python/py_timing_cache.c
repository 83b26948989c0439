/* py_timing_cache.c -- trtlite.ITimingCache and IBuilderConfig's create/set/get_timing_cache.
 *
 * An ITimingCache owns one reference to a trtl_timing_cache; a config that uses it holds another
 * (in C), so a cache stays valid for as long as either needs it.  Every C call on a cache takes
 * its mutex, so a cache shared by builds running on other threads (with the GIL released) may be
 * serialized, combined or reset meanwhile.  A mismatch (a cache from another CPU or thread count)
 * is what TensorRT reports with a False return: set_timing_cache and combine return False and
 * issue a RuntimeWarning with the reason. */
#include "python/py_timing_cache.h"
#include "python/py_builder.h"
#include "python/py_engine.h"

typedef struct TrtlTimingCache {
    PyObject_HEAD
    trtl_timing_cache *c;
} TrtlTimingCache;

static void tc_dealloc(TrtlTimingCache *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    trtl_timing_cache_destroy(self->c);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* Wraps c, taking over the caller's reference (released on failure). */
static PyObject *tc_wrap(trtl_py_state *st, trtl_timing_cache *c)
{
    TrtlTimingCache *o = PyObject_New(TrtlTimingCache, st->TimingCacheType);
    if (!o) {
        trtl_timing_cache_destroy(c);
        return NULL;
    }
    o->c = c;
    return (PyObject *)o;
}

/* The mismatch answer: False and a RuntimeWarning naming the reason (NULL if the warning was
 * turned into an exception). */
static PyObject *mismatch(const char *msg)
{
    if (PyErr_WarnEx(PyExc_RuntimeWarning, msg, 1) < 0)
        return NULL;
    Py_RETURN_FALSE;
}

static PyObject *tc_serialize(TrtlTimingCache *self, PyObject *unused)
{
    (void)unused;
    void *data;
    size_t size;
    trtl_py_state *st = TRTL_STATE(self);
    trtl_status s = trtl_timing_cache_serialize(self->c, &data, &size);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return trtl_py_hostmem_new(st, data, size);
}

static PyObject *tc_combine(TrtlTimingCache *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"input_cache", "ignore_mismatch", NULL};
    PyObject *other;
    int ignore = 0;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!p:combine", kw, st->TimingCacheType, &other, &ignore))
        return NULL;
    trtl_status s = trtl_timing_cache_combine(self->c, ((TrtlTimingCache *)other)->c, ignore);
    if (s == TRTL_ERR_CPU)
        return mismatch(trtl_last_error());
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_TRUE;
}

static PyObject *tc_reset(TrtlTimingCache *self, PyObject *unused)
{
    (void)unused;
    trtl_status s = trtl_timing_cache_reset(self->c);
    if (s != TRTL_OK)
        return trtl_py_raise(TRTL_STATE(self), s);
    Py_RETURN_TRUE;
}

static PyObject *tc_num_entries(TrtlTimingCache *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong((long long)trtl_timing_cache_num_entries(self->c));
}

static PyMethodDef tc_methods[] = {
    {"serialize", (PyCFunction)tc_serialize, METH_NOARGS,
     "serialize() -> IHostMemory\n\nThe cache as versioned, checksummed bytes (bytes(h) or f.write(h)); "
     "IBuilderConfig.create_timing_cache reads them back.  Entries keep their order, so equal caches give equal "
     "bytes."},
    {"combine", (PyCFunction)(void (*)(void))tc_combine, METH_VARARGS | METH_KEYWORDS,
     "combine(input_cache, ignore_mismatch) -> bool\n\nAdd input_cache's entries to this cache (an entry this cache "
     "has keeps its value).  Entries timed on another CPU are a mismatch: without ignore_mismatch nothing is added "
     "and the answer is False (with a RuntimeWarning saying why); with it they are added too (builds read only "
     "the entries of their own CPU and thread count)."},
    {"reset", (PyCFunction)tc_reset, METH_NOARGS, "reset() -> bool\n\nEmpty the cache (True)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tc_getset[] = {
    {"num_entries", (getter)tc_num_entries, NULL,
     "Number of timings held (trtlite's own; one per kernel, node signature, thread count and CPU).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tc_slots[] = {
    {Py_tp_dealloc, tc_dealloc},
    {Py_tp_methods, tc_methods},
    {Py_tp_getset, tc_getset},
    {Py_tp_doc, "Timings of candidate kernels collected by builds (TensorRT's ITimingCache); made by "
                "IBuilderConfig.create_timing_cache.  A rebuild with a warm cache times nothing and picks the same "
                "kernels.  Thread-safe: builds on several threads may share one."},
    {0, NULL}};

static PyType_Spec tc_spec = {"trtlite.ITimingCache", sizeof(TrtlTimingCache), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                              tc_slots};

/* ---- IBuilderConfig methods (in its method table, py_builder.c) ------------------------------ */

/* The config's C handle, or NULL with StateError while a build uses it (reached only through
 * IBuilderConfig.method(config, ...): attribute lookups on a building config are refused). */
static trtl_builder_config *config_handle(PyObject *self, const char *what)
{
    TrtlBuilderConfigObj *c = (TrtlBuilderConfigObj *)self;
    if (!c->building)
        return c->cfg;
    PyErr_Format(TRTL_STATE(self)->StateError, "builder config: %s is refused while a build uses this config; "
                 "wait for the build to return", what);
    return NULL;
}

PyObject *trtl_py_config_create_timing_cache(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"serialized_timing_cache", NULL};
    Py_buffer buf;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*:create_timing_cache", kw, &buf))
        return NULL;
    trtl_timing_cache *c = NULL;
    trtl_status s = trtl_timing_cache_create(buf.buf, (size_t)buf.len, &c);
    PyBuffer_Release(&buf);
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    return tc_wrap(st, c);
}

PyObject *trtl_py_config_set_timing_cache(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"cache", "ignore_mismatch", NULL};
    PyObject *cache;
    int ignore = 0;
    trtl_py_state *st = TRTL_STATE(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Op:set_timing_cache", kw, &cache, &ignore))
        return NULL;
    if (cache != Py_None && !PyObject_TypeCheck(cache, st->TimingCacheType))
        return PyErr_Format(PyExc_TypeError, "set_timing_cache(): cache must be an ITimingCache (from "
                            "create_timing_cache) or None, not %s", Py_TYPE(cache)->tp_name);
    trtl_builder_config *cfg = config_handle(self, "set_timing_cache()");
    if (!cfg)
        return NULL;
    trtl_status s = trtl_builder_config_set_timing_cache(cfg, cache == Py_None ? NULL : ((TrtlTimingCache *)cache)->c,
                                                         ignore);
    if (s == TRTL_ERR_CPU)
        return mismatch(trtl_last_error());
    if (s != TRTL_OK)
        return trtl_py_raise(st, s);
    Py_RETURN_TRUE;
}

PyObject *trtl_py_config_get_timing_cache(PyObject *self, PyObject *unused)
{
    (void)unused;
    trtl_builder_config *cfg = config_handle(self, "get_timing_cache()");
    if (!cfg)
        return NULL;
    trtl_timing_cache *c = trtl_builder_config_timing_cache(cfg);
    if (!c)
        Py_RETURN_NONE;
    trtl_timing_cache_retain(c);
    return tc_wrap(TRTL_STATE(self), c);
}

int trtl_py_init_timing_cache(PyObject *m, trtl_py_state *st)
{
    st->TimingCacheType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &tc_spec, NULL);
    if (!st->TimingCacheType)
        return -1;
    return PyModule_AddType(m, st->TimingCacheType);
}
