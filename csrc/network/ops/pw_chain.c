/* pw_chain.c -- the internal PW_CHAIN op: a run of pointwise steps over one shape as one straight-line program
 * (core/params.h, trtl_pw_chain_params).  Only the builder makes it (passes/fuse_chain.c); networks cannot add it
 * (trtl_network_add_layer refuses), so lowering never runs.  Shape inference checks everything a plan could get
 * wrong, as the plan reader re-runs it: the program's weights (types, counts), every op's kind, code and operand
 * index (each operand input read by some op), the activations' fake-quantize scales, and the operands' dtypes and
 * broadcast to input 0's dims; the output is input 0's dims, FLOAT. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_pw_chain[] = {
    TRTL_A("ops", TRTL_ATTR_WEIGHTS, pwc.ops),
    TRTL_A("args", TRTL_ATTR_WEIGHTS, pwc.args),
};
TRTL_NATTRS(pw_chain);

void trtl_init_pw_chain(trtl_params *p)
{
    p->pwc.ops = (trtl_weights){0};
    p->pwc.args = (trtl_weights){0};
    p->pwc.ops.type = TRTL_INT32;
    p->pwc.args.type = TRTL_FLOAT;
}

trtl_status trtl_lower_pw_chain(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': pw_chain is an internal layer kind of the builder",
                      c->layer_name);
}

static trtl_status check_op(const trtl_pw_op *o, int32_t i, int32_t n_in, const char *layer)
{
    int ok;
    switch (o->kind) {
    case TRTL_PW_UNARY: ok = trtl_pw_unary_ok(o->code) && o->operand == 0; break;
    case TRTL_PW_ACT:
        ok = trtl_act_code_valid(o->code) && o->operand == 0 &&
             (o->code != TRTL_ACT_QGRID || trtl_act_qgrid_scale_ok(o->alpha));
        break;
    case TRTL_PW_BINARY:
    case TRTL_PW_BINARY_R: ok = trtl_pw_binary_ok(o->code) && o->operand >= 1 && o->operand < n_in; break;
    default: ok = 0; break;
    }
    if (!ok)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': pw_chain op %d (kind %d, code %d, operand %d of %d inputs, alpha %g) is no "
                          "valid pointwise op", layer, (int)i, (int)o->kind, (int)o->code, (int)o->operand, (int)n_in,
                          (double)o->alpha);
    return TRTL_OK;
}

trtl_status trtl_infer_pw_chain(const trtl_infer_ctx *c)
{
    const trtl_pw_chain_params *p = &c->p->pwc;
    const char *name = c->layer_name;
    if (c->n_in < 1 || c->n_in > TRTL_PW_MAX_INPUTS || c->n_out != 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': pw_chain has %d inputs / %d outputs (1..%d / 1)",
                          name, (int)c->n_in, (int)c->n_out, TRTL_PW_MAX_INPUTS);
    if (p->ops.type != TRTL_INT32 || p->args.type != TRTL_FLOAT || p->ops.count % 3 != 0 || p->ops.count < 3 ||
        p->ops.count > 3 * TRTL_PW_MAX_OPS || p->args.count != p->ops.count / 3 * 2 || !p->ops.values ||
        !p->args.values)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': pw_chain's program has %lld %s ops words and %lld %s args (3 INT32 and 2 FLOAT "
                          "a op, 1..%d ops)", name, (long long)p->ops.count, trtl_dtype_name(p->ops.type),
                          (long long)p->args.count, trtl_dtype_name(p->args.type), TRTL_PW_MAX_OPS);
    uint32_t used = 0;
    for (int32_t i = 0; i < trtl_pw_n_ops(p); i++) {
        trtl_pw_op o = trtl_pw_op_get(p, i);
        TRTL_TRY(check_op(&o, i, c->n_in, name));
        if (o.kind >= TRTL_PW_BINARY)
            used |= 1u << o.operand;
    }
    if (used != ((1u << c->n_in) - 2u))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': pw_chain reads not every one of its %d operand inputs",
                          name, (int)c->n_in - 1);
    const trtl_dims *d = &c->in[0];
    for (int32_t k = 0; k < c->n_in; k++) {
        if (c->in_type[k] != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': pw_chain input %d is %s (FLOAT only)", name, (int)k,
                              trtl_dtype_name(c->in_type[k]));
        const trtl_dims *e = &c->in[k];
        int ok = e->nb_dims == d->nb_dims;
        for (int32_t a = 0; ok && a < d->nb_dims; a++)
            ok = e->d[a] == 1 || e->d[a] == d->d[a] || e->d[a] < 0 || d->d[a] < 0; /* -1: not known yet */
        if (!ok) {
            char s0[TRTL_DIMS_STR_MAX], s1[TRTL_DIMS_STR_MAX];
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': pw_chain operand %d of dims %s does not broadcast to the "
                              "chain's %s", name, (int)k, trtl_dims_str(e, s1, sizeof s1),
                              trtl_dims_str(d, s0, sizeof s0));
        }
    }
    c->out[0] = *d;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
