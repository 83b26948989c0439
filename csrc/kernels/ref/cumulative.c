/* Reference cumulative kernel (ops/cumulative.c): running sums (products for PROD) along the axis,
 * accumulated in double for FLOAT (wrapped to int32 / int64 for INT32 / INT64), along the axis input 1 holds at
 * run time. */
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/strided.h"
#include "kernels/ref/ref_index.h"

/* acc + x or acc * x, wrapping modulo 2^64 (uint64 arithmetic: its low 32 bits are the int32 result). */
static uint64_t i_step(int prod, uint64_t acc, uint64_t x)
{
    return prod ? acc * x : acc + x;
}

trtl_status trtl_ref_cumulative(const trtl_kernel_args *a)
{
    const trtl_cumulative_params *q = &a->node->p.cum;
    const char *node = a->node->name;
    const trtl_dims *X = &a->in[0].dims;
    trtl_dtype dt = a->in[0].dtype;
    int32_t r = X->nb_dims, axis = q->axis, av;
    if ((dt != TRTL_FLOAT && dt != TRTL_INT32 && dt != TRTL_INT64) || a->in[1].dtype != TRTL_INT32 ||
        trtl_volume(&a->in[1].dims) != 1)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': cumulative needs FLOAT, INT32 or INT64 input and an INT32 axis",
                          node);
    TRTL_TRY(trtl_ref_check_out_type(node, a->out[0].dtype, dt));
    memcpy(&av, a->in[1].data, 4);
    if (av < -r || av >= r)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axis %d is out of range for input of %d dims", node,
                          (int)av, (int)r);
    axis = av < 0 ? av + r : av;
    int64_t outer = trtl_volume_range(X, 0, axis), n = X->d[axis], inner = trtl_volume_range(X, axis + 1, r);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int prod = q->op == TRTL_CUM_PROD;
            double acc = prod ? 1.0 : 0.0;
            uint64_t iacc = prod ? 1 : 0;
            for (int64_t t = 0; t < n; t++) {
                int64_t k = q->reverse ? n - 1 - t : t, e = (o * n + k) * inner + i;
                if (dt == TRTL_FLOAT) {
                    float x = ((const float *)a->in[0].data)[e];
                    if (!q->exclusive)
                        acc = prod ? acc * x : acc + x;
                    ((float *)a->out[0].data)[e] = (float)acc;
                    if (q->exclusive)
                        acc = prod ? acc * x : acc + x;
                } else {
                    int w = dt == TRTL_INT64;
                    uint64_t x = (uint64_t)ref_int_at(a->in[0].data, w, e);
                    if (!q->exclusive)
                        iacc = i_step(prod, iacc, x);
                    if (w)
                        ((int64_t *)a->out[0].data)[e] = (int64_t)iacc;
                    else
                        ((int32_t *)a->out[0].data)[e] = (int32_t)(uint32_t)iacc;
                    if (q->exclusive)
                        iacc = i_step(prod, iacc, x);
                }
            }
        }
    return TRTL_OK;
}
