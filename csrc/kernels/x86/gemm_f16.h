/*
 * gemm_f16.h -- the fp16-storage GEMM core of "fully_connected.f16_gemm": B (the weights) stored
 * as IEEE fp16 (round to nearest even, F16C), widened to fp32 on every load (`vcvtph2ps`), fp32
 * arithmetic and accumulation, the epilogue of gemm_packed.h (trtl_gemm_epi) on the accumulators.
 * Half the weight bytes of fp32 for the same arithmetic: it wins where streaming the weights
 * bounds the layer (batch-1 fully connected layers), loses a little where the FMAs do.
 *
 *   C[M, N] = A[M, D] x f16(B)[D, N]
 *
 * A is packed by trtl_gemm_pack_a(TRTL_GEMM_AVX512, ...) (panels of TRTL_F16_MR = 12 fp32 rows)
 * or is one plain fp32 row (TRTL_GEMM_A_ROW, M == 1).  B: tiles of TRTL_F16_NR = 32 columns,
 * tile t = [kc][32] fp16 at t*tile_stride; columns past N are zero.  Thread-safe, no allocation;
 * callers check trtl_f16_available() (the kernel lists TRTL_F16_CPU).
 */
#ifndef TRTL_KERNELS_X86_GEMM_F16_H
#define TRTL_KERNELS_X86_GEMM_F16_H

#include <stdint.h>
#include "kernels/x86/gemm_packed.h"

#define TRTL_F16_MR 12
#define TRTL_F16_NR 32
#define TRTL_F16_CPU (TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_F16C | TRTL_CPU_AVX2 | TRTL_CPU_FMA)

int trtl_f16_available(void);

/* Packs B(d, n) = src[d*rs + n*cs] for d < kc, n < N as fp16 tiles tile_stride elements apart. */
void trtl_f16_pack_b(const float *src, int64_t rs, int64_t cs, int64_t kc, int64_t N, uint16_t *dst,
                     int64_t tile_stride);

/* C[M, N] (+)= A-block x B-block for one depth block of kc (flags and e as trtl_gemm_block):
 *   a: first A panel at the block's depth, panels a_stride floats apart (or the row);
 *   b: first B tile at the block's depth, tiles b_stride elements apart. */
void trtl_f16_block(int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride, const uint16_t *b,
                    int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags);

#endif
