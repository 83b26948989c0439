/* nchwc_reorder.c -- NCHW planes <-> one 8-channel block [P][8] (see nchwc_reorder.h): 8 pixels of 8 planes at a
 * time through an 8x8 register transpose (8 unpacks, 8 shuffles, 8 lane permutes), the pixel tail scalar. */
#include <immintrin.h>
#include "kernels/x86/nchwc_reorder.h"

__attribute__((target("avx2"), always_inline)) static inline void tr8(__m256 r[8])
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

__attribute__((target("avx2"))) void trtl_nchwc8_from_planes(const float *src, int64_t nc, int64_t P, float *dst)
{
    int64_t p = 0;
    for (; p + 8 <= P; p += 8) {
        __m256 r[8];
        for (int l = 0; l < 8; l++)
            r[l] = l < nc ? _mm256_loadu_ps(src + l * P + p) : _mm256_setzero_ps();
        tr8(r);
        for (int j = 0; j < 8; j++)
            _mm256_storeu_ps(dst + (p + j) * 8, r[j]);
    }
    for (; p < P; p++)
        for (int64_t l = 0; l < 8; l++)
            dst[p * 8 + l] = l < nc ? src[l * P + p] : 0.0f;
}

__attribute__((target("avx2"))) void trtl_nchwc8_to_planes(const float *src, int64_t nc, int64_t P, const float *res,
                                                           float *dst)
{
    int64_t p = 0;
    for (; p + 8 <= P; p += 8) {
        __m256 r[8];
        for (int j = 0; j < 8; j++)
            r[j] = _mm256_loadu_ps(src + (p + j) * 8);
        tr8(r);
        for (int l = 0; l < nc; l++) {
            __m256 v = res ? _mm256_add_ps(r[l], _mm256_loadu_ps(res + l * P + p)) : r[l];
            _mm256_storeu_ps(dst + l * P + p, v);
        }
    }
    for (; p < P; p++)
        for (int64_t l = 0; l < nc; l++)
            dst[l * P + p] = src[p * 8 + l] + (res ? res[l * P + p] : 0.0f);
}
