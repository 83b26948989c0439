/*
 * qconv_driver.c -- the SIMD paths of the int8 convolution library: quantization, im2col packing,
 * tiling and threads around the per-ISA microkernels of trtl_qk_ops (qconv_internal.h).
 *
 * Convolution, per image, three parallel phases:
 *   (1x1 stride-1 unpadded convolutions skip phase 1: phase 2 quantizes x's channel rows -- or
 *   converts their codes -- straight into the strips, combining the words in registers)
 *   1. quantize   x -> a padded image of elements (u8 or int16, the border holds the element of
 *                 0.0), split over channels;
 *   2. im2col     the padded image -> [strips][steps][VL] words (the GEMM's column operand), split
 *                 over strips; a strip whose VL pixels are consecutive in the padded image (1x1
 *                 stride 1 always, others within an output row) is packed with one vector load per depth
 *                 row, a stride-1 strip crossing output rows with one load per row it touches
 *                 (blended), the others (strides > 1) gather;
 *   3. GEMM       tiles of MR output channels x NV strips, each with its epilogue, split over
 *                 (strip super block, channel chunk) items: a super block (SUPER_BLOCK_BYTES of
 *                 strips) stays in L2 while each row panel of the chunk runs over it (the panel in
 *                 L1); super blocks and chunks are cut only as far as needed to give every thread
 *                 work.
 * Rows (gemm): phase 1 quantizes x's rows straight into row panels, phase 3 as above with the
 * weight strips as columns (a thread reuses a weight strip block across its row panels).
 * Tables of offsets (per output pixel and per depth index) are built once per call.
 */
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/qconv_internal.h"
#include "kernels/blas/blas_common.h"
#include "core/threadpool.h"

