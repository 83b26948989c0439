/*
 * reduce_binary.c -- "reduce_binary.rows": the internal REDUCE_BINARY op (y = reduce(unary(a ew b)), made by
 * passes/fuse_reduce.c) in one pass, without the broadcast tensor a ew b that the unfused layers write and read
 * back.  AdderNet: a = unfolded input [1, 1, Ci, H, W], b = filters [1, Co, Ci, 1, 1], y = sum over Ci of
 * |a - b|: every output row y[co, 0:HW] accumulates |a row - one filter value| over Ci.
 *
 * Geometry: the dims of the broadcast x = a ew b lose their 1s and neighbours that agree on (reduced, a
 * advances, b advances) merge, as in reduce_axes.c.  This kernel takes the rows form only: the last group is
 * kept (size W), so each reduced index adds one row of W values, each operand along the row either contiguous
 * (stride 1) or one value repeated.  Work items (output row, block of at most 128 of W) are split over the
 * pool; the innermost reduced group runs inside the SIMD loop with its two strides, the others step an
 * odometer outside it, the partial kept in y between calls.  applies() refuses the other forms, and the pass
 * fuses only what applies() takes, so the reference kernel runs only for a plan that pairs them otherwise.
 *
 * Values are the unfused layers': e = a ew b rounded to float, |e| for ABS, then reduced in float with the
 * reference reduce's rules (MAX / MIN keep a NaN once met; AVG divides by the reduced count).
 */
#include <math.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/cpu.h"
#include "core/dims.h"

#if defined(__x86_64__) || defined(__i386__)
#define RB_X86 1
#endif

enum { ISA_C, ISA_AVX2, ISA_AVX512 };
#define RB_BLOCK 128

typedef struct rb_geom {
    int ng;
    int64_t size[TRTL_MAX_DIMS];
    int64_t sa[TRTL_MAX_DIMS], sb[TRTL_MAX_DIMS]; /* element strides of a and b per group (0: repeats) */
    int red[TRTL_MAX_DIMS];
    int64_t nred, nout;
} rb_geom;

/* Groups of the broadcast of a and b under `axes`; 0 when they do not broadcast (equal rank, dims equal or 1)
 * or some dim is 0. */
static int rb_geom_make(const trtl_dims *ad, const trtl_dims *bd, uint32_t axes, rb_geom *g)
{
    int r = ad->nb_dims;
    if (bd->nb_dims != r || r < 1 || r > TRTL_MAX_DIMS || (axes >> r))
        return 0;
    int64_t sta = 1, stb = 1, s_a[TRTL_MAX_DIMS], s_b[TRTL_MAX_DIMS];
    for (int i = r - 1; i >= 0; i--) {
        s_a[i] = ad->d[i] == 1 ? 0 : sta;
        s_b[i] = bd->d[i] == 1 ? 0 : stb;
        sta *= ad->d[i];
        stb *= bd->d[i];
    }
    int n = 0;
    g->nred = g->nout = 1;
    for (int i = 0; i < r; i++) {
        int64_t x = ad->d[i], y = bd->d[i];
        if (x < 1 || y < 1 || (x != y && x != 1 && y != 1))
            return 0;
        int64_t d = x == 1 ? y : x;
        int rd = (int)(axes >> i & 1u);
        if (rd)
            g->nred *= d;
        else
            g->nout *= d;
        if (d == 1)
            continue;
        if (n > 0 && g->red[n - 1] == rd && (g->sa[n - 1] != 0) == (s_a[i] != 0) &&
            (g->sb[n - 1] != 0) == (s_b[i] != 0)) {
            g->size[n - 1] *= d;
            g->sa[n - 1] = s_a[i];
            g->sb[n - 1] = s_b[i];
            continue;
        }
        g->size[n] = d;
        g->sa[n] = s_a[i];
        g->sb[n] = s_b[i];
        g->red[n++] = rd;
    }
    g->ng = n;
    return 1;
}

