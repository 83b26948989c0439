/*
 * gemm_packed.h -- trtlite's own SGEMM core for the "*.packed_gemm" kernels: packing routines,
 * register-blocked microkernels (AVX2 6x16, AVX-512 12x32) and a block driver that applies the
 * fused epilogue (bias, residual, activation) to each accumulator tile before its one store.
 *
 *   C[M, N] = A[M, D] x B[D, N]          (row-major C with leading dimension ldc)
 *
 * A is the broadcast operand (rows: output channels of a convolution, batch rows of a fully
 * connected layer), B the vector operand (columns: output pixels, output channels), so C's
 * columns are the contiguous axis of the output.
 *
 * Packed layouts (floats; `mr` and `nr` from trtl_gemm_mr/nr of the ISA variant):
 *   A: panels of mr rows, panel p = [D][mr] (row p*mr + r at depth d at p*D*mr + d*mr + r);
 *      rows past M are left unwritten (the edge microkernels never read them).  A depth block [d0, d0 + kc) of panel p starts at p*D*mr + d0*mr.
 *   B: tiles of nr columns, tile t = [kc][nr] at t*tile_stride (tile_stride >= kc*nr); columns
 *      past N are zero.  A tile packed over the whole depth serves any depth block by offset.
 *
 * The variant is chosen once (trtl_gemm_isa_best) and must be the same for the packing and the
 * block calls: kernels record it in their prepared state.  Every function here is thread-safe
 * (no shared state); none allocates.
 */
#ifndef TRTL_KERNELS_X86_GEMM_PACKED_H
#define TRTL_KERNELS_X86_GEMM_PACKED_H

#include <stdint.h>
#include "kernels/kernel.h"

typedef enum trtl_gemm_isa {
    TRTL_GEMM_NONE = -1, /* no AVX2 + FMA: the packed kernels do not apply */
    TRTL_GEMM_AVX2 = 0,  /* 6 x 16 tiles */
    TRTL_GEMM_AVX512 = 1 /* 12 x 32 tiles */
} trtl_gemm_isa;

/* The fastest variant this CPU runs (honours TRTL_CPU_MASK through trtl_cpu_features). */
trtl_gemm_isa trtl_gemm_isa_best(void);
int trtl_gemm_mr(trtl_gemm_isa isa);
int trtl_gemm_nr(trtl_gemm_isa isa);

/* Floats of a packed A of M rows over depth D (whole panels). */
int64_t trtl_gemm_packed_a_size(trtl_gemm_isa isa, int64_t M, int64_t D);

/* Packs A(m, d) = src[m*rs + d*cs] for m < M, d < D into dst (trtl_gemm_packed_a_size floats). */
void trtl_gemm_pack_a(trtl_gemm_isa isa, const float *src, int64_t rs, int64_t cs, int64_t M, int64_t D, float *dst);

/* trtl_gemm_pack_a of rows of contiguous depth (cs == 1) in the split-tail layout that blocks run with
 * TRTL_GEMM_SPLIT_TAIL read: on AVX2, where M > 6 leaves a last panel of 1..3 rows, the last 7..9 rows are two
 * panels of 4 + 3, 4 + 4 or 5 + 4 rows instead (a 1..3-row tile holds 2..6 accumulators: too few FMA chains for
 * the FMA latency, and each B vector it loads serves 1..3 FMAs).  Panels stay mr floats a depth step and
 * D * mr floats apart (same size as trtl_gemm_pack_a); otherwise the same layout. */
void trtl_gemm_pack_a_split(trtl_gemm_isa isa, const float *src, int64_t rs, int64_t M, int64_t D, float *dst);

/* Packs B(d, n) = src[d*rs + n*cs] for d < kc, n < N into tiles of [kc][nr] at dst + t*tile_stride
 * (columns N..round-up zero-filled).  cs == 1 (rows of B contiguous) is the fast path. */
void trtl_gemm_pack_b(trtl_gemm_isa isa, const float *src, int64_t rs, int64_t cs, int64_t kc, int64_t N, float *dst,
                      int64_t tile_stride);

/* Packs one row of B: dst[t*tile_stride + j % nr] = row[j] for j < N, t = j / nr, then zeros up to
 * the last tile's end.  dst points at row d of tile 0 (tile base + d*nr). */
void trtl_gemm_pack_b_row(trtl_gemm_isa isa, const float *row, int64_t N, float *dst, int64_t tile_stride);

/* The epilogue of a block, applied when TRTL_GEMM_LAST is set.  Pointers are at the block's
 * first row / column: row_bias[i] (convolution: per output channel), col_bias[j] (fully
 * connected: per output channel), res[i*ldr + j]; NULL when absent.  act: any activation
 * (the fast ones run in registers, the others over the block right after it is stored). */
