/* assertion.c -- IAssertionLayer: no outputs; execution fails with `message` (naming the layer) when
 * any element of the BOOL condition is false.  The builder keeps it although nothing reads it
 * (passes/dead_layers.c); with a constant condition that holds, constant folding removes it. */
#include <string.h>
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_assertion[] = {
    TRTL_A_STRING("message", assertion.message),
};
TRTL_NATTRS(assertion);

void trtl_init_assertion(trtl_params *p) { memset(p->assertion.message, 0, sizeof p->assertion.message); }

trtl_status trtl_lower_assertion(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}

trtl_status trtl_infer_assertion(const trtl_infer_ctx *c)
{
    if (c->in_type[0] != TRTL_BOOL)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': condition must be BOOL, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    if (memchr(c->p->assertion.message, '\0', sizeof c->p->assertion.message) == NULL)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': message is not terminated", c->layer_name);
    return TRTL_OK;
}
