/* fuse_attention.c -- replaces scaled dot-product attention written out in layers (as PyTorch
 * exports nn.MultiheadAttention / nn.TransformerEncoderLayer, HuggingFace BERT-style modules and
 * scaled_dot_product_attention to ONNX) with one internal ATTENTION step (core/params.h):
 *     S = matmul(Q', K')            op0 NONE; op1 TRANSPOSE (K' is K) or NONE (K' is K^T)
 *     S = S * c | c * S | S / c     zero or more scalar constants
 *     S = S + M | M + S             optional additive mask, FLOAT, of S's rank, broadcast to S
 *     P = softmax(S)                over the last axis
 *     y = matmul(P, V)              op0 NONE, op1 NONE
 * with Q' = Q, Q * c, c * Q or Q / c (SDPA exports scale Q and K by sqrt(scale) each), and K' = K
 * or K^T reached through any number of scalar products / divisions and pure last-two-dims
 * transposes (each flips whether the input is K or K^T; transpose folding leaves most of them as
 * op1 already).
 * ==> attention(Q, K or K^T, V [, M]) with scale = the product of the constants (divisions
 * inverted), k_transposed = whether the input is K^T [.., D, Sk], has_mask.
 * The attention node computes the scores as (Q . K) * scale + M: the same values as the layers
 * up to the rounding of the scalar products (one product instead of two or three).
 * Preconditions: every intermediate is FLOAT, is no network output, feeds only the next layer of
 * the pattern and has no fused epilogue; Q, K, V have one rank >= 2; the mask add's result has S's
 * shape (the mask broadcasts into S, not S into the mask).  The last multiply becomes the
 * attention node (keeping its output tensor); the others are marked dead.  Runs after transpose
 * folding and before epilogue fusion (which would otherwise take the mask add into the first
 * multiply as a residual). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "builder/passes/match.h"
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

#define MAX_GROUP 16
#define MAX_PEEL 4

typedef struct at_match {
    int32_t q, k, v, mask; /* mask -1 when absent */
    int32_t bias, win;     /* shifted windows: bias [1, ..] (-1: none) and window mask [1, nW, ..]; win -1: none */
    int64_t nW;
    int k_transposed;
    double scale;
    int32_t nodes[MAX_GROUP];
    int32_t n;
} at_match;

static int add(at_match *m, int32_t node)
{
    if (m->n >= MAX_GROUP)
        return 0;
    m->nodes[m->n++] = node;
    return 1;
}

/* Intermediate t = y * c, c * y or y / c for a scalar FLOAT constant c (t used once): gives y and
 * multiplies the scale; returns the node or -1. */
static int32_t scalar_step(const trtl_bgraph *g, int32_t t, int32_t *y, double *scale)
{
    int32_t p = trtl_pm_inner(g, t, 1);
    float c, other;
    if (p < 0)
        return -1;
    const trtl_node *n = &g->n[p].n;
    if (trtl_pm_is_ew(g, p, TRTL_EW_PROD)) {
        for (int side = 0; side < 2; side++)
            if (trtl_pm_scalar(g, n->in[1 - side], &c) && !trtl_pm_scalar(g, n->in[side], &other) &&
                trtl_pm_same_shape(&g->t[n->in[side]], &g->t[t])) {
                *y = n->in[side];
                *scale *= (double)c;
                return p;
            }
    } else if (trtl_pm_is_ew(g, p, TRTL_EW_DIV) && trtl_pm_scalar(g, n->in[1], &c) &&
               !trtl_pm_scalar(g, n->in[0], &other) && trtl_pm_same_shape(&g->t[n->in[0]], &g->t[t])) {
        *y = n->in[0];
        *scale /= (double)c;
        return p;
    }
    return -1;
}

/* Intermediate t = a pure transpose of the last two dims of y (t used once): gives y. */
static int32_t swap_step(const trtl_bgraph *g, int32_t t, int32_t *y)
{
    int32_t perm[TRTL_MAX_DIMS], p = trtl_pm_inner(g, t, 1);
    int r = p < 0 ? -1 : trtl_pm_pure_transpose(g, p, perm);
    if (r < 2 || perm[r - 1] != r - 2 || perm[r - 2] != r - 1)
        return -1;
    for (int d = 0; d < r - 2; d++)
        if (perm[d] != d)
            return -1;
    *y = g->n[p].n.in[0];
    return p;
}

