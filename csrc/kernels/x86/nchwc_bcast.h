/* nchwc_bcast.h -- the register tile step shared by the blocked dense path (x86/nchwc_dense.c, the stem) and the
 * blocked grouped path (x86/nchwc_grouped.c): output channels in the vector, np output pixels x nbk output blocks of
 * 8 accumulators, one input value a pixel broadcast against nbk weight vectors (whichever are fewer held in
 * registers: the weights when nbk < np, else the broadcasts).  Included by those files only; np and nbk are
 * constants where the tiles are instantiated, so every loop unrolls. */
#ifndef TRTL_KERNELS_X86_NCHWC_BCAST_H
#define TRTL_KERNELS_X86_NCHWC_BCAST_H

#include <stdint.h>
#include <immintrin.h>

#define TRTL_NCB_MAXP 8 /* output pixels a tile */
#define TRTL_NCB_MAXG 4 /* output blocks a tile */

/* acc[j][b] += x[j * xs] * w[b * 8 .. b * 8 + 8) for j < np, b < nbk. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
trtl_ncb_step(__m256 acc[TRTL_NCB_MAXP][TRTL_NCB_MAXG], const float *x, int64_t xs, const float *w, const int np,
              const int nbk)
{
    if (nbk < np) { /* the weights in registers, one broadcast at a time */
        __m256 wv[TRTL_NCB_MAXG];
#pragma GCC unroll 4
        for (int b = 0; b < nbk; b++)
            wv[b] = _mm256_loadu_ps(w + b * 8);
#pragma GCC unroll 8
        for (int j = 0; j < np; j++) {
            const __m256 xv = _mm256_broadcast_ss(x + j * xs);
#pragma GCC unroll 4
            for (int b = 0; b < nbk; b++)
                acc[j][b] = _mm256_fmadd_ps(xv, wv[b], acc[j][b]);
        }
    } else { /* the broadcasts in registers, one weight vector at a time */
        __m256 xv[TRTL_NCB_MAXP];
#pragma GCC unroll 8
        for (int j = 0; j < np; j++)
            xv[j] = _mm256_broadcast_ss(x + j * xs);
#pragma GCC unroll 4
        for (int b = 0; b < nbk; b++) {
            const __m256 wv = _mm256_loadu_ps(w + b * 8);
#pragma GCC unroll 8
            for (int j = 0; j < np; j++)
                acc[j][b] = _mm256_fmadd_ps(xv[j], wv, acc[j][b]);
        }
    }
}

#endif
