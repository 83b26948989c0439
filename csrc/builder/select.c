/* select.c -- kernel choice per node ("tactics").  Candidates come from the kernel registry,
 * filtered by CPU features and applies(); when several remain and timing is enabled, they are
 * timed on the node's opt shapes in alternating rounds and the fastest kept, a near-tie (within
 * 3%) going to the first in registry order (see "timing" below).  Timings go to the timing cache
 * (builder/timing_cache.h: the config's, else a process-wide one; none with
 * BuilderFlag.DISABLE_TIMING_CACHE) keyed by (kernel, node signature, threads, CPU), so that a
 * rebuild, or a node identical to one timed before in the same build, times nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <stdatomic.h>

#include "builder/graph.h"
#include "builder/config.h"
#include "builder/timing_cache.h"
#include "builder/select_hook.h"
#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "kernels/registry.h"
#include "kernels/qlinear_fp32.h"
#include "network/op_table.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/cpu.h"

#define MAX_CANDIDATES TRTL_KERNELS_PER_OP_MAX /* per op, the reference included (kernels/registry.h) */
#define KEY_MAX TRTL_TC_KEY_MAX

static size_t put_dims(char *buf, size_t n, const trtl_dims *d)
{
    char s[TRTL_DIMS_STR_MAX];
    return (size_t)snprintf(buf, n, "%s", trtl_dims_str(d, s, sizeof s));
}

/* Kernel name, op, shapes, dtypes, attribute values (weights by count) and epilogue. */
static int signature(const trtl_bgraph *g, const trtl_node *n, const trtl_kernel *k, char *key, size_t cap)
{
    size_t len = (size_t)snprintf(key, cap, "%s|", k->name);
    for (int32_t j = 0; j < n->n_in && len < cap; j++) {
        len += put_dims(key + len, cap - len, &g->t[n->in[j]].dopt);
        if (len < cap)
            len += (size_t)snprintf(key + len, cap - len, "%d%c;", (int)g->t[n->in[j]].dtype,
                                    g->t[n->in[j]].kind == TRTL_TK_CONSTANT ? 'c' : 'v');
    }
    const trtl_op_info *info = &trtl_op_table[n->op];
    for (int32_t i = 0; i < *info->nattrs && len < cap; i++) {
        const trtl_attr_desc *d = &info->attrs[i];
        const char *f = (const char *)&n->p + d->offset;
        if (d->flags & TRTL_ATTRF_ALIAS)
            continue;
        switch (d->type) {
        case TRTL_ATTR_DIMS:
        case TRTL_ATTR_DIMS_SYM: len += put_dims(key + len, cap - len, (const trtl_dims *)f); break;
        case TRTL_ATTR_WEIGHTS:
            len += (size_t)snprintf(key + len, cap - len, "w%lld", (long long)((const trtl_weights *)f)->count);
            break;
        case TRTL_ATTR_FLOAT: len += (size_t)snprintf(key + len, cap - len, "%g", (double)*(const float *)f); break;
        case TRTL_ATTR_FLOATS: len += (size_t)snprintf(key + len, cap - len, "f%d", *(const int32_t *)f); break;
        default: len += (size_t)snprintf(key + len, cap - len, "%d", *(const int32_t *)f); break;
        }
        if (len < cap)
            key[len++] = ',';
    }
    if (len < cap)
        len += (size_t)snprintf(key + len, cap - len, "|e%d,%d", (int)n->epi.act, (int)n->epi.has_residual);
    key[cap - 1] = '\0';
    return len < cap - 1; /* 0: truncated, so possibly shared by two different nodes: not cached */
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The clocks a candidate's runs are timed with: the CPU time of each thread that runs kernels
 * (the calling thread, and the pool's workers), never the wall clock.  A run's sample is the mean
 * of the threads' CPU times over the run: the run's work per thread, which is what it takes on a
 * quiet machine for a kernel that splits its work evenly, and which the load does not change: the
 * time other processes take the cores is not CPU time of ours, and a preempted worker whose slices
 * the caller steals moves work between threads without changing the sum.  A one-thread build gets
 * the calling thread's CPU time.  Measured on the loaded 2-core machine (load 5-9; A/B interleaved,
 * one cold build a process), four two-thread builds of ResNet-50 / Inception-V3 disagreed on 17-19 of
 * 53 / 19-21 of 84 layers with this sample, against 43 / 76 with the wall clock in the same rounds,
 * 32-44 / 52-66 with the largest thread's CPU time (a stolen slice doubles it: its minimum depends
 * on whether a clean round happened), and 11-34 / 31-52 with session 10's wall-clock timing.
 * Its blind spot: a kernel that runs a node on one thread only (never calling the pool) is
 * credited with half its time at two threads; the optimized kernels that compete on fp32 layers
 * all split over the pool. */
typedef struct pool_clocks {
    int n; /* threads with a clock; 0: the pool's workers' clocks could not be found (wall clock) */
    clockid_t clk[TRTL_MAX_THREADS];
    int seen[TRTL_MAX_THREADS];
} pool_clocks;

static void note_clock(void *ctx, int64_t begin, int64_t end, int thread)
{
    pool_clocks *pc = ctx;
    double until = now_ms() + 0.02; /* stay ~20 us, so that the sleeping workers wake to take a slice */
    while (now_ms() < until)
        ;
    (void)begin;
    (void)end;
    if (thread >= 0 && thread < TRTL_MAX_THREADS && pthread_getcpuclockid(pthread_self(), &pc->clk[thread]) == 0)
        pc->seen[thread] = 1;
}

