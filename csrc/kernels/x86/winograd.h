/*
 * winograd.h -- the AVX2+FMA pieces of the Winograd convolution kernels (convolution_winograd.c):
 * transform matrices, 8-tile input/output transforms and the GEMM microkernels
 * (winograd_avx2.c).  Call only when trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA).
 *
 * Matrices (Lavin & Gray's, points 0, 1, -1 [, 2, -2] and infinity; rows scaled so that B^T and
 * A^T are integers):
 *   F(2,3):  B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 -1 0 1]        A^T = [1 1 1 0; 0 1 -1 1]
 *   F(4,3):  B^T = [4 0 -5 0 1 0; 0 4 4 -1 -1 0; 0 -4 4 1 -1 0;   A^T = [1 1 1 1 1 0;
 *                   0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]           0 1 -1 2 -2 0;
 *                                                                          0 1 1 4 4 0;
 *                                                                          0 1 -1 8 -8 1]
 *   G: trtl_wg_G23 / trtl_wg_G43 below (applied once, in double, when weights are prepared).
 * Transform position xi = i * a + j (i along H, j along W) for an a x a input tile.
 */
#ifndef TRTL_KERNELS_X86_WINOGRAD_H
#define TRTL_KERNELS_X86_WINOGRAD_H

#include <stdint.h>
#include "kernels/kernel.h"

extern const double trtl_wg_G23[4][3];
extern const double trtl_wg_G43[6][3];

/* 1 when none of x[0..n) is +-Inf or NaN. */
int trtl_wg_all_finite(const float *x, int64_t n);

/* d[j] = src[j - pl] where 0 <= j - pl < W, else 0, for j < wp (src NULL: a row of zeros). */
void trtl_wg_pad_row(float *d, const float *src, int64_t wp, int64_t pl, int64_t W);

/* Input transform of 8 tiles (one per vector lane) of one channel.  Tile l's a x a input is the
 * staged block at S + off[l], rows wp floats apart (F43 reads columns 0-5, F23 columns 0-3).
 * Writes position xi's 8 values to dst + xi * xs. */
void trtl_wg_input8_f43(const float *S, const int64_t *off, int64_t wp, float *dst, int64_t xs);
void trtl_wg_input8_f23(const float *S, const int64_t *off, int64_t wp, float *dst, int64_t xs);

/* Output of one channel: y = act(transform + bias + residual) for tiles [t, t + 8) of a group. */
typedef struct trtl_wg_out {
    const trtl_epilogue *epi; /* epi->act satisfies trtl_act_is_fast (others: the caller applies them after) */
    int64_t ow;            /* output row length */
    const int64_t *y_off;  /* per tile of the group: offset of its top-left output in a channel plane */
    const int32_t *valid;  /* per tile: valid rows | valid columns << 8 (0: lane past the group) */
    float bias;
    float *y;              /* output channel plane (image 0; y_off carries the image) */
    const float *res;      /* residual plane laid out like y, or NULL */
} trtl_wg_out;

/* M values of position xi for tiles [t, t + 8) at mk + xi * xs. */
void trtl_wg_output8_f43(const float *mk, int64_t xs, const trtl_wg_out *o, int64_t t);
void trtl_wg_output8_f23(const float *mk, int64_t xs, const trtl_wg_out *o, int64_t t);

/* m[r * ldm + t] = sum_c u[c * 6 + r] * v[c * NR + t] for r < 6, t < NR (16 or 8): overwrites. */
void trtl_wg_gemm_6x16(int64_t C, const float *u, const float *v, float *m, int64_t ldm);
void trtl_wg_gemm_6x8(int64_t C, const float *u, const float *v, float *m, int64_t ldm);

/* AVX-512 (winograd_avx512.c; only when trtl_cpu_has(TRTL_CPU_AVX512F)): the same products with
 * 16 tiles a zmm; 6x32 reads two panels, v0 for tiles 0-15 and v1 for tiles 16-31 of m. */
void trtl_wg_gemm_6x32_avx512(int64_t C, const float *u, const float *v0, const float *v1, float *m, int64_t ldm);
void trtl_wg_gemm_6x16_avx512(int64_t C, const float *u, const float *v, float *m, int64_t ldm);
/* A 16-tile panel v0 (and v1) with the group's last, 8-tile panel v8 ([c][8]) in one pass:
 * columns [0, 16) (and [16, 32)) from v0 (v1), the last 8 from v8. */
void trtl_wg_gemm_6x24_avx512(int64_t C, const float *u, const float *v0, const float *v8, float *m, int64_t ldm);
void trtl_wg_gemm_6x40_avx512(int64_t C, const float *u, const float *v0, const float *v1, const float *v8,
                              float *m, int64_t ldm);

/* The plain weights of a Winograd layer, exactly, from its transformed ones U ([xi][kb][c][mr], see
 * convolution_winograd.c) and one byte per weight (winograd_exact.c). */
typedef struct trtl_wg_exact {
    int64_t a, K, C, mr, nkb;
    double P[3][6];   /* least-squares inverse of G */
    int8_t *d;        /* per weight [K][C][9]: bits(g) - bits(approximation), -128: an exception */
    int64_t n_esc;
    int64_t *esc_at;  /* exceptions: weight index (increasing) and value */
    float *esc_val;
} trtl_wg_exact;

/* From g (the plain [K][C][3][3] weights) and u = G g G^T as prepared (G: trtl_wg_G23 / _G43, m the
 * output tile).  An out-of-memory error naming the layer. */
trtl_status trtl_wg_exact_init(trtl_wg_exact *x, const double (*G)[3], int64_t m, int64_t K, int64_t C, int64_t mr,
                               int64_t nkb, const float *u, const float *g, const char *layer);
void trtl_wg_exact_free(trtl_wg_exact *x);
size_t trtl_wg_exact_bytes(const trtl_wg_exact *x);
/* out = g[k][c][0..9), bit for bit. */
void trtl_wg_exact_get(const trtl_wg_exact *x, const float *u, int64_t k, int64_t c, float out[9]);
/* All the plain weights [K][C][3][3] to dst (any alignment), bit for bit. */
void trtl_wg_exact_unpack(const trtl_wg_exact *x, const float *u, void *dst);

#endif
