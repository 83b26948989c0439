/*
 * convolution_1x1.c -- "convolution.1x1_direct": pointwise convolutions (1x1 window, stride 1, no
 * padding, one group), the expand / project layers of MobileNet-style networks:
 *
 *     Y[n][k][p] = sum_c W[k][c] X[n][c][p] + bias[k],   then the fused residual + activation,
 *
 * straight on the NCHW activations: the rows X[n][c][p0 .. p0+47] are the vector operand, loaded
 * where they are (no packing copy), and the weights, packed once in prepare() into panels of 8
 * output channels ([K/8][C][8], zero-padded), are broadcast.  A tile is 8 output channels x up to 3
 * pixel vectors (AVX-512: 24 zmm accumulators, 3 row loads + 8 broadcasts per input channel), so
 * its result is 8 output rows of contiguous pixels: bias, residual and activation (ReLU / clip /
 * leaky in registers, others by trtl_epi_act on the rows while they are in L1) are applied before
 * or right after its single store, and no transpose back to NCHW is needed.
 *
 * Small maps: a 7x7 map has 49 = 3 x 16 + 1 pixels.  Pixels past the last whole vector, when there
 * are at most 4 of them, are not a masked vector (1 lane used of 16) but "extra" columns computed
 * the other way round inside the last tile: the panel row W[c][k0..k0+7] is one 8-float vector and
 * the extra pixel's X[c][p] a broadcast, so pixel 49 of 8 channels costs one 8-lane FMA per input
 * channel.  Larger remainders are a masked vector.
 *
 * AVX2 + FMA (no AVX-512): tiles of 4 channels (half a panel) x up to 3 ymm pixel vectors (12
 * accumulators of the 16 registers), the last vector masked.  CPUs without AVX2/FMA do not get
 * this kernel (cpu_features); the packed GEMM / BLAS kernels and the reference remain.
 *
 * applies() keeps it to maps of at most 32x32 pixels and, on maps of at most 8x8, to depths of 256 or more
 * (see there); run() computes any 1x1 stride-1 shape, so other run-time sizes need no fallback.
 *
 * Work split: items are (image, pixel chunk, channel group), channel group fastest, cut into
 * contiguous runs per thread: on small maps (one or two chunks) that is a split over output
 * channels, on large maps over pixel chunks, each thread reusing its chunk's rows from L1/L2.
 */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

#define PW_MR 8      /* output channels per packed panel */
#define PW_MAX_NV 3  /* pixel vectors per tile */
#define PW_MAX_EXTRA 4
#define PW_MAX_PIXELS 1024          /* applies(): output pixels an image at most (32x32) */
#define PW_SHORT_MAP 64             /* applies(): maps of at most 64 pixels (8x8) need ... */
#define PW_MIN_DEPTH_SHORT_MAP 256  /* ... at least this many input channels */

typedef struct pw_state {
    int64_t K, C;
    float *wp; /* [ceil(K/8)][C][8] */
} pw_state;

typedef struct pw_job {
    const pw_state *st;
    const float *x, *bias, *res;
    float *y;
    const trtl_epilogue *epi;
    int64_t P, nchunk, ngroup, items, slots;
    int wide; /* AVX-512 */
} pw_job;

/* ---- AVX-512 tiles ------------------------------------------------------------------------- */

#define T512 __attribute__((target("avx512f,avx512vl,fma,avx2")))

T512 static inline __m512 act512(__m512 v, int32_t act, __m512 alpha, __m512 beta)
{
    const __m512 z = _mm512_setzero_ps();
    switch (act) {
    case TRTL_ACT_RELU: return _mm512_max_ps(z, v); /* the second operand when v is NaN: NaN kept */
    case TRTL_ACT_LEAKY_RELU:
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, z, _CMP_GE_OQ), _mm512_mul_ps(v, alpha), v);
    case TRTL_ACT_CLIP: { /* x < alpha ? alpha : (x > beta ? beta : x), NaN kept */
        __m512 t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, beta, _CMP_GT_OQ), v, beta);
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, alpha, _CMP_LT_OQ), t, alpha);
    }
    default: return v;
    }
}

