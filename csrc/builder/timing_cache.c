/* timing_cache.c -- the timing cache: entries, CPU identity, serialization (format in
 * timing_cache.h), combine and the mismatch checks. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "builder/timing_cache.h"
#include "builder/config.h"
#include "core/crc32.h"
#include "core/status.h"
#include "core/threadpool.h"

typedef struct tc_entry {
    int32_t cpu;     /* index into the cache's identities */
    int32_t threads;
    char *key;
    uint64_t hash;
    double ms;
} tc_entry;

struct trtl_timing_cache {
    _Atomic int refs;
    pthread_mutex_t lock;
    char **cpus;                /* CPU identities the entries refer to */
    int32_t n_cpus;
    tc_entry *e;                /* in insertion order */
    int64_t n, cap;
    int64_t *slots;             /* open addressing: entry index + 1, 0 = empty */
    int64_t n_slots;            /* a power of two, > 2 n */
};

/* ---- CPU identity ---------------------------------------------------------------------------- */

static char g_identity[256];
static pthread_once_t g_identity_once = PTHREAD_ONCE_INIT;

static void make_identity(void)
{
    char vendor[13] = "unknown";
    unsigned family = 0, model = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
        vendor[12] = '\0';
    }
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        family = (a >> 8) & 0xfu;
        model = (a >> 4) & 0xfu;
        if (family == 0xfu)
            family += (a >> 20) & 0xffu;
        if (family == 0x6u || family >= 0xfu)
            model |= ((a >> 16) & 0xfu) << 4;
    }
#endif
    static const struct { uint32_t bit; const char *name; } names[] = {
        {TRTL_CPU_SSE41, "sse4.1"}, {TRTL_CPU_AVX, "avx"}, {TRTL_CPU_AVX2, "avx2"}, {TRTL_CPU_FMA, "fma"},
        {TRTL_CPU_F16C, "f16c"}, {TRTL_CPU_AVX512F, "avx512f"}, {TRTL_CPU_AVX512BW, "avx512bw"},
        {TRTL_CPU_AVX512VNNI, "avx512vnni"}};
    uint32_t f = trtl_cpu_features();
    int len = snprintf(g_identity, sizeof g_identity, "%s family %u model %u features", vendor, family, model);
    for (size_t i = 0; i < sizeof names / sizeof names[0] && len > 0 && (size_t)len < sizeof g_identity; i++)
        if (f & names[i].bit)
            len += snprintf(g_identity + len, sizeof g_identity - (size_t)len, " %s", names[i].name);
    if (!(f & names[0].bit) && len > 0 && (size_t)len < sizeof g_identity)
        snprintf(g_identity + len, sizeof g_identity - (size_t)len, " none");
}

const char *trtl_tc_cpu_identity(void)
{
    pthread_once(&g_identity_once, make_identity);
    return g_identity;
}

/* ---- entries (lock held by the callers) ------------------------------------------------------ */

static uint64_t hash_of(int32_t cpu, int32_t threads, const char *key)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uint32_t)cpu ^ ((uint64_t)(uint32_t)threads << 32);
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ? h : 1;
}

static int64_t find(const trtl_timing_cache *c, int32_t cpu, int32_t threads, const char *key, uint64_t h)
{
    if (!c->n_slots)
        return -1;
    for (int64_t s = (int64_t)(h & (uint64_t)(c->n_slots - 1));; s = (s + 1) & (c->n_slots - 1)) {
        int64_t i = c->slots[s] - 1;
        if (i < 0)
            return -1;
        const tc_entry *e = &c->e[i];
        if (e->hash == h && e->cpu == cpu && e->threads == threads && strcmp(e->key, key) == 0)
            return i;
    }
}

static void place(trtl_timing_cache *c, int64_t i)
{
    int64_t s = (int64_t)(c->e[i].hash & (uint64_t)(c->n_slots - 1));
    while (c->slots[s])
        s = (s + 1) & (c->n_slots - 1);
    c->slots[s] = i + 1;
}

