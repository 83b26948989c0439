/*
 * qconv_dw_driver.c -- the depthwise path of the int8 convolution library (qconv_internal.h
 * describes it): the weights' words (once, at prepare), the geometry of a run, per-thread scratch
 * and the split of the N x K output planes over the pool.  The per-ISA plane kernels are
 * qconv_dw_tmpl.h's, instantiated with the GEMM microkernels in qconv_vnni.c, qconv_avxvnni.c and
 * qconv_avx2.c.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/qconv_internal.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/threadpool.h"
#include "core/cpu.h"
#include "kernels/x86/fused_epilogue.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define ALIGN 64

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static size_t align_up(size_t a) { return (a + ALIGN - 1) / ALIGN * ALIGN; }

void trtl_qdw_geom_init(const trtl_qconv_state *s, int64_t H, int64_t W, trtl_qdw_geom *g)
{
    const trtl_qconv_desc *d = &s->d;
    const int64_t vl = s->ops->vl, G = s->ops->g;
    g->H = H;
    g->W = W;
    g->OH = trtl_qconv_out_dim(H, d->R, d->stride_h, d->pad_t, d->pad_b, d->dil_h);
    g->OW = trtl_qconv_out_dim(W, d->S, d->stride_w, d->pad_l, d->pad_r, d->dil_w);
    g->Hp = H + d->pad_t + d->pad_b;
    g->Wp = W + d->pad_l + d->pad_r;
    g->nvec = ceil_div(g->OW, vl);
    /* the loads of a row read words up to (nvec * VL - 1) * stride (a gather), or 2 nvec VL - 1 for
     * stride 2 (two loads), plus the last tap group's offset; all lanes, the tail's too */
    int64_t span = g->nvec * vl * d->stride_w + (s->dw_T - 1) * G * d->dil_w + 1;
    g->WW = ceil_div(span, vl) * vl;
    /* word iw reads elements iw .. iw + (G-1) dil; a row is written at pad_l .. pad_l + W */
    int64_t ew = g->WW + (G - 1) * d->dil_w;
    if (ew < d->pad_l + W)
        ew = d->pad_l + W;
    g->EW = ew + vl;
}

/* ---- the channel-interleaved kernel (qconv_internal.h, x86/qconv_dw_c16.h) ---- */

int trtl_qdwc_cpu(void)
{
#if defined(__x86_64__)
    /* AVX512-VBMI and -VL are no TRTL_CPU_* bits: asked here; TRTL_CPU_MASK still turns the kernel off with
     * AVX512-VNNI (the plane kernel runs then) */
    unsigned a = 0, b = 0, c = 0, dx = 0;
    if (!trtl_cpu_has(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_FMA))
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &dx))
        return 0;
    return ((c >> 1) & 1) && ((b >> 31) & 1); /* VBMI, VL */
#else
    return 0;
#endif
}

void trtl_qdwc_geom_init(const trtl_qconv_state *s, int64_t H, int64_t W, trtl_qdwc_geom *g)
{
    const trtl_qconv_desc *d = &s->d;
    g->H = H;
    g->W = W;
    g->OH = trtl_qconv_out_dim(H, d->R, d->stride_h, d->pad_t, d->pad_b, d->dil_h);
    g->OW = trtl_qconv_out_dim(W, d->S, d->stride_w, d->pad_l, d->pad_r, d->dil_w);
    g->Hp = H + d->pad_t + d->pad_b;
    /* the last pixel's last word reads 4 pixels from (OW - 1) stride + 4 (T - 1) */
    int64_t wq = W + d->pad_l + d->pad_r, need = (g->OW > 0 ? g->OW - 1 : 0) * d->stride_w + 4 * s->dwc_T;
    g->Wq = wq > need ? wq : need;
    g->plane_bytes = align_up((size_t)(g->Hp * g->Wq) * 16);
    g->out_bytes = (size_t)ceil_div(g->OH * g->OW, 16) * 256;
}

/* The kernel applies (prepare): the plane kernel is avx512vnni's, the CPU has VBMI, and the layer is
 * what the kernel computes (see qconv_internal.h). */
static int dwc_applies(const trtl_qconv_state *s)
{
    const trtl_qconv_desc *d = &s->d;
    return s->dw == &trtl_qdw_ops_avx512vnni && trtl_qdwc_cpu() && d->K == d->C && d->dil_w == 1 && d->S <= 8 &&
           d->R <= 8 && d->out_quant == 2 && !d->has_residual && trtl_act_is_fast(d->act);
}

static trtl_status dwc_pack(trtl_qconv_state *s)
{
    const trtl_qconv_desc *d = &s->d;
    const int64_t R = d->R, S = d->S, T = s->dwc_T, nb = ceil_div(d->K, 16);
    s->dwc_w = trtl_aligned_alloc((size_t)(nb * R * T * 16) * sizeof(int32_t));
    if (!s->dwc_w)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "trtl_qconv_prepare: out of memory packing depthwise weights");
    for (int64_t cb = 0; cb < nb; cb++)
        for (int64_t r = 0; r < R; r++)
            for (int64_t tg = 0; tg < T; tg++)
                for (int64_t c = 0; c < 16; c++) {
                    const int64_t k = cb * 16 + c;
                    uint32_t word = 0;
                    for (int64_t i = 0; i < 4; i++) {
                        const int64_t t = tg * 4 + i;
                        if (k < d->K && t < S)
                            word |= (uint32_t)(uint8_t)s->w[(k * R + r) * S + t] << (8 * i);
                    }
                    s->dwc_w[((cb * R + r) * T + tg) * 16 + c] = (int32_t)word;
                }
    return TRTL_OK;
}

