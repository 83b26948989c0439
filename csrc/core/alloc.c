/* alloc.c -- 64-byte aligned allocation, and trtl_free for what the public API hands out. */
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "trtlite/trtlite.h"

#define ALIGN 64

void *trtl_aligned_alloc(size_t bytes)
{
    void *p = NULL;
    /* Rounding up near SIZE_MAX would wrap to a tiny block that callers then overrun. */
    if (bytes > SIZE_MAX - (ALIGN - 1))
        return NULL;
    if (posix_memalign(&p, ALIGN, bytes ? (bytes + ALIGN - 1) / ALIGN * ALIGN : ALIGN) != 0)
        return NULL;
    return p;
}

void trtl_aligned_free(void *p) { free(p); }

void trtl_free(void *p) { free(p); }
