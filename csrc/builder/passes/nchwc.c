/* nchwc.c -- the blocked channel layout (NCHWc, B = 8) across runs of convolutions.
 *
 * Candidates are live fp32 CONVOLUTION nodes that the blocked kernels run (kernels/nchwc.h:
 * trtl_nchwc_conv_supported: pointwise 1x1 or depthwise up to 7x7, at the opt shapes) on input maps of at least
 * MIN_PIXELS pixels.  A tensor is kept
 * blocked when its producer and every reader are candidates, each reader taking it as its input or its fused
 * residual, and it is no network output; a candidate's residual must then have its output's layout (both are
 * made plain until that holds).  Every candidate with a blocked input or output becomes NCHWC_CONV with
 * in_block / out_block 8 or 0: the reorders happen inside the convolutions at a region's edges (a plain input is
 * blocked into scratch, a plain output is unblocked with its epilogue), never as separate steps, and blocked
 * tensors are never seen by other layers.  Skipped without AVX2 + FMA and with AVX-512 (no 16-lane blocked kernel
 * yet, and the 8-lane one was not measured against the AVX-512 NCHW kernels there; runtime detection,
 * TRTL_CPU_MASK), for
 * refittable engines (refit finds a convolution's weights on CONVOLUTION layers), and under the FP16 / BF16 /
 * INT8 flags (the blocked kernels are fp32 only).  On by default: docs/ARCHITECTURE.md, "Blocked channel layout",
 * has the measurements that decide it. */
#include <stdlib.h>

#include "builder/passes/passes.h"
#include "kernels/nchwc.h"
#include "core/cpu.h"
#include "core/status.h"

#define BLOCK 8
/* Maps of fewer pixels (at the opt shape) stay NCHW: squeeze-and-excitation's 1x1 maps run on convolution.gemv,
 * several times faster than a blocked tile of one pixel. */
#define MIN_PIXELS 16

static int candidate(const trtl_bgraph *g, int32_t i)
{
    const trtl_bg_node *b = &g->n[i];
    const trtl_node *n = &b->n;
    if (b->dead || n->op != TRTL_OP_CONVOLUTION || b->want_set || b->fixed_kernel || n->n_out != 1 ||
        n->n_in != 1 + (n->epi.has_residual ? 1 : 0))
        return 0;
    const trtl_bg_tensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]];
    if (x->dtype != TRTL_FLOAT || y->dtype != TRTL_FLOAT || x->dopt.nb_dims != 4 || x->corner_unknown ||
        x->dopt.d[2] * x->dopt.d[3] < MIN_PIXELS)
        return 0;
    if (n->epi.has_residual && g->t[n->in[1]].dtype != TRTL_FLOAT)
        return 0;
    return trtl_nchwc_conv_supported(n, &x->dopt);
}

/* Whether node i reads tensor t only as its input or its residual (always true for candidates: the only inputs). */
static int keep_blocked(const trtl_bgraph *g, const char *cand, int32_t t)
{
    int32_t p = g->t[t].producer;
    if (p < 0 || !cand[p] || trtl_bg_is_output(g, t) || g->t[t].kind != TRTL_TK_ACTIVATION)
        return 0;
    int32_t readers = 0;
    for (int32_t i = 0; i < g->nn; i++) {
        if (g->n[i].dead)
            continue;
        for (int32_t k = 0; k < g->n[i].n.n_in; k++)
            if (g->n[i].n.in[k] == t) {
                if (!cand[i])
                    return 0;
                readers++;
            }
    }
    return readers > 0;
}

trtl_status trtl_pass_nchwc(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "blocked channel layout");
    const uint32_t fl = g->cfg->flags;
    if (!trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA) || trtl_cpu_has(TRTL_CPU_AVX512F)) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'nchwc' skipped: blocked kernels exist for AVX2 + FMA machines without "
                                "AVX-512 only (AVX-512 keeps its 16-lane NCHW kernels)");
        return TRTL_OK;
    }
    if ((fl >> TRTL_FLAG_REFIT) & 1u || (fl >> TRTL_FLAG_FP16) & 1u || (fl >> TRTL_FLAG_BF16) & 1u ||
        (fl >> TRTL_FLAG_INT8) & 1u) {
        trtl_log(TRTL_LOG_INFO, "builder pass 'nchwc' skipped: REFIT / FP16 / BF16 / INT8 builds keep NCHW");
        return TRTL_OK;
    }
    char *cand = (char *)calloc((size_t)g->nn + 1, 1), *blk = (char *)calloc((size_t)g->nt + 1, 1);
    if (!cand || !blk) {
        free(cand);
        free(blk);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    }
    for (int32_t i = 0; i < g->nn; i++)
        cand[i] = (char)candidate(g, i);
    for (int32_t t = 0; t < g->nt; t++)
        blk[t] = (char)keep_blocked(g, cand, t);
    for (int changed = 1; changed;) { /* a residual has its output's layout */
        changed = 0;
        for (int32_t i = 0; i < g->nn; i++) {
            const trtl_node *n = &g->n[i].n;
            if (!cand[i] || !n->epi.has_residual || blk[n->in[1]] == blk[n->out[0]])
                continue;
            blk[n->in[1]] = blk[n->out[0]] = 0;
            changed = 1;
        }
    }
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *n = &g->n[i].n;
        if (!cand[i] || (!blk[n->in[0]] && !blk[n->out[0]]))
            continue;
        trtl_conv_params c = n->p.conv;
        n->op = TRTL_OP_NCHWC_CONV;
        n->p.nchwc.conv = c;
        n->p.nchwc.in_block = blk[n->in[0]] ? BLOCK : 0;
        n->p.nchwc.out_block = blk[n->out[0]] ? BLOCK : 0;
        trtl_pass_log_add(&log, "'%s' (%s -> %s)", n->name, blk[n->in[0]] ? "blocked" : "NCHW",
                          blk[n->out[0]] ? "blocked" : "NCHW");
    }
    free(cand);
    free(blk);
    trtl_pass_log_done(&log);
    return log.count ? trtl_bg_infer(g) : TRTL_OK;
}