/* Each pool thread's CPU clock (by thread index): slices of a parallel loop of one slice a thread
 * record their thread's clock, until every thread has taken one (a few tries at most). */
static void pool_clocks_init(pool_clocks *pc, trtl_threadpool *pool)
{
    int n = trtl_threadpool_size(pool);
    memset(pc, 0, sizeof *pc);
    if (n > TRTL_MAX_THREADS)
        return;
    for (int attempt = 0; attempt < 200; attempt++) {
        trtl_parallel_for(pool, n, 1, note_clock, pc);
        int all = 1;
        for (int i = 0; i < n; i++)
            all &= pc->seen[i];
        if (all) {
            pc->n = n;
            return;
        }
    }
}

/* Reads every thread's CPU time (ms) into t[]; without clocks, t[0] = the wall clock. */
static void read_clocks(const pool_clocks *pc, double *t)
{
    struct timespec ts;
    for (int i = 0; i < (pc->n ? pc->n : 1); i++) {
        clock_gettime(pc->n ? pc->clk[i] : CLOCK_MONOTONIC, &ts);
        t[i] = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    }
}

/* A run's sample from the clocks before (t0) and after (t1): the threads' mean CPU time. */
static double sample_of(const pool_clocks *pc, const double *t0, const double *t1)
{
    int n = pc->n ? pc->n : 1;
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += t1[i] - t0[i];
    return sum / n;
}

/* Buffers for timing a node at its opt shapes. */
typedef struct bench {
    trtl_tensor_view in[64], out[16];
    void *scratch;
    size_t scratch_size;
} bench;

static void bench_free(bench *b, const trtl_bgraph *g, const trtl_node *n)
{
    for (int32_t j = 0; j < n->n_in; j++)
        if (g->t[n->in[j]].kind != TRTL_TK_CONSTANT)
            trtl_aligned_free(b->in[j].data);
    for (int32_t j = 0; j < n->n_out; j++)
        trtl_aligned_free(b->out[j].data);
    trtl_aligned_free(b->scratch);
}

static int bench_init(bench *b, const trtl_bgraph *g, const trtl_node *n)
{
    memset(b, 0, sizeof *b);
    if (n->n_in > 64 || n->n_out > 16)
        return 0;
    unsigned seed = 12345;
    for (int32_t j = 0; j < n->n_in; j++) {
        const trtl_bg_tensor *t = &g->t[n->in[j]];
        b->in[j].dims = t->dopt;
        b->in[j].dtype = t->dtype;
        if (t->kind == TRTL_TK_CONSTANT) {
            b->in[j].data = t->data;
            continue;
        }
        int64_t v = trtl_volume(&t->dopt);
        size_t bytes = (size_t)(v > 0 ? v : 1) * trtl_dtype_size(t->dtype);
        b->in[j].data = trtl_aligned_alloc(bytes);
        if (!b->in[j].data)
            return 0;
        memset(b->in[j].data, 0, bytes); /* zero indices are valid for gathers */
        if (t->dtype == TRTL_FLOAT)
            for (int64_t i = 0; i < v; i++) {
                seed = seed * 1103515245u + 12345u;
                ((float *)b->in[j].data)[i] = (float)((seed >> 9) & 0xffff) / 32768.0f - 1.0f;
            }
    }
    for (int32_t j = 0; j < n->n_out; j++) {
        const trtl_bg_tensor *t = &g->t[n->out[j]];
        int64_t v = trtl_volume(&t->dopt);
        b->out[j].dims = t->dopt;
        b->out[j].dtype = t->dtype;
        b->out[j].data = trtl_aligned_alloc((size_t)(v > 0 ? v : 1) * trtl_dtype_size(t->dtype));
        if (!b->out[j].data)
            return 0;
    }
    return 1;
}

/* ---- timing: candidates alternated in rounds, each kept by its minimum ----
 *
 * Every candidate of a node is prepared, run once (warm-up: first touch of outputs and scratch),
 * then timed in rounds, A B C A B C ..., one run of each candidate still in the race per round, so
 * a burst of load falls on all of them alike; each keeps its minimum (load only adds time: the
 * minimum is the best estimate of what the kernel costs).  After a round, a candidate whose minimum
 * is over the leader's by more than drop_margin(k) (60% after one sample, shrinking as 0.6 / k,
 * never under TIE) is out; the node is decided once one candidate is left, or, after min_samples
 * rounds, once the ones left are all within TIE of the leader, or after MAX_SAMPLES rounds or
 * NODE_BUDGET_MS of CPU time (all threads').  The choice is decide(): among the candidates within TIE of the
 * fastest, the first in registry order ("best first per op", kernels/registry.c), so that two
 * builds whose timings differ by noise agree, and a warm build (timings from the cache) decides as
 * the cold one did.  Candidates whose first run is over four times the best so far are out at once.
 * A node whose weights are over BIG_NODE_BYTES prepares its candidates one at a time (each timed
 * alone, min of its runs) so that two copies of packed weights at most are alive.
 *
 * Clock: the mean per-thread CPU time of the run (pool_clocks above).  The budget counts samples,
 * not the wall clock, so how many rounds a node gets does not depend on the load either.  A test
 * hook (builder/select_hook.h) can replace every sample by a made-up one. */
#define TIE 0.03
#define MIN_SAMPLES 3
#define MAX_SAMPLES 12
#define NODE_BUDGET_MS 60.0
#define BIG_NODE_BYTES ((size_t)64 << 20)

static _Atomic(trtl_select_timing_hook) g_hook;
static void *_Atomic g_hook_user;

