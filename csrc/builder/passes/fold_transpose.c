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
 *   4. A per-channel scale after a transpose of a linear layer's result, t = x W + b -> T (p) -> t' * g, with g
 *      a FLOAT constant that is 1 in every dim but the one T takes from t's last dim (ConvNeXt's layer scale after
 *      its block's second linear layer and the permute back), folds into W's columns and b: x (W g) + b g -> T.
 *      W (op1 NONE: [1.., K, N]; TRANSPOSE: [1.., N, K]) and b (1 in every dim but the last, N) are FLOAT
 *      constants read by that layer only, the multiply, add and transpose results each read by the next step only;
 *      the product's readers read the transpose's result.  W and b get new scaled buffers (another tensor may
 *      share the old ones).  Not the same values exactly: (x W + b) g rounds once more than x (W g) + b g.
 * 3 and 4 are skipped under BuilderFlag.REFIT (weights stay as given, where refit finds them).
 * Same values exactly in 1-3: a transpose moves elements, and the multiply reads the same ones; the normalization
 * computes the same slices.  Runs before attention fusion, which then sees Q K^T as one multiply with op1
 * TRANSPOSE. */
#include <string.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/alloc.h"
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
            trtl_pm_rewire(g, n->out[0], x);
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

/* Constant t: a FLOAT constant with values, read by one layer, no network output. */
static int private_const(const trtl_bgraph *g, int32_t t)
{
    const trtl_bg_tensor *c = &g->t[t];
    return c->kind == TRTL_TK_CONSTANT && c->data && c->dtype == TRTL_FLOAT && trtl_bg_consumers(g, t, NULL) == 1 &&
           !trtl_bg_is_output(g, t);
}

/* The one dim of constant t (rank r) that is not 1 (-1: all 1), or -2 when there are several. */
static int only_dim(const trtl_bgraph *g, int32_t t, int r)
{
    const trtl_dims *d = &g->t[t].dmax;
    int k = -1;
    if (d->nb_dims != r)
        return -2;
    for (int i = 0; i < r; i++)
        if (d->d[i] != 1)
            k = k == -1 ? i : -2;
    return k;
}

/* Replaces constant t's values by v[i] * gain[(i / inner) % N] (a new buffer). */
static int scale_const(trtl_bgraph *g, int32_t t, const float *gain, int64_t N, int64_t inner)
{
    trtl_bg_tensor *c = &g->t[t];
    const int64_t n = trtl_volume(&c->dmax);
    float *v = trtl_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!v)
        return 0;
    const float *old = c->data;
    for (int64_t i = 0; i < n; i++)
        v[i] = old[i] * gain[(i / inner) % N];
    int shared = 0;
    for (int32_t u = 0; u < g->nt; u++)
        shared |= u != t && g->t[u].data == c->data;
    if (!shared)
        trtl_aligned_free(c->data);
    c->data = v;
    return 1;
}

static trtl_status layer_scale(trtl_bgraph *g, trtl_pass_log *log)
{
    int32_t p[TRTL_MAX_DIMS];
    for (int32_t i = 0; i < g->nn; i++) {
        if (!trtl_pm_is_ew(g, i, TRTL_EW_PROD) || trtl_bg_is_output(g, g->n[i].n.out[0]))
            continue;
        trtl_node *m = &g->n[i].n;
        for (int side = 0; side < 2; side++) {
            const int32_t gt = m->in[1 - side], s = trtl_pm_inner(g, m->in[side], 1);
            const int r = s < 0 ? -1 : trtl_pm_pure_transpose(g, s, p);
            if (r < 1 || !private_const(g, gt))
                continue;
            const int k = only_dim(g, gt, r);
            const int32_t a = trtl_pm_inner(g, g->n[s].n.in[0], 1);
            if (k < 0 || p[k] != r - 1 || a < 0 || !trtl_pm_is_ew(g, a, TRTL_EW_SUM))
                continue;
            const int64_t N = g->t[gt].dmax.d[k];
            int32_t mm = -1, b = -1;
            for (int q = 0; q < 2 && mm < 0; q++) {
                const int32_t cand = trtl_pm_inner(g, g->n[a].n.in[q], 1), bt = g->n[a].n.in[1 - q];
                if (cand >= 0 && g->n[cand].n.op == TRTL_OP_MATRIX_MULTIPLY && g->n[cand].n.n_in == 2 &&
                    private_const(g, bt) && only_dim(g, bt, r) == r - 1 && g->t[bt].dmax.d[r - 1] == N) {
                    mm = cand;
                    b = bt;
                }
            }
            if (mm < 0)
                continue;
            const trtl_node *mn = &g->n[mm].n;
            const int32_t w = mn->in[1], op1 = mn->p.matmul.op1;
            const trtl_dims *wd = &g->t[w].dmax;
            if (!private_const(g, w) || wd->nb_dims < 2 || (op1 != TRTL_MATOP_NONE && op1 != TRTL_MATOP_TRANSPOSE) ||
                wd->d[op1 == TRTL_MATOP_NONE ? wd->nb_dims - 1 : wd->nb_dims - 2] != N ||
                trtl_volume_range(wd, 0, wd->nb_dims - 2) != 1)
                continue;
            const float *gain = g->t[gt].data;
            if (!scale_const(g, w, gain, N, op1 == TRTL_MATOP_NONE ? 1 : wd->d[wd->nb_dims - 1]) ||
                !scale_const(g, b, gain, N, 1))
                return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory folding '%s'", m->name);
            trtl_pass_log_add(log, "scale '%s' folded into the weights and bias of '%s' before transpose '%s'",
                              m->name, mn->name, g->n[s].n.name);
            g->n[i].dead = 1;
            trtl_pm_rewire(g, m->out[0], g->n[s].n.out[0]);
            break;
        }
    }
    return TRTL_OK;
}

trtl_status trtl_pass_fold_transpose(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "transpose folding");
    TRTL_TRY(compose(g, &log));
    TRTL_TRY(into_matmul(g, &log));
    if ((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u) { /* 3 re-shapes, 4 changes weights that refit may replace */
        trtl_log(TRTL_LOG_INFO, "builder pass 'fold_transpose': normalization and layer-scale folding skipped: "
                                "BuilderFlag.REFIT keeps weights as given");
    } else {
        TRTL_TRY(norm_channels(g, &log));
        TRTL_TRY(layer_scale(g, &log));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
