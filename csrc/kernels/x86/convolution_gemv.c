/*
 * convolution_gemv.c -- "convolution.gemv": a convolution whose window is its whole input (one
 * group, no pre padding, dilation 1 where the window is wider than 1: one output pixel per image),
 * as squeeze-and-excitation's 1x1 convolutions on a globally pooled 1x1 map are:
 *
 *     Y[n, k] = W[k, :] . X[n, :] + bias[k],  then the fused residual + activation,
 *
 * with W the convolution's weights as given ([K][C][kd][kh][kw] is [K][ckk] row-major, so nothing
 * is packed) and X[n, :] image n (C x spatial, in the weights' order).  The GEMM kernels pad such a
 * product to whole tiles of output pixels (nr = 8 or 16 columns for one), this one computes dot
 * products: four weight rows at a time against one read of the image, AVX-512 or AVX2 + FMA,
 * masked tails; each quad of rows against every image of the batch while it is in L1 (session 20:
 * the loop ran image by image, so at batch 8 the weights streamed from L3 or memory 8 times).
 * Output channels are split over the pool when the product is large enough.
 *
 * applies() sees the opt shapes only: at run time, an input of another size (dynamic spatial dims)
 * is computed by the reference convolution and the epilogue pass, the same values.
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/blas/blas_common.h"
#include "kernels/conv_geometry.h"
#include "kernels/ref/ref.h"
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct gv_job {
    const float *w, *x, *bias, *res;
    float *y;
    int64_t N, K, D, slots;
    const trtl_epilogue *epi;
} gv_job;

/* The whole window is the input: one output pixel, read in the weights' order. */
static int whole_window(const trtl_conv_geom *g)
{
    if (g->G != 1 || g->P != 1 || g->in_sp != g->kvol)
        return 0;
    for (int d = 0; d < 3; d++)
        if (g->in[d] != g->k[d] || g->pad[d] != 0 || (g->k[d] > 1 && g->dl[d] != 1))
            return 0;
    return 1;
}

/* y[r] = W[r, :] . x for rows r < nr (1..4) of w (row stride D), x of D floats.  Two accumulators a row (8
 * independent FMA chains; one a row left the FMA latency exposed: 4 chains against 2 FMAs a cycle).  Tried and not
 * kept (benchmarks/gemv_ab.c): prefetching the next quad's rows a quad ahead (level with weights from memory: the
 * hardware prefetcher follows the rows, which lie one after another). */
#define DOT4_IMPL(SUF, TGT, V, VL, LOAD, MLOAD, FMA, ADD, ZERO, HSUM)                                                  \
    TGT static void dot4_##SUF(const float *w, const float *x, int64_t D, int nr, float *y)                            \
    {                                                                                                                  \
        V a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();                                                          \
        V b0 = ZERO(), b1 = ZERO(), b2 = ZERO(), b3 = ZERO();                                                          \
        const float *w0 = w, *w1 = w + (nr > 1) * D, *w2 = w + (nr > 2) * 2 * D, *w3 = w + (nr > 3) * 3 * D;           \
        int64_t i = 0;                                                                                                 \
        for (; i + 2 * VL <= D; i += 2 * VL) {                                                                         \
            V xv = LOAD(x + i), xu = LOAD(x + i + VL);                                                                 \
            a0 = FMA(LOAD(w0 + i), xv, a0);                                                                            \
            a1 = FMA(LOAD(w1 + i), xv, a1);                                                                            \
            a2 = FMA(LOAD(w2 + i), xv, a2);                                                                            \
            a3 = FMA(LOAD(w3 + i), xv, a3);                                                                            \
            b0 = FMA(LOAD(w0 + i + VL), xu, b0);                                                                       \
            b1 = FMA(LOAD(w1 + i + VL), xu, b1);                                                                       \
            b2 = FMA(LOAD(w2 + i + VL), xu, b2);                                                                       \
            b3 = FMA(LOAD(w3 + i + VL), xu, b3);                                                                       \
        }                                                                                                              \
        if (i + VL <= D) {                                                                                             \
            V xv = LOAD(x + i);                                                                                        \
            a0 = FMA(LOAD(w0 + i), xv, a0);                                                                            \
            a1 = FMA(LOAD(w1 + i), xv, a1);                                                                            \
            a2 = FMA(LOAD(w2 + i), xv, a2);                                                                            \
            a3 = FMA(LOAD(w3 + i), xv, a3);                                                                            \
            i += VL;                                                                                                   \
        }                                                                                                              \
        if (i < D) {                                                                                                   \
            V xv = MLOAD(x + i, D - i);                                                                                \
            b0 = FMA(MLOAD(w0 + i, D - i), xv, b0);                                                                    \
            b1 = FMA(MLOAD(w1 + i, D - i), xv, b1);                                                                    \
            b2 = FMA(MLOAD(w2 + i, D - i), xv, b2);                                                                    \
            b3 = FMA(MLOAD(w3 + i, D - i), xv, b3);                                                                    \
        }                                                                                                              \
        float s[4] = {HSUM(ADD(a0, b0)), HSUM(ADD(a1, b1)), HSUM(ADD(a2, b2)), HSUM(ADD(a3, b3))};                     \
        for (int r = 0; r < nr; r++)                                                                                   \
            y[r] = s[r];                                                                                               \
    }

