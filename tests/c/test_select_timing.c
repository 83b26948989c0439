/*
 * test_select_timing.c -- kernel selection's timing rounds, driven by made-up timings.
 *
 * builder/select_hook.h replaces every sample a build takes by the hook's value, so these checks
 * are deterministic (no clock is read): a 3x3 convolution (several candidates on every CPU with
 * AVX2 or AVX-512) is built with scripted per-candidate timings, and the test checks
 *   - alternation: a warm-up run of each candidate in registry order, then rounds in which each
 *     candidate still in the race runs once, in registry order (A B C A B C ...);
 *   - cut-offs: a candidate far over the leader stops after one round; a near-tie stops after
 *     the minimum of three rounds; a 5% gap keeps both racing longer;
 *   - the minimum: a burst of load on the fastest candidate's first rounds does not decide;
 *   - the near-tie rule: within 3% the first candidate in registry order is kept, even when
 *     slower; over 3% the faster one;
 *   - a failed candidate (negative sample) is never kept;
 *   - a warm rebuild (same timing cache) times nothing and keeps what the cold build kept.
 * The kernel kept is read from the built engine (trtl_engine_layer_kernel).  Exit status 0 and
 * "OK" on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/trtlite.h"
#include "builder/select_hook.h"

#define LAYER "conv"
#define MAXK 32
#define MAXCALLS 4096

typedef struct script {
    double base[MAXK];  /* per candidate (index: order of first appearance = registry order) */
    double burst;       /* added to candidate `burst_on`'s samples of rounds 1..burst_rounds */
    int burst_on, burst_rounds;
    int fail;           /* candidate whose samples are all -1 (a failing run); -1: none */
    /* recorded */
    int nk;
    char names[MAXK][96];
    int calls, call_k[MAXCALLS], call_sample[MAXCALLS];
} script;

static int failures;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            failures++;                                                            \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                 \
            printf(__VA_ARGS__);                                                   \
            printf("\n");                                                          \
        }                                                                          \
    } while (0)

static double hook(void *user, const char *layer, const char *kernel, int sample)
{
    script *s = user;
    if (strcmp(layer, LAYER) != 0)
        return 1.0;
    int k = 0;
    while (k < s->nk && strcmp(s->names[k], kernel) != 0)
        k++;
    if (k == s->nk && s->nk < MAXK)
        snprintf(s->names[s->nk++], sizeof s->names[0], "%s", kernel);
    if (s->calls < MAXCALLS) {
        s->call_k[s->calls] = k;
        s->call_sample[s->calls] = sample;
        s->calls++;
    }
    if (k == s->fail)
        return -1.0;
    double ms = k < MAXK ? s->base[k] : 9.0;
    if (k == s->burst_on && sample >= 1 && sample <= s->burst_rounds)
        ms += s->burst;
    return ms;
}

static void quiet_log(void *user, trtl_severity sev, const char *msg)
{
    (void)user;
    (void)sev;
    (void)msg;
}

static float weights[16 * 16 * 9], bias[16];

/* Builds input 1x16x20x20 -> conv 3x3 16->16 (pad 1) with `cache` (a timing cache, kept across
 * builds), the hook on; returns the kernel the conv kept ("" on failure). */
