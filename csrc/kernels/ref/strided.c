/* strided.c -- strided gathers and the resampling copy of slice/padding (see strided.h). */
#include "kernels/ref/strided.h"
#include "core/dims.h"
#include "core/status.h"

void trtl_ref_strides(const trtl_dims *d, int64_t *s)
{
    int64_t acc = 1;
    for (int32_t i = d->nb_dims - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= d->d[i];
    }
}

trtl_status trtl_ref_check_out_type(const char *node, trtl_dtype got, trtl_dtype want)
{
    if (got == want)
        return TRTL_OK;
    return trtl_error(TRTL_ERR_DTYPE, "layer '%s': output type %s differs from the %s this layer produces", node,
                      trtl_dtype_name(got), trtl_dtype_name(want));
}

/* One element type per size so that the inner loop is a plain load/store. */
#define GATHER_STRIDED(T)                                                                  \
    do {                                                                                   \
        T *y = (T *)dst;                                                                   \
        const T *x = (const T *)src;                                                       \
        if (rank == 0) {                                                                   \
            y[0] = x[base];                                                                \
            return;                                                                        \
        }                                                                                  \
        int64_t idx[TRTL_MAX_DIMS] = {0}, off = base, inner = dims[rank - 1],              \
                si = strides[rank - 1];                                                    \
        for (int64_t row = 0; row < outer; row++) {                                        \
            for (int64_t i = 0; i < inner; i++)                                            \
                y[i] = x[off + i * si];                                                    \
            y += inner;                                                                    \
            for (int k = rank - 2; k >= 0; k--) { /* odometer over the outer dims */       \
                off += strides[k];                                                         \
                if (++idx[k] < dims[k])                                                    \
                    break;                                                                 \
                off -= strides[k] * dims[k];                                               \
                idx[k] = 0;                                                                \
            }                                                                              \
        }                                                                                  \
    } while (0)

void trtl_ref_gather_strided(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
                             const int64_t *strides, int64_t base)
{
    int64_t outer = 1;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 0)
            return;
        if (k < rank - 1)
            outer *= dims[k];
    }
    switch (es) {
    case 1: GATHER_STRIDED(uint8_t); break;
    case 2: GATHER_STRIDED(uint16_t); break;
    case 4: GATHER_STRIDED(uint32_t); break;
    default: {
        /* Generic size: element by element. */
        uint8_t *y = (uint8_t *)dst;
        const uint8_t *x = (const uint8_t *)src;
        int64_t idx[TRTL_MAX_DIMS] = {0}, off = base, n = outer * (rank ? dims[rank - 1] : 1);
        for (int64_t e = 0; e < n; e++) {
            memcpy(y + (size_t)e * es, x + (size_t)off * es, es);
            for (int k = rank - 1; k >= 0; k--) {
                off += strides[k];
                if (++idx[k] < dims[k])
                    break;
                off -= strides[k] * dims[k];
                idx[k] = 0;
            }
        }
        break;
    }
    }
}

/* Source index along a dim of size n for sampled position i; -1 means "fill with zero". */
static int64_t map_index(int32_t mode, int64_t i, int64_t n)
{
    if (i >= 0 && i < n)
        return i;
    switch (mode) {
    case TRTL_SLICE_WRAP: {
        int64_t m = i % n;
        return m < 0 ? m + n : m;
    }
    case TRTL_SLICE_CLAMP:
        return i < 0 ? 0 : n - 1;
    case TRTL_SLICE_REFLECT: {
        if (n == 1)
            return 0;
        int64_t p = 2 * (n - 1), m = i % p;
        if (m < 0)
            m += p;
        return m < n ? m : p - m;
    }
    default: /* FILL (DEFAULT was range-checked before) */
        return -1;
    }
}

trtl_status trtl_ref_sample(const char *node, const trtl_tensor_view *x, trtl_tensor_view *y,
                            const int64_t *start, const int64_t *step, int32_t mode, const void *fill)
{
    const trtl_dims *xd = &x->dims, *yd = &y->dims;
    int r = yd->nb_dims;
    size_t es = trtl_dtype_size(y->dtype);
    TRTL_TRY(trtl_ref_check_out_type(node, y->dtype, x->dtype));
    if (xd->nb_dims != r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input and output ranks differ (%d and %d)", node,
                          (int)xd->nb_dims, r);
    int64_t vol = trtl_volume(yd);
    if (vol == 0)
        return TRTL_OK;
    for (int k = 0; k < r; k++) {
        int64_t n = xd->d[k], first = start[k], last, span;
        if (__builtin_mul_overflow(yd->d[k] - 1, step[k], &span) || __builtin_add_overflow(first, span, &last))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': sampled indices overflow int64 in dimension %d (start "
                              "%lld, size %lld, stride %lld)", node, k, (long long)first, (long long)yd->d[k],
                              (long long)step[k]);
        if (mode == TRTL_SLICE_DEFAULT && (first < 0 || first >= n || last < 0 || last >= n))
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': slice out of bounds in dimension %d: indices %lld..%lld (stride %lld) "
                              "of an input dimension of size %lld",
                              node, k, (long long)first, (long long)last, (long long)step[k], (long long)n);
        if (n == 0 && mode != TRTL_SLICE_FILL)
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': cannot sample an empty input dimension %d except in FILL mode", node, k);
    }
    int64_t xs[TRTL_MAX_DIMS], idx[TRTL_MAX_DIMS] = {0}, part[TRTL_MAX_DIMS];
    int nfill = 0;
    int64_t off = 0;
    trtl_ref_strides(xd, xs);
    for (int k = 0; k < r; k++) { /* contribution of each dim at o_k = 0 */
        int64_t m = map_index(mode, start[k], xd->d[k]);
        part[k] = m < 0 ? -1 : m * xs[k];
        if (m < 0)
            nfill++;
        else
            off += part[k];
    }
    uint8_t *yp = (uint8_t *)y->data;
    const uint8_t *xp = (const uint8_t *)x->data;
    for (int64_t e = 0; e < vol; e++, yp += es) {
        if (nfill && fill)
            trtl_ref_copy_elem(yp, fill, es);
        else if (nfill)
            memset(yp, 0, es);
        else
            trtl_ref_copy_elem(yp, xp + (size_t)off * es, es);
        for (int k = r - 1; k >= 0; k--) { /* odometer: update only the dims that change */
            if (part[k] < 0)
                nfill--;
            else
                off -= part[k];
            if (++idx[k] == yd->d[k])
                idx[k] = 0;
            int64_t m = map_index(mode, start[k] + idx[k] * step[k], xd->d[k]);
            part[k] = m < 0 ? -1 : m * xs[k];
            if (m < 0)
                nfill++;
            else
                off += part[k];
            if (idx[k] != 0)
                break;
        }
    }
    return TRTL_OK;
}
