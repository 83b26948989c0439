/*
 * adder2d_int8.h -- the int8 path of Adder2d_TRT (issue #11): the adder layer on int8 codes.
 *
 * Inputs and weights share one symmetric scale s (plugin ABI version 2's `configure`: the builder
 * proposes the calibrated range / 127, the plugin raises it to max|W| / 127 where that is larger),
 * so |x - w| = s |qx - qw| and
 *
 *   Y[n, f, y, x] = -s * sum_{c, i, j} | qx[n, c, y*s + i - p, x*s + j - p] - qw[f, c, i, j] |
 *
 * with qx = 0 (the code of 0) in the padding, qw = round_half_even(w / s) (|qw| <= 127), the sum
 * an exact int32 and one float32 rounding of sum * (-s).  Input codes are TRTL_INT8 (the builder's
 * QuantizeLinear in front of the layer), the output float32.
 *
 * SIMD (AVX-512BW zmm, AVX2 ymm): `vpsadbw` sums |a - b| over 8 unsigned bytes into a 64-bit lane.
 * Codes become unsigned by flipping the sign bit (qx ^ 0x80: differences unchanged).  Each sample
 * is laid out once in a workspace slot as blocks of 8 channels, one 8-byte word per (block, padded
 * row, padded column), rows phase-split by the stride as in the fp32 path (padded column t*s + q
 * stored at sub-row q, index t), so the words that 8 (zmm) or 4 (ymm) consecutive output pixels of
 * one row read for one tap group (block, i, j) are consecutive: one vector load, no im2col.
 * Weights are packed once as [group][F][8] (channels past C are 0 in both words, adding nothing).
 * A register tile is 3 (AVX-512) or 2 (AVX2) pixel vectors x up to 8 / 6 filters; per group one
 * load per pixel vector and one 8-byte broadcast per filter, `vpsadbw` + `vpaddq` per pair; the
 * lanes end holding each pixel's sum, so no horizontal reduction.  Portable: the definition.
 *
 * Stride 1 and k <= 8 on AVX-512BW take `vdbpsadbw` instead (adder2d_int8.c, "vdbpsadbw"): a zmm is
 * 4 output rows x 8 columns over 4 taps of one channel (128 |x - w| an instruction against 64, no
 * channel padding), 16-bit sums widened to int32 every <= 64 instructions, the taps past the kernel
 * (weight byte 0) subtracted as a per-sample sum over the input.  Weights packed once beside the
 * vpsadbw form (trtl_adder_q_packed_bytes counts both).
 */
#ifndef TRTLITE_PLUGINS_ADDER2D_INT8_H
#define TRTLITE_PLUGINS_ADDER2D_INT8_H

#include <stddef.h>
#include <stdint.h>

typedef struct trtl_adder_q {
    int32_t F, C, k, s, p;
    float scale;         /* the shared scale */
    const int8_t *wq;    /* [F][C][k][k] weight codes (portable path) */
    const uint8_t *wpk;  /* [ceil(C/8) * k * k][F][8]: codes ^ 0x80, 0 past C (SIMD paths) */
    /* INT8 output codes (the output stage of a folded batch norm and the next layer's quantizer, builder
     * pass plugin_int8_out): code = saturate(round_half_even(fma(Y, oa[f], ob[f]))) to [-128, 127] (NaN: -128),
     * Y the float output above.  NULL: float output. */
    const float *oa, *ob;
} trtl_adder_q;

/* Bytes of the packed weights. */
size_t trtl_adder_q_packed_bytes(int32_t F, int32_t C, int32_t k);

/* Weight codes round_half_even(w / scale) clamped to +-127 into wq, and their packed form into wpk. */
void trtl_adder_q_pack(const float *w, int32_t F, int32_t C, int32_t k, float scale, int8_t *wq, uint8_t *wpk);

/* Which path runs (from the CPU features; TRTL_CPU_MASK clears them): "avx512bw", "avx2", "portable". */
const char *trtl_adder_q_path(void);

/* Workspace bytes for input [N, C, H, W] (0 for the portable path): a padded-sample slot per thread
 * that may run, then the group offsets (INT8 output, q->oa set: then one float sample output per slot,
 * which the output stage turns into codes while it is in cache).  -1 when the geometry is too large for the SIMD paths (then
 * the portable path runs, with no workspace). */
size_t trtl_adder_q_workspace(const trtl_adder_q *q, int64_t H, int64_t W);

/* y [N, F, OH, OW] from the codes x [N, C, H, W]: float32, or INT8 codes where q->oa is set;
 * workspace of trtl_adder_q_workspace bytes (NULL when that was 0).  Uses the running context's pool
 * (trtl_current_pool). */
void trtl_adder_q_run(const trtl_adder_q *q, const int8_t *x, int64_t N, int64_t H, int64_t W, void *y,
                      void *workspace);

/* The output stage alone: codes dst[f][i] of src[f][i] (F planes of ohw floats) as q->oa / q->ob say. */
void trtl_adder_q_codes(const trtl_adder_q *q, const float *src, int8_t *dst, int64_t ohw);

#endif /* TRTLITE_PLUGINS_ADDER2D_INT8_H */
