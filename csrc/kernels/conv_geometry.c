/*
 * conv_geometry.c -- trtl_conv_geom_init and the depthwise geometry (see conv_geometry.h).
 */
#include <string.h>

#include "kernels/conv_geometry.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_conv_geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, trtl_conv_geom *g)
{
    const trtl_conv_params *p = &nd->p.conv;
    int nsp = p->kernel_size.nb_dims, off = 3 - nsp;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    if (nsp < 1 || nsp > 3 || xd->nb_dims != nsp + 2 || p->stride.nb_dims != nsp || p->dilation.nb_dims != nsp ||
        p->pre_padding.nb_dims != nsp || p->post_padding.nb_dims != nsp)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not fit a %dD convolution", nd->name,
                          trtl_dims_str(xd, s1, sizeof s1), nsp);
    memset(g, 0, sizeof *g);
    g->direct = 1;
    for (int i = 0; i < 3; i++)
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->dl[i] = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t o, pre, post, kk = p->kernel_size.d[i], dd = p->dilation.d[i];
        if (trtl_spatial_out(xd->d[2 + i], dd * (kk - 1) + 1, p->stride.d[i], p->pre_padding.d[i],
                             p->post_padding.d[i], p->padding_mode, 0, &o, &pre, &post) != TRTL_OK)
            return trtl_error_prefix("layer '%s': input %s", nd->name, trtl_dims_str(xd, s1, sizeof s1));
        if (yd && (yd->nb_dims != xd->nb_dims || yd->d[2 + i] != o))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not match the convolution of input %s",
                              nd->name, trtl_dims_str(yd, s1, sizeof s1), trtl_dims_str(xd, s2, sizeof s2));
        g->in[off + i] = xd->d[2 + i];
        g->out[off + i] = o;
        g->k[off + i] = kk;
        g->s[off + i] = p->stride.d[i];
        g->dl[off + i] = dd;
        g->pad[off + i] = pre;
        if (kk != 1 || p->stride.d[i] != 1 || pre != 0 || o != xd->d[2 + i])
            g->direct = 0;
    }
    g->N = xd->d[0];
    g->C = xd->d[1];
    g->K = p->num_output_maps;
    g->G = p->num_groups;
    if (g->G < 1 || g->C % g->G || g->K % g->G)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld input / %lld output channels do not split into %lld groups",
                          nd->name, (long long)g->C, (long long)g->K, (long long)g->G);
    g->Cg = g->C / g->G;
    g->Kg = g->K / g->G;
    g->in_sp = g->in[0] * g->in[1] * g->in[2];
    g->P = g->out[0] * g->out[1] * g->out[2];
    g->kvol = g->k[0] * g->k[1] * g->k[2];
    g->ckk = g->Cg * g->kvol;
    if (yd && (yd->d[0] != g->N || yd->d[1] != g->K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not have %lld images of %lld channels",
                          nd->name, trtl_dims_str(yd, s1, sizeof s1), (long long)g->N, (long long)g->K);
    if (p->kernel.count != g->K * g->ckk || (p->bias.count && p->bias.count != g->K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights / %lld biases do not fit the convolution",
                          nd->name, (long long)p->kernel.count, (long long)p->bias.count);
    return TRTL_OK;
}

int trtl_dw_params_ok(const trtl_conv_params *p, int64_t C, const trtl_dw_limits *lim)
{
    if (p->kernel_size.nb_dims != 2 || p->stride.nb_dims != 2 || p->dilation.nb_dims != 2 || C <= 0 ||
        p->num_groups != C || p->num_output_maps != C)
        return 0;
    int64_t r = p->kernel_size.d[0], s = p->kernel_size.d[1];
    if (r < 1 || s < 1 || (lim->max_r && r > lim->max_r) || (lim->max_s && s > lim->max_s))
        return 0;
    for (int i = 0; i < 2; i++)
        if ((p->stride.d[i] != 1 && p->stride.d[i] != 2) || p->dilation.d[i] < 1 ||
            (!lim->dilated && p->dilation.d[i] != 1))
            return 0;
    return p->kernel.type == TRTL_FLOAT && (!p->bias.count || p->bias.type == TRTL_FLOAT) &&
           p->kernel.count == C * r * s && (!p->bias.count || p->bias.count == C);
}

trtl_status trtl_dw_geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, const trtl_dw_limits *lim,
                              trtl_dw_geom *g)
{
    const trtl_conv_params *p = &nd->p.conv;
    char s1[TRTL_DIMS_STR_MAX];
    if (xd->nb_dims != 4 || !trtl_dw_params_ok(p, xd->d[1], lim))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': input %s is not a depthwise 2D convolution this kernel runs",
                          nd->name, trtl_dims_str(xd, s1, sizeof s1));
    memset(g, 0, sizeof *g);
    g->N = xd->d[0];
    g->C = xd->d[1];
    g->H = xd->d[2];
    g->W = xd->d[3];
    g->R = p->kernel_size.d[0];
    g->S = p->kernel_size.d[1];
    g->sh = p->stride.d[0];
    g->sw = p->stride.d[1];
    g->dh = p->dilation.d[0];
    g->dw = p->dilation.d[1];
    int64_t post, keh, kew;
    if (trtl_dilated_kernel(g->R, g->dh, &keh) != TRTL_OK || trtl_dilated_kernel(g->S, g->dw, &kew) != TRTL_OK ||
        trtl_spatial_out(g->H, keh, g->sh, p->pre_padding.d[0], p->post_padding.d[0], p->padding_mode, 0, &g->OH,
                         &g->pt, &post) != TRTL_OK ||
        trtl_spatial_out(g->W, kew, g->sw, p->pre_padding.d[1], p->post_padding.d[1], p->padding_mode, 0, &g->OW,
                         &g->pl, &post) != TRTL_OK)
        return trtl_error_prefix("layer '%s': input %s", nd->name, trtl_dims_str(xd, s1, sizeof s1));
    if (yd && (yd->nb_dims != 4 || yd->d[0] != g->N || yd->d[1] != g->C || yd->d[2] != g->OH || yd->d[3] != g->OW))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not match the depthwise convolution", nd->name,
                          trtl_dims_str(yd, s1, sizeof s1));
    return TRTL_OK;
}

int trtl_conv_float_applies(const trtl_node *nd, const trtl_dims *xd, trtl_conv_geom *g)
{
    const trtl_conv_params *p = &nd->p.conv;
    if (p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.type != TRTL_FLOAT) || p->num_output_maps < 1 ||
        p->kernel.count % p->num_output_maps)
        return 0;
    if (trtl_conv_geom_init(nd, xd, NULL, g) != TRTL_OK) {
        trtl_clear_error();
        return 0;
    }
    return 1;
}
