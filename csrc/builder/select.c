/* select.c -- kernel choice per node ("tactics").  Candidates come from the kernel registry,
 * filtered by CPU features and applies(); when several remain and timing is enabled, each is
 * timed on the node's opt shapes and the fastest kept.  Timings go to the timing cache
 * (builder/timing_cache.h: the config's, else a process-wide one; none with
 * BuilderFlag.DISABLE_TIMING_CACHE) keyed by (kernel, node signature, threads, CPU), so that a
 * rebuild, or a node identical to one timed before in the same build, times nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include "builder/graph.h"
#include "builder/config.h"
#include "builder/timing_cache.h"
#include "core/alloc.h"
#include "kernels/registry.h"
#include "kernels/qlinear_fp32.h"
#include "network/op_table.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/cpu.h"

#define MAX_CANDIDATES 32 /* per op, the reference included: trtl_kernels_for drops kernels past it */
#define KEY_MAX TRTL_TC_KEY_MAX
#define TIME_BUDGET_MS 25.0 /* per candidate, after its second timed run (time_kernel) */

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

/* The clock a candidate's runs are timed with.  A one-thread build runs every kernel on the
 * calling thread, so its CPU time is the kernel's cost without the time other processes took
 * the core away: on a loaded machine wall-clock minima over 3-10 runs were still inflated and
 * ranked candidates wrongly (a ResNet-18 3x3 layer kept Winograd F(2,3), 1.4x slower than
 * F(4,3) in thread CPU time).  With more threads the kernel's wall time is what counts (the
 * work split, barriers and idle threads are part of it), so those builds keep the wall clock. */
