/*
 * convolution_im2col.c -- "convolution.im2col_sgemm": any convolution (1-3 spatial dims, groups,
 * strides, dilations, every padding mode) as one SGEMM per group and pixel panel.
 *
 * For image n and group g:  Y[Kg, P] = W[Kg, Cg*kvol] x Col[Cg*kvol, P]   (P output pixels).
 * Col is never built whole: the output pixels are cut into panels of pw columns, a panel of Col
 * (Cg*kvol rows x pw) sized for L2 (PANEL_BYTES) but at least MIN_PANEL columns wide, because
 * OpenBLAS repacks the weights on every call and narrow panels would spend their time there.
 * Each panel is expanded into the thread's scratch slot and multiplied (BLAS packs it again as it
 * streams).  The epilogue is fused around the SGEMM: the Y tile is prefilled with bias +
 * residual, SGEMM accumulates onto it (beta = 1), and the activation runs over the tile while it
 * is still in cache.  A 1x1, stride-1, unpadded convolution needs no Col at all: the activations
 * of group g already are the [Cg, P] matrix (ldb = P).
 *
 * Work items are (image, group, panel, block of output channels), output channels being split
 * only when there are fewer (image, group, panel) items than threads (small maps, deep layers).
 * The scratch holds one panel per slot (scratch() sizes it for trtl_available_cpus() slots; run()
 * uses as many as the scratch it is given holds); a slot is handed a contiguous run of items, so
 * a slot that gets several channel blocks of one panel expands it once, and the same slot (same
 * thread, see threadpool.c) gets the same items on every run.
 */
#include <string.h>
#include <cblas.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#ifndef PANEL_BYTES
#define PANEL_BYTES (512 * 1024) /* target size of one Col panel (L2 is 1-2 MiB on our targets) */
#endif
#ifndef MIN_PANEL
#define MIN_PANEL 256 /* every SGEMM call repacks its weights: keep panels wide, exceeding the budget if need be */
#endif
#define MAX_PANEL_FLOATS (2 * 1024 * 1024) /* 8 MiB a slot at most */
#define MAX_SLOTS 64

typedef trtl_conv_geom conv_geom;

/* The shared geometry, plus BLAS's int sizes. */
static trtl_status geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, conv_geom *g)
{
    TRTL_TRY(trtl_conv_geom_init(nd, xd, yd, g));
    if (g->ckk > TRTL_BLAS_MAX_DIM || g->P > TRTL_BLAS_MAX_DIM || g->Kg > TRTL_BLAS_MAX_DIM)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': convolution too large for 32-bit BLAS sizes", nd->name);
    return TRTL_OK;
}

/* Widest panel (output pixels) a scratch slot holds. */
static int64_t panel_max(const conv_geom *g)
{
    int64_t w = PANEL_BYTES / (g->ckk * (int64_t)sizeof(float));
    if (w < MIN_PANEL)
        w = MIN_PANEL;
    if (w * g->ckk > MAX_PANEL_FLOATS) /* huge Cg*kvol (3-D): bound the scratch instead */
        w = MAX_PANEL_FLOATS / g->ckk;
    w = w < 16 ? 16 : w & ~(int64_t)15;
    return w >= g->P ? g->P : w;
}

static double conv_flops(const conv_geom *g) { return 2.0 * (double)g->N * (double)g->K * (double)g->ckk * (double)g->P; }

static int max_slots(const conv_geom *g)
{
    return (int)trtl_scratch_slots(conv_flops(g), MAX_SLOTS);
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
/* d[t] = s[2t] for t < n: two loads and a shuffle per 8 outputs (the last vector falls back to
 * scalar code so nothing past s[2n - 2] is read). */
__attribute__((target("avx2,fma"))) static void gather2_avx2(float *d, const float *s, int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n && 2 * t + 16 <= 2 * n - 1; t += 8) {
        __m256 a = _mm256_loadu_ps(s + 2 * t), b = _mm256_loadu_ps(s + 2 * t + 8);
        __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
        _mm256_storeu_ps(d + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8)));
    }
    for (; t < n; t++)
        d[t] = s[2 * t];
}
#define HAVE_GATHER2 1
#else
#define gather2_avx2(d, s, n) ((void)0)
#endif

/* Col rows (c, kd, kh, kw) x pw columns for output pixels [p0, p0 + pw) of one image and group. */
static void build_panel(const conv_geom *g, const float *xg, int64_t p0, int64_t pw, float *col)
{
    const int64_t hw = g->out[1] * g->out[2];
    const int64_t od0 = p0 / hw, oh0 = (p0 % hw) / g->out[2], ow0 = p0 % g->out[2];
#ifdef HAVE_GATHER2
    const int avx2 = trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA);
