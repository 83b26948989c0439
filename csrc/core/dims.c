/* dims.c -- shape and dtype helpers. */
#include <stdio.h>
#include <string.h>

#include "core/dims.h"

int64_t trtl_volume(const trtl_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (d->d[i] < 0)
            return -1;
        if (__builtin_mul_overflow(v, d->d[i], &v))
            return -1; /* not representable: callers treat it like an unknown volume */
    }
    return v;
}

int trtl_volume_too_large(const trtl_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (d->d[i] < 0)
            continue; /* unknown dims are checked once known */
        if (__builtin_mul_overflow(v, d->d[i], &v) || v > TRTL_MAX_ELEMENTS)
            return 1;
    }
    return 0;
}

int64_t trtl_volume_range(const trtl_dims *d, int from, int to)
{
    int64_t v = 1;
    for (int i = from; i < to; i++)
        v *= d->d[i];
    return v;
}

int trtl_dims_equal(const trtl_dims *a, const trtl_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

int trtl_dims_dynamic(const trtl_dims *d)
{
    for (int32_t i = 0; i < d->nb_dims; i++)
        if (d->d[i] < 0)
            return 1;
    return 0;
}

const char *trtl_dims_str(const trtl_dims *d, char *buf, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "(");
    for (int32_t i = 0; i < d->nb_dims && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)d->d[i]);
    if (k < n)
        snprintf(buf + k, n - k, d->nb_dims == 1 ? ",)" : ")");
    return buf;
}

trtl_dims trtl_dims_prepend(const trtl_dims *d, int64_t v)
{
    trtl_dims r = {0};
    r.nb_dims = d->nb_dims + 1 > TRTL_MAX_DIMS ? TRTL_MAX_DIMS : d->nb_dims + 1;
    r.d[0] = v;
    for (int32_t i = 1; i < r.nb_dims; i++)
        r.d[i] = d->d[i - 1];
    return r;
}

trtl_dims trtl_dims_drop_front(const trtl_dims *d)
{
    trtl_dims r = {0};
    if (d->nb_dims <= 0)
        return r;
    r.nb_dims = d->nb_dims - 1;
    for (int32_t i = 0; i < r.nb_dims; i++)
        r.d[i] = d->d[i + 1];
    return r;
}

size_t trtl_dtype_size(trtl_dtype t)
{
    switch (t) {
    case TRTL_FLOAT: return 4;
    case TRTL_HALF: return 2;
    case TRTL_BF16: return 2;
    case TRTL_INT8: return 1;
    case TRTL_INT32: return 4;
    case TRTL_BOOL: return 1;
    case TRTL_UINT8: return 1;
    case TRTL_INT64: return 8;
    default: return trtl_dtype_is_storage(t) ? 1 : 0; /* storage types: one element a byte, sub-byte codes unpacked */
    }
}

const char *trtl_dtype_name(trtl_dtype t)
{
    switch (t) {
    case TRTL_FLOAT: return "FLOAT";
    case TRTL_HALF: return "HALF";
    case TRTL_INT8: return "INT8";
    case TRTL_INT32: return "INT32";
    case TRTL_BOOL: return "BOOL";
    case TRTL_UINT8: return "UINT8";
    case TRTL_FP8: return "FP8";
    case TRTL_BF16: return "BF16";
    case TRTL_INT64: return "INT64";
    case TRTL_INT4: return "INT4";
    case TRTL_FP4: return "FP4";
    case TRTL_E8M0: return "E8M0";
    case TRTL_FP8E5M2: return "FP8E5M2";
    case TRTL_FP8E4M3FNUZ: return "FP8E4M3FNUZ";
    case TRTL_FP8E5M2FNUZ: return "FP8E5M2FNUZ";
    case TRTL_UINT4: return "UINT4";
    case TRTL_INT2: return "INT2";
    case TRTL_UINT2: return "UINT2";
    default: return "UNKNOWN";
    }
}

/* Tensor types: every named value. */
int trtl_dtype_valid(int t) { return trtl_dtype_size((trtl_dtype)t) != 0; }

int trtl_dtype_is_storage(int t)
{
    switch (t) {
    case TRTL_FP8:
    case TRTL_INT4:
    case TRTL_FP4:
    case TRTL_E8M0:
    case TRTL_FP8E5M2:
    case TRTL_FP8E4M3FNUZ:
    case TRTL_FP8E5M2FNUZ:
    case TRTL_UINT4:
    case TRTL_INT2:
    case TRTL_UINT2: return 1;
    default: return 0;
    }
}

float trtl_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            exp = 127 - 15 + 1;
            while (!(man & 0x400u)) {
                man <<= 1;
                exp--;
            }
            man &= 0x3ffu;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t trtl_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xffu) - 127 + 15;
    uint32_t man = x & 0x7fffffu;
    if (((x >> 23) & 0xffu) == 0xffu) /* inf / nan */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++; /* may carry into the exponent: correct rounding */
    return (uint16_t)h;
}

float trtl_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16; /* bf16 is the top half of a float32: exact */
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t trtl_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign and top payload bits, set the quiet bit */
        return (uint16_t)((x >> 16) | 0x0040u);
    /* round to nearest, ties to even: add 0x7fff plus the kept part's lowest bit; a carry into the
     * exponent is the correct rounding (up to Inf past the largest finite bf16) */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}