void trtl_select_set_timing_hook(trtl_select_timing_hook hook, void *user)
{
    atomic_store(&g_hook_user, user);
    atomic_store(&g_hook, hook);
}

/* How far over the leader a candidate with k samples is out: 60% after one sample, 0.6 / k after k. */
static double drop_margin(int k)
{
    double m = 0.6 / (k > 0 ? k : 1);
    return m > TIE ? m : TIE;
}

/* The choice among ms[0..nok) (< 0: failed or untimed): the first candidate within TIE of the
 * fastest; -1 if none ran. */
static int decide(const double *ms, int nok)
{
    double best = -1.0;
    for (int c = 0; c < nok; c++)
        if (ms[c] >= 0 && (best < 0 || ms[c] < best))
            best = ms[c];
    for (int c = 0; c < nok; c++)
        if (ms[c] >= 0 && ms[c] <= best * (1.0 + TIE))
            return c;
    return -1;
}

/* Constant bytes the node's candidates pack from (weights attributes and constant inputs). */
static size_t weight_bytes(const trtl_bgraph *g, const trtl_node *n)
{
    size_t bytes = 0;
    const trtl_op_info *info = &trtl_op_table[n->op];
    for (int32_t i = 0; i < *info->nattrs; i++)
        if (info->attrs[i].type == TRTL_ATTR_WEIGHTS && !(info->attrs[i].flags & TRTL_ATTRF_ALIAS))
            bytes += (size_t)((const trtl_weights *)((const char *)&n->p + info->attrs[i].offset))->count * 4u;
    for (int32_t j = 0; j < n->n_in; j++)
        if (g->t[n->in[j]].kind == TRTL_TK_CONSTANT) {
            int64_t v = trtl_volume(&g->t[n->in[j]].dopt);
            bytes += (size_t)(v > 0 ? v : 0) * trtl_dtype_size(g->t[n->in[j]].dtype);
        }
    return bytes;
}

/* What kernel selection counts for the build log ("timed N candidates"). */
typedef struct sel_stats {
    int timed, cached, nodes_timed, samples, near_ties;
    double timing_ms, prepare_ms;
} sel_stats;

/* One node's race: the candidates ok[], their timings ms[] (cached ones fixed), prepared states. */
typedef struct race {
    const trtl_bgraph *g;
    trtl_node *n;
    const trtl_kernel *const *ok;
    int nok, min_samples, threads; /* threads: the pool's */
    const pool_clocks *pc;
    double *ms;
    void **st;
    bench *b;
    trtl_threadpool *pool;
    sel_stats *stats;
} race;

/* One run of candidate c (sample 0: its warm-up, 1, 2, ...: its rounds); returns its sample (ms,
 * the epilogue penalty applied; < 0: failed) and adds the run's CPU time to *spent. */
static double run_once(race *r, int c, int sample, double *spent)
{
    const trtl_kernel *k = r->ok[c];
    trtl_kernel_args a = {r->n, r->b->in, r->b->out, r->b->scratch, r->b->scratch_size, r->st[c], r->pool, NULL};
    /* a kernel without the fused epilogue pays a separate sweep over the output */
    double penalty = !k->applies_epilogue && (r->n->epi.act != TRTL_ACT_NONE || r->n->epi.has_residual) ? 1.05 : 1.0;
    double t0[TRTL_MAX_THREADS], t1[TRTL_MAX_THREADS];
    read_clocks(r->pc, t0);
    int ok = k->run(&a) == TRTL_OK;
    read_clocks(r->pc, t1);
    double ms = sample_of(r->pc, t0, t1);
    trtl_select_timing_hook hook = atomic_load(&g_hook);
    if (hook)
        ms = hook(atomic_load(&g_hook_user), r->n->name, k->name, sample);
    /* the budget counts CPU time of all threads: how many rounds a node gets does not depend on the load */
    *spent += ms > 0 ? ms * r->threads : 0.0;
    r->stats->samples += sample > 0;
    if (!ok) {
        trtl_clear_error();
        return -1.0;
    }
    return ms < 0 ? -1.0 : ms * penalty;
}

/* Candidate c leaves the race (its state is released: it cannot win). */
static void drop_out(race *r, int c, int *alive, int *n_alive)
{
    alive[c] = 0;
    (*n_alive)--;
    if (r->st[c] && r->ok[c]->release)
        r->ok[c]->release(r->st[c]);
    r->st[c] = NULL;
}

/* The lowest timing among the candidates not in the group (cached or timed before) and the group's
 * minima so far; < 0: none. */
static double bar_of(const race *r, const double *mins, const int *in_group)
{
    double bar = -1.0;
    for (int c = 0; c < r->nok; c++) {
        double v = in_group[c] ? mins[c] : r->ms[c];
        if (v >= 0 && (bar < 0 || v < bar))
            bar = v;
    }
    return bar;
}

/* Prepares and times the group's candidates (in_group[c]) in alternating rounds; their results go
 * to r->ms[] and their prepared states to r->st[] (NULL: failed). */
