/* linear.c -- the internal LINEAR op: y[.., N] = x[.., D] W^T + bias over the last dim, every leading dim a
 * row (params trtl_fc_params: num_output_channels N, kernel W [N, D], bias [N] or none).  Only the builder
 * makes it (passes/fuse_linear.c), from a matrix multiply by a constant weight; networks cannot add it
 * (trtl_network_add_layer refuses), so lowering never runs.  Unlike FULLY_CONNECTED it keeps the input's
 * rank ([.., M, D] -> [.., M, N]), so the row-GEMM fully connected kernels (volume / D rows) run it as
 * they are.  Shape inference checks what a plan could get wrong, as the plan reader re-runs it. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_linear[] = {
    TRTL_A("num_output_channels", TRTL_ATTR_INT, fc.num_output_channels),
    TRTL_A("kernel", TRTL_ATTR_WEIGHTS, fc.kernel),
    TRTL_A("bias", TRTL_ATTR_WEIGHTS, fc.bias),
};
TRTL_NATTRS(linear);

void trtl_init_linear(trtl_params *p)
{
    p->fc.num_output_channels = 1;
}

trtl_status trtl_lower_linear(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': linear is an internal layer kind of the builder",
                      c->layer_name);
}

trtl_status trtl_infer_linear(const trtl_infer_ctx *c)
{
    const trtl_fc_params *p = &c->p->fc;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    int64_t N = p->num_output_channels;
    if (N < 1 || p->kernel.count < 1 || p->kernel.count % N || p->kernel.type != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': linear has %lld weights for %lld output channels",
                          c->layer_name, (long long)p->kernel.count, (long long)N);
    if (p->bias.count != 0 && (p->bias.count != N || p->bias.type != TRTL_FLOAT))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': linear bias has %lld values, expected %lld or none",
                          c->layer_name, (long long)p->bias.count, (long long)N);
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': linear needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    int32_t r = x->nb_dims;
    int64_t D = p->kernel.count / N;
    if (r < 1 || (x->d[r - 1] >= 0 && x->d[r - 1] != D))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': linear input %s must end in the weights' depth %lld",
                          c->layer_name, trtl_dims_str(x, s, sizeof s), (long long)D);
    trtl_dims o = *x;
    o.d[r - 1] = N;
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
