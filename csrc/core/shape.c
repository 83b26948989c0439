/* shape.c -- output-size arithmetic shared by convolution, deconvolution and pooling (their
 * shape inference and their kernels), broadcasting, and axes-mask helpers. */
#include "core/shape.h"
#include "core/status.h"
#include "core/dims.h"

/* Division rounding toward -inf / +inf for b > 0, without forming a + b - 1 (which can overflow). */
static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 && a > 0); }

/* Every size below is computed with overflow checks: paddings, strides and kernels are user
 * values up to 2**63-1, and a wrapped sum would give a small, plausible (and wrong) output size. */
static trtl_status overflow(int64_t in, int64_t k_eff, int64_t stride, int64_t pre, int64_t post)
{
    return trtl_error(TRTL_ERR_SHAPE,
                      "the output size of input size %lld, window %lld, stride %lld and padding (%lld, %lld) "
                      "overflows 64 bits",
                      (long long)in, (long long)k_eff, (long long)stride, (long long)pre, (long long)post);
}

trtl_status trtl_dilated_kernel(int64_t k, int64_t dilation, int64_t *k_eff)
{
    if (k < 1 || dilation < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "kernel size %lld and dilation %lld must be positive",
                          (long long)k, (long long)dilation);
    if (__builtin_mul_overflow(dilation, k - 1, k_eff) || __builtin_add_overflow(*k_eff, 1, k_eff))
        return trtl_error(TRTL_ERR_SHAPE, "kernel size %lld with dilation %lld overflows 64 bits", (long long)k,
                          (long long)dilation);
    return TRTL_OK;
}

trtl_status trtl_spatial_out(int64_t in, int64_t k_eff, int64_t stride, int64_t pre, int64_t post,
                             int32_t padding_mode, int is_pooling, int64_t *out, int64_t *pre_eff,
                             int64_t *post_eff)
{
    if (stride <= 0 || k_eff <= 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "stride and window must be positive");
    *pre_eff = pre;
    *post_eff = post;
    if (in < 0) {
        *out = -1;
        return TRTL_OK;
    }
    int64_t span, q, x;
    switch (padding_mode) {
    case TRTL_PADMODE_EXPLICIT_ROUND_DOWN:
    case TRTL_PADMODE_CAFFE_ROUND_DOWN:
    case TRTL_PADMODE_EXPLICIT_ROUND_UP:
    case TRTL_PADMODE_CAFFE_ROUND_UP:
        /* out = round((in + pre + post - k_eff) / stride) + 1 */
        if (__builtin_add_overflow(in, pre, &span) || __builtin_add_overflow(span, post, &span) ||
            __builtin_sub_overflow(span, k_eff, &span))
            return overflow(in, k_eff, stride, pre, post);
        q = padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_DOWN || padding_mode == TRTL_PADMODE_CAFFE_ROUND_DOWN
                ? floor_div(span, stride)
                : ceil_div(span, stride);
        if (__builtin_add_overflow(q, 1, out))
            return overflow(in, k_eff, stride, pre, post);
        /* Caffe drops a last window that would start inside the post padding. */
        if (padding_mode == TRTL_PADMODE_CAFFE_ROUND_UP && is_pooling && (pre || post)) {
            if (__builtin_mul_overflow(q, stride, &x) || __builtin_add_overflow(in, pre, &span))
                return overflow(in, k_eff, stride, pre, post);
            if (x >= span)
                (*out)--;
        }
        break;
    case TRTL_PADMODE_SAME_UPPER:
    case TRTL_PADMODE_SAME_LOWER: {
        *out = ceil_div(in, stride);
        /* total = (out - 1) * stride + k_eff - in; (out - 1) * stride < in, so only + k_eff can overflow */
        int64_t total = (*out - 1) * stride;
        if (__builtin_add_overflow(total, k_eff, &total))
            return overflow(in, k_eff, stride, pre, post);
        total -= in;
        if (total < 0)
            total = 0;
        if (padding_mode == TRTL_PADMODE_SAME_UPPER) {
            *pre_eff = total / 2;
            *post_eff = total - total / 2;
        } else {
            *pre_eff = total - total / 2;
            *post_eff = total / 2;
        }
        break;
    }
    default:
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "unknown padding mode %d", (int)padding_mode);
    }
    if (*out < 1)
        return trtl_error(TRTL_ERR_SHAPE,
                          "window %lld with padding (%lld, %lld) does not fit input size %lld",
                          (long long)k_eff, (long long)pre, (long long)post, (long long)in);
    return TRTL_OK;
}

