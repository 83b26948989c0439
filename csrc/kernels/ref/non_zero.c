/* Reference NonZero kernel (network/ops/non_zero.c): counts the non-zero elements, then writes their
 * coordinates as INT32 [rank, count] and sets the output view's count (the context takes the real
 * extent from there).  The output buffer holds the upper bound volume(x), so count always fits. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "core/dims.h"

static int nonzero_at(const void *x, trtl_dtype t, int64_t i)
{
    switch (t) {
    case TRTL_FLOAT: return ((const float *)x)[i] != 0.0f;
    case TRTL_HALF:
    case TRTL_BF16: return (((const uint16_t *)x)[i] & 0x7fffu) != 0;
    case TRTL_INT32: return ((const int32_t *)x)[i] != 0;
    case TRTL_INT8: return ((const int8_t *)x)[i] != 0;
    default: return ((const uint8_t *)x)[i] != 0; /* UINT8, BOOL */
    }
}

trtl_status trtl_ref_non_zero(const trtl_kernel_args *a)
{
    const trtl_tensor_view *x = &a->in[0];
    trtl_tensor_view *y = &a->out[0];
    int64_t n = trtl_volume(&x->dims), cap = y->dims.nb_dims == 2 ? y->dims.d[1] : -1;
    int32_t r = x->dims.nb_dims;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        count += nonzero_at(x->data, x->dtype, i);
    if (y->dtype != TRTL_INT32 || y->dims.d[0] != r || count > cap)
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': NonZero output %d x %lld cannot hold %lld indices",
                          a->node->name, (int)y->dims.d[0], (long long)cap, (long long)count);
    for (int32_t k = 0; k < r; k++)
        if (x->dims.d[k] > INT32_MAX)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': dimension %d (%lld) does not fit INT32 indices",
                              a->node->name, (int)k, (long long)x->dims.d[k]);
    int32_t *o = y->data;
    int64_t idx[TRTL_MAX_DIMS] = {0}, j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (nonzero_at(x->data, x->dtype, i)) {
            for (int32_t k = 0; k < r; k++)
                o[k * count + j] = (int32_t)idx[k];
            j++;
        }
        for (int32_t k = r - 1; k >= 0; k--) { /* row-major odometer */
            if (++idx[k] < x->dims.d[k])
                break;
            idx[k] = 0;
        }
    }
    y->dims.d[1] = count;
    return TRTL_OK;
}
