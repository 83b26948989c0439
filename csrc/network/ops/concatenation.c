/* concatenation.c -- IConcatenationLayer: joins any number of inputs along `axis`.  All inputs have
 * one rank and type (any type) and equal dims except along the axis.  The default axis depends on
 * the input rank and is set by the network code after init.  A negative axis counts from the end.
 * Lowered form (implicit batch): axis + 1. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_concatenation[] = {
    TRTL_A("axis", TRTL_ATTR_INT, concat.axis),
};
TRTL_NATTRS(concatenation);

void trtl_init_concatenation(trtl_params *p) { p->concat.axis = 0; }

trtl_status trtl_lower_concatenation(trtl_params *p, const trtl_lower_ctx *c)
{
    int imp = c->implicit_batch ? 1 : 0;
    int32_t axis = p->concat.axis;
    if (c->n_in > 0 && c->in) {
        int32_t rank = c->in[0].nb_dims - imp;
        if (axis < 0)
            axis += rank;
        if (axis < 0 || axis >= rank)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for inputs of %d dims",
                              c->layer_name, (int)p->concat.axis, (int)rank);
    } else if (axis < 0) {
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is negative", c->layer_name, (int)axis);
    }
    p->concat.axis = axis + imp;
    return TRTL_OK;
}

trtl_status trtl_infer_concatenation(const trtl_infer_ctx *c)
{
    const char *L = c->layer_name;
    char s0[TRTL_DIMS_STR_MAX], s1[TRTL_DIMS_STR_MAX];
    if (c->n_in < 1)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': concatenation needs at least one input", L);
    const trtl_dims *x0 = &c->in[0];
    int32_t r = x0->nb_dims, axis = c->p->concat.axis;
    if (axis < 0 || axis >= r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': axis %d is out of range for inputs of %d dims", L, (int)axis,
                          (int)r);
    trtl_dims o = *x0;
    for (int32_t k = 1; k < c->n_in; k++) {
        const trtl_dims *x = &c->in[k];
        if (c->in_type[k] != c->in_type[0])
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input %d has type %s, input 0 has %s (they must match)", L,
                              (int)k, trtl_dtype_name(c->in_type[k]), trtl_dtype_name(c->in_type[0]));
        if (x->nb_dims != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d has shape %s, input 0 has %s (ranks differ)", L,
                              (int)k, trtl_dims_str(x, s1, sizeof s1), trtl_dims_str(x0, s0, sizeof s0));
        for (int32_t i = 0; i < r; i++) {
            if (i == axis) {
                o.d[i] = (o.d[i] < 0 || x->d[i] < 0) ? -1 : o.d[i] + x->d[i];
            } else if (o.d[i] < 0) {
                o.d[i] = x->d[i];
            } else if (x->d[i] >= 0 && x->d[i] != o.d[i]) {
                return trtl_error(TRTL_ERR_SHAPE,
                                  "layer '%s': input %d has shape %s, input 0 has %s: dimension %d differs (only the "
                                  "concatenation axis %d may)",
                                  L, (int)k, trtl_dims_str(x, s1, sizeof s1), trtl_dims_str(x0, s0, sizeof s0),
                                  (int)i, (int)axis);
            }
        }
    }
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
