/* alloc.c -- 64-byte aligned allocation (with a failure hook for tests), and trtl_free for what
 * the public API hands out. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "core/alloc.h"
#include "trtlite/trtlite.h"

#define ALIGN 64

/* Atomic so that a hook set by a test is seen by allocations on other threads (the contract still
 * asks for none to run meanwhile: user and hook are two loads). */
static _Atomic(trtl_alloc_fail_fn) g_fail_hook;
static void *_Atomic g_fail_user;

void trtl_alloc_set_fail_hook(trtl_alloc_fail_fn hook, void *user)
{
    atomic_store(&g_fail_user, user);
    atomic_store(&g_fail_hook, hook);
}

void *trtl_aligned_alloc(size_t bytes)
{
    void *p = NULL;
    trtl_alloc_fail_fn hook = atomic_load_explicit(&g_fail_hook, memory_order_relaxed);
    if (hook && hook(bytes, atomic_load(&g_fail_user)))
        return NULL;
    /* Rounding up near SIZE_MAX would wrap to a tiny block that callers then overrun. */
    if (bytes > SIZE_MAX - (ALIGN - 1))
        return NULL;
    if (posix_memalign(&p, ALIGN, bytes ? (bytes + ALIGN - 1) / ALIGN * ALIGN : ALIGN) != 0)
        return NULL;
    return p;
}

void trtl_aligned_free(void *p) { free(p); }

void trtl_alloc_trim(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void trtl_alloc_trim_after(size_t *since, size_t bytes)
{
    *since += bytes;
    if (*since >= TRTL_ALLOC_TRIM_EVERY) {
        trtl_alloc_trim();
        *since = 0;
    }
}

size_t trtl_alloc_discard(const void *base, size_t *done, size_t upto)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
    uintptr_t lo = ((uintptr_t)base + *done + page - 1) / page * page;
    uintptr_t hi = ((uintptr_t)base + upto) / page * page;
    if (hi <= lo)
        return 0;
    *done = (size_t)(hi - (uintptr_t)base);
    return madvise((void *)lo, (size_t)(hi - lo), MADV_DONTNEED) == 0 ? (size_t)(hi - lo) : 0;
#else
    (void)base;
    (void)done;
    (void)upto;
    return 0;
#endif
}

void trtl_free(void *p) { free(p); }