static const char *build(script *s, trtl_timing_cache *cache, char *kept, size_t cap)
{
    trtl_network *net = NULL;
    trtl_builder_config *cfg = NULL;
    trtl_engine *eng = NULL;
    trtl_tensor *in;
    trtl_layer *conv;
    trtl_dims d = {4, {1, 16, 20, 20}}, k3 = {2, {3, 3}}, pad1 = {2, {1, 1}};
    kept[0] = '\0';
    s->calls = 0;
    if (trtl_network_create(0, &net) != TRTL_OK || trtl_network_add_input(net, "x", TRTL_FLOAT, &d, &in) != TRTL_OK ||
        trtl_network_add_convolution(net, in, 16, &k3, (trtl_weights){TRTL_FLOAT, weights, 16 * 16 * 9},
                                     (trtl_weights){TRTL_FLOAT, bias, 16}, &conv) != TRTL_OK ||
        trtl_layer_set_dims(conv, "padding_nd", &pad1) != TRTL_OK || trtl_layer_set_name(conv, LAYER) != TRTL_OK ||
        trtl_network_mark_output(net, trtl_layer_output(conv, 0)) != TRTL_OK ||
        trtl_builder_config_create(&cfg) != TRTL_OK || trtl_builder_config_set_num_threads(cfg, 1) != TRTL_OK ||
        trtl_builder_config_set_logger(cfg, quiet_log, NULL) != TRTL_OK ||
        trtl_builder_config_set_timing_cache(cfg, cache, 1) != TRTL_OK) {
        printf("FAIL: network setup: %s\n", trtl_last_error());
        failures++;
        goto done;
    }
    trtl_select_set_timing_hook(hook, s);
    trtl_status st = trtl_build(net, cfg, &eng);
    trtl_select_set_timing_hook(NULL, NULL);
    if (st != TRTL_OK) {
        printf("FAIL: build: %s\n", trtl_last_error());
        failures++;
        goto done;
    }
    for (int32_t i = 0; i < trtl_engine_num_layers(eng); i++)
        if (strstr(trtl_engine_layer_name(eng, i), LAYER))
            snprintf(kept, cap, "%s", trtl_engine_layer_kernel(eng, i));
done:
    trtl_engine_destroy(eng);
    trtl_builder_config_destroy(cfg);
    trtl_network_destroy(net);
    return kept;
}

/* Timed samples (sample >= 1) candidate k took in the last build. */
static int samples_of(const script *s, int k)
{
    int n = 0;
    for (int i = 0; i < s->calls; i++)
        n += s->call_k[i] == k && s->call_sample[i] >= 1;
    return n;
}

/* Alternation: sample numbers never decrease along the calls; within one sample number (the
 * warm-up 0, then each round) candidates come in registry order, each once; every candidate has
 * its warm-up first, and a candidate's rounds are 1, 2, ... without a gap (it runs in every round
 * until it is out). */
static void check_alternation(const script *s, const char *what)
{
    for (int i = 1; i < s->calls; i++) {
        EXPECT(s->call_sample[i] >= s->call_sample[i - 1], "%s: call %d: round %d after round %d", what, i,
               s->call_sample[i], s->call_sample[i - 1]);
        if (s->call_sample[i] == s->call_sample[i - 1])
            EXPECT(s->call_k[i] > s->call_k[i - 1], "%s: call %d: candidate %d after %d in round %d", what, i,
                   s->call_k[i], s->call_k[i - 1], s->call_sample[i]);
    }
    for (int k = 0; k < s->nk; k++) {
        int next = 0;
        for (int i = 0; i < s->calls; i++)
            if (s->call_k[i] == k) {
                EXPECT(s->call_sample[i] == next, "%s: candidate %d ran round %d, expected %d", what, k,
                       s->call_sample[i], next);
                next = s->call_sample[i] + 1;
            }
    }
    for (int i = 0; i < s->calls && s->call_sample[i] == 0; i++)
        EXPECT(s->call_k[i] == i, "%s: warm-up call %d is candidate %d", what, i, s->call_k[i]);
}

/* A script with every candidate at `slow` ms, then the given ones set. */
static void reset(script *s, double slow)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < MAXK; k++)
        s->base[k] = slow;
    s->burst_on = s->fail = -1;
}

