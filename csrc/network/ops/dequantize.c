/* dequantize.c -- IDequantizeLayer: y = (x - zero_point) * scale, FLOAT, from INT8 or UINT8 (ONNX
 * DequantizeLinear) or a storage type (kernels/ref/dequantize.c).  Inputs and axis as the Quantize layer (inference: ops/quantize.c). */
#include "network/qdq.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_dequantize[] = {
    TRTL_A("axis", TRTL_ATTR_INT, quant.axis),
    TRTL_A("to_type", TRTL_ATTR_DTYPE, quant.to_type),
};
TRTL_NATTRS(dequantize);

void trtl_init_dequantize(trtl_params *p)
{
    p->quant.axis = -1;
    p->quant.to_type = TRTL_FLOAT;
}

trtl_status trtl_lower_dequantize(trtl_params *p, const trtl_lower_ctx *c)
{
    if (p->quant.to_type != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': to_type must be FLOAT (trtlite computes in float32), got %s",
                          c->layer_name,
                          trtl_dtype_valid(p->quant.to_type) ? trtl_dtype_name((trtl_dtype)p->quant.to_type) : "?");
    if (c->implicit_batch && p->quant.axis >= 0)
        p->quant.axis += 1;
    return TRTL_OK;
}

trtl_status trtl_infer_dequantize(const trtl_infer_ctx *c) { return trtl_qdq_infer(c, 0); }
