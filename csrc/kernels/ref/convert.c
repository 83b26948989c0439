/* convert.c -- dtype conversion loops, one per (source, destination) pair (see convert.h). */
#include <string.h>
#include "kernels/ref/convert.h"
#include "kernels/ref/lowbit.h"
#include "core/dims.h"
#include "core/status.h"

/* Writers from a floating-point source value. */
static inline float wf_f32(double v) { return (float)v; }
static inline uint16_t wf_f16(double v) { return trtl_float_to_half((float)v); }
/* double -> bf16, rounded once (to nearest even): going through float32 rounds twice, which is wrong
 * only when the float32 lands exactly on a bf16 tie that the double was not on; then the double's
 * side of the tie decides. */
static inline uint16_t wf_bf16(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0xffffu) == 0x8000u && (double)f != v && v == v)
        return (uint16_t)((x >> 16) + ((v < 0 ? -v : v) > (double)(f < 0 ? -f : f))); /* sign-magnitude: +1 is away from 0 */
    return trtl_float_to_bf16(f);
}
static inline uint8_t wf_b(double v) { return v != 0.0; }
static inline double sat(double v, double lo, double hi)
{
    return v != v ? 0.0 : (v < lo ? lo : (v > hi ? hi : v));
}
static inline int32_t wf_i32(double v) { return (int32_t)sat(v, -2147483648.0, 2147483647.0); }
static inline int8_t wf_i8(double v) { return (int8_t)sat(v, -128.0, 127.0); }
static inline uint8_t wf_u8(double v) { return (uint8_t)sat(v, 0.0, 255.0); }
static inline int64_t wf_i64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    return v < -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}

/* Writers from an integer source value (narrowing keeps the low bits). */
static inline float wi_f32(int64_t v) { return (float)v; }
static inline uint16_t wi_f16(int64_t v) { return trtl_float_to_half((float)v); }
static inline uint16_t wi_bf16(int64_t v) { return wf_bf16((double)v); }
static inline uint8_t wi_b(int64_t v) { return v != 0; }
static inline int32_t wi_i32(int64_t v) { return (int32_t)(uint32_t)v; }
static inline int8_t wi_i8(int64_t v) { return (int8_t)(uint8_t)v; }
static inline uint8_t wi_u8(int64_t v) { return (uint8_t)v; }
static inline int64_t wi_i64(int64_t v) { return v; }

#define LOOP(ST, DT, EXPR)                           \
    do {                                             \
        const ST *s_ = (const ST *)src;              \
        DT *d_ = (DT *)dst;                          \
        for (int64_t i = 0; i < n; i++) {            \
            ST v = s_[i];                            \
            d_[i] = EXPR;                            \
        }                                            \
    } while (0)

