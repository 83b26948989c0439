/* inplace.c -- "concatenation.inplace", "slice.inplace" and "shuffle.inplace" (contracts in kernels/inplace.h).
 *
 * Each checks per call that its tensors lie where the memory plan was to put them: the
 * concatenation's inputs at their blocks of the output, the slice's output at its block of the
 * input (same layout arithmetic as the planner: trtl_inplace_*_layout).  Then there is nothing to
 * do.  Otherwise (a context that re-planned its arena for larger dynamic shapes, a plan whose copy
 * the planner could not elide) it runs the copying kernel. */
#include <stdint.h>

#include "kernels/inplace.h"
#include "kernels/ref/ref.h"
#include "core/dims.h"

extern const trtl_kernel trtl_kernel_concat_copy;
extern const trtl_kernel trtl_kernel_slice_rows;
extern const trtl_kernel trtl_kernel_shuffle_transpose;

int trtl_inplace_concat_layout(int32_t axis, const trtl_dims *out, const trtl_dims *in, int32_t n_in, size_t es,
                               int64_t *off)
{
    int32_t r = out->nb_dims;
    if (axis < 0 || axis >= r || n_in < 1)
        return 0;
    for (int32_t k = 0; k < r; k++)
        if (out->d[k] < 0 || (k < axis && out->d[k] != 1))
            return 0;
    int64_t inner = (int64_t)es, sum = 0;
    for (int32_t k = axis + 1; k < r; k++)
        inner *= out->d[k];
    for (int32_t j = 0; j < n_in; j++) {
        if (in[j].nb_dims != r)
            return 0;
        for (int32_t k = 0; k < r; k++)
            if (in[j].d[k] < 0 || (k != axis && in[j].d[k] != out->d[k]))
                return 0;
        off[j] = sum * inner;
        sum += in[j].d[axis];
    }
    return sum == out->d[axis];
}

int trtl_inplace_slice_layout(const trtl_dims *in, const trtl_dims *out, const trtl_dims *start,
                              const trtl_dims *stride, size_t es, int64_t *off)
{
    int32_t r = in->nb_dims;
    if (r < 1 || out->nb_dims != r || start->nb_dims != r || stride->nb_dims != r)
        return 0;
    for (int32_t k = 0; k < r; k++)
        if (in->d[k] < 0 || out->d[k] < 1 || stride->d[k] != 1 || start->d[k] < 0 || start->d[k] >= in->d[k] ||
            out->d[k] > in->d[k] - start->d[k])
            return 0;
    /* a: the last axis that is not whole; before it every output dim is 1 */
    int32_t a = 0;
    for (int32_t k = 0; k < r; k++)
        if (out->d[k] != in->d[k])
            a = k;
    for (int32_t k = 0; k < a; k++)
        if (out->d[k] != 1)
            return 0;
    int64_t o = 0, step = (int64_t)es;
    for (int32_t k = r - 1; k >= 0; k--) {
        o += start->d[k] * step;
        step *= in->d[k];
    }
    *off = o;
    return 1;
}

static int never(const trtl_node *n, const trtl_dims *in_dims)
{
    (void)n;
    (void)in_dims;
    return 0; /* chosen by the elide_concat / elide_slice passes, not by timing */
}

static int concat_in_place(const trtl_kernel_args *a)
{
    int32_t n = a->node->n_in;
    if (n < 1 || n > 64 || a->node->epi.has_residual)
        return 0;
    trtl_dims in[64];
    int64_t off[64];
    for (int32_t j = 0; j < n; j++) {
        if (a->in[j].dtype != a->out[0].dtype)
            return 0;
        in[j] = a->in[j].dims;
    }
    if (!trtl_inplace_concat_layout(a->node->p.concat.axis, &a->out[0].dims, in, n, trtl_dtype_size(a->out[0].dtype),
                                    off))
        return 0;
    for (int32_t j = 0; j < n; j++)
        if ((const uint8_t *)a->in[j].data != (const uint8_t *)a->out[0].data + off[j])
            return 0;
    return 1;
}

static trtl_status concat_run(const trtl_kernel_args *a)
{
    if (concat_in_place(a))
        return TRTL_OK;
    return trtl_kernel_concat_copy.run(a);
}

