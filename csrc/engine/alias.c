/* alias.c -- groups of activation tensors placed inside one another (concatenation elision);
 * contracts in alias.h. */
#include <stdlib.h>
#include <string.h>

#include "engine/alias.h"
#include "engine/engine.h"

trtl_status trtl_alias_init(trtl_alias *a, int32_t n, const int64_t *bytes)
{
    memset(a, 0, sizeof *a);
    size_t m = (size_t)(n > 0 ? n : 1);
    a->root = malloc(sizeof(int32_t) * m);
    a->delta = calloc(m, sizeof(int64_t));
    a->view = calloc(m, 1);
    if (!a->root || !a->delta || !a->view) {
        trtl_alias_free(a);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
    }
    a->n = n;
    a->bytes = bytes;
    for (int32_t i = 0; i < n; i++)
        a->root[i] = i;
    return TRTL_OK;
}

void trtl_alias_free(trtl_alias *a)
{
    free(a->root);
    free(a->delta);
    free(a->view);
    memset(a, 0, sizeof *a);
}

typedef struct span {
    int64_t lo, hi;
} span;

static int span_cmp(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* Where each merged root lands: slot[r] = 1 + index into at[], 0 for roots not merged. */
static int refuse(int32_t *slot, int64_t *at, span *sp)
{
    free(slot);
    free(at);
    free(sp);
    return 0;
}

int trtl_alias_concat(trtl_alias *a, int32_t out, const int32_t *in, const int64_t *off, int32_t n_in)
{
    int32_t n = a->n;
    if (out < 0 || out >= n || a->root[out] != out || a->view[out] || n_in < 1)
        return 0;
    for (int32_t t = 0; t < n; t++)
        if (t != out && a->root[t] == out)
            return 0; /* out already holds others: it is placed by an earlier concatenation */
    int32_t *slot = calloc((size_t)n, sizeof(int32_t));
    int64_t *at = malloc(sizeof(int64_t) * (size_t)n_in);
    span *sp = NULL;
    if (!slot || !at) {
        free(slot);
        free(at);
        return -1;
    }
    int32_t nr = 0;
    for (int32_t j = 0; j < n_in; j++) {
        int32_t x = in[j];
        if (x < 0 || x >= n || x == out || off[j] < 0)
            return refuse(slot, at, sp);
        int32_t r = a->root[x];
        int64_t want = off[j] - a->delta[x]; /* where r's origin lands in out */
        if (r == out)
            return refuse(slot, at, sp);
        if (slot[r]) {
            if (at[slot[r] - 1] != want)
                return refuse(slot, at, sp); /* placed twice at different offsets */
        } else {
            at[nr] = want;
            slot[r] = ++nr;
        }
    }
    /* The leaves of the merged group must not overlap. */
    int32_t nl = 0;
    for (int32_t t = 0; t < n; t++)
        nl += slot[a->root[t]] && !a->view[t] && a->bytes[t] > 0;
    sp = malloc(sizeof(span) * (size_t)(nl ? nl : 1));
    if (!sp) {
        free(slot);
        free(at);
        return -1;
    }
    int32_t k = 0;
    for (int32_t t = 0; t < n; t++)
        if (slot[a->root[t]] && !a->view[t] && a->bytes[t] > 0) {
            int64_t lo = a->delta[t] + at[slot[a->root[t]] - 1];
            sp[k++] = (span){lo, lo + a->bytes[t]};
        }
    qsort(sp, (size_t)nl, sizeof *sp, span_cmp);
    for (int32_t i = 1; i < nl; i++)
        if (sp[i].lo < sp[i - 1].hi)
            return refuse(slot, at, sp);
    for (int32_t t = 0; t < n; t++) {
        int32_t s = slot[a->root[t]];
        if (s) {
            a->delta[t] += at[s - 1];
            a->root[t] = out;
        }
    }
    a->view[out] = 1;
    free(slot);
    free(at);
    free(sp);
    return 1;
}

int64_t trtl_alias_memplan(const trtl_alias *a, const int64_t *bytes, const int32_t *first, const int32_t *last,
                           int64_t *offsets)
{
    int32_t n = a->n;
    size_t m = (size_t)(n > 0 ? n : 1);
    int64_t *pb = calloc(m, sizeof(int64_t)), *lo = calloc(m, sizeof(int64_t));
    int32_t *pf = calloc(m, sizeof(int32_t)), *pl = calloc(m, sizeof(int32_t));
    int64_t total = -1;
    if (!pb || !lo || !pf || !pl)
        goto done;
    for (int32_t i = 0; i < n; i++) {
        pb[i] = a->root[i] == i ? bytes[i] : -1;
        pf[i] = first[i];
        pl[i] = last[i];
        lo[i] = 0;
    }
    /* A group's block: from its lowest member byte to its highest, live while any member is. */
    for (int32_t t = 0; t < n; t++) {
        int32_t r = a->root[t];
        if (r == t || bytes[t] < 0 || first[t] < 0)
            continue;
        if (a->delta[t] < lo[r]) {
            pb[r] += lo[r] - a->delta[t];
            lo[r] = a->delta[t];
        }
        if (a->delta[t] + bytes[t] > lo[r] + pb[r])
            pb[r] = a->delta[t] + bytes[t] - lo[r];
        if (pf[r] < 0 || first[t] < pf[r])
            pf[r] = first[t];
        if (last[t] > pl[r])
            pl[r] = last[t];
    }
    total = trtl_memplan(n, pb, pf, pl, offsets);
    if (total < 0)
        goto done;
    for (int32_t t = 0; t < n; t++) {
        int32_t r = a->root[t];
        if (r != t)
            offsets[t] = offsets[r] >= 0 && bytes[t] >= 0 && first[t] >= 0 ? offsets[r] + a->delta[t] - lo[r] : -1;
    }
    for (int32_t t = 0; t < n; t++)
        if (a->root[t] == t && offsets[t] >= 0)
            offsets[t] -= lo[t];
done:
    free(pb);
    free(lo);
    free(pf);
    free(pl);
    return total;
}

int trtl_alias_view(trtl_alias *a, int32_t out, int32_t in, int64_t off)
{
    int32_t n = a->n;
    if (out < 0 || out >= n || in < 0 || in >= n || in == out || a->root[out] != out || a->view[out] || off < 0)
        return 0;
    for (int32_t t = 0; t < n; t++)
        if (t != out && a->root[t] == out)
            return 0;
    a->root[out] = a->root[in];
    a->delta[out] = a->delta[in] + off;
    a->view[out] = 1;
    return 1;
}
