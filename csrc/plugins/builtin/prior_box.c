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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

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

typedef struct prior_box {
    trtl_plugin base;
    int32_t n_min, n_max, n_ar; /* field lengths */
    float *min_size, *max_size, *ar; /* the fields as given (one allocation) */
    int32_t flip, clip, img_h, img_w;
    float step_h, step_w, offset, variance[4];
    int32_t n_ratios; /* expanded list: 1, then the new ratios (and their reciprocals) */
    float *ratios;
    trtl_plugin_field fields[F_COUNT];
} prior_box;

static const trtl_plugin_vtable vtable;

static const trtl_plugin_field *find_field(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; fs && i < fs->nb_fields; i++)
        if (fs->fields[i].name && strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

/* One value of a scalar field (INT32 or FLOAT32, 4 bytes), left unchanged when absent. */
static int read_scalar(const trtl_plugin_fields *fs, const char *name, void *v, char *msg, size_t n)
{
    const trtl_plugin_field *f = find_field(fs, name);
    if (!f)
        return 0;
    if (f->length != 1) {
        snprintf(msg, n, "field '%s' must hold exactly one value, got %d", name, (int)f->length);
        return 1;
    }
    memcpy(v, f->data, 4);
    return 0;
}

static int32_t n_priors(const prior_box *p)
{
    return p->n_min * (p->n_ratios + (p->n_max > 0 ? 1 : 0));
}

static void destroy(trtl_plugin *self)
{
    prior_box *p = (prior_box *)self;
    if (!p)
        return;
    free(p->min_size);
    free(p->ratios);
    free(p);
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    prior_box *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    p->base.vt = &vtable;
    p->base.creator = self;
    /* Caffe's defaults */
    p->flip = 1;
    p->offset = 0.5f;
    for (int i = 0; i < 4; i++)
        p->variance[i] = 0.1f;

    const trtl_plugin_field *fmin = find_field(fields, "minSize"), *fmax = find_field(fields, "maxSize"),
                            *far = find_field(fields, "aspectRatios"), *fvar = find_field(fields, "variance");
    if (!fmin || fmin->length < 1) {
        snprintf(msg, msg_len, "field 'minSize' must hold at least one value");
        goto fail;
    }
    p->n_min = fmin->length;
    p->n_max = fmax ? fmax->length : 0;
    p->n_ar = far ? far->length : 0;
    if (p->n_max != 0 && p->n_max != p->n_min) {
        snprintf(msg, msg_len, "field 'maxSize' must be empty or hold one value per minSize (%d), got %d",
                 (int)p->n_min, (int)p->n_max);
        goto fail;
    }
    /* min sizes, max sizes and aspect ratios in one block; the expanded ratios in another */
    p->min_size = malloc(sizeof(float) * (size_t)(p->n_min + p->n_max + p->n_ar));
    p->ratios = malloc(sizeof(float) * (size_t)(1 + 2 * p->n_ar));
    if (!p->min_size || !p->ratios) {
        snprintf(msg, msg_len, "out of memory");
        goto fail;
    }
    p->max_size = p->min_size + p->n_min;
    p->ar = p->max_size + p->n_max;
    memcpy(p->min_size, fmin->data, sizeof(float) * (size_t)p->n_min);
    if (p->n_max)
        memcpy(p->max_size, fmax->data, sizeof(float) * (size_t)p->n_max);
    if (p->n_ar)
        memcpy(p->ar, far->data, sizeof(float) * (size_t)p->n_ar);
    for (int32_t i = 0; i < p->n_min; i++) {
        if (!(p->min_size[i] > 0.0f) || !isfinite(p->min_size[i])) {
            snprintf(msg, msg_len, "field 'minSize': value %d (%g) must be positive and finite", (int)i, p->min_size[i]);
            goto fail;
        }
        if (p->n_max && (!(p->max_size[i] > p->min_size[i]) || !isfinite(p->max_size[i]))) {
            snprintf(msg, msg_len, "field 'maxSize': value %d (%g) must be finite and greater than minSize %g", (int)i,
                     p->max_size[i], p->min_size[i]);
            goto fail;
        }
    }
    if (fvar) {
        if (fvar->length == 1) {
            for (int i = 0; i < 4; i++)
                p->variance[i] = *(const float *)fvar->data;
        } else if (fvar->length == 4) {
            memcpy(p->variance, fvar->data, sizeof p->variance);
        } else {
            snprintf(msg, msg_len, "field 'variance' must hold 4 values (or 1 for all four), got %d", (int)fvar->length);
            goto fail;
        }
    }
    if (read_scalar(fields, "flip", &p->flip, msg, msg_len) || read_scalar(fields, "clip", &p->clip, msg, msg_len) ||
        read_scalar(fields, "imgH", &p->img_h, msg, msg_len) || read_scalar(fields, "imgW", &p->img_w, msg, msg_len) ||
        read_scalar(fields, "stepH", &p->step_h, msg, msg_len) ||
        read_scalar(fields, "stepW", &p->step_w, msg, msg_len) ||
        read_scalar(fields, "offset", &p->offset, msg, msg_len))
        goto fail;
    if (p->img_h < 0 || p->img_w < 0) {
        snprintf(msg, msg_len, "fields 'imgH' (%d) and 'imgW' (%d) must be >= 0 (0: from the image input)",
                 (int)p->img_h, (int)p->img_w);
        goto fail;
    }
    if (!(p->step_h >= 0.0f) || !(p->step_w >= 0.0f) || !isfinite(p->step_h) || !isfinite(p->step_w)) {
        snprintf(msg, msg_len, "fields 'stepH' (%g) and 'stepW' (%g) must be >= 0 (0: image size / feature map size)",
                 p->step_h, p->step_w);
        goto fail;
    }
    if (!isfinite(p->offset)) {
        snprintf(msg, msg_len, "field 'offset' must be finite");
        goto fail;
    }

    p->ratios[0] = 1.0f;
    p->n_ratios = 1;
    for (int32_t i = 0; i < p->n_ar; i++) {
        float a = p->ar[i];
        if (!(a > 0.0f) || !isfinite(a)) {
            snprintf(msg, msg_len, "field 'aspectRatios': value %d (%g) must be positive and finite", (int)i, a);
            goto fail;
        }
        int seen = 0;
        for (int32_t j = 0; j < p->n_ratios; j++)
            seen |= fabsf(a - p->ratios[j]) < 1e-6f;
        if (seen)
            continue;
        p->ratios[p->n_ratios++] = a;
        if (p->flip)
            p->ratios[p->n_ratios++] = 1.0f / a;
    }

    p->fields[F_MIN_SIZE] = (trtl_plugin_field){"minSize", p->min_size, TRTL_PF_FLOAT32, p->n_min};
    p->fields[F_MAX_SIZE] = (trtl_plugin_field){"maxSize", p->max_size, TRTL_PF_FLOAT32, p->n_max};
    p->fields[F_ASPECT_RATIOS] = (trtl_plugin_field){"aspectRatios", p->ar, TRTL_PF_FLOAT32, p->n_ar};
    p->fields[F_FLIP] = (trtl_plugin_field){"flip", &p->flip, TRTL_PF_INT32, 1};
    p->fields[F_CLIP] = (trtl_plugin_field){"clip", &p->clip, TRTL_PF_INT32, 1};
    p->fields[F_VARIANCE] = (trtl_plugin_field){"variance", p->variance, TRTL_PF_FLOAT32, 4};
    p->fields[F_IMG_H] = (trtl_plugin_field){"imgH", &p->img_h, TRTL_PF_INT32, 1};
    p->fields[F_IMG_W] = (trtl_plugin_field){"imgW", &p->img_w, TRTL_PF_INT32, 1};
    p->fields[F_STEP_H] = (trtl_plugin_field){"stepH", &p->step_h, TRTL_PF_FLOAT32, 1};
    p->fields[F_STEP_W] = (trtl_plugin_field){"stepW", &p->step_w, TRTL_PF_FLOAT32, 1};
    p->fields[F_OFFSET] = (trtl_plugin_field){"offset", &p->offset, TRTL_PF_FLOAT32, 1};
    return &p->base;
fail:
    destroy(&p->base);
    return NULL;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

/* Checks the two inputs (float32, rank >= 3: H and W are the last two dims). */
static int check_inputs(const trtl_plugin_tensor_desc *in, int32_t nb_in, char *msg, size_t msg_len)
{
    static const char *const what[2] = {"feature map", "image"};
    if (nb_in != 2) {
        snprintf(msg, msg_len, "PriorBox_TRT takes 2 inputs (feature map, image), got %d", (int)nb_in);
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        if (in[i].dtype != TRTL_FLOAT) {
            snprintf(msg, msg_len, "input %d (%s) must be float32", i, what[i]);
            return 1;
        }
        if (in[i].dims.nb_dims < 3) {
            snprintf(msg, msg_len, "input %d (%s) must be [N, C, H, W], got rank %d", i, what[i],
                     (int)in[i].dims.nb_dims);
            return 1;
        }
    }
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const prior_box *p = (const prior_box *)self;
    if (index != 0) {
        snprintf(msg, msg_len, "output %d does not exist (PriorBox_TRT has one)", (int)index);
        return 1;
    }
    if (check_inputs(in, nb_in, msg, msg_len))
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
    if (check_inputs(in_desc, nb_in, msg, msg_len))
        return 1;
    if (nb_out != 1 || out_desc[0].dtype != TRTL_FLOAT) {
        snprintf(msg, msg_len, "expected one float32 output");
        return 1;
    }
    const trtl_dims *fd = &in_desc[0].dims, *id = &in_desc[1].dims;
    const int64_t H = fd->d[fd->nb_dims - 2], W = fd->d[fd->nb_dims - 1];
    const int32_t np = n_priors(p);
    int64_t vol = 1;
    for (int32_t i = 0; i < out_desc[0].dims.nb_dims; i++)
        vol *= out_desc[0].dims.d[i];
    if (vol != 2 * H * W * np * 4) {
        snprintf(msg, msg_len, "output must hold 2 x %lld values", (long long)(H * W * np * 4));
        return 1;
    }
    float img_h = (float)p->img_h, img_w = (float)p->img_w, step_h = p->step_h, step_w = p->step_w;
    if (p->img_h == 0 || p->img_w == 0) {
        img_h = (float)id->d[id->nb_dims - 2];
        img_w = (float)id->d[id->nb_dims - 1];
    }
    if (p->step_h == 0.0f || p->step_w == 0.0f) {
        step_h = img_h / (float)H;
        step_w = img_w / (float)W;
    }
    if (!(img_h > 0.0f) || !(img_w > 0.0f)) {
        snprintf(msg, msg_len, "image size %gx%g must be positive", img_h, img_w);
        return 1;
    }
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

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    const prior_box *p = (const prior_box *)self;
    out->nb_fields = F_COUNT;
    out->fields = p->fields;
    return 0;
}

/* A clone is the instance recreated from its own fields. */
static trtl_plugin *clone(const trtl_plugin *self)
{
    const prior_box *p = (const prior_box *)self;
    char msg[256];
    trtl_plugin_fields fs = {F_COUNT, p->fields};
    return create(self->creator, "", &fs, msg, sizeof msg);
}

static const trtl_plugin_vtable vtable = {
    .struct_size = sizeof(trtl_plugin_vtable),
    .abi_version = TRTL_PLUGIN_ABI_VERSION,
    .num_outputs = num_outputs,
    .output_desc = output_desc,
    .workspace_size = NULL,
    .enqueue = enqueue,
    .get_fields = get_fields,
    .clone = clone,
    .destroy = destroy,
};

const trtl_plugin_creator trtl_creator_prior_box = {
    sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "PriorBox_TRT", "1", "", field_descs, F_COUNT, create, NULL};
