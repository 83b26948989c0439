/* axes_values.c -- axes tensor values -> bitmask (see axes_values.h). */
#include "core/axes_values.h"
#include "core/status.h"

trtl_status trtl_axes_values_mask(const char *layer, const char *what, const int64_t *v, int64_t n, int32_t rank,
                                  uint32_t *mask)
{
    uint32_t m = 0;
    if (rank < 0 || rank > 31)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s need an input of at most 31 dims, got %d", layer, what,
                          (int)rank);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = v[i];
        if (a < -(int64_t)rank || a >= rank)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s: axis %lld (element %lld) is out of range for an input "
                              "of %d dims (valid %d..%d)", layer, what, (long long)a, (long long)i, (int)rank,
                              -(int)rank, (int)rank - 1);
        int32_t k = (int32_t)(a < 0 ? a + rank : a);
        if (m & (1u << k))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s: axis %d is repeated (element %lld is %lld)", layer,
                              what, (int)k, (long long)i, (long long)a);
        m |= 1u << k;
    }
    *mask = m;
    return TRTL_OK;
}
