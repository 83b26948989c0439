/*
 * fused_epilogue.h -- the epilogue of the optimized kernels, applied to a tile while it is in
 * cache (the engine's trtl_epilogue_apply is the separate-pass reference):
 *
 *   y = act(op(x) + bias + residual)
 *
 * BLAS-backed kernels split it around the BLAS call: trtl_epi_prefill writes bias + residual
 * into the output tile, BLAS accumulates onto it (beta = 1, which also spares OpenBLAS its own
 * pass zeroing C for beta = 0), then trtl_epi_act applies the activation.
 *
 * RELU, CLIP, LEAKY_RELU, the internal QGRID (int8 tactics' fake quantization) and NONE have AVX2 and AVX-512
 * paths (trtl_act8 / trtl_act16, one copy each, picked at run time from trtl_cpu_features) usable inside the
 * kernels' registers; trtl_epi_act computes every other activation (the
 * internal SILU / HARD_SWISH / MISH codes included) with the vector math of vmath.h, which
 * matches the reference formulas to a few ulp, NaN and +-Inf included.
 */
#ifndef TRTL_KERNELS_X86_FUSED_EPILOGUE_H
#define TRTL_KERNELS_X86_FUSED_EPILOGUE_H

#include "kernels/kernel.h"

/* Activations with a vector fast path (also usable inside AVX2 kernels via trtl_act8). */
static inline int trtl_act_is_fast(int32_t act)
{
    return act == TRTL_ACT_NONE || act == TRTL_ACT_RELU || act == TRTL_ACT_CLIP || act == TRTL_ACT_LEAKY_RELU ||
           act == TRTL_ACT_QGRID;
}

/* y[i] = (vbias ? vbias[i] : bias) + (res ? res[i] : 0) over n floats. */
void trtl_epi_prefill(float *y, const float *res, float bias, const float *vbias, int64_t n);
/* y[i] = act(y[i]) over n floats (nothing for TRTL_ACT_NONE). */
void trtl_epi_act(const trtl_epilogue *e, float *y, int64_t n);

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
/* Fast activation of 8 lanes (act must satisfy trtl_act_is_fast).  Same results as
 * trtl_activation_eval, NaN included: all of them keep NaN. */
__attribute__((target("avx2,fma"))) static inline __m256 trtl_act8(__m256 v, int32_t act, __m256 alpha,
                                                                      __m256 beta)
{
    switch (act) {
    case TRTL_ACT_RELU: return _mm256_max_ps(_mm256_setzero_ps(), v); /* maxps gives its 2nd operand for NaN */
    case TRTL_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(_mm256_mul_ps(v, alpha), v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ));
    case TRTL_ACT_CLIP: {
        /* x < alpha ? alpha : (x > beta ? beta : x), also when alpha > beta */
        __m256 t = _mm256_blendv_ps(v, beta, _mm256_cmp_ps(v, beta, _CMP_GT_OQ));
        return _mm256_blendv_ps(t, alpha, _mm256_cmp_ps(v, alpha, _CMP_LT_OQ));
    }
    case TRTL_ACT_QGRID: { /* params.h: alpha * clamp(rint(v / alpha), lo, hi), NaN -> lo; the int8 tactics' output
                            * quantization in the kernels' registers (kernels/x86/qlinear_fp32.c) */
        __m256 t = _mm256_round_ps(_mm256_mul_ps(beta, _mm256_set1_ps(1.0f / 1024.0f)),
                                   _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m256 lo = _mm256_sub_ps(t, _mm256_set1_ps(512.0f));
        __m256 hi = _mm256_sub_ps(_mm256_fnmadd_ps(t, _mm256_set1_ps(1024.0f), beta), _mm256_set1_ps(512.0f));
        __m256 q = _mm256_round_ps(_mm256_div_ps(v, alpha), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_min_ps(_mm256_max_ps(q, lo), hi); /* maxps gives its 2nd operand (lo) for NaN */
        return _mm256_mul_ps(_mm256_add_ps(q, _mm256_setzero_ps()), alpha); /* -0 + 0 = +0: DQ's zero */
    }
    default: return v;
    }
}

/* The same for 16 lanes (AVX-512 kernels: the packed GEMM's tile stores, the pointwise tiles). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 trtl_act16(__m512 v, int32_t act,
                                                                                  __m512 alpha, __m512 beta)
{
    switch (act) {
    case TRTL_ACT_RELU: return _mm512_max_ps(_mm512_setzero_ps(), v); /* maxps gives its 2nd operand for NaN */
    case TRTL_ACT_LEAKY_RELU:
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ), _mm512_mul_ps(v, alpha),
                                    v);
    case TRTL_ACT_CLIP: { /* x < alpha ? alpha : (x > beta ? beta : x), NaN kept */
        __m512 t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, beta, _CMP_GT_OQ), v, beta);
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, alpha, _CMP_LT_OQ), t, alpha);
    }
    case TRTL_ACT_QGRID: { /* as trtl_act8 */
        __m512 t = _mm512_roundscale_ps(_mm512_mul_ps(beta, _mm512_set1_ps(1.0f / 1024.0f)),
                                        _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512 lo = _mm512_sub_ps(t, _mm512_set1_ps(512.0f));
        __m512 hi = _mm512_sub_ps(_mm512_fnmadd_ps(t, _mm512_set1_ps(1024.0f), beta), _mm512_set1_ps(512.0f));
        __m512 q = _mm512_roundscale_ps(_mm512_div_ps(v, alpha), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm512_min_ps(_mm512_max_ps(q, lo), hi); /* maxps gives its 2nd operand (lo) for NaN */
        return _mm512_mul_ps(_mm512_add_ps(q, _mm512_setzero_ps()), alpha); /* -0 + 0 = +0: DQ's zero */
    }
    default: return v;
    }
}
#endif

#endif