/* The scores S (input of the softmax, after the optional mask add) back to the first multiply. */
static int scores(const trtl_bgraph *g, int32_t s, at_match *m)
{
    int32_t mm, t = s;
    for (int i = 0; i < MAX_PEEL; i++) {
        int32_t y, p = scalar_step(g, t, &y, &m->scale);
        if (p < 0)
            break;
        if (!add(m, p))
            return 0;
        t = y;
    }
    mm = trtl_pm_inner(g, t, 1);
    if (mm < 0 || g->n[mm].n.op != TRTL_OP_MATRIX_MULTIPLY || g->n[mm].n.n_in != 2 ||
        g->n[mm].n.p.matmul.op0 != TRTL_MATOP_NONE ||
        (g->n[mm].n.p.matmul.op1 != TRTL_MATOP_NONE && g->n[mm].n.p.matmul.op1 != TRTL_MATOP_TRANSPOSE))
        return 0;
    if (!add(m, mm))
        return 0;
    m->q = g->n[mm].n.in[0];
    m->k = g->n[mm].n.in[1];
    m->k_transposed = g->n[mm].n.p.matmul.op1 == TRTL_MATOP_NONE;
    for (int i = 0; i < MAX_PEEL; i++) { /* Q' = Q * c */
        int32_t y, p = scalar_step(g, m->q, &y, &m->scale);
        if (p < 0 || !add(m, p))
            break;
        m->q = y;
    }
    for (int i = 0; i < MAX_PEEL; i++) { /* K' = transposes and scalings of K */
        int32_t y, p = scalar_step(g, m->k, &y, &m->scale);
        int flip = 0;
        if (p < 0) {
            p = swap_step(g, m->k, &y);
            flip = 1;
        }
        if (p < 0 || !add(m, p))
            break;
        m->k = y;
        m->k_transposed ^= flip;
    }
    return 1;
}

/* Node p is a reshape-only shuffle (permutations the identity). */
static int is_reshape(const trtl_bgraph *g, int32_t p)
{
    const trtl_node *n = &g->n[p].n;
    if (n->op != TRTL_OP_SHUFFLE || n->n_in != 1 || n->p.shuffle.reshape_dims.nb_dims < 0)
        return 0;
    const trtl_dims *f = &n->p.shuffle.first_transpose, *t = &n->p.shuffle.second_transpose;
    for (int d = 0; d < f->nb_dims; d++)
        if (f->d[d] != d)
            return 0;
    for (int d = 0; d < t->nb_dims; d++)
        if (t->d[d] != d)
            return 0;
    return 1;
}

/* A FLOAT constant of rank r whose dim 0 is 1 and each other dim 1 or want[d] (d >= lead). */
static int const_bcast(const trtl_bgraph *g, int32_t t, int r, const int64_t *want, int lead)
{
    const trtl_bg_tensor *c = &g->t[t];
    if (c->kind != TRTL_TK_CONSTANT || c->dtype != TRTL_FLOAT || !c->data || c->dmax.nb_dims != r || c->dmax.d[0] != 1)
        return 0;
    for (int d = lead; d < r; d++)
        if (c->dmax.d[d] != 1 && c->dmax.d[d] != want[d])
            return 0;
    return 1;
}

/* Swin's shifted-window attention: the softmax input x = reshape(reshape(S [+ bias]) + W) with the first
 * reshape [B*nW, h, N, N] -> [B, nW, h, N, N], W a constant [1, nW | 1, h | 1, N | 1, N | 1], the second
 * reshape back to S's shape and bias a constant [1, h | 1, N | 1, N | 1]: the mask (bias + W) repeats along
 * S's dim 0 with period nW (mask_mode 2). */
