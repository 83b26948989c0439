/* fully_connected.c -- IFullyConnectedLayer (TensorRT 7): y = W x + b over the last 3 dims (C, H, W)
 * flattened; every leading dim is a batch dim.  [..., C, H, W] -> [..., K, 1, 1]. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_fully_connected[] = {
    TRTL_A("num_output_channels", TRTL_ATTR_INT, fc.num_output_channels),
    TRTL_A("kernel", TRTL_ATTR_WEIGHTS, fc.kernel),
    TRTL_A("bias", TRTL_ATTR_WEIGHTS, fc.bias),
};
TRTL_NATTRS(fully_connected);

void trtl_init_fully_connected(trtl_params *p)
{
    p->fc.num_output_channels = 1;
}

trtl_status trtl_lower_fully_connected(trtl_params *p, const trtl_lower_ctx *c)
{
    if (p->fc.num_output_channels < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_output_channels must be >= 1, got %d",
                          c->layer_name, (int)p->fc.num_output_channels);
    return TRTL_OK;
}

trtl_status trtl_infer_fully_connected(const trtl_infer_ctx *c)
{
    const trtl_fc_params *p = &c->p->fc;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    int64_t K = p->num_output_channels;
    if (K < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_output_channels must be >= 1, got %lld",
                          c->layer_name, (long long)K);
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': fully connected needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    if (x->nb_dims < 4)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': input %s has %d dims (batch included); fully connected needs at least 3 non-batch dims (C, H, W)",
                          c->layer_name, trtl_dims_str(x, s, sizeof s), (int)x->nb_dims);
    int32_t r = x->nb_dims;
    int64_t chw = 1;
    for (int32_t i = r - 3; i < r; i++)
        chw = (x->d[i] < 0 || chw < 0) ? -1 : chw * x->d[i];
    if (chw >= 0 && p->kernel.count != K * chw)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': kernel has %lld weights, expected num_output_channels * C*H*W = %lld * %lld = %lld",
                          c->layer_name, (long long)p->kernel.count, (long long)K, (long long)chw,
                          (long long)(K * chw));
    if (chw < 0 && (p->kernel.count <= 0 || p->kernel.count % K))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': kernel has %lld weights, not a multiple of num_output_channels %lld",
                          c->layer_name, (long long)p->kernel.count, (long long)K);
    if (p->bias.count != 0 && p->bias.count != K)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bias has %lld values, expected %lld (num_output_channels) or none",
                          c->layer_name, (long long)p->bias.count, (long long)K);
    trtl_dims o = *x;
    o.d[r - 3] = K;
    o.d[r - 2] = 1;
    o.d[r - 1] = 1;
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
