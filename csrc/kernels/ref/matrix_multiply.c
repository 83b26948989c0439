/* Reference matrix multiply: for every output batch index, C[m, n] = sum_k A'[m, k] * B'[k, n] in
 * double, where A' / B' are the inputs after their MatrixOperation (a VECTOR is a [1, K] row for
 * op0 and a [K, 1] column for op1); batch dims of size 1 broadcast.  INT32 / INT64 inputs (both of
 * one type) give that type, the products and sums wrapping modulo 2^32 / 2^64 (as numpy's). */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/ref_index.h"
#include "kernels/ref/strided.h"

/* One integer matrix product, A at element offset oa, B at ob, C at oc; uint64 arithmetic wraps,
 * and its low 32 bits are the int32 result. */
static void int_matmul(const void *A, int64_t oa, const void *B, int64_t ob, void *C, int64_t oc, trtl_dtype dt,
                       int64_t M, int64_t N, int64_t K, int ta, int tb)
{
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            uint64_t acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (uint64_t)ref_int_at(A, dt == TRTL_INT64, oa + (ta ? k * M + m : m * K + k)) *
                       (uint64_t)ref_int_at(B, dt == TRTL_INT64, ob + (tb ? n * K + k : k * N + n));
            if (dt == TRTL_INT64)
                ((int64_t *)C)[oc + m * N + n] = (int64_t)acc;
            else
                ((int32_t *)C)[oc + m * N + n] = (int32_t)(uint32_t)acc;
        }
}

trtl_status trtl_ref_matrix_multiply(const trtl_kernel_args *a)
{
    const trtl_matmul_params *p = &a->node->p.matmul;
    const trtl_dims *ad = &a->in[0].dims, *bd = &a->in[1].dims;
    const float *A = (const float *)a->in[0].data, *B = (const float *)a->in[1].data;
    float *C = (float *)a->out[0].data;
    trtl_dtype dt = a->in[0].dtype;
    if (dt != a->in[1].dtype || (dt != TRTL_FLOAT && dt != TRTL_INT32 && dt != TRTL_INT64))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': matrix multiply needs two FLOAT, INT32 or INT64 inputs of one "
                          "type, got %s and %s", a->node->name, trtl_dtype_name(dt), trtl_dtype_name(a->in[1].dtype));
    TRTL_TRY(trtl_ref_check_out_type(a->node->name, a->out[0].dtype, dt));
    int va = p->op0 == TRTL_MATOP_VECTOR, vb = p->op1 == TRTL_MATOP_VECTOR;
    int ta = p->op0 == TRTL_MATOP_TRANSPOSE, tb = p->op1 == TRTL_MATOP_TRANSPOSE;
    int nb = ad->nb_dims - (va ? 1 : 2);
    if (nb < 0 || nb != bd->nb_dims - (vb ? 1 : 2))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input ranks %d and %d do not fit op0/op1", a->node->name,
                          (int)ad->nb_dims, (int)bd->nb_dims);
    int64_t M = va ? 1 : ad->d[nb + ta], K = va ? ad->d[nb] : ad->d[nb + !ta];
    int64_t Kb = vb ? bd->d[nb] : bd->d[nb + tb], N = vb ? 1 : bd->d[nb + !tb];
    if (K != Kb)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': inner dimensions differ (%lld vs %lld)", a->node->name,
                          (long long)K, (long long)Kb);
    /* batch strides in elements of each input, 0 where the input broadcasts */
    int64_t bdims[TRTL_MAX_DIMS], sa[TRTL_MAX_DIMS], sb[TRTL_MAX_DIMS], nbatch = 1;
    int64_t mat_a = M * K, mat_b = K * N;
    trtl_dims da = *ad, db = *bd;
    da.nb_dims = db.nb_dims = nb;
    ref_bcast_strides(&da, sa);
    ref_bcast_strides(&db, sb);
    for (int i = 0; i < nb; i++) {
        if (da.d[i] != db.d[i] && da.d[i] != 1 && db.d[i] != 1)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': batch dim %d cannot broadcast (%lld vs %lld)",
                              a->node->name, i, (long long)da.d[i], (long long)db.d[i]);
        bdims[i] = da.d[i] > db.d[i] ? da.d[i] : db.d[i];
        if (da.d[i] == 0 || db.d[i] == 0)
            bdims[i] = 0;
        sa[i] *= mat_a;
        sb[i] *= mat_b;
        nbatch *= bdims[i];
    }
    if (dt != TRTL_FLOAT) {
        for (int64_t t = 0; t < nbatch; t++)
            int_matmul(a->in[0].data, ref_offset(t, bdims, sa, nb), a->in[1].data, ref_offset(t, bdims, sb, nb),
                       a->out[0].data, t * M * N, dt, M, N, K, ta, tb);
        return TRTL_OK;
    }
    for (int64_t t = 0; t < nbatch; t++) {
        const float *Ab = A + ref_offset(t, bdims, sa, nb), *Bb = B + ref_offset(t, bdims, sb, nb);
        float *Cb = C + t * M * N;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    double x = ta ? Ab[k * M + m] : Ab[m * K + k];
                    double y = tb ? Bb[n * K + k] : Bb[k * N + n];
                    acc += x * y;
                }
                Cb[m * N + n] = (float)acc;
            }
    }
    return TRTL_OK;
}