static void race_group(race *r, const int *in_group)
{
    double mins[MAX_CANDIDATES], spent = 0.0, t0 = now_ms();
    int alive[MAX_CANDIDATES], n_alive = 0, members = 0, outside = 0;
    for (int c = 0; c < r->nok; c++) {
        mins[c] = -1.0;
        alive[c] = 0;
        outside += !in_group[c] && r->ms[c] >= 0; /* cached, or timed in an earlier group */
        if (!in_group[c])
            continue;
        const trtl_kernel *k = r->ok[c];
        members++;
        r->stats->timed++;
        r->st[c] = NULL;
        if (k->prepare && k->prepare(r->n, &r->st[c]) != TRTL_OK) {
            trtl_clear_error();
            r->st[c] = NULL;
            continue;
        }
        size_t need = k->scratch ? k->scratch(r->n, r->b->in, r->b->out) : 0;
        if (need > r->b->scratch_size) {
            trtl_aligned_free(r->b->scratch);
            r->b->scratch = trtl_aligned_alloc(need);
            r->b->scratch_size = r->b->scratch ? need : 0;
        }
        if (need > r->b->scratch_size) {
            if (k->release && r->st[c])
                k->release(r->st[c]);
            r->st[c] = NULL;
            continue;
        }
        alive[c] = 1;
        n_alive++;
    }
    /* warm-up: first touch; a sample for the four-times cut-off only */
    double warm[MAX_CANDIDATES];
    for (int c = 0; c < r->nok; c++) {
        warm[c] = -1.0;
        if (alive[c] && (warm[c] = run_once(r, c, 0, &spent)) < 0)
            drop_out(r, c, alive, &n_alive);
    }
    double bar = bar_of(r, warm, in_group);
    for (int c = 0; c < r->nok; c++)
        if (alive[c] && warm[c] > 4.0 * bar) {
            mins[c] = warm[c]; /* an upper bound: it cannot win */
            drop_out(r, c, alive, &n_alive);
        }
    for (int k = 1; n_alive > 0; k++) {
        for (int c = 0; c < r->nok; c++) /* one round: A B C ... */
            if (alive[c]) {
                double s = run_once(r, c, k, &spent);
                if (s < 0) {
                    drop_out(r, c, alive, &n_alive);
                    mins[c] = -1.0;
                } else if (mins[c] < 0 || s < mins[c]) {
                    mins[c] = s;
                }
            }
        bar = bar_of(r, mins, in_group);
        int tied = 1;
        for (int c = 0; c < r->nok; c++)
            if (alive[c] && mins[c] > bar * (1.0 + drop_margin(k)))
                drop_out(r, c, alive, &n_alive);
            else if (alive[c] && mins[c] > bar * (1.0 + TIE)) {
                tied = 0;
            }
        if (n_alive == 1 && members > 1 && !outside) /* the others are out: a clear winner */
            break;
        if (k >= r->min_samples && (n_alive == 1 || tied || k >= MAX_SAMPLES || spent > NODE_BUDGET_MS))
            break;
    }
    for (int c = 0; c < r->nok; c++)
        if (in_group[c]) {
            r->ms[c] = mins[c];
            if (mins[c] < 0 && r->st[c]) {
                if (r->ok[c]->release)
                    r->ok[c]->release(r->st[c]);
                r->st[c] = NULL;
            }
        }
    r->stats->timing_ms += now_ms() - t0;
}

/* Releases the prepared states of r's candidates except `keep`'s. */
static void release_others(race *r, int keep)
{
    for (int c = 0; c < r->nok; c++)
        if (c != keep && r->st[c]) {
            if (r->ok[c]->release)
                r->ok[c]->release(r->st[c]);
            r->st[c] = NULL;
        }
}

/* Picks among ok[0..nok) (nok > 1) by timing, through the timing cache `tc` (NULL: none, every
 * candidate timed).  Cached timings are read first, so a node whose candidates are all cached
 * allocates and times nothing.  Returns the winner; its prepared state, if the winner was timed
 * now, goes to *state (else NULL: the caller prepares it). */
static const trtl_kernel *pick_by_timing(const trtl_bgraph *g, trtl_node *n, const trtl_kernel *const *ok, int nok,
                                         int iters, trtl_threadpool *pool, const pool_clocks *pc,
                                         trtl_timing_cache *tc, int32_t threads, sel_stats *stats, void **state,
                                         double *ms_out)
{
    char keys[MAX_CANDIDATES][KEY_MAX];
    int keyed[MAX_CANDIDATES], have[MAX_CANDIDATES], missing = 0;
    double ms[MAX_CANDIDATES];
    void *st[MAX_CANDIDATES] = {NULL};
    *state = NULL;
    for (int c = 0; c < nok; c++) {
        keyed[c] = tc && signature(g, n, ok[c], keys[c], sizeof keys[c]);
        have[c] = keyed[c] && trtl_tc_lookup(tc, threads, keys[c], &ms[c]);
        if (!have[c])
            ms[c] = -1.0;
        missing += !have[c];
        stats->cached += have[c];
    }
    if (missing) {
        bench b;
        race r = {g, n, ok, nok, iters > MIN_SAMPLES ? iters : MIN_SAMPLES, trtl_threadpool_size(pool), pc, ms, st,
                  &b, pool, stats};
        if (r.min_samples > MAX_SAMPLES)
            r.min_samples = MAX_SAMPLES;
        if (bench_init(&b, g, n)) {
            int in_group[MAX_CANDIDATES];
            stats->nodes_timed++;
            if (weight_bytes(g, n) <= BIG_NODE_BYTES) { /* one race of all the untimed candidates */
                for (int c = 0; c < nok; c++)
                    in_group[c] = !have[c];
                race_group(&r, in_group);
            } else { /* one at a time; only the leader's state is kept */
                for (int c = 0; c < nok; c++) {
                    if (have[c])
                        continue;
                    memset(in_group, 0, sizeof in_group);
                    in_group[c] = 1;
                    race_group(&r, in_group);
                    release_others(&r, decide(ms, nok));
                }
            }
            for (int c = 0; c < nok; c++)
                if (!have[c] && keyed[c])
                    trtl_tc_insert(tc, threads, keys[c], ms[c]);
        }
        bench_free(&b, g, n);
    }
    int w = decide(ms, nok);
    release_others(&(race){.nok = nok, .ok = ok, .st = st}, w);
    if (w >= 0)
        *state = st[w];
    for (int c = 0; c < nok; c++) {
        trtl_log(TRTL_LOG_VERBOSE, "layer '%s': kernel %s %.4f ms%s", n->name, ok[c]->name, ms[c],
                 have[c] ? " (timing cache)" : "");
        ms_out[c] = ms[c];
    }
    if (w >= 0 && ms[w] > 0) {
        for (int c = 0; c < nok; c++)
            if (ms[c] >= 0 && ms[c] < ms[w]) {
                trtl_log(TRTL_LOG_VERBOSE, "layer '%s': near-tie (within %.0f%%): kernel %s kept (registry order) "
                         "over %s", n->name, 100.0 * TIE, ok[w]->name, ok[c]->name);
                stats->near_ties++;
                break;
            }
    }
    return w >= 0 ? ok[w] : ok[0];
}

