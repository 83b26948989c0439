/*
 * test_common.h -- what the C kernel test programs (test_kernels.c, test_kernels_bf16.c, test_kernels_data.c)
 * share: the seeded xorshift generator and random dims, the case description and kernel name a fault report prints, and guarded
 * tensors -- copies that end at an inaccessible page, so that a kernel reading or writing past a tensor faults in
 * `make test` (the arena puts other tensors there; ASan's suite is not part of make test), with a SIGSEGV / SIGBUS
 * handler naming the kernel and case.  Each program is one translation unit that includes this once.
 */
#ifndef TRTL_TEST_COMMON_H
#define TRTL_TEST_COMMON_H

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t g_rng;        /* the generator's state: main() seeds it */
static char g_desc[512];      /* the case under test, as the failure messages print it */
static const char *volatile g_kernel_name = ""; /* the kernel under test (the fault handler names it) */

static inline uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

static inline int64_t rint_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1)); }

/* rank dims, each 1..9 (a third of them up to 40), redrawn until their product is at most maxvol. */
static inline void rand_dims(int rank, int64_t *d, int64_t maxvol)
{
    int64_t v;
    do {
        v = 1;
        for (int i = 0; i < rank; i++) {
            d[i] = rint_in(1, rnd() % 3 == 0 ? 40 : 9);
            v *= d[i];
        }
    } while (v > maxvol);
}

/* A copy of the `bytes` at x whose last byte is the last before an inaccessible page.  Only where the copy then
 * starts 64-byte aligned, as the arena's tensors do (bytes a multiple of 64); NULL otherwise or when mmap fails (the
 * caller keeps its own buffer).  guarded_free(copy, bytes, map_len) releases it. */
static inline void *guarded_copy(const void *x, size_t bytes, size_t *map_len)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!x || bytes == 0 || bytes % 64)
        return NULL;
    const size_t len = (bytes + page - 1) / page * page + page;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (mprotect(m + len - page, page, PROT_NONE) != 0) {
        munmap(m, len);
        return NULL;
    }
    char *g = m + len - page - bytes;
    memcpy(g, x, bytes);
    *map_len = len;
    return g;
}

static inline void guarded_free(void *g, size_t bytes, size_t map_len)
{
    if (!g)
        return;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    munmap((char *)g + bytes + page - map_len, map_len);
}

/* The fault handler: write(2) only (it runs on the faulting thread; stdout may hold unflushed lines), then exit
 * with the signal's status. */
static void test_on_fault(int sig)
{
    static const char head[] = "FAULT (a read or write past a tensor?) in ";
    ssize_t w = write(2, head, sizeof head - 1);
    w += write(2, g_kernel_name, strlen(g_kernel_name));
    w += write(2, " [", 2);
    w += write(2, g_desc, strnlen(g_desc, sizeof g_desc));
    w += write(2, "]\n", 2);
    (void)w;
    _exit(128 + sig);
}

static inline void test_install_fault_handler(void)
{
    signal(SIGSEGV, test_on_fault);
    signal(SIGBUS, test_on_fault);
}

#endif
