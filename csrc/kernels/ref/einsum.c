/* Reference einsum kernel (ops/einsum.c): for every output element, the sum over the summed letters'
 * index space of the product of the inputs there, in double.  Each input's offset is its letters'
 * indices times its strides (a repeated letter adds its strides; a size-1 dim of a larger letter
 * adds nothing: broadcast). */
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/einsum.h"

trtl_status trtl_ref_einsum(const trtl_kernel_args *a)
{
    const char *node = a->node->name;
    trtl_einsum_eq e;
    int64_t size[TRTL_EINSUM_MAX_LETTERS];
    trtl_dims in[TRTL_EINSUM_MAX_INPUTS];
    int32_t n_in = a->node->n_in;
    if (n_in < 1 || n_in > TRTL_EINSUM_MAX_INPUTS)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': einsum takes 1 to %d inputs", node, TRTL_EINSUM_MAX_INPUTS);
    for (int32_t t = 0; t < n_in; t++) {
        if (a->in[t].dtype != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': einsum inputs must be FLOAT", node);
        in[t] = a->in[t].dims;
    }
    TRTL_TRY(trtl_einsum_parse(node, a->node->p.einsum.equation, n_in, &e));
    TRTL_TRY(trtl_einsum_sizes(node, &e, in, size));
    if (a->out[0].dtype != TRTL_FLOAT || a->out[0].dims.nb_dims != e.out_rank)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad einsum output", node);
    /* stride[t][letter]: how far input t moves per step of that letter */
    int64_t stride[TRTL_EINSUM_MAX_INPUTS][TRTL_EINSUM_MAX_LETTERS] = {{0}};
    for (int32_t t = 0; t < n_in; t++) {
        int64_t s = 1;
        for (int32_t i = e.in_rank[t] - 1; i >= 0; i--) {
            if (in[t].d[i] != 1)
                stride[t][e.in_lab[t][i]] += s;
            s *= in[t].d[i];
        }
    }
    int8_t is_out[TRTL_EINSUM_MAX_LETTERS] = {0};
    for (int32_t i = 0; i < e.out_rank; i++) {
        is_out[e.out_lab[i]] = 1;
        if (a->out[0].dims.d[i] != size[e.out_lab[i]])
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad einsum output shape", node);
    }
    int8_t sum_lab[TRTL_EINSUM_MAX_LETTERS];
    int32_t n_sum = 0;
    int64_t inner = 1;
    for (int32_t l = 0; l < e.n_letters; l++)
        if (!is_out[l]) {
            sum_lab[n_sum++] = (int8_t)l;
            inner *= size[l];
        }
    int64_t n_outer = trtl_volume(&a->out[0].dims), cur[TRTL_EINSUM_MAX_LETTERS] = {0};
    float *y = (float *)a->out[0].data;
    for (int64_t o = 0; o < n_outer; o++) {
        int64_t rem = o;
        for (int32_t i = e.out_rank - 1; i >= 0; i--) {
            cur[e.out_lab[i]] = rem % size[e.out_lab[i]];
            rem /= size[e.out_lab[i]];
        }
        for (int32_t j = 0; j < n_sum; j++)
            cur[sum_lab[j]] = 0;
        double acc = 0;
        for (int64_t k = 0; k < inner; k++) {
            double prod = 1;
            for (int32_t t = 0; t < n_in; t++) {
                int64_t off = 0;
                for (int32_t l = 0; l < e.n_letters; l++)
                    off += cur[l] * stride[t][l];
                prod *= ((const float *)a->in[t].data)[off];
            }
            acc += prod;
            for (int32_t j = n_sum - 1; j >= 0; j--) {
                if (++cur[sum_lab[j]] < size[sum_lab[j]])
                    break;
                cur[sum_lab[j]] = 0;
            }
        }
        y[o] = (float)acc;
    }
    return TRTL_OK;
}