/* One tile: rows k0 .. k0+kr-1 (kr <= 8) of the output, pixels p0 + [0, nv*16 - masked lanes) as vectors
 * and ne <= 4 extra pixels after them.  wp: the panel [C][8]; x, y, res already at (row 0 / k0, p0). */
T512 static inline __attribute__((always_inline)) void tile512(const float *wp, const float *x, int64_t P, int64_t C,
                                                                const int nv, __mmask16 mlast, const int ne,
                                                                const float *bias, const float *res, float *y, int kr,
                                                                const trtl_epilogue *e)
{
    __m512 acc[PW_MR][PW_MAX_NV];
    __m256 ex[PW_MAX_EXTRA];
    _Pragma("GCC unroll 8")
    for (int i = 0; i < PW_MR; i++)
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm512_setzero_ps();
    _Pragma("GCC unroll 8")
    for (int j = 0; j < ne; j++)
        ex[j] = _mm256_setzero_ps();
    const float *xr = x;
    for (int64_t c = 0; c < C; c++, xr += P, wp += PW_MR) {
        __m512 xv[PW_MAX_NV];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            xv[v] = v == nv - 1 ? _mm512_maskz_loadu_ps(mlast, xr + 16 * v) : _mm512_loadu_ps(xr + 16 * v);
        _Pragma("GCC unroll 8")
        for (int i = 0; i < PW_MR; i++) {
            __m512 w = _mm512_set1_ps(wp[i]);
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm512_fmadd_ps(w, xv[v], acc[i][v]);
        }
        if (ne) {
            __m256 wv = _mm256_loadu_ps(wp);
            _Pragma("GCC unroll 8")
            for (int j = 0; j < ne; j++)
                ex[j] = _mm256_fmadd_ps(wv, _mm256_set1_ps(xr[16 * nv + j]), ex[j]);
        }
    }
    const int fast = trtl_act_is_fast(e->act);
    const __m512 alpha = _mm512_set1_ps(e->alpha), beta = _mm512_set1_ps(e->beta);
    _Pragma("GCC unroll 8")
    for (int i = 0; i < kr; i++) {
        __m512 b = _mm512_set1_ps(bias ? bias[i] : 0.0f);
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            __mmask16 m = v == nv - 1 ? mlast : (__mmask16)0xFFFF;
            __m512 t = _mm512_add_ps(acc[i][v], b);
            if (res)
                t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, res + i * P + 16 * v));
            if (fast)
                t = act512(t, e->act, alpha, beta);
            _mm512_mask_storeu_ps(y + i * P + 16 * v, m, t);
        }
    }
    if (ne) {
        /* extra pixel j of the 8 channels: lanes i*P apart in the output (7 * P fits an int: see pw_chunk_at) */
        const int64_t off = 16 * (nv - 1) + __builtin_popcount(mlast);
        const __mmask8 km = (__mmask8)((1u << kr) - 1u);
        const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)P));
        const __m256 bv = bias ? _mm256_maskz_loadu_ps(km, bias) : _mm256_setzero_ps();
        const __m256 a8 = _mm256_set1_ps(e->alpha), b8 = _mm256_set1_ps(e->beta);
        _Pragma("GCC unroll 4")
        for (int j = 0; j < ne; j++) {
            __m256 t = _mm256_add_ps(ex[j], bv);
            if (res)
                t = _mm256_add_ps(t, _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), km, idx, res + off + j, 4));
            if (fast)
                t = trtl_act8(t, e->act, a8, b8);
            _mm256_mask_i32scatter_ps(y + off + j, km, idx, t, 4);
        }
    }
}

/* The chunk's vector count and extra pixels are run-time values; each combination is its own
 * specialization of tile512 so that the accumulators stay in registers. */
