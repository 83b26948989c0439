/* namemap.c -- string -> pointer map used for tensor names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/namemap.h"

static const char tombstone[1];

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void *trtl_namemap_get(const trtl_namemap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k)
            return NULL;
        if (k != tombstone && strcmp(k, key) == 0)
            return m->vals[i];
    }
}

static int grow(trtl_namemap *m)
{
    size_t nc = m->cap ? (m->live * 4 > m->cap ? m->cap * 2 : m->cap) : 64;
    const char **keys = calloc(nc, sizeof *keys);
    void **vals = calloc(nc, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return 0;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i] || m->keys[i] == tombstone)
            continue;
        size_t j = hash(m->keys[i]) & (nc - 1);
        while (keys[j])
            j = (j + 1) & (nc - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = nc;
    m->used = m->live;
    return 1;
}

int trtl_namemap_put(trtl_namemap *m, const char *key, void *val)
{
    if ((m->used + 1) * 2 > m->cap && !grow(m))
        return 0;
    size_t slot = SIZE_MAX;
    for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k) {
            if (slot == SIZE_MAX) {
                slot = i;
                m->used++;
            }
            break;
        }
        if (k == tombstone) {
            if (slot == SIZE_MAX)
                slot = i;
        } else if (strcmp(k, key) == 0) {
            m->keys[i] = key;
            m->vals[i] = val;
            return 1;
        }
    }
    m->keys[slot] = key;
    m->vals[slot] = val;
    m->live++;
    return 1;
}

void trtl_namemap_del(trtl_namemap *m, const char *key, const void *val)
{
    if (!m->cap)
        return;
    for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k)
            return;
        if (k != tombstone && strcmp(k, key) == 0) {
            if (m->vals[i] == val) {
                m->keys[i] = tombstone;
                m->vals[i] = NULL;
                m->live--;
            }
            return;
        }
    }
}

void trtl_namemap_free(trtl_namemap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
