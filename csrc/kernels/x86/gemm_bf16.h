/*
 * gemm_bf16.h -- the bf16 GEMM core of the "*.bf16_gemm" kernels (AVX512_BF16 `vdpbf16ps`: two
 * bf16 products per fp32 lane, accumulated in fp32), with the same epilogue as gemm_packed.h
 * (trtl_gemm_epi: bias, residual, activation on the fp32 accumulators before their one store).
 *
 *   C[M, N] = bf16(A)[M, D] x bf16(B)[D, N]       fp32 accumulate, fp32 C
 *
 * A is the broadcast operand (rows), B the vector operand (columns), as in gemm_packed.h.  Both
 * are rounded to bf16 with round-to-nearest-even when packed (`vcvtne2ps2bf16`; NaN stays NaN,
 * denormal inputs become zero as the instruction does).  Depth is handled in pairs: one 32-bit
 * element of a packed operand holds depths (2k, 2k+1) of one row or column; an odd depth is
 * padded with a zero.
 *
 * Packed layouts (uint16_t bf16 values; MR = TRTL_BF16_MR rows, NR = TRTL_BF16_NR columns):
 *   A: panels of MR rows, panel p = [ceil(D/2)][MR][2]; element (r, d) of panel p at
 *      p*a_stride + (d/2)*2*MR + 2*r + (d&1).  Rows past M are zero.
 *   A row (TRTL_GEMM_A_ROW, M == 1): the row converted in place order, depth d at d (pairs
 *      contiguous), an odd depth padded with a zero.
 *   B: tiles of NR columns, tile t = [ceil(kc/2)][NR][2] at t*tile_stride; element (d, n) at
 *      (d/2)*2*NR + 2*(n%NR) + (d&1).  Columns past N and the odd-depth pad are zero.
 * A depth block must start at an even depth; it begins at pair d0/2 of either layout.
 *
 * Thread-safe, no allocation; the caller checks trtl_bf16_available() (the kernels list
 * TRTL_BF16_CPU in their cpu_features).
 */
#ifndef TRTL_KERNELS_X86_GEMM_BF16_H
#define TRTL_KERNELS_X86_GEMM_BF16_H

#include <stdint.h>
#include "kernels/x86/gemm_packed.h"

#define TRTL_BF16_MR 12
#define TRTL_BF16_NR 32
#define TRTL_BF16_CPU (TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512BF16 | TRTL_CPU_AVX2 | TRTL_CPU_FMA)

int trtl_bf16_available(void);

/* Round-to-nearest-even fp32 -> bf16 of one value, as the hardware does (NaN quiet, denormal
 * inputs to signed zero); and back (exact). */
uint16_t trtl_bf16_from_float(float x);
float trtl_bf16_to_float(uint16_t h); /* defined in core/dims.c */

/* uint16 elements of a packed A of M rows over depth D. */
int64_t trtl_bf16_packed_a_size(int64_t M, int64_t D);
/* Packs A(m, d) = src[m*rs + d] (rows contiguous) for m < M, d < D. */
void trtl_bf16_pack_a(const float *src, int64_t rs, int64_t M, int64_t D, uint16_t *dst);
/* One row of D values into the TRTL_GEMM_A_ROW form (ceil(D/2)*2 elements). */
void trtl_bf16_pack_row(const float *src, int64_t D, uint16_t *dst);

/* Packs B(d, n) = src[d*rs + n*cs] for d < kc, n < N into tiles tile_stride elements apart. */
void trtl_bf16_pack_b(const float *src, int64_t rs, int64_t cs, int64_t kc, int64_t N, uint16_t *dst,
                      int64_t tile_stride);
/* Converts fp32 B tiles of gemm_packed.h's AVX-512 layout ([kc][32] floats, src_stride apart,
 * ntiles of them) into bf16 tiles (dst_stride elements apart). */
void trtl_bf16_tiles_from_f32(const float *src, int64_t src_stride, int64_t kc, int64_t ntiles, uint16_t *dst,
                              int64_t dst_stride);

/* C[M, N] (+)= A-block x B-block for one depth block of kc (flags and e as trtl_gemm_block):
 *   a: first A panel at the block's first pair, panels a_stride elements apart (or the row);
 *   b: first B tile at the block's first pair, tiles b_stride elements apart. */
void trtl_bf16_block(int64_t M, int64_t N, int64_t kc, const uint16_t *a, int64_t a_stride, const uint16_t *b,
                     int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags);

#endif