/* pick_by_timing for node i; an int8 layer with fp32 tactics (issue #11, session 13) has its fp32 tactics timed
 * twice: on the codes, as the node is (the choice as before: safe whatever its neighbours choose), and as they run
 * inside a float region (passes/int8_regions.c trtl_int8_region_view: FLOAT input on its grid, float residual,
 * fake-quantized FLOAT output, where those tensors may become FLOAT).  Where the int8 kernel wins on the codes but
 * the fp32 tactic in the region view beats it by REGION_MARGIN, the fp32 tactic is taken: the region it joins saves
 * the conversions.  The margin stands for the edges: the region is still formed after selection, from the choices
 * (trtl_int8_float_regions), and a layer whose neighbour stays int8 pays the conversion its view timing left out
 * (ResNet-50: taking every view win made it 7 % slower; MobileNetV2 gains).  The state prepared for the view is
 * released (the weight packing prepares the final node). */
#define REGION_MARGIN 0.15
static const trtl_kernel *pick_timed(trtl_bgraph *g, int32_t i, const trtl_kernel *const *ok, int nok, int iters,
                                     trtl_threadpool *pool, const pool_clocks *pc, trtl_timing_cache *tc,
                                     int32_t threads, sel_stats *stats, void **state, double *ms_out)
{
    trtl_node *n = &g->n[i].n, view;
    const trtl_kernel *w = pick_by_timing(g, n, ok, nok, iters, pool, pc, tc, threads, stats, state, ms_out);
    const trtl_kernel *kf[MAX_CANDIDATES];
    int nf = 0;
    double b8 = -1.0;
    for (int c = 0; c < nok; c++) {
        if (trtl_qlinear_fp32_inner(ok[c]))
            kf[nf++] = ok[c];
        else if (ms_out[c] >= 0 && (b8 < 0 || ms_out[c] < b8))
            b8 = ms_out[c];
    }
    trtl_dtype saved[3];
    const int v = nf && b8 >= 0 && !trtl_qlinear_fp32_inner(w) && g->n[i].fp32_tactics
                      ? trtl_int8_region_view(g, i, &view, saved)
                      : 0;
    if (!v)
        return w;
    double msf[MAX_CANDIDATES];
    void *sf = NULL;
    const trtl_kernel *wf = pick_by_timing(g, &view, kf, nf, iters, pool, pc, tc, threads, stats, &sf, msf);
    trtl_int8_region_view_end(g, i, v, saved);
    if (sf && wf->release)
        wf->release(sf);
    double bf = -1.0;
    for (int f = 0; f < nf; f++)
        if (kf[f] == wf)
            bf = msf[f];
    if (!(bf >= 0 && bf * (1.0 + REGION_MARGIN) < b8))
        return w;
    trtl_log(TRTL_LOG_VERBOSE, "layer '%s': %s %.4f ms inside a float region, %s %.4f ms on codes", n->name,
             wf->name, bf, w->name, b8);
    if (*state && w->release)
        w->release(*state);
    *state = NULL;
    for (int c = 0; c < nok; c++)
        if (ok[c] == wf)
            ms_out[c] = bf; /* the build log's time of the kernel taken */
    return wf;
}

/* ---- precision: BuilderFlag.BF16 / FP16, layer.precision, OBEY/PREFER_PRECISION_CONSTRAINTS ----
 *
 * Every kernel declares the precision it computes in (trtl_kernel.precision).  A reduced-precision
 * kernel is a candidate only when the config's flag admits it (BF16 -> TRTL_BF16 kernels, FP16 ->
 * TRTL_HALF kernels).  A layer's requested precision (layer.precision, else set_output_type) is a
 * constraint only under OBEY_PRECISION_CONSTRAINTS (or STRICT_TYPES) / PREFER_PRECISION_CONSTRAINTS,
 * as in TensorRT: then only kernels of that precision are candidates (whatever the flags); none
 * is an error naming the layer (OBEY) or a warning and the unconstrained choice (PREFER).
 * Among the candidates timing decides; without timing a reduced-precision kernel comes first
 * (the user asked for it).  Each layer that a reduced precision was open to but that stays fp32
 * gets one INFO line saying why (constraint, no kernel, slower). */

typedef struct prec_note {
    int open;       /* a reduced precision was asked for (flag, or a constraint to one) */
    int constraint; /* the layer's request restricted the candidates */
    int n_reduced;  /* reduced-precision candidates */
} prec_note;