/* RD turns the source element `v` into a double (W = wf) or an int64 (W = wi). */
#define TO_ANY(ST, RD, W)                                      \
    switch (dt) {                                              \
    case TRTL_FLOAT: LOOP(ST, float, W##_f32(RD)); break;      \
    case TRTL_HALF: LOOP(ST, uint16_t, W##_f16(RD)); break;    \
    case TRTL_BF16: LOOP(ST, uint16_t, W##_bf16(RD)); break;   \
    case TRTL_INT8: LOOP(ST, int8_t, W##_i8(RD)); break;       \
    case TRTL_INT32: LOOP(ST, int32_t, W##_i32(RD)); break;    \
    case TRTL_BOOL: LOOP(ST, uint8_t, W##_b(RD)); break;       \
    case TRTL_UINT8: LOOP(ST, uint8_t, W##_u8(RD)); break;     \
    case TRTL_INT64: LOOP(ST, int64_t, W##_i64(RD)); break;    \
    default: break;                                            \
    }

/* One element of any type as a number: a double (floating-point types) or an int64 (integers and
 * BOOL; `is_int`).  The storage types take this slower path. */
typedef struct num {
    double f;
    int64_t i;
    int is_int;
} num;

static num read_num(const void *src, trtl_dtype st, int64_t k)
{
    num v = {0.0, 0, 1};
    switch (st) {
    case TRTL_FLOAT: v.f = ((const float *)src)[k]; v.is_int = 0; break;
    case TRTL_HALF: v.f = trtl_half_to_float(((const uint16_t *)src)[k]); v.is_int = 0; break;
    case TRTL_BF16: v.f = trtl_bf16_to_float(((const uint16_t *)src)[k]); v.is_int = 0; break;
    case TRTL_INT8: v.i = ((const int8_t *)src)[k]; break;
    case TRTL_INT32: v.i = ((const int32_t *)src)[k]; break;
    case TRTL_BOOL: v.i = ((const uint8_t *)src)[k] != 0; break;
    case TRTL_UINT8: v.i = ((const uint8_t *)src)[k]; break;
    case TRTL_INT64: v.i = ((const int64_t *)src)[k]; break;
    default:
        v.f = trtl_lowbit_decode(st, ((const uint8_t *)src)[k]);
        v.is_int = !trtl_lowbit_is_float(st);
        v.i = v.is_int ? (int64_t)v.f : 0;
        break;
    }
    return v;
}

static void write_num(void *dst, trtl_dtype dt, int64_t k, num v, int saturate)
{
    double f = v.is_int ? (double)v.i : v.f;
    switch (dt) {
    case TRTL_FLOAT: ((float *)dst)[k] = (float)f; break;
    case TRTL_HALF: ((uint16_t *)dst)[k] = wf_f16(f); break;
    case TRTL_BF16: ((uint16_t *)dst)[k] = wf_bf16(f); break;
    case TRTL_INT8: ((int8_t *)dst)[k] = v.is_int ? wi_i8(v.i) : wf_i8(f); break;
    case TRTL_INT32: ((int32_t *)dst)[k] = v.is_int ? wi_i32(v.i) : wf_i32(f); break;
    case TRTL_BOOL: ((uint8_t *)dst)[k] = v.is_int ? v.i != 0 : f != 0.0; break;
    case TRTL_UINT8: ((uint8_t *)dst)[k] = v.is_int ? wi_u8(v.i) : wf_u8(f); break;
    case TRTL_INT64: ((int64_t *)dst)[k] = v.is_int ? v.i : wf_i64(f); break;
    default:
        if (trtl_lowbit_is_float(dt)) {
            ((uint8_t *)dst)[k] = trtl_lowbit_encode_float(dt, f, saturate);
        } else { /* truncate toward zero (NaN 0, saturating to int64), then the low bits */
            ((uint8_t *)dst)[k] = trtl_lowbit_encode_int(dt, v.is_int ? v.i : wf_i64(f));
        }
        break;
    }
}

trtl_status trtl_ref_convert_sat(void *dst, trtl_dtype dt, const void *src, trtl_dtype st, int64_t n, int saturate)
{
    if (!trtl_dtype_valid((int)dt) || !trtl_dtype_valid((int)st))
        return trtl_error(TRTL_ERR_DTYPE, "cannot convert from type %d to type %d", (int)st, (int)dt);
    if (n <= 0)
        return TRTL_OK;
    if (st == dt) {
        if (dst != src)
            memcpy(dst, src, (size_t)n * trtl_dtype_size(st));
        return TRTL_OK;
    }
    if (trtl_dtype_is_storage((int)st) || trtl_dtype_is_storage((int)dt)) {
        for (int64_t i = 0; i < n; i++)
            write_num(dst, dt, i, read_num(src, st, i), saturate);
        return TRTL_OK;
    }
    switch (st) {
    case TRTL_FLOAT: TO_ANY(float, (double)v, wf); break;
    case TRTL_HALF: TO_ANY(uint16_t, (double)trtl_half_to_float(v), wf); break;
    case TRTL_BF16: TO_ANY(uint16_t, (double)trtl_bf16_to_float(v), wf); break;
    case TRTL_INT8: TO_ANY(int8_t, (int64_t)v, wi); break;
    case TRTL_INT32: TO_ANY(int32_t, (int64_t)v, wi); break;
    case TRTL_BOOL: TO_ANY(uint8_t, (int64_t)(v != 0), wi); break;
    case TRTL_UINT8: TO_ANY(uint8_t, (int64_t)v, wi); break;
    case TRTL_INT64: TO_ANY(int64_t, (int64_t)v, wi); break;
    default: break;
    }
    return TRTL_OK;
}

trtl_status trtl_ref_convert(void *dst, trtl_dtype dt, const void *src, trtl_dtype st, int64_t n)
{
    return trtl_ref_convert_sat(dst, dt, src, st, n, 1);
}
