/* Reference unary kernel.  Math in double, rounded once to float.  INT32 / INT64 ABS/NEG wrap
 * (ABS(INT32_MIN) = INT32_MIN, as numpy); SIGN(NaN) = NaN; ROUND is half to even whatever the
 * FPU rounding mode. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

static float round_half_even(float x)
{
    float r = floorf(x), d = x - r; /* d is NaN for +-inf / NaN: r (or NaN) is kept */
    if (d > 0.5f || (d == 0.5f && fmodf(r, 2.0f) != 0.0f))
        r += 1.0f;
    return r == 0.0f ? copysignf(0.0f, x) : r;
}

static float sign_f(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); /* keeps +-0, NaN */ }

static float eval_f(int32_t op, float xf)
{
    double x = xf;
    switch (op) {
    case TRTL_UN_EXP: return (float)exp(x);
    case TRTL_UN_LOG: return (float)log(x);
    case TRTL_UN_SQRT: return (float)sqrt(x);
    case TRTL_UN_RECIP: return (float)(1.0 / x);
    case TRTL_UN_ABS: return fabsf(xf);
    case TRTL_UN_NEG: return -xf;
    case TRTL_UN_SIN: return (float)sin(x);
    case TRTL_UN_COS: return (float)cos(x);
    case TRTL_UN_TAN: return (float)tan(x);
    case TRTL_UN_SINH: return (float)sinh(x);
    case TRTL_UN_COSH: return (float)cosh(x);
    case TRTL_UN_ASIN: return (float)asin(x);
    case TRTL_UN_ACOS: return (float)acos(x);
    case TRTL_UN_ATAN: return (float)atan(x);
    case TRTL_UN_ASINH: return (float)asinh(x);
    case TRTL_UN_ACOSH: return (float)acosh(x);
    case TRTL_UN_ATANH: return (float)atanh(x);
    case TRTL_UN_CEIL: return ceilf(xf);
    case TRTL_UN_FLOOR: return floorf(xf);
    case TRTL_UN_ERF: return (float)erf(x);
    case TRTL_UN_SIGN: return sign_f(xf);
    case TRTL_UN_ROUND: return round_half_even(xf);
    default: return NAN;
    }
}

trtl_status trtl_ref_unary(const trtl_kernel_args *a)
{
    const char *name = a->node->name;
    int32_t op = a->node->p.unary.op;
    trtl_dtype t = a->in[0].dtype;
    int64_t n = trtl_volume(&a->in[0].dims);
    TRTL_TRY(trtl_ref_check_out_type(name, a->out[0].dtype, op == TRTL_UN_ISINF ? TRTL_BOOL : t));
    if (op == TRTL_UN_NOT && t == TRTL_BOOL) {
        const uint8_t *x = (const uint8_t *)a->in[0].data;
        uint8_t *y = (uint8_t *)a->out[0].data;
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] == 0;
    } else if (op == TRTL_UN_ISINF && t == TRTL_FLOAT) {
        const float *x = (const float *)a->in[0].data;
        uint8_t *y = (uint8_t *)a->out[0].data;
        for (int64_t i = 0; i < n; i++)
            y[i] = isinf(x[i]) != 0;
    } else if (op == TRTL_UN_BITWISE_NOT && t == TRTL_INT32) {
        const int32_t *x = (const int32_t *)a->in[0].data;
        int32_t *y = (int32_t *)a->out[0].data;
        for (int64_t i = 0; i < n; i++)
            y[i] = (int32_t)~(uint32_t)x[i];
    } else if (t == TRTL_INT32 && (op == TRTL_UN_ABS || op == TRTL_UN_NEG || op == TRTL_UN_SIGN)) {
        const int32_t *x = (const int32_t *)a->in[0].data;
        int32_t *y = (int32_t *)a->out[0].data;
        for (int64_t i = 0; i < n; i++) {
            int32_t v = x[i];
            uint32_t neg = 0u - (uint32_t)v;
            if (op == TRTL_UN_ABS)
                y[i] = v < 0 ? (int32_t)neg : v;
            else if (op == TRTL_UN_NEG)
                y[i] = (int32_t)neg;
            else
                y[i] = (v > 0) - (v < 0);
        }
    } else if (t == TRTL_INT64 && (op == TRTL_UN_ABS || op == TRTL_UN_NEG || op == TRTL_UN_SIGN ||
                                   op == TRTL_UN_BITWISE_NOT)) {
        const int64_t *x = (const int64_t *)a->in[0].data;
        int64_t *y = (int64_t *)a->out[0].data;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = x[i];
            uint64_t neg = 0u - (uint64_t)v, r;
            if (op == TRTL_UN_ABS)
                r = v < 0 ? neg : (uint64_t)v;
            else if (op == TRTL_UN_NEG)
                r = neg;
            else if (op == TRTL_UN_BITWISE_NOT)
                r = ~(uint64_t)v;
            else
                r = (uint64_t)(int64_t)((v > 0) - (v < 0));
            /* back to two's complement without an out-of-range conversion */
            y[i] = r <= (uint64_t)INT64_MAX ? (int64_t)r : (int64_t)(r - (uint64_t)INT64_MAX - 1u) + INT64_MIN;
        }
    } else if (t == TRTL_FLOAT && op >= 0 && op < TRTL_UN_COUNT && op != TRTL_UN_NOT && op != TRTL_UN_BITWISE_NOT) {
        const float *x = (const float *)a->in[0].data;
        float *y = (float *)a->out[0].data;
        for (int64_t i = 0; i < n; i++)
            y[i] = eval_f(op, x[i]);
    } else {
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': unary op %d does not support a %s input", name, (int)op,
                          trtl_dtype_name(t));
    }
    return TRTL_OK;
}