static const char *prec_name(int32_t p)
{
    return p == TRTL_BF16 ? "BF16" : trtl_dtype_name((trtl_dtype)p);
}

static int cfg_flag(const trtl_builder_config *c, int f) { return (int)((c->flags >> f) & 1u); }

/* INT8 kernels implement only the int8 ops (qlinear: made by fuse_qdq from explicit Q/DQ, or from calibration
 * ranges under BuilderFlag.INT8): the precision was decided when the op was made, so they are always admitted. */
static int flag_admits(const trtl_builder_config *c, int32_t p)
{
    return p == TRTL_FLOAT || p == TRTL_INT8 || (p == TRTL_BF16 && cfg_flag(c, TRTL_FLAG_BF16)) ||
           (p == TRTL_HALF && cfg_flag(c, TRTL_FLAG_FP16));
}

/* Filters the candidates ok[0..*nok) in place by precision (order kept, reduced ones first). */
static trtl_status precision_filter(const trtl_bgraph *g, const trtl_bg_node *bn, const trtl_kernel **ok, int *nok,
                                    prec_note *pn)
{
    const trtl_builder_config *c = g->cfg;
    const int obey = cfg_flag(c, TRTL_FLAG_OBEY_PRECISION_CONSTRAINTS) || cfg_flag(c, TRTL_FLAG_STRICT_TYPES);
    const int prefer = cfg_flag(c, TRTL_FLAG_PREFER_PRECISION_CONSTRAINTS);
    const trtl_kernel *kept[MAX_CANDIDATES];
    int nk = 0;
    memset(pn, 0, sizeof *pn);
    pn->open = cfg_flag(c, TRTL_FLAG_BF16) || cfg_flag(c, TRTL_FLAG_FP16);
    if (bn->want_set && (obey || prefer)) {
        const int32_t want = bn->want_precision;
        for (int k = 0; k < *nok; k++)
            if (ok[k]->precision == want)
                kept[nk++] = ok[k];
        if (nk > 0 || want == TRTL_FLOAT) { /* FLOAT: the reference kernel is the fallback */
            memcpy(ok, kept, sizeof *kept * (size_t)nk);
            *nok = nk;
            pn->constraint = 1;
            pn->open = want != TRTL_FLOAT;
            pn->n_reduced = want != TRTL_FLOAT ? nk : 0;
            return TRTL_OK;
        }
        if (obey)
            return trtl_error(TRTL_ERR_UNSUPPORTED,
                              "layer '%s': precision %s is required (layer.precision / set_output_type with "
                              "OBEY_PRECISION_CONSTRAINTS) but no %s kernel implements this %s layer on this CPU%s; "
                              "use PREFER_PRECISION_CONSTRAINTS to fall back to FLOAT",
                              bn->n.name, prec_name(want), prec_name(want), trtl_op_table[bn->n.op].name,
                              want == TRTL_BF16 && !trtl_cpu_has(TRTL_CPU_AVX512BF16) ? " (it lacks AVX512_BF16)" : "");
        trtl_log(TRTL_LOG_WARNING,
                 "layer '%s': no %s kernel implements this %s layer on this CPU; PREFER_PRECISION_CONSTRAINTS: "
                 "it runs in FLOAT", bn->n.name, prec_name(want), trtl_op_table[bn->n.op].name);
    }
    for (int pass = 0; pass < 2; pass++) /* reduced precisions first, then fp32 */
        for (int k = 0; k < *nok; k++)
            if ((ok[k]->precision != TRTL_FLOAT) == (pass == 0) && flag_admits(c, ok[k]->precision)) {
                kept[nk++] = ok[k];
                pn->n_reduced += pass == 0;
            }
    memcpy(ok, kept, sizeof *kept * (size_t)nk);
    *nok = nk;
    return TRTL_OK;
}

