/*
 * reorg.c -- Reorg_TRT: YOLOv2's reorg layer with Darknet's semantics (reorg_cpu(..., forward = 0)
 * called with the input's w, h, c, as Darknet's reorg layer and TensorRT's plugin do).
 *
 * Input [N, C, H, W] float32, output [N, C*s*s, H/s, W/s] (H, W divisible by s; C divisible by
 * s*s, which the mapping below needs to stay inside the sample).  The output has the same number
 * of elements per sample, and the mapping is NOT space-to-depth: with C' = C / (s*s),
 *
 *   output flat index  L = (k*H + j)*W + i          k < C, j < H, i < W (the INPUT's dims)
 *   c2 = k % C',  off = k / C',  h2 = j*s + off / s,  w2 = i*s + off % s
 *   out[n][L] = in[n][(c2*(H*s) + h2)*(W*s) + w2]    (the input read as if it were [C', H*s, W*s])
 *
 * The output buffer is then simply read as [C*s*s, H/s, W/s].
 * Field: stride (INT32, default 2, >= 1).
 */
#include "plugins/builtin/common.h"

static const trtl_plugin_field_desc field_descs[] = {
    {"stride", TRTL_PF_INT32, 0},
};

static const trtl_input_spec input_spec = {NULL, 4, 4, "[N, C, H, W]"};

typedef struct reorg {
    trtl_builtin h;
    int32_t s;
} reorg;

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    reorg *g = (reorg *)h;
    g->s = 2;
    trtl_builtin_field(h, &field_descs[0], &g->s, 1);
    if (trtl_field_scalar(r, &field_descs[0], &g->s))
        return 1;
    if (g->s < 1 || g->s > 4096)
        return trtl_field_fail(r, "field 'stride' must be between 1 and 4096, got %d", (int)g->s);
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const int64_t s = ((const reorg *)self)->s;
    if (trtl_check_single_io(index, in, nb_in, &input_spec, msg, msg_len))
        return 1;
    const trtl_dims *d = &in[0].dims;
    if ((d->d[2] >= 0 && d->d[2] % s) || (d->d[3] >= 0 && d->d[3] % s))
        return trtl_plugin_fail(msg, msg_len, "input H x W = %lld x %lld is not divisible by field 'stride' = %lld",
                                (long long)d->d[2], (long long)d->d[3], (long long)s);
    if (d->d[1] >= 0 && d->d[1] % (s * s))
        return trtl_plugin_fail(msg, msg_len, "input channels C = %lld must be divisible by stride^2 = %lld (field "
                                "'stride' = %lld; Darknet's reorg mapping needs it)", (long long)d->d[1],
                                (long long)(s * s), (long long)s);
    out->dtype = TRTL_FLOAT;
    out->dims.nb_dims = 4;
    out->dims.d[0] = d->d[0];
    out->dims.d[1] = d->d[1] < 0 ? -1 : d->d[1] * s * s;
    out->dims.d[2] = d->d[2] < 0 ? -1 : d->d[2] / s;
    out->dims.d[3] = d->d[3] < 0 ? -1 : d->d[3] / s;
    return 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs,
                   int32_t nb_in, const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out,
                   void *workspace, char *msg, size_t msg_len)
{
    (void)out_desc;
    (void)workspace;
    const int64_t s = ((const reorg *)self)->s;
    trtl_plugin_tensor_desc want;
    if (trtl_check_output_count(nb_out, 1, msg, msg_len) || output_desc(self, 0, in_desc, nb_in, &want, msg, msg_len))
        return 1;
    const trtl_dims *d = &in_desc[0].dims;
    const int64_t N = d->d[0], C = d->d[1], H = d->d[2], W = d->d[3], C2 = C / (s * s);
    const float *x = inputs[0];
    float *y = outputs[0];
    for (int64_t n = 0; n < N; n++) {
        const float *xn = x + n * C * H * W;
        float *yn = y + n * C * H * W;
        for (int64_t k = 0; k < C; k++) {
            const int64_t c2 = k % C2, off = k / C2, dy = off / s, dx = off % s;
            for (int64_t j = 0; j < H; j++) {
                const float *src = xn + (c2 * H * s + j * s + dy) * W * s + dx;
                for (int64_t i = 0; i < W; i++)
                    *yn++ = src[i * s];
            }
        }
    }
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(trtl_builtin_one_output, output_desc, NULL, enqueue);
static const trtl_builtin_class cls = {.vt = &vtable, .size = sizeof(reorg), .first_of_many = 1, .init = init};

const trtl_plugin_creator trtl_creator_reorg = TRTL_BUILTIN_CREATOR("Reorg_TRT", field_descs, cls);
