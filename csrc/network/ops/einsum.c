/* einsum.c -- IEinsumLayer: Einstein summation of 1 to 8 FLOAT inputs by `equation` (core/einsum.h):
 * "bij,bjk->bik" batched matrix products, "ij->ji" transposes, "ii->" traces, "ii->i" diagonals,
 * "ij->i" reductions, "i,j->ij" outer products.  A letter's sizes agree across its occurrences (or
 * are 1: broadcast); the output has the output letters' sizes. */
#include <string.h>
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/einsum.h"

const trtl_attr_desc trtl_attrs_einsum[] = {
    TRTL_A_STRING("equation", einsum.equation),
};
TRTL_NATTRS(einsum);

void trtl_init_einsum(trtl_params *p) { memset(p->einsum.equation, 0, sizeof p->einsum.equation); }

trtl_status trtl_lower_einsum(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': IEinsumLayer needs an explicit-batch network", c->layer_name);
    return TRTL_OK;
}

trtl_status trtl_infer_einsum(const trtl_infer_ctx *c)
{
    const char *L = c->layer_name;
    trtl_einsum_eq e;
    int64_t size[TRTL_EINSUM_MAX_LETTERS];
    if (memchr(c->p->einsum.equation, '\0', sizeof c->p->einsum.equation) == NULL)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': equation is not terminated", L);
    for (int32_t i = 0; i < c->n_in; i++)
        if (c->in_type[i] != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input %d must be FLOAT, got %s", L, (int)i,
                              trtl_dtype_name(c->in_type[i]));
    TRTL_TRY(trtl_einsum_parse(L, c->p->einsum.equation, c->n_in, &e));
    TRTL_TRY(trtl_einsum_sizes(L, &e, c->in, size));
    trtl_dims o = {0};
    o.nb_dims = e.out_rank;
    for (int32_t i = 0; i < e.out_rank; i++)
        o.d[i] = size[e.out_lab[i]];
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
