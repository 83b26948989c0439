/* Reference elementwise kernel: broadcast rows (kernels/ref/broadcast.h), one loop per op.
 *
 * INT32 semantics (no UB for any input): SUM/SUB/PROD wrap modulo 2^32; DIV truncates toward
 * zero, FLOOR_DIV rounds toward -inf; division by zero gives 0 and INT32_MIN / -1 wraps to
 * INT32_MIN; POW with a negative exponent gives the truncated reciprocal (0 unless |a| == 1; 0 for
 * a == 0), a non-negative exponent is computed by squaring, wrapping like numpy.  BITWISE_* on
 * two's complement bits; SHIFT_LEFT by b in 0..31 drops the bits shifted out, by any other b gives 0;
 * SHIFT_RIGHT is arithmetic, by b outside 0..31 the sign fill (-1 or 0) -- ONNX BitShift's out-of-range
 * rule, and for narrower types carried sign- or zero-extended in INT32 the same bits as at their width.
 * INT64: the same rules at 64 bits (wrap modulo 2^64, INT64_MIN / -1 = INT64_MIN, shifts by 0..63).
 * FLOAT: MAX/MIN propagate NaN; FLOOR_DIV is numpy.floor_divide (float32): floor of the exact
 * quotient through fmod, a / b for b == 0, and NaN for an infinite dividend (not floor(+-Inf)). */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/broadcast.h"
#include "kernels/ref/strided.h"

typedef struct ew_ctx {
    int32_t op;
    const void *a, *b;
    void *y;
} ew_ctx;

#define EW_LOOP(T_OUT, EXPR)                              \
    do {                                                  \
        T_OUT *y_ = (T_OUT *)c->y + out_off;              \
        for (int64_t i = 0; i < n; i++) {                 \
            A x = a[i * sa], z = b[i * sb];               \
            y_[i] = (T_OUT)(EXPR);                        \
        }                                                 \
    } while (0)

/* numpy's npy_floor_dividef: (a - fmod(a, b)) / b is an exact integer quotient, corrected toward
 * -inf when the remainder's sign differs from b's.  fmod(+-Inf, b) is NaN, so an infinite dividend
 * gives NaN; a finite one over +-Inf gives 0 or -1 as Python's // does. */
static float f_floor_div(float a, float b)
{
    if (b == 0.0f)
        return a / b;
    float mod = fmodf(a, b), div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f)))
        div -= 1.0f;
    if (div == 0.0f)
        return copysignf(0.0f, a / b);
    float fl = floorf(div);
    if (div - fl > 0.5f)
        fl += 1.0f;
    return fl;
}

/* POW: pow in double, rounded to float; x^3 as the double product x * x * x (x * x is exact in double, one rounding
 * in the product): for every float x that equals glibc's (float)pow((double)x, 3.0) (checked for all 2^31
 * non-negative finite floats, session 22; the cube is odd), and it is libm-independent and vectorizes (GELU-tanh's
 * Pow(x, 3): elementwise.pow computes the same product) */
static float f_pow(float x, float z) { return z == 3.0f ? (float)((double)x * x * x) : (float)pow((double)x, (double)z); }

static float f_max(float x, float z) { return (x > z || x != x) ? x : z; }
static float f_min(float x, float z) { return (x < z || x != x) ? x : z; }

static void row_f32(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s)
{
    typedef float A;
    const ew_ctx *c = (const ew_ctx *)ctx;
    const float *a = (const float *)c->a + off[0], *b = (const float *)c->b + off[1];
    int64_t sa = s[0], sb = s[1];
    switch (c->op) {
    case TRTL_EW_SUM: EW_LOOP(float, x + z); break;
    case TRTL_EW_PROD: EW_LOOP(float, x * z); break;
    case TRTL_EW_MAX: EW_LOOP(float, f_max(x, z)); break;
    case TRTL_EW_MIN: EW_LOOP(float, f_min(x, z)); break;
    case TRTL_EW_SUB: EW_LOOP(float, x - z); break;
    case TRTL_EW_DIV: EW_LOOP(float, x / z); break;
    case TRTL_EW_POW: EW_LOOP(float, f_pow(x, z)); break;
    case TRTL_EW_FLOOR_DIV: EW_LOOP(float, f_floor_div(x, z)); break;
    case TRTL_EW_EQUAL: EW_LOOP(uint8_t, x == z); break;
    case TRTL_EW_GREATER: EW_LOOP(uint8_t, x > z); break;
    case TRTL_EW_LESS: EW_LOOP(uint8_t, x < z); break;
    default: break;
    }
}