/* The log line of a layer a reduced precision was open to (ms: timings of ok[], -1 untimed). */
static void precision_report(const trtl_bgraph *g, const trtl_bg_node *bn, const trtl_kernel *const *ok, int nok,
                             const double *ms, const trtl_kernel *chosen, const prec_note *pn)
{
    const char *name = bn->n.name;
    if (bn->n.op == TRTL_OP_QLINEAR) {
        int32_t best[2] = {-1, -1}; /* the fastest timed int8 (0) and fp32 (1) candidates */
        for (int k = 0; k < nok; k++) {
            int f = ok[k]->precision == TRTL_FLOAT;
            if (ms[k] >= 0 && (best[f] < 0 || ms[k] < ms[best[f]]))
                best[f] = k;
        }
        if (best[0] >= 0 && best[1] >= 0)
            trtl_log(TRTL_LOG_INFO, "layer '%s': %s: %s %.4f ms, %s %.4f ms", name,
                     chosen->precision == TRTL_FLOAT ? "runs its int8 math on an fp32 kernel" : "stays INT8",
                     ok[best[0]]->name, ms[best[0]], ok[best[1]]->name, ms[best[1]]);
        else
            trtl_log(TRTL_LOG_VERBOSE, "layer '%s': int8 layer on kernel %s (%s)", name, chosen->name,
                     bn->fp32_tactics ? "not timed against fp32 kernels" : "int8_tactics off");
        return;
    }
    if (chosen->precision != TRTL_FLOAT) {
        trtl_log(TRTL_LOG_VERBOSE, "layer '%s': computes in %s (kernel %s)", name, prec_name(chosen->precision),
                 chosen->name);
        return;
    }
    if (!pn->open && !pn->constraint)
        return;
    if (pn->constraint && bn->want_precision == TRTL_FLOAT) {
        trtl_log(TRTL_LOG_INFO, "layer '%s': stays FLOAT: precision constraint FLOAT", name);
        return;
    }
    if (g->cfg->optimization_level == 0) {
        trtl_log(TRTL_LOG_INFO, "layer '%s': stays FLOAT: optimization level 0 uses the reference kernels", name);
        return;
    }
    if (pn->n_reduced == 0) {
        const char *want = cfg_flag(g->cfg, TRTL_FLAG_BF16) && cfg_flag(g->cfg, TRTL_FLAG_FP16) ? "BF16 or HALF"
                           : cfg_flag(g->cfg, TRTL_FLAG_BF16)                                    ? "BF16"
                                                                                                 : "HALF";
        trtl_log(TRTL_LOG_INFO, "layer '%s': stays FLOAT: no %s kernel for this %s layer on this CPU%s", name, want,
                 trtl_op_table[bn->n.op].name,
                 cfg_flag(g->cfg, TRTL_FLAG_BF16) && !trtl_cpu_has(TRTL_CPU_AVX512BF16) ? " (no AVX512_BF16)" : "");
        return;
    }
    double best_red = -1.0, mine = -1.0;
    const char *red = "";
    for (int k = 0; k < nok; k++) {
        if (ok[k] == chosen)
            mine = ms[k];
        if (ok[k]->precision != TRTL_FLOAT && ms[k] >= 0 && (best_red < 0 || ms[k] < best_red)) {
            best_red = ms[k];
            red = ok[k]->name;
        }
    }
    if (best_red >= 0)
        trtl_log(TRTL_LOG_INFO, "layer '%s': stays FLOAT: %s was slower (%.4f ms) than %s (%.4f ms)", name, red,
                 best_red, chosen->name, mine);
    else
        trtl_log(TRTL_LOG_INFO, "layer '%s': stays FLOAT: the reduced-precision kernels failed to run", name);
}

