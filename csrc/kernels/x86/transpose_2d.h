/*
 * transpose_2d.h -- the blocked 2-D float transpose of x86/transpose.c ("shuffle.transpose"), for kernels that
 * transpose an operand in their scratch (attention.c packs K^T with it).
 */
#ifndef TRTL_KERNELS_X86_TRANSPOSE_2D_H
#define TRTL_KERNELS_X86_TRANSPOSE_2D_H

#include <stdint.h>

/* y[i * sy + k] = x[i + k * sx] for i < na, k < nb: 8 x 8 register-transposed tiles when avx2 (the caller has
 * checked the CPU: trtl_cpu_has(TRTL_CPU_AVX2)), plain C in 8 x 8 blocks otherwise. */
void trtl_transpose_2d(const float *x, int64_t sx, float *y, int64_t sy, int64_t na, int64_t nb, int avx2);

#endif
