/* reduce_binary.c -- the internal REDUCE_BINARY op: y = reduce_op over `axes` of unary(a ew_op b), where a and b
 * have equal rank and broadcast (numpy rules, dims equal or 1) to the dims x that the reduction reads; reduced
 * dims become 1 (keep_dims) or disappear, as in IReduceLayer.  ew_op is SUM, PROD or SUB, unary_op ABS or -1
 * (none); FLOAT only.  Only the builder makes it (passes/fuse_reduce.c, from an elementwise layer feeding a
 * reduce, optionally through an Abs: AdderNet's ReduceSum(|x - w|)); networks cannot add it
 * (trtl_network_add_layer refuses), so lowering never runs.  Shape inference checks what a plan could get
 * wrong, as the plan reader re-runs it. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_reduce_binary[] = {
    TRTL_A("ew_op", TRTL_ATTR_INT, rbin.ew_op),
    TRTL_A("unary_op", TRTL_ATTR_INT, rbin.unary_op),
    TRTL_A_ENUM("op", rbin.op, "ReduceOperation", TRTL_RED_COUNT),
    TRTL_A("axes", TRTL_ATTR_AXES, rbin.axes),
    TRTL_A("keep_dims", TRTL_ATTR_BOOL, rbin.keep_dims),
};
TRTL_NATTRS(reduce_binary);

void trtl_init_reduce_binary(trtl_params *p)
{
    p->rbin.ew_op = TRTL_EW_SUB;
    p->rbin.unary_op = -1;
    p->rbin.op = TRTL_RED_SUM;
    p->rbin.axes = 0;
    p->rbin.keep_dims = 0;
}

trtl_status trtl_lower_reduce_binary(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': reduce binary is an internal layer kind of the builder",
                      c->layer_name);
}

trtl_status trtl_infer_reduce_binary(const trtl_infer_ctx *c)
{
    const trtl_reduce_binary_params *p = &c->p->rbin;
    const trtl_dims *a = &c->in[0], *b = &c->in[1];
    char sa[TRTL_DIMS_STR_MAX], sb[TRTL_DIMS_STR_MAX];
    if (p->ew_op != TRTL_EW_SUM && p->ew_op != TRTL_EW_PROD && p->ew_op != TRTL_EW_SUB)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': reduce binary ew_op %d is not SUM, PROD or SUB",
                          c->layer_name, (int)p->ew_op);
    if (p->unary_op != -1 && p->unary_op != TRTL_UN_ABS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': reduce binary unary_op %d is not ABS or -1",
                          c->layer_name, (int)p->unary_op);
    if (p->op < TRTL_RED_SUM || p->op >= TRTL_RED_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown reduce op %d", c->layer_name, (int)p->op);
    if (c->in_type[0] != TRTL_FLOAT || c->in_type[1] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': reduce binary needs FLOAT inputs, got %s and %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]), trtl_dtype_name(c->in_type[1]));
    int32_t r = a->nb_dims;
    if (b->nb_dims != r || r < 1 || (p->axes >> r))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': reduce binary inputs %s and %s need equal rank covering axes "
                          "0x%x", c->layer_name, trtl_dims_str(a, sa, sizeof sa), trtl_dims_str(b, sb, sizeof sb),
                          (unsigned)p->axes);
    trtl_dims o = {0};
    for (int32_t i = 0; i < r; i++) {
        int64_t x = a->d[i], y = b->d[i], d;
        if (x == y || y == 1)
            d = x;
        else if (x == 1)
            d = y;
        else if (x < 0 || y < 0)
            d = -1;
        else
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': reduce binary inputs %s and %s do not broadcast",
                              c->layer_name, trtl_dims_str(a, sa, sizeof sa), trtl_dims_str(b, sb, sizeof sb));
        if (!(p->axes & (1u << i)))
            o.d[o.nb_dims++] = d;
        else if (p->keep_dims)
            o.d[o.nb_dims++] = 1;
    }
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
