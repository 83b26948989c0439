/* fold_transpose.c -- transposes that need no step of their own.
 *
 * A "pure transpose" is a shuffle with no reshape whose first and second permutations compose to
 * one permutation p (y[i] = x[first[second[i]]] over dims i, a missing permutation being the
 * identity), with FLOAT input and output.
 *   1. Consecutive pure transposes compose: T2(T1(x)) with T1's result used by T2 only (and no
 *      network output) becomes one transpose T2 of x with p[i] = p1[p2[i]]; T1 is marked dead.
 *      When the composition is the identity and T2's result is no network output, T2 vanishes
 *      too: its consumers read x.  (An identity whose result is a network output stays as an
 *      identity shuffle, which copies.)
 *   2. A pure transpose that swaps the last two dims (p = [0, .., r-3, r-1, r-2]) feeding input
 *      i (0 or 1) of a matrix multiply whose operation i is NONE or TRANSPOSE becomes that
 *      operation's flag (NONE <-> TRANSPOSE: op(x^T) with the flag flipped reads the same matrix),
 *      since every matrix multiply kernel takes transposed operands (kernels/blas/matrix_multiply.c,
 *      ref/matrix_multiply.c); the multiply reads x.  The shuffle stays for its other consumers and
 *      is removed by the dead-layer clean-up when none is left.
 *   3. A layer normalization over the last dim between a pure transpose T1 (p) and a pure transpose T2 back
 *      (p[q[i]] = i), each the other's only neighbour (T1's result read by the normalization only, the
 *      normalization's by T2 only, neither a network output), becomes one normalization over dim p[r-1] of T1's
 *      input, writing T2's output: PyTorch exports ConvNeXt's LayerNorm2d (channels of NCHW) as permute ->
 *      LayerNorm -> permute back.  Its scale and bias (FLOAT constants read by it only, 1 in every dim but the
 *      last) are re-shaped to vary along dim p[r-1] (same values, same order); "normalization.channels" runs it.
 * Same values exactly: a transpose moves elements, and the multiply reads the same ones; the normalization
 * computes the same slices.  Runs before attention fusion, which then sees Q K^T as one multiply with op1
 * TRANSPOSE. */
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/status.h"
#include "core/dims.h"

static int is_identity(const int32_t *p, int r)
{
    for (int d = 0; d < r; d++)
        if (p[d] != d)
            return 0;
    return 1;
}

static int swaps_last_two(const int32_t *p, int r)
{
    if (r < 2 || p[r - 1] != r - 2 || p[r - 2] != r - 1)
        return 0;
    for (int d = 0; d < r - 2; d++)
        if (p[d] != d)
            return 0;
    return 1;
}

/* Every live node reading tensor `from` reads `to` instead. */
static void rewire(trtl_bgraph *g, int32_t from, int32_t to)
{
    for (int32_t i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            for (int32_t k = 0; k < g->n[i].n.n_in; k++)
                if (g->n[i].n.in[k] == from)
                    g->n[i].n.in[k] = to;
}

static trtl_status compose(trtl_bgraph *g, trtl_pass_log *log)
{
    int32_t p2[TRTL_MAX_DIMS], p1[TRTL_MAX_DIMS];
    for (int32_t i = 0; i < g->nn; i++) {
        int r = trtl_pm_pure_transpose(g, i, p2);
        if (r < 0)
            continue;
        trtl_node *n = &g->n[i].n;
        int32_t a = trtl_pm_inner(g, n->in[0], 1);
        if (a < 0 || trtl_pm_pure_transpose(g, a, p1) != r)
            continue;
        trtl_dims c;
        c.nb_dims = r;
        for (int d = 0; d < r; d++)
            c.d[d] = p1[p2[d]];
        int32_t x = g->n[a].n.in[0];
        g->n[a].dead = 1;
        n->in[0] = x;
        n->p.shuffle.first_transpose = c;
        n->p.shuffle.second_transpose.nb_dims = 0;
        int32_t cp[TRTL_MAX_DIMS];
        for (int d = 0; d < r; d++)
            cp[d] = (int32_t)c.d[d];
        if (is_identity(cp, r) && !trtl_bg_is_output(g, n->out[0])) {
            trtl_pass_log_add(log, "'%s' and '%s' cancel out", g->n[a].n.name, n->name);
            g->n[i].dead = 1;
            rewire(g, n->out[0], x);
        } else {
            trtl_pass_log_add(log, "'%s' composed into '%s'", g->n[a].n.name, n->name);
        }
    }
    return TRTL_OK;
}

static trtl_status into_matmul(trtl_bgraph *g, trtl_pass_log *log)
{
    int32_t p[TRTL_MAX_DIMS];
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || n->op != TRTL_OP_MATRIX_MULTIPLY || n->n_in < 2)
            continue;
        for (int k = 0; k < 2; k++) {
            int32_t *op = k == 0 ? &n->p.matmul.op0 : &n->p.matmul.op1;
            if (*op != TRTL_MATOP_NONE && *op != TRTL_MATOP_TRANSPOSE)
                continue;
            int32_t s = g->t[n->in[k]].producer;
            if (s < 0 || trtl_pm_pure_transpose(g, s, p) < 0 || !swaps_last_two(p, g->t[n->in[k]].dmax.nb_dims))
                continue;
            trtl_pass_log_add(log, "transpose '%s' folded into input %d of '%s'", g->n[s].n.name, k, n->name);
            n->in[k] = g->n[s].n.in[0];
            *op = *op == TRTL_MATOP_NONE ? TRTL_MATOP_TRANSPOSE : TRTL_MATOP_NONE;
        }
    }
    return TRTL_OK;
}