#define ALIGN 64
#define PLANE_GUARD 64 /* bytes; >= 2 VL elements of every ISA */
/* Elements quantized per chunk in the rows phase (a multiple of 4). */
#define ROW_CHUNK 1024

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static size_t align_up(size_t a) { return (a + ALIGN - 1) / ALIGN * ALIGN; }
static void *align_ptr(void *p) { return (void *)(((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1)); }

/* y at element i: floats, or code bytes with out_quant = 2 (then *yq is set and the float is NULL). */
static float *y_at(const trtl_qconv_state *s, void *y, int64_t i, int8_t **yq)
{
    if (s->d.out_quant == 2) {
        *yq = (int8_t *)y + i;
        return NULL;
    }
    *yq = NULL;
    return (float *)y + i;
}

/* ---- geometry of a convolution run --------------------------------------------------------------- */

typedef struct qd_geom {
    int64_t H, W, OH, OW, P, Hp, Wp, es; /* es: bytes of an element */
    int64_t imgs;    /* images a group: their pixels one sequence of strips (1 unless batch strips apply) */
    int64_t nstrips; /* strips of a full group */
    size_t plane_bytes, b_bytes, off_bytes, doff_bytes;
} qd_geom;

/* Batch strips: a 1x1 stride-1 unpadded convolution with N > 1 packs the pixels of a group of images
 * as one sequence, so only the group's last strip has idle lanes (7x7 = 49 pixels filled 4 strips of 16
 * an image, 23% idle).  A group's strips take at most GROUP_BYTES (or one image's), so that the packed
 * activations stay in L2 between packing and the GEMM as a single image's did.  A tile whose columns
 * cross an image boundary runs its epilogue on a staging buffer of QD_STAGE values on the stack. */
#define GROUP_BYTES (512 * 1024)
#define QD_STAGE 1024

static int is_direct(const trtl_qconv_desc *d)
{
    return d->R == 1 && d->S == 1 && d->stride_h == 1 && d->stride_w == 1 && !d->pad_t && !d->pad_l && !d->pad_b &&
           !d->pad_r;
}

static void geom_init(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, qd_geom *g)
{
    const trtl_qconv_desc *d = &s->d;
    g->H = H;
    g->W = W;
    g->OH = trtl_qconv_out_dim(H, d->R, d->stride_h, d->pad_t, d->pad_b, d->dil_h);
    g->OW = trtl_qconv_out_dim(W, d->S, d->stride_w, d->pad_l, d->pad_r, d->dil_w);
    g->P = g->OH * g->OW;
    g->Hp = H + d->pad_t + d->pad_b;
    g->Wp = W + d->pad_l + d->pad_r;
    g->es = 4 / s->ops->g;
    g->imgs = 1;
    const int64_t img_bytes = g->P * s->steps * 4;
    if (N > 1 && is_direct(d) && img_bytes > 0 && s->ops->mr * s->ops->nv * s->ops->vl <= QD_STAGE) {
        g->imgs = GROUP_BYTES / img_bytes;
        g->imgs = g->imgs < 1 ? 1 : g->imgs > N ? N : g->imgs;
    }
    g->nstrips = ceil_div(g->imgs * g->P, s->ops->vl);
    /* guards of PLANE_GUARD bytes before and after: the strip loads of qt_pack_strip read up to 2 VL
     * elements beyond the columns they keep, on either side */
    g->plane_bytes = align_up((size_t)(d->C * g->Hp * g->Wp * g->es) + 2 * PLANE_GUARD);
    g->b_bytes = align_up((size_t)(g->nstrips * s->steps * s->ops->vl) * sizeof(int32_t));
    g->off_bytes = align_up((size_t)g->P * sizeof(int64_t));
    g->doff_bytes = align_up((size_t)s->D * sizeof(int64_t));
}

size_t trtl_qconv_simd_scratch(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W)
{
    qd_geom g;
    geom_init(s, N, H, W, &g);
    return ALIGN + g.plane_bytes + g.b_bytes + g.off_bytes + g.doff_bytes;
}

/* ---- work split of the GEMM phase ---------------------------------------------------------------- */

/* A thread's B super block (strips x depth) stays in L2 while every row panel of its chunk runs
 * over it; a row panel (MR x depth) stays in L1 across the super block's tiles. */
#define SUPER_BLOCK_BYTES (384 * 1024)

typedef struct qd_split {
    int64_t sbw, sblocks, panels, chunks; /* items = sblocks * chunks; sbw strips a super block */
} qd_split;

static void split_init(qd_split *sp, int64_t strips, int64_t rows, int32_t nv, int32_t mr, int threads,
                       int64_t strip_bytes)
{
    sp->panels = ceil_div(rows, mr);
    sp->sbw = nv * (SUPER_BLOCK_BYTES / (nv * strip_bytes) > 1 ? SUPER_BLOCK_BYTES / (nv * strip_bytes) : 1);
    while (threads > 1 && sp->sbw > nv && ceil_div(strips, sp->sbw) * sp->panels < 3 * (int64_t)threads)
        sp->sbw -= nv;
    sp->sblocks = ceil_div(strips, sp->sbw);
    sp->chunks = 1;
    while (threads > 1 && sp->sblocks * sp->chunks < 3 * (int64_t)threads && sp->chunks < sp->panels)
        sp->chunks++;
}

static int threads_for(struct trtl_threadpool *pool, double flops) { return trtl_threads_for(pool, flops); }

/* ---- convolution --------------------------------------------------------------------------------- */

typedef struct qd_conv_job {
    const trtl_qconv_state *s;
    const qd_geom *g;
    qd_split sp;
    const void *x; /* float, or codes (x_codes) */
    int32_t x_codes;
    const float *res;
    const int8_t *resq; /* residual codes (res_codes), or NULL */
    void *y;       /* float, or codes (out_quant = 2) */
    int64_t nimg, nstrips; /* images of this group, their strips */
    uint8_t *plane;
    int32_t *b;
    const int64_t *off, *doff;
} qd_conv_job;

static void conv_quant_task(void *ctx, int64_t cb, int64_t ce, int thread)
{
    const qd_conv_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const trtl_qconv_desc *d = &s->d;
    const qd_geom *g = j->g;
    const int64_t plane_c = g->Hp * g->Wp;
    (void)thread;
    for (int64_t c = cb; c < ce; c++) {
        uint8_t *pc = j->plane + c * plane_c * g->es;
        const int64_t xc = c * g->H * g->W; /* element offset of channel c in x */
        /* the border: the element of 0.0 (int16 elements: 0; u8: in_zero + shift, one byte) */
        if (d->pad_t)
            memset(pc, s->q.pad, (size_t)(d->pad_t * g->Wp * g->es));
        if (d->pad_b)
            memset(pc + (d->pad_t + g->H) * g->Wp * g->es, s->q.pad, (size_t)(d->pad_b * g->Wp * g->es));
        if (!d->pad_l && !d->pad_r) {
            if (j->x_codes)
                s->ops->codes((const int8_t *)j->x + xc, g->H * g->W, pc + d->pad_t * g->Wp * g->es, d->in_signed,
                              d->in_zero);
            else
                s->ops->quant((const float *)j->x + xc, g->H * g->W, pc + d->pad_t * g->Wp * g->es, &s->q);
            continue;
        }
        for (int64_t h = 0; h < g->H; h++) {
            uint8_t *row = pc + ((d->pad_t + h) * g->Wp) * g->es;
            memset(row, s->q.pad, (size_t)(d->pad_l * g->es));
            if (j->x_codes)
                s->ops->codes((const int8_t *)j->x + xc + h * g->W, g->W, row + d->pad_l * g->es, d->in_signed,
                              d->in_zero);
            else
                s->ops->quant((const float *)j->x + xc + h * g->W, g->W, row + d->pad_l * g->es, &s->q);
            memset(row + (d->pad_l + g->W) * g->es, s->q.pad, (size_t)(d->pad_r * g->es));
        }
    }
}

static void conv_pack_task(void *ctx, int64_t tb, int64_t te, int thread)
{
    const qd_conv_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const int64_t vl = s->ops->vl;
    (void)thread;
    for (int64_t t = tb; t < te; t++) {
        int64_t p0 = t * vl;
        trtl_qk_strip st = {j->plane, j->off + p0, j->doff, s->D, s->steps,
                            (int32_t)(j->g->P - p0 < vl ? j->g->P - p0 : vl), s->q.pad,
                            j->b + t * s->steps * vl};
        s->ops->pack_strip(&st);
    }
}

static void conv_direct_task(void *ctx, int64_t tb, int64_t te, int thread)
{
    const qd_conv_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    (void)thread;
    s->ops->pack_direct(j->x, j->x_codes, s->d.C, j->g->P, j->nimg, tb, te, s->steps, j->b, &s->q, s->d.in_signed,
                        s->d.in_zero);
}

/* Rows [k0, k0 + mr) x group columns [c0, c1) between the images' planes (y[n][K][P], es bytes a value) and
 * a staging tile (rows ld apart, column 0 = c0): to_stage 1 gathers (residuals), 0 scatters (outputs). */
static void stage_copy(uint8_t *img_base, int64_t K, int64_t P, size_t es, int64_t k0, int mr, int64_t c0, int64_t c1,
                       uint8_t *stage, int64_t ld, int to_stage)
{
    for (int64_t c = c0; c < c1;) {
        const int64_t n = c / P, p = c - n * P, m = P - p < c1 - c ? P - p : c1 - c;
        for (int i = 0; i < mr; i++) {
            uint8_t *a = img_base + (size_t)((n * K + k0 + i) * P + p) * es, *b = stage + (size_t)(i * ld + c - c0) * es;
            memcpy(to_stage ? b : a, to_stage ? a : b, (size_t)m * es);
        }
        c += m;
    }
}

static void conv_gemm_task(void *ctx, int64_t ib, int64_t ie, int thread)
{
    const qd_conv_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const trtl_qk_ops *o = s->ops;
    const int64_t P = j->g->P, NP = j->nimg * P, K = s->d.K, sw = s->steps * o->vl, nstrips = j->nstrips;
    const size_t oes = s->d.out_quant == 2 ? 1 : sizeof(float);
    (void)thread;
    if (o->begin)
        o->begin();
    for (int64_t it = ib; it < ie; it++) {
        int64_t sb = it / j->sp.chunks, ch = it % j->sp.chunks;
        int64_t ts = sb * j->sp.sbw, te = ts + j->sp.sbw < nstrips ? ts + j->sp.sbw : nstrips;
        int64_t pb = ch * j->sp.panels / j->sp.chunks, pe = (ch + 1) * j->sp.panels / j->sp.chunks;
        const int64_t n0 = j->nimg > 1 ? ts * o->vl / P : 0; /* the image of the super block's first column */
        for (int64_t p = pb; p < pe; p++)
            for (int64_t t0 = ts, n = n0; t0 < te; t0 += o->nv) {
                int64_t nv = te - t0 < o->nv ? te - t0 : o->nv, last = NP - (t0 + nv - 1) * o->vl;
                int64_t k0 = p * o->mr, c0 = t0 * o->vl, c1 = c0 + nv * o->vl < NP ? c0 + nv * o->vl : NP;
                int64_t mr = K - k0 < o->mr ? K - k0 : o->mr;
                while (c0 >= (n + 1) * P) /* no division a tile */
                    n++;
                trtl_qk_tile t = {s->packed + p * s->steps * o->mr,
                                  j->b + t0 * sw,
                                  sw,
                                  s->steps,
                                  (int32_t)mr,
                                  (int32_t)nv,
                                  (int32_t)(last < o->vl ? last : o->vl),
                                  0,
                                  s->comp + k0,
                                  s->scale + k0,
                                  s->bias + k0,
                                  NULL,
                                  NULL,
                                  NULL,
                                  P,
                                  NULL};
                if (c1 <= (n + 1) * P) { /* inside image n: straight to its plane */
                    int64_t yo = (n * K + k0) * P + c0 - n * P;
                    int8_t *yq;
                    t.y = y_at(s, j->y, yo, &yq);
                    t.yq = yq;
                    t.res = j->res ? j->res + yo : NULL;
                    t.resq = j->resq ? j->resq + yo : NULL;
                    o->tile(&t, &s->e);
                    continue;
                }
                /* across images (batch strips): the epilogue on a staging tile, then each image's part */
                float sy[QD_STAGE], sr[QD_STAGE];
                int8_t srq[QD_STAGE];
                const int64_t ld = nv * o->vl;
                t.ldy = ld;
                t.y = s->d.out_quant == 2 ? NULL : sy;
                t.yq = s->d.out_quant == 2 ? (int8_t *)sy : NULL;
                if (j->res) {
                    stage_copy((uint8_t *)(uintptr_t)j->res, K, P, sizeof(float), k0, (int)mr, c0, c1,
                               (uint8_t *)sr, ld, 1);
                    t.res = sr;
                }
                if (j->resq) {
                    stage_copy((uint8_t *)(uintptr_t)j->resq, K, P, 1, k0, (int)mr, c0, c1, (uint8_t *)srq, ld, 1);
                    t.resq = srq;
                }
                o->tile(&t, &s->e);
                stage_copy(j->y, K, P, oes, k0, (int)mr, c0, c1, (uint8_t *)sy, ld, 0);
            }
    }
    if (o->end)
        o->end();
}

void trtl_qconv_simd_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const trtl_qk_io *io,
                         void *scratch, struct trtl_threadpool *pool)
{
    const trtl_qconv_desc *d = &s->d;
    const trtl_qk_ops *o = s->ops;
    qd_geom g;
    geom_init(s, N, H, W, &g);
    uint8_t *base = align_ptr(scratch);
    qd_conv_job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    j.g = &g;
    j.plane = base + PLANE_GUARD;
    j.b = (int32_t *)(void *)(base + g.plane_bytes);
    int64_t *off = (int64_t *)(void *)(base + g.plane_bytes + g.b_bytes);
    int64_t *doff = (int64_t *)(void *)(base + g.plane_bytes + g.b_bytes + g.off_bytes);
    for (int64_t oh = 0, p = 0; oh < g.OH; oh++)
        for (int64_t ow = 0; ow < g.OW; ow++, p++)
            off[p] = oh * d->stride_h * g.Wp + ow * d->stride_w;
    for (int64_t c = 0, i = 0; c < s->Cg; c++)
        for (int64_t r = 0; r < d->R; r++)
            for (int64_t t = 0; t < d->S; t++, i++)
                doff[i] = c * g.Hp * g.Wp + r * d->dil_h * g.Wp + t * d->dil_w;
    j.off = off;
    j.doff = doff;
    const int64_t in_img = d->C * H * W, out_img = d->K * g.P;
    /* 1x1 stride 1 unpadded: the im2col matrix is x itself, quantized (floats) or converted (codes)
     * straight into strips, a group of g.imgs images at a time */
    const int direct = is_direct(d);
    const size_t in_es = io->x_codes ? 1 : sizeof(float), out_es = d->out_quant == 2 ? 1 : sizeof(float);
    j.x_codes = io->x_codes;
    for (int64_t n = 0; n < N; n += g.imgs) {
        j.nimg = N - n < g.imgs ? N - n : g.imgs;
        j.nstrips = ceil_div(j.nimg * g.P, o->vl);
        int threads = threads_for(pool, 2.0 * (double)d->K * (double)s->D * (double)(j.nimg * g.P));
        struct trtl_threadpool *tp = threads > 1 ? pool : NULL;
        split_init(&j.sp, j.nstrips, d->K, o->nv, o->mr, threads, s->steps * o->vl * 4);
        j.x = (const uint8_t *)io->x + (size_t)(n * in_img) * in_es;
        j.y = (uint8_t *)io->y + (size_t)(n * out_img) * out_es;
        j.res = io->residual ? io->residual + n * out_img : NULL;
        j.resq = io->residual_codes ? io->residual_codes + n * out_img : NULL;
        if (direct) {
            trtl_parallel_for(tp, j.nstrips, 4, conv_direct_task, &j);
        } else {
            trtl_parallel_for(tp, d->C, H * W > 0 ? ceil_div(16384, H * W) : d->C, conv_quant_task, &j);
            trtl_parallel_for(tp, j.nstrips, 4, conv_pack_task, &j);
        }
        trtl_parallel_for(tp, j.sp.sblocks * j.sp.chunks, 1, conv_gemm_task, &j);
    }
}