#else
    const int avx2 = 0;
#endif
    float *dst = col;
    for (int64_t c = 0; c < g->Cg; c++) {
        const float *xc = xg + c * g->in_sp;
        for (int64_t kd = 0; kd < g->k[0]; kd++)
            for (int64_t kh = 0; kh < g->k[1]; kh++)
                for (int64_t kw = 0; kw < g->k[2]; kw++, dst += pw) {
                    int64_t od = od0, oh = oh0, ow = ow0, j = 0;
                    const int64_t woff = kw * g->dl[2] - g->pad[2], sw = g->s[2], in2 = g->in[2];
                    while (j < pw) {
                        int64_t seg = g->out[2] - ow;
                        if (seg > pw - j)
                            seg = pw - j;
                        int64_t id = od * g->s[0] - g->pad[0] + kd * g->dl[0];
                        int64_t ih = oh * g->s[1] - g->pad[1] + kh * g->dl[1];
                        float *d = dst + j;
                        if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
                            memset(d, 0, (size_t)seg * sizeof(float));
                        } else {
                            const float *src = xc + (id * g->in[1] + ih) * in2;
                            int64_t iw0 = ow * sw + woff;
                            int64_t lo, hi; /* t in [lo, hi) reads inside the row */
                            trtl_conv_row_span(iw0, sw, in2, seg, &lo, &hi);
                            for (int64_t t = 0; t < lo; t++)
                                d[t] = 0.0f;
                            if (sw == 1) {
                                memcpy(d + lo, src + iw0 + lo, (size_t)(hi - lo) * sizeof(float));
                            } else if (sw == 2 && avx2) {
                                gather2_avx2(d + lo, src + iw0 + 2 * lo, hi - lo);
                            } else {
                                const float *sp = src + iw0;
                                for (int64_t t = lo; t < hi; t++)
                                    d[t] = sp[t * sw];
                            }
                            for (int64_t t = hi; t < seg; t++)
                                d[t] = 0.0f;
                        }
                        j += seg;
                        ow = 0;
                        if (++oh == g->out[1]) {
                            oh = 0;
                            od++;
                        }
                    }
                }
    }
}

typedef struct conv_job {
    const conv_geom *g;
    const trtl_epilogue *epi;
    const float *x, *w, *bias, *res;
    float *y, *scratch;
    int64_t slot_floats, pw, npanels, nkb, kbs, items, slots;
} conv_job;