trtl_status trtl_deconv_out(int64_t in, int64_t k_eff, int64_t stride, int64_t pre, int64_t post,
                            int32_t padding_mode, int64_t *out, int64_t *pre_eff, int64_t *post_eff)
{
    if (stride <= 0 || k_eff <= 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "stride and kernel must be positive");
    *pre_eff = pre;
    *post_eff = post;
    if (in < 0) {
        *out = -1;
        return TRTL_OK;
    }
    /* full = (in - 1) * stride + k_eff: the output before cropping */
    int64_t full;
    if (__builtin_mul_overflow(in - 1, stride, &full) || __builtin_add_overflow(full, k_eff, &full))
        return overflow(in, k_eff, stride, pre, post);
    if (padding_mode == TRTL_PADMODE_SAME_UPPER || padding_mode == TRTL_PADMODE_SAME_LOWER) {
        /* TensorRT: O = min(I * S, (I - 1) * S + DK); the difference is cropped as padding. */
        int64_t scaled;
        *out = __builtin_mul_overflow(in, stride, &scaled) || scaled > full ? full : scaled;
        int64_t total = full - *out;
        if (padding_mode == TRTL_PADMODE_SAME_UPPER) {
            *pre_eff = total / 2;
            *post_eff = total - total / 2;
        } else {
            *pre_eff = total - total / 2;
            *post_eff = total / 2;
        }
    } else if (padding_mode >= 0 && padding_mode <= TRTL_PADMODE_CAFFE_ROUND_UP) {
        /* pre, post >= 0 (checked by the callers): the subtractions can only underflow */
        if (__builtin_sub_overflow(full, pre, out) || __builtin_sub_overflow(*out, post, out))
            *out = 0;
    } else {
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "unknown padding mode %d", (int)padding_mode);
    }
    if (*out < 1)
        return trtl_error(TRTL_ERR_SHAPE, "padding (%lld, %lld) crops the whole output of input size %lld",
                          (long long)pre, (long long)post, (long long)in);
    return TRTL_OK;
}

trtl_status trtl_broadcast_dims(const char *layer, const trtl_dims *a, const trtl_dims *b, trtl_dims *out)
{
    char sa[TRTL_DIMS_STR_MAX], sb[TRTL_DIMS_STR_MAX];
    if (a->nb_dims != b->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': inputs must have the same number of dimensions, got %s and %s",
                          layer, trtl_dims_str(a, sa, sizeof sa), trtl_dims_str(b, sb, sizeof sb));
    out->nb_dims = a->nb_dims;
    for (int32_t i = 0; i < a->nb_dims; i++) {
        int64_t x = a->d[i], y = b->d[i];
        if (x == y)
            out->d[i] = x;
        else if (x == 1)
            out->d[i] = y;
        else if (y == 1)
            out->d[i] = x;
        else if (x < 0 || y < 0)
            out->d[i] = x < 0 ? y : x; /* unknown vs known: the known one (checked at run time) */
        else
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': cannot broadcast %s with %s (dimension %d)", layer,
                              trtl_dims_str(a, sa, sizeof sa), trtl_dims_str(b, sb, sizeof sb), (int)i);
    }
    return TRTL_OK;
}

int trtl_single_axis(uint32_t axes)
{
    if (axes == 0 || (axes & (axes - 1)))
        return -1;
    int i = 0;
    while (!(axes & 1u)) {
        axes >>= 1;
        i++;
    }
    return i;
}
