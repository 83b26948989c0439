/* elementwise.c -- IElementWiseLayer: y = a <op> b with broadcasting (same rank; each pair of dims
 * equal or one of them 1).  Both inputs have one type: FLOAT or INT32 for arithmetic and the
 * comparisons EQUAL/GREATER/LESS (which give BOOL), BOOL for AND/OR/XOR, INT32 for trtlite's
 * BITWISE_AND/OR/XOR and SHIFT_LEFT/RIGHT (b the shift amount; see the reference kernel).  INT64 wherever
 * INT32 is taken (TensorRT 10's int64 arithmetic), with the same integer rules at 64 bits. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_elementwise[] = {
    TRTL_A_ENUM("op", ew.op, "ElementWiseOperation", TRTL_EW_COUNT),
};
TRTL_NATTRS(elementwise);

static const char *const ew_names[TRTL_EW_COUNT] = {"SUM", "PROD", "MAX", "MIN", "SUB", "DIV", "POW",
                                                    "FLOOR_DIV", "AND", "OR", "XOR", "EQUAL", "GREATER", "LESS",
                                                    "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "SHIFT_LEFT",
                                                    "SHIFT_RIGHT"};

void trtl_init_elementwise(trtl_params *p) { p->ew.op = TRTL_EW_SUM; }

trtl_status trtl_lower_elementwise(trtl_params *p, const trtl_lower_ctx *c)
{
    if (p->ew.op < 0 || p->ew.op >= TRTL_EW_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown ElementWiseOperation %d (op)",
                          c->layer_name, (int)p->ew.op);
    return TRTL_OK;
}

trtl_status trtl_infer_elementwise(const trtl_infer_ctx *c)
{
    int32_t op = c->p->ew.op;
    if (op < 0 || op >= TRTL_EW_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown ElementWiseOperation %d (op)",
                          c->layer_name, (int)op);
    trtl_dtype t0 = c->in_type[0], t1 = c->in_type[1];
    if (t0 != t1)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': both inputs of %s must have the same type, got %s and %s",
                          c->layer_name, ew_names[op], trtl_dtype_name(t0), trtl_dtype_name(t1));
    int logic = op == TRTL_EW_AND || op == TRTL_EW_OR || op == TRTL_EW_XOR;
    int compare = op == TRTL_EW_EQUAL || op == TRTL_EW_GREATER || op == TRTL_EW_LESS;
    int bits = op >= TRTL_EW_BITWISE_AND && op <= TRTL_EW_SHIFT_RIGHT;
    if (bits && t0 != TRTL_INT32 && t0 != TRTL_INT64)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s needs INT32 or INT64 inputs, got %s", c->layer_name, ew_names[op],
                          trtl_dtype_name(t0));
    if (logic && t0 != TRTL_BOOL)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s needs BOOL inputs, got %s", c->layer_name, ew_names[op],
                          trtl_dtype_name(t0));
    if (!logic && t0 != TRTL_FLOAT && t0 != TRTL_INT32 && t0 != TRTL_INT64)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s needs FLOAT, INT32 or INT64 inputs, got %s", c->layer_name,
                          ew_names[op], trtl_dtype_name(t0));
    TRTL_TRY(trtl_broadcast_dims(c->layer_name, &c->in[0], &c->in[1], &c->out[0]));
    c->out_type[0] = (logic || compare) ? TRTL_BOOL : t0;
    return TRTL_OK;
}
