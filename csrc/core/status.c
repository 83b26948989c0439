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

/* Length of the valid UTF-8 sequence at s (at most n bytes available), 0 if there is none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t k;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        k = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        k = 4, cp = c & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t j = 1; j < k; j++) {
        if ((s[j] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[j] & 0x3F);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 (Python refuses them) */
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return k;
}

int trtl_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] ? utf8_seq(u + i, n - i) : 0;
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

void trtl_utf8_repair(char *s)
{
    unsigned char *u = (unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(u + i, n - i);
        if (!k) {
            u[i] = '?';
            k = 1;
        }
        i += k;
    }
}

trtl_status trtl_error(trtl_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_msg, sizeof tl_msg, fmt, ap);
    va_end(ap);
    trtl_utf8_repair(tl_msg); /* also a multi-byte character cut by the length limit */
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
    trtl_utf8_repair(tl_msg);
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
    trtl_utf8_repair(buf);
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
