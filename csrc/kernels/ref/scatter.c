/* Reference scatter kernel (ELEMENT and ND, with the trtlite reduction extension; ops/scatter.c):
 * the output starts as a copy of data, then each update is combined into the element (ELEMENT) or
 * slice (ND) its indices select, in row-major order of the updates.  Indices are checked one by
 * one: negative ones wrap once, others out of range fail naming the layer. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

static trtl_status bad_index(const char *node, int32_t v, int64_t n, int dim)
{
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                      "layer '%s': scatter index %d is out of range for data dimension %d of size %lld (valid %lld..%lld)",
                      node, (int)v, dim, (long long)n, (long long)-n, (long long)n - 1);
}

/* y[0] (op)= u[0] for one element of type dt. */
static void combine(void *y, const void *u, trtl_dtype dt, size_t es, int32_t red)
{
    if (red == TRTL_SCATTER_RED_NONE) {
        trtl_ref_copy_elem(y, u, es);
    } else if (dt == TRTL_FLOAT) {
        float a, b;
        memcpy(&a, y, 4);
        memcpy(&b, u, 4);
        /* MAX/MIN keep a NaN from either side (as numpy's maximum/minimum do). */
        a = red == TRTL_SCATTER_RED_SUM    ? a + b
            : red == TRTL_SCATTER_RED_PROD ? a * b
            : red == TRTL_SCATTER_RED_MAX  ? (a != a || b != b ? a + b : (a > b ? a : b))
                                           : (a != a || b != b ? a + b : (a < b ? a : b));
        memcpy(y, &a, 4);
    } else {
        int32_t a, b;
        memcpy(&a, y, 4);
        memcpy(&b, u, 4);
        /* Wrapping integer arithmetic, computed unsigned (no signed overflow). */
        a = red == TRTL_SCATTER_RED_SUM    ? (int32_t)((uint32_t)a + (uint32_t)b)
            : red == TRTL_SCATTER_RED_PROD ? (int32_t)((uint32_t)a * (uint32_t)b)
            : red == TRTL_SCATTER_RED_MAX  ? (a > b ? a : b)
                                           : (a < b ? a : b);
        memcpy(y, &a, 4);
    }
}

trtl_status trtl_ref_scatter(const trtl_kernel_args *a)
{
    const trtl_scatter_params *s = &a->node->p.scatter;
    const char *node = a->node->name;
    const trtl_dims *D = &a->in[0].dims, *I = &a->in[1].dims, *U = &a->in[2].dims;
    trtl_dtype dt = a->in[0].dtype;
    size_t es = trtl_dtype_size(dt);
    int32_t r = D->nb_dims, q = I->nb_dims, red = s->reduction;
    const int32_t *ind = (const int32_t *)a->in[1].data;
    const uint8_t *upd = (const uint8_t *)a->in[2].data;
    uint8_t *y = (uint8_t *)a->out[0].data;
    if (a->in[1].dtype != TRTL_INT32 || a->in[2].dtype != dt)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': scatter needs INT32 indices and updates of the data's type", node);
    if (red != TRTL_SCATTER_RED_NONE && dt != TRTL_FLOAT && dt != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': scatter reductions need FLOAT or INT32 data", node);
    TRTL_TRY(trtl_ref_check_out_type(node, a->out[0].dtype, dt));
    if (!trtl_dims_equal(&a->out[0].dims, D))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scatter output must have the data's shape", node);
    int64_t vol = trtl_volume(D);
    if (vol > 0 && y != (const uint8_t *)a->in[0].data)
        memcpy(y, a->in[0].data, (size_t)vol * es);
    int64_t Ds[TRTL_MAX_DIMS], Is[TRTL_MAX_DIMS];
    trtl_ref_strides(D, Ds);
    trtl_ref_strides(I, Is);

    if (s->mode == TRTL_SCATTER_ELEMENT) {
        int32_t axis = s->axis;
        if (q != r || U->nb_dims != r || axis < 0 || axis >= r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad ELEMENT scatter shapes", node);
        for (int32_t i = 0; i < r; i++)
            if (U->d[i] != I->d[i] || (i != axis && I->d[i] > D->d[i]))
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ELEMENT scatter indices do not fit the data", node);
        int64_t n = trtl_volume(I), idx[TRTL_MAX_DIMS] = {0}, A = D->d[axis];
        for (int64_t e = 0; e < n; e++) {
            int64_t off = 0;
            for (int32_t i = 0; i < r; i++)
                if (i != axis)
                    off += idx[i] * Ds[i];
            int32_t v = ind[e];
            int64_t t = v < 0 ? (int64_t)v + A : (int64_t)v;
            if (t < 0 || t >= A)
                return bad_index(node, v, A, axis);
            combine(y + (size_t)(off + t * Ds[axis]) * es, upd + (size_t)e * es, dt, es, red);
            for (int32_t i = r - 1; i >= 0; i--) {
                if (++idx[i] < I->d[i])
                    break;
                idx[i] = 0;
            }
        }
        return TRTL_OK;
    }
    if (s->mode == TRTL_SCATTER_ND) {
        int64_t k = q >= 1 ? I->d[q - 1] : 0;
        if (q < 1 || k < 1 || k > r || U->nb_dims != q - 1 + r - (int32_t)k)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad ND scatter shapes", node);
        int64_t J = trtl_volume_range(I, 0, q - 1), inner = trtl_volume_range(D, (int)k, r);
        if (trtl_volume(U) != J * inner)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ND scatter updates do not fit", node);
        for (int64_t j = 0; j < J; j++) {
            const int32_t *iv = ind + j * k;
            int64_t off = 0;
            for (int64_t t = 0; t < k; t++) {
                int64_t n = D->d[t], v = iv[t] < 0 ? (int64_t)iv[t] + n : (int64_t)iv[t];
                if (v < 0 || v >= n)
                    return bad_index(node, iv[t], n, (int)t);
                off += v * Ds[t];
            }
            const uint8_t *u = upd + (size_t)(j * inner) * es;
            if (red == TRTL_SCATTER_RED_NONE)
                memcpy(y + (size_t)off * es, u, (size_t)inner * es);
            else
                for (int64_t e = 0; e < inner; e++)
                    combine(y + (size_t)(off + e) * es, u + (size_t)e * es, dt, es, red);
        }
        return TRTL_OK;
    }
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown ScatterMode %d", node, (int)s->mode);
}
