/*
 * prior_box.c -- PriorBox_TRT: Caffe SSD's PriorBox layer.
 *
 * Inputs: the feature map [N, C, H, W] and the image [N, C', IH, IW] (only their H, W are read).
 * Output: full dims [1, 2, H*W*numPriors*4, 1] float32 -- the priors do not depend on the batch
 * (an implicit-batch network sees TensorRT's (2, H*W*numPriors*4, 1)).
 *
 * Semantics (Caffe's and TensorRT's priorBoxPlugin):
 *   ratios = [1] followed by each aspectRatios value not yet listed (|a - b| < 1e-6), and its
 *     reciprocal after it when flip != 0;
 *   numPriors = numMinSize * (len(ratios) + (maxSize given ? 1 : 0));
 *   imgH/imgW == 0 (either): taken from the image input; stepH/stepW == 0 (either):
 *     stepH = imgH / H, stepW = imgW / W;
 *   cell (h, w) has centre (cx, cy) = ((w + offset) * stepW, (h + offset) * stepH);
 *   for each minSize m (with maxSize M of the same index), the priors of a cell are, in order:
 *     a square of side m; a square of side sqrt(m * M) if maxSize is given; then for every ratio
 *     r != 1 of the list, a box m*sqrt(r) wide and m/sqrt(r) high;
 *   each box is written as ((cx - bw/2) / imgW, (cy - bh/2) / imgH, (cx + bw/2) / imgW,
 *     (cy + bh/2) / imgH), clamped to [0, 1] when clip != 0.
 * Row 0 of the output holds the boxes (cell-major, row-major cells), row 1 the four variances
 * repeated.  variance may also be given as one value (Caffe), used for all four.
 */
#include <math.h>
#include <string.h>

#include "plugins/builtin/common.h"

enum {
    F_MIN_SIZE, F_MAX_SIZE, F_ASPECT_RATIOS, F_FLIP, F_CLIP, F_VARIANCE, F_IMG_H, F_IMG_W, F_STEP_H, F_STEP_W,
    F_OFFSET, F_COUNT
};

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_MIN_SIZE] = {"minSize", TRTL_PF_FLOAT32, 1},
    [F_MAX_SIZE] = {"maxSize", TRTL_PF_FLOAT32, 0},
    [F_ASPECT_RATIOS] = {"aspectRatios", TRTL_PF_FLOAT32, 0},
    [F_FLIP] = {"flip", TRTL_PF_INT32, 0},
    [F_CLIP] = {"clip", TRTL_PF_INT32, 0},
    [F_VARIANCE] = {"variance", TRTL_PF_FLOAT32, 0},
    [F_IMG_H] = {"imgH", TRTL_PF_INT32, 0},
    [F_IMG_W] = {"imgW", TRTL_PF_INT32, 0},
    [F_STEP_H] = {"stepH", TRTL_PF_FLOAT32, 0},
    [F_STEP_W] = {"stepW", TRTL_PF_FLOAT32, 0},
    [F_OFFSET] = {"offset", TRTL_PF_FLOAT32, 0},
};

static const trtl_input_spec input_specs[2] = {
    {"feature map", 3, TRTL_MAX_DIMS, "[N, C, H, W]"},
    {"image", 3, TRTL_MAX_DIMS, "[N, C, H, W]"},
};

typedef struct prior_box {
    trtl_builtin h;
    int32_t n_min, n_max, n_ar; /* field lengths */
    int32_t flip, clip, img_h, img_w;
    float step_h, step_w, offset, variance[4];
    int32_t n_ratios; /* expanded list: 1, then the new ratios (and their reciprocals) */
    /* in the tail: the fields as given, then room for the expanded ratios (1 + 2 * n_ar) */
    float *min_size, *max_size, *ar, *ratios;
} prior_box;

static void relink(trtl_builtin *h)
{
    prior_box *p = (prior_box *)h;
    p->min_size = (float *)(p + 1);
    p->max_size = p->min_size + p->n_min;
    p->ar = p->max_size + p->n_max;
    p->ratios = p->ar + p->n_ar;
}

static size_t tail(const trtl_plugin_fields *fs)
{
    return sizeof(float) * (size_t)((int64_t)trtl_field_length(fs, "minSize") + trtl_field_length(fs, "maxSize") +
                                    3 * (int64_t)trtl_field_length(fs, "aspectRatios") + 1);
}

