/*
 * pw_chain.c -- pw_chain.simd: the internal PW_CHAIN op (core/params.h; builder/passes/fuse_chain.c), a run of
 * pointwise steps as one straight-line program, interpreted over tiles.
 *
 * The output is cut into rows (the longest run of trailing axes along which every operand either advances or
 * repeats: a bias [N] on [.., N] gives rows of N, a per-channel [1, C, 1, 1] on NCHW rows of H * W, scalars and
 * same-shape operands one row of the whole tensor); rows are cut in chunks split over the pool (trtl_vm_rows, as
 * the separate pointwise kernels), each chunk in tiles of PWC_TILE floats.  On a tile every op of the program is
 * one vmath.h span (the first from input 0 into the output's tile, the others in place), so the value stays in L1
 * between ops and the tensor is read once and written once instead of once per step.
 *
 * Exactness: every op is the span the separate step's kernel ran on the same elements (elementwise.simd:
 * trtl_vm_binary then its epilogue's trtl_vm_act; unary.simd: trtl_vm_unary; activation.simd: trtl_vm_act), and
 * those spans compute each element independently of where a span starts or ends (tests/test_kernels_c.py checks
 * long spans against spans of 13), so the fused result is bit-identical to the unfused engine's on every ISA
 * vmath dispatches to (AVX-512, AVX2 + FMA, portable: TRTL_CPU_MASK).  No allocation: the job lives on the stack.
 */
#include "kernels/kernel.h"
#include "kernels/x86/vmath.h"
#include "core/dims.h"
#include "core/status.h"

#define PWC_TILE 512 /* floats: 2 KB, the value and an operand's tile stay in L1 across the program */

typedef struct pwc_job {
    trtl_pw_op ops[TRTL_PW_MAX_OPS];
    int32_t n_ops, n_in;
    const float *src[TRTL_PW_MAX_INPUTS];
    float *y;
    int vec[TRTL_PW_MAX_INPUTS];  /* the input advances along the row (else one value per row) */
    int32_t n_outer;              /* outer axes (size > 1), innermost first */
    int64_t osize[TRTL_MAX_DIMS];
    int64_t ostride[TRTL_MAX_DIMS][TRTL_PW_MAX_INPUTS]; /* element stride of input k along outer axis (0: repeats) */
    int64_t inner;
} pwc_job;

/* The row form of the inputs' broadcast to dims d (infer checked every dim is 1 or d's). */
static void pwc_plan(pwc_job *j, const trtl_tensor_view *in, const trtl_dims *d)
{
    const int r = d->nb_dims;
    int64_t stride[TRTL_PW_MAX_INPUTS][TRTL_MAX_DIMS];
    for (int32_t k = 0; k < j->n_in; k++) {
        int64_t s = 1;
        for (int a = r - 1; a >= 0; a--) {
            stride[k][a] = in[k].dims.d[a] == d->d[a] && d->d[a] != 1 ? s : 0;
            s *= in[k].dims.d[a];
        }
        j->vec[k] = 1;
    }
    /* trailing axes merged while every input keeps the innermost axis' advancing flag */
    int a = r - 1, first = 1;
    j->inner = 1;
    for (; a >= 0; a--) {
        if (d->d[a] == 1)
            continue;
        int same = 1;
        for (int32_t k = 0; k < j->n_in && !first; k++)
            same = same && (stride[k][a] != 0) == j->vec[k];
        if (!same)
            break;
        for (int32_t k = 0; k < j->n_in && first; k++)
            j->vec[k] = stride[k][a] != 0;
        first = 0;
        j->inner *= d->d[a];
    }
    j->n_outer = 0;
    for (; a >= 0; a--) {
        if (d->d[a] == 1)
            continue;
        j->osize[j->n_outer] = d->d[a];
        for (int32_t k = 0; k < j->n_in; k++)
            j->ostride[j->n_outer][k] = stride[k][a];
        j->n_outer++;
    }
}

