/*
 * grid_anchor.c -- GridAnchor_TRT: the anchors of TensorFlow's object-detection SSD (no inputs).
 *
 * Semantics (those of TensorRT's gridAnchorPlugin, square feature maps):
 *   layer k (0 <= k < numLayers) is a square grid of side F = featureMapShapes[k];
 *   scale s_k = minSize + (maxSize - minSize) * k / (numLayers - 1)   (s_0 = minSize if numLayers == 1);
 *   layer 0 places the first three aspect ratios with scales (0.1, s_0, s_0) (TF's
 *     "reduce_boxes_in_lowest_layer");
 *   layer k > 0 places every aspect ratio at scale s_k, then ratio 1.0 at sqrt(s_k * s_{k+1}),
 *     with s_numLayers = 1.0;
 *   a prior of scale s and ratio a is w = s * sqrt(a) wide and h = s / sqrt(a) high, centred on
 *     cell (y, x) at ((y + 0.5) / F, (x + 0.5) / F) -- coordinates normalized to the image.
 *
 * Output k has full dims [1, 2, F*F*numPriors_k*4, 1] (float32): row 0 holds, cell by cell
 * (row-major) and prior by prior, (xmin, ymin, xmax, ymax) = (cx - w/2, cy - h/2, cx + w/2, cy + h/2);
 * row 1 repeats the four variances.  The anchors do not depend on the batch, so the leading dim
 * is 1: in an implicit-batch network the outputs read (2, F*F*numPriors_k*4, 1), TensorRT's shape.
 */
#include <math.h>
#include <string.h>

#include "plugins/builtin/common.h"

enum { F_MIN_SIZE, F_MAX_SIZE, F_ASPECT_RATIOS, F_FEATURE_MAP_SHAPES, F_VARIANCE, F_NUM_LAYERS, F_COUNT };

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_MIN_SIZE] = {"minSize", TRTL_PF_FLOAT32, 0},
    [F_MAX_SIZE] = {"maxSize", TRTL_PF_FLOAT32, 0},
    [F_ASPECT_RATIOS] = {"aspectRatios", TRTL_PF_FLOAT32, 1},
    [F_FEATURE_MAP_SHAPES] = {"featureMapShapes", TRTL_PF_INT32, 1},
    [F_VARIANCE] = {"variance", TRTL_PF_FLOAT32, 1},
    [F_NUM_LAYERS] = {"numLayers", TRTL_PF_INT32, 0},
};

#define FIRST_LAYER_RATIOS 3 /* layer 0 uses this many of the aspect ratios */

typedef struct grid_anchor {
    trtl_builtin h;
    float min_size, max_size, variance[4];
    int32_t num_layers, n_ratios;
    float *ratios;  /* n_ratios, in the tail */
    int32_t *fmap;  /* num_layers, in the tail after ratios */
} grid_anchor;

static void relink(trtl_builtin *h)
{
    grid_anchor *g = (grid_anchor *)h;
    g->ratios = (float *)(g + 1);
    g->fmap = (int32_t *)(g->ratios + g->n_ratios);
}

static size_t tail(const trtl_plugin_fields *fs)
{
    return sizeof(float) * (size_t)trtl_field_length(fs, "aspectRatios") +
           sizeof(int32_t) * (size_t)trtl_field_length(fs, "featureMapShapes");
}

static int32_t n_priors(const grid_anchor *g, int32_t layer)
{
    if (layer == 0)
        return g->n_ratios < FIRST_LAYER_RATIOS ? g->n_ratios : FIRST_LAYER_RATIOS;
    return g->n_ratios + 1;
}

static double layer_scale(const grid_anchor *g, int32_t k)
{
    if (k >= g->num_layers)
        return 1.0;
    if (g->num_layers == 1)
        return g->min_size;
    return (double)g->min_size + ((double)g->max_size - g->min_size) * k / (g->num_layers - 1);
}