/* Index of identity `id` in c, added if absent; -1 when out of memory or over the limit. */
static int32_t cpu_index(trtl_timing_cache *c, const char *id)
{
    for (int32_t i = 0; i < c->n_cpus; i++)
        if (strcmp(c->cpus[i], id) == 0)
            return i;
    if (c->n_cpus >= TRTL_TC_MAX_CPUS)
        return -1;
    char **nc = realloc(c->cpus, sizeof *nc * (size_t)(c->n_cpus + 1));
    if (!nc)
        return -1;
    c->cpus = nc;
    if (!(c->cpus[c->n_cpus] = strdup(id)))
        return -1;
    return c->n_cpus++;
}

/* Adds an entry (key copied) unless its key is present: 1 added, 0 present, -1 out of memory. */
static int add(trtl_timing_cache *c, int32_t cpu, int32_t threads, const char *key, double ms)
{
    uint64_t h = hash_of(cpu, threads, key);
    if (find(c, cpu, threads, key, h) >= 0)
        return 0;
    if (c->n == c->cap) {
        int64_t ncap = c->cap ? 2 * c->cap : 64;
        tc_entry *ne = realloc(c->e, sizeof *ne * (size_t)ncap);
        if (!ne)
            return -1;
        c->e = ne;
        c->cap = ncap;
    }
    if (2 * (c->n + 1) >= c->n_slots) {
        int64_t ns = c->n_slots ? 2 * c->n_slots : 256;
        int64_t *slots = calloc((size_t)ns, sizeof *slots);
        if (!slots)
            return -1;
        free(c->slots);
        c->slots = slots;
        c->n_slots = ns;
        for (int64_t i = 0; i < c->n; i++)
            place(c, i);
    }
    char *k = strdup(key);
    if (!k)
        return -1;
    c->e[c->n] = (tc_entry){cpu, threads, k, h, ms};
    place(c, c->n++);
    return 1;
}

static void clear(trtl_timing_cache *c)
{
    for (int64_t i = 0; i < c->n; i++)
        free(c->e[i].key);
    for (int32_t i = 0; i < c->n_cpus; i++)
        free(c->cpus[i]);
    free(c->e);
    free(c->slots);
    free(c->cpus);
    c->e = NULL;
    c->slots = NULL;
    c->cpus = NULL;
    c->n = c->cap = c->n_slots = 0;
    c->n_cpus = 0;
}

/* ---- serialized form ------------------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t n, off;
} rd;

static int rd_take(rd *r, void *dst, size_t len)
{
    if (len > r->n - r->off)
        return 0;
    memcpy(dst, r->p + r->off, len);
    r->off += len;
    return 1;
}

/* A str of the format into buf (NUL-terminated); 0 with a message naming `what` on failure. */
static int rd_str(rd *r, char *buf, const char *what, int64_t idx)
{
    uint32_t len;
    if (!rd_take(r, &len, 4) || len == 0 || len >= TRTL_TC_KEY_MAX || len > r->n - r->off) {
        trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: %s %lld: bad or truncated string (payload byte %zu)", what,
                   (long long)idx, r->off);
        return 0;
    }
    rd_take(r, buf, len);
    buf[len] = '\0';
    if (memchr(buf, '\0', len) || !trtl_utf8_valid(buf, len)) {
        trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: %s %lld: not a valid UTF-8 string", what, (long long)idx);
        return 0;
    }
    return 1;
}