static double sample_ms(int cpu_clock)
{
    struct timespec ts;
    clock_gettime(cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

/* Best (minimum) ms over max(iters, 3) runs, the first included, or a negative value if the
 * kernel failed.  The minimum is what the kernel costs when nothing else interferes, so a busy
 * machine does not decide which kernel an engine keeps.  Bounds: once the minimum is over twice
 * `beat` (the best candidate's so far; <= 0: none yet; four times for the first run alone) the
 * candidate cannot win and its timing stops; after its third run, a candidate that has taken
 * TIME_BUDGET_MS stops too (a slow layer's minimum of three is as good a guide as of more, and a
 * loaded machine would stretch every run).
 * The prepared state goes to *keep (the caller releases it) when the kernel ran. */
static double time_kernel(const trtl_bgraph *g, trtl_node *n, const trtl_kernel *k, bench *b, int iters,
                          trtl_threadpool *pool, double beat, void **keep)
{
    void *state = NULL;
    *keep = NULL;
    if (k->prepare && k->prepare(n, &state) != TRTL_OK) {
        trtl_clear_error();
        return -1.0;
    }
    size_t need = k->scratch ? k->scratch(n, b->in, b->out) : 0;
    if (need > b->scratch_size) {
        trtl_aligned_free(b->scratch);
        b->scratch = trtl_aligned_alloc(need);
        b->scratch_size = b->scratch ? need : 0;
        if (!b->scratch) {
            if (k->release && state)
                k->release(state);
            return -1.0;
        }
    }
    trtl_kernel_args a = {n, b->in, b->out, b->scratch, b->scratch_size, state, pool, NULL};
    double best = -1.0;
    /* a kernel without the fused epilogue pays a separate sweep over the output */
    double penalty = !k->applies_epilogue && (n->epi.act != TRTL_ACT_NONE || n->epi.has_residual) ? 1.05 : 1.0;
    const int cpu_clock = trtl_threadpool_size(pool) == 1;
    double t_first = now_ms(), c_first = sample_ms(cpu_clock);
    if (k->run(&a) == TRTL_OK) {
        /* The first run (first touch of outputs and scratch included) is a sample too, an upper
         * bound; over four times the best so far, the candidate is out without further runs.
         * `spent` (wall clock) bounds the build time; `best` is on sample_ms()'s clock. */
        double spent = now_ms() - t_first;
        int ok = 1, runs = (iters < 3 ? 3 : iters) - 1;
        best = sample_ms(cpu_clock) - c_first;
        if (beat > 0 && best * penalty > 4.0 * beat)
            runs = 0;
        for (int i = 0; i < runs && ok; i++) {
            double t0 = now_ms(), c0 = sample_ms(cpu_clock);
            ok = k->run(&a) == TRTL_OK;
            double ms = sample_ms(cpu_clock) - c0;
            spent += now_ms() - t0;
            if (ok && (best < 0 || ms < best))
                best = ms;
            if (ok && ((beat > 0 && best * penalty > 2.0 * beat) || (i >= 1 && spent > TIME_BUDGET_MS)))
                break;
        }
        if (!ok)
            best = -1.0;
        else
            best *= penalty;
    }
    if (best < 0)
        trtl_clear_error();
    if (best >= 0)
        *keep = state;
    else if (k->release && state)
        k->release(state);
    (void)g;
    return best;
}

/* What kernel selection counts for the build log ("timed N candidates"). */
typedef struct sel_stats {
    int timed, cached, nodes_timed, close_calls;
    double timing_ms, prepare_ms;
} sel_stats;

/* A close call timed once can be decided by a burst of load that hit only one candidate's runs
 * (a 2-core machine shared with anything else).  Each candidate timed now within CLOSE_CALL of the
 * winner is timed again, interleaved with the winner (contender, winner), and both keep the
 * minimum over both rounds; the winner changes only if the contender's new minimum is lower.  The
 * winner's kept state is the first round's (a re-timed winner's state is released). */
#define CLOSE_CALL 1.3
static void confirm_close_calls(const trtl_bgraph *g, trtl_node *n, const trtl_kernel *const *ok, int nok,
                                const int *have, double *ms, bench *b, int iters, trtl_threadpool *pool,
                                sel_stats *stats, const trtl_kernel **chosen, void **state)
{
    int w = -1;
    for (int c = 0; c < nok; c++)
        if (ok[c] == *chosen)
            w = c;
    if (w < 0 || have[w] || ms[w] < 0)
        return;
    for (int c = 0; c < nok; c++) {
        if (c == w || have[c] || ms[c] < 0 || ms[c] > CLOSE_CALL * ms[w])
            continue;
        void *st = NULL, *stw = NULL;
        double t0 = now_ms();
        double again = time_kernel(g, n, ok[c], b, iters, pool, -1.0, &st);
        double again_w = time_kernel(g, n, ok[w], b, iters, pool, -1.0, &stw);
        stats->timing_ms += now_ms() - t0; /* not counted in `timed`: the same candidates, timed again */
        stats->close_calls++;
        if (stw && ok[w]->release)
            ok[w]->release(stw);
        if (again >= 0 && again < ms[c])
            ms[c] = again;
        if (again_w >= 0 && again_w < ms[w])
            ms[w] = again_w;
        if (ms[c] < ms[w]) {
            if (*state && ok[w]->release)
                ok[w]->release(*state);
            *state = st; /* the contender's state, prepared for this node just now */
            *chosen = ok[c];
            w = c;
        } else if (st && ok[c]->release) {
            ok[c]->release(st);
        }
    }
}

/* Picks among ok[0..nok) (nok > 1) by timing, through the timing cache `tc` (NULL: none, every
 * candidate timed).  Cached timings are read first, so a node whose candidates are all cached
 * allocates and times nothing.  Returns the winner; its prepared state, if the winner was timed
 * now, goes to *state (else NULL: the caller prepares it). */
static const trtl_kernel *pick_by_timing(const trtl_bgraph *g, trtl_node *n, const trtl_kernel *const *ok, int nok,
                                         int iters, trtl_threadpool *pool, trtl_timing_cache *tc, int32_t threads,
                                         sel_stats *stats, void **state, double *ms_out)
{
    char keys[MAX_CANDIDATES][KEY_MAX];
    int keyed[MAX_CANDIDATES], have[MAX_CANDIDATES], missing = 0;
    double ms[MAX_CANDIDATES];
    *state = NULL;
    for (int c = 0; c < nok; c++) {
        keyed[c] = tc && signature(g, n, ok[c], keys[c], sizeof keys[c]);
        have[c] = keyed[c] && trtl_tc_lookup(tc, threads, keys[c], &ms[c]);
        if (!have[c])
            ms[c] = -1.0;
        missing += !have[c];
        stats->cached += have[c];
    }
    double best = -1.0;
    const trtl_kernel *chosen = NULL;
    for (int c = 0; c < nok; c++) /* the cached ones first: they set the bar for the cut-off */
        if (have[c] && ms[c] >= 0 && (best < 0 || ms[c] < best)) {
            best = ms[c];
            chosen = ok[c];
        }
    if (missing) {
        bench b;
        int ready = bench_init(&b, g, n);
        if (ready)
            stats->nodes_timed++;
        for (int c = 0; c < nok && ready; c++) {
            if (have[c])
                continue;
            void *st = NULL;
            double t0 = now_ms();
            ms[c] = time_kernel(g, n, ok[c], &b, iters, pool, best, &st);
            stats->timing_ms += now_ms() - t0;
            stats->timed++;
            if (ms[c] >= 0 && (best < 0 || ms[c] < best)) {
                if (*state && chosen->release)
                    chosen->release(*state); /* the previous winner's, timed now */
                best = ms[c];
                chosen = ok[c];
                *state = st;
            } else if (st && ok[c]->release) {
                ok[c]->release(st);
            }
        }
        if (ready && chosen)
            confirm_close_calls(g, n, ok, nok, have, ms, &b, iters, pool, stats, &chosen, state);
        for (int c = 0; c < nok && ready; c++)
            if (!have[c] && keyed[c])
                trtl_tc_insert(tc, threads, keys[c], ms[c]);
        bench_free(&b, g, n);
    }
    for (int c = 0; c < nok; c++) {
        trtl_log(TRTL_LOG_VERBOSE, "layer '%s': kernel %s %.4f ms%s", n->name, ok[c]->name, ms[c],
                 have[c] ? " (timing cache)" : "");
        ms_out[c] = ms[c];
    }
    if (!chosen && *state) /* cannot happen: a state is kept only for a winner */
        *state = NULL;
    return chosen ? chosen : ok[0];
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
         * INT32 indices and an attention's BOOL mask aside). */
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
            if ((level == 0 || (!all_float && n->op != TRTL_OP_PLUGIN_V2 && n->op != TRTL_OP_QLINEAR &&
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
            chosen = pick_by_timing(g, n, ok, nok, iters, pool, tc, threads, &stats, &kept, ms_of);
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
             "%d close calls timed again) in %.1f ms; preparing kernels %.1f ms; selection total %.1f ms", stats.timed,
             stats.nodes_timed, stats.cached, tc ? "" : ", disabled", stats.close_calls, stats.timing_ms,
             stats.prepare_ms, now_ms() - t_start);
    trtl_timing_cache_destroy(tc);
    return st;
}