/* ---- rows ---------------------------------------------------------------------------------------- */

typedef struct qd_gemm_job {
    const trtl_qconv_state *s;
    qd_split sp;
    int64_t M;
    const void *x; /* float, or codes (x_codes) */
    int32_t x_codes;
    const float *res;
    const int8_t *resq; /* residual codes (res_codes), or NULL */
    void *y;       /* float, or codes (out_quant = 2) */
    int32_t *a;    /* row panels */
} qd_gemm_job;

size_t trtl_qgemm_simd_scratch(const trtl_qconv_state *s, int64_t M)
{
    return ALIGN + (size_t)(ceil_div(M, s->ops->mr) * s->ops->mr * s->steps) * sizeof(int32_t);
}

/* Row panels [pb, pe): quantize each row in chunks, scatter its words into the panel layout. */
static void gemm_quant_task(void *ctx, int64_t pb, int64_t pe, int thread)
{
    const qd_gemm_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const trtl_qk_ops *o = s->ops;
    const int64_t C = s->d.C, mr = o->mr;
    uint8_t tmp[ROW_CHUNK * 2 + 64];
    (void)thread;
    for (int64_t p = pb; p < pe; p++) {
        int32_t *panel = j->a + p * s->steps * mr;
        for (int64_t i = 0; i < mr; i++) {
            int64_t m = p * mr + i;
            if (m >= j->M) {
                for (int64_t q = 0; q < s->steps; q++)
                    panel[trtl_qk_panel_word(o, q, i)] = 0;
                continue;
            }
            for (int64_t c0 = 0; c0 < C; c0 += ROW_CHUNK) {
                int64_t n = C - c0 < ROW_CHUNK ? C - c0 : ROW_CHUNK;
                if (j->x_codes)
                    o->codes((const int8_t *)j->x + m * C + c0, n, tmp, s->d.in_signed, s->d.in_zero);
                else
                    o->quant((const float *)j->x + m * C + c0, n, tmp, &s->q);
                memset(tmp + n * (4 / o->g), 0, 4); /* the last word's unused elements (zero weights) */
                for (int64_t q = c0 / o->g, qe = ceil_div(c0 + n, o->g); q < qe; q++)
                    memcpy(&panel[trtl_qk_panel_word(o, q, i)], tmp + (q * o->g - c0) * (4 / o->g), 4);
            }
            for (int64_t q = ceil_div(C, o->g); q < s->steps; q++) /* AMX: steps padded to kchunk */
                panel[trtl_qk_panel_word(o, q, i)] = 0;
        }
    }
}

