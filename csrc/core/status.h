/*
 * status.h -- error reporting and logging inside the core.
 *
 * trtl_error() records a formatted message for the calling thread and returns the status, so a
 * failing path reads `return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ...", name);`.
 * Messages name the layer, tensor or field; they are what the Python exception says.
 */
#ifndef TRTL_CORE_STATUS_H
#define TRTL_CORE_STATUS_H

#include <stdarg.h>
#include "trtlite/types.h"

#define TRTL_MSG_MAX 1024

#if defined(__GNUC__)
#define TRTL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TRTL_PRINTF(a, b)
#endif

trtl_status trtl_error(trtl_status s, const char *fmt, ...) TRTL_PRINTF(2, 3);
/* Prefix the current message: "prefix: <old message>" (keeps the status). */
trtl_status trtl_error_prefix(const char *fmt, ...) TRTL_PRINTF(1, 2);
void trtl_clear_error(void);

/* Is s[0..n) valid UTF-8 without NUL bytes? */
int trtl_utf8_valid(const char *s, size_t n);
/* Replaces, in place, every byte of the NUL-terminated s that is not part of a valid UTF-8
 * sequence with '?'.  Error and log messages go through it: they quote plugin messages and
 * names, which come from code trtlite does not control, and Python decodes them strictly. */
void trtl_utf8_repair(char *s);

#define TRTL_TRY(expr)                      \
    do {                                    \
        trtl_status trtl_try_s_ = (expr);   \
        if (trtl_try_s_ != TRTL_OK)         \
            return trtl_try_s_;             \
    } while (0)

/* Entry checks of the public functions (trtlite.h).  A NULL handle or required pointer is the
 * caller's error, reported as TRTL_ERR_INVALID_ARGUMENT naming the function and the argument
 * ("trtl_context_execute: c is NULL"), never dereferenced. */
#define TRTL_CHECK_ARG(p)                                                                           \
    do {                                                                                            \
        if (!(p))                                                                                   \
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, #p);           \
    } while (0)
/* Accessors, which have no status to return, give `fallback` (0, -1 or NULL, as trtlite.h says)
 * for a NULL handle. */
#define TRTL_NULL_GIVES(p, fallback) \
    do {                             \
        if (!(p))                    \
            return fallback;         \
    } while (0)

/* Logging: goes to the sink installed on this thread (a build in progress), else the process-wide
 * sink, else stderr for WARNING and worse. */
void trtl_log(trtl_severity sev, const char *fmt, ...) TRTL_PRINTF(2, 3);
/* Install a sink for this thread (used around a build); returns the previous for restoring. */
typedef struct trtl_log_sink {
    trtl_log_fn fn;
    void *user;
} trtl_log_sink;
trtl_log_sink trtl_log_push(trtl_log_fn fn, void *user);
void trtl_log_pop(trtl_log_sink previous);

#endif