typedef struct trtl_gemm_epi {
    const float *row_bias, *col_bias, *res;
    int64_t ldr;
    int32_t act;
    float alpha, beta;
} trtl_gemm_epi;

#define TRTL_GEMM_ACC 1  /* add to C's contents (a later depth block); else overwrite */
#define TRTL_GEMM_LAST 2 /* the last depth block: apply the epilogue */
#define TRTL_GEMM_A_ROW 4 /* M == 1 and `a` is one plain row of kc floats (no packing, a_stride unused) */
#define TRTL_GEMM_SPLIT_TAIL 8 /* `a` was packed by trtl_gemm_pack_a_split for these M rows */

/* C[M, N] (+)= A-block x B-block for one depth block of kc:
 *   a: the first A panel at the block's depth offset, panels a_stride floats apart (D*mr);
 *   b: the first B tile at the block's depth offset, tiles b_stride floats apart.
 * M rows, N columns (any sizes; tiles past them are never stored).  e may be NULL (no epilogue). */
void trtl_gemm_block(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                     const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags);

/* trtl_gemm_block that also prefetches pf_bytes from pf into L2 while its last row panel runs (the
 * operand block the caller reads next, e.g. the next weight tile), one cache line a depth step of
 * the row tiles (AVX-512 and AVX2), spread over the panel's tiles (the column tails ignore it).  The
 * row panels before the last prefetch the next panel's A block the same way in both functions. */
void trtl_gemm_block_pf(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                        const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags,
                        const void *pf, int64_t pf_bytes);

/* trtl_gemm_block_pf with the prefetch stream spread over every row panel's tiles (no prefetch of
 * the next A panel): for a caller whose A block is already in cache and that runs one B tile over
 * many row panels (the weight-tile-stationary order), prefetching the next B tile. */
void trtl_gemm_block_pf_spread(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a,
                               int64_t a_stride, const float *b, int64_t b_stride, float *c, int64_t ldc,
                               const trtl_gemm_epi *e, int flags, const void *pf, int64_t pf_bytes);

/* trtl_gemm_block_pf_spread whose stream is pf_rows rows of pf_row_bytes bytes from pf, rows pf_row_stride bytes
 * apart: e.g. the activation rows a convolution packs next (rows of a plane far apart, each a short run that the
 * hardware prefetcher would only follow after a few misses), fetched while this block computes. */
void trtl_gemm_block_pf_rows(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                             const float *b, int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e,
                             int flags, const void *pf, int64_t pf_rows, int64_t pf_row_bytes,
                             int64_t pf_row_stride);

/* The block with B not yet packed: B(d, n) = src[d*src_rs + n] for d < kc, n < N (contiguous rows, e.g. the
 * activation rows of a 1x1 stride-1 convolution).  The first row panel's tiles read B from src and store it into
 * the tiles at b (b_stride floats apart, as trtl_gemm_pack_b would; a partial last tile is packed before), the
 * other panels read those tiles: the copy overlaps the first panel's FMAs instead of preceding them, and the
 * tiles prefetch their source rows two tiles ahead into L2.  With pf, as trtl_gemm_block_pf_rows (NULL: the
 * next-A-panel prefetch of trtl_gemm_block).  b holds the packed block afterwards. */
void trtl_gemm_block_pack(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                          const float *src, int64_t src_rs, float *b, int64_t b_stride, float *c, int64_t ldc,
                          const trtl_gemm_epi *e, int flags, const void *pf, int64_t pf_rows, int64_t pf_row_bytes,
                          int64_t pf_row_stride);

/* An input transform of B's rows: B(d, n) = min(hi, max(lo, src(d, n) * scale[d] + shift[d])) (one rounding; NaN
 * kept): a per-channel affine and a ReLU / clip before a 1x1 convolution (PREACT_CONV). */
typedef struct trtl_gemm_pre {
    const float *scale, *shift; /* kc values each, at the block's first depth row */
    float lo, hi;               /* -inf / +inf: no clamp */
} trtl_gemm_pre;

/* trtl_gemm_pack_b (rows contiguous) of B through the transform (pre NULL: none). */
void trtl_gemm_pack_b_pre(trtl_gemm_isa isa, const float *src, int64_t src_rs, int64_t kc, int64_t N, float *dst,
                          int64_t tile_stride, const trtl_gemm_pre *pre);

/* trtl_gemm_block_pack with the transform applied to B as it is packed (pre NULL: trtl_gemm_block_pack). */
void trtl_gemm_block_pack_pre(trtl_gemm_isa isa, int64_t M, int64_t N, int64_t kc, const float *a, int64_t a_stride,
                              const float *src, int64_t src_rs, float *b, int64_t b_stride, float *c, int64_t ldc,
                              const trtl_gemm_epi *e, int flags, const void *pf, int64_t pf_rows,
                              int64_t pf_row_bytes, int64_t pf_row_stride, const trtl_gemm_pre *pre);

#endif