static int windowed(const trtl_bgraph *g, int32_t x, at_match *m)
{
    int32_t r2 = trtl_pm_inner(g, x, 1);
    if (r2 < 0 || !is_reshape(g, r2))
        return 0;
    int32_t t3 = g->n[r2].n.in[0], a2 = trtl_pm_inner(g, t3, 1);
    if (a2 < 0 || !trtl_pm_is_ew(g, a2, TRTL_EW_SUM))
        return 0;
    const trtl_bg_tensor *xt = &g->t[x];
    int r = xt->dmax.nb_dims;
    if (r < 3 || r + 1 > TRTL_MAX_DIMS)
        return 0;
    for (int side = 0; side < 2; side++) {
        int32_t w = g->n[a2].n.in[1 - side], t2 = g->n[a2].n.in[side];
        int32_t r1 = trtl_pm_inner(g, t2, 1);
        if (r1 < 0 || !is_reshape(g, r1) || !trtl_pm_same_shape(&g->t[t2], &g->t[t3]))
            continue;
        int32_t t1 = g->n[r1].n.in[0];
        const trtl_bg_tensor *s1 = &g->t[t1], *v = &g->t[t2];
        if (!trtl_pm_same_shape(s1, xt) || v->dmax.nb_dims != r + 1 || v->dmin.d[1] != v->dmax.d[1] || v->dmax.d[1] < 1)
            continue;
        int64_t nW = v->dmax.d[1], want[TRTL_MAX_DIMS];
        int ok = 1;
        for (int d = 1; d < r && ok; d++) /* the view's trailing dims are S's, static */
            ok = s1->dmin.d[d] == s1->dmax.d[d] && v->dmin.d[d + 1] == s1->dmin.d[d] && v->dmax.d[d + 1] == s1->dmax.d[d];
        ok = ok && s1->dmin.d[0] == v->dmin.d[0] * nW && s1->dopt.d[0] == v->dopt.d[0] * nW &&
             s1->dmax.d[0] == v->dmax.d[0] * nW;
        want[0] = 1;
        want[1] = nW;
        for (int d = 1; d < r; d++)
            want[d + 1] = s1->dmax.d[d];
        if (!ok || !const_bcast(g, w, r + 1, want, 1))
            continue;
        int32_t n0 = m->n;
        double s0 = m->scale;
        m->win = w;
        m->nW = nW;
        m->bias = -1;
        if (!add(m, r2) || !add(m, a2) || !add(m, r1))
            return 0;
        int32_t a1 = trtl_pm_inner(g, t1, 1);
        if (a1 >= 0 && trtl_pm_is_ew(g, a1, TRTL_EW_SUM)) {
            for (int bs = 0; bs < 2; bs++) {
                int32_t b = g->n[a1].n.in[1 - bs], sc = g->n[a1].n.in[bs];
                int32_t n1 = m->n;
                if (const_bcast(g, b, r, s1->dmax.d, 1) && trtl_pm_same_shape(&g->t[sc], s1) && add(m, a1) &&
                    scores(g, sc, m)) {
                    m->bias = b;
                    return 1;
                }
                m->n = n1;
                m->scale = s0;
            }
        }
        if (scores(g, t1, m))
            return 1;
        m->n = n0;
        m->scale = s0;
        m->win = -1;
    }
    return 0;
}

/* The mask of a shifted-window match: C [nW, dims 1.. of S] = bias + W (broadcast), as one constant;
 * -1 on failure (error set). */
static int32_t window_mask(trtl_bgraph *g, const at_match *m, int32_t s_tensor, const char *node)
{
    const trtl_bg_tensor *s1 = &g->t[s_tensor];
    int r = s1->dmax.nb_dims;
    trtl_dims cd;
    cd.nb_dims = r;
    cd.d[0] = m->nW;
    int64_t n = m->nW;
    for (int d = 1; d < r; d++) {
        cd.d[d] = s1->dmax.d[d];
        n *= cd.d[d];
    }
    float *data = trtl_aligned_alloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!data) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    const trtl_bg_tensor *wt = &g->t[m->win], *bt = m->bias >= 0 ? &g->t[m->bias] : NULL;
    const float *W = wt->data, *Bv = bt ? bt->data : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, wo = 0, bo = 0, ws = 1, bs = 1;
        for (int d = r - 1; d >= 0; d--) {
            int64_t idx = rem % cd.d[d];
            rem /= cd.d[d];
            int64_t wdim = wt->dmax.d[d + 1]; /* W is [1, nW, ..]: its dim d + 1 is C's dim d */
            wo += (wdim == 1 ? 0 : idx) * ws;
            ws *= wdim;
            if (bt && d > 0) {
                int64_t bdim = bt->dmax.d[d];
                bo += (bdim == 1 ? 0 : idx) * bs;
                bs *= bdim;
            }
        }
        data[i] = (Bv ? Bv[bo] : 0.0f) + W[wo];
    }
    char name[256];
    snprintf(name, sizeof name, "%.200s/window_mask", node);
    int32_t t = trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_CONSTANT);
    if (t < 0) {
        trtl_aligned_free(data);
        return -1;
    }
    g->t[t].data = data;
    g->t[t].dmin = g->t[t].dopt = g->t[t].dmax = cd;
    return t;
}

