/*
 * qconv_v256.h -- the 256-bit vector macros of qconv_tmpl.h, shared by the AVX-VNNI
 * (qconv_avxvnni.c) and AVX2 (qconv_avx2.c) instantiations.  Masks are int32 lane masks
 * (maskload / maskstore, which do not fault on the lanes they skip).
 */
#ifndef TRTL_KERNELS_X86_QCONV_V256_H
#define TRTL_KERNELS_X86_QCONV_V256_H

#include <immintrin.h>

#define QT_VL 8
#define QT_MR 4
#define QT_NV 3
#define VI __m256i
#define VF __m256
#define VMASK __m256i
#define VMASK_N(n) _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define VI_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VI_SET1(x) _mm256_set1_epi32(x)
#define VI_ZERO() _mm256_setzero_si256()
#define VI_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define VI_ADD(a, b) _mm256_add_epi32(a, b)
#define VI_SUB(a, b) _mm256_sub_epi32(a, b)
#define VI_MIN(a, b) _mm256_min_epi32(a, b)
#define VI_MAX(a, b) _mm256_max_epi32(a, b)
#define VF_LOAD(p) _mm256_loadu_ps(p)
#define VF_STORE(p, v) _mm256_storeu_ps(p, v)
#define VF_LOADM(p, m) _mm256_maskload_ps(p, m)
#define VF_STOREM(p, m, v) _mm256_maskstore_ps(p, m, v)
#define VF_SET1(x) _mm256_set1_ps(x)
#define VF_ZERO() _mm256_setzero_ps()
#define VF_ADD(a, b) _mm256_add_ps(a, b)
#define VF_SUB(a, b) _mm256_sub_ps(a, b)
#define VF_MUL(a, b) _mm256_mul_ps(a, b)
#define VF_MIN(a, b) _mm256_min_ps(a, b)
#define VF_MAX(a, b) _mm256_max_ps(a, b)
#define VF_FMADD(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VF_FNMADD(a, b, c) _mm256_fnmadd_ps(a, b, c)
#define VF_CVT_F2I(a) _mm256_cvtps_epi32(a)
#define VF_CVT_I2F(a) _mm256_cvtepi32_ps(a)
#define VF_CMP_GE(a, b) _mm256_cmp_ps(a, b, _CMP_GE_OQ)
#define VF_CMP_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define VF_CMP_LT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define VF_BLEND(m, a, b) _mm256_blendv_ps(a, b, m) /* b where m */

#endif
