/* parametric_relu.c -- IParametricReLULayer: y = x >= 0 ? x : slope * x, FLOAT.  slopes has x's
 * rank and each of its dims equals x's or is 1 (broadcast to x; the output has x's dims). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

/* No attributes: C has no empty arrays, so one unused entry and a count of 0. */
const trtl_attr_desc trtl_attrs_parametric_relu[1] = {{NULL, TRTL_ATTR_INT, 0, 0, NULL, 0}};
const int32_t trtl_nattrs_parametric_relu = 0;

void trtl_init_parametric_relu(trtl_params *p) { p->empty.unused = 0; }

trtl_status trtl_lower_parametric_relu(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}

trtl_status trtl_infer_parametric_relu(const trtl_infer_ctx *c)
{
    const trtl_dims *x = &c->in[0], *s = &c->in[1];
    char sx[TRTL_DIMS_STR_MAX], ss[TRTL_DIMS_STR_MAX];
    for (int k = 0; k < 2; k++)
        if (c->in_type[k] != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s must be FLOAT, got %s", c->layer_name,
                              k ? "slopes" : "input", trtl_dtype_name(c->in_type[k]));
    if (s->nb_dims != x->nb_dims)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': slopes %s must have the input's %d dims, input is %s",
                          c->layer_name, trtl_dims_str(s, ss, sizeof ss), (int)x->nb_dims,
                          trtl_dims_str(x, sx, sizeof sx));
    for (int32_t i = 0; i < x->nb_dims; i++)
        if (s->d[i] != 1 && s->d[i] >= 0 && x->d[i] >= 0 && s->d[i] != x->d[i])
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': slopes %s do not broadcast to the input %s (dimension %d)",
                              c->layer_name, trtl_dims_str(s, ss, sizeof ss), trtl_dims_str(x, sx, sizeof sx), (int)i);
    c->out[0] = *x;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
