/* Reference reverse-sequence kernel (ops/reverse_sequence.c): element by element, the source index
 * along the sequence axis is len - 1 - t for t < len (len = sequence_lens[batch index]), else t. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"

trtl_status trtl_ref_reverse_sequence(const trtl_kernel_args *a)
{
    const trtl_reverse_sequence_params *q = &a->node->p.revseq;
    const char *node = a->node->name;
    const trtl_dims *X = &a->in[0].dims;
    int32_t r = X->nb_dims, ba = q->batch_axis, sa = q->sequence_axis;
    size_t es = trtl_dtype_size(a->in[0].dtype);
    if (ba < 0 || ba >= r || sa < 0 || sa >= r || ba == sa || a->in[1].dtype != TRTL_INT32 ||
        trtl_volume(&a->in[1].dims) != X->d[ba])
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad reverse-sequence shapes or axes", node);
    TRTL_TRY(trtl_ref_check_out_type(node, a->out[0].dtype, a->in[0].dtype));
    const int32_t *lens = (const int32_t *)a->in[1].data;
    int64_t T = X->d[sa];
    for (int64_t b = 0; b < X->d[ba]; b++)
        if (lens[b] < 0 || lens[b] > T)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': sequence_lens[%lld] = %d is out of range 0..%lld",
                              node, (long long)b, (int)lens[b], (long long)T);
    int64_t St[TRTL_MAX_DIMS], idx[TRTL_MAX_DIMS] = {0}, vol = trtl_volume(X);
    trtl_ref_strides(X, St);
    const uint8_t *x = (const uint8_t *)a->in[0].data;
    uint8_t *y = (uint8_t *)a->out[0].data;
    for (int64_t e = 0; e < vol; e++) {
        int64_t t = idx[sa], len = lens[idx[ba]];
        int64_t src = e + (t < len ? (len - 1 - t) - t : 0) * St[sa];
        trtl_ref_copy_elem(y + (size_t)e * es, x + (size_t)src * es, es);
        for (int32_t i = r - 1; i >= 0; i--) {
            if (++idx[i] < X->d[i])
                break;
            idx[i] = 0;
        }
    }
    return TRTL_OK;
}
