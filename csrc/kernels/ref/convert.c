/* convert.c -- dtype conversion loops, one per (source, destination) pair (see convert.h). */
#include <string.h>
#include "kernels/ref/convert.h"
#include "core/dims.h"
#include "core/status.h"

/* Writers from a floating-point source value. */
static inline float wf_f32(double v) { return (float)v; }
static inline uint16_t wf_f16(double v) { return trtl_float_to_half((float)v); }
static inline uint8_t wf_b(double v) { return v != 0.0; }
static inline double sat(double v, double lo, double hi)
{
    return v != v ? 0.0 : (v < lo ? lo : (v > hi ? hi : v));
}
static inline int32_t wf_i32(double v) { return (int32_t)sat(v, -2147483648.0, 2147483647.0); }
static inline int8_t wf_i8(double v) { return (int8_t)sat(v, -128.0, 127.0); }
static inline uint8_t wf_u8(double v) { return (uint8_t)sat(v, 0.0, 255.0); }

/* Writers from an integer source value (narrowing keeps the low bits). */
static inline float wi_f32(int64_t v) { return (float)v; }
static inline uint16_t wi_f16(int64_t v) { return trtl_float_to_half((float)v); }
static inline uint8_t wi_b(int64_t v) { return v != 0; }
static inline int32_t wi_i32(int64_t v) { return (int32_t)(uint32_t)v; }
static inline int8_t wi_i8(int64_t v) { return (int8_t)(uint8_t)v; }
static inline uint8_t wi_u8(int64_t v) { return (uint8_t)v; }

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
    case TRTL_INT8: LOOP(ST, int8_t, W##_i8(RD)); break;       \
    case TRTL_INT32: LOOP(ST, int32_t, W##_i32(RD)); break;    \
    case TRTL_BOOL: LOOP(ST, uint8_t, W##_b(RD)); break;       \
    case TRTL_UINT8: LOOP(ST, uint8_t, W##_u8(RD)); break;     \
    default: break;                                            \
    }

trtl_status trtl_ref_convert(void *dst, trtl_dtype dt, const void *src, trtl_dtype st, int64_t n)
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
    switch (st) {
    case TRTL_FLOAT: TO_ANY(float, (double)v, wf); break;
    case TRTL_HALF: TO_ANY(uint16_t, (double)trtl_half_to_float(v), wf); break;
    case TRTL_INT8: TO_ANY(int8_t, (int64_t)v, wi); break;
    case TRTL_INT32: TO_ANY(int32_t, (int64_t)v, wi); break;
    case TRTL_BOOL: TO_ANY(uint8_t, (int64_t)(v != 0), wi); break;
    case TRTL_UINT8: TO_ANY(uint8_t, (int64_t)v, wi); break;
    default: break;
    }
    return TRTL_OK;
}
