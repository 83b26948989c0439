/* nchwc_reorder.c -- NCHW planes <-> one 8-channel block [P][8] (see nchwc_reorder.h): 8 pixels of 8 planes at a
 * time through the 8x8 register transpose (x86/tr8_avx2.h), the pixel tail scalar. */
#include <immintrin.h>
#include "kernels/x86/nchwc_reorder.h"
#include "kernels/x86/tr8_avx2.h"

__attribute__((target("avx2"))) void trtl_nchwc8_from_planes(const float *src, int64_t nc, int64_t P, float *dst)
{
    int64_t p = 0;
    for (; p + 8 <= P; p += 8) {
        __m256 r[8];
        for (int l = 0; l < 8; l++)
            r[l] = l < nc ? _mm256_loadu_ps(src + l * P + p) : _mm256_setzero_ps();
        trtl_tr8_avx2(r);
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
        trtl_tr8_avx2(r);
        for (int l = 0; l < nc; l++) {
            __m256 v = res ? _mm256_add_ps(r[l], _mm256_loadu_ps(res + l * P + p)) : r[l];
            _mm256_storeu_ps(dst + l * P + p, v);
        }
    }
    for (; p < P; p++)
        for (int64_t l = 0; l < nc; l++)
            dst[l * P + p] = src[p * 8 + l] + (res ? res[l * P + p] : 0.0f);
}
