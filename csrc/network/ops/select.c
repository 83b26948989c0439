/* select.c -- ISelectLayer: y = condition ? then : else elementwise.  condition is BOOL; then and
 * else share a type (any), which the output has; all three have one rank and broadcast to a
 * common shape (each dim equal or 1). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

/* No attributes: C has no empty arrays, so one unused entry and a count of 0. */
const trtl_attr_desc trtl_attrs_select[1] = {{NULL, TRTL_ATTR_INT, 0, 0, NULL, 0}};
const int32_t trtl_nattrs_select = 0;

void trtl_init_select(trtl_params *p) { p->empty.unused = 0; }

trtl_status trtl_lower_select(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}

trtl_status trtl_infer_select(const trtl_infer_ctx *c)
{
    const char *L = c->layer_name;
    if (c->in_type[0] != TRTL_BOOL)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': condition must be BOOL, got %s", L,
                          trtl_dtype_name(c->in_type[0]));
    if (c->in_type[1] != c->in_type[2])
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': then and else inputs must have the same type, got %s and %s", L,
                          trtl_dtype_name(c->in_type[1]), trtl_dtype_name(c->in_type[2]));
    trtl_dims t;
    TRTL_TRY(trtl_broadcast_dims(L, &c->in[1], &c->in[2], &t));
    TRTL_TRY(trtl_broadcast_dims(L, &c->in[0], &t, &c->out[0]));
    c->out_type[0] = c->in_type[1];
    return TRTL_OK;
}