size_t trtl_qdw_thread_bytes(const trtl_qconv_state *s, const trtl_qdw_geom *g)
{
    size_t plane = align_up((size_t)g->EW * (size_t)(4 / s->ops->g)) + align_up((size_t)(g->Hp * g->WW) * sizeof(int32_t));
    if (s->dwc) { /* either kernel may run (float input takes the plane kernel) */
        trtl_qdwc_geom c;
        trtl_qdwc_geom_init(s, g->H, g->W, &c);
        if (c.plane_bytes + c.out_bytes > plane)
            plane = c.plane_bytes + c.out_bytes;
    }
    return plane;
}

trtl_status trtl_qdw_pack(trtl_qconv_state *s)
{
    const trtl_qconv_desc *d = &s->d;
    const int32_t G = s->ops->g;
    const int64_t T = s->dw_T, R = d->R, S = d->S;
    s->dw_w = trtl_aligned_alloc((size_t)(d->K * R * T) * sizeof(int32_t));
    if (!s->dw_w)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "trtl_qconv_prepare: out of memory packing depthwise weights");
    for (int64_t k = 0; k < d->K; k++)
        for (int64_t r = 0; r < R; r++)
            for (int64_t tg = 0; tg < T; tg++) {
                uint32_t word = 0;
                for (int32_t i = 0; i < G; i++) {
                    int64_t t = tg * G + i;
                    int32_t v = t < S ? s->w[(k * R + r) * S + t] : 0;
                    word |= G == 4 ? (uint32_t)(uint8_t)(int8_t)v << (8 * i) : (uint32_t)(uint16_t)(int16_t)v << (16 * i);
                }
                s->dw_w[(k * R + r) * T + tg] = (int32_t)word;
            }
    if (dwc_applies(s)) {
        s->dwc = 1;
        s->dwc_T = ceil_div(d->S, 4);
        return dwc_pack(s);
    }
    return TRTL_OK;
}

size_t trtl_qdw_scratch(const trtl_qconv_state *s, int64_t H, int64_t W, int nthreads)
{
    trtl_qdw_geom g;
    trtl_qdw_geom_init(s, H, W, &g);
    return ALIGN + (size_t)(nthreads > 1 ? nthreads : 1) * trtl_qdw_thread_bytes(s, &g);
}

typedef struct dw_job {
    const trtl_qconv_state *s;
    trtl_qdw_geom g;
    const trtl_qk_io *io;
    char *scratch; /* aligned; thread t's slice at t * per */
    size_t per;
} dw_job;

static void dw_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const dw_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const trtl_qconv_desc *d = &s->d;
    const int64_t in_plane = j->g.H * j->g.W, out_plane = j->g.OH * j->g.OW, Kg = d->K / d->groups;
    const size_t xes = j->io->x_codes ? 1 : sizeof(float), yes = d->out_quant == 2 ? 1 : sizeof(float);
    for (int64_t i = b; i < e; i++) {
        const int64_t n = i / d->K, k = i % d->K, c = k / Kg;
        const int64_t xi = (n * d->C + c) * in_plane, yi = i * out_plane;
        const void *x = (const char *)j->io->x + (size_t)xi * xes;
        void *y = (char *)j->io->y + (size_t)yi * yes;
        const float *res = j->io->residual ? j->io->residual + yi : NULL;
        const int8_t *resq = j->io->residual_codes ? j->io->residual_codes + yi : NULL;
        s->dw->plane(s, &j->g, x, j->io->x_codes, y, res, resq, k, j->scratch + (size_t)thread * j->per);
    }
}

typedef struct dwc_job {
    const trtl_qconv_state *s;
    trtl_qdwc_geom g;
    const trtl_qk_io *io;
    char *scratch;
    size_t per;
    int64_t nb;
} dwc_job;

static void dwc_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const dwc_job *j = ctx;
    const trtl_qconv_desc *d = &j->s->d;
    const int64_t HW = j->g.H * j->g.W, OHW = j->g.OH * j->g.OW;
    for (int64_t i = b; i < e; i++) {
        const int64_t n = i / j->nb, cb = i % j->nb;
        trtl_qdwc_block(j->s, &j->g, (const uint8_t *)j->io->x + n * d->C * HW, (uint8_t *)j->io->y + n * d->K * OHW,
                        cb, j->scratch + (size_t)thread * j->per, i == b);
    }
}

void trtl_qdw_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const trtl_qk_io *io, void *scratch,
                  size_t scratch_size, struct trtl_threadpool *pool)
{
    if (s->dwc && io->x_codes && !io->residual && !io->residual_codes) {
        trtl_qdw_geom pg;
        trtl_qdw_geom_init(s, H, W, &pg);
        dwc_job c = {s, {0}, io, NULL, trtl_qdw_thread_bytes(s, &pg), ceil_div(s->d.K, 16)};
        trtl_qdwc_geom_init(s, H, W, &c.g);
        c.scratch = (char *)(((uintptr_t)scratch + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
        const size_t avail = scratch_size - (size_t)(c.scratch - (char *)scratch);
        if ((size_t)trtl_threadpool_size(pool) * c.per > avail)
            pool = NULL;
        trtl_parallel_for(pool, N * c.nb, 1, dwc_task, &c);
        return;
    }
    dw_job j = {s, {0}, io, NULL, 0};
    trtl_qdw_geom_init(s, H, W, &j.g);
    j.per = trtl_qdw_thread_bytes(s, &j.g);
    char *base = (char *)(((uintptr_t)scratch + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
    j.scratch = base;
    /* a scratch sized for fewer threads than the pool has runs on the calling thread */
    const size_t avail = scratch_size - (size_t)(base - (char *)scratch);
    if ((size_t)trtl_threadpool_size(pool) * j.per > avail)
        pool = NULL;
    trtl_parallel_for(pool, N * s->d.K, 1, dw_task, &j);
}
