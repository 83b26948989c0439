/*
 * namemap.h -- string -> pointer map (open addressing, linear probing, tombstones).
 * Keys are borrowed: the caller keeps each key string alive (and unchanged) while it is in the
 * map, e.g. the tensor's own name.  Not thread-safe (a network is used by one thread at a time).
 */
#ifndef TRTL_CORE_NAMEMAP_H
#define TRTL_CORE_NAMEMAP_H

#include <stddef.h>

typedef struct trtl_namemap {
    const char **keys;
    void **vals;
    size_t cap;   /* power of two, 0 when empty */
    size_t used;  /* live entries + tombstones */
    size_t live;
} trtl_namemap;

void *trtl_namemap_get(const trtl_namemap *m, const char *key);
/* Inserts or replaces; 0 on out-of-memory. */
int trtl_namemap_put(trtl_namemap *m, const char *key, void *val);
/* Removes `key` if it maps to `val`. */
void trtl_namemap_del(trtl_namemap *m, const char *key, const void *val);
void trtl_namemap_free(trtl_namemap *m);

#endif
