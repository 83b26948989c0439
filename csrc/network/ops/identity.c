/* identity.c -- IIdentityLayer: output = input (same dims and type).  The network code applies a
 * set_output_type() override afterwards; the kernel then converts (kernels/ref/convert.h). */
#include "network/op_table.h"
#include "core/status.h"

/* No attributes: C has no empty arrays, so one unused entry and a count of 0. */
const trtl_attr_desc trtl_attrs_identity[1] = {{NULL, TRTL_ATTR_INT, 0, 0, NULL, 0}};
const int32_t trtl_nattrs_identity = 0;

void trtl_init_identity(trtl_params *p) { p->empty.unused = 0; }

trtl_status trtl_lower_identity(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}

trtl_status trtl_infer_identity(const trtl_infer_ctx *c)
{
    c->out[0] = c->in[0];
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
