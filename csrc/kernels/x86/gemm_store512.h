/*
 * gemm_store512.h -- the AVX-512 tile store shared by the reduced-precision GEMM cores
 * (gemm_bf16.c, gemm_f16.c): fp32 accumulators (+ C for a later depth block), then on the last
 * block row/column bias, residual and the fast activations (RELU / CLIP / LEAKY_RELU) in
 * registers, one masked store; the same results as gemm_packed.c's AVX-512 store, NaN included.
 * Included by those two files only (static inline functions with target attributes).
 */
#ifndef TRTL_KERNELS_X86_GEMM_STORE512_H
#define TRTL_KERNELS_X86_GEMM_STORE512_H

#include <stdint.h>
#include <immintrin.h>
#include "kernels/x86/gemm_packed.h"
#include "kernels/x86/fused_epilogue.h"

#define TRTL_S512_TGT __attribute__((target("avx512f,avx512bw")))

typedef struct bk_args {
    int64_t k2;            /* depth steps: pairs (bf16) or single depths (f16) */
    const void *a, *b;     /* A panel (or row) and B tile at the block's first depth step */
    int64_t as;            /* A elements per depth step */
    float *c;
    int64_t ldc;
    const float *row_bias, *col_bias, *res;
    int64_t ldr;
    int cols, flags;
    int32_t act;
    float alpha, beta;
} bk_args;

typedef void (*bk_fn)(const bk_args *u);

/* ---- store ----------------------------------------------------------------------------------- */


TRTL_S512_TGT __attribute__((always_inline)) static inline void trtl_s512_store(const bk_args *u, __m512 (*acc)[2], const int R,
                                                            const int NV)
{
    const __m512 va = _mm512_set1_ps(u->alpha), vb = _mm512_set1_ps(u->beta);
    __mmask16 mv[2];
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++) {
        const int n = u->cols - 16 * v;
        mv[v] = (__mmask16)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1u);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++) {
            float *cp = u->c + r * u->ldc + 16 * v;
            const __mmask16 m = mv[v];
            __m512 x = acc[r][v];
            if (u->flags & TRTL_GEMM_ACC)
                x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, cp));
            if (u->flags & TRTL_GEMM_LAST) {
                if (u->row_bias)
                    x = _mm512_add_ps(x, _mm512_set1_ps(u->row_bias[r]));
                if (u->col_bias)
                    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, u->col_bias + 16 * v));
                if (u->res)
                    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, u->res + r * u->ldr + 16 * v));
                x = trtl_act16(x, u->act, va, vb);
            }
            _mm512_mask_storeu_ps(cp, m, x);
        }
}

#endif
