/* convolution.c -- IConvolutionLayer: N-d (1-3 spatial dims) grouped, dilated convolution.
 * Input [N, C, spatial...], kernel [K, C/groups, k...], bias [K] or none -> [N, K, out...]. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_convolution[] = {
    TRTL_A("num_output_maps", TRTL_ATTR_INT, conv.num_output_maps),
    TRTL_A("kernel_size_nd", TRTL_ATTR_DIMS, conv.kernel_size),
    TRTL_A_FLAGS("kernel_size", TRTL_ATTR_DIMS, conv.kernel_size, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A("stride_nd", TRTL_ATTR_DIMS, conv.stride),
    TRTL_A_FLAGS("stride", TRTL_ATTR_DIMS, conv.stride, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A_SYM("padding_nd", conv.pre_padding, conv.post_padding, TRTL_ATTRF_ALIAS),
    TRTL_A_SYM("padding", conv.pre_padding, conv.post_padding, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A("pre_padding", TRTL_ATTR_DIMS, conv.pre_padding),
    TRTL_A("post_padding", TRTL_ATTR_DIMS, conv.post_padding),
    TRTL_A("dilation_nd", TRTL_ATTR_DIMS, conv.dilation),
    TRTL_A_FLAGS("dilation", TRTL_ATTR_DIMS, conv.dilation, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A("num_groups", TRTL_ATTR_INT, conv.num_groups),
    TRTL_A_ENUM("padding_mode", conv.padding_mode, "PaddingMode", TRTL_PADMODE_COUNT),
    TRTL_A("kernel", TRTL_ATTR_WEIGHTS, conv.kernel),
    TRTL_A("bias", TRTL_ATTR_WEIGHTS, conv.bias),
};
TRTL_NATTRS(convolution);

static trtl_dims filled(int32_t nb, int64_t v)
{
    trtl_dims d = {0};
    d.nb_dims = nb;
    for (int32_t i = 0; i < nb; i++)
        d.d[i] = v;
    return d;
}

void trtl_init_convolution(trtl_params *p)
{
    trtl_conv_params *c = &p->conv;
    c->num_output_maps = 1;
    c->kernel_size = filled(2, 1);
    c->stride = filled(2, 1);
    c->dilation = filled(2, 1);
    c->pre_padding = filled(2, 0);
    c->post_padding = filled(2, 0);
    c->num_groups = 1;
    c->padding_mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
}

trtl_status trtl_conv_check_spatial(const trtl_conv_params *c, const char *layer)
{
    int32_t nsp = c->kernel_size.nb_dims;
    if (nsp < 1 || nsp > 3)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': kernel_size must have 1 to 3 dims, has %d",
                          layer, (int)nsp);
    const struct { const char *name; const trtl_dims *d; int64_t min; } f[] = {
        {"kernel_size", &c->kernel_size, 1}, {"stride", &c->stride, 1}, {"dilation", &c->dilation, 1},
        {"pre_padding", &c->pre_padding, 0}, {"post_padding", &c->post_padding, 0}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].d->nb_dims != nsp)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s has %d dims but the kernel has %d",
                              layer, f[i].name, (int)f[i].d->nb_dims, (int)nsp);
        for (int32_t k = 0; k < nsp; k++)
            if (f[i].d->d[k] < f[i].min)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s[%d] = %lld must be >= %lld", layer,
                                  f[i].name, (int)k, (long long)f[i].d->d[k], (long long)f[i].min);
    }
    if (c->num_output_maps < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_output_maps must be >= 1", layer);
    if (c->num_groups < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_groups must be >= 1", layer);
    if (c->padding_mode < 0 || c->padding_mode > TRTL_PADMODE_CAFFE_ROUND_UP)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown padding_mode %d", layer,
                          (int)c->padding_mode);
    return TRTL_OK;
}

trtl_status trtl_lower_convolution(trtl_params *p, const trtl_lower_ctx *c)
{
    return trtl_conv_check_spatial(&p->conv, c->layer_name);
}

trtl_status trtl_infer_convolution(const trtl_infer_ctx *c)
{
    const trtl_conv_params *p = &c->p->conv;
    const trtl_dims *x = &c->in[0];
    int32_t nsp = p->kernel_size.nb_dims;
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(trtl_conv_check_spatial(p, c->layer_name));
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': convolution needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    if (x->nb_dims != nsp + 2)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s has %d dims; a %dD convolution needs %d (N, C, spatial)",
                          c->layer_name, trtl_dims_str(x, s, sizeof s), (int)x->nb_dims, (int)nsp, (int)nsp + 2);
    int64_t C = x->d[1], K = p->num_output_maps, G = p->num_groups;
    if (K % G)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': num_output_maps %lld is not divisible by num_groups %lld",
                          c->layer_name, (long long)K, (long long)G);
    if (C >= 0 && C % G)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input channels %lld are not divisible by num_groups %lld",
                          c->layer_name, (long long)C, (long long)G);
    int64_t kvol = trtl_volume(&p->kernel_size), want = 0;
    if (kvol < 0 || __builtin_mul_overflow(K, C >= 0 ? C / G : 0, &want) || __builtin_mul_overflow(want, kvol, &want))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': kernel size overflows", c->layer_name);
    if (C >= 0 && p->kernel.count != want)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': kernel has %lld weights, expected num_output_maps * C/groups * prod(kernel_size) = %lld * %lld * %lld = %lld",
                          c->layer_name, (long long)p->kernel.count, (long long)K, (long long)(C / G),
                          (long long)kvol, (long long)(K * (C / G) * kvol));
    if (p->bias.count != 0 && p->bias.count != K)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bias has %lld values, expected %lld (num_output_maps) or none",
                          c->layer_name, (long long)p->bias.count, (long long)K);
    trtl_dims o = {0};
    o.nb_dims = x->nb_dims;
    o.d[0] = x->d[0];
    o.d[1] = K;
    for (int32_t i = 0; i < nsp; i++) {
        int64_t pre, post, k_eff;
        trtl_status st = trtl_dilated_kernel(p->kernel_size.d[i], p->dilation.d[i], &k_eff);
        if (st == TRTL_OK)
            st = trtl_spatial_out(x->d[2 + i], k_eff, p->stride.d[i], p->pre_padding.d[i], p->post_padding.d[i],
                                  p->padding_mode, 0, &o.d[2 + i], &pre, &post);
        if (st != TRTL_OK)
            return trtl_error_prefix("layer '%s': input %s, spatial dim %d", c->layer_name,
                                     trtl_dims_str(x, s, sizeof s), (int)i);
    }
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
