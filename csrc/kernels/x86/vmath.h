/*
 * vmath.h -- vectorized pointwise spans shared by the elementwise, unary, activation and scale
 * kernels and the fused epilogue (x86/fused_epilogue.c).
 *
 * trtl_vm_* pick the AVX-512 (vmath_avx512.c), AVX2+FMA (vmath_avx2.c) or portable (vmath.c)
 * variant at run time from trtl_cpu_features(); the variants are written once in vmath_tmpl.h.
 * Every span function reads n floats from src (or a/b) and writes n floats to dst; src == dst is
 * allowed.  Results match the scalar reference formulas (kernels/epilogue.c, ref/unary.c,
 * ref/elementwise.c) to a few ulp, NaN and +-Inf included; see vmath_tmpl.h for the methods.
 */
#ifndef TRTL_KERNELS_X86_VMATH_H
#define TRTL_KERNELS_X86_VMATH_H

#include <stdint.h>
#include "core/params.h"

/* dst = act(src; alpha, beta) for every TRTL_ACT_* and internal code (TRTL_ACT_NONE: copy). */
void trtl_vm_act(int32_t act, float alpha, float beta, const float *src, float *dst, int64_t n);
/* dst = op(src) for the ops trtl_vm_unary_supported() accepts. */
int trtl_vm_unary_supported(int32_t op);
void trtl_vm_unary(int32_t op, const float *src, float *dst, int64_t n);
/* y = op(a, b) for SUM, PROD, MAX, MIN, SUB, DIV (trtl_vm_binary_supported); a_vec / b_vec: 1
 * when the operand has n values, 0 when it is one value broadcast. */
int trtl_vm_binary_supported(int32_t op);
void trtl_vm_binary(int32_t op, const float *a, int a_vec, const float *b, int b_vec, float *y, int64_t n);
/* dst = src * s + t; s / t NULL: 1 / 0; s_vec / t_vec as above. */
void trtl_vm_fma(const float *src, float *dst, int64_t n, const float *s, int s_vec, const float *t, int t_vec);
/* x = exp(x - shift) in place, results below FLT_MIN 0 (NaN kept); returns their sum (attention's softmax rows). */
float trtl_vm_exp_sum(float *x, int64_t n, float shift);

/* Work split of the pointwise kernels: fn(ctx, row, begin, len) over rows x row_len elements,
 * rows cut into chunks of at most TRTL_VM_CHUNK elements, the chunks split over the pool in
 * groups of at least TRTL_VM_GRAIN elements (smaller tensors run on the calling thread). */
#define TRTL_VM_CHUNK 8192
#define TRTL_VM_GRAIN 32768
struct trtl_threadpool;
typedef void (*trtl_vm_row_fn)(void *ctx, int64_t row, int64_t begin, int64_t len);
void trtl_vm_rows(struct trtl_threadpool *pool, int64_t rows, int64_t row_len, trtl_vm_row_fn fn, void *ctx);

/* The variants (tests call them directly to cover both ISAs). */
#if defined(__x86_64__) || defined(__i386__)
#define TRTL_VM_HAVE_X86 1
void trtl_vm_act_avx512(int32_t act, float alpha, float beta, const float *src, float *dst, int64_t n);
void trtl_vm_act_avx2(int32_t act, float alpha, float beta, const float *src, float *dst, int64_t n);
void trtl_vm_unary_avx512(int32_t op, const float *src, float *dst, int64_t n);
void trtl_vm_unary_avx2(int32_t op, const float *src, float *dst, int64_t n);
void trtl_vm_binary_avx512(int32_t op, const float *a, int a_vec, const float *b, int b_vec, float *y, int64_t n);
void trtl_vm_binary_avx2(int32_t op, const float *a, int a_vec, const float *b, int b_vec, float *y, int64_t n);
void trtl_vm_fma_avx512(const float *src, float *dst, int64_t n, const float *s, int s_vec, const float *t, int t_vec);
void trtl_vm_fma_avx2(const float *src, float *dst, int64_t n, const float *s, int s_vec, const float *t, int t_vec);
float trtl_vm_exp_sum_avx512(float *x, int64_t n, float shift);
float trtl_vm_exp_sum_avx2(float *x, int64_t n, float shift);
#endif

#endif
