/* reduce.c -- IReduceLayer: SUM / PROD / MAX / MIN / AVG over the dims in `axes`; reduced dims become
 * 1 (keep_dims) or disappear (a rank-0 output is allowed).  FLOAT, and INT32 except for AVG. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_reduce[] = {
    TRTL_A_ENUM("op", reduce.op, "ReduceOperation", TRTL_RED_COUNT),
    TRTL_A("axes", TRTL_ATTR_AXES, reduce.axes),
    TRTL_A("keep_dims", TRTL_ATTR_BOOL, reduce.keep_dims),
};
TRTL_NATTRS(reduce);

void trtl_init_reduce(trtl_params *p)
{
    p->reduce.op = TRTL_RED_SUM;
    p->reduce.axes = 0;
    p->reduce.keep_dims = 0;
}

static trtl_status check_reduce(const trtl_reduce_params *p, int32_t rank, const char *layer)
{
    if (p->op < TRTL_RED_SUM || p->op > TRTL_RED_AVG)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown reduce op %d", layer, (int)p->op);
    if (rank >= 0 && rank < 32 && (p->axes >> rank))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': axes 0x%x name a dimension beyond the input's %d (batch included)", layer,
                          (unsigned)p->axes, (int)rank);
    return TRTL_OK;
}

trtl_status trtl_lower_reduce(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch) {
        if (p->reduce.axes & 0x80000000u)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x out of range", c->layer_name,
                              (unsigned)p->reduce.axes);
        p->reduce.axes <<= 1;
    }
    p->reduce.keep_dims = p->reduce.keep_dims ? 1 : 0;
    return check_reduce(&p->reduce, c->n_in > 0 && c->in ? c->in[0].nb_dims : -1, c->layer_name);
}

trtl_status trtl_infer_reduce(const trtl_infer_ctx *c)
{
    const trtl_reduce_params *p = &c->p->reduce;
    const trtl_dims *x = &c->in[0];
    TRTL_TRY(check_reduce(p, x->nb_dims, c->layer_name));
    trtl_dtype t = c->in_type[0];
    if (!(t == TRTL_FLOAT || (t == TRTL_INT32 && p->op != TRTL_RED_AVG)))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': reduce needs a FLOAT input (or INT32 for SUM/PROD/MAX/MIN), got %s%s",
                          c->layer_name, trtl_dtype_name(t), t == TRTL_INT32 ? " with AVG" : "");
    trtl_dims o = {0};
    for (int32_t i = 0; i < x->nb_dims; i++) {
        if (!(p->axes & (1u << i)))
            o.d[o.nb_dims++] = x->d[i];
        else if (p->keep_dims)
            o.d[o.nb_dims++] = 1;
    }
    c->out[0] = o;
    c->out_type[0] = t;
    return TRTL_OK;
}