trtl_status trtl_select_kernels(trtl_bgraph *g)
{
    uint32_t cpu = trtl_cpu_features();
    int iters = g->cfg->avg_timing_iterations;
    int level = g->cfg->optimization_level;
    trtl_threadpool *pool = NULL;
    if (iters > 0 && level > 0)
        trtl_threadpool_create(g->cfg->num_threads, &pool); /* timing without a pool is still valid */
    pool_clocks clocks;
    pool_clocks_init(&clocks, pool);
    trtl_status st = TRTL_OK;
    sel_stats stats = {0};
    trtl_timing_cache *tc = NULL;
    int32_t threads = trtl_tc_build_threads(g->cfg);
    double t_start = now_ms();
    if (!(g->cfg->flags & (1u << TRTL_FLAG_DISABLE_TIMING_CACHE)))
        tc = g->cfg->timing_cache ? g->cfg->timing_cache : trtl_tc_process_default();
    trtl_timing_cache_retain(tc); /* kept for this build even if the config is given another */
    trtl_progress_start(g->cfg, "Kernel selection", "Building engine", g->nn);
    for (int32_t i = 0; i < g->nn && st == TRTL_OK; i++) {
        trtl_node *n = &g->n[i].n;
        const trtl_kernel *cand[MAX_CANDIDATES], *ok[MAX_CANDIDATES];
        int nc = trtl_kernels_for(n->op, cand, MAX_CANDIDATES), nok = 0;
        trtl_dims dims[64];
        int32_t n_in = n->n_in < 64 ? n->n_in : 64;
        for (int32_t j = 0; j < n_in; j++)
            dims[j] = g->t[n->in[j]].dopt;
        /* The optimized kernels compute in fp32: other dtypes run on the reference kernel (a gather's
         * INT32 indices and an attention's BOOL mask aside, and the kernels marked any_dtype). */
        int all_float = 1;
        for (int32_t j = 0; j < n->n_in; j++)
            all_float &= g->t[n->in[j]].dtype == TRTL_FLOAT ||
                         (n->op == TRTL_OP_GATHER && j == 1 && g->t[n->in[j]].dtype == TRTL_INT32) ||
                         (n->op == TRTL_OP_ATTENTION && j == 3 && g->t[n->in[j]].dtype == TRTL_BOOL);
        for (int32_t j = 0; j < n->n_out; j++)
            all_float &= g->t[n->out[j]].dtype == TRTL_FLOAT;
        /* Q / DQ: their optimized kernels (quantize.simd, dequantize.simd) are the reference's math on codes,
         * FLOAT <-> INT8 / UINT8 with a FLOAT scale (the low-bit storage types stay on the reference) */
        if ((n->op == TRTL_OP_QUANTIZE || n->op == TRTL_OP_DEQUANTIZE) && n->n_in >= 2 && n->n_out >= 1) {
            const int q = n->op == TRTL_OP_QUANTIZE;
            trtl_dtype real = g->t[q ? n->in[0] : n->out[0]].dtype, codes = g->t[q ? n->out[0] : n->in[0]].dtype;
            all_float = real == TRTL_FLOAT && (codes == TRTL_INT8 || codes == TRTL_UINT8) &&
                        g->t[n->in[1]].dtype == TRTL_FLOAT;
        }
        /* ... and a normalization writing int8 codes (passes/norm_codes.c): normalization.rows writes them */
        if (n->op == TRTL_OP_NORMALIZATION && n->p.norm.out_quant == 2 && n->n_out == 1) {
            all_float = g->t[n->out[0]].dtype == (trtl_dtype)n->p.norm.out_type;
            for (int32_t j = 0; j < n->n_in; j++)
                all_float &= g->t[n->in[j]].dtype == TRTL_FLOAT;
        }
        /* ... except kernels of int8 codes (precision INT8 outside QLINEAR: pooling.codes_max), which take
         * only nodes whose every input and output is INT8 / UINT8 codes */
        int all_codes = 1;
        for (int32_t j = 0; j < n->n_in + n->n_out; j++) {
            trtl_dtype t = g->t[j < n->n_in ? n->in[j] : n->out[j - n->n_in]].dtype;
            all_codes &= t == TRTL_INT8 || t == TRTL_UINT8;
        }
        for (int c = 0; c < nc; c++) {
            const trtl_kernel *k = cand[c];
            const int codes_kernel = k->precision == TRTL_INT8 && n->op != TRTL_OP_QLINEAR;
            if ((level == 0 ||
                 (!all_float && !k->any_dtype && n->op != TRTL_OP_PLUGIN_V2 && n->op != TRTL_OP_QLINEAR &&
                  !(codes_kernel && all_codes)) || (codes_kernel && !all_codes)) &&
                c != nc - 1)
                continue; /* level 0 (and non-fp32 nodes): reference kernels only */
            if ((k->cpu_features & ~cpu) || (k->applies && !k->applies(n, dims)))
                continue;
            if (trtl_qlinear_fp32_inner(k) && !g->n[i].fp32_tactics)
                continue; /* fp32 tactics of an int8 layer: only as passes/int8_tactics.c admits them */
            ok[nok++] = k;
        }
        /* The reference kernel is the fallback, not a competitor: timing it on big layers costs most
         * of a build and it never wins on a quiet machine. */
        if (nok > 1 && ok[nok - 1] == trtl_kernel_ref(n->op))
            nok--;
        /* A fallback (OpenBLAS) competes only where none of trtlite's own optimized kernels applies. */
        int own = 0;
        for (int c = 0; c < nok; c++)
            own |= !ok[c]->fallback && ok[c] != trtl_kernel_ref(n->op);
        if (own) {
            int kept_n = 0;
            for (int c = 0; c < nok; c++)
                if (!ok[c]->fallback)
                    ok[kept_n++] = ok[c];
            nok = kept_n;
        }
        prec_note pn;
        double ms_of[MAX_CANDIDATES];
        for (int c = 0; c < MAX_CANDIDATES; c++)
            ms_of[c] = -1.0;
        st = precision_filter(g, &g->n[i], ok, &nok, &pn);
        if (st != TRTL_OK)
            break;
        const trtl_kernel *chosen = nok ? ok[0] : trtl_kernel_ref(n->op);
        void *kept = NULL;
        if (g->n[i].fixed_kernel) /* a pass decided (elide_concat: the memory plan relies on it) */
            chosen = g->n[i].fixed_kernel;
        else if (nok > 1 && iters > 0)
            chosen = pick_timed(g, i, ok, nok, iters, pool, &clocks, tc, threads, &stats, &kept, ms_of);
        n->kernel = chosen;
        if (kept)
            n->kstate = kept; /* prepared while timing: the packing below skips it */
        precision_report(g, &g->n[i], ok, nok, ms_of, chosen, &pn);
        trtl_log(TRTL_LOG_VERBOSE, "layer '%s': using kernel %s", n->name, chosen->name);
        if (!trtl_progress_step(g->cfg, "Kernel selection", i))
            st = trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
    }
    trtl_progress_finish(g->cfg, "Kernel selection");
    trtl_threadpool_destroy(pool);
    if (st == TRTL_OK)
        trtl_int8_float_regions(g); /* code tensors between fp32 tactics back to FLOAT (passes/int8_regions.c) */
    /* Weight packing: each chosen kernel prepares its node once (packed weights, tables), after
     * every choice is made, unless timing already prepared it; a progress phase of its own, one step
     * per node. */
    if (st == TRTL_OK && g->plan_only) {
        trtl_log(TRTL_LOG_VERBOSE, "weight packing skipped: the engine is only serialized (the plan loader packs)");
    } else if (st == TRTL_OK) {
        double t0 = now_ms();
        trtl_progress_start(g->cfg, "Weight packing", "Building engine", g->nn);
        for (int32_t i = 0; i < g->nn && st == TRTL_OK; i++) {
            trtl_node *n = &g->n[i].n;
            if (n->kernel->prepare && !n->kstate) {
                st = n->kernel->prepare(n, &n->kstate);
                if (st != TRTL_OK)
                    trtl_error_prefix("layer '%s': preparing kernel %s", n->name, n->kernel->name);
            }
            if (st == TRTL_OK)
                trtl_bg_drop_plain_weights(g, i); /* node by node: plain and packed copies never pile up */
            if (st == TRTL_OK && !trtl_progress_step(g->cfg, "Weight packing", i))
                st = trtl_error(TRTL_ERR_STATE, "build cancelled by the progress monitor");
        }
        trtl_progress_finish(g->cfg, "Weight packing");
        stats.prepare_ms += now_ms() - t0;
    }
    trtl_log(TRTL_LOG_INFO, "kernel selection: timed %d candidates on %d nodes (%d timings from the timing cache%s; "
             "%d samples in alternating rounds, %d near-ties kept by registry order) in %.1f ms; preparing kernels "
             "%.1f ms; selection total %.1f ms", stats.timed, stats.nodes_timed, stats.cached, tc ? "" : ", disabled",
             stats.samples, stats.near_ties, stats.timing_ms,
             stats.prepare_ms, now_ms() - t_start);
    trtl_timing_cache_destroy(tc);
    return st;
}
