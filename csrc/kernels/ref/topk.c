/* Reference TopK.  Per slice along the axis, a bounded heap of the k best candidates is kept in the
 * output buffers themselves (no scratch), its root the worst of them; then it is heap-sorted so the
 * best comes first.  "Better" is a strict total order: MAX prefers the larger value, MIN the smaller,
 * NaN counts as the largest value (as in PyTorch), and equal values prefer the lower index. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

typedef struct topk_slice {
    float *vf;        /* FLOAT values, or NULL */
    int32_t *vi;      /* INT32 values, or NULL */
    int32_t *idx;
    int64_t stride;   /* elements between consecutive positions along the axis */
    int max;          /* TRTL_TOPK_MAX */
} topk_slice;

static double val_at(const topk_slice *s, int64_t i)
{
    return s->vf ? (double)s->vf[i * s->stride] : (double)s->vi[i * s->stride];
}

/* Is (va, ia) better than (vb, ib)? */
static int better(int max, double va, int32_t ia, double vb, int32_t ib)
{
    int na = isnan(va), nb = isnan(vb);
    if (na || nb) {
        if (na && nb)
            return ia < ib;
        return max ? na : nb;
    }
    if (va != vb)
        return max ? va > vb : va < vb;
    return ia < ib;
}

static void put(topk_slice *s, int64_t i, double v, int32_t id)
{
    if (s->vf)
        s->vf[i * s->stride] = (float)v;
    else
        s->vi[i * s->stride] = (int32_t)v;
    s->idx[i * s->stride] = id;
}

static void swap_at(topk_slice *s, int64_t i, int64_t j)
{
    double vi = val_at(s, i), vj = val_at(s, j);
    int32_t ii = s->idx[i * s->stride], ij = s->idx[j * s->stride];
    put(s, i, vj, ij);
    put(s, j, vi, ii);
}

/* "Worse" heap: every parent is worse than its children, so the root is the worst kept. */
static int worse_at(const topk_slice *s, int64_t i, int64_t j)
{
    return better(s->max, val_at(s, j), s->idx[j * s->stride], val_at(s, i), s->idx[i * s->stride]);
}

static void sift_down(topk_slice *s, int64_t i, int64_t n)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && worse_at(s, l, w))
            w = l;
        if (r < n && worse_at(s, r, w))
            w = r;
        if (w == i)
            return;
        swap_at(s, i, w);
        i = w;
    }
}

static void sift_up(topk_slice *s, int64_t i)
{
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!worse_at(s, i, parent))
            return;
        swap_at(s, i, parent);
        i = parent;
    }
}

trtl_status trtl_ref_topk(const trtl_kernel_args *a)
{
    const trtl_topk_params *p = &a->node->p.topk;
    const trtl_dims *xd = &a->in[0].dims;
    int ax = trtl_single_axis(p->axes);
    if (ax < 0 || ax >= xd->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': TopK axis out of range", a->node->name);
    int64_t outer = trtl_volume_range(xd, 0, ax), D = xd->d[ax], inner = trtl_volume_range(xd, ax + 1, xd->nb_dims);
    int64_t K = a->node->n_in > 1 ? a->out[0].dims.d[ax] : p->k; /* K from a tensor: resolved into the dims */
    if (K > D || a->out[0].dims.d[ax] != K)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': k = %lld does not fit axis size %lld", a->node->name,
                          (long long)K, (long long)D);
    if (D > INT32_MAX)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis too long for int32 indices", a->node->name);
    if (K == 0) /* k from a tensor may be 0: nothing to write (the heap's root below would be past the output) */
        return TRTL_OK;
    int is_float = a->in[0].dtype == TRTL_FLOAT;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xf = is_float ? (const float *)a->in[0].data + o * D * inner + i : NULL;
            const int32_t *xi = is_float ? NULL : (const int32_t *)a->in[0].data + o * D * inner + i;
            topk_slice s = {is_float ? (float *)a->out[0].data + o * K * inner + i : NULL,
                            is_float ? NULL : (int32_t *)a->out[0].data + o * K * inner + i,
                            (int32_t *)a->out[1].data + o * K * inner + i, inner, p->op == TRTL_TOPK_MAX};
            int64_t n = 0;
            for (int64_t d = 0; d < D; d++) {
                double v = xf ? (double)xf[d * inner] : (double)xi[d * inner];
                if (n < K) {
                    put(&s, n, v, (int32_t)d);
                    sift_up(&s, n++);
                } else if (better(s.max, v, (int32_t)d, val_at(&s, 0), s.idx[0])) {
                    put(&s, 0, v, (int32_t)d);
                    sift_down(&s, 0, n);
                }
            }
            /* heap sort: move the worst to the back repeatedly -> best first */
            for (int64_t end = n - 1; end > 0; end--) {
                swap_at(&s, 0, end);
                sift_down(&s, 0, end);
            }
        }
    return TRTL_OK;
}
