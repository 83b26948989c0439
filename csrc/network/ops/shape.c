/* shape.c -- IShapeLayer: output = the input's dims as a 1-D INT32 tensor [rank] (TensorRT 10 gives
 * INT64; trtlite has no 64-bit integer tensors, and INT32 is what every trtlite layer computes on).
 * The output is a shape tensor when a shape position reads it (network/shape_values.h); its values
 * are known wherever the input's dims are, and the kernel writes them at execution time as well. */
#include "network/op_table.h"
#include "core/status.h"

const trtl_attr_desc trtl_attrs_shape[1] = {{NULL, TRTL_ATTR_INT, 0, 0, NULL, 0}};
const int32_t trtl_nattrs_shape = 0;

void trtl_init_shape(trtl_params *p) { p->empty.unused = 0; }

trtl_status trtl_lower_shape(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': shape layers need an explicit-batch network "
                          "(create_network(1 << int(NetworkDefinitionCreationFlag.EXPLICIT_BATCH)))", c->layer_name);
    return TRTL_OK;
}

trtl_status trtl_infer_shape(const trtl_infer_ctx *c)
{
    c->out[0].nb_dims = 1;
    c->out[0].d[0] = c->in[0].nb_dims;
    c->out_type[0] = TRTL_INT32;
    return TRTL_OK;
}
