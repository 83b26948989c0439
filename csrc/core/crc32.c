/* crc32.c -- CRC-32 (IEEE) for plan and timing-cache checksums; tables built on first use.
 *
 * Slicing by 8: table[k][b] is the CRC contribution of byte b followed by k zero bytes, so eight
 * input bytes fold into the running value with eight independent lookups instead of a chain of
 * eight dependent ones (a plan's checksum covers every weight: ~100 MB for ResNet-50, where the
 * byte-at-a-time loop was most of the time build_serialized_network spent serializing). */
#include <pthread.h>
#include <string.h>

#include "core/crc32.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (uint32_t i = 0; i < 256; i++)
            table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFFu];
}

uint32_t trtl_crc32(const void *data, size_t n)
{
    pthread_once(&table_once, build_table);
    const uint8_t *p = data;
    uint32_t c = 0xFFFFFFFFu;
    /* 8 bytes a step, read as two little-endian words (the host is little-endian: plans check it). */
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
        lo ^= c;
        c = table[7][lo & 0xFFu] ^ table[6][(lo >> 8) & 0xFFu] ^ table[5][(lo >> 16) & 0xFFu] ^ table[4][lo >> 24] ^
            table[3][hi & 0xFFu] ^ table[2][(hi >> 8) & 0xFFu] ^ table[1][(hi >> 16) & 0xFFu] ^ table[0][hi >> 24];
    }
    for (; n; n--, p++)
        c = table[0][(c ^ *p) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}