static trtl_status load(trtl_timing_cache *c, const uint8_t *p, size_t size)
{
    if (size < TRTL_TC_HEADER_SIZE)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: %zu bytes is shorter than its %u-byte header "
                          "(truncated, or not a trtlite timing cache)", size, TRTL_TC_HEADER_SIZE);
    if (memcmp(p, TRTL_TC_MAGIC, 8) != 0)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: bad magic (not a trtlite timing cache; "
                          "a plan or another tool's cache?)");
    uint32_t version, hsize, crc, want;
    uint64_t payload;
    memcpy(&version, p + 8, 4);
    memcpy(&hsize, p + 12, 4);
    memcpy(&payload, p + 16, 8);
    memcpy(&crc, p + 24, 4);
    if (hsize != TRTL_TC_HEADER_SIZE)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: header size %u, expected %u", hsize,
                          TRTL_TC_HEADER_SIZE);
    if (version != TRTL_TC_VERSION)
        return trtl_error(TRTL_ERR_VERSION, "timing cache: format version %u, this trtlite reads version %u "
                          "(rebuild the cache)", version, TRTL_TC_VERSION);
    if (payload != size - TRTL_TC_HEADER_SIZE)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: header says %llu payload bytes, %zu follow "
                          "(truncated or padded)", (unsigned long long)payload, size - TRTL_TC_HEADER_SIZE);
    if ((want = trtl_crc32(p + TRTL_TC_HEADER_SIZE, (size_t)payload)) != crc)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: checksum mismatch (stored 0x%08x, computed 0x%08x): "
                          "the bytes are corrupt", crc, want);
    rd r = {p + TRTL_TC_HEADER_SIZE, (size_t)payload, 0};
    char buf[TRTL_TC_KEY_MAX];
    uint32_t n_cpus = 0, n_entries = 0;
    if (!rd_take(&r, &n_cpus, 4) || n_cpus > TRTL_TC_MAX_CPUS)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: %u CPU identities (at most %d)", n_cpus,
                          TRTL_TC_MAX_CPUS);
    for (uint32_t i = 0; i < n_cpus; i++) {
        if (!rd_str(&r, buf, "CPU identity", i))
            return trtl_last_status();
        int32_t got = cpu_index(c, buf);
        if (got < 0)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
        if (got != (int32_t)i)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: CPU identity %u repeats identity %d", i, (int)got);
    }
    if (!rd_take(&r, &n_entries, 4))
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: truncated before the entry count");
    for (uint32_t i = 0; i < n_entries; i++) {
        uint32_t cpu, threads;
        double ms;
        if (!rd_take(&r, &cpu, 4) || !rd_take(&r, &threads, 4))
            return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: entry %u of %u: truncated", i, n_entries);
        if (cpu >= n_cpus)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: entry %u: CPU index %u, there are %u", i, cpu,
                              n_cpus);
        if (threads < 1 || threads > TRTL_MAX_THREADS)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: entry %u: thread count %u (1..%d)", i, threads,
                              TRTL_MAX_THREADS);
        if (!rd_str(&r, buf, "entry", i))
            return trtl_last_status();
        if (!rd_take(&r, &ms, 8))
            return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: entry %u: truncated", i);
        if (!isfinite(ms) || ms < -1.0 || ms > 1e9)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: entry %u: time %g ms is not a timing", i, ms);
        if (add(c, (int32_t)cpu, (int32_t)threads, buf, ms < 0 ? -1.0 : ms) < 0)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    }
    if (r.off != r.n)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "timing cache: %zu bytes after the last entry", r.n - r.off);
    return TRTL_OK;
}

typedef struct wr {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wr;

static void put(wr *w, const void *src, size_t len)
{
    if (w->oom)
        return;
    if (w->n + len > w->cap) {
        size_t nc = w->cap ? w->cap : 4096;
        while (nc < w->n + len)
            nc *= 2;
        uint8_t *np = realloc(w->p, nc);
        if (!np) {
            w->oom = 1;
            return;
        }
        w->p = np;
        w->cap = nc;
    }
    memcpy(w->p + w->n, src, len);
    w->n += len;
}

static void put_u32(wr *w, uint32_t v) { put(w, &v, 4); }
static void put_str(wr *w, const char *s)
{
    put_u32(w, (uint32_t)strlen(s));
    put(w, s, strlen(s));
}

/* ---- public API ------------------------------------------------------------------------------ */

trtl_status trtl_timing_cache_create(const void *data, size_t size, trtl_timing_cache **out)
{
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    *out = NULL;
    if (size && !data)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "trtl_timing_cache_create: data is NULL with size %zu", size);
    trtl_timing_cache *c = calloc(1, sizeof *c);
    if (!c)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "timing cache: out of memory");
    atomic_init(&c->refs, 1);
    pthread_mutex_init(&c->lock, NULL);
    if (size) {
        trtl_status st = load(c, data, size);
        if (st != TRTL_OK) {
            trtl_timing_cache_destroy(c);
            return st;
        }
    }
    *out = c;
    return TRTL_OK;
}

