/* non_zero.c -- INonZeroLayer (TensorRT 10): the indices of the input's non-zero elements.
 *   out[k, i] = the k-th coordinate of the i-th non-zero element of x in row-major order;
 *   out is INT32 [rank(x), count] (a 0-D input gives [0, count], count 0 or 1).
 * count is data-dependent: known only once the step has run.  Shape inference gives -1 for it in the
 * network (what TensorRT reports), its upper bound volume(x) in the engine (need_values 1: the memory
 * plan and every internal buffer are sized for it) and a lower bound (1 if volume(x) > 1, else 0) at
 * the builder's min corner (need_values 2), so the engine declares the dim dynamic.  The kernel writes
 * the real count into its output view's dims; the execution context then re-infers the shapes of the
 * steps downstream (engine/context.c, "Data-dependent shapes" in docs/ARCHITECTURE.md).
 * Input types: FLOAT, HALF, INT32, INT8, UINT8, BOOL (a non-zero bit pattern other than -0.0 for floats:
 * x != 0, so NaN counts, as numpy). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_non_zero[1] = {{NULL, TRTL_ATTR_INT, 0, 0, NULL, 0}};
const int32_t trtl_nattrs_non_zero = 0;

void trtl_init_non_zero(trtl_params *p) { p->empty.unused = 0; }

trtl_status trtl_lower_non_zero(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': non-zero layers need an explicit-batch network",
                          c->layer_name);
    return TRTL_OK;
}

trtl_status trtl_infer_non_zero(const trtl_infer_ctx *c)
{
    const trtl_dims *x = &c->in[0];
    trtl_dtype t = c->in_type[0];
    if (t != TRTL_FLOAT && t != TRTL_HALF && t != TRTL_BF16 && t != TRTL_INT32 && t != TRTL_INT8 && t != TRTL_UINT8 &&
        t != TRTL_BOOL)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': NonZero takes FLOAT, HALF, BF16, INT32, INT8, UINT8 or BOOL, got %s",
                          c->layer_name, trtl_dtype_name(t));
    int64_t v = trtl_volume(x); /* -1 when a dim is unknown */
    int64_t count = -1;
    if (c->need_values && v >= 0)
        count = c->need_values == 2 ? (v > 1 ? 1 : 0) : v;
    c->out[0].nb_dims = 2;
    c->out[0].d[0] = x->nb_dims;
    c->out[0].d[1] = count;
    c->out_type[0] = TRTL_INT32;
    return TRTL_OK;
}
