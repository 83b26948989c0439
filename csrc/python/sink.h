/* sink.h -- C callbacks into Python loggers, and the exceptions they raise that must not be lost (sink.c). */
#ifndef TRTL_PYTHON_SINK_H
#define TRTL_PYTHON_SINK_H

#include "python/state.h"

/* Where C callbacks of one operation (a build, a plan load, the registry) deliver to Python: the
 * module state, the user's logger (owned, or NULL) and an exception that must not be lost
 * (KeyboardInterrupt, SystemExit: not an Exception) raised by a callback, kept to cancel the
 * operation and raised when it returns. */
struct trtl_py_sink {
    trtl_py_state *st;
    PyObject *logger;
    PyObject *exc;
    int keep; /* 1: keep such an exception in exc for the caller to raise; 0 (process-wide sink): re-signal */
};

/* Log callback (trtl_log_fn): user is a trtl_py_sink.  Takes the GIL. */
void trtl_py_log_cb(void *user, trtl_severity sev, const char *msg);
/* With an exception set by a callback into Python made for `sink`: an Exception is reported
 * (unraisable, 0 returned); anything else is moved into sink->exc (1 returned: cancel) or, if the
 * sink holds one already or does not keep them, a KeyboardInterrupt is re-signalled.  Clears the
 * error. */
int trtl_py_keep_interrupt(trtl_py_sink *sink, PyObject *who);
/* If the sink kept an exception, sets it as the current one and returns -1; else 0. */
int trtl_py_sink_raise(trtl_py_sink *sink);

#endif
