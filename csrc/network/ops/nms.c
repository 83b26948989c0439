/* nms.c -- INMSLayer (TensorRT 10): non-maximum suppression per batch item and class.
 * Inputs: 0 boxes FLOAT [B, N, 4] (shared by the classes) or [B, N, C, 4] (per class); 1 scores FLOAT
 * [B, N, C]; 2 MaxOutputBoxesPerClass, a 0-D (or one-element) INT32 tensor; optional 3 IoUThreshold and
 * 4 ScoreThreshold, 0-D (or one-element) FLOAT tensors (default 0; 4 needs 3).  All are read at run time.
 * Attributes: bounding_box_format (CORNER_PAIRS: (x1, y1, x2, y2) any two diagonal corners, so ONNX's
 * (y1, x1, y2, x2) gives the same IoU; CENTER_SIZES: (xc, yc, w, h)) and topk_box_limit (default 5000).
 * Per batch item, the (box, class) candidates whose score exceeds ScoreThreshold are sorted by score
 * (descending; ties by box then class index) and the first topk_box_limit are kept; then per class, in
 * that order, a box is selected when its IoU with every box already selected for the class is <=
 * IoUThreshold, up to MaxOutputBoxesPerClass boxes (negative: 0).
 * Outputs: 0 SelectedIndices INT32 [NumOutputBoxes, 3] of (batch, class, box) rows, batch major, then
 * class, then selection order (ONNX NonMaxSuppression's order; TensorRT leaves the order open);
 * 1 NumOutputBoxes, 0-D INT32.  NumOutputBoxes is data-dependent (see non_zero.c): -1 in the network,
 * the upper bound B * min(topk_box_limit, C * min(MaxOutputBoxesPerClass, N)) in the engine
 * (MaxOutputBoxesPerClass counts only where its value is known while shapes are resolved, else N). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_nms[] = {
    TRTL_A_ENUM("bounding_box_format", nms.box_format, "BoundingBoxFormat", TRTL_BOX_FORMAT_COUNT),
    TRTL_A("topk_box_limit", TRTL_ATTR_INT, nms.topk_box_limit),
};
TRTL_NATTRS(nms);

void trtl_init_nms(trtl_params *p)
{
    p->nms.box_format = TRTL_BOX_CORNER_PAIRS;
    p->nms.topk_box_limit = 5000;
}

static trtl_status check_attrs(const trtl_nms_params *p, const char *layer)
{
    if (p->box_format < 0 || p->box_format >= TRTL_BOX_FORMAT_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown BoundingBoxFormat %d", layer,
                          (int)p->box_format);
    if (p->topk_box_limit < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': topk_box_limit = %d must be >= 1", layer,
                          (int)p->topk_box_limit);
    return TRTL_OK;
}

trtl_status trtl_lower_nms(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': NMS layers need an explicit-batch network",
                          c->layer_name);
    return check_attrs(&p->nms, c->layer_name);
}

static int scalar_like(const trtl_dims *d)
{
    return d->nb_dims == 0 || (d->nb_dims == 1 && (d->d[0] == 1 || d->d[0] < 0));
}

trtl_status trtl_infer_nms(const trtl_infer_ctx *c)
{
    static const char *names[5] = {"boxes (input 0)", "scores (input 1)", "max_output_boxes_per_class (input 2)",
                                   "iou_threshold (input 3)", "score_threshold (input 4)"};
    const trtl_dims *b = &c->in[0], *s = &c->in[1];
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_attrs(&c->p->nms, c->layer_name));
    for (int32_t j = 0; j < c->n_in; j++) {
        if (c->in[j].nb_dims < 0) {
            if (j == 3 && c->n_in > 4 && c->in[4].nb_dims >= 0)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': score_threshold (input 4) is set but "
                                  "iou_threshold (input 3) is not: set_input(3, iou_threshold) first", c->layer_name);
            continue;
        }
        trtl_dtype want = j == 2 ? TRTL_INT32 : TRTL_FLOAT;
        if (c->in_type[j] != want)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s must be %s, got %s", c->layer_name, names[j],
                              trtl_dtype_name(want), trtl_dtype_name(c->in_type[j]));
        if (j >= 2 && !scalar_like(&c->in[j]))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s must be a scalar (0-D), got %s", c->layer_name,
                              names[j], trtl_dims_str(&c->in[j], s1, sizeof s1));
    }
    if (s->nb_dims != 3)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scores (input 1) must be [batch, boxes, classes], got %s",
                          c->layer_name, trtl_dims_str(s, s1, sizeof s1));
    int ok = (b->nb_dims == 3 || b->nb_dims == 4) && (b->d[b->nb_dims - 1] == 4 || b->d[b->nb_dims - 1] < 0);
    for (int32_t k = 0; ok && k < (b->nb_dims == 4 ? 3 : 2); k++)
        ok = b->d[k] < 0 || s->d[k] < 0 || b->d[k] == s->d[k];
    if (!ok)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': boxes (input 0) %s must be [batch, boxes, 4] or [batch, "
                          "boxes, classes, 4] matching scores (input 1) %s", c->layer_name,
                          trtl_dims_str(b, s1, sizeof s1), trtl_dims_str(s, s2, sizeof s2));
    int64_t count = -1;
    if (c->need_values && trtl_volume(s) >= 0) {
        int64_t B = s->d[0], N = s->d[1], C = s->d[2], per = N;
        const int64_t *mv = c->in_values ? c->in_values[2] : NULL;
        if (mv)
            per = mv[0] < 0 ? 0 : (mv[0] < N ? mv[0] : N);
        int64_t per_batch = C * per < c->p->nms.topk_box_limit ? C * per : c->p->nms.topk_box_limit;
        count = B * per_batch;
        if (c->need_values == 2) /* the builder's min corner: below the bound, so the dim is declared dynamic */
            count = count > 1 ? 1 : 0;
    }
    c->out[0].nb_dims = 2;
    c->out[0].d[0] = count;
    c->out[0].d[1] = 3;
    c->out_type[0] = TRTL_INT32;
    c->out[1].nb_dims = 0;
    c->out_type[1] = TRTL_INT32;
    return TRTL_OK;
}