T512 static void tile512_any(const float *wp, const float *x, int64_t P, int64_t C, int nv, __mmask16 mlast, int ne,
                             const float *bias, const float *res, float *y, int kr, const trtl_epilogue *e)
{
#define PW_CASE(NV, NE)                                                                                        \
    case (NV) * 8 + (NE): tile512(wp, x, P, C, NV, mlast, NE, bias, res, y, kr, e); break;
    switch (nv * 8 + ne) {
        PW_CASE(1, 0) PW_CASE(1, 1) PW_CASE(1, 2) PW_CASE(1, 3) PW_CASE(1, 4)
        PW_CASE(2, 0) PW_CASE(2, 1) PW_CASE(2, 2) PW_CASE(2, 3) PW_CASE(2, 4)
        PW_CASE(3, 0) PW_CASE(3, 1) PW_CASE(3, 2) PW_CASE(3, 3) PW_CASE(3, 4)
    default: break;
    }
#undef PW_CASE
}

/* ---- AVX2 tiles ---------------------------------------------------------------------------- */

#define T256 __attribute__((target("avx2,fma")))

static const int32_t pw_lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* Rows k0 .. k0+kr-1 (kr <= 4, the panel half at wp), nv ymm pixel vectors, the last one of nlast lanes. */
T256 static inline __attribute__((always_inline)) void tile256(const float *wp, const float *x, int64_t P, int64_t C,
                                                                const int nv, int nlast, const float *bias,
                                                                const float *res, float *y, int kr,
                                                                const trtl_epilogue *e)
{
    __m256 acc[4][PW_MAX_NV];
    const __m256i ml = _mm256_loadu_si256((const __m256i *)(pw_lane_mask + 8 - nlast));
    _Pragma("GCC unroll 8")
    for (int i = 0; i < 4; i++)
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm256_setzero_ps();
    const float *xr = x;
    for (int64_t c = 0; c < C; c++, xr += P, wp += PW_MR) {
        __m256 xv[PW_MAX_NV];
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++)
            xv[v] = v == nv - 1 ? _mm256_maskload_ps(xr + 8 * v, ml) : _mm256_loadu_ps(xr + 8 * v);
        _Pragma("GCC unroll 8")
        for (int i = 0; i < 4; i++) {
            __m256 w = _mm256_broadcast_ss(wp + i);
            _Pragma("GCC unroll 8")
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm256_fmadd_ps(w, xv[v], acc[i][v]);
        }
    }
    const int fast = trtl_act_is_fast(e->act);
    const __m256 alpha = _mm256_set1_ps(e->alpha), beta = _mm256_set1_ps(e->beta);
    _Pragma("GCC unroll 8")
    for (int i = 0; i < kr; i++) {
        __m256 b = _mm256_set1_ps(bias ? bias[i] : 0.0f);
        _Pragma("GCC unroll 8")
        for (int v = 0; v < nv; v++) {
            __m256 t = _mm256_add_ps(acc[i][v], b);
            if (v == nv - 1) {
                if (res)
                    t = _mm256_add_ps(t, _mm256_maskload_ps(res + i * P + 8 * v, ml));
                if (fast)
                    t = trtl_act8(t, e->act, alpha, beta);
                _mm256_maskstore_ps(y + i * P + 8 * v, ml, t);
            } else {
                if (res)
                    t = _mm256_add_ps(t, _mm256_loadu_ps(res + i * P + 8 * v));
                if (fast)
                    t = trtl_act8(t, e->act, alpha, beta);
                _mm256_storeu_ps(y + i * P + 8 * v, t);
            }
        }
    }
}

T256 static void tile256_any(const float *wp, const float *x, int64_t P, int64_t C, int nv, int nlast,
                             const float *bias, const float *res, float *y, int kr, const trtl_epilogue *e)
{
    switch (nv) {
    case 1: tile256(wp, x, P, C, 1, nlast, bias, res, y, kr, e); break;
    case 2: tile256(wp, x, P, C, 2, nlast, bias, res, y, kr, e); break;
    case 3: tile256(wp, x, P, C, 3, nlast, bias, res, y, kr, e); break;
    default: break;
    }
}