int main(void)
{
    for (int i = 0; i < 16 * 16 * 9; i++)
        weights[i] = (float)((i * 37) % 19 - 9) * 0.01f;
    char kept[128];
    script s;

    /* discovery: which candidates race, in registry order */
    trtl_timing_cache *tc = NULL;
    reset(&s, 1.0);
    trtl_timing_cache_create(NULL, 0, &tc);
    build(&s, tc, kept, sizeof kept);
    trtl_timing_cache_destroy(tc);
    const int nk = s.nk;
    printf("%d candidates:", nk);
    for (int k = 0; k < nk; k++)
        printf(" %s", s.names[k]);
    printf("\n");
    if (nk < 2) {
        printf("FAIL: the 3x3 convolution has %d timed candidates on this CPU (2 or more expected)\n", nk);
        return 1;
    }
    check_alternation(&s, "all equal");
    EXPECT(strcmp(kept, s.names[0]) == 0, "all equal: kept %s, expected the first in registry order %s", kept,
           s.names[0]);
    for (int k = 0; k < nk; k++)
        EXPECT(samples_of(&s, k) == 3, "all equal: candidate %d took %d samples (a tie stops after 3)", k,
               samples_of(&s, k));

    /* a clear winner (the second); the first is 2x slower: out after one round */
    reset(&s, 1.9);
    s.base[0] = 2.0;
    s.base[1] = 1.0;
    trtl_timing_cache_create(NULL, 0, &tc);
    build(&s, tc, kept, sizeof kept);
    check_alternation(&s, "clear winner");
    EXPECT(strcmp(kept, s.names[1]) == 0, "clear winner: kept %s, expected %s", kept, s.names[1]);
    EXPECT(samples_of(&s, 0) == 1, "clear winner: the 2x slower candidate took %d samples, expected 1",
           samples_of(&s, 0));
    /* warm rebuild: the cache decides, nothing is timed, the same kernel is kept */
    char again[128];
    script s2;
    reset(&s2, 0.5);
    s2.base[0] = 0.1; /* would win if it were timed */
    build(&s2, tc, again, sizeof again);
    EXPECT(s2.calls == 0, "warm rebuild: %d runs timed, expected none", s2.calls);
    EXPECT(strcmp(again, kept) == 0, "warm rebuild kept %s, the cold build %s", again, kept);
    trtl_timing_cache_destroy(tc);

    /* near-tie: the first is 2% slower than the second: kept by registry order; the rest are 3x */
    reset(&s, 3.0);
    s.base[0] = 1.02;
    s.base[1] = 1.00;
    trtl_timing_cache_create(NULL, 0, &tc);
    build(&s, tc, kept, sizeof kept);
    check_alternation(&s, "near-tie");
    EXPECT(strcmp(kept, s.names[0]) == 0, "near-tie: kept %s, expected %s (registry order)", kept, s.names[0]);
    EXPECT(samples_of(&s, 0) == 3 && samples_of(&s, 1) == 3, "near-tie: %d and %d samples, expected 3 each",
           samples_of(&s, 0), samples_of(&s, 1));
    for (int k = 2; k < nk; k++)
        EXPECT(samples_of(&s, k) <= 1, "near-tie: 3x slower candidate %d took %d samples", k, samples_of(&s, k));
    reset(&s2, 0.5);
    s2.base[1] = 0.1;
    build(&s2, tc, again, sizeof again);
    EXPECT(s2.calls == 0 && strcmp(again, kept) == 0, "near-tie warm rebuild: %d runs, kept %s (cold: %s)", s2.calls,
           again, kept);
    trtl_timing_cache_destroy(tc);

    /* not a tie: the first is 5% slower: the second is kept, after more rounds than a tie takes */
    reset(&s, 3.0);
    s.base[0] = 1.05;
    s.base[1] = 1.00;
    trtl_timing_cache_create(NULL, 0, &tc);
    build(&s, tc, kept, sizeof kept);
    check_alternation(&s, "5% gap");
    EXPECT(strcmp(kept, s.names[1]) == 0, "5%% gap: kept %s, expected %s", kept, s.names[1]);
    EXPECT(samples_of(&s, 0) > 3 && samples_of(&s, 0) == samples_of(&s, 1), "5%% gap: %d and %d samples",
           samples_of(&s, 0), samples_of(&s, 1));
    trtl_timing_cache_destroy(tc);

    /* a burst of load on the fastest candidate's first two rounds: its minimum still wins */
    reset(&s, 3.0);
    s.base[0] = 1.2;
    s.base[1] = 1.0;
    s.burst_on = 1;
    s.burst = 0.4; /* +40%: within the cut-off margins of rounds 1 and 2 (60%, 30%) */
    s.burst_rounds = 2;
    trtl_timing_cache_create(NULL, 0, &tc);
    build(&s, tc, kept, sizeof kept);
    check_alternation(&s, "burst");
    EXPECT(strcmp(kept, s.names[1]) == 0, "burst: kept %s, expected %s (its minimum)", kept, s.names[1]);
    trtl_timing_cache_destroy(tc);

    /* a candidate whose runs fail is never kept, however fast the others say it is */
    reset(&s, 2.0);
    s.base[0] = 0.5;
    s.fail = 0;
    trtl_timing_cache_create(NULL, 0, &tc);
    build(&s, tc, kept, sizeof kept);
    EXPECT(kept[0] && strcmp(kept, s.names[0]) != 0, "failing candidate: kept %s", kept);
    EXPECT(samples_of(&s, 0) == 0, "failing candidate: %d timed samples after a failed warm-up", samples_of(&s, 0));
    trtl_timing_cache_destroy(tc);

    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
