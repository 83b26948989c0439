/* sink.c -- C callbacks into Python loggers, and exceptions they raise that must not be lost. */
#include "python/sink.h"
#include "python/convert.h"

int trtl_py_keep_interrupt(trtl_py_sink *sink, PyObject *who)
{
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_WriteUnraisable(who);
        return 0;
    }
    if (sink && sink->keep && !sink->exc) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        if (ev && tb)
            PyException_SetTraceback(ev, tb);
        sink->exc = ev ? ev : Py_NewRef(Py_None);
        Py_XDECREF(et);
        Py_XDECREF(tb);
    } else {
        /* Nowhere to take it (a process-wide sink, or one already cancelling): a signal is raised
         * again at the main thread's next check, other such exceptions are reported. */
        if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            PyErr_Clear();
            PyErr_SetInterrupt();
        } else {
            PyErr_WriteUnraisable(who);
        }
    }
    return 1;
}

int trtl_py_sink_raise(trtl_py_sink *sink)
{
    if (!sink->exc)
        return 0;
    PyObject *e = sink->exc;
    sink->exc = NULL;
    if (e == Py_None) {
        Py_DECREF(e);
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    } else {
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(e)), e, PyException_GetTraceback(e));
    }
    return -1;
}

void trtl_py_log_cb(void *user, trtl_severity sev, const char *msg)
{
    trtl_py_sink *sink = user;
    if (!sink)
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    /* Read with the GIL: the process-wide sink's logger may be replaced by another thread.  None
     * while cancelling: the logger (or the monitor) raised already. */
    PyObject *logger = sink->exc ? NULL : Py_XNewRef(sink->logger);
    if (!logger) {
        PyGILState_Release(g);
        return;
    }
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyObject *sev_obj = trtl_py_enum(sink->st, "Severity", sev);
    PyObject *r = sev_obj ? PyObject_CallMethod(logger, "log", "Os", sev_obj, msg) : NULL;
    if (!r)
        trtl_py_keep_interrupt(sink, logger);
    Py_XDECREF(r);
    Py_XDECREF(sev_obj);
    Py_DECREF(logger);
    PyErr_Restore(et, ev, etb);
    PyGILState_Release(g);
}

