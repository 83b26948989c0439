/*
 * gemm_amx_bf16.h -- the Intel AMX variant of the bf16 GEMM core (gemm_bf16.h): `tdpbf16ps` on
 * tiles, the same bf16 rounding of both operands (round to nearest even when packed), fp32
 * accumulation and the same epilogue (trtl_gemm_epi: ACC, bias, residual, activation) applied on
 * the fp32 accumulators after they are stored from the tiles to a small buffer.
 *
 *   C[M, N] = bf16(A)[M, D] x bf16(B)[D, N]
 *
 * Blocks of 32 rows x 32 columns: four 16 x 16 fp32 accumulator tiles, two A tiles (16 rows x 32
 * depths) and two B tiles (16 depth pairs x 16 columns) per 32-deep step.  The products of a
 * 32-deep step are summed by the hardware in its own order, so results differ from the AVX512-BF16
 * core by fp32 rounding of the sums (both have the same bf16 inputs).
 *
 * Layouts (uint16_t bf16 values):
 *   A: panels of TRTL_AMX_BF16_MR = 32 rows over the depth padded to 32; panel p =
 *      [ceil(D/32)][32 rows][32 depths] (one 2 KiB pair of A tiles per depth step); element (r, d)
 *      of panel p at p*a_stride + (d/32)*1024 + r*32 + d%32.  Rows past M and depths past D zero.
 *   B: the AVX512-BF16 tiles of gemm_bf16.h (TRTL_BF16_NR = 32 columns, [pairs][32][2]), with the
 *      depth pairs from ceil(kc/2) up to a multiple of 16 zero (trtl_amx_bf16_zero_b_tail).
 * A depth block starts at a multiple of 32; it begins at element (d0/32)*1024 of a panel.
 *
 * Tile configuration: each trtl_amx_bf16_block call loads it on the calling thread and releases
 * the tiles (tilerelease) before it returns.  The caller checks trtl_amx_bf16_available().
 */
#ifndef TRTL_KERNELS_X86_GEMM_AMX_BF16_H
#define TRTL_KERNELS_X86_GEMM_AMX_BF16_H

#include <stdint.h>
#include "kernels/x86/gemm_bf16.h"

#define TRTL_AMX_BF16_MR 32
#define TRTL_AMX_BF16_CPU (TRTL_BF16_CPU | TRTL_CPU_AMX_TILE | TRTL_CPU_AMX_BF16)

int trtl_amx_bf16_available(void);

/* uint16 elements of a packed A of M rows over depth D. */
int64_t trtl_amx_bf16_packed_a_size(int64_t M, int64_t D);
/* Packs A(m, d) = src[m*rs + d] for m < M, d < D. */
void trtl_amx_bf16_pack_a(const float *src, int64_t rs, int64_t M, int64_t D, uint16_t *dst);
/* Zeroes the depth pairs [ceil(kc/2), 16 * ceil(kc/32)) of ntiles B tiles tile_stride apart. */
void trtl_amx_bf16_zero_b_tail(uint16_t *b, int64_t kc, int64_t ntiles, int64_t tile_stride);

/* C[M, N] (+)= A-block x B-block over one depth block of kc (flags and e as trtl_bf16_block):
 *   a: first A panel at the block's first depth, panels a_stride elements apart;
 *   b: first B tile at the block's first pair, tiles b_stride elements apart. */
void trtl_amx_bf16_block(int64_t M, int64_t N, int64_t kc, const uint16_t *a, int64_t a_stride, const uint16_t *b,
                         int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags);

#endif
