/* Reference convolution: direct loops, double accumulation, 1-3 spatial dims (as 3-D with 1s).  Padding
 * is read as zeros and multiplied like the image (0 * NaN = NaN), as numpy, onnxruntime and the GEMM kernels.
 * PREACT_CONV (passes/fuse_preact.c) reads each image value as act(x * in_scale[c] + in_shift[c]) (the product
 * and sum in double, rounded to float as the scale layer's output, then the activation layer's formula); its
 * padding stays zeros. */
#include "kernels/ref/ref.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

/* PREACT_CONV's input transform (NULL: none). */
typedef struct preact {
    const float *scale, *shift;
    int32_t act;
    float alpha, beta;
} preact;

static double pre_value(const preact *pre, int64_t c, float x)
{
    if (!pre)
        return (double)x;
    double v = (double)x * (pre->scale ? (double)pre->scale[c] : 1.0) + (pre->shift ? (double)pre->shift[c] : 0.0);
    float f = (float)v;
    return (double)(pre->act == TRTL_ACT_NONE ? f : trtl_activation_eval(pre->act, pre->alpha, pre->beta, f));
}

static trtl_status conv_direct(const trtl_kernel_args *a, const preact *pre)
{
    const trtl_conv_params *p = &a->node->p.conv;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    const float *x = (const float *)a->in[0].data, *w = (const float *)p->kernel.values;
    const float *b = p->bias.count ? (const float *)p->bias.values : NULL;
    float *y = (float *)a->out[0].data;
    int nsp = p->kernel_size.nb_dims, off = 3 - nsp;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
            pad[3] = {0, 0, 0};
    for (int i = 0; i < nsp; i++) {
        int64_t post, o;
        in[off + i] = xd->d[2 + i];
        out[off + i] = yd->d[2 + i];
        k[off + i] = p->kernel_size.d[i];
        s[off + i] = p->stride.d[i];
        dl[off + i] = p->dilation.d[i];
        TRTL_TRY(trtl_spatial_out(in[off + i], dl[off + i] * (k[off + i] - 1) + 1, s[off + i], p->pre_padding.d[i],
                                  p->post_padding.d[i], p->padding_mode, 0, &o, &pad[off + i], &post));
    }
    int64_t N = xd->d[0], C = xd->d[1], K = yd->d[1], G = p->num_groups, Cg = C / G, Kg = K / G;
    int64_t in_sp = in[0] * in[1] * in[2], out_sp = out[0] * out[1] * out[2], kvol = k[0] * k[1] * k[2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t kk = 0; kk < K; kk++) {
            int64_t g = kk / Kg;
            for (int64_t od = 0; od < out[0]; od++)
                for (int64_t oh = 0; oh < out[1]; oh++)
                    for (int64_t ow = 0; ow < out[2]; ow++) {
                        double acc = b ? b[kk] : 0.0;
                        for (int64_t c = 0; c < Cg; c++) {
                            const float *xc = x + (n * C + g * Cg + c) * in_sp;
                            const float *wc = w + (kk * Cg + c) * kvol;
                            for (int64_t kd = 0; kd < k[0]; kd++) {
                                int64_t id = od * s[0] - pad[0] + kd * dl[0];
                                int dout = id < 0 || id >= in[0];
                                for (int64_t kh = 0; kh < k[1]; kh++) {
                                    int64_t ih = oh * s[1] - pad[1] + kh * dl[1];
                                    int hout = dout || ih < 0 || ih >= in[1];
                                    for (int64_t kw = 0; kw < k[2]; kw++) {
                                        int64_t iw = ow * s[2] - pad[2] + kw * dl[2];
                                        /* padding reads 0, so a NaN / Inf weight there still gives NaN */
                                        double xv = hout || iw < 0 || iw >= in[2]
                                                        ? 0.0
                                                        : pre_value(pre, g * Cg + c,
                                                                    xc[(id * in[1] + ih) * in[2] + iw]);
                                        acc += xv * (double)wc[(kd * k[1] + kh) * k[2] + kw];
                                    }
                                }
                            }
                        }
                        y[(n * K + kk) * out_sp + (od * out[1] + oh) * out[2] + ow] = (float)acc;
                    }
        }
    return TRTL_OK;
}

trtl_status trtl_ref_convolution(const trtl_kernel_args *a)
{
    return conv_direct(a, NULL);
}

trtl_status trtl_ref_preact_conv(const trtl_kernel_args *a)
{
    const trtl_preact_conv_params *p = &a->node->p.preact;
    const int64_t C = a->in[0].dims.nb_dims >= 2 ? a->in[0].dims.d[1] : 0;
    if ((p->in_scale.count && p->in_scale.count != C) || (p->in_shift.count && p->in_shift.count != C))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': preact_conv's input transform has %lld / %lld values for %lld "
                          "channels", a->node->name, (long long)p->in_scale.count, (long long)p->in_shift.count,
                          (long long)C);
    preact pre = {p->in_scale.count ? (const float *)p->in_scale.values : NULL,
                  p->in_shift.count ? (const float *)p->in_shift.values : NULL, p->in_act, p->in_alpha, p->in_beta};
    return conv_direct(a, &pre);
}