const trtl_kernel trtl_kernel_concat_inplace = {
    .name = TRTL_CONCAT_INPLACE_NAME,
    .op = TRTL_OP_CONCATENATION,
    .applies = never,
    .run = concat_run,
};

static int slice_in_place(const trtl_kernel_args *a)
{
    const trtl_slice_params *p = &a->node->p.slice;
    int64_t off;
    return a->node->n_in == 1 && a->in[0].dtype == a->out[0].dtype &&
           trtl_inplace_slice_layout(&a->in[0].dims, &a->out[0].dims, &p->start, &p->stride,
                                     trtl_dtype_size(a->out[0].dtype), &off) &&
           (const uint8_t *)a->out[0].data == (const uint8_t *)a->in[0].data + off;
}

static trtl_status slice_run(const trtl_kernel_args *a)
{
    if (slice_in_place(a))
        return TRTL_OK;
    return a->node->n_in == 1 ? trtl_kernel_slice_rows.run(a) : trtl_ref_slice(a);
}

const trtl_kernel trtl_kernel_slice_inplace = {
    .name = TRTL_SLICE_INPLACE_NAME,
    .op = TRTL_OP_SLICE,
    .applies = never,
    .run = slice_run,
};

/* A permutation of an operand of dims d (rank) that keeps the axes of extent other than 1 in their order: it only
 * moves 1s, so the permuted tensor's bytes are the operand's (the ONNX importer's Squeeze / Unsqueeze of a dynamic
 * shape is a transpose of the 1s to the end, or from it, and a reshape).  An empty permutation is the identity. */
static int order_kept(const trtl_dims *perm, const int64_t *d, int32_t rank)
{
    if (perm->nb_dims == 0)
        return 1;
    if (perm->nb_dims != rank)
        return 0;
    int32_t last = -1;
    uint32_t seen = 0;
    for (int32_t k = 0; k < rank; k++) {
        int32_t a = (int32_t)perm->d[k];
        if (a < 0 || a >= rank || (seen >> a) & 1u)
            return 0;
        seen |= 1u << a;
        if (d[a] == 1)
            continue;
        if (a < last)
            return 0;
        last = a;
    }
    return 1;
}

int trtl_inplace_shuffle_is_reshape(const trtl_shuffle_params *p, const trtl_dims *in, const trtl_dims *out)
{
    for (int32_t k = 0; k < in->nb_dims; k++)
        if (in->d[k] < 0)
            return 0;
    for (int32_t k = 0; k < out->nb_dims; k++)
        if (out->d[k] < 0)
            return 0;
    if (trtl_volume(in) != trtl_volume(out) || !order_kept(&p->first_transpose, in->d, in->nb_dims))
        return 0;
    if (p->second_transpose.nb_dims == 0)
        return 1;
    /* the second transpose permutes the reshaped dims `mid` into out: mid[perm[k]] = out[k] */
    int32_t rank = out->nb_dims;
    if (p->second_transpose.nb_dims != rank || rank > TRTL_MAX_DIMS)
        return 0;
    int64_t mid[TRTL_MAX_DIMS];
    uint32_t seen = 0;
    for (int32_t k = 0; k < rank; k++) {
        int64_t a = p->second_transpose.d[k];
        if (a < 0 || a >= rank || (seen >> a) & 1u)
            return 0;
        seen |= 1u << a;
        mid[a] = out->d[k];
    }
    return order_kept(&p->second_transpose, mid, rank);
}

static trtl_status shuffle_run(const trtl_kernel_args *a)
{
    if (a->node->n_in == 1 && a->in[0].dtype == a->out[0].dtype && a->out[0].data == a->in[0].data &&
        trtl_inplace_shuffle_is_reshape(&a->node->p.shuffle, &a->in[0].dims, &a->out[0].dims))
        return TRTL_OK;
    return trtl_kernel_shuffle_transpose.run(a);
}

const trtl_kernel trtl_kernel_shuffle_inplace = {
    .name = TRTL_SHUFFLE_INPLACE_NAME,
    .op = TRTL_OP_SHUFFLE,
    .applies = never,
    .run = shuffle_run,
};
