/* cpu.c -- CPU feature detection for kernel dispatch (cached after the first call). */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Bit 31 marks "detected"; the feature bits live below it. */
#define DETECTED (1u << 31)

static _Atomic uint32_t g_features;
static _Atomic uint32_t g_mask = ~0u;

#if defined(__x86_64__) || defined(__i386__)
/* CPUID leaf/subleaf -> eax, ebx, ecx, edx (zeros above the highest leaf the CPU reports). */
static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    r[0] = r[1] = r[2] = r[3] = 0;
    if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]))
        r[0] = r[1] = r[2] = r[3] = 0;
}

/* XCR0: which register states the OS saves on a context switch (valid only when CPUID says OSXSAVE). */
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* Linux hands out the 8 KiB tile state only to a process that asks (arch_prctl ARCH_REQ_XCOMP_PERM for
 * XFEATURE_XTILEDATA, once per process, inherited by every thread); a tile instruction without it
 * is SIGILL.  Asked here, at detection: AMX counts only when the kernel grants it. */
#if defined(__x86_64__) || defined(__i386__)
static int amx_permitted(void)
{
#if defined(__linux__) && defined(__x86_64__)
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    return 0;
#endif
}
#endif

/* CPUID and XGETBV read directly (not __builtin_cpu_supports, whose feature names differ between gcc and clang:
 * clang 14 rejects "f16c").  As libgcc does, the AVX family counts only when the OS saves the YMM registers
 * (XCR0 bits 1-2), and AVX-512 only when it saves the opmask and ZMM registers too (bits 5-7); AMX
 * needs the tile configuration and data states (bits 17-18) and the permission above. */
static uint32_t detect(void)
{
    uint32_t f = 0;
#if defined(__x86_64__) || defined(__i386__)
    uint32_t l1[4], l7[4], l71[4];
    cpuid(0, 0, l1);
    uint32_t max_leaf = l1[0];
    cpuid(1, 0, l1);
    if (max_leaf >= 7) {
        cpuid(7, 0, l7);
        cpuid(7, 1, l71);
    } else {
        l7[0] = l7[1] = l7[2] = l7[3] = 0;
        l71[0] = l71[1] = l71[2] = l71[3] = 0;
    }
    const uint32_t ecx1 = l1[2], ebx7 = l7[1], ecx7 = l7[2], edx7 = l7[3], eax71 = l71[0];
    uint64_t xcr0 = (ecx1 >> 27) & 1 ? xgetbv0() : 0; /* OSXSAVE */
    const int ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
    if ((ecx1 >> 19) & 1)
        f |= TRTL_CPU_SSE41;
    if (ymm && (ecx1 >> 28) & 1)
        f |= TRTL_CPU_AVX;
    if (ymm && (ebx7 >> 5) & 1)
        f |= TRTL_CPU_AVX2;
    if (ymm && (ecx1 >> 12) & 1)
        f |= TRTL_CPU_FMA;
    if (ymm && (ecx1 >> 29) & 1)
        f |= TRTL_CPU_F16C;
    if (zmm && (ebx7 >> 16) & 1)
        f |= TRTL_CPU_AVX512F;
    if (zmm && (ebx7 >> 30) & 1)
        f |= TRTL_CPU_AVX512BW;
    if (zmm && (ecx7 >> 11) & 1)
        f |= TRTL_CPU_AVX512VNNI;
    if (zmm && (eax71 >> 5) & 1)
        f |= TRTL_CPU_AVX512BF16;
    if (ymm && (eax71 >> 4) & 1)
        f |= TRTL_CPU_AVXVNNI;
    if ((edx7 >> 24) & 1 && (xcr0 & 0x60000) == 0x60000 && amx_permitted())
        f |= TRTL_CPU_AMX_TILE | ((edx7 >> 22) & 1 ? TRTL_CPU_AMX_BF16 : 0) | ((edx7 >> 25) & 1 ? TRTL_CPU_AMX_INT8 : 0);
#endif
    const char *env = getenv("TRTL_CPU_MASK");
    if (env && *env)
        f &= (uint32_t)strtoul(env, NULL, 16);
    return f;
}

uint32_t trtl_cpu_features(void)
{
    uint32_t f = atomic_load_explicit(&g_features, memory_order_relaxed);
    if (!(f & DETECTED)) {
        /* Racing first callers compute the same value; storing it twice is harmless. */
        f = detect() | DETECTED;
        atomic_store_explicit(&g_features, f, memory_order_relaxed);
    }
    return f & ~DETECTED & atomic_load_explicit(&g_mask, memory_order_relaxed);
}

void trtl_cpu_set_mask(uint32_t mask) { atomic_store_explicit(&g_mask, mask, memory_order_relaxed); }
