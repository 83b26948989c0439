/*
 * timing_cache.h -- the builder's timing cache (TensorRT's ITimingCache): how long each candidate
 * kernel took on a node, so that a rebuild times nothing.  Public calls: trtlite.h
 * (trtl_timing_cache_*); this header is what kernel selection (select.c) uses.
 *
 * An entry is keyed by (CPU identity, thread count, key) where the key is the kernel name and the
 * node signature select.c writes (op, attributes, dims at the opt shape, dtypes, epilogue).  The CPU
 * identity (trtl_tc_cpu_identity) names the vendor, family, model and the TRTL_CPU_* features the
 * kernels dispatch on (after TRTL_CPU_MASK), so an entry timed on another CPU, or with another
 * thread count, is never read by a build it does not describe.  Entries keep their insertion
 * order, so serializing is deterministic.
 *
 * Serialized format, version 1 (little-endian):
 *
 *   header, 32 bytes
 *     0  char[8]  magic "TRTLTCCH"
 *     8  u32      format version (TRTL_TC_VERSION)
 *    12  u32      header size (32)
 *    16  u64      payload size in bytes
 *    24  u32      CRC-32 of the payload (serialize/crc32.c, as plans)
 *    28  u32      reserved, zero
 *   payload
 *     u32 n_cpus, per CPU identity: str identity                 (at most TRTL_TC_MAX_CPUS)
 *     u32 n_entries, per entry: u32 cpu index, u32 threads, str key, f64 ms
 *   where str = u32 length + bytes (no NUL; 1..TRTL_TC_KEY_MAX-1 bytes, no NUL inside)
 *
 * ms < 0 records a kernel that failed on that node (it is not timed again either).  Loading
 * checks, in order: size >= header (or exactly 0: an empty cache), magic, header size, version,
 * payload size against the buffer, CRC, then every count, index, length and value against the
 * remaining bytes; trailing payload bytes are an error.  A duplicate key keeps its first value.
 *
 * Thread-safety: every call takes the cache's mutex, so builds on several threads may share one
 * cache.  The cache is reference counted (a builder config holds one reference).
 */
#ifndef TRTL_BUILDER_TIMING_CACHE_H
#define TRTL_BUILDER_TIMING_CACHE_H

#include "trtlite/trtlite.h"

#define TRTL_TC_MAGIC "TRTLTCCH"
#define TRTL_TC_VERSION 1u
#define TRTL_TC_HEADER_SIZE 32u
#define TRTL_TC_KEY_MAX 1024
#define TRTL_TC_MAX_CPUS 256

/* This process's CPU identity (static storage, computed once). */
const char *trtl_tc_cpu_identity(void);

/* The cache a build uses when its config has none (process-wide, never freed). */
trtl_timing_cache *trtl_tc_process_default(void);

/* The thread count a build with cfg times kernels with (the key's thread count). */
int32_t trtl_tc_build_threads(const trtl_builder_config *cfg);

/* The ms recorded for (this CPU, threads, key): 1 and *ms set if found, else 0. */
int trtl_tc_lookup(trtl_timing_cache *c, int32_t threads, const char *key, double *ms);
/* Records ms for (this CPU, threads, key) unless present.  Out of memory only drops the entry
 * (a cache is an optimization): returns 0 then, else 1. */
int trtl_tc_insert(trtl_timing_cache *c, int32_t threads, const char *key, double ms);

#endif