/* The rows form: some group reduced, the last one kept. */
static int rb_rows_form(const rb_geom *g)
{
    if (g->ng < 2 || g->red[g->ng - 1])
        return 0;
    for (int i = 0; i < g->ng; i++)
        if (g->red[i])
            return 1;
    return 0;
}

static float rb_identity(int op)
{
    return op == TRTL_RED_PROD ? 1.0f : op == TRTL_RED_MAX ? -INFINITY : op == TRTL_RED_MIN ? INFINITY : 0.0f;
}

typedef struct rb_row {
    int ew, un, op;
    const float *a, *b; /* first row */
    int64_t sa, sb;     /* strides between rows */
    int av, bv;         /* operand contiguous along the row (else one value) */
    int64_t n, w;       /* rows, row length */
} rb_row;

/* ---- portable ------------------------------------------------------------------------------ */

static void rows_c(const rb_row *q, float *y, int first)
{
    if (first)
        for (int64_t i = 0; i < q->w; i++)
            y[i] = rb_identity(q->op);
    for (int64_t r = 0; r < q->n; r++) {
        const float *a = q->a + r * q->sa, *b = q->b + r * q->sb;
        for (int64_t i = 0; i < q->w; i++) {
            float u = a[q->av ? i : 0], w = b[q->bv ? i : 0];
            float e = q->ew == TRTL_EW_SUM ? u + w : q->ew == TRTL_EW_PROD ? u * w : u - w;
            float v = q->un == TRTL_UN_ABS ? fabsf(e) : e;
            switch (q->op) {
            case TRTL_RED_PROD: y[i] *= v; break;
            case TRTL_RED_MAX: y[i] = (v > y[i] || v != v) ? v : y[i]; break;
            case TRTL_RED_MIN: y[i] = (v < y[i] || v != v) ? v : y[i]; break;
            default: y[i] += v;
            }
        }
    }
}

#ifdef RB_X86
/* ---- AVX-512 and AVX2: one body (reduce_binary_simd.h) over each ISA's vectors (reduce_vec.h) ------ */

#define RB_OPERANDS(F, q, op, y, first)                                                                        \
    do {                                                                                                       \
        if ((q)->av && (q)->bv)                                                                                \
            F(q, op, 1, 1, y, first);                                                                          \
        else if ((q)->av)                                                                                      \
            F(q, op, 1, 0, y, first);                                                                          \
        else                                                                                                   \
            F(q, op, 0, 1, y, first);                                                                          \
    } while (0)

#define RV_AVX512
#include "kernels/x86/reduce_vec.h"
#include "kernels/x86/reduce_binary_simd.h"
#include "kernels/x86/reduce_vec_end.h"

#define RV_AVX2
#include "kernels/x86/reduce_vec.h"
#include "kernels/x86/reduce_binary_simd.h"
#include "kernels/x86/reduce_vec_end.h"
#endif

/* ---- driver -------------------------------------------------------------------------------- */

typedef struct rb_job {
    const float *a, *b;
    float *y;
    const rb_geom *g;
    int ew, un, op, isa;
    int lr;             /* innermost reduced group */
    int64_t w, bw, nblk;
} rb_job;

