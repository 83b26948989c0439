/* fuse_linear.c -- a matrix multiply by a constant weight becomes the internal LINEAR op, which the row-GEMM
 * fully connected kernels run (packed, multithreaded fp32; bf16 / AMX under BuilderFlag.BF16) with the bias,
 * the activation and a residual add in their epilogue:
 *     y = A[.., M, K] x B[1.., K, N]  (+ c[1.., N])  (-> act)  (+ skip)
 *     ==>  one LINEAR node:  y = act(A W^T + c) [+ skip: y = act(A W^T + c + skip)],  W[n, k] = B[k, n]
 * (B given as TRANSPOSE, [N, K], is W itself).  The exporters' MatMul + Add(bias) of every transformer
 * projection and feed-forward layer is this pattern; before this pass it ran as a single-threaded BLAS call
 * plus one or two elementwise passes over the result.
 *
 * Preconditions: op0 NONE on a FLOAT input of rank >= 2; B a FLOAT constant (op NONE or TRANSPOSE) whose
 * batch dims are all 1 and whose rank is at most A's, so that the product keeps A's dims but the last
 * (checked against the output's dims at every profile corner).  The bias is the other operand of the
 * single elementwise SUM reading the product: a FLOAT constant of N values along the last dim only (rank
 * at most the product's).  The sum's own fused activation comes along.  A residual is the other operand
 * of the single SUM reading that result, of the same dims, taken only while no activation is fused (the
 * epilogue adds the residual before the activation).  Intermediates must not be network outputs.
 *
 * Runs last among the rewriting passes (after fuse_qdq: a multiply that the Q/DQ fusion took is QLINEAR by
 * then, and one it left keeps its fake-quantized inputs, which this pass does not look at).  Skipped under
 * BuilderFlag.REFIT, which keeps a constant's weights where refit finds them. */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"

static int live(const trtl_bgraph *g, int32_t i) { return i >= 0 && i < g->nn && !g->n[i].dead; }

static int same_dims(const trtl_bg_tensor *a, const trtl_bg_tensor *b)
{
    return trtl_dims_equal(&a->dmin, &b->dmin) && trtl_dims_equal(&a->dopt, &b->dopt) &&
           trtl_dims_equal(&a->dmax, &b->dmax);
}

/* d with its last dim replaced by n equals o. */
static int keeps_dims(const trtl_dims *d, int64_t n, const trtl_dims *o)
{
    if (d->nb_dims < 1 || d->nb_dims != o->nb_dims || o->d[o->nb_dims - 1] != n)
        return 0;
    for (int i = 0; i < d->nb_dims - 1; i++)
        if (d->d[i] != o->d[i])
            return 0;
    return 1;
}

/* A FLOAT constant of N values along the last dim of a result of rank r. */
static int is_bias(const trtl_bgraph *g, int32_t t, int64_t N, int r)
{
    const trtl_bg_tensor *b = &g->t[t];
    const trtl_dims *d = &b->dopt;
    if (b->kind != TRTL_TK_CONSTANT || !b->data || b->dtype != TRTL_FLOAT || d->nb_dims < 1 || d->nb_dims > r ||
        d->d[d->nb_dims - 1] != N)
        return 0;
    return trtl_volume(d) == N;
}

/* The matrix multiply node i as LINEAR geometry: *K depth, *N output channels; 0 when it does not apply. */
static int linear_shape(const trtl_bgraph *g, const trtl_node *n, int64_t *K, int64_t *N)
{
    if (n->op != TRTL_OP_MATRIX_MULTIPLY || n->n_in != 2 + (n->epi.has_residual ? 1 : 0) || n->n_out != 1 ||
        n->p.matmul.op0 != TRTL_MATOP_NONE ||
        (n->p.matmul.op1 != TRTL_MATOP_NONE && n->p.matmul.op1 != TRTL_MATOP_TRANSPOSE))
        return 0;
    const trtl_bg_tensor *a = &g->t[n->in[0]], *b = &g->t[n->in[1]], *y = &g->t[n->out[0]];
    if (a->dtype != TRTL_FLOAT || b->dtype != TRTL_FLOAT || y->dtype != TRTL_FLOAT || b->kind != TRTL_TK_CONSTANT ||
        !b->data || a->kind == TRTL_TK_CONSTANT)
        return 0;
    const trtl_dims *bd = &b->dopt;
    int rb = bd->nb_dims;
    if (rb < 2 || rb > a->dopt.nb_dims)
        return 0;
    for (int i = 0; i < rb - 2; i++)
        if (bd->d[i] != 1)
            return 0;
    int tr = n->p.matmul.op1 == TRTL_MATOP_TRANSPOSE;
    *K = bd->d[tr ? rb - 1 : rb - 2];
    *N = bd->d[tr ? rb - 2 : rb - 1];
    if (*K < 1 || *N < 1 || *N > INT32_MAX)
        return 0;
    return keeps_dims(&a->dmin, *N, &y->dmin) && keeps_dims(&a->dopt, *N, &y->dopt) &&
           keeps_dims(&a->dmax, *N, &y->dmax) && a->dopt.d[a->dopt.nb_dims - 1] == *K &&
           (!n->epi.has_residual || is_bias(g, n->in[2], *N, y->dopt.nb_dims));
}

/* The single live consumer of tensor x when it is an elementwise SUM of two inputs with no residual of its
 * own, and x no network output; -1 otherwise.  *other: its other input. */
