/* pw_chain.c -- reference kernel of the internal PW_CHAIN op (core/params.h): each op of the program runs as the
 * reference kernel of the step it came from (unary, activation, elementwise), the first from input 0 into the
 * output, the others in place on the output (those kernels read element i before they write it, operands
 * broadcast through ref/broadcast.c), so the chain computes what the separate reference steps computed. */
#include "kernels/ref/ref.h"
#include "core/status.h"

trtl_status trtl_ref_pw_chain(const trtl_kernel_args *a)
{
    const trtl_node *n = a->node;
    const trtl_pw_chain_params *p = &n->p.pwc;
    if (a->out[0].dtype != TRTL_FLOAT || a->in[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': pw_chain computes FLOAT tensors only", n->name);
    trtl_tensor_view acc = a->out[0];
    for (int32_t i = 0; i < trtl_pw_n_ops(p); i++) {
        const trtl_pw_op o = trtl_pw_op_get(p, i);
        trtl_node step = *n; /* name and tensors as the chain's; the op's own params */
        step.epi = (trtl_epilogue){TRTL_ACT_NONE, 0.0f, 0.0f, 0};
        trtl_tensor_view in[2];
        in[0] = i == 0 ? a->in[0] : acc;
        trtl_kernel_args s = *a;
        s.node = &step;
        s.in = in;
        s.out = &acc;
        s.scratch = NULL;
        s.scratch_size = 0;
        s.state = NULL;
        switch (o.kind) {
        case TRTL_PW_UNARY:
            step.op = TRTL_OP_UNARY;
            step.p.unary.op = o.code;
            TRTL_TRY(trtl_ref_unary(&s));
            break;
        case TRTL_PW_ACT:
            step.op = TRTL_OP_ACTIVATION;
            step.p.act = (trtl_activation_params){o.code, o.alpha, o.beta};
            TRTL_TRY(trtl_ref_activation(&s));
            break;
        case TRTL_PW_BINARY:
        case TRTL_PW_BINARY_R:
            if (o.operand < 1 || o.operand >= n->n_in)
                return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': pw_chain operand %d out of range", n->name,
                                  (int)o.operand);
            step.op = TRTL_OP_ELEMENTWISE;
            step.p.ew.op = o.code;
            in[1] = a->in[o.operand];
            if (o.kind == TRTL_PW_BINARY_R) {
                in[1] = in[0];
                in[0] = a->in[o.operand];
            }
            TRTL_TRY(trtl_ref_elementwise(&s));
            break;
        default:
            return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': pw_chain op kind %d unknown", n->name, (int)o.kind);
        }
    }
    return TRTL_OK;
}
