/*
 * failing_alloc.c -- an LD_PRELOAD shim for tests/test_reliability.py: makes one chosen allocation
 * done by trtlite's own code fail, to check that every allocation failure is reported as
 * OutOfMemoryError (never a crash, a leak or a "corrupt plan").
 *
 * Only calls whose return address lies in a module whose path contains FAILALLOC_MODULE (default
 * "trtlite/_C") are counted, so the interpreter's own allocations are never failed.  Controlled
 * from the test through ctypes:
 *   failalloc_arm(n)   count trtlite allocations from now on, and fail the one numbered n (0-based;
 *                      n < 0: count only)
 *   failalloc_count()  trtlite allocations seen since arming
 *   failalloc_failed() 1 if the armed failure happened
 *   failalloc_disarm() stop counting and failing
 * It is a test tool only: nothing in trtlite knows of it, so users cannot trigger it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static volatile int armed;
static long target = -1, seen;
static int failed;
static _Thread_local int busy;

void failalloc_arm(long n)
{
    seen = 0;
    failed = 0;
    target = n;
    armed = 1;
}
void failalloc_disarm(void) { armed = 0; }
long failalloc_count(void) { return seen; }
int failalloc_failed(void) { return failed; }

/* Whether this call, made from `caller`, is the one to fail. */
static int should_fail(void *caller)
{
    if (!armed || busy)
        return 0;
    busy = 1; /* dladdr must not recurse into us */
    Dl_info info;
    const char *want = getenv("FAILALLOC_MODULE");
    int ours = dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, want ? want : "trtlite/_C");
    busy = 0;
    if (!ours)
        return 0;
    if (seen++ == target) {
        failed = 1;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (should_fail(__builtin_return_address(0)))
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, n);
}

char *strdup(const char *s)
{
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *r = __libc_malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}