static int32_t sum_reader(const trtl_bgraph *g, int32_t x, int32_t *other)
{
    int32_t c = -1;
    if (trtl_bg_is_output(g, x) || trtl_bg_consumers(g, x, &c) != 1 || !live(g, c))
        return -1;
    const trtl_node *s = &g->n[c].n;
    if (s->op != TRTL_OP_ELEMENTWISE || s->p.ew.op != TRTL_EW_SUM || s->n_in != 2 || s->n_out != 1 ||
        s->epi.has_residual || s->in[0] == s->in[1] || g->t[s->out[0]].dtype != TRTL_FLOAT)
        return -1;
    *other = s->in[0] == x ? s->in[1] : s->in[0];
    return c;
}

/* Node i takes over node c's output (c is fused into i and dies). */
static trtl_status absorb(trtl_bgraph *g, int32_t i, int32_t c, trtl_pass_log *log, const char *what)
{
    trtl_node *p = &g->n[i].n, *s = &g->n[c].n;
    char *nm = trtl_bg_join_names(p->name, s->name);
    if (!nm)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    trtl_pass_log_add(log, "%s '%s' into linear '%s'", what, s->name, p->name);
    free(p->name);
    p->name = nm;
    p->out[0] = s->out[0];
    g->t[p->out[0]].producer = i;
    g->n[c].dead = 1;
    return TRTL_OK;
}

/* *w: a copy the graph owns of the N-value constant bias tensor t (the constant goes away with its last reader). */
static trtl_status own_bias(trtl_bgraph *g, const trtl_node *n, int32_t t, int64_t N, trtl_weights *w)
{
    float *bias = trtl_aligned_alloc((size_t)N * sizeof(float));
    if (!bias || !trtl_bg_own(g, bias))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory converting '%s'", n->name);
    memcpy(bias, g->t[t].data, (size_t)N * sizeof(float));
    *w = (trtl_weights){TRTL_FLOAT, bias, N};
    return TRTL_OK;
}

static trtl_status to_linear(trtl_bgraph *g, int32_t i, int64_t K, int64_t N, trtl_pass_log *log)
{
    trtl_node *n = &g->n[i].n;
    const float *B = (const float *)g->t[n->in[1]].data;
    const int tr = n->p.matmul.op1 == TRTL_MATOP_TRANSPOSE;
    float *w = trtl_aligned_alloc((size_t)(N * K) * sizeof(float));
    if (!w || !trtl_bg_own(g, w))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory converting '%s'", n->name);
    if (tr)
        memcpy(w, B, (size_t)(N * K) * sizeof(float));
    else
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                w[j * K + k] = B[k * N + j];
    trtl_params p;
    memset(&p, 0, sizeof p);
    p.fc.num_output_channels = (int32_t)N;
    p.fc.kernel = (trtl_weights){TRTL_FLOAT, w, N * K};
    int32_t bt = n->in[1];
    if (n->epi.has_residual) {
        /* epilogue fusion took the bias add first (an ONNX Gemm's [1, N] bias at batch 1: the same dims as the
         * product): the "residual" is the bias (linear_shape checked it) */
        TRTL_TRY(own_bias(g, n, n->in[2], N, &p.fc.bias));
        n->epi.has_residual = 0;
        trtl_pass_log_add(log, "its fused bias add as the bias of '%s'", n->name);
    }
    n->op = TRTL_OP_LINEAR;
    n->p = p;
    n->n_in = 1;
    /* the constant B, now unread, goes at once: the graph holds one copy of the weights at a time */
    trtl_bg_release_constant(g, bt);
    trtl_pass_log_add(log, "matrix multiply '%s' by a constant %lld x %lld weight", n->name, (long long)K,
                      (long long)N);

    /* + bias [-> act] */
    int32_t other = -1, c = sum_reader(g, n->out[0], &other);
    int r = g->t[n->out[0]].dopt.nb_dims;
    if (c >= 0 && n->epi.act == TRTL_ACT_NONE && !n->p.fc.bias.count && is_bias(g, other, N, r)) {
        TRTL_TRY(own_bias(g, n, other, N, &n->p.fc.bias));
        n->epi = g->n[c].n.epi;
        TRTL_TRY(absorb(g, i, c, log, "bias add"));
    }
    /* + skip (before any activation) */
    c = sum_reader(g, n->out[0], &other);
    if (c >= 0 && n->epi.act == TRTL_ACT_NONE && !n->epi.has_residual && g->t[other].dtype == TRTL_FLOAT &&
        same_dims(&g->t[other], &g->t[n->out[0]])) {
        n->in[n->n_in++] = other; /* the node's input array has a spare slot: it had two inputs */
        n->epi = g->n[c].n.epi;
        n->epi.has_residual = 1;
        TRTL_TRY(absorb(g, i, c, log, "residual add"));
    }
    return TRTL_OK;
}

trtl_status trtl_pass_fuse_linear(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "linear fusion");
    if ((g->cfg->flags >> TRTL_FLAG_REFIT) & 1u) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'fuse_linear' skipped: BuilderFlag.REFIT keeps weights as given");
        return TRTL_OK;
    }
    for (int32_t i = 0; i < g->nn; i++) {
        int64_t K, N;
        if (g->n[i].dead || !linear_shape(g, &g->n[i].n, &K, &N))
            continue;
        TRTL_TRY(to_linear(g, i, K, N, &log));
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
