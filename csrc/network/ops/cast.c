/* cast.c -- ICastLayer: output = input converted to `to_type` (any tensor type, from any).
 * Conversion rules: kernels/ref/convert.h (float -> int truncates toward zero and saturates,
 * NaN -> 0; -> BOOL is x != 0; BOOL -> number is 0/1; the storage types as kernels/ref/lowbit.h).
 * `saturate` (a trtlite extension, ONNX Cast's attribute, default 1): whether float8 / E8M0 targets
 * saturate on overflow or give Inf / NaN. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_cast[] = {
    TRTL_A("to_type", TRTL_ATTR_DTYPE, cast.to_type),
    TRTL_A("saturate", TRTL_ATTR_BOOL, cast.saturate),
};
TRTL_NATTRS(cast);

void trtl_init_cast(trtl_params *p)
{
    p->cast.to_type = TRTL_FLOAT;
    p->cast.saturate = 1;
}

trtl_status trtl_lower_cast(trtl_params *p, const trtl_lower_ctx *c)
{
    if (!trtl_dtype_valid(p->cast.to_type))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown DataType %d (to_type)", c->layer_name,
                          (int)p->cast.to_type);
    return TRTL_OK;
}

trtl_status trtl_infer_cast(const trtl_infer_ctx *c)
{
    if (!trtl_dtype_valid(c->p->cast.to_type))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown DataType %d (to_type)", c->layer_name,
                          (int)c->p->cast.to_type);
    if (!trtl_dtype_valid((int)c->in_type[0]))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': cannot cast an input of type %d", c->layer_name,
                          (int)c->in_type[0]);
    c->out[0] = c->in[0];
    c->out_type[0] = (trtl_dtype)c->p->cast.to_type;
    return TRTL_OK;
}
