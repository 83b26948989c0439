/*
 * spp.c -- SPP_TRT: spatial pyramid pooling (He et al., 2014).
 *
 * Input [N, C, H, W] of any H x W (dynamic H/W are fine: the output does not depend on them).
 * For each level n of pool_list the map is pooled adaptively to n x n bins, bin i covering rows
 * [floor(i*H/n), ceil((i+1)*H/n)) (columns likewise) -- the bins of torch's adaptive_max_pool2d /
 * adaptive_avg_pool2d, never empty, overlapping when H is not a multiple of n.  Each level is
 * flattened in (C, n, n) order and the levels are concatenated:
 *   output [N, C * sum(n^2), 1, 1]   (trailing 1, 1 so that a fully connected layer can follow)
 * Fields: pool_list (INT32 array, required, each >= 1), pool_type (INT32, 0 max (default),
 * 1 average).  Max pooling propagates NaN.
 */
#include <string.h>

#include "plugins/builtin/common.h"

#define MAX_LEVELS 64
#define MAX_BINS 4096 /* per side */

enum { F_POOL_LIST, F_POOL_TYPE };

static const trtl_plugin_field_desc field_descs[] = {
    [F_POOL_LIST] = {"pool_list", TRTL_PF_INT32, 1},
    [F_POOL_TYPE] = {"pool_type", TRTL_PF_INT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 4, 4, "[N, C, H, W]"};

typedef struct spp {
    trtl_builtin h;
    int32_t nlev, type;
    int32_t levels[MAX_LEVELS];
    int64_t bins; /* sum of n^2 */
} spp;

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    spp *s = (spp *)h;
    const trtl_plugin_field *fl;
    if (trtl_field_array(r, &field_descs[F_POOL_LIST], 1, MAX_LEVELS, &fl))
        return 1;
    s->nlev = fl->length;
    memcpy(s->levels, fl->data, sizeof(int32_t) * (size_t)s->nlev);
    for (int32_t l = 0; l < s->nlev; l++) {
        if (s->levels[l] < 1 || s->levels[l] > MAX_BINS)
            return trtl_field_fail(r, "field 'pool_list'[%d] = %d: every level must be between 1 and %d", (int)l,
                                   (int)s->levels[l], MAX_BINS);
        s->bins += (int64_t)s->levels[l] * s->levels[l];
    }
    if (trtl_field_scalar(r, &field_descs[F_POOL_TYPE], &s->type))
        return 1;
    if (s->type != 0 && s->type != 1)
        return trtl_field_fail(r, "field 'pool_type' must be 0 (max) or 1 (average), got %d", (int)s->type);
    trtl_builtin_field(h, &field_descs[F_POOL_LIST], s->levels, s->nlev);
    trtl_builtin_field(h, &field_descs[F_POOL_TYPE], &s->type, 1);
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const spp *s = (const spp *)self;
    if (trtl_check_single_io(index, in, nb_in, &input_spec, msg, msg_len))
        return 1;
    const trtl_dims *d = &in[0].dims;
    if (d->d[2] == 0 || d->d[3] == 0)
        return trtl_plugin_fail(msg, msg_len, "input has an empty %lldx%lld map: there is nothing to pool",
                                (long long)d->d[2], (long long)d->d[3]);
    out->dtype = TRTL_FLOAT;
    out->dims.nb_dims = 4;
    out->dims.d[0] = d->d[0];
    out->dims.d[1] = d->d[1] < 0 ? -1 : d->d[1] * s->bins;
    out->dims.d[2] = 1;
    out->dims.d[3] = 1;
    return 0;
}

/* One bin of one (n, c) plane: rows [y0, y1), columns [x0, x1). */
static float pool_bin(const float *plane, int64_t W, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int avg)
{
    if (avg) {
        double sum = 0;
        for (int64_t y = y0; y < y1; y++)
            for (int64_t x = x0; x < x1; x++)
                sum += plane[y * W + x];
        return (float)(sum / (double)((y1 - y0) * (x1 - x0)));
    }
    float m = plane[y0 * W + x0];
    for (int64_t y = y0; y < y1; y++)
        for (int64_t x = x0; x < x1; x++) {
            float v = plane[y * W + x];
            if (v > m || v != v)
                m = v;
        }
    return m;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    const spp *s = (const spp *)self;
    trtl_plugin_tensor_desc want;
    if (trtl_check_output_count(nb_out, 1, msg, msg_len) || output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1], H = d->d[2], W = d->d[3];
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t n = 0; n < N; n++) {
        float *yn = y + n * C * s->bins;
        for (int32_t l = 0; l < s->nlev; l++) {
            const int64_t b = s->levels[l];
            for (int64_t c = 0; c < C; c++) {
                const float *plane = x + (n * C + c) * H * W;
                for (int64_t i = 0; i < b; i++) {
                    int64_t y0 = i * H / b, y1 = ((i + 1) * H + b - 1) / b;
                    for (int64_t j = 0; j < b; j++) {
                        int64_t x0 = j * W / b, x1 = ((j + 1) * W + b - 1) / b;
                        *yn++ = pool_bin(plane, W, y0, y1, x0, x1, s->type == 1);
                    }
                }
            }
        }
    }
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {.vt = &vtable, .size = sizeof(spp), .first_of_many = 1, .init = init};

const trtl_plugin_creator trtl_creator_spp = TRTL_BUILTIN_CREATOR("SPP_TRT", field_descs, cls);
