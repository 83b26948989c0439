/* status.c -- thread-local last error and the log sinks. */
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <pthread.h>

#include "core/status.h"
#include "trtlite/trtlite.h"

static _Thread_local char tl_msg[TRTL_MSG_MAX];
static _Thread_local trtl_status tl_status;
static _Thread_local trtl_log_sink tl_sink;

static pthread_mutex_t g_sink_lock = PTHREAD_MUTEX_INITIALIZER;
static trtl_log_sink g_sink;

trtl_status trtl_error(trtl_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_msg, sizeof tl_msg, fmt, ap);
    va_end(ap);
    tl_status = s;
    return s;
}

trtl_status trtl_error_prefix(const char *fmt, ...)
{
    char prefix[TRTL_MSG_MAX], old[TRTL_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, tl_msg, sizeof old);
    size_t k = strlen(prefix);
    if (k > sizeof tl_msg - 3)
        k = sizeof tl_msg - 3;
    memcpy(tl_msg, prefix, k);
    tl_msg[k++] = ':';
    tl_msg[k++] = ' ';
    size_t rest = strlen(old);
    if (rest > sizeof tl_msg - 1 - k)
        rest = sizeof tl_msg - 1 - k;
    memcpy(tl_msg + k, old, rest);
    tl_msg[k + rest] = '\0';
    return tl_status;
}

void trtl_clear_error(void)
{
    tl_msg[0] = '\0';
    tl_status = TRTL_OK;
}

const char *trtl_last_error(void) { return tl_msg; }
trtl_status trtl_last_status(void) { return tl_status; }

const char *trtl_status_name(trtl_status s)
{
    static const char *const names[TRTL_STATUS_COUNT] = {
        "OK", "INVALID_ARGUMENT", "SHAPE", "DTYPE", "NOT_FOUND", "UNSUPPORTED", "OUT_OF_MEMORY",
        "INVALID_PLAN", "VERSION", "CPU", "PLUGIN", "STATE", "INTERNAL"};
    return (s >= 0 && s < TRTL_STATUS_COUNT) ? names[s] : "UNKNOWN";
}

void trtl_set_log_callback(trtl_log_fn fn, void *user)
{
    pthread_mutex_lock(&g_sink_lock);
    g_sink.fn = fn;
    g_sink.user = user;
    pthread_mutex_unlock(&g_sink_lock);
}

trtl_log_sink trtl_log_push(trtl_log_fn fn, void *user)
{
    trtl_log_sink prev = tl_sink;
    tl_sink.fn = fn;
    tl_sink.user = user;
    return prev;
}

void trtl_log_pop(trtl_log_sink previous) { tl_sink = previous; }

void trtl_log(trtl_severity sev, const char *fmt, ...)
{
    char buf[TRTL_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    trtl_log_sink sink = tl_sink;
    if (!sink.fn) {
        pthread_mutex_lock(&g_sink_lock);
        sink = g_sink;
        pthread_mutex_unlock(&g_sink_lock);
    }
    if (sink.fn) {
        sink.fn(sink.user, sev, buf);
    } else if (sev <= TRTL_LOG_WARNING) {
        static const char tags[] = "FEWIV";
        fprintf(stderr, "[trtlite] [%c] %s\n", tags[sev], buf);
    }
}

trtl_status trtl_set_error(trtl_status s, const char *msg)
{
    TRTL_CHECK_ARG(msg);
    return trtl_error(s, "%s", msg);
}
