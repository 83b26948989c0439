/*
 * qconv_avx2.c -- the AVX2 kernels of the int8 convolution library ("avx2"), for CPUs without
 * VNNI.  vpmaddubsw (u8 x s8 pairs summed into int16) would saturate: 255 * 127 * 2 > 32767.
 * 7-bit weights would avoid that but change the weights' values.  Here the activations are
 * stored as int16 q - in_zero (in [-255, 255]) and the weights as int16, in pairs; vpmaddwd
 * multiplies and sums the pairs into int32 exactly (|sum| <= 2 * 255 * 128), so no compensation
 * is needed either.  Half VNNI's multiply-adds per instruction, plus one add.  Tiles of 4 rows x
 * 2 strips of 8 columns (below; qconv_internal.h has the layouts, qconv_tmpl.h the code).
 */
#if defined(__x86_64__)
#include <stdint.h>
#include "kernels/x86/qconv_v256.h"
/* Tiles of 4 rows x 2 strips here (AVX-VNNI keeps 4 x 3): vpmaddwd + vpaddd need a temporary per
 * product, and 4 x 3 accumulators + 3 strips + the broadcast + it exceed the 16 ymm registers (the
 * compiler spilled accumulators in the inner loop).  Measured on MobileNetV2's 1x1 layers
 * (benchmarks/qconv_mnv2_bench.c, Zen 3): 4 x 2 16% less thread CPU time than 4 x 3, 3 x 3 9%, 5 x 2
 * and 6 x 2 slower.  QT_AVX2_MR / QT_AVX2_NV (NV 2 or 3) override it for such experiments. */
#undef QT_MR
#undef QT_NV
#ifndef QT_AVX2_MR
#define QT_AVX2_MR 4
#define QT_AVX2_NV 2
#endif
#define QT_MR QT_AVX2_MR
#define QT_NV QT_AVX2_NV

#define QT_SFX avx2
#define QT_NAME "avx2"
#define QT_ATTR __attribute__((target("avx2,fma")))
#define QT_G 2
#define QT_ELEM int16_t
/* acc + the pair products of a and w.  The add is written in asm so that it accumulates in place: with
 * the intrinsic gcc adds into the product's register and copies it back to the accumulator's, one
 * vmovdqa per accumulator and step in the tile loop (8 of 32 instructions a step of the 4 x 2 tile). */
QT_ATTR static inline __m256i qt_dot_avx2(__m256i acc, __m256i a, __m256i w)
{
    __m256i p = _mm256_madd_epi16(a, w);
    __asm__("vpaddd %1, %0, %0" : "+x"(acc) : "x"(p));
    return acc;
}
#define QT_DOT_CONV(acc, u, w) qt_dot_avx2(acc, u, w)
#define QT_DOT_GEMM(acc, a, w) qt_dot_avx2(acc, a, w)
/* int16 pairs: the low half of a word is the even depth, the high half the odd one */
#define QT_WORD_OR(w, code, i) \
    _mm256_or_si256(w, (i) ? _mm256_slli_epi32(code, 16) : _mm256_and_si256(code, _mm256_set1_epi32(0xFFFF)))

/* 8 codes (int32 lanes in int16 range) -> 8 int16. */
QT_ATTR static inline void narrow_s16(int16_t *dst, __m256i v)
{
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
#define QT_NARROW_STORE(dst, v) narrow_s16(dst, v)

/* 8 words of 2 int16: half i of word c is src[i][c]. */
QT_ATTR static inline void combine_s16x2(int32_t *dst, const int16_t *const *src)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src[0]);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)src[1]);
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_unpacklo_epi16(a, b));
    _mm_storeu_si128((__m128i *)(void *)(dst + 4), _mm_unpackhi_epi16(a, b));
}
#define QT_COMBINE(dst, src) combine_s16x2(dst, src)

#include "kernels/x86/qconv_tmpl.h"
#define QT_DW_ISA TRTL_QK_AVX2
#include "kernels/x86/qconv_dw_tmpl.h"
#endif
