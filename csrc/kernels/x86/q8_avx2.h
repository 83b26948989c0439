/*
 * q8_avx2.h -- 8 floats to their int8 / uint8 codes in a register, as QuantizeLinear: the correctly rounded quotient
 * v / scale, round half to even, the clamp to [lo, hi] = the code range less the zero point (max(NaN, lo) is lo: NaN
 * to the lowest code), + zero point; int32 lanes.  Shared by quantize.simd (qdq_simd.c) and the layer norm writing
 * codes (normalization.c), so both give QuantizeLinear's codes bit for bit.  Include after <immintrin.h>.
 */
#ifndef TRTL_KERNELS_X86_Q8_AVX2_H
#define TRTL_KERNELS_X86_Q8_AVX2_H

__attribute__((target("avx2"))) static inline __m256i trtl_q8_codes_avx2(__m256 v, __m256 vs, __m256 lo, __m256 hi,
                                                                         __m256i vz)
{
    __m256 r = _mm256_round_ps(_mm256_div_ps(v, vs), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(r), vz);
}

#endif
