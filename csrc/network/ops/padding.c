/* padding.c -- IPaddingLayer: zero padding of the last nb dims (nb = rank of pre_padding_nd, which
 * post_padding_nd must share); negative values crop.  pre_padding/post_padding are TensorRT 7's
 * 2-D views of the same fields.  Axes count from the innermost dim, so implicit-batch networks
 * need no lowering beyond checking that the batch is not padded. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_padding[] = {
    TRTL_A("pre_padding_nd", TRTL_ATTR_DIMS, pad.pre_padding),
    TRTL_A("post_padding_nd", TRTL_ATTR_DIMS, pad.post_padding),
    TRTL_A_FLAGS("pre_padding", TRTL_ATTR_DIMS, pad.pre_padding, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
    TRTL_A_FLAGS("post_padding", TRTL_ATTR_DIMS, pad.post_padding, TRTL_ATTRF_ALIAS | TRTL_ATTRF_HW),
};
TRTL_NATTRS(padding);

void trtl_init_padding(trtl_params *p)
{
    trtl_dims z = {0};
    z.nb_dims = 2;
    p->pad.pre_padding = z;
    p->pad.post_padding = z;
}

static trtl_status check_pads(const char *layer, const trtl_padding_params *p)
{
    if (p->pre_padding.nb_dims != p->post_padding.nb_dims)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': pre_padding_nd has %d dims but post_padding_nd has %d (they must match)", layer,
                          (int)p->pre_padding.nb_dims, (int)p->post_padding.nb_dims);
    if (p->pre_padding.nb_dims < 0 || p->pre_padding.nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': pre_padding_nd has %d dims", layer,
                          (int)p->pre_padding.nb_dims);
    return TRTL_OK;
}

trtl_status trtl_lower_padding(trtl_params *p, const trtl_lower_ctx *c)
{
    TRTL_TRY(check_pads(c->layer_name, &p->pad));
    int imp = c->implicit_batch ? 1 : 0;
    if (c->n_in > 0 && c->in && c->in[0].nb_dims - imp < p->pad.pre_padding.nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': padding covers %d dims but the input has only %d",
                          c->layer_name, (int)p->pad.pre_padding.nb_dims, (int)(c->in[0].nb_dims - imp));
    return TRTL_OK;
}

trtl_status trtl_infer_padding(const trtl_infer_ctx *c)
{
    const trtl_padding_params *p = &c->p->pad;
    const trtl_dims *x = &c->in[0];
    char b[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_pads(c->layer_name, p));
    int32_t nb = p->pre_padding.nb_dims, off = x->nb_dims - nb;
    if (off < 0)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': padding covers %d dims but the input %s has only %d",
                          c->layer_name, (int)nb, trtl_dims_str(x, b, sizeof b), (int)x->nb_dims);
    trtl_dims o = *x;
    for (int32_t i = 0; i < nb; i++) {
        int64_t n = x->d[off + i], pre = p->pre_padding.d[i], post = p->post_padding.d[i];
        if (n < 0) {
            o.d[off + i] = -1;
            continue;
        }
        o.d[off + i] = n + pre + post;
        if (o.d[off + i] < 0 || (o.d[off + i] == 0 && n > 0))
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': padding (%lld, %lld) crops all of dimension %d (size %lld) of input %s",
                              c->layer_name, (long long)pre, (long long)post, (int)(off + i), (long long)n,
                              trtl_dims_str(x, b, sizeof b));
    }
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
