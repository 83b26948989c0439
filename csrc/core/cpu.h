/*
 * cpu.h -- what the kernel dispatch needs beyond trtl_cpu_features() (declared in trtlite.h).
 *
 * Features are detected once (thread-safe) and cached.  TRTL_CPU_MASK=<hex> in the environment
 * clears the bits it does not contain (read at first detection), so a test can force the
 * portable paths on a machine that has AVX2.
 */
#ifndef TRTL_CORE_CPU_H
#define TRTL_CORE_CPU_H

#include <stdint.h>
#include "trtlite/trtlite.h"

/* Nonzero when every bit of `need` is available. */
static inline int trtl_cpu_has(uint32_t need) { return (trtl_cpu_features() & need) == need; }

/* Restricts the reported features to `mask` (tests only; not thread-safe against kernels
 * running concurrently). */
void trtl_cpu_set_mask(uint32_t mask);

#endif
