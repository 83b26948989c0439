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
 *   failalloc_live()   trtlite allocations made since arming that are not freed yet (a leak check:
 *                      every block is tracked until free() or realloc() sees it, armed or not)
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
extern void __libc_free(void *);

static volatile int armed;
static long target = -1, seen;
static int failed;
static _Thread_local int busy;

/* Open-addressing set of live tracked blocks (pointer values; 0 empty, 1 deleted). */
#define SET_SIZE (1u << 20)
static uintptr_t *set;
static long live;
static volatile int set_lock;

static void lock(void)
{
    while (__atomic_test_and_set(&set_lock, __ATOMIC_ACQUIRE))
        ;
}
static void unlock(void) { __atomic_clear(&set_lock, __ATOMIC_RELEASE); }
static size_t slot_of(uintptr_t p) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull >> 44) & (SET_SIZE - 1); }

static void track(void *p)
{
    if (!p || !set)
        return;
    lock();
    for (size_t i = slot_of((uintptr_t)p);; i = (i + 1) & (SET_SIZE - 1))
        if (set[i] <= 1) {
            set[i] = (uintptr_t)p;
            live++;
            break;
        }
    unlock();
}

static void untrack(void *p)
{
    if (!p || !set || !live)
        return;
    lock();
    for (size_t i = slot_of((uintptr_t)p); set[i]; i = (i + 1) & (SET_SIZE - 1))
        if (set[i] == (uintptr_t)p) {
            set[i] = 1;
            live--;
            break;
        }
    unlock();
}

long failalloc_live(void) { return live; }

void failalloc_arm(long n)
{
    if (!set)
        set = __libc_calloc(SET_SIZE, sizeof *set);
    else if (live) {
        lock();
        memset(set, 0, SET_SIZE * sizeof *set);
        live = 0;
        unlock();
    }
    seen = 0;
    failed = 0;
    target = n;
    armed = 1;
}
void failalloc_disarm(void) { armed = 0; }
long failalloc_count(void) { return seen; }
int failalloc_failed(void) { return failed; }

/* 1: fail this call, made from `caller`; 2: trtlite's, let it through (and track it); 0: not
 * counted. */
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
    return 2;
}

void *malloc(size_t n)
{
    int f = should_fail(__builtin_return_address(0));
    if (f == 1) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_malloc(n);
    if (f == 2)
        track(p);
    return p;
}

void free(void *p)
{
    untrack(p);
    __libc_free(p);
}

void *calloc(size_t a, size_t b)
{
    int f = should_fail(__builtin_return_address(0));
    if (f == 1) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_calloc(a, b);
    if (f == 2)
        track(p);
    return p;
}

void *realloc(void *p, size_t n)
{
    int f = should_fail(__builtin_return_address(0));
    if (f == 1) {
        errno = ENOMEM;
        return NULL;
    }
    void *q = __libc_realloc(p, n);
    if (q || !n) {
        untrack(p);
        if (f == 2)
            track(q);
    }
    return q;
}

int posix_memalign(void **out, size_t align, size_t n)
{
    int f = should_fail(__builtin_return_address(0));
    if (f == 1)
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    if (f == 2)
        track(p);
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    int f = should_fail(__builtin_return_address(0));
    if (f == 1) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_memalign(align, n);
    if (f == 2)
        track(p);
    return p;
}

char *strdup(const char *s)
{
    int f = should_fail(__builtin_return_address(0));
    if (f == 1) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *r = __libc_malloc(n);
    if (r)
        memcpy(r, s, n);
    if (f == 2)
        track(r);
    return r;
}
