/*
 * qconv_vnni.c -- the AVX512-VNNI kernels of the int8 convolution library ("avx512vnni"):
 * vpdpbusd on zmm, tiles of 8 rows x 3 strips of 16 columns (24 int32 accumulators), u8
 * activations x s8 weights (qconv_internal.h has the layouts, qconv_tmpl.h the code).
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <stdint.h>

#define QT_SFX avx512vnni
#define QT_NAME "avx512vnni"
#define QT_ATTR __attribute__((target("avx512f,avx512bw,avx512vnni,fma")))
#define QT_VL 16
#define QT_MR 8
#define QT_NV 3
#define QT_G 4
#define QT_ELEM uint8_t
#define VI __m512i
#define VF __m512
#define VMASK __mmask16
#define VMASK_N(n) ((__mmask16)((1u << (n)) - 1u))
#define VI_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define VI_SET1(x) _mm512_set1_epi32(x)
#define VI_ZERO() _mm512_setzero_si512()
#define VI_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#define VI_ADD(a, b) _mm512_add_epi32(a, b)
#define VI_SUB(a, b) _mm512_sub_epi32(a, b)
#define VI_MIN(a, b) _mm512_min_epi32(a, b)
#define VI_MAX(a, b) _mm512_max_epi32(a, b)
#define VF_LOAD(p) _mm512_loadu_ps(p)
#define VF_STORE(p, v) _mm512_storeu_ps(p, v)
#define VF_LOADM(p, m) _mm512_maskz_loadu_ps(m, p)
#define VF_STOREM(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define VF_SET1(x) _mm512_set1_ps(x)
#define VF_ZERO() _mm512_setzero_ps()
#define VF_ADD(a, b) _mm512_add_ps(a, b)
#define VF_SUB(a, b) _mm512_sub_ps(a, b)
#define VF_MUL(a, b) _mm512_mul_ps(a, b)
#define VF_MIN(a, b) _mm512_min_ps(a, b)
#define VF_MAX(a, b) _mm512_max_ps(a, b)
#define VF_FMADD(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VF_FNMADD(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define VF_CVT_F2I(a) _mm512_cvtps_epi32(a)
#define VF_CVT_I2F(a) _mm512_cvtepi32_ps(a)
#define VF_CMP_GE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)
#define VF_CMP_GT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define VF_CMP_LT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define VF_BLEND(m, a, b) _mm512_mask_blend_ps(m, a, b) /* b where m */
#define QT_DOT_CONV(acc, u, w) _mm512_dpbusd_epi32(acc, u, w)
#define QT_DOT_GEMM(acc, a, w) _mm512_dpbusd_epi32(acc, a, w)
#define QT_WORD_OR(w, code, i) _mm512_or_si512(w, _mm512_slli_epi32(code, 8 * (i)))
#define QT_NARROW_STORE(dst, v) _mm_storeu_si128((__m128i *)(void *)(dst), _mm512_cvtepi32_epi8(v))

/* 16 words of 4 bytes: byte i of word c is src[i][c]. */
QT_ATTR static inline void combine_avx512(int32_t *dst, const uint8_t *const *src)
{
    __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)src[0]));
    for (int i = 1; i < 4; i++)
        w = _mm512_or_si512(w, _mm512_slli_epi32(_mm512_cvtepu8_epi32(
                                                     _mm_loadu_si128((const __m128i *)(const void *)src[i])),
                                                 8 * i));
    _mm512_storeu_si512((void *)dst, w);
}
#define QT_COMBINE(dst, src) combine_avx512(dst, src)

#include "kernels/x86/qconv_tmpl.h"
#include "kernels/x86/qconv_amx_tile.h"
#define QT_DW_ISA TRTL_QK_AVX512VNNI
#include "kernels/x86/qconv_dw_tmpl.h"
#include "kernels/x86/qconv_dw_c16.h"
#endif