/* Integer elementwise rows for one width (int32 and int64 share the rules): SUM/SUB/PROD wrap modulo 2^BITS
 * (through the unsigned type), DIV truncates and FLOOR_DIV floors, division by zero gives 0 and MIN / -1 wraps to
 * MIN, POW by squaring (negative exponents: the truncated reciprocal), shifts by 0..BITS-1 (other amounts: 0, or
 * the sign fill for SHIFT_RIGHT).  No undefined or implementation-defined behaviour for any operands. */
#define INT_ROW(sfx, T, UT, BITS, TMIN, TMAX)                                                                      \
    static T wrap_##sfx(UT v) { return v <= (UT)TMAX ? (T)v : (T)(v - (UT)TMAX - 1u) + TMIN; }                    \
    static T div_##sfx(T x, T z)                                                                                \
    {                                                                                                           \
        if (z == 0)                                                                                             \
            return 0;                                                                                           \
        if (z == -1)                                                                                            \
            return wrap_##sfx((UT)0 - (UT)x);                                                                   \
        return x / z;                                                                                           \
    }                                                                                                           \
    static T floor_div_##sfx(T x, T z)                                                                          \
    {                                                                                                           \
        if (z == 0 || z == -1)                                                                                  \
            return div_##sfx(x, z);                                                                             \
        T q = x / z;                                                                                            \
        if (x % z != 0 && ((x < 0) != (z < 0)))                                                                 \
            q--;                                                                                                \
        return q;                                                                                               \
    }                                                                                                           \
    static T pow_##sfx(T x, T e)                                                                                \
    {                                                                                                           \
        if (e < 0) {                                                                                            \
            if (x == 1)                                                                                         \
                return 1;                                                                                       \
            if (x == -1)                                                                                        \
                return (e & 1) ? -1 : 1;                                                                        \
            return 0;                                                                                           \
        }                                                                                                       \
        UT r = 1, base = (UT)x;                                                                                 \
        while (e) {                                                                                             \
            if (e & 1)                                                                                          \
                r *= base;                                                                                      \
            base *= base;                                                                                       \
            e >>= 1;                                                                                            \
        }                                                                                                       \
        return wrap_##sfx(r);                                                                                   \
    }                                                                                                           \
    /* arithmetic right shift without implementation-defined behaviour (>> of a negative value) */              \
    static T sar_##sfx(T x, T sh) { return x >= 0 ? x >> sh : wrap_##sfx(~(~(UT)x >> sh)); }                     \
    static void row_##sfx(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s)         \
    {                                                                                                           \
        typedef T A;                                                                                            \
        const ew_ctx *c = (const ew_ctx *)ctx;                                                                  \
        const T *a = (const T *)c->a + off[0], *b = (const T *)c->b + off[1];                                   \
        int64_t sa = s[0], sb = s[1];                                                                           \
        switch (c->op) {                                                                                        \
        case TRTL_EW_SUM: EW_LOOP(T, wrap_##sfx((UT)x + (UT)z)); break;                                         \
        case TRTL_EW_PROD: EW_LOOP(T, wrap_##sfx((UT)x * (UT)z)); break;                                        \
        case TRTL_EW_MAX: EW_LOOP(T, x > z ? x : z); break;                                                     \
        case TRTL_EW_MIN: EW_LOOP(T, x < z ? x : z); break;                                                     \
        case TRTL_EW_SUB: EW_LOOP(T, wrap_##sfx((UT)x - (UT)z)); break;                                         \
        case TRTL_EW_DIV: EW_LOOP(T, div_##sfx(x, z)); break;                                                   \
        case TRTL_EW_POW: EW_LOOP(T, pow_##sfx(x, z)); break;                                                   \
        case TRTL_EW_FLOOR_DIV: EW_LOOP(T, floor_div_##sfx(x, z)); break;                                       \
        case TRTL_EW_EQUAL: EW_LOOP(uint8_t, x == z); break;                                                    \
        case TRTL_EW_GREATER: EW_LOOP(uint8_t, x > z); break;                                                   \
        case TRTL_EW_LESS: EW_LOOP(uint8_t, x < z); break;                                                      \
        case TRTL_EW_BITWISE_AND: EW_LOOP(T, x & z); break;                                                     \
        case TRTL_EW_BITWISE_OR: EW_LOOP(T, x | z); break;                                                      \
        case TRTL_EW_BITWISE_XOR: EW_LOOP(T, x ^ z); break;                                                     \
        case TRTL_EW_SHIFT_LEFT: EW_LOOP(T, z >= 0 && z < BITS ? wrap_##sfx((UT)x << z) : 0); break;            \
        case TRTL_EW_SHIFT_RIGHT: EW_LOOP(T, z >= 0 && z < BITS ? sar_##sfx(x, z) : (x < 0 ? -1 : 0)); break;   \
        default: break;                                                                                         \
        }                                                                                                       \
    }

INT_ROW(i32, int32_t, uint32_t, 32, INT32_MIN, INT32_MAX)
INT_ROW(i64, int64_t, uint64_t, 64, INT64_MIN, INT64_MAX)
#undef INT_ROW

static void row_bool(void *ctx, int64_t out_off, const int64_t *off, int64_t n, const int64_t *s)
{
    typedef int A; /* 0 or 1 */
    const ew_ctx *c = (const ew_ctx *)ctx;
    const uint8_t *pa = (const uint8_t *)c->a + off[0], *pb = (const uint8_t *)c->b + off[1];
    int64_t sa = s[0], sb = s[1];
    uint8_t *y = (uint8_t *)c->y + out_off;
    for (int64_t i = 0; i < n; i++) {
        A x = pa[i * sa] != 0, z = pb[i * sb] != 0;
        switch (c->op) {
        case TRTL_EW_AND: y[i] = (uint8_t)(x & z); break;
        case TRTL_EW_OR: y[i] = (uint8_t)(x | z); break;
        case TRTL_EW_XOR: y[i] = (uint8_t)(x ^ z); break;
        default: y[i] = 0; break;
        }
    }
}

trtl_status trtl_ref_elementwise(const trtl_kernel_args *a)
{
    const char *name = a->node->name;
    int32_t op = a->node->p.ew.op;
    trtl_dtype t = a->in[0].dtype;
    if (a->in[1].dtype != t)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': elementwise inputs have different types %s and %s", name,
                          trtl_dtype_name(t), trtl_dtype_name(a->in[1].dtype));
    trtl_bcast_row_fn row;
    int logic = op == TRTL_EW_AND || op == TRTL_EW_OR || op == TRTL_EW_XOR;
    if (op < 0 || op >= TRTL_EW_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown ElementWiseOperation %d", name, (int)op);
    if (logic && t == TRTL_BOOL)
        row = row_bool;
    else if (!logic && t == TRTL_FLOAT)
        row = row_f32;
    else if (!logic && t == TRTL_INT32)
        row = row_i32;
    else if (!logic && t == TRTL_INT64)
        row = row_i64;
    else
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': elementwise op %d does not support %s inputs", name, (int)op,
                          trtl_dtype_name(t));
    int compare = op == TRTL_EW_EQUAL || op == TRTL_EW_GREATER || op == TRTL_EW_LESS;
    TRTL_TRY(trtl_ref_check_out_type(name, a->out[0].dtype, compare ? TRTL_BOOL : t));
    trtl_dims in[2] = {a->in[0].dims, a->in[1].dims};
    trtl_bcast b;
    TRTL_TRY(trtl_bcast_init(&b, name, &a->out[0].dims, 2, in));
    ew_ctx c = {op, a->in[0].data, a->in[1].data, a->out[0].data};
    trtl_bcast_run(&b, row, &c);
    return TRTL_OK;
}
