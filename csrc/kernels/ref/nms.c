/* Reference NMS kernel (network/ops/nms.c has the semantics).  Per batch item: the candidates whose
 * score exceeds the threshold go to scratch, are heap-sorted (score descending, then box, then class
 * index) and cut to topk_box_limit; then each class walks them in that order, selecting a box unless
 * its IoU with a box already selected for the class exceeds the IoU threshold.  Rows go to output 0
 * in (batch, class, selection) order; the count goes to output 1 and to output 0's view dims (the
 * context takes the real extent from there).  IoU in double; a box of zero area overlaps nothing. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "core/dims.h"

typedef struct cand {
    float score;
    int32_t box, cls;
} cand;

size_t trtl_ref_nms_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)n;
    (void)out;
    const trtl_dims *s = &in[1].dims;
    if (s->nb_dims != 3 || s->d[1] < 0 || s->d[2] < 0)
        return 0;
    /* candidates of one batch item, then the boxes selected for one class */
    return (size_t)(s->d[1] * s->d[2]) * sizeof(cand) + (size_t)s->d[1] * sizeof(int32_t) + 64;
}

/* a before b in selection order */
static int before(const cand *a, const cand *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    if (a->box != b->box)
        return a->box < b->box;
    return a->cls < b->cls;
}

static void sift(cand *c, int64_t i, int64_t n)
{
    for (;;) {
        int64_t l = 2 * i + 1, m = i;
        if (l < n && before(&c[m], &c[l])) /* a max-heap of the *last* in order */
            m = l;
        if (l + 1 < n && before(&c[m], &c[l + 1]))
            m = l + 1;
        if (m == i)
            return;
        cand t = c[i];
        c[i] = c[m];
        c[m] = t;
        i = m;
    }
}

static void heap_sort(cand *c, int64_t n)
{
    for (int64_t i = n / 2 - 1; i >= 0; i--)
        sift(c, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        cand t = c[0];
        c[0] = c[e];
        c[e] = t;
        sift(c, 0, e);
    }
}

/* (x1, y1, x2, y2) with x1 <= x2, y1 <= y2 */
static void corners(const float *b, int fmt, double *o)
{
    if (fmt == TRTL_BOX_CENTER_SIZES) {
        o[0] = (double)b[0] - 0.5 * (double)b[2];
        o[2] = (double)b[0] + 0.5 * (double)b[2];
        o[1] = (double)b[1] - 0.5 * (double)b[3];
        o[3] = (double)b[1] + 0.5 * (double)b[3];
    } else {
        o[0] = fmin(b[0], b[2]);
        o[2] = fmax(b[0], b[2]);
        o[1] = fmin(b[1], b[3]);
        o[3] = fmax(b[1], b[3]);
    }
}

static double iou(const float *p, const float *q, int fmt)
{
    double a[4], b[4];
    corners(p, fmt, a);
    corners(q, fmt, b);
    double aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]);
    if (!(aa > 0.0) || !(ab > 0.0))
        return 0.0;
    double w = fmin(a[2], b[2]) - fmax(a[0], b[0]), h = fmin(a[3], b[3]) - fmax(a[1], b[1]);
    if (!(w > 0.0) || !(h > 0.0))
        return 0.0;
    double inter = w * h;
    return inter / (aa + ab - inter);
}

trtl_status trtl_ref_nms(const trtl_kernel_args *a)
{
    const trtl_nms_params *p = &a->node->p.nms;
    const trtl_tensor_view *bx = &a->in[0], *sc = &a->in[1];
    trtl_tensor_view *y = &a->out[0];
    int64_t B = sc->dims.d[0], N = sc->dims.d[1], C = sc->dims.d[2];
    int per_class = bx->dims.nb_dims == 4;
    int64_t maxout = *(const int32_t *)a->in[2].data;
    float iou_thr = a->node->n_in > 3 ? *(const float *)a->in[3].data : 0.0f;
    float score_thr = a->node->n_in > 4 ? *(const float *)a->in[4].data : 0.0f;
    if (!(iou_thr >= 0.0f && iou_thr <= 1.0f))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': iou_threshold %g is outside [0, 1]",
                          a->node->name, (double)iou_thr);
    if (maxout < 0)
        maxout = 0;
    size_t need = trtl_ref_nms_scratch(a->node, a->in, a->out);
    if (a->scratch_size < need || (N * C > 0 && !a->scratch))
        return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': NMS scratch of %zu bytes, %zu given", a->node->name, need,
                          a->scratch_size);
    cand *cands = a->scratch;
    int32_t *sel = (int32_t *)(cands + N * C);
    int32_t *o = y->data;
    int64_t cap = y->dims.d[0], count = 0;
    for (int64_t b = 0; b < B; b++) {
        const float *s = (const float *)sc->data + b * N * C;
        int64_t m = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                if (s[n * C + c] > score_thr) {
                    cands[m].score = s[n * C + c];
                    cands[m].box = (int32_t)n;
                    cands[m].cls = (int32_t)c;
                    m++;
                }
        heap_sort(cands, m);
        if (m > p->topk_box_limit)
            m = p->topk_box_limit;
        for (int64_t c = 0; c < C; c++) {
            int64_t ns = 0;
            for (int64_t i = 0; i < m && ns < maxout; i++) {
                if (cands[i].cls != c)
                    continue;
                int64_t n = cands[i].box;
                const float *bn = (const float *)bx->data + ((b * N + n) * (per_class ? C : 1) + (per_class ? c : 0)) * 4;
                int keep = 1;
                for (int64_t k = 0; k < ns && keep; k++) {
                    const float *bk = (const float *)bx->data +
                                      ((b * N + sel[k]) * (per_class ? C : 1) + (per_class ? c : 0)) * 4;
                    keep = !(iou(bn, bk, p->box_format) > (double)iou_thr);
                }
                if (!keep)
                    continue;
                if (count >= cap)
                    return trtl_error(TRTL_ERR_INTERNAL, "layer '%s': more than %lld selected boxes", a->node->name,
                                      (long long)cap);
                sel[ns++] = (int32_t)n;
                o[count * 3 + 0] = (int32_t)b;
                o[count * 3 + 1] = (int32_t)c;
                o[count * 3 + 2] = (int32_t)n;
                count++;
            }
        }
    }
    y->dims.d[0] = count;
    *(int32_t *)a->out[1].data = (int32_t)count;
    return TRTL_OK;
}
