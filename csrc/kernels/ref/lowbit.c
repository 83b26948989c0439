/* lowbit.c -- the low-bit storage types' codes (rules in lowbit.h). */
#include <math.h>
#include <string.h>
#include "kernels/ref/lowbit.h"

/* A minifloat: sign bit above `ebits` exponent bits above `mbits` mantissa bits. */
typedef struct fmt {
    int ebits, mbits, bias;
    int has_inf;  /* exponent all ones, mantissa 0: +-Inf (FP8E5M2) */
    int nan_mode; /* 0 none (FP4), 1 exponent and mantissa all ones (E4M3FN), 2 IEEE (E5M2), 3 0x80 only (FNUZ) */
    double max;   /* the largest finite value */
} fmt;

static const fmt F_E4M3FN = {4, 3, 7, 0, 1, 448.0};
static const fmt F_E5M2 = {5, 2, 15, 1, 2, 57344.0};
static const fmt F_E4M3FNUZ = {4, 3, 8, 0, 3, 240.0};
static const fmt F_E5M2FNUZ = {5, 2, 16, 0, 3, 57344.0};
static const fmt F_E2M1 = {2, 1, 1, 0, 0, 6.0};

static const fmt *format_of(trtl_dtype t)
{
    switch (t) {
    case TRTL_FP8: return &F_E4M3FN;
    case TRTL_FP8E5M2: return &F_E5M2;
    case TRTL_FP8E4M3FNUZ: return &F_E4M3FNUZ;
    case TRTL_FP8E5M2FNUZ: return &F_E5M2FNUZ;
    case TRTL_FP4: return &F_E2M1;
    default: return NULL;
    }
}

int trtl_lowbit_is_float(trtl_dtype t) { return format_of(t) != NULL || t == TRTL_E8M0; }

static int bits_of(trtl_dtype t) { return t == TRTL_INT4 || t == TRTL_UINT4 ? 4 : (t == TRTL_INT2 || t == TRTL_UINT2 ? 2 : 8); }

static int is_signed_int(trtl_dtype t) { return t == TRTL_INT4 || t == TRTL_INT2 || t == TRTL_INT8; }

int32_t trtl_lowbit_int_min(trtl_dtype t) { return is_signed_int(t) ? -(1 << (bits_of(t) - 1)) : 0; }

int32_t trtl_lowbit_int_max(trtl_dtype t)
{
    return is_signed_int(t) ? (1 << (bits_of(t) - 1)) - 1 : (1 << bits_of(t)) - 1;
}

static double decode_minifloat(const fmt *f, uint8_t code)
{
    int nbits = 1 + f->ebits + f->mbits;
    code &= (uint8_t)((1u << nbits) - 1u);
    int sign = (code >> (nbits - 1)) & 1;
    int e = (code >> f->mbits) & ((1 << f->ebits) - 1);
    int m = code & ((1 << f->mbits) - 1);
    int emax_field = (1 << f->ebits) - 1;
    if (f->nan_mode == 3 && code == 0x80)
        return NAN;
    if (f->nan_mode == 1 && e == emax_field && m == (1 << f->mbits) - 1)
        return sign ? -NAN : NAN;
    if (f->nan_mode == 2 && e == emax_field)
        return m ? (sign ? -NAN : NAN) : (sign ? -INFINITY : INFINITY);
    double v = e == 0 ? ldexp((double)m, 1 - f->bias - f->mbits)
                      : ldexp((double)((1 << f->mbits) + m), e - f->bias - f->mbits);
    return sign ? -v : v;
}

double trtl_lowbit_decode(trtl_dtype t, uint8_t code)
{
    const fmt *f = format_of(t);
    if (f)
        return decode_minifloat(f, code);
    if (t == TRTL_E8M0)
        return code == 0xFF ? NAN : ldexp(1.0, (int)code - 127);
    int b = bits_of(t);
    int32_t v = code & ((1 << b) - 1);
    if (is_signed_int(t) && (v >> (b - 1)))
        v -= 1 << b;
    return (double)v;
}

static uint8_t nan_code(const fmt *f, int sign)
{
    int nbits = 1 + f->ebits + f->mbits;
    uint8_t s = (uint8_t)(sign << (nbits - 1));
    switch (f->nan_mode) {
    case 1: return (uint8_t)(s | ((1u << (nbits - 1)) - 1u));         /* S.1111.111 */
    case 2: return (uint8_t)(s | (((1u << f->ebits) - 1u) << f->mbits) | (1u << (f->mbits - 1))); /* quiet */
    case 3: return 0x80;
    default: return (uint8_t)(1u << (nbits - 1)); /* FP4: -0 */
    }
}

/* The code of a finite, non-negative value already on the grid and at most f->max. */
static uint8_t pack_magnitude(const fmt *f, double mag)
{
    if (mag == 0.0)
        return 0;
    int e;
    frexp(mag, &e); /* mag = fr * 2^e, fr in [0.5, 1) */
    int unb = e - 1, emin = 1 - f->bias;
    if (unb < emin) /* subnormal: mantissa counts units of 2^(emin - mbits) */
        return (uint8_t)ldexp(mag, f->mbits - emin);
    int m = (int)(ldexp(mag, f->mbits - unb)) - (1 << f->mbits);
    return (uint8_t)(((unb + f->bias) << f->mbits) | m);
}

static uint8_t encode_minifloat(const fmt *f, double x, int saturate)
{
    int nbits = 1 + f->ebits + f->mbits;
    int sign = signbit(x) ? 1 : 0;
    uint8_t s = (uint8_t)(sign << (nbits - 1));
    if (isnan(x))
        return nan_code(f, sign);
    double a = fabs(x), r;
    if (isinf(a)) {
        r = INFINITY;
    } else {
        int e, emin = 1 - f->bias;
        frexp(a, &e);
        int unb = a == 0.0 || e - 1 < emin ? emin : e - 1;
        /* a / ulp is exact (a power-of-two scaling); nearbyint rounds half to even */
        r = ldexp(nearbyint(ldexp(a, f->mbits - unb)), unb - f->mbits);
    }
    if (r > f->max) {
        if (saturate || f->nan_mode == 0)
            return (uint8_t)(s | pack_magnitude(f, f->max));
        if (f->has_inf)
            return (uint8_t)(s | (((1u << f->ebits) - 1u) << f->mbits));
        return nan_code(f, sign);
    }
    uint8_t c = pack_magnitude(f, r);
    if (f->nan_mode == 3 && c == 0)
        return 0; /* FNUZ: no -0 */
    return (uint8_t)(s | c);
}

static uint8_t encode_e8m0(double x, int saturate)
{
    float xf = (float)x;
    uint32_t bits;
    memcpy(&bits, &xf, sizeof bits);
    uint32_t e = (bits >> 23) & 0xFFu;
    if (isnan(xf))
        return 0xFF;
    if (isinf(xf))
        return saturate ? 0xFE : 0xFF;
    if (bits & 0x7FFFFFu) { /* not a power of two (or a subnormal): round up */
        if (e == 0xFE)
            return saturate ? 0xFE : 0xFF;
        e++;
    }
    return (uint8_t)e;
}

uint8_t trtl_lowbit_encode_float(trtl_dtype t, double x, int saturate)
{
    const fmt *f = format_of(t);
    if (f)
        return encode_minifloat(f, x, saturate);
    return encode_e8m0(x, saturate);
}

uint8_t trtl_lowbit_encode_int(trtl_dtype t, int64_t v)
{
    return (uint8_t)((uint64_t)v & ((1u << bits_of(t)) - 1u));
}
