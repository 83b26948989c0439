/*
 * alloc.h -- 64-byte aligned allocation for weights, constants, arenas and scratch.
 *
 * Every buffer that a kernel reads as weights or activations comes from here, so SIMD loads may
 * assume cache-line alignment of a buffer's start.  Thread-safe (plain posix_memalign/free).
 */
#ifndef TRTL_CORE_ALLOC_H
#define TRTL_CORE_ALLOC_H

#include <stddef.h>

/* At least `bytes` (rounded up to a multiple of 64; 0 gives 64) aligned to 64 bytes, or NULL when
 * out of memory or when the rounding would overflow size_t.  Free with trtl_aligned_free. */
void *trtl_aligned_alloc(size_t bytes);
/* NULL is allowed. */
void trtl_aligned_free(void *p);

/* Returns memory freed to malloc back to the system where the C library can (glibc: malloc_trim), so
 * that the weights a build or a plan load freed leave the resident set: glibc keeps freed blocks of a
 * few MiB on its heap once its mmap threshold has grown.  No-op elsewhere; thread-safe. */
void trtl_alloc_trim(void);
/* Counts `bytes` freed (or copied out) into *since and calls trtl_alloc_trim() once *since reaches
 * TRTL_ALLOC_TRIM_EVERY, then restarts the count: for loops that free weights buffer by buffer, so the
 * resident set follows them without a trim per buffer. */
#define TRTL_ALLOC_TRIM_EVERY ((size_t)32 << 20)
void trtl_alloc_trim_after(size_t *since, size_t bytes);

/* Gives the whole pages of [base + *done, base + upto) back to the system (Linux: madvise DONTNEED;
 * they read as zeros afterwards) and advances *done to the end of the last page given back; returns
 * the bytes given back (0 elsewhere).  Partial pages at either end are kept, so the bytes before
 * base and from base + upto on are never touched: for a buffer its owner will not read again. */
size_t trtl_alloc_discard(const void *base, size_t *done, size_t upto);

/* Failure injection for tests: while a hook is set, trtl_aligned_alloc first calls
 * hook(bytes, user) and returns NULL (as if out of memory) when it answers nonzero, so a test can
 * fail the n-th allocation of a build or a run and check that the error comes back as a status.
 * NULL removes the hook.  Process-wide: set it while no other thread allocates. */
typedef int (*trtl_alloc_fail_fn)(size_t bytes, void *user);
void trtl_alloc_set_fail_hook(trtl_alloc_fail_fn hook, void *user);

#endif