static int32_t n_priors(const prior_box *p)
{
    return p->n_min * (p->n_ratios + (p->n_max > 0 ? 1 : 0));
}

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    prior_box *p = (prior_box *)h;
    const trtl_plugin_field *fmin, *fmax, *far, *fvar;
    /* Caffe's defaults */
    p->flip = 1;
    p->offset = 0.5f;
    for (int i = 0; i < 4; i++)
        p->variance[i] = 0.1f;
    if (trtl_field_array(r, &field_descs[F_MIN_SIZE], 1, TRTL_FIELD_ANY_LENGTH, &fmin) ||
        trtl_field_array(r, &field_descs[F_MAX_SIZE], 0, TRTL_FIELD_ANY_LENGTH, &fmax) ||
        trtl_field_array(r, &field_descs[F_ASPECT_RATIOS], 0, TRTL_FIELD_ANY_LENGTH, &far) ||
        trtl_field_array(r, &field_descs[F_VARIANCE], 0, TRTL_FIELD_ANY_LENGTH, &fvar))
        return 1;
    p->n_min = fmin->length;
    p->n_max = fmax ? fmax->length : 0;
    p->n_ar = far ? far->length : 0;
    if (p->n_max != 0 && p->n_max != p->n_min)
        return trtl_field_fail(r, "field 'maxSize' must be empty or hold one value per minSize (%d), got %d",
                               (int)p->n_min, (int)p->n_max);
    relink(h);
    memcpy(p->min_size, fmin->data, sizeof(float) * (size_t)p->n_min);
    if (p->n_max)
        memcpy(p->max_size, fmax->data, sizeof(float) * (size_t)p->n_max);
    if (p->n_ar)
        memcpy(p->ar, far->data, sizeof(float) * (size_t)p->n_ar);
    for (int32_t i = 0; i < p->n_min; i++) {
        if (!(p->min_size[i] > 0.0f) || !isfinite(p->min_size[i]))
            return trtl_field_fail(r, "field 'minSize': value %d (%g) must be positive and finite", (int)i,
                                   p->min_size[i]);
        if (p->n_max && (!(p->max_size[i] > p->min_size[i]) || !isfinite(p->max_size[i])))
            return trtl_field_fail(r, "field 'maxSize': value %d (%g) must be finite and greater than minSize %g",
                                   (int)i, p->max_size[i], p->min_size[i]);
    }
    if (fvar && fvar->length == 1) {
        for (int i = 0; i < 4; i++)
            p->variance[i] = *(const float *)fvar->data;
    } else if (fvar && fvar->length == 4) {
        memcpy(p->variance, fvar->data, sizeof p->variance);
    } else if (fvar) {
        return trtl_field_fail(r, "field 'variance' must hold 4 values (or 1 for all four), got %d", (int)fvar->length);
    }
    if (trtl_field_scalar(r, &field_descs[F_FLIP], &p->flip) ||
        trtl_field_scalar(r, &field_descs[F_CLIP], &p->clip) ||
        trtl_field_scalar(r, &field_descs[F_IMG_H], &p->img_h) ||
        trtl_field_scalar(r, &field_descs[F_IMG_W], &p->img_w) ||
        trtl_field_scalar(r, &field_descs[F_STEP_H], &p->step_h) ||
        trtl_field_scalar(r, &field_descs[F_STEP_W], &p->step_w) ||
        trtl_field_scalar(r, &field_descs[F_OFFSET], &p->offset))
        return 1;
    if (p->img_h < 0 || p->img_w < 0)
        return trtl_field_fail(r, "fields 'imgH' (%d) and 'imgW' (%d) must be >= 0 (0: from the image input)",
                               (int)p->img_h, (int)p->img_w);
    if (!(p->step_h >= 0.0f) || !(p->step_w >= 0.0f) || !isfinite(p->step_h) || !isfinite(p->step_w))
        return trtl_field_fail(r, "fields 'stepH' (%g) and 'stepW' (%g) must be >= 0 (0: image size / feature map "
                               "size)", p->step_h, p->step_w);
    if (!isfinite(p->offset))
        return trtl_field_fail(r, "field 'offset' must be finite");

    p->ratios[0] = 1.0f;
    p->n_ratios = 1;
    for (int32_t i = 0; i < p->n_ar; i++) {
        float a = p->ar[i];
        if (!(a > 0.0f) || !isfinite(a))
            return trtl_field_fail(r, "field 'aspectRatios': value %d (%g) must be positive and finite", (int)i, a);
        int seen = 0;
        for (int32_t j = 0; j < p->n_ratios; j++)
            seen |= fabsf(a - p->ratios[j]) < 1e-6f;
        if (seen)
            continue;
        p->ratios[p->n_ratios++] = a;
        if (p->flip)
            p->ratios[p->n_ratios++] = 1.0f / a;
    }

    trtl_builtin_field(h, &field_descs[F_MIN_SIZE], p->min_size, p->n_min);
    trtl_builtin_field(h, &field_descs[F_MAX_SIZE], p->max_size, p->n_max);
    trtl_builtin_field(h, &field_descs[F_ASPECT_RATIOS], p->ar, p->n_ar);
    trtl_builtin_field(h, &field_descs[F_FLIP], &p->flip, 1);
    trtl_builtin_field(h, &field_descs[F_CLIP], &p->clip, 1);
    trtl_builtin_field(h, &field_descs[F_VARIANCE], p->variance, 4);
    trtl_builtin_field(h, &field_descs[F_IMG_H], &p->img_h, 1);
    trtl_builtin_field(h, &field_descs[F_IMG_W], &p->img_w, 1);
    trtl_builtin_field(h, &field_descs[F_STEP_H], &p->step_h, 1);
    trtl_builtin_field(h, &field_descs[F_STEP_W], &p->step_w, 1);
    trtl_builtin_field(h, &field_descs[F_OFFSET], &p->offset, 1);
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const prior_box *p = (const prior_box *)self;
    if (trtl_check_output_index(index, 1, msg, msg_len) || trtl_check_inputs(in, nb_in, input_specs, 2, msg, msg_len))
        return 1;
    const trtl_dims *fd = &in[0].dims;
    int64_t h = fd->d[fd->nb_dims - 2], w = fd->d[fd->nb_dims - 1];
    memset(&out->dims, 0, sizeof out->dims);
    out->dims.nb_dims = 4;
    out->dims.d[0] = 1;
    out->dims.d[1] = 2;
    out->dims.d[2] = (h < 0 || w < 0) ? -1 : h * w * n_priors(p) * 4;
    out->dims.d[3] = 1;
    out->dtype = TRTL_FLOAT;
    return 0;
}

