/* Reference deconvolution (transposed convolution), written in gather form so that every output
 * is one double accumulation:  y[n, g*Kg+k, o] = bias + sum x[n, g*Cg+c, i] * w[g*Cg+c, k, kk]
 * over all (c, i, kk) with o = i*stride - pre + kk*dilation.  1-3 spatial dims (as 3-D with 1s). */
#include "kernels/ref/ref.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_deconvolution(const trtl_kernel_args *a)
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
        trtl_status st = trtl_deconv_out(in[off + i], dl[off + i] * (k[off + i] - 1) + 1, s[off + i],
                                         p->pre_padding.d[i], p->post_padding.d[i], p->padding_mode, &o,
                                         &pad[off + i], &post);
        if (st != TRTL_OK)
            return trtl_error_prefix("layer '%s'", a->node->name);
        if (o != out[off + i])
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output spatial dim %d is %lld, expected %lld",
                              a->node->name, i, (long long)out[off + i], (long long)o);
    }
    int64_t N = xd->d[0], C = xd->d[1], K = yd->d[1], G = p->num_groups, Cg = C / G, Kg = K / G;
    int64_t in_sp = in[0] * in[1] * in[2], out_sp = out[0] * out[1] * out[2], kvol = k[0] * k[1] * k[2];
    if (p->kernel.count != C * Kg * kvol)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': kernel has %lld weights, input needs %lld", a->node->name,
                          (long long)p->kernel.count, (long long)(C * Kg * kvol));
    for (int64_t n = 0; n < N; n++)
        for (int64_t kk = 0; kk < K; kk++) {
            int64_t g = kk / Kg, kl = kk % Kg;
            for (int64_t od = 0; od < out[0]; od++)
                for (int64_t oh = 0; oh < out[1]; oh++)
                    for (int64_t ow = 0; ow < out[2]; ow++) {
                        double acc = b ? b[kk] : 0.0;
                        for (int64_t c = 0; c < Cg; c++) {
                            int64_t ci = g * Cg + c;
                            const float *xc = x + (n * C + ci) * in_sp;
                            const float *wc = w + (ci * Kg + kl) * kvol;
                            for (int64_t kd = 0; kd < k[0]; kd++) {
                                int64_t td = od + pad[0] - kd * dl[0];
                                if (td < 0 || td % s[0] || td / s[0] >= in[0])
                                    continue;
                                for (int64_t kh = 0; kh < k[1]; kh++) {
                                    int64_t th = oh + pad[1] - kh * dl[1];
                                    if (th < 0 || th % s[1] || th / s[1] >= in[1])
                                        continue;
                                    for (int64_t kw = 0; kw < k[2]; kw++) {
                                        int64_t tw = ow + pad[2] - kw * dl[2];
                                        if (tw < 0 || tw % s[2] || tw / s[2] >= in[2])
                                            continue;
                                        acc += (double)xc[((td / s[0]) * in[1] + th / s[1]) * in[2] + tw / s[2]] *
                                               (double)wc[(kd * k[1] + kh) * k[2] + kw];
                                    }
                                }
                            }
                        }
                        y[(n * K + kk) * out_sp + (od * out[1] + oh) * out[2] + ow] = (float)acc;
                    }
        }
    return TRTL_OK;
}
