/* Reference NCHWC_CONV: direct loops, double accumulation, 2-D, any groups / stride / dilation / padding, each
 * operand read and written through its own layout (kernels/nchwc.h); lanes past the output channels get 0 (the
 * engine's epilogue then runs over the whole blocked tensor, residual lanes included).  Squeeze-and-excitation: an
 * input scale multiplies each input value; the output means are of the values after the epilogue (residual and
 * activation), which the engine applies to output 0 only after this kernel, so they are computed here from the
 * pre-epilogue values.  A mid quantization (mid_qgrid: an int8 layer's, plan version 9) applies to the
 * convolution's value before the residual, so here. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "kernels/nchwc.h"
#include "kernels/conv_geometry.h"
#include "core/dims.h"
#include "core/status.h"

trtl_dims trtl_nchwc_plain_in(const trtl_node *nd, const trtl_dims *xd)
{
    const trtl_conv_params *p = &nd->p.conv;
    trtl_dims d = *xd;
    if (nd->op == TRTL_OP_NCHWC_CONV && nd->p.nchwc.in_block && xd->nb_dims == 5) {
        int64_t kv = trtl_volume(&p->kernel_size);
        d.nb_dims = 4;
        d.d[1] = kv > 0 && p->num_output_maps > 0 ? p->kernel.count / (p->num_output_maps * kv) * p->num_groups : 0;
        d.d[4] = 0;
    }
    return d;
}

trtl_dims trtl_nchwc_plain_out(const trtl_node *nd, const trtl_dims *yd)
{
    trtl_dims d = *yd;
    if (nd->op == TRTL_OP_NCHWC_CONV && nd->p.nchwc.out_block && yd->nb_dims == 5) {
        d.nb_dims = 4;
        d.d[1] = nd->p.conv.num_output_maps;
        d.d[4] = 0;
    }
    return d;
}

trtl_status trtl_ref_nchwc_conv(const trtl_kernel_args *a)
{
    const trtl_node *nd = a->node;
    const trtl_nchwc_conv_params *p = &nd->p.nchwc;
    const trtl_dims xd = trtl_nchwc_plain_in(nd, &a->in[0].dims), yd = trtl_nchwc_plain_out(nd, &a->out[0].dims);
    trtl_conv_geom g;
    if (p->conv.kernel_size.nb_dims != 2 || xd.nb_dims != 4)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': nchwc_conv needs a 2-D convolution", nd->name);
    TRTL_TRY(trtl_conv_geom_init(nd, &xd, &yd, &g));
    const float *x = (const float *)a->in[0].data, *w = (const float *)p->conv.kernel.values;
    const float *b = p->conv.bias.count ? (const float *)p->conv.bias.values : NULL;
    const float *scale = trtl_nchwc_in_scaled(nd) ? (const float *)a->in[1].data : NULL;
    const float *res = nd->epi.has_residual ? (const float *)a->in[nd->n_in - 1].data : NULL;
    float *y = (float *)a->out[0].data, *mean = trtl_nchwc_out_pooled(nd) ? (float *)a->out[1].data : NULL;
    const int64_t BI = p->in_block, BO = p->out_block, H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
    if (BO && g.K % BO) /* pad lanes */
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++)
                    for (int64_t k = g.K; k % BO; k++)
                        y[trtl_nchwc_at(BO, g.K, OH, OW, n, k, oh, ow)] = 0.0f;
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t k = 0; k < g.K; k++) {
            const int64_t grp = k / g.Kg;
            double sum = 0.0;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = b ? b[k] : 0.0;
                    for (int64_t cg = 0; cg < g.Cg; cg++)
                        for (int64_t r = 0; r < g.k[1]; r++) {
                            int64_t ih = oh * g.s[1] - g.pad[1] + r * g.dl[1];
                            if (ih < 0 || ih >= H)
                                continue;
                            for (int64_t t = 0; t < g.k[2]; t++) {
                                int64_t iw = ow * g.s[2] - g.pad[2] + t * g.dl[2];
                                if (iw < 0 || iw >= W)
                                    continue;
                                const int64_t c = grp * g.Cg + cg;
                                acc += (double)w[((k * g.Cg + cg) * g.k[1] + r) * g.k[2] + t] *
                                       (double)x[trtl_nchwc_at(BI, g.C, H, W, n, c, ih, iw)] *
                                       (scale ? (double)scale[n * g.C + c] : 1.0);
                            }
                        }
                    const int64_t at = trtl_nchwc_at(BO, g.K, OH, OW, n, k, oh, ow);
                    y[at] = (float)acc;
                    if (res && p->mid_qgrid) /* before the residual the engine adds */
                        y[at] = trtl_activation_eval(TRTL_ACT_QGRID, p->mid_alpha, p->mid_beta, y[at]);
                    if (mean) /* the value the engine's epilogue will make of it */
                        sum += trtl_activation_eval(nd->epi.act, nd->epi.alpha, nd->epi.beta,
                                                    (float)acc + (res ? res[at] : 0.0f));
                }
            if (mean)
                mean[n * g.K + k] = OH * OW > 0 ? (float)(sum / (double)(OH * OW)) : 0.0f;
        }
    return TRTL_OK;
}