static void pwc_chunk(void *ctx, int64_t row, int64_t begin, int64_t len)
{
    const pwc_job *j = ctx;
    const float *base[TRTL_PW_MAX_INPUTS];
    int64_t rem = row;
    for (int32_t k = 0; k < j->n_in; k++)
        base[k] = j->src[k];
    for (int32_t o = 0; o < j->n_outer; o++) {
        const int64_t idx = rem % j->osize[o];
        rem /= j->osize[o];
        for (int32_t k = 0; k < j->n_in; k++)
            base[k] += idx * j->ostride[o][k];
    }
    float *y = j->y + row * j->inner + begin;
    for (int64_t t = 0; t < len; t += PWC_TILE) {
        const int64_t n = len - t < PWC_TILE ? len - t : PWC_TILE;
        float *yt = y + t;
        const float *cur = base[0] + begin + t; /* input 0 has the output's dims */
        for (int32_t i = 0; i < j->n_ops; i++) {
            const trtl_pw_op *o = &j->ops[i];
            switch (o->kind) {
            case TRTL_PW_UNARY: trtl_vm_unary(o->code, cur, yt, n); break;
            case TRTL_PW_ACT: trtl_vm_act(o->code, o->alpha, o->beta, cur, yt, n); break;
            case TRTL_PW_BINARY:
            case TRTL_PW_BINARY_R: {
                const int v = j->vec[o->operand];
                const float *b = base[o->operand] + (v ? begin + t : 0);
                if (o->kind == TRTL_PW_BINARY)
                    trtl_vm_binary(o->code, cur, 1, b, v, yt, n);
                else
                    trtl_vm_binary(o->code, b, v, cur, 1, yt, n);
                break;
            }
            default: break; /* run() refused other kinds */
            }
            cur = yt;
        }
    }
}

static trtl_status pwc_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const trtl_pw_chain_params *p = &nd->p.pwc;
    pwc_job j;
    j.n_ops = trtl_pw_n_ops(p);
    j.n_in = nd->n_in;
    if (j.n_ops < 1 || j.n_ops > TRTL_PW_MAX_OPS || j.n_in < 1 || j.n_in > TRTL_PW_MAX_INPUTS ||
        a->out[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': pw_chain.simd: %d ops / %d inputs (the plan is corrupt)",
                          nd->name, (int)j.n_ops, (int)j.n_in);
    const trtl_dims *d = &a->out[0].dims;
    for (int32_t k = 0; k < j.n_in; k++) {
        int ok = a->in[k].dtype == TRTL_FLOAT && a->in[k].dims.nb_dims == d->nb_dims;
        for (int x = 0; ok && x < d->nb_dims; x++)
            ok = a->in[k].dims.d[x] == d->d[x] || (k > 0 && a->in[k].dims.d[x] == 1);
        if (!ok)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': pw_chain.simd input %d does not broadcast to the output",
                              nd->name, (int)k);
        j.src[k] = a->in[k].data;
    }
    for (int32_t i = 0; i < j.n_ops; i++) {
        j.ops[i] = trtl_pw_op_get(p, i);
        const trtl_pw_op *o = &j.ops[i];
        int ok = o->kind == TRTL_PW_ACT || (o->kind == TRTL_PW_UNARY && trtl_vm_unary_supported(o->code)) ||
                 ((o->kind == TRTL_PW_BINARY || o->kind == TRTL_PW_BINARY_R) && trtl_vm_binary_supported(o->code) &&
                  o->operand >= 1 && o->operand < j.n_in);
        if (!ok)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': pw_chain.simd op %d (kind %d, code %d) is no op it "
                              "computes (the plan is corrupt)", nd->name, (int)i, (int)o->kind, (int)o->code);
    }
    j.y = a->out[0].data;
    pwc_plan(&j, a->in, d);
    const int64_t total = trtl_volume(d);
    if (total <= 0)
        return TRTL_OK;
    trtl_vm_rows(a->pool, total / j.inner, j.inner, pwc_chunk, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_pw_chain_simd = {
    .name = "pw_chain.simd",
    .op = TRTL_OP_PW_CHAIN,
    .run = pwc_run,
};