/* Width and height of prior p of layer k. */
static void prior_size(const grid_anchor *g, int32_t k, int32_t p, double *w, double *h)
{
    double s, a;
    if (k == 0) {
        s = p == 0 ? 0.1 : layer_scale(g, 0);
        a = g->ratios[p];
    } else if (p < g->n_ratios) {
        s = layer_scale(g, k);
        a = g->ratios[p];
    } else {
        s = sqrt(layer_scale(g, k) * layer_scale(g, k + 1));
        a = 1.0;
    }
    *w = s * sqrt(a);
    *h = s / sqrt(a);
}

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    grid_anchor *g = (grid_anchor *)h;
    const trtl_plugin_field *fv, *fr, *ff;
    g->min_size = 0.2f; /* TensorRT's defaults */
    g->max_size = 0.95f;
    g->num_layers = 6;
    if (trtl_field_scalar(r, &field_descs[F_MIN_SIZE], &g->min_size) ||
        trtl_field_scalar(r, &field_descs[F_MAX_SIZE], &g->max_size) ||
        trtl_field_scalar(r, &field_descs[F_NUM_LAYERS], &g->num_layers))
        return 1;
    if (g->num_layers < 1 || g->num_layers > 64)
        return trtl_field_fail(r, "field 'numLayers' must be in [1, 64], got %d", (int)g->num_layers);
    if (!(g->min_size > 0.0f) || !isfinite(g->min_size) || !(g->max_size > 0.0f) || !isfinite(g->max_size))
        return trtl_field_fail(r, "fields 'minSize' (%g) and 'maxSize' (%g) must be positive and finite", g->min_size,
                               g->max_size);
    if (trtl_field_array(r, &field_descs[F_VARIANCE], 4, 4, &fv) ||
        trtl_field_array(r, &field_descs[F_ASPECT_RATIOS], 1, TRTL_FIELD_ANY_LENGTH, &fr))
        return 1;
    const float *ratios = fr->data;
    for (int32_t i = 0; i < fr->length; i++)
        if (!(ratios[i] > 0.0f) || !isfinite(ratios[i]))
            return trtl_field_fail(r, "field 'aspectRatios': value %d (%g) must be positive and finite", (int)i,
                                   ratios[i]);
    if (trtl_field_array(r, &field_descs[F_FEATURE_MAP_SHAPES], 0, TRTL_FIELD_ANY_LENGTH, &ff))
        return 1;
    if (ff->length != g->num_layers)
        return trtl_field_fail(r, "field 'featureMapShapes' must hold one size per layer (numLayers = %d), got %d "
                               "values", (int)g->num_layers, (int)ff->length);
    memcpy(g->variance, fv->data, sizeof g->variance);
    g->n_ratios = fr->length;
    relink(h);
    memcpy(g->ratios, ratios, sizeof(float) * (size_t)g->n_ratios);
    memcpy(g->fmap, ff->data, sizeof(int32_t) * (size_t)g->num_layers);
    for (int32_t k = 0; k < g->num_layers; k++)
        if (g->fmap[k] < 1 || g->fmap[k] > 65536)
            return trtl_field_fail(r, "field 'featureMapShapes': layer %d has size %d (must be in [1, 65536])", (int)k,
                                   (int)g->fmap[k]);
    trtl_builtin_field(h, &field_descs[F_MIN_SIZE], &g->min_size, 1);
    trtl_builtin_field(h, &field_descs[F_MAX_SIZE], &g->max_size, 1);
    trtl_builtin_field(h, &field_descs[F_ASPECT_RATIOS], g->ratios, g->n_ratios);
    trtl_builtin_field(h, &field_descs[F_FEATURE_MAP_SHAPES], g->fmap, g->num_layers);
    trtl_builtin_field(h, &field_descs[F_VARIANCE], g->variance, 4);
    trtl_builtin_field(h, &field_descs[F_NUM_LAYERS], &g->num_layers, 1);
    return 0;
}

static int32_t num_outputs(const trtl_plugin *self) { return ((const grid_anchor *)self)->num_layers; }

static int64_t layer_values(const grid_anchor *g, int32_t k)
{
    return (int64_t)g->fmap[k] * g->fmap[k] * n_priors(g, k) * 4;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const grid_anchor *g = (const grid_anchor *)self;
    if (trtl_check_inputs(in, nb_in, NULL, 0, msg, msg_len) ||
        trtl_check_output_index(index, g->num_layers, msg, msg_len))
        return 1;
    memset(&out->dims, 0, sizeof out->dims);
    out->dims.nb_dims = 4;
    out->dims.d[0] = 1;
    out->dims.d[1] = 2;
    out->dims.d[2] = layer_values(g, index);
    out->dims.d[3] = 1;
    out->dtype = TRTL_FLOAT;
    return 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    const grid_anchor *g = (const grid_anchor *)self;
    (void)in_desc;
    (void)inputs;
    (void)nb_in;
    (void)workspace;
    if (trtl_check_output_count(nb_out, g->num_layers, msg, msg_len))
        return 1;
    for (int32_t k = 0; k < g->num_layers; k++) {
        if (trtl_volume_from(&out_desc[k].dims, 0) != 2 * layer_values(g, k) || out_desc[k].dtype != TRTL_FLOAT)
            return trtl_plugin_fail(msg, msg_len, "output %d must hold 2 x %lld float32 values", (int)k,
                                    (long long)layer_values(g, k));
        float *box = outputs[k], *var = box + layer_values(g, k);
        const int32_t F = g->fmap[k], np = n_priors(g, k);
        const double stride = 1.0 / F;
        for (int32_t y = 0; y < F; y++)
            for (int32_t x = 0; x < F; x++)
                for (int32_t p = 0; p < np; p++) {
                    double w, h, cy = (y + 0.5) * stride, cx = (x + 0.5) * stride;
                    prior_size(g, k, p, &w, &h);
                    box[0] = (float)(cx - 0.5 * w);
                    box[1] = (float)(cy - 0.5 * h);
                    box[2] = (float)(cx + 0.5 * w);
                    box[3] = (float)(cy + 0.5 * h);
                    box += 4;
                    memcpy(var, g->variance, sizeof g->variance);
                    var += 4;
                }
    }
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(num_outputs, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {
    .vt = &vtable, .size = sizeof(grid_anchor), .tail = tail, .init = init, .relink = relink};

const trtl_plugin_creator trtl_creator_grid_anchor = TRTL_BUILTIN_CREATOR("GridAnchor_TRT", field_descs, cls);
