/* cpu.c -- CPU feature detection for kernel dispatch (cached after the first call). */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/cpu.h"

/* Bit 31 marks "detected"; the feature bits live below it. */
#define DETECTED (1u << 31)

static _Atomic uint32_t g_features;
static _Atomic uint32_t g_mask = ~0u;

static uint32_t detect(void)
{
    uint32_t f = 0;
#if defined(__x86_64__) || defined(__i386__)
    /* libgcc's checks include the OS's XSAVE state (XCR0) for the AVX and AVX-512 registers. */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.1"))
        f |= TRTL_CPU_SSE41;
    if (__builtin_cpu_supports("avx"))
        f |= TRTL_CPU_AVX;
    if (__builtin_cpu_supports("avx2"))
        f |= TRTL_CPU_AVX2;
    if (__builtin_cpu_supports("fma"))
        f |= TRTL_CPU_FMA;
    if (__builtin_cpu_supports("f16c"))
        f |= TRTL_CPU_F16C;
    if (__builtin_cpu_supports("avx512f"))
        f |= TRTL_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw"))
        f |= TRTL_CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vnni"))
        f |= TRTL_CPU_AVX512VNNI;
    if (__builtin_cpu_supports("avxvnni"))
        f |= TRTL_CPU_AVXVNNI;
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