void trtl_timing_cache_retain(trtl_timing_cache *c)
{
    if (c)
        atomic_fetch_add(&c->refs, 1);
}

void trtl_timing_cache_destroy(trtl_timing_cache *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    clear(c);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

trtl_status trtl_timing_cache_serialize(trtl_timing_cache *c, void **data, size_t *size)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(size);
    trtl_clear_error();
    wr w = {0};
    uint8_t header[TRTL_TC_HEADER_SIZE] = {0};
    put(&w, header, sizeof header);
    pthread_mutex_lock(&c->lock);
    put_u32(&w, (uint32_t)c->n_cpus);
    for (int32_t i = 0; i < c->n_cpus; i++)
        put_str(&w, c->cpus[i]);
    put_u32(&w, (uint32_t)c->n);
    for (int64_t i = 0; i < c->n; i++) {
        put_u32(&w, (uint32_t)c->e[i].cpu);
        put_u32(&w, (uint32_t)c->e[i].threads);
        put_str(&w, c->e[i].key);
        put(&w, &c->e[i].ms, 8);
    }
    pthread_mutex_unlock(&c->lock);
    if (w.oom) {
        free(w.p);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "timing cache: out of memory while serializing");
    }
    uint32_t version = TRTL_TC_VERSION, hsize = TRTL_TC_HEADER_SIZE;
    uint64_t payload = w.n - TRTL_TC_HEADER_SIZE;
    uint32_t crc = trtl_crc32(w.p + TRTL_TC_HEADER_SIZE, (size_t)payload);
    memcpy(w.p, TRTL_TC_MAGIC, 8);
    memcpy(w.p + 8, &version, 4);
    memcpy(w.p + 12, &hsize, 4);
    memcpy(w.p + 16, &payload, 8);
    memcpy(w.p + 24, &crc, 4);
    *data = w.p;
    *size = w.n;
    return TRTL_OK;
}

int64_t trtl_timing_cache_num_entries(trtl_timing_cache *c)
{
    TRTL_NULL_GIVES(c, 0);
    pthread_mutex_lock(&c->lock);
    int64_t n = c->n;
    pthread_mutex_unlock(&c->lock);
    return n;
}

trtl_status trtl_timing_cache_reset(trtl_timing_cache *c)
{
    TRTL_CHECK_ARG(c);
    pthread_mutex_lock(&c->lock);
    clear(c);
    pthread_mutex_unlock(&c->lock);
    return TRTL_OK;
}

/* TRTL_ERR_CPU naming the first foreign identity of c, or TRTL_OK (lock held). */
static trtl_status check_cpus(const trtl_timing_cache *c, const char *what)
{
    const char *me = trtl_tc_cpu_identity();
    for (int64_t i = 0; i < c->n; i++)
        if (strcmp(c->cpus[c->e[i].cpu], me) != 0)
            return trtl_error(TRTL_ERR_CPU, "%s: timing cache mismatch: it holds timings made on another CPU ('%s'; "
                              "this one is '%s'); pass ignore_mismatch=True to use only the timings that match",
                              what, c->cpus[c->e[i].cpu], me);
    return TRTL_OK;
}

