/* Reference shuffle kernel: y = transpose2(reshape(transpose1(x))) as one strided gather.
 * A reshape only reinterprets row-major memory, so whenever one of the two transposes is the
 * identity the whole layer is a single strided read; with both, each element goes through the
 * reshape's linear index. */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

static void effective_perm(const trtl_dims *p, int32_t rank, int64_t *out, int *identity)
{
    *identity = 1;
    for (int32_t i = 0; i < rank; i++) {
        out[i] = p->nb_dims ? p->d[i] : i;
        if (out[i] != i)
            *identity = 0;
    }
}

trtl_status trtl_ref_shuffle(const trtl_kernel_args *a)
{
    const trtl_shuffle_params *p = &a->node->p.shuffle;
    const trtl_dims *X = &a->in[0].dims, *O = &a->out[0].dims;
    int32_t r = X->nb_dims, r2 = O->nb_dims;
    size_t es = trtl_dtype_size(a->in[0].dtype);
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    int64_t vol = trtl_volume(X);
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, a->in[0].dtype));
    if (vol != trtl_volume(O))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': shuffle of %s cannot produce %s", a->node->name,
                          trtl_dims_str(X, s1, sizeof s1), trtl_dims_str(O, s2, sizeof s2));
    int has_reshape = p->reshape_dims.nb_dims >= 0;
    int32_t rm = has_reshape ? r2 : r; /* rank after the reshape */
    if ((p->first_transpose.nb_dims && p->first_transpose.nb_dims < r) ||
        (p->second_transpose.nb_dims && p->second_transpose.nb_dims < rm) || (!has_reshape && r2 != r))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': shuffle permutations do not match input %s / output %s",
                          a->node->name, trtl_dims_str(X, s1, sizeof s1), trtl_dims_str(O, s2, sizeof s2));
    if (vol == 0)
        return TRTL_OK;
    int64_t p1[TRTL_MAX_DIMS], p2[TRTL_MAX_DIMS], xs[TRTL_MAX_DIMS], st[TRTL_MAX_DIMS], dims[TRTL_MAX_DIMS];
    int id1, id2;
    effective_perm(&p->first_transpose, r, p1, &id1);
    effective_perm(&p->second_transpose, rm, p2, &id2);
    trtl_ref_strides(X, xs);
    const void *x = a->in[0].data;
    void *y = a->out[0].data;

    if (!has_reshape) { /* y dim j = x dim p1[p2[j]] */
        for (int32_t j = 0; j < r; j++)
            st[j] = xs[p1[p2[j]]];
        trtl_ref_gather_strided(y, x, es, r, O->d, st, 0);
        return TRTL_OK;
    }
    if (id2) { /* y in row-major order is transpose1(x) in row-major order */
        for (int32_t k = 0; k < r; k++) {
            dims[k] = X->d[p1[k]];
            st[k] = xs[p1[k]];
        }
        trtl_ref_gather_strided(y, x, es, r, dims, st, 0);
        return TRTL_OK;
    }
    /* Reshaped dims M (y dim j = M dim p2[j]) and their row-major strides. */
    trtl_dims M = {0};
    int64_t ms[TRTL_MAX_DIMS];
    M.nb_dims = r2;
    for (int32_t j = 0; j < r2; j++)
        M.d[p2[j]] = O->d[j];
    trtl_ref_strides(&M, ms);
    for (int32_t j = 0; j < r2; j++)
        st[j] = ms[p2[j]];
    if (id1) { /* M's linear index is x's */
        trtl_ref_gather_strided(y, x, es, r2, O->d, st, 0);
        return TRTL_OK;
    }
    /* Both transposes: y multi-index -> M linear index -> transposed-input multi-index -> x. */
    int64_t T[TRTL_MAX_DIMS], idx[TRTL_MAX_DIMS] = {0}, mlin = 0;
    for (int32_t k = 0; k < r; k++)
        T[k] = X->d[p1[k]];
    uint8_t *yp = (uint8_t *)y;
    const uint8_t *xp = (const uint8_t *)x;
    for (int64_t e = 0; e < vol; e++, yp += es) {
        int64_t rem = mlin, xoff = 0;
        for (int32_t k = r - 1; k >= 0; k--) {
            xoff += (rem % T[k]) * xs[p1[k]];
            rem /= T[k];
        }
        trtl_ref_copy_elem(yp, xp + (size_t)xoff * es, es);
        for (int32_t j = r2 - 1; j >= 0; j--) {
            mlin += st[j];
            if (++idx[j] < O->d[j])
                break;
            mlin -= st[j] * O->d[j];
            idx[j] = 0;
        }
    }
    return TRTL_OK;
}
