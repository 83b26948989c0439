/* nchwc_conv.c -- the internal NCHWC_CONV op: a 2-D convolution (convolution's params, `nchwc.conv`) whose input
 * and/or output (and residual) is in the blocked channel layout [N, ceil(C/B), H, W, B], channel c at
 * [n, c/B, h, w, c%B] (in_block / out_block: B, 0 for plain NCHW).  Only the builder makes it (passes/nchwc.c);
 * networks cannot add it (trtl_network_add_layer refuses), so lowering never runs.  Shape inference checks what
 * a plan could get wrong, as the plan reader re-runs it: the input channels come from the weights
 * (count / (K * R * S) * groups), a blocked input must be [N, ceil(C/B), H, W, B]. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_nchwc_conv[] = {
    TRTL_CONV_ATTRS(nchwc.conv),
    TRTL_A("in_block", TRTL_ATTR_INT, nchwc.in_block),
    TRTL_A("out_block", TRTL_ATTR_INT, nchwc.out_block),
    TRTL_A("mid_qgrid", TRTL_ATTR_INT, nchwc.mid_qgrid),
    TRTL_A("mid_alpha", TRTL_ATTR_FLOAT, nchwc.mid_alpha),
    TRTL_A("mid_beta", TRTL_ATTR_FLOAT, nchwc.mid_beta),
};
TRTL_NATTRS(nchwc_conv);

void trtl_init_nchwc_conv(trtl_params *p)
{
    trtl_init_convolution(p);
    p->nchwc.in_block = p->nchwc.out_block = 0;
    p->nchwc.mid_qgrid = 0;
    p->nchwc.mid_alpha = p->nchwc.mid_beta = 0.0f;
}

trtl_status trtl_lower_nchwc_conv(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': nchwc_conv is an internal layer kind of the builder",
                      c->layer_name);
}

static int block_ok(int32_t b)
{
    return b == 0 || b == 8 || b == 16;
}

trtl_status trtl_infer_nchwc_conv(const trtl_infer_ctx *c)
{
    const trtl_nchwc_conv_params *p = &c->p->nchwc;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(trtl_conv_check_spatial(&p->conv, c->layer_name));
    const int64_t K = p->conv.num_output_maps, G = p->conv.num_groups, kvol = trtl_volume(&p->conv.kernel_size);
    if (!block_ok(p->in_block) || !block_ok(p->out_block) || p->conv.kernel_size.nb_dims != 2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': nchwc_conv needs a 2-D kernel and blocks of 0, 8 or 16 (in_block %d, "
                          "out_block %d)", c->layer_name, (int)p->in_block, (int)p->out_block);
    if ((p->mid_qgrid != 0 && p->mid_qgrid != 1) || (p->mid_qgrid && !trtl_act_qgrid_scale_ok(p->mid_alpha)))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': nchwc_conv's mid quantization %d, scale %g (0 or 1; "
                          "a scale in [2^-100, 2^100])", c->layer_name, (int)p->mid_qgrid, (double)p->mid_alpha);
    if (kvol < 1 || p->conv.kernel.count < 1 || p->conv.kernel.count % (K * kvol))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': nchwc_conv has %lld weights for %lld output maps",
                          c->layer_name, (long long)p->conv.kernel.count, (long long)K);
    const int64_t C = p->conv.kernel.count / (K * kvol) * G;
    trtl_dims xp = *x; /* the input as plain NCHW */
    if (p->in_block) {
        int64_t B = p->in_block;
        if (x->nb_dims != 5 || (x->d[1] >= 0 && x->d[1] != (C + B - 1) / B) || x->d[4] != B)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': blocked input %s is not [N, %lld, H, W, %lld] (%lld channels)",
                              c->layer_name, trtl_dims_str(x, s, sizeof s), (long long)((C + B - 1) / B),
                              (long long)B, (long long)C);
        xp.nb_dims = 4;
        xp.d[1] = C;
    } else if (x->nb_dims == 4 && x->d[1] >= 0 && x->d[1] != C)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not have the weights' %lld channels",
                          c->layer_name, trtl_dims_str(x, s, sizeof s), (long long)C);
    if (c->n_out < 1 || c->n_out > 2 || c->n_in > 2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': nchwc_conv has %d inputs / %d outputs (1-2 / 1-2)",
                          c->layer_name, (int)c->n_in, (int)c->n_out);
    if (c->n_in == 2) { /* the input channels' scale [N, C, 1, 1] */
        const trtl_dims *sd = &c->in[1];
        if (sd->nb_dims != 4 || (sd->d[0] >= 0 && xp.d[0] >= 0 && sd->d[0] != xp.d[0]) || sd->d[1] != C ||
            sd->d[2] != 1 || sd->d[3] != 1 || (c->in_type && c->in_type[1] != TRTL_FLOAT))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input scale %s is not FLOAT [N, %lld, 1, 1]",
                              c->layer_name, trtl_dims_str(sd, s, sizeof s), (long long)C);
    }
    trtl_infer_ctx pc = *c;
    pc.in = &xp;
    pc.n_in = 1;
    pc.n_out = 1;
    TRTL_TRY(trtl_infer_convolution(&pc));
    if (c->n_out == 2) { /* the output channels' means [N, K, 1, 1] */
        trtl_dims m = c->out[0];
        m.d[1] = K;
        m.d[2] = m.d[3] = 1;
        c->out[1] = m;
        if (c->out_type)
            c->out_type[1] = TRTL_FLOAT;
    }
    if (p->out_block) {
        trtl_dims o = c->out[0];
        int64_t B = p->out_block;
        o.nb_dims = 5;
        o.d[1] = (K + B - 1) / B;
        o.d[4] = B;
        c->out[0] = o;
    }
    return TRTL_OK;
}