trtl_status trtl_timing_cache_check(trtl_timing_cache *c, int32_t threads)
{
    TRTL_CHECK_ARG(c);
    trtl_clear_error();
    pthread_mutex_lock(&c->lock);
    trtl_status st = check_cpus(c, "set_timing_cache");
    if (st == TRTL_OK && threads > 0 && c->n > 0) {
        int32_t other = 0;
        int found = 0;
        for (int64_t i = 0; i < c->n && !found; i++) {
            found = c->e[i].threads == threads;
            other = c->e[i].threads;
        }
        if (!found)
            st = trtl_error(TRTL_ERR_CPU, "set_timing_cache: timing cache mismatch: its timings were made with %d "
                            "threads (and none with this config's %d); pass ignore_mismatch=True to use only the "
                            "timings that match", (int)other, (int)threads);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

trtl_status trtl_timing_cache_combine(trtl_timing_cache *c, trtl_timing_cache *other, int ignore_mismatch)
{
    TRTL_CHECK_ARG(c);
    TRTL_CHECK_ARG(other);
    trtl_clear_error();
    if (c == other)
        return TRTL_OK;
    /* Lock in address order so that a.combine(b) and b.combine(a) on two threads cannot deadlock. */
    trtl_timing_cache *first = c < other ? c : other, *second = c < other ? other : c;
    pthread_mutex_lock(&first->lock);
    pthread_mutex_lock(&second->lock);
    trtl_status st = ignore_mismatch ? TRTL_OK : check_cpus(other, "combine");
    for (int64_t i = 0; st == TRTL_OK && i < other->n; i++) {
        const tc_entry *e = &other->e[i];
        int32_t cpu = cpu_index(c, other->cpus[e->cpu]);
        if (cpu < 0 || add(c, cpu, e->threads, e->key, e->ms) < 0)
            st = trtl_error(cpu < 0 && c->n_cpus >= TRTL_TC_MAX_CPUS ? TRTL_ERR_INVALID_ARGUMENT
                                                                     : TRTL_ERR_OUT_OF_MEMORY,
                            "combine: %s", cpu < 0 && c->n_cpus >= TRTL_TC_MAX_CPUS
                                               ? "the timing cache would hold more than 256 CPU identities"
                                               : "out of memory");
    }
    pthread_mutex_unlock(&second->lock);
    pthread_mutex_unlock(&first->lock);
    return st;
}

/* ---- what kernel selection uses ---------------------------------------------------------------- */

static trtl_timing_cache *g_default;
static pthread_once_t g_default_once = PTHREAD_ONCE_INIT;

static void make_default(void)
{
    if (trtl_timing_cache_create(NULL, 0, &g_default) != TRTL_OK)
        g_default = NULL;
}

trtl_timing_cache *trtl_tc_process_default(void)
{
    pthread_once(&g_default_once, make_default);
    return g_default;
}

int trtl_tc_lookup(trtl_timing_cache *c, int32_t threads, const char *key, double *ms)
{
    const char *me = trtl_tc_cpu_identity();
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (int32_t cpu = 0; cpu < c->n_cpus && !found; cpu++)
        if (strcmp(c->cpus[cpu], me) == 0) {
            int64_t i = find(c, cpu, threads, key, hash_of(cpu, threads, key));
            if (i >= 0) {
                *ms = c->e[i].ms;
                found = 1;
            }
            break;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
}

int trtl_tc_insert(trtl_timing_cache *c, int32_t threads, const char *key, double ms)
{
    if (threads < 1 || threads > TRTL_MAX_THREADS || !key[0] || strlen(key) >= TRTL_TC_KEY_MAX)
        return 0;
    pthread_mutex_lock(&c->lock);
    int32_t cpu = cpu_index(c, trtl_tc_cpu_identity());
    int r = cpu >= 0 && add(c, cpu, threads, key, ms < 0 ? -1.0 : ms) >= 0;
    pthread_mutex_unlock(&c->lock);
    return r;
}

/* ---- the config's cache ------------------------------------------------------------------------ */

trtl_status trtl_builder_config_set_timing_cache(trtl_builder_config *cfg, trtl_timing_cache *c, int ignore_mismatch)
{
    TRTL_CHECK_ARG(cfg);
    trtl_clear_error();
    if (c && !ignore_mismatch)
        TRTL_TRY(trtl_timing_cache_check(c, trtl_tc_build_threads(cfg)));
    trtl_timing_cache_retain(c);
    trtl_timing_cache_destroy(cfg->timing_cache);
    cfg->timing_cache = c;
    return TRTL_OK;
}

trtl_timing_cache *trtl_builder_config_timing_cache(const trtl_builder_config *cfg)
{
    TRTL_NULL_GIVES(cfg, NULL);
    return cfg->timing_cache;
}

int32_t trtl_tc_build_threads(const trtl_builder_config *cfg)
{
    int32_t n = cfg->num_threads > 0 ? cfg->num_threads : trtl_available_cpus();
    return n < 1 ? 1 : n > TRTL_MAX_THREADS ? TRTL_MAX_THREADS : n;
}