static void conv_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const conv_job *j = ctx;
    const conv_geom *g = j->g;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        float *col = j->scratch ? j->scratch + s * j->slot_floats : NULL;
        int64_t built = -1;
        for (int64_t it = s * j->items / j->slots, end = (s + 1) * j->items / j->slots; it < end; it++) {
            int64_t key = it / j->nkb, kb = it % j->nkb;
            int64_t panel = key % j->npanels, grp = (key / j->npanels) % g->G, n = key / j->npanels / g->G;
            int64_t p0 = panel * j->pw, cur = g->P - p0 < j->pw ? g->P - p0 : j->pw;
            const float *xg = j->x + (n * g->C + grp * g->Cg) * g->in_sp, *B;
            int64_t ldb;
            if (g->direct) {
                B = xg + p0;
                ldb = g->P;
            } else {
                if (key != built) {
                    build_panel(g, xg, p0, cur, col);
                    built = key;
                }
                B = col;
                ldb = cur;
            }
            int64_t k0 = kb * j->kbs, k1 = k0 + j->kbs < g->Kg ? k0 + j->kbs : g->Kg;
            int64_t ch0 = grp * g->Kg + k0; /* first output channel of this block */
            float *yt = j->y + (n * g->K + ch0) * g->P + p0;
            const float *rt = j->res ? j->res + (n * g->K + ch0) * g->P + p0 : NULL;
            int prefill = j->bias || rt;
            if (prefill)
                for (int64_t k = 0; k < k1 - k0; k++)
                    trtl_epi_prefill(yt + k * g->P, rt ? rt + k * g->P : NULL, j->bias ? j->bias[ch0 + k] : 0.0f,
                                     NULL, cur);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(k1 - k0), (int)cur, (int)g->ckk, 1.0f,
                        j->w + ch0 * g->ckk, (int)g->ckk, B, (int)ldb, prefill ? 1.0f : 0.0f, yt, (int)g->P);
            if (j->epi->act != TRTL_ACT_NONE)
                for (int64_t k = 0; k < k1 - k0; k++)
                    trtl_epi_act(j->epi, yt + k * g->P, cur);
        }
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static trtl_status conv_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const trtl_conv_params *p = &nd->p.conv;
    conv_geom g;
    TRTL_TRY(geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    trtl_blas_init();
    conv_job j = {0};
    j.g = &g;
    j.epi = &nd->epi;
    j.x = (const float *)a->in[0].data;
    j.w = (const float *)p->kernel.values;
    j.bias = p->bias.count ? (const float *)p->bias.values : NULL;
    j.y = (float *)a->out[0].data;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &j.res));
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;

    int64_t pwmax = panel_max(&g), slots = trtl_threads_for(a->pool, conv_flops(&g));
    if (!g.direct) {
        j.slot_floats = g.ckk * pwmax;
        int64_t avail = (int64_t)(a->scratch_size / ((size_t)j.slot_floats * sizeof(float)));
        if (avail < 1 || !a->scratch)
            return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': scratch of %zu bytes is smaller than one im2col panel",
                              nd->name, a->scratch_size);
        j.scratch = (float *)a->scratch;
        if (slots > avail)
            slots = avail;
    }

    /* Cut the work into at least `slots` items of similar size.  Every SGEMM call repacks its
     * block of weights, so panels stay as wide as the budget allows: split the pixels further
     * only while panels keep >= 32 columns, then split the output channels. */
    int64_t ng = g.N * g.G, npanels = ceil_div(g.P, pwmax), nkb = 1;
    if (slots > 1) {
        if (ng * npanels < slots) {
            int64_t want = ceil_div(slots, ng);
            if (g.P / want >= 32)
                npanels = want;
        } else {
            /* a multiple of `slots` items when a few more panels get there */
            int64_t np2 = npanels;
            while ((ng * np2) % slots && np2 < npanels + slots)
                np2++;
            if ((ng * np2) % slots == 0 && g.P / np2 >= 32)
                npanels = np2;
        }
        if (ng * npanels < slots) {
            nkb = ceil_div(slots, ng * npanels);
            if (nkb > g.Kg / 16)
                nkb = g.Kg / 16 > 1 ? g.Kg / 16 : 1;
        }
    }
    /* equal panels (a multiple of 16 columns when that does not add a panel) */
    int64_t pw = ceil_div(g.P, npanels), pw16 = (pw + 15) & ~(int64_t)15;
    if (pw16 <= pwmax && (npanels - 1) * pw16 < g.P)
        pw = pw16;
    npanels = ceil_div(g.P, pw);
    j.kbs = ceil_div(g.Kg, nkb);
    if (nkb > 1)
        j.kbs = (j.kbs + 7) & ~(int64_t)7;
    j.nkb = ceil_div(g.Kg, j.kbs);
    j.pw = pw;
    j.npanels = npanels;
    j.items = ng * npanels * j.nkb;
    j.slots = slots < j.items ? slots : j.items;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, conv_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static size_t conv_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    conv_geom g;
    if (geom_init(nd, &in[0].dims, out ? &out[0].dims : NULL, &g) != TRTL_OK || g.direct || g.P == 0)
        return 0;
    return (size_t)max_slots(&g) * (size_t)(g.ckk * panel_max(&g)) * sizeof(float);
}

static int conv_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    int nsp = p->kernel_size.nb_dims;
    if (nsp < 1 || nsp > 3 || in_dims[0].nb_dims != nsp + 2 || p->num_groups < 1)
        return 0;
    int64_t ckk = trtl_volume(&p->kernel_size) * (in_dims[0].d[1] / p->num_groups), P = 1;
    for (int i = 0; i < nsp; i++)
        P *= in_dims[0].d[2 + i] + p->pre_padding.d[i] + p->post_padding.d[i];
    return ckk > 0 && ckk <= TRTL_BLAS_MAX_DIM && P <= TRTL_BLAS_MAX_DIM;
}

static trtl_status conv_prepare(const trtl_node *nd, void **state)
{
    (void)nd;
    trtl_blas_init();
    *state = NULL;
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_conv_im2col_sgemm = {
    .name = "convolution.im2col_sgemm",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = 0,
    .applies_epilogue = 1,
    .fallback = 1,
    .applies = conv_applies,
    .prepare = conv_prepare,
    .release = NULL,
    .scratch = conv_scratch,
    .run = conv_run,
};
