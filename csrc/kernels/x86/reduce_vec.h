/*
 * reduce_vec.h -- the vector operations that the reductions' SIMD bodies (reduce_axes_simd.h,
 * reduce_binary_simd.h) are written in, for one ISA per inclusion: define RV_AVX512 (16 lanes, mask
 * registers) or RV_AVX2 (8 lanes, blend masks) before including it, include the body, then include
 * reduce_vec_end.h.  The body's functions get the ISA's suffix through RV_SFX().  Not a header for
 * other files: reduce_axes.c and reduce_binary.c include it twice each.
 *
 *   RV_INL / RV_FN    attributes of an inlined helper / of an out-of-line body function
 *   rv_v, rv_k        a vector of RV_W floats, a tail mask
 *   rv_tail(t)        mask of the first t lanes (0 < t < RV_W)
 *   rv_loadm, rv_storem   masked load (other lanes 0) and store
 *   rv_comb(op, a, v) a op v for TRTL_RED_*, with the reference's NaN rule (a NaN v replaces a)
 */
#include <immintrin.h>

#if defined(RV_AVX512)
#define RV_INL __attribute__((target("avx512f"), always_inline)) static inline
#define RV_FN __attribute__((target("avx512f"))) static
#define RV_W 16
#define RV_SFX(f) f##_avx512
#define rv_v __m512
#define rv_k __mmask16
#define rv_set(x) _mm512_set1_ps(x)
#define rv_load(p) _mm512_loadu_ps(p)
#define rv_store(p, v) _mm512_storeu_ps(p, v)
#define rv_tail(t) ((__mmask16)((1u << (t)) - 1u))
#define rv_loadm(k, p) _mm512_maskz_loadu_ps(k, p)
#define rv_storem(k, p, v) _mm512_mask_storeu_ps(p, k, v)
#define rv_add(a, b) _mm512_add_ps(a, b)
#define rv_sub(a, b) _mm512_sub_ps(a, b)
#define rv_mul(a, b) _mm512_mul_ps(a, b)
#define rv_abs(a) _mm512_abs_ps(a)
#define rv_max(a, b) _mm512_max_ps(a, b)
#define rv_min(a, b) _mm512_min_ps(a, b)
#define rv_if_nan(v, t, f) _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), t)
#elif defined(RV_AVX2)
#define RV_INL __attribute__((target("avx2,fma"), always_inline)) static inline
#define RV_FN __attribute__((target("avx2,fma"))) static
#define RV_W 8
#define RV_SFX(f) f##_avx2
#define rv_v __m256
#define rv_k __m256i
#define rv_set(x) _mm256_set1_ps(x)
#define rv_load(p) _mm256_loadu_ps(p)
#define rv_store(p, v) _mm256_storeu_ps(p, v)
#define rv_tail(t) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(t)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define rv_loadm(k, p) _mm256_maskload_ps(p, k)
#define rv_storem(k, p, v) _mm256_maskstore_ps(p, k, v)
#define rv_add(a, b) _mm256_add_ps(a, b)
#define rv_sub(a, b) _mm256_sub_ps(a, b)
#define rv_mul(a, b) _mm256_mul_ps(a, b)
#define rv_abs(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a)
#define rv_max(a, b) _mm256_max_ps(a, b)
#define rv_min(a, b) _mm256_min_ps(a, b)
#define rv_if_nan(v, t, f) _mm256_blendv_ps(f, t, _mm256_cmp_ps(v, v, _CMP_UNORD_Q))
#else
#error "define RV_AVX512 or RV_AVX2 before including reduce_vec.h"
#endif

/* max_ps(v, a) = v > a ? v : a (a when either is NaN); then a NaN v wins, so a NaN once met stays. */
RV_INL rv_v RV_SFX(rv_comb)(int op, rv_v a, rv_v v)
{
    switch (op) {
    case TRTL_RED_PROD: return rv_mul(a, v);
    case TRTL_RED_MAX: return rv_if_nan(v, v, rv_max(v, a));
    case TRTL_RED_MIN: return rv_if_nan(v, v, rv_min(v, a));
    default: return rv_add(a, v);
    }
}
#define rv_comb RV_SFX(rv_comb)
