/* reverse_sequence.c -- IReverseSequenceLayer (ONNX ReverseSequence): for each batch entry b of
 * input (rank >= 2, any type), the first sequence_lens[b] entries along sequence_axis are reversed
 * and the rest copied.  sequence_lens: INT32 [batch]; batch_axis (default 1) and sequence_axis
 * (default 0) differ.  A length outside 0..seq fails at run time. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_reverse_sequence[] = {
    TRTL_A("batch_axis", TRTL_ATTR_INT, revseq.batch_axis),
    TRTL_A("sequence_axis", TRTL_ATTR_INT, revseq.sequence_axis),
};
TRTL_NATTRS(reverse_sequence);

void trtl_init_reverse_sequence(trtl_params *p)
{
    p->revseq.batch_axis = 1;
    p->revseq.sequence_axis = 0;
}

trtl_status trtl_lower_reverse_sequence(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': IReverseSequenceLayer needs an explicit-batch network",
                          c->layer_name);
    if (c->n_in > 0 && c->in) {
        int32_t r = c->in[0].nb_dims;
        int32_t *ax[2] = {&p->revseq.batch_axis, &p->revseq.sequence_axis};
        const char *nm[2] = {"batch_axis", "sequence_axis"};
        for (int i = 0; i < 2; i++) {
            if (*ax[i] < -r || *ax[i] >= r)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s %d is out of range for an input of %d dims",
                                  c->layer_name, nm[i], (int)*ax[i], (int)r);
            if (*ax[i] < 0)
                *ax[i] += r;
        }
    }
    return TRTL_OK;
}

trtl_status trtl_infer_reverse_sequence(const trtl_infer_ctx *c)
{
    const trtl_reverse_sequence_params *q = &c->p->revseq;
    const char *L = c->layer_name;
    char s[TRTL_DIMS_STR_MAX], t[TRTL_DIMS_STR_MAX];
    const trtl_dims *X = &c->in[0], *S = &c->in[1];
    int32_t r = X->nb_dims;
    if (r < 2)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input must have at least 2 dims, got %s", L,
                          trtl_dims_str(X, s, sizeof s));
    if (q->batch_axis < 0 || q->batch_axis >= r || q->sequence_axis < 0 || q->sequence_axis >= r ||
        q->batch_axis == q->sequence_axis)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': batch_axis %d and sequence_axis %d must be two "
                          "different dims of input %s", L, (int)q->batch_axis, (int)q->sequence_axis,
                          trtl_dims_str(X, s, sizeof s));
    if (c->in_type[1] != TRTL_INT32)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': sequence_lens must be INT32, got %s", L,
                          trtl_dtype_name(c->in_type[1]));
    int64_t b = X->d[q->batch_axis];
    if (S->nb_dims != 1 || (S->d[0] >= 0 && b >= 0 && S->d[0] != b))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': sequence_lens must have shape (batch,) = (%lld,), got %s "
                          "(input %s)", L, (long long)b, trtl_dims_str(S, s, sizeof s), trtl_dims_str(X, t, sizeof t));
    c->out[0] = *X;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
