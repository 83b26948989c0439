/* Reference gather kernel (DEFAULT, ELEMENT, ND; see ops/gather.c).  Paired leading dims are
 * walked with broadcast strides (0 where an operand has 1); everything else is a block copy by
 * element size.  Indices are checked one by one: negative ones wrap once, others out of range fail. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "kernels/ref/ref_index.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

/* Wraps a negative index once; -1 if still out of [0, n). */
static int64_t fix_index(int64_t v, int64_t n)
{
    int64_t i = v < 0 ? v + n : v;
    return (i < 0 || i >= n) ? -1 : i;
}

static trtl_status bad_index(const char *node, int64_t v, int64_t n, int dim)
{
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                      "layer '%s': gather index %lld is out of range for data dimension %d of size %lld (valid %lld..%lld)",
                      node, (long long)v, dim, (long long)n, (long long)-n, (long long)n - 1);
}

/* Offsets of paired index pl (row-major over O[0..b)) into data and indices. */
static void paired_offsets(int64_t pl, int32_t b, const trtl_dims *O, const trtl_dims *D, const int64_t *Ds,
                           const trtl_dims *I, const int64_t *Is, int64_t *doff, int64_t *ioff)
{
    *doff = 0;
    *ioff = 0;
    for (int32_t i = b - 1; i >= 0; i--) {
        int64_t pi = pl % O->d[i];
        pl /= O->d[i];
        if (D->d[i] != 1)
            *doff += pi * Ds[i];
        if (I->d[i] != 1)
            *ioff += pi * Is[i];
    }
}

trtl_status trtl_ref_gather(const trtl_kernel_args *a)
{
    const trtl_gather_params *g = &a->node->p.gather;
    const char *node = a->node->name;
    const trtl_dims *D = &a->in[0].dims, *I = &a->in[1].dims, *O = &a->out[0].dims;
    int32_t r = D->nb_dims, q = I->nb_dims, b = g->num_elementwise_dims, axis = g->axis;
    size_t es = trtl_dtype_size(a->in[0].dtype);
    const uint8_t *data = (const uint8_t *)a->in[0].data;
    const void *ind = a->in[1].data;
    int is64 = a->in[1].dtype == TRTL_INT64;
    uint8_t *y = (uint8_t *)a->out[0].data;
    char sd[TRTL_DIMS_STR_MAX], si[TRTL_DIMS_STR_MAX];
    if (a->in[1].dtype != TRTL_INT32 && !is64)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': indices must be INT32 or INT64", node);
    TRTL_TRY(trtl_ref_check_out_type(node, a->out[0].dtype, a->in[0].dtype));
    if (b < 0 || b >= r || b > q || b > O->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad num_elementwise_dims %d for data %s and indices %s", node,
                          (int)b, trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si));
    for (int32_t i = 0; i < b; i++)
        if ((D->d[i] != O->d[i] && D->d[i] != 1) || (I->d[i] != O->d[i] && I->d[i] != 1))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': data %s and indices %s do not broadcast in paired dimension %d",
                              node, trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si), (int)i);
    if (trtl_volume(O) == 0)
        return TRTL_OK;
    int64_t Ds[TRTL_MAX_DIMS], Is[TRTL_MAX_DIMS], P = trtl_volume_range(O, 0, b);
    trtl_ref_strides(D, Ds);
    trtl_ref_strides(I, Is);

    if (g->mode == TRTL_GATHER_DEFAULT) {
        if (axis < b || axis >= r || O->nb_dims != r + q - 1 - b)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad gather axis %d for data %s", node, (int)axis,
                              trtl_dims_str(D, sd, sizeof sd));
        int64_t outer = trtl_volume_range(D, b, axis), A = D->d[axis], Q = trtl_volume_range(I, b, q),
                inner = trtl_volume_range(D, axis + 1, r);
        size_t bytes = (size_t)inner * es;
        for (int64_t pl = 0; pl < P; pl++) {
            int64_t doff, ioff;
            paired_offsets(pl, b, O, D, Ds, I, Is, &doff, &ioff);
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < Q; j++) {
                    int64_t idx = fix_index(ref_int_at(ind, is64, ioff + j), A);
                    if (idx < 0)
                        return bad_index(node, ref_int_at(ind, is64, ioff + j), A, axis);
                    memcpy(y, data + (size_t)(doff + (o * A + idx) * inner) * es, bytes);
                    y += bytes;
                }
        }
        return TRTL_OK;
    }

    if (g->mode == TRTL_GATHER_ELEMENT) {
        if (q != r || O->nb_dims != r || axis < b || axis >= r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad ELEMENT gather of data %s with indices %s", node,
                              trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si));
        for (int32_t i = b; i < r; i++)
            if (I->d[i] != O->d[i] || (i != axis && O->d[i] > D->d[i]))
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': ELEMENT gather indices %s do not fit data %s", node,
                                  trtl_dims_str(I, si, sizeof si), trtl_dims_str(D, sd, sizeof sd));
        int64_t vol = trtl_volume(O), idx[TRTL_MAX_DIMS] = {0}, A = D->d[axis];
        for (int64_t e = 0; e < vol; e++, y += es) {
            int64_t ioff = 0, doff = 0;
            for (int32_t i = 0; i < r; i++) {
                if (I->d[i] != 1 || i >= b)
                    ioff += idx[i] * Is[i];
                if (i != axis && (D->d[i] != 1 || i >= b))
                    doff += idx[i] * Ds[i];
            }
            int64_t v = fix_index(ref_int_at(ind, is64, ioff), A);
            if (v < 0)
                return bad_index(node, ref_int_at(ind, is64, ioff), A, axis);
            trtl_ref_copy_elem(y, data + (size_t)(doff + v * Ds[axis]) * es, es);
            for (int32_t i = r - 1; i >= 0; i--) {
                if (++idx[i] < O->d[i])
                    break;
                idx[i] = 0;
            }
        }
        return TRTL_OK;
    }

    if (g->mode == TRTL_GATHER_ND) {
        int64_t k = q >= 1 ? I->d[q - 1] : 0;
        if (q < b + 1 || k < 1 || k > r - b || O->nb_dims != q - 1 + r - b - (int32_t)k)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad ND gather of data %s with indices %s", node,
                              trtl_dims_str(D, sd, sizeof sd), trtl_dims_str(I, si, sizeof si));
        int64_t J = trtl_volume_range(I, b, q - 1), inner = trtl_volume_range(D, b + (int)k, r);
        size_t bytes = (size_t)inner * es;
        for (int64_t pl = 0; pl < P; pl++) {
            int64_t doff, ioff;
            paired_offsets(pl, b, O, D, Ds, I, Is, &doff, &ioff);
            for (int64_t j = 0; j < J; j++) {
                int64_t iv = ioff + j * k;
                int64_t off = doff;
                for (int64_t t = 0; t < k; t++) {
                    int64_t n = D->d[b + t], v = fix_index(ref_int_at(ind, is64, iv + t), n);
                    if (v < 0)
                        return bad_index(node, ref_int_at(ind, is64, iv + t), n, (int)(b + t));
                    off += v * Ds[b + t];
                }
                memcpy(y, data + (size_t)off * es, bytes);
                y += bytes;
            }
        }
        return TRTL_OK;
    }
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown GatherMode %d", node, (int)g->mode);
}
