/*
 * vmath_tmpl.h -- vector math and pointwise span loops, written once over a small vector
 * abstraction and compiled twice: vmath_avx512.c includes it with VM_AVX512 defined (16 lanes,
 * mask registers), vmath_avx2.c with VM_AVX2 (8 lanes, blend masks).  Each defines the span
 * functions declared in vmath.h with its suffix.  Not a header to include elsewhere.
 *
 * Accuracy (float32, checked by tests/c/test_kernels.c against double libm over wide ranges):
 *   exp: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, degree-7 Taylor polynomial, 2^n applied
 *        by vscalefps on AVX-512 (one rounding), in two halves on AVX2 so that results in the
 *        denormal range come out (rounded twice there);
 *   log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m-1)/(m+1), odd series
 *        to s^11 (|s| <= 0.172); denormal inputs are scaled by 2^23 first;
 *   tanh: odd Taylor series to x^17 for |x| < 0.5, else sign(x) (1 - 2 / (exp(2|x|) + 1));
 *   erf: odd Taylor series to x^15 for |x| < 0.5, else sign(x) (1 - erfc(|x|)) with the classic
 *        Chebyshev-fitted erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), relative error < 1.1e-7;
 *   expm1 (ELU, SELU): Taylor series below |x| = 0.5;
 *   GELU: 1 + erf(z) as erfc(-z) for z < 0 and 2 - erfc(z) otherwise (no series), 0.5 (1 + tanh(u))
 *        as sigmoid(2u), so that the negative tails keep their relative precision (the scalar
 *        formulas cancel there);
 *   the erfc fit's 1 / (1 + z/2) is a reciprocal estimate with one Newton step (vrcp_ge1).
 * NaN propagates through every function; +-Inf give the limits (exp(-inf) = 0, tanh(+-inf) =
 * +-1, erf(+-inf) = +-1, log(+inf) = +inf, log(0) = -inf, log(x < 0) = NaN).
 * Comparisons are ordered (false for NaN) and every select is written so that NaN reaches the
 * result where the scalar formula (kernels/epilogue.c) gives NaN.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/x86/vmath.h"

#if defined(VM_AVX512)
#define VT __attribute__((target("avx512f,avx2,fma"), always_inline)) static inline
#define VF __attribute__((target("avx512f,avx2,fma")))
#define SFX(f) f##_avx512
#define VW 16
typedef __m512 V;
typedef __m512i VI;
typedef __mmask16 M;
VT V vset(float x) { return _mm512_set1_ps(x); }
VT V vadd(V a, V b) { return _mm512_add_ps(a, b); }
VT V vsub(V a, V b) { return _mm512_sub_ps(a, b); }
VT V vmul(V a, V b) { return _mm512_mul_ps(a, b); }
VT V vdiv(V a, V b) { return _mm512_div_ps(a, b); }
VT V vrcp_est(V b) { return _mm512_rcp14_ps(b); } /* relative error < 2^-14 */
VT V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
VT V vmin2(V a, V b) { return _mm512_min_ps(a, b); } /* b if either is NaN */
VT V vmax2(V a, V b) { return _mm512_max_ps(a, b); } /* b if either is NaN */
VT V vsqrt(V a) { return _mm512_sqrt_ps(a); }
VT V vround(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
VT V vfloor(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
VT V vceil(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
VT M vlt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
VT M vle(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
VT M vgt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
VT M vge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
VT M veq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
VT M vnan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
VT M mor(M a, M b) { return (M)(a | b); }
VT V vsel(M m, V t, V f) { return _mm512_mask_blend_ps(m, f, t); }
VT VI vbits(V a) { return _mm512_castps_si512(a); }
VT V vfrombits(VI a) { return _mm512_castsi512_ps(a); }
VT V vand_bits(V a, uint32_t m) { return vfrombits(_mm512_and_si512(vbits(a), _mm512_set1_epi32((int)m))); }
VT V vor(V a, V b) { return vfrombits(_mm512_or_si512(vbits(a), vbits(b))); }
VT V vxor_sign(V a) { return vfrombits(_mm512_xor_si512(vbits(a), _mm512_set1_epi32((int)0x80000000u))); }
VT VI vcvt(V a) { return _mm512_cvtps_epi32(a); }
VT V vcvtf(VI a) { return _mm512_cvtepi32_ps(a); }
VT VI iadd(VI a, int b) { return _mm512_add_epi32(a, _mm512_set1_epi32(b)); }
VT VI isub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
VT VI isra1(VI a) { return _mm512_srai_epi32(a, 1); }
VT VI isll23(VI a) { return _mm512_slli_epi32(a, 23); }
VT VI isrl23(VI a) { return _mm512_srli_epi32(a, 23); }
VT V vload(const float *p) { return _mm512_loadu_ps(p); }
VT void vstore(float *p, V v) { _mm512_storeu_ps(p, v); }
VT V vloadn(const float *p, int64_t n) { return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p); }
VT void vstoren(float *p, V v, int64_t n) { _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v); }
#elif defined(VM_AVX2)
#define VT __attribute__((target("avx2,fma"), always_inline)) static inline
#define VF __attribute__((target("avx2,fma")))
#define SFX(f) f##_avx2
#define VW 8
typedef __m256 V;
typedef __m256i VI;
typedef __m256 M;
VT V vset(float x) { return _mm256_set1_ps(x); }
VT V vadd(V a, V b) { return _mm256_add_ps(a, b); }
VT V vsub(V a, V b) { return _mm256_sub_ps(a, b); }
VT V vmul(V a, V b) { return _mm256_mul_ps(a, b); }
VT V vdiv(V a, V b) { return _mm256_div_ps(a, b); }
VT V vrcp_est(V b) { return _mm256_rcp_ps(b); } /* relative error < 1.5 * 2^-12 */
VT V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
VT V vmin2(V a, V b) { return _mm256_min_ps(a, b); }
VT V vmax2(V a, V b) { return _mm256_max_ps(a, b); }
VT V vsqrt(V a) { return _mm256_sqrt_ps(a); }
VT V vround(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
VT V vfloor(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
VT V vceil(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
VT M vlt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
VT M vle(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
VT M vgt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
VT M vge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
VT M veq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
VT M vnan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
VT M mor(M a, M b) { return _mm256_or_ps(a, b); }
VT V vsel(M m, V t, V f) { return _mm256_blendv_ps(f, t, m); }
VT VI vbits(V a) { return _mm256_castps_si256(a); }
VT V vfrombits(VI a) { return _mm256_castsi256_ps(a); }
VT V vand_bits(V a, uint32_t m) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32((int)m))); }
VT V vor(V a, V b) { return _mm256_or_ps(a, b); }
VT V vxor_sign(V a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
VT VI vcvt(V a) { return _mm256_cvtps_epi32(a); }
VT V vcvtf(VI a) { return _mm256_cvtepi32_ps(a); }
VT VI iadd(VI a, int b) { return _mm256_add_epi32(a, _mm256_set1_epi32(b)); }
VT VI isub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
VT VI isra1(VI a) { return _mm256_srai_epi32(a, 1); }
VT VI isll23(VI a) { return _mm256_slli_epi32(a, 23); }
VT VI isrl23(VI a) { return _mm256_srli_epi32(a, 23); }
VT V vload(const float *p) { return _mm256_loadu_ps(p); }
VT void vstore(float *p, V v) { _mm256_storeu_ps(p, v); }
VT VI tailmask(int64_t n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
VT V vloadn(const float *p, int64_t n) { return _mm256_maskload_ps(p, tailmask(n)); }
VT void vstoren(float *p, V v, int64_t n) { _mm256_maskstore_ps(p, tailmask(n), v); }
#else
#error "define VM_AVX512 or VM_AVX2"
#endif

#define SIGN_BIT 0x80000000u
#define ABS_BITS 0x7fffffffu

VT V vabs(V x) { return vand_bits(x, ABS_BITS); }
VT V vneg(V x) { return vxor_sign(x); }
/* copysign(mag, sign of s), mag >= 0 */
VT V vcopysign(V mag, V s) { return vor(vand_bits(mag, ABS_BITS), vand_bits(s, SIGN_BIT)); }

/* e^x. */
VT V vexp(V x)
{
    x = vmin2(vset(89.0f), x); /* NaN stays (2nd operand) */
    x = vmax2(vset(-104.0f), x);
    V n = vround(vmul(x, vset(1.44269504088896341f)));
    V r = vfma(n, vset(-0.693145751953125f), x);
    r = vfma(n, vset(-1.428606765330187045e-06f), r);
    V p = vset(1.0f / 5040.0f);
    p = vfma(p, r, vset(1.0f / 720.0f));
    p = vfma(p, r, vset(1.0f / 120.0f));
    p = vfma(p, r, vset(1.0f / 24.0f));
    p = vfma(p, r, vset(1.0f / 6.0f));
    p = vfma(p, r, vset(0.5f));
    p = vfma(p, r, vset(1.0f));
    p = vfma(p, r, vset(1.0f));
#if defined(VM_AVX512)
    /* p 2^n in one step, rounded once (also in the denormal range), overflowing to +inf */
    return _mm512_scalef_ps(p, n);
#else
    VI ni = vcvt(n); /* in [-150, 129] */
    VI n1 = isra1(ni), n2 = isub(ni, n1);
    V s1 = vfrombits(isll23(iadd(n1, 127))), s2 = vfrombits(isll23(iadd(n2, 127)));
    return vmul(vmul(p, s1), s2);
#endif
}

/* e^x - 1, by its Taylor series below |x| = 0.5 (where e^x - 1 cancels). */
VT V vexpm1(V x)
{
    V p = vset(1.0f / 3628800.0f);
    p = vfma(p, x, vset(1.0f / 362880.0f));
    p = vfma(p, x, vset(1.0f / 40320.0f));
    p = vfma(p, x, vset(1.0f / 5040.0f));
    p = vfma(p, x, vset(1.0f / 720.0f));
    p = vfma(p, x, vset(1.0f / 120.0f));
    p = vfma(p, x, vset(1.0f / 24.0f));
    p = vfma(p, x, vset(1.0f / 6.0f));
    p = vfma(p, x, vset(0.5f));
    V small = vfma(vmul(p, x), x, x);
    return vsel(vlt(vabs(x), vset(0.5f)), small, vsub(vexp(x), vset(1.0f)));
}

/* log(x). */
VT V vlog(V x)
{
    M tiny = vlt(x, vset(1.17549435e-38f)); /* denormals (and 0, negatives: fixed below) */
    V xs = vsel(tiny, vmul(x, vset(8388608.0f)), x);
    VI bits = vbits(xs);
    VI e = iadd(isrl23(bits), -127);
    V ef = vsub(vcvtf(e), vsel(tiny, vset(23.0f), vset(0.0f)));
    V m = vor(vand_bits(xs, 0x007fffffu), vset(1.0f)); /* [1, 2) */
    M big = vgt(m, vset(1.41421356f));
    m = vsel(big, vmul(m, vset(0.5f)), m);
    ef = vsel(big, vadd(ef, vset(1.0f)), ef);
    V s = vdiv(vsub(m, vset(1.0f)), vadd(m, vset(1.0f)));
    V s2 = vmul(s, s);
    V p = vset(2.0f / 11.0f);
    p = vfma(p, s2, vset(2.0f / 9.0f));
    p = vfma(p, s2, vset(2.0f / 7.0f));
    p = vfma(p, s2, vset(2.0f / 5.0f));
    p = vfma(p, s2, vset(2.0f / 3.0f));
    V lm = vfma(vmul(p, s2), s, vadd(s, s));
    V r = vfma(ef, vset(0.693145751953125f), vfma(ef, vset(1.428606765330187045e-06f), lm));
    r = vsel(veq(x, vset(INFINITY)), x, r);
    r = vsel(veq(x, vset(0.0f)), vset(-INFINITY), r);
    r = vsel(vlt(x, vset(0.0f)), vset(NAN), r);
    return vsel(vnan(x), x, r);
}

/* log(1 + u) for u >= 0 (or NaN): log(w) * u / (w - 1), w = 1 + u, corrects w's rounding. */
VT V vlog1p_pos(V u)
{
    V w = vadd(vset(1.0f), u);
    V d = vsub(w, vset(1.0f));
    V r = vmul(vlog(w), vdiv(u, d));
    return vsel(veq(d, vset(0.0f)), u, r);
}

/* 1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0 so that tiny results keep their precision */
VT V vsigmoid(V x)
{
    V e = vexp(vsub(vset(0.0f), vabs(x)));
    V s = vdiv(vset(1.0f), vadd(vset(1.0f), e));
    return vsel(vlt(x, vset(0.0f)), vmul(e, s), s);
}

VT V vtanh(V x)
{
    V a = vabs(x);
    V e = vexp(vadd(a, a));
    V big = vcopysign(vsub(vset(1.0f), vdiv(vset(2.0f), vadd(e, vset(1.0f)))), x);
    V x2 = vmul(x, x);
    V p = vset(6404582.0f / 10854718875.0f);
    p = vfma(p, x2, vset(-929569.0f / 638512875.0f));
    p = vfma(p, x2, vset(21844.0f / 6081075.0f));
    p = vfma(p, x2, vset(-1382.0f / 155925.0f));
    p = vfma(p, x2, vset(62.0f / 2835.0f));
    p = vfma(p, x2, vset(-17.0f / 315.0f));
    p = vfma(p, x2, vset(2.0f / 15.0f));
    p = vfma(p, x2, vset(-1.0f / 3.0f));
    V small = vfma(vmul(p, x2), x, x);
    return vsel(vlt(a, vset(0.5f)), small, big);
}

/* 1 / d for d >= 1 (or NaN): the estimate and one Newton step, r (2 - d r), within about 2 ulp of
 * the quotient (the AVX2 estimate's 1.5 * 2^-12 squares to 2^-23); a fraction of a division's cost
 * (vdivps is the slowest step of erf / GELU).  d is capped at 2^100 first so that r d stays finite
 * (an infinite d would give 0 * inf = NaN in the step); 1 / 2^100 is as good as 0 where it is used. */
VT V vrcp_ge1(V d)
{
    d = vsel(vgt(d, vset(1.2676506e30f)), vset(1.2676506e30f), d);
    V r = vrcp_est(d);
    return vfma(r, vfma(vset(-1.0f), vmul(d, r), vset(1.0f)), r);
}

/* erfc(|x|) from the Chebyshev fit into *erfc_abs (relative error < 1.2e-7 for every x). */
VT void verfc_abs(V x, V *erfc_abs)
{
    V a = vabs(x);
    V t = vrcp_ge1(vfma(vset(0.5f), a, vset(1.0f)));
    V q = vset(0.17087277f);
    q = vfma(q, t, vset(-0.82215223f));
    q = vfma(q, t, vset(1.48851587f));
    q = vfma(q, t, vset(-1.13520398f));
    q = vfma(q, t, vset(0.27886807f));
    q = vfma(q, t, vset(-0.18628806f));
    q = vfma(q, t, vset(0.09678418f));
    q = vfma(q, t, vset(0.37409196f));
    q = vfma(q, t, vset(1.00002368f));
    q = vfma(q, t, vset(-1.26551223f));
    *erfc_abs = vmul(t, vexp(vsub(q, vmul(a, a))));
}

/* erf(x); *erfc_abs receives erfc(|x|) from the Chebyshev fit (accurate where |x| >= 0.5). */
VT V verf2(V x, V *erfc_abs)
{
    verfc_abs(x, erfc_abs);
    V erfc = *erfc_abs;
    V big = vcopysign(vsub(vset(1.0f), erfc), x);
    V x2 = vmul(x, x);
    V p = vset(-1.0f / 75600.0f);
    p = vfma(p, x2, vset(1.0f / 9360.0f));
    p = vfma(p, x2, vset(-1.0f / 1320.0f));
    p = vfma(p, x2, vset(1.0f / 216.0f));
    p = vfma(p, x2, vset(-1.0f / 42.0f));
    p = vfma(p, x2, vset(1.0f / 10.0f));
    p = vfma(p, x2, vset(-1.0f / 3.0f));
    V small = vmul(vset(1.12837916709551257f), vfma(vmul(p, x2), x, x));
    return vsel(vlt(vabs(x), vset(0.5f)), small, big);
}

VT V verf(V x)
{
    V unused;
    return verf2(x, &unused);
}

/* 0.5 x (1 + erf(x / sqrt(2))), with 1 + erf(z) taken as erfc(-z) for z < 0 so that the negative
 * tail keeps its relative precision (the reference formula cancels there) and as 2 - erfc(z) for
 * z >= 0: the fit's relative error (< 1.2e-7 for every z >= 0) is then also the relative error of
 * 1 + erf(z) in [1, 2], so the series erf needs near 0 (where 1 + erf does not) is not computed. */
VT V vgelu_erf(V x)
{
    V z = vmul(x, vset(0.70710678118654752f)), ec;
    verfc_abs(z, &ec);
    V onep = vsel(vlt(z, vset(0.0f)), ec, vsub(vset(2.0f), ec));
    return vmul(vmul(vset(0.5f), x), onep);
}

/* The costly activations on VM_IL vectors at once, step by step across them, with the same operations in the
 * same order per lane as their one-vector forms (bit for bit): one vector's chain (GELU: the reciprocal, the
 * erfc fit's degree-9 polynomial, exp's degree-7 one, ~40 dependent steps) is longer than the out-of-order
 * window overlaps across loop iterations, so the one-vector loop left the FMA units mostly idle. */
#define VM_IL 8
#define VM_EACH _Pragma("GCC unroll 8") for (int u_ = 0; u_ < VM_IL; u_++)

/* x[u] = vexp(x[u]) */
VT void vexp_il(V *x)
{
    V n[VM_IL], r[VM_IL], p[VM_IL];
    VM_EACH x[u_] = vmax2(vset(-104.0f), vmin2(vset(89.0f), x[u_]));
    VM_EACH n[u_] = vround(vmul(x[u_], vset(1.44269504088896341f)));
    VM_EACH r[u_] = vfma(n[u_], vset(-0.693145751953125f), x[u_]);
    VM_EACH r[u_] = vfma(n[u_], vset(-1.428606765330187045e-06f), r[u_]);
    VM_EACH p[u_] = vfma(vset(1.0f / 5040.0f), r[u_], vset(1.0f / 720.0f));
    static const float pc[] = {1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f};
    for (int c = 0; c < 6; c++) {
        const V k = vset(pc[c]);
        VM_EACH p[u_] = vfma(p[u_], r[u_], k);
    }
#if defined(VM_AVX512)
    VM_EACH x[u_] = _mm512_scalef_ps(p[u_], n[u_]);
#else
    VM_EACH {
        VI ni = vcvt(n[u_]);
        VI n1 = isra1(ni), n2 = isub(ni, n1);
        V s1 = vfrombits(isll23(iadd(n1, 127))), s2 = vfrombits(isll23(iadd(n2, 127)));
        x[u_] = vmul(vmul(p[u_], s1), s2);
    }
#endif
}

/* x[u] = vgelu_erf(x[u]) */
VT void vgelu_erf_il(V *x)
{
    V z[VM_IL], a[VM_IL], t[VM_IL], q[VM_IL];
    VM_EACH z[u_] = vmul(x[u_], vset(0.70710678118654752f));
    VM_EACH a[u_] = vabs(z[u_]);
    VM_EACH t[u_] = vrcp_ge1(vfma(vset(0.5f), a[u_], vset(1.0f)));
    VM_EACH q[u_] = vfma(vset(0.17087277f), t[u_], vset(-0.82215223f));
    static const float qc[] = {1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                               0.09678418f, 0.37409196f,  1.00002368f, -1.26551223f};
    for (int c = 0; c < 8; c++) {
        const V k = vset(qc[c]);
        VM_EACH q[u_] = vfma(q[u_], t[u_], k);
    }
    VM_EACH q[u_] = vsub(q[u_], vmul(a[u_], a[u_]));
    vexp_il(q);
    VM_EACH {
        V ec = vmul(t[u_], q[u_]);
        V onep = vsel(vlt(z[u_], vset(0.0f)), ec, vsub(vset(2.0f), ec));
        x[u_] = vmul(vmul(vset(0.5f), x[u_]), onep);
    }
}

/* x[u] = verf(x[u]): the unary ERF (the QDQ encoders' GELU, whose Q / DQ pairs keep fuse_gelu from matching,
 * runs Div, Erf, Add, Mul, Mul: the one-vector loop took ~6 cycles an element on Zen 3) */
VT void verf_il(V *x)
{
    V a[VM_IL], t[VM_IL], q[VM_IL];
    VM_EACH a[u_] = vabs(x[u_]);
    VM_EACH t[u_] = vrcp_ge1(vfma(vset(0.5f), a[u_], vset(1.0f)));
    VM_EACH q[u_] = vfma(vset(0.17087277f), t[u_], vset(-0.82215223f));
    static const float qc[] = {1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                               0.09678418f, 0.37409196f,  1.00002368f, -1.26551223f};
    for (int c = 0; c < 8; c++) {
        const V k = vset(qc[c]);
        VM_EACH q[u_] = vfma(q[u_], t[u_], k);
    }
    VM_EACH q[u_] = vsub(q[u_], vmul(a[u_], a[u_]));
    vexp_il(q);
    VM_EACH {
        V big = vcopysign(vsub(vset(1.0f), vmul(t[u_], q[u_])), x[u_]);
        V x2 = vmul(x[u_], x[u_]);
        V p = vset(-1.0f / 75600.0f);
        p = vfma(p, x2, vset(1.0f / 9360.0f));
        p = vfma(p, x2, vset(-1.0f / 1320.0f));
        p = vfma(p, x2, vset(1.0f / 216.0f));
        p = vfma(p, x2, vset(-1.0f / 42.0f));
        p = vfma(p, x2, vset(1.0f / 10.0f));
        p = vfma(p, x2, vset(-1.0f / 3.0f));
        V small = vmul(vset(1.12837916709551257f), vfma(vmul(p, x2), x[u_], x[u_]));
        x[u_] = vsel(vlt(a[u_], vset(0.5f)), small, big);
    }
}

/* x[u] = vsigmoid(x[u]) */
VT void vsigmoid_il(V *x)
{
    V e[VM_IL];
    VM_EACH e[u_] = vsub(vset(0.0f), vabs(x[u_]));
    vexp_il(e);
    VM_EACH {
        V s = vdiv(vset(1.0f), vadd(vset(1.0f), e[u_]));
        x[u_] = vsel(vlt(x[u_], vset(0.0f)), vmul(e[u_], s), s);
    }
}

/* GELU (tanh form) as vact computes it: x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) */
VT V vgelu_tanh_arg(V x)
{
    V u = vmul(vset(0.79788456080286536f), vadd(x, vmul(vmul(vmul(vset(0.044715f), x), x), x)));
    return vadd(u, u);
}

/* One activation (TRTL_ACT_* or an internal code, params.h) of a vector; the formulas of
 * trtl_activation_eval, in the same order of operations where that decides NaN/Inf. */
VT V vact(int32_t act, V x, V al, V be)
{
    V zero = vset(0.0f), one = vset(1.0f);
    switch (act) {
    case TRTL_ACT_RELU: return vsel(vlt(x, zero), zero, x);
    case TRTL_ACT_SIGMOID: return vsigmoid(x);
    case TRTL_ACT_TANH: return vtanh(x);
    case TRTL_ACT_LEAKY_RELU: return vsel(vge(x, zero), x, vmul(al, x));
    case TRTL_ACT_ELU: return vsel(vge(x, zero), x, vmul(al, vexpm1(x)));
    case TRTL_ACT_SELU: return vsel(vgt(x, zero), vmul(be, x), vmul(vmul(be, al), vexpm1(x)));
    case TRTL_ACT_SOFTSIGN: return vdiv(x, vadd(one, vabs(x)));
    case TRTL_ACT_SOFTPLUS: {
        V t = vmul(be, x);
        V l = vlog1p_pos(vexp(vsub(zero, vabs(t))));
        return vmul(al, vadd(vsel(vgt(t, zero), t, zero), l));
    }
    case TRTL_ACT_CLIP: return vsel(vlt(x, al), al, vsel(vgt(x, be), be, x));
    case TRTL_ACT_HARD_SIGMOID: {
        V t = vadd(vmul(al, x), be); /* two roundings, as the reference (see HARD_SWISH) */
        return vsel(vlt(t, zero), zero, vsel(vgt(t, one), one, t));
    }
    case TRTL_ACT_SCALED_TANH: return vmul(al, vtanh(vmul(be, x)));
    case TRTL_ACT_THRESHOLDED_RELU: return vsel(vgt(x, al), x, zero);
    case TRTL_ACT_GELU_ERF: return vgelu_erf(x);
    case TRTL_ACT_GELU_TANH: /* 0.5 (1 + tanh(u)) = sigmoid(2u), which does not cancel for u < 0 */
        return vmul(x, vsigmoid(vgelu_tanh_arg(x)));
    case TRTL_ACT_SILU: return vmul(x, vsigmoid(x));
    case TRTL_ACT_HARD_SWISH: {
        /* alpha x + beta rounded twice, as the reference: a fused multiply-add differs from it by the cancelled
         * rounding error where the sum is near 0 (x near -3), which the result then multiplies by x */
        V t = vadd(vmul(al, x), be);
        return vmul(x, vsel(vlt(t, zero), zero, vsel(vgt(t, one), one, t)));
    }
    case TRTL_ACT_MISH: {
        /* tanh(log(1 + e^x)) = n / (n + 2), n = e^x (e^x + 2); exactly 1 in float past x = 20 */
        V e = vexp(x);
        V n = vmul(e, vadd(e, vset(2.0f)));
        return vsel(vgt(x, vset(20.0f)), x, vmul(x, vdiv(n, vadd(n, vset(2.0f)))));
    }
    case TRTL_ACT_QGRID: { /* bounds, reciprocal and limit are loop-invariant: hoisted out of SPAN_LOOP */
        V t = vfloor(vmul(be, vset(1.0f / 1024.0f)));
        V lo = vsub(t, vset(512.0f)), hi = vsub(vsub(be, vmul(t, vset(1024.0f))), vset(512.0f));
        V r = vdiv(one, al), lim = vmul(al, vset(512.0f)); /* |code| <= 512 covers every bound */
        V c = vmin2(vmax2(x, vsub(zero, lim)), lim);      /* NaN -> -lim, hence lo */
        V q = vmul(c, r);                                  /* c / alpha correctly rounded: one Markstein step */
        q = vround(vfma(vfma(vsub(zero, q), al, c), r, q));
        q = vsel(vgt(q, hi), hi, q);
        return vmul(al, vadd(vsel(vge(q, lo), q, lo), zero)); /* -0 + 0 = +0: DequantizeLinear's zero */
    }
    default: return x;
    }
}

#define SPAN_LOOP(EXPR)                                                                          \
    do {                                                                                         \
        int64_t i_ = 0;                                                                          \
        for (; i_ + VW <= n; i_ += VW) {                                                         \
            V x = vload(src + i_);                                                               \
            vstore(dst + i_, (EXPR));                                                            \
        }                                                                                        \
        if (i_ < n) {                                                                            \
            V x = vloadn(src + i_, n - i_);                                                      \
            vstoren(dst + i_, (EXPR), n - i_);                                                   \
        }                                                                                        \
    } while (0)

/* SPAN_LOOP for the activations with a VM_IL form: t[u] = PRE (of x[u]), IL_FN(t), the result POST (of x[u],
 * t[u]); the last < VM_IL vectors by the one-vector EXPR (of x). */
#define SPAN_LOOP_IL(PRE, IL_FN, POST, EXPR)                                                     \
    do {                                                                                         \
        int64_t j_ = 0;                                                                          \
        for (; j_ + VM_IL * VW <= n; j_ += VM_IL * VW) {                                         \
            V x[VM_IL], t[VM_IL];                                                                \
            VM_EACH x[u_] = vload(src + j_ + u_ * VW);                                           \
            VM_EACH t[u_] = (PRE);                                                               \
            IL_FN(t);                                                                            \
            VM_EACH vstore(dst + j_ + u_ * VW, (POST));                                          \
        }                                                                                        \
        src += j_, dst += j_, n -= j_;                                                           \
        SPAN_LOOP(EXPR);                                                                         \
    } while (0)

VF void SFX(trtl_vm_act)(int32_t act, float alpha, float beta, const float *src, float *dst, int64_t n)
{
    V al = vset(alpha), be = vset(beta);
    switch (act) { /* one loop per activation, so that the switch is outside it */
#define CASE(A)                                                                                  \
    case A: SPAN_LOOP(vact(A, x, al, be)); break;
    CASE(TRTL_ACT_RELU)
    CASE(TRTL_ACT_TANH)
    CASE(TRTL_ACT_LEAKY_RELU)
    CASE(TRTL_ACT_ELU)
    CASE(TRTL_ACT_SELU)
    CASE(TRTL_ACT_SOFTSIGN)
    CASE(TRTL_ACT_SOFTPLUS)
    CASE(TRTL_ACT_CLIP)
    CASE(TRTL_ACT_HARD_SIGMOID)
    CASE(TRTL_ACT_SCALED_TANH)
    CASE(TRTL_ACT_THRESHOLDED_RELU)
    case TRTL_ACT_SIGMOID: SPAN_LOOP_IL(x[u_], vsigmoid_il, t[u_], vact(TRTL_ACT_SIGMOID, x, al, be)); break;
    case TRTL_ACT_SILU: SPAN_LOOP_IL(x[u_], vsigmoid_il, vmul(x[u_], t[u_]), vact(TRTL_ACT_SILU, x, al, be)); break;
    case TRTL_ACT_GELU_ERF: SPAN_LOOP_IL(x[u_], vgelu_erf_il, t[u_], vact(TRTL_ACT_GELU_ERF, x, al, be)); break;
    case TRTL_ACT_GELU_TANH:
        SPAN_LOOP_IL(vgelu_tanh_arg(x[u_]), vsigmoid_il, vmul(x[u_], t[u_]), vact(TRTL_ACT_GELU_TANH, x, al, be));
        break;
    CASE(TRTL_ACT_HARD_SWISH)
    CASE(TRTL_ACT_MISH)
    CASE(TRTL_ACT_QGRID)
#undef CASE
    default:
        if (src != dst)
            SPAN_LOOP(x);
    }
}

VF void SFX(trtl_vm_unary)(int32_t op, const float *src, float *dst, int64_t n)
{
    V zero = vset(0.0f), one = vset(1.0f);
    (void)zero;
    switch (op) {
    case TRTL_UN_EXP: SPAN_LOOP_IL(x[u_], vexp_il, t[u_], vexp(x)); break; /* attention's softmax rows */
    case TRTL_UN_LOG: SPAN_LOOP(vlog(x)); break;
    case TRTL_UN_SQRT: SPAN_LOOP(vsqrt(x)); break;
    case TRTL_UN_RECIP: SPAN_LOOP(vdiv(one, x)); break;
    case TRTL_UN_ABS: SPAN_LOOP(vabs(x)); break;
    case TRTL_UN_NEG: SPAN_LOOP(vneg(x)); break;
    case TRTL_UN_CEIL: SPAN_LOOP(vceil(x)); break;
    case TRTL_UN_FLOOR: SPAN_LOOP(vfloor(x)); break;
    case TRTL_UN_ROUND: SPAN_LOOP(vround(x)); break;
    case TRTL_UN_ERF: SPAN_LOOP_IL(x[u_], verf_il, t[u_], verf(x)); break;
    case TRTL_UN_SIGN: SPAN_LOOP(vsel(vgt(x, zero), one, vsel(vlt(x, zero), vset(-1.0f), x))); break;
    default: break;
    }
}

/* x = exp(x - shift) in place, results below FLT_MIN made 0 (NaN kept); returns their sum (NaN when one is NaN):
 * attention's softmax rows (x86/attention.c) in one pass instead of a subtract, an exp and a flushing sum. */
VF float SFX(trtl_vm_exp_sum)(float *x, int64_t n, float shift)
{
    const V sh = vset(shift), lo = vset(1.17549435e-38f), zero = vset(0.0f);
    V acc = zero;
    int64_t j = 0;
    for (; j + VM_IL * VW <= n; j += VM_IL * VW) {
        V t[VM_IL];
        VM_EACH t[u_] = vsub(vload(x + j + u_ * VW), sh);
        vexp_il(t);
        VM_EACH {
            t[u_] = vsel(vlt(t[u_], lo), zero, t[u_]); /* a NaN compares false: kept */
            vstore(x + j + u_ * VW, t[u_]);
        }
        acc = vadd(acc, vadd(vadd(vadd(t[0], t[1]), vadd(t[2], t[3])), vadd(vadd(t[4], t[5]), vadd(t[6], t[7]))));
    }
    for (; j + VW <= n; j += VW) {
        V t = vexp(vsub(vload(x + j), sh));
        t = vsel(vlt(t, lo), zero, t);
        vstore(x + j, t);
        acc = vadd(acc, t);
    }
    if (j < n) {
        V t = vexp(vsub(vloadn(x + j, n - j), sh));
        vstoren(x + j, vsel(vlt(t, lo), zero, t), n - j);
        acc = vadd(acc, vloadn(x + j, n - j)); /* lanes past n load as 0 */
    }
    float b[VW];
    vstore(b, acc);
    for (int w = VW / 2; w > 0; w /= 2)
        for (int i = 0; i < w; i++)
            b[i] += b[i + w];
    return b[0];
}

/* y = op(a, b) over n elements; a_vec / b_vec: 1 when the operand advances with i, 0 when it is
 * the single value *a / *b. */
VF void SFX(trtl_vm_binary)(int32_t op, const float *a, int a_vec, const float *b, int b_vec, float *y, int64_t n)
{
    V sa = vset(*a), sb = vset(*b);
    int64_t i = 0;
#define BIN_LOOP(EXPR)                                                                           \
    do {                                                                                         \
        for (; i + VW <= n; i += VW) {                                                           \
            V x = a_vec ? vload(a + i) : sa, z = b_vec ? vload(b + i) : sb;                      \
            vstore(y + i, (EXPR));                                                               \
        }                                                                                        \
        if (i < n) {                                                                             \
            V x = a_vec ? vloadn(a + i, n - i) : sa, z = b_vec ? vloadn(b + i, n - i) : sb;      \
            vstoren(y + i, (EXPR), n - i);                                                       \
        }                                                                                        \
    } while (0)
    switch (op) {
    case TRTL_EW_SUM: BIN_LOOP(vadd(x, z)); break;
    case TRTL_EW_PROD: BIN_LOOP(vmul(x, z)); break;
    case TRTL_EW_SUB: BIN_LOOP(vsub(x, z)); break;
    case TRTL_EW_DIV: BIN_LOOP(vdiv(x, z)); break;
    /* NaN propagates from either side, as the reference's (x > z || x != x) ? x : z */
    case TRTL_EW_MAX: BIN_LOOP(vsel(mor(vgt(x, z), vnan(x)), x, z)); break;
    case TRTL_EW_MIN: BIN_LOOP(vsel(mor(vlt(x, z), vnan(x)), x, z)); break;
    default: break;
    }
#undef BIN_LOOP
}

/* y = x * s + t over n elements; s / t NULL: 1 / 0; s_vec / t_vec as in trtl_vm_binary. */
VF void SFX(trtl_vm_fma)(const float *src, float *dst, int64_t n, const float *s, int s_vec, const float *t,
                          int t_vec)
{
    V ss = vset(s ? *s : 1.0f), st = vset(t ? *t : 0.0f);
    int64_t i = 0;
    for (; i + VW <= n; i += VW) {
        V sv = s && s_vec ? vload(s + i) : ss, tv = t && t_vec ? vload(t + i) : st;
        vstore(dst + i, s ? vfma(vload(src + i), sv, tv) : vadd(vload(src + i), tv));
    }
    if (i < n) {
        int64_t r = n - i;
        V sv = s && s_vec ? vloadn(s + i, r) : ss, tv = t && t_vec ? vloadn(t + i, r) : st;
        vstoren(dst + i, s ? vfma(vloadn(src + i, r), sv, tv) : vadd(vloadn(src + i, r), tv), r);
    }
}