/* Constant t (scale or bias of normalization node i, rank r) may be re-shaped to vary along dim a instead of the
 * last: FLOAT, read by node i only, 1 in every dim but the last. */
static int affine_movable(const trtl_bgraph *g, int32_t t, int r)
{
    const trtl_bg_tensor *c = &g->t[t];
    if (c->kind != TRTL_TK_CONSTANT || !c->data || c->dtype != TRTL_FLOAT || c->dmax.nb_dims != r ||
        trtl_bg_consumers(g, t, NULL) != 1 || trtl_bg_is_output(g, t))
        return 0;
    for (int d = 0; d < r - 1; d++)
        if (c->dmax.d[d] != 1)
            return 0;
    return 1;
}

static void affine_move(trtl_bgraph *g, int32_t t, int r, int a)
{
    trtl_bg_tensor *c = &g->t[t];
    const int64_t n = c->dmax.d[r - 1];
    trtl_dims d;
    d.nb_dims = r;
    for (int k = 0; k < r; k++)
        d.d[k] = k == a ? n : 1;
    c->dmin = c->dopt = c->dmax = d;
}

static trtl_status norm_channels(trtl_bgraph *g, trtl_pass_log *log)
{
    int32_t p1[TRTL_MAX_DIMS], p2[TRTL_MAX_DIMS];
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || n->op != TRTL_OP_NORMALIZATION || n->n_in != 3 || n->p.norm.num_groups > 1 ||
            n->epi.act != TRTL_ACT_NONE || n->epi.has_residual)
            continue;
        int32_t a1 = trtl_pm_inner(g, n->in[0], 1);
        int r = a1 < 0 ? -1 : trtl_pm_pure_transpose(g, a1, p1);
        if (r < 2 || n->p.norm.axes != 1u << (r - 1))
            continue;
        int32_t a2 = -1;
        if (trtl_pm_inner(g, n->out[0], 1) != i || trtl_bg_consumers(g, n->out[0], &a2) != 1 || a2 < 0 ||
            trtl_pm_pure_transpose(g, a2, p2) != r)
            continue;
        int inverse = 1;
        for (int d = 0; d < r; d++)
            inverse &= p1[p2[d]] == d;
        if (!inverse || !affine_movable(g, n->in[1], r) || !affine_movable(g, n->in[2], r))
            continue;
        const int a = p1[r - 1];
        trtl_pass_log_add(log, "'%s' -> '%s' -> '%s' is one normalization over dim %d", g->n[a1].n.name, n->name,
                          g->n[a2].n.name, a);
        affine_move(g, n->in[1], r, a);
        affine_move(g, n->in[2], r, a);
        n->in[0] = g->n[a1].n.in[0];
        n->p.norm.axes = 1u << a;
        n->out[0] = g->n[a2].n.out[0];
        g->t[n->out[0]].producer = i;
        g->n[a1].dead = 1;
        g->n[a2].dead = 1;
    }
    return TRTL_OK;
}

trtl_status trtl_pass_fold_transpose(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "transpose folding");
    TRTL_TRY(compose(g, &log));
    TRTL_TRY(into_matmul(g, &log));
    TRTL_TRY(norm_channels(g, &log));
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
