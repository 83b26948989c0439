/* spatial.c -- output-size arithmetic shared by convolution, deconvolution and pooling,
 * broadcasting, and axes-mask helpers. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

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
    switch (padding_mode) {
    case TRTL_PADMODE_EXPLICIT_ROUND_DOWN:
    case TRTL_PADMODE_CAFFE_ROUND_DOWN:
        *out = floor_div(in + pre + post - k_eff, stride) + 1;
        break;
    case TRTL_PADMODE_EXPLICIT_ROUND_UP:
        *out = ceil_div(in + pre + post - k_eff, stride) + 1;
        break;
    case TRTL_PADMODE_CAFFE_ROUND_UP:
        *out = ceil_div(in + pre + post - k_eff, stride) + 1;
        /* Caffe drops a last window that would start inside the post padding. */
        if (is_pooling && (pre || post) && (*out - 1) * stride >= in + pre)
            (*out)--;
        break;
    case TRTL_PADMODE_SAME_UPPER:
    case TRTL_PADMODE_SAME_LOWER: {
        *out = ceil_div(in, stride);
        int64_t total = (*out - 1) * stride + k_eff - in;
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
    if (padding_mode == TRTL_PADMODE_SAME_UPPER || padding_mode == TRTL_PADMODE_SAME_LOWER) {
        /* TensorRT: O = min(I * S, (I - 1) * S + DK); the difference is cropped as padding. */
        int64_t full = (in - 1) * stride + k_eff;
        *out = in * stride < full ? in * stride : full;
        int64_t total = full - *out;
        if (padding_mode == TRTL_PADMODE_SAME_UPPER) {
            *pre_eff = total / 2;
            *post_eff = total - total / 2;
        } else {
            *pre_eff = total - total / 2;
            *post_eff = total / 2;
        }
    } else if (padding_mode >= 0 && padding_mode <= TRTL_PADMODE_CAFFE_ROUND_UP) {
        *out = (in - 1) * stride + k_eff - pre - post;
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
