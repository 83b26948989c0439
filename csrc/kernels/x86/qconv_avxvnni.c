/*
 * qconv_avxvnni.c -- the AVX-VNNI kernels of the int8 convolution library ("avxvnni"): the VEX
 * vpdpbusd on ymm, tiles of 4 rows x 3 strips of 8 columns, u8 activations x s8 weights
 * (qconv_internal.h has the layouts, qconv_tmpl.h the code).
 */
#if defined(__x86_64__)
#include <stdint.h>
#include "kernels/x86/qconv_v256.h"

#define QT_SFX avxvnni
#define QT_NAME "avxvnni"
#define QT_ATTR __attribute__((target("avx2,fma,avxvnni")))
#define QT_G 4
#define QT_ELEM uint8_t
#define QT_DOT_CONV(acc, u, w) _mm256_dpbusd_avx_epi32(acc, u, w)
#define QT_DOT_GEMM(acc, a, w) _mm256_dpbusd_avx_epi32(acc, a, w)
#define QT_WORD_OR(w, code, i) _mm256_or_si256(w, _mm256_slli_epi32(code, 8 * (i)))

/* 8 codes (0..255 in int32 lanes) -> 8 bytes. */
QT_ATTR static inline void narrow_u8(uint8_t *dst, __m256i v)
{
    __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)dst, _mm_packus_epi16(h, h));
}
#define QT_NARROW_STORE(dst, v) narrow_u8(dst, v)

/* 8 words of 4 bytes: byte i of word c is src[i][c]. */
QT_ATTR static inline void combine_u8x4(int32_t *dst, const uint8_t *const *src)
{
    __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)src[0]));
    for (int i = 1; i < 4; i++)
        w = _mm256_or_si256(
            w, _mm256_slli_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)src[i])), 8 * i));
    _mm256_storeu_si256((__m256i *)(void *)dst, w);
}
#define QT_COMBINE(dst, src) combine_u8x4(dst, src)

#include "kernels/x86/qconv_tmpl.h"
#define QT_DW_ISA TRTL_QK_AVXVNNI
#include "kernels/x86/qconv_dw_tmpl.h"
#endif
