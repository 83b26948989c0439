/*
 * instance_norm.c -- InstanceNormalization_TRT: per (sample, channel) normalization over the
 * spatial dims (ONNX InstanceNormalization):
 *   y = (x - mean) / sqrt(var + epsilon) * scales[c] + bias[c]
 * with the biased variance (divided by the spatial size), then, as TensorRT 8's plugin does when
 * `relu` is nonzero, a leaky ReLU: y < 0 -> alpha * y.  Input [N, C, spatial...] (rank >= 3),
 * float32, output of the same shape.  Statistics are accumulated in double, two passes.
 * Fields: epsilon (FLOAT32, default 1e-5, >= 0), scales and bias (FLOAT32[C], required; their
 * counts must equal the input's C, checked at build time when C is known, else at run time),
 * relu (INT32, default 0) and alpha (FLOAT32, default 0, finite; 0 is a plain ReLU).
 */
#include <math.h>
#include <string.h>

#include "plugins/builtin/common.h"

enum { F_EPSILON, F_SCALES, F_BIAS, F_RELU, F_ALPHA };

static const trtl_plugin_field_desc field_descs[] = {
    [F_EPSILON] = {"epsilon", TRTL_PF_FLOAT32, 0},
    [F_SCALES] = {"scales", TRTL_PF_FLOAT32, 1},
    [F_BIAS] = {"bias", TRTL_PF_FLOAT32, 1},
    [F_RELU] = {"relu", TRTL_PF_INT32, 0},
    [F_ALPHA] = {"alpha", TRTL_PF_FLOAT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 3, TRTL_MAX_DIMS, "[N, C, spatial...]"};

typedef struct inorm {
    trtl_builtin h;
    float eps;
    int32_t relu; /* nonzero: leaky ReLU with slope alpha after the affine step */
    float alpha;
    int32_t C;
    float *scales, *bias; /* C each, in the tail */
} inorm;

static void relink(trtl_builtin *h)
{
    inorm *n = (inorm *)h;
    n->scales = (float *)(n + 1);
    n->bias = n->scales + n->C;
}

static size_t tail(const trtl_plugin_fields *fs) { return 2 * sizeof(float) * (size_t)trtl_field_length(fs, "scales"); }

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    inorm *n = (inorm *)h;
    const trtl_plugin_field *fs, *fb;
    n->eps = 1e-5f;
    if (trtl_field_scalar(r, &field_descs[F_EPSILON], &n->eps))
        return 1;
    if (!(n->eps >= 0))
        return trtl_field_fail(r, "field 'epsilon' must be >= 0, got %g", (double)n->eps);
    n->relu = 0;
    n->alpha = 0.0f;
    if (trtl_field_scalar(r, &field_descs[F_RELU], &n->relu) || trtl_field_scalar(r, &field_descs[F_ALPHA], &n->alpha))
        return 1;
    if (!isfinite(n->alpha))
        return trtl_field_fail(r, "field 'alpha' must be finite, got %g", (double)n->alpha);
    if (trtl_field_array(r, &field_descs[F_SCALES], 1, TRTL_FIELD_ANY_LENGTH, &fs) ||
        trtl_field_array(r, &field_descs[F_BIAS], 0, TRTL_FIELD_ANY_LENGTH, &fb))
        return 1;
    if (fb->length != fs->length)
        return trtl_field_fail(r, "field 'bias' has %d values but field 'scales' has %d (one per channel each)",
                               (int)fb->length, (int)fs->length);
    n->C = fs->length;
    relink(h);
    memcpy(n->scales, fs->data, sizeof(float) * (size_t)n->C);
    memcpy(n->bias, fb->data, sizeof(float) * (size_t)n->C);
    trtl_builtin_field(h, &field_descs[F_EPSILON], &n->eps, 1);
    trtl_builtin_field(h, &field_descs[F_SCALES], n->scales, n->C);
    trtl_builtin_field(h, &field_descs[F_BIAS], n->bias, n->C);
    trtl_builtin_field(h, &field_descs[F_RELU], &n->relu, 1);
    trtl_builtin_field(h, &field_descs[F_ALPHA], &n->alpha, 1);
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const inorm *n = (const inorm *)self;
    if (trtl_same_shape_desc(index, in, nb_in, &input_spec, out, msg, msg_len))
        return 1;
    if (in[0].dims.d[1] >= 0 && in[0].dims.d[1] != n->C)
        return trtl_plugin_fail(msg, msg_len, "input has %lld channels but fields 'scales' and 'bias' have %d values",
                                (long long)in[0].dims.d[1], (int)n->C);
    return 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    const inorm *in = (const inorm *)self;
    trtl_plugin_tensor_desc want;
    if (trtl_check_output_count(nb_out, 1, msg, msg_len) || output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1];
    int64_t S = 1;
    for (int32_t k = 2; k < d->nb_dims; k++)
        S *= d->d[k];
    if (S == 0)
        return 0;
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t p = 0; p < N * C; p++) {
        const float *xp = x + p * S;
        float *yp = y + p * S;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < S; i++)
            sum += xp[i];
        const double mean = sum / (double)S;
        for (int64_t i = 0; i < S; i++) {
            double t = xp[i] - mean;
            sq += t * t;
        }
        const int64_t c = p % C;
        const double a = in->scales[c] / sqrt(sq / (double)S + in->eps), b = in->bias[c];
        /* (x - mean) first: folding mean into the bias would cancel badly when |mean| >> std. */
        for (int64_t i = 0; i < S; i++)
            yp[i] = (float)((xp[i] - mean) * a + b);
        if (in->relu)
            for (int64_t i = 0; i < S; i++)
                if (yp[i] < 0.0f)
                    yp[i] *= in->alpha;
    }
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {
    .vt = &vtable, .size = sizeof(inorm), .first_of_many = 1, .tail = tail, .init = init, .relink = relink};

const trtl_plugin_creator trtl_creator_instance_norm =
    TRTL_BUILTIN_CREATOR("InstanceNormalization_TRT", field_descs, cls);
