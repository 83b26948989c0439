/* crc32.h -- CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320, as zlib.crc32) of n bytes: the
 * checksum of plans (serialize/plan.h) and timing caches (builder/timing_cache.h). */
#ifndef TRTL_CORE_CRC32_H
#define TRTL_CORE_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t trtl_crc32(const void *data, size_t n);

#endif
