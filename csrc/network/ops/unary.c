/* unary.c -- IUnaryLayer: y = f(x) elementwise.  FLOAT for the math functions; ABS, NEG and SIGN
 * (and BITWISE_NOT) also take INT32 and INT64; NOT is BOOL -> BOOL; ISINF is FLOAT -> BOOL; ROUND rounds half to even. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_unary[] = {
    TRTL_A_ENUM("op", unary.op, "UnaryOperation", TRTL_UN_COUNT),
};
TRTL_NATTRS(unary);

static const char *const un_names[TRTL_UN_COUNT] = {
    "EXP",  "LOG",  "SQRT", "RECIP", "ABS",   "NEG",   "SIN",   "COS",  "TAN",   "SINH", "COSH",  "ASIN",
    "ACOS", "ATAN", "ASINH", "ACOSH", "ATANH", "CEIL", "FLOOR", "ERF", "NOT", "SIGN", "ROUND", "ISINF",
    "BITWISE_NOT"};

void trtl_init_unary(trtl_params *p) { p->unary.op = TRTL_UN_EXP; }

trtl_status trtl_lower_unary(trtl_params *p, const trtl_lower_ctx *c)
{
    if (p->unary.op < 0 || p->unary.op >= TRTL_UN_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown UnaryOperation %d (op)", c->layer_name,
                          (int)p->unary.op);
    return TRTL_OK;
}

trtl_status trtl_infer_unary(const trtl_infer_ctx *c)
{
    int32_t op = c->p->unary.op;
    trtl_dtype t = c->in_type[0];
    if (op < 0 || op >= TRTL_UN_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown UnaryOperation %d (op)", c->layer_name,
                          (int)op);
    if (op == TRTL_UN_NOT) {
        if (t != TRTL_BOOL)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': NOT needs a BOOL input, got %s", c->layer_name,
                              trtl_dtype_name(t));
    } else if (op == TRTL_UN_BITWISE_NOT) {
        if (t != TRTL_INT32 && t != TRTL_INT64)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': BITWISE_NOT needs an INT32 or INT64 input, got %s", c->layer_name,
                              trtl_dtype_name(t));
    } else if (op == TRTL_UN_ABS || op == TRTL_UN_NEG || op == TRTL_UN_SIGN) {
        if (t != TRTL_FLOAT && t != TRTL_INT32 && t != TRTL_INT64)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s needs a FLOAT, INT32 or INT64 input, got %s", c->layer_name,
                              un_names[op], trtl_dtype_name(t));
    } else if (t != TRTL_FLOAT) {
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s needs a FLOAT input, got %s", c->layer_name, un_names[op],
                          trtl_dtype_name(t));
    }
    c->out[0] = c->in[0];
    c->out_type[0] = op == TRTL_UN_ISINF ? TRTL_BOOL : t;
    return TRTL_OK;
}
