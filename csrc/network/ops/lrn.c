/* lrn.c -- ILRNLayer: local response normalization across channels (dim 1 of the full tensor):
 * y = x / (k + alpha / window_size * sum_{c' in window} x[c']^2) ^ beta. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_lrn[] = {
    TRTL_A("window_size", TRTL_ATTR_INT, lrn.window_size),
    TRTL_A("alpha", TRTL_ATTR_FLOAT, lrn.alpha),
    TRTL_A("beta", TRTL_ATTR_FLOAT, lrn.beta),
    TRTL_A("k", TRTL_ATTR_FLOAT, lrn.k),
};
TRTL_NATTRS(lrn);

/* add_lrn() always sets all four; these are the common Caffe/ONNX values. */
void trtl_init_lrn(trtl_params *p)
{
    p->lrn.window_size = 5;
    p->lrn.alpha = 1e-4f;
    p->lrn.beta = 0.75f;
    p->lrn.k = 1.0f;
}

/* Ranges are TensorRT's (NvInfer.h, ILRNLayer). */
static trtl_status check_lrn(const trtl_lrn_params *p, const char *layer)
{
    if (p->window_size < 1 || p->window_size > 15 || p->window_size % 2 == 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': window_size %d must be odd and in [1, 15]", layer,
                          (int)p->window_size);
    if (!(p->alpha >= -1e20f && p->alpha <= 1e20f))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': alpha %g must be in [-1e20, 1e20]", layer,
                          (double)p->alpha);
    if (!(p->beta >= 0.01f && p->beta <= 1e5f))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': beta %g must be in [0.01, 1e5]", layer,
                          (double)p->beta);
    if (!(p->k >= 1e-5f && p->k <= 1e10f))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': k %g must be in [1e-5, 1e10]", layer, (double)p->k);
    return TRTL_OK;
}

trtl_status trtl_lower_lrn(trtl_params *p, const trtl_lower_ctx *c)
{
    return check_lrn(&p->lrn, c->layer_name);
}

trtl_status trtl_infer_lrn(const trtl_infer_ctx *c)
{
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_lrn(&c->p->lrn, c->layer_name));
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': LRN needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    if (x->nb_dims < 3)
        return trtl_error(TRTL_ERR_SHAPE,
                          "layer '%s': input %s has %d dims (batch included); LRN needs at least 3 (N, C, spatial...)",
                          c->layer_name, trtl_dims_str(x, s, sizeof s), (int)x->nb_dims);
    c->out[0] = *x;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