/* ---- chunks and the work split ------------------------------------------------------------- */

/* Pixel chunk q of a row of P pixels, vectors of vl lanes, at most 3 vectors a chunk; with AVX-512
 * (extra allowed) a remainder of <= 4 pixels past whole vectors rides on the last chunk as extras. */
typedef struct pw_chunk {
    int64_t p0, npx;
    int nv, nlast, ne;
} pw_chunk;

static int64_t pw_nchunks(int64_t P, int vl, int extra)
{
    int64_t whole = P / vl, r = P % vl;
    int64_t nvec = whole + (r && !(extra && r <= PW_MAX_EXTRA && whole > 0 && P <= INT32_MAX / PW_MR));
    return (nvec + PW_MAX_NV - 1) / PW_MAX_NV;
}

static pw_chunk pw_chunk_at(int64_t P, int vl, int extra, int64_t q)
{
    int64_t whole = P / vl, r = P % vl;
    int use_extra = extra && r && r <= PW_MAX_EXTRA && whole > 0 && P <= INT32_MAX / PW_MR;
    int64_t nvec = whole + (r && !use_extra), nch = (nvec + PW_MAX_NV - 1) / PW_MAX_NV;
    pw_chunk c;
    c.p0 = q * PW_MAX_NV * vl;
    c.nv = (int)(q == nch - 1 ? nvec - q * PW_MAX_NV : PW_MAX_NV);
    c.nlast = vl;
    c.ne = 0;
    if (q == nch - 1) {
        if (use_extra)
            c.ne = (int)r;
        else if (r)
            c.nlast = (int)r;
    }
    c.npx = (int64_t)(c.nv - 1) * vl + c.nlast + c.ne;
    return c;
}

static void pw_items(void *ctx, int64_t sb, int64_t se, int thread)
{
    const pw_job *j = ctx;
    const pw_state *st = j->st;
    const int64_t P = j->P, C = st->C, K = st->K;
    const int vl = j->wide ? 16 : 8, gr = j->wide ? PW_MR : 4;
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        int64_t b = s * j->items / j->slots, en = (s + 1) * j->items / j->slots;
        for (int64_t it = b; it < en; it++) {
            int64_t g = it % j->ngroup, col = it / j->ngroup, n = col / j->nchunk, q = col % j->nchunk;
            pw_chunk ch = pw_chunk_at(P, vl, j->wide, q);
            int64_t k0 = g * gr;
            int kr = (int)(K - k0 < gr ? K - k0 : gr);
            const float *wp = st->wp + (k0 / PW_MR) * C * PW_MR + k0 % PW_MR;
            const float *x = j->x + n * C * P + ch.p0;
            const float *bias = j->bias ? j->bias + k0 : NULL;
            const float *res = j->res ? j->res + (n * K + k0) * P + ch.p0 : NULL;
            float *y = j->y + (n * K + k0) * P + ch.p0;
            if (j->wide)
                tile512_any(wp, x, P, C, ch.nv, (__mmask16)((1u << ch.nlast) - 1u), ch.ne, bias, res, y, kr, j->epi);
            else
                tile256_any(wp, x, P, C, ch.nv, ch.nlast, bias, res, y, kr, j->epi);
            if (!trtl_act_is_fast(j->epi->act))
                _Pragma("GCC unroll 8")
                for (int i = 0; i < kr; i++)
                    trtl_epi_act(j->epi, y + i * P, ch.npx);
        }
    }
}

/* ---- the kernel ---------------------------------------------------------------------------- */

static int pw_shape_ok(const trtl_conv_geom *g, const pw_state *st)
{
    return g->G == 1 && g->direct && g->C == st->C && g->K == st->K;
}

