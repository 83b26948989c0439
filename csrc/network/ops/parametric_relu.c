/* parametric_relu.c -- STUB: to be implemented. */
#include "network/op_table.h"
#include "core/status.h"

const trtl_attr_desc trtl_attrs_parametric_relu[] = {
    {"__stub", TRTL_ATTR_INT, 0, 0, NULL, TRTL_ATTRF_INTERNAL},
};
TRTL_NATTRS(parametric_relu);

void trtl_init_parametric_relu(trtl_params *p) { (void)p; }

trtl_status trtl_lower_parametric_relu(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}

trtl_status trtl_infer_parametric_relu(const trtl_infer_ctx *c)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': parametric_relu is not implemented yet", c->layer_name);
}