static void gemm_gemm_task(void *ctx, int64_t ib, int64_t ie, int thread)
{
    const qd_gemm_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const trtl_qk_ops *o = s->ops;
    const int64_t K = s->d.K, sw = s->steps * o->vl, nstrips = ceil_div(K, o->vl);
    (void)thread;
    if (o->begin)
        o->begin();
    for (int64_t it = ib; it < ie; it++) {
        int64_t sb = it / j->sp.chunks, ch = it % j->sp.chunks;
        int64_t ts = sb * j->sp.sbw, te = ts + j->sp.sbw < nstrips ? ts + j->sp.sbw : nstrips;
        int64_t pb = ch * j->sp.panels / j->sp.chunks, pe = (ch + 1) * j->sp.panels / j->sp.chunks;
        for (int64_t p = pb; p < pe; p++)
            for (int64_t t0 = ts; t0 < te; t0 += o->nv) {
                int64_t nv = te - t0 < o->nv ? te - t0 : o->nv, last = K - (t0 + nv - 1) * o->vl;
                int64_t m0 = p * o->mr, yo = m0 * K + t0 * o->vl;
                int8_t *yq;
                float *yf = y_at(s, j->y, yo, &yq);
                trtl_qk_tile t = {j->a + p * s->steps * o->mr,
                                  s->packed + t0 * sw,
                                  sw,
                                  s->steps,
                                  (int32_t)(j->M - m0 < o->mr ? j->M - m0 : o->mr),
                                  (int32_t)nv,
                                  (int32_t)(last < o->vl ? last : o->vl),
                                  1,
                                  s->comp + t0 * o->vl,
                                  s->scale + t0 * o->vl,
                                  s->bias + t0 * o->vl,
                                  yf,
                                  yq,
                                  j->res ? j->res + yo : NULL,
                                  K,
                                  j->resq ? j->resq + yo : NULL};
                o->tile(&t, &s->e);
            }
    }
    if (o->end)
        o->end();
}

void trtl_qgemm_simd_run(const trtl_qconv_state *s, int64_t M, const trtl_qk_io *io, void *scratch,
                         struct trtl_threadpool *pool)
{
    const trtl_qk_ops *o = s->ops;
    qd_gemm_job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    j.M = M;
    j.x = io->x;
    j.x_codes = io->x_codes;
    j.y = io->y;
    j.res = io->residual;
    j.resq = io->residual_codes;
    j.a = align_ptr(scratch);
    int threads = threads_for(pool, 2.0 * (double)M * (double)s->d.K * (double)s->D);
    struct trtl_threadpool *tp = threads > 1 ? pool : NULL;
    split_init(&j.sp, ceil_div(s->d.K, o->vl), M, o->nv, o->mr, threads, s->steps * o->vl * 4);
    trtl_parallel_for(tp, j.sp.panels, 1, gemm_quant_task, &j);
    trtl_parallel_for(tp, j.sp.sblocks * j.sp.chunks, 1, gemm_gemm_task, &j);
}