__attribute__((target("avx512f"))) static inline __m512 mload512(const float *p, int64_t n)
{
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
__attribute__((target("avx512f"))) static inline float hsum512(__m512 v) { return _mm512_reduce_add_ps(v); }

static const int32_t lane_mask8[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
__attribute__((target("avx2"))) static inline __m256 mload256(const float *p, int64_t n)
{
    return _mm256_maskload_ps(p, _mm256_loadu_si256((const __m256i *)(lane_mask8 + 8 - n)));
}
__attribute__((target("avx2"))) static inline float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

DOT4_IMPL(avx512, __attribute__((target("avx512f"))), __m512, 16, _mm512_loadu_ps, mload512, _mm512_fmadd_ps,
          _mm512_add_ps, _mm512_setzero_ps, hsum512)
DOT4_IMPL(avx2, __attribute__((target("avx2,fma"))), __m256, 8, _mm256_loadu_ps, mload256, _mm256_fmadd_ps,
          _mm256_add_ps, _mm256_setzero_ps, hsum256)

/* Slot s: output channels [s*K/slots, (s+1)*K/slots) of every image. */
static void gv_slots(void *ctx, int64_t sb, int64_t se, int thread)
{
    const gv_job *j = ctx;
    const int wide = trtl_cpu_has(TRTL_CPU_AVX512F);
    (void)thread;
    for (int64_t s = sb; s < se; s++) {
        int64_t k0 = s * j->K / j->slots, k1 = (s + 1) * j->K / j->slots;
        if (k0 >= k1)
            continue;
        /* quad-major: a quad's rows (4 D floats, L1) serve every image, so the weights stream once a run, not once
         * an image (batch 8: 8 passes over 920 KB of MobileNetV3-L's 240 -> 960 weights from L3) */
        for (int64_t k = k0; k < k1; k += 4) {
            int nr = k1 - k < 4 ? (int)(k1 - k) : 4;
            for (int64_t n = 0; n < j->N; n++) {
                if (wide)
                    dot4_avx512(j->w + k * j->D, j->x + n * j->D, j->D, nr, j->y + n * j->K + k);
                else
                    dot4_avx2(j->w + k * j->D, j->x + n * j->D, j->D, nr, j->y + n * j->K + k);
            }
        }
        for (int64_t n = 0; n < j->N; n++) {
            float *y = j->y + n * j->K;
            for (int64_t k = k0; k < k1; k++)
                y[k] += (j->bias ? j->bias[k] : 0.0f) + (j->res ? j->res[n * j->K + k] : 0.0f);
            trtl_epi_act(j->epi, y + k0, k1 - k0);
        }
    }
}

static trtl_status gv_run(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    trtl_conv_geom g;
    TRTL_TRY(trtl_conv_geom_init(nd, &a->in[0].dims, &a->out[0].dims, &g));
    const float *res;
    TRTL_TRY(trtl_epi_residual(a, g.N * g.K * g.P, &res));
    if (!whole_window(&g)) { /* another input size than the opt shapes' */
        TRTL_TRY(trtl_ref_convolution(a));
        trtl_epilogue_apply(&nd->epi, (float *)a->out[0].data, res, g.N * g.K * g.P);
        return TRTL_OK;
    }
    if (nd->p.conv.kernel.count != g.K * g.ckk || (nd->p.conv.bias.count && nd->p.conv.bias.count != g.K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights / %lld biases do not fit the convolution",
                          nd->name, (long long)nd->p.conv.kernel.count, (long long)nd->p.conv.bias.count);
    if (g.N == 0 || g.K == 0)
        return TRTL_OK;
    gv_job j = {(const float *)nd->p.conv.kernel.values, (const float *)a->in[0].data,
                nd->p.conv.bias.count ? (const float *)nd->p.conv.bias.values : NULL, res, (float *)a->out[0].data,
                g.N, g.K, g.ckk, 1, &nd->epi};
    int64_t slots = trtl_threads_for(a->pool, 2.0 * (double)g.N * (double)g.K * (double)g.ckk);
    int64_t quads = (g.K + 3) / 4;
    j.slots = slots < quads ? slots : quads;
    if (j.slots < 1)
        j.slots = 1;
    trtl_parallel_for(a->pool, j.slots, 1, gv_slots, &j); /* a slot a thread; inline when 1 */
    return TRTL_OK;
}

static int gv_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->num_groups != 1)
        return 0;
    trtl_conv_geom g;
    if (!trtl_conv_float_applies(nd, &in_dims[0], &g))
        return 0;
    return whole_window(&g) && p->kernel.count == g.K * g.ckk;
}

const trtl_kernel trtl_kernel_conv_gemv = {
    .name = "convolution.gemv",
    .op = TRTL_OP_CONVOLUTION,
    .cpu_features = TRTL_CPU_AVX2 | TRTL_CPU_FMA,
    .applies_epilogue = 1,
    .applies = gv_applies,
    .run = gv_run,
};