static void put_box(float *o, float cx, float cy, float bw, float bh, float img_w, float img_h, int clip)
{
    o[0] = (cx - bw / 2.0f) / img_w;
    o[1] = (cy - bh / 2.0f) / img_h;
    o[2] = (cx + bw / 2.0f) / img_w;
    o[3] = (cy + bh / 2.0f) / img_h;
    if (clip)
        for (int i = 0; i < 4; i++)
            o[i] = fminf(fmaxf(o[i], 0.0f), 1.0f);
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    const prior_box *p = (const prior_box *)self;
    (void)inputs;
    (void)workspace;
    if (trtl_check_inputs(in_desc, nb_in, input_specs, 2, msg, msg_len))
        return 1;
    if (nb_out != 1 || out_desc[0].dtype != TRTL_FLOAT)
        return trtl_plugin_fail(msg, msg_len, "expected one float32 output");
    const trtl_dims *fd = &in_desc[0].dims, *id = &in_desc[1].dims;
    const int64_t H = fd->d[fd->nb_dims - 2], W = fd->d[fd->nb_dims - 1];
    const int32_t np = n_priors(p);
    if (trtl_volume_from(&out_desc[0].dims, 0) != 2 * H * W * np * 4)
        return trtl_plugin_fail(msg, msg_len, "output must hold 2 x %lld values", (long long)(H * W * np * 4));
    float img_h = (float)p->img_h, img_w = (float)p->img_w, step_h = p->step_h, step_w = p->step_w;
    if (p->img_h == 0 || p->img_w == 0) {
        img_h = (float)id->d[id->nb_dims - 2];
        img_w = (float)id->d[id->nb_dims - 1];
    }
    if (p->step_h == 0.0f || p->step_w == 0.0f) {
        step_h = img_h / (float)H;
        step_w = img_w / (float)W;
    }
    if (!(img_h > 0.0f) || !(img_w > 0.0f))
        return trtl_plugin_fail(msg, msg_len, "image size %gx%g must be positive", img_h, img_w);
    float *o = outputs[0], *var = o + H * W * np * 4;
    for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++) {
            const float cx = ((float)w + p->offset) * step_w, cy = ((float)h + p->offset) * step_h;
            for (int32_t m = 0; m < p->n_min; m++) {
                const float ms = p->min_size[m];
                put_box(o, cx, cy, ms, ms, img_w, img_h, p->clip);
                o += 4;
                if (p->n_max) {
                    const float s = sqrtf(ms * p->max_size[m]);
                    put_box(o, cx, cy, s, s, img_w, img_h, p->clip);
                    o += 4;
                }
                for (int32_t r = 1; r < p->n_ratios; r++) {
                    const float sr = sqrtf(p->ratios[r]);
                    put_box(o, cx, cy, ms * sr, ms / sr, img_w, img_h, p->clip);
                    o += 4;
                }
            }
        }
    for (int64_t i = 0; i < H * W * np; i++, var += 4)
        memcpy(var, p->variance, sizeof p->variance);
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {
    .vt = &vtable, .size = sizeof(prior_box), .tail = tail, .init = init, .relink = relink};

const trtl_plugin_creator trtl_creator_prior_box = TRTL_BUILTIN_CREATOR("PriorBox_TRT", field_descs, cls);
