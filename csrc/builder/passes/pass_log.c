/* pass_log.c -- the log lines of a builder pass: one VERBOSE line per rewrite, one INFO line per
 * run with the count and the first rewrites (so that an INFO logger sees what was fused). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "builder/passes/passes.h"

#define SHOWN 4 /* rewrites named in the INFO line */

void trtl_pass_log_init(trtl_pass_log *l, const char *what)
{
    memset(l, 0, sizeof *l);
    l->what = what;
}

void trtl_pass_log_add(trtl_pass_log *l, const char *fmt, ...)
{
    char msg[TRTL_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    trtl_log(TRTL_LOG_VERBOSE, "%s: %s", l->what, msg);
    if (l->count++ < SHOWN && l->used < sizeof l->first) {
        int n = snprintf(l->first + l->used, sizeof l->first - l->used, "%s%s", l->used ? "; " : "", msg);
        l->used = n < 0 ? l->used : l->used + (size_t)n;
    }
}

void trtl_pass_log_done(const trtl_pass_log *l)
{
    if (l->count)
        trtl_log(TRTL_LOG_INFO, "%s: %d rewrite%s: %s%s", l->what, (int)l->count, l->count == 1 ? "" : "s", l->first,
                 l->count > SHOWN ? "; ..." : "");
}