static trtl_status pw_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const pw_state *st = a->state;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!st || !pw_shape_ok(&g, st)) /* the builder only picks this kernel for such layers */
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': convolution.1x1_direct cannot compute this "
                          "convolution (the plan is corrupt)", nd->name);
    if (g.N == 0 || g.K == 0 || g.P == 0)
        return TRTL_OK;
    pw_job j = {st, (const float *)a->in[0].data,
                nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL, res, (float *)a->out[0].data,
                &nd->epi, g.P, 0, 0, 0, 1, trtl_cpu_has(TRTL_CPU_AVX512F)};
    const int vl = j.wide ? 16 : 8, gr = j.wide ? PW_MR : 4;
    j.nchunk = pw_nchunks(g.P, vl, j.wide);
    j.ngroup = (g.K + gr - 1) / gr;
    j.items = g.N * j.nchunk * j.ngroup;
    int64_t slots = trtl_threads_for(a->pool, 2.0 * (double)g.N * (double)g.K * (double)g.C * (double)g.P);
    j.slots = slots < j.items ? slots : j.items;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, pw_items, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static int pw_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1 || p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT) ||
        p->num_output_maps < 1 || p->kernel.count % p->num_output_maps)
        return 0;
    trtl_conv_geom g;
    if (trtl_conv_geom_init(nd, &in_dims[0], NULL, &g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    if (!g.direct || g.kvol != 1 || p->kernel.count != g.K * g.C)
        return 0;
    /* Where it loses (measured with the weights and activations coming from memory, as in a network, which the
     * builder's hot-cache timing does not see): maps past 32x32, whose C rows P apart stream from memory without
     * a hardware prefetch stream (the packed GEMM copies them into one), and 7x7-size maps with a short depth,
     * where every 8-channel tile streams its panel once for few FMAs. */
    return g.P <= PW_MAX_PIXELS && (g.P > PW_SHORT_MAP || g.C >= PW_MIN_DEPTH_SHORT_MAP);
}

static void pw_release(void *state)
{
    pw_state *st = state;
    if (st)
        free(st->wp);
    free(st);
}

static trtl_status pw_prepare(const trtl_node *nd, void **state)
{
    const trtl_conv_params *p = &nd->p.conv;
    *state = NULL;
    int64_t kvol = 1;
    for (int i = 0; i < p->kernel_size.nb_dims; i++)
        kvol *= p->kernel_size.d[i];
    if (p->num_groups != 1 || p->num_output_maps < 1 || kvol != 1 || p->kernel.type != TRTL_FLOAT ||
        p->kernel.count == 0 || p->kernel.count % p->num_output_maps)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights do not fit a 1x1 convolution of %d output maps",
                          nd->name, (long long)p->kernel.count, p->num_output_maps);
    pw_state *st = calloc(1, sizeof *st);
    if (!st)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory", nd->name);
    st->K = p->num_output_maps;
    st->C = p->kernel.count / st->K;
    int64_t panels = (st->K + PW_MR - 1) / PW_MR;
    size_t bytes = (size_t)(panels * st->C * PW_MR) * sizeof(float);
    st->wp = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!st->wp) {
        free(st);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory packing %zu bytes of weights",
                          nd->name, bytes);
    }
    const float *w = (const float *)p->kernel.values;
    for (int64_t pb = 0; pb < panels; pb++)
        for (int64_t c = 0; c < st->C; c++)
            _Pragma("GCC unroll 8")
            for (int i = 0; i < PW_MR; i++) {
                int64_t k = pb * PW_MR + i;
                st->wp[(pb * st->C + c) * PW_MR + i] = k < st->K ? w[k * st->C + c] : 0.0f;
            }
    *state = st;
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_conv_1x1_direct = {
    .name = "convolution.1x1_direct",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = pw_applies,
    .prepare = pw_prepare,
    .release = pw_release,
    .run = pw_run,
};
