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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/builtin/builtins.h"

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
    trtl_plugin base;
    float min_size, max_size, variance[4];
    int32_t num_layers, n_ratios;
    float *ratios;        /* n_ratios */
    int32_t *fmap;        /* num_layers */
    trtl_plugin_field fields[F_COUNT];
} grid_anchor;

static const trtl_plugin_vtable vtable;

static const trtl_plugin_field *find_field(const trtl_plugin_fields *fs, const char *name)
{
    for (int32_t i = 0; fs && i < fs->nb_fields; i++)
        if (fs->fields[i].name && strcmp(fs->fields[i].name, name) == 0)
            return &fs->fields[i];
    return NULL;
}

/* A required field (the registry checks presence; this guards direct calls). */
static const trtl_plugin_field *need_field(const trtl_plugin_fields *fs, const char *name, char *msg, size_t n)
{
    const trtl_plugin_field *f = find_field(fs, name);
    if (!f)
        snprintf(msg, n, "required field '%s' is missing", name);
    return f;
}

/* One FLOAT32 value of an optional field (left unchanged when absent). */
static int read_f32(const trtl_plugin_fields *fs, const char *name, float *v, char *msg, size_t n)
{
    const trtl_plugin_field *f = find_field(fs, name);
    if (!f)
        return 0;
    if (f->length != 1) {
        snprintf(msg, n, "field '%s' must hold exactly one FLOAT32 value, got %d", name, (int)f->length);
        return 1;
    }
    *v = *(const float *)f->data;
    return 0;
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

static void destroy(trtl_plugin *self)
{
    grid_anchor *g = (grid_anchor *)self;
    if (!g)
        return;
    free(g->ratios);
    free(g->fmap);
    free(g);
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    grid_anchor *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    g->base.vt = &vtable;
    g->base.creator = self;
    g->min_size = 0.2f; /* TensorRT's defaults */
    g->max_size = 0.95f;
    g->num_layers = 6;
    if (read_f32(fields, "minSize", &g->min_size, msg, msg_len) || read_f32(fields, "maxSize", &g->max_size, msg, msg_len))
        goto fail;
    const trtl_plugin_field *f = find_field(fields, "numLayers");
    if (f) {
        if (f->length != 1) {
            snprintf(msg, msg_len, "field 'numLayers' must hold exactly one INT32 value, got %d", (int)f->length);
            goto fail;
        }
        g->num_layers = *(const int32_t *)f->data;
    }
    if (g->num_layers < 1 || g->num_layers > 64) {
        snprintf(msg, msg_len, "field 'numLayers' must be in [1, 64], got %d", (int)g->num_layers);
        goto fail;
    }
    if (!(g->min_size > 0.0f) || !isfinite(g->min_size) || !(g->max_size > 0.0f) || !isfinite(g->max_size)) {
        snprintf(msg, msg_len, "fields 'minSize' (%g) and 'maxSize' (%g) must be positive and finite", g->min_size,
                 g->max_size);
        goto fail;
    }

    if (!(f = need_field(fields, "variance", msg, msg_len)))
        goto fail;
    if (f->length != 4) {
        snprintf(msg, msg_len, "field 'variance' must hold 4 FLOAT32 values, got %d", (int)f->length);
        goto fail;
    }
    memcpy(g->variance, f->data, sizeof g->variance);

    if (!(f = need_field(fields, "aspectRatios", msg, msg_len)))
        goto fail;
    if (f->length < 1) {
        snprintf(msg, msg_len, "field 'aspectRatios' must hold at least one value");
        goto fail;
    }
    g->n_ratios = f->length;
    g->ratios = malloc(sizeof(float) * (size_t)g->n_ratios);
    if (!g->ratios) {
        snprintf(msg, msg_len, "out of memory");
        goto fail;
    }
    memcpy(g->ratios, f->data, sizeof(float) * (size_t)g->n_ratios);
    for (int32_t i = 0; i < g->n_ratios; i++)
        if (!(g->ratios[i] > 0.0f) || !isfinite(g->ratios[i])) {
            snprintf(msg, msg_len, "field 'aspectRatios': value %d (%g) must be positive and finite", (int)i,
                     g->ratios[i]);
            goto fail;
        }

    if (!(f = need_field(fields, "featureMapShapes", msg, msg_len)))
        goto fail;
    if (f->length != g->num_layers) {
        snprintf(msg, msg_len, "field 'featureMapShapes' must hold one size per layer (numLayers = %d), got %d values",
                 (int)g->num_layers, (int)f->length);
        goto fail;
    }
    g->fmap = malloc(sizeof(int32_t) * (size_t)g->num_layers);
    if (!g->fmap) {
        snprintf(msg, msg_len, "out of memory");
        goto fail;
    }
    memcpy(g->fmap, f->data, sizeof(int32_t) * (size_t)g->num_layers);
    for (int32_t k = 0; k < g->num_layers; k++)
        if (g->fmap[k] < 1 || g->fmap[k] > 65536) {
            snprintf(msg, msg_len, "field 'featureMapShapes': layer %d has size %d (must be in [1, 65536])", (int)k,
                     (int)g->fmap[k]);
            goto fail;
        }

    g->fields[F_MIN_SIZE] = (trtl_plugin_field){"minSize", &g->min_size, TRTL_PF_FLOAT32, 1};
    g->fields[F_MAX_SIZE] = (trtl_plugin_field){"maxSize", &g->max_size, TRTL_PF_FLOAT32, 1};
    g->fields[F_ASPECT_RATIOS] = (trtl_plugin_field){"aspectRatios", g->ratios, TRTL_PF_FLOAT32, g->n_ratios};
    g->fields[F_FEATURE_MAP_SHAPES] = (trtl_plugin_field){"featureMapShapes", g->fmap, TRTL_PF_INT32, g->num_layers};
    g->fields[F_VARIANCE] = (trtl_plugin_field){"variance", g->variance, TRTL_PF_FLOAT32, 4};
    g->fields[F_NUM_LAYERS] = (trtl_plugin_field){"numLayers", &g->num_layers, TRTL_PF_INT32, 1};
    return &g->base;
fail:
    destroy(&g->base);
    return NULL;
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
    (void)in;
    if (nb_in != 0) {
        snprintf(msg, msg_len, "GridAnchor_TRT takes no inputs, got %d", (int)nb_in);
        return 1;
    }
    if (index < 0 || index >= g->num_layers) {
        snprintf(msg, msg_len, "output %d does not exist (numLayers = %d)", (int)index, (int)g->num_layers);
        return 1;
    }
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
    if (nb_out != g->num_layers) {
        snprintf(msg, msg_len, "expected %d outputs, got %d", (int)g->num_layers, (int)nb_out);
        return 1;
    }
    for (int32_t k = 0; k < g->num_layers; k++) {
        int64_t vol = 1;
        for (int32_t i = 0; i < out_desc[k].dims.nb_dims; i++)
            vol *= out_desc[k].dims.d[i];
        if (vol != 2 * layer_values(g, k) || out_desc[k].dtype != TRTL_FLOAT) {
            snprintf(msg, msg_len, "output %d must hold 2 x %lld float32 values", (int)k, (long long)layer_values(g, k));
            return 1;
        }
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

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    const grid_anchor *g = (const grid_anchor *)self;
    out->nb_fields = F_COUNT;
    out->fields = g->fields;
    return 0;
}

/* A clone is the instance recreated from its own fields. */
static trtl_plugin *clone(const trtl_plugin *self)
{
    const grid_anchor *g = (const grid_anchor *)self;
    char msg[256];
    trtl_plugin_fields fs = {F_COUNT, g->fields};
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

const trtl_plugin_creator trtl_creator_grid_anchor = {
    sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, "GridAnchor_TRT", "1", "", field_descs, F_COUNT, create,
    NULL};