static void rows_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const rb_job *j = ctx;
    const rb_geom *g = j->g;
    int last = g->ng - 1;
    int64_t nouter = 1;
    for (int i = 0; i < g->ng; i++)
        if (g->red[i] && i != j->lr)
            nouter *= g->size[i];
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t o = blk / j->nblk, c0 = (blk % j->nblk) * j->bw;
        int64_t oa = 0, ob = 0, t = o;
        for (int i = last - 1; i >= 0; i--) { /* kept groups but the last: the output row's offsets */
            if (g->red[i])
                continue;
            int64_t k = t % g->size[i];
            t /= g->size[i];
            oa += k * g->sa[i];
            ob += k * g->sb[i];
        }
        rb_row q = {j->ew, j->un, j->op, NULL, NULL, g->sa[j->lr], g->sb[j->lr], g->sa[last] != 0, g->sb[last] != 0,
                    g->size[j->lr], j->w - c0 < j->bw ? j->w - c0 : j->bw};
        const float *a0 = j->a + oa + (q.av ? c0 : 0), *b0 = j->b + ob + (q.bv ? c0 : 0);
        float *y = j->y + o * j->w + c0;
        int64_t idx[TRTL_MAX_DIMS] = {0};
        for (int64_t r = 0; r < nouter; r++) {
            int64_t ra = 0, rb = 0;
            for (int i = 0; i < g->ng; i++)
                if (g->red[i] && i != j->lr) {
                    ra += idx[i] * g->sa[i];
                    rb += idx[i] * g->sb[i];
                }
            q.a = a0 + ra;
            q.b = b0 + rb;
#ifdef RB_X86
            if (j->isa == ISA_AVX512)
                rows_avx512(&q, y, r == 0);
            else if (j->isa == ISA_AVX2)
                rows_avx2(&q, y, r == 0);
            else
#endif
                rows_c(&q, y, r == 0);
            for (int i = g->ng - 1; i >= 0; i--) { /* odometer over the other reduced groups */
                if (!g->red[i] || i == j->lr)
                    continue;
                if (++idx[i] < g->size[i])
                    break;
                idx[i] = 0;
            }
        }
        if (j->op == TRTL_RED_AVG) {
            float d = (float)g->nred;
            for (int64_t i = 0; i < q.w; i++)
                y[i] /= d;
        }
    }
}

static int rb_params_ok(const trtl_reduce_binary_params *p)
{
    return (p->ew_op == TRTL_EW_SUM || p->ew_op == TRTL_EW_PROD || p->ew_op == TRTL_EW_SUB) &&
           (p->unary_op == -1 || p->unary_op == TRTL_UN_ABS) && p->op >= TRTL_RED_SUM && p->op < TRTL_RED_COUNT;
}

static int rb_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    rb_geom g;
    return n->n_in == 2 && rb_params_ok(&n->p.rbin) && rb_geom_make(&in_dims[0], &in_dims[1], n->p.rbin.axes, &g) &&
           rb_rows_form(&g);
}

static trtl_status rb_run(const trtl_kernel_args *a)
{
    const trtl_reduce_binary_params *p = &a->node->p.rbin;
    rb_geom g;
    if (a->node->n_in != 2 || !rb_params_ok(p) || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT ||
        !rb_geom_make(&a->in[0].dims, &a->in[1].dims, p->axes, &g) || !rb_rows_form(&g))
        return trtl_ref_reduce_binary(a); /* empty or other forms (run-time shapes): the reference handles any */
    rb_job j = {a->in[0].data, a->in[1].data, a->out[0].data, &g, p->ew_op, p->unary_op, p->op, ISA_C, -1,
                g.size[g.ng - 1], RB_BLOCK, 0};
#ifdef RB_X86
    j.isa = trtl_cpu_has(TRTL_CPU_AVX512F) ? ISA_AVX512 : trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) ? ISA_AVX2 : ISA_C;
#endif
    for (int i = g.ng - 1; i >= 0 && j.lr < 0; i--)
        if (g.red[i])
            j.lr = i;
    int64_t rows = g.nout / j.w;
    while (j.bw > 32 && rows * ((j.w + j.bw - 1) / j.bw) < 8)
        j.bw /= 2;
    j.nblk = (j.w + j.bw - 1) / j.bw;
    int64_t work = g.nred * (j.w < j.bw ? j.w : j.bw);
    trtl_parallel_for(a->pool, rows * j.nblk, work >= 8192 ? 1 : 8192 / work + 1, rows_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_reduce_binary_rows = {
    .name = "reduce_binary.rows",
    .op = TRTL_OP_REDUCE_BINARY,
    .applies = rb_applies,
    .run = rb_run,
};