/* Node i is the second multiply of an attention pattern: fills m. */
static int match_at(const trtl_bgraph *g, int32_t i, at_match *m)
{
    const trtl_node *n = &g->n[i].n;
    if (g->n[i].dead || n->op != TRTL_OP_MATRIX_MULTIPLY || n->n_in != 2 || n->epi.act != TRTL_ACT_NONE ||
        n->epi.has_residual || n->p.matmul.op0 != TRTL_MATOP_NONE || n->p.matmul.op1 != TRTL_MATOP_NONE ||
        g->t[n->out[0]].dtype != TRTL_FLOAT)
        return 0;
    m->n = 0;
    m->mask = -1;
    m->scale = 1.0;
    m->v = n->in[1];
    int32_t sm = trtl_pm_inner(g, n->in[0], 1);
    if (sm < 0 || g->n[sm].n.op != TRTL_OP_SOFTMAX || g->n[sm].n.n_in != 1)
        return 0;
    int32_t x = g->n[sm].n.in[0];
    int r = g->t[x].dmax.nb_dims;
    if (r < 2 || g->n[sm].n.p.softmax.axes != 1u << (r - 1) || g->t[x].dtype != TRTL_FLOAT)
        return 0;
    add(m, i);
    add(m, sm);
    m->win = -1;
    if (windowed(g, x, m))
        return 1;
    int32_t an = trtl_pm_inner(g, x, 1);
    if (an >= 0 && trtl_pm_is_ew(g, an, TRTL_EW_SUM)) {
        const trtl_node *a = &g->n[an].n;
        for (int side = 0; side < 2; side++) {
            int32_t n0 = m->n;
            double s0 = m->scale;
            const trtl_bg_tensor *mk = &g->t[a->in[1 - side]];
            if (mk->dtype == TRTL_FLOAT && mk->dmax.nb_dims == r && trtl_pm_same_shape(&g->t[a->in[side]], &g->t[x]) &&
                add(m, an) && scores(g, a->in[side], m)) {
                m->mask = a->in[1 - side];
                return 1;
            }
            m->n = n0;
            m->scale = s0;
        }
    }
    return scores(g, x, m);
}

/* Q, K, V of one rank >= 2, FLOAT, and the ranks the multiplies saw. */
static int operands_ok(const trtl_bgraph *g, const at_match *m)
{
    int32_t ts[3] = {m->q, m->k, m->v};
    int r = g->t[m->q].dmax.nb_dims;
    if (r < 2)
        return 0;
    for (int i = 0; i < 3; i++) {
        const trtl_bg_tensor *t = &g->t[ts[i]];
        if (t->dtype != TRTL_FLOAT || t->dmax.nb_dims != r || t->dmin.nb_dims != r || t->dopt.nb_dims != r)
            return 0;
    }
    return 1;
}

static trtl_status rewrite(trtl_bgraph *g, int32_t i, at_match *m, trtl_pass_log *log)
{
    if (m->win >= 0 && (m->mask = window_mask(g, m, g->n[i].n.in[0], g->n[i].n.name)) < 0)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    trtl_node *f = &g->n[i].n;
    int32_t *room = realloc(f->in, sizeof(int32_t) * 5); /* Q, K, V, mask and a fused residual */
    if (!room)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    f->in = room;
    trtl_pm_sort_nodes(m->nodes, m->n);
    char *name = trtl_pm_join_names(g, m->nodes, m->n);
    if (!name)
        return TRTL_ERR_OUT_OF_MEMORY; /* the message is set */
    trtl_params p;
    memset(&p, 0, sizeof p);
    trtl_op_table[TRTL_OP_ATTENTION].init(&p);
    p.attn.scale = (float)m->scale;
    p.attn.k_transposed = m->k_transposed;
    p.attn.mask_mode = m->win >= 0 ? 2 : m->mask >= 0;
    trtl_pass_log_add(log, "fused %d layers computing attention of '%s' (scale %g%s%s) into '%s'", (int)m->n,
                      g->t[m->q].name, m->scale, m->k_transposed ? ", K transposed" : "",
                      m->win >= 0 ? ", shifted-window mask" : m->mask >= 0 ? ", masked" : "", name);
    const int32_t in[4] = {m->q, m->k, m->v, m->mask};
    trtl_pm_replace(g, i, m->nodes, m->n, TRTL_OP_ATTENTION, &p, in, m->mask >= 0 ? 4 : 3, name);
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_attention(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "attention fusion");
    for (int32_t i = 0; i < g->nn; i++) {
        at_match m;
        memset(&m, 0, sizeof m);
        if (!match_at(g, i, &m) || !operands_ok(g, &m))
            continue;
        if (m.win >= 0 && ((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u)) {
            /* the window mask would be a new constant (bias + W) that refitting either cannot reach */
            trtl_log(TRTL_LOG_INFO, "builder: shifted-window attention of '%s' not fused: BuilderFlag.REFIT keeps its "
                     "bias and window mask as given", g->t[m.q].name);
            continue;
        }
        TRTL_TRY(rewrite(g, i, &m, &log));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
